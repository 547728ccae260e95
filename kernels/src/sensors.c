/* Energy (powercap RAPL) and package temperature (hwmon) around a timed
 * region; see sensors.h. */
#include "sensors.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"

#define DEFAULT_POWERCAP_ROOT "/sys/class/powercap"
#define DEFAULT_HWMON_ROOT "/sys/class/hwmon"
#define MAX_ENTRIES 256

static const char *root_of(const char *variable, const char *fallback)
{
	const char *root = getenv(variable);

	return root && *root ? root : fallback;
}

/* The first line of a small sysfs file, newline cut; 0, or errno. */
static int read_line(const char *path, char *out, size_t size)
{
	FILE *file = fopen(path, "r");
	int error = 0;

	if (!file)
		return errno ? errno : EIO;
	if (!fgets(out, (int)size, file))
		error = ferror(file) ? (errno ? errno : EIO) : ENODATA;
	fclose(file);
	if (!error)
		out[strcspn(out, "\n")] = '\0';
	return error;
}

static int read_u64(const char *path, uint64_t *value)
{
	char text[64], *end;
	int error = read_line(path, text, sizeof(text));

	if (error)
		return error;
	errno = 0;
	*value = strtoull(text, &end, 10);
	return errno || end == text || *end != '\0' || text[0] == '-' ? EINVAL : 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of directory root whose names start with prefix, sorted; the
 * count, or -1 with errno when root cannot be listed. */
static int list_entries(const char *root, const char *prefix, char *names[MAX_ENTRIES])
{
	DIR *directory = opendir(root);
	struct dirent *entry;
	int count = 0;

	if (!directory)
		return -1;
	while ((entry = readdir(directory)) && count < MAX_ENTRIES)
		if (strncmp(entry->d_name, prefix, strlen(prefix)) == 0 && (names[count] = strdup(entry->d_name)))
			count++;
	closedir(directory);
	qsort(names, (size_t)count, sizeof(*names), compare_names);
	return count;
}

static void free_entries(char *names[MAX_ENTRIES], int count)
{
	for (int i = 0; i < count; i++)
		free(names[i]);
}

/* intel-rapl:<digits>[:<digits>]: the MSR zones (intel-rapl-mmio repeats the package). */
static int is_rapl_zone(const char *name)
{
	const char *p = name + strlen("intel-rapl:");

	if (strncmp(name, "intel-rapl:", strlen("intel-rapl:")) != 0 || !*p)
		return 0;
	for (; *p; p++)
		if ((*p < '0' || *p > '9') && *p != ':')
			return 0;
	return 1;
}

static void find_zones(struct sensors *sensors)
{
	const char *root = root_of("FLEETSCOPE_POWERCAP_ROOT", DEFAULT_POWERCAP_ROOT);
	char *names[MAX_ENTRIES];
	int count = list_entries(root, "intel-rapl:", names);

	if (count < 0) {
		snprintf(sensors->energy_reason, sizeof(sensors->energy_reason),
			 "%s: %s: the kernel exposes no powercap energy counters (a VM, a CPU without RAPL, or the intel_rapl_msr module not loaded)",
			 root, strerror(errno));
		return;
	}
	for (int i = 0; i < count && sensors->zone_count < SENSORS_MAX_ZONES; i++) {
		struct energy_zone *zone = &sensors->zones[sensors->zone_count];
		char path[512];

		if (!is_rapl_zone(names[i]))
			continue;
		memset(zone, 0, sizeof(*zone));
		snprintf(zone->zone, sizeof(zone->zone), "%s", names[i]);
		snprintf(path, sizeof(path), "%s/%s/name", root, names[i]);
		if (read_line(path, zone->name, sizeof(zone->name)) != 0)
			snprintf(zone->name, sizeof(zone->name), "%s", names[i]);
		snprintf(path, sizeof(path), "%s/%s/max_energy_range_uj", root, names[i]);
		if (read_u64(path, &zone->max_range_uj) != 0)
			zone->max_range_uj = 0;
		sensors->zone_count++;
	}
	free_entries(names, count);
	if (sensors->zone_count == 0)
		snprintf(sensors->energy_reason, sizeof(sensors->energy_reason),
			 "%s has no intel-rapl zone: this CPU's energy counters are not exposed through powercap", root);
}

/* The hwmon chips whose temperatures are the CPU package's, and which of
 * their labels to take (NULL: temp1, the chip's one sensor). */
static const struct {
	const char *chip;
	const char *labels[3];
} package_chips[] = {
	{"coretemp", {"Package id ", NULL, NULL}},
	{"k10temp", {"Tctl", "Tdie", NULL}},
	{"zenpower", {"Tctl", "Tdie", NULL}},
	{"cpu_thermal", {NULL, NULL, NULL}},
};

static void add_temperature(struct sensors *sensors, const char *chip, const char *label, const char *path)
{
	struct temperature *temperature;

	if (sensors->temperature_count == SENSORS_MAX_TEMPERATURES)
		return;
	temperature = &sensors->temperatures[sensors->temperature_count++];
	memset(temperature, 0, sizeof(*temperature));
	snprintf(temperature->chip, sizeof(temperature->chip), "%s", chip);
	snprintf(temperature->label, sizeof(temperature->label), "%s", label);
	snprintf(temperature->path, sizeof(temperature->path), "%s", path);
}

static void find_temperatures(struct sensors *sensors)
{
	const char *root = root_of("FLEETSCOPE_HWMON_ROOT", DEFAULT_HWMON_ROOT);
	char *names[MAX_ENTRIES];
	int count = list_entries(root, "hwmon", names);

	if (count < 0) {
		snprintf(sensors->temperature_reason, sizeof(sensors->temperature_reason),
			 "%s: %s: the kernel exposes no hwmon sensors (common in VMs)", root, strerror(errno));
		return;
	}
	for (int i = 0; i < count; i++) {
		char path[512], chip[SENSORS_TEXT];

		snprintf(path, sizeof(path), "%s/%s/name", root, names[i]);
		if (read_line(path, chip, sizeof(chip)) != 0)
			continue;
		for (size_t c = 0; c < sizeof(package_chips) / sizeof(package_chips[0]); c++) {
			if (strcmp(chip, package_chips[c].chip) != 0)
				continue;
			if (!package_chips[c].labels[0]) {
				snprintf(path, sizeof(path), "%s/%s/temp1_input", root, names[i]);
				add_temperature(sensors, chip, "temp1", path);
				continue;
			}
			/* tempK_label for K = 1..64: the labels wanted, in the order the chip numbers them */
			for (int k = 1; k <= 64; k++) {
				char label[SENSORS_TEXT];

				snprintf(path, sizeof(path), "%s/%s/temp%d_label", root, names[i], k);
				if (read_line(path, label, sizeof(label)) != 0)
					continue;
				for (int l = 0; l < 3 && package_chips[c].labels[l]; l++)
					if (strncmp(label, package_chips[c].labels[l], strlen(package_chips[c].labels[l])) == 0) {
						snprintf(path, sizeof(path), "%s/%s/temp%d_input", root, names[i], k);
						add_temperature(sensors, chip, label, path);
						break;
					}
			}
		}
	}
	free_entries(names, count);
	if (sensors->temperature_count == 0)
		snprintf(sensors->temperature_reason, sizeof(sensors->temperature_reason),
			 "%s has no CPU package sensor (coretemp, k10temp, zenpower or cpu_thermal)", root);
}

static void read_zones(struct sensors *sensors, int after)
{
	const char *root = root_of("FLEETSCOPE_POWERCAP_ROOT", DEFAULT_POWERCAP_ROOT);

	for (size_t i = 0; i < sensors->zone_count; i++) {
		struct energy_zone *zone = &sensors->zones[i];
		char path[512];
		int error;

		if (after && !zone->read_before)
			continue;
		snprintf(path, sizeof(path), "%s/%s/energy_uj", root, zone->zone);
		error = read_u64(path, after ? &zone->after_uj : &zone->before_uj);
		if (error)
			zone->error = error;
		else if (after)
			zone->read_after = 1;
		else
			zone->read_before = 1;
	}
}

static void read_temperatures(struct sensors *sensors, int after)
{
	for (size_t i = 0; i < sensors->temperature_count; i++) {
		struct temperature *temperature = &sensors->temperatures[i];
		char text[64], *end;
		long millidegrees;

		if (read_line(temperature->path, text, sizeof(text)) != 0)
			continue;
		errno = 0;
		millidegrees = strtol(text, &end, 10);
		if (errno || end == text || *end != '\0')
			continue;
		if (after) {
			temperature->after_c = (double)millidegrees / 1000.0;
			temperature->read_after = 1;
		} else {
			temperature->before_c = (double)millidegrees / 1000.0;
			temperature->read_before = 1;
		}
	}
}

void sensors_start(struct sensors *sensors)
{
	memset(sensors, 0, sizeof(*sensors));
	find_zones(sensors);
	find_temperatures(sensors);
	read_temperatures(sensors, 0);
	sensors->started_ns = timer_now_ns();
	read_zones(sensors, 0);
}

void sensors_stop(struct sensors *sensors)
{
	read_zones(sensors, 1);
	sensors->stopped_ns = timer_now_ns();
	read_temperatures(sensors, 1);
}

uint64_t sensors_energy_delta_uj(uint64_t before_uj, uint64_t after_uj, uint64_t max_range_uj, int *wrapped)
{
	if (after_uj >= before_uj) {
		*wrapped = 0;
		return after_uj - before_uj;
	}
	if (max_range_uj == 0 || before_uj > max_range_uj) {
		*wrapped = -1;
		return 0;
	}
	*wrapped = 1;
	return max_range_uj - before_uj + after_uj;
}

static void put_reason(struct json *json, const char *reason)
{
	json_key(json, "reason");
	if (reason && *reason)
		json_string(json, reason);
	else
		json_null(json);
}

static void record_zone(struct json *json, const struct energy_zone *zone, double seconds)
{
	char reason[160] = "";
	uint64_t delta = 0;
	int wrapped = 0, known;

	if (zone->error)
		snprintf(reason, sizeof(reason), "energy_uj: %s%s", strerror(zone->error),
			 zone->error == EACCES ? " (root only since Linux 5.10, CVE-2020-8694)" : "");
	else if (zone->read_before && zone->read_after) {
		delta = sensors_energy_delta_uj(zone->before_uj, zone->after_uj, zone->max_range_uj, &wrapped);
		if (wrapped < 0)
			snprintf(reason, sizeof(reason),
				 "the count went down from %" PRIu64 " to %" PRIu64 " uJ with no max_energy_range_uj to unwrap it",
				 zone->before_uj, zone->after_uj);
	}
	known = !reason[0] && zone->read_before && zone->read_after;
	json_object_begin(json);
	json_key(json, "zone");
	json_string(json, zone->zone);
	json_key(json, "name");
	json_string(json, zone->name);
	json_key(json, "joules");
	if (known)
		json_double(json, (double)delta / 1e6);
	else
		json_null(json);
	json_key(json, "watts");
	if (known && seconds > 0)
		json_double(json, (double)delta / 1e6 / seconds);
	else
		json_null(json);
	json_key(json, "wrapped");
	json_bool(json, wrapped == 1);
	json_key(json, "before_uj");
	if (zone->read_before)
		json_uint(json, zone->before_uj);
	else
		json_null(json);
	json_key(json, "after_uj");
	if (zone->read_after)
		json_uint(json, zone->after_uj);
	else
		json_null(json);
	json_key(json, "max_energy_range_uj");
	if (zone->max_range_uj)
		json_uint(json, zone->max_range_uj);
	else
		json_null(json);
	put_reason(json, reason);
	json_object_end(json);
}

void sensors_record(struct json *json, const struct sensors *sensors)
{
	double seconds = sensors->stopped_ns > sensors->started_ns
				 ? (double)(sensors->stopped_ns - sensors->started_ns) / 1e9
				 : 0.0;
	char reason[256] = "";
	size_t readable = 0;

	for (size_t i = 0; i < sensors->zone_count; i++)
		readable += sensors->zones[i].read_before && sensors->zones[i].read_after;
	if (!sensors->started_ns)
		snprintf(reason, sizeof(reason), "not read: the timed region never started");
	else if (sensors->energy_reason[0])
		snprintf(reason, sizeof(reason), "%s", sensors->energy_reason);
	else if (!readable && sensors->zone_count)
		snprintf(reason, sizeof(reason), "no zone's energy_uj could be read: %s%s",
			 strerror(sensors->zones[0].error ? sensors->zones[0].error : EIO),
			 sensors->zones[0].error == EACCES ? " (root only since Linux 5.10, CVE-2020-8694)" : "");
	json_key(json, "energy");
	json_object_begin(json);
	json_key(json, "available");
	json_bool(json, readable > 0);
	put_reason(json, reason);
	json_key(json, "seconds");
	json_double(json, seconds);
	json_key(json, "zones");
	json_array_begin(json);
	for (size_t i = 0; i < sensors->zone_count; i++)
		record_zone(json, &sensors->zones[i], seconds);
	json_array_end(json);
	json_object_end(json);

	readable = 0;
	for (size_t i = 0; i < sensors->temperature_count; i++)
		readable += sensors->temperatures[i].read_before || sensors->temperatures[i].read_after;
	json_key(json, "temperature");
	json_object_begin(json);
	json_key(json, "available");
	json_bool(json, readable > 0);
	put_reason(json, !sensors->started_ns		     ? "not read: the timed region never started"
			 : sensors->temperature_reason[0] ? sensors->temperature_reason
			 : readable			   ? NULL
							   : "no package sensor's tempK_input could be read");
	json_key(json, "sensors");
	json_array_begin(json);
	for (size_t i = 0; i < sensors->temperature_count; i++) {
		const struct temperature *temperature = &sensors->temperatures[i];

		json_object_begin(json);
		json_key(json, "chip");
		json_string(json, temperature->chip);
		json_key(json, "label");
		json_string(json, temperature->label);
		json_key(json, "before_c");
		if (temperature->read_before)
			json_double(json, temperature->before_c);
		else
			json_null(json);
		json_key(json, "after_c");
		if (temperature->read_after)
			json_double(json, temperature->after_c);
		else
			json_null(json);
		json_object_end(json);
	}
	json_array_end(json);
	json_object_end(json);
}
