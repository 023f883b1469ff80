/* What the BPF side knows of each architecture, one section each (the
 * Python side's table is plyc/arch.py; clang gets -D__TARGET_ARCH_<x>
 * from it). A section gives the kernel's struct pt_regs as the ABI fixes
 * it (no CO-RE, so kprobes run on kernels without BTF) with the kernel's
 * member names, PLYC_REG(r, name) for `regs->name`, how many arguments
 * come in registers and the stack slot of the others. The argument,
 * return value and instruction pointer registers come from libbpf's
 * bpf_tracing.h (PT_REGS_PARMn, PT_REGS_RC, PT_REGS_IP) where it has
 * them right; a section defines what it lacks (Debian 12's libbpf 1.1
 * stops at PARM5) or has wrong. */
#ifndef PLYC_ARCH_BPF_H
#define PLYC_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#define PLYC_NREGARGS 6
#define PLYC_WORD 8
#define PLYC_ARG5(r) ((r)->r9)
/* Arguments past the sixth are on the stack, above the return address. */
#define PLYC_STACK_ARG(r, n) ((r)->sp + 8 * ((n) - PLYC_NREGARGS + 1))
/* regs->NAME: the kernel's names are the members' */
#define PLYC_REG(r, name) ((r)->name)

#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
/* bpf_tracing.h reads through the user-visible struct, our first members. */
#define user_pt_regs pt_regs
#define PLYC_NREGARGS 8
#define PLYC_WORD 8
#define PLYC_ARG5(r) ((r)->regs[5])
#define PLYC_ARG6(r) ((r)->regs[6])
#define PLYC_ARG7(r) ((r)->regs[7])
#define PLYC_STACK_ARG(r, n) ((r)->sp + 8 * ((n) - PLYC_NREGARGS))
/* regs->x0..x30 are regs[0..30]; sp, pc, pstate are members */
#define PLYC_REG_sp(r) ((r)->sp)
#define PLYC_REG_pc(r) ((r)->pc)
#define PLYC_REG_pstate(r) ((r)->pstate)
#define PLYC_REG_x0(r) ((r)->regs[0])
#define PLYC_REG_x1(r) ((r)->regs[1])
#define PLYC_REG_x2(r) ((r)->regs[2])
#define PLYC_REG_x3(r) ((r)->regs[3])
#define PLYC_REG_x4(r) ((r)->regs[4])
#define PLYC_REG_x5(r) ((r)->regs[5])
#define PLYC_REG_x6(r) ((r)->regs[6])
#define PLYC_REG_x7(r) ((r)->regs[7])
#define PLYC_REG_x8(r) ((r)->regs[8])
#define PLYC_REG_x9(r) ((r)->regs[9])
#define PLYC_REG_x10(r) ((r)->regs[10])
#define PLYC_REG_x11(r) ((r)->regs[11])
#define PLYC_REG_x12(r) ((r)->regs[12])
#define PLYC_REG_x13(r) ((r)->regs[13])
#define PLYC_REG_x14(r) ((r)->regs[14])
#define PLYC_REG_x15(r) ((r)->regs[15])
#define PLYC_REG_x16(r) ((r)->regs[16])
#define PLYC_REG_x17(r) ((r)->regs[17])
#define PLYC_REG_x18(r) ((r)->regs[18])
#define PLYC_REG_x19(r) ((r)->regs[19])
#define PLYC_REG_x20(r) ((r)->regs[20])
#define PLYC_REG_x21(r) ((r)->regs[21])
#define PLYC_REG_x22(r) ((r)->regs[22])
#define PLYC_REG_x23(r) ((r)->regs[23])
#define PLYC_REG_x24(r) ((r)->regs[24])
#define PLYC_REG_x25(r) ((r)->regs[25])
#define PLYC_REG_x26(r) ((r)->regs[26])
#define PLYC_REG_x27(r) ((r)->regs[27])
#define PLYC_REG_x28(r) ((r)->regs[28])
#define PLYC_REG_x29(r) ((r)->regs[29])
#define PLYC_REG_x30(r) ((r)->regs[30])
#define PLYC_REG(r, name) PLYC_REG_##name(r)

