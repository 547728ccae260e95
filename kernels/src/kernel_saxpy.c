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
 * per stride. With --threads T the arrays are cut into T contiguous slices
 * (whole lines), each swept by its own thread pinned to its own CPU, all
 * started together each sample: the time per update is of all threads
 * together, so T threads show how much of the miss cost more cores hide. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
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
#include "topology.h"

#define KERNEL "saxpy"
#define MAX_THREADS 1024
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
	uint64_t threads;   /* --threads: 1 = the caller alone (pinned by --cpu) */
	int *cpus;          /* --cpus, or the first threads of the host's CPU order */
	size_t cpu_count;
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
		"  -T, --threads N         threads, 1..%d (default 1): the arrays are cut into N\n"
		"                          slices of whole lines, each swept by its own thread\n"
		"                          on its own CPU, all started together; ns per update\n"
		"                          is of all threads together\n"
		"  -C, --cpus LIST         the CPUs of the threads, in order (default: one per\n"
		"                          physical core first, then SMT siblings); with\n"
		"                          --threads above 1, instead of --cpu\n"
		"\n",
		CLI_PROGRAM, MAX_THREADS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records (one per stride, in a seeded random order): metric saxpy, unit ns\n"
		"per update; params stride_elements, stride_bytes, elements, element_bytes,\n"
		"array_bytes (each array), updates_per_pass, passes_per_sample, page_policy,\n"
		"huge_bytes_granted (both arrays), threads, cpus, cpu, accesses_per_sample (updates per\n"
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
	case 'T':
		options->threads = kopts_u64(&options->common, "--threads", arg, 1, MAX_THREADS);
		break;
	case 'C':
		free(options->cpus);
		options->cpu_count = topology_cpus_option(KERNEL, "--cpus", arg, &options->cpus);
		break;
	}
}

struct saxpy_team;

struct saxpy_pass {
	double *x, *y;
	uint64_t elements;
	uint64_t stride;
	struct saxpy_team *team; /* NULL: one thread */
};

/* The threads of --threads: thread 0 is the caller; the others wait at the
 * start barrier, sweep their slice `rounds` times, and meet at the end one. */
struct saxpy_team {
	size_t count;
	pthread_t *threads;
	pthread_barrier_t start, end;
	struct saxpy_pass *pass;
	uint64_t rounds;
	int quit;
	const int *cpus;
};

