"""Runtime tests in stock Debian kernels under qemu (tests/vm/lab.py), for
what this machine's kernel can't run: kprobes, kretprobes, fentry, and
other architectures. Each tests/vm/cases/*.test file has the sections of
tests/runtime/*.test (see tests/test_runtime.py), plus:

  kernels    the kernels to run in (default: 5.10 6.1 6.12, or those the
             arch has: riscv64's 6.12)
  arch       x86_64 (default), arm64, armhf, riscv64, mipsel, mips64el,
             ppc64le or s390x (tests/vm/lab.py's
             names): the tracer is cross-built for the arch's plyc target;
             one line per arch, each optionally followed by its own kernels
             (`armhf 5.10 6.1`), for a case that runs on several
  run-env    NAME=VALUE lines for the tracer's environment in the guest
  build      plyc build options; {kernel-btf} is the guest kernel's BTF (made
             from its -dbg package where the kernel has none)
  command    instead of args: a shell command line, {tracer} being the tracer
  example    instead of script: a file of examples/ to run as it is
  bpftrace   instead of script: a bpftrace script (built as a .bt file)
  argdist    instead of script: `plyc argdist` options (x86_64 guests)
  modules    kernel modules copied into /lab as NAME.ko for the case to
             insmod (lab.module(): loop, brd, ... of the kernel's package)

{ksym:NAME} in the script, args or command is the guest kernel's symbol NAME's
address (0x...), an exported one (EXPORT_SYMBOL), read from the x86_64 ELF
vmlinux the guest boots (the PVH entry runs it where it was linked: no
KASLR); a case checks it against the guest's /proc/kallsyms before relying
on it.

{workload} is a static build of tests/helpers/workload.c, {usdt} one of
usdt_prog.c (built only for a batch that uses it), both for the guest's
arch. All the cases of one (arch, kernel) run in one boot: the tracers and
these programs are copied in, a script runs each case and frames its
output."""
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "vm"))
sys.path.insert(0, str(ROOT / "tests"))

import lab  # noqa: E402
from plyc import arch as A  # noqa: E402
from test_runtime import parse_case  # noqa: E402

CASES = sorted((ROOT / "tests" / "vm" / "cases").glob("*.test"))
TARGET = {name: a.target for name, a in lab.ARCHES.items()}
CROSS_GCC = {name: "gcc" if A.is_native(t) else f"{A.get(t).triplet}-gcc" for name, t in TARGET.items()}
MARK = "@@@plyc-case"
# Debian 11's 5.10 (bullseye), Debian 12's 6.1 and its 6.12 backport.
DEFAULT_KERNELS = "5.10 6.1 6.12"


def case_runs():
    runs = []
    for path in CASES:
        case = parse_case(path)
        for line in case.get("arch", "x86_64").strip().splitlines():
            arch, *own = line.split()
            default = " ".join(lab.ARCHES[arch].versions) or DEFAULT_KERNELS
            kernels = case.get("kernels", default).split()
            runs.extend((arch, kernel, path) for kernel in own or kernels)
    return runs


RUNS = case_runs()


def example_missing(case: dict):
    """The example file a case runs, when it is absent (the shared corpus of
    other people's scripts lives outside the repository)."""
    if "example" not in case:
        return None
    p = (ROOT / "examples" / case["example"].strip()).resolve()
    return None if p.exists() else p


def build_helper(arch: str, name: str, tmp: Path) -> str:
    """A static build of tests/helpers/NAME.c for the guest's arch."""
    out = tmp / name
    # 32-bit ARM kernels put uprobes only on ARM-mode instructions, and
    # Debian's armhf compiler makes Thumb code unless told otherwise.
    flags = ["-marm"] if arch == "armhf" else []
    if name == "usdt_prog":
        flags.append(f"-I{sdt_include(tmp)}")
    subprocess.run([CROSS_GCC[arch], "-static", "-O2", *flags, "-o", str(out),
                    str(ROOT / "tests/helpers" / f"{name}.c")], check=True)
    return str(out)


def sdt_include(tmp: Path) -> Path:
    """A folder with sys/sdt.h for cross compilers: systemtap-sdt-dev installs
    it for the host's arch only, and its macros are the same for every arch."""
    found = sorted(Path("/usr/include").glob("*/sys/sdt.h")) + sorted(Path("/usr/include").glob("sys/sdt.h"))
    if not found:
        pytest.fail("sys/sdt.h is missing (apt-get install systemtap-sdt-dev)")
    inc = tmp / "sdt-include"
    if not inc.exists():
        (inc / "sys").mkdir(parents=True)
        for h in found[0].parent.glob("sdt*.h"):
            (inc / "sys" / h.name).symlink_to(h)
    return inc


