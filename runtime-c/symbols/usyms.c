/* User symbols: bpftrace's ustack frames and usym() values, named on the
 * device as the tracer prints them.
 *
 * A process's mappings are read from /proc/PID/maps once per value printed
 * (a stack, a usym), as bpftrace 0.17 reads them each time: a process that
 * has exited since the event leaves its addresses in hex, as there. The
 * mapped file's symbols (.symtab, else .dynsym and a separate debug file
 * found by build id or .gnu_debuglink) are read once per file, by device
 * and inode, with the libelf the tracer already links for uprobes. A
 * symbol names an address it covers (start <= a < start + size), as bcc's
 * resolver does for bpftrace. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "plyc_rt.h"

struct usym {
	uint64_t start, size;
	size_t name;		/* offset in elfsyms.names */
};

struct segment {
	uint64_t off, filesz, vaddr;
};

/* One mapped file's symbols, by address. */
struct elfsyms {
	uint64_t dev, ino;
	struct usym *syms;
	size_t n, cap;
	uint64_t maxsize;	/* how far back a covering symbol can start */
	char *names;
	size_t names_len, names_cap;
	struct segment *segs;	/* PT_LOAD: file offset -> virtual address */
	size_t nsegs;
};

static struct elfsyms **files;
static size_t nfiles;

/* One line of /proc/PID/maps that maps a file. */
struct mapping {
	uint64_t start, end, pgoff, dev, ino;
	char path[256];
};

static int sym_add(struct elfsyms *f, uint64_t start, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct usym *s = realloc(f->syms, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		f->syms = s;
		f->cap = cap;
	}
	if (f->names_len + len > f->names_cap) {
		size_t cap = f->names_cap ? f->names_cap * 2 : 4096;
		char *s;

		while (cap < f->names_len + len)
			cap *= 2;
		s = realloc(f->names, cap);
		if (!s)
			return -ENOMEM;
		f->names = s;
		f->names_cap = cap;
	}
	memcpy(f->names + f->names_len, name, len);
	f->syms[f->n].start = start;
	f->syms[f->n].size = size;
	f->syms[f->n].name = f->names_len;
	f->names_len += len;
	f->n++;
	if (size > f->maxsize)
		f->maxsize = size;
	return 0;
}

/* The defined, sized symbols of every section of `type`; how many sections. */
static int read_symbols(Elf *elf, struct elfsyms *f, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		found++;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int t;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			t = GELF_ST_TYPE(sym.st_info);
			if (sym.st_shndx == SHN_UNDEF || !sym.st_size ||
			    (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_OBJECT))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && *name && sym_add(f, sym.st_value, sym.st_size, name))
				return -ENOMEM;
		}
	}
	return found;
}

static int read_segments(Elf *elf, struct elfsyms *f)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	f->segs = calloc(n ? n : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs].off = ph.p_offset;
		f->segs[f->nsegs].filesz = ph.p_filesz;
		f->segs[f->nsegs].vaddr = ph.p_vaddr;
		f->nsegs++;
	}
	return 0;
}

/* The payload of the first note section of `type` and `name`, or NULL. */
static const unsigned char *find_note(Elf *elf, Elf64_Word type, const char *name, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == type && nh.n_namesz == strlen(name) + 1 &&
			    !memcmp((const char *)data->d_buf + noff, name, nh.n_namesz)) {
				*len = nh.n_descsz;
				return (const unsigned char *)data->d_buf + doff;
			}
		}
	}
	return NULL;
}

/* The contents of the section named `want`, or NULL. */
static Elf_Data *find_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, want))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

static int read_debug_file(const char *path, struct elfsyms *f);

/* A stripped file's full symbol table is in its separate debug file, where
 * gdb looks for it: by build id, then by .gnu_debuglink's name. */
