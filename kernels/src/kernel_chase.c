/* chase: idle load-to-use latency by pointer chasing, swept over working-set
 * sizes. Each point is one random cycle through every cache line of a buffer
 * of that size; the time per dependent load is the latency of the level of
 * the hierarchy that holds the buffer. Method: shared/METHODS.md, "Latency
 * (pointer chase)" and "Statistics". */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "buffers.h"
#include "canary.h"
#include "chain.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "meminfo.h"
#include "registry.h"
#include "rng.h"
#include "sizes.h"
#include "stats.h"
#include "timer.h"

#define KERNEL "chase"
#define SCHEMA_VERSION 1
#define DEFAULT_SAMPLES 11
#define DEFAULT_MIN_SAMPLE_MS 10.0
#define DEFAULT_PER_OCTAVE 4
#define DEFAULT_EXPERIMENT "latency_sweep"
#define MIN_WORKING_SET (2 * CHAIN_LINE_BYTES)
#define ORDER_RNG_STREAM 0x6f72646572u
#define CHAIN_RNG_STREAM 0x636861696e000000u

struct chase_options {
	uint64_t *sizes; /* in the order given (or swept), before shuffling */
	size_t size_count;
	uint64_t sweep_min, sweep_max, per_octave;
	int have_sweep_min, have_sweep_max, have_per_octave;
	uint64_t samples;
	double min_sample_ms;
	enum page_policy page_policy;
	int cpu; /* -1: not pinned */
	uint64_t seed;
	int have_seed;
	int ordered;
	const char *experiment;
	const char *output_path;
	int human;
	uint64_t max_bytes;
	int have_max_bytes;
};

struct chase_point {
	uint64_t working_set_bytes;
	uint64_t huge_bytes_granted;
	uint64_t accesses_per_sample;
	double *samples; /* ns per access, one per sample */
	struct summary summary;
	double canary_before_ns, canary_after_ns;
	double wall_s;
	size_t order_index;
};

static void chase_help(FILE *out)
{
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
		"\n"
		"Measurement:\n"
		"  -n, --samples N         samples per point, every one kept (default %d)\n"
		"  -t, --min-sample-ms MS  calibrate loads per sample so one sample takes at\n"
		"                          least MS milliseconds (default %g; decimals allowed)\n"
		"  -p, --page-policy P     thp: madvise(MADV_HUGEPAGE), 2 MiB pages so TLB\n"
		"                          misses do not blur cache steps; 4k: MADV_NOHUGEPAGE,\n"
		"                          to expose the TLB component (default thp). The\n"
		"                          grant is measured from /proc/self/smaps and reported\n"
		"  -c, --cpu N             pin to CPU N (default: not pinned, cpu: null)\n"
		"  -r, --seed N            seed for size order and chains, 0..2^64-1\n"
		"                          (default: from the clock; always recorded)\n"
		"  -O, --ordered           measure sizes in the order given instead of a\n"
		"                          seeded random order (default: random)\n"
		"  -M, --max-bytes SIZE    refuse any working set above SIZE\n"
		"                          (default: 80%% of MemAvailable in /proc/meminfo)\n"
		"\n"
		"Output:\n"
		"  -e, --experiment NAME   experiment label written to each record\n"
		"                          (default %s)\n"
		"  -o, --output FILE       append to FILE (created if missing) instead of\n"
		"                          writing to stdout\n"
		"  -H, --human             a table for people instead of JSON lines\n"
		"  -h, --help              show this help\n"
		"\n"
		"Each point is one JSON object on one line, written when the point ends:\n"
		"  schema_version, experiment, kernel (\"chase\"), metric (\"latency\"), unit (\"ns\"),\n"
		"  params {working_set_bytes, line_bytes, pattern (\"random_cycle\"),\n"
		"          page_policy, huge_bytes_granted, cpu, accesses_per_sample, seed},\n"
		"  samples [ns per load, each sample],\n"
		"  summary {min, median, mean, ci95_low, ci95_high (95%% CI of the median,\n"
		"           binomial order statistics), count},\n"
		"  context {canary_before_ns, canary_after_ns, core_clock_ghz, median_cycles,\n"
		"           wall_s (seconds for the point, setup included), order_index\n"
		"           (0-based position in the measuring order)}.\n"
		"Progress goes to stderr, one line per finished point.\n"
		"\n"
		"Exit status: 0 success; 1 the host refused memory or output; 2 invalid\n"
		"arguments (nothing measured, nothing on stdout); 3 the chain self-check\n"
		"failed.\n"
		"\n"
		"Examples:\n"
		"  %s chase --sizes 16k,256k,1m,8m,64m,512m --cpu 0\n"
		"  %s chase --min 4k --max 1g --per-octave 4 --output results.jsonl\n"
		"  %s chase --sizes 64m --page-policy 4k --samples 21 --human\n",
		CLI_PROGRAM, DEFAULT_PER_OCTAVE, DEFAULT_SAMPLES, DEFAULT_MIN_SAMPLE_MS,
		DEFAULT_EXPERIMENT, CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM);
}

