/* bandwidth: GB/s of read, write, copy, triad and read/write mixes, with
 * regular or non-temporal stores, over working sets from L1 to DRAM, in
 * sequential or random order at any line-multiple stride, with or without
 * software prefetch, on 1..N threads placed one per physical core first.
 * Every loop is the bandwidth engine's (include/bw.h); this file turns
 * options into points and points into records. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"
#include "canary.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "sizes.h"
#include "timer.h"
#include "topology.h"

#define KERNEL "bandwidth"
#define DEFAULT_EXPERIMENT "bandwidth"
#define MAX_ITEMS 16
#define DEFAULT_PREFETCH_BLOCKS 16

struct variant {          /* an op, or a mix of R reads and W writes per group */
	enum bw_op op;
	unsigned read_lines, write_lines;
};

struct bandwidth_options {
	struct kopts common;
	struct variant variants[MAX_ITEMS]; /* the ops, then the mixes */
	size_t variant_count, op_count;
	int have_ops;
	struct variant mixes[MAX_ITEMS - 4];
	size_t mix_count;
	enum bw_store stores[2];
	size_t store_count;
	enum bw_pattern patterns[2];
	size_t pattern_count;
	int prefetch[2];
	size_t prefetch_count;
	uint64_t prefetch_blocks;
	uint64_t *sizes, *strides, *threads;
	size_t size_count, stride_count, thread_count;
	int *cpus;
	size_t cpu_count, cores;
	int cpus_given;
	enum bw_isa isa;
	enum page_policy page_policy;
	const char *hw_prefetchers;
	int verify, plan;
};

struct point {
	struct bw_request request;
	uint64_t threads;
};

static void bandwidth_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, bandwidth_help);
	fprintf(out,
		"Usage: %s bandwidth [OPTIONS]\n"
		"\n"
		"Memory bandwidth in GB/s (1e9 bytes/s) counted in 64-byte lines actually\n"
		"moved by the program: a strided block moves one whole line, never stride\n"
		"bytes; copy moves a source and a destination line, triad two sources and a\n"
		"destination. Write-allocate reads of regular stores are not counted (as\n"
		"STREAM); the record gives them as write_allocate_bytes_per_pass.\n"
		"Loops per instruction set, chosen at run time (this CPU runs: %s).\n"
		"\n"
		"Options:\n"
		"  -x, --ops LIST          read,write,copy,triad (default all four; 'none' for\n"
		"                          mixes only). copy and triad run dense and sequential\n"
		"  -m, --mixes LIST        read/write percent pairs, e.g. 100/0,0/100,70/30,50/50:\n"
		"                          R lines read then W lines written per group, the\n"
		"                          ratio reduced (70/30: 7 reads, 3 writes) and exact\n"
		"  -k, --stores LIST       regular,nt (default both; ops that write nothing run\n"
		"                          once, store none)\n"
		"  -s, --sizes LIST        working set per thread, every array together\n"
		"                          (default 32k,256k,256m)\n"
		"  -P, --patterns LIST     sequential,random (default sequential); random visits\n"
		"                          a power-of-two count of blocks in a hashed order\n"
		"  -S, --strides LIST      bytes between blocks, multiples of 64 (default 64)\n"
		"  -T, --threads LIST      thread counts (default 1); t threads run on the first\n"
		"                          t CPUs of the CPU order, each on a buffer of its own\n"
		"  -C, --cpus LIST         the CPU order (default: one CPU per physical core,\n"
		"                          then the SMT siblings; sysfs topology)\n"
		"  -i, --isa NAME          auto (default), scalar (plain C, every CPU), sse2,\n"
		"                          avx2, avx512 (x86), neon, sve (Arm). auto: the\n"
		"                          widest vectors whose L1 read is at least 1.5x the\n"
		"                          next narrower's (a probe of a few ms, recorded in\n"
		"                          context.isa_auto); scalar has no nt stores: such\n"
		"                          points are left out with the reason\n"
		"  -F, --prefetch LIST     none,software (default none): a prefetch for reading\n"
		"                          (x86 prefetcht0, Arm prfm pldl1keep) of the block\n"
		"                          --prefetch-distance blocks ahead\n"
		"  -D, --prefetch-distance N  blocks ahead (default %d)\n"
		"  -W, --hw-prefetchers S  default or disabled: recorded only (the role sets\n"
		"                          the MSRs)\n"
		"  -p, --page-policy P     thp (default) or 4k\n"
		"  -V, --verify            before measuring a point, one pass on a patterned\n"
		"                          buffer: lines read (checksum) and lines written\n"
		"                          (lines changed) must match the accounting, else\n"
		"                          exit 3\n"
		"  -L, --plan              print the CPU order as JSON and exit\n"
		"\n",
		CLI_PROGRAM, bw_isa_available(), DEFAULT_PREFETCH_BLOCKS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: metric bandwidth, unit GB/s, samples = GB/s of all threads together;\n"
		"params op, store, pattern, stride_bytes, read_lines, write_lines,\n"
		"read_percent, isa (the loops that ran), isa_requested, vector_bytes,\n"
		"prefetch, prefetch_distance_blocks,\n"
		"hw_prefetchers, threads, cpus, smt_siblings_used, working_set_bytes (per\n"
		"thread), lines_per_pass and bytes_per_pass (per thread), page_policy,\n"
		"huge_bytes_granted (all threads), cpu, accesses_per_sample (lines per sample,\n"
		"all threads), with --mem-node mem_node and cpu_node (the node every CPU of\n"
		"the point shares, else null), seed; context passes_per_sample,\n"
		"write_allocate_bytes_per_pass, isa_auto (with --isa auto: the choice,\n"
		"its rule and the L1 read GB/s probed per width; else null), canary,\n"
		"core clock, wall_s, order_index\n"
		"(+ verified_lines_read, verified_lines_written with --verify; with\n"
		"--mem-node mem_pages_sampled and mem_pages_on_node: up to 256 pages of\n"
		"each thread's buffer asked where they lie (move_pages); any page off the\n"
		"node exits 3).\n"
		"\n"
		"Example:\n"
		"  %s bandwidth --ops read,triad --sizes 32k,1g --threads 1,2\n",
		CLI_PROGRAM);
}

