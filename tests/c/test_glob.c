/* Drives the runtime's wildcard matching (runtime-c/core/glob.c) for
 * tests/test_glob.py: for each line "PATTERN<TAB>NAME" of the input, prints
 * "OURS THEIRS": 1 or 0 for plyc_glob_match and for the C library's
 * fnmatch(PATTERN, NAME, 0) == 0 (glibc's, the reference). */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "plyc_rt.h"

int main(void)
{
	static char line[65536];

	while (fgets(line, sizeof(line), stdin)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			return 2;
		*tab = '\0';
		tab[1 + strcspn(tab + 1, "\n")] = '\0';
		printf("%d %d\n", plyc_glob_match(line, tab + 1), fnmatch(line, tab + 1, 0) == 0);
	}
	return fflush(stdout) ? 1 : 0;
}
