/* The script's named options (bpftrace's getopt("name", default, "what")):
 * given after `--` as `--name` (a flag) or `--name=VALUE`, among the
 * positional arguments, as bpftrace 0.27 takes them; listed in -h; set in
 * plyc_params before the load, so the verifier sees constants. Messages are
 * bpftrace's. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_loader.h"

void plyc_opts_usage(const struct plyc_program *P, FILE *fp)
{
	int i;

	if (!P->nopts)
		return;
	fprintf(fp, "\nOptions of the script (after --):\n");
	for (i = 0; i < P->nopts; i++) {
		const struct plyc_opt *o = &P->opts[i];
		const char *value = o->kind == PLYC_OPT_BOOL ? "" : o->kind == PLYC_OPT_INT ? "=NUMBER" : "=TEXT";

		fprintf(fp, "  --%s%s%s%s (default: %s)\n", o->name, value, *o->desc ? ": " : "", o->desc,
			o->dflt);
	}
}

static const struct plyc_opt *find(const struct plyc_program *P, const char *name, size_t len)
{
	int i;

	for (i = 0; i < P->nopts; i++)
		if (strlen(P->opts[i].name) == len && !strncmp(P->opts[i].name, name, len))
			return &P->opts[i];
	return NULL;
}

static int bool_text(const char *s, int *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "1")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	return -1;
}

/* A whole 64-bit integer (decimal, 0x hex, 0 octal), as $N's. */
static int int_text(const char *s, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	return !*s || isspace((unsigned char)*s) || *end || errno ? -1 : 0;
}

static int check(const struct plyc_opt *o, const char *value)
{
	int64_t n;
	int b;

	if (o->kind == PLYC_OPT_BOOL && bool_text(value, &b)) {
		fprintf(stderr, "ERROR: program command line option --%s expects a boolean (value: %s)\n",
			o->name, value);
		return 1;
	}
	if (o->kind == PLYC_OPT_INT && int_text(value, &n)) {
		fprintf(stderr, "ERROR: program command line option --%s invalid integer (value: %s)\n",
			o->name, value);
		return 1;
	}
	return 0;
}

static void expected(const struct plyc_program *P)
{
	int i;

	fprintf(stderr, "HINT: expected program options:");
	for (i = 0; i < P->nopts; i++)
		fprintf(stderr, " --%s", P->opts[i].name);
	fputc('\n', stderr);
}

int plyc_opts_parse(const struct plyc_program *P, char **args, int *nargs, const char **values)
{
	int i, n = 0, failed = 0;

	for (i = 0; i < *nargs; i++) {
		const char *a = args[i], *eq;
		const struct plyc_opt *o;

		if (!P->nopts || strncmp(a, "--", 2) || !a[2]) {
			args[n++] = args[i];	/* a positional argument ($1, ...) */
			continue;
		}
		if (!strcmp(a, "--help"))
			return 2;
		eq = strchr(a + 2, '=');
		o = find(P, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		if (!o) {
			fprintf(stderr, "ERROR: unexpected program command line options: %s\n", a);
			expected(P);
			failed = 1;
		} else if (!eq && o->kind != PLYC_OPT_BOOL) {
			fprintf(stderr, "ERROR: program command line option --%s needs a value (--%s=VALUE)\n",
				o->name, o->name);
			failed = 1;
		} else if (eq && check(o, eq + 1)) {
			failed = 1;
		} else {
			values[o - P->opts] = eq ? eq + 1 : "true";
		}
	}
	*nargs = n;
	return failed;
}

void plyc_opts_fill(const struct plyc_program *P, const char *const *values, char *params)
{
	int i;

	for (i = 0; i < P->nopts; i++) {
		const struct plyc_opt *o = &P->opts[i];
		const char *value = values[i] ? values[i] : o->dflt;
		int64_t num = 0;
		int b = 0;

		if (o->kind == PLYC_OPT_BOOL && !bool_text(value, &b))
			num = b;
		else if (o->kind == PLYC_OPT_INT && int_text(value, &num))
			num = 0;
		memcpy(params + P->off_opt_num + (size_t)i * sizeof(int64_t), &num, sizeof(num));
		if (o->kind == PLYC_OPT_STR)
			strncpy(params + P->off_opt_str + (size_t)i * P->opt_str_size, value, P->opt_str_size - 1);
	}
}
