/* peak_flops: peak floating-point throughput per instruction class (vector
 * width) and precision, on one core and on all, with the clock it ran at.
 *
 * A point is one class, one precision and a thread count: pinned threads,
 * one per core, each running the class's throughput loop (PEAK_CHAINS
 * independent multiply-add chains, include/peak.h) through common windows,
 * alternating with a window of the class's ruler (the clock under the same
 * vector load). A window's sample is the threads' GFLOP/s together; the
 * point's clock is the median ruler window's median over the threads, and
 * FLOP/cycle/core = GFLOP/s / threads / GHz, so a shortfall reads as the
 * clock or as the core.
 *
 * Before the team, the first CPU times one dependent chain of the class
 * (its multiply-add latency, in ns and, by the ruler run right after it, in
 * cycles): latency x multiply-adds per cycle is the number of chains that
 * hides it, recorded beside PEAK_CHAINS. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "peak.h"
#include "record.h"
#include "registry.h"
#include "sampler.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "peak_flops"
#define DEFAULT_EXPERIMENT "peak_flops"
#define WARMUP_WINDOWS 1
#define PROBE_NS 1e6   /* one latency or clock probe */
#define PROBE_TRIES 3  /* the fastest of three: interruptions only slow a probe */

struct flops_options {
	struct kopts common;
	const char *classes;
	int precisions[PEAK_PRECISION_COUNT];
	size_t precision_count;
	int *cpus;
	size_t cpu_count;
	uint64_t *threads;
	size_t thread_count;
};

static void flops_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, flops_help);
	fprintf(out,
		"Usage: %s peak_flops [--classes LIST] [--precisions LIST] [--threads LIST] [OPTIONS]\n"
		"\n"
		"Peak floating-point throughput per instruction class and precision: pinned\n"
		"threads (one per core) each run %d independent multiply-add chains of the\n"
		"class (registers only), alternating with windows of the class's clock ruler\n"
		"(64 dependent integer adds beside 32 of its multiply-adds): GFLOP/s, the clock\n"
		"under that load, and FLOP/cycle/core. A multiply-add is 2 FLOP per lane.\n"
		"\n"
		"Options:\n"
		"  -k, --classes LIST      floating-point classes, or auto (default): all this\n"
		"                          CPU runs (x86: scalar_fma, fma128, fma256, fma512,\n"
		"                          or sse2 without FMA; AArch64: scalar_fma, neon, sve;\n"
		"                          elsewhere the scalar class)\n"
		"  -P, --precisions LIST   fp64,fp32 (default both)\n"
		"  -C, --cpus LIST         CPUs the threads take, in order (default: one per\n"
		"                          physical core, ascending, from sysfs)\n"
		"  -T, --threads LIST      thread counts, each 1..the CPUs listed (default 1 and\n"
		"                          all)\n"
		"  --cpu is refused: the threads take --cpus\n"
		"\n",
		CLI_PROGRAM, PEAK_CHAINS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"--samples is the number of measured window pairs (after one warm-up pair),\n"
		"--min-sample-ms the length of each window. Points (class x precision x\n"
		"threads) run in a seeded random order. Records: metric peak_flops, unit\n"
		"GFLOP/s, params {class, operation, fused, vector_bits, precision, lanes,\n"
		"threads, cpus, chains, flop_per_round, window_ms, warmup_windows, seed},\n"
		"samples = the threads' GFLOP/s together per window; context {clock_ghz,\n"
		"flop_per_cycle_per_core, per_thread [{cpu, gflop_s, clock_ghz,\n"
		"flop_per_cycle, min_cpu_share}], min_cpu_share, median_cpu_share (of the\n"
		"throughput windows), fma_latency_ns,\n"
		"fma_latency_cycles, multiply_adds_per_cycle, chains_needed,\n"
		"chains_cover_latency, precision, counters, wall_s, order_index}. Rates are\n"
		"per ns of each thread's own CPU time (time others took from it is not the\n"
		"core's); min_cpu_share is the least share of a window a thread ran.\n"
		"\n"
		"Example:\n"
		"  %s peak_flops --classes fma256 --precisions fp64 --threads 1,2\n",
		CLI_PROGRAM);
}

