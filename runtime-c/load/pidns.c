/* The tracer's PID namespace, handed to the BPF side before load
 * (plyc.bpf.h: plyc_pidns_dev, plyc_pidns_ino), so that bpftrace's `pid`,
 * `tid` and -p's filter are the ids the user sees where the tracer runs,
 * as bpftrace 0.27 numbers them. In the initial namespace (or a kernel
 * built without PID namespaces) both stay 0 and the BPF side calls the
 * plain bpf_get_current_pid_tgid(): the same program as on a kernel
 * without bpf_get_ns_current_pid_tgid (before 5.7). plyc_loader.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "plyc_loader.h"

/* The initial PID namespace's inode number (the kernel's PROC_PID_INIT_INO). */
#define PLYC_INIT_PIDNS_INO 0xEFFFFFFCULL

static int write_u64(char *bytes, const void *arg)
{
	memcpy(bytes, arg, sizeof(uint64_t));
	return 0;
}

int plyc_pidns_prepare(struct bpf_object *obj, const char *name, int verbose)
{
	struct stat st;
	uint64_t dev, ino;
	const char *forced;
	int err;

	if (stat("/proc/self/ns/pid", &st)) {
		if (errno == ENOENT)            /* no PID namespaces: the initial one */
			return 0;
		fprintf(stderr, "%s: error: cannot find the tracer's PID namespace: /proc/self/ns/pid: %s\n",
			name, strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_ino == PLYC_INIT_PIDNS_INO)
		return 0;
	/* PLYC_NO_HELPER as in needs.c: that path tested on any kernel */
	forced = getenv("PLYC_NO_HELPER");
	if ((forced && !strcmp(forced, "bpf_get_ns_current_pid_tgid")) ||
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_ns_current_pid_tgid, NULL) != 1) {
		/* the ids would be the initial namespace's: said, never silent */
		fprintf(stderr, "%s: warning: pid, tid and -p PID are the initial PID namespace's, not this "
			"one's: the kernel lacks bpf_get_ns_current_pid_tgid (Linux 5.7)\n", name);
		return 0;
	}
	dev = (uint64_t)st.st_dev;
	ino = (uint64_t)st.st_ino;
	err = plyc_edit_rodata(obj, "plyc_pidns_dev", sizeof(dev), write_u64, &dev);
	if (!err)
		err = plyc_edit_rodata(obj, "plyc_pidns_ino", sizeof(ino), write_u64, &ino);
	if (err) {
		fprintf(stderr, "%s: error: cannot set the tracer's PID namespace: %s\n", name, strerror(-err));
		return -1;
	}
	if (verbose)
		fprintf(stderr, "%s: PID namespace: dev %llu inode %llu (pid and tid as it numbers them)\n", name,
			(unsigned long long)dev, (unsigned long long)ino);
	return 0;
}
