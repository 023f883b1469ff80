/* Aggregations, one entry per kind (plyc_agg.h): how per-CPU values merge,
 * the one number of count, sum, min, max and avg, and how each kind shows
 * in --metrics (docs/metrics.md). How a style sorts and prints them is in
 * its own file (output/ply.c, output/bpftrace.c). */
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

int64_t plyc_lq_bound(const struct plyc_map *m, uint32_t i)
{
	/* i * step may pass INT64_MAX (a range wider than it); the sum is in
	 * [min, max], so unsigned arithmetic lands on it exactly */
	return (int64_t)((uint64_t)m->lq_min + (uint64_t)i * (uint64_t)m->lq_step);
}

int64_t plyc_lq_below(int64_t bound)
{
	return bound == INT64_MIN ? bound : bound - 1;
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

/* tseries: per interval slot, the CPUs' latest interval, their values of
 * it combined by the aggregator (the last value: the latest stored; avg
 * keeps sum and count, divided when printed) */
static int ts_less(const struct plyc_map *m, int64_t a, int64_t b)
{
	return m->value.is_signed ? a < b : (uint64_t)a < (uint64_t)b;
}

static void merge_tseries(const struct plyc_map *m, void *dst, const char *cpu, size_t stride,
			  int ncpus)
{
	uint32_t i, n = m->value_size / sizeof(struct plyc_ts_slot);
	struct plyc_ts_slot acc, v;
	int c;

	for (i = 0; i < n; i++) {
		memset(&acc, 0, sizeof(acc));
		for (c = 0; c < ncpus; c++) {
			memcpy(&v, cpu + c * stride + i * sizeof(v), sizeof(v));
			if (!v.epoch || v.epoch < acc.epoch)
				continue;
			if (v.epoch > acc.epoch) {
				acc = v;
				continue;
			}
			switch (m->ts_agg) {
			case PLYC_TS_LAST:
				if (v.meta > acc.meta)
					acc = v;
				break;
			case PLYC_TS_AVG:
				acc.meta += v.meta;
				/* fall through */
			case PLYC_TS_SUM:
				acc.value = (int64_t)((uint64_t)acc.value + (uint64_t)v.value);
				break;
			case PLYC_TS_MIN:
				if (ts_less(m, v.value, acc.value))
					acc.value = v.value;
				break;
			default:
				if (ts_less(m, acc.value, v.value))
					acc.value = v.value;
			}
		}
		memcpy((char *)dst + i * sizeof(acc), &acc, sizeof(acc));
	}
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

uint64_t plyc_agg_scalar(const struct plyc_map *m, const void *v, struct plyc_type *t)
{
	*t = scalar_type(m);
	return plyc_agg_ops(m)->scalar(m, v);
}

int plyc_agg_cmp_scalar(const struct plyc_map *m, const void *a, const void *b)
{
	struct plyc_type t;
	uint64_t x = plyc_agg_scalar(m, a, &t), y = plyc_agg_scalar(m, b, &t);

	return t.is_signed ? cmp_s64((int64_t)x, (int64_t)y) : cmp_u64(x, y);
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

uint32_t plyc_bt_hist_k(const struct plyc_map *m)
{
	uint32_t nb = plyc_agg_nbuckets(m), k;

	for (k = 1; k <= 5; k++)
		if (nb == (65 - k) * (1u << k) + 1)
			return k;
	return 0;
}

uint64_t plyc_bt_hist_low(uint32_t i, uint32_t k, uint64_t *mult, uint32_t *power)
{
	uint32_t j = i - 1, p = 0;
	uint64_t n = j;

	/* buckets below 2^(k+1) hold one value each: j itself */
	if (j >= (2u << k)) {
		n = (1ULL << k) + (j & ((1u << k) - 1));
		p = (j >> k) - 1;
	}
	if (mult)
		*mult = n;
	if (power)
		*power = p;
	/* the bound past the last bucket is 2^64 */
	return p >= 64 || n > (UINT64_MAX >> p) ? UINT64_MAX : n << p;
}

uint64_t plyc_agg_total(const struct plyc_map *m, const void *v)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < plyc_agg_nbuckets(m); i++)
		total += word(v, i);
	return total;
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
	uint64_t total = plyc_agg_total(m, v);

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

/* [0] < min, [i] up to min + i*step - 1, [last] >= lq_max; a below-min
 * bucket that can hold nothing (min INT64_MIN) is not written */
static void metric_lquantize(const struct plyc_metric_out *o, const void *v)
{
	const struct plyc_map *m = o->m;
	uint32_t nb = plyc_agg_nbuckets(m), i;
	uint64_t cum = 0;

	for (i = 0; i + 1 < nb; i++) {
		int64_t bound = plyc_lq_bound(m, i);

		cum += word(v, i);
		if (bound != INT64_MIN)
			metric_bucket(o, bound - 1, 1, cum);
	}
	metric_hist_end(o, v, !(o->om && m->lq_min <= 0));
}

/* --- bpftrace's stats() and hist() ------------------------------------------ */

int64_t plyc_agg_average(const void *v)
{
	struct plyc_avg av;

	memcpy(&av, v, sizeof(av));
	return av.count ? av.sum / (int64_t)av.count : 0;
}

/* avg() and stats() both order by the average */
int plyc_agg_cmp_average(const struct plyc_map *m, const void *a, const void *b)
{
	(void)m;
	return cmp_s64(plyc_agg_average(a), plyc_agg_average(b));
}

/* [0] < 0, [1] 0, [i] up to 2^(i-1) - 1 */
static void metric_hist(const struct plyc_metric_out *o, const void *v)
{
	uint32_t nb = plyc_agg_nbuckets(o->m), i, top, k = plyc_bt_hist_k(o->m);
	uint64_t cum = 0;

	for (top = nb; top > 0 && !word(v, top - 1); top--)
		;
	for (i = 0; i < top && i < nb - 1; i++) {
		cum += word(v, i);
		/* each bucket's largest value: one less than the next one's least */
		metric_bucket(o, i ? (int64_t)(plyc_bt_hist_low(i + 1, k, NULL, NULL) - 1) : -1, 1, cum);
	}
	metric_hist_end(o, v, !o->om);
}

/* --- the table ------------------------------------------------------------ */

#define HIST .hist = 1, .typed = 1, .merge = merge_words, .metric_type = type_histogram

static const struct plyc_agg_ops ops[] = {
	[PLYC_A_NONE] = { .merge = merge_first },
	[PLYC_A_COUNT] = { "count()", .merge = merge_words, .scalar = scalar_word, .metric_type = type_counter,
			   .metric = metric_count },
	[PLYC_A_SUM] = { "sum()", .typed = 1, .merge = merge_words, .scalar = scalar_word, .metric_type = type_sum,
			 .metric = metric_sum },
	[PLYC_A_MIN] = { "min()", .typed = 1, .merge = merge_min, .scalar = scalar_minmax,
			 .metric_type = type_gauge, .metric = metric_minmax },
	[PLYC_A_MAX] = { "max()", .typed = 1, .merge = merge_max, .scalar = scalar_minmax,
			 .metric_type = type_gauge, .metric = metric_minmax },
	[PLYC_A_AVG] = { "avg()", .typed = 1, .merge = merge_words, .scalar = scalar_avg, .metric_type = type_gauge,
			 .metric = metric_avg },
	[PLYC_A_QUANTIZE] = { "quantize()", HIST, .buckets = PLYC_QUANTIZE_BUCKETS, .metric = metric_quantize },
	/* also bpftrace's lhist(): the same buckets */
	[PLYC_A_LQUANTIZE] = { "lquantize()", HIST, .metric = metric_lquantize },
	/* a report's log2 section prints these itself (output/bccreport.c); a
	 * dump or JSON shows them as quantize's, --metrics with their own bounds */
	[PLYC_A_LOG2] = { "quantize()", HIST, .buckets = PLYC_QUANTIZE_BUCKETS, .metric = metric_log2 },
	/* bpftrace's, for its front end */
	[PLYC_A_STATS] = { "stats()", .merge = merge_words, .metric_type = type_gauge, .metric = metric_avg },
	[PLYC_A_HIST] = { "hist()", HIST, .buckets = PLYC_HIST_BUCKETS, .metric = metric_hist },
	/* a time series has no one sample: not exported (name NULL) */
	[PLYC_A_TSERIES] = { .hist = 1, .merge = merge_tseries },
};

const struct plyc_agg_ops *plyc_agg_ops(const struct plyc_map *m)
{
	if ((unsigned)m->agg >= sizeof(ops) / sizeof(ops[0]))
		return &ops[PLYC_A_NONE];
	return &ops[m->agg];
}
