/* The device's tracefs: where it is (mounting it if nobody has), and the
 * layout of its tracepoints, read from their format files. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plyc_loader.h"

static int has_events(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *plyc_tracefs(void)
{
	static const char *found;
	static const char *const candidates[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	size_t i;

	if (found)
		return found;
	/* Where tracefs is mounted somewhere unusual (and for tests). */
	if (getenv("PLYC_TRACEFS") && has_events(getenv("PLYC_TRACEFS")))
		return found = getenv("PLYC_TRACEFS");
	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (has_events(candidates[i]))
			return found = candidates[i];
	}
	/* Not mounted (the usual state at boot on small systems). */
	if (mount("tracefs", candidates[0], "tracefs", 0, NULL) == 0 && has_events(candidates[0]))
		return found = candidates[0];
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0 && has_events(candidates[1]))
		return found = candidates[1];
	return NULL;
}

int plyc_probe_pmu_available(const char *kind)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", kind);
	if (!access(path, R_OK))
		return 1;
	if (!plyc_tracefs())
		return 0;
	snprintf(path, sizeof(path), "%s/%s_events", plyc_tracefs(), kind);
	return !access(path, F_OK);
}

int plyc_tp_exists(const char *group, const char *event)
{
	char path[PATH_MAX];
	const char *root = plyc_tracefs();

	if (!root)
		return -ENOSYS;
	snprintf(path, sizeof(path), "%s/events/%s/%s", root, group, event);
	return access(path, F_OK) == 0 ? 0 : -ENOENT;
}

/* A format line looks like
 *	field:const char * filename;	offset:24;	size:8;	signed:0;
 * The field's name is the last identifier before ';' or '['. */
static int line_names(const char *line, const char *field)
{
	const char *decl = strstr(line, "field:"), *end, *start;
	size_t len = strlen(field);

	if (!decl)
		return 0;
	end = strchr(decl, ';');
	if (!end)
		return 0;
	/* An array's size follows its name ("char comm[16]"); the brackets
	 * of "__data_loc char[] name" come before it. */
	if (end > decl && end[-1] == ']') {
		while (end > decl && *end != '[')
			end--;
	}
	start = end;
	while (start > decl && (start[-1] == '_' || (start[-1] >= '0' && start[-1] <= '9') ||
				((start[-1] | 0x20) >= 'a' && (start[-1] | 0x20) <= 'z')))
		start--;
	return (size_t)(end - start) == len && !strncmp(start, field, len);
}

int plyc_tp_field(const char *group, const char *event, const char *field,
		  uint32_t *offset, uint32_t *size)
{
	char path[PATH_MAX], line[512];
	const char *root = plyc_tracefs();
	FILE *fp;
	int err = -ENOENT;

	if (!root)
		return -ENOSYS;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, group, event);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		const char *o, *s;

		if (!line_names(line, field))
			continue;
		o = strstr(line, "offset:");
		s = strstr(line, "size:");
		if (!o || !s)
			break;
		*offset = (uint32_t)strtoul(o + 7, NULL, 10);
		*size = (uint32_t)strtoul(s + 5, NULL, 10);
		err = 0;
		break;
	}
	fclose(fp);
	return err;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int plyc_tp_glob(const char *group, const char *glob,
		 int (*fn)(const char *group, const char *event, void *arg), void *arg)
{
	char path[PATH_MAX];
	const char *root = plyc_tracefs();
	struct dirent **names;
	int n, i, matched = 0, err = 0;

	if (!root)
		return -ENOSYS;
	snprintf(path, sizeof(path), "%s/events/%s", root, group);
	n = scandir(path, &names, NULL, by_name);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		const char *ev = names[i]->d_name;

		if (!err && ev[0] != '.' && strcmp(ev, "enable") && strcmp(ev, "filter") &&
		    plyc_glob_match(glob, ev)) {
			err = fn(group, ev, arg);
			matched++;
		}
		free(names[i]);
	}
	free(names);
	return err < 0 ? err : matched;
}
