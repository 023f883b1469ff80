/* Values as JSON (-f json), for log pipelines.
 *
 * Integers and durations are numbers (durations in ns), strings and
 * symbols are strings, stacks are arrays of strings. See docs/output.md.
 */
#include <inttypes.h>

#include "plyc_rt.h"
#include "plyc_btout.h"

/* Length of the UTF-8 sequence starting at s (at most n bytes), or 0 if
 * it is not a valid, shortest-form sequence. */
size_t plyc_utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;

	if (len > n)
		return 0;

	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}

	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* Kernel strings are bytes: valid UTF-8 passes through, control
 * characters are escaped, and a byte that is not part of valid UTF-8 is
 * written as the code point of the same value (\u00XX) so the line stays
 * valid JSON. */
void plyc_json_string(FILE *fp, const char *str, size_t maxlen)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	fputc('"', fp);
	while (i < maxlen && s[i]) {
		unsigned char c = s[i];

		switch (c) {
		case '"':  fputs("\\\"", fp); i++; continue;
		case '\\': fputs("\\\\", fp); i++; continue;
		case '\b': fputs("\\b", fp);  i++; continue;
		case '\f': fputs("\\f", fp);  i++; continue;
		case '\n': fputs("\\n", fp);  i++; continue;
		case '\r': fputs("\\r", fp);  i++; continue;
		case '\t': fputs("\\t", fp);  i++; continue;
		}

		if (c < 0x20 || c == 0x7f) {
			fprintf(fp, "\\u%04x", c);
			i++;
			continue;
		}

		n = plyc_utf8_len(s + i, maxlen - i);
		if (!n) {
			fprintf(fp, "\\u%04x", c);
			i++;
			continue;
		}

		fwrite(s + i, 1, n, fp);
		i += n;
	}
	fputc('"', fp);
}

static void json_stack(FILE *fp, int64_t id)
{
	uint64_t ips[PLYC_STACK_DEPTH];
	char sym[PLYC_KSYM_LEN];
	size_t i;

	fputc('[', fp);
	if (!plyc_stack_read(id, ips)) {
		for (i = 0; i < PLYC_STACK_DEPTH && ips[i]; i++) {
			if (i)
				fputs(", ", fp);
			plyc_json_string(fp, plyc_ksym(ips[i], sym, sizeof(sym)),
					 sizeof(sym));
		}
	}
	fputc(']', fp);
}

void plyc_json_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	const unsigned char *d = data;
	char sym[PLYC_KSYM_LEN];
	uint32_t i;

	if (t->kind != PLYC_K_BOOL && plyc_kind_is_text(t->kind)) {
		char text[PLYC_VALUE_TEXT_LEN];

		plyc_json_string(fp, plyc_value_text(t, data, text, sizeof(text)), sizeof(text));
		return;
	}
	switch (t->kind) {
	case PLYC_K_INT:
	case PLYC_K_TIME:
		if (t->is_signed)
			fprintf(fp, "%" PRId64, plyc_load_int(data, t->size));
		else
			fprintf(fp, "%" PRIu64, plyc_load_uint(data, t->size));
		break;
	case PLYC_K_HEX:
		/* a string: pointers do not survive a trip through a double */
		fprintf(fp, "\"0x%" PRIx64 "\"", plyc_load_uint(data, t->size));
		break;
	case PLYC_K_STR:
		plyc_json_string(fp, data, t->size);
		break;
	case PLYC_K_WALLTIME:
		/* ns since the epoch */
		fprintf(fp, "%" PRId64,
			plyc_load_int(data, t->size) + plyc_rt.mono_to_real_ns);
		break;
	case PLYC_K_SYM:
		plyc_json_string(fp, plyc_ksym(plyc_load_uint(data, t->size),
					       sym, sizeof(sym)), sizeof(sym));
		break;
	case PLYC_K_STACK:
		json_stack(fp, plyc_load_int(data, t->size));
		break;
	case PLYC_K_USTACK:     /* bpftrace's: only its style prints them */
	case PLYC_K_USYM:
		plyc_bt_json_value(fp, t, data);
		break;
	case PLYC_K_INET:
		plyc_json_string(fp, plyc_inet_text(data, sym, sizeof(sym)), sizeof(sym));
		break;
	case PLYC_K_BOOL:      /* bpftrace writes a bool as JSON's */
		fputs(plyc_load_uint(data, t->size) ? "true" : "false", fp);
		break;
	case PLYC_K_BUF:
		/* bpftrace's buf(): as bpftrace writes it (values/btvalue.c) */
		plyc_bt_json_value(fp, t, data);
		break;
	case PLYC_K_MEM:
		fputc('"', fp);
		for (i = 0; i < t->size; i++)
			fprintf(fp, "%02x", d[i]);
		fputc('"', fp);
		break;
	case PLYC_K_TUPLE:
		fputc('[', fp);
		for (i = 0; i < t->nfields; i++) {
			if (i)
				fputs(", ", fp);
			plyc_json_value(fp, &t->fields[i].type, d + t->fields[i].offset);
		}
		fputc(']', fp);
		break;
	default:	/* plyc_kind_is_text()'s kinds: above */
		break;
	}
}
