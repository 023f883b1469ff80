/* Aggregations, one entry per kind (plyc_agg.h): how per-CPU values merge,
 * sort, print in ply's text and in JSON, and show in --metrics.
 *
 * The text layout is ply's (src/libply/built-in/aggregation.c); see
 * docs/output.md and docs/metrics.md. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "plyc_agg.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_s64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static uint64_t word(const void *v, uint32_t i)
{
	return plyc_load_uint((const char *)v + 8 * i, 8);
}

int plyc_cmp_typed(const struct plyc_type *t, const void *a, const void *b)
{
	uint32_t i;
	int c;

	switch (t->kind) {
	case PLYC_K_TUPLE:
		/* member by member, so integers compare as numbers, not bytes */
		for (i = 0; i < t->nfields; i++) {
			c = plyc_cmp_typed(&t->fields[i].type, (const char *)a + t->fields[i].offset,
					   (const char *)b + t->fields[i].offset);
			if (c)
				return c;
		}
		return 0;
	case PLYC_K_STR:
	case PLYC_K_MEM:
	case PLYC_K_BUF:
	case PLYC_K_INET:
	case PLYC_K_USYM:
		return memcmp(a, b, t->size);
	case PLYC_K_STACK:
	case PLYC_K_USTACK:
		return cmp_s64(plyc_load_int(a, t->size), plyc_load_int(b, t->size));
	default:
		if (t->size > 8)
			return memcmp(a, b, t->size);
		if (t->is_signed)
			return cmp_s64(plyc_load_int(a, t->size),
				       plyc_load_int(b, t->size));
		return cmp_u64(plyc_load_uint(a, t->size),
			       plyc_load_uint(b, t->size));
	}
}

uint32_t plyc_agg_nbuckets(const struct plyc_map *m)
{
	if (m->nbuckets)
		return m->nbuckets;
	return plyc_agg_ops(m)->buckets ? plyc_agg_ops(m)->buckets : m->value_size / 8;
}

/* --- merging per-CPU values ------------------------------------------- */

/* count, sum, avg and histogram buckets: word-wise sums (two's complement
 * makes this right for signed sums too) */
static void merge_words(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
			int ncpus)
{
	uint64_t sum;
	uint32_t i;
	int c;

	for (i = 0; i + 8 <= m->value_size; i += 8) {
		for (sum = 0, c = 0; c < ncpus; c++)
			sum += plyc_load_uint(cpu + c * stride + i, 8);
		memcpy((char *)dst + i, &sum, 8);
	}
}

/* a plain value has no merge: take the first CPU that has one (a plain
 * per-CPU map is unusual) */
static void merge_first(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
			int ncpus)
{
	uint32_t i;
	int c;

	memcpy(dst, cpu, m->value_size);
	for (c = 0; c < ncpus; c++) {
		const char *v = cpu + c * stride;

		for (i = 0; i < m->value_size && !v[i]; i++)
			;
		if (i < m->value_size) {
			memcpy(dst, v, m->value_size);
			break;
		}
	}
}

/* min and max: the extreme of the CPUs that stored one (set) */
static void merge_extreme(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
			  int ncpus, int want_less)
{
	struct plyc_minmax acc = { 0, 0 }, v;
	int c, less;

	for (c = 0; c < ncpus; c++) {
		memcpy(&v, cpu + c * stride, sizeof(v));
		if (!v.set)
			continue;
		if (!acc.set) {
			acc = v;
			continue;
		}
		less = m->value.is_signed ? v.value < acc.value
					  : (uint64_t)v.value < (uint64_t)acc.value;
		if (less == want_less)
			acc.value = v.value;
	}
	memcpy(dst, &acc, sizeof(acc));
}

static void merge_min(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
		      int ncpus)
{
	merge_extreme(m, dst, cpu, stride, ncpus, 1);
}

static void merge_max(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
		      int ncpus)
{
	merge_extreme(m, dst, cpu, stride, ncpus, 0);
}

/* --- plain values --------------------------------------------------------- */

static int cmp_plain(const struct plyc_map *m, const void *a, const void *b)
{
	return plyc_cmp_typed(&m->value, a, b);
}

static void print_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	plyc_print_value(fp, &m->value, v);
}

static void json_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	plyc_json_value(fp, &m->value, v);
}

