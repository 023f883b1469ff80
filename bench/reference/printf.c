/* Reference: prints "COMM PID" for every getppid() call; events lost to a
 * full ring buffer are reported on stderr. */
#include "common.h"
#include <linux/types.h>
#include "printf.h"
#include "printf.skel.h"

static int on_event(void *ctx, void *data, size_t size)
{
	const struct event *e = data;

	(void)ctx, (void)size;
	printf("%s %u\n", e->comm, e->pid);
	return 0;
}

static int poll_events(void *rb, int timeout_ms)
{
	int err = ring_buffer__poll(rb, timeout_ms);

	fflush(stdout);
	return err < 0 ? err : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct printf_bpf *skel;
	struct ring_buffer *rb = NULL;
	uint64_t lost = 0;
	uint32_t zero = 0;
	int err;

	if (setup(argc, argv, &o))
		return 1;
	skel = printf_bpf__open_and_load();
	if (skel)
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	if (!rb || printf_bpf__attach(skel)) {
		fprintf(stderr, "printf: cannot load or attach: %s\n", strerror(errno));
		ring_buffer__free(rb);
		printf_bpf__destroy(skel);
		return 1;
	}
	attached(&o, 1);
	err = run(&o, poll_events, rb);
	printf_bpf__detach(skel);
	ring_buffer__consume(rb);
	fflush(stdout);
	if (!percpu_sum(bpf_map__fd(skel->maps.lost), &zero, &lost, 1) && lost)
		fprintf(stderr, "printf: %llu events lost\n", (unsigned long long)lost);
	ring_buffer__free(rb);
	printf_bpf__destroy(skel);
	return err ? 1 : 0;
}
