/* BPF helpers that a construct of the script needs and older kernels lack
 * (a for loop over a map: bpf_for_each_map_elem, Linux 5.13). Asked of the
 * kernel before the load, for each program's type, so that the tracer
 * names the construct and its line rather than leaving a verifier log.
 * PLYC_NO_HELPER=NAME makes it take helper NAME as lacking, to test that on
 * any kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "plyc_loader.h"

int plyc_check_needs(const struct plyc_program *prog, struct bpf_object *obj)
{
	int i, failed = 0;

	for (i = 0; i < prog->nneeds; i++) {
		const struct plyc_need *n = &prog->needs[i];
		struct bpf_program *p = bpf_object__find_program_by_name(obj, n->prog);

		const char *forced = getenv("PLYC_NO_HELPER");

		/* 0: refused; below 0, the kernel could not be asked (the load tells) */
		if (!(forced && !strcmp(forced, n->helper_name)) &&
		    (!p || libbpf_probe_bpf_helper(bpf_program__type(p), n->helper, NULL) != 0))
			continue;
		fprintf(stderr, "%s:%d: error: %s needs the BPF helper %s, which this kernel lacks "
			"(it came in Linux %s)\n", prog->script, n->line, n->what, n->helper_name, n->since);
		failed = 1;
	}
	return failed ? -1 : 0;
}
