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
#include <unistd.h>

#include "plyc_uprobes.h"

#if defined(__x86_64__)
#define TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define TRIPLET "aarch64-linux-gnu"
#elif defined(__arm__)
#define TRIPLET "arm-linux-gnueabihf"
#else
#define TRIPLET "unknown"
#endif

static const char *const lib_dirs[] = {
	"/lib/" TRIPLET, "/usr/lib/" TRIPLET, "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

static int regular(const char *path)
{
	return access(path, R_OK) == 0;
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
			if (is_elf(path) && (!best[0] || strlen(n) < strlen(best)))
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

/* The provider of USDT probe `name` in path, from its .note.stapsdt notes
 * (for usdt:PATH:name written without a provider). 0, -ENOENT, or
 * -EEXIST when two providers have a probe of that name. */
int plyc_usdt_provider(const char *path, const char *name, char *out, size_t len)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int found = 0, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, next, name_off, desc_off;
		size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") || !(data = elf_getdata(scn, NULL)))
			continue;
		while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			const char *prov = desc + 3 * addr_size;
			const char *pname = prov + strlen(prov) + 1;

			off = next;
			if (nh.n_type != 3 || nh.n_descsz < 3 * addr_size + 2)
				continue;
			if (!strcmp(pname, name)) {
				if (found && strcmp(out, prov)) {
					found = -EEXIST;
					goto out;
				}
				snprintf(out, len, "%s", prov);
				found = 1;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return found > 0 ? 0 : found < 0 ? found : -ENOENT;
}
