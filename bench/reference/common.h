/* What the reference tools' loaders share: options, signals, the -c
 * command, the main loop and the printing of per-CPU maps. Each tool is
 * NAME.bpf.c (the BPF side) + NAME.c (the loader, built around the
 * skeleton that `bpftool gen skeleton` makes of NAME.bpf.o).
 *
 *   NAME [-d SECONDS] [-c CMD] [-v]
 *
 * -c runs `sh -c CMD` once the probes are attached and stops when it exits;
 * -d stops after SECONDS; otherwise it runs until SIGINT/SIGTERM. -v prints
 * libbpf's warnings and "N probes attached" on stderr. */
#ifndef REF_COMMON_H
#define REF_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct opts {
	double duration;
	const char *cmd;
	int verbose;
};

static volatile sig_atomic_t stopping;
static pid_t child = -1;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Only there to interrupt the sleep or poll when the -c command exits. */
static void on_child(int sig)
{
	(void)sig;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(int argc, char **argv, struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int c;

	while ((c = getopt(argc, argv, "d:c:v")) != -1) {
		switch (c) {
		case 'd': o->duration = atof(optarg); break;
		case 'c': o->cmd = optarg; break;
		case 'v': o->verbose = 1; break;
		default:
			fprintf(stderr, "usage: %s [-d SECONDS] [-c CMD] [-v]\n", argv[0]);
			return 1;
		}
	}
	libbpf_set_print(o->verbose ? print_libbpf : quiet_libbpf);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	return 0;
}

static void attached(const struct opts *o, int n)
{
	if (o->verbose)
		fprintf(stderr, "%d probe%s attached\n", n, n == 1 ? "" : "s");
}

/* Starts the -c command, then calls poll_fn(ctx, 100 ms) (or sleeps) until
 * a signal, the deadline or the command's exit. */
static int run(const struct opts *o, int (*poll_fn)(void *ctx, int timeout_ms), void *ctx)
{
	double deadline = o->duration > 0 ? now() + o->duration : 0;
	int err = 0;

	if (o->cmd) {
		child = fork();
		if (child < 0)
			return -errno;
		if (child == 0) {
			execl("/bin/sh", "sh", "-c", o->cmd, (char *)NULL);
			_exit(127);
		}
	}
	while (!stopping) {
		if (poll_fn)
			err = poll_fn(ctx, 100);
		else
			usleep(100000);
		if (err < 0 && err != -EINTR)
			break;
		err = 0;
		if (deadline && now() >= deadline)
			break;
		if (child > 0 && waitpid(child, NULL, WNOHANG) == child) {
			child = -1;
			break;
		}
	}
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	return err;
}

/* The sum over CPUs of n u64 words of a per-CPU map's value at key. */
static inline int percpu_sum(int fd, const void *key, uint64_t *sum, int n)
{
	int ncpus = libbpf_num_possible_cpus(), i, j;
	uint64_t *vals = calloc((size_t)ncpus * (size_t)n, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum) * (size_t)n);
	if (bpf_map_lookup_elem(fd, key, vals)) {
		free(vals);
		return -errno;
	}
	for (i = 0; i < ncpus; i++)
		for (j = 0; j < n; j++)
			sum[j] += vals[i * n + j];
	free(vals);
	return 0;
}

/* A log2 histogram: slot i counts [2^i, 2^(i+1)), slot 0 also 0. */
static inline void print_log2_hist(const char *title, const uint64_t *slots, int nslots)
{
	uint64_t max = 0;
	int i, first = -1, last = -1;

	for (i = 0; i < nslots; i++) {
		if (slots[i] && first < 0)
			first = i;
		if (slots[i])
			last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	printf("\n@%s:\n", title);
	for (i = first; first >= 0 && i <= last; i++) {
		uint64_t lo = i ? 1ULL << i : 0, hi = (1ULL << (i + 1)) - 1;
		int bar = max ? (int)(slots[i] * 32 / max) : 0;

		printf("\t[%20llu, %20llu] %10llu |%-32.*s|\n", (unsigned long long)lo,
		       (unsigned long long)hi, (unsigned long long)slots[i], bar,
		       "################################");
	}
}

#endif
