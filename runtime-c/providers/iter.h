/* iter: a BPF iterator over the kernel's tasks, files or mappings, run
 * once by the tracer (iter.c). */
#ifndef PLYC_PROVIDER_ITER_H
#define PLYC_PROVIDER_ITER_H

#include "plyc_provider.h"

struct plyc_iter_data {
	const char *target;        /* task, task_file, task_vma */
	const char *since;         /* the Linux version that has it, for the message */
	int sleepable;             /* its program is (path(): bpf_d_path, Linux 5.12) */
	const char *pin;           /* iter:OBJECT:PIN: where its link is pinned, not run; else NULL */
};

extern const struct plyc_provider plyc_provider_iter;

#endif
