/* Printing through the output style chosen at start-up (plyc_style.h):
 * the entry points the generated loader and the runtime call, and a map's
 * dump, read from the kernel (maps/mapread.c) and printed by the style. */
#include <errno.h>
#include <stdlib.h>

#include "plyc_style.h"

void plyc_print_value(FILE *fp, const struct plyc_type *t, const void *data)
{
	plyc_rt.output->value(fp, t, data);
}

void plyc_print_value_padded(FILE *fp, int left, int width, const struct plyc_type *t, const void *data)
{
	struct plyc_textbuf b;

	if (plyc_text_open(&b))
		plyc_print_value(b.fp, t, data);
	if (!plyc_text_close(&b))
		plyc_fprintf(fp, left ? "%-*s" : "%*s", width, b.s);
	free(b.s);
}

void plyc_print(FILE *fp, const struct plyc_type *const *types, const void *const *vals, int n)
{
	plyc_rt.output->print(fp, types, vals, n);
}

const char *plyc_ksym_text(uint64_t addr, char *buf, size_t len)
{
	return plyc_rt.output->ksym_text(addr, buf, len);
}

void plyc_map_print(FILE *fp, const struct plyc_map *m, struct plyc_entry *ents, size_t n)
{
	plyc_rt.output->map_print(fp, m, ents, n, 0, 1);
}

static int dump(const struct plyc_map *m, uint32_t top, uint32_t div)
{
	FILE *fp = plyc_rt.out ? plyc_rt.out : stdout;
	struct plyc_entry *ents = NULL;
	char *keys = NULL, *vals = NULL;
	size_t n = 0, i;
	int err;

	if (m->fd < 0)
		return -EBADF;

	err = plyc_map_collect(m, &keys, &vals, &n);
	if (err)
		return err;

	/* an empty map too: the style says what it shows (bpftrace: a blank line) */
	ents = calloc(n ? n : 1, sizeof(*ents));
	if (!ents) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		ents[i].key = keys + i * m->key_size;
		ents[i].value = vals + i * m->value_size;
	}
	plyc_rt.output->map_print(fp, m, ents, n, top, div);
	fflush(fp);
	err = (int)n;
out:
	free(ents);
	free(keys);
	free(vals);
	return err;
}

int plyc_map_dump(const struct plyc_map *m)
{
	return dump(m, 0, 1);
}

int plyc_map_dump_top(const struct plyc_map *m, uint32_t top, uint32_t div)
{
	return dump(m, top, div);
}