/* Splits a comma list and hands each item to parse; exits 2 naming option. */
static size_t each_item(const char *option, const char *text, size_t max, void *context,
			int (*parse)(void *context, size_t index, const char *item))
{
	char *copy = strdup(text), *item, *rest;
	size_t count = 0;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing %s", option);
	for (item = copy; item; item = rest) {
		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		if (count == max)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "%s has more than %zu items", option, max);
		if (parse(context, count, item) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "%s item '%s' is not valid; see --help", option, item);
		count++;
	}
	free(copy);
	return count;
}

static int parse_op(void *context, size_t index, const char *item)
{
	struct bandwidth_options *options = context;
	struct variant *variant = &options->variants[index];

	if (strcmp(item, "none") == 0) {
		variant->op = BW_OP_MIX; /* dropped by the caller */
		return 0;
	}
	return bw_op_parse(item, &variant->op) != 0 || variant->op == BW_OP_MIX ? -1 : 0;
}

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b, b = t;
	}
	return a;
}

static int parse_mix(void *context, size_t index, const char *item)
{
	struct variant *variants = context;
	unsigned reads, writes, divisor;
	char tail;

	if (sscanf(item, "%u/%u%c", &reads, &writes, &tail) != 2 || reads + writes != 100)
		return -1;
	divisor = gcd(reads, writes);
	variants[index] = (struct variant){BW_OP_MIX, reads / divisor, writes / divisor};
	return 0;
}

static int parse_store(void *context, size_t index, const char *item)
{
	return bw_store_parse(item, &((enum bw_store *)context)[index]);
}

static int parse_pattern(void *context, size_t index, const char *item)
{
	return bw_pattern_parse(item, &((enum bw_pattern *)context)[index]);
}

static int parse_prefetch(void *context, size_t index, const char *item)
{
	int *prefetch = context;

	if (strcmp(item, "none") != 0 && strcmp(item, "software") != 0)
		return -1;
	prefetch[index] = item[0] == 's';
	return 0;
}

