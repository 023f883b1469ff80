/* Default text formats of values, as ply prints them.
 *
 * Each kind of value has one printer; they are used by print(), printf's
 * %v and map dumps alike. The formats follow ply 2.x (src/libply/type.c,
 * built-in/proc.c): see docs/output.md for the full description.
 */
#define _GNU_SOURCE		/* strcasestr */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "plyc_rt.h"
#include "plyc_btout.h"

#define NSEC_PER_SEC 1000000000LL

struct plyc_rt plyc_rt = {
	.out = NULL,		/* stdout, set by plyc_rt_init() */
	.json = 0,
	.utf8 = 0,
	.stack_fd = -1,
	.mono_to_real_ns = 0,
};

/* The charset is taken from the first non-empty of LC_ALL, LC_CTYPE and
 * LANG, as setlocale(3) would, without needing locale files (the tracer is
 * a static binary, often on a device without any). */
static int env_wants_utf8(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	const char *v;
	size_t i;

	v = getenv("PLYC_ASCII");
	if (v && *v && strcmp(v, "0"))
		return 0;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (v && *v)
			return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
	}
	return 0;
}

void plyc_rt_init(void)
{
	struct timespec mono, real;

	if (!plyc_rt.out)
		plyc_rt.out = stdout;

	plyc_rt.utf8 = env_wants_utf8();

	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC; walltime values are shifted
	 * by the offset between the two clocks at start. */
	if (!clock_gettime(CLOCK_MONOTONIC, &mono) &&
	    !clock_gettime(CLOCK_REALTIME, &real))
		plyc_rt.mono_to_real_ns =
			((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * NSEC_PER_SEC +
			((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec);

	tzset();
}

/* ply's duration table: the value is divided down, step by step, until it
 * is at most 999, then printed in the unit of that step. Below 1000 s the
 * steps keep three significant digits. */
int plyc_fmt_duration(char *buf, size_t len, int64_t ns)
{
	static const struct {
		int next;	  /* divisor to the next step */
		int decimals;	  /* digits after the point */
		const char *unit;
	} steps[] = {
		{  10, 0, "ns" },
		{  10, 2, "us" }, {  10, 1, "us" }, {  10, 0, "us" },
		{  10, 2, "ms" }, {  10, 1, "ms" }, {  10, 0, "ms" },
		{  10, 2, " s" }, {  10, 1, " s" }, {  60, 0, " s" },
		{  60, 0, " M" },
		{  24, 0, " H" },
		{ 365, 0, " D" },
		{   1, 0, " Y" },
	};
	const size_t last = sizeof(steps) / sizeof(steps[0]) - 1;
	int64_t v = ns;
	size_t i;

	for (i = 0; i < last && v > 999; i++)
		v /= steps[i].next;

	switch (steps[i].decimals) {
	case 2:
		return snprintf(buf, len, "%1d.%02d%s",
				(int)(v / 100), (int)(v % 100), steps[i].unit);
	case 1:
		return snprintf(buf, len, "%2d.%01d%s",
				(int)(v / 10), (int)(v % 10), steps[i].unit);
	default:
		return snprintf(buf, len, "%4" PRId64 "%s", v, steps[i].unit);
	}
}

void plyc_print_duration(FILE *fp, int64_t ns)
{
	char buf[32];

	plyc_fmt_duration(buf, sizeof(buf), ns);
	fputs(buf, fp);
}

void plyc_print_walltime(FILE *fp, int64_t mono_ns)
{
	int64_t ns = mono_ns + plyc_rt.mono_to_real_ns;
	int64_t sec = ns / NSEC_PER_SEC, rem = ns % NSEC_PER_SEC;
	char hms[16] = "";
	struct tm tm;
	time_t t;

	if (rem < 0) {
		rem += NSEC_PER_SEC;
		sec--;
	}

	t = (time_t)sec;
	if (localtime_r(&t, &tm))
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);

	fprintf(fp, "%s.%09" PRId64, hms, rem);
}

static void print_int(FILE *fp, const struct plyc_type *t, const void *data)
{
	if (t->is_signed)
		fprintf(fp, "%*" PRId64, t->width, plyc_load_int(data, t->size));
	else
		fprintf(fp, "%*" PRIu64, t->width, plyc_load_uint(data, t->size));
}

/* Printable in the C locale, as ply's isprint() check sees it. */
static int is_print(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* ply prints a char array as a string when it holds printable characters
 * up to a NUL and only NULs after it; anything else is shown as hex. */
static int is_string(const unsigned char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		if (!is_print(s[i]))
			return 0;

	for (; i < len; i++)
		if (s[i])
			return 0;

	return 1;
}

/* One hex dump line: offset, up to 16 bytes in two groups of 8, and the
 * same bytes as characters, also in two groups. */
static void hexdump_line(FILE *fp, size_t offset,
			 const unsigned char *d, size_t n)
{
	size_t i;
	int pad;

	fprintf(fp, "%03zx: ", offset);

	for (i = 0; i < n; i++)
		fprintf(fp, "%s %02x", i == 8 ? " " : "", d[i]);

	/* line the character column up with that of a full line */
	pad = (int)(16 - n) * 3 + 3 + (n < 8 ? 1 : 0);
	fprintf(fp, "%*c", pad, ' ');

	for (i = 0; i < n; i++) {
		if (i == 8)
			fputc(' ', fp);
		fputc(is_print(d[i]) ? d[i] : '.', fp);
	}
	fputc('\n', fp);
}

/* A newline, then one line per 16 bytes: the value always starts on a
 * line of its own, as in ply. */
static void print_hexdump(FILE *fp, const void *data, size_t len)
{
	const unsigned char *d = data;
	size_t i;

	fputc('\n', fp);
	for (i = 0; i < len; i += 16)
		hexdump_line(fp, i, d + i, len - i < 16 ? len - i : 16);
}

static void print_str(FILE *fp, const struct plyc_type *t, const void *data)
{
	int len = (int)t->size;

	if (!len)
		return;

	if (!is_string(data, t->size)) {
		print_hexdump(fp, data, t->size);
		return;
	}

	/* Left-aligned in the array's length less the NUL, so comm keys line
	 * up; the precision stops at the end of a full, unterminated array. */
	fprintf(fp, "%-*.*s", len - 1, len, (const char *)data);
}

static int is_int_size(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

const char *plyc_inet_text(const void *data, char *buf, size_t len)
{
	const uint8_t *d = data;
	uint64_t af = plyc_load_uint(d, 8);

	buf[0] = 0;
	if ((af == AF_INET || af == AF_INET6) && !inet_ntop((int)af, d + 8, buf, len))
		buf[0] = 0;
	return buf;
}

void plyc_print_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	char sym[PLYC_KSYM_LEN];

	/* printf's %s of a stack, and every value, in bpftrace's tracers */
	if (plyc_rt.style == PLYC_STYLE_BPFTRACE) {
		plyc_bt_value(fp, t, data, 8);
		return;
	}

	switch (t->kind) {
	case PLYC_K_INT:
		if (is_int_size(t->size))
			print_int(fp, t, data);
		else
			print_hexdump(fp, data, t->size);
		break;
	case PLYC_K_HEX:
		/* ply's pointer format */
		fprintf(fp, "<%" PRIx64 ">", plyc_load_uint(data, t->size));
		break;
	case PLYC_K_STR:
		print_str(fp, t, data);
		break;
	case PLYC_K_TIME:
		plyc_print_duration(fp, plyc_load_int(data, t->size));
		break;
	case PLYC_K_WALLTIME:
		plyc_print_walltime(fp, plyc_load_int(data, t->size));
		break;
	case PLYC_K_SYM:
		fputs(plyc_ksym(plyc_load_uint(data, t->size), sym, sizeof(sym)),
		      fp);
		break;
	case PLYC_K_STACK:
		plyc_print_stack(fp, plyc_load_int(data, t->size));
		break;
	case PLYC_K_USTACK:     /* bpftrace's: only its style prints them */
	case PLYC_K_USYM:
		plyc_bt_value(fp, t, data, 8);
		break;
	case PLYC_K_MEM:
		print_hexdump(fp, data, t->size);
		break;
	case PLYC_K_BUF:
		/* bpftrace's buf(): only its scripts make one, and print it their way */
		plyc_bt_buf_format(fp, data, t->size, ' ');
		break;
	case PLYC_K_INET:
		fputs(plyc_inet_text(data, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_USERNAME:
	case PLYC_K_MAC:
	case PLYC_K_STRFTIME:
		fputs(plyc_value_text(t, data, sym, sizeof(sym)), fp);
		break;
	case PLYC_K_TUPLE:
		fputc('(', fp);
		for (uint32_t i = 0; i < t->nfields; i++) {
			if (i)
				fputs(", ", fp);
			plyc_print_value(fp, &t->fields[i].type, (const char *)data + t->fields[i].offset);
		}
		fputc(')', fp);
		break;
	}
}
