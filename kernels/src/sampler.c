/* Calibrated, adaptive sampling and the measuring order; see sampler.h. */
#include "sampler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "stats.h"
#include "timer.h"

#define CONFIRMATIONS 2
#define MAX_TRIES 64
#define MAX_CAPACITY 100000
#define TREND_Z 1.96
/* A point's cap grows by its share of the time earlier points left unused, up
 * to this many times --max-point-seconds (sampler_capacity sizes for it). */
#define BANK_MAX_FACTOR 3.0

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

const char *sampler_stop_name(enum sampler_stop stop)
{
	static const char *const names[] = {"fixed", "target", "cap"};

	return names[stop];
}

size_t sampler_capacity(const struct kopts *opts)
{
	double capacity;

	if (opts->target_rel == 0.0)
		return opts->samples;
	capacity = (double)opts->samples +
		   4.0 * ceil(BANK_MAX_FACTOR * opts->max_point_s * 1e3 / opts->min_sample_ms);
	return capacity > MAX_CAPACITY ? (opts->samples > MAX_CAPACITY ? opts->samples : MAX_CAPACITY)
				       : (size_t)capacity;
}

/* The process's time bank: what the points sampled so far left of their caps
 * (a point that reached its target early), and how many of its sweep's
 * planned points are still to start (the current one included; 1 outside a
 * sweep or for a re-queued point, which then may take the whole bank). The
 * plan prices every point at its cap, so a point that spends what an earlier
 * one left keeps the process within its price: the sum of the caps granted
 * never exceeds the points' caps. */
static double bank_s;
static size_t points_left = 1;

static void bank_note(FILE *stream)
{
	fprintf(stream, "%s: bank left %.6f s\n", CLI_PROGRAM, bank_s);
}

/* --bank-s: what the experiment's earlier processes were priced for and left,
 * so their unspent time reaches this process's points as the process's own
 * would; what is left at the end is reported with the exit note. */
void sampler_bank_open(double seed_s)
{
	bank_s = seed_s > 0.0 ? seed_s : 0.0;
	cli_exit_note_before(bank_note);
}

void sampler_begin(struct sampler_run *run, const struct kopts *opts, unsigned attempt,
		   double *const *series, size_t series_count)
{
	*run = (struct sampler_run){
		.opts = opts,
		.series = series,
		.series_count = series_count,
		.attempt = attempt,
		.stop = SAMPLER_STOP_FIXED,
		.cap_s = opts->max_point_s,
	};
	counters_open(&run->counters);
}

