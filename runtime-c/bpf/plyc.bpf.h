/* BPF-side runtime of plyc tracers: the kernel ABI types a program needs
 * (no vmlinux.h), the maps every tracer has, and the helpers that
 * plyc/builtins.py and plyc/codegen/cgen.py emit calls to. Before including it the
 * generated program defines PLYC_RINGBUF_SIZE, PLYC_NSTATS,
 * PLYC_ZERO_WORDS, PLYC_EVENT_MAX, PLYC_EVENT_SLOTS and, when it uses
 * stacks, PLYC_STACK_ENTRIES. */
#ifndef PLYC_BPF_H
#define PLYC_BPF_H

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_LRU_PERCPU_HASH = 10,
	BPF_MAP_TYPE_RINGBUF = 27,
};

#define BPF_F_CURRENT_CPU 0xffffffffULL
#define BPF_F_USER_STACK (1ULL << 8)

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* The first n bytes of an integer, where a read of an n-byte value into a
 * wider one must go: its low end, the last bytes on a big-endian target. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PLYC_LOW_BYTES(p, n) ((char *)(p) + sizeof(*(p)) - (n))
#else
#define PLYC_LOW_BYTES(p, n) ((char *)(p))
#endif
/* v (a __u64) = the kernel member lvalue `lv`, read with `read`
 * (bpf_core_read or _user) at the size the device's kernel has for it
 * (CO-RE): in v's low end, where a big-endian read leaves it high. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PLYC_CORE_SCALAR(read, v, lv) ({						\
	__u32 __n = bpf_core_field_size(lv);						\
	read(&(v), __n, &(lv));								\
	if (__n < 8)									\
		(v) >>= 64 - 8 * __n;							\
})
#else
#define PLYC_CORE_SCALAR(read, v, lv) read(&(v), bpf_core_field_size(lv), &(lv))
#endif
/* v (a __u64) = the bit-field `(s)->fld` (s a pointer, fld a member or a
 * chain of them), read with `read` (bpf_probe_read_kernel or _user) where
 * the device's kernel has its bits (CO-RE field info): the bytes holding
 * it into v's low end, shifted up past the bits above it, then down past
 * those below, keeping its sign where the kernel's type has one. */
#define PLYC_CORE_BITFIELD(read, v, s, fld) ({						\
	__u32 __n = __builtin_preserve_field_info((s)->fld, BPF_FIELD_BYTE_SIZE);	\
	read(PLYC_LOW_BYTES(&(v), __n), __n,						\
	     (const char *)(s) + __builtin_preserve_field_info((s)->fld, BPF_FIELD_BYTE_OFFSET)); \
	(v) <<= __builtin_preserve_field_info((s)->fld, BPF_FIELD_LSHIFT_U64);		\
	if (__builtin_preserve_field_info((s)->fld, BPF_FIELD_SIGNED))			\
		(v) = (__u64)((__s64)(v) >> __builtin_preserve_field_info((s)->fld, BPF_FIELD_RSHIFT_U64)); \
	else										\
		(v) >>= __builtin_preserve_field_info((s)->fld, BPF_FIELD_RSHIFT_U64);	\
})
/* v = the register lvalue `reg` (a word of 4 or 8 bytes), read with `read`. */
#define PLYC_READ_LOW(read, v, reg) read(PLYC_LOW_BYTES(&(v), sizeof(reg)), sizeof(reg), &(reg))

/* The target's registers and argument ABI: PLYC_ARGn, PLYC_RET, PLYC_IP,
 * PLYC_REG, struct pt_regs. */
#include "plyc_arch.bpf.h"

#ifdef PLYC_USDT
/* libbpf's USDT support (plyc_arch.bpf.h gave bpf_tracing.h the kernel's
 * register names). */
#include <bpf/usdt.bpf.h>
#endif

#define PLYC_E2BIG 7
#define PLYC_ENOMEM 12
#define PLYC_EBUSY 16
#define PLYC_EEXIST 17
#define PLYC_ENOSPC 28
#define PLYC_STACK_DEPTH 127

struct plyc_minmax {
	__s64 value;
	__u64 set;
};

struct plyc_avg {
	__s64 sum;
	__u64 count;
};

/* One interval of bpftrace's tseries(): the value, what its aggregator
 * keeps beside it (the last value's time, avg's count, min/max's "set"),
 * and the interval's number (TAI / interval; 0: never used). */
struct plyc_ts_slot {
	__s64 value;
	__u64 meta;
	__u64 epoch;
};

/* The output: a ring buffer (5.8+), or on older kernels the tracer makes
 * it a perf event array before load (runtime-c/io/events.c). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PLYC_RINGBUF_SIZE);
} plyc_events SEC(".maps");

/* Cleared by the tracer when the device has no ring buffer. The verifier
 * knows a frozen .rodata value and checks only the path it selects, so the
 * other path's helpers never meet a kernel that lacks them. */
const volatile __u32 plyc_has_ringbuf = 1;

/* The tracer's own PID namespace (the device and inode of its
 * /proc/self/ns/pid), set at start-up (runtime-c/load/pidns.c); inode 0
 * where it runs in the initial namespace or the kernel has no
 * bpf_get_ns_current_pid_tgid (5.7). Frozen, so the verifier checks only
 * the branch it selects: an older kernel never meets the helper. */
