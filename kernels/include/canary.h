/* The L1-resident timing canary: a 4 KiB pointer chase timed before and
 * after every point. Its latency depends only on the core clock, so a change
 * between the two readings (or across points) exposes frequency drift or a
 * noisy neighbour (one dev-VM run was 35% slower at every level). */
#ifndef FLEETSCOPE_CANARY_H
#define FLEETSCOPE_CANARY_H

#include <stdint.h>

#define CANARY_BYTES 4096

struct canary {
	void *lines;
	uint64_t rounds; /* per reading sample, calibrated to ~1 ms */
};

/* Builds the canary chain from seed. Returns 0, or -1 on allocation failure. */
int canary_init(struct canary *canary, uint64_t seed);
void canary_free(struct canary *canary);

/* Median ns per load over a few ~1 ms samples. */
double canary_read_ns(struct canary *canary);

#endif
