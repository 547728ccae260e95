/* The bandwidth engine's loops per instruction set, behind one interface:
 * src/bw.c chooses a `struct bw_loops` and calls its run; each src/bw_<arch>.c
 * defines the loops its architecture has (bw_x86.c: SSE2, AVX2, AVX-512F;
 * bw_arm.c: NEON, SVE; bw_scalar.c: plain C, built everywhere). A file whose
 * architecture this compiler does not target defines nothing.
 *
 * Every backend writes the same five loops (dense read, write, copy, triad,
 * and the block walker for strides, random order, mixes, prefetch and
 * delay); BW_WALKER and BW_RUN below are the two that only differ in how a
 * line is read or written, so each backend expands them with its own line
 * primitives. Every loop moves whole 64-byte lines, whatever the vector
 * width, so the accounting in bw.c holds for all of them. */
#ifndef FLEETSCOPE_BW_LOOPS_H
#define FLEETSCOPE_BW_LOOPS_H

#include <stdint.h>

#include "bw.h"

struct bw_loops {
	enum bw_isa isa;
	int (*supported)(void);        /* this CPU runs it (the build has it, or it is not listed) */
	unsigned (*vector_bytes)(void); /* SVE: the CPU's vector length */
	/* NULL when the loops have non-temporal stores, else why they have none */
	const char *no_nt_stores;
	uint64_t (*run)(const struct bw_request *request, struct bw_buffer *buffer, uint64_t first,
			uint64_t count);
};

/* Defined where the architecture has them; bw.c lists only those. */
extern const struct bw_loops bw_loops_scalar;
#if defined(__x86_64__) || defined(__i386__)
#define BW_HAVE_X86 1
extern const struct bw_loops bw_loops_sse2, bw_loops_avx2, bw_loops_avx512;
#endif
#if defined(__aarch64__)
#define BW_HAVE_NEON 1
extern const struct bw_loops bw_loops_neon;
/* SVE needs the ACLE header and a compiler that switches it on per function
 * (GCC 11 or later; clang); without them the build has NEON only. */
#if defined(__has_include)
#if __has_include(<arm_sve.h>) && (defined(__clang__) || __GNUC__ >= 11)
#define BW_HAVE_SVE 1
extern const struct bw_loops bw_loops_sve;
#endif
#endif
#endif

#define BW_PATTERN_WORD 1ull
#define BW_WRITE_WORD 0x5A5A5A5A5A5A5A5Aull

/* The random order: a bijection of [0, 2^bits) computed from the index. */
static inline uint64_t bw_permute(uint64_t i, unsigned bits, uint64_t key)
{
	uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	unsigned shift = bits / 2 + 1;

	/* odd multiply (mod 2^bits), add, xorshift right: each step is a bijection */
	i = (i * 0x9E3779B97F4A7C15ull + key) & mask;
	i ^= i >> shift;
	i = (i * 0xBF58476D1CE4E5B9ull) & mask;
	i ^= i >> shift;
	i = (i * 0x94D049BB133111EBull + (key >> 17)) & mask;
	return i ^ (i >> shift);
}

static inline void bw_spin(uint64_t iterations)
{
	while (iterations--)
		__asm__ volatile("" ::: "memory");
}

/* The block walker: any stride, order, mix, prefetch and delay. ATTR is the
 * function attribute that enables the ISA; ACC the accumulator type;
 * LINE_SUM(acc, line) returns acc plus every 64-bit lane of the line;
 * LINE_STORE(line, nt) writes BW_WRITE_WORD over the whole line; ACC_TOTAL
 * folds the accumulator to one uint64_t; NT_FENCE orders streaming stores.
 * The software prefetch is __builtin_prefetch for reading into every cache
 * level (x86 prefetcht0, Arm prfm pldl1keep). */
#define BW_WALKER(SFX, ATTR, ACC, ACC_ZERO, LINE_SUM, LINE_STORE, ACC_TOTAL, NT_FENCE)                  \
	ATTR static uint64_t walk_##SFX(const struct bw_request *r, const struct bw_buffer *buf,        \
					uint64_t first, uint64_t count)                                 \
	{                                                                                               \
		uint64_t group = r->read_lines + r->write_lines, slot = first % group, end = first + count; \
		int random = r->pattern == BW_PATTERN_RANDOM, nt = r->store == BW_STORE_NT;             \
		ACC acc = ACC_ZERO;                                                                     \
		for (uint64_t k = first; k < end; k++) {                                                \
			uint64_t pos = random ? bw_permute(k, buf->random_bits, r->seed) : k;           \
			char *line = buf->a + pos * r->stride_bytes;                                    \
			if (r->software_prefetch && k + r->prefetch_blocks < buf->blocks) {             \
				uint64_t ahead = k + r->prefetch_blocks;                                \
				if (random)                                                             \
					ahead = bw_permute(ahead, buf->random_bits, r->seed);           \
				__builtin_prefetch(buf->a + ahead * r->stride_bytes, 0, 3);             \
			}                                                                               \
			if (slot < r->read_lines)                                                       \
				acc = LINE_SUM(acc, line);                                              \
			else                                                                            \
				LINE_STORE(line, nt);                                                   \
			if (++slot == group) {                                                          \
				slot = 0;                                                               \
				bw_spin(r->delay);                                                      \
			}                                                                               \
		}                                                                                       \
		if (nt)                                                                                 \
			NT_FENCE();                                                                     \
		return ACC_TOTAL(acc);                                                                  \
	}

/* Dispatch within one ISA: the dense loops where the walk is dense (every
 * line in order, no prefetch, no delay), else the walker. Needs
 * read_dense_SFX, write_dense_SFX, copy_dense_SFX, triad_dense_SFX and
 * walk_SFX. */
#define BW_RUN(SFX, ATTR)                                                                               \
	ATTR static uint64_t run_##SFX(const struct bw_request *r, struct bw_buffer *buf, uint64_t first, \
				       uint64_t count)                                                  \
	{                                                                                               \
		int dense = r->pattern == BW_PATTERN_SEQUENTIAL && r->stride_bytes == BW_LINE &&        \
			    !r->software_prefetch && !r->delay;                                         \
		int nt = r->store == BW_STORE_NT;                                                       \
		switch (r->op) {                                                                        \
		case BW_OP_COPY:                                                                        \
			copy_dense_##SFX(buf->a + first * BW_LINE, buf->b + first * BW_LINE, count, nt); \
			return 0;                                                                       \
		case BW_OP_TRIAD:                                                                       \
			triad_dense_##SFX((double *)(void *)(buf->a + first * BW_LINE),                 \
					  (const double *)(const void *)(buf->b + first * BW_LINE),     \
					  (const double *)(const void *)(buf->c + first * BW_LINE), count, nt); \
			return 0;                                                                       \
		default:                                                                                \
			if (dense && r->write_lines == 0)                                               \
				return read_dense_##SFX(buf->a + first * BW_LINE, count);               \
			if (dense && r->read_lines == 0) {                                              \
				write_dense_##SFX(buf->a + first * BW_LINE, count, nt);                 \
				return 0;                                                               \
			}                                                                               \
			return walk_##SFX(r, buf, first, count);                                        \
		}                                                                                       \
	}

#endif
