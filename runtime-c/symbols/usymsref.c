/* Where the printers find user symbols (plyc_rt.h, struct plyc_usyms):
 * apart from usyms.c so that a tracer whose program has no ustack or usym
 * value links neither usyms.c nor the C++ demangler. */
#include <stdio.h>
#include <stdlib.h>

#include "plyc_rt.h"

int plyc_cpp_demangle = 1;

/* A value the generated loader did not say it prints: plyc's bug, told,
 * never a value printed wrong. */
static void unlinked(void)
{
	fputs("plyc: internal error, please report: a user symbol to print, but the tracer was built "
	      "without user symbols\n", stderr);
	abort();
}

static const char *no_bt(uint32_t pid, uint64_t addr, int offset, int module, char *buf, size_t len)
{
	(void)pid, (void)addr, (void)offset, (void)module, (void)buf, (void)len;
	unlinked();
	return NULL;
}

static const char *no_text(const void *data, char *buf, size_t len)
{
	(void)data, (void)buf, (void)len;
	unlinked();
	return NULL;
}

static void no_stack(FILE *fp, uint32_t pid, const uint64_t *ips, size_t n, int mode, int indent)
{
	(void)fp, (void)pid, (void)ips, (void)n, (void)mode, (void)indent;
	unlinked();
}

static const struct plyc_usyms none = { .bt = no_bt, .text = no_text, .print_stack = no_stack };

const struct plyc_usyms *plyc_usyms = &none;