#define SEE_HELP "see '" CLI_PROGRAM " chase --help'"

static uint64_t parse_size_option(const char *option, const char *text)
{
	uint64_t bytes;
	const char *error = size_parse(text, &bytes);

	if (error)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "%s '%s' %s; %s", option, text, error, SEE_HELP);
	return bytes;
}

static void parse_options(int argc, char **argv, struct chase_options *options)
{
	static const struct option long_options[] = {
		{"sizes", required_argument, NULL, 's'},
		{"min", required_argument, NULL, 'm'},
		{"max", required_argument, NULL, 'x'},
		{"per-octave", required_argument, NULL, 'k'},
		{"samples", required_argument, NULL, 'n'},
		{"min-sample-ms", required_argument, NULL, 't'},
		{"page-policy", required_argument, NULL, 'p'},
		{"cpu", required_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 'r'},
		{"ordered", no_argument, NULL, 'O'},
		{"experiment", required_argument, NULL, 'e'},
		{"output", required_argument, NULL, 'o'},
		{"human", no_argument, NULL, 'H'},
		{"max-bytes", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int option;

	memset(options, 0, sizeof(*options));
	options->per_octave = DEFAULT_PER_OCTAVE;
	options->samples = DEFAULT_SAMPLES;
	options->min_sample_ms = DEFAULT_MIN_SAMPLE_MS;
	options->page_policy = PAGE_POLICY_THP;
	options->cpu = -1;
	options->experiment = DEFAULT_EXPERIMENT;

	opterr = 0; /* our own one-line messages instead of getopt's */
	optind = 1;
	while ((option = getopt_long(argc, argv, ":s:m:x:k:n:t:p:c:r:Oe:o:HM:h", long_options,
				     NULL)) != -1) {
		uint64_t value;
		const char *error;
		char *bad_item = NULL;

		switch (option) {
		case 's':
			free(options->sizes);
			error = size_list_parse(optarg, &options->sizes, &options->size_count,
						&bad_item);
			if (error)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--sizes item '%s' %s; %s",
					 bad_item ? bad_item : optarg, error, SEE_HELP);
			break;
		case 'm':
			options->sweep_min = parse_size_option("--min", optarg);
			options->have_sweep_min = 1;
			break;
		case 'x':
			options->sweep_max = parse_size_option("--max", optarg);
			options->have_sweep_max = 1;
			break;
		case 'k':
			if (cli_parse_u64(optarg, 1, 64, &options->per_octave) != 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--per-octave '%s' is not a whole number from 1 to 64; %s",
					 optarg, SEE_HELP);
			options->have_per_octave = 1;
			break;
		case 'n':
			if (cli_parse_u64(optarg, 1, 100000, &options->samples) != 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--samples '%s' is not a whole number from 1 to 100000; %s",
					 optarg, SEE_HELP);
			break;
		case 't':
			if (cli_parse_double(optarg, 0.0, 600000.0, &options->min_sample_ms) != 0 ||
			    options->min_sample_ms <= 0.0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--min-sample-ms '%s' is not a positive number of milliseconds (at most 600000); %s",
					 optarg, SEE_HELP);
			break;
		case 'p':
			if (page_policy_parse(optarg, &options->page_policy) != 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--page-policy '%s' is unknown; use thp or 4k", optarg);
			break;
		case 'c':
			if (cli_parse_u64(optarg, 0, 1u << 20, &value) != 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--cpu '%s' is not a CPU number; use one listed by 'nproc --all' or lscpu",
					 optarg);
			if (!affinity_cpu_allowed((int)value))
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--cpu %s is not a CPU this process may run on; pick one from 'taskset -pc $$'",
					 optarg);
			options->cpu = (int)value;
			break;
		case 'r':
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &options->seed) != 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--seed '%s' is not a whole number from 0 to 18446744073709551615",
					 optarg);
			options->have_seed = 1;
			break;
		case 'O':
			options->ordered = 1;
			break;
		case 'e':
			if (optarg[0] == '\0')
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--experiment is empty; give a label such as %s",
					 DEFAULT_EXPERIMENT);
			options->experiment = optarg;
			break;
		case 'o':
			if (optarg[0] == '\0')
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--output is empty; give a file path");
			options->output_path = optarg;
			break;
		case 'H':
			options->human = 1;
			break;
		case 'M':
			options->max_bytes = parse_size_option("--max-bytes", optarg);
			options->have_max_bytes = 1;
			break;
		case 'h':
			chase_help(stdout);
			exit(CLI_EXIT_OK);
		case ':':
			cli_fail(CLI_EXIT_USAGE, KERNEL, "option '%s' needs a value; %s",
				 argv[optind - 1], SEE_HELP);
		default:
			if (optopt)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "unknown option '-%c'; %s", optopt,
					 SEE_HELP);
			cli_fail(CLI_EXIT_USAGE, KERNEL, "unknown option '%s'; %s",
				 argv[optind - 1], SEE_HELP);
		}
	}
	if (optind < argc)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "unexpected argument '%s'; %s", argv[optind],
			 SEE_HELP);
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
	char limit[32], size[32];

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

	if (!options->have_max_bytes) {
		uint64_t available;

		if (meminfo_available_bytes(&available) == 0) {
			options->max_bytes = available / 10 * 8;
		} else {
			fprintf(stderr, "chase: warning: cannot read MemAvailable from /proc/meminfo; "
					"no default --max-bytes limit\n");
			options->max_bytes = UINT64_MAX;
		}
	}
	size_format(options->max_bytes, limit, sizeof(limit));
	for (size_t i = 0; i < options->size_count; i++) {
		uint64_t bytes = options->sizes[i];

		size_format(bytes, size, sizeof(size));
		if (bytes < MIN_WORKING_SET)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "working set %" PRIu64 " bytes is below %d bytes (2 cache lines); use a larger size",
				 bytes, MIN_WORKING_SET);
		if (bytes % CHAIN_LINE_BYTES)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "working set %" PRIu64 " bytes is not a multiple of the %d-byte line; round it (e.g. to %" PRIu64 ")",
				 bytes, CHAIN_LINE_BYTES, bytes / CHAIN_LINE_BYTES * CHAIN_LINE_BYTES);
		if (bytes > options->max_bytes)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "working set %s exceeds the limit of %s (--max-bytes; default 80%% of MemAvailable); use a smaller size or raise --max-bytes",
				 size, limit);
	}
}

