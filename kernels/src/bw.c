/* The bandwidth engine (include/bw.h): names, the choice of instruction set,
 * requests and their line accounting, buffers, and the thread team that
 * times passes. The loops themselves are per instruction set, behind
 * include/bw_loops.h (src/bw_x86.c, src/bw_arm.c, src/bw_scalar.c). */
#include "bw.h"
#include "bw_loops.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "numa.h"
#include "timer.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const op_names[] = {"read", "write", "copy", "triad", "mix"};
static const char *const store_names[] = {"none", "regular", "nt"};
static const char *const isa_names[] = {"auto", "scalar", "sse2", "avx2", "avx512", "neon", "sve"};
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

/* ---- instruction sets -------------------------------------------------------- */

/* The loops this build has (bw_loops.h), narrowest vectors first. */
static const struct bw_loops *const built_loops[] = {
	&bw_loops_scalar,
#if defined(BW_HAVE_X86)
	&bw_loops_sse2, &bw_loops_avx2, &bw_loops_avx512,
#endif
#if defined(BW_HAVE_NEON)
	&bw_loops_neon,
#endif
#if defined(BW_HAVE_SVE)
	&bw_loops_sve,
#endif
};
#define BUILT_LOOPS (sizeof(built_loops) / sizeof(built_loops[0]))

static const struct bw_loops *loops_of(enum bw_isa isa)
{
	for (size_t i = 0; i < BUILT_LOOPS; i++)
		if (built_loops[i]->isa == isa)
			return built_loops[i];
	return NULL;
}

int bw_isa_supported(enum bw_isa isa)
{
	const struct bw_loops *loops = loops_of(isa);

	return isa == BW_ISA_AUTO || (loops && loops->supported());
}

const char *bw_isa_available(void)
{
	static char list[64];

	if (!list[0])
		for (size_t i = 0; i < BUILT_LOOPS; i++)
			if (built_loops[i]->supported())
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? "," : "",
					 isa_names[built_loops[i]->isa]);
	return list;
}

const char *bw_isa_known(void)
{
	return "auto, scalar, sse2, avx2, avx512 (x86), neon, sve (Arm)";
}

unsigned bw_isa_vector_bytes(enum bw_isa isa)
{
	const struct bw_loops *loops = loops_of(isa);

	return loops ? loops->vector_bytes() : 0;
}

const char *bw_isa_no_nt_stores(enum bw_isa isa)
{
	const struct bw_loops *loops = loops_of(isa);

	return loops ? loops->no_nt_stores : "this build has no loops for that instruction set";
}

/* The auto choice, probed once per process. A vector width is only worth
 * taking where the core moves it whole: an L1-resident read with it must be
 * at least BW_AUTO_GAIN times as fast as with the next narrower one, as it
 * is where the datapath is that wide (about 2x: AVX2 over SSE2 reads
 * 1.8-1.9x on the dev VM); where the core splits the vector (AVX-512 on Zen
 * 4: 0.98-1.00x) it gains nothing at L1 and lost 10-20% of DRAM bandwidth
 * with regular stores (triad 23-25 vs 28-30 GB/s on the dev VM), so the
 * narrower loops stand. The two widths take turns, PROBE_ROUNDS times, and
 * the decision is the median of the rounds' ratios: a round another process
 * interrupted is one outlier among them (a ratio of best readings once read
 * 1.4 for AVX-512 over AVX2 at a load average of 8). */
#define BW_AUTO_GAIN 1.5
#define PROBE_BYTES 8192      /* in every L1d */
#define PROBE_MIN_NS 100000.0 /* per timing */
#define PROBE_ROUNDS 15

static struct bw_isa_choice auto_choice;
static int auto_chosen;
static volatile uint64_t probe_sink;