const volatile __u64 plyc_pidns_dev = 0;
const volatile __u64 plyc_pidns_ino = 0;

struct bpf_pidns_info {
	__u32 pid;
	__u32 tgid;
};

/* bpf_get_current_pid_tgid()'s tgid << 32 | pid as the tracer's PID
 * namespace numbers them (bpftrace 0.27's `pid`, `tid`, and -p's filter):
 * 0 for a task that namespace cannot see, as the helper leaves it. */
static __always_inline __u64 plyc_ns_pid_tgid(void)
{
	struct bpf_pidns_info ns = {};

	if (!plyc_pidns_ino)
		return bpf_get_current_pid_tgid();
	bpf_get_ns_current_pid_tgid(plyc_pidns_dev, plyc_pidns_ino, &ns, sizeof(ns));
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* The perf-buffer path builds a record in its probe's slot (probes can
 * interrupt one another, so none shares one), then copies it out with its
 * submit time: the tracer puts records from different CPUs back in order
 * by it. `busy`: a uprobe preempted while it holds its slot (6.0+, see
 * cgen.PREEMPTIBLE). The tracer shrinks the map to one entry when it uses
 * the ring buffer. */
struct plyc_evslot {
	__u32 busy;
	__u32 pad;
	__u64 time;                     /* sent: time, then the record */
	__u8 rec[PLYC_EVENT_MAX] __attribute__((aligned(8)));
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLYC_EVENT_SLOTS);
	__type(key, __u32);
	__type(value, struct plyc_evslot);
} plyc_evbuf SEC(".maps");

/* Per-CPU counts of what a probe could not do, PLYC_NSTATS (1 + maps)
 * slots a row (the loader reads them by the same layout, plyc_rt.h):
 * row 0, slot 0: events lost to a full ring buffer; slot 1 + i: updates of
 * map i dropped because it was full (-E2BIG). Row 1: the kernel
 * refused an update because the map was busy (-EBUSY: its bucket lock was
 * held on this CPU, by a probe that this one interrupted); slot 0: stacks
 * that collided with another in the stack map (-EEXIST). Row 2: updates
 * refused for any other reason; slot 0: stacks not stored for another
 * reason (a full stack map). Row 3, slot 1 + i: new keys of map i the
 * kernel had no memory for (-ENOMEM: a map allocated as keys come,
 * runtime-c/load/mapmem.c). */
#define PLYC_STAT_ROWS 4
#define PLYC_STAT_LOST 0
#define PLYC_STAT_FULL(i) (1 + (i))
#define PLYC_STAT_BUSY(i) (PLYC_NSTATS + 1 + (i))
#define PLYC_STAT_OTHER(i) (2 * PLYC_NSTATS + 1 + (i))
#define PLYC_STAT_NOMEM(i) (3 * PLYC_NSTATS + 1 + (i))
#define PLYC_STAT_STACK_COLLISION PLYC_NSTATS
#define PLYC_STAT_STACK_OTHER (2 * PLYC_NSTATS)
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLYC_STAT_ROWS * PLYC_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} plyc_stats SEC(".maps");

#ifdef PLYC_STACK_ENTRIES
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, PLYC_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PLYC_STACK_DEPTH * sizeof(__u64));
} plyc_stacks SEC(".maps");
#endif

#ifdef PLYC_MAP_LEN
/* bpftrace's len(@m): bpf_for_each_map_elem() (Linux 5.13) returns how
 * many entries it visited; this callback visits them all and does nothing. */
static long plyc_count_entry(void *map, const void *key, void *value, void *ctx)
{
	return 0;
}
#endif

#ifdef PLYC_PERF_CTX
/* bpftrace's `ctx` in a perf-event probe: a struct bpf_perf_event_data *,
 * read by loads from the context, which the verifier rewrites into reads
 * of the sample's registers, period and address (the memory the context
 * points to holds other things). Copied so here, word by word, into a
 * per-CPU value, whose address is the ctx scripts read through (members,
 * casts to their own structs). */
struct plyc_perf_ctx {
	struct pt_regs regs;
	__u64 sample_period;
	__u64 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct plyc_perf_ctx);
} plyc_perf_ctx_copy SEC(".maps");

static __always_inline __u64 plyc_perf_ctx(void *ctx)
{
	__u32 zero = 0;
	struct plyc_perf_ctx *c = bpf_map_lookup_elem(&plyc_perf_ctx_copy, &zero);

	if (!c)
		return 0;
	*c = *(struct plyc_perf_ctx *)ctx;
	return (__u64)(unsigned long)c;
}
#endif

#ifdef PLYC_TP_NAMES
/* `probe` in a tracepoint wildcard: the BPF cookie the tracer attached each
 * matched event with (1, 2, ...) -> "tracepoint:group:event", filled by
 * the tracer as it attaches (runtime-c/providers/tracepoint.c). The event's
 * own id can't be used: perf overwrites the record's first 8 bytes, where
 * it is, with a pt_regs pointer. Cookies need Linux 5.15. */
#include "../plyc_tp.h"   /* PLYC_TP_NAME_SIZE: the tracer's too */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, char[PLYC_TP_NAME_SIZE]);
} plyc_tp_names SEC(".maps");

