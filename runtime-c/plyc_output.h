/* The records from the BPF programs (plyc_event_reserve/submit in
 * bpf/plyc.bpf.h), io/events.c: read from the BPF ring buffer, or on
 * kernels without one (before 5.8, or PLYC_NO_RINGBUF=1) from a perf
 * buffer, put back in the order they were sent. Failures are
 * told on stderr as NAME: error. See docs/output.md, "Order of output". */
#ifndef PLYC_OUTPUT_H
#define PLYC_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

struct bpf_object;

/* Before load: choose the path and set the object up for it. 0, or 1 once
 * told. */
int plyc_output_prepare(struct bpf_object *obj, const char *name, int verbose);

/* After load: start reading; each record goes to handle(). 0, or 1 once told. */
int plyc_output_open(struct bpf_object *obj, int (*handle)(const void *data, size_t size));

/* Wait up to timeout_ms for records and hand over those that are in order;
 * how many were read, or a negative errno. */
int plyc_output_poll(int timeout_ms);

/* The same without waiting (after a poll() on plyc_output_epoll_fd()). */
int plyc_output_consume(void);

/* Every record sent so far, all handed over (BEGIN, before END, at the end). */
void plyc_output_drain(void);

int plyc_output_epoll_fd(void);

/* Records the kernel dropped from a full perf buffer (the ring buffer's
 * losses are counted by the programs, in plyc_stats). */
uint64_t plyc_output_lost(void);

void plyc_output_free(void);

#endif
