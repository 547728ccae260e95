/* pattern_stride: load-to-use latency of a pointer chase whose consecutive
 * loads are a stride apart, in sequential, random or page-local order, at a
 * DRAM-sized footprint: how much of DRAM latency the prefetchers hide for
 * each access pattern. Every stride touches the same number of lines (the
 * footprint), so the buffer spans footprint x stride / 64 bytes. With
 * --threads T, T-1 companion threads, each pinned to a CPU of its own, chase
 * the same pattern and stride over buffers of their own for the whole point
 * while the measuring thread is timed: its latency with T threads loading the
 * memory system alike (a lab report ran four). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "chain.h"
#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "registry.h"
#include "topology.h"

#define KERNEL "pattern_stride"
#define MAX_THREADS 256
#define DEFAULT_EXPERIMENT "pattern_stride"
#define DEFAULT_FOOTPRINT ((uint64_t)64 << 20)
#define MAX_PATTERNS 8

struct pattern_stride_options {
	struct kopts common;
	enum page_policy page_policy;
	uint64_t footprint;
	enum chain_order patterns[MAX_PATTERNS];
	size_t pattern_count;
	uint64_t *strides;
	size_t stride_count;
	uint64_t threads;    /* 1: the measuring thread alone */
	int *load_cpus;      /* the companions' CPUs (threads - 1) */
};

struct pattern_stride_point {
	uint64_t footprint_bytes;
	int capped;
	const struct pattern_stride_options *options;
};

/* A companion thread: chases its own copy of the point's chain until told to stop. */
struct companion {
	pthread_t thread;
	int cpu;
	const struct kopts *opts;
	struct latency_request request;
	pthread_barrier_t *ready;
	atomic_int *stop;
};

static void *volatile companion_sink;

static void pattern_stride_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, pattern_stride_help);
	fprintf(out,
		"Usage: %s pattern_stride [OPTIONS]\n"
		"\n"
		"Latency of dependent loads a stride apart, per access pattern, at a DRAM-sized\n"
		"footprint. sequential: ascending addresses (what stream prefetchers follow);\n"
		"random: one random cycle over the buffer (nothing to follow); page_local:\n"
		"pages in random order, the lines of each 4 KiB page together (what spatial\n"
		"and region prefetchers follow). random at 64 vs 256 B shows the adjacent-line\n"
		"prefetcher; sequential vs random at each stride shows the stride prefetcher.\n"
		"Every stride touches the same number of lines (--footprint / 64), so the\n"
		"buffer spans footprint x stride / 64 bytes; where that exceeds --max-bytes the\n"
		"span is cut to it and the record says footprint_capped: true.\n"
		"\n"
		"Options:\n"
		"  -f, --footprint SIZE    bytes of lines touched per point (default 64m);\n"
		"                          make it several times the last-level cache\n"
		"  -P, --patterns LIST     sequential,random,page_local (default: all three)\n"
		"  -S, --strides LIST      bytes between consecutive loads, multiples of 64\n"
		"                          (default 64,256,1024,4096)\n"
		"  -p, --page-policy P     thp (default) or 4k, as in 'chase'\n"
		"  -T, --threads N         1..%d (default 1): N-1 companion threads, one per\n"
		"                          CPU (one per physical core first, --cpu excepted),\n"
		"                          chase the same pattern and stride on buffers of\n"
		"                          their own while the measuring thread is timed; the\n"
		"                          memory cap is shared (each buffer gets 1/N of it)\n"
		"\n",
		CLI_PROGRAM, MAX_THREADS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: as chase's (metric latency, unit ns; params pattern, stride_bytes,\n"
		"working_set_bytes = the span, lines_touched), with params footprint_bytes,\n"
		"footprint_capped, threads and load_cpus (the companions' CPUs) added.\n"
		"\n"
		"Example:\n"
		"  %s pattern_stride --footprint 256m --strides 64,4096 --cpu 0\n",
		CLI_PROGRAM);
}

