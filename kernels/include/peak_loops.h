/* The three loops of an instruction class (include/peak.h), written once:
 * each src/peak_<arch>.c expands PEAK_LOOPS with its vector type, its
 * multiply-add and its target attribute, once per precision. */
#ifndef FLEETSCOPE_PEAK_LOOPS_H
#define FLEETSCOPE_PEAK_LOOPS_H

#include <stdint.h>

#include "peak.h"

/* The classes each architecture's file defines (src/peak.c lists them). */
#if defined(__x86_64__) || defined(__i386__)
extern const struct peak_class peak_class_scalar_fma, peak_class_sse2, peak_class_fma128, peak_class_fma256,
	peak_class_fma512;
#else
extern const struct peak_class peak_class_scalar_fp;
#endif
#if defined(__aarch64__)
extern const struct peak_class peak_class_neon;
/* SVE needs the ACLE header and a compiler that switches it on per function
 * (GCC 11 or later; clang); without them the build has NEON only. */
#if defined(__has_include)
#if __has_include(<arm_sve.h>) && (defined(__clang__) || __GNUC__ >= 11)
#define PEAK_HAVE_SVE 1
extern const struct peak_class peak_class_sve;
#endif
#endif
#endif

/* a <- a * m + c converges on c / (1 - m) = 1: finite, normal, never 0. */
#define PEAK_M 0.75
#define PEAK_C 0.25

/* Where a ruler's multiply-add results go, so none is dead code. */
extern volatile double peak_sink;

/* One dependent integer add; the empty asm makes the compiler emit every
 * add, in order, each waiting for the one before (see src/coreclock.c: the
 * step is a register, never an immediate an Intel core could fold away). */
#define PEAK_ADD(value, step) value += step; __asm__ volatile("" : "+r"(value));

/* SFX: the functions' suffix; ATTR: the target attribute (or nothing); T the
 * vector (or scalar) type; SET1(double) broadcasts; FMA(a, m, c) is a * m +
 * c; TOTAL(T) sums the lanes as a double. Defines throughput_SFX and
 * latency_SFX. */
#define PEAK_LOOPS(SFX, ATTR, T, SET1, FMA, TOTAL)                                                        \
	ATTR static double throughput_##SFX(uint64_t rounds)                                              \
	{                                                                                                 \
		volatile double m_in = PEAK_M, c_in = PEAK_C, start = 1.0;                                \
		T m = SET1(m_in), c = SET1(c_in);                                                         \
		T a0 = SET1(start), a1 = SET1(start + 0.5), a2 = SET1(start + 0.25);                      \
		T a3 = SET1(start + 0.125), a4 = SET1(start - 0.5), a5 = SET1(start - 0.25);              \
		T a6 = SET1(start - 0.125), a7 = SET1(start + 1.0), a8 = SET1(start + 2.0);               \
		T a9 = SET1(start + 3.0), a10 = SET1(start + 4.0), a11 = SET1(start + 5.0);               \
		while (rounds--) {                                                                        \
			a0 = FMA(a0, m, c);                                                               \
			a1 = FMA(a1, m, c);                                                               \
			a2 = FMA(a2, m, c);                                                               \
			a3 = FMA(a3, m, c);                                                               \
			a4 = FMA(a4, m, c);                                                               \
			a5 = FMA(a5, m, c);                                                               \
			a6 = FMA(a6, m, c);                                                               \
			a7 = FMA(a7, m, c);                                                               \
			a8 = FMA(a8, m, c);                                                               \
			a9 = FMA(a9, m, c);                                                               \
			a10 = FMA(a10, m, c);                                                             \
			a11 = FMA(a11, m, c);                                                             \
		}                                                                                         \
		/* one vector that depends on every chain, then its lanes */                              \
		a0 = FMA(a1, m, a0), a0 = FMA(a2, m, a0), a0 = FMA(a3, m, a0), a0 = FMA(a4, m, a0);       \
		a0 = FMA(a5, m, a0), a0 = FMA(a6, m, a0), a0 = FMA(a7, m, a0), a0 = FMA(a8, m, a0);       \
		a0 = FMA(a9, m, a0), a0 = FMA(a10, m, a0), a0 = FMA(a11, m, a0);                          \
		return TOTAL(a0);                                                                         \
	}                                                                                                 \
	ATTR static double latency_##SFX(uint64_t rounds)                                                 \
	{                                                                                                 \
		volatile double m_in = PEAK_M, c_in = PEAK_C, start = 1.0;                                \
		T m = SET1(m_in), c = SET1(c_in), a = SET1(start);                                        \
		while (rounds--) {                                                                        \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
			a = FMA(a, m, c);                                                                 \
		}                                                                                         \
		return TOTAL(a);                                                                          \
	}

/* The ruler of a class (one precision is enough: the clock is asked of the
 * vector unit, not of a lane width). Defines ruler_SFX. */
#define PEAK_RULER(SFX, ATTR, T, SET1, FMA, TOTAL)                                                        \
	ATTR static uint64_t ruler_##SFX(uint64_t rounds)                                                 \
	{                                                                                                 \
		volatile double m_in = PEAK_M, c_in = PEAK_C, start = 1.0;                                \
		T m = SET1(m_in), c = SET1(c_in);                                                         \
		T a0 = SET1(start), a1 = SET1(start + 0.5), a2 = SET1(start + 0.25);                      \
		T a3 = SET1(start + 0.125), a4 = SET1(start - 0.5), a5 = SET1(start - 0.25);              \
		T a6 = SET1(start - 0.125), a7 = SET1(start + 1.0);                                       \
		uint64_t value = rounds, step = 1;                                                        \
		__asm__ volatile("" : "+r"(step));                                                        \
		while (rounds--) {                                                                        \
			PEAK_RULER_PASS(FMA) PEAK_RULER_PASS(FMA) PEAK_RULER_PASS(FMA) PEAK_RULER_PASS(FMA)   \
		}                                                                                         \
		a0 = FMA(a1, m, a0), a0 = FMA(a2, m, a0), a0 = FMA(a3, m, a0), a0 = FMA(a4, m, a0);       \
		a0 = FMA(a5, m, a0), a0 = FMA(a6, m, a0), a0 = FMA(a7, m, a0);                            \
		peak_sink = TOTAL(a0);                                                                    \
		return value;                                                                             \
	}

/* Two dependent adds with one multiply-add of chain a beside them; a pass
 * gives each of the 8 chains one, so a chain gets a new multiply-add every
 * 16 adds, far longer than any current core's FMA latency: it never waits.
 * Four passes make a ruler round. Expects value, step, m, c, a0..a7; FMA
 * as in PEAK_LOOPS. */
#define PEAK_RULER_STEP(a, FMA) PEAK_ADD(value, step) PEAK_ADD(value, step) a = FMA(a, m, c);
#define PEAK_RULER_PASS(FMA)                                                                              \
	PEAK_RULER_STEP(a0, FMA) PEAK_RULER_STEP(a1, FMA) PEAK_RULER_STEP(a2, FMA) PEAK_RULER_STEP(a3, FMA) \
	PEAK_RULER_STEP(a4, FMA) PEAK_RULER_STEP(a5, FMA) PEAK_RULER_STEP(a6, FMA) PEAK_RULER_STEP(a7, FMA)

#endif
