/* c2c: core-to-core latency. For every ordered pair of logical CPUs (a, b),
 * an initiator thread on a and a responder thread on b pass one cache line
 * back and forth: the initiator writes a sequence number, the responder
 * spins until it sees it and writes it back plus one, the initiator spins
 * until it sees the reply. One round trip moves the line twice (a to b, b to
 * a), so a sample is round-trip time / 2: ns per ONE-WAY transfer. Method:
 * docs/methods.md ("Write cost": core-to-core ping-pong) and "Statistics". */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "canary.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "sampler.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "c2c"
#define DEFAULT_EXPERIMENT "c2c"
#define SEE_HELP "see '" CLI_PROGRAM " c2c --help'"
#define MAX_CPU_NUMBER (1 << 20)
/* A line and the neighbour an adjacent-line prefetcher fetches with it. */
#define REGION_BYTES 128
#define WARMUP_NS 5e6
#define WARMUP_ROUND_TRIPS 256
#define READY_TIMEOUT_NS 10e9
/* Odd, so the responder never answers it; the initiator's numbers never
 * reach it. */
#define STOP_VALUE UINT64_MAX

enum responder_state { RESPONDER_STARTING, RESPONDER_READY, RESPONDER_WRONG_CPU };

/* The one mapping a pair shares, mapped fresh for each pair and first
 * touched by the initiator (so on a NUMA host its memory is local to cpu_a).
 * The ping line is alone in its 128-byte region; the start-up handshake
 * lives in another region and is idle while timing. */
struct shared_page {
	_Alignas(REGION_BYTES) _Atomic uint64_t ping;
	_Alignas(REGION_BYTES) _Atomic int state;
};
_Static_assert(offsetof(struct shared_page, state) == REGION_BYTES,
	       "the handshake must not share the ping line's 128-byte region");

struct responder {
	struct shared_page *page;
	int cpu;
};

struct initiator {
	struct shared_page *page;
	uint64_t sequence; /* even: the last reply seen */
};

struct c2c_options {
	struct kopts common;
	int *cpus; /* in the order given (or ascending from the affinity mask) */
	size_t cpu_count;
	int have_cpus;
	/* --pairs: the ordered pairs to measure, as indexes into cpus (2 per pair);
	 * without it every ordered pair of distinct cpus */
	size_t *pairs;
	size_t pair_count;
};

struct pair_result {
	uint64_t round_trips_per_sample;
	double canary_before_ns, canary_after_ns;
	double wall_s;
	struct sampler_run run;
};