static uint64_t seed_from_clock(void)
{
	struct timespec now;
	uint64_t mix;

	clock_gettime(CLOCK_REALTIME, &now);
	mix = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	mix ^= (uint64_t)getpid() << 32;
	/* 53 bits: exact as a JSON number in any reader, doubles included. */
	return rng_splitmix64(&mix) & ((UINT64_C(1) << 53) - 1);
}

static int open_output(const struct chase_options *options)
{
	int fd;

	if (!options->output_path)
		return STDOUT_FILENO;
	fd = open(options->output_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "cannot open --output '%s': %s; check that the directory exists and is writable",
			 options->output_path, strerror(errno));
	return fd;
}

static void measure_point(const struct chase_options *options, struct canary *canary,
			  struct chase_point *point)
{
	uint64_t started = timer_now_ns();
	size_t lines = point->working_set_bytes / CHAIN_LINE_BYTES;
	struct buffer buffer;
	struct rng rng;
	uint64_t rounds;
	size_t steps;
	void *cursor;
	char size[32];

	size_format(point->working_set_bytes, size, sizeof(size));
	if (buffer_alloc(&buffer, point->working_set_bytes, options->page_policy) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot map %s for the working set: %s; lower the size",
			 size, strerror(errno));
	if (buffer_huge_bytes(&buffer, &point->huge_bytes_granted) != 0) {
		fprintf(stderr, "chase: warning: no smaps entry for the %s buffer; huge_bytes_granted reported as 0\n",
			size);
		point->huge_bytes_granted = 0;
	} else if (options->page_policy == PAGE_POLICY_THP &&
		   point->huge_bytes_granted < point->working_set_bytes) {
		char granted[32];

		size_format(point->huge_bytes_granted, granted, sizeof(granted));
		fprintf(stderr, "chase: warning: page policy thp, but only %s of the %s working set is on huge pages\n",
			granted, size);
	}

