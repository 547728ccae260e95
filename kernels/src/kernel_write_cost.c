/* write_cost: what a store costs on top of a load, per level. At each
 * level's working set (levels.h) a read-only chase and a read-modify-write
 * chase (each load followed by an increment in the line it reached) run
 * interleaved in one random order; the difference is the read-for-ownership
 * and write-back cost of dirty lines. Separately, the clflush+mfence variant
 * earlier lab reports used: store, flush, fence, reload. That times a
 * write-back to memory and a read back, a flush round trip, NOT store
 * latency, and its records say so. Its counterparts elsewhere: AArch64
 * `dc civac` (clean and invalidate to the point of coherency, allowed at EL0
 * by Linux) + `dsb ish`; POWER `dcbf` + `sync`. Where the build has no
 * user-space line flush (riscv64: Zicbom's cbo.flush is unknown to GCC 12,
 * and user mode may run it only where the kernel enables it) the round trip
 * is skipped with that reason. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "levels.h"
#include "registry.h"
#include "sampler.h"
#include "timer.h"

/* The line flush of this architecture: FLUSH_LINE(p) writes the line back
 * and drops it from every cache level, FLUSH_FENCE() waits until it has. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_FLUSH 1
#define FLUSH_VARIANT "clflush_mfence_round_trip"
#define FLUSH_WORDS "clflush+mfence"
#define FLUSH_LINE(p) _mm_clflush((const void *)(p))
#define FLUSH_FENCE() _mm_mfence()
#elif defined(__aarch64__)
#define HAVE_FLUSH 1
#define FLUSH_VARIANT "dc_civac_dsb_round_trip"
#define FLUSH_WORDS "dc civac+dsb"
#define FLUSH_LINE(p) __asm__ volatile("dc civac, %0" : : "r"(p) : "memory")
#define FLUSH_FENCE() __asm__ volatile("dsb ish" : : : "memory")
#elif defined(__powerpc64__)
#define HAVE_FLUSH 1
#define FLUSH_VARIANT "dcbf_sync_round_trip"
#define FLUSH_WORDS "dcbf+sync"
#define FLUSH_LINE(p) __asm__ volatile("dcbf 0,%0" : : "r"(p) : "memory")
#define FLUSH_FENCE() __asm__ volatile("sync" : : : "memory")
#else
#define HAVE_FLUSH 0
#if defined(__riscv)
#define NO_FLUSH_REASON "riscv64: this build has no user-space line flush (Zicbom cbo.flush is unknown to GCC 12, and user mode may run it only where the kernel enables it)"
#else
#define NO_FLUSH_REASON "this architecture has no line flush the kernel is built with (x86 clflush, Arm dc civac, POWER dcbf)"
#endif
#endif

#define KERNEL "write_cost"
#define DEFAULT_EXPERIMENT "write_cost"
#define FLUSH_LINES 16

struct write_cost_options {
	struct kopts common;
	struct level_options levels;
	int no_flush;
};

static void write_cost_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, write_cost_help);
	fprintf(out,
		"Usage: %s write_cost [OPTIONS]\n"
		"\n"
		"The cost of writes, per level. At a working set inside each cache level and\n"
		"DRAM (sizes from sysfs, as in zero_queue) a read-only random chase and a\n"
		"read-modify-write chase (each load, then an increment of a word in the line\n"
		"it reached) run in one seeded random order: the difference is the\n"
		"read-for-ownership and write-back cost of dirty lines. Also, unless\n"
		"--no-flush, the clflush+mfence variant: store to a line, clflush it, mfence,\n"
		"reload it (AArch64: dc civac + dsb ish; POWER: dcbf + sync; elsewhere it is\n"
		"skipped with the reason on stderr). That is a FLUSH ROUND TRIP (a write-back\n"
		"to memory and a read from it), not store latency; its records say so.\n"
		"\n"
		"Options:\n"
		"  -F, --no-flush          leave out the flush round trip\n",
		CLI_PROGRAM);
	levels_help(out);
	fputc('\n', out);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: per level two, as chase's with params level, sysfs_size_bytes,\n"
		"size_rule and walk (read | read_modify_write); the flush record has metric\n"
		"flush_round_trip, unit ns, params variant (clflush_mfence_round_trip,\n"
		"dc_civac_dsb_round_trip, dcbf_sync_round_trip), lines,\n"
		"cpu, accesses_per_sample, seed, note.\n"
		"\n"
		"Example:\n"
		"  %s write_cost --cpu 0 --levels L1d,L2,DRAM\n",
		CLI_PROGRAM);
}

static void write_cost_option(void *context, int option, const char *arg)
{
	struct write_cost_options *options = context;

	if (!levels_option(&options->common, &options->levels, option, arg) && option == 'F')
		options->no_flush = 1;
}

#if HAVE_FLUSH
struct flush_context {
	uint64_t *lines; /* FLUSH_LINES lines, 8 words each */
	uint64_t value;
};

