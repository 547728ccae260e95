/* zero_queue: idle (zero-queue) load-to-use latency of each cache level and
 * of DRAM, at a working set inside each level chosen from the host's own
 * sysfs cache sizes (levels.h), in ns and in measured core cycles. One random
 * pointer chase per level, nothing else running: no queueing anywhere. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "levels.h"
#include "registry.h"
#include "sizes.h"

#define KERNEL "zero_queue"
#define DEFAULT_EXPERIMENT "zero_queue"

struct zero_queue_options {
	struct kopts common;
	struct level_options levels;
};

static void zero_queue_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, zero_queue_help);
	fprintf(out,
		"Usage: %s zero_queue [OPTIONS]\n"
		"\n"
		"Idle load-to-use latency of every cache level and of DRAM. The levels and\n"
		"their sizes come from this host's sysfs (/sys/devices/system/cpu/cpuN/cache,\n"
		"N = --cpu or 0; $FLEETSCOPE_SYSFS_ROOT replaces /sys/devices/system/cpu).\n"
		"Working set per level: half of L1d; for L2 and up the geometric midpoint of\n"
		"the sysfs sizes of the level below and the level; DRAM max(8 x last level,\n"
		"256 MiB). Each is one random pointer chase (as in 'chase'), reported in ns\n"
		"and in cycles of a measured core clock (a dependent-add loop; the TSC is not\n"
		"the core clock). Every record names the level, its sysfs size and the rule.\n"
		"\n"
		"Options:\n",
		CLI_PROGRAM);
	levels_help(out);
	fputc('\n', out);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: as chase's (metric latency, unit ns), with params level,\n"
		"sysfs_size_bytes (null for DRAM) and size_rule added.\n"
		"\n"
		"Example:\n"
		"  %s zero_queue --cpu 0 --samples 11\n",
		CLI_PROGRAM);
}

static void zero_queue_option(void *context, int option, const char *arg)
{
	struct zero_queue_options *options = context;

	levels_option(&options->common, &options->levels, option, arg);
}

static int zero_queue_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		LEVELS_LONG_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	struct zero_queue_options options = {.levels.page_policy = PAGE_POLICY_THP};
	struct level levels[LEVELS_MAX];
	struct latency_session session;
	size_t count;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, zero_queue_help);
	kopts_parse(&options.common, argc, argv, LEVELS_SHORT_OPTIONS, long_options, zero_queue_option,
		    &options);
	count = levels_plan(&options.common, options.levels.dram_bytes, options.levels.only, levels);
	latency_session_open(&session, &options.common, count);
	while (latency_session_next(&session)) {
		const struct level *level = &levels[session.sweep.point];
		struct latency_request request = {
			.span_bytes = level->working_set_bytes,
			.stride_bytes = CHAIN_LINE_BYTES,
			.order = CHAIN_ORDER_RANDOM,
			.page_policy = options.levels.page_policy,
			.walk = LATENCY_WALK_READ,
			.chains = 1,
		};

		latency_session_point(&session, &request, levels_add_params, level);
	}
	latency_session_close(&session);
	return CLI_EXIT_OK;
}

const struct kernel_spec zero_queue_kernel = {
	.name = "zero_queue",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "idle latency of each cache level and DRAM, sizes from this host's sysfs",
	.run = zero_queue_run,
	.print_help = zero_queue_help,
};
