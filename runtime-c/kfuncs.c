/* The device's traceable kernel functions, for kprobe targets: from
 * tracefs' available_filter_functions (what kprobes can attach to), else
 * /proc/kallsyms. Syscalls are found in whatever spelling this kernel
 * uses: __x64_sys_read (wrappers taking the user's registers, 4.17+),
 * sys_read, SyS_read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_kfuncs.h"
#include "plyc_loader.h"

static char **names;
static size_t nnames;

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add(const char *name, size_t len, size_t *cap)
{
	if (nnames == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		char **grown = realloc(names, ncap * sizeof(*names));

		if (!grown)
			return -ENOMEM;
		names = grown;
		*cap = ncap;
	}
	names[nnames] = strndup(name, len);
	return names[nnames++] ? 0 : -ENOMEM;
}

static int load(void)
{
	char path[PATH_MAX], line[512];
	const char *root = plyc_tracefs();
	size_t cap = 0, i, j;
	FILE *fp = NULL;
	int kallsyms = 0;

	if (names)
		return 0;
	if (root) {
		snprintf(path, sizeof(path), "%s/available_filter_functions", root);
		fp = fopen(path, "re");
	}
	if (!fp) {
		fp = fopen("/proc/kallsyms", "re");
		kallsyms = 1;
	}
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		char *name = line;
		size_t len;

		if (kallsyms) {
			/* "ffffffff81234567 T name [module]" */
			char *type = strchr(line, ' ');

			if (!type || (type[1] != 't' && type[1] != 'T'))
				continue;
			name = type + 3;
		}
		len = strcspn(name, " \t\n");
		if (len && add(name, len, &cap)) {
			fclose(fp);
			return -ENOMEM;
		}
	}
	fclose(fp);
	qsort(names, nnames, sizeof(*names), by_name);
	/* Static functions of the same name appear once per file: keep one. */
	for (i = j = 0; i < nnames; i++) {
		if (j && !strcmp(names[j - 1], names[i]))
			free(names[i]);
		else
			names[j++] = names[i];
	}
	nnames = j;
	return 0;
}

int plyc_kfunc_exists(const char *name)
{
	if (load())
		return 0;
	return bsearch(&name, names, nnames, sizeof(*names), by_name) != NULL;
}

static int wrapper_prefix(const char *name)
{
	static const char *const prefixes[] = { "__x64_sys_", "__ia32_sys_", "__arm64_sys_",
						"__s390x_sys_", "__riscv_sys_" };
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* The syscall a name means in any era's spelling, or NULL. */
static const char *syscall_of(const char *name)
{
	static const char *const prefixes[] = { "SyS_", "sys_", "__se_sys_", "__do_sys_", "__x64_sys_",
						"__ia32_sys_", "__arm64_sys_", "__arm_sys_", "__s390x_sys_",
						"__riscv_sys_" };
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])) && name[strlen(prefixes[i])])
			return name + strlen(prefixes[i]);
	return NULL;
}

/* This kernel's spellings of a syscall, most specific first. */
static const char *const spellings[] = {
#if defined(__x86_64__)
	"__x64_sys_",
#elif defined(__aarch64__)
	"__arm64_sys_",
#endif
	"sys_", "SyS_", "__se_sys_",
};

static int add_match(struct plyc_kfuncs *out, const char *name)
{
	char **grown = realloc(out->names, (out->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	out->names = grown;
	out->names[out->n] = strdup(name);
	return out->names[out->n++] ? 0 : -ENOMEM;
}

static int match_glob(const char *glob, struct plyc_kfuncs *out)
{
	size_t i;

	for (i = 0; i < nnames; i++)
		if (fnmatch(glob, names[i], 0) == 0 && add_match(out, names[i]))
			return -ENOMEM;
	return 0;
}

int plyc_kfuncs_resolve(const char *target, int glob, struct plyc_kfuncs *out)
{
	const char *sc = syscall_of(target);
	char buf[512];
	size_t i;
	int err = load();

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	if (!glob) {
		if (plyc_kfunc_exists(target) || !sc) {
			out->wrapped = wrapper_prefix(target);
			return plyc_kfunc_exists(target) ? add_match(out, target) : -ENOENT;
		}
		for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
			snprintf(buf, sizeof(buf), "%s%s", spellings[i], sc);
			if (plyc_kfunc_exists(buf)) {
				out->wrapped = wrapper_prefix(buf);
				return add_match(out, buf);
			}
		}
		return -ENOENT;
	}
	if ((err = match_glob(target, out)) || out->n)
		goto done;
	/* SyS_* on a kernel that spells them __x64_sys_*: the same glob in
	 * this kernel's spelling. */
	if (sc) {
		for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]) && !out->n; i++) {
			snprintf(buf, sizeof(buf), "%s%s", spellings[i], sc);
			if ((err = match_glob(buf, out)))
				return err;
		}
	}
done:
	if (!err && !out->n)
		return -ENOENT;
	/* A glob of syscalls counts as wrapped if its matches are wrappers. */
	out->wrapped = out->n && wrapper_prefix(out->names[0]);
	return err;
}

void plyc_kfuncs_free(struct plyc_kfuncs *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->names[i]);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
