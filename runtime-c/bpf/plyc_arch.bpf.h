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

#elif defined(__TARGET_ARCH_mips)
/* The kernel's struct pt_regs: a 32-bit kernel (o32) keeps the argument
 * save area of its C calling convention first. No CONFIG_CPU_HAS_SMARTMIPS
 * (acx) nor Octeon registers: Debian's and OpenWrt's kernels have neither. */
#ifdef PLYC_MIPS32
typedef __u32 plyc_mips_reg;
#else
typedef __u64 plyc_mips_reg;
#endif
struct pt_regs {
#ifdef PLYC_MIPS32
	__u32 pad0[8];
#endif
	plyc_mips_reg regs[32];
	plyc_mips_reg cp0_status, hi, lo, cp0_badvaddr, cp0_cause, cp0_epc;
};
#ifdef PLYC_MIPS32
/* o32: a0-a3, then the caller's stack, where a0-a3 have home slots too. */
#define PLYC_NREGARGS 4
#define PLYC_WORD 4
#define PLYC_STACK_ARG(r, n) ((r)->regs[29] + 4 * (n))
/* A 32-bit register holds a signed value: retval must be negative when it is. */
#define PLYC_RET(r) ((__u64)(__s64)(__s32)(r)->regs[2])
#else
/* n64: a0-a7 ($4-$11), then the stack. */
#define PLYC_NREGARGS 8
#define PLYC_WORD 8
#define PLYC_ARG5(r) ((r)->regs[9])
#define PLYC_ARG6(r) ((r)->regs[10])
#define PLYC_ARG7(r) ((r)->regs[11])
#define PLYC_STACK_ARG(r, n) ((r)->regs[29] + 8 * ((n) - PLYC_NREGARGS))
#endif
/* regs->NAME: the ABI's names of regs[0..31] (plyc/arch.py's mips_regs) */
#define PLYC_REG_zero(r) ((r)->regs[0])
#define PLYC_REG_at(r) ((r)->regs[1])
#define PLYC_REG_v0(r) ((r)->regs[2])
#define PLYC_REG_v1(r) ((r)->regs[3])
#define PLYC_REG_a0(r) ((r)->regs[4])
#define PLYC_REG_a1(r) ((r)->regs[5])
#define PLYC_REG_a2(r) ((r)->regs[6])
#define PLYC_REG_a3(r) ((r)->regs[7])
#ifdef PLYC_MIPS32
#define PLYC_REG_t0(r) ((r)->regs[8])
#define PLYC_REG_t1(r) ((r)->regs[9])
#define PLYC_REG_t2(r) ((r)->regs[10])
#define PLYC_REG_t3(r) ((r)->regs[11])
#define PLYC_REG_t4(r) ((r)->regs[12])
#define PLYC_REG_t5(r) ((r)->regs[13])
#define PLYC_REG_t6(r) ((r)->regs[14])
#define PLYC_REG_t7(r) ((r)->regs[15])
#else
#define PLYC_REG_a4(r) ((r)->regs[8])
#define PLYC_REG_a5(r) ((r)->regs[9])
#define PLYC_REG_a6(r) ((r)->regs[10])
#define PLYC_REG_a7(r) ((r)->regs[11])
#define PLYC_REG_t0(r) ((r)->regs[12])
#define PLYC_REG_t1(r) ((r)->regs[13])
#define PLYC_REG_t2(r) ((r)->regs[14])
#define PLYC_REG_t3(r) ((r)->regs[15])
#endif
#define PLYC_REG_s0(r) ((r)->regs[16])
#define PLYC_REG_s1(r) ((r)->regs[17])
#define PLYC_REG_s2(r) ((r)->regs[18])
#define PLYC_REG_s3(r) ((r)->regs[19])
#define PLYC_REG_s4(r) ((r)->regs[20])
#define PLYC_REG_s5(r) ((r)->regs[21])
#define PLYC_REG_s6(r) ((r)->regs[22])
#define PLYC_REG_s7(r) ((r)->regs[23])
#define PLYC_REG_t8(r) ((r)->regs[24])
#define PLYC_REG_t9(r) ((r)->regs[25])
#define PLYC_REG_k0(r) ((r)->regs[26])
#define PLYC_REG_k1(r) ((r)->regs[27])
#define PLYC_REG_gp(r) ((r)->regs[28])
#define PLYC_REG_sp(r) ((r)->regs[29])
#define PLYC_REG_fp(r) ((r)->regs[30])
#define PLYC_REG_ra(r) ((r)->regs[31])
#define PLYC_REG_cp0_status(r) ((r)->cp0_status)
#define PLYC_REG_hi(r) ((r)->hi)
#define PLYC_REG_lo(r) ((r)->lo)
#define PLYC_REG_cp0_badvaddr(r) ((r)->cp0_badvaddr)
#define PLYC_REG_cp0_cause(r) ((r)->cp0_cause)
#define PLYC_REG_cp0_epc(r) ((r)->cp0_epc)
#define PLYC_REG(r, name) PLYC_REG_##name(r)

