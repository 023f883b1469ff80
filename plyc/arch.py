"""What plyc knows about each target architecture, in one table.

Every other module reads the facts of a target from here: the BPF side's
__TARGET_ARCH_* define, the kernel's names of the saved registers, the
syscall wrapper prefix, the C ABI facts struct layouts need (plyc/layout.py
reads them), the kernel's and the C library's header folders, the Debian
architecture and multiarch triplet, the cross compiler and where it comes
from.  The BPF runtime's own per-architecture facts (pt_regs layout,
argument registers) are in runtime-c/bpf/plyc_arch.bpf.h, the loader's in
runtime-c/plyc_arch.h.  Adding an architecture: docs/design.md."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Arch:
    name: str                 # plyc's target name (--target)
    unames: tuple             # `uname -m` of machines that are this target
    bpf_arch: str             # __TARGET_ARCH_<bpf_arch>; also the kernel's ARCH= name
    regs: tuple               # `regs->NAME`: the kernel's struct pt_regs member names
    syscall_prefix: Optional[str]   # the syscall wrapper functions' prefix (__x64_sys_), if any
    # C ABI (plyc/layout.py): pointer/long size, alignment of long long and
    # double, size of long double, whether plain char is signed; the rest
    # below (ldouble_align, biggest_align, anon_bitfield_align).
    ptr: int
    llong_align: int
    ldouble: int
    char_signed: bool
    debian_arch: str          # Debian's name of the architecture
    triplet: str              # Debian's multiarch triplet (library folders, cross tools)
    cc_package: str           # the Debian package with <triplet>-gcc
    machine_prefix: tuple     # how `gcc -dumpmachine` starts for a compiler building for it
    elf_machine: str          # readelf -h's Machine line
    qemu_user: str            # qemu-user binary that runs its executables (tests)
    # A Debian release other than the build machine's whose libraries the
    # sysroot takes (riscv64 is no bookworm architecture); they are linked
    # with the machine's cross C library and runtime-c/compat's shims for
    # what that lacks (docs/design.md, "Architectures").
    debian_release: Optional[str] = None
    # Byte order: a big-endian target's BPF object is clang's bpfeb, and
    # libbpf refuses an object of the other order.
    big_endian: bool = False
    # Defines the BPF side needs beyond __TARGET_ARCH_* (one kernel ARCH=
    # name covers 32- and 64-bit MIPS, whose struct pt_regs differ).
    bpf_defines: tuple = ()
    # Kernel struct names runtime-c/bpf/plyc_arch.bpf.h defines for the
    # target (beside pt_regs: arm64's user_pt_regs, a macro for it), which
    # the generated C must not define again from BTF.
    header_types: tuple = ()
    # No Debian release has the target's libbpf, libelf and zlib as binary
    # packages (big-endian MIPS): its sysroot builds them from Debian's
    # sources with the cross gcc (plyc/sysroot.py).
    from_source: bool = False
    # More C ABI: long double's alignment (s390x: 8 for its 16 bytes),
    # __BIGGEST_ALIGNMENT__ (what a bare `aligned` attribute means), and
    # whether an unnamed bit-field aligns its struct as its type (AAPCS:
    # `struct { char a; int :0; char b; }` is 8 bytes on ARM, 5 elsewhere).
    ldouble_align: int = 16
    biggest_align: int = 16
    anon_bitfield_align: bool = False

    @property
    def kernel_arch(self) -> str:
        """The kernel tree's arch/ folder (its ARCH= name)."""
        return self.bpf_arch

    def header_dirs(self) -> tuple:
        """Where the build machine keeps this target's own C library and UAPI
        headers (those of every architecture are in /usr/include): a cross
        compiler's (/usr/<triplet>/include), then Debian's multiarch folder
        (/usr/include/<triplet>, the build machine's own, or a foreign
        architecture's libc6-dev)."""
        own = (f"/usr/include/{self.triplet}",)
        return own if is_native(self.name) else (f"/usr/{self.triplet}/include",) + own
    # Why a glibc build needs the user's own compiler ($CC of an SDK): no
    # Debian compiler and C library serve the target (ARMv6: Debian's armhf
    # is ARMv7). Empty: Debian's do.
    no_debian_glibc: str = ""
    # qemu-user's -cpu that runs only the target's instructions (tests).
    qemu_cpu: str = ""

    @property
    def watch_modes(self) -> tuple:
        """The accesses a watchpoint may watch there (bpftrace's r, w, x and
        their sums), as the kernel's arch/*/kernel/hw_breakpoint.c builds
        them from what its CPUs' debug registers take; () where it has none."""
        return WATCH_MODES.get(self.bpf_arch, ())

    @property
    def bpf_target(self) -> str:
        """clang's -target for the BPF object."""
        return "bpfeb" if self.big_endian else "bpfel"

    def libc_package(self) -> str:
        """The Debian package with the static C library a build for it links."""
        return "libc6-dev" if is_native(self.name) else f"libc6-dev-{self.debian_arch}-cross"


