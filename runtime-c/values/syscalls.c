/*
 * syscall_name(): a syscall number's name on the architecture the tracer
 * runs on. The device has no list of the numbers, so the table is the
 * target's, made when the runtime is built: plyc_syscalls.h names each
 * __NR_* the target compiler's <sys/syscall.h> defines (plyc/toolchain.py),
 * and this compiler evaluates the numbers (arm's and mips' are sums).
 */
#include <stddef.h>
#include <sys/syscall.h>

#include "plyc_rt.h"

struct syscall_entry {
	long nr;
	const char *name;
};

#define PLYC_SYSCALL(name) { __NR_##name, #name },
static const struct syscall_entry syscalls[] = {
#include "plyc_syscalls.h"
};

const char *plyc_syscall_name(long nr)
{
	size_t i;

	for (i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return "Unknown syscall";
}
