/* chase: idle load-to-use latency by pointer chasing, swept over working-set
 * sizes. Each point is one random cycle through every cache line of a buffer
 * of that size; the time per dependent load is the latency of the level of
 * the hierarchy that holds the buffer. Method: docs/methods.md, "Latency
 * (pointer chase)" and "Statistics". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "chain.h"
#include "cli.h"
#include "kopts.h"
#include "latency.h"
#include "registry.h"
#include "sizes.h"

#define KERNEL "chase"
#define DEFAULT_PER_OCTAVE 4
#define DEFAULT_EXPERIMENT "latency_sweep"
#define MIN_WORKING_SET (2 * CHAIN_LINE_BYTES)
#define SEE_HELP "see '" CLI_PROGRAM " chase --help'"

static void chase_help(FILE *out);

struct chase_options {
	struct kopts common;
	uint64_t *sizes; /* in the order given (or swept), before shuffling */
	size_t size_count;
	uint64_t sweep_min, sweep_max, per_octave;
	int have_sweep_min, have_sweep_max, have_per_octave;
	enum page_policy page_policy;
};

static void chase_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, chase_help);
	fprintf(out,
		"Usage: %s chase (--sizes LIST | --min SIZE --max SIZE [--per-octave N]) [OPTIONS]\n"
		"\n"
		"Idle load-to-use latency by pointer chasing. For each working-set size, the\n"
		"cache lines (64 B) of a buffer are linked into ONE random cycle (Sattolo's\n"
		"algorithm); the chain is self-checked, walked once to warm up, then timed\n"
		"as 16 dependent loads per loop iteration. Reports ns per load and, from a\n"
		"measured core clock, cycles. Sizes run in a seeded random order, and a\n"
		"4 KiB (L1) canary chase is timed before and after each point to expose\n"
		"clock drift.\n"
		"\n"
		"Working-set sizes (one of the two forms is required):\n"
		"  -s, --sizes LIST        comma-separated sizes, e.g. 16k,1m,256m; each a\n"
		"                          multiple of 64 bytes and at least 128 (2 lines)\n"
		"  -m, --min SIZE          geometric sweep from SIZE ...\n"
		"  -x, --max SIZE          ... up to SIZE (both required for a sweep)\n"
		"  -k, --per-octave N      sweep points per doubling of size (default %d);\n"
		"                          swept sizes are rounded to whole 64-byte lines\n"
		"  -p, --page-policy P     thp: madvise(MADV_HUGEPAGE), 2 MiB pages so TLB\n"
		"                          misses do not blur cache steps; 4k: MADV_NOHUGEPAGE,\n"
		"                          to expose the TLB component (default thp). The\n"
		"                          grant is measured from /proc/self/smaps and reported\n"
		"\n",
		CLI_PROGRAM, DEFAULT_PER_OCTAVE);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Each point is one JSON object on one line, written when the point ends:\n"
		"  schema_version, experiment, kernel (\"chase\"), metric (\"latency\"), unit (\"ns\"),\n"
		"  params {working_set_bytes, stride_bytes, line_bytes, lines_touched, pattern\n"
		"          (\"random_cycle\"), page_policy, huge_bytes_granted, walk, chains, cpu,\n"
		"          accesses_per_sample, seed},\n"
		"  samples [ns per load, each sample],\n"
		"  summary {min, median, mean, ci95_low, ci95_high (95%% CI of the median,\n"
		"           binomial order statistics), count},\n"
		"  context {canary_before_ns, canary_after_ns, core_clock_ghz, median_cycles,\n"
		"           wall_s (seconds for the point, setup included), order_index\n"
		"           (0-based position in the measuring order), precision, tries\n"
		"           [every measurement of the point: --tries]}.\n"
		"Progress goes to stderr, one line per finished point.\n"
		"\n"
		"Examples:\n"
		"  %s chase --sizes 16k,256k,1m,8m,64m,512m --cpu 0\n"
		"  %s chase --min 4k --max 1g --per-octave 4 --output results.jsonl\n"
		"  %s chase --sizes 64m --page-policy 4k --samples 21 --human\n",
		CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM);
}

static void chase_option(void *context, int option, const char *arg)
{
	struct chase_options *options = context;
	const char *error;
	char *bad_item = NULL;

	switch (option) {
	case 's':
		free(options->sizes);
		error = size_list_parse(arg, &options->sizes, &options->size_count, &bad_item);
		if (error)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--sizes item '%s' %s; %s",
				 bad_item ? bad_item : arg, error, SEE_HELP);
		break;
	case 'm':
		options->sweep_min = kopts_size(&options->common, "--min", arg);
		options->have_sweep_min = 1;
		break;
	case 'x':
		options->sweep_max = kopts_size(&options->common, "--max", arg);
		options->have_sweep_max = 1;
		break;
	case 'k':
		options->per_octave = kopts_u64(&options->common, "--per-octave", arg, 1, 64);
		options->have_per_octave = 1;
		break;
	case 'p':
		options->page_policy = latency_page_policy_option(&options->common, arg);
		break;
	}
}

