/* mlp: memory-level parallelism. k independent pointer chases walked
 * interleaved over one DRAM-sized random cycle (cursors spaced evenly along
 * it): each chain's loads are still dependent, but loads of different chains
 * can be in flight together. Time per access t(k) falls as k grows until the
 * core runs out of miss buffers; MLP(k) = t(1) / t(k) (computed by the
 * warehouse view from the records). k = 1 is exactly the plain chase. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"
#include "registry.h"

#define KERNEL "mlp"
#define DEFAULT_EXPERIMENT "mlp"
#define DEFAULT_SIZE ((uint64_t)256 << 20)

struct mlp_options {
	struct kopts common;
	enum page_policy page_policy;
	uint64_t size;
	uint64_t *chains;
	size_t chain_count;
	uint64_t repeats;
};

static void mlp_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, mlp_help);
	fprintf(out,
		"Usage: %s mlp [OPTIONS]\n"
		"\n"
		"Memory-level parallelism: k interleaved pointer chases over one random cycle\n"
		"through a DRAM-sized buffer. Reports ns per access for each k; MLP(k) =\n"
		"t(1) / t(k). Every (k, repeat) is a point, all in one seeded random order.\n"
		"\n"
		"Options:\n"
		"  -s, --size SIZE         working set (default 256m): far beyond the last-\n"
		"                          level cache, a multiple of 64 bytes\n"
		"  -k, --chains LIST       chain counts, 1..%d (default 1,2,...,16)\n"
		"  -R, --repeats N         measure every k N times (default 1)\n"
		"  -p, --page-policy P     thp (default) or 4k, as in 'chase'\n"
		"\n",
		CLI_PROGRAM, LATENCY_MAX_CHAINS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: as chase's (metric latency, unit ns = time per access across all\n"
		"chains), params chains = k and repeat added.\n"
		"\n"
		"Example:\n"
		"  %s mlp --size 512m --chains 1,2,4,8,16 --repeats 3 --cpu 0\n",
		CLI_PROGRAM);
}

static void mlp_option(void *context, int option, const char *arg)
{
	struct mlp_options *options = context;

	switch (option) {
	case 's':
		options->size = kopts_size(&options->common, "--size", arg);
		break;
	case 'k':
		free(options->chains);
		options->chain_count = kopts_u64_list(&options->common, "--chains", arg, 1,
						      LATENCY_MAX_CHAINS, 0, &options->chains);
		break;
	case 'R':
		options->repeats = kopts_u64(&options->common, "--repeats", arg, 1, 1000);
		break;
	case 'p':
		options->page_policy = latency_page_policy_option(&options->common, arg);
		break;
	}
}

static void add_repeat(struct json *json, const void *context)
{
	json_key(json, "repeat");
	json_uint(json, *(const uint64_t *)context);
}

static int mlp_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"size", required_argument, NULL, 's'},
		{"chains", required_argument, NULL, 'k'},
		{"repeats", required_argument, NULL, 'R'},
		{"page-policy", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	struct mlp_options options = {.page_policy = PAGE_POLICY_THP, .size = DEFAULT_SIZE, .repeats = 1};
	struct latency_session session;
	struct latency_buffer prepared;
	struct latency_request request = {
		.stride_bytes = CHAIN_LINE_BYTES,
		.order = CHAIN_ORDER_RANDOM,
		.walk = LATENCY_WALK_READ,
		.chains = 1,
	};
	size_t count;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, mlp_help);
	kopts_parse(&options.common, argc, argv, "s:k:R:p:", long_options, mlp_option, &options);
	if (!options.chains) {
		options.chains = malloc(LATENCY_MAX_CHAINS * sizeof(*options.chains));
		if (!options.chains)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		for (size_t k = 0; k < LATENCY_MAX_CHAINS; k++)
			options.chains[k] = k + 1;
		options.chain_count = LATENCY_MAX_CHAINS;
	}
	if (options.size % CHAIN_LINE_BYTES || options.size / CHAIN_LINE_BYTES < 2 * LATENCY_MAX_CHAINS)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--size %" PRIu64 " must be a multiple of 64 bytes and at least %d lines", options.size,
			 2 * LATENCY_MAX_CHAINS);
	kopts_check_bytes(&options.common, options.size, "working set");

	request.span_bytes = options.size;
	request.page_policy = options.page_policy;
	count = options.chain_count * options.repeats;
	latency_session_open(&session, &options.common, count);
	/* One buffer and one chain for every k: the points differ only in how
	 * many cursors walk it. */
	latency_prepare(&options.common, &request, &prepared);
	while (latency_session_next(&session)) {
		uint64_t repeat = session.sweep.point / options.chain_count;

		request.chains = (unsigned)options.chains[session.sweep.point % options.chain_count];
		latency_session_sample(&session, &request, &prepared, add_repeat, &repeat);
	}
	latency_release(&prepared);
	latency_session_close(&session);
	free(options.chains);
	return CLI_EXIT_OK;
}

const struct kernel_spec mlp_kernel = {
	.name = "mlp",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "memory-level parallelism: 1..16 interleaved chases at DRAM size",
	.run = mlp_run,
	.print_help = mlp_help,
};
