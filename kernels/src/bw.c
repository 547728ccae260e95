/* The bandwidth engine (include/bw.h): dense loops per vector width, one
 * generic block walker for strides, random order, mixes, software prefetch
 * and injected delay, and the thread team that times passes. */
#include "bw.h"

#include <errno.h>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "numa.h"
#include "timer.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const op_names[] = {"read", "write", "copy", "triad", "mix"};
static const char *const store_names[] = {"none", "regular", "nt"};
static const char *const isa_names[] = {"auto", "sse2", "avx2", "avx512"};
static const char *const pattern_names[] = {"sequential", "random"};

static int parse_name(const char *const *names, size_t count, const char *name, int first)
{
	for (size_t i = (size_t)first; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *bw_op_name(enum bw_op op) { return op_names[op]; }
const char *bw_store_name(enum bw_store store) { return store_names[store]; }
const char *bw_isa_name(enum bw_isa isa) { return isa_names[isa]; }
const char *bw_pattern_name(enum bw_pattern pattern) { return pattern_names[pattern]; }

#define PARSER(fn, type, names, first)                                           \
	int fn(const char *name, type *value)                                    \
	{                                                                        \
		int found = parse_name(names, sizeof(names) / sizeof(*names), name, first); \
		if (found < 0)                                                   \
			return -1;                                               \
		*value = (type)found;                                            \
		return 0;                                                        \
	}
PARSER(bw_op_parse, enum bw_op, op_names, 0)
PARSER(bw_store_parse, enum bw_store, store_names, 1)
PARSER(bw_isa_parse, enum bw_isa, isa_names, 0)
PARSER(bw_pattern_parse, enum bw_pattern, pattern_names, 0)

int bw_isa_supported(enum bw_isa isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case BW_ISA_SSE2:
		return __builtin_cpu_supports("sse2");
	case BW_ISA_AVX2:
		return __builtin_cpu_supports("avx2");
	case BW_ISA_AVX512:
		return __builtin_cpu_supports("avx512f");
	default:
		return 1;
	}
}

enum bw_isa bw_isa_resolve(enum bw_isa isa)
{
	if (isa != BW_ISA_AUTO)
		return isa;
	if (bw_isa_supported(BW_ISA_AVX512))
		return BW_ISA_AVX512;
	return bw_isa_supported(BW_ISA_AVX2) ? BW_ISA_AVX2 : BW_ISA_SSE2;
}

const char *bw_isa_available(void)
{
	if (bw_isa_supported(BW_ISA_AVX512))
		return "sse2,avx2,avx512";
	return bw_isa_supported(BW_ISA_AVX2) ? "sse2,avx2" : "sse2";
}

unsigned bw_isa_vector_bytes(enum bw_isa isa)
{
	return isa == BW_ISA_AVX512 ? 64 : isa == BW_ISA_AVX2 ? 32 : 16;
}

/* ---- requests and accounting ---------------------------------------------- */

void bw_request_ratio(struct bw_request *request)
{
	switch (request->op) {
	case BW_OP_READ:
		request->read_lines = 1, request->write_lines = 0;
		break;
	case BW_OP_WRITE:
		request->read_lines = 0, request->write_lines = 1;
		break;
	case BW_OP_COPY:
		request->read_lines = 1, request->write_lines = 1;
		break;
	case BW_OP_TRIAD:
		request->read_lines = 2, request->write_lines = 1;
		break;
	case BW_OP_MIX:
		break;
	}
	if (request->write_lines == 0)
		request->store = BW_STORE_NONE;
	else if (request->store == BW_STORE_NONE)
		request->store = BW_STORE_REGULAR;
}

static int dense_arrays(const struct bw_request *request)
{
	return request->op == BW_OP_COPY ? 2 : request->op == BW_OP_TRIAD ? 3 : 1;
}

const char *bw_request_check(const struct bw_request *request)
{
	int arrays = dense_arrays(request);

	if (request->stride_bytes < BW_LINE || request->stride_bytes % BW_LINE)
		return "the stride must be a multiple of the 64-byte line";
	if (request->read_lines + request->write_lines == 0)
		return "a mix needs at least one line read or written per group";
	if (arrays > 1 && (request->pattern != BW_PATTERN_SEQUENTIAL || request->stride_bytes != BW_LINE ||
			   request->software_prefetch || request->delay))
		return "copy and triad run dense and sequential only (stride 64, no prefetch, no delay)";
	if (request->working_set_bytes / (uint64_t)arrays / request->stride_bytes < 2)
		return "the working set holds fewer than 2 blocks per array";
	if (!bw_isa_supported(request->isa))
		return "this CPU does not run the requested vector width";
	return NULL;
}

/* Lines read among the first n blocks of a pass (mix groups are R reads then W writes). */
static uint64_t reads_before(const struct bw_request *request, uint64_t n)
{
	uint64_t group = request->read_lines + request->write_lines;
	uint64_t partial = n % group;

	return n / group * request->read_lines + (partial < request->read_lines ? partial : request->read_lines);
}

uint64_t bw_lines(const struct bw_request *request, const struct bw_buffer *buffer, uint64_t first,
		  uint64_t count)
{
	(void)buffer, (void)first;
	if (dense_arrays(request) > 1)
		return count * (uint64_t)dense_arrays(request);
	return count;
}

/* ---- the random order: a bijection of [0, 2^bits) computed from the index -- */

static inline uint64_t permute(uint64_t i, unsigned bits, uint64_t key)
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

static inline void spin(uint64_t iterations)
{
	while (iterations--)
		__asm__ volatile("" ::: "memory");
}

/* ---- loops per vector width ------------------------------------------------
 * One macro expanded for SSE2, AVX2 and AVX-512F: the dense loops and the
 * block walker, compiled for that target only. */

#define PATTERN_WORD 1ull
#define WRITE_WORD 0x5A5A5A5A5A5A5A5Aull

#define BW_LOOPS(SFX, TGT, VB, VI, VD, LOADI, STOREI, STREAMI, ADDI, ZEROI, SET1I, LOADD, STORED, STREAMD, \
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
		VI value = SET1I((long long)WRITE_WORD);                                                  \
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
	/* The block walker: any stride, order, mix, prefetch and delay. */                              \
	__attribute__((target(TGT))) static uint64_t walk_##SFX(const struct bw_request *r,               \
							    const struct bw_buffer *buf, uint64_t first,   \
							    uint64_t count)                                \
	{                                                                                                 \
		uint64_t group = r->read_lines + r->write_lines, slot = first % group, end = first + count; \
		int random = r->pattern == BW_PATTERN_RANDOM, nt = r->store == BW_STORE_NT;               \
		VI acc = ZEROI(), value = SET1I((long long)WRITE_WORD);                                   \
		for (uint64_t k = first; k < end; k++) {                                                  \
			uint64_t pos = random ? permute(k, buf->random_bits, r->seed) : k;                \
			char *line = buf->a + pos * r->stride_bytes;                                      \
			if (r->software_prefetch && k + r->prefetch_blocks < buf->blocks) {               \
				uint64_t ahead = k + r->prefetch_blocks;                                  \
				if (random)                                                               \
					ahead = permute(ahead, buf->random_bits, r->seed);                \
				_mm_prefetch(buf->a + ahead * r->stride_bytes, _MM_HINT_T0);             \
			}                                                                                 \
			if (slot < r->read_lines)                                                         \
				acc = ADDI(acc, line_sum_##SFX(line));                                    \
			else                                                                              \
				line_store_##SFX(line, value, nt);                                        \
			if (++slot == group) {                                                            \
				slot = 0;                                                                 \
				spin(r->delay);                                                           \
			}                                                                                 \
		}                                                                                         \
		if (nt)                                                                                   \
			_mm_sfence();                                                                     \
		return hsum_##SFX(acc);                                                                   \
	}                                                                                                 \
	__attribute__((target(TGT))) static uint64_t run_##SFX(const struct bw_request *r,                \
							   struct bw_buffer *buf, uint64_t first,          \
							   uint64_t count)                                 \
	{                                                                                                 \
		int dense = r->pattern == BW_PATTERN_SEQUENTIAL && r->stride_bytes == BW_LINE &&          \
			    !r->software_prefetch && !r->delay;                                           \
		int nt = r->store == BW_STORE_NT;                                                         \
		switch (r->op) {                                                                          \
		case BW_OP_COPY:                                                                          \
			copy_dense_##SFX(buf->a + first * BW_LINE, buf->b + first * BW_LINE, count, nt);  \
			return 0;                                                                         \
		case BW_OP_TRIAD:                                                                         \
			triad_dense_##SFX((double *)(buf->a + first * BW_LINE),                           \
					  (const double *)(buf->b + first * BW_LINE),                     \
					  (const double *)(buf->c + first * BW_LINE), count, nt);         \
			return 0;                                                                         \
		default:                                                                                  \
			if (dense && r->write_lines == 0)                                                 \
				return read_dense_##SFX(buf->a + first * BW_LINE, count);                 \
			if (dense && r->read_lines == 0) {                                                \
				write_dense_##SFX(buf->a + first * BW_LINE, count, nt);                   \
				return 0;                                                                 \
			}                                                                                 \
			return walk_##SFX(r, buf, first, count);                                          \
		}                                                                                         \
	}

