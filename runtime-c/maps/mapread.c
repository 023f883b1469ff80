/* Reading a map from the kernel: every entry with its per-CPU values
 * merged (plyc_map_collect), clearing and zeroing it, and the per-CPU
 * stats map's counters of what the probes could not store. What a style
 * prints of a map is in output/ (output/dump.c reads it with these). */
#define _GNU_SOURCE		/* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_agg.h"

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

/* The key-less aggregations zero() emptied after a write, by fd: their
 * all-zero slot is a value again (bpftrace's zero() keeps the entry, where
 * clear() deletes it), until the next clear(). */
static int *zeroed_fds;
static size_t nzeroed;

static int was_zeroed(const struct plyc_map *m)
{
	size_t i;

	for (i = 0; i < nzeroed; i++)
		if (zeroed_fds[i] == m->fd)
			return 1;
	return 0;
}

static void set_zeroed(const struct plyc_map *m, int on)
{
	size_t i;
	int *tmp;

	for (i = 0; i < nzeroed; i++)
		if (zeroed_fds[i] == m->fd)
			break;
	if (!on) {
		if (i < nzeroed)
			zeroed_fds[i] = zeroed_fds[--nzeroed];
		return;
	}
	if (i < nzeroed)
		return;
	/* out of memory: the map stays "never written", as before */
	tmp = realloc(zeroed_fds, (nzeroed + 1) * sizeof(*zeroed_fds));
	if (!tmp)
		return;
	zeroed_fds = tmp;
	zeroed_fds[nzeroed++] = m->fd;
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
		if (!m->nkeys && m->agg != PLYC_A_NONE && plyc_is_zero(vals + n * vs, vs) &&
		    !was_zeroed(m))
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
	set_zeroed(m, 0);
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
	/* a key-less aggregation written before stays a value (above) */
	if (!m->nkeys && m->agg != PLYC_A_NONE && !was_zeroed(m)) {
		char *k = NULL, *v = NULL;

		if (!plyc_map_collect(m, &k, &v, &n) && n)
			set_zeroed(m, 1);
		free(k);
		free(v);
	}
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
		n = plyc_stat_sum(stats_fd, plyc_stat_index(nmaps, PLYC_STAT_ROW_NOMEM, 1 + i));
		if (n) {
			fprintf(stderr, "%s: warning: map %s: %" PRIu64 " update%s dropped: the kernel could "
				"not allocate memory for a new key%s\n", name, map, n, plural(n, "s"),
				keep_going ? "" : "; the counts are short (-k ignores this)");
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