static void parse_options(int argc, char **argv, struct chase_options *options)
{
	static const struct option long_options[] = {
		{"sizes", required_argument, NULL, 's'},
		{"min", required_argument, NULL, 'm'},
		{"max", required_argument, NULL, 'x'},
		{"per-octave", required_argument, NULL, 'k'},
		{"page-policy", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};

	memset(options, 0, sizeof(*options));
	kopts_init(&options->common, KERNEL, DEFAULT_EXPERIMENT, chase_help);
	options->per_octave = DEFAULT_PER_OCTAVE;
	options->page_policy = PAGE_POLICY_THP;
	kopts_parse(&options->common, argc, argv, "s:m:x:k:p:", long_options, chase_option, options);
}

/* Sizes min * 2^(i / per_octave) up to max, rounded to whole lines. */
static void build_sweep(struct chase_options *options)
{
	uint64_t min = options->sweep_min, max = options->sweep_max;
	size_t steps, count = 0;

	if (min < MIN_WORKING_SET)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--min %" PRIu64 " is below %d bytes (2 cache lines); raise it", min,
			 MIN_WORKING_SET);
	if (max < min)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--max %" PRIu64 " is below --min %" PRIu64 "; swap them", max, min);
	steps = (size_t)floor((double)options->per_octave * log2((double)max / (double)min) + 1e-9);
	options->sizes = malloc((steps + 1) * sizeof(*options->sizes));
	if (!options->sizes)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the sweep");
	for (size_t i = 0; i <= steps; i++) {
		double exact = (double)min * exp2((double)i / (double)options->per_octave);
		uint64_t bytes = (uint64_t)llround(exact / CHAIN_LINE_BYTES) * CHAIN_LINE_BYTES;

		if (bytes < MIN_WORKING_SET)
			bytes = MIN_WORKING_SET;
		if (count == 0 || bytes != options->sizes[count - 1])
			options->sizes[count++] = bytes;
	}
	options->size_count = count;
}

/* Everything that can be wrong with the arguments is found here, before
 * anything is measured or written. */
static void validate_options(struct chase_options *options)
{
	int sweep = options->have_sweep_min || options->have_sweep_max;

	if (options->sizes && sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--sizes cannot be combined with --min/--max; use one form");
	if (sweep && !(options->have_sweep_min && options->have_sweep_max))
		cli_fail(CLI_EXIT_USAGE, KERNEL, "a sweep needs both --min and --max; %s", SEE_HELP);
	if (options->have_per_octave && !sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--per-octave applies only to a --min/--max sweep");
	if (!options->sizes && !sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "no working-set sizes; give --sizes LIST (e.g. 16k,1m,256m) or --min SIZE --max SIZE");
	if (sweep)
		build_sweep(options);

	for (size_t i = 0; i < options->size_count; i++) {
		uint64_t bytes = options->sizes[i];

		if (bytes < MIN_WORKING_SET)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "working set %" PRIu64 " bytes is below %d bytes (2 cache lines); use a larger size",
				 bytes, MIN_WORKING_SET);
		if (bytes % CHAIN_LINE_BYTES)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "working set %" PRIu64 " bytes is not a multiple of the %d-byte line; round it (e.g. to %" PRIu64 ")",
				 bytes, CHAIN_LINE_BYTES, bytes / CHAIN_LINE_BYTES * CHAIN_LINE_BYTES);
		kopts_check_bytes(&options->common, bytes, "working set");
	}
}

static int chase_run(int argc, char **argv)
{
	struct chase_options options;
	struct latency_session session;

	parse_options(argc, argv, &options);
	validate_options(&options);
	latency_session_open(&session, &options.common, options.size_count);
	while (latency_session_next(&session)) {
		struct latency_request request = {
			.span_bytes = options.sizes[session.sweep.point],
			.stride_bytes = CHAIN_LINE_BYTES,
			.order = CHAIN_ORDER_RANDOM,
			.page_policy = options.page_policy,
			.walk = LATENCY_WALK_READ,
			.chains = 1,
		};

		latency_session_point(&session, &request, NULL, NULL);
	}
	latency_session_close(&session);
	free(options.sizes);
	return CLI_EXIT_OK;
}

const struct kernel_spec chase_kernel = {
	.name = "chase",
	.experiment = DEFAULT_EXPERIMENT,
	.also_feeds = "numa_matrix",
	.description = "idle load-to-use latency: random pointer chase over working-set sizes",
	.run = chase_run,
	.print_help = chase_help,
};
