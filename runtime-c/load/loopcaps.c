/* While loops that plyc's cap stopped (1024 iterations, ir.LOOP_CAP): where
 * bpftrace leaves a loop's end to the verifier, plyc's loops always end,
 * and the tracer says at exit which ones ended so, and how often. */
#include <inttypes.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_rt.h"

void plyc_report_loop_caps(const struct plyc_program *prog, struct bpf_object *obj)
{
	struct bpf_map *m = prog->nloops ? bpf_object__find_map_by_name(obj, "plyc_loopcap") : NULL;
	int i, fd = m ? bpf_map__fd(m) : -1;

	for (i = 0; fd >= 0 && i < prog->nloops; i++) {
		uint64_t n = plyc_stat_sum(fd, (uint32_t)i);

		if (n)
			fprintf(stderr, "%s:%d: warning: a loop stopped at plyc's cap of 1024 iterations "
				"(%" PRIu64 " time%s)\n", prog->script, prog->loop_lines[i], n, n == 1 ? "" : "s");
	}
}
