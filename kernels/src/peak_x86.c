/* The instruction classes of x86 (include/peak.h): scalar FMA, SSE2's
 * separate multiply and add (every x86-64 CPU), and FMA on 128-, 256- and
 * 512-bit vectors. Each function is compiled for its target alone, so a
 * build without -march runs on every x86 host, and a class runs only where
 * __builtin_cpu_supports says the CPU (and the OS, for the wide registers)
 * has it. */
#include "peak_loops.h"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#define X86_CLASS(SFX, TGT, NAME, OPERATION, FUSED, BITS, CHECK, TD, SET1D, FMAD, TOTALD, TS, SET1S, FMAS,   \
		  TOTALS)                                                                                  \
	PEAK_LOOPS(SFX##_f64, __attribute__((target(TGT))), TD, SET1D, FMAD, TOTALD)                      \
	PEAK_LOOPS(SFX##_f32, __attribute__((target(TGT))), TS, SET1S, FMAS, TOTALS)                      \
	PEAK_RULER(SFX##_f64, __attribute__((target(TGT))), TD, SET1D, FMAD, TOTALD)                      \
	static double throughput_##SFX(enum peak_precision precision, uint64_t rounds)                   \
	{                                                                                                 \
		return precision == PEAK_FP64 ? throughput_##SFX##_f64(rounds) : throughput_##SFX##_f32(rounds); \
	}                                                                                                 \
	static double latency_##SFX(enum peak_precision precision, uint64_t rounds)                      \
	{                                                                                                 \
		return precision == PEAK_FP64 ? latency_##SFX##_f64(rounds) : latency_##SFX##_f32(rounds);  \
	}                                                                                                 \
	static int supported_##SFX(void)                                                                  \
	{                                                                                                 \
		__builtin_cpu_init();                                                                     \
		return CHECK;                                                                             \
	}                                                                                                 \
	static unsigned bits_##SFX(void)                                                                  \
	{                                                                                                 \
		return BITS;                                                                              \
	}                                                                                                 \
	const struct peak_class peak_class_##SFX = {                                                     \
		.name = NAME, .operation = OPERATION, .fused = FUSED, .scalar = BITS == 64, .supported = supported_##SFX,      \
		.vector_bits = bits_##SFX, .throughput = throughput_##SFX, .latency = latency_##SFX,     \
		.ruler = ruler_##SFX##_f64,                                                               \
	};

/* A vector's lanes summed as doubles, in a function of its own that takes
 * the vector by value: summed in place, GCC kept the accumulator in memory
 * through the whole loop (a store and a load per round). */
#define X86_TOTAL(NAME, TGT, T, LANE, LANES, STOREU)                                                      \
	__attribute__((noinline, target(TGT))) static double NAME(T vector)                              \
	{                                                                                                 \
		LANE lanes[LANES];                                                                        \
		double total = 0.0;                                                                       \
		STOREU(lanes, vector);                                                                    \
		for (unsigned i = 0; i < (LANES); i++)                                                    \
			total += (double)lanes[i];                                                        \
		return total;                                                                             \
	}

X86_TOTAL(total_128d, "sse2", __m128d, double, 2, _mm_storeu_pd)
X86_TOTAL(total_128s, "sse2", __m128, float, 4, _mm_storeu_ps)
X86_TOTAL(total_256d, "avx", __m256d, double, 4, _mm256_storeu_pd)
X86_TOTAL(total_256s, "avx", __m256, float, 8, _mm256_storeu_ps)
X86_TOTAL(total_512d, "avx512f", __m512d, double, 8, _mm512_storeu_pd)
X86_TOTAL(total_512s, "avx512f", __m512, float, 16, _mm512_storeu_ps)

/* The low lane only: vfmadd231sd / ss, one multiply-add per instruction. */
#define SCALAR_SET1D(x) _mm_set_sd(x)
#define SCALAR_SET1S(x) _mm_set_ss((float)(x))
#define SCALAR_TOTALD(v) _mm_cvtsd_f64(v)
#define SCALAR_TOTALS(v) ((double)_mm_cvtss_f32(v))
X86_CLASS(scalar_fma, "fma", "scalar_fma", "scalar FMA (vfmadd231sd/ss)", 1, 64,
	  __builtin_cpu_supports("fma"), __m128d, SCALAR_SET1D, _mm_fmadd_sd, SCALAR_TOTALD, __m128,
	  SCALAR_SET1S, _mm_fmadd_ss, SCALAR_TOTALS)

/* SSE2 has no FMA: a multiply and a dependent add, two instructions. */
#define SSE2_MULADD_PD(a, m, c) _mm_add_pd(_mm_mul_pd(a, m), c)
#define SSE2_MULADD_PS(a, m, c) _mm_add_ps(_mm_mul_ps(a, m), c)
#define SET1_128D(x) _mm_set1_pd(x)
#define SET1_128S(x) _mm_set1_ps((float)(x))
#define TOTAL_128D(v) total_128d(v)
#define TOTAL_128S(v) total_128s(v)
X86_CLASS(sse2, "sse2", "sse2", "128-bit SSE2 multiply then add (mulpd+addpd / mulps+addps)", 0, 128,
	  __builtin_cpu_supports("sse2"), __m128d, SET1_128D, SSE2_MULADD_PD, TOTAL_128D, __m128, SET1_128S,
	  SSE2_MULADD_PS, TOTAL_128S)

X86_CLASS(fma128, "fma", "fma128", "128-bit FMA (vfmadd231pd/ps xmm)", 1, 128, __builtin_cpu_supports("fma"),
	  __m128d, SET1_128D, _mm_fmadd_pd, TOTAL_128D, __m128, SET1_128S, _mm_fmadd_ps, TOTAL_128S)

#define SET1_256D(x) _mm256_set1_pd(x)
#define SET1_256S(x) _mm256_set1_ps((float)(x))
#define TOTAL_256D(v) total_256d(v)
#define TOTAL_256S(v) total_256s(v)
X86_CLASS(fma256, "avx,fma", "fma256", "256-bit FMA (vfmadd231pd/ps ymm)", 1, 256,
	  __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma"), __m256d, SET1_256D, _mm256_fmadd_pd,
	  TOTAL_256D, __m256, SET1_256S, _mm256_fmadd_ps, TOTAL_256S)

#define SET1_512D(x) _mm512_set1_pd(x)
#define SET1_512S(x) _mm512_set1_ps((float)(x))
#define TOTAL_512D(v) total_512d(v)
#define TOTAL_512S(v) total_512s(v)
X86_CLASS(fma512, "avx512f", "fma512", "512-bit FMA (vfmadd231pd/ps zmm)", 1, 512,
	  __builtin_cpu_supports("avx512f"), __m512d, SET1_512D, _mm512_fmadd_pd, TOTAL_512D, __m512, SET1_512S,
	  _mm512_fmadd_ps, TOTAL_512S)

#endif
