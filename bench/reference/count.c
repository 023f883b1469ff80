/* Reference: count getppid() calls by task name; prints the counts on exit. */
#include "common.h"
#include "count.skel.h"

struct entry {
	char comm[16];
	uint64_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct count_bpf *skel;
	struct entry *entries = NULL;
	char key[16], next[16];
	size_t n = 0, cap = 0, i;
	int fd, err;

	if (setup(argc, argv, &o))
		return 1;
	skel = count_bpf__open_and_load();
	if (!skel || count_bpf__attach(skel)) {
		fprintf(stderr, "count: cannot load or attach: %s\n", strerror(errno));
		count_bpf__destroy(skel);
		return 1;
	}
	attached(&o, 1);
	err = run(&o, NULL, NULL);
	count_bpf__detach(skel);

	fd = bpf_map__fd(skel->maps.counts);
	for (err = bpf_map_get_next_key(fd, NULL, next); !err;
	     err = bpf_map_get_next_key(fd, key, next)) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			entries = realloc(entries, cap * sizeof(*entries));
			if (!entries)
				return 1;
		}
		memcpy(entries[n].comm, next, sizeof(next));
		if (percpu_sum(fd, next, &entries[n].count, 1) == 0)
			n++;
		memcpy(key, next, sizeof(key));
	}
	qsort(entries, n, sizeof(*entries), by_count);
	printf("\n@:\n");
	for (i = 0; i < n; i++)
		printf("{ %-16.16s }: %llu\n", entries[i].comm, (unsigned long long)entries[i].count);
	free(entries);
	count_bpf__destroy(skel);
	return 0;
}