static void read_separate_debug(Elf *elf, const char *path, struct elfsyms *f)
{
	char dpath[PATH_MAX], dir[256];
	const unsigned char *id;
	Elf_Data *link;
	size_t len, i, n;
	char *slash;

	id = find_note(elf, NT_GNU_BUILD_ID, "GNU", &len);
	if (id && len > 1) {
		n = (size_t)snprintf(dpath, sizeof(dpath), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (i = 1; i < len && n + 3 < sizeof(dpath); i++)
			n += (size_t)snprintf(dpath + n, sizeof(dpath) - n, "%02x", id[i]);
		snprintf(dpath + n, sizeof(dpath) - n, ".debug");
		if (read_debug_file(dpath, f) > 0)
			return;
	}
	link = find_section(elf, ".gnu_debuglink");
	if (!link || !link->d_buf || !memchr(link->d_buf, 0, link->d_size))
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dpath, sizeof(dpath), "/usr/lib/debug%s/%.255s", dir, (const char *)link->d_buf);
	if (read_debug_file(dpath, f) > 0)
		return;
	snprintf(dpath, sizeof(dpath), "%s/.debug/%.255s", dir, (const char *)link->d_buf);
	read_debug_file(dpath, f);
}

static int read_debug_file(const char *path, struct elfsyms *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		found = read_symbols(elf, f, SHT_SYMTAB);
	elf_end(elf);
	close(fd);
	return found;
}

static int usym_cmp(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

/* Read the file the mapping shows; NULL if it can't be read (the file
 * still gets an entry, so it is not tried again). */
static struct elfsyms *load_file(const struct mapping *m, uint32_t pid)
{
	struct elfsyms *f = calloc(1, sizeof(*f)), **grown;
	char path[PATH_MAX];
	Elf *elf = NULL;
	int fd;

	if (!f)
		return NULL;
	f->dev = m->dev;
	f->ino = m->ino;
	grown = realloc(files, (nfiles + 1) * sizeof(*files));
	if (!grown) {
		free(f);
		return NULL;
	}
	files = grown;
	files[nfiles++] = f;

	/* the mapped file itself, even deleted or in another mount namespace;
	 * else its path as the process sees it, else as we do */
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return f;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !read_segments(elf, f)) {
		if (read_symbols(elf, f, SHT_SYMTAB) <= 0) {
			read_symbols(elf, f, SHT_DYNSYM);
			read_separate_debug(elf, m->path, f);
		}
		if (f->n)
			qsort(f->syms, f->n, sizeof(*f->syms), usym_cmp);
	}
	elf_end(elf);
	close(fd);
	return f;
}

static struct elfsyms *file_of(const struct mapping *m, uint32_t pid)
{
	size_t i;

	for (i = 0; i < nfiles; i++)
		if (files[i]->dev == m->dev && files[i]->ino == m->ino)
			return files[i];
	return load_file(m, pid);
}

/* The symbol covering virtual address a: among those starting at or
 * before it, the nearest that reaches past it (symbols may nest). */
static const struct usym *sym_find(const struct elfsyms *f, uint64_t a)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct usym *s = &f->syms[lo];

		if (a - s->start < s->size)
			return s;
		if (a - s->start >= f->maxsize)
			break;
	}
	return NULL;
}

/* A process's file mappings, read at once. */
struct umaps {
	struct mapping *m;
	size_t n;
	uint32_t pid;
};

/* "start-end perms offset major:minor inode   /path" into m; 0 for a file. */
static int parse_mapping(char *line, struct mapping *m)
{
	unsigned long major, minor;
	char *p = line, *end;

	m->start = strtoull(p, &end, 16);
	if (*end != '-')
		return -1;
	m->end = strtoull(end + 1, &end, 16);
	p = strchr(end, ' ');		/* then the permissions */
	if (!p || !(p = strchr(p + 1, ' ')))
		return -1;
	m->pgoff = strtoull(p + 1, &end, 16);
	major = strtoul(end, &end, 16);
	if (*end != ':')
		return -1;
	minor = strtoul(end + 1, &end, 16);
	m->ino = strtoull(end, &end, 10);
	p = end + strspn(end, " \t");
	if (*p != '/' || !m->ino)
		return -1;
	m->dev = makedev(major, minor);
	p[strcspn(p, "\n")] = '\0';
	snprintf(m->path, sizeof(m->path), "%s", p);
	return 0;
}