static void c2c_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, c2c_help);
	fprintf(out,
		"Usage: %s c2c [--cpus LIST] [OPTIONS]\n"
		"\n"
		"Core-to-core latency: cache-line ping-pong between every ordered pair of\n"
		"logical CPUs, a matrix. For a pair (a, b) an initiator thread pinned to a\n"
		"and a responder thread pinned to b share one 64-byte line, alone in its own\n"
		"128-byte region (no adjacent-line prefetch sharing). The initiator writes a\n"
		"sequence number (C11 release store); the responder spins (acquire loads)\n"
		"until it sees it and writes it back plus one; the initiator spins until it\n"
		"sees the reply. One round trip moves the line twice, so every sample is\n"
		"\n"
		"    ns per ONE-WAY transfer = round-trip time / 2.\n"
		"\n"
		"Round trips per sample are calibrated to --min-sample-ms after a 5 ms\n"
		"warm-up; every sample is kept. Pairs run in a seeded random order; a 4 KiB\n"
		"(L1) canary is timed on cpu a before and after each pair (with no responder\n"
		"running), and cycles use the core clock measured on cpu a. N CPUs give\n"
		"N x (N-1) points: with the defaults, about 0.2 s each.\n"
		"\n"
		"CPUs:\n"
		"  -C, --cpus LIST         CPUs to pair, as a comma list of numbers and ranges,\n"
		"                          e.g. 0-3,8 (default: every CPU this process may run\n"
		"                          on, 'taskset -pc $$'); at least 2, each allowed, none\n"
		"                          twice. --cpu (one CPU) does not apply to c2c and is\n"
		"                          refused: use --cpus\n"
		"  -P, --pairs LIST        measure only these ordered pairs instead of every\n"
		"                          pair of --cpus: initiator:responder items, e.g.\n"
		"                          0:8,0:1,8:16 (each CPU allowed, a != b, no pair\n"
		"                          twice); not with --cpus. The kernels role passes\n"
		"                          the pairs a budget samples (plugins/filter/plan.py)\n"
		"\n",
		CLI_PROGRAM);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Each ordered pair is one JSON object on one line, written when it ends:\n"
		"  schema_version, experiment, kernel (\"c2c\"), metric (\"latency\"), unit (\"ns\"),\n"
		"  params {cpu_a (initiator), cpu_b (responder), smt_siblings (b in a's\n"
		"          thread_siblings_list), same_core (same package and core_id),\n"
		"          same_package, numa_node_a, numa_node_b, core_id_a, core_id_b,\n"
		"          package_a, package_b (from sysfs; null where sysfs does not say),\n"
		"          round_trips_per_sample, one_way (\"round_trip/2\"), seed},\n"
		"  samples [ns per one-way transfer, each sample],\n"
		"  summary {min, median, mean, ci95_low, ci95_high (95%% CI of the median),\n"
		"           count},\n"
		"  context {canary_before_ns, canary_after_ns (on cpu a), core_clock_ghz (of\n"
		"           cpu a), median_cycles, wall_s (seconds for the pair, setup\n"
		"           included), order_index (0-based position in the measuring order)}.\n"
		"Progress goes to stderr, one line per finished pair.\n"
		"\n"
		"Examples:\n"
		"  %s c2c\n"
		"  %s c2c --cpus 0-3,8 --samples 21 --output c2c.jsonl\n"
		"  %s c2c --cpus 0,1 --min-sample-ms 20 --human\n",
		CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM);
}

/* --pairs a:b,c:d: every CPU once in options->cpus (first appearance
 * order), the pairs as index pairs into it. */
static void parse_pairs(struct c2c_options *options, const char *arg)
{
	size_t length = strlen(arg), items = 1;
	char *text = malloc(length + 1), *item, *save = NULL;

	for (size_t i = 0; i < length; i++)
		items += arg[i] == ',';
	free(options->cpus);
	free(options->pairs);
	options->cpus = malloc(2 * items * sizeof(*options->cpus));
	options->pairs = malloc(2 * items * sizeof(*options->pairs));
	if (!text || !options->cpus || !options->pairs)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory reading --pairs");
	memcpy(text, arg, length + 1);
	options->cpu_count = options->pair_count = 0;
	for (item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':'), *end = NULL;
		long ends[2];

		if (!colon)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs item '%s' is not initiator:responder (e.g. 0:8)", item);
		for (int side = 0; side < 2; side++) {
			const char *start = side ? colon + 1 : item;

			errno = 0;
			ends[side] = strtol(start, &end, 10);
			if (end == start || (side ? *end != '\0' : end != colon) || errno || ends[side] < 0 ||
			    ends[side] > MAX_CPU_NUMBER)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs item '%s' is not two CPU numbers a:b (e.g. 0:8)", item);
		}
		if (ends[0] == ends[1])
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs item '%s' pairs a CPU with itself; name two CPUs", item);
		for (int side = 0; side < 2; side++) {
			size_t index = 0;

			while (index < options->cpu_count && options->cpus[index] != (int)ends[side])
				index++;
			if (index == options->cpu_count)
				options->cpus[options->cpu_count++] = (int)ends[side];
			options->pairs[2 * options->pair_count + side] = index;
		}
		for (size_t p = 0; p < options->pair_count; p++)
			if (options->pairs[2 * p] == options->pairs[2 * options->pair_count] &&
			    options->pairs[2 * p + 1] == options->pairs[2 * options->pair_count + 1])
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs names %s twice; list each pair once", item);
		options->pair_count++;
	}
	free(text);
	if (options->pair_count == 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs is empty; give at least one pair, e.g. 0:1");
}

