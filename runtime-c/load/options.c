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
#include <strings.h>

#include "plyc_loader.h"

void plyc_opts_usage(const struct plyc_program *P, FILE *fp)
{
	int i;

	if (!P->nopts)
		return;
	fprintf(fp, "\nOptions of the script (after --):\n");
	for (i = 0; i < P->nopts; i++) {
		const struct plyc_opt *o = &P->opts[i];
		const char *value = o->kind == PLYC_OPT_BOOL ? "" : o->kind == PLYC_OPT_STR ? "=TEXT" : "=NUMBER";

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

/* bpftrace 0.27's words for a flag's value, in any case */
static int bool_text(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "on", "yes" }, *const no[] = { "0", "false", "off", "no" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	return -1;
}

/* The integer forms bpftrace 0.27 takes for an option (its literals'):
 * `_` anywhere, 0x, 0b and 0 (octal) prefixes, 1e3, a C suffix (u, l, ul,
 * ll, ull) or a time unit (ns, us, ms, s, m, h, d: in nanoseconds). NULL,
 * or why not. Read as strtoull does otherwise, so "-1" is 2^64 - 1, as
 * there. */
static const char *uint_text(const char *text, uint64_t *out)
{
	static const struct { const char *suffix; uint64_t max, mult; } suffixes[] = {
		{ "", UINT64_MAX, 1 }, { "u", UINT32_MAX, 1 }, { "ul", UINT64_MAX, 1 }, { "ull", UINT64_MAX, 1 },
		{ "l", INT64_MAX, 1 }, { "ll", INT64_MAX, 1 }, { "ns", UINT64_MAX, 1 }, { "us", UINT64_MAX, 1000 },
		{ "ms", UINT64_MAX, 1000000 }, { "s", UINT64_MAX, 1000000000 },
		{ "m", UINT64_MAX, 60000000000ULL }, { "h", UINT64_MAX, 3600000000000ULL },
		{ "d", UINT64_MAX, 86400000000000ULL },
	};
	char n[128], *end;
	const char *digits = n;
	size_t i, len = 0;
	uint64_t v;
	int base = 0;

	for (; *text; text++) {
		if (*text == '_')
			continue;
		if (len + 1 >= sizeof(n))
			return "invalid integer";
		n[len++] = *text;
	}
	n[len] = 0;
	if (len >= 2 && n[0] == '0' && (n[1] == 'x' || n[1] == 'X'))
		digits = n + 2, base = 16;
	else if (len >= 2 && n[0] == '0' && (n[1] == 'b' || n[1] == 'B'))
		digits = n + 2, base = 2;
	else if (len >= 2 && n[0] == '0' && n[1] >= '0' && n[1] <= '7')
		digits = n + 1, base = 8;
	errno = 0;
	v = strtoull(digits, &end, base);
	if (v == 0 && end == digits)
		return "invalid integer";
	if (v == UINT64_MAX && errno == ERANGE)
		return "value is out of range";
	if ((*end == 'e' || *end == 'E') && end[1] >= '1' && end[1] <= '9') {
		const char *exp = end + 1;
		uint64_t e;

		if (v == 0 || v >= 10)
			return "coefficient part of scientific literal must be 1-9";
		e = strtoull(exp, &end, 10);
		for (; e > 0; e--) {
			if (v > UINT64_MAX / 10)
				return "value is out of range";
			v *= 10;
		}
	}
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(end, suffixes[i].suffix))
			continue;
		if (v > suffixes[i].max / suffixes[i].mult)
			return "value is out of range";
		*out = v * suffixes[i].mult;
		return NULL;
	}
	return "invalid trailing bytes";
}

/* A signed option: '-' then the forms above, from INT64_MIN to INT64_MAX. */
static const char *int_text(const char *text, int64_t *out)
{
	const char *why;
	uint64_t v;

	if (!*text) {
		*out = 0;
		return NULL;
	}
	why = uint_text(text + (*text == '-'), &v);
	if (why)
		return why;
	if (v > (uint64_t)INT64_MAX + (*text == '-'))
		return "value is out of range";
	*out = *text == '-' ? (int64_t)(0 - v) : (int64_t)v;
	return NULL;
}

/* The option's value as its parameter's 64 bits, or why not. */
static const char *number(const struct plyc_opt *o, const char *value, int64_t *num)
{
	uint64_t u;
	const char *why;
	int b;

	switch (o->kind) {
	case PLYC_OPT_BOOL:
		if (bool_text(value, &b))
			return "expects a boolean (e.g. 'true')";
		*num = b;
		return NULL;
	case PLYC_OPT_INT:
		return int_text(value, num);
	case PLYC_OPT_UINT:
		why = uint_text(value, &u);
		if (!why)
			memcpy(num, &u, sizeof(u));
		return why;
	default:
		*num = 0;
		return NULL;
	}
}

static int check(const struct plyc_opt *o, const char *value)
{
	int64_t n;
	const char *why = number(o, value, &n);

	if (why)
		fprintf(stderr, "ERROR: program command line option --%s %s (value: %s)\n", o->name, why, value);
	return why != NULL;
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

		if (number(o, value, &num))
			num = 0;
		memcpy(params + P->off_opt_num + (size_t)i * sizeof(int64_t), &num, sizeof(num));
		if (o->kind == PLYC_OPT_STR)
			strncpy(params + P->off_opt_str + (size_t)i * P->opt_str_size, value, P->opt_str_size - 1);
	}
}
