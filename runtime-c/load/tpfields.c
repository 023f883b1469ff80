/* Tracepoint fields: where each one the script reads is on this device
 * (its format files), and the programs' loads of integer fields rewritten
 * to match before load.
 *
 * plyc_tp_int() in bpf/plyc.bpf.h leaves three kinds of placeholder in a
 * program for an integer field of slot S:
 *   a selector   r = PLYC_TP_SEL(S) ll     (ld_imm64, "PLYC" "TP" S)
 *   a load       r = *(u64 *)(ctx + PLYC_TP_LDX + S)
 *   and after it r <<= 0; r s>>= 0         (r >>= 0 for an unsigned field)
 * Where the device's field can be loaded directly (a width of 1, 2, 4 or 8
 * bytes, aligned to it, inside the 2 KiB every kernel's verifier allows a
 * tracepoint context), the selector becomes 0, the load gets the field's offset and
 * width, and the shifts sign-extend a narrower signed field or become
 * no-ops (ja +0, which the verifier removes). Otherwise the selector
 * becomes 1 and the program reads the field with bpf_probe_read_kernel()
 * at the offset in its parameters. Either way the verifier sees a constant
 * selector and drops the path not taken. Instructions are only changed in
 * place, so libbpf's relocations and line info still hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_loader.h"
#include "plyc_attach.h"
#include "plyc_tp.h"
#include "providers/tracepoint.h"
/* How far into a tracepoint's context the verifier lets a program load:
 * the kernel's PERF_MAX_TRACE_SIZE, 2048 (8192 in newer kernels). */
#define TP_CTX_MAX 2048

static struct plyc_tploc *locs;

/* A field of a tracepoint glob's probe: its offset can differ from one
 * matched event to the next, so the tracepoint provider looks it up for each
 * event as it attaches it (runtime-c/providers/tracepoint.c). */
static int glob_slot(const struct plyc_program *P, const struct plyc_tpslot *s)
{
	const struct plyc_probe *pr = &P->probes[s->probe];

	return pr->provider == &plyc_provider_tracepoint &&
	       plyc_has_glob(((const struct plyc_tracepoint_data *)pr->data)->target);
}

const struct plyc_tploc *plyc_tp_resolve(const struct plyc_program *P)
{
	int i;

	free(locs);
	locs = calloc((size_t)P->nslots + 1, sizeof(*locs));
	if (!locs) {
		fprintf(stderr, "%s: error: out of memory\n", P->name);
		return NULL;
	}
	for (i = 0; i < P->nslots; i++) {
		const struct plyc_tpslot *s = &P->slots[i];
		const struct plyc_probe *pr = &P->probes[s->probe];
		char group[256], *event;
		uint32_t off, size;
		int err;

		if (glob_slot(P, s))
			continue;
		snprintf(group, sizeof(group), "%s", ((const struct plyc_tracepoint_data *)pr->data)->target);
		event = strchr(group, '/');
		*event++ = 0;
		err = plyc_tp_field(group, event, s->field, &off, &size);
		if (err == -ENOSYS) {
			plyc_probe_error(P, pr, "tracefs is not available (mount it on /sys/kernel/tracing)");
			return NULL;
		}
		if (err == -ENOENT && plyc_tp_exists(group, event)) {
			plyc_probe_error(P, pr, "no such tracepoint on this kernel");
			return NULL;
		}
		if (err) {
			plyc_probe_error(P, pr, "this kernel's tracepoint has no field '%s'", s->field);
			return NULL;
		}
		if (s->is_int ? (size == 0 || size > 8) : size != s->size) {
			plyc_probe_error(P, pr, "field '%s' is %u bytes on this kernel, %u where the tracer was built",
					 s->field, size, s->size);
			return NULL;
		}
		locs[i].off = off;
		locs[i].size = size;
	}
	return locs;
}

/* How many bytes of slot i's field a direct load reads (its declared
 * type's size at most), or 0 with the reason it can't. */
static uint32_t direct_width(const struct plyc_tpslot *s, const struct plyc_tploc *loc, const char **why)
{
	uint32_t n = loc->size < s->bytes ? loc->size : s->bytes;

	if (n != 1 && n != 2 && n != 4 && n != 8) {
		*why = "its width is not 1, 2, 4 or 8 bytes";
		return 0;
	}
	if (loc->off % n) {
		*why = "its offset is not a multiple of its width";
		return 0;
	}
	if (loc->off + n > TP_CTX_MAX) {
		*why = "it lies beyond the context a program may load from";
		return 0;
	}
	return n;
}

static int is_shift(const struct bpf_insn *in, int op, int reg)
{
	return in->code == (BPF_ALU64 | op | BPF_K) && in->dst_reg == reg && !in->src_reg &&
	       !in->off && !in->imm;
}

/* The slot a placeholder load at v[j] stands for, or -1. */
static int ldx_slot(const struct bpf_insn *v, size_t j, size_t cnt)
{
	const struct bpf_insn *in = &v[j];

	if (in->code != (BPF_LDX | BPF_MEM | BPF_DW) || in->off < PLYC_TP_LDX || j + 2 >= cnt)
		return -1;
	if (!is_shift(&v[j + 1], BPF_LSH, in->dst_reg) ||
	    !(is_shift(&v[j + 2], BPF_ARSH, in->dst_reg) || is_shift(&v[j + 2], BPF_RSH, in->dst_reg)))
		return -1;
	return in->off - PLYC_TP_LDX;
}