static void c2c_option(void *context, int option, const char *arg)
{
	struct c2c_options *options = context;
	const char *error;
	char *bad_item = NULL;

	switch (option) {
	case 'P':
		if (options->have_cpus)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs and --cpus exclude each other: --pairs names its CPUs");
		parse_pairs(options, arg);
		break;
	case 'C':
		if (options->pairs)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--pairs and --cpus exclude each other: --pairs names its CPUs");
		free(options->cpus);
		error = topology_cpulist_parse(arg, MAX_CPU_NUMBER, &options->cpus, &options->cpu_count,
					       &bad_item);
		if (error)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpus item '%s' %s (a list looks like 0-3,8)",
				 bad_item ? bad_item : arg, error);
		if (options->cpu_count == 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpus is empty; give at least two CPUs, e.g. 0,1");
		options->have_cpus = 1;
		break;
	}
}

static void parse_options(int argc, char **argv, struct c2c_options *options)
{
	static const struct option long_options[] = {
		{"cpus", required_argument, NULL, 'C'},
		{"pairs", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};

	memset(options, 0, sizeof(*options));
	kopts_init(&options->common, KERNEL, DEFAULT_EXPERIMENT, c2c_help);
	kopts_parse(&options->common, argc, argv, "C:P:", long_options, c2c_option, options);
}

/* Everything that can be wrong with the arguments is found here, before
 * anything is measured or written. */
static void validate_options(struct c2c_options *options)
{
	cpu_set_t allowed, seen;

	if (options->common.cpu >= 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--cpu does not apply to c2c, which pins two threads per pair; list the CPUs with --cpus (e.g. --cpus 0,1)");
	if (!options->have_cpus && !options->pairs) {
		if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot read this process's CPU affinity: %s",
				 strerror(errno));
		options->cpus = malloc(CPU_SETSIZE * sizeof(*options->cpus));
		if (!options->cpus)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &allowed))
				options->cpus[options->cpu_count++] = cpu;
		if (options->cpu_count < 2)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "c2c needs two CPUs to pass a cache line between, but this process may run on only %zu (see 'taskset -pc $$'); run it where two or more CPUs are allowed",
				 options->cpu_count);
		return;
	}
	CPU_ZERO(&seen);
	for (size_t i = 0; i < options->cpu_count; i++) {
		int cpu = options->cpus[i];

		if (!affinity_cpu_allowed(cpu))
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "%s names CPU %d, which this process may not run on; pick from 'taskset -pc $$'",
				 options->pairs ? "--pairs" : "--cpus", cpu);
		if (CPU_ISSET(cpu, &seen))
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpus names CPU %d twice; list each CPU once", cpu);
		CPU_SET(cpu, &seen);
	}
	if (options->pairs)
		return;
	if (options->cpu_count < 2)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "c2c needs two CPUs to pass a cache line between; --cpus gave only CPU %d, add another (e.g. --cpus %d,%d)",
			 options->cpus[0], options->cpus[0], options->cpus[0] == 0 ? 1 : 0);
}

/* The responder: answers every odd number with the next even one until it
 * reads STOP_VALUE. Both spins are tight (no pause instruction): a pause
 * would add its own, platform-dependent latency to every transfer (25 ns on
 * the dev VM's Zen 4, ~140 cycles on recent Intel). A tight spin has its
 * own cost: the waiting core re-requests the line the moment it loses it,
 * which on the dev VM makes a transfer ~40% slower than a paused spin does
 * (kernels/README.md, "c2c"). */