BW_LOOPS(sse2, "sse2", 16, __m128i, __m128d, _mm_load_si128, _mm_store_si128, _mm_stream_si128, _mm_add_epi64,
	 _mm_setzero_si128, _mm_set1_epi64x, _mm_load_pd, _mm_store_pd, _mm_stream_pd, _mm_add_pd, _mm_mul_pd,
	 _mm_set1_pd)
BW_LOOPS(avx2, "avx2", 32, __m256i, __m256d, _mm256_load_si256, _mm256_store_si256, _mm256_stream_si256,
	 _mm256_add_epi64, _mm256_setzero_si256, _mm256_set1_epi64x, _mm256_load_pd, _mm256_store_pd,
	 _mm256_stream_pd, _mm256_add_pd, _mm256_mul_pd, _mm256_set1_pd)

#define LOAD512(p) _mm512_load_si512((const void *)(p))
#define STORE512(p, v) _mm512_store_si512((void *)(p), v)
#define STREAM512(p, v) _mm512_stream_si512((void *)(p), v)
BW_LOOPS(avx512, "avx512f", 64, __m512i, __m512d, LOAD512, STORE512, STREAM512, _mm512_add_epi64,
	 _mm512_setzero_si512, _mm512_set1_epi64, _mm512_load_pd, _mm512_store_pd, _mm512_stream_pd,
	 _mm512_add_pd, _mm512_mul_pd, _mm512_set1_pd)

