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

/* The calling thread's own CPU time in ns (CLOCK_THREAD_CPUTIME_ID, exact to
 * the scheduler's clock): the clock of a sample that one thread takes alone
 * (a chase, a TLB pair, one thread's stream, a saxpy pass). On a shared
 * machine another task's time slice, or a guest's steal time, lands inside a
 * wall-clock sample (a 2-vCPU guest at load 6: a 4 MiB chase read 486 ns on
 * the wall clock, 169 ns of its thread's CPU time, and L1 12 ns instead of
 * 1.1 ns) but not in this one; what remains is the cache the other task
 * evicted. Teams, ping-pong, loaded latency and I/O keep the wall clock: their
 * threads wait on each other or on a device. peak_flops times its windows
 * the same way (peak_thread_cpu_ns). */
static inline uint64_t timer_thread_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#endif
