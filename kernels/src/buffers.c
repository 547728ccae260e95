/* Measurement buffers; see buffers.h.
 *
 * The buffer sits inside a larger PROT_NONE reservation, so it has an
 * inaccessible guard region on both sides. That keeps the kernel from merging
 * its VMA with a neighbouring anonymous mapping with the same flags, so the
 * AnonHugePages figure in /proc/self/smaps belongs to this buffer alone. */
#include "buffers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* glibc's <sys/mman.h> has MAP_HUGE_SHIFT but not always the size names. */
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

#define HUGETLB_2MB_SYSFS "/sys/kernel/mm/hugepages/hugepages-2048kB/"

int page_policy_parse(const char *name, enum page_policy *policy)
{
	if (strcmp(name, "thp") == 0) {
		*policy = PAGE_POLICY_THP;
		return 0;
	}
	if (strcmp(name, "4k") == 0) {
		*policy = PAGE_POLICY_4K;
		return 0;
	}
	if (strcmp(name, "hugetlb") == 0) {
		*policy = PAGE_POLICY_HUGETLB;
		return 0;
	}
	return -1;
}

const char *page_policy_name(enum page_policy policy)
{
	switch (policy) {
	case PAGE_POLICY_THP:
		return "thp";
	case PAGE_POLICY_HUGETLB:
		return "hugetlb";
	case PAGE_POLICY_4K:
		break;
	}
	return "4k";
}

static size_t round_up(size_t value, size_t multiple)
{
	return (value + multiple - 1) / multiple * multiple;
}

/* Maps, advises and touches one byte every touch_stride bytes (a page, or a
 * multiple of one: the pages between stay unmapped). */
static int map_buffer(struct buffer *buffer, size_t bytes, enum page_policy policy, size_t touch_stride)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t huge = BUFFER_HUGE_PAGE_BYTES;
	size_t rounded, reservation_bytes;
	char *reservation, *data;
	int advice = policy == PAGE_POLICY_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;

	memset(buffer, 0, sizeof(*buffer));
	if (bytes == 0 || bytes > SIZE_MAX - 3 * huge) {
		errno = EINVAL;
		return -1;
	}
	/* Whole 2 MiB units, so even a small working set can sit in one huge
	 * page, starting at least one page in so the low guard is never empty. */
	rounded = round_up(bytes, huge);
	reservation_bytes = rounded + 2 * huge;
	reservation = mmap(NULL, reservation_bytes, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (reservation == MAP_FAILED)
		return -1;
	data = (char *)round_up((uintptr_t)reservation + page, huge);
	if (policy == PAGE_POLICY_HUGETLB) {
		/* A hugetlb mapping replaces the middle of the reservation, so it
		 * keeps the guards and the alignment. The pool is charged at mmap
		 * (the pages are reserved for a private mapping), so a short pool
		 * fails here with ENOMEM rather than with SIGBUS at a touch. */
		if (mmap(data, rounded, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB | MAP_HUGE_2MB, -1,
			 0) == MAP_FAILED)
			goto fail;
	} else {
		if (mprotect(data, rounded, PROT_READ | PROT_WRITE) != 0)
			goto fail;
		/* Advice must precede the first touch: THP is decided at fault
		 * time. A kernel without THP rejects it; the measured grant then
		 * shows 0. */
		if (madvise(data, rounded, advice) != 0 && errno != EINVAL)
			goto fail;
	}
	for (size_t offset = 0; offset < rounded; offset += touch_stride)
		((volatile char *)data)[offset] = 0;

	buffer->data = data;
	buffer->bytes = rounded;
	buffer->mapping = reservation;
	buffer->mapping_bytes = reservation_bytes;
	return 0;
fail:
	{
		int saved = errno;

		munmap(reservation, reservation_bytes);
		errno = saved;
	}
	return -1;
}

int buffer_alloc(struct buffer *buffer, size_t bytes, enum page_policy policy)
{
	return map_buffer(buffer, bytes, policy, (size_t)sysconf(_SC_PAGESIZE));
}

