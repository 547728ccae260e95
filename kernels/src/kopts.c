/* Shared kernel options; see kopts.h. */
#include "kopts.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "cli.h"
#include "meminfo.h"
#include "rng.h"
#include "sampler.h"
#include "sizes.h"

#define COMMON_SHORT "n:t:c:r:Oe:o:HM:h"
#define ORDER_RNG_STREAM 0x6f72646572u
/* Long-only shared options: values above any character. */
enum {
	OPTION_TARGET_CI = 0x100,
	OPTION_MAX_POINT_SECONDS,
	OPTION_ATTEMPT,
	OPTION_TEST_DRIFT,
	OPTION_TRIES,
	OPTION_TEST_UNSETTLED,
	OPTION_MEM_NODE,
	OPTION_MAX_REQUEUES,
	OPTION_BANK_S,
};
#define MAX_MEM_NODE 1023
#define DEFAULT_MAX_POINT_SECONDS 10.0

static const struct option common_long[] = {
	{"samples", required_argument, NULL, 'n'},
	{"min-sample-ms", required_argument, NULL, 't'},
	{"cpu", required_argument, NULL, 'c'},
	{"seed", required_argument, NULL, 'r'},
	{"ordered", no_argument, NULL, 'O'},
	{"experiment", required_argument, NULL, 'e'},
	{"output", required_argument, NULL, 'o'},
	{"human", no_argument, NULL, 'H'},
	{"max-bytes", required_argument, NULL, 'M'},
	{"help", no_argument, NULL, 'h'},
	{"target-ci", required_argument, NULL, OPTION_TARGET_CI},
	{"max-point-seconds", required_argument, NULL, OPTION_MAX_POINT_SECONDS},
	{"attempt", required_argument, NULL, OPTION_ATTEMPT},
	{"test-drift", no_argument, NULL, OPTION_TEST_DRIFT},
	{"tries", required_argument, NULL, OPTION_TRIES},
	{"test-unsettled", no_argument, NULL, OPTION_TEST_UNSETTLED},
	{"mem-node", required_argument, NULL, OPTION_MEM_NODE},
	{"max-requeues", required_argument, NULL, OPTION_MAX_REQUEUES},
	{"bank-s", required_argument, NULL, OPTION_BANK_S},
};
#define COMMON_COUNT (sizeof(common_long) / sizeof(common_long[0]))

void kopts_init(struct kopts *opts, const char *kernel, const char *experiment,
		void (*help)(FILE *out))
{
	memset(opts, 0, sizeof(*opts));
	opts->kernel = kernel;
	opts->help = help;
	opts->samples = 11;
	opts->min_sample_ms = 10.0;
	opts->max_point_s = DEFAULT_MAX_POINT_SECONDS;
	opts->attempt = 1;
	opts->max_requeues = UINT64_MAX;
	opts->tries = KOPTS_DEFAULT_TRIES;
	opts->cpu = -1;
	opts->mem_node = -1;
	opts->experiment = experiment;
}

uint64_t kopts_size(const struct kopts *opts, const char *option, const char *text)
{
	uint64_t bytes;
	const char *error = size_parse(text, &bytes);

	if (error)
		cli_fail(CLI_EXIT_USAGE, opts->kernel, "%s '%s' %s; see '%s %s --help'", option, text,
			 error, CLI_PROGRAM, opts->kernel);
	return bytes;
}

uint64_t kopts_u64(const struct kopts *opts, const char *option, const char *text, uint64_t min,
		   uint64_t max)
{
	uint64_t value;

	if (cli_parse_u64(text, min, max, &value) != 0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel,
			 "%s '%s' is not a whole number from %" PRIu64 " to %" PRIu64 "; see '%s %s --help'",
			 option, text, min, max, CLI_PROGRAM, opts->kernel);
	return value;
}

size_t kopts_u64_list(const struct kopts *opts, const char *option, const char *text, uint64_t min,
		      uint64_t max, int sizes, uint64_t **values)
{
	size_t count = 1, used = 0;
	char *copy = strdup(text), *item, *rest;

	for (const char *c = text; *c; c++)
		count += *c == ',';
	*values = malloc(count * sizeof(**values));
	if (!copy || !*values)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory parsing %s", option);
	for (item = copy; item; item = rest) {
		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		if (*item == '\0')
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "%s '%s' has an empty item; separate items with single commas",
				 option, text);
		(*values)[used] = sizes ? kopts_size(opts, option, item) : kopts_u64(opts, option, item, 0, UINT64_MAX);
		if ((*values)[used] < min || (*values)[used] > max)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "%s item '%s' is outside %" PRIu64 "..%" PRIu64 "; see '%s %s --help'", option,
				 item, min, max, CLI_PROGRAM, opts->kernel);
		used++;
	}
	free(copy);
	return used;
}

