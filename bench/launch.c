/* Runs a tool for the benchmarks and reports its peak RSS:
 *
 *   launch INFO PROG [ARG...]
 *
 * forks, execs PROG in the child, writes "pid N" to the file INFO at once
 * and "maxrss KB", "cpu_us N" (user + system time) and "status N" once the
 * child has exited, and exits with the child's status. The child is forked from this small static
 * program, so its peak RSS (ru_maxrss, which also counts what a process
 * had before exec) is the tool's own and not that of the Python harness
 * that started the run.
 *
 * The child starts with SIGINT's default action: a background job of a
 * non-interactive shell (`make bench &`, nohup, some CI runners) inherits
 * SIGINT ignored, and a tool that installs no handler of its own
 * (bpftrace-aotrt 0.17) would then outlive the harness's SIGINT. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *info;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: launch INFO PROG [ARG...]\n");
		return 2;
	}
	info = fopen(argv[1], "w");
	if (!info)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		fclose(info);
		signal(SIGINT, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	fprintf(info, "pid %d\n", (int)pid);
	fflush(info);
	while (wait4(pid, &status, 0, &ru) < 0)
		;
	fprintf(info, "maxrss %ld\ncpu_us %lld\nstatus %d\n", ru.ru_maxrss,
		(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			ru.ru_utime.tv_usec + ru.ru_stime.tv_usec,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fclose(info);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
