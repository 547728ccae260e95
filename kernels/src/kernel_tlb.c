/* tlb: the cost of address translation, swept over the number of pages
 * touched. For each page count N, a TLB chain puts one cache line on each of
 * N pages and links them into one random cycle, so every load lands on a
 * different page; a control chain links the same number of lines packed into
 * a few pages. The two are timed interleaved (ABAB), and the paired
 * difference is the translation cost: it steps up where N outgrows the L1
 * DTLB, again past the L2 TLB, and then plateaus at the page-walk cost.
 * Method: docs/methods.md, "TLB" and "Statistics". */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffers.h"
#include "canary.h"
#include "chain.h"
#include "cli.h"
#include "coreclock.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "rng.h"
#include "sampler.h"
#include "sizes.h"
#include "stats.h"
#include "timer.h"

#define KERNEL "tlb"
#define DEFAULT_EXPERIMENT "tlb"
#define DEFAULT_PER_OCTAVE 4
#define MIN_PAGES 2                       /* a cycle needs two lines */
#define MAX_PAGES (UINT64_C(1) << 32)     /* keeps N x page_bytes far from overflow */
#define MAX_STRIDE_BYTES (UINT64_C(1) << 30) /* N x stride stays below 2^62 */
#define CHAIN_RNG_STREAM 0x746c620000000000u
#define SEE_HELP "see '" CLI_PROGRAM " tlb --help'"

enum tlb_chain_kind {
	TLB_CHAIN_TLB,     /* one line per page */
	TLB_CHAIN_CONTROL, /* the same number of lines, packed */
};

static const char *const chain_names[] = {"tlb", "control"};

struct tlb_options {
	struct kopts common;
	uint64_t *pages; /* in the order given (or swept), before shuffling */
	size_t page_count;
	uint64_t min_pages, max_pages, per_octave;
	int have_min_pages, have_max_pages, have_per_octave;
	enum page_policy page_policy;
	uint64_t page_bytes;  /* the page size of the policy */
	uint64_t stride_bytes; /* --page-stride: the distance between the TLB chain's lines (a multiple of
				  page_bytes; page_bytes by default): the pages between are never touched */
};

/* One of the two chains of a point. */
struct tlb_chain {
	enum tlb_chain_kind kind;
	struct buffer buffer;
	uint64_t span_bytes; /* bytes the chain spans: working_set_bytes */
	uint64_t huge_bytes_granted;
	int huge_granted;
	void *start, *cursor;
	uint64_t rounds;
	uint64_t accesses_per_sample;
	double *samples;
};