def subst(text: str) -> str:
    """The helper programs, as the guest's /lab has them."""
    return text.replace("{workload}", "./workload").replace("{usdt}", "./usdt_prog")


def exported_symbols(vmlinux: Path, names: set) -> dict:
    """The addresses of the kernel's exported symbols `names`, from the
    __ksymtab of its ELF vmlinux (Debian's is stripped, and its System.map a
    placeholder): x86_64's entries are three 32-bit offsets (PREL32:
    value, name, namespace), each from its own field's address."""
    out = subprocess.run(["readelf", "-S", "-W", str(vmlinux)], capture_output=True, text=True, check=True).stdout
    secs = {m.group(1): (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16))
            for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)", out)}
    data = vmlinux.read_bytes()
    addr, off, size = secs["__ksymtab"]
    str_addr, str_off, _ = secs["__ksymtab_strings"]
    found = {}
    for i in range(0, size, 12):
        value, name, _ = struct.unpack_from("<iii", data, off + i)
        at = str_off + (addr + i + 4 + name - str_addr)
        symbol = data[at:data.index(b"\0", at)].decode()
        if symbol in names:
            found[symbol] = addr + i + value
    return found


def ksyms(text: str, arch: str, kernel: str) -> str:
    """{ksym:NAME}: the address of the booted kernel's exported symbol NAME."""
    names = set(re.findall(r"\{ksym:(\w+)\}", text))
    if not names:
        return text
    found = exported_symbols(lab.kernel(arch, kernel).vmlinux, names)
    for name in names:
        text = text.replace(f"{{ksym:{name}}}", f"0x{found[name]:x}")
    return text
    system_map = next(lab.kernel(arch, kernel).vmlinux.parent.glob("boot/System.map-*"))
    found = {f[2]: f"0x{int(f[0], 16):x}" for f in map(str.split, system_map.read_text().splitlines())
             if len(f) == 3 and f[2] in names}
    for name in names:
        text = text.replace(f"{{ksym:{name}}}", found[name])
    return text


def build_batch(arch: str, kernel: str, tmp: Path):
    """Build every tracer of this (arch, kernel) and the script running them."""
    files, script = [build_helper(arch, "workload", tmp)], ["#!/bin/sh", "cd /lab"]
    errors = {}
    for a, k, path in RUNS:
        if (a, k) != (arch, kernel):
            continue
        case = parse_case(path)
        if "{usdt}" in "".join(case.values()) and str(tmp / "usdt_prog") not in files:
            files.append(build_helper(arch, "usdt_prog", tmp))
        if example_missing(case):
            continue
        for module in case.get("modules", "").split():
            ko = str(lab.module(lab.kernel(arch, kernel), module))
            if ko not in files:
                files.append(ko)
        name = path.stem.replace("-", "_")
        src = tmp / (f"{name}.bt" if "bpftrace" in case else f"{name}.ply")
        out = tmp / name
        build_opts = case.get("build", "")
        if "{kernel-btf}" in build_opts:
            # The guest kernel's BTF, for --btf: its own, or made for it.
            build_opts = build_opts.replace("{kernel-btf}", str(lab.debug_btf(lab.kernel(arch, kernel))))
        if "argdist" in case:
            cmd = [sys.executable, "-m", "plyc", "argdist", *shlex.split(case["argdist"].strip()), "-o", str(out)]
        else:
            text = (ROOT / "examples" / case["example"].strip()).read_text() if "example" in case \
                else case["bpftrace"] if "bpftrace" in case else case["script"]
            src.write_text(ksyms(subst(text), arch, kernel))
            cmd = [sys.executable, "-m", "plyc", "build", "--target", TARGET[arch], str(src),
                   "-o", str(out), *shlex.split(build_opts)]
        proc = builds.run(cmd,
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        if proc.returncode != 0:
            errors[path.stem] = proc.stderr
            continue
        files.append(str(out))
        env = " ".join(shlex.quote(line.strip()) for line in case.get("run-env", "").splitlines() if "=" in line)
        args = subst(case.get("args", "").strip())
        command = f"{env} ./{name} {args}"
        if "command" in case:
            command = ksyms(subst(case["command"].strip()), arch, kernel).replace("{tracer}", f"{env} ./{name}")
        script += [f"{command} > out.{name} 2> err.{name}; rc=$?",
                   f"echo '{MARK} {path.stem} '$rc; cat out.{name}; echo '{MARK}-err'; cat err.{name}",
                   f"echo '{MARK}-end'"]
        # Unloaded after the case whether or not it did (bt-swapin's swap
        # keeps loop busy until its losetup -d): the next case inserts it again.
        script += [f"rmmod {module} 2>/dev/null" for module in case.get("modules", "").split()]
    runner = tmp / "run-all.sh"
    runner.write_text("\n".join(script) + "\n")
    runner.chmod(0o755)
    files.append(str(runner))
    return files, errors


def parse_results(stdout: str) -> dict:
    results = {}
    pattern = re.compile(rf"^{MARK} (\S+) (\d+)\n(.*?)^{MARK}-err\n(.*?)^{MARK}-end$", re.S | re.M)
    for m in pattern.finditer(stdout):
        results[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))
    return results


