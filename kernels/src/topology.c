/* CPU topology from sysfs; see topology.h. */
#include "topology.h"

#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "cli.h"

#define DEFAULT_CPU_ROOT "/sys/devices/system/cpu"
#define DEFAULT_NODE_ROOT "/sys/devices/system/node"
#define MAX_FILE_BYTES (1 << 20)
#define SYSFS_MAX_CPU ((1 << 22) - 1) /* bounds what a malformed file can make us allocate */

static const char *cpu_root(void)
{
	const char *root = getenv("FLEETSCOPE_SYSFS_ROOT");

	return root && *root ? root : DEFAULT_CPU_ROOT;
}

/* The node directory sits beside the cpu directory in sysfs. */
static void node_root(char *out, size_t size)
{
	const char *root = getenv("FLEETSCOPE_SYSFS_ROOT");

	if (root && *root)
		snprintf(out, size, "%s/../node", root);
	else
		snprintf(out, size, "%s", DEFAULT_NODE_ROOT);
}

/* The whole file as a malloc'd string, or NULL (errno ENOENT/EACCES... or
 * ENOMEM). */
static char *read_file(const char *path)
{
	FILE *file = fopen(path, "r");
	size_t length = 0, capacity = 256;
	char *text;

	if (!file)
		return NULL;
	text = malloc(capacity);
	while (text) {
		size_t got = fread(text + length, 1, capacity - length - 1, file);
		char *grown;

		length += got;
		if (length + 1 < capacity || got == 0)
			break;
		if (capacity >= MAX_FILE_BYTES) {
			free(text);
			text = NULL;
			errno = EFBIG;
			break;
		}
		capacity *= 2;
		grown = realloc(text, capacity);

		if (!grown) {
			free(text);
			text = NULL;
			errno = ENOMEM;
			break;
		}
		text = grown;
	}
	if (text && ferror(file)) {
		free(text);
		text = NULL;
		errno = EIO;
	}
	fclose(file);
	if (text)
		text[length] = '\0';
	return text;
}

/* A non-negative decimal integer file (core_id, physical_package_id), or
 * TOPOLOGY_UNKNOWN. Some platforms write -1 for "not known": kept unknown. */
static int read_id(const char *path)
{
	char *text = read_file(path), *end;
	long value;

	if (!text)
		return TOPOLOGY_UNKNOWN;
	errno = 0;
	value = strtol(text, &end, 10);
	while (*end && isspace((unsigned char)*end))
		end++;
	if (end == text || *end != '\0' || errno != 0 || value < 0 || value > INT_MAX)
		value = TOPOLOGY_UNKNOWN;
	free(text);
	return (int)value;
}

/* 0, -1 if text is not a decimal number, -2 if it is above max_cpu. */
static int parse_cpu_number(const char *text, int max_cpu, int *cpu)
{
	unsigned long value;
	char *end;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	value = strtoul(text, &end, 10);
	if (*end != '\0')
		return -1;
	if (errno != 0 || value > (unsigned long)max_cpu)
		return -2;
	*cpu = (int)value;
	return 0;
}

const char *topology_cpulist_parse(const char *text, int max_cpu, int **cpus, size_t *count,
				   char **bad_item)
{
	size_t start = 0, end = strlen(text), used = 0, capacity = 0;
	const char *error = NULL;
	char *copy, *item, *rest;
	int *list = NULL;

	*cpus = NULL;
	*count = 0;
	*bad_item = NULL;
	while (start < end && isspace((unsigned char)text[start]))
		start++;
	while (end > start && isspace((unsigned char)text[end - 1]))
		end--;
	copy = strndup(text + start, end - start);
	if (!copy)
		return "cannot be parsed: out of memory";
	if (copy[0] == '\0') {
		free(copy);
		*cpus = malloc(sizeof(**cpus));
		return *cpus ? NULL : "cannot be parsed: out of memory";
	}
	for (item = copy; item && !error; item = rest) {
		char *dash;
		int first, last;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		dash = strchr(item, '-');
		if (item[0] == '\0') {
			error = "is empty; separate CPUs with single commas";
		} else if (dash) {
			int low, high;

			*dash = '\0';
			low = parse_cpu_number(item, max_cpu, &first);
			high = parse_cpu_number(dash + 1, max_cpu, &last);
			*dash = '-';
			if (low == -1 || high == -1)
				error = "is not a CPU number or a range like 0-3";
			else if (low == -2 || high == -2)
				error = "names a CPU number too large to exist";
			else if (last < first)
				error = "is a range that runs backwards; write it low-high";
		} else {
			int status = parse_cpu_number(item, max_cpu, &first);

			if (status == -1)
				error = "is not a CPU number or a range like 0-3";
			else if (status == -2)
				error = "names a CPU number too large to exist";
			last = first;
		}
		if (error) {
			*bad_item = strdup(item);
			break;
		}
		if (used + (size_t)(last - first) + 1 > capacity) {
			size_t wanted = used + (size_t)(last - first) + 1;
			int *grown;

			capacity = capacity * 2 > wanted ? capacity * 2 : wanted;
			grown = realloc(list, capacity * sizeof(*list));
			if (!grown) {
				error = "cannot be parsed: out of memory";
				break;
			}
			list = grown;
		}
		for (int cpu = first; cpu <= last; cpu++)
			list[used++] = cpu;
	}
	free(copy);
	if (error) {
		free(list);
		return error;
	}
	*cpus = list;
	*count = used;
	return NULL;
}

