/* The latency point engine; see latency.h. */
#include "latency.h"
#include "numa.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "cli.h"
#include "coreclock.h"
#include "rng.h"
#include "sampler.h"
#include "sizes.h"
#include "timer.h"

#define CHAIN_RNG_STREAM 0x636861696e000000u
#define PAGE_LOCAL_PAGE_BYTES 4096

static const char *const order_names[] = {"random_cycle", "sequential", "page_local"};

const char *chain_order_name(enum chain_order order)
{
	return order_names[order];
}

int chain_order_parse(const char *name, enum chain_order *order)
{
	if (strcmp(name, "random") == 0 || strcmp(name, "random_cycle") == 0)
		*order = CHAIN_ORDER_RANDOM;
	else if (strcmp(name, "sequential") == 0)
		*order = CHAIN_ORDER_SEQUENTIAL;
	else if (strcmp(name, "page_local") == 0)
		*order = CHAIN_ORDER_PAGE_LOCAL;
	else
		return -1;
	return 0;
}

const char *latency_walk_name(enum latency_walk walk)
{
	return walk == LATENCY_WALK_RMW ? "read_modify_write" : "read";
}

enum page_policy latency_page_policy_option(const struct kopts *opts, const char *arg)
{
	enum page_policy policy;

	if (page_policy_parse(arg, &policy) != 0)
		cli_fail(CLI_EXIT_USAGE, opts->kernel, "--page-policy '%s' is unknown; use thp or 4k", arg);
	return policy;
}

/* k chains walked interleaved: each step advances every chain by one load.
 * The chains are independent, so up to k misses can be in flight at once;
 * within a chain each load still waits for the one before. K is a constant
 * in every expansion, so the cursors live in registers. */
#define STEP_CHAINS(K)                                                 \
	_Pragma("GCC unroll 16") for (unsigned j = 0; j < (K); j++) c[j] = \
		*(void **)c[j];
#define DEFINE_WALK(K)                                                      \
	__attribute__((noinline)) static void walk_##K(void **cursors, uint64_t rounds) \
	{                                                                       \
		void *c[K];                                                     \
		for (unsigned j = 0; j < (K); j++)                              \
			c[j] = cursors[j];                                      \
		while (rounds--) {                                              \
			_Pragma("GCC unroll 16") for (unsigned s = 0; s < 16; s++) { \
				STEP_CHAINS(K)                                  \
			}                                                       \
		}                                                               \
		for (unsigned j = 0; j < (K); j++)                              \
			cursors[j] = c[j];                                      \
	}
DEFINE_WALK(2)
DEFINE_WALK(3)
DEFINE_WALK(4)
DEFINE_WALK(5)
DEFINE_WALK(6)
DEFINE_WALK(7)
DEFINE_WALK(8)
DEFINE_WALK(9)
DEFINE_WALK(10)
DEFINE_WALK(11)
DEFINE_WALK(12)
DEFINE_WALK(13)
DEFINE_WALK(14)
DEFINE_WALK(15)
DEFINE_WALK(16)

static void (*const walks[LATENCY_MAX_CHAINS + 1])(void **, uint64_t) = {
	NULL,	 NULL,	  walk_2,  walk_3,  walk_4,  walk_5,  walk_6,  walk_7,  walk_8,
	walk_9, walk_10, walk_11, walk_12, walk_13, walk_14, walk_15, walk_16,
};

/* The read-modify-write chase: after each load, increment the second word
 * of the line just reached. The store needs the line in a writable state
 * (read-for-ownership where it was shared) and leaves it dirty, so every
 * eviction is also a write-back. */
#define RMW_ONE                          \
	p = *(void **)p;                 \
	((uint64_t *)p)[1] += 1;
#define RMW_FOUR RMW_ONE RMW_ONE RMW_ONE RMW_ONE
__attribute__((noinline)) static void *walk_rmw(void *p, uint64_t rounds)
{
	while (rounds--) {
		RMW_FOUR RMW_FOUR RMW_FOUR RMW_FOUR
	}
	return p;
}

struct walk_context {
	const struct latency_request *request;
	void *cursors[LATENCY_MAX_CHAINS];
};

static uint64_t time_walk(void *context, uint64_t rounds)
{
	struct walk_context *walk = context;
	unsigned chains = walk->request->chains;
	uint64_t started, elapsed;

	if (chains == 1)
		return chain_time_walk_ns(&walk->cursors[0], rounds);
	started = timer_thread_ns();
	walks[chains](walk->cursors, rounds);
	for (unsigned j = 0; j < chains; j++)
		chain_consume(walk->cursors[j]);
	elapsed = timer_thread_ns() - started;
	return elapsed;
}

