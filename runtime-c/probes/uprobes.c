/* User-space probe targets on the device: a binary or library given by
 * path, by library short name (`c` is libc, as in argdist) or by program
 * name on $PATH; and virtual addresses turned into the file offsets that
 * uprobes take. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plyc_arch.h"
#include "plyc_uprobes.h"

static const char *const lib_dirs[] = {
	"/lib/" PLYC_TRIPLET, "/usr/lib/" PLYC_TRIPLET, "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

/* A readable regular file: a FIFO's open() would wait for a writer, a
 * directory or a device is no binary (errno: EISDIR, ENOEXEC). */
static int regular(const char *path)
{
	struct stat st;

	if (access(path, R_OK) || stat(path, &st))
		return 0;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : ENOEXEC;
		return 0;
	}
	return 1;
}

/* libc.so is often a linker script: only ELF files can be probed. */
static int is_elf(const char *path)
{
	char magic[4] = "";
	FILE *fp = fopen(path, "re");

	if (!fp)
		return 0;
	if (fread(magic, 1, 4, fp) != 4)
		magic[0] = 0;
	fclose(fp);
	return !memcmp(magic, "\177ELF", 4);
}

/* lib<name>.so or lib<name>.so.N... in dir, an ELF file; the shortest
 * such name wins. */
static int find_in_dir(const char *dir, const char *name, char *out, size_t len)
{
	char prefix[256], best[256] = "", path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "lib%s.so", name);
	while ((de = readdir(d))) {
		const char *n = de->d_name;

		if (!strcmp(n, name) || (!strncmp(n, prefix, strlen(prefix)) &&
					 (n[strlen(prefix)] == 0 || n[strlen(prefix)] == '.'))) {
			snprintf(path, sizeof(path), "%s/%s", dir, n);
			if (regular(path) && is_elf(path) && (!best[0] || strlen(n) < strlen(best)))
				snprintf(best, sizeof(best), "%s", n);
		}
	}
	closedir(d);
	if (!best[0])
		return 0;
	snprintf(out, len, "%s/%s", dir, best);
	return regular(out);
}

int plyc_resolve_binary(const char *name, char *out, size_t len)
{
	char *env, *dup, *save = NULL, *dir;
	size_t i;

	if (strchr(name, '/')) {
		if (!regular(name))
			return -errno;
		if (!realpath(name, out))
			snprintf(out, len, "%s", name);
		return 0;
	}
	env = getenv("LD_LIBRARY_PATH");
	if (env && (dup = strdup(env))) {
		for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
			if (find_in_dir(dir, name, out, len)) {
				free(dup);
				return 0;
			}
		free(dup);
	}
	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++)
		if (find_in_dir(lib_dirs[i], name, out, len))
			return 0;
	/* A program on $PATH. */
	env = getenv("PATH");
	dup = strdup(env ? env : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	if (!dup)
		return -ENOMEM;
	for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", dir, name);
		if (access(out, X_OK) == 0) {
			free(dup);
			return 0;
		}
	}
	free(dup);
	return -ENOENT;
}

long plyc_vaddr_to_offset(const char *path, uint64_t vaddr)
{
	Elf *elf;
	size_t i, n;
	long ret = -ENOENT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &n)) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			ret = (long)(vaddr - ph.p_vaddr + ph.p_offset);
			break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* A function symbol of an ELF file, with its symbol version: from
 * .dynsym, through .gnu.version and .gnu.version_d; from .symtab, where
 * the static linker spells versions into names (name@V, name@@V). */
struct fsym {
	char *name;         /* without the version */
	char *version;      /* "" when unversioned */
	int hidden;         /* a non-default version (name@V, not name@@V) */
	int rank;           /* binding: 2 global, 1 weak, 0 local */
	int kind;           /* SYM_PLAIN, SYM_IFUNC or SYM_THUMB */
	uint64_t offset;    /* in the file */
	uint64_t size;      /* st_size: 0 where the symbol does not say */
};

/* What a function symbol's address is. */
enum {
	SYM_PLAIN,
	SYM_IFUNC,  /* STT_GNU_IFUNC: the resolver's */
	SYM_THUMB,  /* 32-bit ARM, bit 0 set: Thumb code */
};

