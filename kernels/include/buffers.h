/* Measurement buffers: 2 MiB-aligned anonymous mappings with a page-size
 * policy, touched before use, and the huge-page grant measured rather than
 * assumed. */
#ifndef FLEETSCOPE_BUFFERS_H
#define FLEETSCOPE_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#define BUFFER_HUGE_PAGE_BYTES ((size_t)2 << 20)

enum page_policy {
	PAGE_POLICY_THP, /* madvise(MADV_HUGEPAGE): transparent 2 MiB pages */
	PAGE_POLICY_4K,  /* madvise(MADV_NOHUGEPAGE): base pages only */
};

/* Returns 0 and sets *policy for "thp" or "4k"; -1 for anything else. */
int page_policy_parse(const char *name, enum page_policy *policy);
const char *page_policy_name(enum page_policy policy);

struct buffer {
	void *data;           /* 2 MiB aligned */
	size_t bytes;         /* requested size rounded up to 2 MiB */
	void *mapping;        /* whole reservation, guard regions included */
	size_t mapping_bytes;
};

/* Maps, advises and touches a buffer of at least bytes. Returns 0, or -1
 * with errno set. */
int buffer_alloc(struct buffer *buffer, size_t bytes, enum page_policy policy);
void buffer_free(struct buffer *buffer);

/* Bytes of the buffer backed by transparent huge pages, from the
 * AnonHugePages line of its mapping in /proc/self/smaps.
 * Returns 0, or -1 if the mapping cannot be found. */
int buffer_huge_bytes(const struct buffer *buffer, uint64_t *huge_bytes);

#endif