static void bandwidth_option(void *context, int option, const char *arg)
{
	struct bandwidth_options *options = context;
	size_t count;
	char *bad_item = NULL;
	const char *error;

	switch (option) {
	case 'x':
		count = each_item("--ops", arg, 4, options, parse_op);
		options->op_count = 0;
		for (size_t i = 0; i < count; i++) /* 'none' leaves no variant */
			if (options->variants[i].op != BW_OP_MIX)
				options->variants[options->op_count++] = options->variants[i];
		options->have_ops = 1;
		break;
	case 'm':
		options->mix_count = each_item("--mixes", arg, MAX_ITEMS - 4, options->mixes, parse_mix);
		break;
	case 'k':
		options->store_count = each_item("--stores", arg, 2, options->stores, parse_store);
		break;
	case 's':
		free(options->sizes);
		options->size_count = kopts_u64_list(&options->common, "--sizes", arg, 128, UINT64_MAX, 1,
						     &options->sizes);
		break;
	case 'P':
		options->pattern_count = each_item("--patterns", arg, 2, options->patterns, parse_pattern);
		break;
	case 'S':
		free(options->strides);
		options->stride_count = kopts_u64_list(&options->common, "--strides", arg, 64, 1ull << 30, 1,
						       &options->strides);
		for (size_t i = 0; i < options->stride_count; i++)
			if (options->strides[i] % BW_LINE)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--strides item %" PRIu64 " is not a multiple of the 64-byte line",
					 options->strides[i]);
		break;
	case 'T':
		free(options->threads);
		options->thread_count = kopts_u64_list(&options->common, "--threads", arg, 1, CPU_SETSIZE, 0,
						       &options->threads);
		break;
	case 'C':
		free(options->cpus);
		error = topology_cpulist_parse(arg, CPU_SETSIZE - 1, &options->cpus, &options->cpu_count,
					       &bad_item);
		if (error)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpus item '%s': %s", bad_item, error);
		if (options->cpu_count == 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--cpus is empty");
		options->cpus_given = 1;
		break;
	case 'i':
		if (bw_isa_parse(arg, &options->isa) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--isa '%s' is unknown; use %s", arg, bw_isa_known());
		if (!bw_isa_supported(options->isa))
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--isa %s: this CPU runs only %s", arg, bw_isa_available());
		break;
	case 'F':
		options->prefetch_count = each_item("--prefetch", arg, 2, options->prefetch, parse_prefetch);
		break;
	case 'D':
		options->prefetch_blocks = kopts_u64(&options->common, "--prefetch-distance", arg, 1, 1 << 20);
		break;
	case 'W':
		if (strcmp(arg, "default") != 0 && strcmp(arg, "disabled") != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--hw-prefetchers '%s': use default or disabled", arg);
		options->hw_prefetchers = arg;
		break;
	case 'p':
		if (page_policy_parse(arg, &options->page_policy) != 0 || options->page_policy == PAGE_POLICY_HUGETLB)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--page-policy '%s': use thp or 4k", arg);
		break;
	case 'V':
		options->verify = 1;
		break;
	case 'L':
		options->plan = 1;
		break;
	}
}

/* Any two CPUs among the first threads of the order that share a core. */
static int smt_siblings_used(const int *cpus, size_t threads)
{
	int used = 0;

	for (size_t i = 0; i < threads && !used; i++) {
		struct topology_cpu a;

		if (topology_read(cpus[i], &a) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory reading the CPU topology");
		for (size_t j = i + 1; j < threads && !used; j++) {
			struct topology_cpu b;

			if (topology_read(cpus[j], &b) != 0)
				cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory reading the CPU topology");
			used = topology_same_core(&a, &b) == 1;
			topology_free(&b);
		}
		topology_free(&a);
	}
	return used;
}

static void print_plan(const struct bandwidth_options *options)
{
	printf("{\"cpus\": [");
	for (size_t i = 0; i < options->cpu_count; i++)
		printf("%s%d", i ? ", " : "", options->cpus[i]);
	printf("], \"physical_cores\": %zu, \"smt_siblings\": %s}\n", options->cores,
	       options->cpu_count > options->cores ? "true" : "false");
}

/* Every combination the options ask for; copy and triad only where they
 * run (dense, sequential, no prefetch). */
static struct point *plan_points(const struct bandwidth_options *options, size_t *count)
{
	size_t max = options->variant_count * 2 * options->pattern_count * options->stride_count *
		     options->prefetch_count * options->size_count * options->thread_count;
	struct point *points = calloc(max ? max : 1, sizeof(*points));
	size_t n = 0, skipped = 0, no_nt = 0;
	enum bw_isa isa = bw_isa_resolve(options->isa);
	const char *no_nt_reason = bw_isa_no_nt_stores(isa);

	if (!points)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning points");
	for (size_t v = 0; v < options->variant_count; v++) {
		const struct variant *variant = &options->variants[v];
		struct bw_request probe = {.op = variant->op, .read_lines = variant->read_lines,
					   .write_lines = variant->write_lines, .store = BW_STORE_REGULAR};
		size_t stores;

		bw_request_ratio(&probe);
		stores = probe.write_lines ? options->store_count : 1;
		for (size_t st = 0; st < stores; st++)
		for (size_t pa = 0; pa < options->pattern_count; pa++)
		for (size_t sd = 0; sd < options->stride_count; sd++)
		for (size_t pf = 0; pf < options->prefetch_count; pf++)
		for (size_t sz = 0; sz < options->size_count; sz++)
		for (size_t th = 0; th < options->thread_count; th++) {
			struct point *point = &points[n];
			const char *problem;

			point->request = probe;
			point->request.store = probe.write_lines ? options->stores[st] : BW_STORE_NONE;
			point->request.isa = isa;
			point->request.pattern = options->patterns[pa];
			point->request.stride_bytes = options->strides[sd];
			point->request.software_prefetch = options->prefetch[pf];
			point->request.prefetch_blocks = options->prefetch_blocks;
			point->request.working_set_bytes = options->sizes[sz];
			point->request.page_policy = options->page_policy;
			point->request.seed = options->common.seed;
			point->threads = options->threads[th];
			if (point->request.store == BW_STORE_NT && no_nt_reason) {
				no_nt++;
				continue;
			}
			problem = bw_request_check(&point->request);
			if (problem && (variant->op == BW_OP_COPY || variant->op == BW_OP_TRIAD) &&
			    strncmp(problem, "copy and triad", 14) == 0) {
				skipped++;
				continue;
			}
			if (problem)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "%s %s at %" PRIu64 " bytes, stride %" PRIu64 ": %s",
					 bw_op_name(variant->op), bw_pattern_name(options->patterns[pa]),
					 options->sizes[sz], options->strides[sd], problem);
			if (point->threads > options->cpu_count)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "--threads %" PRIu64 " but the CPU order has only %zu CPUs", point->threads,
					 options->cpu_count);
			if (options->sizes[sz] > options->common.max_bytes / point->threads)
				cli_fail(CLI_EXIT_USAGE, KERNEL,
					 "%" PRIu64 " threads x %" PRIu64 " bytes is above --max-bytes %" PRIu64,
					 point->threads, options->sizes[sz], options->common.max_bytes);
			n++;
		}
	}
	if (skipped)
		fprintf(stderr, "%s: %zu copy/triad combinations left out: they run dense and sequential only\n",
			KERNEL, skipped);
	/* "<kernel>: skipped: " lines become the experiment's notes (the kernels role) */
	if (no_nt)
		fprintf(stderr, "%s: skipped: %zu points with non-temporal stores: isa %s: %s\n", KERNEL, no_nt,
			bw_isa_name(isa), no_nt_reason);
	if (n == 0 && no_nt)
		cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "every point asks for non-temporal stores: isa %s: %s",
			 bw_isa_name(isa), no_nt_reason);
	if (n == 0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "no point to measure: give --ops or --mixes");
	*count = n;
	return points;
}

