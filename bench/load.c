/* The benchmarks' load generator: a fixed number of system calls, timed.
 *
 *   load getppid N        N getppid() calls in a tight loop
 *   load read N           N read()s of /dev/zero, sizes 1, 2, 4, ... 4096 in turn
 *   load rate N RATE      N getppid() calls paced at RATE calls a second
 *
 * It names itself "bench-load", runs on CPU 0 (BENCH_CPU overrides) and
 * prints the seconds the loop took on stdout. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the vDSO: no system call */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[4096];
	const char *cpu = getenv("BENCH_CPU");
	cpu_set_t set;
	double t0, t1;
	long i, n;

	if (argc < 3) {
		fprintf(stderr, "usage: load getppid|read N | load rate N RATE\n");
		return 2;
	}
	prctl(PR_SET_NAME, "bench-load");
	CPU_ZERO(&set);
	CPU_SET(cpu ? atoi(cpu) : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	n = atol(argv[2]);

	t0 = now();
	if (!strcmp(argv[1], "getppid")) {
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(argv[1], "read")) {
		int fd = open("/dev/zero", O_RDONLY);

		if (fd < 0)
			return 1;
		for (i = 0; i < n; i++)
			if (read(fd, buf, (size_t)1 << (i % 13)) < 0)
				return 1;
		close(fd);
	} else if (!strcmp(argv[1], "rate") && argc > 3) {
		double period = 1.0 / atof(argv[3]), next = t0;

		for (i = 0; i < n; i++) {
			while (now() < next)
				;
			next += period;
			syscall(SYS_getppid);
		}
	} else {
		return 2;
	}
	t1 = now();
	printf("%.9f\n", t1 - t0);
	return 0;
}
