/* Reading memory on kernels before 5.5. Programs call
 * bpf_probe_read_kernel/_user(_str), which 5.5 brought; before, one helper
 * read both address spaces: bpf_probe_read (and _str, 4.11). libbpf 1.1
 * rewrites the calls itself where they are missing; the tracer does the
 * same, so that -v can tell which helpers run and PLYC_NO_PROBE_READ_KERNEL=1
 * can force the old ones on any kernel, to test them. It rewrites the BPF
 * object's ELF image before libbpf opens it, every executable section, so
 * the calls in subprograms (libbpf's bpf_usdt_arg) are rewritten too.
 * Helper calls carry their id in imm and no relocation, and each call stays
 * one instruction: nothing else in the object moves. */
#define _GNU_SOURCE
#include <elf.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"

/* What each new helper becomes, and how many calls were rewritten. */
static const struct {
	int from, to;
} RENAMES[] = {
	{ BPF_FUNC_probe_read_kernel, BPF_FUNC_probe_read },
	{ BPF_FUNC_probe_read_user, BPF_FUNC_probe_read },
	{ BPF_FUNC_probe_read_kernel_str, BPF_FUNC_probe_read_str },
	{ BPF_FUNC_probe_read_user_str, BPF_FUNC_probe_read_str },
};

/* Rewrites the helper calls of one section's instructions; the count. */
static int rewrite_insns(unsigned char *code, size_t size)
{
	size_t i, k;
	int n = 0;

	for (i = 0; i + sizeof(struct bpf_insn) <= size; i += sizeof(struct bpf_insn)) {
		struct bpf_insn in;

		memcpy(&in, code + i, sizeof(in));
		/* src_reg 0: a helper (1 is a call of a subprogram, 2 a kfunc). The
		 * second half of an ld_imm64 has code 0, never taken for a call. */
		if (in.code != (BPF_JMP | BPF_CALL) || in.src_reg)
			continue;
		for (k = 0; k < sizeof(RENAMES) / sizeof(RENAMES[0]); k++) {
			if (in.imm == RENAMES[k].from) {
				in.imm = RENAMES[k].to;
				memcpy(code + i, &in, sizeof(in));
				n++;
				break;
			}
		}
	}
	return n;
}

/* Every executable section of a 64-bit ELF image of the host's byte order
 * (a BPF object for this machine); the count of calls, or -1 if the image
 * isn't one. */
static int rewrite_object(unsigned char *img, size_t size)
{
	Elf64_Ehdr eh;
	int i, n = 0;

	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
		return -1;
	for (i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		n += rewrite_insns(img + sh.sh_offset, sh.sh_size);
	}
	return n;
}

const unsigned char *plyc_read_helpers(const struct plyc_program *P, size_t *size)
{
	const char *why = getenv("PLYC_NO_PROBE_READ_KERNEL") ? "PLYC_NO_PROBE_READ_KERNEL" : NULL;
	unsigned char *copy;
	int n;

	*size = P->obj_size;
	/* 0: the kernel refused the helper (an error probing it says nothing). */
	if (!why && !libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel, NULL))
		why = "this kernel has no bpf_probe_read_kernel (Linux 5.5)";
	if (!why) {
		if (P->verbose)
			fprintf(stderr, "%s: memory read with bpf_probe_read_kernel and _user (and _str)\n", P->name);
		return P->obj;
	}
	copy = malloc(P->obj_size);
	if (!copy)
		return NULL;
	memcpy(copy, P->obj, P->obj_size);
	n = rewrite_object(copy, P->obj_size);
	if (n < 0) {
		free(copy);
		return P->obj;   /* not an image we know: libbpf's own rewriting is left */
	}
	if (P->verbose)
		fprintf(stderr, "%s: memory read with bpf_probe_read and bpf_probe_read_str (%d call%s rewritten): %s\n",
			P->name, n, n == 1 ? "" : "s", why);
	return copy;
}
