/* What the host can spare for a working set, from /proc/meminfo. */
#ifndef FLEETSCOPE_MEMINFO_H
#define FLEETSCOPE_MEMINFO_H

#include <stdint.h>

/* Reads MemAvailable in bytes. Returns 0, or -1 if it cannot be read. */
int meminfo_available_bytes(uint64_t *bytes);

#endif
