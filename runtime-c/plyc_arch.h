/* What the loader knows of the architecture it is compiled for (the
 * Python side's table is plyc/arch.py, the BPF side's bpf/plyc_arch.bpf.h):
 * Debian's multiarch triplet, where shared libraries live, the prefix of
 * the kernel's syscall wrapper functions, if it has them, and the size of
 * an ftrace site where kprobes can't go. */
#ifndef PLYC_ARCH_H
#define PLYC_ARCH_H

#if defined(__x86_64__)
#define PLYC_TRIPLET "x86_64-linux-gnu"
#define PLYC_SYSCALL_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define PLYC_TRIPLET "aarch64-linux-gnu"
#define PLYC_SYSCALL_PREFIX "__arm64_sys_"
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
#define PLYC_TRIPLET "arm-linux-gnueabihf"
#elif defined(__arm__)
#define PLYC_TRIPLET "arm-linux-gnueabi"
#elif defined(__riscv) && __riscv_xlen == 64
#define PLYC_TRIPLET "riscv64-linux-gnu"
/* Since 6.6; older riscv kernels spell syscalls sys_*, the next choice. */
#define PLYC_SYSCALL_PREFIX "__riscv_sys_"
/* A function's ftrace site: the nops it starts with (8 bytes, compressed
 * or not). A kernel without KPROBES_ON_FTRACE (Debian's) refuses a kprobe
 * there, not one just past it. */
#define PLYC_FTRACE_SITE 8
#elif defined(__mips__) && __mips == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PLYC_TRIPLET "mips64el-linux-gnuabi64"
#elif defined(__mips__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PLYC_TRIPLET "mipsel-linux-gnu"
#elif defined(__mips__) && __mips != 64
#define PLYC_TRIPLET "mips-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PLYC_TRIPLET "powerpc64le-linux-gnu"
/* No prefix: powerpc's syscall wrappers are sys_* (kfuncs.c). */
#elif defined(__s390x__)
#define PLYC_TRIPLET "s390x-linux-gnu"
#define PLYC_SYSCALL_PREFIX "__s390x_sys_"
#else
#define PLYC_TRIPLET "unknown"
#endif

#endif
