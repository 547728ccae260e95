/* NUMA placement check (include/numa.h). */
#include "numa.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

int numa_pages_on_node(const void *base, size_t bytes, int node, uint64_t *sampled, uint64_t *on_node)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t pages = bytes / page ? bytes / page : 1;
	const size_t count = pages < NUMA_PAGES_SAMPLED ? pages : NUMA_PAGES_SAMPLED;
	void *addresses[NUMA_PAGES_SAMPLED];
	int status[NUMA_PAGES_SAMPLED];

	*sampled = *on_node = 0;
	for (size_t i = 0; i < count; i++)
		addresses[i] = (char *)base + (i * pages / count) * page;
	/* pid 0: this process; nodes NULL: report, move nothing */
	if (syscall(SYS_move_pages, 0, (unsigned long)count, addresses, NULL, status, 0) != 0)
		return -1;
	for (size_t i = 0; i < count; i++)
		*on_node += status[i] == node;
	*sampled = count;
	return 0;
}
