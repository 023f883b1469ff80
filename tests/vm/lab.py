"""A qemu lab: run a command as root under a stock Debian kernel.

This machine's kernel has no kprobes and refuses fentry, so tests of those
run inside a stock Debian kernel booted under qemu's TCG (the nested /dev/kvm
cannot run one).  Facts behind the choices here: /work/shared/LAB.md.

    k = kernel("x86_64", "6.1")       # downloads once, then cached
    r = run(["uname", "-r"], files=[], kernel="6.1")
    r.stdout, r.stderr, r.status, r.console

The guest is a busybox initramfs.  Its /init mounts the usual filesystems,
runs the command in /lab (where the given files are copied) and hands back
stdout, stderr and the exit status apart, byte for byte.  Nothing is
installed on this machine: kernels and busybox are fetched with
`apt-get download` into a cache folder ($PLYC_VM_CACHE, default
~/.cache/plyc/vm) and unpacked there.

Stdlib only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import gzip
import json
import lzma
import os
import re
import shlex
import shutil
import stat
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional, Union

# The guest's working directory: files given to run() land here.
GUEST_DIR = "/lab"


class LabError(RuntimeError):
    """The lab could not run the command (no kernel, qemu failed, guest died)."""


class LabTimeout(LabError):
    """The guest did not finish in time and was killed."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message)
        self.result = result  # what came out before the kill


@dataclasses.dataclass(frozen=True)
class Kernel:
    arch: str
    version: str        # what was asked for: "5.10", "6.1", "6.12"
    package: str        # Debian package, e.g. linux-image-6.1.0-57-amd64
    package_version: str
    release: str        # `uname -r` in the guest
    image: Path         # what qemu's -kernel boots
    vmlinuz: Path       # the kernel as packaged
    vmlinux: Optional[Path]  # uncompressed ELF with .BTF, where the arch has one
    btf: Optional[Path]  # the kernel's BTF: a file `bpftool btf dump file` reads
    dtb: Optional[Path] = None  # the device tree qemu gives it, where the board needs one


@dataclasses.dataclass
class Result:
    stdout: bytes
    stderr: bytes
    status: int         # the command's exit status, 0..255
    console: str        # the kernel console, for diagnosis
    seconds: float = 0.0  # wall time of qemu: boot + command + poweroff


@dataclasses.dataclass(frozen=True)
class Arch:
    """What differs between guest architectures."""
    name: str
    deb_arch: str       # Debian architecture of the guest's packages
    flavour: str        # Debian kernel flavour (linux-image-<flavour>)
    qemu: str
    qemu_package: str   # the Debian package that has `qemu`
    machine: tuple      # qemu arguments that choose machine and cpu
    console: str        # kernel console device
    # How results come back.  "ports": stdout, stderr and status each on a
    # serial port of their own, plus isa-debug-exit (x86).  "framed": the
    # one UART of arm's virt machine carries them, framed, after the command.
    transport: str
    append: tuple = ()  # extra kernel command line
    firmware: str = ""  # qemu -bios, used when present
    target: str = ""    # the plyc --target whose tracers run in it (plyc/arch.py)
    # The Debian release every package of this arch comes from, when the
    # machine's own has no such architecture (riscv64 is trixie's), and
    # the kernel versions it has then.
    release: str = ""
    versions: tuple = ()
    busybox_member: str = "./bin/busybox"  # where busybox-static puts it
    # The console as a qemu device on a file chardev (s390x has no serial
    # port: its console is the SCLP's), instead of -serial.
    console_device: str = ""
    # A board's device tree, from the kernel package (usr/lib/linux-image-*/),
    # and its fixed RAM size where the machine accepts no other.
    dtb: str = ""
    memory: str = ""