static void common_option(struct kopts *opts, int option, const char *arg)
{
	switch (option) {
	case 'n':
		opts->samples = kopts_u64(opts, "--samples", arg, 1, 100000);
		break;
	case 't':
		if (cli_parse_double(arg, 0.0, 600000.0, &opts->min_sample_ms) != 0 ||
		    opts->min_sample_ms <= 0.0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--min-sample-ms '%s' is not a positive number of milliseconds (at most 600000)",
				 arg);
		break;
	case 'c': {
		uint64_t cpu;

		if (cli_parse_u64(arg, 0, 1u << 20, &cpu) != 0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--cpu '%s' is not a CPU number; use one listed by 'nproc --all' or lscpu",
				 arg);
		if (!affinity_cpu_allowed((int)cpu))
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--cpu %s is not a CPU this process may run on; pick one from 'taskset -pc $$'",
				 arg);
		opts->cpu = (int)cpu;
		break;
	}
	case 'r':
		opts->seed = kopts_u64(opts, "--seed", arg, 0, UINT64_MAX);
		opts->have_seed = 1;
		break;
	case 'O':
		opts->ordered = 1;
		break;
	case 'e':
		if (arg[0] == '\0')
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "--experiment is empty; give a label");
		opts->experiment = arg;
		break;
	case 'o':
		if (arg[0] == '\0')
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "--output is empty; give a file path");
		opts->output_path = arg;
		break;
	case 'H':
		opts->human = 1;
		break;
	case 'M':
		opts->max_bytes = kopts_size(opts, "--max-bytes", arg);
		opts->have_max_bytes = 1;
		break;
	case 'h':
		opts->help(stdout);
		cli_exit(CLI_EXIT_OK);
	case OPTION_TARGET_CI:
		if (cli_parse_double(arg, 0.0, 1.0, &opts->target_rel) != 0 || opts->target_rel <= 0.0 ||
		    opts->target_rel >= 1.0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--target-ci '%s' is not a share of the median between 0 and 1 (e.g. 0.01 for 1%%)",
				 arg);
		break;
	case OPTION_MAX_POINT_SECONDS:
		if (cli_parse_double(arg, 0.0, 86400.0, &opts->max_point_s) != 0 || opts->max_point_s <= 0.0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--max-point-seconds '%s' is not a positive number of seconds (at most 86400)", arg);
		opts->have_max_point_s = 1;
		break;
	case OPTION_ATTEMPT:
		opts->attempt = (unsigned)kopts_u64(opts, "--attempt", arg, 1, 2);
		break;
	case OPTION_MAX_REQUEUES:
		opts->max_requeues = kopts_u64(opts, "--max-requeues", arg, 0, 1000000);
		break;
	case OPTION_BANK_S:
		if (cli_parse_double(arg, 0.0, 86400.0, &opts->bank_s) != 0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--bank-s '%s' is not a number of seconds from 0 to 86400", arg);
		opts->have_bank_s = 1;
		break;
	case OPTION_TEST_DRIFT:
		opts->test_drift = 1;
		break;
	case OPTION_TRIES:
		opts->tries = (unsigned)kopts_u64(opts, "--tries", arg, 1, KOPTS_MAX_TRIES);
		break;
	case OPTION_TEST_UNSETTLED:
		opts->test_unsettled = 1;
		break;
	case OPTION_MEM_NODE: {
		char path[64];

		opts->mem_node = (int)kopts_u64(opts, "--mem-node", arg, 0, MAX_MEM_NODE);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", opts->mem_node);
		if (access(path, F_OK) != 0)
			cli_fail(CLI_EXIT_USAGE, opts->kernel,
				 "--mem-node %d: this host has no NUMA node %d (no %s); see 'numactl --hardware'",
				 opts->mem_node, opts->mem_node, path);
		break;
	}
	}
}

/* Every page this process maps from now on, in this thread and the threads it
 * starts, comes from node mem_node only (MPOL_BIND: strict, no fallback to
 * another node), so a point's memory is where the record says. */
