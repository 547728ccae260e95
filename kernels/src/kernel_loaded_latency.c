/* loaded_latency: the throughput-latency curve (docs/methods.md, "Bandwidth and
 * load"; Intel MLC's --loaded_latency). One chase thread walks a random
 * cycle through a DRAM-sized buffer (the latency engine) pinned on one CPU,
 * while load threads pinned on the other CPUs stream through buffers of
 * their own with the bandwidth engine (bw.h: sequential, read or R:W mixed
 * traffic) and an injected delay after every group of lines. Each (traffic,
 * delay) is a point; the delay ladder turns the load from saturating (0) to
 * nearly nothing, and each point records the chase latency together with the
 * bandwidth the load threads moved meanwhile: (bandwidth, latency) pairs.
 *
 * The load threads run continuously through a point, in chunks; after every
 * chunk each adds the lines it moved to a counter of its own (relaxed
 * atomics, one cache line per thread) and checks the stop flag. The chase
 * thread reads the counters right before and right after each timed sample,
 * so every latency sample has the load bandwidth of its own time window.
 * Between points the load threads sleep on a condition variable, so the idle
 * point (no load threads) is measured with them quiet. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "affinity.h"
#include "bw.h"
#include "chain.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "record.h"
#include "registry.h"
#include "sizes.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "loaded_latency"
#define DEFAULT_EXPERIMENT "loaded_latency"
#define DEFAULT_SIZE ((uint64_t)256 << 20)
#define DEFAULT_LOAD_SIZE ((uint64_t)256 << 20)
#define MAX_DELAY UINT64_C(100000000)
#define CHUNK_TARGET_NS 20000.0 /* a load chunk between two counter updates */
#define MAX_LOAD_THREADS 1024

/* MLC's default delay ladder (cycles there, spin iterations here). */
static const uint64_t default_delays[] = {0,   2,   8,    15,   50,   64,   100,  200,  300,  400,
					  500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000};
#define DEFAULT_DELAY_COUNT (sizeof(default_delays) / sizeof(default_delays[0]))

struct traffic {
	const char *name;
	unsigned read_lines, write_lines; /* per group */
};

static const struct traffic traffics[] = {
	{"read", 1, 0},
	{"2:1", 2, 1},
	{"1:1", 1, 1},
};
#define TRAFFIC_COUNT (sizeof(traffics) / sizeof(traffics[0]))

struct loaded_options {
	struct kopts common;
	enum page_policy page_policy;
	uint64_t size, load_size;
	int traffic[TRAFFIC_COUNT]; /* chosen, in the order given */
	size_t traffic_count;
	uint64_t *delays;
	size_t delay_count;
	int chase_cpu;              /* -1: default */
	int *load_cpus;             /* NULL: default */
	size_t load_cpu_count;
	int idle;
	enum bw_isa isa;     /* resolved */
	enum bw_store store; /* regular or nt, for traffic that writes */
};