/* --- count, sum, min, max, avg: one 64-bit number ---------------------- */

static struct plyc_type scalar_type(const struct plyc_map *m)
{
	struct plyc_type t = { .kind = PLYC_K_INT, .size = 8 };

	if (!plyc_agg_ops(m)->typed)
		return t;

	if (m->value.kind == PLYC_K_TIME || m->value.kind == PLYC_K_HEX)
		t.kind = m->value.kind;
	t.is_signed = m->value.is_signed;
	return t;
}

static uint64_t scalar_word(const struct plyc_map *m, const void *v)
{
	(void)m;
	return word(v, 0);
}

static uint64_t scalar_minmax(const struct plyc_map *m, const void *v)
{
	struct plyc_minmax mm;

	(void)m;
	memcpy(&mm, v, sizeof(mm));
	return (uint64_t)mm.value;
}

/* ply's integer mean */
static uint64_t scalar_avg(const struct plyc_map *m, const void *v)
{
	struct plyc_avg avg;

	memcpy(&avg, v, sizeof(avg));
	if (!avg.count)
		return 0;
	if (m->value.is_signed)
		return (uint64_t)(avg.sum / (int64_t)avg.count);
	return (uint64_t)avg.sum / avg.count;
}

static uint64_t scalar_value(const struct plyc_map *m, const void *v)
{
	return plyc_agg_ops(m)->scalar(m, v);
}

static int cmp_scalar(const struct plyc_map *m, const void *a, const void *b)
{
	uint64_t x = scalar_value(m, a), y = scalar_value(m, b);

	return scalar_type(m).is_signed ? cmp_s64((int64_t)x, (int64_t)y) : cmp_u64(x, y);
}

static void print_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st = scalar_type(m);
	uint64_t x = scalar_value(m, v);

	plyc_print_value(fp, &st, &x);
}

static void json_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st = scalar_type(m);
	uint64_t x = scalar_value(m, v);

	plyc_json_value(fp, &st, &x);
}

static const char *type_counter(const struct plyc_map *m, const char **suffix)
{
	(void)m;
	*suffix = "_total";
	return "counter";
}

/* a sum of signed values can go down: not a counter */
static const char *type_sum(const struct plyc_map *m, const char **suffix)
{
	*suffix = m->value.is_signed ? "" : "_total";
	return m->value.is_signed ? "gauge" : "counter";
}

static const char *type_gauge(const struct plyc_map *m, const char **suffix)
{
	(void)m;
	*suffix = "";
	return "gauge";
}

static void sample_start(const struct plyc_metric_out *o)
{
	fprintf(o->fp, "%s%s", o->name, o->suffix);
	o->labels(o->fp, o->m, o->key, NULL);
}

static void metric_int(const struct plyc_metric_out *o, uint64_t x, int is_signed)
{
	sample_start(o);
	if (is_signed)
		fprintf(o->fp, " %" PRId64 "\n", (int64_t)x);
	else
		fprintf(o->fp, " %" PRIu64 "\n", x);
}

static void metric_count(const struct plyc_metric_out *o, const void *v)
{
	metric_int(o, word(v, 0), 0);
}

static void metric_sum(const struct plyc_metric_out *o, const void *v)
{
	metric_int(o, word(v, 0), o->m->value.is_signed);
}

static void metric_minmax(const struct plyc_metric_out *o, const void *v)
{
	struct plyc_minmax mm;

	memcpy(&mm, v, sizeof(mm));
	metric_int(o, (uint64_t)mm.value, o->m->value.is_signed);
}

/* the exact mean, not ply's integer division */
static void metric_avg(const struct plyc_metric_out *o, const void *v)
{
	struct plyc_avg av;

	memcpy(&av, v, sizeof(av));
	sample_start(o);
	if (!av.count)
		fputs(" NaN\n", o->fp);
	else if (o->m->value.is_signed)
		fprintf(o->fp, " %.17g\n", (double)av.sum / (double)av.count);
	else
		fprintf(o->fp, " %.17g\n", (double)(uint64_t)av.sum / (double)av.count);
}

/* --- histograms: u64 buckets, then the u64 sum of the values -------------- */

