/* The tracer's process-wide output state (plyc_rt, plyc_rt.h): where the
 * output goes, JSON or text, the style's operations (chosen by
 * output/select.c), Unicode bars or ASCII, the stack map, the clocks'
 * offset. The lowest layer: everything above reads it. */
#define _GNU_SOURCE		/* strcasestr, open_memstream */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plyc_rt.h"

#define NSEC_PER_SEC 1000000000LL

struct plyc_rt plyc_rt = {
	.out = NULL,		/* stdout, set by plyc_rt_init() */
	.json = 0,
	.utf8 = 0,
	.stack_fd = -1,
	.mono_to_real_ns = 0,
	.tai_to_real_ns = 0,
};

/* The charset is taken from the first non-empty of LC_ALL, LC_CTYPE and
 * LANG, as setlocale(3) would, without needing locale files (the tracer is
 * a static binary, often on a device without any). */
static int env_wants_utf8(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	const char *v;
	size_t i;

	v = getenv("PLYC_ASCII");
	if (v && *v && strcmp(v, "0"))
		return 0;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return 0;
}

void plyc_rt_init(void)
{
	struct timespec mono, real;

	if (!plyc_rt.out)
		plyc_rt.out = stdout;

	plyc_rt.utf8 = env_wants_utf8();

	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; walltime values are shifted
	 * by the offset between the two clocks at start. */
	if (!clock_gettime(CLOCK_MONOTONIC, &mono) &&
	    !clock_gettime(CLOCK_REALTIME, &real))
		plyc_rt.mono_to_real_ns =
			((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * NSEC_PER_SEC +
			((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec);

	/* tseries() intervals are TAI's (bpftrace's): UTC differs from it by
	 * whole (leap) seconds, so the reads' few ns apart are rounded off */
	if (!clock_gettime(CLOCK_TAI, &mono) && !clock_gettime(CLOCK_REALTIME, &real)) {
		int64_t d = ((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * NSEC_PER_SEC +
			    ((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec) + NSEC_PER_SEC / 2;

		plyc_rt.tai_to_real_ns = (d / NSEC_PER_SEC - (d % NSEC_PER_SEC < 0)) * NSEC_PER_SEC;
	}

	tzset();
}

void plyc_fmt_failed(int err)
{
	if (!plyc_rt.fmt_errno)
		plyc_rt.fmt_errno = err ? err : EIO;
}

FILE *plyc_text_open(struct plyc_textbuf *b)
{
	b->s = NULL;
	b->len = 0;
	b->fp = open_memstream(&b->s, &b->len);
	if (!b->fp)
		plyc_fmt_failed(errno);
	return b->fp;
}

int plyc_text_close(struct plyc_textbuf *b)
{
	if (!b->fp)
		return -1;   /* kept by plyc_text_open */
	if (fclose(b->fp) || !b->s) {
		plyc_fmt_failed(b->s ? errno : ENOMEM);
		b->fp = NULL;
		return -1;
	}
	b->fp = NULL;
	return 0;
}

int plyc_fmt_int(int v)
{
	return v;
}

int plyc_fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	errno = 0;
	n = vfprintf(fp, fmt, ap);
	va_end(ap);
	if (n < 0)
		plyc_fmt_failed(errno);
	return n;
}

int plyc_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	errno = 0;
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0)
		plyc_fmt_failed(errno);
	return n;
}

int plyc_proc_is_ours(void)
{
	static int known, ours;
	char link[32];
	ssize_t n;

	if (!known) {
		/* no /proc: nothing of another namespace's is read either */
		n = readlink("/proc/self", link, sizeof(link) - 1);
		ours = 1;
		if (n > 0) {
			link[n] = 0;
			ours = strtol(link, NULL, 10) == (long)getpid();
		}
		known = 1;
	}
	return ours;
}