	/* The chain of a size depends only on the seed and the size, not on
	 * when in the run the size comes up. */
	rng_seed(&rng, options->seed, CHAIN_RNG_STREAM ^ point->working_set_bytes);
	chain_build_random_cycle(buffer.data, lines, &rng);
	/* The self-check walks the whole chain, so it is also the warm-up pass:
	 * every line has been loaded, in chain order, before timing starts. */
	steps = chain_cycle_length(buffer.data, lines);
	if (steps != lines)
		cli_fail(CLI_EXIT_SELF_CHECK, KERNEL,
			 "self-check failed: the chain over %zu lines of the %s working set returns to its start after %zu steps, not %zu; the chain builder is broken, report this",
			 lines, size, steps, lines);

	point->canary_before_ns = canary_read_ns(canary);
	cursor = buffer.data;
	rounds = chain_calibrate_rounds(&cursor, options->min_sample_ms * 1e6);
	point->accesses_per_sample = rounds * CHAIN_LOADS_PER_ROUND;
	for (uint64_t i = 0; i < options->samples; i++)
		point->samples[i] = (double)chain_time_walk_ns(&cursor, rounds) /
				    (double)point->accesses_per_sample;
	point->canary_after_ns = canary_read_ns(canary);

	buffer_free(&buffer);
	stats_summarize(point->samples, options->samples, &point->summary);
	point->wall_s = (double)(timer_now_ns() - started) / 1e9;
}

static int write_json(int fd, struct json *json, const struct chase_options *options,
		      const struct chase_point *point, double core_clock_ghz)
{
	json_reset(json);
	json_object_begin(json);
	json_key(json, "schema_version");
	json_uint(json, SCHEMA_VERSION);
	json_key(json, "experiment");
	json_string(json, options->experiment);
	json_key(json, "kernel");
	json_string(json, KERNEL);
	json_key(json, "metric");
	json_string(json, "latency");
	json_key(json, "unit");
	json_string(json, "ns");

	json_key(json, "params");
	json_object_begin(json);
	json_key(json, "working_set_bytes");
	json_uint(json, point->working_set_bytes);
	json_key(json, "line_bytes");
	json_uint(json, CHAIN_LINE_BYTES);
	json_key(json, "pattern");
	json_string(json, "random_cycle");
	json_key(json, "page_policy");
	json_string(json, page_policy_name(options->page_policy));
	json_key(json, "huge_bytes_granted");
	json_uint(json, point->huge_bytes_granted);
	json_key(json, "cpu");
	if (options->cpu < 0)
		json_null(json);
	else
		json_int(json, options->cpu);
	json_key(json, "accesses_per_sample");
	json_uint(json, point->accesses_per_sample);
	json_key(json, "seed");
	json_uint(json, options->seed);
	json_object_end(json);

	json_key(json, "samples");
	json_array_begin(json);
	for (uint64_t i = 0; i < options->samples; i++)
		json_double(json, point->samples[i]);
	json_array_end(json);

	json_key(json, "summary");
	json_object_begin(json);
	json_key(json, "min");
	json_double(json, point->summary.min);
	json_key(json, "median");
	json_double(json, point->summary.median);
	json_key(json, "mean");
	json_double(json, point->summary.mean);
	json_key(json, "ci95_low");
	json_double(json, point->summary.ci95_low);
	json_key(json, "ci95_high");
	json_double(json, point->summary.ci95_high);
	json_key(json, "count");
	json_uint(json, point->summary.count);
	json_object_end(json);

	json_key(json, "context");
	json_object_begin(json);
	json_key(json, "canary_before_ns");
	json_double(json, point->canary_before_ns);
	json_key(json, "canary_after_ns");
	json_double(json, point->canary_after_ns);
	json_key(json, "core_clock_ghz");
	json_double(json, core_clock_ghz);
	json_key(json, "median_cycles");
	json_double(json, point->summary.median * core_clock_ghz);
	json_key(json, "wall_s");
	json_double(json, point->wall_s);
	json_key(json, "order_index");
	json_uint(json, point->order_index);
	json_object_end(json);
	json_object_end(json);

	return json_write_line(json, fd);
}