static void umaps_read(struct umaps *u, uint32_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0, mcap = 0;
	FILE *fp;

	u->m = NULL;
	u->n = 0;
	u->pid = pid;
	if (!plyc_proc_is_ours()) {
		/* pid is the tracer's namespace's: another's /proc would name the
		 * frames from another process's mappings */
		static int told;

		if (!told++)
			fprintf(stderr, "warning: /proc is another PID namespace's than the tracer's (mounted outside "
				"it): user frames are printed as addresses; mount the namespace's own "
				"(unshare --mount-proc)\n");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fp = fopen(path, "re");
	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		struct mapping m;

		if (parse_mapping(line, &m))
			continue;
		if (u->n == mcap) {
			struct mapping *g;

			mcap = mcap ? mcap * 2 : 64;
			g = realloc(u->m, mcap * sizeof(*g));
			if (!g)
				break;
			u->m = g;
		}
		u->m[u->n++] = m;
	}
	free(line);
	fclose(fp);
}

static void umaps_free(struct umaps *u)
{
	free(u->m);
	u->m = NULL;
	u->n = 0;
}

/* bpftrace's text of a user address (see plyc_rt.h). */
static const char *usym_format(struct umaps *u, uint64_t addr, int offset, int module, char *buf,
			       size_t len)
{
	size_t i, j;

	for (i = 0; i < u->n; i++) {
		const struct mapping *m = &u->m[i];
		struct elfsyms *f;
		uint64_t foff;
		const struct usym *s;

		if (addr < m->start || addr >= m->end)
			continue;
		f = file_of(m, u->pid);
		if (!f)
			break;
		foff = addr - m->start + m->pgoff;
		for (j = 0; j < f->nsegs; j++) {
			const struct segment *g = &f->segs[j];

			if (foff - g->off >= g->filesz)
				continue;
			s = sym_find(f, foff - g->off + g->vaddr);
			if (!s)
				break;
			/* C++ names demangled, as bpftrace does by default
			 * (cpp_demangle); one the demangler does not know, or
			 * too long for buf, as the symbol table has it */
			if (!plyc_cpp_demangle || plyc_demangle(f->names + s->name, buf, len > 128 ? len - 64 : len))
				snprintf(buf, len, "%s", f->names + s->name);
			if (offset)
				snprintf(buf + strlen(buf), len - strlen(buf), "+%" PRIu64,
					 foff - g->off + g->vaddr - s->start);
			if (module)
				snprintf(buf + strlen(buf), len - strlen(buf), " (%s)", m->path);
			return buf;
		}
		break;
	}
	/* C++'s stream of a void *: 0x..., a null pointer as 0 */
	if (addr)
		snprintf(buf, len, "0x%" PRIx64 "%s", addr, module ? " ([unknown])" : "");
	else
		snprintf(buf, len, "0%s", module ? " ([unknown])" : "");
	return buf;
}

const char *plyc_usym_bt(uint32_t pid, uint64_t addr, int offset, int module, char *buf, size_t len)
{
	struct umaps u;

	umaps_read(&u, pid);
	usym_format(&u, addr, offset, module, buf, len);
	umaps_free(&u);
	return buf;
}

const char *plyc_usym_text(const void *data, char *buf, size_t len)
{
	uint64_t addr = plyc_load_uint(data, 8), pid = plyc_load_uint((const char *)data + 8, 8);

	return plyc_usym_bt((uint32_t)pid, addr, 0, 0, buf, len);
}

void plyc_print_ustack(FILE *fp, uint32_t pid, const uint64_t *ips, size_t n, int mode, int indent)
{
	char sym[PLYC_KSYM_LEN];
	struct umaps u;
	size_t i;

	umaps_read(&u, pid);
	for (i = 0; i < n && ips[i]; i++) {
		if (mode == PLYC_STACK_RAW)
			fprintf(fp, "%" PRIx64 "\n", ips[i]);
		else if (mode == PLYC_STACK_PERF)
			fprintf(fp, "\t%" PRIx64 " %s\n", ips[i], usym_format(&u, ips[i], 1, 1, sym, sizeof(sym)));
		else
			fprintf(fp, "%*s%s\n", indent, "", usym_format(&u, ips[i], 1, 0, sym, sizeof(sym)));
	}
	umaps_free(&u);
}

const struct plyc_usyms plyc_usyms_elf = {
	.bt = plyc_usym_bt,
	.text = plyc_usym_text,
	.print_stack = plyc_print_ustack,
};