/* One pass on a patterned buffer: the checksum is the lines read, the
 * changed lines the lines written. Exits 3 when either disagrees. */
static void verify_point(const struct point *point, uint64_t *lines_read, uint64_t *lines_written,
			 int *reads_checked)
{
	struct bw_buffer buffer;
	uint64_t checksum;

	if (bw_prepare(&point->request, &buffer) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot map %" PRIu64 " bytes to verify: %s",
			 point->request.working_set_bytes, strerror(errno));
	checksum = bw_pass(&point->request, &buffer);
	*lines_written = bw_count_changed_lines(&point->request, &buffer);
	/* copy and triad read their sources whole: the checksum covers read and mix */
	*reads_checked = point->request.op != BW_OP_COPY && point->request.op != BW_OP_TRIAD;
	*lines_read = *reads_checked ? checksum : buffer.lines_read_per_pass;
	if (*lines_read != buffer.lines_read_per_pass || *lines_written != buffer.lines_written_per_pass)
		cli_fail(CLI_EXIT_SELF_CHECK, KERNEL,
			 "byte accounting self-check failed: %s counts %" PRIu64 " lines read and %" PRIu64
			 " written per pass, one pass read %" PRIu64 " and changed %" PRIu64,
			 bw_op_name(point->request.op), buffer.lines_read_per_pass, buffer.lines_written_per_pass,
			 *lines_read, *lines_written);
	bw_release(&buffer);
}

