/* usyms.c's names for addresses in another process: usym_resolve PID ADDR...
 * prints, a line each, the address as bpftrace's ustack(perf) frame names it
 * (plyc_usym_bt with offset and module) and as usym() does. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "plyc_rt.h"

int main(int argc, char **argv)
{
	char a[PLYC_KSYM_LEN], b[PLYC_KSYM_LEN];
	uint32_t pid;
	int i;

	if (argc < 2)
		return 2;
	pid = (uint32_t)strtoul(argv[1], NULL, 10);
	for (i = 2; i < argc; i++) {
		uint64_t addr = strtoull(argv[i], NULL, 16);

		printf("%s|%s\n", plyc_usym_bt(pid, addr, 1, 1, a, sizeof(a)),
		       plyc_usym_bt(pid, addr, 0, 0, b, sizeof(b)));
	}
	return 0;
}