struct saxpy_member {
	struct saxpy_team *team;
	size_t index;
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

/* Thread `index` of `count`'s slice of n elements: whole 64-byte lines. */
static void slice(uint64_t n, size_t count, size_t index, uint64_t *first, uint64_t *length)
{
	const uint64_t per_line = LINE_BYTES / ELEMENT_BYTES;
	uint64_t lines = (n + per_line - 1) / per_line;
	uint64_t begin = lines * index / count * per_line, end = lines * (index + 1) / count * per_line;

	*first = begin < n ? begin : n;
	*length = (end < n ? end : n) - *first;
}

static void sweep_slice(const struct saxpy_pass *pass, size_t count, size_t index, uint64_t rounds)
{
	uint64_t first, length;

	slice(pass->elements, count, index, &first, &length);
	for (uint64_t r = 0; r < rounds && length; r++)
		saxpy_pass(pass->x + first, pass->y + first, length, pass->stride < length ? pass->stride : length,
			   SCALE);
}

static void *team_member(void *context)
{
	struct saxpy_member *member = context;
	struct saxpy_team *team = member->team;

	if (affinity_pin(team->cpus[member->index]) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin thread %zu to CPU %d: %s", member->index,
			 team->cpus[member->index], strerror(errno));
	for (;;) {
		pthread_barrier_wait(&team->start);
		if (team->quit)
			break;
		sweep_slice(team->pass, team->count, member->index, team->rounds);
		pthread_barrier_wait(&team->end);
	}
	free(member);
	return NULL;
}

static void team_start(struct saxpy_team *team, struct saxpy_pass *pass, const int *cpus, size_t count)
{
	memset(team, 0, sizeof(*team));
	team->count = count;
	team->pass = pass;
	team->cpus = cpus;
	team->threads = calloc(count, sizeof(*team->threads));
	if (!team->threads || pthread_barrier_init(&team->start, NULL, (unsigned)count) != 0 ||
	    pthread_barrier_init(&team->end, NULL, (unsigned)count) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot set up %zu threads", count);
	if (affinity_pin(cpus[0]) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin thread 0 to CPU %d: %s", cpus[0], strerror(errno));
	for (size_t i = 1; i < count; i++) {
		struct saxpy_member *member = malloc(sizeof(*member));

		if (!member)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory starting thread %zu", i);
		member->team = team;
		member->index = i;
		if (pthread_create(&team->threads[i], NULL, team_member, member) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot start thread %zu of %zu", i, count);
	}
}

static void team_stop(struct saxpy_team *team)
{
	team->quit = 1;
	pthread_barrier_wait(&team->start);
	for (size_t i = 1; i < team->count; i++)
		pthread_join(team->threads[i], NULL);
	pthread_barrier_destroy(&team->start);
	pthread_barrier_destroy(&team->end);
	free(team->threads);
}

static uint64_t time_passes(void *context, uint64_t rounds)
{
	struct saxpy_pass *pass = context;
	/* one thread alone: its own CPU time (timer.h); a team's pass: the wall clock */
	uint64_t (*clock)(void) = pass->team ? timer_now_ns : timer_thread_ns;
	uint64_t started = clock();

	if (pass->team) {
		pass->team->rounds = rounds;
		pthread_barrier_wait(&pass->team->start);
		sweep_slice(pass, pass->team->count, 0, rounds);
		pthread_barrier_wait(&pass->team->end);
	} else {
		for (uint64_t r = 0; r < rounds; r++)
			saxpy_pass(pass->x, pass->y, pass->elements, pass->stride, SCALE);
	}
	/* y is read after timing (the check), so the stores cannot be dropped. */
	__asm__ volatile("" : : "r"(pass->y) : "memory");
	return clock() - started;
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
		{"threads", required_argument, NULL, 'T'},
		{"cpus", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	struct saxpy_options options = {.page_policy = PAGE_POLICY_THP, .size = DEFAULT_SIZE, .threads = 1};
	struct saxpy_team team;
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
	kopts_parse(&options.common, argc, argv, "s:N:S:p:T:C:", long_options, saxpy_option, &options);
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
	if (options.cpus && options.threads == 1)
		options.threads = options.cpu_count;
	if (options.threads > 1) {
		if (opts->cpu >= 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpu pins one thread; with --threads %" PRIu64 " give --cpus LIST",
				 options.threads);
		if (!options.cpus) {
			size_t cores;

			options.cpu_count = topology_cpu_order(KERNEL, &options.cpus, &cores, NULL);
		}
		if (options.cpu_count < options.threads)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--threads %" PRIu64 " needs as many CPUs; %zu %s", options.threads,
				 options.cpu_count, options.cpus ? "are given or allowed" : "are allowed");
		if (n / (LINE_BYTES / ELEMENT_BYTES) < options.threads)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--threads %" PRIu64 " is more than the arrays' %" PRIu64 " lines",
				 options.threads, n / (LINE_BYTES / ELEMENT_BYTES));
		options.cpu_count = (size_t)options.threads;
	}

	samples = malloc(sampler_capacity(opts) * sizeof(*samples));
	if (!samples || canary_init(&canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up");
	sampler_sweep_open(&sweep, opts, options.stride_count);
	if (options.threads == 1)
		kopts_pin(opts);
	else if (affinity_pin(options.cpus[0]) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin to CPU %d: %s", options.cpus[0], strerror(errno));
	core_clock_ghz = coreclock_measure_ghz();
	map_array(&options, &xb, array_bytes, "x");
	map_array(&options, &yb, array_bytes, "y");
	huge = huge_bytes(&xb) + huge_bytes(&yb);
	if (options.page_policy == PAGE_POLICY_THP && huge < 2 * array_bytes)
		fprintf(stderr, "%s: warning: page policy thp, but only %" PRIu64 " of the %" PRIu64 " bytes of the arrays are on huge pages\n",
			KERNEL, huge, 2 * array_bytes);
	record_open(&record, opts);
	if (options.threads > 1) {
		record.cpus = options.cpus;
		record.cpu_count = options.cpu_count;
	}
	fprintf(stderr, "%s: %zu strides, %s order, %" PRIu64 " elements per array, seed %" PRIu64 ", core clock %.3f GHz\n",
		KERNEL, options.stride_count, opts->ordered ? "given" : "random", n, opts->seed,
		core_clock_ghz);

	pass.x = xb.data;
	pass.y = yb.data;
	pass.elements = n;
	pass.team = NULL;
	if (options.threads > 1) {
		team_start(&team, &pass, options.cpus, options.cpu_count);
		pass.team = &team;
	}
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
		json_key(&record.json, "threads");
		json_uint(&record.json, options.threads);
		json_key(&record.json, "cpus");
		if (options.threads > 1) {
			json_array_begin(&record.json);
			for (size_t i = 0; i < options.cpu_count; i++)
				json_int(&record.json, options.cpus[i]);
			json_array_end(&record.json);
		} else {
			json_null(&record.json);
		}
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
	if (pass.team)
		team_stop(&team);
	sampler_sweep_close(&sweep);
	record_close(&record);
	free(options.cpus);
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
