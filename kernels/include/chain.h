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

/* Links the lines of base[0 .. lines*64) into a single cycle in random order
 * (Sattolo's algorithm). lines >= 2. */
void chain_build_random_cycle(void *base, size_t lines, struct rng *rng);

/* Follows the chain from start until it returns to start or limit steps have
 * been taken; returns the number of steps. For a correct chain over n lines,
 * chain_cycle_length(base, n) == n. */
size_t chain_cycle_length(void *start, size_t limit);

/* The timed body: rounds x 16 dependent loads from start; returns where the
 * walk ended, which the caller must pass to chain_consume. */
void *chain_walk(void *start, uint64_t rounds);

/* Makes the walk's result observable so the compiler cannot delete it. */
void chain_consume(void *end);

/* Times one walk of rounds rounds from *cursor, advances *cursor, and
 * returns the elapsed nanoseconds. */
uint64_t chain_time_walk_ns(void **cursor, uint64_t rounds);

/* Finds a round count whose walk takes at least min_sample_ns, by timing
 * walks of growing length from *cursor. */
uint64_t chain_calibrate_rounds(void **cursor, double min_sample_ns);

#endif
