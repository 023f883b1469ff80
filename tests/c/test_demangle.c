/* The demangler of the tracer's runtime (runtime-c/symbols/demangle.c),
 * one name a line: its text, or "?NAME" where it gives up (the tracer
 * prints the name as the symbol table has it). tests/test_demangle.py
 * holds the lines to the C++ library's demangler. */
#include <stdio.h>
#include <string.h>

#include "plyc_rt.h"

int main(void)
{
	static char line[1 << 16], out[1 << 16];

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (plyc_demangle(line, out, sizeof(out)) == 0)
			puts(out);
		else
			printf("?%s\n", line);
	}
	return 0;
}