static __always_inline void plyc_tp_name(void *ctx, char *dst)
{
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	const char *name = bpf_map_lookup_elem(&plyc_tp_names, &id);

	if (name)
		__builtin_memcpy(dst, name, PLYC_TP_NAME_SIZE);
}
#endif

#ifdef PLYC_TP_GLOB_FIELDS
/* A field read in a tracepoint glob's probe: where it is in each matched
 * event, under (the event's BPF cookie, the field's slot), filled by the
 * tracer as it attaches (runtime-c/providers/tracepoint.c). */
struct plyc_tp_loc {
	__u32 off, size;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct plyc_tp_loc);
} plyc_tp_offs SEC(".maps");

static __always_inline const struct plyc_tp_loc *plyc_tp_glob_loc(void *ctx, __u32 slot)
{
	__u64 key = bpf_get_attach_cookie(ctx) << 32 | slot;

	return bpf_map_lookup_elem(&plyc_tp_offs, &key);
}

#define plyc_tp_glob_int(ctx, slot, bytes, is_signed) ({					\
	const struct plyc_tp_loc *__l = plyc_tp_glob_loc(ctx, slot);				\
	__l ? plyc_tp_read(ctx, __l->off, __l->size, bytes, is_signed) : 0;			\
})

/* A string or array field, read whole; dst stays zeroed if it is unknown. */
static __always_inline void plyc_tp_glob_bytes(void *ctx, __u32 slot, void *dst, __u32 size)
{
	const struct plyc_tp_loc *l = plyc_tp_glob_loc(ctx, slot);

	if (l)
		bpf_probe_read_kernel(dst, size, (const char *)ctx + l->off);
}
#endif

/* Set by the tracer when it stops: probes do nothing from then on, so END
 * and the final dump see a still picture. */
volatile __u32 plyc_stopped;

/* The initial value of a new aggregation entry. It lives in .bss, a map,
 * so it can be handed to bpf_map_update_elem() however large it is. */
static __u64 plyc_zero[PLYC_ZERO_WORDS];

static __always_inline void plyc_count_stat(__u32 index)
{
	__u64 *count = bpf_map_lookup_elem(&plyc_stats, &index);

	if (count)
		*count += 1;
}

static __always_inline void plyc_count_lost(void)
{
	plyc_count_stat(PLYC_STAT_LOST);
}

#ifdef PLYC_LOOP_CAPS
/* Per-CPU counts of while loops stopped by plyc's cap, one slot a loop
 * (codegen/loops.py); the tracer warns of them at exit (loopcaps.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLYC_LOOP_CAPS);
	__type(key, __u32);
	__type(value, __u64);
} plyc_loopcap SEC(".maps");

static __always_inline void plyc_count_loopcap(__u32 index)
{
	__u64 *count = bpf_map_lookup_elem(&plyc_loopcap, &index);

	if (count)
		*count += 1;
}
#endif

/* Room for an output record of `size` bytes (a constant), or NULL: the
 * caller counts the loss. Probe `slot` builds its records in
 * plyc_evbuf[slot] when there is no ring buffer. The ring buffer's record
 * goes straight back, unchecked: a second NULL check of it here would leave
 * the caller's check testing a pointer the verifier already knows is
 * valid, and verifiers before 6.2 then follow the NULL branch too and
 * refuse the program ("Unreleased reference") when clang merges the two. */
static __always_inline void *plyc_event_reserve(__u32 size, __u32 slot)
{
	struct plyc_evslot *s;

	if (plyc_has_ringbuf)
		return bpf_ringbuf_reserve(&plyc_events, size, 0);
	s = bpf_map_lookup_elem(&plyc_evbuf, &slot);
	if (!s || s->busy)
		return 0;
	s->busy = 1;
	return s->rec;
}

/* Send a record from plyc_event_reserve(). A perf buffer that is full
 * (-ENOSPC) is not counted here: the kernel tells the tracer how many
 * records it dropped (PERF_RECORD_LOST). */
static __always_inline void plyc_event_submit(void *ctx, void *rec, __u32 size)
{
	struct plyc_evslot *s;
	long err;

	if (plyc_has_ringbuf) {
		bpf_ringbuf_submit(rec, 0);
		return;
	}
	s = (struct plyc_evslot *)((char *)rec - __builtin_offsetof(struct plyc_evslot, rec));
	s->time = bpf_ktime_get_ns();
	err = bpf_perf_event_output(ctx, &plyc_events, BPF_F_CURRENT_CPU, &s->time, sizeof(s->time) + size);
	if (err && err != -PLYC_ENOSPC)
		plyc_count_lost();
	s->busy = 0;
}

/* A refused map update, counted by its reason. */
static __always_inline void plyc_count_refusal(int err, __u32 map_index)
{
	if (err == -PLYC_E2BIG)
		plyc_count_stat(PLYC_STAT_FULL(map_index));
	else if (err == -PLYC_ENOMEM)
		plyc_count_stat(PLYC_STAT_NOMEM(map_index));
	else if (err == -PLYC_EBUSY)
		plyc_count_stat(PLYC_STAT_BUSY(map_index));
	else
		plyc_count_stat(PLYC_STAT_OTHER(map_index));
}

