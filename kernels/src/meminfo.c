/* MemAvailable from /proc/meminfo; see meminfo.h. */
#include "meminfo.h"

#include <inttypes.h>
#include <stdio.h>

int meminfo_available_bytes(uint64_t *bytes)
{
	FILE *meminfo = fopen("/proc/meminfo", "r");
	char line[256];
	int found = -1;

	if (!meminfo)
		return -1;
	while (fgets(line, sizeof(line), meminfo)) {
		uint64_t kib;

		if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1) {
			*bytes = kib * 1024;
			found = 0;
			break;
		}
	}
	fclose(meminfo);
	return found;
}