static int cmp_buckets(const struct plyc_map *m, const void *a, const void *b)
{
	uint32_t i;
	int c;

	/* ply compares histograms as arrays: bucket by bucket from the lowest */
	for (i = 0; i < plyc_agg_nbuckets(m); i++) {
		c = cmp_u64(word(a, i), word(b, i));
		if (c)
			return c;
	}
	return 0;
}

static uint64_t hist_total(const struct plyc_map *m, const void *v)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < plyc_agg_nbuckets(m); i++)
		total += word(v, i);
	return total;
}

/* The count and its bar: 32 columns scaled to the map entry's total, in
 * eighths of a column with Unicode blocks, in whole columns in ASCII. */
static void hist_count(FILE *fp, uint64_t count, uint64_t total)
{
	int w, space;

	fprintf(fp, "\t%8" PRIu64 " ", count);

	if (!plyc_rt.utf8) {
		/* same arithmetic as ply, so bars round alike */
		w = (int)(((float)count / (float)total) * 32.0 + 0.5);
		fputc('|', fp);
		for (space = 0; space < 32; space++)
			fputc(space < w ? '#' : ' ', fp);
		fputs("|\n", fp);
		return;
	}

	w = (int)(((float)count / (float)total) * 256.0 + 0.5);
	space = 32 - ((w + 7) >> 3);

	fputs("\u2524", fp);			/* ┤ */
	for (; w > 8; w -= 8)
		fputs("\u2588", fp);		/* █ */
	if (w > 0) {
		/* U+2588 full block .. U+258F one eighth */
		const char part[] = { '\xe2', '\x96', (char)(0x88 + 8 - w), 0 };

		fputs(part, fp);
	}
	fprintf(fp, "%*s\u2502\n", space, "");	/* │ */
}

/* 2^log2 as a number below 1024 and a k/M/G/T/P/E suffix (none below
 * 1024). ply's table ends in "Z" for 2^60, where "E" is meant. */
static int scaled(int log2, const char **suffix)
{
	static const char *const units[] = {
		NULL, "k", "M", "G", "T", "P", "E",
	};

	*suffix = units[log2 / 10];
	return 1 << (log2 % 10);
}

static void quantize_label(FILE *fp, const struct plyc_map *m, int i)
{
	const char *ls, *hs;
	int lo, hi;

	if (m->value.kind == PLYC_K_TIME) {
		/* durations are readable at any size: closed intervals */
		uint64_t ulo = i ? (1ULL << i) : 0;
		uint64_t uhi = (i < 63) ? (1ULL << (i + 1)) - 1 : INT64_MAX;

		fputs("\t[", fp);
		plyc_print_duration(fp, (int64_t)ulo);
		fputs(", ", fp);
		plyc_print_duration(fp, (int64_t)uhi);
		fputc(']', fp);
		return;
	}

	if (i == 0) {
		lo = 0;
		ls = NULL;
	} else {
		lo = scaled(i, &ls);
	}
	hi = scaled(i + 1, &hs);

	/* closed below 1k; above, [lo, hi) with both ends scaled */
	if (!hs)
		fprintf(fp, "\t[%4d, %4d]", lo, hi - 1);
	else
		fprintf(fp, "\t[%*d%s, %3d%s)", ls ? 3 : 4, lo, ls ? ls : "",
			hi, hs);
}

/* Rows for the non-empty buckets, ascending; "..." where empty buckets
 * were skipped between two rows. For a signed argument the last bucket
 * holds the negative values and comes first, as "< 0". */
static void print_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint64_t total = hist_total(m, v);
	int len = (int)plyc_agg_nbuckets(m), i, gap;

	fputc('\n', fp);

	if (m->value.is_signed) {
		len--;
		if (word(v, len)) {
			fputs("\t         < 0", fp);
			hist_count(fp, word(v, len), total);
			if (!word(v, 0))
				fputs("\t...\n", fp);
		}
	}

	for (i = 0, gap = 0; i < len; i++) {
		uint64_t c = word(v, i);

		if (!c) {
			gap++;
			continue;
		}

		/* gap == i: only leading empty buckets, nothing to mark */
		if (gap && gap != i)
			fputs("\t...\n", fp);
		gap = 0;

		quantize_label(fp, m, i);
		hist_count(fp, c, total);
	}
}

