/*
 * signal_name()'s text as bpftrace 0.27 prints it: its own table, whose
 * words are glibc's strsignal(3)'s, so a tracer built with musl (whose
 * words and real-time numbering differ) prints the same. Keyed by the
 * target's <signal.h> names; the real-time signals, "Unknown signal N"
 * and "N/A" past 64 are numbered as 0.27 numbers them on x86_64 (glibc's
 * SIGRTMIN, 34). The texts were taken from 0.27's output.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "plyc_rt.h"

#define RTMIN 34        /* glibc's SIGRTMIN: 32 and 33 are its own */
#define LAST 64

static const char *const names[RTMIN] = {
	[SIGHUP] = "Hangup",
	[SIGINT] = "Interrupt",
	[SIGQUIT] = "Quit",
	[SIGILL] = "Illegal instruction",
	[SIGTRAP] = "Trace/breakpoint trap",
	[SIGABRT] = "Aborted",
	[SIGBUS] = "Bus error",
	[SIGFPE] = "Floating point exception",
	[SIGKILL] = "Killed",
	[SIGUSR1] = "User defined signal 1",
	[SIGSEGV] = "Segmentation fault",
	[SIGUSR2] = "User defined signal 2",
	[SIGPIPE] = "Broken pipe",
	[SIGALRM] = "Alarm clock",
	[SIGTERM] = "Terminated",
#ifdef SIGSTKFLT
	[SIGSTKFLT] = "Stack fault",
#endif
	[SIGCHLD] = "Child exited",
	[SIGCONT] = "Continued",
	[SIGSTOP] = "Stopped (signal)",
	[SIGTSTP] = "Stopped",
	[SIGTTIN] = "Stopped (tty input)",
	[SIGTTOU] = "Stopped (tty output)",
	[SIGURG] = "Urgent I/O condition",
	[SIGXCPU] = "CPU time limit exceeded",
	[SIGXFSZ] = "File size limit exceeded",
	[SIGVTALRM] = "Virtual timer expired",
	[SIGPROF] = "Profiling timer expired",
	[SIGWINCH] = "Window changed",
	[SIGIO] = "I/O possible",
	[SIGPWR] = "Power failure",
	[SIGSYS] = "Bad system call",
};

const char *plyc_signal_text(int32_t sig, char *buf, size_t len)
{
	if (sig < 0 || sig > LAST)
		return "N/A";
	if (sig < RTMIN && names[sig])
		return names[sig];
	if (sig >= RTMIN)
		snprintf(buf, len, "Real-time signal %d", (int)(sig - RTMIN));
	else
		snprintf(buf, len, "Unknown signal %d", (int)sig);
	return buf;
}
