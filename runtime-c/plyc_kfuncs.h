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
/* Whether the device lists its ftrace-able functions (tracefs readable). */
int plyc_kfuncs_ftrace_listed(void);
/* The functions a kprobe target means on this device: an exact name (or
 * the syscall it names, in this kernel's spelling) or a glob. 0, -ENOENT
 * when nothing matches, or another -errno. */
int plyc_kfuncs_resolve(const char *target, int glob, struct plyc_kfuncs *out);
/* The same in one module's text symbols, each as "module:name". */
int plyc_kfuncs_in_module(const char *target, int glob, const char *module, struct plyc_kfuncs *out);
/* In /proc/kallsyms' text symbols (a kprobe may still refuse it). */
int plyc_kfunc_in_kallsyms(const char *name);
/* On the kernel's kprobe blacklist (debugfs kprobes/blacklist). */
int plyc_kfunc_blacklisted(const char *name);
/* Up to four traceable functions whose names are near `name` (it inside a
 * longer name, or a small edit distance), nearest first, as "a, b, c" in
 * out; returns how many. */
size_t plyc_kfunc_near(const char *name, char *out, size_t len);
void plyc_kfuncs_free(struct plyc_kfuncs *k);

#endif
