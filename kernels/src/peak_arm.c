/* The instruction classes of AArch64 (include/peak.h): NEON (Advanced SIMD,
 * 128-bit, in every AArch64 CPU) and SVE at the CPU's vector length (128 to
 * 2048 bits, asked with svcntb), the SVE functions compiled for SVE alone
 * (__attribute__((target("+sve")))) and run only where the kernel reports
 * HWCAP_SVE. The scalar FMA (fmadd) is the plain-C class of
 * src/peak_scalar.c. */
#include "peak_loops.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <sys/auxv.h>

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif

#define ARM_DISPATCH(SFX)                                                                                 \
	static double throughput_##SFX(enum peak_precision precision, uint64_t rounds)                   \
	{                                                                                                 \
		return precision == PEAK_FP64 ? throughput_##SFX##_f64(rounds) : throughput_##SFX##_f32(rounds); \
	}                                                                                                 \
	static double latency_##SFX(enum peak_precision precision, uint64_t rounds)                      \
	{                                                                                                 \
		return precision == PEAK_FP64 ? latency_##SFX##_f64(rounds) : latency_##SFX##_f32(rounds);  \
	}

/* ---- NEON ------------------------------------------------------------------ */

/* vfmaq(c, a, m) = c + a * m: one fmla per chain step. */
#define NEON_FMA_D(a, m, c) vfmaq_f64(c, a, m)
#define NEON_FMA_S(a, m, c) vfmaq_f32(c, a, m)
#define NEON_SET1_D(x) vdupq_n_f64(x)
#define NEON_SET1_S(x) vdupq_n_f32((float)(x))
#define NEON_TOTAL_D(v) vaddvq_f64(v)
#define NEON_TOTAL_S(v) ((double)vaddvq_f32(v))

PEAK_LOOPS(neon_f64, , float64x2_t, NEON_SET1_D, NEON_FMA_D, NEON_TOTAL_D)
PEAK_LOOPS(neon_f32, , float32x4_t, NEON_SET1_S, NEON_FMA_S, NEON_TOTAL_S)
PEAK_RULER(neon_f64, , float64x2_t, NEON_SET1_D, NEON_FMA_D, NEON_TOTAL_D)
ARM_DISPATCH(neon)

static int supported_neon(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
}

static unsigned bits_neon(void)
{
	return 128;
}

const struct peak_class peak_class_neon = {
	.name = "neon", .operation = "128-bit NEON FMA (fmla .2d/.4s)", .fused = 1, .supported = supported_neon,
	.vector_bits = bits_neon, .throughput = throughput_neon, .latency = latency_neon, .ruler = ruler_neon_f64,
};

/* ---- SVE ------------------------------------------------------------------- */

#if defined(PEAK_HAVE_SVE)

#include <arm_sve.h>

#if defined(__clang__)
#define SVE __attribute__((target("sve")))
#else
#define SVE __attribute__((target("+sve")))
#endif

/* svmla(c, a, m) = c + a * m over every lane (all-true predicate). */
#define SVE_FMA_D(a, m, c) svmla_f64_x(svptrue_b64(), c, a, m)
#define SVE_FMA_S(a, m, c) svmla_f32_x(svptrue_b32(), c, a, m)
#define SVE_SET1_D(x) svdup_n_f64(x)
#define SVE_SET1_S(x) svdup_n_f32((float)(x))
#define SVE_TOTAL_D(v) svaddv_f64(svptrue_b64(), v)
#define SVE_TOTAL_S(v) ((double)svaddv_f32(svptrue_b32(), v))

PEAK_LOOPS(sve_f64, SVE, svfloat64_t, SVE_SET1_D, SVE_FMA_D, SVE_TOTAL_D)
PEAK_LOOPS(sve_f32, SVE, svfloat32_t, SVE_SET1_S, SVE_FMA_S, SVE_TOTAL_S)
PEAK_RULER(sve_f64, SVE, svfloat64_t, SVE_SET1_D, SVE_FMA_D, SVE_TOTAL_D)
ARM_DISPATCH(sve)

static int supported_sve(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
}

SVE static unsigned sve_bits(void)
{
	return (unsigned)svcntb() * 8;
}

/* svcntb is an SVE instruction: asked only on a CPU that has SVE. */
static unsigned bits_sve(void)
{
	return supported_sve() ? sve_bits() : 0;
}

const struct peak_class peak_class_sve = {
	.name = "sve", .operation = "SVE FMA at the CPU's vector length (fmla z.d/z.s)", .fused = 1,
	.supported = supported_sve, .vector_bits = bits_sve, .throughput = throughput_sve, .latency = latency_sve,
	.ruler = ruler_sve_f64,
};

#endif /* PEAK_HAVE_SVE */

#endif /* __aarch64__ */
