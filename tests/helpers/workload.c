/* Deterministic workloads for the runtime tests: each does an exact number
 * of system calls, so a tracer's counts can be compared exactly.
 *
 *   workload getppid N [CPUS]   N getppid() calls on each of CPUS CPUs (default 1)
 *   workload open PATH N        N failed-or-not openat() of PATH
 *   workload read N SIZE        N read()s of SIZE bytes from /dev/zero
 *   workload sleep MS           nanosleep
 *   workload spin MS            busy loop (for profile)
 *   workload write TEXT         write TEXT to stdout (one write(2))
 *   workload exit CODE          exit with CODE
 *   workload probe TEXT N       call plyc_probe(TEXT, N) once, a function of the
 *                               workload's own for uprobes (it returns -N)
 *   workload rewrite TEXT       copy TEXT to a buffer of its own, call plyc_probe(buffer,
 *                               length) once, then print the buffer and a newline (a
 *                               probe's write_user() changes what it prints)
 *   workload stackargs N        call plyc_probe_stack(N, N+1, ..., N+9) once: ten
 *                               arguments, the last ones on the stack (x86_64 passes
 *                               six in registers, aarch64 eight), for sargN
 *   workload stack N MS         plyc_stack_run(): N calls of plyc_stack_outer() ->
 *                               plyc_stack_mid() -> plyc_stack_leaf(plyc_probe), which
 *                               keep frame pointers
 *                               (user stacks), then plyc_stack_done(), then a sleep of
 *                               MS (a tracer names the frames while the process lives)
 *   workload pingpong N         getpgid(i) for i in 0..N-1, taking turns between two
 *                               threads on two CPUs (one task's events, from CPU
 *                               after CPU, faster than a tracer reads them)
 * With WORKLOAD_TIME set, the time MODE took is printed to stderr in ns.
 * Its comm is plyc-work, or $WORKLOAD_COMM.
 *   workload delay MS MODE...   sleep MS first, then do MODE (to attach to it with -p)
 *   workload udp N SIZE         N UDP datagrams of SIZE bytes to 127.0.0.1:9
 *   workload tcp N [FAMILIES]   N TCP connections over loopback to a listener of
 *                               its own on an ephemeral port, each accepted, then
 *                               closed by the client first; FAMILIES: 4 (127.0.0.1,
 *                               the default), 6 (::1) or 46 (N of each, v4 first)
 *   workload refused N [FAMILIES]  N TCP connects to port 9 of loopback, where
 *                               nothing listens: SYN_SENT then CLOSE, a RST each
 *   workload retrans N [FAMILIES]  N TCP connects over loopback to a listener
 *                               whose accept queue is full (listen(0), one
 *                               connection queued): each SYN is dropped and sent
 *                               again once, after 1 s; all is closed once the
 *                               TCP MIB counted the N sent again (1.5-11.5 s)
 *   workload unix TEXT N        N times: TEXT sent over a unix stream socket pair
 *                               (one write(2)) and read back whole (undump.bt)
 *   workload touch N            N fresh pages touched (one page fault each, no
 *                               huge pages) while its comm is plyc-touch; the
 *                               same code warmed up first, so that is all it does
 *   workload switches N         N 100us sleeps (a context switch each) while its
 *                               comm is plyc-switch
 *   workload waits N            N clock_nanosleep() of 1us, N pthread_cond_wait()
 *                               (each woken by a helper thread that never waits
 *                               on a condition itself) and N pthread_cond_timedwait()
 *                               that time out at once (glibc exports all three
 *                               in two symbol versions)
 *   workload nice N             setpriority() to nice -N: one capability check
 *                               (CAP_SYS_NICE) to raise its own priority
 *   workload swap MB            MB MiB written page by page, then read back: in a
 *                               memory cgroup smaller than that, with swap, the
 *                               read swaps pages in
 *   workload watch N            at the fixed address 0x10000000 (a page of its own):
 *                               N 8-byte writes, then N 8-byte reads; on x86_64
 *                               also N calls of a `ret` at 0x10001000 (watchpoints)
 *   workload watchwait N        the same word, in two phases, each started by a line
 *                               read from stdin: N writes by the main thread, then
 *                               N by a thread it starts (-p, unwatch())
 *   workload ticks MS C1 C2...  Ci getppid() calls in the middle of the i-th next
 *                               interval of MS ms of CLOCK_TAI (tseries() tests)
 *   workload sigparent SIG      send signal SIG to its parent (the tracer running it
 *                               with -c: a self:signal probe), then wait to be
 *                               ended (the tracer's exit ends its child), 30 s at most
 * plyc_ifunc is an IFUNC, as glibc's string functions are (for uprobe tests).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(int argc, char **argv);

/* An IFUNC: the symbol plyc_ifunc is its resolver, which the dynamic loader
 * calls once; __plyc_ifunc_plain, named as glibc names implementations, is
 * the function that runs. */
