/* The tracer's output stream: every write checked. stdio's own streams
 * only set a flag on failure and lose the reason; this one keeps the
 * first failure's errno, and fails every later write at once, so that a
 * closed pipe or a full disk stops the tracer instead of being ignored. */
#define _GNU_SOURCE		/* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

const char *plyc_out_strerror(int err)
{
	if (err == PLYC_OUT_LINK)
		return "a link in a folder other users can write: not followed";
	if (err == PLYC_OUT_THEIRS)
		return "another user's file in a folder other users can write";
	if (err == PLYC_OUT_NAMES)
		return "a file with other names (hard links) in a folder other users can write";
	return strerror(err);
}

/* Whether path's folder is one another user can write (group or others
 * may write it, or another user owns it), *dir its stat. */
static int shared_folder(const char *path, struct stat *dir)
{
	const char *slash = strrchr(path, '/');
	char *name = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	int shared;

	if (!name)
		return 1;
	shared = stat(name, dir) || (dir->st_mode & (S_IWGRP | S_IWOTH)) ||
		 (dir->st_uid != geteuid() && dir->st_uid != 0);
	free(name);
	return shared;
}

/* Whether st, found at -o's name in a shared folder, is one the tracer's
 * user made (not the folder's owner's: root writing in alice's folder
 * must not follow alice's link). */
static int ours(const struct stat *st)
{
	return st->st_uid == geteuid();
}

/* Why a file found at -o's name in a shared folder is not written (0: it
 * is written): another user's, or one of several names of a file (a hard
 * link planted to a file of the tracer's user, /etc/shadow for root, where
 * protected_hardlinks is off). */
static int refused_there(const struct stat *st)
{
	if (!ours(st))
		return PLYC_OUT_THEIRS;
	return S_ISREG(st->st_mode) && st->st_nlink > 1 ? PLYC_OUT_NAMES : 0;
}

int plyc_out_refused(const char *path)
{
	struct stat dir, st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : errno;
	if (!shared_folder(path, &dir))
		return 0;
	if (S_ISLNK(st.st_mode))
		return ours(&st) ? 0 : PLYC_OUT_LINK;
	return refused_there(&st);
}

int plyc_out_open(const char *path)
{
	cookie_io_functions_t io = { .write = out_write, .close = out_close };
	struct stat dir, st;
	FILE *fp;

	out_fd = 1;
	if (path) {
		int shared = shared_folder(path, &dir);
		int link = shared && !lstat(path, &st) && S_ISLNK(st.st_mode);
		int err = 0;

		/* in a shared folder: a link followed only where the user's
		 * own, else none (O_NOFOLLOW holds against a swap since the
		 * lstat); a file there of another user's, or with other names,
		 * not emptied (fstat before the truncation) */
		if (link && !ours(&st))
			return -PLYC_OUT_LINK;
		out_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (shared && !link ? O_NOFOLLOW : 0), 0666);
		if (out_fd < 0)
			return errno == ELOOP && shared && !link ? -PLYC_OUT_LINK : -errno;
		if (fstat(out_fd, &st))
			err = errno;
		else if (shared && !link)
			err = refused_there(&st);
		if (!err && S_ISREG(st.st_mode) && ftruncate(out_fd, 0))
			err = errno;
		if (err) {
			close(out_fd);
			out_fd = -1;
			return -err;
		}
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
