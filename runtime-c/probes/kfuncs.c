/* The device's kernel functions, for kprobe targets: tracefs'
 * available_filter_functions (the ftrace-able ones, which globs match and
 * kprobe.multi needs), and /proc/kallsyms' text symbols (kprobes attach to
 * more than ftrace does: an exact name, or a glob nothing ftrace-able
 * matches, is looked up there too). Syscalls are found in whatever spelling this kernel
 * uses: __x64_sys_read (wrappers taking the user's registers, 4.17+),
 * sys_read, SyS_read. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "plyc_arch.h"
#include "plyc_kfuncs.h"
#include "plyc_loader.h"

struct list {
	char **names;
	size_t n, cap;
	int loaded;
};

static struct list ftrace_fns, text_syms;

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add(struct list *l, const char *name, size_t len)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 4096;
		char **grown = realloc(l->names, ncap * sizeof(*l->names));

		if (!grown)
			return -ENOMEM;
		l->names = grown;
		l->cap = ncap;
	}
	l->names[l->n] = strndup(name, len);
	return l->names[l->n++] ? 0 : -ENOMEM;
}

/* One name a line: "name [module]" (available_filter_functions), or
 * "ffffffff81234567 T name [module]" (kallsyms, text symbols only). */
static int load(struct list *l, const char *path, int kallsyms)
{
	char line[512];
	size_t i, j;
	FILE *fp;

	if (l->loaded)
		return 0;
	l->loaded = 1;
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		char *name = line;
		size_t len;

		if (kallsyms) {
			char *type = strchr(line, ' ');

			if (!type || (type[1] != 't' && type[1] != 'T'))
				continue;
			name = type + 3;
		}
		len = strcspn(name, " \t\n");
		/* Padding before functions is no function; clones made by the
		 * compiler (name.constprop.0) are kept for exact names only. */
		if (!len || !strncmp(name, "__pfx_", 6))
			continue;
		if (add(l, name, len)) {
			fclose(fp);
			return -ENOMEM;
		}
	}
	fclose(fp);
	qsort(l->names, l->n, sizeof(*l->names), by_name);
	/* Static functions of the same name appear once per file: keep one. */
	for (i = j = 0; i < l->n; i++) {
		if (j && !strcmp(l->names[j - 1], l->names[i]))
			free(l->names[i]);
		else
			l->names[j++] = l->names[i];
	}
	l->n = j;
	return 0;
}

static int load_all(void)
{
	char path[PATH_MAX];
	const char *root = plyc_tracefs();
	int err = 0;

	if (root) {
		snprintf(path, sizeof(path), "%s/available_filter_functions", root);
		err = load(&ftrace_fns, path, 0);
	}
	return err ? err : load(&text_syms, "/proc/kallsyms", 1);
}

static int in(const struct list *l, const char *name)
{
	return l->n && bsearch(&name, l->names, l->n, sizeof(*l->names), by_name) != NULL;
}

int plyc_kfunc_exists(const char *name)
{
	if (load_all())
		return 0;
	return in(&ftrace_fns, name) || in(&text_syms, name);
}

#if defined(__powerpc64__)
/* powerpc's syscall wrappers (since 6.1, where COMPAT is off, as on
 * ppc64el) kept the plain name: sys_openat takes the user's registers. */
static int powerpc_wrappers(void)
{
	struct utsname u;
	int major, minor;

	return !uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 1));
}
#endif

static int wrapper_prefix(const char *name)
{
	static const char *const prefixes[] = { "__x64_sys_", "__ia32_sys_", "__arm64_sys_",
						"__s390x_sys_", "__riscv_sys_" };
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
#if defined(__powerpc64__)
	if (!strncmp(name, "sys_", 4))
		return powerpc_wrappers();
#endif
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
#ifdef PLYC_SYSCALL_PREFIX
	PLYC_SYSCALL_PREFIX,
#endif
	"sys_", "SyS_", "__se_sys_", "__do_sys_",
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

static int match_list(const struct list *l, const char *glob, struct plyc_kfuncs *out)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strchr(l->names[i], '.') && plyc_glob_match(glob, l->names[i]) &&
		    add_match(out, l->names[i]))
			return -ENOMEM;
	return 0;
}

/* A function the compiler only kept as clones (name.constprop.0,
 * name.isra.0, ...): every clone is that function. */
static int match_clones(const char *name, struct plyc_kfuncs *out)
{
	size_t i, len = strlen(name);

	for (i = 0; i < text_syms.n; i++)
		if (!strncmp(text_syms.names[i], name, len) && text_syms.names[i][len] == '.' &&
		    add_match(out, text_syms.names[i]))
			return -ENOMEM;
	return 0;
}

/* ftrace-able functions first; kallsyms only if none of those match. */
static int match_glob(const char *glob, struct plyc_kfuncs *out)
{
	int err = match_list(&ftrace_fns, glob, out);

	if (!err && !out->n)
		err = match_list(&text_syms, glob, out);
	return err;
}