#if !defined(__mips__)   /* MIPS has no IFUNCs (the guests' static builds) */
typedef int plyc_ifunc_fn(int);
int __plyc_ifunc_plain(int x)
{
	return x + 1;
}

static plyc_ifunc_fn *resolve_plyc_ifunc(void)
{
	return __plyc_ifunc_plain;
}

int plyc_ifunc(int x) __attribute__((ifunc("resolve_plyc_ifunc")));
#endif

/* A global for uaddr(): its value, read through its address in the
 * probed process (workload probe). */
long plyc_global = 4242;

/* For uprobe tests where a libc function won't do (a static binary's libc
 * is Thumb code on armhf, which 32-bit ARM uprobes can't probe): a string
 * and an integer argument, and a negative long return value. The empty asm
 * keeps the call and its arguments as they are written. */
__attribute__((noinline)) long plyc_probe(const char *text, long n)
{
	__asm__ volatile("" : : "r"(text), "r"(&plyc_global) : "memory");
	return -n;
}

/* Ten arguments, so that some are on the stack (bpftrace's sargN); the
 * sum keeps every one of them used. */
__attribute__((noinline)) long plyc_probe_stack(long a0, long a1, long a2, long a3, long a4, long a5,
					       long a6, long a7, long a8, long a9)
{
	long sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;

	__asm__ volatile("" : : "r"(sum) : "memory");
	return sum;
}

/* workload stack: three frames of its own for user stacks, each with a
 * frame pointer (the kernel walks user stacks by them) and no tail call
 * (the empty asm after each call), and a code address for usym(). */
#define STACK_FRAME __attribute__((noinline, optimize("no-omit-frame-pointer")))

STACK_FRAME long plyc_stack_leaf(long (*fn)(const char *, long))
{
	__asm__ volatile("" : : "r"(fn) : "memory");
	return fn == plyc_probe;
}

STACK_FRAME long plyc_stack_mid(long x)
{
	long r = plyc_stack_leaf(plyc_probe);

	__asm__ volatile("" : : : "memory");
	return r + x;
}

STACK_FRAME long plyc_stack_outer(long x)
{
	long r = plyc_stack_mid(x);

	__asm__ volatile("" : : : "memory");
	return r * 2;
}

__attribute__((noinline)) void plyc_stack_done(void)
{
	__asm__ volatile("" : : : "memory");
}

/* The outermost frame tests name, so that a change to main() moves no
 * offset they print. */
STACK_FRAME void plyc_stack_run(long n)
{
	long i;

	for (i = 0; i < n; i++)
		plyc_stack_outer(i);
	plyc_stack_done();
}

/* workload waits: every pthread_cond_wait() call is one round. The waker
 * signals the round the main thread waits in, once: it can only take the
 * mutex while the main thread is inside pthread_cond_wait() (which holds it
 * otherwise), and it reads the round under the mutex. So each call returns
 * by the waker's signal, exactly once a round; a spurious wakeup (rare on
 * Linux) ends its round early, and the waker signals the next one: still
 * exactly N calls and N returns, and never a deadlock. */
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cond = PTHREAD_COND_INITIALIZER;
static long wait_round;   /* the round the main thread waits in; 0 between rounds */
static int waits_done;