ARCHES = {
    "x86_64": Arch(
        name="x86_64", deb_arch="amd64", flavour="amd64",
        qemu="qemu-system-x86_64", qemu_package="qemu-system-x86",
        # -cpu max gives TCG every feature it emulates; 2 vCPUs exercise
        # per-CPU maps without slowing the boot much.
        machine=("-accel", "tcg", "-cpu", "max", "-smp", "2"),
        console="ttyS0", transport="ports",
        # TCG's TSC follows the host clock, so it is reliable; trusting it
        # and skipping the timer check saves calibration time in each boot.
        append=("tsc=reliable", "no_timer_check"),
        firmware="/usr/share/qemu/qboot.rom", target="x86_64",
    ),
    "arm64": Arch(
        name="arm64", deb_arch="arm64", flavour="arm64",
        qemu="qemu-system-aarch64", qemu_package="qemu-system-arm",
        # cortex-a57 rather than max: max turns on pointer authentication,
        # which TCG emulates slowly.
        machine=("-accel", "tcg", "-M", "virt", "-cpu", "cortex-a57", "-smp", "2"),
        console="ttyAMA0", transport="framed", target="aarch64",
    ),
    # 32-bit arm: the armmp kernel is a zImage qemu boots as is.  Debian
    # builds it without BTF (Kernel.btf is None): see LAB.md for --btf.
    "armhf": Arch(
        name="armhf", deb_arch="armhf", flavour="armmp",
        qemu="qemu-system-arm", qemu_package="qemu-system-arm",
        machine=("-accel", "tcg", "-M", "virt", "-cpu", "cortex-a15", "-smp", "2"),
        console="ttyAMA0", transport="framed", target="armhf",
    ),
    # A Raspberry Pi Zero: qemu's raspi0 models its ARM1176 (ARMv6) core, the
    # oldest ARM a tracer targets (--target armv6; armel's ARMv5TE code runs
    # on it too), booting Debian's armel rpi kernel (6.1, no BTF). qemu has
    # no model of the SoC's ASB registers the power-domain driver probes
    # (an external abort at boot), so that driver is left out; the
    # watchdog, which powers the board off, stays.
    "armel": Arch(
        name="armel", deb_arch="armel", flavour="rpi",
        qemu="qemu-system-arm", qemu_package="qemu-system-arm",
        machine=("-accel", "tcg", "-M", "raspi0"),
        console="ttyAMA0", transport="framed", target="armel",
        append=("initcall_blacklist=bcm2835_power_driver_init",),
        dtb="bcm2835-rpi-zero.dtb", memory="512M",
    ),
    # riscv64 is no bookworm architecture: kernel and busybox are trixie's
    # (its 6.12, with BTF; its Image has a PE header and boots as it is).
    # `-bios default` is the OpenSBI firmware qemu-system-misc bundles; the
    # virt machine's one 16550 UART is ttyS0.
    "riscv64": Arch(
        name="riscv64", deb_arch="riscv64", flavour="riscv64",
        qemu="qemu-system-riscv64", qemu_package="qemu-system-misc",
        machine=("-accel", "tcg", "-M", "virt", "-bios", "default", "-smp", "2"),
        console="ttyS0", transport="framed", target="riscv64",
        release="trixie", versions=("6.12",), busybox_member="./usr/bin/busybox",
    ),
    # Malta (the board Debian's mips kernels are built for); its first
    # 16550 UART is ttyS0. Debian ships the kernel as an ELF vmlinux.
    "mipsel": Arch(
        name="mipsel", deb_arch="mipsel", flavour="4kc-malta",
        qemu="qemu-system-mipsel", qemu_package="qemu-system-mips",
        machine=("-accel", "tcg", "-M", "malta", "-cpu", "24Kf"),
        console="ttyS0", transport="framed", target="mipsel",
    ),
    "mips64el": Arch(
        name="mips64el", deb_arch="mips64el", flavour="5kc-malta",
        qemu="qemu-system-mips64el", qemu_package="qemu-system-mips",
        machine=("-accel", "tcg", "-M", "malta", "-cpu", "5KEf"),
        console="ttyS0", transport="framed", target="mips64el",
    ),
    # pseries: -serial is its first hypervisor console (spapr-vty), hvc0.
    "ppc64le": Arch(
        name="ppc64le", deb_arch="ppc64el", flavour="powerpc64le",
        qemu="qemu-system-ppc64", qemu_package="qemu-system-ppc",
        machine=("-accel", "tcg", "-M", "pseries", "-cpu", "POWER9", "-smp", "2"),
        console="hvc0", transport="framed", target="ppc64le",
    ),
    # Big-endian. The s390-ccw-virtio machine's console is the SCLP's.
    "s390x": Arch(
        name="s390x", deb_arch="s390x", flavour="s390x",
        qemu="qemu-system-s390x", qemu_package="qemu-system-misc",
        machine=("-accel", "tcg", "-M", "s390-ccw-virtio", "-cpu", "max", "-smp", "2"),
        console="ttysclp0", transport="framed", target="s390x", console_device="sclpconsole",
    ),
}

# Kernel versions -> the Debian meta-package whose dependency is the current
# kernel.  The ABI number in the real package name changes with Debian
# updates and old .debs vanish, so the name is resolved each time.
META_PACKAGES = {
    "5.10": "linux-image-{flavour}",      # bullseye's own kernel (Debian 11)
    "6.1": "linux-image-{flavour}",       # bookworm's own kernel
    "6.12": "linux-image-6.12-{flavour}",  # linux-6.12 for bookworm (security suite)
}

# Kernel versions that come from another Debian release than the machine's:
# their packages are found through a private source list (and private lists,
# status and cache), never through the machine's own apt sources.
DISTS = {"5.10": "bullseye"}
# A release's own kernel, when it is not the machine's.
RELEASE_META = {"trixie": "linux-image-{flavour}"}

