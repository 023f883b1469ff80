/* Values a script takes from the device it runs on, found once at start-up
 * and set in the BPF programs' parameters before the load (so the verifier
 * sees them as constants): what bpftrace resolves at compile time on the
 * machine it traces, and plyc's tracer on its own device instead.
 *
 *   kaddr("sym")       the symbol's address in /proc/kallsyms
 *   cgroupid("path")   the cgroup v2 directory's id: its file handle, as
 *                      name_to_handle_at(2) gives it (kernfs' 8-byte id)
 *   ncpus              the CPUs the kernel can have (possible ones)
 *   uaddr("sym")       the symbol's link-time address in a uprobe's binary
 *                      (the program adds the load offset it sees: the
 *                      probed address minus the probe's link-time address,
 *                      0 for a fixed-address executable)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <gelf.h>
#include <libelf.h>

#include "plyc_loader.h"
#include "plyc_uprobes.h"

#define CGROUP2_MAGIC 0x63677270

static int told(const struct plyc_program *P, const struct plyc_dconst *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int told(const struct plyc_program *P, const struct plyc_dconst *d, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: %s: ", P->name, d->where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* Every symbol named `name` in kallsyms (any type: data too); its address,
 * or 0 with *zeroed set when the kernel hides addresses from this reader. */
static int kallsyms_addr(const char *name, uint64_t *addr, int *zeroed)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int found = 0;

	if (!f)
		return -errno;
	*zeroed = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *sym;
		uint64_t a = strtoull(line, &p, 16);

		if (p == line || *p != ' ' || !p[1] || p[2] != ' ')
			continue;
		sym = p + 3;
		sym[strcspn(sym, " \t\n")] = '\0';
		if (strcmp(sym, name))
			continue;
		found = 1;
		*addr = a;
		*zeroed = a == 0;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int resolve_kaddr(const struct plyc_program *P, const struct plyc_dconst *d, uint64_t *out)
{
	int zeroed, err = kallsyms_addr(d->name, out, &zeroed);

	if (err == -ENOENT)
		return told(P, d, "kaddr(\"%s\"): the kernel has no symbol %s in /proc/kallsyms%s", d->name,
			    d->name, " (data symbols are listed only when it is built with CONFIG_KALLSYMS_ALL)");
	if (err)
		return told(P, d, "kaddr(\"%s\"): can't read /proc/kallsyms: %s", d->name, strerror(-err));
	if (zeroed) {
		/* kptr_restrict 1 hides them from readers without CAP_SYSLOG, 2 from all */
		FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "r");
		int level = -1;

		if (f) {
			if (fscanf(f, "%d", &level) != 1)
				level = -1;
			fclose(f);
		}
		return told(P, d, "kaddr(\"%s\"): /proc/kallsyms shows this tracer addresses of 0 "
			    "(kernel.kptr_restrict is %d): run it as root (CAP_SYSLOG), with "
			    "kernel.kptr_restrict at 0 or 1", d->name, level);
	}
	return 0;
}

static int resolve_cgroupid(const struct plyc_program *P, const struct plyc_dconst *d, uint64_t *out)
{
	union {
		struct file_handle fh;
		char room[sizeof(struct file_handle) + 64];
	} h;
	struct statfs fs;
	int mount_id;

	if (statfs(d->name, &fs))
		return told(P, d, "cgroupid(\"%s\"): %s", d->name, strerror(errno));
	if (fs.f_type != CGROUP2_MAGIC)
		return told(P, d, "cgroupid(\"%s\"): not a directory of a cgroup v2 hierarchy "
			    "(mount -t cgroup2; cgroup v1 has no ids)", d->name);
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.room) - sizeof(struct file_handle);
	if (name_to_handle_at(AT_FDCWD, d->name, &h.fh, &mount_id, 0))
		return told(P, d, "cgroupid(\"%s\"): %s", d->name, strerror(errno));
	if (h.fh.handle_bytes != sizeof(*out))
		return told(P, d, "cgroupid(\"%s\"): a handle of %u bytes, not a cgroup id", d->name,
			    h.fh.handle_bytes);
	memcpy(out, h.fh.f_handle, sizeof(*out));
	return 0;
}

/* The link-time address of symbol `name` (any type, defined) in path's
 * .symtab, else its .dynsym, and whether the file is position-independent
 * (ET_DYN). 0, -ENOENT, or another -errno. */
static int elf_symbol(const char *path, const char *name, uint64_t *vaddr, int *pie)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0, pass;
	Elf *elf;
	GElf_Ehdr eh;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	*pie = eh.e_type == ET_DYN;
	for (pass = 0; pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
			    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
				continue;
			n = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < n && !found; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				s = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*vaddr = sym.st_value;
					found = 1;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found ? 0 : -ENOENT;
}

static int resolve_uaddr(const struct plyc_program *P, const struct plyc_dconst *d, uint64_t *out)
{
	char path[4096];
	int pie = 0, err = plyc_resolve_binary(d->binary, path, sizeof(path));

	if (err)
		return told(P, d, "uaddr(\"%s\"): can't find %s: %s", d->name, d->binary, strerror(-err));
	err = elf_symbol(path, d->name, out, &pie);
	if (err == -ENOENT)
		return told(P, d, "uaddr(\"%s\"): %s has no symbol %s", d->name, path, d->name);
	if (err)
		return told(P, d, "uaddr(\"%s\"): can't read %s's symbols: %s", d->name, path, strerror(-err));
	if (pie && d->kind == PLYC_DC_UADDR_FIXED)
		return told(P, d, "uaddr(\"%s\") in a uretprobe: %s is position-independent, at another address "
			    "in each process, which a uretprobe can't see (use it in a uprobe)", d->name, path);
	return 0;
}

int plyc_dconst_resolve(const struct plyc_program *P, uint64_t *values)
{
	int i;

	for (i = 0; i < P->ndconsts; i++) {
		const struct plyc_dconst *d = &P->dconsts[i];
		int n, err = 0;

		values[i] = 0;
		switch (d->kind) {
		case PLYC_DC_KADDR:
			err = resolve_kaddr(P, d, &values[i]);
			break;
		case PLYC_DC_CGROUPID:
			err = resolve_cgroupid(P, d, &values[i]);
			break;
		case PLYC_DC_UADDR:
		case PLYC_DC_UADDR_FIXED:
			err = resolve_uaddr(P, d, &values[i]);
			break;
		case PLYC_DC_NCPUS:
			n = libbpf_num_possible_cpus();
			if (n < 0)
				err = told(P, d, "can't count the CPUs: %s", strerror(-n));
			values[i] = n < 0 ? 0 : (uint64_t)n;
			break;
		}
		if (err)
			return err;
	}
	return 0;
}
