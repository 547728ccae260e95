/* The bandwidth loops of AArch64 (include/bw_loops.h): NEON (Advanced SIMD,
 * 16-byte vectors, part of every AArch64 CPU) and SVE (vector-length
 * agnostic: the CPU's length, 16 to 256 bytes, read with svcntb), the SVE
 * functions compiled for it alone with __attribute__((target("+sve"))) and
 * run only where the kernel reports HWCAP_SVE. Streaming stores: NEON has
 * STNP (a store pair with a non-temporal hint, two 16-byte registers: half a
 * line), SVE has STNT1; a `dmb ishst` after them orders them before what the
 * thread stores next, as sfence does on x86. */
#include "bw_loops.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <sys/auxv.h>

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif

static inline void nt_fence(void)
{
	__asm__ volatile("dmb ishst" ::: "memory");
}

/* ---- NEON ------------------------------------------------------------------ */

/* 32 bytes from two registers with STNP; the output operand names exactly the
 * bytes written, so the compiler keeps its own loads and stores around it. */
static inline void stnp_u64(char *p, uint64x2_t low, uint64x2_t high)
{
	__asm__("stnp %q1, %q2, %0" : "=Q"(*(char(*)[32])p) : "w"(low), "w"(high));
}

static inline void stnp_f64(double *p, float64x2_t low, float64x2_t high)
{
	__asm__("stnp %q1, %q2, %0" : "=Q"(*(double(*)[4])p) : "w"(low), "w"(high));
}

static inline uint64x2_t neon_load(const char *p)
{
	return vld1q_u64((const uint64_t *)(const void *)p);
}

static inline uint64x2_t neon_line_sum(uint64x2_t acc, const char *line)
{
	return vaddq_u64(acc, vaddq_u64(vaddq_u64(neon_load(line), neon_load(line + 16)),
					vaddq_u64(neon_load(line + 32), neon_load(line + 48))));
}

static inline void neon_line_store(char *line, int nt)
{
	uint64x2_t value = vdupq_n_u64(BW_WRITE_WORD);

	if (nt) {
		stnp_u64(line, value, value);
		stnp_u64(line + 32, value, value);
	} else {
		uint64_t *words = (uint64_t *)(void *)line;

		vst1q_u64(words, value);
		vst1q_u64(words + 2, value);
		vst1q_u64(words + 4, value);
		vst1q_u64(words + 6, value);
	}
}

static uint64_t neon_total(uint64x2_t acc)
{
	return vgetq_lane_u64(acc, 0) + vgetq_lane_u64(acc, 1);
}

/* Dense read: four accumulators, one 16-byte vector each per step. */
static uint64_t read_dense_neon(const char *p, uint64_t lines)
{
	uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;

	for (uint64_t l = 0; l < lines; l++, p += BW_LINE) {
		a0 = vaddq_u64(a0, neon_load(p));
		a1 = vaddq_u64(a1, neon_load(p + 16));
		a2 = vaddq_u64(a2, neon_load(p + 32));
		a3 = vaddq_u64(a3, neon_load(p + 48));
	}
	return neon_total(vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3)));
}

static void write_dense_neon(char *p, uint64_t lines, int nt)
{
	for (uint64_t l = 0; l < lines; l++)
		neon_line_store(p + l * BW_LINE, nt);
	if (nt)
		nt_fence();
}

static void copy_dense_neon(char *dst, const char *src, uint64_t lines, int nt)
{
	for (uint64_t l = 0; l < lines; l++, dst += BW_LINE, src += BW_LINE) {
		uint64x2_t v0 = neon_load(src), v1 = neon_load(src + 16);
		uint64x2_t v2 = neon_load(src + 32), v3 = neon_load(src + 48);

		if (nt) {
			stnp_u64(dst, v0, v1);
			stnp_u64(dst + 32, v2, v3);
		} else {
			uint64_t *words = (uint64_t *)(void *)dst;

			vst1q_u64(words, v0);
			vst1q_u64(words + 2, v1);
			vst1q_u64(words + 4, v2);
			vst1q_u64(words + 6, v3);
		}
	}
	if (nt)
		nt_fence();
}

static void triad_dense_neon(double *a, const double *b, const double *c, uint64_t lines, int nt)
{
	float64x2_t s = vdupq_n_f64(3.0);

	for (uint64_t l = 0; l < lines; l++, a += 8, b += 8, c += 8) {
		float64x2_t r[4];

		for (int v = 0; v < 4; v++)
			r[v] = vaddq_f64(vld1q_f64(b + 2 * v), vmulq_f64(s, vld1q_f64(c + 2 * v)));
		if (nt) {
			stnp_f64(a, r[0], r[1]);
			stnp_f64(a + 4, r[2], r[3]);
		} else {
			for (int v = 0; v < 4; v++)
				vst1q_f64(a + 2 * v, r[v]);
		}
	}
	if (nt)
		nt_fence();
}

#define NO_ATTR
BW_WALKER(neon, NO_ATTR, uint64x2_t, vdupq_n_u64(0), neon_line_sum, neon_line_store, neon_total, nt_fence)
BW_RUN(neon, NO_ATTR)

static int supported_neon(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
}

static unsigned vector_bytes_neon(void)
{
	return 16;
}

const struct bw_loops bw_loops_neon = {
	.isa = BW_ISA_NEON, .supported = supported_neon, .vector_bytes = vector_bytes_neon,
	.no_nt_stores = NULL, .run = run_neon,
};