/* The value of `key` in a per-CPU aggregation, created zeroed if missing:
 * only a new key updates the map, every later event adds in place. NULL
 * (and the reason counted) when the kernel refuses the new key. -EEXIST
 * is a probe on another CPU creating it at the same moment, as good as
 * ours; a NULL lookup after it (or after our own insert) is `delete` on
 * another CPU removing it meanwhile: the event counts as if it came just
 * before the delete, so nothing is lost. Update errors are compared as
 * ints: before 6.4 the verifier turns the helper into a direct call of the
 * map's update, which returns an int, so -EEXIST reaches the program
 * zero-extended (4294967279). */
static __always_inline void *plyc_agg_lookup(void *map, const void *key, __u32 map_index)
{
	void *value = bpf_map_lookup_elem(map, key);
	int err;

	if (value)
		return value;
	err = (int)bpf_map_update_elem(map, key, plyc_zero, BPF_NOEXIST);
	if (err && err != -PLYC_EEXIST) {
		plyc_count_refusal(err, map_index);
		return 0;
	}
	return bpf_map_lookup_elem(map, key);
}

static __always_inline void plyc_map_store(void *map, const void *key, const void *value,
					   __u32 map_index)
{
	int err = (int)bpf_map_update_elem(map, key, value, BPF_ANY);

	if (err)
		plyc_count_refusal(err, map_index);
}

#ifdef PLYC_STACK_ENTRIES
/* `stack`: the id of the current kernel stack in plyc_stacks, or a negative
 * errno. A stack that hashes to a slot another stack holds is not stored
 * (-EEXIST: replacing it, BPF_F_REUSE_STACKID, would make the keys already
 * counted under that id print the wrong stack), nor one when the map has
 * no room (-ENOMEM): both are counted for the tracer to tell. -EFAULT is
 * no kernel stack at all (a sample taken in user mode). */
static __always_inline __s64 plyc_stackid_in(void *ctx, void *map, __u64 flags)
{
	long id = bpf_get_stackid(ctx, map, flags);

	if (id == -PLYC_EEXIST)
		plyc_count_stat(PLYC_STAT_STACK_COLLISION);
	else if (id == -PLYC_ENOMEM)
		plyc_count_stat(PLYC_STAT_STACK_OTHER);
	return id;
}

static __always_inline __s64 plyc_stackid(void *ctx)
{
	return plyc_stackid_in(ctx, &plyc_stacks, 0);
}

/* bpftrace's ustack: the user stack's id in `map` (plyc_stacks, or
 * plyc_stacks_N for ustack(N)) in the low 32 bits, the process in the high
 * 32, as bpftrace keys it: the tracer names the frames from that process's
 * mappings, in its /proc, so by the id its PID namespace gives it. A
 * negative id (no user stack: a kernel thread) stays one in the low half. */
static __always_inline __s64 plyc_ustackid(void *ctx, void *map)
{
	__u32 id = (__u32)plyc_stackid_in(ctx, map, BPF_F_USER_STACK);

	return (__s64)((plyc_ns_pid_tgid() >> 32) << 32 | id);
}
#endif

/* buf comes zeroed (cgen's local_bytes): older kernels copy the name
 * without zeroing the rest. */
static __always_inline void plyc_comm(char *buf, __u32 size)
{
	bpf_get_current_comm(buf, size);
}

/* A string whose pointer may be a kernel or a user address: try the kernel
 * first, then user memory (what users expect of str(arg1) on a syscall).
 * s390x's kernel and user address spaces overlap (the same address is
 * valid in both, meaning different bytes): a user pointer read as a kernel
 * one reads the wrong bytes without failing, so there user memory comes
 * first (docs/kernels.md, "s390x"). */
#if defined(__TARGET_ARCH_s390)
#define PLYC_READ_FIRST(k, u) (u)
#define PLYC_READ_THEN(k, u) (k)
#else
#define PLYC_READ_FIRST(k, u) (k)
#define PLYC_READ_THEN(k, u) (u)
#endif
static __always_inline void plyc_read_str(char *dst, __u32 size, const void *ptr)
{
	if (PLYC_READ_FIRST(bpf_probe_read_kernel_str, bpf_probe_read_user_str)(dst, size, ptr) < 0 &&
	    PLYC_READ_THEN(bpf_probe_read_kernel_str, bpf_probe_read_user_str)(dst, size, ptr) < 0)
		dst[0] = 0;
}

static __always_inline void plyc_read_any(void *dst, __u32 size, const void *ptr)
{
	if (PLYC_READ_FIRST(bpf_probe_read_kernel, bpf_probe_read_user)(dst, size, ptr) < 0)
		PLYC_READ_THEN(bpf_probe_read_kernel, bpf_probe_read_user)(dst, size, ptr);
}

static __always_inline void plyc_read_user(void *dst, __u32 size, const void *ptr)
{
	bpf_probe_read_user(dst, size, ptr);
}

/* An integer tracepoint field: `size` bytes on the device (in its byte order),
 * as a value of `bytes` bytes, sign-extended if signed. The slow way, for
 * fields a direct load can't reach (see plyc_tp_int). */
