/* Calibrated sampling; see sampler.h. */
#include "sampler.h"

#include <math.h>

uint64_t sampler_calibrate(sampler_body body, void *context, double min_sample_ns)
{
	uint64_t rounds = 64;

	for (;;) {
		uint64_t elapsed = body(context, rounds);
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

void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     double *samples, size_t count)
{
	for (size_t i = 0; i < count; i++)
		samples[i] = (double)body(context, rounds) / units;
}
