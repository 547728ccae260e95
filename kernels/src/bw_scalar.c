/* The bandwidth loops in plain C (include/bw_loops.h): 64-bit words, built
 * on every architecture. It is what runs where the engine has no vector
 * loops (riscv64, ppc64le, ...), and a baseline (`--isa scalar`) where it
 * has. The compiler may not vectorise them (GCC does at -O2 since version
 * 12) nor call memcpy / memset for them, so the record's vector_bytes of 8 is
 * what ran. Plain C has no
 * streaming store, so these loops have none: a point asking for one is left
 * out with that reason (bw_isa_no_nt_stores). */
#include "bw_loops.h"

/* Neither vectorised nor turned into a memcpy / memset call (GCC turns a
 * copy loop into memcpy at -O2, and glibc's memcpy streams large copies). */
#if defined(__clang__)
#define SCALAR __attribute__((no_builtin))
#define PLAIN_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#elif defined(__GNUC__)
#define SCALAR __attribute__((optimize("no-tree-vectorize", "no-tree-loop-distribute-patterns")))
#define PLAIN_LOOP
#else
#define SCALAR
#define PLAIN_LOOP
#endif

/* The words of one line added to acc, in two independent sums. */
SCALAR static inline uint64_t scalar_line_sum(uint64_t acc, const char *line)
{
	const uint64_t *words = (const uint64_t *)(const void *)line;

	return acc + (words[0] + words[1] + words[2] + words[3]) + (words[4] + words[5] + words[6] + words[7]);
}

SCALAR static inline void scalar_line_store(char *line, int nt)
{
	uint64_t *words = (uint64_t *)(void *)line;

	(void)nt; /* never set: bw_request_check refuses nt for these loops */
	PLAIN_LOOP
	for (int i = 0; i < 8; i++)
		words[i] = BW_WRITE_WORD;
}

static inline uint64_t scalar_total(uint64_t acc)
{
	return acc;
}

static inline void no_fence(void)
{
}

/* Dense read: four accumulators over consecutive words. */
SCALAR static uint64_t read_dense_scalar(const char *p, uint64_t lines)
{
	const uint64_t *words = (const uint64_t *)(const void *)p;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, n = lines * 8;

	PLAIN_LOOP
	for (uint64_t i = 0; i < n; i += 4) {
		a0 += words[i];
		a1 += words[i + 1];
		a2 += words[i + 2];
		a3 += words[i + 3];
	}
	return (a0 + a1) + (a2 + a3);
}

SCALAR static void write_dense_scalar(char *p, uint64_t lines, int nt)
{
	PLAIN_LOOP
	for (uint64_t l = 0; l < lines; l++)
		scalar_line_store(p + l * BW_LINE, nt);
}

SCALAR static void copy_dense_scalar(char *dst, const char *src, uint64_t lines, int nt)
{
	uint64_t *to = (uint64_t *)(void *)dst;
	const uint64_t *from = (const uint64_t *)(const void *)src;
	uint64_t n = lines * 8;

	(void)nt;
	PLAIN_LOOP
	for (uint64_t i = 0; i < n; i++)
		to[i] = from[i];
}

SCALAR static void triad_dense_scalar(double *a, const double *b, const double *c, uint64_t lines, int nt)
{
	uint64_t n = lines * 8;

	(void)nt;
	PLAIN_LOOP
	for (uint64_t i = 0; i < n; i++)
		a[i] = b[i] + 3.0 * c[i];
}

BW_WALKER(scalar, SCALAR, uint64_t, 0, scalar_line_sum, scalar_line_store, scalar_total, no_fence)
BW_RUN(scalar, SCALAR)

static int supported_scalar(void)
{
	return 1;
}

static unsigned vector_bytes_scalar(void)
{
	return 8;
}

const struct bw_loops bw_loops_scalar = {
	.isa = BW_ISA_SCALAR, .supported = supported_scalar, .vector_bytes = vector_bytes_scalar,
	.no_nt_stores = "the plain-C loops have no streaming store", .run = run_scalar,
};
