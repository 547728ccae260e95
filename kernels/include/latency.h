/* One pointer-chase latency point, the engine behind every latency kernel
 * (chase, zero_queue, pattern_stride, mlp, write_cost): map a buffer with a
 * page policy and measure the grant, link a chain over it in a chosen order
 * and stride, self-check that the chain is one cycle through every slot
 * (which also warms it), then time calibrated samples between two readings of
 * the L1 canary. */
#ifndef FLEETSCOPE_LATENCY_H
#define FLEETSCOPE_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "buffers.h"
#include "canary.h"
#include "kopts.h"
#include "record.h"
#include "sampler.h"
#include "stats.h"

#define LATENCY_MAX_CHAINS 16

enum chain_order {
	CHAIN_ORDER_RANDOM,     /* one random cycle over the whole buffer */
	CHAIN_ORDER_SEQUENTIAL, /* ascending addresses */
	CHAIN_ORDER_PAGE_LOCAL, /* random pages, each page's slots together */
};

enum latency_walk {
	LATENCY_WALK_READ, /* load the next pointer */
	LATENCY_WALK_RMW,  /* load the next pointer, then increment a word in its line */
};

struct latency_request {
	uint64_t span_bytes;   /* buffer: a multiple of stride_bytes, >= 2 strides */
	uint64_t stride_bytes; /* a multiple of 64: one chain slot per stride */
	enum chain_order order;
	enum page_policy page_policy;
	enum latency_walk walk;
	unsigned chains; /* 1..16 chains walked interleaved (memory-level parallelism) */
};

/* One measurement of a point: its samples' summary and dispersion, the L1
 * canary around it, and why it was measured again (NULL: it settled). */
struct latency_try {
	struct summary summary;
	struct dispersion dispersion;
	double canary_before_ns, canary_after_ns;
	const char *unsettled;
};

struct latency_point {
	double *samples; /* the caller's array of sampler_capacity(opts) entries: ns per access */
	/* Every try, the last one's samples in `samples`: a point whose samples
	 * are unsettled (sampler_unsettled) is measured again, at most
	 * opts->tries times in all; the last try stands. A point with
	 * around_sample (measured under load on purpose) is measured once. */
	struct latency_try tries[KOPTS_MAX_TRIES];
	unsigned try_count;
	unsigned attempt; /* 1, or 2 for a re-queued point */
	struct sampler_run run; /* how many samples were taken and why it stopped */
	uint64_t slots;  /* chain slots (lines touched) */
	uint64_t huge_bytes_granted;
	uint64_t mem_pages_sampled, mem_pages_on_node; /* --mem-node: where the buffer's pages lie */
	uint64_t accesses_per_sample;
	double canary_before_ns, canary_after_ns;
	double wall_s;
	/* Optional (NULL: none): called right before (after = 0) and right
	 * after (after = 1) the timed run of each kept sample, not around the
	 * calibration runs; loaded_latency reads its load threads' counters
	 * there to get the bandwidth during each sample (index < capacity). */
	void (*around_sample)(void *context, size_t index, int after);
	void *around_context;
};

const char *chain_order_name(enum chain_order order);
/* Returns 0 and sets *order for random, sequential or page_local; else -1. */
int chain_order_parse(const char *name, enum chain_order *order);
const char *latency_walk_name(enum latency_walk walk);

/* --page-policy for the latency kernels: thp or 4k, else exit 2. */
enum page_policy latency_page_policy_option(const struct kopts *opts, const char *arg);

#define LATENCY_CHECKPOINTS 256

/* A mapped buffer with its chain built, self-checked and warmed: points that
 * differ only in the number of chains (mlp) share one. */
struct latency_buffer {
	struct buffer buffer;
	uint64_t slots;
	uint64_t huge_bytes_granted;
	uint64_t mem_pages_sampled, mem_pages_on_node; /* --mem-node only (numa.h) */
	void *checkpoints[LATENCY_CHECKPOINTS]; /* evenly spaced along the cycle */
};

/* Maps the buffer, measures the huge-page grant, builds the chain and walks
 * it once (self-check and warm-up); with --mem-node, asks where a sample of
 * its pages lies (numa.h). Exits 1 if memory is refused, 3 if the self-check
 * fails or a page is off the bound node. The chain depends only on the seed
 * and the request. */
void latency_prepare(const struct kopts *opts, const struct latency_request *request,
		     struct latency_buffer *prepared);

/* Times the samples of one point over a prepared buffer (as many as the
 * sampler asks for): request->chains cursors start at evenly spaced
 * checkpoints. */
void latency_sample(const struct kopts *opts, const struct latency_request *request,
		    const struct latency_buffer *prepared, struct canary *canary,
		    struct latency_point *point);

void latency_release(struct latency_buffer *prepared);

/* prepare + sample + release: one point on a buffer of its own. */
void latency_measure(const struct kopts *opts, const struct latency_request *request,
		     struct canary *canary, struct latency_point *point);

/* The params every latency record shares: working_set_bytes, stride_bytes,
 * line_bytes, pattern, page_policy, huge_bytes_granted, walk, chains, cpu,
 * accesses_per_sample, seed. Call between record_begin and record_samples. */
void latency_params(struct record *record, const struct latency_request *request,
		    const struct latency_point *point);

/* Writes the whole record of the sweep's current point: the shared params,
 * extra params from add_params (may be NULL), the samples, their precision
 * and the clock context; one progress line "<kernel>: <n>/<total> ..." on
 * stderr; then re-queues the point if its sampling asks (sampler_sweep_done). */
void latency_write(struct record *record, const struct kopts *opts,
		   const struct latency_request *request, const struct latency_point *point,
		   double core_clock_ghz, struct sampler_sweep *sweep,
		   void (*add_params)(struct json *json, const void *context), const void *context);

/* context.tries of a point: one object per try, in order: {samples, median,
 * ci95_low, ci95_high, mad_rel, bimodal, canary_before_ns, canary_after_ns,
 * unsettled (why it was measured again; null for a try that settled)}. */
void latency_tries_context(struct json *json, const struct latency_point *point);

/* What every latency kernel sets up once: pinning, the canary, the measured
 * core clock, the output, the samples array and the measuring order. */
struct latency_session {
	const struct kopts *opts;
	struct canary canary;
	struct record record;
	double core_clock_ghz;
	struct latency_point point;
	struct sampler_sweep sweep; /* sweep.point: the plan index to measure next */
};

/* Pins (--cpu), builds the canary, measures the core clock, opens the
 * output, plans the order of points and prints a banner naming them.
 * Exits 1 on failure. */
void latency_session_open(struct latency_session *session, const struct kopts *opts,
			  size_t points);

/* Moves to the next point of the sweep (session->sweep.point); 0 when all
 * are measured, re-queued ones included. */
int latency_session_next(struct latency_session *session);

/* Measures and writes the current point (see latency_write). */
void latency_session_point(struct latency_session *session, const struct latency_request *request,
			   void (*add_params)(struct json *json, const void *context),
			   const void *context);

/* The same over a prepared buffer (see latency_prepare). */
void latency_session_sample(struct latency_session *session, const struct latency_request *request,
			    const struct latency_buffer *prepared,
			    void (*add_params)(struct json *json, const void *context),
			    const void *context);

void latency_session_close(struct latency_session *session);

#endif
