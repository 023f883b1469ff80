/* The tracer's output stream (plyc_rt.out): standard output or -o FILE,
 * written through a stdio cookie so that a failed write is seen, and its
 * errno kept, whichever printer made it (docs/output.md, "When output
 * cannot be written"). */
#ifndef PLYC_OUTFILE_H
#define PLYC_OUTFILE_H

#include <signal.h>

/* Standard output (path NULL) or FILE, created or truncated, close-on-exec;
 * plyc_rt.out is then the stream. 0, or -errno (or -PLYC_OUT_LINK,
 * -PLYC_OUT_THEIRS, -PLYC_OUT_NAMES: plyc_out_strerror() says them). */
int plyc_out_open(const char *path);

/* -o's refusals in a folder another user can write (where they could
 * have planted the name: /tmp): a link there is not followed, and a file
 * another user owns there is not written, as the kernel's
 * protected_symlinks and protected_regular refuse them where they are on.
 * The tracer runs as root: `ln -s /etc/shadow /tmp/out.txt` must not get
 * /etc/shadow emptied. */
#define PLYC_OUT_LINK 4096
#define PLYC_OUT_THEIRS 4097
#define PLYC_OUT_NAMES 4098

/* Whether path may be -o's, before it is touched: 0, or what open()
 * would refuse it with (an errno, PLYC_OUT_LINK, PLYC_OUT_THEIRS, PLYC_OUT_NAMES). */
int plyc_out_refused(const char *path);

/* strerror(), and the refusals' own words. */
const char *plyc_out_strerror(int err);

/* While *flag is set (the tracer is stopping), a write that a signal
 * interrupts fails with EINTR instead of waiting on for a reader that does
 * not read (`| less`, paused). */
void plyc_out_stop_flag(volatile sig_atomic_t *flag);

/* The errno of the first write that failed (EPIPE: the reader has gone),
 * or of the first formatted write that failed (plyc_rt.fmt_errno), or 0.
 * Once set, every later write fails at once. */
int plyc_out_error(void);

/* What failed, for the message: "writing output", or "formatting output"
 * where a formatted write failed first (plyc_fmt_failed). */
const char *plyc_out_what(void);

/* Flush and close: what plyc_out_error() then says. */
int plyc_out_close(void);

#endif
