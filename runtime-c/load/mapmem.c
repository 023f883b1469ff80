/* The kernel memory of the tracer's maps: what it locks (-v), and which
 * keyed aggregations are allocated as keys come.
 *
 * Preallocated, a keyed histogram (one value per key that every CPU adds
 * to: plyc/codegen/resources.py, storage()) locks 1024 values, 0.6 MB,
 * whatever the script sees, and a keyed count() 4096 values on each CPU.
 * With BPF_F_NO_PREALLOC the kernel allocates a key's element when the key
 * first comes, from its BPF memory allocator (Linux 6.1; before, the
 * verifier refuses such a map in perf_event programs and calls it unsafe in
 * the other tracing ones). That allocator never allocates in the probe: it
 * takes from a per-CPU cache and refills it from irq_work, which runs only
 * once interrupts are on again (kernel/bpf/memalloc.c, unit_alloc). A
 * cache starts with one element (four for small ones) and a per-CPU value's
 * cache keeps one to three, refilled one at a time from the per-CPU pool
 * without waiting (GFP_NOWAIT), which a burst of new keys empties. So a
 * new key is refused -ENOMEM, an update lost where a preallocated map (and
 * bpftrace, which preallocates) loses none:
 * - in a probe that runs with interrupts off (perf_event: interval,
 *   profile; kprobes; tracepoints inside the kernel's locks) as soon as it
 *   adds a second new key before interrupts come back on: `i:ms:1 {
 *   @a["one"] = count(); @a["two"] = count(); }` lost "two"'s first update
 *   every run here (6.18);
 * - in any probe, for a per-CPU value, in a burst: 46 of 100,000 new keys
 *   of a keyed count() on sys_enter_getppid here.
 * Only a shared value (a keyed histogram on a 64-bit target) updated by
 * probes that run in a task's context with interrupts on (system calls,
 * user probes, BEGIN/END, iterators: plyc_map.grow, from resources.py's
 * grows()) is allocated as its keys come: irq_work refills the cache before
 * the next key (300,000 new keys, three a system call: none lost). Every
 * other map is preallocated, as bpftrace's are (measured with -v, 2 CPUs: a
 * keyed count() 427 KB, as 0.27's; a keyed hist() 633 KB whatever the CPUs,
 * 0.27's, keyed per bucket and per CPU, 460 KB here and some 2.5 MB on 64
 * CPUs, computed). A genuine -ENOMEM left (the kernel out of memory) is
 * counted as such, not as a full map (plyc.bpf.h). LRU maps are always preallocated. PLYC_PREALLOC=1
 * preallocates every map on any kernel; PLYC_GROW_MAPS=1 allocates every
 * keyed aggregation as keys come where the kernel can, for less memory at
 * the risk above (each lost update told, the run failed). */
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
	int i, keyed = 0, grow = -1;
	char grown[256];
	size_t n = 0;

	grown[0] = 0;
	for (i = 0; i < prog->nmaps; i++) {
		const struct plyc_map *pm = &prog->maps[i];
		struct bpf_map *m;

		if (pm->agg == PLYC_A_NONE || !pm->nkeys)
			continue;
		keyed = 1;
		if (!pm->grow && !getenv("PLYC_GROW_MAPS"))
			continue;
		if (grow < 0)
			grow = !getenv("PLYC_PREALLOC") && kernel_grows_maps();
		m = bpf_object__find_map_by_name(obj, prog->map_cnames[i]);
		/* the kernel preallocates LRU maps (the script's `percpulruhash(N)`)
		 * and refuses them BPF_F_NO_PREALLOC; resources.py leaves them out */
		if (!grow || !m || bpf_map__type(m) == BPF_MAP_TYPE_LRU_HASH ||
		    bpf_map__type(m) == BPF_MAP_TYPE_LRU_PERCPU_HASH)
			continue;
		if (bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC)) {
			fprintf(stderr, "%s: cannot set up map %s: %s\n", prog->name, pm->name, strerror(errno));
			return -1;
		}
		if (n < sizeof(grown))
			n += (size_t)snprintf(grown + n, sizeof(grown) - n, "%s%s", n ? ", " : "", pm->name);
	}
	if (verbose && keyed)
		fprintf(stderr, "%s: keyed aggregations: %s%s\n", prog->name, n ? grown : "preallocated",
			n ? " allocated as keys come, the others preallocated" : "");
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
