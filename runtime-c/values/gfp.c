/* printf's %gr (bpftrace 0.27): an allocation's GFP flags by name. The
 * bit numbers are those of Linux's include/linux/gfp_types.h since 6.x
 * (0x200 unused), the compound names checked first, largest first, as the
 * kernel's own %pGg lists them: each name whose bits are all set is
 * printed and its bits taken away; bits no name covers end the text in
 * hex; 0 is "0". 0.27 uses one fixed table whatever the kernel, so the
 * same numbers print the same names here. */
#include <inttypes.h>
#include <stdio.h>

#include "plyc_btout.h"

#define B(n) (1ULL << (n))
/* single flags, by bit number */
#define DMA B(0)
#define HIGHMEM B(1)
#define DMA32 B(2)
#define MOVABLE B(3)
#define HIGH B(5)
#define IO B(6)
#define FS B(7)
#define ZERO B(8)
#define DIRECT_RECLAIM B(10)
#define KSWAPD_RECLAIM B(11)
#define NOWARN B(13)
#define COMP B(18)
#define NOMEMALLOC B(19)
#define HARDWALL B(20)
#define SKIP_KASAN B(25)
/* the kernel's compounds */
#define KERNEL (DIRECT_RECLAIM | KSWAPD_RECLAIM | IO | FS)
#define USER (KERNEL | HARDWALL)
#define HIGHUSER_MOVABLE (USER | HIGHMEM | MOVABLE | SKIP_KASAN)
#define TRANSHUGE_LIGHT ((HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & \
			 ~(DIRECT_RECLAIM | KSWAPD_RECLAIM))

static const struct {
	uint64_t mask;
	const char *name;
} gfp_names[] = {
	{ TRANSHUGE_LIGHT | DIRECT_RECLAIM, "GFP_TRANSHUGE" },
	{ TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT" },
	{ HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE" },
	{ USER | HIGHMEM, "GFP_HIGHUSER" },
	{ USER, "GFP_USER" },
	{ KERNEL | B(22), "GFP_KERNEL_ACCOUNT" },
	{ KERNEL, "GFP_KERNEL" },
	{ DIRECT_RECLAIM | KSWAPD_RECLAIM | IO, "GFP_NOFS" },
	{ HIGH | KSWAPD_RECLAIM, "GFP_ATOMIC" },
	{ DIRECT_RECLAIM | KSWAPD_RECLAIM, "GFP_NOIO" },
	{ KSWAPD_RECLAIM | NOWARN, "GFP_NOWAIT" },
	{ DMA, "GFP_DMA" },
	{ HIGHMEM, "__GFP_HIGHMEM" },
	{ DMA32, "GFP_DMA32" },
	{ HIGH, "__GFP_HIGH" },
	{ IO, "__GFP_IO" },
	{ FS, "__GFP_FS" },
	{ ZERO, "__GFP_ZERO" },
	{ DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ B(12), "__GFP_WRITE" },
	{ NOWARN, "__GFP_NOWARN" },
	{ B(14), "__GFP_RETRY_MAYFAIL" },
	{ B(15), "__GFP_NOFAIL" },
	{ B(16), "__GFP_NORETRY" },
	{ B(17), "__GFP_MEMALLOC" },
	{ COMP, "__GFP_COMP" },
	{ NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ HARDWALL, "__GFP_HARDWALL" },
	{ B(21), "__GFP_THISNODE" },
	{ B(22), "__GFP_ACCOUNT" },
	{ B(23), "__GFP_ZEROTAGS" },
	{ B(24), "__GFP_SKIP_ZERO" },
	{ SKIP_KASAN, "__GFP_SKIP_KASAN" },
	{ B(26), "__GFP_NO_OBJ_EXT" },
};

const char *plyc_bt_gfp_text(uint64_t flags, char *buf, size_t len)
{
	size_t i, used = 0;
	const char *sep = "";

	buf[0] = '\0';
	if (!flags) {
		snprintf(buf, len, "0");
		return buf;
	}
	for (i = 0; i < sizeof(gfp_names) / sizeof(gfp_names[0]); i++) {
		if ((flags & gfp_names[i].mask) != gfp_names[i].mask)
			continue;
		flags &= ~gfp_names[i].mask;
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%s", sep, gfp_names[i].name);
		sep = "|";
	}
	if (flags && used < len)
		snprintf(buf + used, len - used, "%s0x%" PRIx64, sep, flags);
	return buf;
}