static void fmt_bound(char *buf, size_t len, const struct plyc_map *m,
		      int64_t v)
{
	if (m->value.kind == PLYC_K_TIME)
		plyc_fmt_duration(buf, len, v);
	else
		snprintf(buf, len, "%4" PRId64, v);
}

/* plyc's linear histogram, drawn like quantize: "< min" first, closed
 * [lo, hi] rows of `step` values, ">= max" last. */
static void print_lquantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint64_t total = hist_total(m, v);
	uint32_t n = plyc_agg_nbuckets(m), i;
	char lo[32], hi[32], label[80];
	int printed = 0, gap = 0;

	fputc('\n', fp);

	for (i = 0; i < n; i++) {
		uint64_t c = word(v, i);
		int64_t blo = m->lq_min + ((int64_t)i - 1) * m->lq_step;

		if (!c) {
			gap = 1;
			continue;
		}
		if (gap && printed)
			fputs("\t...\n", fp);
		gap = 0;
		printed = 1;

		if (i == 0) {
			fmt_bound(lo, sizeof(lo), m, m->lq_min);
			snprintf(label, sizeof(label), "< %s", lo + strspn(lo, " "));
			fprintf(fp, "\t%12s", label);
		} else if (i == n - 1) {
			fmt_bound(hi, sizeof(hi), m, m->lq_max);
			snprintf(label, sizeof(label), ">= %s", hi + strspn(hi, " "));
			fprintf(fp, "\t%12s", label);
		} else {
			fmt_bound(lo, sizeof(lo), m, blo);
			fmt_bound(hi, sizeof(hi), m, blo + m->lq_step - 1);
			fprintf(fp, "\t[%s, %s]", lo, hi);
		}
		hist_count(fp, c, total);
	}
}

static void json_num(FILE *fp, uint64_t v, int is_signed)
{
	if (is_signed)
		fprintf(fp, "%" PRId64, (int64_t)v);
	else
		fprintf(fp, "%" PRIu64, v);
}

static void json_bucket(FILE *fp, int *first, uint64_t lo, uint64_t hi,
			int is_signed, uint64_t count)
{
	fputs(*first ? "" : ", ", fp);
	*first = 0;

	fputs("{\"lo\": ", fp);
	json_num(fp, lo, is_signed);
	fputs(", \"hi\": ", fp);
	json_num(fp, hi, is_signed);
	fprintf(fp, ", \"count\": %" PRIu64 "}", count);
}

/* Non-empty buckets as closed [lo, hi] ranges, lowest first. */
static void json_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), i;
	int sgn = m->value.is_signed, first = 1;
	uint64_t c;

	fputs("{\"buckets\": [", fp);
	if (sgn) {
		n--;
		c = word(v, n);
		if (c)
			json_bucket(fp, &first, (uint64_t)INT64_MIN, (uint64_t)-1, 1, c);
	}
	for (i = 0; i < n; i++) {
		c = word(v, i);
		if (c)
			json_bucket(fp, &first, i ? 1ULL << i : 0,
				    i < 63 ? (1ULL << (i + 1)) - 1 : UINT64_MAX, sgn, c);
	}
	fputs("]}", fp);
}

static void json_lquantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint32_t n = plyc_agg_nbuckets(m), i;
	int sgn = m->value.is_signed, first = 1;
	uint64_t c;

	fputs("{\"buckets\": [", fp);
	for (i = 0; i < n; i++) {
		int64_t lo = m->lq_min + ((int64_t)i - 1) * m->lq_step;

		c = word(v, i);
		if (!c)
			continue;

		if (i == 0)
			json_bucket(fp, &first, sgn ? (uint64_t)INT64_MIN : 0,
				    (uint64_t)(m->lq_min - 1), sgn, c);
		else if (i == n - 1)
			json_bucket(fp, &first, (uint64_t)m->lq_max,
				    sgn ? (uint64_t)INT64_MAX : UINT64_MAX, sgn, c);
		else
			json_bucket(fp, &first, (uint64_t)lo, (uint64_t)(lo + m->lq_step - 1), 1, c);
	}
	fputs("]}", fp);
}

static const char *type_histogram(const struct plyc_map *m, const char **suffix)
{
	(void)m;
	*suffix = "";
	return "histogram";
}

