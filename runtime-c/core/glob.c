/* A probe's wildcard against a name (kernel functions, tracepoints, ELF
 * symbols): fnmatch(3) without flags, in the C locale, byte by byte. Our
 * own rather than the C library's: musl's fnmatch decodes multibyte
 * characters and its bracket classes pull in the wide-character tables
 * (13 KB of a musl tracer, which routers' flash counts), where the names
 * matched here are ASCII. glibc's fnmatch is the reference
 * (tests/test_glob.py holds the two to the same answers). */
#include <ctype.h>
#include <string.h>

#include "plyc_rt.h"

static const struct {
	const char *name;
	int (*is)(int);
} classes[] = {
	{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
	{"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
	{"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
};

/* [:name:] at p (p[1] == ':', name up to ":]"): 1 if c is of the class, 0 if
 * not, -1 for a class no locale names (the pattern then matches nothing,
 * as glibc's), -2 if no ":]" follows; *end past its "]". */
static int class_match(const char *p, unsigned char c, const char **end)
{
	const char *name = p + 2, *close = strstr(name, ":]");
	size_t i;

	if (!close)
		return -2;
	*end = close + 2;
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i].name) == (size_t)(close - name) && !memcmp(classes[i].name, name, close - name))
			return classes[i].is(c) != 0;
	return -1;
}

/* One character of a bracket expression at *p: an escaped one, [.c.] or
 * [=c=] (the C locale's collating elements are single bytes), or itself;
 * -1 for a malformed "[." or "[="; *p moved past it. */
static int bracket_char(const char **p)
{
	const char *s = *p;

	if (s[0] == '[' && (s[1] == '.' || s[1] == '=')) {
		const char close[3] = {s[1], ']', '\0'}, *e = strstr(s + 2, close);

		if (e == s + 3) {
			*p = s + 5;
			return (unsigned char)s[2];
		}
		/* glibc: none or more than one byte named is an error, but
		 * for "[=" with no "=]" after it, whose '[' is itself */
		if (e || s[1] == '.')
			return -1;
	}
	if (s[0] == '\\' && s[1])
		s++;
	*p = s + 1;
	return (unsigned char)*s;
}

/* The bracket expression whose '[' is at p: 1 if c matches it, 0 if not, -1
 * if it is malformed (an unknown class, a bad "[."); -2 if no ']' closes it (the '[' is then
 * an ordinary character). *end past the ']'. */
static int bracket(const char *p, unsigned char c, const char **end)
{
	const char *first;
	int neg = 0, hit = 0;

	p++;
	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	first = p;
	for (;;) {
		int lo, hi;

		if (!*p)
			return -2;
		if (*p == ']' && p != first)
			break;
		if (p[0] == '[' && p[1] == ':') {
			int r = class_match(p, c, &p);

			/* glibc looks no further once c matched */
			if (r == -2 || (r == -1 && !hit))
				return r;
			hit |= r > 0;
			continue;
		}
		lo = bracket_char(&p);
		if (lo < 0 || (lo == '\\' && !*p))
			return lo < 0 ? -1 : -2;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			/* a range's end is one character: "[:", "[." or "[="
			 * there is a '[', as in glibc */
			p += p[1] == '\\' && p[2] ? 2 : 1;
			hi = (unsigned char)*p++;
			hit |= lo <= c && c <= hi;
		} else {
			hit |= c == lo;
		}
	}
	*end = p + 1;
	return hit != neg;
}

int plyc_glob_match(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	for (;;) {
		const char *next = pat + 1;
		int ok;

		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			if (!*pat)
				return 1;
			star = pat;
			resume = s;
			continue;
		}
		if (!*s) {
			if (!*pat)
				return 1;
			ok = 0;
		} else if (*pat == '?') {
			ok = 1;
		} else if (*pat == '[') {
			ok = bracket(pat, (unsigned char)*s, &next);
			/* a malformed expression fails here; glibc's '*' then
			 * tries the next byte still */
			if (ok == -1)
				ok = 0;
			if (ok == -2) {
				ok = *s == '[';
				next = pat + 1;
			}
		} else if (*pat == '\\') {
			/* a trailing '\' matches nothing, as in glibc */
			if (!pat[1])
				return 0;
			ok = pat[1] == *s;
			next = pat + 2;
		} else {
			ok = *pat && *pat == *s;
		}
		if (ok) {
			pat = next;
			s++;
			continue;
		}
		/* the last '*' takes one more byte and the rest is tried again */
		if (!star || !*resume)
			return 0;
		pat = star;
		s = ++resume;
	}
}
