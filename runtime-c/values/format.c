/* The formats every style prints values with: ply's durations
 * (src/libply/type.c), wall-clock times, ntop() addresses. Each style's
 * own text of a value is values/plyvalue.c's and values/btvalue.c's;
 * docs/output.md describes them. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "plyc_rt.h"

#define NSEC_PER_SEC 1000000000LL

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

const char *plyc_inet_text(const void *data, char *buf, size_t len)
{
	const uint8_t *d = data;
	uint64_t af = plyc_load_uint(d, 8);

	buf[0] = 0;
	if ((af == AF_INET || af == AF_INET6) && !inet_ntop((int)af, d + 8, buf, len))
		buf[0] = 0;
	return buf;
}