#elif defined(__TARGET_ARCH_powerpc)
/* The kernel's struct pt_regs on ppc64 (its first 44 words, the user-visible ones). */
struct pt_regs {
	__u64 gpr[32];
	__u64 nip, msr, orig_gpr3, ctr, link, xer, ccr, softe, trap, dar, dsisr, result;
};
/* ELFv2: r3-r10, then the caller's parameter save area, 32 bytes above its
 * sp, with a slot for every argument (the register ones too). */
#define PLYC_NREGARGS 8
#define PLYC_WORD 8
#define PLYC_ARG5(r) ((r)->gpr[8])
#define PLYC_ARG6(r) ((r)->gpr[9])
#define PLYC_ARG7(r) ((r)->gpr[10])
#define PLYC_STACK_ARG(r, n) ((r)->gpr[1] + 32 + 8 * (n))
/* A syscall's first argument, kept at entry (gpr3 becomes its return value). */
#define PLYC_SYSCALL_ARG0(r) ((r)->orig_gpr3)
/* regs->gpr0..gpr31, nip, msr, ... */
#define PLYC_REG_gpr0(r) ((r)->gpr[0])
#define PLYC_REG_gpr1(r) ((r)->gpr[1])
#define PLYC_REG_gpr2(r) ((r)->gpr[2])
#define PLYC_REG_gpr3(r) ((r)->gpr[3])
#define PLYC_REG_gpr4(r) ((r)->gpr[4])
#define PLYC_REG_gpr5(r) ((r)->gpr[5])
#define PLYC_REG_gpr6(r) ((r)->gpr[6])
#define PLYC_REG_gpr7(r) ((r)->gpr[7])
#define PLYC_REG_gpr8(r) ((r)->gpr[8])
#define PLYC_REG_gpr9(r) ((r)->gpr[9])
#define PLYC_REG_gpr10(r) ((r)->gpr[10])
#define PLYC_REG_gpr11(r) ((r)->gpr[11])
#define PLYC_REG_gpr12(r) ((r)->gpr[12])
#define PLYC_REG_gpr13(r) ((r)->gpr[13])
#define PLYC_REG_gpr14(r) ((r)->gpr[14])
#define PLYC_REG_gpr15(r) ((r)->gpr[15])
#define PLYC_REG_gpr16(r) ((r)->gpr[16])
#define PLYC_REG_gpr17(r) ((r)->gpr[17])
#define PLYC_REG_gpr18(r) ((r)->gpr[18])
#define PLYC_REG_gpr19(r) ((r)->gpr[19])
#define PLYC_REG_gpr20(r) ((r)->gpr[20])
#define PLYC_REG_gpr21(r) ((r)->gpr[21])
#define PLYC_REG_gpr22(r) ((r)->gpr[22])
#define PLYC_REG_gpr23(r) ((r)->gpr[23])
#define PLYC_REG_gpr24(r) ((r)->gpr[24])
#define PLYC_REG_gpr25(r) ((r)->gpr[25])
#define PLYC_REG_gpr26(r) ((r)->gpr[26])
#define PLYC_REG_gpr27(r) ((r)->gpr[27])
#define PLYC_REG_gpr28(r) ((r)->gpr[28])
#define PLYC_REG_gpr29(r) ((r)->gpr[29])
#define PLYC_REG_gpr30(r) ((r)->gpr[30])
#define PLYC_REG_gpr31(r) ((r)->gpr[31])
#define PLYC_REG_nip(r) ((r)->nip)
#define PLYC_REG_msr(r) ((r)->msr)
#define PLYC_REG_orig_gpr3(r) ((r)->orig_gpr3)
#define PLYC_REG_ctr(r) ((r)->ctr)
#define PLYC_REG_link(r) ((r)->link)
#define PLYC_REG_xer(r) ((r)->xer)
#define PLYC_REG_ccr(r) ((r)->ccr)
#define PLYC_REG_softe(r) ((r)->softe)
#define PLYC_REG_trap(r) ((r)->trap)
#define PLYC_REG_dar(r) ((r)->dar)
#define PLYC_REG_dsisr(r) ((r)->dsisr)
#define PLYC_REG_result(r) ((r)->result)
#define PLYC_REG(r, name) PLYC_REG_##name(r)

