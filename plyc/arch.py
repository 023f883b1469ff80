"""What plyc knows about each target architecture, in one table.

Every other module reads the facts of a target from here: the BPF side's
__TARGET_ARCH_* define, the kernel's names of the saved registers, the
syscall wrapper prefix, the C ABI sizes user-space struct layouts need, the Debian
architecture and multiarch triplet, the cross compiler and where it comes
from.  The BPF runtime's own per-architecture facts (pt_regs layout,
argument registers) are in runtime-c/bpf/plyc_arch.bpf.h, the loader's in
runtime-c/plyc_arch.h.  Adding an architecture: docs/design.md."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Arch:
    name: str                 # plyc's target name (--target)
    unames: tuple             # `uname -m` of machines that are this target
    bpf_arch: str             # __TARGET_ARCH_<bpf_arch>; also the kernel's ARCH= name
    regs: tuple               # `regs->NAME`: the kernel's struct pt_regs member names
    syscall_prefix: Optional[str]   # the syscall wrapper functions' prefix (__x64_sys_), if any
    # C ABI (layouts of user-space structs): pointer/long size, alignment of long
    # long and double, size of long double, whether plain char is signed.
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

    def libc_package(self) -> str:
        """The Debian package with the static C library a build for it links."""
        return "libc6-dev" if is_native(self.name) else f"libc6-dev-{self.debian_arch}-cross"


RISCV_REGS = ("epc", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
              *(f"a{i}" for i in range(8)), *(f"s{i}" for i in range(2, 12)),
              "t3", "t4", "t5", "t6", "status", "badaddr", "cause", "orig_a0")

ARCHES = {a.name: a for a in (
    Arch("x86_64", ("x86_64",), "x86",
         ("r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx",
          "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"),
         "__x64_sys_", 8, 8, 16, True, "amd64", "x86_64-linux-gnu", "gcc", ("x86_64-",),
         "Advanced Micro Devices X86-64", "qemu-x86_64-static"),
    Arch("aarch64", ("aarch64",), "arm64",
         ("sp", "pc", "pstate") + tuple(f"x{i}" for i in range(31)),
         "__arm64_sys_", 8, 8, 16, False, "arm64", "aarch64-linux-gnu", "gcc-aarch64-linux-gnu",
         ("aarch64-",), "AArch64", "qemu-aarch64-static"),
    # 32-bit ARM has no syscall wrappers: sys_openat takes the arguments.
    Arch("armhf", ("armv7l", "armv8l"), "arm",
         tuple(f"r{i}" for i in range(16)) + ("sp", "lr", "pc", "cpsr"),
         None, 4, 8, 8, False, "armhf", "arm-linux-gnueabihf", "gcc-arm-linux-gnueabihf",
         ("arm",), "ARM", "qemu-arm-static"),
    # Syscall wrappers (__riscv_sys_*) since 6.6; older kernels take sys_*.
    Arch("riscv64", ("riscv64",), "riscv", RISCV_REGS,
         "__riscv_sys_", 8, 8, 16, False, "riscv64", "riscv64-linux-gnu", "gcc-riscv64-linux-gnu",
         ("riscv64-",), "RISC-V", "qemu-riscv64-static", debian_release="trixie"),
)}

TARGETS = list(ARCHES)


def get(target: str) -> Arch:
    try:
        return ARCHES[target]
    except KeyError:
        raise ValueError(f"unknown target '{target}' (have: {', '.join(TARGETS)})") from None


def host_target(machine: Optional[str] = None) -> Optional[str]:
    """The target this machine (or a `uname -m`) is, None if plyc has none."""
    machine = machine or os.uname().machine
    return next((a.name for a in ARCHES.values() if machine in a.unames), None)


def is_native(target: str) -> bool:
    return host_target() == target