static void metric_bucket(const struct plyc_metric_out *o, int64_t le, int is_signed,
			  uint64_t cum)
{
	char buf[48];

	/* integral bounds as OpenMetrics' canonical floats: "7.0" */
	if (is_signed)
		snprintf(buf, sizeof(buf), "%" PRId64 ".0", le);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 ".0", (uint64_t)le);
	fprintf(o->fp, "%s_bucket", o->name);
	o->labels(o->fp, o->m, o->key, buf);
	fprintf(o->fp, " %" PRIu64 "\n", cum);
}

/* After the bounded buckets: +Inf, _sum when the value keeps one and
 * with_sum (OpenMetrics: a histogram with a negative bucket bound has no
 * _sum, it would not be a counter), _count. */
static void metric_hist_end(const struct plyc_metric_out *o, const void *v, int with_sum)
{
	const struct plyc_map *m = o->m;
	uint32_t nb = plyc_agg_nbuckets(m);
	uint64_t total = hist_total(m, v);

	fprintf(o->fp, "%s_bucket", o->name);
	o->labels(o->fp, m, o->key, "+Inf");
	fprintf(o->fp, " %" PRIu64 "\n", total);
	if (m->value_size >= 8 * nb + 8 && with_sum) {
		fprintf(o->fp, "%s_sum", o->name);
		o->labels(o->fp, m, o->key, NULL);
		if (m->value.is_signed)
			fprintf(o->fp, " %" PRId64 "\n", (int64_t)word(v, nb));
		else
			fprintf(o->fp, " %" PRIu64 "\n", word(v, nb));
	}
	fprintf(o->fp, "%s_count", o->name);
	o->labels(o->fp, m, o->key, NULL);
	fprintf(o->fp, " %" PRIu64 "\n", total);
}

/* Cumulative buckets at the bounds that the values (integers) can't
 * cross, up to the highest non-empty bucket. */
static void metric_quantize(const struct plyc_metric_out *o, const void *v)
{
	uint32_t nb = plyc_agg_nbuckets(o->m), i, top;
	int sgn = o->m->value.is_signed;
	uint32_t last = sgn ? nb - 1 : nb;
	uint64_t cum = 0;

	if (sgn) {
		cum = word(v, nb - 1);
		metric_bucket(o, -1, 1, cum);
	}
	for (top = last; top > 0 && !word(v, top - 1); top--)
		;
	if (!top)
		top = 1;
	for (i = 0; i < top; i++) {
		cum += word(v, i);
		if (i >= 62 + !sgn)
			break;	/* the highest bucket ends at the type's maximum */
		metric_bucket(o, (int64_t)((2ULL << i) - 1), sgn, cum);
	}
	metric_hist_end(o, v, !(o->om && sgn));
}

/* bcc's log2 buckets: [0] is 0, [i] is [2^(i-1), 2^i - 1] */
static void metric_log2(const struct plyc_metric_out *o, const void *v)
{
	uint32_t nb = plyc_agg_nbuckets(o->m), i, top;
	uint64_t cum = 0;

	for (top = nb; top > 0 && !word(v, top - 1); top--)
		;
	/* the last, [2^62, 2^64), is bounded by +Inf only */
	for (i = 0; i < top && i < 63; i++) {
		cum += word(v, i);
		metric_bucket(o, i ? (int64_t)((1ULL << i) - 1) : 0, 0, cum);
	}
	metric_hist_end(o, v, 1);
}

/* [0] < min, [i] up to min + i*step - 1, [last] >= max */
static void metric_lquantize(const struct plyc_metric_out *o, const void *v)
{
	const struct plyc_map *m = o->m;
	uint32_t nb = plyc_agg_nbuckets(m), i;
	uint64_t cum = 0;

	for (i = 0; i + 1 < nb; i++) {
		int64_t le = m->lq_min + (int64_t)i * m->lq_step - 1;

		if (le > m->lq_max - 1)
			le = m->lq_max - 1;
		cum += word(v, i);
		metric_bucket(o, le, 1, cum);
	}
	metric_hist_end(o, v, !(o->om && m->lq_min - 1 < 0));
}

/* --- bpftrace's stats() and hist(), and bpftrace's output of every kind -- */

static int64_t avg_of(const void *v)
{
	struct plyc_avg av;

	memcpy(&av, v, sizeof(av));
	return av.count ? av.sum / (int64_t)av.count : 0;
}