# A private dist's suites per Debian architecture ("*": any other).  The
# bullseye-security pool answers 404 for arm64 files although its index lists
# them, and has no armhf index here: those take bullseye's main suite only.
DIST_SUITES = {
    "bullseye": {"amd64": ("bullseye", "bullseye-security"), "*": ("bullseye",)},
    # trixie-security's riscv64 index fails apt's size check here (LAB.md).
    "trixie": {"*": ("trixie",)},
}
DIST_URIS = {"bullseye": "http://deb.debian.org/debian", "trixie": "http://deb.debian.org/debian",
             "bullseye-security": "http://deb.debian.org/debian-security"}
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def cache_dir() -> Path:
    d = os.environ.get("PLYC_VM_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "plyc", "vm")
    return _mkdir(Path(d))


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


@contextlib.contextmanager
def _cache_lock(name: str) -> Iterator[None]:
    """Serialise a fetch so concurrent runs never see half a download.

    One lock per thing fetched: flock locks taken twice in one process
    through two opens would wait for each other.
    """
    with open(_mkdir(cache_dir() / "locks") / name, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _arch(name: str) -> Arch:
    try:
        return ARCHES[name]
    except KeyError:
        raise LabError(f"arch {name!r} is not supported (have: {', '.join(ARCHES)})")


# ---------------------------------------------------------------- apt

@functools.lru_cache(maxsize=None)
def _host_deb_arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _dist(arch: Arch, version: str = "") -> str:
    """The Debian release of `arch`'s kernel `version` ("" = the machine's)."""
    return DISTS.get(version, "") or arch.release


def _meta(arch: Arch, version: str) -> str:
    return RELEASE_META.get(_dist(arch, version), META_PACKAGES[version]).format(flavour=arch.flavour)


def _foreign(arch: Arch) -> bool:
    return arch.deb_arch != _host_deb_arch()


def _private(arch: Arch, dist: str) -> bool:
    """Whether `arch`'s packages of `dist` ("" = the machine's own release)
    come through a private apt state."""
    return bool(dist) or _foreign(arch)


def _apt_state(arch: Arch, dist: str = "") -> Path:
    return cache_dir() / "apt" / (f"{dist}-{arch.deb_arch}" if dist else arch.deb_arch)


def _apt_options(arch: Arch, dist: str = "") -> list:
    """apt options for fetching `arch`'s packages of Debian release `dist`.

    The host's own architecture and release use the system's apt state.  A
    foreign architecture gets a private state (own lists, empty dpkg status,
    own cache), so the system's apt is never touched: adding a foreign
    architecture to it has broken `apt-get update` here before (LAB.md).
    Another release (`dist`, e.g. bullseye) also gets its own source list.
    """
    # Running as root, apt would drop to the _apt user and warn that it
    # cannot write into our cache: downloading as root is what we want.
    opts = ["-o", "APT::Sandbox::User=root"]
    if _private(arch, dist):
        s = _apt_state(arch, dist)
        opts += ["-o", f"APT::Architecture={arch.deb_arch}",
                 "-o", f"APT::Architectures::={arch.deb_arch}",
                 "-o", f"Dir::State::Lists={s / 'lists'}",
                 "-o", f"Dir::State::status={s / 'status'}",
                 "-o", f"Dir::Cache={s / 'cache'}"]
    if dist:
        s = _apt_state(arch, dist)
        opts += ["-o", f"Dir::Etc::SourceList={s / 'sources.list'}",
                 "-o", f"Dir::Etc::SourceParts={s / 'sources.list.d'}"]
    return opts


def _sources_list(arch: Arch, dist: str) -> str:
    suites = DIST_SUITES[dist]
    return "".join(f"deb [signed-by={KEYRING}] {DIST_URIS[suite]} {suite} main\n"
                   for suite in suites.get(arch.deb_arch, suites["*"]))


def _apt_update(arch: Arch, force: bool = False, dist: str = "") -> None:
    """Fill (or refresh) a private state's package lists."""
    if not _private(arch, dist):
        return  # the system's lists are the machine setup's business
    s = _apt_state(arch, dist)
    if not force and any((s / "lists").glob("*_Packages*")):
        return
    with _cache_lock(f"apt-{s.name}"):
        _mkdir(s / "lists" / "partial")
        _mkdir(s / "cache" / "archives" / "partial")
        (s / "status").touch()
        if dist:
            _mkdir(s / "sources.list.d")
            (s / "sources.list").write_text(_sources_list(arch, dist))
        r = subprocess.run(["apt-get", *_apt_options(arch, dist), "update", "-q"],
                           capture_output=True, text=True)
        if not any((s / "lists").glob("*_Packages*")):
            raise LabError(f"apt-get update for {s.name} failed:\n{r.stderr}")


# Per process: apt-cache parses every package list on each call (Debian's
# container images keep no pkgcache.bin), 1-3 s a time on this machine.
_apt_memo: dict = {}


def _apt_show(arch: Arch, *packages: str, dist: str = "") -> dict:
    """Candidate Version and Depends of each known package, in one apt-cache call."""
    key = (arch.name, dist)
    wanted = [p for p in packages if (key, p) not in _apt_memo]
    if wanted:
        out = subprocess.run(["apt-cache", *_apt_options(arch, dist), "show",
                              "--no-all-versions", *wanted],
                             capture_output=True, text=True).stdout
        for p in wanted:
            _apt_memo[(key, p)] = None
        for stanza in out.split("\n\n"):
            fields = dict(re.findall(r"^(Package|Version|Depends): (.*)$", stanza, re.M))
            if fields.get("Package") in wanted:
                _apt_memo[(key, fields["Package"])] = fields
    return {p: _apt_memo[(key, p)] for p in packages if _apt_memo[(key, p)]}


def _apt_candidate(arch: Arch, package: str, dist: str = "") -> Optional[str]:
    """The version apt would download of `package`, or None if it knows none."""
    info = _apt_show(arch, package, dist=dist).get(package)
    return info["Version"] if info else None


def _apt_depends(arch: Arch, meta: str, dist: str = "") -> tuple:
    """The package that meta-package `meta` depends on, and its version
    (None, None if apt knows no such package)."""
    info = _apt_show(arch, meta, dist=dist).get(meta)
    if not info or not info.get("Depends"):
        return None, None
    m = re.match(r"(\S+)(?: \(= ([^)]+)\))?", info["Depends"])
    package, version = m.group(1), m.group(2)
    return package, version or _apt_candidate(arch, package, dist)


def _apt_download(arch: Arch, package: str, version: str, into: Path,
                  dist: str = "") -> Path:
    """Download one .deb into `into` and return its path."""
    r = subprocess.run(["apt-get", *_apt_options(arch, dist), "download", "-q",
                        f"{package}={version}"], cwd=into,
                       capture_output=True, text=True)
    debs = list(into.glob("*.deb"))
    if r.returncode != 0 or len(debs) != 1:
        hint = "" if _private(arch, dist) else " (is the apt list current? run `apt-get update`)"
        raise LabError(f"apt-get download {package}={version} failed{hint}:\n{r.stderr}")
    return debs[0]


def _extract(deb: Path, into: Path, *members: str) -> None:
    """Unpack the given members (tar wildcards) of a .deb's data into `into`.

    Like `dpkg-deb -x`, limited to what the lab uses: a kernel package's
    modules are hundreds of MB the initramfs never needs.
    """
    _mkdir(into)
    data = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                            stdout=subprocess.PIPE)
    r = subprocess.run(["tar", "-x", "-C", str(into), "--wildcards", *members],
                       stdin=data.stdout, capture_output=True, text=True)
    data.stdout.close()
    if data.wait() != 0 or r.returncode != 0:
        raise LabError(f"cannot extract {members} from {deb}: {r.stderr}")


def _fetch_package(arch: Arch, package: str, version: str, dest: Path,
                   members: tuple, finish=None, dist: str = "") -> None:
    """Download `package` and unpack `members` into `dest`, atomically.

    The work happens in a scratch folder renamed to `dest` at the end, so a
    killed fetch leaves nothing that looks complete.  `finish(folder)` runs
    before the rename (e.g. to decompress the kernel).
    """
    with _cache_lock(f"{arch.deb_arch}-{dest.name}"):
        if dest.exists():  # another process fetched it meanwhile
            return
        tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=_mkdir(dest.parent)))
        try:
            deb = _apt_download(arch, package, version, tmp, dist)
            _extract(deb, tmp / "root", *members)
            deb.unlink()  # up to 110 MB we no longer need
            if finish:
                finish(tmp / "root")
            os.rename(tmp / "root", dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- kernel

def _vmlinux_from_bzimage(bz: bytes) -> bytes:
    """The uncompressed ELF kernel inside an x86 bzImage.

    Booting the ELF through its PVH entry saves ~5 s of in-guest
    decompression under TCG.  The boot header says exactly where the
    compressed payload is (payload_offset/payload_length, counted from the
    end of the real-mode setup); the build appends the 4-byte uncompressed
    size to it, which decompressors would take for a second stream.
    """
    if bz[0x202:0x206] != b"HdrS":
        raise LabError("vmlinuz is not an x86 bzImage")
    setup_sects = bz[0x1F1] or 4
    offset, length = struct.unpack_from("<II", bz, 0x248)
    start = (setup_sects + 1) * 512 + offset
    payload = bz[start:start + length - 4]
    if payload.startswith(b"\xfd7zXZ\x00"):          # Debian 6.1: XZ
        elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(payload)
    elif payload.startswith(b"\x28\xb5\x2f\xfd"):     # Debian 6.12: ZSTD
        elf = _unzstd(payload)
    elif payload.startswith(b"\x1f\x8b"):
        elf = gzip.decompress(payload)
    else:
        raise LabError(f"unknown kernel compression (magic {payload[:6].hex()})")
    if not elf.startswith(b"\x7fELF"):
        raise LabError("decompressed kernel is not an ELF file")
    return elf


def _unzstd(data: bytes) -> bytes:
    """Python has no zstd before 3.14: use the module if present, else the tool."""
    try:
        import zstandard  # python3-zstandard, optional
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except ImportError:
        pass
    if not shutil.which("zstd"):
        raise LabError("a ZSTD kernel needs the `zstd` command (apt-get install zstd)")
    r = subprocess.run(["zstd", "-d", "-c", "-q"], input=data, capture_output=True)
    if r.returncode != 0:
        raise LabError(f"zstd failed: {r.stderr.decode(errors='replace')}")
    return r.stdout


BTF_MAGIC = b"\x9f\xeb\x01\x00"  # magic 0xeb9f little-endian, version 1, flags 0


def _btf_from_image(image: bytes) -> bytes:
    """The kernel's BTF (.BTF section) cut out of a raw kernel Image.

    arm's Image is not ELF, but the BTF blob lies in it unchanged: find its
    header and take hdr_len + the farther end of the type and string parts.
    The magic can occur by chance, so take the largest header that holds
    together (24-byte header, parts inside the image, strings start with NUL).
    """
    best = b""
    at = image.find(BTF_MAGIC)
    while at >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from(
            "<5I", image, at + 4)
        size = hdr_len + max(type_off + type_len, str_off + str_len)
        if (hdr_len == 24 and str_len and at + size <= len(image)
                and image[at + hdr_len + str_off] == 0 and size > len(best)):
            best = image[at:at + size]
        at = image.find(BTF_MAGIC, at + 1)
    if not best:
        raise LabError("no BTF found in the kernel image")
    return best


def _prepare_kernel(arch: Arch, root: Path) -> None:
    """Make a freshly unpacked kernel bootable fast and give it a BTF file.

    Writes kernel.json, whose presence marks the folder complete.
    """
    # riscv64's package names its Image vmlinux-*, the others vmlinuz-*.
    vmlinuz = next(p for p in sorted((root / "boot").glob("vmlinu[xz]-*")))
    info = {"release": vmlinuz.name[len("vmlinuz-"):],
            "vmlinuz": f"boot/{vmlinuz.name}", "image": f"boot/{vmlinuz.name}",
            "vmlinux": None, "btf": None, "dtb": None}
    if arch.dtb:
        dtb = next(root.glob(f"usr/lib/linux-image-*/{arch.dtb}"), None)
        if dtb is None:
            raise LabError(f"the kernel package has no {arch.dtb}")
        os.rename(dtb, root / arch.dtb)
        shutil.rmtree(root / "usr")
        info["dtb"] = arch.dtb
    data = vmlinuz.read_bytes()
    if arch.name == "x86_64":
        (root / "vmlinux").write_bytes(_vmlinux_from_bzimage(data))
        info["vmlinux"] = info["image"] = info["btf"] = "vmlinux"
    elif arch.name in ("arm64", "riscv64"):
        if data.startswith(b"\x1f\x8b"):  # some builds gzip the Image
            data = gzip.decompress(data)
            (root / "Image").write_bytes(data)
            info["image"] = "Image"
        (root / "vmlinux.btf").write_bytes(_btf_from_image(data))
        info["btf"] = "vmlinux.btf"
    (root / "kernel.json").write_text(json.dumps(info, indent=1) + "\n")


def _kernel_from_dir(arch: Arch, version: str, d: Path) -> Kernel:
    info = json.loads((d / "kernel.json").read_text())
    package, _, pversion = d.name.partition("_")
    return Kernel(arch=arch.name, version=version, package=package,
                  package_version=pversion.replace("%3a", ":"),
                  release=info["release"], image=d / info["image"],
                  vmlinuz=d / info["vmlinuz"],
                  vmlinux=d / info["vmlinux"] if info["vmlinux"] else None,
                  btf=d / info["btf"] if info["btf"] else None,
                  dtb=d / info["dtb"] if info.get("dtb") else None)


def _kernels_dir(arch: Arch, version: str) -> Path:
    return cache_dir() / "kernels" / arch.name / version


def kernel(arch: str = "x86_64", version: str = "6.1") -> Kernel:
    """The current Debian kernel `version` for `arch`, downloaded once and cached."""
    return _resolve_kernel(arch, version)


def _resolve_kernel(arch: str, version: str) -> Kernel:
    # run() has a parameter named `kernel`, hence this second name.
    a = _arch(arch)
    if version not in META_PACKAGES:
        raise LabError(f"kernel {version!r} unknown (have: {', '.join(META_PACKAGES)})")
    if a.versions and version not in a.versions:
        raise LabError(f"no {version} kernel for {a.name} (Debian {a.release} has {', '.join(a.versions)})")
    dist = _dist(a, version)
    try:
        return _find_kernel(a, version)
    except LabError:
        if not _private(a, dist):
            raise
    # Private lists are only fetched once: when they no longer lead to a
    # kernel (old .debs vanish), refresh them and retry.
    _apt_update(a, force=True, dist=dist)
    _apt_memo.clear()
    return _find_kernel(a, version)


def _find_kernel(a: Arch, version: str) -> Kernel:
    meta = _meta(a, version)
    dist = _dist(a, version)
    base = _kernels_dir(a, version)
    _apt_update(a, dist=dist)
    # run() needs both: one apt-cache call (busybox comes from the machine's
    # release, whichever the kernel's)
    _apt_show(a, meta, *(() if dist != a.release else ("busybox-static",)), dist=dist)
    package, pversion = _apt_depends(a, meta, dist)
    if not package or not pversion:
        # Offline or no apt lists: an already cached kernel still serves.
        cached = sorted(base.glob("*/kernel.json"), key=lambda p: p.stat().st_mtime)
        if cached:
            return _kernel_from_dir(a, version, cached[-1].parent)
        update = (f"the lab's own {a.deb_arch} lists in {_apt_state(a, dist)} were just "
                  f"refreshed" if _private(a, dist) else "run `apt-get update`")
        raise LabError(f"Debian kernel {version} for {a.name} not found: apt knows no "
                       f"{meta} with a dependency ({update}). If it is still missing, "
                       f"the configured Debian sources do not offer it.")
    d = base / f"{package}_{pversion.replace(':', '%3a')}"
    if not (d / "kernel.json").exists():
        members = ("./boot/*",) + ((f"./usr/lib/linux-image-*/{a.dtb}",) if a.dtb else ())
        _fetch_package(a, package, pversion, d, members,
                       finish=lambda root: _prepare_kernel(a, root), dist=dist)
    return _kernel_from_dir(a, version, d)


def debug_btf(k: Kernel) -> Path:
    """BTF for a kernel built without it (Debian's armmp), made by pahole
    from the vmlinux of its -dbg package (a 600 MB download, once); cached.
    This is the file a user gives `plyc build --btf` for such a device."""
    if k.btf:
        return k.btf
    out = cache_dir() / "debug-btf" / f"{k.package}_{k.package_version.replace(':', '%3a')}.btf"
    if out.exists():
        return out
    a = _arch(k.arch)
    with _cache_lock(f"{a.deb_arch}-dbg-{k.package}"):
        if out.exists():
            return out
        tmp = Path(tempfile.mkdtemp(prefix=".dbg-", dir=_mkdir(out.parent)))
        try:
            deb = _apt_download(a, k.package + "-dbg", k.package_version, tmp,
                                _dist(a, k.version))
            _extract(deb, tmp / "root", "./usr/lib/debug/boot/vmlinux-*")
            deb.unlink()
            vmlinux = next((tmp / "root/usr/lib/debug/boot").glob("vmlinux-*"))
            r = subprocess.run(["pahole", f"--btf_encode_detached={tmp / 'k.btf'}", str(vmlinux)],
                               capture_output=True, text=True)
            if r.returncode != 0 or not (tmp / "k.btf").exists():
                raise LabError(f"pahole could not make BTF for {k.package}: {r.stderr}")
            os.rename(tmp / "k.btf", out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


# ---------------------------------------------------------------- busybox

def module(k: Kernel, name: str) -> Path:
    """Kernel module `name` (brd: a RAM disk, for the block tools) of kernel
    `k`, uncompressed for busybox's insmod. The kernel's cache keeps only
    ./boot, so its package is fetched again (~70 MB, once) and the block
    drivers kept (a few hundred KB)."""
    a = _arch(k.arch)
    d = cache_dir() / "modules" / a.name / f"{k.package}_{k.package_version.replace(':', '%3a')}"
    if not d.exists():
        _fetch_package(a, k.package, k.package_version, d, ("./lib/modules/*/kernel/drivers/block/*",),
                       finish=_flatten_modules, dist=_dist(a, k.version))
    ko = d / f"{name}.ko"
    if not ko.exists():
        raise LabError(f"{k.package} has no module {name} among its block drivers")
    return ko


def _flatten_modules(root: Path) -> None:
    """Every .ko(.xz/.zst) under root, decompressed, as root/NAME.ko."""
    for p in sorted(root.rglob("*.ko*")):
        data = p.read_bytes()
        if p.name.endswith(".xz"):
            data = lzma.decompress(data)
        elif p.name.endswith(".zst"):
            data = _unzstd(data)
        (root / (p.name.split(".ko")[0] + ".ko")).write_bytes(data)
    shutil.rmtree(root / "lib", ignore_errors=True)


def busybox(arch: str = "x86_64") -> Path:
    """A static busybox for `arch`, from Debian's busybox-static, cached.

    Fetched rather than taken from this machine so that every arch works the
    same way and the host needs no busybox of its own.
    """
    a = _arch(arch)
    base = cache_dir() / "busybox" / a.deb_arch
    member = a.busybox_member[2:]   # without "./"
    _apt_update(a, dist=a.release)
    pversion = _apt_candidate(a, "busybox-static", dist=a.release)
    if pversion is None:
        cached = sorted(base.glob(f"*/{member}"), key=lambda p: p.stat().st_mtime)
        if cached:
            return cached[-1]
        raise LabError("busybox-static not found by apt (run `apt-get update`)")
    d = base / pversion.replace(":", "%3a")
    if not (d / member).exists():
        _fetch_package(a, "busybox-static", pversion, d, (a.busybox_member,), dist=a.release)
    return d / member


# ---------------------------------------------------------------- initramfs

def _cpio_newc(entries: list) -> bytes:
    """An uncompressed newc cpio archive, as the kernel unpacks for initramfs.

    Written here rather than with cpio(1) so that device nodes (/dev/console)
    need no mknod privilege and nothing but Python is needed.  Uncompressed
    because gunzip inside a TCG guest costs more than copying the bytes.
    `entries`: (name, mode, data, rdev_major, rdev_minor).
    """
    out = bytearray()

    def add(name: str, mode: int, data: bytes, rmaj: int, rmin: int, ino: int):
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rmaj, rmin,
                  len(name) + 1, 0]
        out.extend(b"070701" + b"".join(b"%08X" % f for f in fields))
        out.extend(name.encode() + b"\0")
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))

    for ino, (name, mode, data, rmaj, rmin) in enumerate(entries, start=1):
        add(name, mode, data, rmaj, rmin, ino)
    add("TRAILER!!!", 0, b"", 0, 0, 0)
    return bytes(out)


