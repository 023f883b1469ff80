/* bpftrace's cat() and system(): what the tracer does when their events
 * arrive, printed as bpftrace 0.27 prints it, or 0.17 (struct
 * plyc_bt_version's events_027; docs/bpftrace.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "plyc_btout.h"

static struct plyc_textbuf act_text;

FILE *plyc_bt_act_begin(void)
{
	return plyc_text_open(&act_text);
}

void plyc_bt_act_end(FILE *fp, void (*act)(FILE *out, const char *text))
{
	(void)fp;   /* act_text.fp, from plyc_bt_act_begin */
	if (!plyc_text_close(&act_text))
		act(plyc_rt.out, act_text.s);
	free(act_text.s);
	act_text.s = NULL;
}

/* bpftrace's default for BPFTRACE_MAX_CAT_BYTES (0.17: BPFTRACE_CAT_BYTES_MAX),
 * which the tracer reads where it runs, as bpftrace does. */
#define CAT_BYTES_MAX 10240

static size_t cat_limit(void)
{
	const char *env = getenv("BPFTRACE_MAX_CAT_BYTES");
	char *end;
	unsigned long long n;

	if (!env || !*env)
		env = getenv("BPFTRACE_CAT_BYTES_MAX");

	if (!env || !*env)
		return CAT_BYTES_MAX;
	n = strtoull(env, &end, 10);
	return *end ? CAT_BYTES_MAX : (size_t)n;
}

void plyc_bt_cat(FILE *fp, const char *path)
{
	size_t limit = cat_limit(), n = 0;
	char *buf = malloc(limit + 1);
	FILE *f = fopen(path, "r");

	if (!f) {
		/* bpftrace's message; in 0.17's JSON its empty "cat" object too */
		if (plyc_bt_version->events_027) {
			fprintf(stderr, "ERROR: failed to open file '%s' (%s)\n", path, strerror(errno));
		} else {
			fprintf(stderr, "ERROR: failed to open file '%s': %s\n", path, strerror(errno));
			if (plyc_rt.json)
				plyc_bt_message(fp, "cat", "", 0);
		}
		free(buf);
		return;
	}
	if (buf)
		n = fread(buf, 1, limit, f);
	fclose(f);
	plyc_bt_message(fp, "cat", buf ? buf : "", n);
	free(buf);
}

void plyc_bt_system(FILE *fp, const char *cmd)
{
	char chunk[4096];
	struct plyc_textbuf out;
	size_t n;
	FILE *pipe;
	int status;

	/* what was printed before comes before the command's output */
	fflush(fp);
	pipe = popen(cmd, "r");
	if (!pipe) {
		fprintf(stderr, "ERROR: cannot run '%s': %s\n", cmd, strerror(errno));
		return;
	}
	plyc_text_open(&out);
	while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
		if (out.fp)
			fwrite(chunk, 1, n, out.fp);
	status = pclose(pipe);
	if (plyc_text_close(&out)) {
		free(out.s);
		return;
	}
	if (plyc_bt_version->events_027 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status)) {
		/* 0.27: no output, an error (which it ends with an errno's
		 * text that is not the command's: left out) */
		fprintf(stderr, "ERROR: command exited with code %d\n", WEXITSTATUS(status));
	} else if (plyc_bt_version->events_027 && !plyc_rt.json) {
		/* 0.27: the output and a newline, an empty line for none */
		fwrite(out.s, 1, out.len, fp);
		fputc('\n', fp);
	} else {
		plyc_bt_message(fp, "syscall", out.s, out.len);
	}
	free(out.s);
}
