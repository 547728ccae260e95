/* alloc_walk: the reference workload. A small program with a known mix of
 * bottlenecks, for the workloads role to profile on every host the way the
 * allocator study profiles its allocator, so every host page shows the
 * method and hosts compare on it:
 *
 *   churn_blocks  allocator churn: free a random live block, allocate one of
 *                 a random small size (16..256 bytes) and write its header
 *                 and payload: time in malloc/free and stores, few misses
 *                 (the study's case A);
 *   link_blocks   thread the live blocks into one list in a random order
 *                 (Sattolo: a single cycle through all of them);
 *   walk_blocks   walk that list: dependent loads scattered over the freed-
 *                 and-reused heap, a miss per block once the live blocks
 *                 outgrow the caches (case B).
 *
 * Each phase is its own function (never inlined), so perf record ranks them
 * and sets their share of the time beside their share of the misses. The
 * walk checks itself: every pass visits each live block once and reads the
 * sequence numbers churn wrote; a mismatch exits 1. One record per phase:
 * ns per operation for each round (--samples rounds). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "rng.h"
#include "timer.h"

#define KERNEL "alloc_walk"
#define DEFAULT_EXPERIMENT "workloads"
#define DEFAULT_LIVE_BYTES ((uint64_t)64 << 20)
#define DEFAULT_WALKS 4
#define MIN_BLOCK 16  /* the header */
#define MAX_BLOCK 256
#define BLOCK_STEP 16
#define MEAN_BLOCK ((MIN_BLOCK + MAX_BLOCK) / 2)

#if defined(__GNUC__) && !defined(__clang__)
#define PHASE __attribute__((noinline, noipa))
#else
#define PHASE __attribute__((noinline))
#endif

struct block {
	struct block *next;
	uint32_t bytes;
	uint32_t sequence;
	unsigned char payload[];
};

struct alloc_walk_options {
	struct kopts common;
	uint64_t live_bytes;
	uint64_t churn_ops; /* 0: twice the live blocks */
	uint64_t walks;
};

/* What the walk's self-check needs; written by churn, read by walk. */
struct heap {
	struct block **slots;
	size_t count;
	uint64_t sequence_sum; /* of the live blocks' sequence numbers */
	uint32_t next_sequence;
};

static volatile uint64_t sink;

static void alloc_walk_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, alloc_walk_help);
	fprintf(out,
		"Usage: %s alloc_walk [OPTIONS]\n"
		"\n"
		"The reference workload the workloads role profiles on every host: allocator\n"
		"churn of small objects (%d..%d bytes) plus a pointer walk over the freed-and-\n"
		"reused blocks, each phase its own function (churn_blocks, link_blocks,\n"
		"walk_blocks) so perf record can rank them. Churn spends its time in malloc,\n"
		"free and stores; the walk misses once the live blocks outgrow the caches.\n"
		"Each round (--samples) churns, links and walks; the walk checks that every\n"
		"pass visits each live block once.\n"
		"\n"
		"Options:\n"
		"  -L, --live-bytes SIZE   bytes of live blocks kept (default 64m); about\n"
		"                          SIZE / %d blocks\n"
		"  -C, --churn-ops N       frees and allocations per round (default: twice\n"
		"                          the live blocks)\n"
		"  -W, --walks N           passes over all live blocks per round (default %d)\n"
		"\n",
		CLI_PROGRAM, MIN_BLOCK, MAX_BLOCK, MEAN_BLOCK, DEFAULT_WALKS);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Records: two per run, metric time_per_op (ns), params {phase: churn | walk,\n"
		"live_bytes, blocks, block_bytes_min, block_bytes_max, churn_ops, walks,\n"
		"cpu, seed}; samples: ns per free+allocate (churn) or per block visited\n"
		"(walk), one per round.\n"
		"\n"
		"Example:\n"
		"  %s alloc_walk --live-bytes 256m --walks 8 --samples 3 --cpu 0\n",
		CLI_PROGRAM);
}

static void alloc_walk_option(void *context, int option, const char *arg)
{
	struct alloc_walk_options *options = context;

	switch (option) {
	case 'L':
		options->live_bytes = kopts_size(&options->common, "--live-bytes", arg);
		break;
	case 'C':
		options->churn_ops = kopts_u64(&options->common, "--churn-ops", arg, 1, UINT64_C(1) << 40);
		break;
	case 'W':
		options->walks = kopts_u64(&options->common, "--walks", arg, 1, 1000000);
		break;
	}
}

static struct block *new_block(struct heap *heap, struct rng *rng)
{
	uint32_t bytes = (uint32_t)(MIN_BLOCK + BLOCK_STEP * rng_bounded(rng, (MAX_BLOCK - MIN_BLOCK) / BLOCK_STEP + 1));
	struct block *block = malloc(bytes);

	if (!block)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory allocating a %" PRIu32 "-byte block", bytes);
	block->next = NULL;
	block->bytes = bytes;
	block->sequence = heap->next_sequence++;
	memset(block->payload, (int)(block->sequence & 0xff), bytes - sizeof(*block));
	heap->sequence_sum += block->sequence;
	return block;
}

/* Frees a random live block and allocates one in its place, `ops` times. */
PHASE static void churn_blocks(struct heap *heap, struct rng *rng, uint64_t ops)
{
	for (uint64_t i = 0; i < ops; i++) {
		size_t slot = (size_t)rng_bounded(rng, heap->count);

		heap->sequence_sum -= heap->slots[slot]->sequence;
		free(heap->slots[slot]);
		heap->slots[slot] = new_block(heap, rng);
	}
}

/* One cycle through every live block in a random order (Sattolo's shuffle of
 * the slots, then each block points at the next). */
