/* Measurement buffers: 2 MiB-aligned anonymous mappings with a page-size
 * policy (transparent huge pages, base pages, or hugetlbfs pages), touched
 * before use, and the huge-page grant measured rather than assumed. */
#ifndef FLEETSCOPE_BUFFERS_H
#define FLEETSCOPE_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#define BUFFER_HUGE_PAGE_BYTES ((size_t)2 << 20)

enum page_policy {
	PAGE_POLICY_THP, /* madvise(MADV_HUGEPAGE): transparent 2 MiB pages */
	PAGE_POLICY_4K,  /* madvise(MADV_NOHUGEPAGE): base pages only */
	PAGE_POLICY_HUGETLB, /* mmap(MAP_HUGETLB | MAP_HUGE_2MB): 2 MiB pages from the
			      * reserved pool (/proc/sys/vm/nr_hugepages) */
};

/* Returns 0 and sets *policy for "thp", "4k" or "hugetlb"; -1 for anything
 * else. */
int page_policy_parse(const char *name, enum page_policy *policy);
const char *page_policy_name(enum page_policy policy);

struct buffer {
	void *data;           /* 2 MiB aligned */
	size_t bytes;         /* requested size rounded up to 2 MiB */
	void *mapping;        /* whole reservation, guard regions included */
	size_t mapping_bytes;
};

/* Maps, advises and touches a buffer of at least bytes. Returns 0, or -1
 * with errno set. With PAGE_POLICY_HUGETLB the mmap itself fails (typically
 * ENOMEM) when the pool lacks free 2 MiB pages for the whole buffer. */
int buffer_alloc(struct buffer *buffer, size_t bytes, enum page_policy policy);
/* As buffer_alloc, but touches only one page every touch_stride bytes (a
 * multiple of the page size; EINVAL otherwise): a sparse buffer whose span
 * may be far larger than the memory it takes (the tlb kernel's page stride). */
int buffer_alloc_sparse(struct buffer *buffer, size_t bytes, enum page_policy policy, size_t touch_stride);
void buffer_free(struct buffer *buffer);

/* Bytes of the buffer backed by huge pages, from its mapping in
 * /proc/self/smaps: AnonHugePages (transparent huge pages) plus
 * Private_Hugetlb and Shared_Hugetlb (hugetlbfs pages; counted only when the
 * mapping's KernelPageSize is above the base page size).
 * Returns 0, or -1 if the mapping cannot be found. */
int buffer_huge_bytes(const struct buffer *buffer, uint64_t *huge_bytes);

/* The pool PAGE_POLICY_HUGETLB draws from: 2 MiB pages that are free and not
 * reserved by another mapping (HugePages_Free - HugePages_Rsvd in
 * /proc/meminfo when Hugepagesize is 2048 kB, else the hugepages-2048kB pool
 * in sysfs). *knob names the file that sets the pool's size. Returns 0, or -1
 * if the host has no readable 2 MiB pool. */
int buffer_hugetlb_free_pages(uint64_t *free_pages, const char **knob);

#endif