uint64_t bw_run(const struct bw_request *request, struct bw_buffer *buffer, uint64_t first, uint64_t count)
{
	if (first >= buffer->blocks)
		return 0;
	if (count > buffer->blocks - first)
		count = buffer->blocks - first;
	switch (request->isa) {
	case BW_ISA_AVX512:
		return run_avx512(request, buffer, first, count);
	case BW_ISA_AVX2:
		return run_avx2(request, buffer, first, count);
	default:
		return run_sse2(request, buffer, first, count);
	}
}

uint64_t bw_pass(const struct bw_request *request, struct bw_buffer *buffer)
{
	return bw_run(request, buffer, 0, buffer->blocks);
}

/* ---- buffers ---------------------------------------------------------------- */

static void fill_lines(char *array, uint64_t lines, uint64_t stride, uint64_t word)
{
	for (uint64_t l = 0; l < lines; l++)
		memcpy(array + l * stride, &word, sizeof(word));
}

void bw_fill_pattern(const struct bw_request *request, struct bw_buffer *buffer)
{
	int arrays = dense_arrays(request);
	uint64_t span = buffer->blocks * request->stride_bytes;
	double one = 1.0;
	uint64_t one_bits;

	memcpy(&one_bits, &one, sizeof(one_bits));
	memset(buffer->a, 0, span * (uint64_t)arrays);
	if (arrays == 1)
		fill_lines(buffer->a, span / BW_LINE, BW_LINE, PATTERN_WORD);
	else /* the destination stays zero; the first source holds the pattern (triad: 1.0, c = 0) */
		fill_lines(buffer->b, buffer->blocks, BW_LINE, arrays == 3 ? one_bits : PATTERN_WORD);
}

