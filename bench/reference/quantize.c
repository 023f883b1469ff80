/* Reference: a log2 histogram of read(2) sizes; printed on exit. */
#include "common.h"
#include "quantize.skel.h"

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct quantize_bpf *skel;
	uint64_t slots[64];
	uint32_t zero = 0;
	int err;

	if (setup(argc, argv, &o))
		return 1;
	skel = quantize_bpf__open_and_load();
	if (!skel || quantize_bpf__attach(skel)) {
		fprintf(stderr, "quantize: cannot load or attach: %s\n", strerror(errno));
		quantize_bpf__destroy(skel);
		return 1;
	}
	attached(&o, 1);
	err = run(&o, NULL, NULL);
	quantize_bpf__detach(skel);
	if (!err)
		err = percpu_sum(bpf_map__fd(skel->maps.hists), &zero, slots, 64);
	if (!err)
		print_log2_hist("count", slots, 64);
	quantize_bpf__destroy(skel);
	return err ? 1 : 0;
}