static __always_inline __u64 plyc_tp_read(const void *ctx, __u32 off, __u32 size, __u32 bytes, int is_signed)
{
	__u64 v = 0;
	__u32 n = size < bytes ? size : bytes;
	int shift;

	if (n > 8)
		n = 8;
	if (n == 0)
		return 0;
	/* Into v's first n bytes: a variable offset from the stack pointer is
	 * refused, so big-endian shifts the bytes down instead. */
	bpf_probe_read_kernel(&v, n, (const char *)ctx + off);
	shift = 64 - 8 * (int)n;
	if (shift <= 0 || shift >= 64)
		return v;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return is_signed ? (__u64)((__s64)v >> shift) : v >> shift;
#endif
	if (is_signed)
		return (__u64)(((__s64)(v << shift)) >> shift);
	return v;
}

/* Integer tracepoint field `slot` as one load from the context, at the
 * offset, width and sign of the device's field. The object holds
 * placeholders that the tracer rewrites before load (runtime-c/load/tpfields.c),
 * from the device's format file:
 *   r = PLYC_TP_SEL(slot) ll           becomes r = 0 (direct) or 1 (helper);
 *   r = *(u64 *)(ctx + PLYC_TP_LDX + slot)
 *                                       the field's offset and width;
 *   r <<= 0; r s>>= 0 (or r >>= 0)      the sign extension of a field narrower
 *                                       than 8 bytes, else no-ops (ja +0).
 * The verifier sees a constant selector and drops the path not taken, so a
 * direct read costs one load (plus a move of the constant). Left as they
 * are, the selector is non-zero and the helper path reads the field. The
 * placeholder offset is far beyond any tracepoint context (2 KiB, 8 KiB in
 * newer kernels). */
#include "../plyc_tp.h"   /* PLYC_TP_SEL_HI, _LO, PLYC_TP_LDX: the tracer's too */
#define plyc_tp_int(ctx, slot, off, size, bytes, is_signed) ({					\
	__u64 __v, __sel;									\
	asm volatile("%0 = %1 ll" : "=r"(__sel)						\
		     : "i"(((__u64)PLYC_TP_SEL_HI << 32) | (PLYC_TP_SEL_LO | (slot))));		\
	if (__sel)										\
		__v = plyc_tp_read(ctx, off, size, bytes, is_signed);				\
	else if (is_signed)									\
		asm volatile("%0 = *(u64 *)(%1 + %2)\n\t%0 <<= 0\n\t%0 s>>= 0"			\
			     : "=r"(__v) : "r"(ctx), "i"(PLYC_TP_LDX + (slot)));			\
	else											\
		asm volatile("%0 = *(u64 *)(%1 + %2)\n\t%0 <<= 0\n\t%0 >>= 0"			\
			     : "=r"(__v) : "r"(ctx), "i"(PLYC_TP_LDX + (slot)));			\
	__v;											\
})

/* A __data_loc field: the low 16 bits of its word are the offset of the
 * data from the start of the record. */
static __always_inline void plyc_read_dataloc(char *dst, __u32 size, const void *ctx, __u32 loc)
{
	if (bpf_probe_read_kernel_str(dst, size, (const char *)ctx + (loc & 0xffff)) < 0)
		dst[0] = 0;
}

/* Kfuncs (bpftrace's comm(pid): Linux 6.2). An extern no program calls
 * is not in the object, so a kernel without them loads every other. */
struct task_struct;
extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

static __always_inline void plyc_copy_str(char *dst, __u32 dsize, const char *src, __u32 ssize)
{
	__u32 n = dsize < ssize ? dsize : ssize;

	for (__u32 i = 0; i < dsize; i++)
		dst[i] = i < n ? src[i] : 0;
}

/* A string of plyc_params (a $N, a getopt() value): read byte by byte
 * through the volatile, which a cast to char * would drop, letting clang
 * fold the reads of a short one into the zeros .rodata holds at build.
 * dst is zeroed already (the caller's temporary): only the text's bytes
 * are copied, so no zeros past them that clang would make one memset too
 * large to inline (a 1 KiB string read past its text: str($1 + 2^63)). */
static __always_inline void plyc_copy_param_str(char *dst, __u32 dsize, const volatile char *src, __u32 ssize)
{
	__u32 n = dsize < ssize ? dsize : ssize;

	for (__u32 i = 0; i < n; i++)
		dst[i] = src[i];
}

static __always_inline int plyc_strcmp(const char *a, __u32 asize, const char *b, __u32 bsize)
{
	__u32 n = asize < bsize ? asize : bsize;

	for (__u32 i = 0; i < n; i++) {
		unsigned char ca = a[i], cb = b[i];

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!ca)
			return 0;
	}
	/* One string filled its whole array; the other may go on. The sizes
	 * are constants once inlined, so these indexes are too. */
	if (asize > n && a[n])
		return 1;
	if (bsize > n && b[n])
		return -1;
	return 0;
}

/* bpftrace 0.27's memcmp(): the first n bytes of two values of size bytes
 * or more, the difference of the first bytes that differ as signed chars
 * (0.27's), else 0; none past size (0.27 would read on past the values). */
static __always_inline int plyc_memcmp(const char *a, const char *b, __u32 size, __u64 n)
{
	for (__u32 i = 0; i < size; i++) {
		if (i >= n)
			break;
		if (a[i] != b[i])
			return (int)(signed char)a[i] - (int)(signed char)b[i];
	}
	return 0;
}

/* bpftrace's strlen(): the bytes before the first NUL, at most size. */
static __always_inline __u64 plyc_strnlen(const char *s, __u32 size)
{
	__u32 i;

	for (i = 0; i < size; i++)
		if (!s[i])
			break;
	return i;
}