static double probe_time(const struct bw_loops *loops, const struct bw_request *request, struct bw_buffer *buffer,
			 uint64_t passes)
{
	uint64_t started = timer_thread_ns(), sum = 0;

	for (uint64_t p = 0; p < passes; p++)
		sum += loops->run(request, buffer, 0, buffer->blocks);
	probe_sink = sum;
	return (double)(timer_thread_ns() - started);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* L1-resident reads with two loops in turn: each one's best GB/s, and the
 * median over the rounds of wide / narrow. */
static void probe_pair(const struct bw_loops *narrow, const struct bw_loops *wide, struct bw_isa_comparison *out)
{
	const struct bw_loops *pair[2] = {narrow, wide};
	double best[2] = {0, 0}, ratios[PROBE_ROUNDS];
	uint64_t passes[2];
	struct bw_request request = {.op = BW_OP_READ, .store = BW_STORE_NONE, .pattern = BW_PATTERN_SEQUENTIAL,
				     .stride_bytes = BW_LINE, .read_lines = 1};
	struct bw_buffer buffer = {.blocks = PROBE_BYTES / BW_LINE};
	char *lines = aligned_alloc(4096, PROBE_BYTES);

	if (!lines)
		cli_fail(CLI_EXIT_RUNTIME, "bandwidth", "out of memory probing the vector widths");
	memset(lines, 1, PROBE_BYTES);
	buffer.a = lines;
	for (int k = 0; k < 2; k++)
		for (passes[k] = 16; probe_time(pair[k], &request, &buffer, passes[k]) < PROBE_MIN_NS;)
			passes[k] *= 2;
	for (int round = 0; round < PROBE_ROUNDS; round++) {
		double rate[2];

		for (int k = 0; k < 2; k++) {
			rate[k] = (double)passes[k] * PROBE_BYTES / probe_time(pair[k], &request, &buffer, passes[k]);
			if (rate[k] > best[k])
				best[k] = rate[k];
		}
		ratios[round] = rate[1] / rate[0];
	}
	free(lines);
	qsort(ratios, PROBE_ROUNDS, sizeof(*ratios), compare_double);
	*out = (struct bw_isa_comparison){.wide = wide->isa, .narrow = narrow->isa, .wide_gb_s = best[1],
					  .narrow_gb_s = best[0], .ratio = ratios[PROBE_ROUNDS / 2]};
}

const struct bw_isa_choice *bw_isa_auto(void)
{
	const struct bw_loops *vector[BUILT_LOOPS];
	size_t count = 0, chosen;

	if (auto_chosen)
		return &auto_choice;
	/* the vector loops this CPU runs, narrowest first; plain C only where there are none */
	for (size_t i = 0; i < BUILT_LOOPS; i++)
		if (built_loops[i] != &bw_loops_scalar && built_loops[i]->supported())
			vector[count++] = built_loops[i];
	if (count == 0)
		vector[count++] = &bw_loops_scalar;
	for (chosen = count - 1; chosen > 0; chosen--) {
		struct bw_isa_comparison *comparison = &auto_choice.comparisons[auto_choice.compared++];

		probe_pair(vector[chosen - 1], vector[chosen], comparison);
		if (comparison->ratio >= BW_AUTO_GAIN)
			break;
	}
	auto_choice.isa = vector[chosen]->isa;
	auto_choice.gain_required = BW_AUTO_GAIN;
	auto_chosen = 1;
	return &auto_choice;
}

enum bw_isa bw_isa_resolve(enum bw_isa isa)
{
	return isa == BW_ISA_AUTO ? bw_isa_auto()->isa : isa;
}

void bw_isa_context(struct json *json, enum bw_isa requested)
{
	const struct bw_isa_choice *choice;

	json_key(json, "isa_auto");
	if (requested != BW_ISA_AUTO) {
		json_null(json);
		return;
	}
	choice = bw_isa_auto();
	json_object_begin(json);
	json_key(json, "chosen");
	json_string(json, bw_isa_name(choice->isa));
	json_key(json, "rule");
	json_string(json, "from the widest down, a width is taken when its L1-resident read is at least "
			  "gain_required x the next narrower's (median of interleaved rounds)");
	json_key(json, "gain_required");
	json_double(json, choice->gain_required);
	json_key(json, "comparisons");
	json_array_begin(json);
	for (size_t i = 0; i < choice->compared; i++) {
		const struct bw_isa_comparison *c = &choice->comparisons[i];

		json_object_begin(json);
		json_key(json, "wide");
		json_string(json, bw_isa_name(c->wide));
		json_key(json, "narrow");
		json_string(json, bw_isa_name(c->narrow));
		json_key(json, "wide_gb_s");
		json_double(json, c->wide_gb_s);
		json_key(json, "narrow_gb_s");
		json_double(json, c->narrow_gb_s);
		json_key(json, "ratio");
		json_double(json, c->ratio);
		json_object_end(json);
	}
	json_array_end(json);
	json_object_end(json);
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
	if (request->store == BW_STORE_NT && bw_isa_no_nt_stores(request->isa))
		return bw_isa_no_nt_stores(request->isa);
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

uint64_t bw_run(const struct bw_request *request, struct bw_buffer *buffer, uint64_t first, uint64_t count)
{
	const struct bw_loops *loops = loops_of(bw_isa_resolve(request->isa));

	if (first >= buffer->blocks)
		return 0;
	if (count > buffer->blocks - first)
		count = buffer->blocks - first;
	return loops->run(request, buffer, first, count);
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
		fill_lines(buffer->a, span / BW_LINE, BW_LINE, BW_PATTERN_WORD);
	else /* the destination stays zero; the first source holds the pattern (triad: 1.0, c = 0) */
		fill_lines(buffer->b, buffer->blocks, BW_LINE, arrays == 3 ? one_bits : BW_PATTERN_WORD);
}

uint64_t bw_count_changed_lines(const struct bw_request *request, const struct bw_buffer *buffer)
{
	static const char zero[BW_LINE];
	char pattern[BW_LINE] = {0};
	uint64_t changed = 0, lines = buffer->blocks * request->stride_bytes / BW_LINE;
	uint64_t word = BW_PATTERN_WORD;

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
	uint64_t started_ns, finished_ns; /* this thread's passes of the last round */
};

struct team {
	const struct bw_request *request;
	struct worker *workers;
	size_t threads;
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
	/* one thread alone: its own CPU time (timer.h); several: the wall clock they share */
	uint64_t (*clock)(void) = team->threads == 1 ? timer_thread_ns : timer_now_ns;

	pthread_barrier_wait(&team->barrier); /* prepared */
	for (;;) {
		pthread_barrier_wait(&team->barrier); /* start */
		if (__atomic_load_n(&team->stop, __ATOMIC_ACQUIRE))
			break;
		worker->started_ns = clock();
		for (uint64_t p = 0; ready && p < team->passes; p++)
			worker->sink += bw_pass(team->request, &worker->buffer);
		worker->finished_ns = clock();
		pthread_barrier_wait(&team->barrier); /* end */
	}
	if (ready)
		bw_release(&worker->buffer);
	return NULL;
}

/* ns of one round of `passes` passes by every thread together: from the
 * first thread's start to the last one's finish, each read by the thread
 * itself (a team of one: the thread's own CPU time, timer.h), so the barriers' wake-ups (tens of microseconds for a halted
 * vCPU) are not counted as time the memory system worked. */
static uint64_t team_round(struct team *team, uint64_t passes)
{
	uint64_t first = UINT64_MAX, last = 0;

	team->passes = passes;
	pthread_barrier_wait(&team->barrier);
	pthread_barrier_wait(&team->barrier);
	for (size_t i = 0; i < team->threads; i++) {
		if (team->workers[i].started_ns < first)
			first = team->workers[i].started_ns;
		if (team->workers[i].finished_ns > last)
			last = team->workers[i].finished_ns;
	}
	return last > first ? last - first : 1;
}

int bw_team_measure(const struct bw_request *request, size_t threads, const int *cpus, int mem_node,
		    double min_sample_ns, struct sampler_run *run, struct bw_team_result *result, char *error,
		    size_t error_size)
{
	struct worker *workers = calloc(threads, sizeof(*workers));
	struct team team = {.request = request, .workers = workers, .threads = threads, .mem_node = mem_node};
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
