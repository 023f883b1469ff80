/* ARMv5TE has no ldrex/strex: the __sync_* calls the compilers emit for
 * atomics there are implemented with the Linux kernel's user helpers (the
 * vector page's cmpxchg and barrier, Documentation/arch/arm/kernel_user_helpers.rst),
 * as GCC's libgcc does; zig's compiler-rt has none. Linked into armel musl
 * tracers only (plyc/musl.py's TARGETS). */
#include <stdint.h>

typedef int (*kuser_cmpxchg_t)(int oldval, int newval, volatile int *ptr);
typedef void (*kuser_barrier_t)(void);
#define kuser_cmpxchg (*(kuser_cmpxchg_t)0xffff0fc0)
#define kuser_barrier (*(kuser_barrier_t)0xffff0fa0)

void plyc_sync_synchronize(void) __asm__("__sync_synchronize");
void plyc_sync_synchronize(void)
{
	kuser_barrier();
}

/* Compare-and-swap of the bytes [shift, shift + 8 * size) of the aligned
 * word holding p: the old bytes' value. */
static unsigned int cas_part(volatile void *p, unsigned int size, unsigned int old, unsigned int new)
{
	volatile int *word = (volatile int *)((uintptr_t)p & ~(uintptr_t)3);
	unsigned int shift = 8 * ((uintptr_t)p & 3);
	unsigned int mask = size == 4 ? ~0u : ((1u << (8 * size)) - 1) << shift;

	for (;;) {
		unsigned int cur = (unsigned int)*word;
		unsigned int seen = (cur & mask) >> shift;
		if (seen != (old & (mask >> shift)))
			return seen;
		unsigned int next = (cur & ~mask) | ((new << shift) & mask);
		if (kuser_cmpxchg((int)cur, (int)next, word) == 0)
			return seen;
	}
}

#define CAS(n, type) \
	type plyc_sync_val_cas_##n(volatile void *p, type old, type new) __asm__("__sync_val_compare_and_swap_" #n); \
	type plyc_sync_val_cas_##n(volatile void *p, type old, type new) \
	{ return (type)cas_part(p, n, old, new); } \
	_Bool plyc_sync_bool_cas_##n(volatile void *p, type old, type new) __asm__("__sync_bool_compare_and_swap_" #n); \
	_Bool plyc_sync_bool_cas_##n(volatile void *p, type old, type new) \
	{ return (type)cas_part(p, n, old, new) == old; } \
	type plyc_sync_swap_##n(volatile void *p, type v) __asm__("__sync_lock_test_and_set_" #n); \
	type plyc_sync_swap_##n(volatile void *p, type v) \
	{ type old; do old = *(volatile type *)p; while ((type)cas_part(p, n, old, v) != old); return old; }

CAS(1, uint8_t)
CAS(2, uint16_t)
CAS(4, uint32_t)

#define RMW(name, op) \
	uint32_t plyc_sync_fetch_and_##name##_4(volatile void *p, uint32_t v) __asm__("__sync_fetch_and_" #name "_4"); \
	uint32_t plyc_sync_fetch_and_##name##_4(volatile void *p, uint32_t v) \
	{ uint32_t old; do old = *(volatile uint32_t *)p; while (cas_part(p, 4, old, old op v) != old); return old; } \
	uint32_t plyc_sync_##name##_and_fetch_4(volatile void *p, uint32_t v) __asm__("__sync_" #name "_and_fetch_4"); \
	uint32_t plyc_sync_##name##_and_fetch_4(volatile void *p, uint32_t v) \
	{ return plyc_sync_fetch_and_##name##_4(p, v) op v; }

RMW(add, +)
RMW(sub, -)
RMW(or, |)
RMW(and, &)
RMW(xor, ^)

void plyc_sync_release_4(volatile void *p) __asm__("__sync_lock_release_4");
void plyc_sync_release_4(volatile void *p)
{
	kuser_barrier();
	*(volatile uint32_t *)p = 0;
}
