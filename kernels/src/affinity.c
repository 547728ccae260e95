/* Pinning the measuring thread to one CPU; see affinity.h. */
#include "affinity.h"

#include <errno.h>
#include <sched.h>

int affinity_cpu_allowed(int cpu)
{
	cpu_set_t allowed;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return 0;
	return CPU_ISSET(cpu, &allowed) ? 1 : 0;
}

int affinity_pin(int cpu)
{
	cpu_set_t only;

	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO(&only);
	CPU_SET(cpu, &only);
	return sched_setaffinity(0, sizeof(only), &only);
}