static void parse_patterns(struct pattern_stride_options *options, const char *text)
{
	char *copy = strdup(text), *item, *rest;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing --patterns");
	options->pattern_count = 0;
	for (item = copy; item; item = rest) {
		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		if (options->pattern_count == MAX_PATTERNS ||
		    chain_order_parse(item, &options->patterns[options->pattern_count]) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--patterns item '%s' is unknown (or too many); use sequential, random, page_local",
				 item);
		options->pattern_count++;
	}
	free(copy);
}

static void pattern_stride_option(void *context, int option, const char *arg)
{
	struct pattern_stride_options *options = context;

	switch (option) {
	case 'f':
		options->footprint = kopts_size(&options->common, "--footprint", arg);
		break;
	case 'P':
		parse_patterns(options, arg);
		break;
	case 'S':
		free(options->strides);
		options->stride_count =
			kopts_u64_list(&options->common, "--strides", arg, 64, 1 << 30, 1, &options->strides);
		break;
	case 'p':
		options->page_policy = latency_page_policy_option(&options->common, arg);
		break;
	case 'T':
		options->threads = kopts_u64(&options->common, "--threads", arg, 1, MAX_THREADS);
		break;
	}
}

static void add_params(struct json *json, const void *context)
{
	const struct pattern_stride_point *point = context;
	const struct pattern_stride_options *options = point->options;

	json_key(json, "footprint_bytes");
	json_uint(json, point->footprint_bytes);
	json_key(json, "footprint_capped");
	json_bool(json, point->capped);
	json_key(json, "threads");
	json_uint(json, options->threads);
	json_key(json, "load_cpus");
	json_array_begin(json);
	for (uint64_t i = 0; i + 1 < options->threads; i++)
		json_int(json, options->load_cpus[i]);
	json_array_end(json);
}

static void *companion_run(void *context)
{
	struct companion *companion = context;
	struct latency_buffer buffer;
	void **cursor;

	if (affinity_pin(companion->cpu) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot pin a companion thread to CPU %d: %s", companion->cpu,
			 strerror(errno));
	latency_prepare(companion->opts, &companion->request, &buffer);
	pthread_barrier_wait(companion->ready);
	cursor = buffer.checkpoints[0];
	while (!atomic_load_explicit(companion->stop, memory_order_relaxed))
		for (int i = 0; i < 256; i++)
			cursor = *cursor;
	companion_sink = cursor;
	latency_release(&buffer);
	return NULL;
}