static void tlb_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, tlb_help);
	fprintf(out,
		"Usage: %s tlb (--pages LIST | --min-pages N --max-pages N [--per-octave K])\n"
		"              [--page-size 4k|thp|hugetlb] [OPTIONS]\n"
		"\n"
		"Address-translation cost versus the number of pages touched. For each page\n"
		"count N two pointer chases are timed, interleaved sample by sample (ABAB):\n"
		"  tlb      one 64-byte line on each of N pages (page i's line at offset\n"
		"           (i x 64) mod page_bytes, so it shares L1 sets with the control),\n"
		"           all N lines in ONE random cycle (Sattolo): every load is on a\n"
		"           different page;\n"
		"  control  the same N lines packed contiguously (N x 64 bytes, same page\n"
		"           size), also one random cycle.\n"
		"Both touch N lines, so their caching is alike; the paired difference\n"
		"(tlb - control, per sample) is what translation costs. It steps where N\n"
		"outgrows the L1 DTLB, rises again past the L2 TLB and then plateaus at the\n"
		"page-walk cost. Each chain is self-checked to be one cycle of N lines\n"
		"(which also warms it), calibrated to --min-sample-ms per sample, and every\n"
		"raw sample is kept. Page counts run in a seeded random order; a 4 KiB (L1)\n"
		"canary chase is timed before and after each point.\n"
		"\n"
		"Page counts (one of the two forms is required; N >= 2):\n"
		"  -p, --pages LIST        comma-separated page counts, e.g. 8,16,32,64\n"
		"  -m, --min-pages N       geometric sweep from N pages ...\n"
		"  -x, --max-pages N       ... up to N pages (both required for a sweep)\n"
		"  -k, --per-octave K      sweep points per doubling (default %d); counts are\n"
		"                          rounded to whole pages and duplicates dropped\n"
		"  -s, --page-size P       one per process (default 4k):\n"
		"                          4k: madvise(MADV_NOHUGEPAGE), base pages (4096 B);\n"
		"                          thp: madvise(MADV_HUGEPAGE), pages 2 MiB apart;\n"
		"                          hugetlb: mmap(MAP_HUGETLB | MAP_HUGE_2MB), 2 MiB\n"
		"                          pages from the reserved pool. The TLB chain maps\n"
		"                          N x page size bytes. The grant is measured from\n"
		"                          /proc/self/smaps, never assumed; thp not granted\n"
		"                          is measured anyway, with a warning. hugetlb checks\n"
		"                          HugePages_Free in /proc/meminfo first and exits 1\n"
		"                          if the pool is short: raise\n"
		"                          /proc/sys/vm/nr_hugepages (the fleetscope tuning\n"
		"                          role reserves them)\n"
		"  -S, --page-stride SIZE  bytes between the TLB chain's lines, a multiple of\n"
		"                          the page size up to 1g (default: one page): with\n"
		"                          4k pages, 16k puts a line on every fourth page\n"
		"                          (the pages between are never touched, so a stride\n"
		"                          sweep shows the TLB's set indexing); memory taken\n"
		"                          stays N pages\n"
		"\n",
		CLI_PROGRAM, DEFAULT_PER_OCTAVE);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Each page count gives TWO JSON lines, identical in shape, params.chain\n"
		"\"tlb\" then \"control\":\n"
		"  schema_version, experiment, kernel (\"tlb\"), metric (\"latency\"), unit (\"ns\"),\n"
		"  params {pages, page_bytes, page_stride_bytes, page_size (\"4k\"|\"thp\"|\"hugetlb\"), chain,\n"
		"          working_set_bytes (bytes the chain spans), lines_touched (= pages),\n"
		"          huge_bytes_granted (that chain's buffer, from smaps), huge_granted\n"
		"          (the whole buffer is on 2 MiB pages; false for 4k), cpu,\n"
		"          accesses_per_sample, seed},\n"
		"  samples [ns per load, each sample], summary {min, median, mean, ci95_low,\n"
		"          ci95_high, count},\n"
		"  context {canary_before_ns, canary_after_ns, core_clock_ghz, median_cycles,\n"
		"           wall_s (the whole pair, setup included), order_index (0-based\n"
		"           position of the page count in the measuring order); the tlb\n"
		"           line adds paired_difference_median_ns and\n"
		"           paired_difference_min_ns: median and min over i of\n"
		"           (tlb sample i - control sample i)}.\n"
		"Progress goes to stderr, one line per page count.\n"
		"\n"
		"Examples:\n"
		"  %s tlb --min-pages 16 --max-pages 16384 --per-octave 4 --cpu 0\n"
		"  %s tlb --pages 32,64,72,80,128,2048,4096,8192 --samples 21\n"
		"  %s tlb --pages 16,64,256 --page-size hugetlb --human\n"
		"  %s tlb --min-pages 8 --max-pages 589824 --page-stride 64k --cpu 0\n",
		CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM);
}