static void flops_option(void *context, int option, const char *arg)
{
	struct flops_options *options = context;
	char *copy, *item, *rest;

	switch (option) {
	case 'k':
		options->classes = arg;
		break;
	case 'P':
		options->precision_count = 0;
		if (!(copy = strdup(arg)))
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing --precisions");
		for (item = copy; item; item = rest) {
			int precision = -1;

			rest = strchr(item, ',');
			if (rest)
				*rest++ = '\0';
			for (int p = 0; p < PEAK_PRECISION_COUNT; p++)
				if (strcmp(item, peak_precision_name((enum peak_precision)p)) == 0)
					precision = p;
			if (precision < 0)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--precisions item '%s' is not fp64 or fp32", item);
			for (size_t i = 0; i < options->precision_count; i++)
				if (options->precisions[i] == precision)
					cli_fail(CLI_EXIT_USAGE, KERNEL, "--precisions names '%s' twice", item);
			options->precisions[options->precision_count++] = precision;
		}
		free(copy);
		break;
	case 'C':
		free(options->cpus);
		options->cpu_count = topology_cpus_option(KERNEL, "--cpus", arg, &options->cpus);
		break;
	case 'T':
		free(options->threads);
		options->thread_count = kopts_u64_list(&options->common, "--threads", arg, 1, 65536, 0, &options->threads);
		break;
	}
}

/* The fastest of PROBE_TRIES runs of body over ~PROBE_NS: ns of the thread's
 * CPU time per round. */
static double probe_ns_per_round(const struct peak_class *peak_class, enum peak_precision precision, int latency)
{
	uint64_t rounds = 64;
	double best = 0.0;

	for (;;) {
		uint64_t started = peak_thread_cpu_ns(), elapsed;

		if (latency)
			peak_class->latency(precision, rounds);
		else
			peak_class->ruler(rounds);
		elapsed = peak_thread_cpu_ns() - started;
		if ((double)elapsed >= PROBE_NS / 4 || rounds >= (UINT64_C(1) << 40))
			break;
		rounds *= 2;
	}
	rounds = (uint64_t)((double)rounds * 4) + 1;
	for (int t = 0; t < PROBE_TRIES; t++) {
		uint64_t started = peak_thread_cpu_ns();
		double ns;

		if (latency)
			peak_class->latency(precision, rounds);
		else
			peak_class->ruler(rounds);
		ns = (double)(peak_thread_cpu_ns() - started) / (double)rounds;
		best = t == 0 || ns < best ? ns : best;
	}
	return best;
}

struct point {
	const struct peak_class *peak_class;
	enum peak_precision precision;
	size_t threads;
};

