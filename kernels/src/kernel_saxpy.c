/* saxpy: the cost of cache misses at constant work. y = a*x + y on doubles
 * over two DRAM-sized arrays, for each stride s: every pass updates every
 * element exactly once, in s offset sweeps (for off in 0..s-1: for i = off;
 * i < n; i += s). The arithmetic and the number of updates are the same at
 * every stride; only the order changes, so the time per update grows with
 * the lines each sweep must fetch: at s >= 8 (64 B) every update of a sweep
 * touches a line of its own in both arrays, and the lines of a pass are
 * fetched up to 8 times instead of once.
 *
 * The loop is scalar (vectorisation off for this one function) so the
 * instructions per update do not depend on the stride either. The arrays are
 * initialised before timing; a sample is calibrated whole passes. After the
 * samples every y[i] must equal a * x[i] * passes (exact in doubles): that
 * checks every element was updated exactly once per pass (exit 3 if not).
 * Cache-miss counters come from the role's `perf stat` wrapper, one process
 * per stride. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "canary.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "record.h"
#include "registry.h"
#include "sampler.h"
#include "sizes.h"
#include "timer.h"

#define KERNEL "saxpy"
#define DEFAULT_EXPERIMENT "saxpy"
#define DEFAULT_SIZE ((uint64_t)512 << 20) /* both arrays together */
#define ELEMENT_BYTES 8
#define LINE_BYTES 64
#define SCALE 0.5 /* a: x[i] = 1, so y = 0.5 * passes stays exact */

struct saxpy_options {
	struct kopts common;
	enum page_policy page_policy;
	uint64_t size;     /* both arrays together, bytes */
	uint64_t elements; /* per array; 0: from size */
	int have_size;
	uint64_t *strides;
	size_t stride_count;
};

static const uint64_t default_strides[] = {1, 2, 4, 8, 16, 32, 64, 128};
#define DEFAULT_STRIDE_COUNT (sizeof(default_strides) / sizeof(default_strides[0]))

static void saxpy_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, saxpy_help);
	fprintf(out,
		"Usage: %s saxpy [OPTIONS]\n"
		"\n"
		"Cache-miss impact at constant work: y = a*x + y on doubles over two\n"
		"DRAM-sized arrays, at each stride s: every pass updates every element once,\n"
		"in s offset sweeps (for off in 0..s-1: for i = off; i < n; i += s). Scalar\n"
		"code, so the instructions per update are the same at every stride; the time\n"
		"per update grows with the cache lines the sweeps fetch. Arrays are\n"
		"initialised before timing; one sample is calibrated whole passes. After the\n"
		"samples every y[i] is checked to have been updated exactly once per pass\n"
		"(exit 3 otherwise).\n"
		"\n"
		"Options:\n"
		"  -s, --size SIZE         both arrays together (default 512m: 256m each);\n"
		"                          a multiple of 16 bytes, far beyond the last-level cache\n"
		"  -N, --elements N        elements per array instead of --size (not both)\n"
		"  -S, --strides LIST      strides in elements, each 1..elements (default\n"
		"                          1,2,4,8,16,32,64,128)\n"
		"  -p, --page-policy P     thp (default) or 4k\n"
		"\n",
		CLI_PROGRAM);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records (one per stride, in a seeded random order): metric saxpy, unit ns\n"
		"per update; params stride_elements, stride_bytes, elements, element_bytes,\n"
		"array_bytes (each array), updates_per_pass, passes_per_sample, page_policy,\n"
		"huge_bytes_granted (both arrays), cpu, accesses_per_sample (updates per\n"
		"sample), seed; context line_visits_per_pass (over the offset sweeps, the\n"
		"distinct lines of x and y each sweep touches), effective_gb_s (line visits\n"
		"x 64 B over the median pass time), canary, core clock, wall_s, order_index.\n"
		"\n"
		"Perf counters (cache-references, cache-misses, LLC-load-misses, ...) are not\n"
		"read here: the fleetscope role runs one process per stride (--strides N)\n"
		"inside its `perf stat` wrapper, so each stride gets its own counts.\n"
		"\n"
		"Example:\n"
		"  %s saxpy --size 512m --strides 1,8,64 --cpu 0\n",
		CLI_PROGRAM);
}

static void saxpy_option(void *context, int option, const char *arg)
{
	struct saxpy_options *options = context;

	switch (option) {
	case 's':
		options->size = kopts_size(&options->common, "--size", arg);
		options->have_size = 1;
		break;
	case 'N':
		options->elements = kopts_u64(&options->common, "--elements", arg, 2, UINT64_MAX / 64);
		break;
	case 'S':
		free(options->strides);
		options->stride_count = kopts_u64_list(&options->common, "--strides", arg, 1,
						       UINT64_MAX / 64, 0, &options->strides);
		break;
	case 'p':
		options->page_policy = latency_page_policy_option(&options->common, arg);
		break;
	}
}

