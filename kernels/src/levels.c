/* Cache levels from sysfs; see levels.h. */
#include "levels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "latency.h"

#define DRAM_FLOOR_BYTES ((uint64_t)256 << 20)
#define LINE 64

static int read_text(const char *path, char *out, size_t size)
{
	FILE *file = fopen(path, "r");
	int ok;

	if (!file)
		return -1;
	ok = fgets(out, (int)size, file) != NULL;
	fclose(file);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* "32K", "32768K", "1M", "512" -> bytes; 0 if unreadable. */
static uint64_t parse_cache_size(const char *text)
{
	char *end;
	uint64_t value = strtoull(text, &end, 10);

	if (end == text)
		return 0;
	switch (*end) {
	case 'K': case 'k': return value << 10;
	case 'M': case 'm': return value << 20;
	case 'G': case 'g': return value << 30;
	case '\0': return value;
	default: return 0;
	}
}

static uint64_t whole_lines(double bytes)
{
	uint64_t lines = (uint64_t)llround(bytes / LINE);

	return (lines < 2 ? 2 : lines) * LINE;
}

int levels_read(int cpu, uint64_t dram_bytes, struct level *levels, size_t max,
		const char **error)
{
	const char *root = getenv("FLEETSCOPE_SYSFS_ROOT");
	size_t count = 0;

	if (!root || !*root)
		root = "/sys/devices/system/cpu";
	for (int index = 0; index < 32 && count + 1 < max; index++) {
		char path[512], type[32], level_text[16], size_text[32];
		uint64_t bytes;
		int level;
		size_t slot;

		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/type", root, cpu < 0 ? 0 : cpu, index);
		if (read_text(path, type, sizeof(type)) != 0)
			break;
		if (strcmp(type, "Data") != 0 && strcmp(type, "Unified") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/level", root, cpu < 0 ? 0 : cpu, index);
		if (read_text(path, level_text, sizeof(level_text)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/size", root, cpu < 0 ? 0 : cpu, index);
		if (read_text(path, size_text, sizeof(size_text)) != 0)
			continue;
		level = atoi(level_text);
		bytes = parse_cache_size(size_text);
		if (level <= 0 || bytes == 0)
			continue;
		/* Keep levels sorted by level; one entry per level. */
		for (slot = 0; slot < count && levels[slot].level < level; slot++)
			;
		if (slot < count && levels[slot].level == level)
			continue;
		memmove(&levels[slot + 1], &levels[slot], (count - slot) * sizeof(*levels));
		memset(&levels[slot], 0, sizeof(*levels));
		levels[slot].level = level;
		levels[slot].sysfs_bytes = bytes;
		snprintf(levels[slot].name, sizeof(levels[slot].name), level == 1 ? "L1d" : "L%d", level);
		count++;
	}
	if (count == 0) {
		*error = "no data or unified caches under $FLEETSCOPE_SYSFS_ROOT or /sys/devices/system/cpu/cpuN/cache";
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		if (i == 0) {
			levels[i].working_set_bytes = whole_lines((double)levels[i].sysfs_bytes / 2);
			levels[i].rule = "half of the level's sysfs size";
		} else {
			levels[i].working_set_bytes =
				whole_lines(sqrt((double)levels[i - 1].sysfs_bytes * (double)levels[i].sysfs_bytes));
			levels[i].rule = "geometric midpoint of the sysfs sizes of the level below and this level";
		}
	}
	memset(&levels[count], 0, sizeof(*levels));
	strcpy(levels[count].name, "DRAM");
	if (dram_bytes) {
		levels[count].working_set_bytes = dram_bytes / LINE * LINE;
		levels[count].rule = "given by --dram-size";
	} else {
		uint64_t eight_llc = 8 * levels[count - 1].sysfs_bytes;

		levels[count].working_set_bytes = eight_llc > DRAM_FLOOR_BYTES ? eight_llc : DRAM_FLOOR_BYTES;
		levels[count].rule = "max(8 x the last-level cache's sysfs size, 256 MiB)";
	}
	return (int)count + 1;
}

void levels_add_params(struct json *json, const void *context)
{
	const struct level *level = context;

	json_key(json, "level");
	json_string(json, level->name);
	json_key(json, "sysfs_size_bytes");
	if (level->level == 0)
		json_null(json);
	else
		json_uint(json, level->sysfs_bytes);
	json_key(json, "size_rule");
	json_string(json, level->rule);
}

static int level_selected(const char *only, const char *name)
{
	size_t length = strlen(name);

	for (const char *item = only; item; item = strchr(item, ',')) {
		if (*item == ',')
			item++;
		if (strncmp(item, name, length) == 0 && (item[length] == ',' || item[length] == '\0'))
			return 1;
	}
	return 0;
}

size_t levels_plan(const struct kopts *opts, uint64_t dram_bytes, const char *only,
		   struct level *levels)
{
	const char *error = NULL;
	int found = levels_read(opts->cpu, dram_bytes, levels, LEVELS_MAX, &error);
	size_t kept = 0;

	if (found < 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "%s; this host does not describe its caches", error);
	if (!dram_bytes && levels[found - 1].working_set_bytes > opts->max_bytes) {
		levels[found - 1].working_set_bytes = opts->max_bytes / 64 * 64;
		levels[found - 1].rule = "max(8 x the last-level cache's sysfs size, 256 MiB), capped at --max-bytes";
	}
	for (int i = 0; i < found; i++) {
		if (only && !level_selected(only, levels[i].name))
			continue;
		if (levels[i].working_set_bytes < 128)
			cli_fail(CLI_EXIT_USAGE, opts->kernel, "the %s working set is below 2 lines; give a larger --dram-size",
				 levels[i].name);
		kopts_check_bytes(opts, levels[i].working_set_bytes, "working set");
		levels[kept++] = levels[i];
	}
	if (kept == 0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel,
			 "--levels '%s' names none of this host's levels; use names like L1d,L2,L3,DRAM",
			 only);
	return kept;
}

int levels_option(const struct kopts *opts, struct level_options *options, int option,
		  const char *arg)
{
	switch (option) {
	case 'D':
		options->dram_bytes = kopts_size(opts, "--dram-size", arg);
		return 1;
	case 'L':
		options->only = arg;
		return 1;
	case 'p':
		options->page_policy = latency_page_policy_option(opts, arg);
		return 1;
	}
	return 0;
}

void levels_help(FILE *out)
{
	fprintf(out,
		"  -D, --dram-size SIZE    DRAM working set instead of max(8 x last level,\n"
		"                          256 MiB)\n"
		"  -L, --levels LIST       measure only these levels, e.g. L1d,DRAM\n"
		"  -p, --page-policy P     thp (default) or 4k, as in 'chase'\n");
}
