/* profile: a cpu-clock perf event on every CPU (or one), freq times a second. */
#include "plyc_attach.h"
#include "providers/profile.h"

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_profile_data *d = c->pr->data;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = d->freq,
	};

	(void)obj;
	return plyc_attach_perf(c, bp, links, &attr, d->cpu, "the timer");
}

const struct plyc_provider plyc_provider_profile = { .name = "profile", .attach = attach };
