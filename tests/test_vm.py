"""The qemu lab (tests/vm): stock Debian kernels booted under TCG.

Each test boots a guest (~5-10 s); the kernel is downloaded once into the
lab's cache and shared.  Skipped only when qemu is not installed.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

VM = Path(__file__).resolve().parent / "vm"
sys.path.insert(0, str(VM))
import lab  # noqa: E402

pytestmark = [
    pytest.mark.vm,
    pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None,
                       reason="qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"),
]


@pytest.fixture(scope="session")
def kernel61() -> lab.Kernel:
    return lab.kernel("x86_64", "6.1")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(VM / "run"), *args], capture_output=True,
                          timeout=300)


@pytest.mark.parametrize("version", ["5.10", "6.1", "6.12"])
def test_guest_runs_the_debian_kernel(version):
    k = lab.kernel("x86_64", version)
    assert k.release.startswith(version + ".")
    assert k.vmlinux.read_bytes()[:4] == b"\x7fELF"  # the BTF-carrying ELF we boot
    r = lab.run(["uname", "-r"], kernel=k)
    assert (r.status, r.stdout, r.stderr) == (0, k.release.encode() + b"\n", b"")
    print(f"{k.package} {k.package_version}: boot+run+poweroff {r.seconds:.1f} s")


def test_cli_propagates_exit_status(kernel61):
    p = cli("--", "sh", "-c", "exit 7")
    assert p.returncode == 7, p.stderr


def test_stdout_and_stderr_come_back_apart_and_exact(kernel61):
    # No newline translation, binary bytes intact, and a status with bit 7
    # set, which qemu's isa-debug-exit code alone cannot carry.
    script = r"printf 'out\n\r\001\377'; printf 'err\n' >&2; printf 'out2'; exit 200"
    r = lab.run(["sh", "-c", script], kernel=kernel61)
    assert r.stdout == b"out\n\r\x01\xffout2"
    assert r.stderr == b"err\n"
    assert r.status == 200


def test_cli_file_is_copied_and_runs(tmp_path, kernel61):
    src = tmp_path / "hello.c"
    src.write_text(r'''
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    printf("hello %s uid=%d\n", argc > 1 ? argv[1] : "?", (int)getuid());
    fprintf(stderr, "to stderr\n");
    return 42;
}
''')
    exe = tmp_path / "hello"
    subprocess.run(["gcc", "-static", "-O2", "-o", str(exe), str(src)], check=True)
    p = cli("--file", str(exe), "--", "./hello", "guest")
    assert (p.returncode, p.stdout, p.stderr) == (42, b"hello guest uid=0\n", b"to stderr\n")


def test_kprobes_work_in_the_guest(kernel61):
    # What this machine's kernel cannot do: define a kprobe, enable it, and
    # see it fire.  The shell's `read` calls read(2); busybox cat would use
    # sendfile and miss vfs_read.
    script = """
T=/sys/kernel/tracing
test -e $T/available_filter_functions || exit 2
grep -qx vfs_read $T/available_filter_functions || exit 3
echo 'p:myprobe vfs_read' > $T/kprobe_events || exit 4
cat $T/kprobe_events
echo 1 > $T/events/kprobes/myprobe/enable
read -r v < /proc/version
echo 0 > $T/events/kprobes/myprobe/enable
grep -c 'myprobe:' $T/trace
"""
    r = lab.run(["sh", "-c", script], kernel=kernel61)
    assert r.status == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "p:kprobes/myprobe vfs_read"
    assert int(lines[1]) > 0


@pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None,
                    reason="qemu-system-aarch64 not installed (apt-get install qemu-system-arm)")
@pytest.mark.parametrize("version", ["5.10", "6.1"])
def test_arm64_guest(version):
    # One boot for all of arm64's transport (framed on its single UART):
    # release, streams kept apart and exact, a high status, and kprobes.
    k = lab.kernel("arm64", version)
    assert k.release.startswith(version + ".")
    assert k.btf.read_bytes()[:4] == lab.BTF_MAGIC
    script = r"""