static void *responder_main(void *argument)
{
	struct responder *responder = argument;
	_Atomic uint64_t *ping = &responder->page->ping;

	if (sched_getcpu() != responder->cpu) {
		atomic_store_explicit(&responder->page->state, RESPONDER_WRONG_CPU, memory_order_release);
		return NULL;
	}
	atomic_store_explicit(&responder->page->state, RESPONDER_READY, memory_order_release);
	for (;;) {
		uint64_t seen = atomic_load_explicit(ping, memory_order_acquire);

		if (seen == STOP_VALUE)
			break;
		if (seen & 1)
			atomic_store_explicit(ping, seen + 1, memory_order_release);
	}
	return NULL;
}

/* The timed body, run on cpu a: rounds round trips. */
static uint64_t time_round_trips(void *context, uint64_t rounds)
{
	struct initiator *initiator = context;
	_Atomic uint64_t *ping = &initiator->page->ping;
	uint64_t sequence = initiator->sequence;
	uint64_t started = timer_now_ns(), elapsed;

	for (uint64_t i = 0; i < rounds; i++) {
		atomic_store_explicit(ping, sequence + 1, memory_order_release);
		sequence += 2;
		while (atomic_load_explicit(ping, memory_order_acquire) != sequence)
			;
	}
	elapsed = timer_now_ns() - started;
	initiator->sequence = sequence;
	return elapsed;
}

/* Stops and joins a started responder. Once the thread exists, the pair
 * ends here or in wait_until_ready's failure paths, which stop it too; so no
 * error path leaves it spinning. */
static void stop_responder(pthread_t thread, struct shared_page *page, int cpu_b)
{
	int error;

	atomic_store_explicit(&page->ping, STOP_VALUE, memory_order_release);
	error = pthread_join(thread, NULL);
	if (error)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot join the responder thread on CPU %d: %s",
			 cpu_b, strerror(error));
}

static struct shared_page *map_shared_page(void)
{
	size_t bytes = (size_t)sysconf(_SC_PAGESIZE);
	struct shared_page *page;

	if (bytes < sizeof(*page))
		bytes = sizeof(*page);
	page = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot map the shared page: %s", strerror(errno));
	atomic_init(&page->ping, 0);
	atomic_init(&page->state, RESPONDER_STARTING);
	return page;
}

static void unmap_shared_page(struct shared_page *page)
{
	size_t bytes = (size_t)sysconf(_SC_PAGESIZE);

	munmap(page, bytes < sizeof(*page) ? sizeof(*page) : bytes);
}

static pthread_t start_responder(struct responder *responder)
{
	pthread_attr_t attributes;
	pthread_t thread;
	cpu_set_t only;
	int error;

	CPU_ZERO(&only);
	CPU_SET(responder->cpu, &only);
	error = pthread_attr_init(&attributes);
	if (!error) {
		error = pthread_attr_setaffinity_np(&attributes, sizeof(only), &only);
		if (!error)
			error = pthread_create(&thread, &attributes, responder_main, responder);
		pthread_attr_destroy(&attributes);
	}
	if (error) {
		unmap_shared_page(responder->page);
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot start a responder thread pinned to CPU %d: %s",
			 responder->cpu, strerror(error));
	}
	return thread;
}

static void wait_until_ready(pthread_t thread, struct responder *responder)
{
	uint64_t started = timer_now_ns();
	int state;

	while ((state = atomic_load_explicit(&responder->page->state, memory_order_acquire)) ==
	       RESPONDER_STARTING) {
		if ((double)(timer_now_ns() - started) > READY_TIMEOUT_NS) {
			struct timespec deadline;

			/* It has not run yet; when it does, it reads STOP at once. */
			atomic_store_explicit(&responder->page->ping, STOP_VALUE, memory_order_release);
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_sec += 1;
			pthread_timedjoin_np(thread, NULL, &deadline);
			cli_fail(CLI_EXIT_RUNTIME, KERNEL,
				 "the responder thread pinned to CPU %d did not start within %.0f s; is the CPU busy with a real-time task or being taken offline?",
				 responder->cpu, READY_TIMEOUT_NS / 1e9);
		}
	}
	if (state == RESPONDER_WRONG_CPU) {
		pthread_join(thread, NULL);
		unmap_shared_page(responder->page);
		cli_fail(CLI_EXIT_RUNTIME, KERNEL,
			 "the responder thread pinned to CPU %d runs elsewhere; the host did not honour the affinity",
			 responder->cpu);
	}
}