static void tlb_option(void *context, int option, const char *arg)
{
	struct tlb_options *options = context;

	switch (option) {
	case 'p':
		free(options->pages);
		options->page_count = kopts_u64_list(&options->common, "--pages", arg, 0, MAX_PAGES, 0,
						     &options->pages);
		break;
	case 'm':
		options->min_pages = kopts_u64(&options->common, "--min-pages", arg, 0, MAX_PAGES);
		options->have_min_pages = 1;
		break;
	case 'x':
		options->max_pages = kopts_u64(&options->common, "--max-pages", arg, 0, MAX_PAGES);
		options->have_max_pages = 1;
		break;
	case 'k':
		options->per_octave = kopts_u64(&options->common, "--per-octave", arg, 1, 64);
		options->have_per_octave = 1;
		break;
	case 'S':
		options->stride_bytes = kopts_size(&options->common, "--page-stride", arg);
		break;
	case 's':
		if (page_policy_parse(arg, &options->page_policy) != 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--page-size '%s' is unknown; use 4k, thp or hugetlb", arg);
		break;
	}
}

static void parse_options(int argc, char **argv, struct tlb_options *options)
{
	static const struct option long_options[] = {
		{"pages", required_argument, NULL, 'p'},
		{"min-pages", required_argument, NULL, 'm'},
		{"max-pages", required_argument, NULL, 'x'},
		{"per-octave", required_argument, NULL, 'k'},
		{"page-size", required_argument, NULL, 's'},
		{"page-stride", required_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};

	memset(options, 0, sizeof(*options));
	kopts_init(&options->common, KERNEL, DEFAULT_EXPERIMENT, tlb_help);
	options->per_octave = DEFAULT_PER_OCTAVE;
	options->page_policy = PAGE_POLICY_4K;
	kopts_parse(&options->common, argc, argv, "p:m:x:k:s:S:", long_options, tlb_option, options);
}

static void check_page_count(uint64_t pages, const char *option)
{
	if (pages < MIN_PAGES)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "%s %" PRIu64 " is below %d pages: a cycle needs at least two lines; raise it",
			 option, pages, MIN_PAGES);
}

/* Counts min * 2^(i / per_octave) up to max, rounded to whole pages. */
static void build_sweep(struct tlb_options *options)
{
	uint64_t min = options->min_pages, max = options->max_pages;
	size_t steps, count = 0;

	check_page_count(min, "--min-pages");
	if (max < min)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--max-pages %" PRIu64 " is below --min-pages %" PRIu64 "; swap them", max, min);
	steps = (size_t)floor((double)options->per_octave * log2((double)max / (double)min) + 1e-9);
	options->pages = malloc((steps + 1) * sizeof(*options->pages));
	if (!options->pages)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the sweep");
	for (size_t i = 0; i <= steps; i++) {
		uint64_t pages = (uint64_t)llround((double)min * exp2((double)i / (double)options->per_octave));

		if (pages > max)
			pages = max;
		if (count == 0 || pages != options->pages[count - 1])
			options->pages[count++] = pages;
	}
	options->page_count = count;
}

/* Everything that can be wrong with the arguments is found here, before
 * anything is measured or written. */
static void validate_options(struct tlb_options *options)
{
	int sweep = options->have_min_pages || options->have_max_pages;
	char what[96];

	if (options->pages && sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--pages cannot be combined with --min-pages/--max-pages; use one form");
	if (sweep && !(options->have_min_pages && options->have_max_pages))
		cli_fail(CLI_EXIT_USAGE, KERNEL, "a sweep needs both --min-pages and --max-pages; %s",
			 SEE_HELP);
	if (options->have_per_octave && !sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--per-octave applies only to a --min-pages/--max-pages sweep");
	if (!options->pages && !sweep)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "no page counts; give --pages LIST (e.g. 16,64,256,4096) or --min-pages N --max-pages N");
	if (sweep)
		build_sweep(options);

	options->page_bytes = options->page_policy == PAGE_POLICY_4K
				      ? (uint64_t)sysconf(_SC_PAGESIZE)
				      : BUFFER_HUGE_PAGE_BYTES;
	if (!options->stride_bytes)
		options->stride_bytes = options->page_bytes;
	if (options->stride_bytes % options->page_bytes || options->stride_bytes > MAX_STRIDE_BYTES)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "--page-stride %" PRIu64 " must be a multiple of the %s page (%" PRIu64 " B) and at most 1 GiB",
			 options->stride_bytes, page_policy_name(options->page_policy), options->page_bytes);
	for (size_t i = 0; i < options->page_count; i++) {
		check_page_count(options->pages[i], "--pages item");
		/* the pages touched, whatever the stride: the ones between are never mapped in */
		snprintf(what, sizeof(what), "a tlb buffer (%" PRIu64 " pages of %" PRIu64 " B)",
			 options->pages[i], options->page_bytes);
		kopts_check_bytes(&options->common, options->pages[i] * options->page_bytes, what);
	}
}

/* hugetlb pages cannot be faulted in on demand beyond the reserved pool, so
 * the largest point's need is checked against the pool before anything is
 * measured: the TLB buffer plus the control chain's, both mapped at once. */
static void check_hugetlb_pool(const struct tlb_options *options)
{
	uint64_t largest = 0, needed, free_pages;
	const char *knob;

	if (options->page_policy != PAGE_POLICY_HUGETLB)
		return;
	for (size_t i = 0; i < options->page_count; i++)
		if (options->pages[i] > largest)
			largest = options->pages[i];
	needed = largest + (largest * CHAIN_LINE_BYTES + BUFFER_HUGE_PAGE_BYTES - 1) /
				   BUFFER_HUGE_PAGE_BYTES;
	if (buffer_hugetlb_free_pages(&free_pages, &knob) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL,
			 "--page-size hugetlb: cannot read HugePages_Free for 2 MiB pages from /proc/meminfo or /sys/kernel/mm/hugepages; this kernel may lack hugetlbfs");
	if (free_pages < needed)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL,
			 "--page-size hugetlb needs %" PRIu64 " free 2 MiB huge pages (%" PRIu64 " pages for the tlb chain + %" PRIu64 " for the control) but only %" PRIu64 " are free; raise %s (e.g. to %" PRIu64 ") as root, which the fleetscope tuning role does",
			 needed, largest, needed - largest, free_pages, knob, needed);
}