int buffer_alloc_sparse(struct buffer *buffer, size_t bytes, enum page_policy policy, size_t touch_stride)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (touch_stride < page || touch_stride % page) {
		errno = EINVAL;
		return -1;
	}
	return map_buffer(buffer, bytes, policy, touch_stride);
}

void buffer_free(struct buffer *buffer)
{
	if (buffer->mapping)
		munmap(buffer->mapping, buffer->mapping_bytes);
	memset(buffer, 0, sizeof(*buffer));
}

int buffer_huge_bytes(const struct buffer *buffer, uint64_t *huge_bytes)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	uint64_t anon_huge_kib = 0, hugetlb_kib = 0, kernel_page_kib = 0;
	uint64_t base_page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	char line[512];
	int in_buffer = 0, found = -1;

	if (!smaps)
		return -1;
	/* The buffer's block runs from its header line to the next mapping's. */
	while (fgets(line, sizeof(line), smaps)) {
		uintptr_t start, end;
		uint64_t kib;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
			if (in_buffer)
				break;
			in_buffer = start == (uintptr_t)buffer->data;
			continue;
		}
		if (!in_buffer)
			continue;
		if (sscanf(line, "AnonHugePages: %" SCNu64 " kB", &kib) == 1) {
			anon_huge_kib = kib;
			found = 0;
		} else if (sscanf(line, "KernelPageSize: %" SCNu64 " kB", &kib) == 1) {
			kernel_page_kib = kib;
		} else if (sscanf(line, "Private_Hugetlb: %" SCNu64 " kB", &kib) == 1 ||
			   sscanf(line, "Shared_Hugetlb: %" SCNu64 " kB", &kib) == 1) {
			hugetlb_kib += kib;
			found = 0;
		}
	}
	fclose(smaps);
	if (found == 0) {
		/* Hugetlb pages count only where the mapping really is on pages
		 * larger than the base page. */
		if (kernel_page_kib <= base_page_kib)
			hugetlb_kib = 0;
		*huge_bytes = (anon_huge_kib + hugetlb_kib) * 1024;
	}
	return found;
}

static int read_u64_file(const char *path, uint64_t *value)
{
	FILE *file = fopen(path, "r");
	int ok;

	if (!file)
		return -1;
	ok = fscanf(file, "%" SCNu64, value) == 1;
	fclose(file);
	return ok ? 0 : -1;
}

int buffer_hugetlb_free_pages(uint64_t *free_pages, const char **knob)
{
	FILE *meminfo = fopen("/proc/meminfo", "r");
	uint64_t free = 0, reserved = 0, size_kib = 0, value;
	int seen = 0;
	char line[256];

	if (meminfo) {
		while (fgets(line, sizeof(line), meminfo)) {
			if (sscanf(line, "HugePages_Free: %" SCNu64, &value) == 1) {
				free = value;
				seen |= 1;
			} else if (sscanf(line, "HugePages_Rsvd: %" SCNu64, &value) == 1) {
				reserved = value;
				seen |= 2;
			} else if (sscanf(line, "Hugepagesize: %" SCNu64 " kB", &value) == 1) {
				size_kib = value;
				seen |= 4;
			}
		}
		fclose(meminfo);
	}
	/* /proc/meminfo describes the default huge page size's pool only. */
	if (seen == 7 && size_kib == BUFFER_HUGE_PAGE_BYTES / 1024) {
		*free_pages = free > reserved ? free - reserved : 0;
		*knob = "/proc/sys/vm/nr_hugepages";
		return 0;
	}
	if (read_u64_file(HUGETLB_2MB_SYSFS "free_hugepages", &free) != 0 ||
	    read_u64_file(HUGETLB_2MB_SYSFS "resv_hugepages", &reserved) != 0)
		return -1;
	*free_pages = free > reserved ? free - reserved : 0;
	*knob = HUGETLB_2MB_SYSFS "nr_hugepages";
	return 0;
}
