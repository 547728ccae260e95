/* Summary statistics of the raw samples of one measured point. */
#ifndef FLEETSCOPE_STATS_H
#define FLEETSCOPE_STATS_H

#include <stddef.h>

struct summary {
	double min;
	double median;
	double mean;
	double ci95_low;  /* 95% confidence interval of the median */
	double ci95_high;
	size_t count;
};

/* Summarizes count >= 1 samples; the samples array is left untouched.
 * Returns 0, or -1 when count is 0 or memory runs out. */
int stats_summarize(const double *samples, size_t count, struct summary *out);

/* The half-width of the median's CI95 relative to the median:
 * (ci95_high - ci95_low) / 2 / |median|; infinity when the median is 0. */
double stats_relative_half_width(const struct summary *summary);

/* A trend across the samples in the order they were taken.
 * z: Mann-Kendall's statistic S = sum over i < j of sign(x_j - x_i),
 * normalised by its variance under "no trend" (n(n-1)(2n+5)/18) with the
 * continuity correction; |z| > 1.96 rejects "no trend" at 5%, whatever the
 * distribution. shift_rel: (median of the last third - median of the first
 * third) / |median of all|, the size of the move (0 below 3 samples).
 * Returns 0, or -1 when memory runs out. */
struct trend {
	double z;
	double shift_rel;
};
int stats_trend(const double *samples, size_t count, struct trend *out);

/* How spread the samples are, and whether they fall into two groups (the
 * same test as fleetscope/plausibility.py's PointNoise (mad_rel, bimodal), with
 * the same constants). mad_rel: the median absolute deviation / |median|
 * (infinity for a zero median). Two groups: sorted, split at the widest gap
 * that leaves each side at least STATS_BIMODAL_MIN_SHARE of the samples (and
 * at least 2), when that gap is at least STATS_BIMODAL_GAP_REL x the median
 * and more than STATS_BIMODAL_SEPARATION x either side's own MAD; gap_rel is
 * that gap / median, 0 when there are no two groups.
 * Returns 0, or -1 when count is 0 or memory runs out. */
#define STATS_BIMODAL_GAP_REL 0.15
#define STATS_BIMODAL_SEPARATION 3.0
#define STATS_BIMODAL_MIN_SHARE 0.2
struct dispersion {
	double mad_rel;
	int bimodal;
	double gap_rel;
	double lower_median, upper_median; /* of the two groups (bimodal only) */
};
int stats_dispersion(const double *samples, size_t count, struct dispersion *out);

#endif
