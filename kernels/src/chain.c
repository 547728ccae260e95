/* Pointer-chase chains; see chain.h. */
#include "chain.h"

#include <math.h>

#include "timer.h"

/* The walk's end pointer is stored here so that the chain of loads has an
 * observable result; volatile so the store itself cannot be dropped. */
static void *volatile chain_sink;

static void **line_slot(void *base, size_t line)
{
	return (void **)((char *)base + line * CHAIN_LINE_BYTES);
}

/* Sattolo's algorithm, run directly on the pointers: start with every line
 * pointing at itself, then for i = n-1 .. 1 swap line i's pointer with that of
 * a line j drawn uniformly from [0, i-1]. Excluding j = i (Fisher-Yates would
 * allow it) is what makes the result a single cycle through all n lines;
 * Fisher-Yates can leave short cycles that silently shrink the working set.
 * Successive lines of the cycle are uniform over the whole buffer, so lines of
 * one page are not visited together and spatial prefetchers get nothing. */
void chain_build_random_cycle(void *base, size_t lines, struct rng *rng)
{
	for (size_t i = 0; i < lines; i++)
		*line_slot(base, i) = line_slot(base, i);
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(rng, i);
		void *swap = *line_slot(base, i);

		*line_slot(base, i) = *line_slot(base, j);
		*line_slot(base, j) = swap;
	}
}

size_t chain_cycle_length(void *start, size_t limit)
{
	void *p = start;
	size_t steps = 0;

	do {
		p = *(void **)p;
		steps++;
	} while (p != start && steps < limit);
	chain_consume(p);
	return steps;
}

/* 16 loads per iteration so the loop's own increment, compare and branch are
 * noise next to the loads; each load's address is the previous load's value,
 * so no two can overlap and the time per load is the load-to-use latency. */
#define CHASE_ONE p = *(void **)p;
#define CHASE_SIXTEEN                                                         \
	CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE \
	CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE CHASE_ONE \
	CHASE_ONE CHASE_ONE

__attribute__((noinline)) void *chain_walk(void *start, uint64_t rounds)
{
	void *p = start;

	while (rounds--) {
		CHASE_SIXTEEN
	}
	return p;
}

void chain_consume(void *end)
{
	/* The empty asm claims to read end and all memory, so the loads that
	 * produced end must happen; the volatile store makes the value escape. */
	__asm__ volatile("" : : "r"(end) : "memory");
	chain_sink = end;
}

uint64_t chain_time_walk_ns(void **cursor, uint64_t rounds)
{
	uint64_t started = timer_now_ns();
	void *end = chain_walk(*cursor, rounds);
	uint64_t elapsed;

	chain_consume(end);
	elapsed = timer_now_ns() - started;
	*cursor = end;
	return elapsed;
}

uint64_t chain_calibrate_rounds(void **cursor, double min_sample_ns)
{
	uint64_t rounds = 64;

	for (;;) {
		uint64_t elapsed = chain_time_walk_ns(cursor, rounds);
		double scale;

		if ((double)elapsed >= min_sample_ns || rounds > (UINT64_MAX >> 5))
			return rounds;
		/* Aim 20% past the target so the next try usually lands; grow at
		 * most 16x per step in case this one was cut short by a fluke. */
		scale = elapsed > 0 ? 1.2 * min_sample_ns / (double)elapsed : 16.0;
		if (scale > 16.0)
			scale = 16.0;
		rounds = (uint64_t)ceil((double)rounds * scale);
	}
}
