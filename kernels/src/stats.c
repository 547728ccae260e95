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

/* P(X = i) for X ~ Binomial(n, 1/2). */
static double binomial_half_pmf(size_t n, size_t i)
{
	return exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
		   (double)n * M_LN2);
}

/* Distribution-free 95% CI of the median from order statistics: the number
 * of samples below the true median is Binomial(n, 1/2), so [x_(j), x_(n-j+1)]
 * (1-based) covers the median with probability 1 - 2 P(Bin(n, 1/2) <= j-1).
 * Take the largest j whose coverage is still >= 95% (n = 11 gives
 * [x_(2), x_(10)]). No normality assumption, which latency samples (skewed,
 * with interrupt outliers) would violate. For n <= 5 even [min, max] covers
 * less than 95% (1 - 2^(1-n)); we then report [min, max] and the consumer can
 * see the small count. The tail P(Bin <= j) is summed as j grows, so the
 * search costs O(j): the adaptive sampler asks again after every sample. */
static void median_ci95(const double *sorted, size_t n, double *low, double *high)
{
	size_t j = 1;
	double tail = binomial_half_pmf(n, 0) + binomial_half_pmf(n, 1);

	while (j + 1 <= (n + 1) / 2 && 1.0 - 2.0 * tail >= 0.95) {
		j++;
		tail += binomial_half_pmf(n, j);
	}
	*low = sorted[j - 1];
	*high = sorted[n - j];
}

static double sorted_median(const double *sorted, size_t count)
{
	return count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
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
	out->median = sorted_median(sorted, count);
	median_ci95(sorted, count, &out->ci95_low, &out->ci95_high);
	free(sorted);
	return 0;
}

double stats_relative_half_width(const struct summary *summary)
{
	if (summary->median == 0.0)
		return INFINITY;
	return (summary->ci95_high - summary->ci95_low) / 2.0 / fabs(summary->median);
}

/* Median of samples[first, first + count), count >= 1, through scratch. */
static double median_of(const double *samples, size_t first, size_t count, double *scratch)
{
	memcpy(scratch, samples + first, count * sizeof(*scratch));
	qsort(scratch, count, sizeof(*scratch), compare_doubles);
	return sorted_median(scratch, count);
}

/* Sorts values[0, count) ascending (stable merge sort through scratch) and
 * returns the number of pairs i < j with values[i] > values[j]. */
static double sort_counting_inversions(double *values, double *scratch, size_t count)
{
	size_t half = count / 2, left = 0, right = half, out = 0;
	double inversions;

	if (count < 2)
		return 0.0;
	inversions = sort_counting_inversions(values, scratch, half) +
		     sort_counting_inversions(values + half, scratch, count - half);
	while (left < half && right < count) {
		if (values[right] < values[left]) {
			inversions += (double)(half - left);
			scratch[out++] = values[right++];
		} else {
			scratch[out++] = values[left++];
		}
	}
	while (left < half)
		scratch[out++] = values[left++];
	while (right < count)
		scratch[out++] = values[right++];
	memcpy(values, scratch, count * sizeof(*values));
	return inversions;
}

int stats_trend(const double *samples, size_t count, struct trend *out)
{
	double *values, *scratch, whole, variance, pairs, tied = 0.0, discordant, s;
	size_t third = count / 3;

	out->z = 0.0;
	out->shift_rel = 0.0;
	if (count < 3)
		return 0;
	values = malloc(2 * count * sizeof(*values));
	if (!values)
		return -1;
	scratch = values + count;
	/* S = concordant - discordant pairs in time order. Discordant pairs are
	 * the inversions a merge sort counts (O(n log n): a point may hold
	 * thousands of samples); tied pairs are neither. */
	memcpy(values, samples, count * sizeof(*values));
	discordant = sort_counting_inversions(values, scratch, count);
	for (size_t i = 0, j; i < count; i = j) {
		for (j = i + 1; j < count && values[j] == values[i]; j++)
			;
		tied += (double)(j - i) * (double)(j - i - 1) / 2.0;
	}
	pairs = (double)count * (double)(count - 1) / 2.0;
	s = (pairs - tied - discordant) - discordant;
	variance = (double)count * (double)(count - 1) * (double)(2 * count + 5) / 18.0;
	out->z = s > 0 ? (s - 1.0) / sqrt(variance) : s < 0 ? (s + 1.0) / sqrt(variance) : 0.0;

	whole = sorted_median(values, count);
	if (whole != 0.0)
		out->shift_rel = (median_of(samples, count - third, third, scratch) -
				  median_of(samples, 0, third, scratch)) / fabs(whole);
	free(values);
	return 0;
}

/* Median absolute deviation of sorted[0, count) around its median, through
 * scratch (count entries). */
static double sorted_mad(const double *sorted, size_t count, double *scratch)
{
	double median = sorted_median(sorted, count);

	for (size_t i = 0; i < count; i++)
		scratch[i] = fabs(sorted[i] - median);
	qsort(scratch, count, sizeof(*scratch), compare_doubles);
	return sorted_median(scratch, count);
}

int stats_dispersion(const double *samples, size_t count, struct dispersion *out)
{
	double *sorted, *scratch, median, gap = -1.0;
	size_t side, split = 0;

	*out = (struct dispersion){0};
	if (count == 0)
		return -1;
	sorted = malloc(2 * count * sizeof(*sorted));
	if (!sorted)
		return -1;
	scratch = sorted + count;
	memcpy(sorted, samples, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), compare_doubles);
	median = sorted_median(sorted, count);
	out->mad_rel = median != 0.0 ? sorted_mad(sorted, count, scratch) / fabs(median) : INFINITY;

	side = (size_t)ceil(STATS_BIMODAL_MIN_SHARE * (double)count);
	if (side < 2)
		side = 2;
	/* The widest gap, the first of equals, that leaves side samples each way. */
	for (size_t i = side; count >= 2 * side && i <= count - side; i++)
		if (sorted[i] - sorted[i - 1] > gap) {
			gap = sorted[i] - sorted[i - 1];
			split = i;
		}
	if (split && median > 0.0 && gap >= STATS_BIMODAL_GAP_REL * median) {
		double lower = sorted_mad(sorted, split, scratch);
		double upper = sorted_mad(sorted + split, count - split, scratch);

		if (gap > STATS_BIMODAL_SEPARATION * (lower > upper ? lower : upper)) {
			out->bimodal = 1;
			out->gap_rel = gap / median;
			out->lower_median = sorted_median(sorted, split);
			out->upper_median = sorted_median(sorted + split, count - split);
		}
	}
	free(sorted);
	return 0;
}
