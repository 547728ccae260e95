/* core_clock: the core clock under load, per instruction class and number
 * of active cores, and its ramp from idle.
 *
 * A point is one class (include/peak.h: scalar_int, or a multiply-add of one
 * vector width) on k active cores: k pinned threads, one per core, each
 * running the class's ruler (dependent integer adds, one cycle each, with
 * the class's multiply-adds beside them) through common windows. A thread's
 * clock in a window is its adds / the window's ns; the window's sample is
 * the median over the threads. That is the turbo curve (the clock falls as
 * cores wake) and, across classes at the same k, the wide-vector offset.
 *
 * A ramp point sleeps (--idle-ms: the core drops to its idle clock), then
 * runs the scalar ruler on the first CPU for --ramp-ms in --slice-us slices:
 * the slices' clocks in time order are its samples (the warehouse derives
 * the time to the top clock from them). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "canary.h"
#include "cli.h"
#include "counters.h"
#include "json.h"
#include "kopts.h"
#include "peak.h"
#include "record.h"
#include "registry.h"
#include "sampler.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "core_clock"
#define DEFAULT_EXPERIMENT "core_clock"
#define DEFAULT_IDLE_MS 200.0
#define DEFAULT_RAMP_MS 100.0
#define DEFAULT_SLICE_US 200.0
#define DEFAULT_RAMP_REPEATS 1
#define WARMUP_WINDOWS 1

/* Short letters for the long-only options: kopts routes values above 0xff to the shared options. */
enum { OPTION_IDLE_MS = 'I', OPTION_RAMP_MS = 'D', OPTION_SLICE_US = 'S' };

struct clock_options {
	struct kopts common;
	const char *classes;
	int *cpus;
	size_t cpu_count;
	uint64_t *active;
	size_t active_count;
	uint64_t ramp_repeats;
	double idle_ms, ramp_ms, slice_us;
};

static void clock_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, clock_help);
	fprintf(out,
		"Usage: %s core_clock [--classes LIST] [--cpus LIST] [--active LIST] [OPTIONS]\n"
		"\n"
		"The core clock under load: for each instruction class and each number k of\n"
		"active cores, k pinned threads (one per core) run the class's ruler through\n"
		"common windows: 64 dependent integer adds (one cycle each) per round, with\n"
		"32 of the class's multiply-adds beside them on independent chains, so the\n"
		"vector units are busy (a wide-vector clock offset applies) while the adds\n"
		"set the pace: clock = adds / ns. And the ramp: after --idle-ms asleep, the\n"
		"scalar ruler's clock in --slice-us slices over --ramp-ms.\n"
		"\n"
		"Options:\n"
		"  -k, --classes LIST      instruction classes, or auto (default): scalar_int\n"
		"                          and each vector width this CPU runs (x86: fma128,\n"
		"                          fma256, fma512, or sse2 without FMA; AArch64: neon,\n"
		"                          sve; elsewhere the scalar floating-point class)\n"
		"  -C, --cpus LIST         CPUs the threads take, in order (default: one per\n"
		"                          physical core, ascending, from sysfs); the kernels\n"
		"                          role passes them fastest core kind first\n"
		"  -a, --active LIST       active-core counts, each 1..the CPUs listed (default\n"
		"                          1, 2, 4, ... and all)\n"
		"  -R, --ramp-repeats N    ramp points (default %d; 0: none)\n"
		"  -I, --idle-ms MS        sleep before a ramp (default %g)\n"
		"  -D, --ramp-ms MS        length of a ramp (default %g)\n"
		"  -S, --slice-us US       one ramp sample (default %g)\n"
		"  --cpu is refused: the threads take --cpus\n"
		"\n",
		CLI_PROGRAM, DEFAULT_RAMP_REPEATS, DEFAULT_IDLE_MS, DEFAULT_RAMP_MS, DEFAULT_SLICE_US);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"--samples is the number of measured windows (after one warm-up window),\n"
		"--min-sample-ms their length. Points (class x active count, and the ramps)\n"
		"run in a seeded random order. Records: metric core_clock, unit GHz, params\n"
		"{class, operation, vector_bits, active_cores, cpus, window_ms,\n"
		"warmup_windows, adds_per_round, multiply_adds_per_round}, samples = each\n"
		"window's median over the threads; context {per_thread [{cpu, median_ghz,\n"
		"min_ghz, max_ghz, min_cpu_share}], slowest_thread_ghz, fastest_thread_ghz,\n"
		"min_cpu_share, the L1 canary\n"
		"on the first CPU before and after and l1_canary_cycles (canary ns x clock),\n"
		"precision and counters}. Ramp: metric clock_ramp, unit GHz, params {class\n"
		"scalar_int, cpu, idle_ms, ramp_ms, slice_us, repeat}, samples = the slices\n"
		"in time order, context {slices, min_cpu_share, slice_end_us (each slice's\n"
		"end after the ruler started), slice_cpu_shares, counters}. A clock is adds\n"
		"per ns of the thread's own CPU time (time others took from it is not the\n"
		"core's); min_cpu_share is the least share of a window a thread ran.\n"
		"\n"
		"Example:\n"
		"  %s core_clock --classes scalar_int,fma256 --active 1,2 --samples 5\n",
		CLI_PROGRAM);
}