/* workload pingpong: thread t makes the calls i with i % 2 == t, each
 * once the other has made call i - 1. */
static long pingpong_n, pingpong_turn;

static void *pingpong(void *arg)
{
	long t = (long)arg, i;
	cpu_set_t set;
	int ncpus = 1;

	/* Not sysconf(): it opens a file, which kprobe tests on open would see. */
	if (!sched_getaffinity(0, sizeof(set), &set))
		ncpus = CPU_COUNT(&set);

	pin((int)(t % (ncpus > 0 ? ncpus : 1)));
	for (i = t; i < pingpong_n; i += 2) {
		while (__atomic_load_n(&pingpong_turn, __ATOMIC_ACQUIRE) != i)
			if (ncpus < 2)
				sched_yield();
		syscall(SYS_getpgid, (pid_t)i);
		__atomic_store_n(&pingpong_turn, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *waker(void *arg)
{
	long signalled = 0;
	int done = 0;

	(void)arg;
	while (!done) {
		pthread_mutex_lock(&wait_lock);
		done = waits_done;
		if (wait_round && wait_round != signalled) {
			signalled = wait_round;
			pthread_cond_signal(&wait_cond);
		}
		pthread_mutex_unlock(&wait_lock);
		sched_yield();
	}
	return NULL;
}

static int waits(long n)
{
	struct timespec us = { 0, 1000 }, past = { 0, 0 };
	pthread_t helper;
	long i;

	for (i = 0; i < n; i++)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &us, NULL);
	pthread_mutex_lock(&wait_lock);
	if (pthread_create(&helper, NULL, waker, NULL))
		return 1;
	for (i = 1; i <= n; i++) {
		wait_round = i;
		pthread_cond_wait(&wait_cond, &wait_lock);
		wait_round = 0;
	}
	waits_done = 1;
	for (i = 0; i < n; i++)
		pthread_cond_timedwait(&wait_cond, &wait_lock, &past);
	pthread_mutex_unlock(&wait_lock);
	return pthread_join(helper, NULL) != 0;
}

/* A loopback address of the family, port in network order. */
static socklen_t loopback(struct sockaddr_in6 *sa, int v6, unsigned short port)
{
	memset(sa, 0, sizeof(*sa));
	if (v6) {
		sa->sin6_family = AF_INET6;
		sa->sin6_port = port;
		sa->sin6_addr = in6addr_loopback;
		return sizeof(struct sockaddr_in6);
	}
	((struct sockaddr_in *)sa)->sin_family = AF_INET;
	((struct sockaddr_in *)sa)->sin_port = port;
	((struct sockaddr_in *)sa)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(struct sockaddr_in);
}

/* n connections to a listener of our own: connect, accept, close the
 * client's end, then the server's (one after the other, no overlap). */
static int tcp(long n, int v6)
{
	struct sockaddr_in6 sa;
	socklen_t len = loopback(&sa, v6, 0);
	int lfd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	long i;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, len) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		return 1;
	for (i = 0; i < n; i++) {
		int c = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0), s;
		char byte;

		if (c < 0 || connect(c, (struct sockaddr *)&sa, len))
			return 1;
		s = accept(lfd, NULL, NULL);
		if (s < 0)
			return 1;
		close(c);
		/* the client's FIN has arrived: the server closes in CLOSE_WAIT */
		if (read(s, &byte, 1) < 0)
			return 1;
		close(s);
	}
	close(lfd);
	usleep(10000);
	return 0;
}

