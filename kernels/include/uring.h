/* io_uring through its three system calls and the kernel's UAPI header,
 * without liburing (as fio's own io_uring engine does): nothing to install
 * on a host beyond libc's kernel headers. Where the header is missing at
 * build time, or the running kernel refuses io_uring (ENOSYS: not built in;
 * EPERM: kernel.io_uring_disabled or a seccomp filter), uring_open fails and
 * uring_unavailable says why, so the aio kernel records io_uring as
 * unavailable instead of measuring it. */
#ifndef FLEETSCOPE_URING_H
#define FLEETSCOPE_URING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct uring {
	int fd;
	unsigned entries;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	void *sqes;  /* struct io_uring_sqe[entries] */
	void *cqes;  /* struct io_uring_cqe[] */
	void *sq_ring, *cq_ring;
	size_t sq_ring_bytes, cq_ring_bytes, sqes_bytes;
	unsigned queued; /* entries written since the last submit */
	int read_opcode; /* IORING_OP_READ where the kernel has it, else IORING_OP_READV */
	int deferred_completions; /* set up with DEFER_TASKRUN (and COOP_TASKRUN, SINGLE_ISSUER) */
};

/* 1 if this build has the io_uring header and system call numbers. */
int uring_compiled(void);

/* Sets up a ring of at least entries submission slots, with the flags fio's
 * io_uring engine uses (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN: the one
 * submitting thread runs completions when it waits for them), each dropped
 * where the kernel predates it, and IORING_OP_READ where the kernel has it
 * (else READV). Returns 0, or -1 with errno set (ENOSYS when the build or
 * the kernel lacks io_uring). */
int uring_open(struct uring *ring, unsigned entries);
void uring_close(struct uring *ring);

/* The opcode and setup flags an open ring uses, for the records. */
const char *uring_describe(const struct uring *ring);

/* Why io_uring cannot be used here, from the errno of a failed uring_open. */
const char *uring_unavailable(int error);

/* Queues one read into iov's buffer (iov must stay valid until its
 * completion) at offset, tagged with user_data. Returns 0, or -1 when the
 * submission queue is full. */
int uring_queue_read(struct uring *ring, int fd, const struct iovec *iov, uint64_t offset,
		      uint64_t user_data);

/* Submits what was queued and waits until at least wait_for completions are
 * ready. Returns 0, or -1 with errno set. */
int uring_submit_and_wait(struct uring *ring, unsigned wait_for);

/* Takes one completion: returns 1 with its user_data and result (bytes, or
 * -errno), or 0 when none is ready. */
int uring_pop(struct uring *ring, uint64_t *user_data, int32_t *result);

#endif
