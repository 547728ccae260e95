/* The bandwidth loops of x86 (include/bw_loops.h): one macro expanded for
 * SSE2, AVX2 and AVX-512F, each function compiled for its target only with
 * __attribute__((target)), so a build without -march runs on every x86 host
 * and bw.c picks among them at run time (__builtin_cpu_supports). Streaming
 * stores are movntdq / movntpd, followed by sfence. */
#include "bw_loops.h"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#define BW_LOOPS(SFX, TGT, CPU_FLAG, ISA, VB, VI, VD, LOADI, STOREI, STREAMI, ADDI, ZEROI, SET1I, LOADD, STORED, STREAMD, \
		 ADDD, MULD, SET1D)                                                                        \
	__attribute__((target(TGT))) static inline VI line_sum_##SFX(const char *line)                   \
	{                                                                                                 \
		VI acc = ZEROI();                                                                         \
		for (unsigned v = 0; v < BW_LINE / (VB); v++)                                             \
			acc = ADDI(acc, LOADI((const VI *)(line + v * (VB))));                            \
		return acc;                                                                               \
	}                                                                                                 \
	__attribute__((target(TGT))) static inline void line_store_##SFX(char *line, VI value, int nt)   \
	{                                                                                                 \
		if (nt)                                                                                   \
			for (unsigned v = 0; v < BW_LINE / (VB); v++)                                     \
				STREAMI((VI *)(line + v * (VB)), value);                                  \
		else                                                                                      \
			for (unsigned v = 0; v < BW_LINE / (VB); v++)                                     \
				STOREI((VI *)(line + v * (VB)), value);                                   \
	}                                                                                                 \
	__attribute__((target(TGT))) static uint64_t hsum_##SFX(VI acc)                                   \
	{                                                                                                 \
		uint64_t lanes[(VB) / 8], sum = 0;                                                        \
		memcpy(lanes, &acc, sizeof(lanes));                                                       \
		for (unsigned i = 0; i < (VB) / 8; i++)                                                   \
			sum += lanes[i];                                                                  \
		return sum;                                                                               \
	}                                                                                                 \
	/* Dense read: four accumulators over consecutive vectors. */                                   \
	__attribute__((target(TGT))) static uint64_t read_dense_##SFX(const char *p, uint64_t lines)     \
	{                                                                                                 \
		uint64_t vectors = lines * (BW_LINE / (VB)), v = 0;                                       \
		VI a0 = ZEROI(), a1 = ZEROI(), a2 = ZEROI(), a3 = ZEROI();                                \
		for (; v + 4 <= vectors; v += 4) {                                                        \
			a0 = ADDI(a0, LOADI((const VI *)(p + (v + 0) * (VB))));                           \
			a1 = ADDI(a1, LOADI((const VI *)(p + (v + 1) * (VB))));                           \
			a2 = ADDI(a2, LOADI((const VI *)(p + (v + 2) * (VB))));                           \
			a3 = ADDI(a3, LOADI((const VI *)(p + (v + 3) * (VB))));                           \
		}                                                                                         \
		for (; v < vectors; v++)                                                                  \
			a0 = ADDI(a0, LOADI((const VI *)(p + v * (VB))));                                 \
		return hsum_##SFX(ADDI(ADDI(a0, a1), ADDI(a2, a3)));                                      \
	}                                                                                                 \
	__attribute__((target(TGT))) static void write_dense_##SFX(char *p, uint64_t lines, int nt)      \
	{                                                                                                 \
		VI value = SET1I((long long)BW_WRITE_WORD);                                                  \
		if (nt) {                                                                                 \
			for (uint64_t l = 0; l < lines; l++)                                              \
				line_store_##SFX(p + l * BW_LINE, value, 1);                              \
			_mm_sfence();                                                                     \
		} else {                                                                                  \
			for (uint64_t l = 0; l < lines; l++)                                              \
				line_store_##SFX(p + l * BW_LINE, value, 0);                              \
		}                                                                                         \
	}                                                                                                 \
	__attribute__((target(TGT))) static void copy_dense_##SFX(char *dst, const char *src, uint64_t lines, \
								  int nt)                                 \
	{                                                                                                 \
		uint64_t vectors = lines * (BW_LINE / (VB));                                              \
		if (nt) {                                                                                 \
			for (uint64_t v = 0; v < vectors; v++)                                            \
				STREAMI((VI *)(dst + v * (VB)), LOADI((const VI *)(src + v * (VB))));     \
			_mm_sfence();                                                                     \
		} else {                                                                                  \
			for (uint64_t v = 0; v < vectors; v++)                                            \
				STOREI((VI *)(dst + v * (VB)), LOADI((const VI *)(src + v * (VB))));      \
		}                                                                                         \
	}                                                                                                 \
	__attribute__((target(TGT))) static void triad_dense_##SFX(double *a, const double *b,           \
								   const double *c, uint64_t lines, int nt) \
	{                                                                                                 \
		uint64_t vectors = lines * (BW_LINE / (VB)), step = (VB) / 8;                             \
		VD s = SET1D(3.0);                                                                        \
		if (nt) {                                                                                 \
			for (uint64_t v = 0; v < vectors; v++)                                            \
				STREAMD(a + v * step, ADDD(LOADD(b + v * step), MULD(s, LOADD(c + v * step)))); \
			_mm_sfence();                                                                     \
		} else {                                                                                  \
			for (uint64_t v = 0; v < vectors; v++)                                            \
				STORED(a + v * step, ADDD(LOADD(b + v * step), MULD(s, LOADD(c + v * step)))); \
		}                                                                                         \
	}                                                                                                 \
	BW_WALKER(SFX, __attribute__((target(TGT))), VI, ZEROI(), LINE_SUM_##SFX, LINE_STORE_##SFX, hsum_##SFX,  \
		  _mm_sfence)                                                                             \
	BW_RUN(SFX, __attribute__((target(TGT))))                                                         \
	static int supported_##SFX(void)                                                                  \
	{                                                                                                 \
		__builtin_cpu_init();                                                                     \
		return __builtin_cpu_supports(CPU_FLAG);                                                  \
	}                                                                                                 \
	static unsigned vector_bytes_##SFX(void) { return VB; }                                           \
	const struct bw_loops bw_loops_##SFX = {                                                          \
		.isa = ISA, .supported = supported_##SFX, .vector_bytes = vector_bytes_##SFX,             \
		.no_nt_stores = NULL, .run = run_##SFX,                                                   \
	};

