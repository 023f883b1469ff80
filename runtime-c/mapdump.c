/* Map dumps: what the tracer prints for every map on exit and for
 * print(@map).
 *
 * plyc_map_dump() reads every entry from the kernel (merging per-CPU
 * values), then plyc_map_print() sorts and prints them; the second half
 * needs no BPF, so it is what the unit tests call.
 *
 * The layout is ply's (src/libply/libply.c, type.c, built-in/aggregation.c):
 *
 *     <blank line>
 *     @name:
 *     { key1, key2 }: value
 *
 * sorted by value, then by key, ascending. See docs/output.md.
 */
#define _GNU_SOURCE		/* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_rt.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_s64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static uint64_t load_u64(const void *p)
{
	return plyc_load_uint(p, 8);
}

static int is_hist(const struct plyc_map *m)
{
	return m->agg == PLYC_A_QUANTIZE || m->agg == PLYC_A_LQUANTIZE;
}

static uint32_t nbuckets(const struct plyc_map *m)
{
	if (m->nbuckets)
		return m->nbuckets;
	return m->agg == PLYC_A_QUANTIZE ? PLYC_QUANTIZE_BUCKETS
					 : m->value_size / 8;
}

/* Compare two values of one type as ply does: integers by value, arrays
 * (strings, memory) element by element. */
