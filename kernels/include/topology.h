/* CPU topology from sysfs, for any kernel that places threads: for one
 * logical CPU its core and package IDs, its hardware-thread (SMT) siblings
 * and its NUMA node; plus the Linux CPU-list format ("0-3,8") that sysfs
 * writes and that --cpus style options take.
 *
 * Paths: $FLEETSCOPE_SYSFS_ROOT (default /sys/devices/system/cpu)/cpuN/
 * topology/{core_id,physical_package_id,thread_siblings_list}, and the
 * NUMA nodes in the directory beside it, .../node/nodeK/cpulist. Tests
 * point FLEETSCOPE_SYSFS_ROOT at a fake tree. Anything sysfs does not say
 * (no NUMA directory, a container hiding topology/) is reported as unknown,
 * never guessed. */
#ifndef FLEETSCOPE_TOPOLOGY_H
#define FLEETSCOPE_TOPOLOGY_H

#include <stddef.h>

#define TOPOLOGY_UNKNOWN (-1)

struct topology_cpu {
	int cpu;
	int core_id;      /* topology/core_id; TOPOLOGY_UNKNOWN if absent */
	int package_id;   /* topology/physical_package_id; TOPOLOGY_UNKNOWN if absent */
	int numa_node;    /* the node whose cpulist holds cpu; TOPOLOGY_UNKNOWN if none */
	int *siblings;    /* topology/thread_siblings_list, cpu itself included, */
	size_t sibling_count; /* ascending; NULL and 0 if absent */
};

/* Fills *out for cpu. Returns 0 (missing files leave fields unknown), or -1
 * if memory runs out. Free with topology_free. */
int topology_read(int cpu, struct topology_cpu *out);
void topology_free(struct topology_cpu *cpu);

/* Relations between two CPUs: 1 yes, 0 no, TOPOLOGY_UNKNOWN when sysfs did
 * not say. smt_siblings: b is in a's thread_siblings_list (and b != a).
 * same_core: same package and same core_id. same_package: same
 * physical_package_id. */
int topology_smt_siblings(const struct topology_cpu *a, const struct topology_cpu *b);
int topology_same_core(const struct topology_cpu *a, const struct topology_cpu *b);
int topology_same_package(const struct topology_cpu *a, const struct topology_cpu *b);

/* Parses a CPU list: comma-separated numbers and ascending ranges
 * ("0-3,8"), each at most max_cpu, surrounding whitespace and one trailing
 * newline allowed (as sysfs writes it). Items keep their order, and
 * duplicates are kept for the caller to judge. An empty text gives count 0.
 * Returns NULL and a malloc'd array in *cpus (caller frees), or a message
 * and a malloc'd copy of the offending item in *bad_item (caller frees). */
const char *topology_cpulist_parse(const char *text, int max_cpu, int **cpus, size_t *count,
				   char **bad_item);

/* A CPU-list option (--cpus) of a kernel that places threads: the CPUs in
 * the order given, each one this process may run on, none twice. Returns
 * the count and a malloc'd array in *cpus (caller frees); exits 2 with a
 * one-line message naming kernel and option otherwise. */
size_t topology_cpus_option(const char *kernel, const char *option, const char *text, int **cpus);

/* The CPUs this process may run on, one per physical core first (the first
 * allowed CPU of each (package, core_id), ascending), then the remaining SMT
 * siblings, ascending; a CPU whose core sysfs does not give counts as a core
 * of its own. Returns the count of CPUs in the malloc'd *cpus (caller frees)
 * and in *cores how many of them lead, one per core; *rule (may be NULL)
 * says how cores were told apart. Exits 1 (naming kernel) if the affinity
 * cannot be read or memory runs out. */
size_t topology_cpu_order(const char *kernel, int **cpus, size_t *cores, const char **rule);

#endif
