/* A uprobe glob's functions on the device: the function symbols of a
 * binary or library whose names match, each address once. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plyc_rt.h"
#include "plyc_uprobes.h"

struct ufunc {
	char *name;
	uint64_t offset;
	int rank;            /* binding: 2 global, 1 weak, 0 local */
};

/* The file offset of an address in section shndx (a function's section
 * holds its code). -1 when it isn't there. */
static int64_t file_offset(Elf *elf, size_t shndx, uint64_t value)
{
	Elf_Scn *scn = shndx && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || value < sh.sh_addr ||
	    value >= sh.sh_addr + sh.sh_size)
		return -1;
	return (int64_t)(value - sh.sh_addr + sh.sh_offset);
}

/* The symbol table to read: .symtab, which names local functions too,
 * else .dynsym (a stripped file). */
static Elf_Scn *symbol_table(Elf *elf, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dsh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			*out = sh;
			return scn;
		}
		if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dsh = sh;
		}
	}
	if (dyn)
		*out = dsh;
	return dyn;
}

/* Aliases next to each other, the name kept first: a public one (no
 * leading '_': glibc's nanosleep, not __nanosleep), then the strongest
 * binding, then by name. */
static int by_offset(const void *a, const void *b)
{
	const struct ufunc *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if ((x->name[0] == '_') != (y->name[0] == '_'))
		return x->name[0] == '_' ? 1 : -1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ufunc *)a)->name, ((const struct ufunc *)b)->name);
}

/* The matching functions of symbol table scn, into v (n of them). IFUNC
 * symbols are left out: their address is the resolver's, which runs once,
 * in the dynamic loader; so is 32-bit ARM's Thumb code, where the kernel
 * puts no uprobe. */
static int matches(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *glob, struct ufunc **v, size_t *n)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, cap = 0, count = sh->sh_size / sh->sh_entsize;
	GElf_Ehdr eh;
	int arm = gelf_getehdr(elf, &eh) && eh.e_machine == EM_ARM;

	for (i = 0; data && i < count; i++) {
		const char *sname;
		char *name;
		GElf_Sym sym;
		int64_t off;
		int bind;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value || !sym.st_size || (arm && (sym.st_value & 1)))
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		/* .symtab spells a version into the name (name@V, name@@V) */
		if (!sname || !(name = strndup(sname, strcspn(sname, "@"))))
			continue;
		off = file_offset(elf, sym.st_shndx, sym.st_value);
		if (off < 0 || !plyc_glob_match(glob, name)) {
			free(name);
			continue;
		}
		if (*n == cap) {
			struct ufunc *nv = realloc(*v, (cap = cap ? cap * 2 : 16) * sizeof(**v));

			if (!nv) {
				free(name);
				return -ENOMEM;
			}
			*v = nv;
		}
		bind = GELF_ST_BIND(sym.st_info);
		(*v)[(*n)++] = (struct ufunc){ name, (uint64_t)off, bind == STB_GLOBAL ? 2 : bind == STB_WEAK };
	}
	return 0;
}

int plyc_uprobe_glob(const char *path, const char *glob, struct plyc_ufuncs *out)
{
	struct ufunc *v = NULL;
	size_t i, n = 0, kept = 0;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf *elf;
	int err = 0, fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		err = -ENOEXEC;
	else if ((scn = symbol_table(elf, &sh)) && (err = matches(elf, scn, &sh, glob, &v, &n)))
		for (; n; n--)
			free(v[n - 1].name);
	if (elf)
		elf_end(elf);
	close(fd);
	/* One name per address: a probe on each alias would fire as often. */
	if (!err && n) {
		qsort(v, n, sizeof(*v), by_offset);
		for (i = 0; i < n; i++) {
			if (kept && v[kept - 1].offset == v[i].offset) {
				free(v[i].name);
				continue;
			}
			v[kept++] = v[i];
		}
		qsort(v, kept, sizeof(*v), by_name);
		out->names = calloc(kept, sizeof(*out->names));
		out->offsets = calloc(kept, sizeof(*out->offsets));
		if (!out->names || !out->offsets)
			err = -ENOMEM;
		for (i = 0; i < kept; i++) {
			if (err) {
				free(v[i].name);
				continue;
			}
			out->names[i] = v[i].name;
			out->offsets[i] = v[i].offset;
		}
		out->n = err ? 0 : kept;
	}
	free(v);
	if (err) {
		plyc_ufuncs_free(out);
		return err;
	}
	return out->n ? 0 : -ENOENT;
}

void plyc_ufuncs_free(struct plyc_ufuncs *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->offsets);
	memset(f, 0, sizeof(*f));
}
