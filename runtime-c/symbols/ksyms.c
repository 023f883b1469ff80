/* Kernel symbols and stacks.
 *
 * /proc/kallsyms is read once, the first time an address needs a name,
 * into an array sorted by address; a lookup is a binary search for the
 * last symbol at or below the address. Stacks are read from the BPF stack
 * map and printed one frame a line, as ply does (built-in/proc.c).
 */
#define _GNU_SOURCE		/* getline */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_rt.h"

struct ksym {
	uint64_t addr;
	size_t name;		/* offset in ksyms.names */
};

/* The kallsyms cache: the only global state here besides plyc_rt. */
static struct {
	int loaded;		/* a load was tried (it may have failed) */
	struct ksym *syms;
	size_t n;
	char *names;		/* NUL-separated names */
	size_t names_len;
} ksyms;

/* By address; equal addresses keep the file's order (names were appended
 * in that order), so the first name listed for an address is used. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

static void ksyms_free(void)
{
	free(ksyms.syms);
	free(ksyms.names);
	ksyms.syms = NULL;
	ksyms.names = NULL;
	ksyms.n = ksyms.names_len = 0;
}

/* Parse "ffffffff81000000 T name\t[module]" into addr, type and name. */
static int parse_line(char *line, uint64_t *addr, char **name)
{
	char *p, *end;

	*addr = strtoull(line, &p, 16);
	if (p == line || *p != ' ')
		return -1;
	p++;

	/* text symbols only: stack frames and callers are code addresses */
	if (*p != 't' && *p != 'T')
		return -1;
	p++;

	p += strspn(p, " \t");
	end = p + strcspn(p, " \t\n");
	if (end == p)
		return -1;

	*end = '\0';
	*name = p;
	return 0;
}

static int ksym_add(uint64_t addr, const char *name, size_t *cap,
		    size_t *names_cap)
{
	size_t len = strlen(name) + 1;

	if (ksyms.n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		struct ksym *s = realloc(ksyms.syms, ncap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		ksyms.syms = s;
		*cap = ncap;
	}

	if (ksyms.names_len + len > *names_cap) {
		size_t ncap = *names_cap ? *names_cap * 2 : 65536;
		char *s;

		while (ncap < ksyms.names_len + len)
			ncap *= 2;
		s = realloc(ksyms.names, ncap);
		if (!s)
			return -ENOMEM;
		ksyms.names = s;
		*names_cap = ncap;
	}

	memcpy(ksyms.names + ksyms.names_len, name, len);
	ksyms.syms[ksyms.n].addr = addr;
	ksyms.syms[ksyms.n].name = ksyms.names_len;
	ksyms.names_len += len;
	ksyms.n++;
	return 0;
}

int plyc_ksyms_load(const char *path)
{
	size_t cap = 0, names_cap = 0, linecap = 0;
	char *line = NULL, *name;
	uint64_t addr, nonzero = 0;
	int err = 0;
	FILE *fp;

	ksyms_free();
	ksyms.loaded = 1;

	fp = fopen(path, "r");
	if (!fp)
		return -errno;

	while (getline(&line, &linecap, fp) > 0) {
		if (parse_line(line, &addr, &name))
			continue;

		err = ksym_add(addr, name, &cap, &names_cap);
		if (err)
			break;
		nonzero |= addr;
	}

	free(line);
	fclose(fp);

	/* Without CAP_SYSLOG the kernel shows every address as 0. */
	if (!err && ksyms.n && !nonzero)
		err = -EPERM;

	if (err) {
		ksyms_free();
		return err;
	}

	qsort(ksyms.syms, ksyms.n, sizeof(*ksyms.syms), ksym_cmp);
	return (int)ksyms.n;
}

/* The last symbol at or below addr, or NULL. */
static const struct ksym *ksym_find(uint64_t addr)
{
	size_t lo = 0, hi = ksyms.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ksyms.syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}

	if (!lo)
		return NULL;

	/* the first of several names at the same address */
	while (lo > 1 && ksyms.syms[lo - 2].addr == ksyms.syms[lo - 1].addr)
		lo--;
	return &ksyms.syms[lo - 1];
}

