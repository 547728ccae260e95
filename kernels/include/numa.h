/* Where memory really lies: the NUMA node of a sample of a buffer's pages,
 * asked of the kernel with move_pages(2) in query mode (nodes NULL: nothing
 * moves, each page's node comes back in status). --mem-node binds memory
 * with set_mempolicy MPOL_BIND (kopts.c); this checks that the binding held,
 * so a record claims a memory node only for pages seen there. */
#ifndef FLEETSCOPE_NUMA_H
#define FLEETSCOPE_NUMA_H

#include <stddef.h>
#include <stdint.h>

#define NUMA_PAGES_SAMPLED 256

/* Queries up to NUMA_PAGES_SAMPLED pages spread evenly over [base, base +
 * bytes) (touched already) and counts in *on_node those on node. Returns 0,
 * or -1 with errno set when the kernel refuses the query (*sampled 0). */
int numa_pages_on_node(const void *base, size_t bytes, int node, uint64_t *sampled, uint64_t *on_node);

#endif
