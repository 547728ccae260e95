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

#endif