/* bpftrace's text of a stats() value, also ply's (ply has no stats) */
static void print_stats(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_avg av;

	(void)m;
	memcpy(&av, v, sizeof(av));
	fprintf(fp, "count %" PRId64 ", average %" PRId64 ", total %" PRId64, (int64_t)av.count,
		avg_of(v), av.sum);
}

static void json_stats(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_avg av;

	(void)m;
	memcpy(&av, v, sizeof(av));
	fprintf(fp, "{\"count\": %" PRId64 ", \"average\": %" PRId64 ", \"total\": %" PRId64 "}",
		(int64_t)av.count, avg_of(v), av.sum);
}

/* avg() and stats() both order by the average */
static int cmp_avg(const struct plyc_map *m, const void *a, const void *b)
{
	(void)m;
	return cmp_s64(avg_of(a), avg_of(b));
}

static void bt_print_avg(FILE *fp, const struct plyc_map *m, const void *v)
{
	(void)m;
	fprintf(fp, "%" PRId64, avg_of(v) / (int64_t)plyc_bt_div());
}

static int cmp_hist_total(const struct plyc_map *m, const void *a, const void *b)
{
	return cmp_u64(hist_total(m, a), hist_total(m, b));
}

/* plain values: integers by value, the rest by key */
static int bt_cmp_plain(const struct plyc_map *m, const void *a, const void *b)
{
	if (m->value.kind == PLYC_K_STR || m->value.kind == PLYC_K_MEM || m->value.kind == PLYC_K_BUF ||
	    m->value.kind == PLYC_K_TUPLE || m->value.kind == PLYC_K_STACK || m->value.kind == PLYC_K_SYM ||
	    m->value.kind == PLYC_K_USTACK || m->value.size > 8)
		return 0;
	return plyc_cmp_typed(&m->value, a, b);
}

/* an integer divided by print()'s div, or NULL when it isn't one */
static const void *div_plain(const struct plyc_map *m, const void *v, int64_t *tmp)
{
	if (plyc_bt_div() == 1 || m->value.kind != PLYC_K_INT || m->value.size > 8)
		return v;
	if (m->value.is_signed)
		*tmp = plyc_load_int(v, m->value.size) / (int64_t)plyc_bt_div();
	else
		*tmp = (int64_t)(plyc_load_uint(v, m->value.size) / plyc_bt_div());
	return NULL;
}

static void bt_print_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t = { PLYC_K_INT, 8, m->value.is_signed, 0, 0, NULL };
	int64_t x;

	if (div_plain(m, v, &x))
		plyc_bt_value(fp, &m->value, v, 8);
	else
		plyc_bt_value(fp, &t, &x, 8);
}

static void bt_json_plain(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type t = { PLYC_K_INT, 8, m->value.is_signed, 0, 0, NULL };
	int64_t x;

	if (div_plain(m, v, &x))
		plyc_bt_json_value(fp, &m->value, v);
	else
		plyc_bt_json_value(fp, &t, &x);
}

/* count, sum, min, max: the number, whatever the argument's kind */
static void bt_print_scalar(FILE *fp, const struct plyc_map *m, const void *v)
{
	uint64_t x = scalar_value(m, v);

	if (scalar_type(m).is_signed)
		fprintf(fp, "%" PRId64, (int64_t)x / (int64_t)plyc_bt_div());
	else
		fprintf(fp, "%" PRIu64, x / plyc_bt_div());
}

/* ply's rows of a quantize (and of a log2 map, which bpftrace has no form for) */
static void bt_print_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	print_quantize(fp, m, v);
	fputc('\n', fp);
}

/* hist() in a ply-style dump: its rows under the name */
static void print_hist(FILE *fp, const struct plyc_map *m, const void *v)
{
	fputc('\n', fp);
	plyc_bt_hist_rows(fp, m, v);
}

/* [0] < 0, [1] 0, [i] up to 2^(i-1) - 1 */
static void metric_hist(const struct plyc_metric_out *o, const void *v)
{
	uint32_t nb = plyc_agg_nbuckets(o->m), i, top;
	uint64_t cum = 0;

	for (top = nb; top > 0 && !word(v, top - 1); top--)
		;
	for (i = 0; i < top && i < nb - 1; i++) {
		cum += word(v, i);
		metric_bucket(o, i < 2 ? (int64_t)i - 1 : (int64_t)((1ULL << (i - 1)) - 1), 1, cum);
	}
	metric_hist_end(o, v, !o->om);
}