int plyc_kfuncs_resolve(const char *target, int glob, struct plyc_kfuncs *out)
{
	const char *sc = syscall_of(target);
	char buf[512];
	size_t i;
	int err = load_all();

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	if (!glob) {
		if (plyc_kfunc_exists(target)) {
			out->wrapped = wrapper_prefix(target);
			return add_match(out, target);
		}
		if (!sc) {
			err = match_clones(target, out);
			return err ? err : out->n ? 0 : -ENOENT;
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

/* A module's text symbols (kallsyms' "ADDR t name\t[module]" lines) that
 * target names, as "module:name": how the kernel's kprobes look a symbol
 * up in one module only. */
int plyc_kfuncs_in_module(const char *target, int glob, const char *module, struct plyc_kfuncs *out)
{
	char line[512], want[128], name[512];
	FILE *fp = fopen("/proc/kallsyms", "re");
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!fp)
		return -errno;
	snprintf(want, sizeof(want), "[%s]", module);
	while (!err && fgets(line, sizeof(line), fp)) {
		char type, mod[128] = "", sym[256];

		if (sscanf(line, "%*s %c %255s %127s", &type, sym, mod) != 3 || (type != 't' && type != 'T') ||
		    strcmp(mod, want) || (glob ? !plyc_glob_match(target, sym) : strcmp(target, sym) != 0))
			continue;
		snprintf(name, sizeof(name), "%s:%s", module, sym);
		if (out->n && !strcmp(out->names[out->n - 1], name))
			continue;
		err = add_match(out, name);
	}
	fclose(fp);
	return err ? err : out->n ? 0 : -ENOENT;
}

int plyc_kfunc_in_kallsyms(const char *name)
{
	return !load_all() && in(&text_syms, name);
}

/* On the kernel's kprobe blacklist (debugfs' kprobes/blacklist, lines of
 * "0xstart-0xend name"): functions a kprobe must never stop in. */
int plyc_kfunc_blacklisted(const char *name)
{
	char line[512];
	int found = 0;
	FILE *fp = fopen("/sys/kernel/debug/kprobes/blacklist", "re");

	if (!fp)
		return 0;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *sym = strpbrk(line, " \t");

		if (!sym)
			continue;
		sym += strspn(sym, " \t");
		sym[strcspn(sym, " \t\n")] = 0;
		found = !strcmp(sym, name);
	}
	fclose(fp);
	return found;
}

/* Levenshtein distance of a and b, or more than max when it exceeds it. */
static size_t distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[256];

	if (lb >= sizeof(row) / sizeof(row[0]) || (la > lb ? la - lb : lb - la) > max)
		return max + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], best;

		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			diag = up;
			row[j] = v;
			if (v < best)
				best = v;
		}
		if (best > max)
			return max + 1;
	}
	return row[lb];
}

/* How near a traceable function's name is to a wanted one (lower is
 * nearer), or 0 when it is not near: the name inside a longer one
 * (__dev_queue_xmit, dev_queue_xmit_nit), or a small edit distance. */
static size_t nearness(const char *want, const char *name)
{
	size_t lw = strlen(want), ln = strlen(name), d;
	size_t max = lw < 6 ? 1 : 2;

	if (!strcmp(want, name) || strchr(name, '.'))
		return 0;
	if (ln > lw && ln - lw <= 12 && strstr(name, want))
		return 1 + (ln - lw);
	d = distance(want, name, max);
	return d <= max ? d : 0;
}

#define NEAR_MAX 4

size_t plyc_kfunc_near(const char *name, char *out, size_t len)
{
	const struct list *l;
	const char *best[NEAR_MAX];
	size_t score[NEAR_MAX], n = 0, i, j, used = 0;

	out[0] = 0;
	if (load_all())
		return 0;
	/* Only what can be traced is worth suggesting. */
	l = ftrace_fns.n ? &ftrace_fns : &text_syms;
	for (i = 0; i < l->n; i++) {
		size_t s = nearness(name, l->names[i]);

		if (!s || (n == NEAR_MAX && s >= score[n - 1]))
			continue;
		if (n < NEAR_MAX)
			n++;
		/* Insert in order of nearness, then of name (the list is sorted). */
		for (j = n - 1; j > 0 && score[j - 1] > s; j--) {
			score[j] = score[j - 1];
			best[j] = best[j - 1];
		}
		score[j] = s;
		best[j] = l->names[i];
	}
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", best[i]);
	return n;
}

int plyc_kfuncs_ftrace_listed(void)
{
	return !load_all() && ftrace_fns.n > 0;
}

int plyc_kfunc_ftraceable(const char *name)
{
	return !load_all() && in(&ftrace_fns, name);
}

void plyc_kfuncs_free(struct plyc_kfuncs *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->names[i]);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