/* The slot a placeholder selector at v[j] (an ld_imm64) stands for, or -1. */
static int sel_slot(const struct bpf_insn *v, size_t j, size_t cnt)
{
	if (v[j].code != (BPF_LD | BPF_IMM | BPF_DW) || v[j].src_reg || j + 1 >= cnt ||
	    (uint32_t)v[j + 1].imm != PLYC_TP_SEL_HI || ((uint32_t)v[j].imm & PLYC_TP_SEL_MASK) != PLYC_TP_SEL_LO)
		return -1;
	return (int)((uint32_t)v[j].imm & ~PLYC_TP_SEL_MASK);
}

static void nop(struct bpf_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->code = BPF_JMP | BPF_JA;
}

static int patch_program(const struct plyc_program *P, int probe, struct bpf_program *bp)
{
	const struct bpf_insn *orig = bpf_program__insns(bp);
	size_t cnt = bpf_program__insn_cnt(bp), j;
	uint32_t *width = calloc((size_t)P->nslots + 1, sizeof(*width));
	int *loads = calloc((size_t)P->nslots + 1, sizeof(*loads));
	struct bpf_insn *v = malloc(cnt * sizeof(*v) + 1);
	int i, err = 0;

	if (!width || !loads || !v || !orig) {
		free(width);
		free(loads);
		free(v);
		return orig ? -ENOMEM : 0;
	}
	memcpy(v, orig, cnt * sizeof(*v));
	/* Which of this probe's slots have a placeholder load to rewrite. */
	for (j = 0; j < cnt; j++) {
		int s = ldx_slot(v, j, cnt);

		if (s >= 0 && s < P->nslots && P->slots[s].probe == probe && P->slots[s].is_int)
			loads[s]++;
		if (v[j].code == (BPF_LD | BPF_IMM | BPF_DW))
			j++;
	}
	for (i = 0; i < P->nslots; i++) {
		const struct plyc_tpslot *s = &P->slots[i];
		const char *why = "its load was not found in the program";

		if (s->probe != probe || !s->is_int || i >= PLYC_TP_SLOTS || glob_slot(P, s))
			continue;
		if (loads[i])
			width[i] = direct_width(s, &locs[i], &why);
		if (!P->verbose)
			continue;
		fprintf(stderr, "%s: %s: data->%s: offset %u, %u byte%s: ", P->name, P->probes[probe].spec,
			s->field, locs[i].off, locs[i].size, locs[i].size == 1 ? "" : "s");
		if (width[i])
			fprintf(stderr, "one load of %u byte%s%s\n", width[i], width[i] == 1 ? "" : "s",
				s->is_signed && width[i] < 8 ? ", sign-extended" : "");
		else
			fprintf(stderr, "read with bpf_probe_read_kernel (%s)\n", why);
	}
	for (j = 0; j < cnt; j++) {
		struct bpf_insn *in = &v[j];
		int s = sel_slot(v, j, cnt);

		if (s >= 0 && s < P->nslots && P->slots[s].probe == probe) {
			in[0].imm = width[s] ? 0 : 1;
			in[1].imm = 0;
		}
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			j++;
			continue;
		}
		s = ldx_slot(v, j, cnt);
		if (s < 0 || s >= P->nslots || P->slots[s].probe != probe || !P->slots[s].is_int)
			continue;
		if (!width[s]) {
			/* Never run: the selector sends the program to the helper. */
			in->off = 0;
			nop(&in[1]);
			nop(&in[2]);
		} else {
			static const int size_code[9] = { 0, BPF_B, BPF_H, 0, BPF_W, 0, 0, 0, BPF_DW };
			uint32_t n = width[s];

			in->code = (uint8_t)(BPF_LDX | BPF_MEM | size_code[n]);
			in->off = (int16_t)locs[s].off;
			if (P->slots[s].is_signed && n < 8) {
				in[1].imm = (int32_t)(64 - 8 * n);
				in[2].code = BPF_ALU64 | BPF_ARSH | BPF_K;
				in[2].imm = (int32_t)(64 - 8 * n);
			} else {
				nop(&in[1]);
				nop(&in[2]);
			}
		}
		j += 2;
	}
	err = bpf_program__set_insns(bp, v, cnt);
	free(width);
	free(loads);
	free(v);
	return err;
}

int plyc_tp_patch(const struct plyc_program *P, struct bpf_object *obj)
{
	int i, j, err;

	if (!locs)
		return 0;
	for (i = 0; i < P->nprobes; i++) {
		struct bpf_program *bp;

		for (j = 0; j < P->nslots && P->slots[j].probe != i; j++)
			;
		if (j == P->nslots)
			continue;
		bp = bpf_object__find_program_by_name(obj, P->probes[i].prog);
		if (!bp)
			continue;
		err = patch_program(P, i, bp);
		if (err) {
			plyc_probe_error(P, &P->probes[i], "cannot prepare the program's tracepoint field loads: %s",
					 strerror(-err));
			return 1;
		}
	}
	return 0;
}