/* Sattolo's algorithm over arbitrary line addresses (chain.c links slots at
 * a fixed stride; the TLB chain's offset inside each page varies): every
 * line points at itself, then for i = n-1 .. 1 swap line i's pointer with
 * that of a line j drawn from [0, i-1]. The result is ONE cycle. */
static void link_random_cycle(void **lines, size_t count, struct rng *rng)
{
	for (size_t i = 0; i < count; i++)
		*(void **)lines[i] = lines[i];
	for (size_t i = count - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(rng, i);
		void *swap = *(void **)lines[i];

		*(void **)lines[i] = *(void **)lines[j];
		*(void **)lines[j] = swap;
	}
}

/* Maps the chain's buffer, measures its grant, links and self-checks the
 * chain (the check is also the warm-up walk). */
static void chain_setup(const struct tlb_options *options, struct tlb_chain *chain, uint64_t pages)
{
	uint64_t page_bytes = options->page_bytes;
	const char *name = chain_names[chain->kind];
	void **lines = malloc(pages * sizeof(*lines));
	char size[32], granted[32];
	struct rng rng;
	size_t steps;
	char *data;

	uint64_t stride_bytes = options->stride_bytes;
	int sparse = chain->kind == TLB_CHAIN_TLB && stride_bytes > page_bytes;

	chain->span_bytes = chain->kind == TLB_CHAIN_TLB ? pages * stride_bytes
							 : pages * CHAIN_LINE_BYTES;
	size_format(chain->span_bytes, size, sizeof(size));
	if (!lines)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning the %s chain of %" PRIu64 " pages",
			 name, pages);
	if ((sparse ? buffer_alloc_sparse(&chain->buffer, chain->span_bytes, options->page_policy, stride_bytes)
		    : buffer_alloc(&chain->buffer, chain->span_bytes, options->page_policy)) != 0) {
		if (options->page_policy == PAGE_POLICY_HUGETLB)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL,
				 "cannot map %s of hugetlb 2 MiB pages for the %s chain: %s; check HugePages_Free in /proc/meminfo and raise /proc/sys/vm/nr_hugepages",
				 size, name, strerror(errno));
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot map %s for the %s chain: %s; use fewer pages",
			 size, name, strerror(errno));
	}

	if (buffer_huge_bytes(&chain->buffer, &chain->huge_bytes_granted) != 0) {
		fprintf(stderr, "%s: warning: no smaps entry for the %s buffer; huge_bytes_granted reported as 0\n",
			KERNEL, name);
		chain->huge_bytes_granted = 0;
	}
	chain->huge_granted = options->page_policy != PAGE_POLICY_4K &&
			      chain->huge_bytes_granted >= chain->buffer.bytes;
	if (options->page_policy != PAGE_POLICY_4K && !chain->huge_granted) {
		size_format(chain->huge_bytes_granted, granted, sizeof(granted));
		size_format(chain->buffer.bytes, size, sizeof(size));
		fprintf(stderr, "%s: warning: page size %s, but only %s of the %s %s buffer is on huge pages; measured anyway, huge_granted false\n",
			KERNEL, page_policy_name(options->page_policy), granted, size, name);
	}

	data = chain->buffer.data;
	for (uint64_t i = 0; i < pages; i++)
		lines[i] = chain->kind == TLB_CHAIN_TLB
				   ? data + i * stride_bytes + (i * CHAIN_LINE_BYTES) % page_bytes
				   : data + i * CHAIN_LINE_BYTES;
	/* Depends only on the seed, the count, the page size and the chain. */
	rng_seed(&rng, options->common.seed,
		 CHAIN_RNG_STREAM ^ pages ^ (stride_bytes << 32) ^ ((uint64_t)chain->kind << 60));
	link_random_cycle(lines, pages, &rng);
	chain->start = chain->cursor = lines[0];
	free(lines);

	steps = chain_cycle_length(chain->start, pages + 1);
	if (steps != pages)
		cli_fail(CLI_EXIT_SELF_CHECK, KERNEL,
			 "self-check failed: the %s chain over %" PRIu64 " pages returns to its start after %zu steps, not %" PRIu64 "; the chain builder is broken, report this",
			 name, pages, steps, pages);
}

