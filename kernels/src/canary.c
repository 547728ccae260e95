/* The L1-resident timing canary; see canary.h. */
#include "canary.h"

#include <stdlib.h>

#include "chain.h"
#include "rng.h"
#include "sampler.h"
#include "stats.h"

#define CANARY_READINGS 5
#define CANARY_SAMPLE_NS 1e6
#define CANARY_RNG_STREAM 0xca4a41u

int canary_init(struct canary *canary, uint64_t seed)
{
	struct rng rng;
	void *cursor;

	canary->lines = aligned_alloc(CANARY_BYTES, CANARY_BYTES);
	if (!canary->lines)
		return -1;
	rng_seed(&rng, seed, CANARY_RNG_STREAM);
	chain_build_random_cycle(canary->lines, CANARY_BYTES / CHAIN_LINE_BYTES, CHAIN_LINE_BYTES,
				 &rng);
	cursor = canary->lines;
	canary->rounds = sampler_calibrate(chain_time_walk_ns, &cursor, CANARY_SAMPLE_NS);
	return 0;
}

void canary_free(struct canary *canary)
{
	free(canary->lines);
	canary->lines = NULL;
}

double canary_read_ns(struct canary *canary)
{
	double readings[CANARY_READINGS];
	struct summary summary;
	void *cursor = canary->lines;
	double loads = (double)canary->rounds * CHAIN_LOADS_PER_ROUND;

	for (int i = 0; i < CANARY_READINGS; i++)
		readings[i] = (double)chain_time_walk_ns(&cursor, canary->rounds) / loads;
	stats_summarize(readings, CANARY_READINGS, &summary);
	return summary.median;
}