/* Each reload waits for the flush before it (mfence) and feeds the next
 * store, so round trips do not overlap. */
static uint64_t time_flush(void *context, uint64_t rounds)
{
	struct flush_context *flush = context;
	uint64_t value = flush->value, started = timer_thread_ns();

	while (rounds--) {
		for (int i = 0; i < FLUSH_LINES; i++) {
			volatile uint64_t *line = flush->lines + i * 8;

			*line = value;
			FLUSH_LINE(line);
			FLUSH_FENCE();
			value = *line + 1;
		}
	}
	flush->value = value;
	return timer_thread_ns() - started;
}

static void measure_flush(struct latency_session *session)
{
	const struct kopts *opts = session->opts;
	struct sampler_run *run = &session->point.run;
	struct flush_context flush = {.lines = aligned_alloc(4096, FLUSH_LINES * 64)};
	struct record *record = &session->record;
	struct json *json = &record->json;
	uint64_t started = timer_now_ns(), rounds;
	double before, after;

	if (!flush.lines)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for the flush lines");
	memset(flush.lines, 0, FLUSH_LINES * 64);
	before = canary_read_ns(&session->canary);
	rounds = sampler_calibrate(time_flush, &flush, opts->min_sample_ms * 1e6);
	sampler_begin(run, opts, session->sweep.attempt, &session->point.samples, 1);
	sampler_collect(time_flush, &flush, rounds, (double)(rounds * FLUSH_LINES), run);
	after = canary_read_ns(&session->canary);
	free(flush.lines);

	record_begin(record, "flush_round_trip", "ns");
	json_key(json, "variant");
	json_string(json, FLUSH_VARIANT);
	json_key(json, "lines");
	json_uint(json, FLUSH_LINES);
	record_run_params(record, rounds * FLUSH_LINES);
	json_key(json, "note");
	json_string(json, "store, " FLUSH_WORDS ", reload: a write-back to memory and a read back; not store latency");
	record_samples(record, session->point.samples, run->count);
	record_precision(record, run, session->point.samples);
	record_clock_context(record, before, after, session->core_clock_ghz,
			     (double)(timer_now_ns() - started) / 1e9, session->sweep.position);
	record_end(record, FLUSH_WORDS " round trip");
	fprintf(stderr, "%s: %zu/%zu flush round trip median=%.4g ns, %zu samples, %s\n", KERNEL,
		session->sweep.position + 1, session->sweep.length, record->summary.median, run->count,
		sampler_stop_name(run->stop));
	sampler_sweep_done(&session->sweep, run, FLUSH_WORDS " round trip");
}
#endif

static int write_cost_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		LEVELS_LONG_OPTIONS,
		{"no-flush", no_argument, NULL, 'F'},
		{NULL, 0, NULL, 0},
	};
	struct write_cost_options options = {.levels.page_policy = PAGE_POLICY_THP};
	struct level levels[LEVELS_MAX];
	struct latency_session session;
	size_t level_count, count;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, write_cost_help);
	kopts_parse(&options.common, argc, argv, LEVELS_SHORT_OPTIONS "F", long_options,
		    write_cost_option, &options);
	level_count = levels_plan(&options.common, options.levels.dram_bytes, options.levels.only, levels);
#if !HAVE_FLUSH
	/* "<kernel>: skipped: " lines become the experiment's notes (the kernels role) */
	if (!options.no_flush)
		fprintf(stderr, "%s: skipped: flush round trip: %s\n", KERNEL, NO_FLUSH_REASON);
	options.no_flush = 1;
#endif
	count = 2 * level_count + (options.no_flush ? 0 : 1);
	latency_session_open(&session, &options.common, count);
	while (latency_session_next(&session)) {
		size_t index = session.sweep.point;
		const struct level *level = &levels[index / 2];
		struct latency_request request = {
			.stride_bytes = CHAIN_LINE_BYTES,
			.order = CHAIN_ORDER_RANDOM,
			.page_policy = options.levels.page_policy,
			.walk = index % 2 ? LATENCY_WALK_RMW : LATENCY_WALK_READ,
			.chains = 1,
		};

#if HAVE_FLUSH
		if (index == 2 * level_count) {
			measure_flush(&session);
			continue;
		}
#endif
		request.span_bytes = level->working_set_bytes;
		latency_session_point(&session, &request, levels_add_params, level);
	}
	latency_session_close(&session);
	return CLI_EXIT_OK;
}

const struct kernel_spec write_cost_kernel = {
	.name = "write_cost",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "read-modify-write vs read-only chase per level, and the line-flush round trip",
	.run = write_cost_run,
	.print_help = write_cost_help,
};
