/* Energy and temperature around a point's timed region, where the host
 * exposes them; read by counters_start / counters_stop (counters.h) beside
 * the thermal-throttle counts, and recorded in context.counters.
 *
 * Energy: the powercap framework's RAPL zones, $FLEETSCOPE_POWERCAP_ROOT
 * (default /sys/class/powercap)/intel-rapl:<package>[:<subzone>]/ with
 * name (package-N, core, uncore, dram, psys), energy_uj (a running count of
 * microjoules that wraps at max_energy_range_uj) and max_energy_range_uj.
 * AMD Zen CPUs appear through the same intel-rapl driver (package and core
 * zones, no dram). A count that went down over the region wrapped once
 * (the range is tens of kJ or more, 262 kJ on Intel and 65 kJ on Zen:
 * minutes at a few hundred watts, while a region lasts seconds): joules =
 * after + range - before. Since Linux 5.10
 * energy_uj is readable by root only (CVE-2020-8694, PLATYPUS).
 *
 * Temperature: hwmon chips that report the CPU package, $FLEETSCOPE_HWMON_ROOT
 * (default /sys/class/hwmon)/hwmonN/ with name and tempK_input (millidegrees
 * C) and tempK_label: coretemp's "Package id N" (Intel), k10temp's and
 * zenpower's Tctl / Tdie (AMD), and temp1 of cpu_thermal (the SoC sensor of
 * Arm boards such as the Raspberry Pi).
 *
 * Neither is ever invented: where they cannot be read, the record says so and
 * why (no powercap directory in a VM, no zone, permission), never a 0. */
#ifndef FLEETSCOPE_SENSORS_H
#define FLEETSCOPE_SENSORS_H

#include <stdint.h>

#include "json.h"

#define SENSORS_MAX_ZONES 32
#define SENSORS_MAX_TEMPERATURES 32
#define SENSORS_TEXT 64

struct energy_zone {
	char zone[SENSORS_TEXT];  /* the directory: intel-rapl:0, intel-rapl:0:1 */
	char name[SENSORS_TEXT];  /* its name file: package-0, core, dram ... */
	uint64_t max_range_uj;
	uint64_t before_uj, after_uj;
	int read_before, read_after;
	int error;                /* errno of the failed read, 0 if none */
};

struct temperature {
	char chip[SENSORS_TEXT];  /* hwmon name: coretemp, k10temp ... */
	char label[SENSORS_TEXT]; /* Package id 0, Tctl ...; temp1 where none */
	char path[256];           /* its tempK_input */
	double before_c, after_c;
	int read_before, read_after;
};

struct sensors {
	uint64_t started_ns, stopped_ns;
	char energy_reason[256];      /* "" when zones were found */
	size_t zone_count;
	struct energy_zone zones[SENSORS_MAX_ZONES];
	char temperature_reason[256]; /* "" when sensors were found */
	size_t temperature_count;
	struct temperature temperatures[SENSORS_MAX_TEMPERATURES];
};

/* Finds the zones and sensors and reads them: the start of the region. */
void sensors_start(struct sensors *sensors);
/* Reads them again: the end of the region. */
void sensors_stop(struct sensors *sensors);

/* Microjoules between two readings of a counter that wraps at max_range_uj
 * (0: its range is unknown); sets *wrapped. Returns 0 with *wrapped -1 for a
 * counter that went down without a known range (nothing can be said). */
uint64_t sensors_energy_delta_uj(uint64_t before_uj, uint64_t after_uj, uint64_t max_range_uj, int *wrapped);

/* Writes "energy": {available, reason, seconds, zones [{zone, name, joules,
 * watts, wrapped, before_uj, after_uj, max_energy_range_uj, reason}]} and
 * "temperature": {available, reason, sensors [{chip, label, before_c,
 * after_c}]} into an open object. A zone or sensor that could not be read
 * has null numbers and its reason. */
void sensors_record(struct json *json, const struct sensors *sensors);

#endif