struct saxpy_pass {
	double *x, *y;
	uint64_t elements;
	uint64_t stride;
};

/* One pass: s offset sweeps, every element updated once. Scalar on purpose
 * (no vectorisation), so stride 1 runs the same instructions per update as
 * stride 128. */
__attribute__((noinline, optimize("no-tree-vectorize"))) static void
saxpy_pass(const double *restrict x, double *restrict y, uint64_t n, uint64_t s, double a)
{
	for (uint64_t off = 0; off < s; off++)
		for (uint64_t i = off; i < n; i += s)
			y[i] = a * x[i] + y[i];
}

static uint64_t time_passes(void *context, uint64_t rounds)
{
	struct saxpy_pass *pass = context;
	uint64_t started = timer_now_ns();

	for (uint64_t r = 0; r < rounds; r++)
		saxpy_pass(pass->x, pass->y, pass->elements, pass->stride, SCALE);
	/* y is read after timing (the check), so the stores cannot be dropped. */
	__asm__ volatile("" : : "r"(pass->y) : "memory");
	return timer_now_ns() - started;
}

/* Over the s offset sweeps of one pass, the distinct 64-B lines each sweep
 * touches in one array (arrays are line aligned): a new line whenever an
 * element's line differs from the previous element's in the same sweep. */
static uint64_t line_visits_one_array(uint64_t n, uint64_t s)
{
	const uint64_t per_line = LINE_BYTES / ELEMENT_BYTES;
	uint64_t visits = 0;

	if (s >= per_line)
		return n; /* every element of a sweep on a line of its own */
	for (uint64_t off = 0; off < s; off++) {
		uint64_t last = UINT64_MAX;

		for (uint64_t i = off; i < n; i += s)
			if (i / per_line != last) {
				last = i / per_line;
				visits++;
			}
	}
	return visits;
}

static void fill(double *x, double *y, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x[i] = 1.0;
		y[i] = 0.0;
	}
}

/* Every y[i] must be a * 1.0 * passes exactly; returns the first index that
 * is not, or n. */
static uint64_t check(const double *y, uint64_t n, uint64_t passes)
{
	double expected = SCALE * (double)passes;

	for (uint64_t i = 0; i < n; i++)
		if (y[i] != expected)
			return i;
	return n;
}

static void map_array(const struct saxpy_options *options, struct buffer *buffer, uint64_t bytes,
		      const char *name)
{
	char size[32];

	if (buffer_alloc(buffer, bytes, options->page_policy) != 0) {
		size_format(bytes, size, sizeof(size));
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot map %s for array %s: %s; lower --size", size,
			 name, strerror(errno));
	}
}

static uint64_t huge_bytes(const struct buffer *buffer)
{
	uint64_t bytes;

	return buffer_huge_bytes(buffer, &bytes) == 0 ? bytes : 0;
}