static void loaded_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, loaded_help);
	fprintf(out,
		"Usage: %s loaded_latency [OPTIONS]\n"
		"\n"
		"Loaded latency, the throughput-latency curve: one thread chases a random\n"
		"cycle through a DRAM-sized buffer (ns per dependent load) pinned on one\n"
		"CPU, while load threads on the other CPUs stream through buffers of their\n"
		"own (sequential; read, 2:1 or 1:1 read:write lines) with an injected delay\n"
		"after every group of lines. Each (traffic, delay) point records the chase\n"
		"latency and the bandwidth the load threads moved during each sample; plus\n"
		"one idle point without load threads. Points run in a seeded random order.\n"
		"\n"
		"Options:\n"
		"  -T, --traffic LIST      read,2:1,1:1 (read:write lines per group; default all)\n"
		"  -D, --delays LIST       spin iterations after each group (default MLC's\n"
		"                          ladder 0,2,8,15,50,64,100,200,300,400,500,700,1000,\n"
		"                          1300,1700,2500,3500,5000,9000,20000)\n"
		"  -s, --size SIZE         chase working set (default 256m), a multiple of 64\n"
		"  -L, --load-size SIZE    each load thread's buffer (default 256m)\n"
		"  -C, --chase-cpu N       the chase thread's CPU (default: the first CPU of\n"
		"                          the allowed CPUs, one per physical core first);\n"
		"                          --cpu N is the same\n"
		"  -l, --load-cpus LIST    load threads' CPUs, one thread each, Linux cpulist\n"
		"                          syntax (default: every other allowed CPU, physical\n"
		"                          cores first); must not hold the chase CPU\n"
		"  -i, --isa ISA           the load threads' loops: auto (default; as in\n"
		"                          bandwidth --help), scalar, sse2, avx2, avx512, neon,\n"
		"                          sve\n"
		"  -S, --stores KIND       regular (default) or nt: the load threads' stores\n"
		"  -p, --page-policy P     thp (default) or 4k, for every buffer\n"
		"  -I, --idle / --no-idle  also measure one point without load threads\n"
		"                          (default on)\n"
		"\n",
		CLI_PROGRAM);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: metric loaded_latency, unit ns (chase time per load); params\n"
		"traffic (idle, read, 2:1, 1:1), read_lines, write_lines, delay (null on\n"
		"idle), load_threads (0 on idle), load_cpus, load_working_set_bytes, isa,\n"
		"isa_requested (both null on idle; context isa_auto as in bandwidth),\n"
		"store, then the latency params (working_set_bytes, stride_bytes, pattern,\n"
		"page_policy, huge_bytes_granted, cpu = the chase CPU, accesses_per_sample,\n"
		"seed ...); context bandwidth_gb_s (lines moved by all load threads x 64 B\n"
		"over the timed samples, 1e9 B/s; write-allocate reads not counted),\n"
		"bandwidth_samples (GB/s during each latency sample), write_gb_s, canary,\n"
		"core clock, wall_s, order_index. A host with one CPU gets the idle point\n"
		"only, and a note on stderr.\n"
		"\n"
		"Example:\n"
		"  %s loaded_latency --traffic read --delays 0,100,1000,20000 --size 512m\n",
		CLI_PROGRAM);
}

static void parse_traffic(struct loaded_options *options, const char *arg)
{
	char *copy = strdup(arg), *item, *rest;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing --traffic");
	options->traffic_count = 0;
	for (item = copy; item; item = rest) {
		size_t t;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		for (t = 0; t < TRAFFIC_COUNT; t++)
			if (strcmp(item, traffics[t].name) == 0)
				break;
		if (t == TRAFFIC_COUNT)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--traffic item '%s' is unknown; use read, 2:1 or 1:1 (comma separated)", item);
		for (size_t k = 0; k < options->traffic_count; k++)
			if (options->traffic[k] == (int)t)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--traffic names '%s' twice", item);
		options->traffic[options->traffic_count++] = (int)t;
	}
	free(copy);
}

static int parse_cpu(const char *option, const char *arg)
{
	uint64_t cpu;

	if (cli_parse_u64(arg, 0, CPU_SETSIZE - 1, &cpu) != 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "%s '%s' is not a CPU number (0..%d)", option, arg,
			 CPU_SETSIZE - 1);
	return (int)cpu;
}