struct fsyms {
	struct fsym *v;
	size_t n, cap;
};

static void fsyms_free(struct fsyms *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].version);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int fsyms_add(struct fsyms *s, const char *name, size_t len, const char *version, int hidden,
		     int rank, int kind, uint64_t offset, uint64_t size)
{
	struct fsym *f;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct fsym *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	f = &s->v[s->n];
	f->name = strndup(name, len);
	f->version = strdup(version);
	if (!f->name || !f->version) {
		free(f->name);
		free(f->version);
		return -ENOMEM;
	}
	f->hidden = hidden;
	f->rank = rank;
	f->kind = kind;
	f->offset = offset;
	f->size = size;
	s->n++;
	return 0;
}

/* The name of version index ndx in .gnu.version_d, or NULL. */
static const char *verdef_name(Elf *elf, Elf_Scn *verdef, size_t strtab, unsigned ndx)
{
	Elf_Data *data = verdef ? elf_getdata(verdef, NULL) : NULL;
	size_t off = 0;
	GElf_Verdef vd;
	GElf_Verdaux va;

	if (!data)
		return NULL;
	for (;;) {
		if (!gelf_getverdef(data, (int)off, &vd))
			return NULL;
		if (vd.vd_ndx == ndx && vd.vd_cnt && gelf_getverdaux(data, (int)(off + vd.vd_aux), &va))
			return elf_strptr(elf, strtab, va.vda_name);
		if (!vd.vd_next)
			return NULL;
		off += vd.vd_next;
	}
}

/* The file offset of a virtual address in section shndx, or through the
 * program headers when the symbol's section doesn't say. */
static int64_t sym_file_offset(Elf *elf, size_t shndx, uint64_t value)
{
	Elf_Scn *scn = shndx && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;
	size_t i, n;

	if (scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && value >= sh.sh_addr &&
	    value < sh.sh_addr + sh.sh_size)
		return (int64_t)(value - sh.sh_addr + sh.sh_offset);
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && value >= ph.p_vaddr &&
		    value < ph.p_vaddr + ph.p_filesz)
			return (int64_t)(value - ph.p_vaddr + ph.p_offset);
	}
	return -1;
}

/* Every defined function in symbol table scn named `name` (before any
 * @VERSION), into out. */
static int read_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, Elf_Scn *versym, Elf_Scn *verdef,
		     size_t verdef_strtab, const char *name, struct fsyms *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Data *vdata = versym ? elf_getdata(versym, NULL) : NULL;
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, len = strlen(name);
	GElf_Ehdr eh;
	int err, arm = gelf_getehdr(elf, &eh) && eh.e_machine == EM_ARM;

	if (!data)
		return 0;
	for (i = 0; i < n; i++) {
		const char *sname, *ver = "";
		GElf_Sym sym;
		int type, bind, hidden = 0;
		int64_t off;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sname || strncmp(sname, name, len) || (sname[len] && sname[len] != '@'))
			continue;
		if (sname[len] == '@') {
			/* .symtab: name@VERSION (hidden) or name@@VERSION */
			hidden = sname[len + 1] != '@';
			ver = sname + len + (hidden ? 1 : 2);
		} else if (vdata) {
			GElf_Versym vs;

			if (gelf_getversym(vdata, (int)i, &vs) && (vs & 0x7fff) > 1) {
				const char *v = verdef_name(elf, verdef, verdef_strtab, vs & 0x7fff);

				hidden = (vs & 0x8000) != 0;
				ver = v ? v : "";
			}
		}
		off = sym_file_offset(elf, sym.st_shndx, sym.st_value);
		if (off < 0)
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		err = fsyms_add(out, sname, len, ver, hidden, bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0,
				type == STT_GNU_IFUNC ? SYM_IFUNC : arm && (sym.st_value & 1) ? SYM_THUMB : SYM_PLAIN,
				(uint64_t)off, sym.st_size);
		if (err)
			return err;
	}
	return 0;
}

