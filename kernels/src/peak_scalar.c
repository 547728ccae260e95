/* The plain-C floating-point class of include/peak.h, built on every
 * architecture but x86 (whose scalar FMA is in src/peak_x86.c, compiled for
 * the FMA instructions a plain x86-64 build lacks): scalar_fma where the
 * compiler has a hardware fused multiply-add (__FP_FAST_FMA: fmadd on
 * AArch64 and RISC-V, fmadd on POWER), else scalar_fp, a multiply then an add.
 * Vectorisation is off for these functions, so twelve scalar chains stay
 * twelve scalar instructions. */
#include "peak_loops.h"

#if !defined(__x86_64__) && !defined(__i386__)

#define NOVEC __attribute__((optimize("no-tree-vectorize")))
#define SCALAR_SET1_D(x) ((double)(x))
#define SCALAR_SET1_S(x) ((float)(x))
#define SCALAR_TOTAL(v) ((double)(v))

#if defined(__FP_FAST_FMA) && defined(__FP_FAST_FMAF)
#define SCALAR_FMA_D(a, m, c) __builtin_fma(a, m, c)
#define SCALAR_FMA_S(a, m, c) __builtin_fmaf(a, m, c)
#define SCALAR_NAME "scalar_fma"
#define SCALAR_OPERATION "scalar fused multiply-add"
#define SCALAR_FUSED 1
#else
#define SCALAR_FMA_D(a, m, c) ((a) * (m) + (c))
#define SCALAR_FMA_S(a, m, c) ((a) * (m) + (c))
#define SCALAR_NAME "scalar_fp"
#define SCALAR_OPERATION "scalar multiply then add (no hardware FMA in this build)"
#define SCALAR_FUSED 0
#endif

PEAK_LOOPS(scalar_f64, NOVEC, double, SCALAR_SET1_D, SCALAR_FMA_D, SCALAR_TOTAL)
PEAK_LOOPS(scalar_f32, NOVEC, float, SCALAR_SET1_S, SCALAR_FMA_S, SCALAR_TOTAL)
PEAK_RULER(scalar_f64, NOVEC, double, SCALAR_SET1_D, SCALAR_FMA_D, SCALAR_TOTAL)

static double throughput_scalar(enum peak_precision precision, uint64_t rounds)
{
	return precision == PEAK_FP64 ? throughput_scalar_f64(rounds) : throughput_scalar_f32(rounds);
}

static double latency_scalar(enum peak_precision precision, uint64_t rounds)
{
	return precision == PEAK_FP64 ? latency_scalar_f64(rounds) : latency_scalar_f32(rounds);
}

static int supported_scalar(void)
{
	return 1;
}

static unsigned bits_scalar(void)
{
	return 64;
}

const struct peak_class peak_class_scalar_fp = {
	.name = SCALAR_NAME, .operation = SCALAR_OPERATION, .fused = SCALAR_FUSED, .scalar = 1, .supported = supported_scalar,
	.vector_bits = bits_scalar, .throughput = throughput_scalar, .latency = latency_scalar,
	.ruler = ruler_scalar_f64,
};

#endif
