/* Reference: getppid() latency histogram (ns); printed on exit. */
#include "common.h"
#include "latency.skel.h"

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct latency_bpf *skel;
	uint64_t slots[64];
	uint32_t zero = 0;
	int err;

	if (setup(argc, argv, &o))
		return 1;
	skel = latency_bpf__open_and_load();
	if (!skel || latency_bpf__attach(skel)) {
		fprintf(stderr, "latency: cannot load or attach: %s\n", strerror(errno));
		latency_bpf__destroy(skel);
		return 1;
	}
	attached(&o, 2);
	err = run(&o, NULL, NULL);
	latency_bpf__detach(skel);
	if (!err)
		err = percpu_sum(bpf_map__fd(skel->maps.hists), &zero, slots, 64);
	if (!err)
		print_log2_hist("ns", slots, 64);
	latency_bpf__destroy(skel);
	return err ? 1 : 0;
}