/* --- the table ------------------------------------------------------------ */

#define SCALAR .cmp = cmp_scalar, .print = print_scalar, .json = json_scalar
#define BT_SCALAR .bt_cmp = cmp_scalar, .bt_print = bt_print_scalar, .bt_json = bt_print_scalar
#define HIST .hist = 1, .typed = 1, .merge = merge_words, .cmp = cmp_buckets, \
	.metric_type = type_histogram, .bt_group = PLYC_BT_HIST, .bt_cmp = cmp_hist_total

static const struct plyc_agg_ops ops[] = {
	[PLYC_A_NONE] = { .merge = merge_first, .cmp = cmp_plain, .print = print_plain,
			  .json = json_plain, .bt_cmp = bt_cmp_plain, .bt_print = bt_print_plain,
			  .bt_json = bt_json_plain },
	[PLYC_A_COUNT] = { "count()", SCALAR, BT_SCALAR, .merge = merge_words, .scalar = scalar_word, .metric_type = type_counter,
			   .metric = metric_count },
	[PLYC_A_SUM] = { "sum()", SCALAR, BT_SCALAR, .typed = 1, .merge = merge_words, .scalar = scalar_word, .metric_type = type_sum,
			 .metric = metric_sum },
	[PLYC_A_MIN] = { "min()", SCALAR, BT_SCALAR, .typed = 1, .merge = merge_min, .scalar = scalar_minmax,
			 .metric_type = type_gauge, .metric = metric_minmax },
	[PLYC_A_MAX] = { "max()", SCALAR, BT_SCALAR, .typed = 1, .merge = merge_max, .scalar = scalar_minmax,
			 .metric_type = type_gauge, .metric = metric_minmax },
	[PLYC_A_AVG] = { "avg()", SCALAR, .typed = 1, .merge = merge_words, .scalar = scalar_avg, .metric_type = type_gauge,
			 .metric = metric_avg, .bt_group = PLYC_BT_STATS, .bt_cmp = cmp_avg,
			 .bt_print = bt_print_avg, .bt_json = bt_print_avg },
	[PLYC_A_QUANTIZE] = { "quantize()", HIST, .buckets = PLYC_QUANTIZE_BUCKETS,
			      .print = print_quantize, .json = json_quantize, .metric = metric_quantize,
			      .bt_print = bt_print_quantize, .bt_json = json_quantize },
	/* also bpftrace's lhist(): the same buckets */
	[PLYC_A_LQUANTIZE] = { "lquantize()", HIST, .print = print_lquantize, .json = json_lquantize,
			       .metric = metric_lquantize, .bt_print = plyc_bt_lhist_rows,
			       .bt_json = plyc_bt_lhist_json },
	/* a report's log2 section prints these itself (report.c); a dump or
	 * JSON shows them as quantize's, --metrics with their own bounds */
	[PLYC_A_LOG2] = { "quantize()", HIST, .buckets = PLYC_QUANTIZE_BUCKETS,
			  .print = print_quantize, .json = json_quantize, .metric = metric_log2,
			  .bt_print = bt_print_quantize, .bt_json = json_quantize },
	/* bpftrace's, for its front end; a ply-style dump shows them as bpftrace does */
	[PLYC_A_STATS] = { "stats()", .merge = merge_words, .cmp = cmp_avg, .print = print_stats,
			   .json = json_stats, .metric_type = type_gauge, .metric = metric_avg,
			   .bt_group = PLYC_BT_STATS, .bt_cmp = cmp_avg, .bt_print = print_stats,
			   .bt_json = json_stats },
	[PLYC_A_HIST] = { "hist()", HIST, .buckets = PLYC_HIST_BUCKETS, .print = print_hist,
			  .json = plyc_bt_hist_json, .metric = metric_hist, .bt_print = plyc_bt_hist_rows,
			  .bt_json = plyc_bt_hist_json },
};

const struct plyc_agg_ops *plyc_agg_ops(const struct plyc_map *m)
{
	if ((unsigned)m->agg >= sizeof(ops) / sizeof(ops[0]))
		return &ops[PLYC_A_NONE];
	return &ops[m->agg];
}
