"""plyc/arch.py's table: byte order, the BPF target it gives clang, how a
`uname -m` is matched, and the lab guests' link to it (no guest booted)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "vm"))

import lab  # noqa: E402
from plyc import arch as A  # noqa: E402


def test_big_endian_targets_build_bpfeb():
    assert {a.name for a in A.ARCHES.values() if a.bpf_target == "bpfeb"} == {"s390x", "mips"}
    assert all(a.bpf_target == "bpfel" for a in A.ARCHES.values() if not a.big_endian)


def test_uname_mips_is_told_apart_by_byte_order(monkeypatch):
    # Both 32-bit MIPS byte orders say "mips"; an explicit machine matches the first.
    monkeypatch.setattr(A.sys, "byteorder", "big")
    monkeypatch.setattr(A.os, "uname", lambda: type("U", (), {"machine": "mips"})())
    assert A.host_target() == "mips"
    monkeypatch.setattr(A.sys, "byteorder", "little")
    assert A.host_target() == "mipsel"
    assert A.host_target("s390x") == "s390x" and A.host_target("ppc64le") == "ppc64le"
    assert A.host_target("mips64") == "mips64el"


def test_32_bit_mips_tells_the_bpf_side_its_word():
    assert A.get("mipsel").bpf_defines == A.get("mips").bpf_defines == ("PLYC_MIPS32",)
    assert A.get("mips64el").bpf_defines == ()
    assert A.get("mips").from_source and not A.get("mipsel").from_source


def test_every_guest_runs_a_plyc_target():
    for g in lab.ARCHES.values():
        assert g.target in A.ARCHES, g.name


def test_s390x_console_is_the_sclp_on_a_file(tmp_path):
    k = lab.Kernel("s390x", "6.1", "p", "1", "r", tmp_path / "img", tmp_path / "img", None, None)
    cmd = lab._qemu_command(lab.ARCHES["s390x"], k, "256M", tmp_path)
    assert "-serial" not in cmd
    assert cmd[cmd.index("-chardev") + 1] == f"file,id=console,path={tmp_path / 'console.log'}"
    assert "sclpconsole,chardev=console" in cmd
    assert "console=ttysclp0" in cmd[cmd.index("-append") + 1]


def test_every_target_has_its_header_folders():
    """arch.header_dirs(): the target's own C library and UAPI headers
    (scripts/setup.sh installs every cross C library), asm/ among them."""
    for a in A.ARCHES.values():
        dirs = [Path(d) for d in a.header_dirs()]
        assert any((d / "asm" / "unistd.h").is_file() for d in dirs), (a.name, dirs)
        assert a.triplet in str(dirs[0])