static void measure(const struct flops_options *options, const struct point *point, struct sampler_sweep *sweep,
		    struct record *record, double **series, double **shares, double **throughput_series,
		    double *window_total, double *scratch)
{
	const struct kopts *opts = &options->common;
	const struct peak_class *peak_class = point->peak_class;
	struct json *json = &record->json;
	size_t threads = point->threads;
	struct peak_team_request request = {
		.peak_class = peak_class, .precision = point->precision, .cpus = options->cpus, .threads = threads,
		.window_ns = opts->min_sample_ms * 1e6, .warmup_windows = WARMUP_WINDOWS,
		.bodies = {PEAK_BODY_THROUGHPUT, PEAK_BODY_RULER}, .body_count = 2, .samples = series,
		.shares = shares,
	};
	uint64_t started = timer_now_ns();
	unsigned lanes = peak_lanes(peak_class, point->precision);
	double latency_ns, latency_cycles, probe_ghz, clock_ghz, per_cycle, fma_per_cycle, needed, least_share = 1.0;
	struct sampler_run run;
	char error[256], label[96];

	/* The latency probe on the first CPU, the others idle; its clock right after. */
	latency_ns = probe_ns_per_round(peak_class, point->precision, 1) / PEAK_LATENCY_STEPS;
	probe_ghz = PEAK_RULER_ADDS / probe_ns_per_round(peak_class, point->precision, 0);
	latency_cycles = latency_ns * probe_ghz;

	for (size_t t = 0; t < threads; t++)
		throughput_series[t] = series[2 * t];
	sampler_begin(&run, opts, sweep->attempt, throughput_series, threads);
	request.run = &run;
	if (peak_team_run(&request, error, sizeof(error)) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s %s on %zu threads: %s", peak_class->name,
			 peak_precision_name(point->precision), threads, error);
	for (size_t w = 0; w < run.count; w++) {
		window_total[w] = 0.0;
		for (size_t t = 0; t < threads; t++)
			window_total[w] += series[2 * t][w];
	}
	/* The clock: per window the median over the threads, then the median window. */
	{
		double *per_window = malloc(run.count * sizeof(double));

		if (!per_window)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		for (size_t w = 0; w < run.count; w++) {
			for (size_t t = 0; t < threads; t++)
				scratch[t] = series[2 * t + 1][w];
			per_window[w] = peak_median(scratch, threads);
		}
		clock_ghz = peak_median(per_window, run.count);
		free(per_window);
	}

	record_begin(record, "peak_flops", "GFLOP/s");
	json_key(json, "class");
	json_string(json, peak_class->name);
	json_key(json, "operation");
	json_string(json, peak_class->operation);
	json_key(json, "fused");
	json_bool(json, peak_class->fused);
	json_key(json, "vector_bits");
	json_uint(json, peak_class->vector_bits());
	json_key(json, "precision");
	json_string(json, peak_precision_name(point->precision));
	json_key(json, "lanes");
	json_uint(json, lanes);
	json_key(json, "threads");
	json_uint(json, threads);
	json_key(json, "cpus");
	json_array_begin(json);
	for (size_t t = 0; t < threads; t++)
		json_int(json, options->cpus[t]);
	json_array_end(json);
	json_key(json, "chains");
	json_uint(json, PEAK_CHAINS);
	json_key(json, "flop_per_round");
	json_double(json, peak_flops_per_round(peak_class, point->precision));
	json_key(json, "window_ms");
	json_double(json, opts->min_sample_ms);
	json_key(json, "warmup_windows");
	json_uint(json, WARMUP_WINDOWS);
	json_key(json, "seed");
	json_uint(json, opts->seed);
	record_samples(record, window_total, run.count);
	record_precision(record, &run, window_total);
	per_cycle = clock_ghz > 0 ? record->summary.median / (double)threads / clock_ghz : NAN;
	json_key(json, "clock_ghz");
	json_double(json, clock_ghz);
	json_key(json, "flop_per_cycle_per_core");
	json_double(json, per_cycle);
	json_key(json, "per_thread");
	json_array_begin(json);
	for (size_t t = 0; t < threads; t++) {
		double gflop_s, ghz, share = 1.0;

		for (size_t w = 0; w < run.count; w++)
			for (size_t b = 0; b < 2; b++)
				share = shares[2 * t + b][w] < share ? shares[2 * t + b][w] : share;
		least_share = share < least_share ? share : least_share;
		memcpy(scratch, series[2 * t], run.count * sizeof(double));
		gflop_s = peak_median(scratch, run.count);
		memcpy(scratch, series[2 * t + 1], run.count * sizeof(double));
		ghz = peak_median(scratch, run.count);
		json_object_begin(json);
		json_key(json, "cpu");
		json_int(json, options->cpus[t]);
		json_key(json, "gflop_s");
		json_double(json, gflop_s);
		json_key(json, "clock_ghz");
		json_double(json, ghz);
		json_key(json, "flop_per_cycle");
		json_double(json, ghz > 0 ? gflop_s / ghz : NAN);
		json_key(json, "min_cpu_share");
		json_double(json, share);
		json_object_end(json);
	}
	json_array_end(json);
	json_key(json, "min_cpu_share");
	json_double(json, least_share);
	/* The median share of a throughput window a thread ran: x GFLOP/s, the rate a wall clock would see. */
	{
		double *all = malloc(run.count * threads * sizeof(double));

		if (!all)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		for (size_t t = 0; t < threads; t++)
			memcpy(all + t * run.count, shares[2 * t], run.count * sizeof(double));
		json_key(json, "median_cpu_share");
		json_double(json, peak_median(all, run.count * threads));
		free(all);
	}
	/* Multiply-adds (vector instructions; pairs for a class without FMA) per
	 * cycle per core, and the chains that hide their latency at that rate. */
	fma_per_cycle = per_cycle / (2.0 * lanes);
	needed = latency_cycles * fma_per_cycle;
	json_key(json, "fma_latency_ns");
	json_double(json, latency_ns);
	json_key(json, "fma_latency_cycles");
	json_double(json, latency_cycles);
	json_key(json, "multiply_adds_per_cycle");
	json_double(json, fma_per_cycle);
	json_key(json, "chains_needed");
	json_double(json, needed);
	json_key(json, "chains_cover_latency");
	if (isfinite(needed))
		json_bool(json, (double)PEAK_CHAINS >= needed);
	else
		json_null(json);
	json_key(json, "wall_s");
	json_double(json, (double)(timer_now_ns() - started) / 1e9);
	json_key(json, "order_index");
	json_uint(json, sweep->position);
	snprintf(label, sizeof(label), "%s %s %zu thread%s", peak_class->name, peak_precision_name(point->precision),
		 threads, threads == 1 ? "" : "s");
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s: %.4g GFLOP/s at %.3f GHz = %.3g FLOP/cycle/core; latency %.3g cycles, %.3g chains needed, %zu windows, %s\n",
		KERNEL, sweep->position + 1, sweep->length, label, record->summary.median, clock_ghz, per_cycle,
		latency_cycles, needed, run.count, sampler_stop_name(run.stop));
	sampler_sweep_done(sweep, &run, label);
}