/* Whether needle (up to its NUL or nsize) is at h[i] (h of hsize bytes):
 * its bytes compared by masks, not a branch a byte, so that the search's
 * paths stay one a place in the haystack (a branch a byte of a 1024-byte
 * string's places is more than the verifier follows: "The sequence of
 * 8193 jumps is too complex"); the barrier keeps clang from making them
 * branches again. i + j < hsize is known to the verifier at each place. */
static __always_inline int plyc_str_at(const char *h, __u32 hsize, __u32 i, const char *n, __u32 nsize)
{
	__s64 live = -1, miss = 0;

	for (__u32 j = 0; j < nsize; j++) {
		__s64 cn = (unsigned char)n[j];
		__s64 ch = i + j < hsize ? (unsigned char)h[i + j] : 256;

		live &= -cn >> 63;      /* the needle's NUL ends it */
		miss |= (ch ^ cn) & live;
		barrier_var(miss);
	}
	return !miss;
}

/* bpftrace's strcontains(): 1 when needle (up to its NUL or nsize) is in
 * haystack (up to its NUL or hsize); an empty needle is in every string. */
static __always_inline int plyc_strcontains(const char *h, __u32 hsize, const char *n, __u32 nsize)
{
	__u32 i;

	/* clang knows an 8-aligned stack string's address and indexes it by
	 * `|` rather than `+`, which the verifier refuses on a pointer */
	barrier_var(h);
	barrier_var(n);
	if (!nsize || !n[0])
		return 1;
	for (i = 0; i < hsize && h[i]; i++)
		if (plyc_str_at(h, hsize, i, n, nsize))
			return 1;
	return 0;
}

/* bpftrace 0.27's strstr(): where needle (up to its NUL or nsize) first is
 * in haystack (up to its NUL or hsize), 0 for an empty needle. 0.27 asks
 * the kernel's bpf_strnstr kfunc (Linux 6.17) where it has one, which
 * says -ENOENT (-2) for a needle not there; elsewhere its own loop says
 * -1. The same here: the kfunc is weak, so a kernel without it loads the
 * program with the call left out (the verifier sees the test fold). */
extern int bpf_strnstr(const char *s1__ign, const char *s2__ign, unsigned long len) __ksym __weak;

static __always_inline __s64 plyc_strstr(const char *h, __u32 hsize, const char *n, __u32 nsize)
{
	__u32 i;

	barrier_var(h);     /* as plyc_strcontains's */
	barrier_var(n);

	if (!nsize || !n[0])
		return 0;
	if (bpf_strnstr)
		return bpf_strnstr(h, n, hsize);
	if (nsize > hsize)
		return -1;
	for (i = 0; i < hsize && h[i]; i++)
		if (plyc_str_at(h, hsize, i, n, nsize))
			return i;
	return -1;
}

/* bpftrace 0.27's str_concat(): a's bytes up to its NUL, then b's, cut to
 * dst's size with its NUL (dst is zeroed). b lands at a's length, an
 * offset known at run time only: the verifier allows it (Linux 5.12 for
 * a stack array, as 0.27's copy needs). */
static __always_inline void plyc_str_concat(char *dst, __u32 dsize, const char *a, __u32 asize,
					    const char *b, __u32 bsize)
{
	__u32 i, j, len = 0;
	char *at = dst;

	for (i = 0; i < asize && i + 1 < dsize; i++) {
		if (!a[i])
			break;
		dst[i] = a[i];
		len = i + 1;
	}
	/* hidden from clang: knowing dst 8-aligned, it adds a small offset
	 * with an OR, which the verifier refuses on a pointer */
	barrier_var(at);
	for (j = 0; j < bsize; j++) {
		__u32 k = len + j;

		if (k + 1 >= dsize || !b[j])
			break;
		at[k] = b[j];
	}
}

/* `==` of two buffers (bpftrace's buf()): 1 when they hold as many bytes
 * and the same ones. A buffer is its length (a __u32, lsize bytes) and
 * then its bytes; those past the length are not compared. */
static __always_inline int plyc_buf_equal(const char *a, __u32 asize, const char *b, __u32 bsize, __u32 lsize)
{
	__u32 la = 0, lb = 0, i;

	__builtin_memcpy(&la, a, sizeof(la));
	__builtin_memcpy(&lb, b, sizeof(lb));
	if (la != lb)
		return 0;
	for (i = lsize; i < asize && i < bsize; i++)
		if (i - lsize < la && a[i] != b[i])
			return 0;
	return 1;
}

/* bpftrace's str(p, n) of an n known at run time: the string read whole,
 * then cut to n bytes, its NUL counted (n - 1 characters; none for 0 or
 * 1). n is unsigned, as 0.27 reads it: a negative one is past any size. */
static __always_inline void plyc_str_cut(char *dst, __u32 size, const char *src, __u64 n)
{
	__s64 keep = n > size ? size : n ? n - 1 : 0;
	__s64 live = -1;

	/* the bytes before keep and the NUL, zeros after: by masks, not a
	 * branch a byte (over a 1024-byte string more paths than the verifier
	 * follows: "The sequence of 8193 jumps is too complex"); the barrier
	 * keeps clang from making the masks branches again */
	for (__u32 i = 0; i < size; i++) {
		__s64 c = (unsigned char)src[i];

		live &= ((__s64)i - keep) >> 63;
		live &= -c >> 63;
		barrier_var(live);
		dst[i] = (char)(c & live);
	}
}

