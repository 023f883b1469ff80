/* watchpoint: a hardware breakpoint (PERF_TYPE_BREAKPOINT) on an address,
 * the program run at each access. With a target process (-p, -c) it is
 * opened on each of its threads, inherited by the threads and children
 * they start; else on every online CPU, whatever runs there. One is opened
 * before the load, so a machine without breakpoints (a kernel without
 * CONFIG_HAVE_HW_BREAKPOINT, a CPU without debug registers) or with none
 * free is told by name. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plyc_attach.h"
#include "providers/watchpoint.h"

static void attr_of(const struct plyc_watchpoint_data *d, struct perf_event_attr *attr)
{
	*attr = (struct perf_event_attr){
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(*attr),
		.bp_type = d->type,
		.bp_addr = d->address,
		/* the kernel takes an execution breakpoint's length as a
		 * word's (perf_event_open(2)); bpftrace gives it so */
		.bp_len = (d->type & HW_BREAKPOINT_X) ? sizeof(long) : d->length,
		.sample_period = 1,
		.inherit = 1,
	};
}

static int task_open(struct perf_event_attr *attr, long tid)
{
	return (int)syscall(SYS_perf_event_open, attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Why the kernel refused the breakpoint (errno), in the probe's terms. */
static int refused(struct plyc_probe_ctx *c, int err)
{
	const struct plyc_watchpoint_data *d = c->pr->data;

	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		return plyc_probe_fatal(c->prog, c->pr, "no hardware breakpoint on this machine: the kernel "
					"has no breakpoint events (PERF_TYPE_BREAKPOINT, CONFIG_HAVE_HW_BREAKPOINT), "
					"so no watchpoint can run here");
	/* a missing probe to 0.27 (its missing_probes decides) */
	if (err == ENOSPC)
		return plyc_probe_error(c->prog, c->pr, "no hardware breakpoint register left for a watchpoint "
					"on this machine: its CPUs have a few (x86_64: 4), shared by every "
					"watchpoint and debugger, or none at all (a virtual CPU may have none)");
	if (err == EINVAL)
		return plyc_probe_error(c->prog, c->pr, "the kernel refused a breakpoint on %u byte%s at %#llx for "
					"%s: the address must be a multiple of the length, and the CPU must take "
					"that mode there (x86_64: no execution breakpoints in the kernel's text)",
					d->length, d->length == 1 ? "" : "s", (unsigned long long)d->address, d->mode);
	if (err == EACCES || err == EPERM)
		return plyc_probe_error(c->prog, c->pr, "not allowed to set a breakpoint at %#llx "
					"(kernel.perf_event_paranoid, or not root)", (unsigned long long)d->address);
	if (err == ESRCH)
		return plyc_probe_error(c->prog, c->pr, "process %ld is gone", c->prog->target_task);
	return plyc_probe_error(c->prog, c->pr, "cannot set a breakpoint at %#llx: %s",
				(unsigned long long)d->address, plyc_errstr(err));
}

static int resolve(struct plyc_probe_ctx *c)
{
	struct perf_event_attr attr;
	int ncpus = libbpf_num_possible_cpus(), cpu, fd = -1;

	attr_of(c->pr->data, &attr);
	if (c->prog->target_task > 0) {
		fd = task_open(&attr, c->prog->target_task);
	} else {
		/* the first CPU that opens it (possible but offline ones don't) */
		for (cpu = 0; cpu < ncpus && fd < 0; cpu++) {
			fd = plyc_perf_open(&attr, cpu);
			if (fd < 0 && errno != ENODEV)
				break;
		}
	}
	if (fd < 0)
		return refused(c, errno);
	close(fd);
	return 0;
}

/* Every breakpoint event attached, with its address, for unwatch(): the
 * links own the descriptors (they close them at the end). */
static struct watched {
	uint64_t addr;
	int fd;
} *watched;
static int nwatched, watched_cap;

static int add(struct plyc_probe_ctx *c, struct bpf_program *bp, struct plyc_links *links, int fd)
{
	const struct plyc_watchpoint_data *d = c->pr->data;
	struct bpf_link *link;

	if (nwatched == watched_cap) {
		int cap = watched_cap ? 2 * watched_cap : 16;
		struct watched *v = realloc(watched, (size_t)cap * sizeof(*v));

		if (!v) {
			close(fd);
			return plyc_probe_error(c->prog, c->pr, "out of memory");
		}
		watched = v;
		watched_cap = cap;
	}
	link = bpf_program__attach_perf_event(bp, fd);
	if (!link) {
		int err = errno;

		close(fd);
		return plyc_probe_error(c->prog, c->pr, "cannot attach to the breakpoint: %s", plyc_errstr(err));
	}
	watched[nwatched++] = (struct watched){ d->address, fd };
	return plyc_add_link(links, link);
}

void plyc_watchpoint_unwatch(uint64_t addr)
{
	int i;

	/* an event's ioctl reaches the events its threads inherited from it */
	for (i = 0; i < nwatched; i++)
		if (watched[i].addr == addr)
			ioctl(watched[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* Each thread of the target process: one event each (a perf event on a
 * task follows that thread alone; inherit takes the threads it starts). */
static int attach_task(struct plyc_probe_ctx *c, struct bpf_program *bp, struct plyc_links *links,
		       struct perf_event_attr *attr)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int attached = 0, err = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", c->prog->target_task);
	dir = opendir(path);
	if (!dir)
		return refused(c, errno == ENOENT ? ESRCH : errno);
	while (!err && (e = readdir(dir))) {
		long tid = strtol(e->d_name, NULL, 10);
		int fd;

		if (tid <= 0)
			continue;
		fd = task_open(attr, tid);
		if (fd < 0) {
			/* a thread that ended since the folder was read */
			if (errno == ESRCH)
				continue;
			err = refused(c, errno);
			break;
		}
		err = add(c, bp, links, fd);
		attached += !err;
	}
	closedir(dir);
	if (!err && !attached)
		return refused(c, ESRCH);
	return err ? -1 : 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	struct perf_event_attr attr;
	int ncpus = libbpf_num_possible_cpus(), cpu, attached = 0;

	(void)obj;
	attr_of(c->pr->data, &attr);
	if (c->prog->target_task > 0)
		return attach_task(c, bp, links, &attr);
	for (cpu = 0; cpu < ncpus; cpu++) {
		int fd = plyc_perf_open(&attr, cpu);

		/* possible but offline CPUs can't be opened: skip them */
		if (fd < 0 && errno == ENODEV)
			continue;
		/* the registers taken by this tracer's earlier watchpoints
		 * count too: ENOSPC is told as such */
		if (fd < 0)
			return refused(c, errno);
		if (add(c, bp, links, fd))
			return -1;
		attached++;
	}
	return attached ? 0 : plyc_probe_error(c->prog, c->pr, "no CPU is online");
}

/* the watched bytes and accesses, as bpftrace -l writes the probe */
static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct plyc_watchpoint_data *d = c->pr->data;

	fprintf(fp, "watchpoint:%#llx:%u:%s\n", (unsigned long long)d->address, d->length, d->mode);
}

const struct plyc_provider plyc_provider_watchpoint = {
	.name = "watchpoint", .resolve = resolve, .attach = attach, .list = list,
};
