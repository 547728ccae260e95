/* affinity: what pinning does to threads that share a machine. N threads of
 * a compute body and of a memory body run side by side, once left to the
 * scheduler (unpinned) and once pinned one per physical core; every thread's
 * throughput per window is a sample, and each thread also reports the CPU
 * changes it saw (migrations observed) and its own context switches. The
 * spread across threads and across repeats shows what placement costs. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "team.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "affinity"
#define DEFAULT_EXPERIMENT "affinity"
#define DEFAULT_BUFFER_BYTES ((uint64_t)64 << 20)
#define DEFAULT_REPEATS 3
#define MAX_THREADS 1024
#define WARMUP_WINDOWS 1

enum placement { PLACEMENT_UNPINNED, PLACEMENT_PINNED, PLACEMENT_COUNT };

static const char *const placement_names[PLACEMENT_COUNT] = {"unpinned", "pinned"};

struct affinity_options {
	struct kopts common;
	int placements[PLACEMENT_COUNT]; /* chosen, in the order given */
	size_t placement_count;
	enum work_kind workloads[WORK_KIND_COUNT];
	size_t workload_count;
	uint64_t threads;
	int have_threads;
	uint64_t repeats;
	uint64_t buffer_bytes;
	int *cpus;        /* --cpus: the pinned placement's CPUs, in order; NULL: one per core */
	size_t cpu_count;
};

/* One CPU per physical core among the CPUs this process may run on, or the
 * CPUs --cpus gives. */
struct core_plan {
	int *cpus;
	size_t count;
	const char *rule;
	size_t allowed;
	int given;        /* the CPUs came from --cpus */
};

static void affinity_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, affinity_help);
	fprintf(out,
		"Usage: %s affinity [--placements LIST] [--workloads LIST] [--threads N] [--cpus LIST] [OPTIONS]\n"
		"\n"
		"CPU affinity: N threads run one body side by side, left to the scheduler\n"
		"(unpinned) or pinned one per physical core (pinned; cores from sysfs,\n"
		"topology/core_id and physical_package_id). Each thread runs its body in\n"
		"~0.1 ms chunks through common windows of --min-sample-ms (a barrier starts\n"
		"each window; one warm-up window is not kept); its throughput in a window\n"
		"is one sample. Between chunks it reads sched_getcpu(): a change is a\n"
		"migration observed (a lower bound). getrusage(RUSAGE_THREAD) around each\n"
		"window counts the thread's voluntary and involuntary context switches.\n"
		"\n"
		"Bodies:\n"
		"  compute   8 independent 64-bit multiply-add chains (throughput bound on the\n"
		"            multipliers, no memory traffic); Gop/s = 1e9 multiply-adds/s\n"
		"  memory    sequential reads of a private buffer per thread (bandwidth\n"
		"            bound); GB/s = 1e9 bytes read/s\n"
		"\n"
		"Options:\n"
		"  -P, --placements LIST   unpinned,pinned (default both)\n"
		"  -w, --workloads LIST    compute,memory (default both)\n"
		"  -T, --threads N         threads per run, 1..%d (default: the number of\n"
		"                          physical cores this process may run on; pinned\n"
		"                          needs N <= cores)\n"
		"  -R, --repeats N         runs of every (placement, workload), each with\n"
		"                          fresh threads and buffers (default %d)\n"
		"  -B, --buffer-bytes SIZE memory body: each thread's buffer (default 64m;\n"
		"                          threads x SIZE must fit --max-bytes)\n"
		"  -C, --cpus LIST         pinned: thread t on the t-th CPU of LIST, in the\n"
		"                          order given (0-3,8; each CPU once, each one this\n"
		"                          process may run on). The kernels role passes one\n"
		"                          CPU per core, fastest core kind first, on a host\n"
		"                          with more than one kind. Default: one CPU per\n"
		"                          physical core, ascending\n"
		"  --cpu is refused: this kernel places its own threads\n"
		"\n",
		CLI_PROGRAM, MAX_THREADS, DEFAULT_REPEATS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"--samples is the number of measured windows, --min-sample-ms their length.\n"
		"Every (placement, workload, repeat) is a point, in a seeded random order;\n"
		"each point writes one JSON object per thread:\n"
		"  metric \"throughput\", unit \"Gop/s\" (compute) or \"GB/s\" (memory),\n"
		"  params {placement, workload, threads, thread, cpu (pinned CPU, null when\n"
		"          unpinned), repeat, window_ms, buffer_bytes (memory; null for\n"
		"          compute), operation, core_rule, seed},\n"
		"  samples [the thread's throughput in each window], summary {...},\n"
		"  context {chunk_rounds, cpu_checks, migrations_observed, cpus_seen,\n"
		"           first_cpu, last_cpu, voluntary_context_switches,\n"
		"           involuntary_context_switches, huge_bytes_granted (memory),\n"
		"           wall_s (the point), order_index}.\n"
		"\n"
		"Examples:\n"
		"  %s affinity --threads 4 --repeats 3\n"
		"  %s affinity --placements pinned --workloads memory --buffer-bytes 256m\n",
		CLI_PROGRAM, CLI_PROGRAM);
}

