/* bpftrace 0.27's tseries() (0.17 has none), as 0.27 prints it: a chart of
 * the map's last ts_intervals intervals, a row each from the key's first
 * one there ("-" where nothing was stored), with the time each starts;
 * in JSON the stored ones, {"interval_start": ..., "value": ...}.
 * Written from its observed output; docs/bpftrace.md, "Output". */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "plyc_btout.h"

#define TS_WIDTH 53	/* the chart's columns, its two '|' included */
#define TS_PAD 21	/* the lowest value's, above and below it */

/* The latest interval of the map being printed (0: each entry's own). */
static uint64_t ts_last;

void plyc_bt_tseries_set_last(uint64_t epoch)
{
	ts_last = epoch;
}

static const struct plyc_ts_slot *slot(const void *v, uint32_t i)
{
	return (const struct plyc_ts_slot *)v + i;
}

uint64_t plyc_bt_tseries_latest(const struct plyc_map *m, const void *v)
{
	uint64_t last = 0;
	uint32_t i;

	for (i = 0; i < m->ts_intervals; i++)
		if (slot(v, i)->epoch > last)
			last = slot(v, i)->epoch;
	return last;
}

struct ts_row {
	uint64_t epoch;
	int have;
	int64_t value;
};

/* The rows of one entry: its intervals from its first one among the last
 * ts_intervals (up to the map's latest, all of them "-" but the last when
 * it has none there) to the latest; none when that reaches back past 0, as
 * in bpftrace. */
static uint32_t rows(const struct plyc_map *m, const void *v, struct ts_row *out)
{
	uint64_t last = ts_last ? ts_last : plyc_bt_tseries_latest(m, v);
	uint64_t first = last - m->ts_intervals + 1, from = last, e;
	uint32_t i, n = 0;

	if (first > last)
		return 0;
	for (i = 0; i < m->ts_intervals; i++)
		if (slot(v, i)->epoch >= first && slot(v, i)->epoch < from)
			from = slot(v, i)->epoch;
	for (e = from; e <= last && n < m->ts_intervals && n < PLYC_TS_MAX_INTERVALS; e++, n++) {
		const struct plyc_ts_slot *s = slot(v, (uint32_t)(e % m->ts_intervals));

		out[n].epoch = e;
		out[n].have = s->epoch == e;
		out[n].value = s->value;
		if (out[n].have && m->ts_agg == PLYC_TS_AVG && s->meta)
			out[n].value = m->value.is_signed ? s->value / (int64_t)s->meta
							  : (int64_t)((uint64_t)s->value / s->meta);
	}
	return n;
}

static int less(const struct plyc_map *m, int64_t a, int64_t b)
{
	return m->value.is_signed ? a < b : (uint64_t)a < (uint64_t)b;
}

/* b - a, wrapping as bpftrace's 64-bit arithmetic does */
static float span(int64_t a, int64_t b)
{
	return (float)(int64_t)((uint64_t)b - (uint64_t)a);
}

static void number(FILE *fp, const struct plyc_map *m, int have, int64_t x, int width)
{
	char buf[32];

	if (!have)
		strcpy(buf, "null");
	else if (m->value.is_signed)
		snprintf(buf, sizeof(buf), "%" PRId64, x);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)x);
	fprintf(fp, "%*s", width, buf);
}

/* The interval's start as local time, with `digits` of its second. */
static void start_time(FILE *fp, const struct plyc_map *m, uint64_t epoch, int digits, const char *date)
{
	int64_t ns = (int64_t)(epoch * (uint64_t)m->ts_interval) + plyc_rt.tai_to_real_ns;
	time_t sec = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	char buf[64] = "";
	struct tm tm;
	long scale = 1;
	int d;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (localtime_r(&sec, &tm))
		strftime(buf, sizeof(buf), date, &tm);
	fputs(buf, fp);
	for (d = digits; d < 9; d++)
		scale *= 10;
	if (digits)
		fprintf(fp, ".%0*ld", digits, frac / scale);
}