static int cmp_typed(const struct plyc_type *t, const void *a, const void *b)
{
	switch (t->kind) {
	case PLYC_K_STR:
	case PLYC_K_MEM:
		return memcmp(a, b, t->size);
	case PLYC_K_STACK:
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

/* count, sum, min, max and avg reduce to one 64-bit number, printed with
 * the aggregated argument's kind (a sum of durations is a duration). */
static struct plyc_type scalar_type(const struct plyc_map *m)
{
	struct plyc_type t = { .kind = PLYC_K_INT, .size = 8 };

	if (m->agg == PLYC_A_COUNT)
		return t;

	if (m->value.kind == PLYC_K_TIME || m->value.kind == PLYC_K_HEX)
		t.kind = m->value.kind;
	t.is_signed = m->value.is_signed;
	return t;
}

static uint64_t scalar_value(const struct plyc_map *m, const void *v)
{
	struct plyc_minmax mm;
	struct plyc_avg avg;

	switch (m->agg) {
	case PLYC_A_MIN:
	case PLYC_A_MAX:
		memcpy(&mm, v, sizeof(mm));
		return (uint64_t)mm.value;
	case PLYC_A_AVG:
		memcpy(&avg, v, sizeof(avg));
		if (!avg.count)
			return 0;
		if (m->value.is_signed)
			return (uint64_t)(avg.sum / (int64_t)avg.count);
		return (uint64_t)avg.sum / avg.count;
	default:
		return load_u64(v);
	}
}

static int cmp_value(const struct plyc_map *m, const void *a, const void *b)
{
	struct plyc_type st;
	uint64_t x, y;
	uint32_t i;
	int c;

	switch (m->agg) {
	case PLYC_A_NONE:
		return cmp_typed(&m->value, a, b);

	case PLYC_A_QUANTIZE:
	case PLYC_A_LQUANTIZE:
		/* ply compares histograms as arrays: bucket by bucket from
		 * the lowest. */
		for (i = 0; i < nbuckets(m); i++) {
			c = cmp_u64(load_u64((const char *)a + 8 * i),
				    load_u64((const char *)b + 8 * i));
			if (c)
				return c;
		}
		return 0;

	default:
		st = scalar_type(m);
		x = scalar_value(m, a);
		y = scalar_value(m, b);
		return st.is_signed ? cmp_s64((int64_t)x, (int64_t)y)
				    : cmp_u64(x, y);
	}
}

static int cmp_key(const struct plyc_map *m, const void *a, const void *b)
{
	const char *ka = a, *kb = b;
	uint32_t i;
	int c;

	for (i = 0; i < m->nkeys; i++) {
		c = cmp_typed(&m->keys[i].type, ka + m->keys[i].offset,
			      kb + m->keys[i].offset);
		if (c)
			return c;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b, void *priv)
{
	const struct plyc_entry *x = a, *y = b;
	const struct plyc_map *m = priv;
	int c;

	c = cmp_value(m, x->value, y->value);
	return c ? c : cmp_key(m, x->key, y->key);
}

/* --- histograms, text ---------------------------------------------- */

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

static uint64_t hist_total(const struct plyc_map *m, const void *v)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < nbuckets(m); i++)
		total += load_u64((const char *)v + 8 * i);
	return total;
}

/* Rows for the non-empty buckets, ascending; "..." where empty buckets
 * were skipped between two rows. For a signed argument the last bucket
 * holds the negative values and comes first, as "< 0". */
static void print_quantize(FILE *fp, const struct plyc_map *m, const void *v)
{
	const char *b = v;
	uint64_t total = hist_total(m, v);
	int len = (int)nbuckets(m), i, gap;

	fputc('\n', fp);

	if (m->value.is_signed) {
		len--;
		if (load_u64(b + 8 * len)) {
			fputs("\t         < 0", fp);
			hist_count(fp, load_u64(b + 8 * len), total);
			if (!load_u64(b))
				fputs("\t...\n", fp);
		}
	}

	for (i = 0, gap = 0; i < len; i++) {
		uint64_t c = load_u64(b + 8 * i);

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
	const char *b = v;
	uint64_t total = hist_total(m, v);
	uint32_t n = nbuckets(m), i;
	char lo[32], hi[32], label[80];
	int printed = 0, gap = 0;

	fputc('\n', fp);

	for (i = 0; i < n; i++) {
		uint64_t c = load_u64(b + 8 * i);
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

static void print_agg_value(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st;
	uint64_t x;

	switch (m->agg) {
	case PLYC_A_NONE:
		plyc_print_value(fp, &m->value, v);
		break;
	case PLYC_A_QUANTIZE:
		print_quantize(fp, m, v);
		break;
	case PLYC_A_LQUANTIZE:
		print_lquantize(fp, m, v);
		break;
	default:
		st = scalar_type(m);
		x = scalar_value(m, v);
		plyc_print_value(fp, &st, &x);
		break;
	}
}

static void print_text(FILE *fp, const struct plyc_map *m,
		       const struct plyc_entry *ents, size_t n)
{
	const char *key;
	size_t e;
	uint32_t i;

	fprintf(fp, "\n%s:", m->name);

	/* [ext] without keys the one value goes on the name's line; a
	 * histogram starts on a line of its own anyway. */
	if (!m->nkeys) {
		if (!is_hist(m))
			fputc(' ', fp);
		print_agg_value(fp, m, ents[0].value);
		fputc('\n', fp);
		return;
	}

	fputc('\n', fp);
	for (e = 0; e < n; e++) {
		key = ents[e].key;

		fputs("{ ", fp);
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputs(", ", fp);
			plyc_print_value(fp, &m->keys[i].type,
					 key + m->keys[i].offset);
		}
		fputs(" }: ", fp);

		print_agg_value(fp, m, ents[e].value);
		fputc('\n', fp);
	}
}

/* --- JSON ------------------------------------------------------------ */

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
static void json_hist(FILE *fp, const struct plyc_map *m, const void *v)
{
	const char *b = v;
	uint32_t n = nbuckets(m), i;
	int sgn = m->value.is_signed, first = 1;
	uint64_t c;

	fputs("{\"buckets\": [", fp);

	if (m->agg == PLYC_A_QUANTIZE) {
		if (sgn) {
			n--;
			c = load_u64(b + 8 * n);
			if (c)
				json_bucket(fp, &first, (uint64_t)INT64_MIN,
					    (uint64_t)-1, 1, c);
		}
		for (i = 0; i < n; i++) {
			c = load_u64(b + 8 * i);
			if (c)
				json_bucket(fp, &first, i ? 1ULL << i : 0,
					    i < 63 ? (1ULL << (i + 1)) - 1
						   : UINT64_MAX,
					    sgn, c);
		}
	} else {
		for (i = 0; i < n; i++) {
			int64_t lo = m->lq_min + ((int64_t)i - 1) * m->lq_step;

			c = load_u64(b + 8 * i);
			if (!c)
				continue;

			if (i == 0)
				json_bucket(fp, &first,
					    sgn ? (uint64_t)INT64_MIN : 0,
					    (uint64_t)(m->lq_min - 1), sgn, c);
			else if (i == n - 1)
				json_bucket(fp, &first, (uint64_t)m->lq_max,
					    sgn ? (uint64_t)INT64_MAX : UINT64_MAX,
					    sgn, c);
			else
				json_bucket(fp, &first, (uint64_t)lo,
					    (uint64_t)(lo + m->lq_step - 1), 1, c);
		}
	}

	fputs("]}", fp);
}

static void json_agg_value(FILE *fp, const struct plyc_map *m, const void *v)
{
	struct plyc_type st;
	uint64_t x;

	switch (m->agg) {
	case PLYC_A_NONE:
		plyc_json_value(fp, &m->value, v);
		break;
	case PLYC_A_QUANTIZE:
	case PLYC_A_LQUANTIZE:
		json_hist(fp, m, v);
		break;
	default:
		st = scalar_type(m);
		x = scalar_value(m, v);
		plyc_json_value(fp, &st, &x);
		break;
	}
}

static void print_json(FILE *fp, const struct plyc_map *m,
		       const struct plyc_entry *ents, size_t n)
{
	const char *key;
	size_t e;
	uint32_t i;

	fputs("{\"map\": ", fp);
	plyc_json_string(fp, m->name, strlen(m->name));
	fputs(", \"entries\": [", fp);

	for (e = 0; e < n; e++) {
		key = ents[e].key;

		fputs(e ? ", {\"key\": [" : "{\"key\": [", fp);
		for (i = 0; i < m->nkeys; i++) {
			if (i)
				fputs(", ", fp);
			plyc_json_value(fp, &m->keys[i].type,
					key + m->keys[i].offset);
		}
		fputs("], \"value\": ", fp);
		json_agg_value(fp, m, ents[e].value);
		fputc('}', fp);
	}

	fputs("]}\n", fp);
}

void plyc_map_print(FILE *fp, const struct plyc_map *m,
		    struct plyc_entry *ents, size_t n)
{
	if (!n)
		return;

	qsort_r(ents, n, sizeof(*ents), cmp_entry, (void *)m);

	if (plyc_rt.json)
		print_json(fp, m, ents, n);
	else
		print_text(fp, m, ents, n);
}

/* --- reading the map ------------------------------------------------- */

static size_t round_up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void merge_minmax(const struct plyc_map *m, struct plyc_minmax *acc,
			 const struct plyc_minmax *v)
{
	int less;

	if (!v->set)
		return;

	if (!acc->set) {
		*acc = *v;
		return;
	}

	less = m->value.is_signed ? v->value < acc->value
				  : (uint64_t)v->value < (uint64_t)acc->value;
	if (less == (m->agg == PLYC_A_MIN))
		acc->value = v->value;
}

void plyc_map_merge(const struct plyc_map *m, void *dst,
		    const void *percpu, int ncpus)
{
	size_t stride = round_up8(m->value_size);
	const char *cpu = percpu;
	struct plyc_minmax mm, accm = { 0, 0 };
	struct plyc_avg av, acca = { 0, 0 };
	uint64_t sum, x;
	uint32_t i;
	int c;

	switch (m->agg) {
	case PLYC_A_MIN:
	case PLYC_A_MAX:
		for (c = 0; c < ncpus; c++) {
			memcpy(&mm, cpu + c * stride, sizeof(mm));
			merge_minmax(m, &accm, &mm);
		}
		memcpy(dst, &accm, sizeof(accm));
		break;

	case PLYC_A_AVG:
		for (c = 0; c < ncpus; c++) {
			memcpy(&av, cpu + c * stride, sizeof(av));
			acca.sum += av.sum;
			acca.count += av.count;
		}
		memcpy(dst, &acca, sizeof(acca));
		break;

	case PLYC_A_NONE:
		/* a plain value has no merge: take the first CPU that has
		 * one (a plain per-CPU map is unusual) */
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
		break;

	default:
		/* count, sum and histogram buckets: word-wise sums (two's
		 * complement makes this right for signed sums too) */
		for (i = 0; i + 8 <= m->value_size; i += 8) {
			for (sum = 0, c = 0; c < ncpus; c++) {
				x = load_u64(cpu + c * stride + i);
				sum += x;
			}
			memcpy((char *)dst + i, &sum, 8);
		}
		break;
	}
}

/* The largest number of entries the map can hold, or 0 if unknown: a
 * bound in case concurrent deletes make the key walk start over. */
static size_t map_max_entries(int fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.max_entries;
}

int plyc_is_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

int plyc_map_collect(const struct plyc_map *m, char **keysp, char **valsp,
		   size_t *np)
{
	size_t ks = m->key_size, vs = m->value_size, cap = 0, n = 0, max;
	int ncpus = 1, err = 0;
	char *keys = NULL, *vals = NULL, *raw, *cur, *prev;
	void *tmp;

	if (m->percpu) {
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			return ncpus ? ncpus : -EINVAL;
	}

	max = map_max_entries(m->fd);
	raw = malloc(m->percpu ? ncpus * round_up8(vs) : vs);
	cur = calloc(2, ks ? ks : 1);
	if (!raw || !cur) {
		err = -ENOMEM;
		goto out;
	}

	/* walk with two key buffers: the last key read and the next one */
	prev = NULL;
	for (;;) {
		char *next = prev == cur ? cur + ks : cur;

		if (bpf_map_get_next_key(m->fd, prev, next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		prev = next;

		if (bpf_map_lookup_elem(m->fd, next, raw)) {
			if (errno == ENOENT)	/* deleted meanwhile */
				continue;
			err = -errno;
			break;
		}

		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(keys, cap * ks);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			keys = tmp;
			tmp = realloc(vals, cap * vs);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			vals = tmp;
		}

		memcpy(keys + n * ks, next, ks);
		if (m->percpu)
			plyc_map_merge(m, vals + n * vs, raw, ncpus);
		else
			memcpy(vals + n * vs, raw, vs);

		/* [ext] a key-less aggregation may live in an array map,
		 * whose one slot exists from the start: all zero means
		 * never updated. */
		if (!m->nkeys && plyc_is_zero(vals + n * vs, vs))
			continue;

		if (++n == max)
			break;
	}

out:
	free(raw);
	free(cur);
	if (err) {
		free(keys);
		free(vals);
		return err;
	}
	*keysp = keys;
	*valsp = vals;
	*np = n;
	return 0;
}

int plyc_map_dump(const struct plyc_map *m)
{
	struct plyc_entry *ents = NULL;
	char *keys = NULL, *vals = NULL;
	size_t n = 0, i;
	int err;

	if (m->fd < 0)
		return -EBADF;

	err = plyc_map_collect(m, &keys, &vals, &n);
	if (err)
		return err;

	if (n) {
		ents = calloc(n, sizeof(*ents));
		if (!ents) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++) {
			ents[i].key = keys + i * m->key_size;
			ents[i].value = vals + i * m->value_size;
		}
		plyc_map_print(plyc_rt.out ? plyc_rt.out : stdout, m, ents, n);
		fflush(plyc_rt.out ? plyc_rt.out : stdout);
	}
	err = (int)n;
out:
	free(ents);
	free(keys);
	free(vals);
	return err;
}

/* A zero value as bpf_map_update_elem takes it (every CPU's for a per-CPU
 * map), or NULL. */
static void *zero_value(const struct plyc_map *m)
{
	int ncpus = m->percpu ? libbpf_num_possible_cpus() : 1;

	if (ncpus <= 0)
		return NULL;
	return calloc(ncpus, m->percpu ? round_up8(m->value_size)
				       : m->value_size);
}

int plyc_map_clear(const struct plyc_map *m)
{
	size_t ks = m->key_size, cap = 0, n = 0, i;
	char *keys = NULL, *prev = NULL;
	void *zero = NULL;
	int err = 0;
	void *tmp;

	if (m->fd < 0)
		return -EBADF;

	/* Collect the keys first, then delete: deleting while walking
	 * would restart the walk of a hash map. */
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(keys, cap * (ks ? ks : 1));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			keys = tmp;
		}

		prev = n ? keys + (n - 1) * ks : NULL;
		if (bpf_map_get_next_key(m->fd, prev, keys + n * ks)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		n++;
	}

	for (i = 0; i < n && !err; i++) {
		if (!bpf_map_delete_elem(m->fd, keys + i * ks) || errno == ENOENT)
			continue;

		/* array maps can't delete: zero the slot instead */
		if (errno != EINVAL) {
			err = -errno;
			break;
		}
		if (!zero && !(zero = zero_value(m))) {
			err = -ENOMEM;
			break;
		}
		if (bpf_map_update_elem(m->fd, keys + i * ks, zero, BPF_ANY))
			err = -errno;
	}
out:
	free(zero);
	free(keys);
	return err;
}

uint64_t plyc_stat_sum(int fd, uint32_t index)
{
	int ncpus = libbpf_num_possible_cpus(), i;
	uint64_t *vals, sum = 0;

	if (fd < 0 || ncpus <= 0)
		return 0;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (vals && bpf_map_lookup_elem(fd, &index, vals) == 0)
		for (i = 0; i < ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static const char *plural(uint64_t n, const char *s)
{
	return n == 1 ? "" : s;
}

int plyc_report_refusals(const char *name, int stats_fd, const struct plyc_map *maps, int nmaps,
			 int keep_going)
{
	uint64_t n;
	int i, failed = 0;

	for (i = 0; i < nmaps; i++) {
		const char *map = maps[i].name;

		n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_FULL, 1 + i));
		if (n) {
			fprintf(stderr, "%s: warning: map %s was full: %" PRIu64 " update%s dropped "
				"(rebuild with a larger --map-entries)\n", name, map, n, plural(n, "s"));
			failed = 1;
		}
		n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_BUSY, 1 + i));
		if (n) {
			fprintf(stderr, "%s: warning: map %s was busy: %" PRIu64 " update%s refused by the "
				"kernel (a probe ran while another held the map on the same CPU)%s\n", name, map,
				n, plural(n, "s"), keep_going ? "" : "; the counts are short (-k ignores this)");
			failed |= !keep_going;
		}
		n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_OTHER, 1 + i));
		if (n) {
			fprintf(stderr, "%s: warning: map %s: %" PRIu64 " update%s refused by the kernel%s\n",
				name, map, n, plural(n, "s"),
				keep_going ? "" : "; the counts are short (-k ignores this)");
			failed |= !keep_going;
		}
	}
	n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_BUSY, 0));
	if (n)
		fprintf(stderr, "%s: warning: %" PRIu64 " stack%s not recorded: another stack had %s slot in "
			"the stack map (counted under an empty stack; a larger --stack-entries makes this "
			"rarer)\n", name, n, plural(n, "s"), n == 1 ? "its" : "their");
	n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_OTHER, 0));
	if (n)
		fprintf(stderr, "%s: warning: %" PRIu64 " stack%s not recorded: the stack map was full "
			"(counted under an empty stack; rebuild with a larger --stack-entries)\n", name, n,
			plural(n, "s"));
	return failed;
}
