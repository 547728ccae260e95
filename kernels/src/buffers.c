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
	return -1;
}

const char *page_policy_name(enum page_policy policy)
{
	return policy == PAGE_POLICY_THP ? "thp" : "4k";
}

static size_t round_up(size_t value, size_t multiple)
{
	return (value + multiple - 1) / multiple * multiple;
}

int buffer_alloc(struct buffer *buffer, size_t bytes, enum page_policy policy)
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
	if (mprotect(data, rounded, PROT_READ | PROT_WRITE) != 0)
		goto fail;
	/* Advice must precede the first touch: THP is decided at fault time. A
	 * kernel without THP rejects it; the measured grant then shows 0. */
	if (madvise(data, rounded, advice) != 0 && errno != EINVAL)
		goto fail;
	for (size_t offset = 0; offset < rounded; offset += page)
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

void buffer_free(struct buffer *buffer)
{
	if (buffer->mapping)
		munmap(buffer->mapping, buffer->mapping_bytes);
	memset(buffer, 0, sizeof(*buffer));
}

int buffer_huge_bytes(const struct buffer *buffer, uint64_t *huge_bytes)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	char line[512];
	int in_buffer = 0, found = -1;

	if (!smaps)
		return -1;
	while (fgets(line, sizeof(line), smaps)) {
		uintptr_t start, end;
		uint64_t kib;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
			if (in_buffer)
				break; /* next mapping: no AnonHugePages line */
			in_buffer = start == (uintptr_t)buffer->data;
			continue;
		}
		if (in_buffer && sscanf(line, "AnonHugePages: %" SCNu64 " kB", &kib) == 1) {
			*huge_bytes = kib * 1024;
			found = 0;
			break;
		}
	}
	fclose(smaps);
	return found;
}
