/* smt: what a hardware thread costs its sibling. A compute body and a memory
 * body run on one CPU alone, on two SMT siblings of one core, and on two
 * CPUs of different cores; per-thread throughput in each placement gives the
 * speedup of two threads over one, with and without a shared core. The CPUs
 * come from sysfs topology (thread_siblings_list, core_id,
 * physical_package_id; $FLEETSCOPE_SYSFS_ROOT replaces the root): where this
 * process may use no pair of siblings, nothing is measured and the reason is
 * said (exit 4, or the plan with --plan). */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "team.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "smt"
#define DEFAULT_EXPERIMENT "smt"
#define DEFAULT_BUFFER_BYTES ((uint64_t)64 << 20)
#define DEFAULT_REPEATS 3
#define WARMUP_WINDOWS 1
#define DEFAULT_CPU_ROOT "/sys/devices/system/cpu"

enum placement { PLACEMENT_ALONE, PLACEMENT_SIBLINGS, PLACEMENT_CORES, PLACEMENT_COUNT };

static const char *const placement_names[PLACEMENT_COUNT] = {"alone", "siblings", "cores"};

struct smt_options {
	struct kopts common;
	enum work_kind workloads[WORK_KIND_COUNT];
	size_t workload_count;
	uint64_t repeats;
	uint64_t buffer_bytes;
	int plan_only;
	int *cpus;        /* --cpus: the order the plan takes CPUs in; NULL: ascending */
	size_t cpu_count;
};

struct smt_plan {
	int runnable;
	char reason[512];
	char note[256];   /* what a runnable plan leaves out (no second core), "" if nothing */
	int cpu, sibling_cpu, other_core_cpu;
	size_t allowed, listed, with_siblings;
	int ordered;      /* the CPUs were taken in the --cpus order */
	char smt_control[32]; /* ROOT/smt/control, "" where absent */
	const char *root;
};

static void smt_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, smt_help);
	fprintf(out,
		"Usage: %s smt [--workloads LIST] [--repeats N] [--cpus LIST] [OPTIONS]\n"
		"       %s smt --plan\n"
		"\n"
		"SMT interference: each body runs on one CPU alone, on two SMT siblings of\n"
		"one core, and on two CPUs of different cores (threads pinned; bodies and\n"
		"windows as in 'affinity': compute = 8 multiply-add chains in Gop/s, memory =\n"
		"sequential reads of a private buffer in GB/s). Speedup of a placement = its\n"
		"total throughput / the throughput alone (the warehouse view smt_interference).\n"
		"\n"
		"CPUs from sysfs ($FLEETSCOPE_SYSFS_ROOT, default %s):\n"
		"the first CPU this process may run on that has an allowed sibling in its\n"
		"topology/thread_siblings_list; the sibling; and a CPU of another core\n"
		"(another core_id, same package where there is one; where there is none,\n"
		"the two-core placement is left out and the plan's note says so). Without a\n"
		"pair of siblings nothing is measured: the reason goes to stderr and the\n"
		"exit status is 4.\n"
		"\n"
		"Options:\n"
		"  -w, --workloads LIST    compute,memory (default both)\n"
		"  -R, --repeats N         runs of every (placement, workload) (default %d)\n"
		"  -B, --buffer-bytes SIZE memory body: each thread's buffer (default 64m)\n"
		"  -C, --cpus LIST         the CPUs the plan may use, in the order it takes\n"
		"                          them (each once, each one this process may run\n"
		"                          on): the first with a listed sibling, then the\n"
		"                          first listed CPU of another core. The kernels role\n"
		"                          passes the CPUs fastest core kind first on a host\n"
		"                          with more than one kind. Default: every allowed\n"
		"                          CPU, ascending\n"
		"  -L, --plan              print the placement as one JSON object and exit\n"
		"                          (runnable, reason, cpu, sibling_cpu,\n"
		"                          other_core_cpu, note, allowed_cpus, cpus_listed,\n"
		"                          cpus_with_siblings, smt_control, sysfs_root,\n"
		"                          cpu_order: ascending or given);\n"
		"                          nothing is measured\n"
		"  --cpu is refused: this kernel places its own threads\n"
		"\n",
		CLI_PROGRAM, CLI_PROGRAM, DEFAULT_CPU_ROOT, DEFAULT_REPEATS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"--samples is the number of measured windows, --min-sample-ms their length.\n"
		"Every (placement, workload, repeat) is a point in a seeded random order;\n"
		"each writes one JSON object per thread: metric \"throughput\", unit \"Gop/s\"\n"
		"or \"GB/s\", params {placement (alone|siblings|cores), workload, threads,\n"
		"thread, cpu, cpus (the placement's), sibling_cpu, other_core_cpu, repeat,\n"
		"window_ms, buffer_bytes, operation, seed}, samples, summary, context as in\n"
		"'affinity' (migrations_observed, context switches, wall_s, order_index).\n"
		"\n"
		"Examples:\n"
		"  %s smt --plan\n"
		"  %s smt --repeats 5 --samples 11 --min-sample-ms 100\n",
		CLI_PROGRAM, CLI_PROGRAM);
}

