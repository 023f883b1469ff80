/* USDT probes of a binary, from its .note.stapsdt notes: the provider of a
 * probe named without one, and the file offsets of a probe's locations
 * (where a kernel without BPF cookies needs a second program attached as a
 * plain uprobe, providers/usdt.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plyc_uprobes.h"

#define NT_STAPSDT 3

struct usdt_note {
	uint64_t loc;           /* the probe's virtual address, prelink-adjusted */
	const char *provider, *name;
};

/* Calls fn for each USDT note of path until it returns non-zero, and
 * returns that (0 when it never did), or -errno. */
static int usdt_notes(const char *path, int (*fn)(const struct usdt_note *, void *), void *ctx)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t base_now = 0;
	int ret = 0, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		ret = -ENOEXEC;
		goto out;
	}
	/* Each note records where .stapsdt.base was when it was written: a
	 * prelinked binary has moved it, and its probes by as much. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, ".stapsdt.base"))
			base_now = sh.sh_addr;
	}
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8, off = 0, next, name_off, desc_off;
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") || !(data = elf_getdata(scn, NULL)))
			continue;
		while (!ret && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			uint64_t a[2] = { 0, 0 };
			struct usdt_note n;
			int i;

			off = next;
			/* loc, base and semaphore addresses, then "provider\0name\0args\0" */
			if (nh.n_type != NT_STAPSDT || nh.n_descsz < 3 * addr_size + 2 ||
			    desc[nh.n_descsz - 1] != 0)
				continue;
			for (i = 0; i < 2; i++) {
				if (addr_size == 4) {
					uint32_t v;

					memcpy(&v, desc + i * 4, 4);
					a[i] = v;
				} else {
					memcpy(&a[i], desc + i * 8, 8);
				}
			}
			n.loc = a[0] + (base_now && a[1] ? base_now - a[1] : 0);
			n.provider = desc + 3 * addr_size;
			n.name = n.provider + strlen(n.provider) + 1;
			if ((size_t)(n.name - desc) < nh.n_descsz)
				ret = fn(&n, ctx);
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

struct provider_ctx {
	const char *name;
	char *out;
	size_t len;
	int found;
};

static int provider_of(const struct usdt_note *n, void *arg)
{
	struct provider_ctx *c = arg;

	if (strcmp(n->name, c->name))
		return 0;
	if (c->found && strcmp(c->out, n->provider))
		return -EEXIST;
	snprintf(c->out, c->len, "%s", n->provider);
	c->found = 1;
	return 0;
}

int plyc_usdt_provider(const char *path, const char *name, char *out, size_t len)
{
	struct provider_ctx c = { name, out, len, 0 };
	int err = usdt_notes(path, provider_of, &c);

	return err ? err : c.found ? 0 : -ENOENT;
}

struct locations_ctx {
	const char *path, *provider, *name;
	uint64_t *offsets;
	int max, n;
};

static int location_of(const struct usdt_note *n, void *arg)
{
	struct locations_ctx *c = arg;
	long off;

	if (strcmp(n->provider, c->provider) || strcmp(n->name, c->name))
		return 0;
	if (c->n == c->max)
		return -E2BIG;
	off = plyc_vaddr_to_offset(c->path, n->loc);
	if (off < 0)
		return (int)off;
	c->offsets[c->n++] = (uint64_t)off;
	return 0;
}

int plyc_usdt_locations(const char *path, const char *provider, const char *name, uint64_t *offsets,
			int max)
{
	struct locations_ctx c = { path, provider, name, offsets, max, 0 };
	int err = usdt_notes(path, location_of, &c);

	return err ? err : c.n ? c.n : -ENOENT;
}
