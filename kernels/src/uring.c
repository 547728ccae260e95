/* io_uring without liburing; see uring.h. */
#include "uring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define URING_HEADER 1
#endif
#endif

/* IORING_FEAT_SINGLE_MMAP (Linux 5.4 headers) is a macro where the opcodes
 * are enum values: it stands for a header new enough to build against. */
#if defined(URING_HEADER) && defined(IORING_FEAT_SINGLE_MMAP) && defined(__NR_io_uring_setup) && \
	defined(__NR_io_uring_enter)
#define URING_COMPILED 1
#define URING_READ_OPCODE IORING_OP_READ
#else
#define URING_COMPILED 0
#define URING_READ_OPCODE 0
#endif

int uring_compiled(void)
{
	return URING_COMPILED;
}

const char *uring_describe(const struct uring *ring)
{
	if (!URING_COMPILED)
		return "io_uring unavailable";
	if (ring->read_opcode == URING_READ_OPCODE)
		return ring->deferred_completions ? "IORING_OP_READ, COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN"
						  : "IORING_OP_READ";
	return ring->deferred_completions ? "IORING_OP_READV, COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN"
					  : "IORING_OP_READV";
}

const char *uring_unavailable(int error)
{
	if (!URING_COMPILED)
		return "io_uring unavailable: this build had no <linux/io_uring.h> (install the kernel headers, linux-libc-dev or kernel-headers, and rebuild)";
	switch (error) {
	case ENOSYS:
		return "io_uring unavailable: the running kernel has no io_uring (io_uring_setup: ENOSYS)";
	case EPERM:
		return "io_uring unavailable: the kernel refused io_uring_setup (EPERM: kernel.io_uring_disabled, or a seccomp filter in a container)";
	case ENOMEM:
		return "io_uring unavailable: io_uring_setup ran out of locked memory (ENOMEM; RLIMIT_MEMLOCK)";
	default:
		return "io_uring unavailable: io_uring_setup failed";
	}
}

#if URING_COMPILED

/* Newer than some distributions' headers; the running kernel decides. */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

