# plyc: the two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
PLYC = $(PYTHON) -m plyc
OUT = out

.PHONY: setup setup-demo demo test test-fast vm-test examples bench golden clean

# Everything the tests need (the demo's packages too).
setup:
	@sh scripts/setup.sh test

# Only what building and running a tracer here needs.
setup-demo:
	@sh scripts/setup.sh demo

# The main job: build an example tracer and run it on this machine.
demo: setup-demo
	@mkdir -p $(OUT)
	$(PLYC) build examples/syscall-count.ply -o $(OUT)/syscall-count
	@ls -l $(OUT)/syscall-count
	$(OUT)/syscall-count -c 'ls -R /usr/share/doc > /dev/null; cat /etc/os-release > /dev/null'

# Two runs: the tests that load nothing into this machine's kernel on every
# CPU at once (pytest-xdist), the qemu guests one after the other on one of
# them (tests/conftest.py); then those that load BPF here, one at a time as
# their timings need. Both run even when the first fails, and share the
# tracers they build (tests/builds.py).
test: setup
	@rc=0; export PLYC_TEST_BUILDS=$$(mktemp -d -t plyc-test-builds-XXXXXX); \
	$(PYTHON) -m pytest -q -ra -n auto --dist loadgroup -m "not bpf" || rc=$$?; \
	$(PYTHON) -m pytest -q -ra -m bpf || rc=$$?; \
	rm -rf "$$PLYC_TEST_BUILDS"; exit $$rc

# Without the tests that load BPF (for machines where you are not root)
# or boot kernels in qemu.
test-fast: setup
	$(PYTHON) -m pytest -q -ra -n auto -m "not bpf and not vm"

# Only the tests in qemu guests: kprobe/kretprobe/fentry on Debian's 5.10, 6.1
# and 6.12 kernels, and cross-built tracers on arm64, armhf and riscv64 (Debian
# trixie's 6.12) (make test runs them too).
vm-test: setup
	$(PYTHON) -m pytest -q -ra -m vm

examples: setup-demo
	@mkdir -p $(OUT)
	@for f in examples/*.ply; do \
		n=$$(basename $$f .ply); echo "build $$f"; \
		$(PLYC) build $$f -o $(OUT)/$$n || exit 1; \
	done

# Rewrite tests/golden/ir/*.ir from the scripts beside them (.ply, .bt, .argdist; review the diff).
golden:
	$(PYTHON) tests/test_golden.py --update

bench: setup
	$(PYTHON) bench/run.py

clean:
	rm -rf $(OUT) .pytest_cache