static double milliseconds(const struct kopts *opts, const char *option, const char *text, double max)
{
	double value;

	if (cli_parse_double(text, 0.001, max, &value) != 0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel, "%s '%s' is not a number from 0.001 to %g", option, text, max);
	return value;
}

static void clock_option(void *context, int option, const char *arg)
{
	struct clock_options *options = context;

	switch (option) {
	case 'k':
		options->classes = arg;
		break;
	case 'C':
		free(options->cpus);
		options->cpu_count = topology_cpus_option(KERNEL, "--cpus", arg, &options->cpus);
		break;
	case 'a':
		free(options->active);
		options->active_count = kopts_u64_list(&options->common, "--active", arg, 1, 65536, 0, &options->active);
		break;
	case 'R':
		options->ramp_repeats = kopts_u64(&options->common, "--ramp-repeats", arg, 0, 100);
		break;
	case OPTION_IDLE_MS:
		options->idle_ms = milliseconds(&options->common, "--idle-ms", arg, 10000);
		break;
	case OPTION_RAMP_MS:
		options->ramp_ms = milliseconds(&options->common, "--ramp-ms", arg, 10000);
		break;
	case OPTION_SLICE_US:
		options->slice_us = milliseconds(&options->common, "--slice-us", arg, 1e6);
		break;
	}
}

static void put_cpus(struct json *json, const int *cpus, size_t count)
{
	json_key(json, "cpus");
	json_array_begin(json);
	for (size_t i = 0; i < count; i++)
		json_int(json, cpus[i]);
	json_array_end(json);
}

/* One point of the grid: the team, then its record. */
static void measure_load(const struct clock_options *options, const struct peak_class *peak_class, size_t active,
			 struct sampler_sweep *sweep, struct record *record, struct canary *canary, double **series,
			 double **shares, double *window_ghz, double *scratch)
{
	const struct kopts *opts = &options->common;
	struct json *json = &record->json;
	struct peak_team_request request = {
		.peak_class = peak_class, .precision = PEAK_FP64, .cpus = options->cpus, .threads = active,
		.window_ns = opts->min_sample_ms * 1e6, .warmup_windows = WARMUP_WINDOWS,
		.bodies = {PEAK_BODY_RULER}, .body_count = 1, .samples = series, .shares = shares,
	};
	uint64_t started = timer_now_ns();
	double canary_before, canary_after, slowest = 0.0, fastest = 0.0, least_share = 1.0;
	struct sampler_run run;
	char error[256], label[96];

	canary_before = canary_read_ns(canary);
	sampler_begin(&run, opts, sweep->attempt, series, active);
	request.run = &run;
	if (peak_team_run(&request, error, sizeof(error)) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s on %zu active cores: %s", peak_class->name, active, error);
	canary_after = canary_read_ns(canary);
	for (size_t w = 0; w < run.count; w++) {
		for (size_t t = 0; t < active; t++)
			scratch[t] = series[t][w];
		window_ghz[w] = peak_median(scratch, active);
	}

	record_begin(record, "core_clock", "GHz");
	json_key(json, "class");
	json_string(json, peak_class->name);
	json_key(json, "operation");
	json_string(json, peak_class->operation);
	json_key(json, "vector_bits");
	json_uint(json, peak_class->vector_bits());
	json_key(json, "active_cores");
	json_uint(json, active);
	put_cpus(json, options->cpus, active);
	json_key(json, "window_ms");
	json_double(json, opts->min_sample_ms);
	json_key(json, "warmup_windows");
	json_uint(json, WARMUP_WINDOWS);
	json_key(json, "adds_per_round");
	json_uint(json, PEAK_RULER_ADDS);
	json_key(json, "multiply_adds_per_round");
	json_uint(json, peak_class->throughput ? PEAK_RULER_FMAS : 0);
	json_key(json, "seed");
	json_uint(json, opts->seed);
	record_samples(record, window_ghz, run.count);
	record_precision(record, &run, window_ghz);
	json_key(json, "per_thread");
	json_array_begin(json);
	for (size_t t = 0; t < active; t++) {
		double median, low = series[t][0], high = series[t][0], share = shares[t][0];

		for (size_t w = 0; w < run.count; w++) {
			scratch[w] = series[t][w];
			low = series[t][w] < low ? series[t][w] : low;
			high = series[t][w] > high ? series[t][w] : high;
			share = shares[t][w] < share ? shares[t][w] : share;
		}
		least_share = share < least_share ? share : least_share;
		median = peak_median(scratch, run.count);
		slowest = t == 0 || median < slowest ? median : slowest;
		fastest = t == 0 || median > fastest ? median : fastest;
		json_object_begin(json);
		json_key(json, "cpu");
		json_int(json, options->cpus[t]);
		json_key(json, "median_ghz");
		json_double(json, median);
		json_key(json, "min_ghz");
		json_double(json, low);
		json_key(json, "max_ghz");
		json_double(json, high);
		json_key(json, "min_cpu_share");
		json_double(json, share);
		json_object_end(json);
	}
	json_array_end(json);
	json_key(json, "slowest_thread_ghz");
	json_double(json, slowest);
	json_key(json, "fastest_thread_ghz");
	json_double(json, fastest);
	json_key(json, "min_cpu_share");
	json_double(json, least_share);
	json_key(json, "l1_canary_cycles");
	json_double(json, (canary_before < canary_after ? canary_before : canary_after) * record->summary.median);
	record_clock_context(record, canary_before, canary_after, record->summary.median,
			     (double)(timer_now_ns() - started) / 1e9, sweep->position);
	snprintf(label, sizeof(label), "%s on %zu active core%s", peak_class->name, active, active == 1 ? "" : "s");
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s: median %.3f GHz, threads %.3f..%.3f GHz, %zu windows, %s\n", KERNEL,
		sweep->position + 1, sweep->length, label, record->summary.median, slowest, fastest, run.count,
		sampler_stop_name(run.stop));
	sampler_sweep_done(sweep, &run, label);
}