/* One ordered pair: the canary before and after (no responder running),
 * warm-up, calibration, samples. Runs on the calling thread pinned to a. */
static void measure_pair(const struct kopts *opts, struct canary *canary, int cpu_a, int cpu_b,
			 double *core_clock_ghz, double *const *samples, unsigned attempt,
			 struct pair_result *result)
{
	uint64_t started = timer_now_ns(), warmed = 0;
	struct responder responder = {.cpu = cpu_b};
	struct initiator initiator = {0};
	pthread_t thread;

	if (affinity_pin(cpu_a) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin the initiator thread to CPU %d: %s", cpu_a,
			 strerror(errno));
	if (*core_clock_ghz <= 0.0)
		*core_clock_ghz = coreclock_measure_ghz();
	result->canary_before_ns = canary_read_ns(canary);

	responder.page = initiator.page = map_shared_page();
	thread = start_responder(&responder);
	wait_until_ready(thread, &responder);
	/* From here until stop_responder nothing can fail. */
	while ((double)warmed < WARMUP_NS)
		warmed += time_round_trips(&initiator, WARMUP_ROUND_TRIPS);
	result->round_trips_per_sample =
		sampler_calibrate(time_round_trips, &initiator, opts->min_sample_ms * 1e6);
	sampler_begin(&result->run, opts, attempt, samples, 1);
	sampler_collect(time_round_trips, &initiator, result->round_trips_per_sample,
			2.0 * (double)result->round_trips_per_sample, &result->run);
	stop_responder(thread, responder.page, cpu_b);
	unmap_shared_page(responder.page);

	result->canary_after_ns = canary_read_ns(canary);
	result->wall_s = (double)(timer_now_ns() - started) / 1e9;
}

static void put_relation(struct json *json, const char *key, int value)
{
	json_key(json, key);
	if (value == TOPOLOGY_UNKNOWN)
		json_null(json);
	else
		json_bool(json, value);
}

static void put_id(struct json *json, const char *key, int value)
{
	json_key(json, key);
	if (value == TOPOLOGY_UNKNOWN)
		json_null(json);
	else
		json_int(json, value);
}

static const char *relation_name(const struct topology_cpu *a, const struct topology_cpu *b)
{
	if (topology_smt_siblings(a, b) == 1)
		return "smt siblings";
	if (topology_same_core(a, b) == 1)
		return "same core";
	if (topology_same_package(a, b) == 1)
		return a->numa_node != b->numa_node ? "same package, other node" : "same package";
	if (topology_same_package(a, b) == 0)
		return "other package";
	return "topology unknown";
}

static void write_pair(struct record *record, const struct kopts *opts,
		       const struct topology_cpu *a, const struct topology_cpu *b,
		       const struct pair_result *result, const double *samples, double core_clock_ghz,
		       struct sampler_sweep *sweep)
{
	struct json *json = &record->json;
	char label[96];