struct tlb_session {
	const struct tlb_options *options;
	struct canary canary;
	struct record record;
	double core_clock_ghz;
	struct tlb_chain chains[2];
	double *series[2];      /* chains[k].samples: the pair stops when both reach the target */
	double *differences;
	struct sampler_run run;
	struct sampler_sweep sweep;
};

static void write_record(struct tlb_session *session, const struct tlb_chain *chain,
			 uint64_t pages, double canary_before, double canary_after, double wall_s,
			 const struct summary *difference)
{
	const struct tlb_options *options = session->options;
	struct json *json = &session->record.json;
	char label[96];

	record_begin(&session->record, "latency", "ns");
	json_key(json, "pages");
	json_uint(json, pages);
	json_key(json, "page_bytes");
	json_uint(json, options->page_bytes);
	json_key(json, "page_stride_bytes");
	json_uint(json, options->stride_bytes);
	json_key(json, "page_size");
	json_string(json, page_policy_name(options->page_policy));
	json_key(json, "chain");
	json_string(json, chain_names[chain->kind]);
	json_key(json, "working_set_bytes");
	json_uint(json, chain->span_bytes);
	json_key(json, "lines_touched");
	json_uint(json, pages);
	json_key(json, "huge_bytes_granted");
	json_uint(json, chain->huge_bytes_granted);
	json_key(json, "huge_granted");
	json_bool(json, chain->huge_granted);
	record_run_params(&session->record, chain->accesses_per_sample);
	record_samples(&session->record, chain->samples, session->run.count);
	record_precision(&session->record, &session->run, chain->samples);
	record_clock_context(&session->record, canary_before, canary_after, session->core_clock_ghz,
			     wall_s, session->sweep.position);
	if (chain->kind == TLB_CHAIN_TLB) {
		json_key(json, "paired_difference_median_ns");
		json_double(json, difference->median);
		json_key(json, "paired_difference_min_ns");
		json_double(json, difference->min);
	}
	snprintf(label, sizeof(label), "pages=%" PRIu64 " %s %s", pages,
		 page_policy_name(options->page_policy), chain_names[chain->kind]);
	record_end(&session->record, label);
}