uint64_t bw_count_changed_lines(const struct bw_request *request, const struct bw_buffer *buffer)
{
	static const char zero[BW_LINE];
	char pattern[BW_LINE] = {0};
	uint64_t changed = 0, lines = buffer->blocks * request->stride_bytes / BW_LINE;
	uint64_t word = PATTERN_WORD;

	memcpy(pattern, &word, sizeof(word));
	for (uint64_t l = 0; l < lines; l++)
		changed += memcmp(buffer->a + l * BW_LINE, dense_arrays(request) == 1 ? pattern : zero, BW_LINE) != 0;
	return changed;
}

int bw_prepare(const struct bw_request *request, struct bw_buffer *buffer)
{
	int arrays = dense_arrays(request);
	uint64_t blocks = request->working_set_bytes / (uint64_t)arrays / request->stride_bytes;
	uint64_t reads, writes;

	memset(buffer, 0, sizeof(*buffer));
	if (request->pattern == BW_PATTERN_RANDOM) {
		while ((2ull << buffer->random_bits) <= blocks)
			buffer->random_bits++;
		blocks = 1ull << buffer->random_bits;
	}
	buffer->blocks = blocks;
	buffer->working_set_bytes = blocks * request->stride_bytes * (uint64_t)arrays;
	if (buffer_alloc(&buffer->buffer, buffer->working_set_bytes, request->page_policy) != 0)
		return -1;
	buffer->a = buffer->buffer.data;
	buffer->b = buffer->a + blocks * request->stride_bytes;
	buffer->c = buffer->b + blocks * request->stride_bytes;
	bw_fill_pattern(request, buffer);
	if (arrays > 1) {
		reads = blocks * (uint64_t)(arrays - 1);
		writes = blocks;
	} else {
		reads = reads_before(request, blocks);
		writes = blocks - reads;
	}
	buffer->lines_read_per_pass = reads;
	buffer->lines_written_per_pass = writes;
	buffer->lines_per_pass = reads + writes;
	buffer->write_allocate_lines_per_pass = request->store == BW_STORE_REGULAR ? writes : 0;
	if (buffer_huge_bytes(&buffer->buffer, &buffer->huge_bytes_granted) != 0)
		buffer->huge_bytes_granted = 0;
	return 0;
}

void bw_release(struct bw_buffer *buffer)
{
	buffer_free(&buffer->buffer);
	memset(buffer, 0, sizeof(*buffer));
}

/* ---- the thread team --------------------------------------------------------- */

struct team;

struct worker {
	pthread_t thread;
	struct team *team;
	int cpu;
	struct bw_buffer buffer;
	char error[160];
	uint64_t sink;
	uint64_t pages_sampled, pages_on_mem_node;
};

struct team {
	const struct bw_request *request;
	pthread_barrier_t barrier;
	uint64_t passes;
	int stop;
	int mem_node;
};

static void *worker_main(void *arg)
{
	struct worker *worker = arg;
	struct team *team = worker->team;
	int ready = 1;

	if (worker->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(worker->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
			snprintf(worker->error, sizeof(worker->error), "the host refused to pin a thread to CPU %d",
				 worker->cpu);
			ready = 0;
		}
	}
	if (ready && bw_prepare(team->request, &worker->buffer) != 0) {
		snprintf(worker->error, sizeof(worker->error), "cannot map %llu bytes on CPU %d: %s",
			 (unsigned long long)team->request->working_set_bytes, worker->cpu, strerror(errno));
		ready = 0;
	}
	/* the pages this thread touched first: on the bound node, or the record would lie */
	if (ready && team->mem_node >= 0 &&
	    numa_pages_on_node(worker->buffer.buffer.data, worker->buffer.buffer.bytes, team->mem_node,
			       &worker->pages_sampled, &worker->pages_on_mem_node) != 0) {
		snprintf(worker->error, sizeof(worker->error), "cannot ask where the pages of CPU %d lie: %s",
			 worker->cpu, strerror(errno));
		ready = 0;
	}
	pthread_barrier_wait(&team->barrier); /* prepared */
	for (;;) {
		pthread_barrier_wait(&team->barrier); /* start */
		if (__atomic_load_n(&team->stop, __ATOMIC_ACQUIRE))
			break;
		for (uint64_t p = 0; ready && p < team->passes; p++)
			worker->sink += bw_pass(team->request, &worker->buffer);
		pthread_barrier_wait(&team->barrier); /* end */
	}
	if (ready)
		bw_release(&worker->buffer);
	return NULL;
}

