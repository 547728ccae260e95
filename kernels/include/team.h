/* A team of threads running one work body side by side, for the kernels
 * that measure how threads share a machine (affinity, smt).
 *
 * Two bodies: compute (8 independent 64-bit multiply-add chains: throughput
 * bound on the core's integer multipliers, no memory traffic) and memory
 * (sequential reads of a private buffer far beyond the caches: bound by
 * memory bandwidth). Every thread runs its body in short calibrated chunks
 * through the same windows: a barrier starts each window, the thread works
 * until the window's time is up, and its throughput in that window is one
 * sample. Between chunks the thread asks sched_getcpu() where it runs (CPU
 * changes seen = migrations observed, a lower bound), and getrusage
 * (RUSAGE_THREAD) around each window counts its own voluntary and involuntary
 * context switches. Barrier waits fall outside the windows, so their sleeps
 * are not counted. Before each measured window one thread asks the sampler
 * whether the team needs another (every thread's samples are a series of
 * one sampler run: the team stops when all reach the target). */
#ifndef FLEETSCOPE_TEAM_H
#define FLEETSCOPE_TEAM_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "kopts.h"
#include "record.h"
#include "sampler.h"

enum work_kind { WORK_COMPUTE, WORK_MEMORY };

#define WORK_KIND_COUNT 2

/* "compute" / "memory"; parse returns 0, or -1 for anything else. */
const char *work_kind_name(enum work_kind kind);
int work_kind_parse(const char *name, enum work_kind *kind);
/* Gop/s (1e9 multiply-adds per second) or GB/s (1e9 bytes read per second). */
const char *work_kind_unit(enum work_kind kind);
/* A comma list of compute,memory (each at most once) into kinds; returns the
 * count, or exits 2 naming the option and the bad item. */
size_t work_kind_list_parse(const char *kernel, const char *option, const char *text,
			    enum work_kind kinds[WORK_KIND_COUNT]);
/* What one unit of work is, for the records. */
const char *work_kind_operation(enum work_kind kind);

struct team_request {
	enum work_kind kind;
	size_t threads;
	const int *cpus;        /* cpus[i] for thread i, or NULL: threads not pinned */
	struct sampler_run *run; /* begun by the caller, its series the members' samples: one
				    sample per measured window, as many windows as it asks for */
	size_t warmup_windows;  /* run first, not kept */
	double window_ns;
	uint64_t buffer_bytes;  /* WORK_MEMORY: each thread's own buffer */
	uint64_t seed;
};

struct team_member {
	double *samples;        /* [sampler_capacity], the caller's: throughput per window */
	uint64_t chunk_rounds;  /* rounds of the body between two clock reads */
	uint64_t cpu_checks;    /* sched_getcpu() calls inside the windows */
	uint64_t cpu_changes;   /* consecutive checks that differed: migrations seen */
	int first_cpu, last_cpu;
	cpu_set_t cpus_seen;
	long voluntary_switches;   /* RUSAGE_THREAD ru_nvcsw over the windows */
	long involuntary_switches; /* ru_nivcsw over the windows */
	double cpu_s;           /* the thread's own CPU time (ru_utime + ru_stime) over the windows */
	double windows_s;       /* the windows' wall time: cpu_s / windows_s is the share of a CPU it had */
	uint64_t huge_bytes_granted; /* WORK_MEMORY: THP backing of the buffer */
};

/* Runs the team and fills members[0..threads-1]. Returns 0, or -1 with what
 * failed (memory, a thread, a CPU the host did not honour) in error; no
 * thread is left running either way. */
int team_run(const struct team_request *request, struct team_member *members, char *error,
	     size_t error_size);

/* Writes the shared per-thread context (chunk_rounds, cpu_checks,
 * migrations_observed, cpus_seen, first_cpu, last_cpu,
 * voluntary_context_switches, involuntary_context_switches, thread_cpu_s,
 * windows_s) into an open JSON object. Threads placed on different CPUs whose
 * thread_cpu_s / windows_s add up to about one ran on one CPU between them. */
void team_member_context(struct json *json, const struct team_member *member);

/* Finishes one thread's record after the kernel's own params: window_ms,
 * buffer_bytes (memory body only), operation, seed, the samples and their
 * precision (run), the member's context, huge_bytes_granted (memory body),
 * wall_s and order_index; then ends the record with label. One writer for
 * affinity and smt. */
void team_member_record(struct record *record, const struct team_member *member, enum work_kind kind,
			const struct kopts *common, const struct sampler_run *run, uint64_t buffer_bytes,
			double wall_s, uint64_t order_index, const char *label);

#endif