/* The walker's line primitives: acc + the line's lanes; the whole line written. */
#define LINE_SUM_sse2(acc, line) _mm_add_epi64(acc, line_sum_sse2(line))
#define LINE_STORE_sse2(line, nt) line_store_sse2(line, _mm_set1_epi64x((long long)BW_WRITE_WORD), nt)
#define LINE_SUM_avx2(acc, line) _mm256_add_epi64(acc, line_sum_avx2(line))
#define LINE_STORE_avx2(line, nt) line_store_avx2(line, _mm256_set1_epi64x((long long)BW_WRITE_WORD), nt)
#define LINE_SUM_avx512(acc, line) _mm512_add_epi64(acc, line_sum_avx512(line))
#define LINE_STORE_avx512(line, nt) line_store_avx512(line, _mm512_set1_epi64((long long)BW_WRITE_WORD), nt)

BW_LOOPS(sse2, "sse2", "sse2", BW_ISA_SSE2, 16, __m128i, __m128d, _mm_load_si128, _mm_store_si128, _mm_stream_si128,
	 _mm_add_epi64, _mm_setzero_si128, _mm_set1_epi64x, _mm_load_pd, _mm_store_pd, _mm_stream_pd, _mm_add_pd,
	 _mm_mul_pd, _mm_set1_pd)
BW_LOOPS(avx2, "avx2", "avx2", BW_ISA_AVX2, 32, __m256i, __m256d, _mm256_load_si256, _mm256_store_si256,
	 _mm256_stream_si256, _mm256_add_epi64, _mm256_setzero_si256, _mm256_set1_epi64x, _mm256_load_pd,
	 _mm256_store_pd, _mm256_stream_pd, _mm256_add_pd, _mm256_mul_pd, _mm256_set1_pd)

#define LOAD512(p) _mm512_load_si512((const void *)(p))
#define STORE512(p, v) _mm512_store_si512((void *)(p), v)
#define STREAM512(p, v) _mm512_stream_si512((void *)(p), v)
BW_LOOPS(avx512, "avx512f", "avx512f", BW_ISA_AVX512, 64, __m512i, __m512d, LOAD512, STORE512, STREAM512,
	 _mm512_add_epi64, _mm512_setzero_si512, _mm512_set1_epi64, _mm512_load_pd, _mm512_store_pd,
	 _mm512_stream_pd, _mm512_add_pd, _mm512_mul_pd, _mm512_set1_pd)

#endif
