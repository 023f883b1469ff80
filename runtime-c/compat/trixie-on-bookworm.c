/* Linked into riscv64 tracers built with plyc's Debian sysroot: trixie's
 * static libbpf, libelf and zlib against bookworm's riscv64 C library
 * (docs/design.md says why: trixie's own libc.a crashes bookworm's linker).
 *
 * glibc 2.38 made scanf and strtol in C2x mode call __isoc23_* (which
 * also accept 0b binary numbers); trixie's libraries were built so, 2.36
 * has no such symbols. Nothing those libraries parse is binary: the C99
 * functions do. And Debian's libelf.a (elfutils 0.192) lacks its own
 * lib/eu-search.o: the tree helpers here do its work without the lock
 * (the tracer uses libelf from one thread). */
#define _GNU_SOURCE
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

long __isoc23_strtol(const char *s, char **end, int base);
unsigned long long __isoc23_strtoull(const char *s, char **end, int base);
int __isoc23_sscanf(const char *s, const char *fmt, ...);
int __isoc23_fscanf(FILE *f, const char *fmt, ...);

long __isoc23_strtol(const char *s, char **end, int base)
{
	return strtol(s, end, base);
}

unsigned long long __isoc23_strtoull(const char *s, char **end, int base)
{
	return strtoull(s, end, base);
}

int __isoc23_sscanf(const char *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsscanf(s, fmt, ap);
	va_end(ap);
	return n;
}

int __isoc23_fscanf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfscanf(f, fmt, ap);
	va_end(ap);
	return n;
}

/* elfutils' search_tree starts with the tsearch root (then its lock). */
struct plyc_eu_tree {
	void *root;
};

typedef int (*plyc_eu_cmp)(const void *, const void *);

void eu_search_tree_init(struct plyc_eu_tree *tree);
void eu_search_tree_fini(struct plyc_eu_tree *tree, void (*free_node)(void *));
void *eu_tsearch(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp);
void *eu_tfind(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp);
void *eu_tdelete(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp);

void eu_search_tree_init(struct plyc_eu_tree *tree)
{
	tree->root = NULL;
}

static void plyc_eu_keep(void *node)
{
	(void)node;
}

void eu_search_tree_fini(struct plyc_eu_tree *tree, void (*free_node)(void *))
{
	tdestroy(tree->root, free_node ? free_node : plyc_eu_keep);
	tree->root = NULL;
}

void *eu_tsearch(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp)
{
	return tsearch(key, &tree->root, cmp);
}

void *eu_tfind(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp)
{
	return tfind(key, &tree->root, cmp);
}

void *eu_tdelete(const void *key, struct plyc_eu_tree *tree, plyc_eu_cmp cmp)
{
	return tdelete(key, &tree->root, cmp);
}
