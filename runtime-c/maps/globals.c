/* The BPF program's global variables, in its .rodata and .bss maps: where
 * one is (from the BTF), and editing .rodata before the load (the
 * loader's parameters, the output's ring buffer flag). plyc_loader.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"

/* The map holding global variable `var` of data section `secname`
 * (".rodata", ".bss") and the variable's offset in it, from the BTF. */
struct bpf_map *plyc_global_var(struct bpf_object *obj, const char *secname, const char *var,
				size_t *offset)
{
	struct bpf_map *map, *found = NULL;
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	int id, i;

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		const char *dot = strrchr(name, '.');

		if (dot && !strcmp(dot, secname)) {
			found = map;
			break;
		}
	}
	if (!found || !btf)
		return NULL;
	id = btf__find_by_name_kind(btf, secname, BTF_KIND_DATASEC);
	if (id < 0)
		return NULL;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (!strcmp(btf__name_by_offset(btf, v->name_off), var)) {
			*offset = vs->offset;
			return found;
		}
	}
	return NULL;
}

/* libbpf hands out .rodata read-only before load: a variable of it is
 * changed in a copy of the section, which is put back. */
int plyc_edit_rodata(struct bpf_object *obj, const char *var, size_t len,
		     int (*edit)(char *bytes, const void *arg), const void *arg)
{
	size_t offset = 0, size = 0;
	struct bpf_map *map = plyc_global_var(obj, ".rodata", var, &offset);
	const void *image = map ? bpf_map__initial_value(map, &size) : NULL;
	char *copy;
	int err;

	if (!image || offset + len > size)
		return -ENOENT;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	err = edit(copy + offset, arg);
	if (!err && bpf_map__set_initial_value(map, copy, size))
		err = -errno;
	free(copy);
	return err;
}
