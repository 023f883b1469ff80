/* The -c CMD child: forked before the BPF object loads (its PID is
 * $target), held on a pipe until every probe is attached, then exec'd.
 * If loading fails it is killed, never left behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plyc_loader.h"

static pid_t child = -1;
static int go_fd = -1;

int plyc_child_start(const char *cmd)
{
	int fds[2];
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (child == 0) {
		/* The command gets default signal handling, not the tracer's
		 * (an ignored SIGPIPE would survive the exec). */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		close(fds[1]);
		/* EOF without a byte means the tracer gave up: don't run. */
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		close(fds[0]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		fprintf(stderr, "plyc: cannot run /bin/sh: %m\n");
		_exit(127);
	}
	close(fds[0]);
	go_fd = fds[1];
	return child;
}

int plyc_child_release(void)
{
	char c = 1;
	int ret = 0;

	if (go_fd < 0)
		return 0;
	if (write(go_fd, &c, 1) != 1)
		ret = -errno;
	close(go_fd);
	go_fd = -1;
	return ret;
}

int plyc_child_reap(int *status)
{
	if (child <= 0)
		return 0;
	if (waitpid(child, status, WNOHANG) == child) {
		child = -1;
		return 1;
	}
	return 0;
}

void plyc_child_kill(void)
{
	if (go_fd >= 0) {
		close(go_fd);
		go_fd = -1;
	}
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		child = -1;
	}
}