PHASE static struct block *link_blocks(struct heap *heap, struct rng *rng)
{
	for (size_t i = heap->count - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(rng, i);
		struct block *swap = heap->slots[i];

		heap->slots[i] = heap->slots[j];
		heap->slots[j] = swap;
	}
	for (size_t i = 0; i < heap->count; i++)
		heap->slots[i]->next = heap->slots[(i + 1) % heap->count];
	return heap->slots[0];
}

/* `steps` blocks along the cycle from start: a dependent load per block.
 * Returns the sum of the sequence numbers read; *end is where it stopped. */
PHASE static uint64_t walk_blocks(const struct block *start, uint64_t steps, const struct block **end)
{
	const struct block *block = start;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < steps; i++) {
		sum += block->sequence;
		block = block->next;
	}
	*end = block;
	return sum;
}

static void put_params(struct record *record, const char *phase, const struct alloc_walk_options *options,
		       size_t blocks, uint64_t churn_ops, uint64_t operations)
{
	struct json *json = &record->json;

	json_key(json, "phase");
	json_string(json, phase);
	json_key(json, "live_bytes");
	json_uint(json, options->live_bytes);
	json_key(json, "blocks");
	json_uint(json, blocks);
	json_key(json, "block_bytes_min");
	json_uint(json, MIN_BLOCK);
	json_key(json, "block_bytes_max");
	json_uint(json, MAX_BLOCK);
	json_key(json, "churn_ops");
	json_uint(json, churn_ops);
	json_key(json, "walks");
	json_uint(json, options->walks);
	record_run_params(record, operations);
}

static int alloc_walk_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"live-bytes", required_argument, NULL, 'L'},
		{"churn-ops", required_argument, NULL, 'C'},
		{"walks", required_argument, NULL, 'W'},
		{NULL, 0, NULL, 0},
	};
	struct alloc_walk_options options = {.live_bytes = DEFAULT_LIVE_BYTES, .walks = DEFAULT_WALKS};
	const struct kopts *opts = &options.common;
	struct heap heap = {0};
	struct record record;
	struct rng rng;
	double *churn_ns, *walk_ns;
	uint64_t churn_ops, started = timer_now_ns();

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, alloc_walk_help);
	kopts_parse(&options.common, argc, argv, "L:C:W:", long_options, alloc_walk_option, &options);
	if (opts->target_rel > 0.0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--target-ci does not apply to alloc_walk: it runs --samples rounds");
	heap.count = (size_t)(options.live_bytes / MEAN_BLOCK);
	if (heap.count < 2)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--live-bytes %" PRIu64 " holds fewer than two blocks (at least %d bytes)",
			 options.live_bytes, 2 * MEAN_BLOCK);
	/* the blocks, their slot table, and malloc's headers (up to 16 bytes a block) */
	kopts_check_bytes(opts, options.live_bytes + heap.count * (sizeof(*heap.slots) + 16), "live blocks");
	churn_ops = options.churn_ops ? options.churn_ops : 2 * (uint64_t)heap.count;
	heap.slots = malloc(heap.count * sizeof(*heap.slots));
	churn_ns = calloc(opts->samples, sizeof(*churn_ns));
	walk_ns = calloc(opts->samples, sizeof(*walk_ns));
	if (!heap.slots || !churn_ns || !walk_ns)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for %zu block slots", heap.count);
	kopts_pin(opts);
	rng_seed(&rng, opts->seed, 0);
	for (size_t i = 0; i < heap.count; i++)
		heap.slots[i] = new_block(&heap, &rng);

	for (uint64_t round = 0; round < opts->samples; round++) {
		uint64_t steps = heap.count * options.walks, sum, begin;
		const struct block *start, *end;

		begin = timer_now_ns();
		churn_blocks(&heap, &rng, churn_ops);
		churn_ns[round] = (double)(timer_now_ns() - begin) / (double)churn_ops;
		start = link_blocks(&heap, &rng);
		begin = timer_now_ns();
		sum = walk_blocks(start, steps, &end);
		walk_ns[round] = (double)(timer_now_ns() - begin) / (double)steps;
		sink = sum;
		/* every pass closes the cycle and reads each live block's sequence once */
		if (end != start || sum != heap.sequence_sum * options.walks)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL,
				 "self-check failed in round %" PRIu64 ": the walk %s and read a sum of %" PRIu64
				 " where churn wrote %" PRIu64 " per pass",
				 round + 1, end == start ? "closed its cycle" : "did not close its cycle", sum,
				 heap.sequence_sum);
	}

	record_open(&record, opts);
	for (int phase = 0; phase < 2; phase++) {
		record_begin(&record, "time_per_op", "ns");
		put_params(&record, phase == 0 ? "churn" : "walk", &options, heap.count, churn_ops,
			   phase == 0 ? churn_ops : heap.count * options.walks);
		record_samples(&record, phase == 0 ? churn_ns : walk_ns, opts->samples);
		json_key(&record.json, "wall_s");
		json_double(&record.json, (double)(timer_now_ns() - started) / 1e9);
		json_key(&record.json, "order_index");
		json_uint(&record.json, (uint64_t)phase);
		record_end(&record, phase == 0 ? "churn" : "walk");
	}
	record_close(&record);
	for (size_t i = 0; i < heap.count; i++)
		free(heap.slots[i]);
	free(heap.slots);
	free(churn_ns);
	free(walk_ns);
	return CLI_EXIT_OK;
}

const struct kernel_spec alloc_walk_kernel = {
	.name = "alloc_walk",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "reference workload: small-object allocator churn plus a walk over the reused blocks",
	.run = alloc_walk_run,
	.print_help = alloc_walk_help,
};