static void smt_option(void *context, int option, const char *arg)
{
	struct smt_options *options = context;

	switch (option) {
	case 'w':
		options->workload_count = work_kind_list_parse(KERNEL, "--workloads", arg, options->workloads);
		break;
	case 'R':
		options->repeats = kopts_u64(&options->common, "--repeats", arg, 1, 1000);
		break;
	case 'B':
		options->buffer_bytes = kopts_size(&options->common, "--buffer-bytes", arg);
		break;
	case 'L':
		options->plan_only = 1;
		break;
	case 'C':
		free(options->cpus);
		options->cpu_count = topology_cpus_option(KERNEL, "--cpus", arg, &options->cpus);
		break;
	}
}

static int in_siblings(const struct topology_cpu *cpu, int other)
{
	for (size_t i = 0; i < cpu->sibling_count; i++)
		if (cpu->siblings[i] == other)
			return 1;
	return 0;
}

static void read_smt_control(struct smt_plan *plan)
{
	char path[4096];
	FILE *file;

	plan->smt_control[0] = '\0';
	snprintf(path, sizeof(path), "%s/smt/control", plan->root);
	file = fopen(path, "r");
	if (!file)
		return;
	if (fgets(plan->smt_control, sizeof(plan->smt_control), file))
		plan->smt_control[strcspn(plan->smt_control, "\n")] = '\0';
	fclose(file);
}

/* Chooses the CPUs, taking them in the order of order[count] (NULL: every
 * allowed CPU, ascending), or says why there are none; never guesses a
 * sibling sysfs does not list. */