static void loaded_option(void *context, int option, const char *arg)
{
	struct loaded_options *options = context;

	switch (option) {
	case 'T':
		parse_traffic(options, arg);
		break;
	case 'D':
		free(options->delays);
		options->delay_count = kopts_u64_list(&options->common, "--delays", arg, 0, MAX_DELAY, 0,
						      &options->delays);
		break;
	case 's':
		options->size = kopts_size(&options->common, "--size", arg);
		break;
	case 'L':
		options->load_size = kopts_size(&options->common, "--load-size", arg);
		break;
	case 'C':
		options->chase_cpu = parse_cpu("--chase-cpu", arg);
		break;
	case 'l': {
		char *bad = NULL;
		const char *error;

		free(options->load_cpus);
		error = topology_cpulist_parse(arg, CPU_SETSIZE - 1, &options->load_cpus,
					       &options->load_cpu_count, &bad);
		if (error)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--load-cpus '%s': %s ('%s')", arg, error,
				 bad ? bad : "");
		if (options->load_cpu_count == 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--load-cpus is empty; give CPUs such as 1-3");
		break;
	}
	case 'i':
		if (bw_isa_parse(arg, &options->isa) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--isa '%s' is unknown; use %s", arg, bw_isa_known());
		if (!bw_isa_supported(options->isa))
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--isa %s: this CPU does not run it; it runs %s", arg,
				 bw_isa_available());
		break;
	case 'S':
		if (bw_store_parse(arg, &options->store) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--stores '%s' is unknown; use regular or nt", arg);
		break;
	case 'p':
		options->page_policy = latency_page_policy_option(&options->common, arg);
		break;
	case 'I':
		options->idle = 1;
		break;
	case 'N':
		options->idle = 0;
		break;
	}
}

/* One load thread. The counters sit on a cache line of their own: only
 * this thread writes them, the chase thread reads them between samples. */
struct load_thread {
	_Alignas(64) _Atomic uint64_t lines;   /* lines moved (read + written) */
	_Atomic uint64_t written;              /* of which written */
	_Atomic uint64_t chunks;               /* chunks finished this point */
	_Alignas(64) struct loaded_state *state;
	int cpu;
	pthread_t thread;
	int started;
	uint64_t huge_bytes_granted;
	char error[200];
	struct bw_buffer bw;   /* this thread's buffer, prepared by itself */
	int prepared;
	uint64_t checksum;     /* of everything read: keeps the loads alive */
};

/* What the chase thread and the load threads share. */
struct loaded_state {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* load threads wait for a new point or quit */
	pthread_cond_t changed;  /* the chase thread waits for ready / idle threads */
	unsigned generation;     /* bumped for every loaded point */
	int quit;
	size_t ready, busy;      /* set up / running a point */
	_Atomic int stop;        /* end the current point */
	const struct traffic *traffic;
	uint64_t delay;
	const struct loaded_options *options;
	struct bw_request setup; /* the load buffers' layout */
	struct load_thread *threads;
	size_t thread_count;
};

/* The bw request of one point: sequential, every line (stride 64), read
 * traffic as op read, R:W traffic as op mix; writes with the chosen stores. */
static void load_request(const struct loaded_options *options, const struct traffic *traffic,
			 uint64_t delay, struct bw_request *request)
{
	memset(request, 0, sizeof(*request));
	request->op = traffic->write_lines ? BW_OP_MIX : BW_OP_READ;
	request->store = traffic->write_lines ? options->store : BW_STORE_NONE;
	request->isa = bw_isa_resolve(options->isa);
	request->pattern = BW_PATTERN_SEQUENTIAL;
	request->stride_bytes = BW_LINE;
	request->read_lines = traffic->read_lines;
	request->write_lines = traffic->write_lines;
	request->working_set_bytes = options->load_size;
	request->page_policy = options->page_policy;
	request->delay = delay;
	request->seed = options->common.seed;
	bw_request_ratio(request);
}

/* Runs the point's traffic in chunks until told to stop. A chunk is whole
 * groups (R + W blocks, so its lines are exact) sized to take about
 * CHUNK_TARGET_NS: the counters move smoothly at every delay (a group per
 * chunk at the largest delays, thousands at delay 0). */
static void run_point(struct load_thread *self, const struct traffic *traffic, uint64_t delay)
{
	struct loaded_state *state = self->state;
	struct bw_request request;
	uint64_t group = traffic->read_lines + traffic->write_lines;
	uint64_t total = self->bw.blocks / group, position = 0, chunk = 1;
	uint64_t lines = atomic_load_explicit(&self->lines, memory_order_relaxed);
	uint64_t written = atomic_load_explicit(&self->written, memory_order_relaxed);
	uint64_t chunks = atomic_load_explicit(&self->chunks, memory_order_relaxed);
	uint64_t checksum = 0;

	load_request(state->options, traffic, delay, &request);
	while (!atomic_load_explicit(&state->stop, memory_order_relaxed)) {
		uint64_t groups = chunk < total - position ? chunk : total - position;
		uint64_t started = timer_now_ns(), elapsed;

		checksum += bw_run(&request, &self->bw, position * group, groups * group);
		elapsed = timer_now_ns() - started;
		lines += bw_lines(&request, &self->bw, position * group, groups * group);
		written += groups * traffic->write_lines;
		atomic_store_explicit(&self->lines, lines, memory_order_relaxed);
		atomic_store_explicit(&self->written, written, memory_order_relaxed);
		atomic_store_explicit(&self->chunks, ++chunks, memory_order_relaxed);
		position += groups;
		if (position == total)
			position = 0;
		if ((double)elapsed < CHUNK_TARGET_NS / 2 && chunk < total)
			chunk *= 2;
		else if ((double)elapsed > CHUNK_TARGET_NS * 2 && chunk > 1)
			chunk /= 2;
	}
	self->checksum += checksum;
}

static void *load_main(void *arg)
{
	struct load_thread *self = arg;
	struct loaded_state *state = self->state;
	unsigned seen = 0;
	int ok = 1;

	if (sched_getcpu() != self->cpu) {
		snprintf(self->error, sizeof(self->error), "load thread for CPU %d runs on CPU %d",
			 self->cpu, sched_getcpu());
		ok = 0;
	} else if (bw_prepare(&state->setup, &self->bw) != 0) {
		snprintf(self->error, sizeof(self->error),
			 "cannot map the load buffer on CPU %d: %s; lower --load-size", self->cpu,
			 strerror(errno));
		ok = 0;
	} else {
		self->prepared = 1;
		self->huge_bytes_granted = self->bw.huge_bytes_granted;
	}
	pthread_mutex_lock(&state->lock);
	state->ready++;
	pthread_cond_broadcast(&state->changed);
	while (ok) {
		const struct traffic *traffic;
		uint64_t delay;

		while (!state->quit && state->generation == seen)
			pthread_cond_wait(&state->wake, &state->lock);
		if (state->quit)
			break;
		seen = state->generation;
		traffic = state->traffic;
		delay = state->delay;
		state->busy++;
		pthread_mutex_unlock(&state->lock);
		run_point(self, traffic, delay);
		pthread_mutex_lock(&state->lock);
		state->busy--;
		pthread_cond_broadcast(&state->changed);
	}
	pthread_mutex_unlock(&state->lock);
	if (self->prepared)
		bw_release(&self->bw);
	return NULL;
}

static void stop_threads(struct loaded_state *state)
{
	pthread_mutex_lock(&state->lock);
	state->quit = 1;
	pthread_cond_broadcast(&state->wake);
	pthread_mutex_unlock(&state->lock);
	for (size_t i = 0; i < state->thread_count; i++)
		if (state->threads[i].started)
			pthread_join(state->threads[i].thread, NULL);
}

/* Creates the load threads, each already pinned (so its buffer is first
 * touched on its own CPU's node), and waits until every one has its
 * buffer. Exits 1 if a thread, its CPU or its memory is refused. */
static void start_threads(struct loaded_state *state)
{
	const char *failure = NULL;
	char message[256];

	for (size_t i = 0; i < state->thread_count; i++) {
		struct load_thread *thread = &state->threads[i];
		pthread_attr_t attributes;
		cpu_set_t only;
		int error;

		thread->state = state;
		CPU_ZERO(&only);
		CPU_SET(thread->cpu, &only);
		pthread_attr_init(&attributes);
		error = pthread_attr_setaffinity_np(&attributes, sizeof(only), &only);
		if (!error)
			error = pthread_create(&thread->thread, &attributes, load_main, thread);
		pthread_attr_destroy(&attributes);
		if (error) {
			snprintf(message, sizeof(message), "cannot start the load thread on CPU %d: %s",
				 thread->cpu, strerror(error));
			failure = message;
			break;
		}
		thread->started = 1;
	}
	pthread_mutex_lock(&state->lock);
	for (;;) {
		size_t started = 0;

		for (size_t i = 0; i < state->thread_count; i++)
			started += (size_t)state->threads[i].started;
		if (state->ready == started)
			break;
		pthread_cond_wait(&state->changed, &state->lock);
	}
	pthread_mutex_unlock(&state->lock);
	for (size_t i = 0; !failure && i < state->thread_count; i++)
		if (state->threads[i].error[0])
			failure = state->threads[i].error;
	if (failure) {
		snprintf(message, sizeof(message), "%s", failure);
		stop_threads(state);
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s", message);
	}
}

static uint64_t sum_lines(const struct loaded_state *state, uint64_t *written)
{
	uint64_t lines = 0;

	*written = 0;
	for (size_t i = 0; i < state->thread_count; i++) {
		lines += atomic_load_explicit(&state->threads[i].lines, memory_order_relaxed);
		*written += atomic_load_explicit(&state->threads[i].written, memory_order_relaxed);
	}
	return lines;
}

/* Starts the load of one point and returns once every load thread has
 * finished a chunk of it (the load is up before the chase calibrates). */
static void begin_load(struct loaded_state *state, const struct traffic *traffic, uint64_t delay)
{
	uint64_t *chunks = malloc(state->thread_count * sizeof(*chunks));

	if (!chunks)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
	for (size_t i = 0; i < state->thread_count; i++)
		chunks[i] = atomic_load_explicit(&state->threads[i].chunks, memory_order_relaxed);
	pthread_mutex_lock(&state->lock);
	state->traffic = traffic;
	state->delay = delay;
	atomic_store(&state->stop, 0);
	state->generation++;
	pthread_cond_broadcast(&state->wake);
	pthread_mutex_unlock(&state->lock);
	for (size_t i = 0; i < state->thread_count; i++) {
		const struct timespec pause = {.tv_sec = 0, .tv_nsec = 50000};

		while (atomic_load_explicit(&state->threads[i].chunks, memory_order_relaxed) == chunks[i])
			nanosleep(&pause, NULL);
	}
	free(chunks);
}

static void end_load(struct loaded_state *state)
{
	atomic_store(&state->stop, 1);
	pthread_mutex_lock(&state->lock);
	while (state->busy > 0)
		pthread_cond_wait(&state->changed, &state->lock);
	pthread_mutex_unlock(&state->lock);
}

/* Reads the load counters around each timed chase sample. */
struct sample_window {
	const struct loaded_state *state;
	uint64_t lines_before, written_before, ns_before;
	double *gb_s;               /* [sampler_capacity] */
	uint64_t lines, written, ns; /* totals over the samples */
};

static void around_sample(void *context, size_t index, int after)
{
	struct sample_window *window = context;
	uint64_t written, lines, now;

	if (!after) {
		window->lines_before = sum_lines(window->state, &window->written_before);
		window->ns_before = timer_now_ns();
		return;
	}
	now = timer_now_ns();
	lines = sum_lines(window->state, &written);
	window->gb_s[index] = now > window->ns_before
				      ? (double)(lines - window->lines_before) * 64.0 /
						(double)(now - window->ns_before)
				      : 0.0;
	window->lines += lines - window->lines_before;
	window->written += written - window->written_before;
	window->ns += now - window->ns_before;
}

struct loaded_point {
	int traffic; /* index into traffics, -1: idle */
	uint64_t delay;
};

struct point_params {
	const struct loaded_options *options;
	const struct loaded_state *state;
	const struct loaded_point *point;
	const char *isa;
};

static void write_record(struct record *record, const struct latency_request *request,
			 const struct latency_point *point, const struct point_params *params, const struct sample_window *window,
			 double core_clock_ghz, struct sampler_sweep *sweep)
{
	struct json *json = &record->json;
	const struct traffic *traffic = params->point->traffic < 0 ? NULL : &traffics[params->point->traffic];
	size_t threads = traffic ? params->state->thread_count : 0;
	double seconds = (double)window->ns / 1e9;
	char label[96];

	record_begin(record, "loaded_latency", "ns");
	json_key(json, "traffic");
	json_string(json, traffic ? traffic->name : "idle");
	json_key(json, "read_lines");
	json_uint(json, traffic ? traffic->read_lines : 0);
	json_key(json, "write_lines");
	json_uint(json, traffic ? traffic->write_lines : 0);
	json_key(json, "delay");
	if (traffic)
		json_uint(json, params->point->delay);
	else
		json_null(json);
	json_key(json, "load_threads");
	json_uint(json, threads);
	json_key(json, "load_cpus");
	json_array_begin(json);
	for (size_t i = 0; i < threads; i++)
		json_int(json, params->state->threads[i].cpu);
	json_array_end(json);
	json_key(json, "load_working_set_bytes");
	json_uint(json, traffic ? params->options->load_size : 0);
	json_key(json, "load_huge_bytes_granted");
	{
		uint64_t huge = 0;

		for (size_t i = 0; i < threads; i++)
			huge += params->state->threads[i].huge_bytes_granted;
		json_uint(json, huge);
	}
	json_key(json, "isa");
	if (traffic)
		json_string(json, params->isa);
	else
		json_null(json);
	json_key(json, "isa_requested");
	if (traffic)
		json_string(json, bw_isa_name(params->options->isa));
	else
		json_null(json);
	json_key(json, "store");
	json_string(json, bw_store_name(traffic && traffic->write_lines ? params->options->store
								 : BW_STORE_NONE));
	latency_params(record, request, point);
	record_samples(record, point->samples, point->run.count);
	record_precision(record, &point->run, point->samples);
	json_key(json, "bandwidth_gb_s");
	json_double(json, seconds > 0 ? (double)window->lines * 64.0 / 1e9 / seconds : 0.0);
	json_key(json, "bandwidth_samples");
	json_array_begin(json);
	for (size_t i = 0; i < point->run.count; i++)
		json_double(json, window->gb_s[i]);
	json_array_end(json);
	json_key(json, "write_gb_s");
	json_double(json, seconds > 0 ? (double)window->written * 64.0 / 1e9 / seconds : 0.0);
	if (traffic)
		bw_isa_context(json, params->options->isa);
	record_clock_context(record, point->canary_before_ns, point->canary_after_ns, core_clock_ghz,
			     point->wall_s, sweep->position);
	if (traffic)
		snprintf(label, sizeof(label), "%s delay=%" PRIu64, traffic->name, params->point->delay);
	else
		snprintf(label, sizeof(label), "idle");
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s: latency median %.4g ns, load %.3g GB/s, %zu samples, %s\n", KERNEL,
		sweep->position + 1, sweep->length, label, record->summary.median,
		seconds > 0 ? (double)window->lines * 64.0 / 1e9 / seconds : 0.0, point->run.count,
		sampler_stop_name(point->run.stop));
	sampler_sweep_done(sweep, &point->run, label);
}

