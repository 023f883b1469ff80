/* Untrusted text (file names, comms: bytes any user can choose) for a
 * terminal: printable text and UTF-8 as they are, control characters as
 * \xNN, as bpftrace's %r writes a buffer's, so that an escape sequence in
 * a file name can't recolour or drive the terminal (docs/output.md). */
#include <stdio.h>
#include <string.h>

#include "plyc_rt.h"

/* The next character of untrusted text into out (at most 4 bytes, no
 * NUL): a valid UTF-8 sequence as it is, unless a control character (C0,
 * DEL, C1: U+0080..U+009F, C2 80..C2 9F, which some terminals take as
 * CSI), which is \xNN as is a byte that is no UTF-8. The bytes of s used. */
static size_t text_piece(const unsigned char *s, size_t n, char *out, size_t *outlen)
{
	size_t len = plyc_utf8_len(s, n);

	if (!len || s[0] < 0x20 || s[0] == 0x7f || (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
		snprintf(out, 5, "\\x%02x", s[0]);
		*outlen = 4;
		return 1;
	}
	memcpy(out, s, len);
	*outlen = len;
	return len;
}

void plyc_text_string(FILE *fp, const char *str, size_t maxlen)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;
	char piece[5];

	while (i < maxlen && s[i]) {
		i += text_piece(s + i, maxlen - i, piece, &n);
		fwrite(piece, 1, n, fp);
	}
}

const char *plyc_text_escape(const char *str, size_t maxlen, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, o = 0, n;
	char piece[5];

	while (i < maxlen && s[i]) {
		size_t used = text_piece(s + i, maxlen - i, piece, &n);

		if (o + n >= len)
			break;
		memcpy(buf + o, piece, n);
		o += n;
		i += used;
	}
	if (len)
		buf[o] = 0;
	return buf;
}

const char *plyc_printf_text(const char *str, size_t maxlen, char *buf, size_t len)
{
	size_t n;

	if (!plyc_rt.json)
		return plyc_text_escape(str, maxlen, buf, len);
	n = strnlen(str, maxlen);
	n = n < len ? n : len - 1;
	memcpy(buf, str, n);
	buf[n] = 0;
	return buf;
}

const char *plyc_str_trailer = "..";

const char *plyc_str_text(const char *s, size_t size, int cut, char *buf, size_t len)
{
	size_t n = strnlen(s, size);

	if (!len)
		return "";
	/* bpftrace 0.27's test: the string fills its bytes but the NUL */
	snprintf(buf, len, "%.*s%s", (int)n, s, cut && n + 1 >= size ? plyc_str_trailer : "");
	return buf;
}
