#!/bin/sh
# Installs what plyc needs to build and test tracers on Debian 12, as root.
# Idempotent: does nothing that is already done.
set -eu

APT_PACKAGES="clang llvm gcc make libbpf-dev libelf-dev zlib1g-dev linux-libc-dev pkg-config
bpftool qemu-system-x86 qemu-system-arm qemu-system-misc gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross
gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
gcc-mipsel-linux-gnu libc6-dev-mipsel-cross gcc-mips64el-linux-gnuabi64 libc6-dev-mips64el-cross
gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross gcc-s390x-linux-gnu libc6-dev-s390x-cross
gcc-mips-linux-gnu libc6-dev-mips-cross qemu-system-mips qemu-system-ppc
python3 python3-pip systemtap-sdt-dev qemu-user-static file binutils dwarves zstd prometheus
dpkg-dev debian-archive-keyring bpftrace python3-venv debootstrap"
# debootstrap: the tests' second bpftrace, Debian sid's 0.27, runs from a sid
# chroot they build once into ~/.cache/plyc (tests/bpftrace_sid.py).
# ziglang: zig's cc, the compiler of musl tracers (--libc musl) for every target.
# pytest-xdist: make test runs the tests that load nothing into the kernel
# on every CPU at once. build: tests/test_install.py builds the sdist as a
# release would (python3 -m build).
PY_PACKAGES="lark[interegular]>=1.1 jinja2>=3.0 pycparser>=2.21 pytest>=7 pytest-xdist>=3 hypothesis>=6 ziglang>=0.13 build>=1"

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
# build.env, not build: a build/ folder left in the checkout imports as an
# empty namespace package.
if ! $PY -c 'import lark, jinja2, pycparser, pytest, xdist, hypothesis, interegular, ziglang, build.env' 2>/dev/null; then
	echo "setup: installing Python packages"
	# Debian's python3 is externally managed; pyenv's and venvs are not.
	$PY -m pip install -q $PY_PACKAGES 2>/dev/null ||
		$PY -m pip install -q --break-system-packages $PY_PACKAGES
fi

# tests/test_install.py installs plyc into venvs made with $PY: Debian's
# python3 has the venv module's ensurepip only with python3-venv (above).
$PY -c 'import venv, ensurepip' 2>/dev/null ||
	echo "setup: warning: $PY cannot make venvs (no ensurepip): tests/test_install.py will fail" >&2

# tracefs is not mounted at boot on some machines; plyc and its tracers
# mount it themselves when they can, this just saves them the trouble.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
fi
echo "setup: ok"