static uint64_t time_walk_rmw(void *context, uint64_t rounds)
{
	struct walk_context *walk = context;
	uint64_t started = timer_thread_ns();
	void *end = walk_rmw(walk->cursors[0], rounds);
	uint64_t elapsed;

	chain_consume(end);
	elapsed = timer_thread_ns() - started;
	walk->cursors[0] = end;
	return elapsed;
}

static void build_chain(const struct kopts *opts, const struct latency_request *request,
			void *base, size_t slots)
{
	struct rng rng;

	/* The chain depends only on the seed and the layout, not on when in the
	 * run the point comes up. */
	rng_seed(&rng, opts->seed,
		 CHAIN_RNG_STREAM ^ request->span_bytes ^ (request->stride_bytes << 40) ^
			 ((uint64_t)request->order << 56));
	switch (request->order) {
	case CHAIN_ORDER_RANDOM:
		chain_build_random_cycle(base, slots, request->stride_bytes, &rng);
		break;
	case CHAIN_ORDER_SEQUENTIAL:
		chain_build_sequential(base, slots, request->stride_bytes);
		break;
	case CHAIN_ORDER_PAGE_LOCAL:
		if (chain_build_page_local(base, slots, request->stride_bytes, PAGE_LOCAL_PAGE_BYTES,
					   &rng) != 0)
			cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory planning a page-local chain");
		break;
	}
}

/* Walks the whole cycle once: the self-check (it must return to its start
 * after exactly slots steps) and the warm-up pass in one. On the way it keeps
 * LATENCY_CHECKPOINTS evenly spaced positions along the cycle, where the
 * cursors of interleaved chains start (so they never overlap). */
static void check_and_checkpoint(const struct kopts *opts, const struct latency_request *request,
				 struct latency_buffer *prepared)
{
	void *base = prepared->buffer.data, *p = base;
	size_t slots = prepared->slots, steps = 0, next = 0;
	char size[32];

	do {
		while (next < LATENCY_CHECKPOINTS && steps == next * slots / LATENCY_CHECKPOINTS)
			prepared->checkpoints[next++] = p;
		p = *(void **)p;
		steps++;
	} while (p != base && steps <= slots);
	chain_consume(p);
	if (steps != slots) {
		size_format(request->span_bytes, size, sizeof(size));
		cli_fail(CLI_EXIT_SELF_CHECK, opts->kernel,
			 "self-check failed: the chain over %zu slots of the %s buffer returns to its start after %zu steps, not %zu; the chain builder is broken, report this",
			 slots, size, steps, slots);
	}
}

void latency_prepare(const struct kopts *opts, const struct latency_request *request,
		     struct latency_buffer *prepared)
{
	char size[32];

	size_format(request->span_bytes, size, sizeof(size));
	prepared->slots = request->span_bytes / request->stride_bytes;
	if (buffer_alloc(&prepared->buffer, request->span_bytes, request->page_policy) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "cannot map %s for the working set: %s; lower the size",
			 size, strerror(errno));
	if (buffer_huge_bytes(&prepared->buffer, &prepared->huge_bytes_granted) != 0) {
		fprintf(stderr, "%s: warning: no smaps entry for the %s buffer; huge_bytes_granted reported as 0\n",
			opts->kernel, size);
		prepared->huge_bytes_granted = 0;
	} else if (request->page_policy == PAGE_POLICY_THP &&
		   prepared->huge_bytes_granted < request->span_bytes) {
		char granted[32];

		size_format(prepared->huge_bytes_granted, granted, sizeof(granted));
		fprintf(stderr, "%s: warning: page policy thp, but only %s of the %s working set is on huge pages\n",
			opts->kernel, granted, size);
	}
	build_chain(opts, request, prepared->buffer.data, prepared->slots);
	check_and_checkpoint(opts, request, prepared);
	if (opts->mem_node >= 0) {
		if (numa_pages_on_node(prepared->buffer.data, request->span_bytes, opts->mem_node,
				       &prepared->mem_pages_sampled, &prepared->mem_pages_on_node) != 0)
			cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "cannot ask where the %s buffer's pages lie: %s", size,
				 strerror(errno));
		if (prepared->mem_pages_on_node != prepared->mem_pages_sampled)
			cli_fail(CLI_EXIT_SELF_CHECK, opts->kernel,
				 "memory bound to NUMA node %d, yet %" PRIu64 " of %" PRIu64
				 " sampled pages lie on another node (move_pages)",
				 opts->mem_node, prepared->mem_pages_sampled - prepared->mem_pages_on_node,
				 prepared->mem_pages_sampled);
	}
}

