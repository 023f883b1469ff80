/* Kernel functions of the device, for kprobe targets. */
#ifndef PLYC_KFUNCS_H
#define PLYC_KFUNCS_H

#include <stddef.h>

struct plyc_kfuncs {
	char **names;
	size_t n;
	int wrapped;   /* syscall wrappers: arguments are in the saved user registers */
};

int plyc_kfunc_exists(const char *name);
/* Listed in available_filter_functions (what kprobe.multi attaches to). */
int plyc_kfunc_ftraceable(const char *name);
/* The functions a kprobe target means on this device: an exact name (or
 * the syscall it names, in this kernel's spelling) or a glob. 0, -ENOENT
 * when nothing matches, or another -errno. */
int plyc_kfuncs_resolve(const char *target, int glob, struct plyc_kfuncs *out);
void plyc_kfuncs_free(struct plyc_kfuncs *k);

#endif