static void bind_memory(const struct kopts *opts)
{
	unsigned long mask[(MAX_MEM_NODE + 1) / (8 * sizeof(unsigned long))] = {0};
	const unsigned long bits = 8 * sizeof(unsigned long);

	mask[(unsigned long)opts->mem_node / bits] |= 1UL << ((unsigned long)opts->mem_node % bits);
	if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, (unsigned long)MAX_MEM_NODE + 2) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "cannot bind memory to NUMA node %d: %s", opts->mem_node,
			 strerror(errno));
}

static uint64_t seed_from_clock(void)
{
	struct timespec now;
	uint64_t mix;

	clock_gettime(CLOCK_REALTIME, &now);
	mix = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	mix ^= (uint64_t)getpid() << 32;
	/* 53 bits: exact as a JSON number in any reader, doubles included. */
	return rng_splitmix64(&mix) & ((UINT64_C(1) << 53) - 1);
}

void kopts_parse(struct kopts *opts, int argc, char **argv, const char *specific_short,
		 const struct option *specific_long, kopts_handler handle, void *context)
{
	size_t specific_count = 0, short_length;
	struct option *long_options;
	char *short_options;
	int option;

	while (specific_long && specific_long[specific_count].name)
		specific_count++;
	long_options = calloc(specific_count + COMMON_COUNT + 1, sizeof(*long_options));
	short_length = 1 + strlen(specific_short ? specific_short : "") + strlen(COMMON_SHORT) + 1;
	short_options = malloc(short_length);
	if (!long_options || !short_options)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory parsing arguments");
	if (specific_count)
		memcpy(long_options, specific_long, specific_count * sizeof(*long_options));
	memcpy(long_options + specific_count, common_long, sizeof(common_long));
	snprintf(short_options, short_length, ":%s%s", specific_short ? specific_short : "",
		 COMMON_SHORT);

	opterr = 0; /* our own one-line messages instead of getopt's */
	optind = 1;
	while ((option = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		if (option == ':')
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "option '%s' needs a value; see '%s %s --help'",
				 argv[optind - 1], CLI_PROGRAM, opts->kernel);
		if (option == '?') {
			if (optopt)
				cli_fail(CLI_EXIT_USAGE, opts->kernel,
					 "unknown option '-%c'; see '%s %s --help'", optopt, CLI_PROGRAM,
					 opts->kernel);
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "unknown option '%s'; see '%s %s --help'",
				 argv[optind - 1], CLI_PROGRAM, opts->kernel);
		}
		if (option >= OPTION_TARGET_CI || strchr(COMMON_SHORT, option))
			common_option(opts, option, optarg);
		else
			handle(context, option, optarg);
	}
	if (optind < argc)
		cli_fail(CLI_EXIT_USAGE, opts->kernel, "unexpected argument '%s'; see '%s %s --help'",
			 argv[optind], CLI_PROGRAM, opts->kernel);
	free(long_options);
	free(short_options);
	if (opts->have_max_point_s && opts->target_rel == 0.0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel,
			 "--max-point-seconds caps adaptive sampling; give --target-ci too, or leave it out for a fixed --samples");
	if (opts->have_bank_s && opts->target_rel == 0.0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel,
			 "--bank-s seeds the time bank of adaptive sampling; give --target-ci too, or leave it out for a fixed --samples");
	if (opts->target_rel > 0.0)
		sampler_bank_open(opts->bank_s);

	if (opts->mem_node >= 0)
		bind_memory(opts);
	if (!opts->have_seed)
		opts->seed = seed_from_clock();
	if (!opts->have_max_bytes) {
		uint64_t available;

		if (meminfo_available_bytes(&available) == 0) {
			opts->max_bytes = available / 10 * 8;
		} else {
			fprintf(stderr, "%s: warning: cannot read MemAvailable from /proc/meminfo; "
					"no default --max-bytes limit\n", opts->kernel);
			opts->max_bytes = UINT64_MAX;
		}
	}
}

void kopts_check_bytes(const struct kopts *opts, uint64_t bytes, const char *what)
{
	char size[32], limit[32];

	if (bytes <= opts->max_bytes)
		return;
	size_format(bytes, size, sizeof(size));
	size_format(opts->max_bytes, limit, sizeof(limit));
	cli_fail(CLI_EXIT_USAGE, opts->kernel,
		 "%s of %s exceeds the limit of %s (--max-bytes; default 80%% of MemAvailable); use a smaller size or raise --max-bytes",
		 what, size, limit);
}