/* The TCP MIB's RetransSegs (/proc/net/snmp, IPv4 and IPv6 alike), or -1. */
static long tcp_retrans_segs(void)
{
	char line[1024], names[1024];
	FILE *f = fopen("/proc/net/snmp", "r");
	long value = -1;

	if (!f)
		return -1;
	names[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		char *name, *val, *sn, *sv;
		int header = strncmp(line, "Tcp:", 4) == 0 && !names[0];

		if (strncmp(line, "Tcp:", 4))
			continue;
		if (header) {
			strcpy(names, line);
			continue;
		}
		name = strtok_r(names, " \n", &sn);
		val = strtok_r(line, " \n", &sv);
		while (name && val) {
			if (!strcmp(name, "RetransSegs"))
				value = atol(val);
			name = strtok_r(NULL, " \n", &sn);
			val = strtok_r(NULL, " \n", &sv);
		}
	}
	fclose(f);
	return value;
}

static int retrans(long n, int v6)
{
	struct sockaddr_in6 sa;
	socklen_t len = loopback(&sa, v6, 0);
	int lfd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0), first, pending[16];
	long i, before;

	if (n > 16)
		n = 16;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, len) || listen(lfd, 0) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		return 1;
	first = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	if (first < 0 || connect(first, (struct sockaddr *)&sa, len))
		return 1;
	before = tcp_retrans_segs();
	for (i = 0; i < n; i++) {
		pending[i] = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (pending[i] < 0)
			return 1;
		connect(pending[i], (struct sockaddr *)&sa, len);	/* EINPROGRESS */
	}
	/* until each SYN was sent again (the timer's 1 s can come late in a
	 * guest on a busy machine), 1.5 s where the MIB can't be read */
	usleep(1500000);
	for (i = 0; before >= 0 && i < 200 && tcp_retrans_segs() < before + n; i++)
		usleep(50000);
	for (i = 0; i < n; i++)
		close(pending[i]);
	close(first);
	close(lfd);
	return 0;
}

static int refused(long n, int v6)
{
	struct sockaddr_in6 sa;
	socklen_t len = loopback(&sa, v6, htons(9));
	long i;

	for (i = 0; i < n; i++) {
		int c = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);

		if (c < 0 || connect(c, (struct sockaddr *)&sa, len) == 0)
			return 1;
		close(c);
	}
	return 0;
}

int main(int argc, char **argv)
{
	double start = now();
	int rc = run(argc, argv);

	if (getenv("WORKLOAD_TIME"))
		fprintf(stderr, "%.0f\n", (now() - start) * 1e9);
	return rc;
}

/* Touch n fresh pages with the comm `name`; every page of code and stack
 * it runs is resident after a first call. */
static int touch(const char *name, long n)
{
	long page = sysconf(_SC_PAGESIZE), i;
	char *buf = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char old[16] = "";

	if (buf == MAP_FAILED)
		return 1;
	/* One fault per page: no transparent huge page covering many. */
	madvise(buf, (size_t)(n * page), MADV_NOHUGEPAGE);
	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, name);
	for (i = 0; i < n; i++)
		((volatile char *)buf)[i * page] = 1;
	prctl(PR_SET_NAME, old);
	return munmap(buf, (size_t)(n * page));
}

/* Watchpoint targets at an address a script can name before the process
 * exists (bpftrace's own tests use the same one): n writes and n reads of
 * the word at WATCH_AT, and on x86_64 n calls of a `ret` a page above. */
