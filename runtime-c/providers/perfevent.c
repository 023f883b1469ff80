/* software / hardware: a perf event counted on every CPU, the program run
 * every `period` events. The event is opened once before the load, so a
 * device without it (no hardware PMU, as in most VMs) is told by name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "plyc_attach.h"
#include "providers/perfevent.h"

static void attr_of(const struct plyc_perfevent_data *d, struct perf_event_attr *attr)
{
	*attr = (struct perf_event_attr){
		.type = d->type,
		.size = sizeof(*attr),
		.config = d->config,
		.sample_period = d->period,
	};
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_perfevent_data *d = c->pr->data;
	int hw = d->type == PERF_TYPE_HARDWARE, ncpus = libbpf_num_possible_cpus(), cpu, fd = -1;
	struct perf_event_attr attr;

	attr_of(d, &attr);
	/* The first CPU that opens it (possible but offline ones don't). */
	for (cpu = 0; cpu < ncpus && fd < 0; cpu++) {
		fd = plyc_perf_open(&attr, cpu);
		if (fd < 0 && errno != ENODEV && errno != EINVAL)
			break;
	}
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (hw && (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV))
		return plyc_probe_error(c->prog, c->pr, "this device has no hardware counter for %s (no PMU, "
					"or one without this event: a virtual machine often has none)", d->event);
	if (errno == ENOENT || errno == EOPNOTSUPP)
		return plyc_probe_error(c->prog, c->pr, "this kernel has no software event %s", d->event);
	if (errno == EACCES || errno == EPERM)
		return plyc_probe_error(c->prog, c->pr, "not allowed to open the %s event on every CPU "
					"(kernel.perf_event_paranoid, or not root)", d->event);
	return plyc_probe_error(c->prog, c->pr, "cannot open the %s event: %s", d->event, plyc_errstr(errno));
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_perfevent_data *d = c->pr->data;
	struct perf_event_attr attr;
	char what[64];

	(void)obj;
	attr_of(d, &attr);
	snprintf(what, sizeof(what), "the %s event", d->event);
	return plyc_attach_perf(c, bp, links, &attr, -1, what);
}

/* the event and its period, as it counts here */
static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	const struct plyc_perfevent_data *d = c->pr->data;

	fprintf(fp, "%s:%s:%llu\n", d->type == PERF_TYPE_HARDWARE ? "hardware" : "software", d->event,
		(unsigned long long)d->period);
}

const struct plyc_provider plyc_provider_software = {
	.name = "software", .resolve = resolve, .attach = attach, .list = list,
};
const struct plyc_provider plyc_provider_hardware = {
	.name = "hardware", .resolve = resolve, .attach = attach, .list = list,
};
