/* Test probe for kernels/src/stats.c: each line of stdin is one series of
 * whitespace-separated samples (in the order taken); each output line is
 * {"median", "ci95_low", "ci95_high", "relative_half_width", "trend_z",
 * "shift_rel", "mad_rel", "bimodal", "gap_rel", "lower_median", "upper_median"}
 * of that series. Built and run by test_precision.py. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int main(void)
{
	static char line[1 << 22];
	size_t capacity = 1024;
	double *samples = malloc(capacity * sizeof(*samples));

	while (samples && fgets(line, sizeof(line), stdin)) {
		struct summary summary;
		struct trend trend;
		struct dispersion dispersion;
		size_t count = 0;
		char *cursor = line, *end;

		for (double value = strtod(cursor, &end); end != cursor; value = strtod(cursor, &end)) {
			if (count == capacity && !(samples = realloc(samples, (capacity *= 2) * sizeof(*samples))))
				return 1;
			samples[count++] = value;
			cursor = end;
		}
		if (stats_summarize(samples, count, &summary) != 0 || stats_trend(samples, count, &trend) != 0 ||
		    stats_dispersion(samples, count, &dispersion) != 0)
			return 1;
		printf("{\"median\": %.17g, \"ci95_low\": %.17g, \"ci95_high\": %.17g, "
		       "\"relative_half_width\": %.17g, \"trend_z\": %.17g, \"shift_rel\": %.17g, "
		       "\"mad_rel\": %.17g, \"bimodal\": %s, \"gap_rel\": %.17g, \"lower_median\": %.17g, "
		       "\"upper_median\": %.17g}\n",
		       summary.median, summary.ci95_low, summary.ci95_high,
		       isfinite(stats_relative_half_width(&summary)) ? stats_relative_half_width(&summary) : -1.0,
		       trend.z, trend.shift_rel, isfinite(dispersion.mad_rel) ? dispersion.mad_rel : -1.0,
		       dispersion.bimodal ? "true" : "false", dispersion.gap_rel, dispersion.lower_median,
		       dispersion.upper_median);
	}
	return samples ? 0 : 1;
}
