/* perf_event_open counters around a point's timed region; see counters.h. */
#include "counters.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
	int hardware_group; /* 1: cycles leads, instructions follows */
} events[COUNTERS_EVENTS] = {
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0},
};

static const char *const state_names[] = {"counted", "not supported", "not permitted", "not counted", "failed"};

static int open_event(size_t index, int group_fd, int exclude_kernel)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = events[index].type;
	attr.config = events[index].config;
	attr.disabled = group_fd == -1; /* members follow their leader */
	attr.inherit = 1;
	attr.exclude_kernel = (unsigned)exclude_kernel;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static enum counter_state state_of_errno(int error)
{
	return (error == EACCES || error == EPERM) ? COUNTER_NOT_PERMITTED : COUNTER_NOT_SUPPORTED;
}

/* Sum of one thermal_throttle count over every CPU that has it; 0 = none has. */
static int throttle_read(uint64_t totals[2])
{
	static const char *const files[2] = {"core_throttle_count", "package_throttle_count"};
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int found = 0;

	totals[0] = totals[1] = 0;
	for (long cpu = 0; cpu < cpus; cpu++)
		for (int f = 0; f < 2; f++) {
			char path[128];
			unsigned long long value;
			FILE *file;

			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/thermal_throttle/%s", cpu, files[f]);
			file = fopen(path, "r");
			if (!file)
				continue;
			if (fscanf(file, "%llu", &value) == 1) {
				totals[f] += value;
				found = 1;
			}
			fclose(file);
		}
	return found;
}

void counters_open(struct counters *counters)
{
	const char *off = getenv("FLEETSCOPE_NO_COUNTERS");
	int leader = -1;

	memset(counters, 0, sizeof(*counters));
	for (size_t i = 0; i < COUNTERS_EVENTS; i++) {
		counters->events[i].fd = -1;
		counters->events[i].state = COUNTER_NOT_COUNTED;
	}
	if (off && strcmp(off, "1") == 0)
		return;
	counters->opened = 1;
	for (size_t i = 0; i < COUNTERS_EVENTS; i++) {
		struct counter *counter = &counters->events[i];
		int group = events[i].hardware_group && i > 0 ? leader : -1;

		if (events[i].hardware_group && i > 0 && leader < 0) {
			/* no leader: the group's reason is the leader's */
			counter->state = counters->events[0].state;
			counter->open_errno = counters->events[0].open_errno;
			continue;
		}
		counter->fd = open_event(i, group, counters->user_only);
		if (counter->fd < 0 && (errno == EACCES || errno == EPERM) && !counters->user_only) {
			/* perf_event_paranoid >= 2: user space only, for this and every later event */
			counters->user_only = 1;
			counter->fd = open_event(i, group, 1);
		}
		if (counter->fd < 0) {
			counter->open_errno = errno;
			counter->state = state_of_errno(errno);
		}
		if (i == 0)
			leader = counter->fd;
	}
}

static void each_leader(struct counters *counters, unsigned long request)
{
	for (size_t i = 0; i < COUNTERS_EVENTS; i++)
		if (counters->events[i].fd >= 0 && !(events[i].hardware_group && i > 0))
			ioctl(counters->events[i].fd, request, PERF_IOC_FLAG_GROUP);
}

void counters_start(struct counters *counters)
{
	counters->throttle_available = throttle_read(counters->throttle_before);
	sensors_start(&counters->sensors);
	if (!counters->opened)
		return;
	each_leader(counters, PERF_EVENT_IOC_RESET);
	each_leader(counters, PERF_EVENT_IOC_ENABLE);
}