/* Reads a CPU-list file into a malloc'd array; -1 with *list NULL if the
 * file is missing or malformed, -2 if memory ran out. */
static int read_cpulist(const char *path, int **list, size_t *count)
{
	char *text = read_file(path), *bad = NULL;
	const char *error;

	*list = NULL;
	*count = 0;
	if (!text)
		return errno == ENOMEM ? -2 : -1;
	error = topology_cpulist_parse(text, SYSFS_MAX_CPU, list, count, &bad);
	free(text);
	free(bad);
	if (error)
		return strstr(error, "out of memory") ? -2 : -1;
	return 0;
}

static int list_has(const int *list, size_t count, int cpu)
{
	for (size_t i = 0; i < count; i++)
		if (list[i] == cpu)
			return 1;
	return 0;
}

/* The node whose cpulist holds cpu; TOPOLOGY_UNKNOWN if there is no node
 * directory (no NUMA support) or no node lists it; -2 if memory ran out. */
static int find_numa_node(int cpu)
{
	char root[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *entry;
	int node = TOPOLOGY_UNKNOWN;
	DIR *dir;

	node_root(root, sizeof(root));
	dir = opendir(root);
	if (!dir)
		return TOPOLOGY_UNKNOWN;
	while (node == TOPOLOGY_UNKNOWN && (entry = readdir(dir)) != NULL) {
		const char *digits = entry->d_name + 4;
		int candidate, status;
		size_t count;
		int *list;

		if (strncmp(entry->d_name, "node", 4) != 0 ||
		    parse_cpu_number(digits, SYSFS_MAX_CPU, &candidate) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpulist", root, entry->d_name);
		status = read_cpulist(path, &list, &count);
		if (status == -2) {
			node = -2;
			break;
		}
		if (status == 0 && list_has(list, count, cpu))
			node = candidate;
		free(list);
	}
	closedir(dir);
	return node;
}

int topology_read(int cpu, struct topology_cpu *out)
{
	char path[PATH_MAX];
	const char *root = cpu_root();
	int status;

	memset(out, 0, sizeof(*out));
	out->cpu = cpu;
	snprintf(path, sizeof(path), "%s/cpu%d/topology/core_id", root, cpu);
	out->core_id = read_id(path);
	snprintf(path, sizeof(path), "%s/cpu%d/topology/physical_package_id", root, cpu);
	out->package_id = read_id(path);
	snprintf(path, sizeof(path), "%s/cpu%d/topology/thread_siblings_list", root, cpu);
	status = read_cpulist(path, &out->siblings, &out->sibling_count);
	if (status == -2)
		return -1;
	if (status != 0 || out->sibling_count == 0) {
		free(out->siblings);
		out->siblings = NULL;
		out->sibling_count = 0;
	}
	out->numa_node = find_numa_node(cpu);
	if (out->numa_node == -2) {
		topology_free(out);
		return -1;
	}
	return 0;
}

void topology_free(struct topology_cpu *cpu)
{
	free(cpu->siblings);
	cpu->siblings = NULL;
	cpu->sibling_count = 0;
}

int topology_smt_siblings(const struct topology_cpu *a, const struct topology_cpu *b)
{
	if (a->cpu == b->cpu)
		return 0;
	if (!a->siblings)
		return TOPOLOGY_UNKNOWN;
	return list_has(a->siblings, a->sibling_count, b->cpu);
}

int topology_same_package(const struct topology_cpu *a, const struct topology_cpu *b)
{
	if (a->package_id == TOPOLOGY_UNKNOWN || b->package_id == TOPOLOGY_UNKNOWN)
		return TOPOLOGY_UNKNOWN;
	return a->package_id == b->package_id;
}

int topology_same_core(const struct topology_cpu *a, const struct topology_cpu *b)
{
	int package = topology_same_package(a, b);

	if (package == 0)
		return 0;
	if (package == TOPOLOGY_UNKNOWN || a->core_id == TOPOLOGY_UNKNOWN ||
	    b->core_id == TOPOLOGY_UNKNOWN)
		return TOPOLOGY_UNKNOWN;
	return a->core_id == b->core_id;
}

size_t topology_cpu_order(const char *kernel, int **cpus, size_t *cores, const char **rule)
{
	const char *how = "one CPU per (physical_package_id, core_id) in sysfs";
	cpu_set_t allowed;
	int *keys_core, *keys_package, *later;
	size_t count = 0, later_count = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, kernel, "cannot read this process's CPU affinity: %s", strerror(errno));
	*cpus = malloc(CPU_SETSIZE * sizeof(**cpus));
	later = malloc(CPU_SETSIZE * sizeof(*later));
	keys_core = malloc(CPU_SETSIZE * sizeof(*keys_core));
	keys_package = malloc(CPU_SETSIZE * sizeof(*keys_package));
	if (!*cpus || !later || !keys_core || !keys_package)
		cli_fail(CLI_EXIT_RUNTIME, kernel, "out of memory planning CPUs");
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct topology_cpu topology;
		int known, seen = 0;

		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (topology_read(cpu, &topology) != 0)
			cli_fail(CLI_EXIT_RUNTIME, kernel, "out of memory reading the CPU topology");
		known = topology.core_id != TOPOLOGY_UNKNOWN && topology.package_id != TOPOLOGY_UNKNOWN;
		if (!known)
			how = "sysfs does not give every CPU's core: CPUs without one count as cores of their own";
		for (size_t i = 0; known && i < count; i++)
			seen |= keys_core[i] == topology.core_id && keys_package[i] == topology.package_id;
		if (seen) {
			later[later_count++] = cpu;
		} else {
			keys_core[count] = known ? topology.core_id : TOPOLOGY_UNKNOWN - cpu - 1;
			keys_package[count] = known ? topology.package_id : TOPOLOGY_UNKNOWN;
			(*cpus)[count++] = cpu;
		}
		topology_free(&topology);
	}
	memcpy(*cpus + count, later, later_count * sizeof(*later));
	free(later);
	free(keys_core);
	free(keys_package);
	*cores = count;
	if (rule)
		*rule = how;
	return count + later_count;
}

