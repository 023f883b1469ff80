/* A C file bpftrace scripts import in the tests (import "...bpf.c"). */
int bt_test_add_one(int v) { return v + 1; }
