/* Pointer-chase chains: one random cycle through every cache line of a
 * buffer, and the timed walk along it.
 *
 * Each line holds one pointer, at its start, to the next line of the cycle.
 * The walk is a chain of dependent loads, so its time per load is the load
 * latency of wherever the lines live. */
#ifndef FLEETSCOPE_CHAIN_H
#define FLEETSCOPE_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define CHAIN_LINE_BYTES 64
#define CHAIN_LOADS_PER_ROUND 16 /* dependent loads per loop iteration */

/* The layouts below link count slots, slot i at base + i * stride (stride a
 * multiple of 8, at least 8), into ONE cycle; count >= 2. */

/* Random order (Sattolo's algorithm). */
void chain_build_random_cycle(void *base, size_t count, size_t stride, struct rng *rng);

/* Ascending address order, the last slot back to the first. */
void chain_build_sequential(void *base, size_t count, size_t stride);

/* Pages (page_bytes) in random order, the slots of each page visited
 * together in random order: what spatial and region prefetchers can follow.
 * Returns 0, or -1 if memory for the plan runs out. */
int chain_build_page_local(void *base, size_t count, size_t stride, size_t page_bytes,
			   struct rng *rng);

/* Follows the chain from start until it returns to start or limit steps have
 * been taken; returns the number of steps. For a correct chain over n lines,
 * chain_cycle_length(base, n) == n. */
size_t chain_cycle_length(void *start, size_t limit);

/* The timed body: rounds x 16 dependent loads from start; returns where the
 * walk ended, which the caller must pass to chain_consume. */
void *chain_walk(void *start, uint64_t rounds);

/* Makes the walk's result observable so the compiler cannot delete it. */
void chain_consume(void *end);

/* A sampler_body: context is a void ** cursor; times one walk of rounds
 * rounds from *cursor, advances *cursor, returns the elapsed nanoseconds. */
uint64_t chain_time_walk_ns(void *cursor, uint64_t rounds);

#endif