int sampler_drifts(const struct kopts *opts, const double *samples, size_t count)
{
	struct trend trend;

	if (opts->test_drift)
		return 1;
	if (stats_trend(samples, count, &trend) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory testing a point for drift");
	return fabs(trend.z) > TREND_Z && fabs(trend.shift_rel) > opts->target_rel;
}

/* Every series' CI95 half-width within the target. */
static int target_reached(const struct sampler_run *run)
{
	for (size_t s = 0; s < run->series_count; s++) {
		struct summary summary;

		if (stats_summarize(run->series[s], run->count, &summary) != 0)
			cli_fail(CLI_EXIT_RUNTIME, run->opts->kernel, "out of memory summarizing samples");
		if (!(stats_relative_half_width(&summary) <= run->opts->target_rel))
			return 0;
	}
	return 1;
}

/* Points this process has re-queued: at most --max-requeues, the number its plan priced, so drifting
 * points cannot stretch a process past its price (a later one is recorded as drifting instead). Counted
 * when a point's last run is done (sampler_sweep_done), not at each stop: a latency point's earlier tries
 * are measured again anyway and must not spend the allowance. */
static uint64_t requeued_points;

static int stop(struct sampler_run *run, enum sampler_stop reason)
{
	counters_stop(&run->counters);
	run->stop = reason;
	run->sampling_s = (double)(timer_now_ns() - run->started_ns) / 1e9;
	if (run->opts->target_rel > 0.0 && run->sampling_s < run->cap_s)
		bank_s += run->cap_s - run->sampling_s;
	if (reason == SAMPLER_STOP_CAP && run->attempt == 1 && requeued_points < run->opts->max_requeues)
		for (size_t s = 0; s < run->series_count && !run->requeue; s++)
			run->requeue = sampler_drifts(run->opts, run->series[s], run->count);
	return 0;
}

int sampler_more(struct sampler_run *run)
{
	const struct kopts *opts = run->opts;

	if (run->count == 0) {
		if (opts->target_rel > 0.0) {
			double grant = bank_s / (double)(points_left ? points_left : 1);
			double most = (BANK_MAX_FACTOR - 1.0) * opts->max_point_s;

			if (grant > most)
				grant = most;
			bank_s -= grant;
			run->cap_s = opts->max_point_s + grant;
		}
		counters_start(&run->counters);
		run->started_ns = timer_now_ns();
	}
	if (run->count < opts->samples)
		return 1;
	if (opts->target_rel == 0.0)
		return stop(run, SAMPLER_STOP_FIXED);
	if (target_reached(run))
		return stop(run, SAMPLER_STOP_TARGET);
	if (run->count >= sampler_capacity(opts) ||
	    (double)(timer_now_ns() - run->started_ns) >= run->cap_s * 1e9)
		return stop(run, SAMPLER_STOP_CAP);
	return 1;
}

void sampler_collect(sampler_body body, void *context, uint64_t rounds, double units,
		     struct sampler_run *run)
{
	for (; sampler_more(run); run->count++)
		run->series[0][run->count] = (double)body(context, rounds) / units;
}

void sampler_sweep_open(struct sampler_sweep *sweep, const struct kopts *opts, size_t points)
{
	size_t *planned = kopts_order(opts, points);

	*sweep = (struct sampler_sweep){.opts = opts, .planned = points, .length = points};
	sweep->order = malloc((2 * points + 1) * sizeof(*sweep->order));
	if (!sweep->order)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory planning the run");
	for (size_t i = 0; i < points; i++)
		sweep->order[i] = planned[i];
	free(planned);
	sweep->position = (size_t)-1;
}

int sampler_sweep_next(struct sampler_sweep *sweep)
{
	if (++sweep->position >= sweep->length)
		return 0;
	sweep->point = sweep->order[sweep->position];
	sweep->attempt = sweep->position < sweep->planned ? sweep->opts->attempt : 2;
	points_left = sweep->position < sweep->planned ? sweep->planned - sweep->position : 1;
	return 1;
}

void sampler_sweep_done(struct sampler_sweep *sweep, const struct sampler_run *run, const char *label)
{
	if (!run->requeue)
		return;
	requeued_points++;
	if (sweep->planned > 1) {
		sweep->order[sweep->length++] = sweep->point;
		fprintf(stderr, "%s: %s stopped at its %g s cap while drifting; measuring it again after the other points\n",
			sweep->opts->kernel, label, sweep->opts->max_point_s);
		return;
	}
	fprintf(stderr, "%s: re-queue: %s stopped at its %g s cap while drifting; run it again with --attempt 2 after the other points\n",
		sweep->opts->kernel, label, sweep->opts->max_point_s);
}

void sampler_sweep_close(struct sampler_sweep *sweep)
{
	free(sweep->order);
	points_left = 1;
}

const char *sampler_unsettled(const struct kopts *opts, const double *samples, size_t count,
			      double canary_before_ns, double canary_after_ns, struct dispersion *dispersion)
{
	if (stats_dispersion(samples, count, dispersion) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory testing a point's samples");
	if (opts->test_unsettled)
		return "forced by --test-unsettled";
	if (count >= SAMPLER_SETTLE_MIN_SAMPLES && dispersion->mad_rel > SAMPLER_NOISY_MAD_REL)
		return "noisy";
	if (count >= SAMPLER_SETTLE_MIN_SAMPLES && dispersion->bimodal)
		return "bimodal";
	if (canary_before_ns > 0.0 && canary_after_ns > 0.0 &&
	    (canary_after_ns > SAMPLER_CANARY_DRIFT * canary_before_ns ||
	     canary_before_ns > SAMPLER_CANARY_DRIFT * canary_after_ns))
		return "canary drift";
	return NULL;
}
