/* Attaching each probe kind; every failure names the probe and its line. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plyc_attach.h"

static const struct plyc_program *P;

int plyc_probe_error(const struct plyc_program *prog, const struct plyc_probe *pr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: error: %s: ", prog->script, pr->line, pr->spec);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int add_link(struct plyc_links *links, struct bpf_link *link)
{
	if (links->n == links->cap) {
		int cap = links->cap ? links->cap * 2 : 16;
		struct bpf_link **v = realloc(links->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		links->v = v;
		links->cap = cap;
	}
	links->v[links->n++] = link;
	return 0;
}

static void split(const char *target, char *group, size_t len, const char **event)
{
	snprintf(group, len, "%s", target);
	char *slash = strchr(group, '/');

	*slash = 0;
	*event = slash + 1;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int count_match(const char *group, const char *event, void *arg)
{
	(void)group;
	(void)event;
	(void)arg;
	return 0;
}

int plyc_check_targets(const struct plyc_program *prog)
{
	int i, err = 0;

	P = prog;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		char group[256];
		const char *event;
		int n;

		switch (pr->kind) {
		case PLYC_P_TRACEPOINT:
			split(pr->target, group, sizeof(group), &event);
			if (!plyc_tracefs()) {
				err = plyc_probe_error(P, pr, "tracefs is not available (mount it on /sys/kernel/tracing)");
				break;
			}
			if (has_glob(event)) {
				n = plyc_tp_glob(group, event, count_match, NULL);
				if (n <= 0)
					err = plyc_probe_error(P, pr, "no tracepoint on this kernel matches %s", pr->target);
			} else if (plyc_tp_exists(group, event)) {
				err = plyc_probe_error(P, pr, "no such tracepoint on this kernel");
			}
			break;
		case PLYC_P_KPROBE:
		case PLYC_P_KRETPROBE:
		case PLYC_P_UPROBE:
		case PLYC_P_URETPROBE:
		case PLYC_P_USDT:
			err = plyc_probe_error(P, pr, "this provider is not supported by this version of plyc yet");
			break;
		default:
			break;
		}
	}
	return err;
}

struct tp_ctx {
	struct bpf_program *prog;
	struct plyc_links *links;
	const struct plyc_probe *pr;
};

static int attach_tp(const char *group, const char *event, void *arg)
{
	struct tp_ctx *c = arg;
	struct bpf_link *link = bpf_program__attach_tracepoint(c->prog, group, event);

	if (!link)
		return plyc_probe_error(P, c->pr, "cannot attach to %s:%s: %s", group, event, strerror(errno));
	return add_link(c->links, link);
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_timer(const struct plyc_probe *pr, struct bpf_program *prog, struct plyc_links *links)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	int ncpus = libbpf_num_possible_cpus(), cpu, attached = 0;

	if (pr->kind == PLYC_P_INTERVAL) {
		attr.sample_period = pr->period_ns;
	} else {
		attr.freq = 1;
		attr.sample_freq = pr->freq;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *link;
		int fd;

		if (pr->cpu >= 0 && cpu != pr->cpu)
			continue;
		fd = perf_open(&attr, cpu);
		if (fd < 0) {
			/* Possible but offline CPUs can't be opened: skip them. */
			if (errno == ENODEV || errno == EINVAL)
				continue;
			return plyc_probe_error(P, pr, "cannot open a timer on CPU %d: %s", cpu, strerror(errno));
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			int err = errno;

			close(fd);
			return plyc_probe_error(P, pr, "cannot attach to the timer on CPU %d: %s", cpu, strerror(err));
		}
		if (add_link(links, link))
			return -1;
		attached++;
	}
	if (!attached)
		return plyc_probe_error(P, pr, pr->cpu >= 0 ? "CPU %d is not online" : "no CPU is online", pr->cpu);
	return 0;
}

int plyc_attach_all(const struct plyc_program *prog, struct bpf_object *obj, struct plyc_links *links)
{
	int i;

	P = prog;
	for (i = 0; i < prog->nprobes; i++) {
		const struct plyc_probe *pr = &prog->probes[i];
		struct bpf_program *bp = bpf_object__find_program_by_name(obj, pr->prog);
		char group[256];
		const char *event;

		if (!bp)
			return plyc_probe_error(P, pr, "program %s is missing from the BPF object", pr->prog);
		switch (pr->kind) {
		case PLYC_P_BEGIN:
		case PLYC_P_END:
			break;
		case PLYC_P_TRACEPOINT: {
			struct tp_ctx c = { bp, links, pr };

			split(pr->target, group, sizeof(group), &event);
			if (has_glob(event)) {
				if (plyc_tp_glob(group, event, attach_tp, &c) < 0)
					return -1;
			} else if (attach_tp(group, event, &c)) {
				return -1;
			}
			break;
		}
		case PLYC_P_INTERVAL:
		case PLYC_P_PROFILE:
			if (attach_timer(pr, bp, links))
				return -1;
			break;
		default:
			return plyc_probe_error(P, pr, "this provider is not supported by this version of plyc yet");
		}
	}
	return 0;
}

void plyc_detach_all(struct plyc_links *links)
{
	int i;

	for (i = 0; i < links->n; i++)
		bpf_link__destroy(links->v[i]);
	free(links->v);
	links->v = NULL;
	links->n = links->cap = 0;
}