/* ---- SVE ------------------------------------------------------------------- */

#if defined(BW_HAVE_SVE)

#include <arm_sve.h>

#if defined(__clang__)
#define SVE __attribute__((target("sve")))
#else
#define SVE __attribute__((target("+sve")))
#endif

/* A line is 8 lanes of 64 bits: one predicated vector where the vector
 * length is 64 bytes or more, else several. */
SVE static inline svuint64_t sve_line_sum(svuint64_t acc, const char *line)
{
	const uint64_t *words = (const uint64_t *)(const void *)line;

	for (uint64_t i = 0; i < 8; i += svcntd()) {
		svbool_t lanes = svwhilelt_b64_u64(i, 8);

		acc = svadd_u64_m(lanes, acc, svld1_u64(lanes, words + i));
	}
	return acc;
}

SVE static inline void sve_line_store(char *line, int nt)
{
	uint64_t *words = (uint64_t *)(void *)line;
	svuint64_t value = svdup_n_u64(BW_WRITE_WORD);

	for (uint64_t i = 0; i < 8; i += svcntd()) {
		svbool_t lanes = svwhilelt_b64_u64(i, 8);

		if (nt)
			svstnt1_u64(lanes, words + i, value);
		else
			svst1_u64(lanes, words + i, value);
	}
}

SVE static uint64_t sve_total(svuint64_t acc)
{
	return svaddv_u64(svptrue_b64(), acc);
}

/* The dense loops run over whole vectors (a vector may span lines), the
 * last one predicated. */
SVE static uint64_t read_dense_sve(const char *p, uint64_t lines)
{
	const uint64_t *words = (const uint64_t *)(const void *)p;
	uint64_t n = lines * 8, step = svcntd(), i = 0;
	svbool_t all = svptrue_b64();
	svuint64_t a0 = svdup_n_u64(0), a1 = a0, a2 = a0, a3 = a0;

	for (; i + 4 * step <= n; i += 4 * step) {
		a0 = svadd_u64_x(all, a0, svld1_u64(all, words + i));
		a1 = svadd_u64_x(all, a1, svld1_u64(all, words + i + step));
		a2 = svadd_u64_x(all, a2, svld1_u64(all, words + i + 2 * step));
		a3 = svadd_u64_x(all, a3, svld1_u64(all, words + i + 3 * step));
	}
	for (; i < n; i += step) {
		svbool_t lanes = svwhilelt_b64_u64(i, n);

		a0 = svadd_u64_m(lanes, a0, svld1_u64(lanes, words + i));
	}
	return sve_total(svadd_u64_x(all, svadd_u64_x(all, a0, a1), svadd_u64_x(all, a2, a3)));
}

SVE static void write_dense_sve(char *p, uint64_t lines, int nt)
{
	uint64_t *words = (uint64_t *)(void *)p;
	uint64_t n = lines * 8, step = svcntd();
	svuint64_t value = svdup_n_u64(BW_WRITE_WORD);

	for (uint64_t i = 0; i < n; i += step) {
		svbool_t lanes = svwhilelt_b64_u64(i, n);

		if (nt)
			svstnt1_u64(lanes, words + i, value);
		else
			svst1_u64(lanes, words + i, value);
	}
	if (nt)
		nt_fence();
}

SVE static void copy_dense_sve(char *dst, const char *src, uint64_t lines, int nt)
{
	uint64_t *to = (uint64_t *)(void *)dst;
	const uint64_t *from = (const uint64_t *)(const void *)src;
	uint64_t n = lines * 8, step = svcntd();

	for (uint64_t i = 0; i < n; i += step) {
		svbool_t lanes = svwhilelt_b64_u64(i, n);
		svuint64_t v = svld1_u64(lanes, from + i);

		if (nt)
			svstnt1_u64(lanes, to + i, v);
		else
			svst1_u64(lanes, to + i, v);
	}
	if (nt)
		nt_fence();
}

SVE static void triad_dense_sve(double *a, const double *b, const double *c, uint64_t lines, int nt)
{
	uint64_t n = lines * 8, step = svcntd();
	svfloat64_t s = svdup_n_f64(3.0);

	for (uint64_t i = 0; i < n; i += step) {
		svbool_t lanes = svwhilelt_b64_u64(i, n);
		svfloat64_t r = svadd_f64_x(lanes, svld1_f64(lanes, b + i), svmul_f64_x(lanes, s, svld1_f64(lanes, c + i)));

		if (nt)
			svstnt1_f64(lanes, a + i, r);
		else
			svst1_f64(lanes, a + i, r);
	}
	if (nt)
		nt_fence();
}

BW_WALKER(sve, SVE, svuint64_t, svdup_n_u64(0), sve_line_sum, sve_line_store, sve_total, nt_fence)
BW_RUN(sve, SVE)

static int supported_sve(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
}

SVE static unsigned sve_bytes(void)
{
	return (unsigned)svcntb();
}

/* svcntb is an SVE instruction: only asked on a CPU that has SVE. */
static unsigned vector_bytes_sve(void)
{
	return supported_sve() ? sve_bytes() : 0;
}

const struct bw_loops bw_loops_sve = {
	.isa = BW_ISA_SVE, .supported = supported_sve, .vector_bytes = vector_bytes_sve,
	.no_nt_stores = NULL, .run = run_sve,
};

#endif /* BW_HAVE_SVE */

#endif /* __aarch64__ */