_batches: dict = {}


def batch(arch: str, kernel: str, tmp_path_factory):
    key = (arch, kernel)
    if key not in _batches:
        tmp = tmp_path_factory.mktemp(f"vm-{arch}-{kernel}")
        files, errors = build_batch(arch, kernel, tmp)
        memory = "1024M" if arch != "x86_64" else "512M"
        try:
            res = lab.run(["./run-all.sh"], files=files, arch=arch, kernel=kernel, timeout=600, memory=memory)
        except lab.LabError as err:
            # Debian's mips kernels under qemu now and then panic in a
            # kretprobe's trampoline (mipsel 6.1, once in three full runs), and
            # multi-threaded TCG can hang both vCPUs while the kernel patches a
            # hot path another vCPU runs (x86_64 5.10, once: bt-pidns attaching
            # sys_enter_write beside `yes`, soft lockups on both CPUs, the same
            # batch green alone): the batch runs once more, its vCPUs in one
            # host thread for a hang; a panic or hang the tracer causes comes back.
            hung = isinstance(err, lab.LabTimeout) and "soft lockup" in str(err)
            if "Kernel panic" not in str(err) and not hung:
                raise
            print(f"\n{arch} {kernel}: the guest {'hung' if hung else 'panicked'}, its batch runs again:\n"
                  f"{str(err)[-1500:]}")
            res = lab.run(["./run-all.sh"], files=files, arch=arch, kernel=kernel, timeout=600, memory=memory,
                          one_thread=hung)
        _batches[key] = (parse_results(res.stdout.decode(errors="replace")), errors, res)
    return _batches[key]


@pytest.mark.vm
@pytest.mark.parametrize("arch,kernel,path", RUNS, ids=[f"{a}-{k}-{p.stem}" for a, k, p in RUNS])
def test_in_vm(arch, kernel, path, tmp_path_factory):
    if not shutil.which(lab.ARCHES[arch].qemu):
        pytest.skip(f"qemu for {arch} is not installed (scripts/setup.sh installs it)")
    missing = example_missing(parse_case(path))
    if missing:
        pytest.skip(f"{missing} is absent (the shared corpus comes beside the repository)")
    results, errors, res = batch(arch, kernel, tmp_path_factory)
    assert path.stem not in errors, f"build failed:\n{errors.get(path.stem)}"
    assert path.stem in results, (f"the guest did not run the case:\n{res.stdout[-3000:]!r}\n"
                                  f"{res.stderr[-2000:]!r}\n{res.console[-3000:]}")
    rc, stdout, stderr = results[path.stem]
    case = parse_case(path)
    detail = f"\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}"
    want = int(case.get("exit", "0").strip())
    assert rc == want, f"exit {rc}, expected {want}{detail}"
    if "stdout" in case:
        assert stdout.rstrip("\n") == case["stdout"].rstrip("\n"), f"stdout differs{detail}"
    if "stdout-re" in case:
        pattern = case["stdout-re"].rstrip("\n")
        assert re.fullmatch(pattern, stdout.rstrip("\n"), re.DOTALL), f"stdout does not match /{pattern}/{detail}"
    if "stderr-re" in case:
        for pattern in case["stderr-re"].strip().splitlines():
            assert re.search(pattern, stderr), f"stderr lacks /{pattern}/{detail}"