#define WATCH_AT 0x10000000UL
static int watch(long n)
{
	long page = sysconf(_SC_PAGESIZE), i;
	void *at = mmap((void *)WATCH_AT, (size_t)(2 * page), PROT_READ | PROT_WRITE | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	volatile uint64_t *word = at;
	uint64_t sum = 0;

	if (at != (void *)WATCH_AT)
		return 1;
	for (i = 0; i < n; i++)
		*word = (uint64_t)i;
	for (i = 0; i < n; i++)
		sum += *word;
#if defined(__x86_64__)
	{
		void (*ret)(void) = (void (*)(void))(WATCH_AT + (unsigned long)page);

		*(volatile unsigned char *)ret = 0xc3;
		for (i = 0; i < n; i++)
			ret();
	}
#endif
	return munmap(at, (size_t)(2 * page)) || sum != (uint64_t)(n > 0 ? n * (n - 1) : 0);
}

static void *watch_writes(void *n)
{
	volatile uint64_t *word = (volatile uint64_t *)WATCH_AT;
	long i;

	for (i = 0; i < (long)n; i++)
		*word = (uint64_t)i;
	return NULL;
}

/* Each phase waits for a line on stdin: the test's go, once the tracer
 * has done what it said it did. */
static int watch_wait(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	void *at = mmap((void *)WATCH_AT, (size_t)page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	char line[16];
	pthread_t t;

	if (at != (void *)WATCH_AT || !fgets(line, sizeof(line), stdin))
		return 1;
	watch_writes((void *)n);
	if (!fgets(line, sizeof(line), stdin) || pthread_create(&t, NULL, watch_writes, (void *)n))
		return 1;
	return pthread_join(t, NULL) != 0;
}

/* TEXT through a unix stream socket pair, N times: one write, one read. */
static int unix_stream(const char *text, long n)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	int sv[2];
	long i;

	if (!buf || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	for (i = 0; i < n; i++)
		if (write(sv[0], text, len) != (ssize_t)len || read(sv[1], buf, len) != (ssize_t)len)
			return 1;
	close(sv[0]);
	close(sv[1]);
	free(buf);
	return 0;
}

static int switches(const char *name, long n)
{
	struct timespec ts = { 0, 100000 };
	char old[16] = "";
	long i;

	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, name);
	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	prctl(PR_SET_NAME, old);
	return 0;
}

static int swap_through(size_t size)
{
	volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long sum = 0;
	size_t i;

	if (p == MAP_FAILED)
		return 1;
	for (i = 0; i < size; i += 4096)
		p[i] = (char)(i >> 12 | 1);
	for (i = 0; i < size; i += 4096)
		sum += (unsigned char)p[i];
	return sum == 0;
}

/* For tseries(): counts[i] getppid() calls in the middle of interval i of
 * MS ms of CLOCK_TAI (as bpftrace's intervals are), from the next one on;
 * a tracer's intervals then hold those calls whatever the timers' jitter
 * (up to MS/2). */
static int ticks(long ms, int n, char **counts)
{
	struct timespec ts;
	long long step = ms * 1000000LL, at;
	long i;
	int k;

	if (ms <= 0 || clock_gettime(CLOCK_TAI, &ts))
		return 1;
	at = ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec) / step * step + step + step / 2;
	for (k = 0; k < n; k++, at += step) {
		ts.tv_sec = (time_t)(at / 1000000000LL);
		ts.tv_nsec = (long)(at % 1000000000LL);
		while (clock_nanosleep(CLOCK_TAI, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		for (i = atol(counts[k]); i > 0; i--)
			syscall(SYS_getppid);
	}
	return 0;
}

static int run(int argc, char **argv)
{
	long i, n;

	/* WORKLOAD_COMM: a name of its own, for tests that run while others do */
	prctl(PR_SET_NAME, getenv("WORKLOAD_COMM") ? getenv("WORKLOAD_COMM") : "plyc-work");
	while (argc > 3 && !strcmp(argv[1], "delay")) {
		usleep((useconds_t)atol(argv[2]) * 1000);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "getppid")) {
		int cpus = argc > 3 ? atoi(argv[3]) : 1, c;

		n = atol(argv[2]);
		for (c = 0; c < cpus; c++) {
			if (fork() == 0) {
				pin(c % (int)sysconf(_SC_NPROCESSORS_ONLN));
				for (i = 0; i < n; i++)
					syscall(SYS_getppid);
				_exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
	} else if (!strcmp(argv[1], "open")) {
		n = atol(argv[3]);
		for (i = 0; i < n; i++) {
			int fd = open(argv[2], O_RDONLY);

			if (fd >= 0)
				close(fd);
		}
	} else if (!strcmp(argv[1], "read")) {
		int fd = open("/dev/zero", O_RDONLY);
		size_t size = (size_t)atol(argv[3]);
		char *buf = malloc(size ? size : 1);

		n = atol(argv[2]);
		for (i = 0; i < n; i++)
			if (read(fd, buf, size) < 0)
				return 1;
	} else if (!strcmp(argv[1], "sleep")) {
		usleep((useconds_t)atol(argv[2]) * 1000);
	} else if (!strcmp(argv[1], "spin")) {
		double end = now() + atol(argv[2]) / 1000.0;
		volatile unsigned long x = 0;

		while (now() < end)
			x++;
	} else if (!strcmp(argv[1], "write")) {
		if (write(1, argv[2], strlen(argv[2])) < 0)
			return 1;
	} else if (!strcmp(argv[1], "udp")) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		size_t size = argc > 3 ? (size_t)atol(argv[3]) : 1;
		char *buf = calloc(1, size ? size : 1);

		to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		n = atol(argv[2]);
		for (i = 0; i < n; i++)
			sendto(fd, buf, size, 0, (struct sockaddr *)&to, sizeof(to));
	} else if (!strcmp(argv[1], "tcp") || !strcmp(argv[1], "refused") ||
		   !strcmp(argv[1], "retrans")) {
		int (*fn)(long, int) = argv[1][0] == 't' ? tcp : argv[1][2] == 'f' ? refused : retrans;
		const char *fam = argc > 3 ? argv[3] : "4";

		n = atol(argv[2]);
		return (strchr(fam, '4') && fn(n, 0)) || (strchr(fam, '6') && fn(n, 1));
	} else if (!strcmp(argv[1], "unix") && argc > 3) {
		return unix_stream(argv[2], atol(argv[3]));
	} else if (!strcmp(argv[1], "touch")) {
		return touch("plyc-warm", 1) || touch("plyc-touch", atol(argv[2]));
	} else if (!strcmp(argv[1], "switches")) {
		return switches("plyc-warm", 1) || switches("plyc-switch", atol(argv[2]));
	} else if (!strcmp(argv[1], "waits")) {
		return waits(atol(argv[2]));
	} else if (!strcmp(argv[1], "pingpong")) {
		pthread_t other;

		pingpong_n = atol(argv[2]);
		if (pthread_create(&other, NULL, pingpong, (void *)1L))
			return 1;
		pingpong((void *)0L);
		return pthread_join(other, NULL) != 0;
	} else if (!strcmp(argv[1], "nice")) {
		return setpriority(PRIO_PROCESS, 0, -atoi(argv[2])) != 0;
	} else if (!strcmp(argv[1], "swap")) {
		return swap_through(atol(argv[2]) << 20);
	} else if (!strcmp(argv[1], "exit")) {
		return atoi(argv[2]);
	} else if (!strcmp(argv[1], "sigparent") && argc > 2) {
		if (kill(getppid(), atoi(argv[2])))
			return 1;
		sleep(30);
		return 2;
	} else if (!strcmp(argv[1], "stack") && argc > 3) {
		plyc_stack_run(atol(argv[2]));
		usleep((useconds_t)atol(argv[3]) * 1000);
	} else if (!strcmp(argv[1], "probe") && argc > 3) {
		return plyc_probe(argv[2], atol(argv[3])) != -atol(argv[3]);
	} else if (!strcmp(argv[1], "watchwait") && argc > 2) {
		return watch_wait(atol(argv[2]));
	} else if (!strcmp(argv[1], "watch") && argc > 2) {
		return watch(atol(argv[2]));
	} else if (!strcmp(argv[1], "ticks") && argc > 3) {
		return ticks(atol(argv[2]), argc - 3, argv + 3);
	} else if (!strcmp(argv[1], "rewrite")) {
		char *buf = strdup(argv[2]);

		if (!buf)
			return 1;
		plyc_probe(buf, (long)strlen(buf));
		return printf("%s\n", buf) < 0 || fflush(stdout) != 0;
	} else if (!strcmp(argv[1], "stackargs") && argc > 2) {
		long n = atol(argv[2]);

		return plyc_probe_stack(n, n + 1, n + 2, n + 3, n + 4, n + 5, n + 6, n + 7, n + 8, n + 9) != 10 * n + 45;
	} else {
		return 2;
	}
	return 0;
}
