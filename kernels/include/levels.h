/* The host's own cache levels, from sysfs, and a working set inside each:
 * what the per-level kernels (zero_queue, write_cost) measure. */
#ifndef FLEETSCOPE_LEVELS_H
#define FLEETSCOPE_LEVELS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define LEVELS_MAX 8

struct level {
	char name[8];            /* "L1d", "L2", "L3" ... or "DRAM" */
	int level;               /* 1, 2, 3 ...; 0 for DRAM */
	uint64_t sysfs_bytes;    /* size sysfs reports; 0 for DRAM */
	uint64_t working_set_bytes;
	const char *rule;        /* how working_set_bytes was chosen */
};

/* Reads the data and unified caches of cpu (-1: cpu0) from
 * $FLEETSCOPE_SYSFS_ROOT (default /sys/devices/system/cpu)/cpuN/cache, one
 * per level, and picks a working set inside each: half of L1d; the geometric
 * midpoint of the level below and this one for L2 and up (well clear of both
 * edges, and still inside a last-level cache that a VM shows at its full
 * size but serves only in part); for DRAM max(8 x the last level, 256 MiB)
 * or dram_bytes when not 0. Sizes are whole 64-byte lines.
 * Returns the number of levels written (DRAM last), or -1 with *error set
 * to a message when sysfs has no cache information. */
int levels_read(int cpu, uint64_t dram_bytes, struct level *levels, size_t max,
		const char **error);

#include "buffers.h"

struct json;
struct kopts;

/* The options of the per-level kernels (zero_queue, write_cost). */
struct level_options {
	uint64_t dram_bytes;          /* --dram-size; 0: the rule */
	const char *only;             /* --levels; NULL: all */
	enum page_policy page_policy; /* --page-policy */
};

#define LEVELS_SHORT_OPTIONS "D:L:p:"
#define LEVELS_LONG_OPTIONS                                   \
	{"dram-size", required_argument, NULL, 'D'},          \
	{"levels", required_argument, NULL, 'L'},             \
	{"page-policy", required_argument, NULL, 'p'}

/* Stores one of the options above and returns 1; 0 for any other option. */
int levels_option(const struct kopts *opts, struct level_options *options, int option,
		  const char *arg);

/* Their --help lines. */
void levels_help(FILE *out);

/* levels_read for --cpu, then: an automatic DRAM size above --max-bytes is
 * capped to it (and the rule says so), the levels not named in only (a comma
 * list like "L1d,DRAM"; NULL keeps all) are dropped, and anything wrong
 * exits 2 before a point is measured. Returns how many levels are kept. */
size_t levels_plan(const struct kopts *opts, uint64_t dram_bytes, const char *only,
		   struct level *levels);

/* Writes params level, sysfs_size_bytes (null for DRAM) and size_rule of a
 * struct level (shaped for latency_write's add_params). */
void levels_add_params(struct json *json, const void *level);

#endif
