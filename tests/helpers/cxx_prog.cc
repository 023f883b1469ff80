// C++ frames for the demangling tests (tests/test_demangle.py): a user
// stack through a namespace, a class template's methods (const, static, an
// operator), a function template and the anonymous namespace, with
// std::string, std::vector and std::map parameters. cxx_prog N calls the
// chain N times, then cxx_done() once, then sleeps half a second so that a
// tracer names the frames while the process lives. Built with frame
// pointers and without small-function inlining (the test's g++ line).
#include <string>
#include <vector>
#include <map>
#include <cstdlib>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

extern "C" NOINLINE int cxx_leaf(void *fn, int n) { asm volatile("" ::: "memory"); return n + (fn != 0); }
extern "C" NOINLINE void cxx_done(void) { asm volatile("" ::: "memory"); }

namespace plyc { namespace demo {

template <typename T> struct Box {
	T value;
	NOINLINE int run(const std::string &name, const std::vector<T> &v) const;
	NOINLINE static int make(unsigned long n, const char *tag);
	NOINLINE bool operator==(const Box &o) const;
};

NOINLINE int free_fn(std::map<std::string, int> &m, double d);

} }

namespace {
NOINLINE int hidden(int (*cb)(void *, int), long x) { return cb((void *)&hidden, (int)x); }
}

template <typename T> NOINLINE T twice(T x) { return hidden(cxx_leaf, (long)x) + x; }

namespace plyc { namespace demo {
template <typename T> int Box<T>::run(const std::string &name, const std::vector<T> &v) const {
	return twice<int>((int)v.size() + (int)name.size() + (int)value);
}
template <typename T> int Box<T>::make(unsigned long n, const char *tag) {
	Box<T> b{(T)n}; std::vector<T> v(n); return b.run(tag, v);
}
template <typename T> bool Box<T>::operator==(const Box &o) const { return make(1, "eq") == o.value; }
int free_fn(std::map<std::string, int> &m, double d) {
	Box<int> a{1}, b{2};
	return (a == b) + (int)m.size() + (int)d;
}
} }

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1;
	std::map<std::string, int> m;
	for (int i = 0; i < n; i++)
		plyc::demo::free_fn(m, 1.5);
	cxx_done();
	usleep(500 * 1000);   // the tracer names the frames while the process lives
	return 0;
}