static void measure_ramp(const struct clock_options *options, uint64_t repeat, const struct sampler_sweep *sweep,
			 struct record *record, double *slices_ghz, double *slice_shares, double *slice_ends_us,
			 size_t capacity)
{
	const struct kopts *opts = &options->common;
	struct json *json = &record->json;
	uint64_t started = timer_now_ns();
	struct counters counters;
	double least_share = 1.0;
	size_t slices;
	char label[64];

	counters_open(&counters);
	counters_start(&counters);
	slices = peak_ramp(options->idle_ms * 1e6, options->ramp_ms * 1e6, options->slice_us * 1e3, slices_ghz,
			   slice_shares, slice_ends_us, capacity);
	counters_stop(&counters);
	for (size_t i = 0; i < slices; i++)
		least_share = slice_shares[i] < least_share ? slice_shares[i] : least_share;

	record_begin(record, "clock_ramp", "GHz");
	json_key(json, "class");
	json_string(json, peak_class_scalar_int.name);
	json_key(json, "cpu");
	json_int(json, options->cpus[0]);
	json_key(json, "idle_ms");
	json_double(json, options->idle_ms);
	json_key(json, "ramp_ms");
	json_double(json, options->ramp_ms);
	json_key(json, "slice_us");
	json_double(json, options->slice_us);
	json_key(json, "repeat");
	json_uint(json, repeat);
	json_key(json, "seed");
	json_uint(json, opts->seed);
	record_samples(record, slices_ghz, slices);
	json_key(json, "slices");
	json_uint(json, slices);
	json_key(json, "min_cpu_share");
	json_double(json, least_share);
	json_key(json, "slice_end_us");
	json_array_begin(json);
	for (size_t i = 0; i < slices; i++)
		json_double(json, slice_ends_us[i]);
	json_array_end(json);
	json_key(json, "slice_cpu_shares");
	json_array_begin(json);
	for (size_t i = 0; i < slices; i++)
		json_double(json, slice_shares[i]);
	json_array_end(json);
	counters_record(json, &counters);
	json_key(json, "wall_s");
	json_double(json, (double)(timer_now_ns() - started) / 1e9);
	json_key(json, "order_index");
	json_uint(json, sweep->position);
	snprintf(label, sizeof(label), "ramp %" PRIu64 " on cpu %d", repeat, options->cpus[0]);
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s: %zu slices, first %.3f GHz, median %.3f GHz\n", KERNEL, sweep->position + 1,
		sweep->length, label, slices, slices_ghz[0], record->summary.median);
}

