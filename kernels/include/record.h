/* One measured point as one JSON line (DESIGN.md, "Kernel output"):
 *
 *   {schema_version, experiment, kernel, metric, unit,
 *    params {...the kernel's...}, samples [...], summary {min, median, mean,
 *    ci95_low, ci95_high, count}, context {...the kernel's...}}
 *
 * The kernel writes its params and context through record->json between the
 * calls below. With --human the same point becomes one row of a table. */
#ifndef FLEETSCOPE_RECORD_H
#define FLEETSCOPE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "kopts.h"
#include "sampler.h"
#include "stats.h"

#define RECORD_SCHEMA_VERSION 1

struct record {
	struct json json;
	const struct kopts *opts;
	int fd;
	int header_written;
	const char *unit;
	struct summary summary; /* of the last point's samples */
	const int *cpus;        /* a team's CPUs (bandwidth threads), or NULL: */
	size_t cpu_count;       /* opts->cpu is the measuring CPU */
};

/* Opens --output (or stdout); exits 2 if the file cannot be opened. */
void record_open(struct record *record, const struct kopts *opts);

/* Starts a point and opens its params object. */
void record_begin(struct record *record, const char *metric, const char *unit);

/* Closes params, writes the samples and their summary (also left in
 * record->summary) and opens the context object. */
void record_samples(struct record *record, const double *samples, size_t count);

/* context.precision of a point sampled by run (call right after
 * record_samples, whose summary it uses; samples are this record's series):
 * {target_rel (null: fixed count), achieved_rel (the median's CI95
 * half-width / median; null when the median is 0), samples, stop (fixed,
 * target, cap), cap_s (null without a target), sampling_s, trend_z and
 * shift_rel (stats_trend), drift, attempt, requeued (this attempt stopped at
 * its cap while the point drifted, so the point is measured again)} and
 * drift_forced: true under --test-drift; then context.counters, the run's
 * counters over its samples (counters_record). */
void record_precision(struct record *record, const struct sampler_run *run, const double *samples);

/* The params every measuring kernel records last: cpu (null when not
 * pinned), with --mem-node mem_node and cpu_node (the node of the measuring
 * CPU, or of every CPU in record->cpus when set; null when not pinned, when
 * the CPUs span nodes, or unknown), accesses_per_sample and seed. */
void record_run_params(struct record *record, uint64_t accesses_per_sample);

/* The context every timed kernel reports: the L1 canary before and after the
 * point, the measured core clock and the median in cycles (when the unit is
 * a time), the point's wall time and its place in the measuring order. */
void record_clock_context(struct record *record, double canary_before_ns, double canary_after_ns,
			  double core_clock_ghz, double wall_s, size_t order_index);

/* Closes context and the point and writes it (one write(2) per line), or a
 * table row labelled label with --human. Exits 1 if the write fails. */
void record_end(struct record *record, const char *label);

/* Closes --output; exits 1 if that fails. */
void record_close(struct record *record);

#endif
