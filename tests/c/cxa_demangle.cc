// The C++ library's demangler (abi::__cxa_demangle, what bcc and so
// bpftrace print user symbols with), one name a line: its text, or "?NAME"
// where it refuses. The reference of tests/test_demangle.py.
#include <cxxabi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main()
{
	static char line[1 << 16];

	while (fgets(line, sizeof(line), stdin)) {
		int status;
		char *text;

		line[strcspn(line, "\n")] = 0;
		text = abi::__cxa_demangle(line, nullptr, nullptr, &status);
		if (text) {
			puts(text);
			free(text);
		} else {
			printf("?%s\n", line);
		}
	}
	return 0;
}
