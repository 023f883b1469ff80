/* The -c CMD child. Forked before the BPF object loads (its PID is $target),
 * in a process group of its own, held stopped until every probe is
 * attached, then exec'd: a CMD of plain words directly, with execvp's PATH
 * lookup, so $target is the command itself; anything the shell would
 * interpret under /bin/sh -c, and then $target is the shell. Whatever way the
 * tracer ends, the group gets SIGTERM, then SIGKILL after a grace period. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "plyc_loader.h"

#define GRACE_MS 500      /* SIGTERM to SIGKILL */
#define KILL_WAIT_MS 1000 /* SIGKILL to giving up (a process stuck in the kernel) */

static const char *tracer = "tracer";
static char **words;      /* argv for a direct exec; NULL: run the shell */
static char *program;     /* words[0] as found in PATH */
static pid_t child = -1;  /* the command, until reaped */
static pid_t group = -1;  /* its process group, until it is empty */
static int err_fd = -1;   /* the child's errno if its exec failed; EOF once it ran */
static int tty_fd = -1;   /* our terminal, lent to the group while it runs */
static pid_t lent_to = -1; /* the group we lent it to */

static int plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-_./,:+=@%", c));
}

/* Words a shell gives a meaning of its own in first position: reserved
 * words, and builtins that have no program of the same effect. */
static const char *const shell_words[] = {
	"case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
	"select", "then", "time", "until", "while", "coproc",
	".", ":", "alias", "bg", "break", "cd", "command", "continue", "declare", "eval",
	"exec", "exit", "export", "fc", "fg", "getopts", "hash", "jobs", "let", "local",
	"read", "readonly", "return", "set", "shift", "source", "times", "trap", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "wait",
};

/* The words of CMD if it is only plain words (plain_char: no quotes,
 * expansions, globs, redirections, separators or comments; no assignment,
 * keyword or builtin first), else NULL: the shell runs it. */
static char **split_words(const char *cmd)
{
	const char *p;
	char *copy, *w, *save = NULL;
	char **v;
	size_t n = 0, i;

	for (p = cmd; *p; p++)
		if (!plain_char((unsigned char)*p) && *p != ' ' && *p != '\t')
			return NULL;
	copy = strdup(cmd);
	v = calloc(strlen(cmd) / 2 + 2, sizeof(*v));
	if (!copy || !v) {
		free(copy);
		free(v);
		return NULL;
	}
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		v[n++] = w;
	if (!n || strchr(v[0], '='))
		goto shell;
	for (i = 0; i < sizeof(shell_words) / sizeof(shell_words[0]); i++)
		if (!strcmp(v[0], shell_words[i]))
			goto shell;
	return v;
shell:
	free(copy);
	free(v);
	return NULL;
}

static int executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return -EACCES;
	return 0;
}

/* execvp's search, done before the load so that a command that can't run
 * is an error before anything is traced. */
static char *find_program(const char *name, int *err)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[4096];

	if (strchr(name, '/')) {
		*err = executable(name);
		return *err ? NULL : strdup(name);
	}
	if (!path)
		path = "/bin:/usr/bin";   /* glibc's execvp default */
	*err = -ENOENT;
	for (p = path;; p = end + 1) {
		int len, e;

		end = strchrnul(p, ':');
		/* An empty element is the current directory. */
		len = snprintf(buf, sizeof(buf), "%.*s/%s", end > p ? (int)(end - p) : 1,
			       end > p ? p : ".", name);
		if (len > 0 && (size_t)len < sizeof(buf)) {
			e = executable(buf);
			if (!e)
				return strdup(buf);
			if (e == -EACCES)
				*err = e;
		}
		if (!*end)
			return NULL;
	}
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", tracer);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *what(void)
{
	return words ? words[0] : "/bin/sh";
}

static double ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Whether the terminal is still the one we lent: not after Ctrl-Z and bg,
 * when the shell has it back (an ignored SIGTTOU would let us take it). */
static int still_lent(void)
{
	return lent_to > 0 && tcgetpgrp(tty_fd) == lent_to;
}

/* The terminal goes back to the tracer once the command is done with it. */
static void take_terminal(void)
{
	if (tty_fd >= 0) {
		if (still_lent())
			tcsetpgrp(tty_fd, getpgrp());
		tty_fd = -1;
		lent_to = -1;
	}
}

static void kill_at_exit(void)
{
	plyc_child_kill();
}

int plyc_child_check(const char *name, const char *cmd)
{
	int e = 0;

	tracer = name;
	words = split_words(cmd);
	if (words) {
		program = find_program(words[0], &e);
		if (!program) {
			say("cannot run '%s': %s", words[0],
			    e == -ENOENT && !strchr(words[0], '/') ? "command not found in PATH" : strerror(-e ? -e : ENOMEM));
			return -1;
		}
	}
	return 0;
}

