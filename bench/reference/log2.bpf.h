/* log2 of a 64-bit value, rounded down (0 for 0): the histogram slot. */
#ifndef REF_LOG2_BPF_H
#define REF_LOG2_BPF_H

static __always_inline u32 log2_u64(u64 v)
{
	u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

#define NSLOTS 64

struct hist {
	u64 slots[NSLOTS];
};

#endif