static void list_versions(const struct fsyms *s, const char *name, char *msg, size_t len)
{
	size_t i, j, used = 0;

	for (i = 0; i < s->n && used < len; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(s->v[j].version, s->v[i].version) && s->v[j].hidden == s->v[i].hidden)
				break;
		if (j < i)
			continue;
		used += (size_t)snprintf(msg + used, len - used, "%s%s%s%s", used ? ", " : "", name,
					 !s->v[i].version[0] ? "" : s->v[i].hidden ? "@" : "@@",
					 s->v[i].version);
	}
}

/* The functions that may implement IFUNC `name`, as glibc names them
 * (__strlen_avx2, __strlen_sse2, ...: in .symtab, which stripped
 * libraries lack), into msg: "" when there are none. */
static void list_impls(Elf *elf, const char *name, char *msg, size_t len)
{
	char prefix[256];
	Elf_Scn *scn = NULL;
	size_t used = 0, plen;

	msg[0] = 0;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "__%s_", name);
	if (plen >= sizeof(prefix))
		return;
	while ((scn = elf_nextscn(elf, scn)) && used < len) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i, n;

		if (!data || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && used < len; i++) {
			const char *sname;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			sname = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sname && !strncmp(sname, prefix, plen))
				used += (size_t)snprintf(msg + used, len - used, "%s%s", used ? ", " : "", sname);
		}
	}
}

int plyc_uprobe_offset(const char *path, const char *spec, uint64_t *offset, uint64_t *size, char *msg,
		       size_t msglen)
{
	char name[512];
	const char *version = NULL, *at = strchr(spec, '@');
	struct fsyms all = { 0 }, match = { 0 };
	Elf_Scn *scn = NULL, *versym = NULL, *verdef = NULL;
	size_t i, verdef_strtab = 0;
	Elf *elf = NULL;
	int err = 0, fd, best_rank = 0;
	long best = -1;

	msg[0] = 0;
	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - spec) : (int)strlen(spec), spec);
	if (at)
		version = at[1] == '@' ? at + 2 : at + 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym) {
			versym = scn;
		} else if (sh.sh_type == SHT_GNU_verdef) {
			verdef = scn;
			verdef_strtab = sh.sh_link;
		}
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		err = read_syms(elf, scn, &sh, sh.sh_type == SHT_DYNSYM ? versym : NULL, verdef, verdef_strtab,
				name, &all);
	}
	if (err)
		goto out;
	/* Wanted: the version asked for, else the default one (or none). */
	for (i = 0; i < all.n && !err; i++) {
		const struct fsym *f = &all.v[i];

		if (version ? !strcmp(f->version, version) && !(f->hidden && at[1] == '@') : !f->hidden)
			err = fsyms_add(&match, f->name, strlen(f->name), f->version, f->hidden, f->rank,
					f->kind, f->offset, f->size);
	}
	if (err)
		goto out;
	if (!match.n) {
		if (all.n) {
			list_versions(&all, name, msg, msglen);
			err = -ENOMSG;   /* there, but not in that version */
		} else {
			err = -ENOENT;
		}
		goto out;
	}
	/* Aliases (a symbol in both tables, names of one function) agree; a
	 * global definition wins over weak ones, a weak one over local ones. */
	for (i = 0; i < match.n; i++)
		if (match.v[i].rank > best_rank)
			best_rank = match.v[i].rank;
	for (i = 0; i < match.n; i++) {
		if (match.v[i].rank != best_rank)
			continue;
		if (best < 0) {
			best = (long)i;
		} else if (match.v[i].offset != match.v[best].offset) {
			list_versions(&match, name, msg, msglen);
			err = -EEXIST;
			goto out;
		}
	}
	if (match.v[best].kind == SYM_IFUNC) {
		list_impls(elf, name, msg, msglen);
		err = -EOPNOTSUPP;
		goto out;
	}
	if (match.v[best].kind == SYM_THUMB) {
		err = -EILSEQ;
		goto out;
	}
	*offset = match.v[best].offset;
	*size = match.v[best].size;
out:
	fsyms_free(&match);
	fsyms_free(&all);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