const char *plyc_ksym(uint64_t addr, char *buf, size_t len)
{
	const struct ksym *sym;

	if (!ksyms.loaded)
		plyc_ksyms_load("/proc/kallsyms");

	sym = ksym_find(addr);
	if (!sym) {
		/* ply: all hex digits of a native pointer, in angle brackets */
		int w = (sizeof(uintptr_t) == 4 && addr <= UINT32_MAX) ? 8 : 16;

		snprintf(buf, len, "<%0*" PRIx64 ">", w, addr);
	} else if (sym->addr == addr) {
		snprintf(buf, len, "%s", ksyms.names + sym->name);
	} else {
		/* ply 2.x prints the offset in decimal */
		snprintf(buf, len, "%s+%" PRIu64, ksyms.names + sym->name,
			 addr - sym->addr);
	}
	return buf;
}

const char *plyc_ksym_bt(uint64_t addr, int offset, char *buf, size_t len)
{
	const struct ksym *sym;

	if (!ksyms.loaded)
		plyc_ksyms_load("/proc/kallsyms");

	sym = ksym_find(addr);
	if (!sym)	/* bpftrace's %#x: 0 is "0" (0.17 and 0.27) */
		snprintf(buf, len, "%#" PRIx64, addr);
	else if (offset)
		snprintf(buf, len, "%s+%" PRIu64, ksyms.names + sym->name, addr - sym->addr);
	else
		snprintf(buf, len, "%s", ksyms.names + sym->name);
	return buf;
}

/* The maps of stacks of at most N frames, by N: their fd + 1, 0 for none. */
static int limited_fd[PLYC_STACK_DEPTH];

void plyc_stacks_find(struct bpf_object *obj)
{
	struct bpf_map *m;
	unsigned int n;
	int end;

	m = bpf_object__find_map_by_name(obj, "plyc_stacks");
	plyc_rt.stack_fd = m ? bpf_map__fd(m) : -1;
	bpf_object__for_each_map(m, obj) {
		end = 0;
		if (sscanf(bpf_map__name(m), "plyc_stacks_%u%n", &n, &end) == 1 && end &&
		    !bpf_map__name(m)[end] && n && n < PLYC_STACK_DEPTH)
			limited_fd[n] = bpf_map__fd(m) + 1;
	}
}

static int stack_lookup(int fd, int64_t id, uint64_t *ips)
{
	uint32_t key;

	if (fd < 0)
		return -EBADF;
	/* bpf_get_stackid() returns a negative errno on failure */
	if (id < 0 || id > UINT32_MAX)
		return -ENOENT;
	key = (uint32_t)id;
	if (bpf_map_lookup_elem(fd, &key, ips))
		return -errno;
	return 0;
}

int plyc_stack_read_limit(int64_t id, unsigned int limit, uint64_t ips[PLYC_STACK_DEPTH])
{
	memset(ips, 0, PLYC_STACK_DEPTH * sizeof(ips[0]));
	if (!limit || limit >= PLYC_STACK_DEPTH)
		return stack_lookup(plyc_rt.stack_fd, id, ips);
	return stack_lookup(limited_fd[limit] - 1, id, ips);
}

int plyc_stack_read(int64_t id, uint64_t ips[PLYC_STACK_DEPTH])
{
	uint32_t key;

	memset(ips, 0, PLYC_STACK_DEPTH * sizeof(ips[0]));

	if (plyc_rt.stack_fd < 0)
		return -EBADF;

	/* bpf_get_stackid() returns a negative errno on failure */
	if (id < 0 || id > UINT32_MAX)
		return -ENOENT;

	key = (uint32_t)id;
	if (bpf_map_lookup_elem(plyc_rt.stack_fd, &key, ips))
		return -errno;
	return 0;
}

void plyc_print_frames(FILE *fp, const uint64_t *ips, size_t n)
{
	char sym[PLYC_KSYM_LEN];
	size_t i;

	fputc('\n', fp);
	for (i = 0; i < n && ips[i]; i++)
		fprintf(fp, "\t%s\n", plyc_ksym(ips[i], sym, sizeof(sym)));
}

void plyc_print_stack(FILE *fp, int64_t stack_id)
{
	uint64_t ips[PLYC_STACK_DEPTH] = { 0 };

	/* A negative id is bpf_get_stackid()'s error: no kernel stack there
	 * (a sample taken in user mode). It prints as an empty stack. */
	if (stack_id < 0) {
		plyc_print_frames(fp, ips, PLYC_STACK_DEPTH);
		return;
	}
	if (plyc_stack_read(stack_id, ips)) {
		fprintf(fp, "<STACKID%" PRId64 ">", stack_id);
		return;
	}

	plyc_print_frames(fp, ips, PLYC_STACK_DEPTH);
}