void latency_sample(const struct kopts *opts, const struct latency_request *request,
		    const struct latency_buffer *prepared, struct canary *canary,
		    struct latency_point *point)
{
	uint64_t started = timer_now_ns();
	struct walk_context walk = {.request = request};
	sampler_body body = request->walk == LATENCY_WALK_RMW ? time_walk_rmw : time_walk;
	uint64_t rounds = 0;

	for (unsigned j = 0; j < request->chains; j++)
		walk.cursors[j] = prepared->checkpoints[j * LATENCY_CHECKPOINTS / request->chains];
	point->slots = prepared->slots;
	point->huge_bytes_granted = prepared->huge_bytes_granted;
	point->mem_pages_sampled = prepared->mem_pages_sampled;
	point->mem_pages_on_node = prepared->mem_pages_on_node;
	point->try_count = 0;
	for (;;) {
		struct latency_try *try = &point->tries[point->try_count++];

		point->canary_before_ns = canary_read_ns(canary);
		if (point->try_count == 1) {
			rounds = sampler_calibrate(body, &walk, opts->min_sample_ms * 1e6);
			point->accesses_per_sample = rounds * CHAIN_LOADS_PER_ROUND * request->chains;
		}
		sampler_begin(&point->run, opts, point->attempt, &point->samples, 1);
		if (!point->around_sample) {
			sampler_collect(body, &walk, rounds, (double)point->accesses_per_sample, &point->run);
		} else {
			for (; sampler_more(&point->run); point->run.count++) {
				size_t i = point->run.count;
				uint64_t elapsed;

				point->around_sample(point->around_context, i, 0);
				elapsed = body(&walk, rounds);
				point->around_sample(point->around_context, i, 1);
				point->samples[i] = (double)elapsed / (double)point->accesses_per_sample;
			}
		}
		point->canary_after_ns = canary_read_ns(canary);
		try->canary_before_ns = point->canary_before_ns;
		try->canary_after_ns = point->canary_after_ns;
		if (stats_summarize(point->samples, point->run.count, &try->summary) != 0)
			cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory summarizing samples");
		try->unsettled = sampler_unsettled(opts, point->samples, point->run.count, try->canary_before_ns,
						   try->canary_after_ns, &try->dispersion);
		if (!try->unsettled || point->around_sample || point->try_count >= opts->tries)
			break;
		fprintf(stderr, "%s: %" PRIu64 " B point unsettled (%s, median %.4g ns); measuring it again, try %u of at most %u\n",
			opts->kernel, request->span_bytes, try->unsettled, try->summary.median, point->try_count + 1,
			opts->tries);
	}
	point->wall_s = (double)(timer_now_ns() - started) / 1e9;
}

void latency_tries_context(struct json *json, const struct latency_point *point)
{
	json_key(json, "tries");
	json_array_begin(json);
	for (unsigned t = 0; t < point->try_count; t++) {
		const struct latency_try *try = &point->tries[t];

		json_object_begin(json);
		json_key(json, "samples");
		json_uint(json, try->summary.count);
		json_key(json, "median");
		json_double(json, try->summary.median);
		json_key(json, "ci95_low");
		json_double(json, try->summary.ci95_low);
		json_key(json, "ci95_high");
		json_double(json, try->summary.ci95_high);
		json_key(json, "mad_rel");
		json_double(json, try->dispersion.mad_rel);
		json_key(json, "bimodal");
		json_bool(json, try->dispersion.bimodal);
		json_key(json, "canary_before_ns");
		json_double(json, try->canary_before_ns);
		json_key(json, "canary_after_ns");
		json_double(json, try->canary_after_ns);
		json_key(json, "unsettled");
		if (try->unsettled)
			json_string(json, try->unsettled);
		else
			json_null(json);
		json_object_end(json);
	}
	json_array_end(json);
}

void latency_release(struct latency_buffer *prepared)
{
	buffer_free(&prepared->buffer);
}

void latency_measure(const struct kopts *opts, const struct latency_request *request,
		     struct canary *canary, struct latency_point *point)
{
	uint64_t started = timer_now_ns();
	struct latency_buffer prepared;

	latency_prepare(opts, request, &prepared);
	latency_sample(opts, request, &prepared, canary, point);
	latency_release(&prepared);
	point->wall_s = (double)(timer_now_ns() - started) / 1e9;
}

