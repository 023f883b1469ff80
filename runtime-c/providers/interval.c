/* interval: a cpu-clock perf event on one CPU, every period. */
#include "plyc_attach.h"
#include "providers/interval.h"

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_interval_data *d = c->pr->data;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = d->period_ns,
	};

	(void)obj;
	return plyc_attach_perf(c, bp, links, &attr, d->cpu, "the timer");
}

const struct plyc_provider plyc_provider_interval = { .name = "interval", .attach = attach };
