/* Map dumps: what the tracer prints for every map on exit and for
 * print(@map).
 *
 * plyc_map_dump() reads every entry from the kernel (merging per-CPU
 * values), then plyc_map_print() sorts and prints them; the second half
 * needs no BPF, so it is what the unit tests call.
 *
 * The layout is ply's (src/libply/libply.c, type.c, built-in/aggregation.c);
 * how each aggregation's value merges, sorts and prints is in
 * aggregations.c:
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

#include "plyc_agg.h"

static int cmp_key(const struct plyc_map *m, const void *a, const void *b)
{
	const char *ka = a, *kb = b;
	uint32_t i;
	int c;

	for (i = 0; i < m->nkeys; i++) {
		c = plyc_cmp_typed(&m->keys[i].type, ka + m->keys[i].offset,
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

	c = plyc_agg_ops(m)->cmp(m, x->value, y->value);
	return c ? c : cmp_key(m, x->key, y->key);
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
		if (!plyc_agg_ops(m)->hist)
			fputc(' ', fp);
		plyc_agg_ops(m)->print(fp, m, ents[0].value);
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

		plyc_agg_ops(m)->print(fp, m, ents[e].value);
		fputc('\n', fp);
	}
}

/* --- JSON ------------------------------------------------------------ */

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
		plyc_agg_ops(m)->json(fp, m, ents[e].value);
		fputc('}', fp);
	}

	fputs("]}\n", fp);
}

void plyc_map_print(FILE *fp, const struct plyc_map *m,
		    struct plyc_entry *ents, size_t n)
{
	if (plyc_rt.style == PLYC_STYLE_BPFTRACE) {
		plyc_bt_map_print(fp, m, ents, n);
		return;
	}
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

void plyc_map_merge(const struct plyc_map *m, void *dst,
		    const void *percpu, int ncpus)
{
	plyc_agg_ops(m)->merge(m, dst, percpu, round_up8(m->value_size), ncpus);
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
		 * never updated. A plain map's entry (a hash's) is there
		 * only once written, 0 or not. */
		if (!m->nkeys && m->agg != PLYC_A_NONE && plyc_is_zero(vals + n * vs, vs))
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

static int dump(const struct plyc_map *m, uint32_t top, uint32_t div);

int plyc_map_dump(const struct plyc_map *m)
{
	return dump(m, 0, 1);
}

int plyc_map_dump_top(const struct plyc_map *m, uint32_t top, uint32_t div)
{
	return dump(m, top, div);
}

static int dump(const struct plyc_map *m, uint32_t top, uint32_t div)
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

	/* bpftrace prints empty maps too (a blank line) */
	if (n || plyc_rt.style == PLYC_STYLE_BPFTRACE) {
		ents = calloc(n ? n : 1, sizeof(*ents));
		if (!ents) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++) {
			ents[i].key = keys + i * m->key_size;
			ents[i].value = vals + i * m->value_size;
		}
		if (plyc_rt.style == PLYC_STYLE_BPFTRACE)
			plyc_bt_map_print_top(plyc_rt.out ? plyc_rt.out : stdout, m, ents, n, top, div);
		else
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

/* Every key of the map, collected first: deleting or updating while
 * walking would restart the walk of a hash map. 0 or a negative errno. */
static int collect_keys(const struct plyc_map *m, char **keysp, size_t *np)
{
	size_t ks = m->key_size ? m->key_size : 1, cap = 0, n = 0;
	char *keys = NULL, *prev;
	void *tmp;

	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(keys, cap * ks);
			if (!tmp) {
				free(keys);
				return -ENOMEM;
			}
			keys = tmp;
		}

		prev = n ? keys + (n - 1) * ks : NULL;
		if (bpf_map_get_next_key(m->fd, prev, keys + n * ks)) {
			if (errno != ENOENT) {
				free(keys);
				return -errno;
			}
			break;
		}
		n++;
	}
	*keysp = keys;
	*np = n;
	return 0;
}

int plyc_map_clear(const struct plyc_map *m)
{
	size_t ks = m->key_size ? m->key_size : 1, n = 0, i;
	char *keys = NULL;
	void *zero = NULL;
	int err;

	if (m->fd < 0)
		return -EBADF;
	err = collect_keys(m, &keys, &n);

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
	free(zero);
	free(keys);
	return err;
}

int plyc_map_zero(const struct plyc_map *m)
{
	size_t ks = m->key_size ? m->key_size : 1, n = 0, i;
	char *keys = NULL;
	void *zero;
	int err;

	if (m->fd < 0)
		return -EBADF;
	if (!(zero = zero_value(m)))
		return -ENOMEM;
	err = collect_keys(m, &keys, &n);
	for (i = 0; i < n && !err; i++)
		if (bpf_map_update_elem(m->fd, keys + i * ks, zero, BPF_EXIST) && errno != ENOENT)
			err = -errno;
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
