/* Pinning the measuring thread to one CPU. */
#ifndef FLEETSCOPE_AFFINITY_H
#define FLEETSCOPE_AFFINITY_H

/* Returns 1 if cpu is in this process's allowed CPU set, else 0. */
int affinity_cpu_allowed(int cpu);

/* Pins the calling thread to cpu. Returns 0, or -1 with errno set. */
int affinity_pin(int cpu);

#endif
