"""bpftrace 0.27's sid chroot (tests/bpftrace_sid.py): built once, by one
process however many ask at once, renamed into place whole; run with the
kernel's folders bound in a mount namespace of its own, none left on the
host. The builds here use a stand-in debootstrap (a shell script on PATH)
in a cache of their own; the last tests run the real one, the fixture's."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bpftrace_sid
import skips

TESTS = Path(__file__).resolve().parent


def fake_debootstrap(tmp_path: Path, exit_status: int = 0) -> dict:
    """An environment whose debootstrap logs its arguments, sleeps a moment
    (long enough for a second builder to arrive) and makes a chroot with an
    empty usr/bin/bpftrace, or exits `exit_status` leaving its log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "debootstrap"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" >> {tmp_path}/calls
        dir=$(eval echo \\${{$(($#-1))}})
        mkdir -p "$dir/usr/bin" "$dir/debootstrap" "$dir/var/cache/apt/archives" "$dir/var/lib/apt/lists"
        touch "$dir/var/cache/apt/archives/x.deb" "$dir/var/lib/apt/lists/deb_sid_Packages"
        sleep 1
        if [ {exit_status} != 0 ]; then echo "E: Couldn't download packages" > "$dir/debootstrap/debootstrap.log"; exit {exit_status}; fi
        touch "$dir/usr/bin/bpftrace"
        """))
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "PLYC_BPFTRACE_SID": str(tmp_path / "cache")}


# ensure() in a process of its own, the archive taken as reachable
ENSURE = ("import sys; sys.path.insert(0, %r); import bpftrace_sid as b; "
          "b.archive_reachable = lambda: True; print(b.ensure())" % str(TESTS))


def test_built_once_by_one_of_two_concurrent_builders(tmp_path):
    env = fake_debootstrap(tmp_path)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "root-1").mkdir()     # an older layout's chroot
    procs = [subprocess.Popen([sys.executable, "-c", ENSURE], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    root = tmp_path / "cache" / f"root-{bpftrace_sid.LAYOUT}"
    assert outs == [str(root)] * 2
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 1, calls
    assert calls[0].startswith("--variant=minbase --include=bpftrace,libc6-dev ") and " sid " in calls[0]
    # renamed into place whole; apt's downloads and lists dropped; the old layout gone
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["lock", root.name]
    assert (root / "usr" / "bin" / "bpftrace").exists()
    assert not list((root / "var" / "cache" / "apt" / "archives").iterdir())
    assert not list((root / "var" / "lib" / "apt" / "lists").iterdir())
    # a third call finds it and runs nothing
    again = subprocess.run([sys.executable, "-c", ENSURE], env=env, capture_output=True, text=True)
    assert again.stdout.strip() == str(root) and len((tmp_path / "calls").read_text().splitlines()) == 1


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path):
    env = fake_debootstrap(tmp_path, exit_status=2)
    proc = subprocess.run([sys.executable, "-c", ENSURE], env=env, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "RuntimeError: debootstrap sid failed (exit 2):\nE: Couldn't download packages" in proc.stderr
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["lock"]


def test_without_the_archive_the_reason_is_an_allowed_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("PLYC_BPFTRACE_SID", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", f"{fake_debootstrap(tmp_path)['PATH']}")
    monkeypatch.setattr(bpftrace_sid, "archive_reachable", lambda: False)
    with pytest.raises(bpftrace_sid.Unavailable) as e:
        bpftrace_sid.ensure()
    assert skips.allowed(str(e.value)) == "no network to Debian's archive"
    assert not (tmp_path / "calls").exists()


def test_the_command_execs_down_to_bpftrace_in_a_private_mount_namespace():
    argv = bpftrace_sid.command(["-e", "BEGIN { exit(); }"], cwd="/tmp/x y", chroot=Path("/c"))
    assert argv[:5] == ["unshare", "-m", "--propagation", "private", "sh"]
    script = argv[6]
    assert script.startswith("mount --rbind /proc /c/proc; mount --rbind /sys /c/sys; "
                             "mount --rbind /dev /c/dev; mount --rbind /tmp /c/tmp; exec chroot /c sh -c ")
    assert argv[7:] == ["sh", "/tmp/x y", "-e", "BEGIN { exit(); }"]


@pytest.mark.bpf
def test_bpftrace_0_27_runs_in_its_cwd_and_leaves_no_mount(bpftrace27, tmp_path):
    (tmp_path / "here.txt").write_text("seen from the chroot\n")
    proc = subprocess.run(bpftrace27(["-e", 'BEGIN { cat("here.txt"); printf("v%d\\n", 27); exit(); }'],
                                     tmp_path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip("\n") == "seen from the chroot\nv27"
    assert "Attached 1 probe" in proc.stderr
    version = subprocess.run(bpftrace27(["--version"]), capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("bpftrace v0.27."), version
    assert str(bpftrace_sid.root()) not in Path("/proc/self/mounts").read_text()
