/* Calibrated timing of any kernel body: find a repetition count whose run
 * takes at least the minimum sample time, then take the samples. */
#ifndef FLEETSCOPE_SAMPLER_H
#define FLEETSCOPE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* Runs the body rounds times and returns the elapsed nanoseconds. */
typedef uint64_t (*sampler_body)(void *context, uint64_t rounds);

/* A round count whose run takes at least min_sample_ns in two runs in a row
 * (grows from 64, aiming 20% past the target, at most 16x per try). */
uint64_t sampler_calibrate(sampler_body body, void *context, double min_sample_ns);

/* The same search starting from first_rounds (>= 1): for bodies whose one
 * round is already long (a pass over a DRAM-sized array), where 64 rounds
 * would take seconds. */
uint64_t sampler_calibrate_from(sampler_body body, void *context, double min_sample_ns,
				uint64_t first_rounds);

/* samples[i] = ns of one run of rounds, divided by units (e.g. the accesses
 * in that run): ns per unit. */
void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     double *samples, size_t count);

#endif
