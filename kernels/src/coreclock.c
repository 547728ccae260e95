/* Measuring the core clock; see coreclock.h. */
#include "coreclock.h"

#include <stdint.h>

#include "timer.h"

#define ADDS_PER_ROUND 64
#define TRIAL_NS 10e6
#define TRIALS 5

/* x += step, then an empty asm that claims to modify x: the compiler must
 * emit every add, in order, each waiting for the one before (no folding into
 * x += 64 * step, no vectorizing). Portable across GCC targets, unlike a
 * hand-written add instruction. The step is a register whose value the
 * compiler cannot see: an add of an immediate can be folded away at rename on
 * Intel's Golden Cove and later cores (several per cycle, a clock read ~6x too
 * fast), an add of two registers cannot. */
#define ADD_ONE value += step; __asm__ volatile("" : "+r"(value));
#define ADD_EIGHT ADD_ONE ADD_ONE ADD_ONE ADD_ONE ADD_ONE ADD_ONE ADD_ONE ADD_ONE
#define ADD_SIXTY_FOUR ADD_EIGHT ADD_EIGHT ADD_EIGHT ADD_EIGHT \
	ADD_EIGHT ADD_EIGHT ADD_EIGHT ADD_EIGHT

/* The loop counter is independent of value, so its update and branch run
 * beside the add chain: one round costs 64 cycles. */
__attribute__((noinline)) static uint64_t dependent_adds(uint64_t rounds)
{
	uint64_t value = rounds;
	uint64_t step = 1;

	__asm__ volatile("" : "+r"(step));
	while (rounds--) {
		ADD_SIXTY_FOUR
	}
	return value;
}

static volatile uint64_t coreclock_sink;

static uint64_t time_adds_ns(uint64_t rounds)
{
	uint64_t started = timer_now_ns();

	coreclock_sink = dependent_adds(rounds);
	return timer_now_ns() - started;
}

double coreclock_measure_ghz(void)
{
	uint64_t rounds = 1024;
	uint64_t elapsed;
	double best_ghz = 0.0;

	/* Grow to ~10 ms; this also lets the clock ramp up from idle. */
	while ((elapsed = time_adds_ns(rounds)) < TRIAL_NS / 4)
		rounds *= 4;
	rounds = (uint64_t)((double)rounds * TRIAL_NS / (double)(elapsed ? elapsed : 1)) + 1;
	/* Interruptions only ever make a trial slower, so the fastest trial is
	 * the closest to the true clock. */
	for (int trial = 0; trial < TRIALS; trial++) {
		double ghz;

		elapsed = time_adds_ns(rounds);
		ghz = (double)rounds * ADDS_PER_ROUND / (double)(elapsed ? elapsed : 1);
		if (ghz > best_ghz)
			best_ghz = ghz;
	}
	return best_ghz;
}