/* ns of one round of `passes` passes by every thread together. */
static uint64_t team_round(struct team *team, uint64_t passes)
{
	uint64_t start;

	team->passes = passes;
	start = timer_now_ns();
	pthread_barrier_wait(&team->barrier);
	pthread_barrier_wait(&team->barrier);
	return timer_now_ns() - start;
}

int bw_team_measure(const struct bw_request *request, size_t threads, const int *cpus, int mem_node,
		    double min_sample_ns, struct sampler_run *run, struct bw_team_result *result, char *error,
		    size_t error_size)
{
	struct team team = {.request = request, .mem_node = mem_node};
	struct worker *workers = calloc(threads, sizeof(*workers));
	size_t started = 0;
	int failed = 0;

	memset(result, 0, sizeof(*result));
	if (!workers || pthread_barrier_init(&team.barrier, NULL, (unsigned)threads + 1) != 0) {
		snprintf(error, error_size, "out of memory starting %zu threads", threads);
		free(workers);
		return -1;
	}
	for (; started < threads; started++) {
		workers[started].team = &team;
		workers[started].cpu = cpus ? cpus[started] : -1;
		if (pthread_create(&workers[started].thread, NULL, worker_main, &workers[started]) != 0)
			break;
	}
	if (started < threads) {
		/* the barrier counts every thread and the missing ones can never arrive:
		 * the started ones would wait for ever, so the process ends here */
		cli_fail(CLI_EXIT_RUNTIME, "bandwidth", "cannot start thread %zu of %zu: %s", started + 1,
			 threads, strerror(errno));
	}
	pthread_barrier_wait(&team.barrier); /* prepared */
	for (size_t i = 0; i < threads; i++) {
		if (workers[i].error[0] && !failed) {
			snprintf(error, error_size, "%s", workers[i].error);
			failed = 1;
		}
	}
	if (!failed) {
		uint64_t passes = 1, ns;
		double bytes;

		team_round(&team, 1); /* warm-up */
		for (;;) { /* calibrate: at least min_sample_ns, twice in a row */
			ns = team_round(&team, passes);
			if (ns >= min_sample_ns && team_round(&team, passes) >= min_sample_ns)
				break;
			uint64_t grow = ns ? (uint64_t)(min_sample_ns * 1.2 / (double)ns) + 1 : 16;
			passes *= grow > 16 ? 16 : grow < 2 ? 2 : grow;
		}
		bytes = (double)threads * (double)passes * (double)workers[0].buffer.lines_per_pass * BW_LINE;
		for (; sampler_more(run); run->count++)
			run->series[0][run->count] = bytes / (double)team_round(&team, passes);
		result->passes_per_sample = passes;
		result->lines_per_pass = workers[0].buffer.lines_per_pass;
		result->lines_read_per_pass = workers[0].buffer.lines_read_per_pass;
		result->lines_written_per_pass = workers[0].buffer.lines_written_per_pass;
		result->write_allocate_lines_per_pass = workers[0].buffer.write_allocate_lines_per_pass;
		result->working_set_bytes = workers[0].buffer.working_set_bytes;
		result->blocks = workers[0].buffer.blocks;
		for (size_t i = 0; i < threads; i++) {
			result->huge_bytes_granted += workers[i].buffer.huge_bytes_granted;
			result->mem_pages_sampled += workers[i].pages_sampled;
			result->mem_pages_on_node += workers[i].pages_on_mem_node;
		}
	}
	__atomic_store_n(&team.stop, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&team.barrier);
	for (size_t i = 0; i < threads; i++)
		pthread_join(workers[i].thread, NULL);
	pthread_barrier_destroy(&team.barrier);
	free(workers);
	return failed ? -1 : 0;
}