/* ply's log2 buckets: bucket i holds [2^i, 2^(i+1)), bucket 0 also 0;
 * for signed arguments bucket 63 counts the negative values. */
static __always_inline __u32 plyc_log2_bucket(__u64 v, int is_signed)
{
	__u32 r = 0;

	if (is_signed && (__s64)v < 0)
		return 63;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* The log2 aggregation's buckets (bcc's, and bpftrace's hist() for values
 * >= 0): 0 for 0, else log2(v) + 1. */
static __always_inline __u32 plyc_log2_hist_bucket(__u64 v)
{
	__u32 b = plyc_log2_bucket(v, 0);

	if (!v)
		return 0;
	return b < 63 ? b + 1 : 63;
}

/* bpftrace's hist(x, k): [0] below 0, then values below 2^k one a bucket,
 * then each power of two [2^p, 2^(p+1)) in 2^k buckets: the k bits after
 * the leading one pick it. hist(x) is k = 0: [1] 0, [2 + log2(v)] above.
 * An unsigned v at or above 2^63 goes in the top 2^k (bpftrace 0.27 counts
 * it below 0). */
static __always_inline __u32 plyc_bt_hist_bucket_k(__u64 v, int is_signed, __u32 k)
{
	__u64 n = v, mask = (1ULL << k) - 1;
	__u32 l;

	if (is_signed && (__s64)v < 0)
		return 0;
	if (n <= mask)
		return (__u32)n + 1;
	l = plyc_log2_bucket(n, 0) - k;
	return ((l + 1) << k) + (__u32)((n >> l) & mask) + 1;
}

/* lquantize: [0] below min, [1 + (v - min) / step] for the k buckets of
 * step values above it, [k + 1] from min + k * step up (max, or the last
 * multiple of step below it, as bpftrace 0.27's lhist()). v's mathematical
 * value decides: an unsigned v at or above 2^63 is above any (signed)
 * bound, and v - min of a v >= min fits an unsigned word. */
static __always_inline __u32 plyc_lin_bucket(__u64 v, int is_signed, __s64 min, __u64 step, __u32 k)
{
	__u64 d;

	if (!is_signed && (__s64)v < 0)
		return k + 1;
	if ((__s64)v < min)
		return 0;
	d = (v - (__u64)min) / step;
	return d < k ? 1 + (__u32)d : k + 1;
}

/* Argument n of a probed function: a register, or a word read from the
 * stack. `wrapped`: the function is a syscall wrapper (__x64_sys_read and
 * friends) whose only argument is the user's saved registers, so the
 * syscall's own arguments are read from there. */
static __always_inline __u64 plyc_reg_arg(struct pt_regs *r, int n)
{
	switch (n) {
	case 0: return PLYC_ARG0(r);
	case 1: return PLYC_ARG1(r);
	case 2: return PLYC_ARG2(r);
	case 3: return PLYC_ARG3(r);
#if PLYC_NREGARGS > 4
	case 4: return PLYC_ARG4(r);
#endif
#if PLYC_NREGARGS > 5
	case 5: return PLYC_ARG5(r);
#endif
#if PLYC_NREGARGS > 6
	case 6: return PLYC_ARG6(r);
	case 7: return PLYC_ARG7(r);
#endif
	}
	return 0;
}

/* Argument n from registers saved in kernel memory (not the context). */
static __always_inline __u64 plyc_core_reg_arg(struct pt_regs *r, int n)
{
	__u64 v = 0;

	switch (n) {
#ifdef PLYC_SYSCALL_ARG0
	case 0: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_SYSCALL_ARG0(r)); break;
#else
	case 0: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG0(r)); break;
#endif
	case 1: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG1(r)); break;
	case 2: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG2(r)); break;
	case 3: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG3(r)); break;
#if PLYC_NREGARGS > 4
	case 4: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG4(r)); break;
#endif
#if PLYC_NREGARGS > 5
	case 5: PLYC_READ_LOW(bpf_probe_read_kernel, v, PLYC_ARG5(r)); break;
#endif
	}
	return v;
}

static __always_inline __u64 plyc_kprobe_arg(struct pt_regs *ctx, int n, int wrapped)
{
	__u64 v = 0;

	if (wrapped)
		return plyc_core_reg_arg((struct pt_regs *)plyc_reg_arg(ctx, 0), n);
	if (n < PLYC_NREGARGS)
		return plyc_reg_arg(ctx, n);
	bpf_probe_read_kernel(PLYC_LOW_BYTES(&v, PLYC_WORD), PLYC_WORD,
			      (const void *)(unsigned long)PLYC_STACK_ARG(ctx, n));
	return v;
}

/* bpftrace's sargN: word n of the probed function's arguments on the stack
 * (PLYC_STACK_ARG: above the return address on x86_64), user memory for a
 * uprobe's; 0 if it can't be read. */