/* The chase CPU and the load CPUs: given, or from the physical-first order;
 * every CPU allowed, none twice, the chase CPU not among the load CPUs. */
static void plan_cpus(struct loaded_options *options)
{
	int *order;
	size_t cores, count = topology_cpu_order(KERNEL, &order, &cores, NULL);

	if (options->common.cpu >= 0) {
		if (options->chase_cpu >= 0 && options->chase_cpu != options->common.cpu)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpu %d and --chase-cpu %d differ; give one",
				 options->common.cpu, options->chase_cpu);
		options->chase_cpu = options->common.cpu;
	}
	if (options->chase_cpu < 0) {
		if (count == 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "this process may run on no CPU");
		options->chase_cpu = order[0];
	} else if (!affinity_cpu_allowed(options->chase_cpu)) {
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--chase-cpu %d is not a CPU this process may run on; pick one from 'taskset -pc $$'",
			 options->chase_cpu);
	}
	if (options->load_cpus) {
		if (options->load_cpu_count > MAX_LOAD_THREADS)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--load-cpus names %zu CPUs; at most %d",
				 options->load_cpu_count, MAX_LOAD_THREADS);
		for (size_t i = 0; i < options->load_cpu_count; i++) {
			int cpu = options->load_cpus[i];

			if (cpu == options->chase_cpu)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--load-cpus holds the chase CPU %d; the chase thread needs its CPU to itself",
					 cpu);
			if (!affinity_cpu_allowed(cpu))
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--load-cpus CPU %d is not a CPU this process may run on; pick from 'taskset -pc $$'",
					 cpu);
			for (size_t j = 0; j < i; j++)
				if (options->load_cpus[j] == cpu)
					cli_fail(CLI_EXIT_USAGE, KERNEL, "--load-cpus names CPU %d twice", cpu);
		}
	} else {
		options->load_cpus = malloc((count ? count : 1) * sizeof(*options->load_cpus));
		if (!options->load_cpus)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		options->load_cpu_count = 0;
		for (size_t i = 0; i < count && options->load_cpu_count < MAX_LOAD_THREADS; i++)
			if (order[i] != options->chase_cpu)
				options->load_cpus[options->load_cpu_count++] = order[i];
	}
	free(order);
	options->common.cpu = options->chase_cpu; /* the records' cpu: the chase thread's */
}