int plyc_child_start(const char *name, const char *cmd)
{
	int err[2], e = 0, fd, status;
	pid_t parent = getpid(), self;

	if (plyc_child_check(name, cmd))
		return -1;
	/* Adopt the command's orphans, so that the group's last processes are
	 * ours to reap and to see gone (an init that doesn't reap would keep
	 * their zombies in the group). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe2(err, O_CLOEXEC)) {
		say("cannot start the -c command: %s", strerror(errno));
		return -1;
	}
	/* A terminal we have in the foreground is lent to the command (else it
	 * would be stopped reading it from its own, background, group). */
	for (fd = 0; fd < 3 && tty_fd < 0; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			tty_fd = fd;
	child = fork();
	if (child < 0) {
		say("cannot start the -c command: %s", strerror(errno));
		close(err[0]);
		close(err[1]);
		tty_fd = -1;
		return -1;
	}
	if (child == 0) {
		sigset_t none;

		setpgid(0, 0);
		/* Dies with the tracer, even a tracer killed by SIGKILL. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		/* Default signal handling, not the tracer's: an ignored SIGPIPE
		 * would survive the exec. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(err[0]);
		/* Held stopped until the probes are attached: SIGCONT releases it,
		 * SIGTERM (with SIGCONT) cancels it. The stop comes after kill()
		 * returns, so the exec is the only system call a script filtering
		 * on $target sees before the command's own. */
		self = getpid();
		kill(self, SIGSTOP);
		if (words)
			execvp(program, words);
		else
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		e = errno;
		if (write(err[1], &e, sizeof(e)) != sizeof(e))
			_exit(126);
		_exit(127);
	}
	/* In both processes, so the group exists whichever runs first. */
	setpgid(child, child);
	group = child;
	close(err[1]);
	err_fd = err[0];
	atexit(kill_at_exit);
	/* Nothing is attached until it is stopped. */
	while (waitpid(child, &status, WUNTRACED) < 0)
		if (errno != EINTR) {
			status = 0;
			break;
		}
	if (!WIFSTOPPED(status)) {
		say("cannot start the -c command: it ended before it could be held");
		child = -1;
		plyc_child_kill();
		return -1;
	}
	return group;
}

int plyc_child_release(void)
{
	int e = 0;
	ssize_t n;

	if (err_fd < 0)
		return 0;
	if (tty_fd >= 0) {
		/* Ours to write to and take back from the background. */
		signal(SIGTTOU, SIG_IGN);
		if (tcsetpgrp(tty_fd, group))
			tty_fd = -1;
		else
			lent_to = group;
	}
	kill(child, SIGCONT);
	/* The exec closes the pipe, or the child writes why it failed. */
	do
		n = read(err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err_fd);
	err_fd = -1;
	if (n == sizeof(e)) {
		/* The file is there: it's the interpreter (#!) or loader that is not. */
		say("cannot run '%s': %s%s", what(), strerror(e),
		    e == ENOENT && words && !access(program, F_OK) ? " (its interpreter or loader?)" : "");
		waitpid(child, NULL, 0);
		child = -1;
		return -1;
	}
	return 0;
}

/* Ctrl-Z stopped the command, or SIGTTIN/SIGTTOU did in the background:
 * stop with it, so the shell that started us sees the job stopped, and
 * gets the terminal back if the command had it; when continued, lend it
 * again if we were put in the foreground (fg, not bg), and continue. */
static void suspend(void)
{
	if (still_lent())
		tcsetpgrp(tty_fd, getpgrp());
	raise(SIGSTOP);
	if (tcgetpgrp(tty_fd) == getpgrp())
		tcsetpgrp(tty_fd, group);
	kill(-group, SIGCONT);
}

int plyc_child_reap(int *status)
{
	pid_t pid;

	if (child <= 0)
		return 0;
	pid = waitpid(child, status, WNOHANG | (tty_fd >= 0 ? WUNTRACED : 0));
	if (pid == child && WIFSTOPPED(*status)) {
		suspend();
		return 0;
	}
	if (pid == child) {
		child = -1;
		take_terminal();
		return 1;
	}
	return 0;
}

/* Reaps what is ours in the group (zombies still count as members), and
 * says whether anything is left. */
static int group_alive(void)
{
	pid_t pid;

	while ((pid = waitpid(-group, NULL, WNOHANG)) > 0)
		if (pid == child)
			child = -1;
	return !(kill(-group, 0) && errno == ESRCH);
}

static void wait_group(double ms)
{
	double end = ms_now() + ms;
	struct timespec tick = { 0, 5 * 1000 * 1000 };

	while (group_alive() && ms_now() < end)
		nanosleep(&tick, NULL);
}

void plyc_child_kill(void)
{
	if (err_fd >= 0) {
		close(err_fd);
		err_fd = -1;
	}
	if (group > 0) {
		if (group_alive()) {
			kill(-group, SIGTERM);
			/* A stopped process would hold SIGTERM until continued. */
			kill(-group, SIGCONT);
			wait_group(GRACE_MS);
			if (group_alive()) {
				kill(-group, SIGKILL);
				wait_group(KILL_WAIT_MS);
			}
		}
		group = -1;
	}
	if (child > 0) {
		waitpid(child, NULL, WNOHANG);
		child = -1;
	}
	take_terminal();
}