/* One page count: both chains set up, calibrated, then sampled ABAB. */
static void measure_point(struct tlb_session *session, uint64_t pages)
{
	const struct kopts *opts = &session->options->common;
	uint64_t started = timer_now_ns();
	struct tlb_chain *tlb = &session->chains[TLB_CHAIN_TLB];
	struct tlb_chain *control = &session->chains[TLB_CHAIN_CONTROL];
	double canary_before, canary_after, wall_s, medians[2];
	struct summary difference;
	struct sampler_run *run = &session->run;
	char label[64];

	for (int kind = 0; kind < 2; kind++)
		chain_setup(session->options, &session->chains[kind], pages);

	canary_before = canary_read_ns(&session->canary);
	for (int kind = 0; kind < 2; kind++) {
		struct tlb_chain *chain = &session->chains[kind];

		chain->rounds = sampler_calibrate(chain_time_walk_ns, &chain->cursor, opts->min_sample_ms * 1e6);
		chain->accesses_per_sample = chain->rounds * CHAIN_LOADS_PER_ROUND;
	}
	/* Interleaved, so drift and noise hit both chains alike; each pair of
	 * samples gives one difference. */
	sampler_begin(run, opts, session->sweep.attempt, session->series, 2);
	for (; sampler_more(run); run->count++) {
		size_t i = run->count;

		for (int kind = 0; kind < 2; kind++) {
			struct tlb_chain *chain = &session->chains[kind];

			chain->samples[i] = (double)chain_time_walk_ns(&chain->cursor, chain->rounds) /
					    (double)chain->accesses_per_sample;
		}
		session->differences[i] = tlb->samples[i] - control->samples[i];
	}
	canary_after = canary_read_ns(&session->canary);
	if (stats_summarize(session->differences, run->count, &difference) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory summarizing samples");

	for (int kind = 0; kind < 2; kind++)
		buffer_free(&session->chains[kind].buffer);
	wall_s = (double)(timer_now_ns() - started) / 1e9;

	for (int kind = 0; kind < 2; kind++) {
		write_record(session, &session->chains[kind], pages, canary_before, canary_after,
			     wall_s, &difference);
		medians[kind] = session->record.summary.median;
	}
	fprintf(stderr,
		"%s: %zu/%zu pages=%" PRIu64 " page_size=%s tlb=%.4g ns control=%.4g ns diff=%.4g ns (%.3g cycles), %zu samples, %s%s\n",
		KERNEL, session->sweep.position + 1, session->sweep.length, pages,
		page_policy_name(session->options->page_policy), medians[TLB_CHAIN_TLB],
		medians[TLB_CHAIN_CONTROL], difference.median, difference.median * session->core_clock_ghz,
		run->count, sampler_stop_name(run->stop),
		session->options->page_policy != PAGE_POLICY_4K &&
				!(tlb->huge_granted && control->huge_granted)
			? " [huge pages NOT granted]"
			: "");
	snprintf(label, sizeof(label), "pages=%" PRIu64 " %s", pages, page_policy_name(session->options->page_policy));
	sampler_sweep_done(&session->sweep, run, label);
}

static int tlb_run(int argc, char **argv)
{
	struct tlb_options options;
	struct tlb_session session;
	const struct kopts *opts;
	size_t capacity;

	parse_options(argc, argv, &options);
	validate_options(&options);
	check_hugetlb_pool(&options);
	opts = &options.common;
	capacity = sampler_capacity(opts);

	memset(&session, 0, sizeof(session));
	session.options = &options;
	session.chains[TLB_CHAIN_TLB].kind = TLB_CHAIN_TLB;
	session.chains[TLB_CHAIN_CONTROL].kind = TLB_CHAIN_CONTROL;
	kopts_pin(opts);
	session.chains[0].samples = session.series[0] = malloc(capacity * sizeof(double));
	session.chains[1].samples = session.series[1] = malloc(capacity * sizeof(double));
	session.differences = malloc(capacity * sizeof(double));
	if (!session.chains[0].samples || !session.chains[1].samples || !session.differences ||
	    canary_init(&session.canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory setting up");
	session.core_clock_ghz = coreclock_measure_ghz();
	record_open(&session.record, opts);
	fprintf(stderr,
		"%s: %zu page counts x 2 chains, page size %s (%" PRIu64 " B), %s order, seed %" PRIu64 ", core clock %.3f GHz, canary %.3g ns\n",
		KERNEL, options.page_count, page_policy_name(options.page_policy), options.page_bytes,
		opts->ordered ? "given" : "random", opts->seed, session.core_clock_ghz,
		canary_read_ns(&session.canary));

	sampler_sweep_open(&session.sweep, opts, options.page_count);
	while (sampler_sweep_next(&session.sweep))
		measure_point(&session, options.pages[session.sweep.point]);

	sampler_sweep_close(&session.sweep);
	record_close(&session.record);
	canary_free(&session.canary);
	free(session.chains[0].samples);
	free(session.chains[1].samples);
	free(session.differences);
	free(options.pages);
	return CLI_EXIT_OK;
}

const struct kernel_spec tlb_kernel = {
	.name = "tlb",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "translation cost: one line per page vs the same lines packed, paired",
	.run = tlb_run,
	.print_help = tlb_help,
};
