/* Counters for a point's timed region only: perf_event_open around the
 * sampling of one point (the sampler starts them before its first sample and
 * stops them after its last), not around the whole process, whose set-up,
 * allocation and calibration `perf stat` would count too.
 *
 * Hardware events (cycles, instructions) are opened as one group, so that
 * IPC compares counts taken over the same time; software events (task-clock,
 * page-faults, context-switches, cpu-migrations) each on their own. Every
 * event is inherited by the threads the process starts while it is open (the
 * team kernels' members), and the counts are theirs together. Each event
 * reads time_enabled and time_running: running < enabled means the PMU was
 * multiplexed and the count covers only that fraction of the region.
 *
 * An event that cannot be counted keeps its state and no value: "not
 * supported" (no such event on this PMU, e.g. a VM without a virtual PMU),
 * "not permitted" (perf_event_paranoid), "not counted" (opened but never
 * scheduled on the PMU). A count is never invented as 0.
 *
 * The thermal-throttle event counts of every CPU (sysfs
 * thermal_throttle/{core,package}_throttle_count, where the kernel has them)
 * are read before and after the same region: a rise means the point was
 * measured while some CPU throttled. Energy (RAPL) and the package
 * temperature are read around it too, where the host exposes them
 * (sensors.h). */
#ifndef FLEETSCOPE_COUNTERS_H
#define FLEETSCOPE_COUNTERS_H

#include <stdint.h>

#include "json.h"
#include "sensors.h"

#define COUNTERS_EVENTS 6

enum counter_state {
	COUNTER_COUNTED,
	COUNTER_NOT_SUPPORTED,
	COUNTER_NOT_PERMITTED,
	COUNTER_NOT_COUNTED,
	COUNTER_FAILED, /* opened, but reading it failed */
};

struct counter {
	int fd;
	enum counter_state state;
	int open_errno;
	uint64_t value, time_enabled_ns, time_running_ns;
};

struct counters {
	int opened;
	int user_only;     /* perf_event_paranoid allowed user-space counting only */
	struct counter events[COUNTERS_EVENTS];
	int throttle_available;
	uint64_t throttle_before[2], throttle_after[2]; /* core, package events over all CPUs */
	struct sensors sensors;
};

/* Opens every event disabled (none counts yet). FLEETSCOPE_NO_COUNTERS=1 in
 * the environment leaves them all unopened ("not counted"). */
void counters_open(struct counters *counters);
/* Resets and enables them, and reads the throttle counts, energy and
 * temperature. */
void counters_start(struct counters *counters);
/* Disables, reads and closes them, and reads the throttle counts, energy
 * and temperature again. */
void counters_stop(struct counters *counters);
/* context.counters: {scope, user_only, events {name: {state, value,
 * time_enabled_ns, time_running_ns, running_fraction}}, ipc, throttle,
 * energy, temperature (sensors_record)}. */
void counters_record(struct json *json, const struct counters *counters);

#endif
