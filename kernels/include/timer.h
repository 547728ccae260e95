/* Wall-clock timing for sample bodies.
 *
 * CLOCK_MONOTONIC rather than rdtsc: the TSC ticks at a fixed reference rate
 * that is not the core clock (dev VM: TSC 2.596 GHz, core ~3.4 GHz), and the
 * vDSO makes clock_gettime cheap enough against >= 10 ms samples. */
#ifndef FLEETSCOPE_TIMER_H
#define FLEETSCOPE_TIMER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t timer_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#endif
