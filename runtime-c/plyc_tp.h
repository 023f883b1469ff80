/* The placeholders of an integer tracepoint field's load, shared by the BPF
 * side that leaves them (plyc_tp_int() in bpf/plyc.bpf.h) and the tracer
 * that rewrites them before load (tpfields.c). No kernel types: both sides
 * include it. plyc/codegen/resources.py has PLYC_TP_SLOTS as TP_DIRECT_SLOTS
 * (tests/test_tp_fields.py checks they agree). */
#ifndef PLYC_TP_H
#define PLYC_TP_H

#define PLYC_TP_SEL_HI 0x504c5943u   /* "PLYC" */
#define PLYC_TP_SEL_LO 0x54500000u   /* "TP", then the slot in 20 bits */
#define PLYC_TP_SEL_MASK 0xfff00000u
#define PLYC_TP_LDX 0x4000           /* + slot, below 0x8000 */
#define PLYC_TP_SLOTS 0x4000         /* slots read by a rewritten load */

/* A glob's probe name in plyc_tp_names (`probe`): room for a uprobe's
 * path. plyc/frontends/bpftrace/builtins.py has it as TP_NAME_SIZE. */
#define PLYC_TP_NAME_SIZE 128

#endif