_INIT_SETUP = r"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmpfs /tmp
echo 0 > /proc/sys/kernel/kptr_restrict
cd {guest_dir}
set -- {command}
"""

# x86: stdout, stderr and the status each get a serial port: ttyS1, ttyS2,
# ttyS3 (ttyS0 is the kernel console), so the streams stay apart without
# framing and come back even if the guest is killed.  The ports are set raw
# so the tty layer neither turns \n into \r\n nor echoes; `stty` sets
# attributes with TCSADRAIN, so running it again after the command waits
# until every byte has left the UART before qemu is told to exit.  The
# status goes both as text on ttyS3 (exact 0..255) and to isa-debug-exit,
# whose exit code (N<<1)|1 loses bit 7 to the 8-bit process status but
# confirms the rest.
_INIT_PORTS = r"""
for t in ttyS1 ttyS2 ttyS3; do stty -F /dev/$t raw -echo || echo "lab: stty $t failed"; done
( "$@" ) >/dev/ttyS1 2>/dev/ttyS2 </dev/null
st=$?
cd /
stty -F /dev/ttyS1 raw; stty -F /dev/ttyS2 raw
echo "$st" >/dev/ttyS3
stty -F /dev/ttyS3 raw
printf "$(printf '\\%03o' "$st")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
echo "lab: isa-debug-exit did not stop qemu"
poweroff -f
"""

# arm's virt machine has one UART, which is also the kernel console.  The
# command's output goes to files; afterwards the console is quietened
# (dmesg -n 1) and set raw, and each stream is sent after a header giving
# its length, so the host cuts it out exactly.  poweroff then exits qemu.
FRAME = b"\n@@plyc-lab "
_INIT_FRAMED = r"""
( "$@" ) >/tmp/lab.stdout 2>/tmp/lab.stderr </dev/null
st=$?
cd /
dmesg -n 1
stty -F /dev/{console} raw -echo
{{
  printf '\n@@plyc-lab stdout %d\n' "$(wc -c </tmp/lab.stdout)"; cat /tmp/lab.stdout
  printf '\n@@plyc-lab stderr %d\n' "$(wc -c </tmp/lab.stderr)"; cat /tmp/lab.stderr
  printf '\n@@plyc-lab status %d\n' "$st"
}} >/dev/{console}
stty -F /dev/{console} raw
poweroff -f
"""


def _init_script(arch: Arch, command: list) -> str:
    setup = _INIT_SETUP.format(guest_dir=GUEST_DIR,
                               command=" ".join(shlex.quote(c) for c in command))
    if arch.transport == "ports":
        return setup + _INIT_PORTS
    return setup + _INIT_FRAMED.format(console=arch.console)


def _initramfs(arch: Arch, command: list, files: list) -> bytes:
    bb = busybox(arch.name).read_bytes()
    d = stat.S_IFDIR | 0o755
    entries = [(p, d, b"", 0, 0) for p in
               ("bin", "sbin", "usr", "usr/bin", "usr/sbin", "dev", "proc", "sys",
                "tmp", "root", "etc", GUEST_DIR.lstrip("/"))]
    # The kernel opens /dev/console for init's stdio before devtmpfs is up.
    entries.append(("dev/console", stat.S_IFCHR | 0o600, b"", 5, 1))
    entries.append(("bin/busybox", stat.S_IFREG | 0o755, bb, 0, 0))
    entries.append(("init", stat.S_IFREG | 0o755,
                    _init_script(arch, command).encode(), 0, 0))
    seen = set()
    for f in files:
        p = Path(f)
        if p.name in seen:
            raise LabError(f"two files named {p.name!r}: the guest directory is flat")
        seen.add(p.name)
        mode = stat.S_IMODE(p.stat().st_mode)
        entries.append((f"{GUEST_DIR.lstrip('/')}/{p.name}", stat.S_IFREG | mode,
                        p.read_bytes(), 0, 0))
    return _cpio_newc(entries)


# ---------------------------------------------------------------- run

def _firmware(arch: Arch) -> list:
    """qboot instead of SeaBIOS where qemu ships it: ~1 s less per boot."""
    if arch.firmware and os.path.exists(arch.firmware):
        return ["-bios", arch.firmware]
    return []


def _qemu_command(arch: Arch, k: Kernel, memory: str, tmp: Path, one_thread: bool = False) -> list:
    ports = ("console", "stdout", "stderr", "status") if arch.transport == "ports" \
        else ("console",)
    serial = [a for name in ports for a in ("-serial", f"file:{tmp / (name + '.log')}")]
    if arch.console_device:
        serial = ["-chardev", f"file,id=console,path={tmp / 'console.log'}",
                  "-device", f"{arch.console_device},chardev=console"]
    exit_device = (["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
                   if arch.transport == "ports" else [])
    machine = list(arch.machine)
    if one_thread:
        machine[machine.index("tcg")] = "tcg,thread=single"
    return [arch.qemu, *machine, *_firmware(arch), "-m", arch.memory or memory, "-nographic",
            "-no-reboot", "-nodefaults",
            "-kernel", str(k.image), "-initrd", str(tmp / "initrd.cpio"),
            *(["-dtb", str(k.dtb)] if k.dtb else []),
            # panic=-1 reboots at once on a panic, which -no-reboot turns into
            # a qemu exit without a status from the guest.
            "-append", " ".join((f"console={arch.console}", *arch.append,
                                 "panic=-1 oops=panic quiet loglevel=3")),
            *serial, *exit_device]


def run(command: list, files: list = (), arch: str = "x86_64",
        kernel: Union[str, Kernel] = "6.1", timeout: float = 120,
        memory: str = "256M", one_thread: bool = False) -> Result:
    """Boot `kernel`, run `command` as root in the guest's /lab (where `files`
    are copied), and return its stdout, stderr and exit status.

    Raises LabTimeout if the guest is not done after `timeout` seconds, and
    LabError if the guest died without reporting a status (e.g. a panic).
    `one_thread` runs the vCPUs in one host thread: multi-threaded TCG can
    run a half-patched instruction while the kernel rewrites hot functions
    (seen as an oops at vfs_read+1 while probes came and went under load).
    """
    a = _arch(arch)
    if not command:
        raise LabError("no command to run")
    if not shutil.which(a.qemu):
        raise LabError(f"{a.qemu} not found (apt-get install {a.qemu_package})")
    k = kernel if isinstance(kernel, Kernel) else _resolve_kernel(arch, kernel)
    if k.arch != a.name:
        raise LabError(f"kernel {k.release} is for {k.arch}, not {a.name}")
    with tempfile.TemporaryDirectory(prefix="plyc-vm-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "initrd.cpio").write_bytes(_initramfs(a, list(command), list(files)))
        start = time.monotonic()
        proc = subprocess.Popen(_qemu_command(a, k, memory, tmp, one_thread), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            qemu_out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            qemu_out, _ = proc.communicate()
            timed_out = True
        seconds = time.monotonic() - start

        def read(name: str) -> bytes:
            p = tmp / (name + ".log")
            return p.read_bytes() if p.exists() else b""

        if a.transport == "ports":
            result = Result(stdout=read("stdout"), stderr=read("stderr"), status=-1,
                            console=read("console").decode(errors="replace"),
                            seconds=seconds)
            status_text = read("status")
        else:
            result, status_text = _unframe(read("console"), seconds)
        if timed_out:
            raise LabTimeout(f"guest timed out after {timeout:g} s running "
                             f"{shlex.join(command)}; console tail:\n"
                             f"{_tail(result.console)}", result)
        result.status = _decode_status(a, proc.returncode, status_text, result,
                                       qemu_out.decode(errors="replace"))
        return result


def _unframe(console: bytes, seconds: float) -> tuple:
    """Cut the framed stdout, stderr and status out of a single console log."""
    result = Result(stdout=b"", stderr=b"", status=-1, seconds=seconds,
                    console=console.decode(errors="replace"))
    at = console.find(FRAME + b"stdout ")
    if at < 0:
        return result, b""
    result.console = console[:at].decode(errors="replace")
    streams = {}
    for name in ("stdout", "stderr"):
        m = re.compile(re.escape(FRAME) + name.encode() + rb" (\d+)\n").match(console, at)
        if not m:
            return result, b""
        size = int(m.group(1))
        streams[name] = console[m.end():m.end() + size]
        at = m.end() + size
    m = re.compile(re.escape(FRAME) + rb"status (\d+)\n").match(console, at)
    result.stdout, result.stderr = streams["stdout"], streams["stderr"]
    return result, m.group(1) if m else b""


def _decode_status(arch: Arch, rc: int, text: bytes, result: Result, qemu_out: str) -> int:
    """The command's status from the guest's report and qemu's exit code."""
    def died(why: str) -> LabError:
        return LabError(f"{why} (qemu exit {rc}) {qemu_out.strip()}\n"
                        f"console tail:\n{_tail(result.console)}")

    try:
        status = int(text.decode().strip())
    except ValueError:
        raise died("guest ended without reporting a status (panic? see console)")
    if arch.transport == "ports":
        # isa-debug-exit: (N<<1)|1, cut to 8 bits by the process status.
        if rc % 2 == 0 or (rc >> 1) & 0x7F != status & 0x7F:
            raise died(f"guest status {status} disagrees with qemu's exit code")
    elif rc != 0:
        raise died("qemu failed")
    return status


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])
