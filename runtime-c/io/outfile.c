/* The tracer's output stream: every write checked. stdio's own streams
 * only set a flag on failure and lose the reason; this one keeps the
 * first failure's errno, and fails every later write at once, so that a
 * closed pipe or a full disk stops the tracer instead of being ignored. */
#define _GNU_SOURCE		/* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "plyc_rt.h"
#include "plyc_outfile.h"

static int out_fd = -1;
static int out_errno;
static int out_owned;		/* a file of -o: closed with the stream */
static int out_fmt;		/* out_errno is a formatted write's (plyc_fmt_failed) */
static volatile sig_atomic_t *out_stop;	/* set: a blocked write gives up */

static ssize_t out_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	while (!out_errno && done < len) {
		ssize_t n = write(out_fd, buf + done, len - done);

		/* A signal in a write blocked on a reader that does not read:
		 * carry on, unless it asked the tracer to stop. */
		if (n < 0 && errno == EINTR && !(out_stop && *out_stop))
			continue;
		if (n <= 0)
			out_errno = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	if (out_errno) {
		errno = out_errno;
		return -1;
	}
	return (ssize_t)len;
}

static int out_close(void *cookie)
{
	(void)cookie;
	if (out_owned && close(out_fd) && !out_errno && errno != EINTR)
		out_errno = errno;
	out_fd = -1;
	return out_errno ? -1 : 0;
}

int plyc_out_open(const char *path)
{
	cookie_io_functions_t io = { .write = out_write, .close = out_close };
	FILE *fp;

	out_fd = 1;
	if (path) {
		out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (out_fd < 0)
			return -errno;
		out_owned = 1;
	}
	fp = fopencookie(NULL, "w", io);
	if (!fp) {
		int e = errno;

		if (out_owned)
			close(out_fd);
		return -e;
	}
	/* stdout's buffering: by line to a terminal, else by block (the
	 * tracer flushes after every round of events). */
	setvbuf(fp, NULL, isatty(out_fd) ? _IOLBF : _IOFBF, BUFSIZ);
	plyc_rt.out = fp;
	return 0;
}

void plyc_out_stop_flag(volatile sig_atomic_t *flag)
{
	out_stop = flag;
}

int plyc_out_error(void)
{
	/* a printf conversion the C library could not write (EOVERFLOW) ends
	 * the output as a failed write does: what follows would be wrong */
	if (!out_errno && plyc_rt.fmt_errno) {
		out_errno = plyc_rt.fmt_errno;
		out_fmt = 1;
	}
	return out_errno;
}

const char *plyc_out_what(void)
{
	return out_fmt ? "formatting output" : "writing output";
}

int plyc_out_close(void)
{
	if (plyc_rt.out && plyc_rt.out != stdout) {
		fclose(plyc_rt.out);
		plyc_rt.out = stdout;
	}
	return plyc_out_error();
}
