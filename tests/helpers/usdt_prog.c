/* A program with USDT probes (sys/sdt.h) for the usdt tests: plyctest:tick
 * fires N times with (i, i * 10). */
#include <sys/sdt.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 3;
	for (int i = 0; i < n; i++)
		DTRACE_PROBE2(plyctest, tick, i, i * 10);
	return 0;
}