static void parse_placements(struct affinity_options *options, const char *text)
{
	char *copy = strdup(text), *item, *rest;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing --placements");
	options->placement_count = 0;
	for (item = copy; item; item = rest) {
		int found = -1;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		for (int i = 0; i < PLACEMENT_COUNT; i++)
			if (strcmp(item, placement_names[i]) == 0)
				found = i;
		if (found < 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--placements item '%s' is not unpinned or pinned", item);
		for (size_t i = 0; i < options->placement_count; i++)
			if (options->placements[i] == found)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--placements names '%s' twice", item);
		options->placements[options->placement_count++] = found;
	}
	free(copy);
}

static void affinity_option(void *context, int option, const char *arg)
{
	struct affinity_options *options = context;

	switch (option) {
	case 'P':
		parse_placements(options, arg);
		break;
	case 'w':
		options->workload_count = work_kind_list_parse(KERNEL, "--workloads", arg, options->workloads);
		break;
	case 'T':
		options->threads = kopts_u64(&options->common, "--threads", arg, 1, MAX_THREADS);
		options->have_threads = 1;
		break;
	case 'R':
		options->repeats = kopts_u64(&options->common, "--repeats", arg, 1, 1000);
		break;
	case 'B':
		options->buffer_bytes = kopts_size(&options->common, "--buffer-bytes", arg);
		break;
	case 'C':
		free(options->cpus);
		options->cpu_count = topology_cpus_option(KERNEL, "--cpus", arg, &options->cpus);
		break;
	}
}

/* The first allowed CPU of every (package, core_id): the head of the
 * physical-core-first CPU order; where sysfs does not say, each CPU counts
 * as its own core and the rule says so. --cpus replaces the order. */
static void plan_cores(struct core_plan *plan, struct affinity_options *options)
{
	memset(plan, 0, sizeof(*plan));
	plan->allowed = topology_cpu_order(KERNEL, &plan->cpus, &plan->count, &plan->rule);
	if (options->cpus) {
		/* the order given replaces the one from sysfs; its CPUs were checked */
		free(plan->cpus);
		plan->cpus = options->cpus;
		plan->count = options->cpu_count;
		plan->rule = "the CPUs given (--cpus), in their order";
		plan->given = 1;
		options->cpus = NULL;
	}
}

static void write_thread(struct record *record, const struct affinity_options *options, int placement,
			 enum work_kind kind, uint64_t repeat, size_t thread, int cpu,
			 const struct core_plan *plan, const struct team_member *member,
			 const struct sampler_run *run, double wall_s, size_t order_index)
{
	struct json *json = &record->json;
	char label[96];

	record_begin(record, "throughput", work_kind_unit(kind));
	json_key(json, "placement");
	json_string(json, placement_names[placement]);
	json_key(json, "workload");
	json_string(json, work_kind_name(kind));
	json_key(json, "threads");
	json_uint(json, options->threads);
	json_key(json, "thread");
	json_uint(json, thread);
	json_key(json, "cpu");
	if (cpu < 0)
		json_null(json);
	else
		json_int(json, cpu);
	json_key(json, "repeat");
	json_uint(json, repeat);
	json_key(json, "core_rule");
	json_string(json, plan->rule);
	snprintf(label, sizeof(label), "%s %s repeat %" PRIu64 " thread %zu%s", placement_names[placement],
		 work_kind_name(kind), repeat, thread, cpu < 0 ? "" : " (pinned)");
	team_member_record(record, member, kind, &options->common, run, options->buffer_bytes, wall_s, order_index,
			   label);
}

static int affinity_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"placements", required_argument, NULL, 'P'},
		{"workloads", required_argument, NULL, 'w'},
		{"threads", required_argument, NULL, 'T'},
		{"repeats", required_argument, NULL, 'R'},
		{"buffer-bytes", required_argument, NULL, 'B'},
		{"cpus", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	struct affinity_options options = {
		.placements = {PLACEMENT_UNPINNED, PLACEMENT_PINNED},
		.placement_count = PLACEMENT_COUNT,
		.workloads = {WORK_COMPUTE, WORK_MEMORY},
		.workload_count = WORK_KIND_COUNT,
		.repeats = DEFAULT_REPEATS,
		.buffer_bytes = DEFAULT_BUFFER_BYTES,
	};
	const struct kopts *opts = &options.common;
	struct team_member *members;
	struct core_plan plan;
	struct record record;
	struct sampler_sweep sweep;
	struct sampler_run run;
	double **series;
	size_t points;
	int uses_memory = 0, uses_pinned = 0;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, affinity_help);
	kopts_parse(&options.common, argc, argv, "P:w:T:R:B:C:", long_options, affinity_option, &options);
	if (opts->cpu >= 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--cpu does not apply to affinity, which places its own threads; choose --placements");
	if (options.buffer_bytes < 4096 || options.buffer_bytes % 64)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--buffer-bytes %" PRIu64 " must be a multiple of 64 bytes and at least 4k",
			 options.buffer_bytes);
	plan_cores(&plan, &options);
	if (!options.have_threads)
		options.threads = plan.count;
	for (size_t i = 0; i < options.placement_count; i++)
		uses_pinned |= options.placements[i] == PLACEMENT_PINNED;
	for (size_t i = 0; i < options.workload_count; i++)
		uses_memory |= options.workloads[i] == WORK_MEMORY;
	if (uses_pinned && options.threads > plan.count && plan.given)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--threads %" PRIu64 " but --cpus gives only %zu CPUs, and pinned puts one thread on each; list more CPUs or use --threads %zu",
			 options.threads, plan.count, plan.count);
	if (uses_pinned && options.threads > plan.count)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--threads %" PRIu64 " but this process may run on only %zu physical cores, and pinned puts one thread per core; use --threads %zu or --placements unpinned",
			 options.threads, plan.count, plan.count);
	if (uses_memory) {
		char what[64];

		snprintf(what, sizeof(what), "%" PRIu64 " memory buffers (--threads x --buffer-bytes)",
			 options.threads);
		if (options.buffer_bytes > UINT64_MAX / options.threads)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--threads x --buffer-bytes overflows");
		kopts_check_bytes(opts, options.threads * options.buffer_bytes, what);
	}

	points = options.placement_count * options.workload_count * options.repeats;
	members = calloc(options.threads, sizeof(*members));
	series = calloc(options.threads, sizeof(*series));
	if (!members || !series)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	for (size_t t = 0; t < options.threads; t++) {
		members[t].samples = series[t] = calloc(sampler_capacity(opts), sizeof(double));
		if (!members[t].samples)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	}
	record_open(&record, opts);
	fprintf(stderr, "%s: %" PRIu64 " threads, %zu points (placement x workload x repeat), %zu physical cores of %zu allowed CPUs, seed %" PRIu64 "\n",
		KERNEL, options.threads, points, plan.count, plan.allowed, opts->seed);

	sampler_sweep_open(&sweep, opts, points);
	while (sampler_sweep_next(&sweep)) {
		size_t index = sweep.point;
		int placement = options.placements[index % options.placement_count];
		enum work_kind kind = options.workloads[(index / options.placement_count) % options.workload_count];
		uint64_t repeat = index / (options.placement_count * options.workload_count);
		struct team_request request = {
			.kind = kind,
			.threads = options.threads,
			.cpus = placement == PLACEMENT_PINNED ? plan.cpus : NULL,
			.run = &run,
			.warmup_windows = WARMUP_WINDOWS,
			.window_ns = opts->min_sample_ms * 1e6,
			.buffer_bytes = options.buffer_bytes,
			.seed = opts->seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (index + 1)),
		};
		uint64_t started = timer_now_ns();
		char error[256], label[64];
		double wall_s, total = 0.0;
		long involuntary = 0;
		uint64_t migrations = 0;

		sampler_begin(&run, opts, sweep.attempt, series, options.threads);
		if (team_run(&request, members, error, sizeof(error)) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s %s: %s", placement_names[placement], work_kind_name(kind),
				 error);
		wall_s = (double)(timer_now_ns() - started) / 1e9;
		for (size_t t = 0; t < options.threads; t++) {
			write_thread(&record, &options, placement, kind, repeat, t,
				     placement == PLACEMENT_PINNED ? plan.cpus[t] : -1, &plan, &members[t], &run, wall_s,
				     sweep.position);
			total += record.summary.median;
			migrations += members[t].cpu_changes;
			involuntary += members[t].involuntary_switches;
		}
		fprintf(stderr, "%s: %zu/%zu %s %s repeat %" PRIu64 ": %.4g %s in total (sum of thread medians), %" PRIu64 " migrations observed, %ld involuntary switches, %zu windows, %s\n",
			KERNEL, sweep.position + 1, sweep.length, placement_names[placement], work_kind_name(kind),
			repeat, total, work_kind_unit(kind), migrations, involuntary, run.count,
			sampler_stop_name(run.stop));
		snprintf(label, sizeof(label), "%s %s repeat %" PRIu64, placement_names[placement], work_kind_name(kind),
			 repeat);
		sampler_sweep_done(&sweep, &run, label);
	}

	sampler_sweep_close(&sweep);
	record_close(&record);
	for (size_t t = 0; t < options.threads; t++)
		free(members[t].samples);
	free(members);
	free(series);
	free(plan.cpus);
	return CLI_EXIT_OK;
}

const struct kernel_spec affinity_kernel = {
	.name = "affinity",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "CPU affinity: N compute / memory threads unpinned vs pinned one per core",
	.run = affinity_run,
	.print_help = affinity_help,
};