static void write_record(struct record *record, const struct bandwidth_options *options, const struct point *point,
			 const struct bw_team_result *result, const struct sampler_run *run, double canary_before,
			 double canary_after, double core_clock_ghz, double wall_s, struct sampler_sweep *sweep,
			 const uint64_t *verified)
{
	const struct bw_request *r = &point->request;
	struct json *json = &record->json;
	char size[32], label[160];

	record_begin(record, "bandwidth", "GB/s");
	json_key(json, "op");
	json_string(json, bw_op_name(r->op));
	json_key(json, "store");
	json_string(json, bw_store_name(r->store));
	json_key(json, "pattern");
	json_string(json, bw_pattern_name(r->pattern));
	json_key(json, "stride_bytes");
	json_uint(json, r->stride_bytes);
	json_key(json, "read_lines");
	json_uint(json, r->read_lines);
	json_key(json, "write_lines");
	json_uint(json, r->write_lines);
	json_key(json, "read_percent");
	json_double(json, 100.0 * r->read_lines / (r->read_lines + r->write_lines));
	json_key(json, "isa");
	json_string(json, bw_isa_name(r->isa));
	json_key(json, "isa_requested");
	json_string(json, bw_isa_name(options->isa));
	json_key(json, "vector_bytes");
	json_uint(json, bw_isa_vector_bytes(r->isa));
	json_key(json, "prefetch");
	json_string(json, r->software_prefetch ? "software" : "none");
	json_key(json, "prefetch_distance_blocks");
	if (r->software_prefetch)
		json_uint(json, r->prefetch_blocks);
	else
		json_null(json);
	json_key(json, "hw_prefetchers");
	json_string(json, options->hw_prefetchers);
	json_key(json, "threads");
	json_uint(json, point->threads);
	json_key(json, "cpus");
	json_array_begin(json);
	for (size_t i = 0; i < point->threads; i++)
		json_int(json, options->cpus[i]);
	json_array_end(json);
	json_key(json, "smt_siblings_used");
	json_bool(json, smt_siblings_used(options->cpus, point->threads));
	json_key(json, "working_set_bytes");
	json_uint(json, result->working_set_bytes);
	json_key(json, "lines_per_pass");
	json_uint(json, result->lines_per_pass);
	json_key(json, "bytes_per_pass");
	json_uint(json, result->lines_per_pass * BW_LINE);
	json_key(json, "page_policy");
	json_string(json, page_policy_name(r->page_policy));
	json_key(json, "huge_bytes_granted");
	json_uint(json, result->huge_bytes_granted);
	record->cpus = options->cpus;
	record->cpu_count = point->threads;
	record_run_params(record, result->passes_per_sample * result->lines_per_pass * point->threads);
	record_samples(record, run->series[0], run->count);
	record_precision(record, run, run->series[0]);
	json_key(json, "passes_per_sample");
	json_uint(json, result->passes_per_sample);
	json_key(json, "write_allocate_bytes_per_pass");
	json_uint(json, result->write_allocate_lines_per_pass * BW_LINE);
	bw_isa_context(json, options->isa);
	if (options->common.mem_node >= 0) {
		json_key(json, "mem_pages_sampled");
		json_uint(json, result->mem_pages_sampled);
		json_key(json, "mem_pages_on_node");
		json_uint(json, result->mem_pages_on_node);
	}
	if (verified) {
		json_key(json, "verified_lines_read");
		json_uint(json, verified[0]);
		json_key(json, "verified_lines_written");
		json_uint(json, verified[1]);
	}
	record_clock_context(record, canary_before, canary_after, core_clock_ghz, wall_s, sweep->position);
	size_format(result->working_set_bytes, size, sizeof(size));
	if (r->op == BW_OP_MIX)
		snprintf(label, sizeof(label), "mix %u:%u %s %s %" PRIu64 "B %s x%" PRIu64, r->read_lines,
			 r->write_lines, bw_store_name(r->store), bw_pattern_name(r->pattern), r->stride_bytes, size,
			 point->threads);
	else
		snprintf(label, sizeof(label), "%s %s %s %" PRIu64 "B%s %s x%" PRIu64, bw_op_name(r->op),
			 bw_store_name(r->store), bw_pattern_name(r->pattern), r->stride_bytes,
			 r->software_prefetch ? " swpf" : "", size, point->threads);
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s: %.2f GB/s, %zu samples, %s\n", KERNEL, sweep->position + 1, sweep->length,
		label, record->summary.median, run->count, sampler_stop_name(run->stop));
	sampler_sweep_done(sweep, run, label);
}