# Watchpoint modes by kernel architecture: x86's debug registers break on
# writes, reads-or-writes or execution, never on reads alone (Intel SDM
# vol. 3, 17.2.4); ARM's on each and on both; POWER's DAWR on data only.
# bpftrace 0.27 takes the same sets.
WATCH_MODES = {"x86": ("rw", "w", "x"), "arm64": ("r", "rw", "w", "x"), "arm": ("r", "rw", "w", "x"),
               "powerpc": ("r", "rw", "w")}


RISCV_REGS = ("epc", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
              *(f"a{i}" for i in range(8)), *(f"s{i}" for i in range(2, 12)),
              "t3", "t4", "t5", "t6", "status", "badaddr", "cause", "orig_a0")


def mips_regs(n64: bool) -> tuple:
    """MIPS register names in struct pt_regs's order (regs[0..31], then the
    special registers); o32 names $8-$11 t0-t3, n64 a4-a7."""
    temps = ("a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3") if n64 else tuple(f"t{i}" for i in range(8))
    return ("zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", *temps, *(f"s{i}" for i in range(8)),
            "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra",
            "cp0_status", "hi", "lo", "cp0_badvaddr", "cp0_cause", "cp0_epc")


PPC_REGS = (*(f"gpr{i}" for i in range(32)), "nip", "msr", "orig_gpr3", "ctr", "link", "xer", "ccr",
            "softe", "trap", "dar", "dsisr", "result")
S390_REGS = ("psw_mask", "psw_addr", *(f"gpr{i}" for i in range(16)), "orig_gpr2")