static int flops_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"classes", required_argument, NULL, 'k'},
		{"precisions", required_argument, NULL, 'P'},
		{"cpus", required_argument, NULL, 'C'},
		{"threads", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct flops_options options = {.classes = "auto", .precisions = {PEAK_FP64, PEAK_FP32}, .precision_count = 2};
	const struct kopts *opts = &options.common;
	const struct peak_class *classes[PEAK_MAX_CLASSES];
	size_t class_count, points, capacity;
	double **series, **shares, **throughput_series, *window_total, *scratch;
	struct sampler_sweep sweep;
	struct record record;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, flops_help);
	kopts_parse(&options.common, argc, argv, "k:P:C:T:", long_options, flops_option, &options);
	if (opts->cpu >= 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpu does not apply to peak_flops: its threads take --cpus");
	class_count = peak_classes_parse(KERNEL, "--classes", options.classes, PEAK_USE_FLOPS, classes);
	if (class_count == 0)
		cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "this build has no floating-point class this CPU runs");
	if (!options.cpus)
		options.cpu_count = peak_default_cpus(KERNEL, &options.cpus);
	if (options.cpu_count == 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "no CPU to run on");
	if (!options.threads) {
		options.threads = malloc(2 * sizeof(*options.threads));
		if (!options.threads)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		options.threads[options.thread_count++] = 1;
		if (options.cpu_count > 1)
			options.threads[options.thread_count++] = options.cpu_count;
	}
	for (size_t i = 0; i < options.thread_count; i++) {
		if (options.threads[i] > options.cpu_count)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--threads item %" PRIu64 " is above the %zu CPUs the threads may take",
				 options.threads[i], options.cpu_count);
		for (size_t j = 0; j < i; j++)
			if (options.threads[j] == options.threads[i])
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--threads names %" PRIu64 " twice", options.threads[i]);
	}

	points = class_count * options.precision_count * options.thread_count;
	capacity = sampler_capacity(opts);
	series = calloc(2 * options.cpu_count, sizeof(*series));
	shares = calloc(2 * options.cpu_count, sizeof(*shares));
	throughput_series = calloc(options.cpu_count, sizeof(*throughput_series));
	window_total = calloc(capacity, sizeof(*window_total));
	scratch = calloc(capacity > options.cpu_count ? capacity : options.cpu_count, sizeof(*scratch));
	if (!series || !shares || !throughput_series || !window_total || !scratch)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	for (size_t i = 0; i < 2 * options.cpu_count; i++)
		if (!(series[i] = calloc(capacity, sizeof(double))) || !(shares[i] = calloc(capacity, sizeof(double))))
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	/* The latency probes run on the first CPU, where thread 0 runs. */
	if (affinity_pin(options.cpus[0]) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin to CPU %d", options.cpus[0]);
	record_open(&record, opts);
	fprintf(stderr, "%s: %zu classes x %zu precisions x %zu thread counts on %zu CPUs, %s order, seed %" PRIu64 "\n",
		KERNEL, class_count, options.precision_count, options.thread_count, options.cpu_count,
		opts->ordered ? "given" : "random", opts->seed);
	sampler_sweep_open(&sweep, opts, points);
	while (sampler_sweep_next(&sweep)) {
		size_t index = sweep.point;
		struct point point;

		point.threads = (size_t)options.threads[index % options.thread_count];
		index /= options.thread_count;
		point.precision = (enum peak_precision)options.precisions[index % options.precision_count];
		point.peak_class = classes[index / options.precision_count];
		measure(&options, &point, &sweep, &record, series, shares, throughput_series, window_total, scratch);
	}
	sampler_sweep_close(&sweep);
	record_close(&record);
	for (size_t i = 0; i < 2 * options.cpu_count; i++) {
		free(series[i]);
		free(shares[i]);
	}
	free(series);
	free(shares);
	free(throughput_series);
	free(window_total);
	free(scratch);
	free(options.cpus);
	free(options.threads);
	return CLI_EXIT_OK;
}

const struct kernel_spec peak_flops_kernel = {
	.name = "peak_flops",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "peak FP64/FP32 FLOP/s per vector width, one core and all, with FLOP/cycle/core",
	.run = flops_run,
	.print_help = flops_help,
};