#elif defined(__TARGET_ARCH_arm)
struct pt_regs {
	__u32 uregs[18];
};
#define PLYC_NREGARGS 4
#define PLYC_WORD 4
#define PLYC_STACK_ARG(r, n) ((r)->uregs[13] + 4 * ((n) - PLYC_NREGARGS))
/* A 32-bit register holds a signed value: retval must be negative when it is. */
#define PLYC_RET(r) ((__u64)(__s64)(__s32)(r)->uregs[0])
/* bpf_tracing.h's PT_REGS_IP is uregs[12], the "ip" scratch register: the pc is r15. */
#define PLYC_IP(r) ((r)->uregs[15])
/* regs->r0..r15, sp, lr, pc, cpsr */
#define PLYC_REG_sp(r) ((r)->uregs[13])
#define PLYC_REG_lr(r) ((r)->uregs[14])
#define PLYC_REG_pc(r) ((r)->uregs[15])
#define PLYC_REG_cpsr(r) ((r)->uregs[16])
#define PLYC_REG_r0(r) ((r)->uregs[0])
#define PLYC_REG_r1(r) ((r)->uregs[1])
#define PLYC_REG_r2(r) ((r)->uregs[2])
#define PLYC_REG_r3(r) ((r)->uregs[3])
#define PLYC_REG_r4(r) ((r)->uregs[4])
#define PLYC_REG_r5(r) ((r)->uregs[5])
#define PLYC_REG_r6(r) ((r)->uregs[6])
#define PLYC_REG_r7(r) ((r)->uregs[7])
#define PLYC_REG_r8(r) ((r)->uregs[8])
#define PLYC_REG_r9(r) ((r)->uregs[9])
#define PLYC_REG_r10(r) ((r)->uregs[10])
#define PLYC_REG_r11(r) ((r)->uregs[11])
#define PLYC_REG_r12(r) ((r)->uregs[12])
#define PLYC_REG_r13(r) ((r)->uregs[13])
#define PLYC_REG_r14(r) ((r)->uregs[14])
#define PLYC_REG_r15(r) ((r)->uregs[15])
#define PLYC_REG(r, name) PLYC_REG_##name(r)

#elif defined(__TARGET_ARCH_riscv)
/* The user-visible registers (bpf_tracing.h reads through this struct; it
 * names the first one pc), then the kernel's struct pt_regs: the same 32
 * words, epc first, and four of the kernel's own. */
struct user_regs_struct {
	__u64 pc;
	__u64 ra, sp, gp, tp, t0, t1, t2, s0, s1, a0;
	__u64 a1, a2, a3, a4, a5, a6, a7, s2, s3, s4;
	__u64 s5, s6, s7, s8, s9, s10, s11, t3, t4, t5;
	__u64 t6;
};
struct pt_regs {
	__u64 epc;
	__u64 ra, sp, gp, tp, t0, t1, t2, s0, s1, a0;
	__u64 a1, a2, a3, a4, a5, a6, a7, s2, s3, s4;
	__u64 s5, s6, s7, s8, s9, s10, s11, t3, t4, t5;
	__u64 t6;
	__u64 status, badaddr, cause, orig_a0;
};
#define PLYC_NREGARGS 8
#define PLYC_WORD 8
#define PLYC_ARG5(r) ((r)->a5)
#define PLYC_ARG6(r) ((r)->a6)
#define PLYC_ARG7(r) ((r)->a7)
/* Arguments past a7 are on the stack, from sp up. */
#define PLYC_STACK_ARG(r, n) ((r)->sp + 8 * ((n) - PLYC_NREGARGS))
/* regs->NAME: the kernel's names are the members' */
#define PLYC_REG(r, name) ((r)->name)

#else
#error "plyc: no __TARGET_ARCH_x86, _arm64, _arm or _riscv given (plyc/arch.py gives one)"
#endif

/* bpf_tracing.h names x86's registers as the kernel does (di, not rdi)
 * when it believes vmlinux.h was included. */
#define __VMLINUX_H__
#include <bpf/bpf_tracing.h>

#define PLYC_ARG0(r) PT_REGS_PARM1(r)
#define PLYC_ARG1(r) PT_REGS_PARM2(r)
#define PLYC_ARG2(r) PT_REGS_PARM3(r)
#define PLYC_ARG3(r) PT_REGS_PARM4(r)
#define PLYC_ARG4(r) PT_REGS_PARM5(r)
#ifndef PLYC_RET
#define PLYC_RET(r) PT_REGS_RC(r)
#endif
#ifndef PLYC_IP
#define PLYC_IP(r) PT_REGS_IP(r)
#endif

#endif