ARCHES = {a.name: a for a in (
    Arch("x86_64", ("x86_64",), "x86",
         ("r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx",
          "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"),
         "__x64_sys_", 8, 8, 16, True, "amd64", "x86_64-linux-gnu", "gcc", ("x86_64-",),
         "Advanced Micro Devices X86-64", "qemu-x86_64-static"),
    Arch("aarch64", ("aarch64",), "arm64",
         ("sp", "pc", "pstate") + tuple(f"x{i}" for i in range(31)),
         "__arm64_sys_", 8, 8, 16, False, "arm64", "aarch64-linux-gnu", "gcc-aarch64-linux-gnu",
         ("aarch64-",), "AArch64", "qemu-aarch64-static", anon_bitfield_align=True,
         header_types=("user_pt_regs",)),
    # 32-bit ARM has no syscall wrappers: sys_openat takes the arguments.
    Arch("armhf", ("armv7l", "armv8l"), "arm",
         tuple(f"r{i}" for i in range(16)) + ("sp", "lr", "pc", "cpsr"),
         None, 4, 8, 8, False, "armhf", "arm-linux-gnueabihf", "gcc-arm-linux-gnueabihf",
         ("arm",), "ARM", "qemu-arm-static", ldouble_align=8, biggest_align=8, anon_bitfield_align=True),
    # ARMv6 hard-float (Raspberry Pi Zero and 1, Raspberry Pi OS's ABI):
    # musl, or an SDK's compiler; `uname -m` armv6l.
    Arch("armv6", ("armv6l",), "arm",
         tuple(f"r{i}" for i in range(16)) + ("sp", "lr", "pc", "cpsr"),
         None, 4, 8, 8, False, "armhf", "arm-linux-gnueabihf", "gcc-arm-linux-gnueabihf",
         ("arm",), "ARM", "qemu-arm-static",
         no_debian_glibc="Debian's armhf compiler and C library are ARMv7 (instructions an ARMv6 core lacks)",
         qemu_cpu="arm1176", ldouble_align=8, biggest_align=8, anon_bitfield_align=True),
    # ARMv5TE soft-float: Debian's armel (older ARM SoCs, many routers).
    Arch("armel", ("armv5tel", "armv5tejl"), "arm",
         tuple(f"r{i}" for i in range(16)) + ("sp", "lr", "pc", "cpsr"),
         None, 4, 8, 8, False, "armel", "arm-linux-gnueabi", "gcc-arm-linux-gnueabi",
         ("arm",), "ARM", "qemu-arm-static", qemu_cpu="arm926",
         ldouble_align=8, biggest_align=8, anon_bitfield_align=True),
    # Syscall wrappers (__riscv_sys_*) since 6.6; older kernels take sys_*.
    Arch("riscv64", ("riscv64",), "riscv", RISCV_REGS,
         "__riscv_sys_", 8, 8, 16, False, "riscv64", "riscv64-linux-gnu", "gcc-riscv64-linux-gnu",
         ("riscv64-",), "RISC-V", "qemu-riscv64-static", debian_release="trixie"),
    # MIPS kernels have no syscall wrappers. o32: four argument registers.
    Arch("mipsel", ("mips",), "mips", mips_regs(False),
         None, 4, 8, 8, True, "mipsel", "mipsel-linux-gnu", "gcc-mipsel-linux-gnu",
         ("mipsel-",), "MIPS R3000", "qemu-mipsel-static", bpf_defines=("PLYC_MIPS32",),
         ldouble_align=8, biggest_align=8),
    Arch("mips64el", ("mips64",), "mips", mips_regs(True),
         None, 8, 8, 16, True, "mips64el", "mips64el-linux-gnuabi64", "gcc-mips64el-linux-gnuabi64",
         ("mips64el-",), "MIPS R3000", "qemu-mips64el-static"),
    # Syscall wrappers since 6.1 where COMPAT is off (ppc64el), but named
    # sys_* as the unwrapped ones before: the tracer tells them apart.
    Arch("ppc64le", ("ppc64le",), "powerpc", PPC_REGS,
         None, 8, 8, 16, False, "ppc64el", "powerpc64le-linux-gnu", "gcc-powerpc64le-linux-gnu",
         ("powerpc64le-",), "PowerPC64", "qemu-ppc64le-static"),
    Arch("s390x", ("s390x",), "s390", S390_REGS,
         "__s390x_sys_", 8, 8, 16, False, "s390x", "s390x-linux-gnu", "gcc-s390x-linux-gnu",
         ("s390x-",), "IBM S/390", "qemu-s390x-static", big_endian=True, ldouble_align=8, biggest_align=8),
    # Big-endian 32-bit MIPS (OpenWrt's ath79, ramips...): no Debian
    # architecture since Debian 10, but bookworm has its cross gcc and C library.
    Arch("mips", ("mips",), "mips", mips_regs(False),
         None, 4, 8, 8, True, "mips", "mips-linux-gnu", "gcc-mips-linux-gnu",
         ("mips-",), "MIPS R3000", "qemu-mips-static", big_endian=True,
         bpf_defines=("PLYC_MIPS32",), from_source=True, ldouble_align=8, biggest_align=8),
)}

TARGETS = list(ARCHES)


def get(target: str) -> Arch:
    try:
        return ARCHES[target]
    except KeyError:
        raise ValueError(f"unknown target '{target}' (have: {', '.join(TARGETS)})") from None


def host_target(machine: Optional[str] = None) -> Optional[str]:
    """The target this machine (or a `uname -m`) is, None if plyc has none."""
    # `uname -m` says "mips" on both byte orders: ours tells them apart.
    big = sys.byteorder == "big" if machine is None else None
    machine = machine or os.uname().machine
    return next((a.name for a in ARCHES.values()
                 if machine in a.unames and big in (None, a.big_endian)), None)


def is_native(target: str) -> bool:
    return host_target() == target
