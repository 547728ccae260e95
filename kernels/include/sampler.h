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

/* samples[i] = ns of one run of rounds, divided by units (e.g. the accesses
 * in that run): ns per unit. */
void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     double *samples, size_t count);

#endif