void latency_params(struct record *record, const struct latency_request *request,
		    const struct latency_point *point)
{
	struct json *json = &record->json;

	json_key(json, "working_set_bytes");
	json_uint(json, request->span_bytes);
	json_key(json, "stride_bytes");
	json_uint(json, request->stride_bytes);
	json_key(json, "line_bytes");
	json_uint(json, CHAIN_LINE_BYTES);
	json_key(json, "lines_touched");
	json_uint(json, point->slots);
	json_key(json, "pattern");
	json_string(json, chain_order_name(request->order));
	json_key(json, "page_policy");
	json_string(json, page_policy_name(request->page_policy));
	json_key(json, "huge_bytes_granted");
	json_uint(json, point->huge_bytes_granted);
	json_key(json, "walk");
	json_string(json, latency_walk_name(request->walk));
	json_key(json, "chains");
	json_uint(json, request->chains);
	record_run_params(record, point->accesses_per_sample);
}

void latency_write(struct record *record, const struct kopts *opts,
		   const struct latency_request *request, const struct latency_point *point,
		   double core_clock_ghz, struct sampler_sweep *sweep,
		   void (*add_params)(struct json *json, const void *context), const void *context)
{
	char size[32], label[96];

	record_begin(record, "latency", "ns");
	latency_params(record, request, point);
	if (add_params)
		add_params(&record->json, context);
	record_samples(record, point->samples, point->run.count);
	record_precision(record, &point->run, point->samples);
	record_clock_context(record, point->canary_before_ns, point->canary_after_ns, core_clock_ghz,
			     point->wall_s, sweep->position);
	latency_tries_context(&record->json, point);
	if (opts->mem_node >= 0) {
		json_key(&record->json, "mem_pages_sampled");
		json_uint(&record->json, point->mem_pages_sampled);
		json_key(&record->json, "mem_pages_on_node");
		json_uint(&record->json, point->mem_pages_on_node);
	}
	size_format(request->span_bytes, size, sizeof(size));
	snprintf(label, sizeof(label), "%s %s stride=%" PRIu64 " %s x%u %s", size,
		 chain_order_name(request->order), request->stride_bytes,
		 page_policy_name(request->page_policy), request->chains,
		 latency_walk_name(request->walk));
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu working_set=%s median=%.4g ns (%.3g cycles), %zu samples, %s [%s]\n",
		opts->kernel, sweep->position + 1, sweep->length, size, record->summary.median,
		record->summary.median * core_clock_ghz, point->run.count, sampler_stop_name(point->run.stop),
		label);
	sampler_sweep_done(sweep, &point->run, label);
}

void latency_session_open(struct latency_session *session, const struct kopts *opts,
			  size_t points)
{
	memset(session, 0, sizeof(*session));
	session->opts = opts;
	kopts_pin(opts);
	session->point.samples = malloc(sampler_capacity(opts) * sizeof(*session->point.samples));
	if (!session->point.samples || canary_init(&session->canary, opts->seed) != 0)
		cli_fail(CLI_EXIT_RUNTIME, opts->kernel, "out of memory setting up");
	session->core_clock_ghz = coreclock_measure_ghz();
	record_open(&session->record, opts);
	sampler_sweep_open(&session->sweep, opts, points);
	fprintf(stderr, "%s: %zu points, %s order, seed %" PRIu64 ", core clock %.3f GHz, canary %.3g ns\n",
		opts->kernel, points, opts->ordered ? "given" : "random", opts->seed,
		session->core_clock_ghz, canary_read_ns(&session->canary));
}

int latency_session_next(struct latency_session *session)
{
	if (!sampler_sweep_next(&session->sweep))
		return 0;
	session->point.attempt = session->sweep.attempt;
	return 1;
}

void latency_session_point(struct latency_session *session, const struct latency_request *request,
			   void (*add_params)(struct json *json, const void *context),
			   const void *context)
{
	latency_measure(session->opts, request, &session->canary, &session->point);
	latency_write(&session->record, session->opts, request, &session->point,
		      session->core_clock_ghz, &session->sweep, add_params, context);
}

void latency_session_sample(struct latency_session *session, const struct latency_request *request,
			    const struct latency_buffer *prepared,
			    void (*add_params)(struct json *json, const void *context),
			    const void *context)
{
	latency_sample(session->opts, request, prepared, &session->canary, &session->point);
	latency_write(&session->record, session->opts, request, &session->point,
		      session->core_clock_ghz, &session->sweep, add_params, context);
}

void latency_session_close(struct latency_session *session)
{
	sampler_sweep_close(&session->sweep);
	record_close(&session->record);
	canary_free(&session->canary);
	free(session->point.samples);
}
