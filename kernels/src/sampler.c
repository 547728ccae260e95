/* Calibrated sampling; see sampler.h. */
#include "sampler.h"

#include <math.h>

#define CONFIRMATIONS 2
#define MAX_TRIES 64

/* Grows the count until CONFIRMATIONS runs in a row reach the target: on a
 * shared machine one preempted run can otherwise stop the search early (a
 * few hundred loads per sample), or a slow phase settle on a count that takes
 * well under the target once the noise is gone. The runs also warm up. */
uint64_t sampler_calibrate(sampler_body body, void *context, double min_sample_ns)
{
	return sampler_calibrate_from(body, context, min_sample_ns, 64);
}

uint64_t sampler_calibrate_from(sampler_body body, void *context, double min_sample_ns,
				uint64_t first_rounds)
{
	uint64_t rounds = first_rounds ? first_rounds : 1;
	int confirmed = 0;

	for (int tries = 0; tries < MAX_TRIES; tries++) {
		uint64_t elapsed = body(context, rounds);
		double scale;

		if ((double)elapsed >= min_sample_ns || rounds > (UINT64_MAX >> 5)) {
			if (++confirmed == CONFIRMATIONS || rounds > (UINT64_MAX >> 5))
				return rounds;
			continue;
		}
		confirmed = 0;
		/* Aim 20% past the target so the next try usually lands; grow at
		 * most 16x per step in case this one was cut short by a fluke. */
		scale = elapsed > 0 ? 1.2 * min_sample_ns / (double)elapsed : 16.0;
		if (scale > 16.0)
			scale = 16.0;
		rounds = (uint64_t)ceil((double)rounds * scale);
	}
	return rounds;
}

void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     double *samples, size_t count)
{
	for (size_t i = 0; i < count; i++)
		samples[i] = (double)body(context, rounds) / units;
}