static int saxpy_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"size", required_argument, NULL, 's'},
		{"elements", required_argument, NULL, 'N'},
		{"strides", required_argument, NULL, 'S'},
		{"page-policy", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	struct saxpy_options options = {.page_policy = PAGE_POLICY_THP, .size = DEFAULT_SIZE};
	const struct kopts *opts = &options.common;
	struct buffer xb, yb;
	struct canary canary;
	struct record record;
	struct saxpy_pass pass;
	struct sampler_sweep sweep;
	struct sampler_run run;
	uint64_t n, array_bytes, huge, total_passes = 0;
	double core_clock_ghz, *samples;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, saxpy_help);
	kopts_parse(&options.common, argc, argv, "s:N:S:p:", long_options, saxpy_option, &options);
	if (options.have_size && options.elements)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "give --size or --elements, not both");
	if (!options.elements) {
		if (options.size % (2 * ELEMENT_BYTES) || options.size < 4 * ELEMENT_BYTES)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--size %" PRIu64 " must be a multiple of 16 bytes (two arrays of doubles) and at least 32",
				 options.size);
		options.elements = options.size / (2 * ELEMENT_BYTES);
	}
	n = options.elements;
	array_bytes = n * ELEMENT_BYTES;
	if (!options.strides) {
		options.strides = malloc(sizeof(default_strides));
		if (!options.strides)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		memcpy(options.strides, default_strides, sizeof(default_strides));
		options.stride_count = DEFAULT_STRIDE_COUNT;
	}
	for (size_t k = 0; k < options.stride_count; k++)
		if (options.strides[k] > n)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--strides item %" PRIu64 " is above the %" PRIu64 " elements per array; use smaller strides or more elements",
				 options.strides[k], n);
	kopts_check_bytes(opts, 2 * array_bytes, "the two arrays");

	samples = malloc(sampler_capacity(opts) * sizeof(*samples));
	if (!samples || canary_init(&canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up");
	sampler_sweep_open(&sweep, opts, options.stride_count);
	kopts_pin(opts);
	core_clock_ghz = coreclock_measure_ghz();
	map_array(&options, &xb, array_bytes, "x");
	map_array(&options, &yb, array_bytes, "y");
	huge = huge_bytes(&xb) + huge_bytes(&yb);
	if (options.page_policy == PAGE_POLICY_THP && huge < 2 * array_bytes)
		fprintf(stderr, "%s: warning: page policy thp, but only %" PRIu64 " of the %" PRIu64 " bytes of the arrays are on huge pages\n",
			KERNEL, huge, 2 * array_bytes);
	record_open(&record, opts);
	fprintf(stderr, "%s: %zu strides, %s order, %" PRIu64 " elements per array, seed %" PRIu64 ", core clock %.3f GHz\n",
		KERNEL, options.stride_count, opts->ordered ? "given" : "random", n, opts->seed,
		core_clock_ghz);

	pass.x = xb.data;
	pass.y = yb.data;
	pass.elements = n;
	while (sampler_sweep_next(&sweep)) {
		uint64_t started = timer_now_ns(), s = options.strides[sweep.point], rounds, bad;
		uint64_t visits = 2 * line_visits_one_array(n, s);
		double canary_before, canary_after, pass_ns, wall_s;
		char label[64];

		/* Outside the timed region: fresh values, then the canary. */
		fill(pass.x, pass.y, n);
		total_passes = 0;
		pass.stride = s;
		canary_before = canary_read_ns(&canary);
		rounds = sampler_calibrate_from(time_passes, &pass, opts->min_sample_ms * 1e6, 1);
		sampler_begin(&run, opts, sweep.attempt, &samples, 1);
		sampler_collect(time_passes, &pass, rounds, (double)(rounds * n), &run);
		canary_after = canary_read_ns(&canary);
		/* Calibration ran passes too; count them all from y itself. */
		total_passes = (uint64_t)(pass.y[0] / SCALE);
		bad = check(pass.y, n, total_passes);
		if (bad != n || total_passes < rounds * run.count)
			cli_fail(CLI_EXIT_SELF_CHECK, KERNEL,
				 "self-check failed at stride %" PRIu64 ": y[%" PRIu64 "] = %.17g, expected %.17g (every element updated once per pass); report this",
				 s, bad == n ? 0 : bad, bad == n ? pass.y[0] : pass.y[bad],
				 SCALE * (double)total_passes);
		wall_s = (double)(timer_now_ns() - started) / 1e9;

		record_begin(&record, "saxpy", "ns");
		json_key(&record.json, "stride_elements");
		json_uint(&record.json, s);
		json_key(&record.json, "stride_bytes");
		json_uint(&record.json, s * ELEMENT_BYTES);
		json_key(&record.json, "elements");
		json_uint(&record.json, n);
		json_key(&record.json, "element_bytes");
		json_uint(&record.json, ELEMENT_BYTES);
		json_key(&record.json, "array_bytes");
		json_uint(&record.json, array_bytes);
		json_key(&record.json, "updates_per_pass");
		json_uint(&record.json, n);
		json_key(&record.json, "passes_per_sample");
		json_uint(&record.json, rounds);
		json_key(&record.json, "page_policy");
		json_string(&record.json, page_policy_name(options.page_policy));
		json_key(&record.json, "huge_bytes_granted");
		json_uint(&record.json, huge);
		record_run_params(&record, rounds * n);
		record_samples(&record, samples, run.count);
		record_precision(&record, &run, samples);
		pass_ns = record.summary.median * (double)n;
		json_key(&record.json, "line_visits_per_pass");
		json_uint(&record.json, visits);
		json_key(&record.json, "effective_gb_s");
		json_double(&record.json, (double)visits * LINE_BYTES / pass_ns);
		record_clock_context(&record, canary_before, canary_after, core_clock_ghz, wall_s, sweep.position);
		snprintf(label, sizeof(label), "stride=%" PRIu64 " elements", s);
		record_end(&record, label);
		fprintf(stderr, "%s: %zu/%zu stride=%" PRIu64 " median=%.4g ns/update, %.3g GB/s of line visits, %zu samples, %s\n",
			KERNEL, sweep.position + 1, sweep.length, s, record.summary.median,
			(double)visits * LINE_BYTES / pass_ns, run.count, sampler_stop_name(run.stop));
		sampler_sweep_done(&sweep, &run, label);
	}
	sampler_sweep_close(&sweep);
	record_close(&record);
	buffer_free(&xb);
	buffer_free(&yb);
	canary_free(&canary);
	free(samples);
	free(options.strides);
	return CLI_EXIT_OK;
}

const struct kernel_spec saxpy_kernel = {
	.name = "saxpy",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "SAXPY y = a*x + y at strides 1..128 elements, constant work: ns per update",
	.run = saxpy_run,
	.print_help = saxpy_help,
};
