/* Point records; see record.h. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "topology.h"

void record_open(struct record *record, const struct kopts *opts)
{
	memset(record, 0, sizeof(*record));
	record->opts = opts;
	record->fd = STDOUT_FILENO;
	json_init(&record->json);
	if (!opts->output_path)
		return;
	record->fd = open(opts->output_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (record->fd < 0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel,
			 "cannot open --output '%s': %s; check that the directory exists and is writable",
			 opts->output_path, strerror(errno));
}

void record_begin(struct record *record, const char *metric, const char *unit)
{
	struct json *json = &record->json;

	record->unit = unit;
	json_reset(json);
	json_object_begin(json);
	json_key(json, "schema_version");
	json_uint(json, RECORD_SCHEMA_VERSION);
	json_key(json, "experiment");
	json_string(json, record->opts->experiment);
	json_key(json, "kernel");
	json_string(json, record->opts->kernel);
	json_key(json, "metric");
	json_string(json, metric);
	json_key(json, "unit");
	json_string(json, unit);
	json_key(json, "params");
	json_object_begin(json);
}

void record_samples(struct record *record, const double *samples, size_t count)
{
	struct json *json = &record->json;
	struct summary *summary = &record->summary;

	if (stats_summarize(samples, count, summary) != 0)
		cli_fail(CLI_EXIT_RUNTIME, record->opts->kernel, "out of memory summarizing samples");
	json_object_end(json);
	json_key(json, "samples");
	json_array_begin(json);
	for (size_t i = 0; i < count; i++)
		json_double(json, samples[i]);
	json_array_end(json);
	json_key(json, "summary");
	json_object_begin(json);
	json_key(json, "min");
	json_double(json, summary->min);
	json_key(json, "median");
	json_double(json, summary->median);
	json_key(json, "mean");
	json_double(json, summary->mean);
	json_key(json, "ci95_low");
	json_double(json, summary->ci95_low);
	json_key(json, "ci95_high");
	json_double(json, summary->ci95_high);
	json_key(json, "count");
	json_uint(json, summary->count);
	json_object_end(json);
	json_key(json, "context");
	json_object_begin(json);
}

void record_precision(struct record *record, const struct sampler_run *run, const double *samples)
{
	const struct kopts *opts = record->opts;
	struct json *json = &record->json;
	double achieved = stats_relative_half_width(&record->summary);
	struct trend trend;

	if (stats_trend(samples, run->count, &trend) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory testing a point for drift");
	json_key(json, "precision");
	json_object_begin(json);
	json_key(json, "target_rel");
	if (opts->target_rel > 0.0)
		json_double(json, opts->target_rel);
	else
		json_null(json);
	json_key(json, "achieved_rel");
	if (isfinite(achieved))
		json_double(json, achieved);
	else
		json_null(json);
	json_key(json, "samples");
	json_uint(json, run->count);
	json_key(json, "stop");
	json_string(json, sampler_stop_name(run->stop));
	json_key(json, "cap_s");
	if (opts->target_rel > 0.0)
		json_double(json, run->cap_s);
	else
		json_null(json);
	json_key(json, "sampling_s");
	json_double(json, run->sampling_s);
	json_key(json, "trend_z");
	json_double(json, trend.z);
	json_key(json, "shift_rel");
	json_double(json, trend.shift_rel);
	json_key(json, "drift");
	json_bool(json, sampler_drifts(opts, samples, run->count));
	if (opts->test_drift) {
		json_key(json, "drift_forced");
		json_bool(json, 1);
	}
	json_key(json, "attempt");
	json_uint(json, run->attempt);
	json_key(json, "requeued");
	json_bool(json, run->requeue);
	json_object_end(json);
	counters_record(json, &run->counters);
}

static int cpu_node_of(const struct record *record, int cpu)
{
	struct topology_cpu where = {.numa_node = TOPOLOGY_UNKNOWN};
	int node;

	if (cpu < 0)
		return TOPOLOGY_UNKNOWN;
	if (topology_read(cpu, &where) != 0)
		cli_fail(CLI_EXIT_RUNTIME, record->opts->kernel, "out of memory reading the CPU's node");
	node = where.numa_node;
	topology_free(&where);
	return node;
}

/* The node the measuring CPUs share: with mem_node, one cell of a NUMA matrix. */
static int cpus_node(const struct record *record)
{
	int node;

	if (!record->cpus)
		return cpu_node_of(record, record->opts->cpu);
	node = record->cpu_count ? cpu_node_of(record, record->cpus[0]) : TOPOLOGY_UNKNOWN;
	for (size_t i = 1; i < record->cpu_count && node != TOPOLOGY_UNKNOWN; i++)
		if (cpu_node_of(record, record->cpus[i]) != node)
			node = TOPOLOGY_UNKNOWN;
	return node;
}

void record_run_params(struct record *record, uint64_t accesses_per_sample)
{
	struct json *json = &record->json;
	int node;

	json_key(json, "cpu");
	if (record->opts->cpu < 0)
		json_null(json);
	else
		json_int(json, record->opts->cpu);
	if (record->opts->mem_node >= 0) {
		json_key(json, "mem_node");
		json_int(json, record->opts->mem_node);
		json_key(json, "cpu_node");
		node = cpus_node(record);
		if (node >= 0)
			json_int(json, node);
		else
			json_null(json);
	}
	json_key(json, "accesses_per_sample");
	json_uint(json, accesses_per_sample);
	json_key(json, "seed");
	json_uint(json, record->opts->seed);
}

void record_clock_context(struct record *record, double canary_before_ns, double canary_after_ns,
			  double core_clock_ghz, double wall_s, size_t order_index)
{
	struct json *json = &record->json;

	json_key(json, "canary_before_ns");
	json_double(json, canary_before_ns);
	json_key(json, "canary_after_ns");
	json_double(json, canary_after_ns);
	json_key(json, "core_clock_ghz");
	json_double(json, core_clock_ghz);
	if (strcmp(record->unit, "ns") == 0) {
		json_key(json, "median_cycles");
		json_double(json, record->summary.median * core_clock_ghz);
	}
	json_key(json, "wall_s");
	json_double(json, wall_s);
	json_key(json, "order_index");
	json_uint(json, order_index);
}

static int write_human(struct record *record, const char *label)
{
	const struct summary *summary = &record->summary;
	char interval[64];

	if (!record->header_written) {
		if (dprintf(record->fd, "%-58s  %12s  %-6s  %23s  %12s  %5s\n", "point", "median",
			    "unit", "ci95", "min", "n") < 0)
			return -1;
		record->header_written = 1;
	}
	snprintf(interval, sizeof(interval), "[%.5g, %.5g]", summary->ci95_low, summary->ci95_high);
	return dprintf(record->fd, "%-58s  %12.5g  %-6s  %23s  %12.5g  %5zu\n", label,
		       summary->median, record->unit, interval, summary->min, summary->count) < 0
		       ? -1
		       : 0;
}

void record_end(struct record *record, const char *label)
{
	int failed;

	json_object_end(&record->json);
	json_object_end(&record->json);
	failed = record->opts->human ? write_human(record, label)
				     : json_write_line(&record->json, record->fd);
	if (failed)
		cli_fail(CLI_EXIT_RUNTIME, record->opts->kernel, "cannot write output: %s",
			 strerror(errno));
}

void record_close(struct record *record)
{
	json_free(&record->json);
	if (record->fd != STDOUT_FILENO && close(record->fd) != 0)
		cli_fail(CLI_EXIT_RUNTIME, record->opts->kernel, "cannot close --output: %s",
			 strerror(errno));
}
