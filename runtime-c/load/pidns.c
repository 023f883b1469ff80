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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "plyc_loader.h"

/* The initial PID namespace's inode number (the kernel's PROC_PID_INIT_INO). */
#define PLYC_INIT_PIDNS_INO 0xEFFFFFFCULL

/* <linux/pidfd.h>'s (Linux 6.11), which older C libraries' headers lack */
#define PLYC_PIDFD_GET_PID_NAMESPACE _IO(0xFF, 5)

static int write_u64(char *bytes, const void *arg)
{
	memcpy(bytes, arg, sizeof(uint64_t));
	return 0;
}

/* The PID namespace of process pid (0: the tracer), as stat() gives its
 * file: the process's pidfd's (Linux 6.11; a pid means the tracer's
 * namespace's process, whatever namespace's /proc is mounted), else
 * /proc's (/proc/self is the tracer in any /proc). 0, or -1 with /proc's
 * errno (ENOENT: the kernel has no PID namespaces, /proc being there). */
static int pidns_of(long pid, struct stat *st)
{
	char path[64];
	int fd = -1, ns = -1;

#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid ? (pid_t)pid : getpid(), 0);
#endif
	if (fd >= 0) {
		ns = ioctl(fd, PLYC_PIDFD_GET_PID_NAMESPACE, 0);
		close(fd);
	}
	if (ns >= 0) {
		int r = fstat(ns, st);

		close(ns);
		if (!r)
			return 0;
	}
	if (pid && !plyc_proc_is_ours())
		return -1;      /* another namespace's /proc would name another process */
	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	return stat(path, st);
}

/* -p's process in a namespace nested in the tracer's (or one the tracer's
 * /proc does not show): the kernel numbers a task for
 * bpf_get_ns_current_pid_tgid only in its own namespace, so the kernel
 * probes' -p filter never matches it and its pid reads 0. Said, as
 * bpftrace 0.27 says it on each event (the helper's -EINVAL). */
static void nested_target(const char *name, long pid, const struct stat *mine)
{
	struct stat st;

	if (pid <= 0 || pidns_of(pid, &st) || (st.st_dev == mine->st_dev && st.st_ino == mine->st_ino))
		return;
	fprintf(stderr, "%s: warning: -p %ld: that process is in a PID namespace of its own, nested in the "
		"tracer's: the kernel gives its tasks no id in the tracer's namespace, so kernel probes' -p filter "
		"never matches them and pid and tid read 0 (run the tracer in its namespace: "
		"nsenter --target %ld --pid --mount)\n", name, pid, pid);
}

int plyc_pidns_prepare(struct bpf_object *obj, const char *name, int verbose, long pid)
{
	struct stat st;
	uint64_t dev, ino;
	const char *forced;
	int err;

	if (pidns_of(0, &st)) {
		if (errno == ENOENT && !access("/proc/self", F_OK))
			return 0;               /* no PID namespaces: the initial one */
		/* no /proc, and a kernel before 6.11: said, never silent */
		fprintf(stderr, "%s: warning: pid, tid and -p PID are the initial PID namespace's: cannot find the "
			"tracer's own (/proc/self/ns/pid: %s; is /proc mounted?)\n", name, strerror(errno));
		return 0;
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
	nested_target(name, pid, &st);
	/* the kernel's dev_t (major << 20 | minor), which the helper compares,
	 * not stat()'s encoding of it: they differ from minor 256 on */
	dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
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