/* Measures one point with the companions chasing alongside (none with --threads 1). */
static void measure_with_companions(struct latency_session *session, const struct pattern_stride_options *options,
				    const struct latency_request *request, struct pattern_stride_point *point)
{
	size_t count = (size_t)options->threads - 1;
	struct companion *companions;
	pthread_barrier_t ready;
	atomic_int stop = 0;

	if (count == 0) {
		latency_session_point(session, request, add_params, point);
		return;
	}
	companions = calloc(count, sizeof(*companions));
	if (!companions || pthread_barrier_init(&ready, NULL, (unsigned)count + 1) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot set up %zu companion threads", count);
	for (size_t i = 0; i < count; i++) {
		companions[i] = (struct companion){.cpu = options->load_cpus[i], .opts = &options->common,
						   .request = *request, .ready = &ready, .stop = &stop};
		if (pthread_create(&companions[i].thread, NULL, companion_run, &companions[i]) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot start companion thread %zu", i + 1);
	}
	pthread_barrier_wait(&ready); /* every companion's chain is built and chasing */
	latency_session_point(session, request, add_params, point);
	atomic_store(&stop, 1);
	for (size_t i = 0; i < count; i++)
		pthread_join(companions[i].thread, NULL);
	pthread_barrier_destroy(&ready);
	free(companions);
}

/* The companions' CPUs: the host's CPU order (one per physical core first), the measuring CPU left out. */
static void choose_load_cpus(struct pattern_stride_options *options)
{
	size_t cores, count, chosen = 0;
	int *order;

	if (options->threads < 2)
		return;
	count = topology_cpu_order(KERNEL, &order, &cores, NULL);
	options->load_cpus = malloc(count * sizeof(*options->load_cpus));
	if (!options->load_cpus)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
	for (size_t i = 0; i < count && chosen < options->threads - 1; i++)
		if (order[i] != options->common.cpu)
			options->load_cpus[chosen++] = order[i];
	free(order);
	if (chosen < options->threads - 1)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--threads %" PRIu64 " needs %" PRIu64 " CPUs besides the measuring one; %zu are allowed",
			 options->threads, options->threads - 1, chosen);
}


static int pattern_stride_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"footprint", required_argument, NULL, 'f'},
		{"patterns", required_argument, NULL, 'P'},
		{"strides", required_argument, NULL, 'S'},
		{"page-policy", required_argument, NULL, 'p'},
		{"threads", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct pattern_stride_options options = {
		.threads = 1,
		.page_policy = PAGE_POLICY_THP,
		.footprint = DEFAULT_FOOTPRINT,
		.patterns = {CHAIN_ORDER_SEQUENTIAL, CHAIN_ORDER_RANDOM, CHAIN_ORDER_PAGE_LOCAL},
		.pattern_count = 3,
	};
	struct latency_session session;
	size_t count;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, pattern_stride_help);
	kopts_parse(&options.common, argc, argv, "f:P:S:p:T:", long_options, pattern_stride_option,
		    &options);
	if (!options.strides) {
		static const uint64_t defaults[] = {64, 256, 1024, 4096};

		options.strides = malloc(sizeof(defaults));
		if (!options.strides)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		memcpy(options.strides, defaults, sizeof(defaults));
		options.stride_count = 4;
	}
	if (options.footprint < 128 || options.footprint % 64)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--footprint %" PRIu64 " is not a multiple of 64 bytes of at least 128", options.footprint);
	for (size_t i = 0; i < options.stride_count; i++) {
		if (options.strides[i] % 64)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--strides item %" PRIu64 " is not a multiple of the 64-byte line", options.strides[i]);
		if (options.common.max_bytes / options.strides[i] < 2)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "stride %" PRIu64 " leaves fewer than 2 lines under --max-bytes; lower it", options.strides[i]);
	}

	choose_load_cpus(&options);
	count = options.pattern_count * options.stride_count;
	latency_session_open(&session, &options.common, count);
	while (latency_session_next(&session)) {
		size_t index = session.sweep.point;
		uint64_t stride = options.strides[index % options.stride_count];
		uint64_t lines = options.footprint / 64;
		struct pattern_stride_point point = {.options = &options};
		uint64_t cap = options.common.max_bytes / options.threads; /* every thread has a buffer */
		struct latency_request request = {
			.stride_bytes = stride,
			.order = options.patterns[index / options.stride_count],
			.page_policy = options.page_policy,
			.walk = LATENCY_WALK_READ,
			.chains = 1,
		};

		if (lines > cap / stride) {
			lines = cap / stride;
			point.capped = 1;
		}
		if (lines < 2)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "stride %" PRIu64 " leaves fewer than 2 lines per thread under "
				 "--max-bytes; lower --threads or raise --max-bytes", stride);
		request.span_bytes = lines * stride;
		point.footprint_bytes = lines * 64;
		measure_with_companions(&session, &options, &request, &point);
	}
	latency_session_close(&session);
	free(options.load_cpus);
	free(options.strides);
	return CLI_EXIT_OK;
}

const struct kernel_spec pattern_stride_kernel = {
	.name = "pattern_stride",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "DRAM latency per access pattern (sequential/random/page-local) and stride",
	.run = pattern_stride_run,
	.print_help = pattern_stride_help,
};