uname -r
printf 'raw\n\r\001' >&2
T=/sys/kernel/tracing
echo 'p:myprobe vfs_read' > $T/kprobe_events && cat $T/kprobe_events
exit 201
"""
    r = lab.run(["sh", "-c", script], arch="arm64", kernel=k)
    assert r.stdout.decode().splitlines() == [k.release, "p:kprobes/myprobe vfs_read"]
    assert r.stderr == b"raw\n\r\x01"
    assert r.status == 201


def test_raspberry_pi_zero_guest():
    # Debian's armel rpi kernel on qemu's raspi0 with the board's device tree
    # from its package: an ARMv6 core, the framed transport on its PL011, a
    # status back through the watchdog's poweroff.
    k = lab.kernel("armel", "6.1")
    assert k.release.endswith("-rpi") and k.btf is None and k.dtb.name == "bcm2835-rpi-zero.dtb"
    r = lab.run(["sh", "-c", "uname -rm; grep -m1 'model name' /proc/cpuinfo; printf 'raw\\n\\r\\001' >&2; exit 7"],
                arch="armel", kernel=k, timeout=300)
    assert r.stdout.decode().splitlines() == [f"{k.release} armv6l",
                                              "model name\t: ARMv6-compatible processor rev 7 (v6l)"]
    assert r.stderr == b"raw\n\r\x01"
    assert r.status == 7


@pytest.mark.skipif(shutil.which("qemu-system-riscv64") is None,
                    reason="qemu-system-riscv64 not installed (apt-get install qemu-system-misc)")
def test_riscv64_guest():
    # Debian trixie's riscv64 kernel and busybox, qemu's bundled OpenSBI: the
    # framed transport on its one UART, and kprobes as that kernel has them
    # (none on a function's ftrace site, its first 8 bytes).
    k = lab.kernel("riscv64", "6.12")
    assert k.release.startswith("6.12.") and k.release.endswith("-riscv64")
    assert k.btf.read_bytes()[:4] == lab.BTF_MAGIC
    script = r"""
uname -rm
printf 'raw\n\r\001' >&2
T=/sys/kernel/tracing
echo 'p:entry vfs_read' > $T/kprobe_events || echo refused
echo 'p:past vfs_read+8' > $T/kprobe_events && cat $T/kprobe_events
exit 202
"""
    r = lab.run(["sh", "-c", script], arch="riscv64", kernel=k)
    assert r.stdout.decode().splitlines() == [f"{k.release} riscv64", "refused",
                                              "p:kprobes/past vfs_read+8"]
    assert r.stderr == b"raw\n\r\x01sh: write error: Invalid argument\n"  # the refused kprobe
    assert r.status == 202
    with pytest.raises(lab.LabError, match="no 6.1 kernel for riscv64"):
        lab.kernel("riscv64", "6.1")


def test_riscv64_comes_from_trixie_through_a_private_source_list():
    rv = lab.ARCHES["riscv64"]
    assert lab._dist(rv, "6.12") == "trixie" and lab._meta(rv, "6.12") == "linux-image-riscv64"
    opts = lab._apt_options(rv, "trixie")
    assert f"Dir::Etc::SourceList={lab._apt_state(rv, 'trixie') / 'sources.list'}" in opts
    assert lab._sources_list(rv, "trixie") == (
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://deb.debian.org/debian trixie main\n")
    # The other arches keep their releases' meta-packages.
    assert lab._meta(lab.ARCHES["x86_64"], "6.12") == "linux-image-6.12-amd64"


def test_hung_guest_is_killed_at_timeout(kernel61):
    with pytest.raises(lab.LabTimeout, match="timed out after 3 s"):
        lab.run(["sleep", "600"], kernel=kernel61, timeout=3)


def test_bullseye_comes_through_a_private_source_list():
    # 5.10 is Debian 11's: apt gets a source list, lists, status and cache
    # of the lab's own for it, so the machine's apt never sees bullseye.
    x86 = lab.ARCHES["x86_64"]
    opts = lab._apt_options(x86, lab.DISTS["5.10"])
    state = lab._apt_state(x86, "bullseye")
    assert state.parent == lab.cache_dir() / "apt"
    for option in (f"Dir::Etc::SourceList={state / 'sources.list'}",
                   f"Dir::Etc::SourceParts={state / 'sources.list.d'}",
                   f"Dir::State::Lists={state / 'lists'}", f"Dir::State::status={state / 'status'}",
                   f"Dir::Cache={state / 'cache'}"):
        assert option in opts
    assert lab._sources_list(x86, "bullseye").splitlines() == [
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://deb.debian.org/debian bullseye main",
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://deb.debian.org/debian-security bullseye-security main"]
    # The security pool serves no arm64 or armhf files: main only.
    assert len(lab._sources_list(lab.ARCHES["arm64"], "bullseye").splitlines()) == 1
    # The machine's own release keeps the machine's sources.
    assert not any("SourceList" in o for o in lab._apt_options(x86))


def test_kernel_modules_come_from_the_kernels_package(kernel61):
    # Block drivers for cases that need a disk (loop for swapin's swap),
    # uncompressed for busybox's insmod, built for that very kernel.
    ko = lab.module(kernel61, "loop")
    data = ko.read_bytes()
    assert data[:4] == b"\x7fELF" and f"vermagic={kernel61.release} ".encode() in data
    with pytest.raises(lab.LabError, match="has no module nosuch among its block drivers"):
        lab.module(kernel61, "nosuch")
