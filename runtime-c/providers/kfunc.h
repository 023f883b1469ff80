/* kfunc / kretfunc: kernel function entry and return by BPF trampolines
 * (kfunc.c). */
#ifndef PLYC_PROVIDER_KFUNC_H
#define PLYC_PROVIDER_KFUNC_H

#include "plyc_provider.h"

struct plyc_kfunc_data {
	const char *target;        /* function or glob */
	const char *module;        /* its module, or NULL: vmlinux */
	int retprobe;              /* fexit */
	const char *args;          /* the arguments read, where: "file@0,buf@1" (build's BTF) */
	int ret_slot;              /* the return value's word, read; else -1 */
	int names;                 /* `probe` is read in a glob: each function's name under its cookie */
};

extern const struct plyc_provider plyc_provider_kfunc;
extern const struct plyc_provider plyc_provider_kretfunc;

#endif