static int bandwidth_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"ops", required_argument, NULL, 'x'},
		{"mixes", required_argument, NULL, 'm'},
		{"stores", required_argument, NULL, 'k'},
		{"sizes", required_argument, NULL, 's'},
		{"patterns", required_argument, NULL, 'P'},
		{"strides", required_argument, NULL, 'S'},
		{"threads", required_argument, NULL, 'T'},
		{"cpus", required_argument, NULL, 'C'},
		{"isa", required_argument, NULL, 'i'},
		{"prefetch", required_argument, NULL, 'F'},
		{"prefetch-distance", required_argument, NULL, 'D'},
		{"hw-prefetchers", required_argument, NULL, 'W'},
		{"page-policy", required_argument, NULL, 'p'},
		{"verify", no_argument, NULL, 'V'},
		{"plan", no_argument, NULL, 'L'},
		{NULL, 0, NULL, 0},
	};
	static const uint64_t default_sizes[] = {32 << 10, 256 << 10, 256 << 20};
	static const uint64_t one_stride[] = {64}, one_thread[] = {1};
	struct bandwidth_options options = {
		.variants = {{BW_OP_READ, 0, 0}, {BW_OP_WRITE, 0, 0}, {BW_OP_COPY, 0, 0}, {BW_OP_TRIAD, 0, 0}},
		.op_count = 4,
		.stores = {BW_STORE_REGULAR, BW_STORE_NT},
		.store_count = 2,
		.patterns = {BW_PATTERN_SEQUENTIAL},
		.pattern_count = 1,
		.prefetch = {0},
		.prefetch_count = 1,
		.prefetch_blocks = DEFAULT_PREFETCH_BLOCKS,
		.isa = BW_ISA_AUTO,
		.page_policy = PAGE_POLICY_THP,
		.hw_prefetchers = "default",
	};
	struct record record;
	struct canary canary;
	struct point *points;
	struct sampler_sweep sweep;
	size_t count;
	double *samples, core_clock_ghz;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, bandwidth_help);
	kopts_parse(&options.common, argc, argv, "x:m:k:s:P:S:T:C:i:F:D:W:p:VL", long_options, bandwidth_option,
		    &options);
