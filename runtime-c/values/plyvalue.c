/* ply's text of one value (plyc_ply_value): each kind has one printer,
 * used by print(), printf's %v and map dumps of ply's style alike. The
 * formats follow ply 2.x (src/libply/type.c, built-in/proc.c): see
 * docs/output.md. The kinds only bpftrace's scripts make print as
 * bpftrace prints them (values/btvalue.c). */
#include <inttypes.h>
#include <string.h>

#include "plyc_rt.h"
#include "plyc_btout.h"

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

void plyc_ply_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	char sym[PLYC_KSYM_LEN];

	if (plyc_kind_is_text(t->kind)) {
		char text[PLYC_VALUE_TEXT_LEN];

		fputs(plyc_value_text(t, data, text, sizeof(text)), fp);
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
	case PLYC_K_TUPLE:
		fputc('(', fp);
		for (uint32_t i = 0; i < t->nfields; i++) {
			if (i)
				fputs(", ", fp);
			plyc_ply_value(fp, &t->fields[i].type, (const char *)data + t->fields[i].offset);
		}
		fputc(')', fp);
		break;
	default:	/* plyc_kind_is_text()'s kinds: above */
		break;
	}
}