	record_begin(record, "latency", "ns");
	json_key(json, "cpu_a");
	json_int(json, a->cpu);
	json_key(json, "cpu_b");
	json_int(json, b->cpu);
	put_relation(json, "smt_siblings", topology_smt_siblings(a, b));
	put_relation(json, "same_core", topology_same_core(a, b));
	put_relation(json, "same_package", topology_same_package(a, b));
	put_id(json, "numa_node_a", a->numa_node);
	put_id(json, "numa_node_b", b->numa_node);
	put_id(json, "core_id_a", a->core_id);
	put_id(json, "core_id_b", b->core_id);
	put_id(json, "package_a", a->package_id);
	put_id(json, "package_b", b->package_id);
	json_key(json, "round_trips_per_sample");
	json_uint(json, result->round_trips_per_sample);
	json_key(json, "one_way");
	json_string(json, "round_trip/2");
	json_key(json, "seed");
	json_uint(json, opts->seed);
	record_samples(record, samples, result->run.count);
	record_precision(record, &result->run, samples);
	record_clock_context(record, result->canary_before_ns, result->canary_after_ns,
			     core_clock_ghz, result->wall_s, sweep->position);
	snprintf(label, sizeof(label), "cpu %d -> %d (%s)", a->cpu, b->cpu, relation_name(a, b));
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu cpu %d -> %d median=%.4g ns one-way (%.3g cycles), %zu samples, %s [%s]\n",
		KERNEL, sweep->position + 1, sweep->length, a->cpu, b->cpu, record->summary.median,
		record->summary.median * core_clock_ghz, result->run.count, sampler_stop_name(result->run.stop),
		relation_name(a, b));
	sampler_sweep_done(sweep, &result->run, label);
}

static int c2c_run(int argc, char **argv)
{
	struct c2c_options options;
	const struct kopts *opts = &options.common;
	struct topology_cpu *topology;
	double *samples, *core_clock_ghz;
	struct canary canary;
	struct record record;
	struct sampler_sweep sweep;
	cpu_set_t original;
	size_t n, pairs;

	parse_options(argc, argv, &options);
	validate_options(&options);
	n = options.cpu_count;
	pairs = options.pairs ? options.pair_count : n * (n - 1);
	topology = calloc(n, sizeof(*topology));
	core_clock_ghz = calloc(n, sizeof(*core_clock_ghz));
	samples = malloc(sampler_capacity(opts) * sizeof(*samples));
	if (!topology || !core_clock_ghz || !samples)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the run");
	for (size_t i = 0; i < n; i++)
		if (topology_read(options.cpus[i], &topology[i]) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory reading the CPU topology");
	sampler_sweep_open(&sweep, opts, pairs);
	if (sched_getaffinity(0, sizeof(original), &original) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot read this process's CPU affinity: %s",
			 strerror(errno));
	if (canary_init(&canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up the canary");
	record_open(&record, opts);
	fprintf(stderr, "%s: %zu CPUs, %zu ordered pairs%s, %s order, seed %" PRIu64
			", samples are ns per one-way transfer (round trip / 2)\n",
		KERNEL, n, pairs, options.pairs ? " (--pairs)" : "",
		opts->ordered ? (options.pairs ? "given" : "row-major") : "random", opts->seed);

	while (sampler_sweep_next(&sweep)) {
		/* --pairs in the order given, else row-major over ordered pairs without the diagonal. */
		size_t row, column;
		struct pair_result result;

		if (options.pairs) {
			row = options.pairs[2 * sweep.point];
			column = options.pairs[2 * sweep.point + 1];
		} else {
			row = sweep.point / (n - 1);
			column = sweep.point % (n - 1);
			if (column >= row)
				column++;
		}
		measure_pair(opts, &canary, options.cpus[row], options.cpus[column],
			     &core_clock_ghz[row], &samples, sweep.attempt, &result);
		write_pair(&record, opts, &topology[row], &topology[column], &result, samples,
			   core_clock_ghz[row], &sweep);
	}
	sampler_sweep_close(&sweep);

	sched_setaffinity(0, sizeof(original), &original);
	record_close(&record);
	canary_free(&canary);
	for (size_t i = 0; i < n; i++)
		topology_free(&topology[i]);
	free(topology);
	free(core_clock_ghz);
	free(samples);
	free(options.cpus);
	free(options.pairs);
	return CLI_EXIT_OK;
}

const struct kernel_spec c2c_kernel = {
	.name = "c2c",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "core-to-core latency: cache-line ping-pong between every ordered CPU pair",
	.run = c2c_run,
	.print_help = c2c_help,
};