static int write_human_header(int fd)
{
	return dprintf(fd, "%5s  %12s  %10s  %21s  %10s  %10s  %8s  %12s  %15s\n", "order",
		       "working_set", "median_ns", "ci95_ns", "min_ns", "mean_ns", "cycles",
		       "huge_granted", "canary_ns b/a") < 0 ? -1 : 0;
}

static int write_human_row(int fd, const struct chase_point *point, double core_clock_ghz)
{
	char size[32], huge[32], interval[48], canary[32];

	size_format(point->working_set_bytes, size, sizeof(size));
	size_format(point->huge_bytes_granted, huge, sizeof(huge));
	snprintf(interval, sizeof(interval), "[%.4g, %.4g]", point->summary.ci95_low,
		 point->summary.ci95_high);
	snprintf(canary, sizeof(canary), "%.3g/%.3g", point->canary_before_ns,
		 point->canary_after_ns);
	return dprintf(fd, "%5zu  %12s  %10.4g  %21s  %10.4g  %10.4g  %8.3g  %12s  %15s\n",
		       point->order_index, size, point->summary.median, interval,
		       point->summary.min, point->summary.mean,
		       point->summary.median * core_clock_ghz, huge, canary) < 0 ? -1 : 0;
}

/* Measuring order: as given with --ordered, else a Fisher-Yates shuffle
 * driven by the seed, so drift over the run does not masquerade as a trend
 * over size. */
static size_t *plan_order(const struct chase_options *options)
{
	size_t *order = malloc(options->size_count * sizeof(*order));
	struct rng rng;

	if (!order)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	for (size_t i = 0; i < options->size_count; i++)
		order[i] = i;
	if (options->ordered)
		return order;
	rng_seed(&rng, options->seed, ORDER_RNG_STREAM);
	for (size_t i = options->size_count - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(&rng, i + 1);
		size_t swap = order[i];

		order[i] = order[j];
		order[j] = swap;
	}
	return order;
}

static int chase_run(int argc, char **argv)
{
	struct chase_options options;
	struct chase_point point;
	struct canary canary;
	struct json json;
	double core_clock_ghz;
	size_t *order;
	int fd;

	parse_options(argc, argv, &options);
	validate_options(&options);
	if (!options.have_seed)
		options.seed = seed_from_clock();
	fd = open_output(&options);

	if (options.cpu >= 0 && affinity_pin(options.cpu) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin to CPU %d: %s", options.cpu,
			 strerror(errno));
	order = plan_order(&options);
	point.samples = malloc(options.samples * sizeof(*point.samples));
	if (!point.samples || canary_init(&canary, options.seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up");
	core_clock_ghz = coreclock_measure_ghz();
	fprintf(stderr, "chase: %zu points, %s order, seed %" PRIu64
			", core clock %.3f GHz, canary %.3g ns\n",
		options.size_count, options.ordered ? "given" : "random", options.seed,
		core_clock_ghz, canary_read_ns(&canary));

	json_init(&json);
	if (options.human && write_human_header(fd) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot write output: %s", strerror(errno));
	for (size_t i = 0; i < options.size_count; i++) {
		char size[32];
		int failed;

		point.working_set_bytes = options.sizes[order[i]];
		point.order_index = i;
		measure_point(&options, &canary, &point);
		failed = options.human ? write_human_row(fd, &point, core_clock_ghz)
				       : write_json(fd, &json, &options, &point, core_clock_ghz);
		if (failed)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot write output: %s",
				 strerror(errno));
		size_format(point.working_set_bytes, size, sizeof(size));
		fprintf(stderr, "chase: %zu/%zu working_set=%s median=%.3g ns (%.3g cycles)\n",
			i + 1, options.size_count, size, point.summary.median,
			point.summary.median * core_clock_ghz);
	}

	json_free(&json);
	canary_free(&canary);
	free(point.samples);
	free(order);
	free(options.sizes);
	if (fd != STDOUT_FILENO && close(fd) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot close --output: %s", strerror(errno));
	return CLI_EXIT_OK;
}

const struct kernel_spec chase_kernel = {
	.name = "chase",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "idle load-to-use latency: random pointer chase over working-set sizes",
	.run = chase_run,
	.print_help = chase_help,
};