void kopts_pin(const struct kopts *opts)
{
	if (opts->cpu >= 0 && affinity_pin(opts->cpu) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "cannot pin to CPU %d: %s", opts->cpu,
			 strerror(errno));
}

size_t *kopts_order(const struct kopts *opts, size_t count)
{
	size_t *order = malloc((count ? count : 1) * sizeof(*order));
	struct rng rng;

	if (!order)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory planning the run");
	for (size_t i = 0; i < count; i++)
		order[i] = i;
	if (opts->ordered || count < 2)
		return order;
	rng_seed(&rng, opts->seed, ORDER_RNG_STREAM);
	for (size_t i = count - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(&rng, i + 1);
		size_t swap = order[i];

		order[i] = order[j];
		order[j] = swap;
	}
	return order;
}

void kopts_help(FILE *out, const struct kopts *defaults)
{
	fprintf(out,
		"Shared options:\n"
		"  -n, --samples N         samples per point, every one kept (default %" PRIu64 ");\n"
		"                          with --target-ci the minimum\n"
		"      --target-ci R       adaptive: after --samples, keep sampling a point until\n"
		"                          the half-width of its median's 95%% confidence\n"
		"                          interval (order statistics) is at most R x median,\n"
		"                          e.g. 0.01 (default: a fixed --samples)\n"
		"      --max-point-seconds S  with --target-ci: stop sampling a point after S\n"
		"                          seconds of samples (default %g); a point that stops\n"
		"                          there while its samples drift is measured again once\n"
		"                          after the other points (context.precision says so)\n"
		"      --attempt N         1, or 2 for a point measured again (re-queued by the\n"
		"                          caller); a second attempt is never re-queued\n"
		"      --max-requeues N    measure at most N points of this process again (the\n"
		"                          plan prices that many); a later drifting point is\n"
		"                          recorded as drifting, not measured again (default: any)\n"
		"      --bank-s S          with --target-ci: seconds of sampling that earlier\n"
		"                          processes of the experiment were priced for and did\n"
		"                          not use; they seed this process's time bank (a\n"
		"                          point's cap grows by its share, at most 2x\n"
		"                          --max-point-seconds more); what is left at the end\n"
		"                          is reported on stderr under\n"
		"                          FLEETSCOPE_KERNELS_EXIT_NOTE=1 as\n"
		"                          'fleetscope-kernels: bank left S s' (default 0)\n"
		"      --test-drift        tests only: every point counts as drifting\n"
		"      --tries N           a latency point whose samples are unsettled (MAD /\n"
		"                          median > 0.15, two groups, or the L1 canary moved by\n"
		"                          more than 1.3x across it) is measured again, at most\n"
		"                          N tries in all, each recorded in context.tries; the\n"
		"                          last stands (1..%d, default %d; 1: never again)\n"
		"      --test-unsettled    tests only: every try counts as unsettled\n"
		"  -t, --min-sample-ms MS  calibrate each sample to take at least MS\n"
		"                          milliseconds (default %g; decimals allowed)\n"
		"  -c, --cpu N             pin the measuring thread to CPU N (default: not\n"
		"                          pinned, cpu: null)\n"
		"      --mem-node N        take every page from NUMA node N only\n"
		"                          (set_mempolicy MPOL_BIND; params mem_node, cpu_node)\n"
		"  -r, --seed N            seed for the point order and every random layout,\n"
		"                          0..2^64-1 (default: from the clock; always recorded)\n"
		"  -O, --ordered           measure points in the order given instead of a\n"
		"                          seeded random order\n"
		"  -M, --max-bytes SIZE    refuse any buffer above SIZE\n"
		"                          (default: 80%% of MemAvailable in /proc/meminfo)\n"
		"  -e, --experiment NAME   experiment label written to each record\n"
		"                          (default %s)\n"
		"  -o, --output FILE       append to FILE (created if missing) instead of\n"
		"                          writing to stdout\n"
		"  -H, --human             a table for people instead of JSON lines\n"
		"  -h, --help              show this help\n"
		"\n"
		"Exit status: 0 success; 1 the host refused memory, a thread or output;\n"
		"2 invalid arguments (nothing measured, nothing on stdout); 3 a self-check\n"
		"failed; 4 the host lacks what the kernel measures (smt, aio: the reason on\n"
		"stderr); 5 the command 'workload' runs failed.\n",
		defaults->samples, defaults->max_point_s, KOPTS_MAX_TRIES, KOPTS_DEFAULT_TRIES,
		defaults->min_sample_ms, defaults->experiment);
}