static unsigned load_acquire(const unsigned *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_release(unsigned *p, unsigned value)
{
	__atomic_store_n(p, value, __ATOMIC_RELEASE);
}

/* IORING_OP_READ (Linux 5.6) where the kernel has it, as fio chooses;
 * IORING_OP_READV otherwise. */
static void probe_read(struct uring *ring)
{
#if defined(__NR_io_uring_register) && defined(IO_URING_OP_SUPPORTED)
	size_t bytes = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *probe = calloc(1, bytes);

	if (!probe)
		return;
	if (syscall(__NR_io_uring_register, ring->fd, IORING_REGISTER_PROBE, probe, 256) == 0 &&
	    probe->ops_len > IORING_OP_READ && (probe->ops[IORING_OP_READ].flags & IO_URING_OP_SUPPORTED))
		ring->read_opcode = IORING_OP_READ;
	free(probe);
#else
	(void)ring;
#endif
}

int uring_open(struct uring *ring, unsigned entries)
{
	struct io_uring_params params;
	unsigned wanted = 1;
	int fd;

	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
	while (wanted < entries)
		wanted <<= 1;
	/* As fio's engine sets up its ring: completions are run when this
	 * (single) thread asks for them, not by interrupting it; each flag is
	 * dropped where the kernel predates it (EINVAL). */
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	for (;;) {
		fd = (int)syscall(__NR_io_uring_setup, wanted, &params);
		if (fd >= 0 || errno != EINVAL || params.flags == 0)
			break;
		if (params.flags & IORING_SETUP_DEFER_TASKRUN)
			params.flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
		else
			params.flags = 0;
	}
	if (fd < 0)
		return -1;
	ring->fd = fd;
	ring->deferred_completions = (params.flags & IORING_SETUP_DEFER_TASKRUN) != 0;
	ring->read_opcode = IORING_OP_READV;
	probe_read(ring);
	ring->entries = params.sq_entries;
	ring->sq_ring_bytes = params.sq_off.array + params.sq_entries * sizeof(unsigned);
	ring->cq_ring_bytes = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
	if (params.features & IORING_FEAT_SINGLE_MMAP) {
		if (ring->cq_ring_bytes > ring->sq_ring_bytes)
			ring->sq_ring_bytes = ring->cq_ring_bytes;
		ring->cq_ring_bytes = ring->sq_ring_bytes;
	}
	ring->sq_ring = mmap(NULL, ring->sq_ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			     IORING_OFF_SQ_RING);
	if (ring->sq_ring == MAP_FAILED)
		goto failed;
	if (params.features & IORING_FEAT_SINGLE_MMAP) {
		ring->cq_ring = ring->sq_ring;
	} else {
		ring->cq_ring = mmap(NULL, ring->cq_ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
				     fd, IORING_OFF_CQ_RING);
		if (ring->cq_ring == MAP_FAILED) {
			ring->cq_ring = NULL;
			goto failed;
		}
	}
	ring->sqes_bytes = params.sq_entries * sizeof(struct io_uring_sqe);
	ring->sqes = mmap(NULL, ring->sqes_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			  IORING_OFF_SQES);
	if (ring->sqes == MAP_FAILED) {
		ring->sqes = NULL;
		goto failed;
	}
	ring->sq_head = (unsigned *)((char *)ring->sq_ring + params.sq_off.head);
	ring->sq_tail = (unsigned *)((char *)ring->sq_ring + params.sq_off.tail);
	ring->sq_mask = (unsigned *)((char *)ring->sq_ring + params.sq_off.ring_mask);
	ring->sq_array = (unsigned *)((char *)ring->sq_ring + params.sq_off.array);
	ring->cq_head = (unsigned *)((char *)ring->cq_ring + params.cq_off.head);
	ring->cq_tail = (unsigned *)((char *)ring->cq_ring + params.cq_off.tail);
	ring->cq_mask = (unsigned *)((char *)ring->cq_ring + params.cq_off.ring_mask);
	ring->cqes = (char *)ring->cq_ring + params.cq_off.cqes;
	return 0;

failed: {
	int saved = errno;

	if (ring->sq_ring == MAP_FAILED)
		ring->sq_ring = NULL;
	uring_close(ring);
	errno = saved;
	return -1;
}
}

void uring_close(struct uring *ring)
{
	if (ring->sqes)
		munmap(ring->sqes, ring->sqes_bytes);
	if (ring->cq_ring && ring->cq_ring != ring->sq_ring)
		munmap(ring->cq_ring, ring->cq_ring_bytes);
	if (ring->sq_ring)
		munmap(ring->sq_ring, ring->sq_ring_bytes);
	if (ring->fd >= 0)
		close(ring->fd);
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
}

int uring_queue_read(struct uring *ring, int fd, const struct iovec *iov, uint64_t offset,
		      uint64_t user_data)
{
	unsigned tail = *ring->sq_tail, head = load_acquire(ring->sq_head), index;
	struct io_uring_sqe *sqe;

	if (tail - head >= ring->entries)
		return -1;
	index = tail & *ring->sq_mask;
	sqe = &((struct io_uring_sqe *)ring->sqes)[index];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = (uint8_t)ring->read_opcode;
	sqe->fd = fd;
	if (ring->read_opcode == IORING_OP_READ) {
		sqe->addr = (uint64_t)(uintptr_t)iov->iov_base;
		sqe->len = (uint32_t)iov->iov_len;
	} else {
		sqe->addr = (uint64_t)(uintptr_t)iov;
		sqe->len = 1;
	}
	sqe->off = offset;
	sqe->user_data = user_data;
	ring->sq_array[index] = index;
	store_release(ring->sq_tail, tail + 1);
	ring->queued++;
	return 0;
}

int uring_submit_and_wait(struct uring *ring, unsigned wait_for)
{
	unsigned to_submit = ring->queued;

	for (;;) {
		long done = syscall(__NR_io_uring_enter, ring->fd, to_submit, wait_for,
				    wait_for ? IORING_ENTER_GETEVENTS : 0, NULL, 0);

		if (done >= 0) {
			ring->queued = to_submit - (unsigned)done;
			if (ring->queued == 0)
				return 0;
			to_submit = ring->queued; /* the kernel took part: offer the rest */
			continue;
		}
		if (errno != EINTR)
			return -1;
	}
}

int uring_pop(struct uring *ring, uint64_t *user_data, int32_t *result)
{
	unsigned head = *ring->cq_head;
	const struct io_uring_cqe *cqe;

	if (head == load_acquire(ring->cq_tail))
		return 0;
	cqe = &((const struct io_uring_cqe *)ring->cqes)[head & *ring->cq_mask];
	*user_data = cqe->user_data;
	*result = cqe->res;
	store_release(ring->cq_head, head + 1);
	return 1;
}

#else

int uring_open(struct uring *ring, unsigned entries)
{
	(void)entries;
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
	errno = ENOSYS;
	return -1;
}

void uring_close(struct uring *ring)
{
	(void)ring;
}

int uring_queue_read(struct uring *ring, int fd, const struct iovec *iov, uint64_t offset,
		      uint64_t user_data)
{
	(void)ring, (void)fd, (void)iov, (void)offset, (void)user_data;
	return -1;
}

int uring_submit_and_wait(struct uring *ring, unsigned wait_for)
{
	(void)ring, (void)wait_for;
	errno = ENOSYS;
	return -1;
}

int uring_pop(struct uring *ring, uint64_t *user_data, int32_t *result)
{
	(void)ring, (void)user_data, (void)result;
	return 0;
}

#endif
