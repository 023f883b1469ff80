/* Built into the libbpf.a plyc makes (plyc/musl.py) in place of libbpf's
   gen_loader.c: a tracer never asks libbpf for a loader program (the
   light skeleton's bpf_object__gen_loader(), the only way obj->gen_loader
   is set), yet bpf_object__load() calls the generator, so the link kept
   all of it (9.5 KB on MIPS). Should anything set a generator, these
   fail its build with EOPNOTSUPP rather than do nothing. */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include "relo_core.h"
#include "bpf_gen_internal.h"

void bpf_gen__init(struct bpf_gen *gen, int log_level, int nr_progs, int nr_maps)
{
	(void)log_level, (void)nr_progs, (void)nr_maps;
	gen->error = -EOPNOTSUPP;
}

int bpf_gen__finish(struct bpf_gen *gen, int nr_progs, int nr_maps)
{
	(void)nr_progs, (void)nr_maps;
	return gen->error = -EOPNOTSUPP;
}

void bpf_gen__free(struct bpf_gen *gen)
{
	free(gen);
}

void bpf_gen__load_btf(struct bpf_gen *gen, const void *raw_data, __u32 raw_size)
{
	(void)raw_data, (void)raw_size;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__map_create(struct bpf_gen *gen, enum bpf_map_type map_type, const char *map_name,
			 __u32 key_size, __u32 value_size, __u32 max_entries,
			 struct bpf_map_create_opts *map_attr, int map_idx)
{
	(void)map_type, (void)map_name, (void)key_size, (void)value_size, (void)max_entries;
	(void)map_attr, (void)map_idx;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__prog_load(struct bpf_gen *gen, enum bpf_prog_type prog_type, const char *prog_name,
			const char *license, struct bpf_insn *insns, size_t insn_cnt,
			struct bpf_prog_load_opts *load_attr, int prog_idx)
{
	(void)prog_type, (void)prog_name, (void)license, (void)insns, (void)insn_cnt;
	(void)load_attr, (void)prog_idx;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__map_update_elem(struct bpf_gen *gen, int map_idx, void *value, __u32 value_size)
{
	(void)map_idx, (void)value, (void)value_size;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__map_freeze(struct bpf_gen *gen, int map_idx)
{
	(void)map_idx;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__record_attach_target(struct bpf_gen *gen, const char *name, enum bpf_attach_type type)
{
	(void)name, (void)type;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__record_extern(struct bpf_gen *gen, const char *name, bool is_weak, bool is_typeless,
			    int kind, int insn_idx)
{
	(void)name, (void)is_weak, (void)is_typeless, (void)kind, (void)insn_idx;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__record_relo_core(struct bpf_gen *gen, const struct bpf_core_relo *core_relo)
{
	(void)core_relo;
	gen->error = -EOPNOTSUPP;
}

void bpf_gen__populate_outer_map(struct bpf_gen *gen, int outer_map_idx, int key, int inner_map_idx)
{
	(void)outer_map_idx, (void)key, (void)inner_map_idx;
	gen->error = -EOPNOTSUPP;
}
