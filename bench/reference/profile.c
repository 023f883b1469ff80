/* Reference: sample kernel stacks at 99 Hz on every CPU; on exit, print
 * each stack (symbols from /proc/kallsyms) with its count. */
#include "common.h"
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "profile.skel.h"

#define MAX_DEPTH 127
#define MAX_CPUS 1024

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *ksyms;
static size_t nksyms;
static int ksyms_loaded;

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Read once, when the first address needs a name. */
static void load_ksyms(void)
{
	FILE *f;
	char name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	ksyms_loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (nksyms == cap) {
			cap = cap ? 2 * cap : 4096;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
			if (!ksyms)
				break;
		}
		ksyms[nksyms].addr = addr;
		ksyms[nksyms++].name = strdup(name);
	}
	fclose(f);
	if (ksyms)
		qsort(ksyms, nksyms, sizeof(*ksyms), by_addr);
}

static const struct ksym *ksym_of(uint64_t addr)
{
	size_t lo = 0, hi;

	if (!ksyms_loaded)
		load_ksyms();
	hi = nksyms;
	while (lo < hi) {		/* the last symbol at or below addr */
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ksyms[lo - 1] : NULL;
}

struct entry {
	int64_t id;
	uint64_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = 99,
		.freq = 1,
	};
	struct bpf_link *links[MAX_CPUS] = { 0 };
	struct opts o = { 0 };
	struct profile_bpf *skel;
	struct entry *entries = NULL;
	uint64_t ips[MAX_DEPTH];
	int64_t key, next;
	size_t n = 0, cap = 0, i;
	int ncpus = libbpf_num_possible_cpus(), nlinks = 0, cpu, fd, sfd, err, j;

	if (setup(argc, argv, &o))
		return 1;
	skel = profile_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "profile: cannot load: %s\n", strerror(errno));
		return 1;
	}
	for (cpu = 0; cpu < ncpus && cpu < MAX_CPUS; cpu++) {
		int pfd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (pfd < 0)
			continue;	/* an offline CPU */
		links[cpu] = bpf_program__attach_perf_event(skel->progs.sample, pfd);
		if (!links[cpu]) {
			fprintf(stderr, "profile: cannot attach on CPU %d: %s\n", cpu, strerror(errno));
			close(pfd);
			goto out;
		}
		nlinks++;
	}
	attached(&o, nlinks);
	err = run(&o, NULL, NULL);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		bpf_link__destroy(links[cpu]);
		links[cpu] = NULL;
	}

	fd = bpf_map__fd(skel->maps.counts);
	sfd = bpf_map__fd(skel->maps.stacks);
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			entries = realloc(entries, cap * sizeof(*entries));
			if (!entries)
				return 1;
		}
		entries[n].id = next;
		if (percpu_sum(fd, &next, &entries[n].count, 1) == 0)
			n++;
		key = next;
	}
	qsort(entries, n, sizeof(*entries), by_count);
	printf("\n@:\n");
	for (i = 0; i < n; i++) {
		uint32_t id = (uint32_t)entries[i].id;

		printf("{\n");
		memset(ips, 0, sizeof(ips));
		if (entries[i].id >= 0 && !bpf_map_lookup_elem(sfd, &id, ips)) {
			for (j = 0; j < MAX_DEPTH && ips[j]; j++) {
				const struct ksym *s = ksym_of(ips[j]);

				if (s)
					printf("\t%s+%llu\n", s->name, (unsigned long long)(ips[j] - s->addr));
				else
					printf("\t0x%llx\n", (unsigned long long)ips[j]);
			}
		}
		printf("}: %llu\n", (unsigned long long)entries[i].count);
	}
	free(entries);
out:
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		bpf_link__destroy(links[cpu]);
	profile_bpf__destroy(skel);
	return 0;
}
