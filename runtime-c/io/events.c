/* The output layer, tracer side (plyc_output.h). A ring buffer holds the
 * records of every CPU in the order they were reserved; a perf buffer
 * holds one queue per CPU, so a task that moves between CPUs would see its
 * lines shuffled. The BPF side sends each perf record after its submit time
 * (bpf_ktime_get_ns, CLOCK_MONOTONIC), and records are handed over sorted by
 * it, once every CPU's queue has been read past that time. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_output.h"

/* A record sent this long before a read of every CPU's queue began is in
 * what was read: the time is taken just before the copy into the buffer,
 * so this is a margin for a program interrupted between the two. */
#define HOLD_NS 10000000ULL
/* How long a poll waits while records are held back for that margin. */
#define HOLD_POLL_MS 20

static int use_ringbuf = 1;
static struct ring_buffer *rb;
static struct perf_buffer *pb;
static size_t pb_pages;
static int (*handler)(const void *data, size_t size);
static uint64_t lost;

struct pending {
	uint64_t time;
	uint64_t seq;              /* arrival order: a tie keeps it */
	size_t size;
	size_t off;                /* of the record (after its time) in `arena` */
};
static struct pending *queue;
static size_t queued, queue_cap;
static uint64_t arrivals;
/* The records of `queue`, one after the other, each 8-aligned as the event
 * printers read them (no malloc per record). */
static unsigned char *arena;
static size_t arena_len, arena_cap;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Whether a program of obj is sleepable (an iterator calling bpf_d_path):
 * it may not write to a perf buffer, and a kernel that runs it (5.12) has
 * the ring buffer (5.8). */
static int has_sleepable(struct bpf_object *obj)
{
	struct bpf_program *prog;

	/* by its section (iter.s/...): libbpf sets the flag only at load */
	bpf_object__for_each_program(prog, obj)
		if (strstr(bpf_program__section_name(prog), ".s/"))
			return 1;
	return 0;
}

/* libbpf_probe_bpf_map_type() creates a ring buffer to see; the variable
 * forces the perf buffer on kernels that have both (how it is tested),
 * save for a sleepable program's tracer, which has no such fallback. */
static const char *why_perf(struct bpf_object *obj)
{
	const char *force = getenv("PLYC_NO_RINGBUF");

	if (force && *force && strcmp(force, "0") && !has_sleepable(obj))
		return "PLYC_NO_RINGBUF is set";
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1)
		return "this kernel has no BPF ring buffer";
	return NULL;
}

static int write_zero(char *bytes, const void *arg)
{
	(void)arg;
	memset(bytes, 0, sizeof(uint32_t));
	return 0;
}

/* The ring buffer's size, shared among the CPUs' perf buffers: a power of
 * two pages each, at least one. */
static size_t pages_per_cpu(size_t ringbuf_size)
{
	long page = sysconf(_SC_PAGESIZE);
	int ncpus = libbpf_num_possible_cpus();
	size_t want, pages = 1;

	if (page <= 0)
		page = 4096;
	if (ncpus <= 0)
		ncpus = 1;
	want = ringbuf_size / (size_t)ncpus / (size_t)page;
	while (pages * 2 <= want)
		pages *= 2;
	return pages;
}

int plyc_output_prepare(struct bpf_object *obj, const char *name, int verbose)
{
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "plyc_events");
	struct bpf_map *slots = bpf_object__find_map_by_name(obj, "plyc_evbuf");
	const char *why;
	int err;

	if (!events || !slots) {
		fprintf(stderr, "%s: error: the BPF object has no output maps (was it built by this plyc?)\n", name);
		return 1;
	}
	why = why_perf(obj);
	use_ringbuf = !why;
	if (use_ringbuf) {
		/* The perf-buffer path's record slots go unused. */
		err = bpf_map__set_max_entries(slots, 1);
		if (verbose)
			fprintf(stderr, "%s: output: BPF ring buffer, %u bytes\n", name, bpf_map__max_entries(events));
	} else {
		pb_pages = pages_per_cpu(bpf_map__max_entries(events));
		/* max_entries 0: libbpf makes it one entry per possible CPU. */
		err = bpf_map__set_type(events, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
		if (!err)
			err = bpf_map__set_key_size(events, sizeof(int));
		if (!err)
			err = bpf_map__set_value_size(events, sizeof(int));
		if (!err)
			err = bpf_map__set_max_entries(events, 0);
		if (!err)
			err = plyc_edit_rodata(obj, "plyc_has_ringbuf", sizeof(uint32_t), write_zero, NULL);
		if (verbose)
			fprintf(stderr, "%s: output: perf buffer, %zu page%s per CPU (%s)\n", name, pb_pages,
				pb_pages == 1 ? "" : "s", why);
	}
	if (err) {
		fprintf(stderr, "%s: error: cannot set up the output: %s\n", name, strerror(-err));
		return 1;
	}
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	return handler(data, size);
}

/* Room for n more bytes in the arena. */
static int arena_grow(size_t n)
{
	size_t cap = arena_cap ? arena_cap : 65536;
	unsigned char *grown;

	if (arena_len + n <= arena_cap)
		return 0;
	while (cap < arena_len + n)
		cap *= 2;
	grown = realloc(arena, cap);
	if (!grown)
		return -1;
	arena = grown;
	arena_cap = cap;
	return 0;
}