static int loaded_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"traffic", required_argument, NULL, 'T'},
		{"delays", required_argument, NULL, 'D'},
		{"size", required_argument, NULL, 's'},
		{"load-size", required_argument, NULL, 'L'},
		{"chase-cpu", required_argument, NULL, 'C'},
		{"load-cpus", required_argument, NULL, 'l'},
		{"isa", required_argument, NULL, 'i'},
		{"stores", required_argument, NULL, 'S'},
		{"page-policy", required_argument, NULL, 'p'},
		{"idle", no_argument, NULL, 'I'},
		{"no-idle", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0},
	};
	struct loaded_options options = {
		.page_policy = PAGE_POLICY_THP,
		.size = DEFAULT_SIZE,
		.load_size = DEFAULT_LOAD_SIZE,
		.chase_cpu = -1,
		.idle = 1,
		.isa = BW_ISA_AUTO,
		.store = BW_STORE_REGULAR,
	};
	struct kopts *opts = &options.common;
	struct latency_request request = {
		.stride_bytes = CHAIN_LINE_BYTES,
		.order = CHAIN_ORDER_RANDOM,
		.walk = LATENCY_WALK_READ,
		.chains = 1,
	};
	struct loaded_state state;
	struct latency_buffer prepared;
	struct latency_point point;
	struct sample_window window;
	struct loaded_point *points;
	struct canary canary;
	struct record record;
	struct sampler_sweep sweep;
	const char *isa;
	double core_clock_ghz;
	size_t count = 0, capacity;

	kopts_init(opts, KERNEL, DEFAULT_EXPERIMENT, loaded_help);
	kopts_parse(opts, argc, argv, "T:D:s:L:C:l:i:S:p:IN", long_options, loaded_option, &options);
	if (options.traffic_count == 0) {
		for (size_t t = 0; t < TRAFFIC_COUNT; t++)
			options.traffic[t] = (int)t;
		options.traffic_count = TRAFFIC_COUNT;
	}
	if (!options.delays) {
		options.delays = malloc(sizeof(default_delays));
		if (!options.delays)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		memcpy(options.delays, default_delays, sizeof(default_delays));
		options.delay_count = DEFAULT_DELAY_COUNT;
	}
	if (options.size % CHAIN_LINE_BYTES || options.size < 2 * CHAIN_LINE_BYTES)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--size %" PRIu64 " must be a multiple of 64 bytes and at least 128", options.size);
	if (options.load_size % BW_LINE || options.load_size < 4096)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--load-size %" PRIu64 " must be a multiple of 64 bytes and at least 4k", options.load_size);
	for (size_t t = 0; t < options.traffic_count; t++) {
		struct bw_request check;
		const char *problem;

		load_request(&options, &traffics[options.traffic[t]], options.delays[0], &check);
		problem = bw_request_check(&check);
		if (check.store == BW_STORE_NT && bw_isa_no_nt_stores(check.isa))
			cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "load traffic %s asks for non-temporal stores: isa %s: %s",
				 traffics[options.traffic[t]].name, bw_isa_name(check.isa), bw_isa_no_nt_stores(check.isa));
		if (problem)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "load traffic %s: %s", traffics[options.traffic[t]].name,
				 problem);
	}
	isa = bw_isa_name(bw_isa_resolve(options.isa));
	plan_cpus(&options);
	if (options.size + options.load_cpu_count * options.load_size < options.size)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--size and --load-size overflow");
	kopts_check_bytes(opts, options.size + options.load_cpu_count * options.load_size,
			  "the chase buffer and the load threads' buffers together");

	/* Points: the idle one, then traffic x delay; measured in a seeded
	 * random order. Without a CPU for load threads only idle is left. */
	points = malloc((1 + options.traffic_count * options.delay_count) * sizeof(*points));
	if (!points)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
	if (options.load_cpu_count == 0) {
		fprintf(stderr, "%s: note: this process may run on one CPU only (%d), so there is no CPU for load threads; measuring the idle point only\n",
			KERNEL, options.chase_cpu);
		points[count++] = (struct loaded_point){.traffic = -1};
	} else {
		if (options.idle)
			points[count++] = (struct loaded_point){.traffic = -1};
		for (size_t t = 0; t < options.traffic_count; t++)
			for (size_t d = 0; d < options.delay_count; d++)
				points[count++] = (struct loaded_point){.traffic = options.traffic[t],
									.delay = options.delays[d]};
	}
	memset(&state, 0, sizeof(state));
	pthread_mutex_init(&state.lock, NULL);
	pthread_cond_init(&state.wake, NULL);
	pthread_cond_init(&state.changed, NULL);
	state.options = &options;
	load_request(&options, &traffics[options.traffic[0]], 0, &state.setup);
	state.thread_count = options.load_cpu_count;
	state.threads = aligned_alloc(64, (state.thread_count ? state.thread_count : 1) * sizeof(*state.threads));
	memset(&point, 0, sizeof(point));
	capacity = sampler_capacity(opts);
	point.samples = malloc(capacity * sizeof(*point.samples));
	window.gb_s = malloc(capacity * sizeof(*window.gb_s));
	if (!state.threads || !point.samples || !window.gb_s || canary_init(&canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up");
	memset(state.threads, 0, (state.thread_count ? state.thread_count : 1) * sizeof(*state.threads));
	for (size_t i = 0; i < state.thread_count; i++)
		state.threads[i].cpu = options.load_cpus[i];

	kopts_pin(opts);
	core_clock_ghz = coreclock_measure_ghz();
	request.span_bytes = options.size;
	request.page_policy = options.page_policy;
	latency_prepare(opts, &request, &prepared);
	start_threads(&state);
	record_open(&record, opts);
	fprintf(stderr, "%s: %zu points, %s order, seed %" PRIu64 ", chase CPU %d, %zu load threads, isa %s, core clock %.3f GHz\n",
		KERNEL, count, opts->ordered ? "given" : "random", opts->seed, options.chase_cpu,
		state.thread_count, isa, core_clock_ghz);

	point.around_sample = around_sample;
	point.around_context = &window;
	sampler_sweep_open(&sweep, opts, count);
	while (sampler_sweep_next(&sweep)) {
		const struct loaded_point *p = &points[sweep.point];
		struct point_params params = {.options = &options, .state = &state, .point = p, .isa = isa};
		struct loaded_state idle_state = {.thread_count = 0};
		uint64_t started = timer_now_ns();

		memset(window.gb_s, 0, capacity * sizeof(*window.gb_s));
		window.lines = window.written = window.ns = 0;
		window.state = p->traffic < 0 ? &idle_state : &state;
		if (p->traffic >= 0)
			begin_load(&state, &traffics[p->traffic], p->delay);
		point.attempt = sweep.attempt;
		latency_sample(opts, &request, &prepared, &canary, &point);
		if (p->traffic >= 0)
			end_load(&state);
		point.wall_s = (double)(timer_now_ns() - started) / 1e9;
		write_record(&record, &request, &point, &params, &window, core_clock_ghz, &sweep);
	}
	sampler_sweep_close(&sweep);
	stop_threads(&state);
	record_close(&record);
	latency_release(&prepared);
	canary_free(&canary);
	free(state.threads);
	free(point.samples);
	free(window.gb_s);
	free(points);
	free(options.delays);
	free(options.load_cpus);
	return CLI_EXIT_OK;
}

const struct kernel_spec loaded_latency_kernel = {
	.name = "loaded_latency",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "loaded latency: a chase under load threads with an injected-delay ladder, (GB/s, ns) pairs",
	.run = loaded_run,
	.print_help = loaded_help,
};
