/* User-space probe targets. */
#ifndef PLYC_UPROBES_H
#define PLYC_UPROBES_H

#include <stddef.h>
#include <stdint.h>

/* The file a uprobe's PATH means on this device: a path, a library short
 * name (c -> libc.so.6) or a program on $PATH. 0 or -errno. */
int plyc_resolve_binary(const char *name, char *out, size_t len);
/* The file offset of an executable virtual address, or -errno. */
long plyc_vaddr_to_offset(const char *path, uint64_t vaddr);

/* The file offset of function `sym` in path, and its size (0 where the
 * symbol table does not say): `name` means its default
 * version (name@@V, or the unversioned one), `name@V` or `name@@V` that
 * version. 0; -ENOENT (no such function); -ENOMSG (the function is there,
 * but not in that version, or only in old versions: msg lists them);
 * -EEXIST (several functions of that name at different addresses: msg
 * lists their versions); -EOPNOTSUPP (an IFUNC, whose address is its
 * resolver's: msg lists the implementations the symbol table names, if
 * any); -EILSEQ (Thumb code, which 32-bit ARM uprobes can't probe); or
 * another -errno. */
int plyc_uprobe_offset(const char *path, const char *sym, uint64_t *offset, uint64_t *size, char *msg,
		       size_t msglen);

/* The functions of path whose names match a glob, one per address. */
struct plyc_ufuncs {
	char **names;
	uint64_t *offsets;         /* in the file */
	size_t n;
};

/* Every function symbol (STT_FUNC, size > 0; from .symtab, else .dynsym)
 * whose name (without @VERSION) matches glob, into out sorted by name,
 * aliases at one address once: 0, -ENOENT (none) or another -errno. */
int plyc_uprobe_glob(const char *path, const char *glob, struct plyc_ufuncs *out);
void plyc_ufuncs_free(struct plyc_ufuncs *f);

/* The provider of USDT probe `name` in path (0, -ENOENT or -EEXIST). */
int plyc_usdt_provider(const char *path, const char *name, char *out, size_t len);
/* The file offsets of USDT probe provider:name's locations in path, up to
 * max: how many, or -ENOENT, -E2BIG (more than max) or another -errno. */
int plyc_usdt_locations(const char *path, const char *provider, const char *name, uint64_t *offsets,
			int max);

#endif