/* A sample's data: its time, then the record. Kept until it is in order. */
static void on_sample(const void *data, uint32_t size)
{
	struct pending *p;
	size_t n;

	if (size < sizeof(uint64_t))
		return;
	n = (size - sizeof(uint64_t) + 7) / 8 * 8;
	if (arena_grow(n)) {
		lost++;
		return;
	}
	if (queued == queue_cap) {
		size_t cap = queue_cap ? 2 * queue_cap : 256;
		struct pending *grown = realloc(queue, cap * sizeof(*queue));

		if (!grown) {
			lost++;
			return;
		}
		queue = grown;
		queue_cap = cap;
	}
	p = &queue[queued];
	p->size = size - sizeof(uint64_t);
	p->off = arena_len;
	arena_len += n;
	memcpy(&p->time, data, sizeof(p->time));
	memcpy(arena + p->off, (const char *)data + sizeof(uint64_t), p->size);
	p->seq = arrivals++;
	queued++;
}

/* The perf records the BPF side's output makes: a sample (PERF_SAMPLE_RAW:
 * a u32 size, then the data) or, once there is room again after a full
 * buffer, how many samples were dropped. */
static enum bpf_perf_event_ret on_perf_record(void *ctx, int cpu, struct perf_event_header *h)
{
	(void)ctx;
	(void)cpu;
	if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(*h) + sizeof(uint32_t)) {
		uint32_t size;

		memcpy(&size, h + 1, sizeof(size));
		if (size <= h->size - sizeof(*h) - sizeof(size))
			on_sample((const char *)(h + 1) + sizeof(size), size);
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 2 * sizeof(uint64_t)) {
		uint64_t count;

		memcpy(&count, (const char *)(h + 1) + sizeof(uint64_t), sizeof(count));
		lost += count;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

/* libbpf's perf_buffer__new() has the kernel wake the tracer for every
 * sample, which costs the probes an irq_work each (1.1 us an event instead
 * of 0.2 on 6.18, bench/). Here it wakes the tracer when a CPU's buffer is
 * a quarter full, and the tracer reads every buffer at least every 100 ms
 * anyway (plyc_main's poll timeout). */
static struct perf_buffer *perf_open(int fd)
{
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(pb_pages * (size_t)(page > 0 ? page : 4096) / 4);
	return perf_buffer__new_raw(fd, pb_pages, &attr, on_perf_record, NULL, NULL);
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand over, in time order, the records sent before `limit`. */
static void flush(uint64_t limit)
{
	size_t i, held = 0;

	for (i = 1; i < queued; i++) {
		if (by_time(&queue[i - 1], &queue[i]) > 0) {
			qsort(queue, queued, sizeof(*queue), by_time);
			break;
		}
	}
	for (i = 0; i < queued && queue[i].time < limit; i++)
		handler(arena + queue[i].off, queue[i].size);
	/* The records held back (few: the last 10 ms) move to the arena's start. */
	memmove(queue, queue + i, (queued - i) * sizeof(*queue));
	queued -= i;
	if (queued) {
		unsigned char *keep = malloc(arena_cap);
		size_t len = 0;

		if (!keep) {
			lost += queued;
			queued = 0;
		}
		for (i = 0; i < queued; i++) {
			memcpy(keep + len, arena + queue[i].off, queue[i].size);
			queue[i].off = len;
			len += (queue[i].size + 7) / 8 * 8;
		}
		if (keep) {
			free(arena);
			arena = keep;
			held = len;
		}
	}
	arena_len = held;
}

int plyc_output_open(struct bpf_object *obj, int (*handle)(const void *data, size_t size))
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "plyc_events");
	int fd = m ? bpf_map__fd(m) : -1;

	handler = handle;
	if (use_ringbuf)
		rb = ring_buffer__new(fd, on_record, NULL, NULL);
	else
		pb = perf_open(fd);
	return !rb && !pb;
}

/* One read of every CPU's queue, begun at `start`. */
static int read_round(uint64_t start)
{
	int n = perf_buffer__consume(pb);

	flush(start > HOLD_NS ? start - HOLD_NS : 0);
	return n;
}

int plyc_output_poll(int timeout_ms)
{
	uint64_t start;
	int n;

	if (rb)
		return ring_buffer__poll(rb, timeout_ms);
	start = now_ns();
	if (queued && timeout_ms > HOLD_POLL_MS)
		timeout_ms = HOLD_POLL_MS;
	n = perf_buffer__poll(pb, timeout_ms);
	if (n < 0 && n != -EINTR)
		return n;
	return read_round(start);
}

int plyc_output_consume(void)
{
	if (rb)
		return ring_buffer__consume(rb);
	return read_round(now_ns());
}

void plyc_output_drain(void)
{
	if (rb) {
		ring_buffer__consume(rb);
		return;
	}
	perf_buffer__consume(pb);
	flush(UINT64_MAX);
}

int plyc_output_epoll_fd(void)
{
	return rb ? ring_buffer__epoll_fd(rb) : perf_buffer__epoll_fd(pb);
}

uint64_t plyc_output_lost(void)
{
	return lost;
}

void plyc_output_free(void)
{
	ring_buffer__free(rb);
	perf_buffer__free(pb);
	rb = NULL;
	pb = NULL;
	free(queue);
	free(arena);
	queue = NULL;
	arena = NULL;
	queued = queue_cap = arena_len = arena_cap = 0;
}