static void make_plan(struct smt_plan *plan, const int *order, size_t count)
{
	struct topology_cpu *topology = calloc(CPU_SETSIZE, sizeof(*topology));
	const char *root = getenv("FLEETSCOPE_SYSFS_ROOT");
	int *cpus = malloc(CPU_SETSIZE * sizeof(*cpus));
	int sibling_not_allowed = -1, lonely_a = -1, lonely_b = -1;
	cpu_set_t allowed;
	size_t n = 0;

	memset(plan, 0, sizeof(*plan));
	plan->cpu = plan->sibling_cpu = plan->other_core_cpu = -1;
	plan->root = root && *root ? root : DEFAULT_CPU_ROOT;
	read_smt_control(plan);
	if (!topology || !cpus)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot read this process's CPU affinity: %s", strerror(errno));
	plan->ordered = order != NULL;
	if (order) { /* only the listed CPUs (each one checked to be allowed) */
		CPU_ZERO(&allowed);
		for (size_t i = 0; i < count; i++)
			CPU_SET(order[i], &allowed);
	}
	for (size_t i = 0; i < (order ? count : (size_t)CPU_SETSIZE); i++) {
		int cpu = order ? order[i] : (int)i;

		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (topology_read(cpu, &topology[n]) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory reading the CPU topology");
		plan->listed += topology[n].siblings != NULL;
		plan->with_siblings += topology[n].sibling_count >= 2;
		cpus[n++] = cpu;
	}
	plan->allowed = n;
	for (size_t i = 0; i < n && !plan->runnable; i++) {
		const struct topology_cpu *a = &topology[i];

		for (size_t s = 0; s < a->sibling_count && !plan->runnable; s++) {
			int b = a->siblings[s], c = -1;

			if (b == a->cpu)
				continue;
			if (b < 0 || b >= CPU_SETSIZE || !CPU_ISSET(b, &allowed)) {
				if (sibling_not_allowed < 0)
					sibling_not_allowed = a->cpu;
				continue;
			}
			/* Another core: not a sibling of a, not the same core; the same
			 * package first, so the comparison differs only in the core. */
			for (int pass = 0; pass < 2 && c < 0; pass++)
				for (size_t j = 0; j < n && c < 0; j++) {
					const struct topology_cpu *other = &topology[j];

					if (other->cpu == a->cpu || in_siblings(a, other->cpu) ||
					    topology_same_core(a, other) == 1)
						continue;
					if (pass == 0 && topology_same_package(a, other) != 1)
						continue;
					c = other->cpu;
				}
			if (c < 0) {
				if (lonely_a < 0)
					lonely_a = a->cpu, lonely_b = b;
				continue;
			}
			plan->runnable = 1;
			plan->cpu = a->cpu;
			plan->sibling_cpu = b;
			plan->other_core_cpu = c;
		}
	}
	if (!plan->runnable && lonely_a >= 0) {
		/* Siblings but no other core: siblings vs alone still says what
		 * SMT gives (a 2-vCPU cloud guest is often one core, two threads). */
		plan->runnable = 1;
		plan->cpu = lonely_a;
		plan->sibling_cpu = lonely_b;
		snprintf(plan->note, sizeof(plan->note),
			 "CPU %d and its SMT sibling %d are the only core this process may run on: the two-core placement is left out",
			 lonely_a, lonely_b);
	}
	if (plan->runnable)
		plan->reason[0] = '\0';
	else if (plan->listed == 0)
		snprintf(plan->reason, sizeof(plan->reason),
			 "sysfs lists no SMT siblings (no topology/thread_siblings_list under %s for any of the %zu CPUs this process may run on): siblings are not guessed, so SMT interference was not measured",
			 plan->root, n);
	else if (plan->with_siblings == 0)
		snprintf(plan->reason, sizeof(plan->reason),
			 "no SMT siblings: each of the %zu CPUs this process may run on is alone in its core (thread_siblings_list lists only itself)%s%s%s, so there is no sibling to share a core with",
			 n, plan->smt_control[0] ? "; SMT control is '" : "", plan->smt_control,
			 plan->smt_control[0] ? "'" : "");
	else
		snprintf(plan->reason, sizeof(plan->reason),
			 "CPU %d has SMT siblings, but %s: no pair of siblings to place threads on", sibling_not_allowed,
			 plan->ordered ? "--cpus does not list them" : "this process may not run on them (see 'taskset -pc $$')");
	for (size_t i = 0; i < n; i++)
		topology_free(&topology[i]);
	free(topology);
	free(cpus);
}

static void put_cpu(struct json *json, const char *key, int cpu)
{
	json_key(json, key);
	if (cpu < 0)
		json_null(json);
	else
		json_int(json, cpu);
}

static void print_plan(const struct smt_plan *plan)
{
	struct json json;

	json_init(&json);
	json_object_begin(&json);
	json_key(&json, "kernel");
	json_string(&json, KERNEL);
	json_key(&json, "runnable");
	json_bool(&json, plan->runnable);
	json_key(&json, "reason");
	if (plan->runnable)
		json_null(&json);
	else
		json_string(&json, plan->reason);
	put_cpu(&json, "cpu", plan->cpu);
	put_cpu(&json, "sibling_cpu", plan->sibling_cpu);
	put_cpu(&json, "other_core_cpu", plan->other_core_cpu);
	json_key(&json, "note");
	if (plan->note[0])
		json_string(&json, plan->note);
	else
		json_null(&json);
	json_key(&json, "allowed_cpus");
	json_uint(&json, plan->allowed);
	json_key(&json, "cpus_listed");
	json_uint(&json, plan->listed);
	json_key(&json, "cpus_with_siblings");
	json_uint(&json, plan->with_siblings);
	json_key(&json, "smt_control");
	if (plan->smt_control[0])
		json_string(&json, plan->smt_control);
	else
		json_null(&json);
	json_key(&json, "sysfs_root");
	json_string(&json, plan->root);
	json_key(&json, "cpu_order");
	json_string(&json, plan->ordered ? "given" : "ascending");
	json_object_end(&json);
	if (json_write_line(&json, STDOUT_FILENO) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot write the plan: %s", strerror(errno));
	json_free(&json);
}

static void write_thread(struct record *record, const struct smt_options *options, const struct smt_plan *plan,
			 int placement, const int *cpus, size_t threads, enum work_kind kind, uint64_t repeat,
			 size_t thread, const struct team_member *member, const struct sampler_run *run, double wall_s,
			 size_t order_index)
{
	struct json *json = &record->json;
	char label[96];

	record_begin(record, "throughput", work_kind_unit(kind));
	json_key(json, "placement");
	json_string(json, placement_names[placement]);
	json_key(json, "workload");
	json_string(json, work_kind_name(kind));
	json_key(json, "threads");
	json_uint(json, threads);
	json_key(json, "thread");
	json_uint(json, thread);
	json_key(json, "cpu");
	json_int(json, cpus[thread]);
	json_key(json, "cpus");
	json_array_begin(json);
	for (size_t t = 0; t < threads; t++)
		json_int(json, cpus[t]);
	json_array_end(json);
	json_key(json, "sibling_cpu");
	json_int(json, plan->sibling_cpu);
	json_key(json, "other_core_cpu");
	if (plan->other_core_cpu < 0)
		json_null(json);
	else
		json_int(json, plan->other_core_cpu);
	json_key(json, "repeat");
	json_uint(json, repeat);
	snprintf(label, sizeof(label), "%s %s repeat %" PRIu64 " thread %zu cpu %d", placement_names[placement],
		 work_kind_name(kind), repeat, thread, cpus[thread]);
	team_member_record(record, member, kind, &options->common, run, options->buffer_bytes, wall_s, order_index,
			   label);
}

static int smt_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"workloads", required_argument, NULL, 'w'},
		{"repeats", required_argument, NULL, 'R'},
		{"buffer-bytes", required_argument, NULL, 'B'},
		{"plan", no_argument, NULL, 'L'},
		{"cpus", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	struct smt_options options = {
		.workloads = {WORK_COMPUTE, WORK_MEMORY},
		.workload_count = WORK_KIND_COUNT,
		.repeats = DEFAULT_REPEATS,
		.buffer_bytes = DEFAULT_BUFFER_BYTES,
	};
	const struct kopts *opts = &options.common;
	struct team_member members[2];
	double *series[2];
	int placements[PLACEMENT_COUNT][2];
	size_t placement_count;
	struct smt_plan plan;
	struct record record;
	struct sampler_sweep sweep;
	struct sampler_run run;
	size_t points;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, smt_help);
	kopts_parse(&options.common, argc, argv, "w:R:B:LC:", long_options, smt_option, &options);
	if (opts->cpu >= 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpu does not apply to smt, which places its own threads on siblings chosen from sysfs");
	if (options.buffer_bytes < 4096 || options.buffer_bytes % 64)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--buffer-bytes %" PRIu64 " must be a multiple of 64 bytes and at least 4k",
			 options.buffer_bytes);
	if (options.buffer_bytes > UINT64_MAX / 2)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--buffer-bytes %" PRIu64 " is too large", options.buffer_bytes);
	kopts_check_bytes(opts, 2 * options.buffer_bytes, "two memory buffers (2 x --buffer-bytes)");
	make_plan(&plan, options.cpus, options.cpu_count);
	free(options.cpus);
	if (options.plan_only) {
		print_plan(&plan);
		return CLI_EXIT_OK;
	}
	if (!plan.runnable)
		cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "not measured: %s", plan.reason);

	placements[PLACEMENT_ALONE][0] = plan.cpu;
	placements[PLACEMENT_SIBLINGS][0] = plan.cpu;
	placements[PLACEMENT_SIBLINGS][1] = plan.sibling_cpu;
	placements[PLACEMENT_CORES][0] = plan.cpu;
	placements[PLACEMENT_CORES][1] = plan.other_core_cpu;
	for (int t = 0; t < 2; t++) {
		members[t].samples = series[t] = calloc(sampler_capacity(opts), sizeof(double));
		if (!members[t].samples)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	}
	placement_count = plan.other_core_cpu >= 0 ? PLACEMENT_COUNT : PLACEMENT_CORES;
	points = placement_count * options.workload_count * options.repeats;
	record_open(&record, opts);
	if (plan.other_core_cpu >= 0)
		fprintf(stderr, "%s: CPU %d alone, with its SMT sibling %d, and beside CPU %d of another core; %zu points, seed %" PRIu64 "\n",
			KERNEL, plan.cpu, plan.sibling_cpu, plan.other_core_cpu, points, opts->seed);
	else
		fprintf(stderr, "%s: CPU %d alone and with its SMT sibling %d (%s); %zu points, seed %" PRIu64 "\n", KERNEL,
			plan.cpu, plan.sibling_cpu, plan.note, points, opts->seed);

	sampler_sweep_open(&sweep, opts, points);
	while (sampler_sweep_next(&sweep)) {
		size_t index = sweep.point;
		int placement = (int)(index % placement_count);
		enum work_kind kind = options.workloads[(index / placement_count) % options.workload_count];
		uint64_t repeat = index / (placement_count * options.workload_count);
		size_t threads = placement == PLACEMENT_ALONE ? 1 : 2;
		struct team_request request = {
			.kind = kind,
			.threads = threads,
			.cpus = placements[placement],
			.run = &run,
			.warmup_windows = WARMUP_WINDOWS,
			.window_ns = opts->min_sample_ms * 1e6,
			.buffer_bytes = options.buffer_bytes,
			.seed = opts->seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (index + 1)),
		};
		uint64_t started = timer_now_ns();
		double wall_s, total = 0.0;
		char error[256], label[64];

		sampler_begin(&run, opts, sweep.attempt, series, threads);
		if (team_run(&request, members, error, sizeof(error)) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s %s: %s", placement_names[placement], work_kind_name(kind),
				 error);
		wall_s = (double)(timer_now_ns() - started) / 1e9;
		for (size_t t = 0; t < threads; t++) {
			write_thread(&record, &options, &plan, placement, placements[placement], threads, kind, repeat, t,
				     &members[t], &run, wall_s, sweep.position);
			total += record.summary.median;
		}
		fprintf(stderr, "%s: %zu/%zu %s %s repeat %" PRIu64 ": %.4g %s in total, %zu windows, %s\n", KERNEL,
			sweep.position + 1, sweep.length, placement_names[placement], work_kind_name(kind), repeat, total,
			work_kind_unit(kind), run.count, sampler_stop_name(run.stop));
		snprintf(label, sizeof(label), "%s %s repeat %" PRIu64, placement_names[placement], work_kind_name(kind),
			 repeat);
		sampler_sweep_done(&sweep, &run, label);
	}
	sampler_sweep_close(&sweep);
	record_close(&record);
	free(members[0].samples);
	free(members[1].samples);
	return CLI_EXIT_OK;
}

const struct kernel_spec smt_kernel = {
	.name = "smt",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "SMT interference: compute / memory threads on SMT siblings vs two cores",
	.run = smt_run,
	.print_help = smt_help,
};