void counters_stop(struct counters *counters)
{
	if (counters->opened) {
		each_leader(counters, PERF_EVENT_IOC_DISABLE);
		for (size_t i = 0; i < COUNTERS_EVENTS; i++) {
			struct counter *counter = &counters->events[i];
			uint64_t values[3];

			if (counter->fd < 0)
				continue;
			if (read(counter->fd, values, sizeof(values)) != (ssize_t)sizeof(values)) {
				counter->state = COUNTER_FAILED;
			} else {
				counter->value = values[0];
				counter->time_enabled_ns = values[1];
				counter->time_running_ns = values[2];
				counter->state = values[2] > 0 ? COUNTER_COUNTED : COUNTER_NOT_COUNTED;
			}
		}
		/* members before their leader */
		for (size_t i = COUNTERS_EVENTS; i-- > 0;)
			if (counters->events[i].fd >= 0) {
				close(counters->events[i].fd);
				counters->events[i].fd = -1;
			}
	}
	sensors_stop(&counters->sensors);
	if (counters->throttle_available)
		counters->throttle_available = throttle_read(counters->throttle_after);
}

static const struct counter *find(const struct counters *counters, const char *name)
{
	for (size_t i = 0; i < COUNTERS_EVENTS; i++)
		if (strcmp(events[i].name, name) == 0)
			return &counters->events[i];
	return NULL;
}

void counters_record(struct json *json, const struct counters *counters)
{
	const struct counter *cycles = find(counters, "cycles"), *instructions = find(counters, "instructions");

	json_key(json, "counters");
	json_object_begin(json);
	json_key(json, "scope");
	json_string(json, "timed region");
	if (!counters->opened) {
		json_key(json, "reason");
		json_string(json, "FLEETSCOPE_NO_COUNTERS=1: no counters opened");
	}
	json_key(json, "user_only");
	json_bool(json, counters->user_only);
	json_key(json, "events");
	json_object_begin(json);
	for (size_t i = 0; i < COUNTERS_EVENTS; i++) {
		const struct counter *counter = &counters->events[i];
		int counted = counter->state == COUNTER_COUNTED;

		json_key(json, events[i].name);
		json_object_begin(json);
		json_key(json, "state");
		json_string(json, state_names[counter->state]);
		if (counter->open_errno) {
			json_key(json, "reason");
			json_string(json, strerror(counter->open_errno));
		}
		json_key(json, "value");
		if (counted)
			json_uint(json, counter->value);
		else
			json_null(json);
		/* times only for an event that was opened and read: one never opened has none */
		json_key(json, "time_enabled_ns");
		if (counted || counter->state == COUNTER_NOT_COUNTED)
			json_uint(json, counter->time_enabled_ns);
		else
			json_null(json);
		json_key(json, "time_running_ns");
		if (counted || counter->state == COUNTER_NOT_COUNTED)
			json_uint(json, counter->time_running_ns);
		else
			json_null(json);
		json_key(json, "running_fraction");
		if (counted && counter->time_enabled_ns > 0)
			json_double(json, (double)counter->time_running_ns / (double)counter->time_enabled_ns);
		else
			json_null(json);
		json_object_end(json);
	}
	json_object_end(json);
	/* The two counted over the same time (one group), so their ratio holds even when multiplexed. */
	json_key(json, "ipc");
	if (cycles->state == COUNTER_COUNTED && instructions->state == COUNTER_COUNTED && cycles->value > 0)
		json_double(json, (double)instructions->value / (double)cycles->value);
	else
		json_null(json);
	json_key(json, "throttle");
	/* a count that went down (a CPU went offline between the reads) says nothing */
	if (counters->throttle_available && counters->throttle_after[0] >= counters->throttle_before[0] &&
	    counters->throttle_after[1] >= counters->throttle_before[1]) {
		json_object_begin(json);
		json_key(json, "core_events");
		json_uint(json, counters->throttle_after[0] - counters->throttle_before[0]);
		json_key(json, "package_events");
		json_uint(json, counters->throttle_after[1] - counters->throttle_before[1]);
		json_key(json, "throttled");
		json_bool(json, counters->throttle_after[0] != counters->throttle_before[0] ||
				       counters->throttle_after[1] != counters->throttle_before[1]);
		json_object_end(json);
	} else {
		json_null(json);
	}
	sensors_record(json, &counters->sensors);
	json_object_end(json);
}
