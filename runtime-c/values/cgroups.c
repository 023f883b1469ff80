/*
 * cgroup_path(): a cgroup id as the paths bpftrace 0.27 prints for it,
 * found when the value is printed, on the device. The id is the cgroup
 * directory's inode number: every mounted cgroup hierarchy (/proc/mounts)
 * is searched for an entry with that inode, the v2 ("unified") ones first,
 * then the v1 ones, named by their mount point's last component, sorted.
 * Each found is "name:/path"; they are joined with ','; a filter (a glob
 * with '*') picks the hierarchies by name. As 0.27, the search stats every
 * entry, files too, and gives up on a hierarchy where a stat fails.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plyc_rt.h"

#define MAX_ROOTS 64

struct root {
	char name[NAME_MAX + 1];
	char path[PATH_MAX];
	char found[PATH_MAX];   /* the id's path under it, "" for none */
};

/* `pat` (its '*' any run of characters) matches all of `s`. */
static int glob_match(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = ++pat;
			resume = s;
		} else if (*pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

/* Depth first, each entry before its contents (0.27's order): 1 when found
 * (its path in `path`), 0 when not, -1 when a stat failed. */
static int find_inode(char *path, size_t len, size_t at, uint64_t id)
{
	DIR *d = opendir(path);
	struct dirent *e;
	struct stat st;
	int ret = 0;

	if (!d)
		return 0;
	while (ret == 0 && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (at + 1 + n + 1 > len)
			continue;
		path[at] = '/';
		memcpy(path + at + 1, e->d_name, n + 1);
		if (stat(path, &st) < 0)
			ret = -1;
		else if ((uint64_t)st.st_ino == id)
			ret = 1;
		else if (S_ISDIR(st.st_mode))
			ret = find_inode(path, len, at + 1 + n, id);
		if (ret == 0)
			path[at] = 0;
	}
	closedir(d);
	return ret;
}

/* The paths found lately (0.27 keeps them too): one is taken again while
 * it still has the id's inode, so a cgroup printed often is walked to once. */
#define NCACHED 16
static struct {
	uint64_t id;
	char root[PATH_MAX];
	char found[PATH_MAX];
} cached[NCACHED];
static unsigned next_cached;

static int from_cache(struct root *r, uint64_t id)
{
	char path[PATH_MAX * 2];
	struct stat st;
	unsigned i;

	for (i = 0; i < NCACHED; i++) {
		if (!cached[i].found[0] || cached[i].id != id || strcmp(cached[i].root, r->path))
			continue;
		snprintf(path, sizeof(path), "%s%s", r->path, cached[i].found);
		if (stat(path, &st) == 0 && (uint64_t)st.st_ino == id) {
			memcpy(r->found, cached[i].found, sizeof(r->found));
			return 1;
		}
	}
	return 0;
}

static void find_in(struct root *r, uint64_t id)
{
	char path[PATH_MAX];
	size_t at = strlen(r->path);
	struct stat st;

	r->found[0] = 0;
	if (stat(r->path, &st) == 0 && (uint64_t)st.st_ino == id) {
		strcpy(r->found, "/");
		return;
	}
	if (from_cache(r, id))
		return;
	memcpy(path, r->path, at + 1);
	if (find_inode(path, sizeof(path), at, id) != 1)
		return;
	snprintf(r->found, sizeof(r->found), "%s", path + at);
	cached[next_cached].id = id;
	memcpy(cached[next_cached].root, r->path, sizeof(r->path));
	memcpy(cached[next_cached].found, r->found, sizeof(r->found));
	next_cached = (next_cached + 1) % NCACHED;
}

static int by_name(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->found, y->found);
}

/* /proc/mounts' cgroup2 (v2 < 0) or cgroup (v2 == 0) mounts that are
 * directories, filtered by name, into roots[n...]; the new count. */
static size_t read_roots(struct root *roots, size_t n, int v2, const char *filter)
{
	FILE *fp = fopen("/proc/mounts", "re");
	char line[4096], dir[PATH_MAX], type[64];
	struct stat st;

	if (!fp)
		return n;
	while (n < MAX_ROOTS && fgets(line, sizeof(line), fp)) {
		const char *base;

		if (sscanf(line, "%*s %4095s %63s", dir, type) != 2 || strcmp(type, v2 ? "cgroup2" : "cgroup"))
			continue;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		base = strrchr(dir, '/');
		base = base && base[1] ? base + 1 : dir;
		snprintf(roots[n].name, sizeof(roots[n].name), "%.*s", NAME_MAX, v2 ? "unified" : base);
		if (!glob_match(filter, roots[n].name))
			continue;
		snprintf(roots[n].path, sizeof(roots[n].path), "%s", dir);
		n++;
	}
	fclose(fp);
	return n;
}

const char *plyc_cgroup_path(uint64_t id, const char *filter, char *buf, size_t len)
{
	static struct root roots[MAX_ROOTS];
	size_t n, nv2, i, at = 0;

	buf[0] = 0;
	nv2 = read_roots(roots, 0, 1, filter);
	n = read_roots(roots, nv2, 0, filter);
	for (i = 0; i < n; i++)
		find_in(&roots[i], id);
	qsort(roots + nv2, n - nv2, sizeof(roots[0]), by_name);
	for (i = 0; i < n && at < len; i++) {
		if (!roots[i].found[0])
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s:%s", at ? "," : "", roots[i].name, roots[i].found);
	}
	return buf;
}