size_t topology_cpus_option(const char *kernel, const char *option, const char *text, int **cpus)
{
	char *bad_item = NULL;
	size_t count = 0;
	const char *error = topology_cpulist_parse(text, CPU_SETSIZE - 1, cpus, &count, &bad_item);
	cpu_set_t seen;

	if (error && !bad_item)
		cli_fail(CLI_EXIT_RUNTIME, kernel, "%s %s", option, error);
	if (error)
		cli_fail(CLI_EXIT_USAGE, kernel, "%s item '%s' %s (a list looks like 0-3,8)", option, bad_item, error);
	if (count == 0)
		cli_fail(CLI_EXIT_USAGE, kernel, "%s is empty; give at least one CPU, e.g. 0", option);
	CPU_ZERO(&seen);
	for (size_t i = 0; i < count; i++) {
		int cpu = (*cpus)[i];

		if (!affinity_cpu_allowed(cpu))
			cli_fail(CLI_EXIT_USAGE, kernel,
				 "%s names CPU %d, which this process may not run on; pick from 'taskset -pc $$'", option,
				 cpu);
		if (CPU_ISSET(cpu, &seen))
			cli_fail(CLI_EXIT_USAGE, kernel, "%s names CPU %d twice; list each CPU once", option, cpu);
		CPU_SET(cpu, &seen);
	}
	return count;
}
