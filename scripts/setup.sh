#!/bin/sh
# Installs what plyc needs on Debian 12, as root. Idempotent: does nothing
# that is already done.
#   sh scripts/setup.sh demo   what `make demo` needs: build a tracer for this
#                              machine and run it (plyc's own packages)
#   sh scripts/setup.sh        that, and what `make test` needs besides: the
#                              cross compilers, qemu, prometheus, bpftrace,
#                              debootstrap and the test tools
set -eu

PART=${1:-test}
case "$PART" in demo|test) ;; *) echo "usage: sh scripts/setup.sh [demo|test]" >&2; exit 2 ;; esac

# The demo: clang for the BPF side, gcc and the static libraries for the
# loader (docs/install.md, "What the build machine needs besides").
DEMO_APT="clang llvm gcc libc6-dev make libbpf-dev libelf-dev zlib1g-dev linux-libc-dev pkg-config python3 python3-pip"
# plyc's own dependencies (pyproject.toml).
DEMO_PY="lark[interegular]>=1.1 jinja2>=3.0 pycparser>=2.21"
DEMO_IMPORTS="lark, jinja2, pycparser, interegular"

TEST_APT="bpftool qemu-system-x86 qemu-system-arm qemu-system-misc gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross
gcc-arm-linux-gnueabi libc6-dev-armel-cross
gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
gcc-mipsel-linux-gnu libc6-dev-mipsel-cross gcc-mips64el-linux-gnuabi64 libc6-dev-mips64el-cross
gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross gcc-s390x-linux-gnu libc6-dev-s390x-cross
gcc-mips-linux-gnu libc6-dev-mips-cross qemu-system-mips qemu-system-ppc
systemtap-sdt-dev g++ qemu-user-static file binutils dwarves zstd prometheus
dpkg-dev debian-archive-keyring bpftrace python3-venv debootstrap"
# g++: the C++ program and the C++ library's demangler, tests/test_demangle.py's references.
# debootstrap: the tests' second bpftrace, Debian sid's 0.27, runs from a sid
# chroot they build once into ~/.cache/plyc (tests/bpftrace_sid.py).
# ziglang: zig's cc, the compiler of musl tracers (--libc musl) for every target.
# pytest-xdist: make test runs the tests that load nothing into the kernel
# on every CPU at once. build: tests/test_install.py builds the sdist as a
# release would (python3 -m build).
TEST_PY="pytest>=7 pytest-xdist>=3 hypothesis>=6 ziglang>=0.13 build>=1"
# build.env, not build: a build/ folder left in the checkout imports as an
# empty namespace package.
TEST_IMPORTS="pytest, xdist, hypothesis, ziglang, build.env"

APT_PACKAGES=$DEMO_APT PY_PACKAGES=$DEMO_PY IMPORTS=$DEMO_IMPORTS
if [ "$PART" = test ]; then
	APT_PACKAGES="$DEMO_APT $TEST_APT" PY_PACKAGES="$DEMO_PY $TEST_PY" IMPORTS="$DEMO_IMPORTS, $TEST_IMPORTS"
fi

missing=""
for p in $APT_PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	# prometheus (promtool, and a server for tests/test_metrics.py, which
	# start their own on 127.0.0.1): the service Debian may start is not used
	case " $missing " in *" prometheus "*)
		command -v systemctl >/dev/null && systemctl disable --now prometheus >/dev/null 2>&1 || true ;;
	esac
fi

PY=${PYTHON:-python3}
if ! $PY -c "import $IMPORTS" 2>/dev/null; then
	echo "setup: installing Python packages"
	# Debian's python3 is externally managed; pyenv's and venvs are not.
	# shellcheck disable=SC2086
	$PY -m pip install -q $PY_PACKAGES 2>/dev/null ||
		$PY -m pip install -q --break-system-packages $PY_PACKAGES
fi

if [ "$PART" = test ]; then
	# tests/test_install.py installs plyc into venvs made with $PY: Debian's
	# python3 has the venv module's ensurepip only with python3-venv (above).
	$PY -c 'import venv, ensurepip' 2>/dev/null ||
		echo "setup: warning: $PY cannot make venvs (no ensurepip): tests/test_install.py will fail" >&2
fi

# tracefs is not mounted at boot on some machines; plyc and its tracers
# mount it themselves when they can, this just saves them the trouble.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
fi
echo "setup: ok ($PART)"
