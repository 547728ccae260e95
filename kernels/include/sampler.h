/* Calibrated, adaptive timing of any kernel body, and the order a kernel's
 * points are measured in.
 *
 * Calibration finds a repetition count whose run takes at least the minimum
 * sample time. Sampling then takes --samples samples; with --target-ci it
 * goes on until the distribution-free 95% CI of the median (stats.c, order
 * statistics) has a half-width of at most target x median, or the point's
 * time cap is reached: --max-point-seconds plus its share of the time the
 * process's earlier points left of their caps (the bank: each point's share
 * is what is banked over the points of its sweep still to start, at most
 * twice --max-point-seconds more), so early finishers hand their time to
 * later points and the process stays within the plan's price of cap x
 * points. A point that stops at its cap
 * while its samples drift (a Mann-Kendall trend larger than the target) is
 * re-queued once after the other points of the sweep, and both attempts are
 * recorded (record_precision). */
#ifndef FLEETSCOPE_SAMPLER_H
#define FLEETSCOPE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "kopts.h"
#include "stats.h"

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

/* Why a point stopped sampling. */
enum sampler_stop {
	SAMPLER_STOP_FIXED,  /* no target: exactly --samples */
	SAMPLER_STOP_TARGET, /* every series reached the target */
	SAMPLER_STOP_CAP,    /* the time cap (or the sample capacity) came first */
};

const char *sampler_stop_name(enum sampler_stop stop);

/* The most samples one series of a point can take: --samples without a
 * target; with one, enough for the largest time cap (three times
 * --max-point-seconds, with the bank's share) at a quarter of the minimum
 * sample time (a sample can come out shorter than calibrated), at most
 * 100000. Kernels size their sample arrays with it. */
size_t sampler_capacity(const struct kopts *opts);

/* Seeds the process's time bank with seed_s (--bank-s: what the experiment's
 * earlier processes were priced for and did not use) and has the exit note of
 * a process that ends with status 0 report what is left of it:
 * "fleetscope-kernels: bank left <seconds> s" (cli_exit_note_before). Called
 * by kopts_parse when the process samples with a target. */
void sampler_bank_open(double seed_s);

/* The sampling of one point. The series are the point's sample arrays that
 * the decision covers (the two chains of a tlb pair, every thread of a team),
 * each of sampler_capacity() entries; the point stops when every one of them
 * reaches the target. */
struct sampler_run {
	const struct kopts *opts;
	double *const *series;
	size_t series_count;
	size_t count;       /* samples taken in every series: the caller advances it */
	unsigned attempt;   /* 1, or 2 for a re-queued point */
	uint64_t started_ns; /* set by the first sampler_more (count 0) */
	double cap_s;       /* this point's time cap: --max-point-seconds plus its share of the bank */
	double sampling_s;  /* from the first sample to the stop */
	enum sampler_stop stop;
	int requeue;        /* a first attempt stopped at the cap while drifting */
	struct counters counters; /* over the samples: from the first sample to the stop */
};

void sampler_begin(struct sampler_run *run, const struct kopts *opts, unsigned attempt,
		   double *const *series, size_t series_count);

/* 1 while the point needs another sample after the run->count taken; 0 once
 * it has enough, with stop, sampling_s and requeue set. The first call
 * (count 0) starts the clock of the time cap:
 *
 *     for (sampler_begin(&run, ...); sampler_more(&run); run.count++)
 *             samples[run.count] = ...;
 */
int sampler_more(struct sampler_run *run);

/* Whether samples[0, count) drift: Mann-Kendall |z| > 1.96 and the last
 * third's median moved from the first third's by more than the target (any
 * move without a target); always with --test-drift. */
int sampler_drifts(const struct kopts *opts, const double *samples, size_t count);

/* Why samples[0, count) of a point, taken between two L1 canary readings,
 * are unsettled, or NULL: "noisy" (MAD / median above
 * SAMPLER_NOISY_MAD_REL), "bimodal" (two groups, stats_dispersion) - both
 * from SAMPLER_SETTLE_MIN_SAMPLES samples on - or "canary drift" (the canary
 * after / before, either way, above SAMPLER_CANARY_DRIFT); always under
 * --test-unsettled. Fills *dispersion. fleetscope/plausibility.py flags the
 * stored points with the same thresholds. */
#define SAMPLER_SETTLE_MIN_SAMPLES 5
#define SAMPLER_NOISY_MAD_REL 0.15
#define SAMPLER_CANARY_DRIFT 1.3
const char *sampler_unsettled(const struct kopts *opts, const double *samples, size_t count,
			      double canary_before_ns, double canary_after_ns, struct dispersion *dispersion);

/* Samples one body into run's single series until the run stops:
 * samples[i] = ns of one run of rounds / units (e.g. the accesses in it). */
void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     struct sampler_run *run);

/* The measuring order of a kernel's points: seeded random (kopts_order), then
 * the points re-queued by sampler_sweep_done, each once, at attempt 2. */
struct sampler_sweep {
	const struct kopts *opts;
	size_t *order;      /* planned points, then re-queued ones */
	size_t planned, length;
	size_t position;    /* of the current point in the measuring order (order_index) */
	size_t point;       /* the current point (an index into the kernel's plan) */
	unsigned attempt;   /* of the current point */
};

void sampler_sweep_open(struct sampler_sweep *sweep, const struct kopts *opts, size_t points);

/* Moves to the next point (sweep->point, ->position, ->attempt); 0 when
 * every point is measured. */
int sampler_sweep_next(struct sampler_sweep *sweep);

/* After the current point's records are written: a point whose run asks for
 * it is measured again after the others. A sweep of one point has no others
 * here, so the kernel says "<kernel>: re-queue: <label> ..." on stderr and
 * leaves the second attempt to its caller (the kernels role runs the process
 * again with --attempt 2 after the experiment's other points). */
void sampler_sweep_done(struct sampler_sweep *sweep, const struct sampler_run *run, const char *label);

void sampler_sweep_close(struct sampler_sweep *sweep);

#endif
