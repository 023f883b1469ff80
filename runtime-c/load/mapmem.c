/* The kernel memory of the tracer's maps: what it locks (-v), and keyed
 * aggregations allocated as keys come where the kernel allows it.
 *
 * Preallocated, a keyed histogram (one value per key that every CPU adds
 * to: plyc/codegen/resources.py, storage()) locks 1024 values, 0.6 MB,
 * whatever the script sees, and a keyed count() 4096 values on each CPU.
 * With BPF_F_NO_PREALLOC the kernel allocates a key's value when the key
 * first comes, from its BPF memory allocator, which any context may call
 * (Linux 6.1); an aggregation's keys are never deleted while tracing, so
 * that is once per key. Before 6.1, the verifier refuses such a map in
 * perf_event programs and calls it unsafe in the other tracing ones: there
 * they stay preallocated. So do the plain maps (@start[tid] = ...), whose
 * keys come and go with every event, and LRU maps. PLYC_PREALLOC=1 keeps every map
 * preallocated on any kernel. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"

/* Does the verifier take a hash map allocated as it grows in a perf_event
 * program? The kernels that do have the allocator that makes it safe. */
static int kernel_grows_maps(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int map, prog;

	map = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(uint32_t), sizeof(uint64_t), 1, &mopts);
	if (map < 0)
		return 0;
	insns[0].imm = map;
	prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (prog < 0)
		return 0;
	close(prog);
	return 1;
}

int plyc_maps_prepare(const struct plyc_program *prog, struct bpf_object *obj, int verbose)
{
	int i, grow = -1;

	for (i = 0; i < prog->nmaps; i++) {
		const struct plyc_map *pm = &prog->maps[i];
		struct bpf_map *m;

		if (pm->agg == PLYC_A_NONE || !pm->nkeys)
			continue;
		if (grow < 0) {
			grow = !getenv("PLYC_PREALLOC") && kernel_grows_maps();
			if (verbose)
				fprintf(stderr, "%s: keyed aggregations: %s\n", prog->name,
					grow ? "allocated as keys come" : "preallocated");
		}
		m = bpf_object__find_map_by_name(obj, prog->map_cnames[i]);
		/* the kernel preallocates LRU maps (the script's `percpulruhash(N)`)
		 * and refuses them BPF_F_NO_PREALLOC */
		if (m && (bpf_map__type(m) == BPF_MAP_TYPE_LRU_HASH ||
			  bpf_map__type(m) == BPF_MAP_TYPE_LRU_PERCPU_HASH))
			continue;
		if (grow && m && bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC)) {
			fprintf(stderr, "%s: cannot set up map %s: %s\n", prog->name, pm->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The bytes of kernel memory a map fd locks, as the kernel counts them. */
static uint64_t fd_memlock(int fd)
{
	char path[64], line[128];
	uint64_t bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

void plyc_maps_report_memory(const char *name, struct bpf_object *obj, const char *when)
{
	struct bpf_map *m;
	uint64_t total = 0;
	char each[1024];
	size_t n = 0;

	each[0] = 0;
	bpf_object__for_each_map(m, obj) {
		uint64_t b = bpf_map__fd(m) >= 0 ? fd_memlock(bpf_map__fd(m)) : 0;

		total += b;
		if (n < sizeof(each))
			n += (size_t)snprintf(each + n, sizeof(each) - n, "%s%s %" PRIu64, n ? ", " : "",
					      bpf_map__name(m), b);
	}
	fprintf(stderr, "%s: kernel memory locked by the maps %s: %" PRIu64 " bytes (%s)\n",
		name, when, total, each);
}
