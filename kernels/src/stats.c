/* Summary statistics of the raw samples of one measured point. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* P(X <= k) for X ~ Binomial(n, 1/2). */
static double binomial_half_cdf(size_t n, size_t k)
{
	double total = 0.0;

	for (size_t i = 0; i <= k && i <= n; i++)
		total += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
			     lgamma((double)(n - i) + 1) - (double)n * M_LN2);
	return total;
}

/* Distribution-free 95% CI of the median from order statistics: the number
 * of samples below the true median is Binomial(n, 1/2), so [x_(j), x_(n-j+1)]
 * (1-based) covers the median with probability 1 - 2 P(Bin(n, 1/2) <= j-1).
 * Take the largest j whose coverage is still >= 95% (n = 11 gives
 * [x_(2), x_(10)]). No normality assumption, which latency samples (skewed,
 * with interrupt outliers) would violate. For n <= 5 even [min, max] covers
 * less than 95% (1 - 2^(1-n)); we then report [min, max] and the consumer can
 * see the small count. */
static void median_ci95(const double *sorted, size_t n, double *low, double *high)
{
	size_t j = 1;

	while (j + 1 <= (n + 1) / 2 && 1.0 - 2.0 * binomial_half_cdf(n, j) >= 0.95)
		j++;
	*low = sorted[j - 1];
	*high = sorted[n - j];
}

int stats_summarize(const double *samples, size_t count, struct summary *out)
{
	double *sorted;
	double sum = 0.0;

	if (count == 0)
		return -1;
	sorted = malloc(count * sizeof(*sorted));
	if (!sorted)
		return -1;
	memcpy(sorted, samples, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), compare_doubles);

	for (size_t i = 0; i < count; i++)
		sum += sorted[i];
	out->count = count;
	out->min = sorted[0];
	out->mean = sum / (double)count;
	if (count % 2)
		out->median = sorted[count / 2];
	else
		out->median = 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
	median_ci95(sorted, count, &out->ci95_low, &out->ci95_high);
	free(sorted);
	return 0;
}