static __always_inline __u64 plyc_stack_word(struct pt_regs *ctx, int n, int user)
{
	const void *p = (const void *)(unsigned long)PLYC_STACK_ARG(ctx, PLYC_NREGARGS + n);
	__u64 v = 0;

	if (user)
		bpf_probe_read_user(PLYC_LOW_BYTES(&v, PLYC_WORD), PLYC_WORD, p);
	else
		bpf_probe_read_kernel(PLYC_LOW_BYTES(&v, PLYC_WORD), PLYC_WORD, p);
	return v;
}

/* Argument n of a function a uprobe stopped at entry: past the registers,
 * a word of the user stack (a kernel read of it fails: x86_64's SMAP,
 * MIPS, s390x's separate address spaces). */
static __always_inline __u64 plyc_uprobe_arg(struct pt_regs *ctx, int n)
{
	if (n < PLYC_NREGARGS)
		return plyc_reg_arg(ctx, n);
	return plyc_stack_word(ctx, n - PLYC_NREGARGS, 1);
}

/* Argument n in an fentry/fexit program: the traced function's arguments
 * are the context's words (a syscall wrapper's first is the user's regs). */
static __always_inline __u64 plyc_fentry_arg(__u64 *ctx, int n, int wrapped)
{
	if (wrapped)
		return plyc_core_reg_arg((struct pt_regs *)ctx[0], n);
	return ctx[n];
}

#ifdef PLYC_USDT
/* USDT argument n, fetched as libbpf's USDT spec for this probe site says. */
static __always_inline __u64 plyc_usdt_arg(struct pt_regs *ctx, int n)
{
	long v = 0;

	bpf_usdt_arg(ctx, n, &v);
	return (__u64)v;
}
#endif

/* BPF has no signed division before ISA v4: divide magnitudes. */
static __always_inline __s64 plyc_sdiv(__s64 a, __s64 b)
{
	__u64 ua = a < 0 ? -(__u64)a : (__u64)a, ub = b < 0 ? -(__u64)b : (__u64)b;
	__u64 q;

	if (!ub)
		return 0;
	q = ua / ub;
	return (a < 0) != (b < 0) ? -(__s64)q : (__s64)q;
}

static __always_inline __s64 plyc_smod(__s64 a, __s64 b)
{
	__u64 ua = a < 0 ? -(__u64)a : (__u64)a, ub = b < 0 ? -(__u64)b : (__u64)b;
	__u64 r;

	if (!ub)
		return 0;
	r = ua % ub;
	return a < 0 ? -(__s64)r : (__s64)r;
}

#ifdef PLYC_AGG_READ
/* bpftrace's reads of an aggregation in a probe (`@c > 5`, `(int64)@s`,
 * `for ($kv : @c)`): its value over every possible CPU, as the tracer merges
 * it at exit (runtime-c/maps/aggregations.c), each CPU's value read with
 * bpf_map_lookup_percpu_elem (Linux 5.19; the tracer asks the kernel for it
 * before the load, runtime-c/load/needs.c). ncpus is the tracer's count of
 * possible CPUs, a constant to the verifier, which walks the loop that many
 * times. No entry on CPU 0 is no key at all: 0, as in bpftrace. */
static __always_inline __u64 plyc_agg_sum(void *map, const void *key, __u64 ncpus)
{
	__u64 acc = 0;
	__u32 c;

	for (c = 0; c < ncpus; c++) {
		__u64 *v = bpf_map_lookup_percpu_elem(map, key, c);

		if (!v)
			break;
		acc += *v;
	}
	return acc;
}

/* min() and max(): the extreme of the CPUs that stored one (set), 0 if none */
static __always_inline __s64 plyc_agg_extreme(void *map, const void *key, __u64 ncpus, int less,
					      int is_signed)
{
	__s64 acc = 0;
	int set = 0;
	__u32 c;

	for (c = 0; c < ncpus; c++) {
		struct plyc_minmax *v = bpf_map_lookup_percpu_elem(map, key, c);
		int lt, gt;

		if (!v)
			break;
		if (!v->set)
			continue;
		lt = is_signed ? v->value < acc : (__u64)v->value < (__u64)acc;
		gt = is_signed ? v->value > acc : (__u64)v->value > (__u64)acc;
		if (!set || (less ? lt : gt))
			acc = v->value;
		set = 1;
	}
	return acc;
}

/* avg(): the CPUs' sums over their counts, truncated toward zero; 0 if none */
static __always_inline __s64 plyc_agg_avg(void *map, const void *key, __u64 ncpus, int is_signed)
{
	__s64 sum = 0;
	__u64 count = 0;
	__u32 c;

	for (c = 0; c < ncpus; c++) {
		struct plyc_avg *v = bpf_map_lookup_percpu_elem(map, key, c);

		if (!v)
			break;
		sum += v->sum;
		count += v->count;
	}
	if (!count)
		return 0;
	return is_signed ? plyc_sdiv(sum, (__s64)count) : (__s64)((__u64)sum / count);
}

/* delete() of a key-less aggregation (a one-slot per-CPU array, which
 * can't lose its slot): every CPU's value back to zero, which the tracer
 * takes as never set */
static __always_inline void plyc_agg_zero(void *map, __u32 size, __u64 ncpus)
{
	__u32 key = 0, c;

	for (c = 0; c < ncpus; c++) {
		__u64 *v = bpf_map_lookup_percpu_elem(map, &key, c);

		if (!v)
			break;
		v[0] = 0;
		if (size > 8)
			v[1] = 0;
	}
}
#endif

#endif