static int clock_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"classes", required_argument, NULL, 'k'},
		{"cpus", required_argument, NULL, 'C'},
		{"active", required_argument, NULL, 'a'},
		{"ramp-repeats", required_argument, NULL, 'R'},
		{"idle-ms", required_argument, NULL, OPTION_IDLE_MS},
		{"ramp-ms", required_argument, NULL, OPTION_RAMP_MS},
		{"slice-us", required_argument, NULL, OPTION_SLICE_US},
		{NULL, 0, NULL, 0},
	};
	struct clock_options options = {
		.classes = "auto", .ramp_repeats = DEFAULT_RAMP_REPEATS, .idle_ms = DEFAULT_IDLE_MS,
		.ramp_ms = DEFAULT_RAMP_MS, .slice_us = DEFAULT_SLICE_US,
	};
	const struct kopts *opts = &options.common;
	const struct peak_class *classes[PEAK_MAX_CLASSES];
	size_t class_count, grid, capacity, ramp_capacity;
	double **series, **shares, *window_ghz, *scratch, *slices_ghz, *slice_shares, *slice_ends_us;
	struct sampler_sweep sweep;
	struct record record;
	struct canary canary;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, clock_help);
	kopts_parse(&options.common, argc, argv, "k:C:a:R:I:D:S:", long_options, clock_option, &options);
	if (opts->cpu >= 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpu does not apply to core_clock: its threads take --cpus");
	if (options.slice_us * 1e-3 > options.ramp_ms)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--slice-us %g is longer than --ramp-ms %g", options.slice_us,
			 options.ramp_ms);
	class_count = peak_classes_parse(KERNEL, "--classes", options.classes, PEAK_USE_CLOCK, classes);
	if (!options.cpus)
		options.cpu_count = peak_default_cpus(KERNEL, &options.cpus);
	if (options.cpu_count == 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "no CPU to run on");
	if (!options.active) {
		options.active = malloc(64 * sizeof(*options.active));
		if (!options.active)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		for (uint64_t k = 1; k < options.cpu_count; k *= 2)
			options.active[options.active_count++] = k;
		options.active[options.active_count++] = options.cpu_count;
	}
	for (size_t i = 0; i < options.active_count; i++) {
		if (options.active[i] > options.cpu_count)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--active item %" PRIu64 " is above the %zu CPUs the threads may take",
				 options.active[i], options.cpu_count);
		for (size_t j = 0; j < i; j++)
			if (options.active[j] == options.active[i])
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--active names %" PRIu64 " twice", options.active[i]);
	}

	grid = class_count * options.active_count;
	capacity = sampler_capacity(opts);
	ramp_capacity = (size_t)(options.ramp_ms * 1e3 / options.slice_us) + 2;
	series = calloc(options.cpu_count, sizeof(*series));
	shares = calloc(options.cpu_count, sizeof(*shares));
	slice_shares = calloc(ramp_capacity, sizeof(*slice_shares));
	slice_ends_us = calloc(ramp_capacity, sizeof(*slice_ends_us));
	window_ghz = calloc(capacity, sizeof(*window_ghz));
	scratch = calloc(capacity > options.cpu_count ? capacity : options.cpu_count, sizeof(*scratch));
	slices_ghz = calloc(ramp_capacity, sizeof(*slices_ghz));
	if (!series || !shares || !window_ghz || !scratch || !slices_ghz || !slice_shares || !slice_ends_us)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	for (size_t t = 0; t < options.cpu_count; t++)
		if (!(series[t] = calloc(capacity, sizeof(double))) || !(shares[t] = calloc(capacity, sizeof(double))))
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	/* The main thread waits on the first CPU: the canary and the ramps run there. */
	if (affinity_pin(options.cpus[0]) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin to CPU %d", options.cpus[0]);
	if (canary_init(&canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up the canary");
	record_open(&record, opts);
	fprintf(stderr, "%s: %zu classes x %zu active counts + %" PRIu64 " ramps on %zu CPUs, %s order, seed %" PRIu64 "\n",
		KERNEL, class_count, options.active_count, options.ramp_repeats, options.cpu_count,
		opts->ordered ? "given" : "random", opts->seed);
	sampler_sweep_open(&sweep, opts, grid + options.ramp_repeats);
	while (sampler_sweep_next(&sweep)) {
		if (sweep.point < grid)
			measure_load(&options, classes[sweep.point / options.active_count],
				     (size_t)options.active[sweep.point % options.active_count], &sweep, &record, &canary,
				     series, shares, window_ghz, scratch);
		else
			measure_ramp(&options, sweep.point - grid, &sweep, &record, slices_ghz, slice_shares, slice_ends_us,
				     ramp_capacity);
	}
	sampler_sweep_close(&sweep);
	record_close(&record);
	canary_free(&canary);
	for (size_t t = 0; t < options.cpu_count; t++) {
		free(series[t]);
		free(shares[t]);
	}
	free(series);
	free(shares);
	free(slice_shares);
	free(slice_ends_us);
	free(window_ghz);
	free(scratch);
	free(slices_ghz);
	free(options.cpus);
	free(options.active);
	return CLI_EXIT_OK;
}

const struct kernel_spec core_clock_kernel = {
	.name = "core_clock",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "core clock under load per instruction class and active cores, and its ramp from idle",
	.run = clock_run,
	.print_help = clock_help,
};