#elif defined(__TARGET_ARCH_s390)
/* The kernel's struct pt_regs on s390x: its first words are the
 * user-visible user_pt_regs' (what bpf_tracing.h reads through), then
 * orig_gpr2, the first argument of a syscall (gpr2 is -ENOSYS while the
 * syscall runs, then its return value). */
typedef struct pt_regs user_pt_regs;
struct pt_regs {
	__u64 args[1];
	struct { __u64 mask, addr; } psw;
	__u64 gprs[16];
	__u64 orig_gpr2;
};
/* r2-r6, then the caller's stack past its 160-byte register save area. */
#define PLYC_NREGARGS 5
#define PLYC_WORD 8
#define PLYC_STACK_ARG(r, n) ((r)->gprs[15] + 160 + 8 * ((n) - PLYC_NREGARGS))
#define PLYC_SYSCALL_ARG0(r) ((r)->orig_gpr2)
/* regs->psw_mask, psw_addr, gpr0..gpr15, orig_gpr2 */
#define PLYC_REG_psw_mask(r) ((r)->psw.mask)
#define PLYC_REG_psw_addr(r) ((r)->psw.addr)
#define PLYC_REG_orig_gpr2(r) ((r)->orig_gpr2)
#define PLYC_REG_gpr0(r) ((r)->gprs[0])
#define PLYC_REG_gpr1(r) ((r)->gprs[1])
#define PLYC_REG_gpr2(r) ((r)->gprs[2])
#define PLYC_REG_gpr3(r) ((r)->gprs[3])
#define PLYC_REG_gpr4(r) ((r)->gprs[4])
#define PLYC_REG_gpr5(r) ((r)->gprs[5])
#define PLYC_REG_gpr6(r) ((r)->gprs[6])
#define PLYC_REG_gpr7(r) ((r)->gprs[7])
#define PLYC_REG_gpr8(r) ((r)->gprs[8])
#define PLYC_REG_gpr9(r) ((r)->gprs[9])
#define PLYC_REG_gpr10(r) ((r)->gprs[10])
#define PLYC_REG_gpr11(r) ((r)->gprs[11])
#define PLYC_REG_gpr12(r) ((r)->gprs[12])
#define PLYC_REG_gpr13(r) ((r)->gprs[13])
#define PLYC_REG_gpr14(r) ((r)->gprs[14])
#define PLYC_REG_gpr15(r) ((r)->gprs[15])
#define PLYC_REG(r, name) PLYC_REG_##name(r)

#else
#error "plyc: no __TARGET_ARCH_x86, _arm64, _arm, _riscv, _mips, _powerpc or _s390 given (plyc/arch.py gives one)"
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