#define DEFAULT_LIST(field, count_field, values)                                               \
	if (!options.field) {                                                                  \
		options.field = malloc(sizeof(values));                                        \
		if (!options.field)                                                            \
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");                   \
		memcpy(options.field, values, sizeof(values));                                 \
		options.count_field = sizeof(values) / sizeof(*values);                        \
	}
	if (!options.have_ops && options.mix_count) /* --mixes alone: no default ops */
		options.op_count = 0;
	options.variant_count = options.op_count;
	for (size_t i = 0; i < options.mix_count; i++)
		options.variants[options.variant_count++] = options.mixes[i];
	DEFAULT_LIST(sizes, size_count, default_sizes)
	DEFAULT_LIST(strides, stride_count, one_stride)
	DEFAULT_LIST(threads, thread_count, one_thread)
	if (!options.cpus_given) {
		if (options.common.cpu >= 0) {
			options.cpus = malloc(sizeof(*options.cpus));
			if (!options.cpus)
				cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
			options.cpus[0] = options.common.cpu;
			options.cpu_count = options.cores = 1;
		} else {
			options.cpu_count = topology_cpu_order(KERNEL, &options.cpus, &options.cores, NULL);
		}
	} else {
		options.cores = options.cpu_count;
	}
	if (options.plan) {
		print_plan(&options);
		return CLI_EXIT_OK;
	}
	points = plan_points(&options, &count);
	samples = calloc(sampler_capacity(&options.common), sizeof(*samples));
	if (!samples || canary_init(&canary, options.common.seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
	sampler_sweep_open(&sweep, &options.common, count);
	core_clock_ghz = coreclock_measure_ghz();
	record_open(&record, &options.common);
	fprintf(stderr, "%s: %zu points, isa %s, CPU order", KERNEL, count, bw_isa_name(bw_isa_resolve(options.isa)));
	for (size_t i = 0; i < options.cpu_count; i++)
		fprintf(stderr, "%s%d", i ? "," : " ", options.cpus[i]);
	fprintf(stderr, " (%zu physical cores first), seed %" PRIu64 "\n", options.cores, options.common.seed);
	while (sampler_sweep_next(&sweep)) {
		const struct point *point = &points[sweep.point];
		struct sampler_run run;
		struct bw_team_result result;
		uint64_t verified[2], started = timer_now_ns();
		double before, after;
		char error[256];
		int reads_checked = 0;

		if (options.verify)
			verify_point(point, &verified[0], &verified[1], &reads_checked);
		before = canary_read_ns(&canary);
		sampler_begin(&run, &options.common, sweep.attempt, &samples, 1);
		if (bw_team_measure(&point->request, point->threads, options.cpus, options.common.mem_node,
				    options.common.min_sample_ms * 1e6, &run, &result, error, sizeof(error)) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s", error);
		if (result.mem_pages_on_node != result.mem_pages_sampled)
			cli_fail(CLI_EXIT_SELF_CHECK, KERNEL,
				 "memory bound to NUMA node %d, yet %" PRIu64 " of %" PRIu64
				 " sampled pages lie on another node (move_pages)",
				 options.common.mem_node, result.mem_pages_sampled - result.mem_pages_on_node,
				 result.mem_pages_sampled);
		after = canary_read_ns(&canary);
		write_record(&record, &options, point, &result, &run, before, after, core_clock_ghz,
			     (double)(timer_now_ns() - started) / 1e9, &sweep, options.verify ? verified : NULL);
	}
	sampler_sweep_close(&sweep);
	record_close(&record);
	canary_free(&canary);
	free(samples);
	free(points);
	free(options.sizes);
	free(options.strides);
	free(options.threads);
	free(options.cpus);
	return CLI_EXIT_OK;
}

const struct kernel_spec bandwidth_kernel = {
	.name = "bandwidth",
	.experiment = DEFAULT_EXPERIMENT,
	.also_feeds = "stride_bandwidth,rw_mix,thread_sweep,prefetch,numa_matrix",
	.description = "GB/s of read/write/copy/triad and read:write mixes, regular and non-temporal stores, "
		       "over working sets, strides, patterns and threads",
	.run = bandwidth_run,
	.print_help = bandwidth_help,
};