void plyc_bt_tseries_chart(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct ts_row row[PLYC_TS_MAX_INTERVALS];
	uint32_t n = rows(m, v, row), i;
	int64_t lo, hi;
	int have, digits, tsize, zero = 0, at;
	const char *unit;
	uint64_t step;
	char line[TS_WIDTH + 1];

	if (!n) {
		fputs("<no data>\n", fp);
		return;
	}
	/* the scale: the first row's value (none: "null") to the last's */
	have = row[0].have;
	lo = hi = row[0].value;
	for (i = 1; have && i < n; i++) {
		if (!row[i].have)
			continue;
		if (less(m, row[i].value, lo))
			lo = row[i].value;
		if (less(m, hi, row[i].value))
			hi = row[i].value;
	}
	if (have && lo == hi) {
		if (m->value.is_signed ? lo != INT64_MIN : (uint64_t)lo != 0)
			lo--;
		if (m->value.is_signed ? hi != INT64_MAX : (uint64_t)hi != UINT64_MAX)
			hi++;
	}
	/* the times' precision, by the rows' spacing (one row: ns) */
	step = n > 1 ? (uint64_t)m->ts_interval : 0;
	digits = step >= 1000000000 ? 0 : step >= 1000000 ? 3 : step >= 1000 ? 6 : 9;
	unit = digits == 3 ? "hh:mm:ss.ms" : digits == 6 ? "hh:mm:ss.\xce\xbcs" : digits == 9 ? "hh:mm:ss.ns"
											 : "hh:mm:ss";
	tsize = 8 + (digits ? 1 + digits : 0);

	fprintf(fp, "%*s", tsize + 1, "");
	number(fp, m, have, lo, -TS_PAD);
	number(fp, m, have, hi, TS_WIDTH - TS_PAD);
	fprintf(fp, "\n%-*s|", tsize + 1, unit);
	for (i = 0; i < TS_WIDTH - 2; i++)
		fputc('_', fp);
	fputs("|\n", fp);
	if (have && less(m, lo, 0) && less(m, 0, hi))
		zero = (int)((float)TS_WIDTH * span(lo, 0) / span(lo, hi));
	for (i = 0; i < n; i++) {
		memset(line, ' ', TS_WIDTH);
		line[TS_WIDTH] = 0;
		line[0] = line[TS_WIDTH - 1] = '|';
		if (zero > 0)
			line[zero] = '.';
		start_time(fp, m, row[i].epoch, digits, "%H:%M:%S");
		fputc(' ', fp);
		if (!row[i].have) {
			fprintf(fp, "%s -\n", line);
			continue;
		}
		at = TS_WIDTH / 2;
		if (lo != hi)
			at = (int)((float)(TS_WIDTH - 1) * span(lo, row[i].value) / span(lo, hi));
		line[at < 0 ? 0 : at > TS_WIDTH - 1 ? TS_WIDTH - 1 : at] = '*';
		fprintf(fp, "%s ", line);
		number(fp, m, 1, row[i].value, 0);
		fputc('\n', fp);
	}
	memset(line, '_', TS_WIDTH);
	line[0] = line[TS_WIDTH - 1] = 'v';
	fprintf(fp, "%*s %s\n%*s ", tsize, "", line, tsize, "");
	number(fp, m, have, lo, -TS_PAD);
	number(fp, m, have, hi, TS_WIDTH - TS_PAD);
	fputs("\n\n", fp);
}

void plyc_bt_tseries_json(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct ts_row row[PLYC_TS_MAX_INTERVALS];
	uint32_t n = rows(m, v, row), i;
	int first = 1;

	fputc('[', fp);
	for (i = 0; i < n; i++) {
		if (!row[i].have)
			continue;
		fputs(first ? "{\"interval_start\":\"" : ",{\"interval_start\":\"", fp);
		start_time(fp, m, row[i].epoch, 9, "%Y-%m-%d %H:%M:%S");
		fputs("\",\"value\":", fp);
		number(fp, m, 1, row[i].value, 0);
		fputc('}', fp);
		first = 0;
	}
	fputc(']', fp);
}
