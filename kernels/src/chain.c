/* Pointer-chase chains; see chain.h. */
#include "chain.h"

#include <stdlib.h>

#include "timer.h"

/* The walk's end pointer is stored here so that the chain of loads has an
 * observable result; volatile so the store itself cannot be dropped. */
static void *volatile chain_sink;

static void **slot(void *base, size_t index, size_t stride)
{
	return (void **)((char *)base + index * stride);
}

/* Sattolo's algorithm, run directly on the pointers: start with every line
 * pointing at itself, then for i = n-1 .. 1 swap line i's pointer with that of
 * a line j drawn uniformly from [0, i-1]. Excluding j = i (Fisher-Yates would
 * allow it) is what makes the result a single cycle through all n lines;
 * Fisher-Yates can leave short cycles that silently shrink the working set.
 * Successive lines of the cycle are uniform over the whole buffer, so lines of
 * one page are not visited together and spatial prefetchers get nothing. */
void chain_build_random_cycle(void *base, size_t count, size_t stride, struct rng *rng)
{
	for (size_t i = 0; i < count; i++)
		*slot(base, i, stride) = slot(base, i, stride);
	for (size_t i = count - 1; i > 0; i--) {
		size_t j = (size_t)rng_bounded(rng, i);
		void *swap = *slot(base, i, stride);

		*slot(base, i, stride) = *slot(base, j, stride);
		*slot(base, j, stride) = swap;
	}
}

void chain_build_sequential(void *base, size_t count, size_t stride)
{
	for (size_t i = 0; i < count; i++)
		*slot(base, i, stride) = slot(base, (i + 1) % count, stride);
}

static void shuffle(size_t *items, size_t count, struct rng *rng)
{
	for (size_t i = count; i > 1; i--) {
		size_t j = (size_t)rng_bounded(rng, i);
		size_t swap = items[i - 1];

		items[i - 1] = items[j];
		items[j] = swap;
	}
}

/* Any order of all the slots, linked first to last and back, is one cycle;
 * the order here is pages shuffled, then the slots within each page. */
int chain_build_page_local(void *base, size_t count, size_t stride, size_t page_bytes,
			   struct rng *rng)
{
	size_t per_page = page_bytes > stride ? page_bytes / stride : 1;
	size_t pages = (count + per_page - 1) / per_page;
	size_t *order = malloc(count * sizeof(*order));
	size_t *page_order = malloc(pages * sizeof(*page_order));
	size_t next = 0;

	if (!order || !page_order) {
		free(order);
		free(page_order);
		return -1;
	}
	for (size_t page = 0; page < pages; page++)
		page_order[page] = page;
	shuffle(page_order, pages, rng);
	for (size_t p = 0; p < pages; p++) {
		size_t first = page_order[p] * per_page;
		size_t last = first + per_page < count ? first + per_page : count;

		for (size_t i = first; i < last; i++)
			order[next++] = i;
		shuffle(order + next - (last - first), last - first, rng);
	}
	for (size_t i = 0; i < count; i++)
		*slot(base, order[i], stride) = slot(base, order[(i + 1) % count], stride);
	free(order);
	free(page_order);
	return 0;
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

uint64_t chain_time_walk_ns(void *context, uint64_t rounds)
{
	void **cursor = context;
	uint64_t started = timer_thread_ns();
	void *end = chain_walk(*cursor, rounds);
	uint64_t elapsed;

	chain_consume(end);
	elapsed = timer_thread_ns() - started;
	*cursor = end;
	return elapsed;
}
