/* Threads running one work body through common windows; see team.h. */
#include "team.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "buffers.h"
#include "cli.h"
#include "json.h"
#include "rng.h"
#include "timer.h"

#define COMPUTE_LANES 8
#define COMPUTE_MULTIPLIER UINT64_C(0x9e3779b97f4a7c15)
#define LINE_WORDS 8
#define LINE_BYTES 64
/* A chunk is long enough that reading the clock and the CPU costs nothing
 * next to it, short enough that a window ends within ~1% of its length. */
#define CHUNK_TARGET_NS 100000.0
#define TEAM_RNG_STREAM 0x7465616du

static const char *const kind_names[WORK_KIND_COUNT] = {"compute", "memory"};

const char *work_kind_name(enum work_kind kind)
{
	return kind_names[kind];
}

int work_kind_parse(const char *name, enum work_kind *kind)
{
	for (int i = 0; i < WORK_KIND_COUNT; i++)
		if (strcmp(name, kind_names[i]) == 0) {
			*kind = (enum work_kind)i;
			return 0;
		}
	return -1;
}

size_t work_kind_list_parse(const char *kernel, const char *option, const char *text,
			    enum work_kind kinds[WORK_KIND_COUNT])
{
	char *copy = strdup(text), *item, *rest;
	size_t count = 0;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, kernel, "out of memory parsing %s", option);
	for (item = copy; item; item = rest) {
		enum work_kind kind;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		if (work_kind_parse(item, &kind) != 0)
			cli_fail(CLI_EXIT_USAGE, kernel, "%s item '%s' is not compute or memory", option, item);
		for (size_t i = 0; i < count; i++)
			if (kinds[i] == kind)
				cli_fail(CLI_EXIT_USAGE, kernel, "%s names '%s' twice", option, item);
		kinds[count++] = kind;
	}
	free(copy);
	return count;
}

const char *work_kind_unit(enum work_kind kind)
{
	return kind == WORK_COMPUTE ? "Gop/s" : "GB/s";
}

const char *work_kind_operation(enum work_kind kind)
{
	return kind == WORK_COMPUTE ? "64-bit multiply-add (8 independent chains)"
				    : "byte read (sequential, private buffer)";
}

struct work {
	enum work_kind kind;
	uint64_t lanes[COMPUTE_LANES];
	struct buffer buffer;
	const uint64_t *words;
	size_t lines, position;
	uint64_t sink;
};

/* compute: every lane is its own dependency chain, so the chains overlap and
 * the multipliers, not the latency of one multiply, set the pace. The empty
 * asm keeps each lane in a register and stops the compiler from vectorizing
 * or folding the loop. */
static void compute_rounds(struct work *work, uint64_t rounds)
{
	uint64_t a = work->lanes[0], b = work->lanes[1], c = work->lanes[2], d = work->lanes[3];
	uint64_t e = work->lanes[4], f = work->lanes[5], g = work->lanes[6], h = work->lanes[7];

	for (uint64_t r = 0; r < rounds; r++) {
		a = a * COMPUTE_MULTIPLIER + 1;
		b = b * COMPUTE_MULTIPLIER + 3;
		c = c * COMPUTE_MULTIPLIER + 5;
		d = d * COMPUTE_MULTIPLIER + 7;
		e = e * COMPUTE_MULTIPLIER + 9;
		f = f * COMPUTE_MULTIPLIER + 11;
		g = g * COMPUTE_MULTIPLIER + 13;
		h = h * COMPUTE_MULTIPLIER + 15;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g),
				 "+r"(h));
	}
	work->lanes[0] = a, work->lanes[1] = b, work->lanes[2] = c, work->lanes[3] = d;
	work->lanes[4] = e, work->lanes[5] = f, work->lanes[6] = g, work->lanes[7] = h;
}

/* memory: one round reads one 64-byte line, in address order, wrapping at
 * the end of the buffer; every word feeds the sum. */
static void memory_rounds(struct work *work, uint64_t rounds)
{
	const uint64_t *words = work->words;
	size_t position = work->position, lines = work->lines;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;

	for (uint64_t r = 0; r < rounds; r++) {
		const uint64_t *line = words + position * LINE_WORDS;

		s0 += line[0] ^ line[4];
		s1 += line[1] ^ line[5];
		s2 += line[2] ^ line[6];
		s3 += line[3] ^ line[7];
		if (++position == lines)
			position = 0;
	}
	work->position = position;
	work->sink += s0 + s1 + s2 + s3;
	__asm__ volatile("" : : "r"(work->sink) : "memory");
}

static void work_do(struct work *work, uint64_t rounds)
{
	if (work->kind == WORK_COMPUTE)
		compute_rounds(work, rounds);
	else
		memory_rounds(work, rounds);
}

/* Units of work (multiply-adds or bytes) in one round. */
static double work_units_per_round(enum work_kind kind)
{
	return kind == WORK_COMPUTE ? (double)COMPUTE_LANES : (double)LINE_BYTES;
}

/* Sets up the body on the calling thread, so a memory buffer is first
 * touched (and placed) where that thread runs. */
static int work_init(struct work *work, const struct team_request *request, size_t index,
		     uint64_t *huge_bytes)
{
	struct rng rng;

	memset(work, 0, sizeof(*work));
	work->kind = request->kind;
	rng_seed(&rng, request->seed, TEAM_RNG_STREAM + index);
	for (int i = 0; i < COMPUTE_LANES; i++)
		work->lanes[i] = rng_next(&rng);
	*huge_bytes = 0;
	if (request->kind != WORK_MEMORY)
		return 0;
	if (buffer_alloc(&work->buffer, request->buffer_bytes, PAGE_POLICY_THP) != 0)
		return -1;
	work->words = work->buffer.data;
	work->lines = request->buffer_bytes / LINE_BYTES;
	for (size_t i = 0; i < work->lines * LINE_WORDS; i++)
		((uint64_t *)work->buffer.data)[i] = rng_next(&rng);
	if (buffer_huge_bytes(&work->buffer, huge_bytes) != 0)
		*huge_bytes = 0;
	return 0;
}

static void work_free(struct work *work)
{
	if (work->kind == WORK_MEMORY && work->buffer.mapping)
		buffer_free(&work->buffer);
}

struct team {
	const struct team_request *request;
	pthread_mutex_t lock;
	pthread_cond_t gate_opened;
	int gate; /* 0 closed, 1 go, -1 abort: set once every thread exists (or not) */
	pthread_barrier_t barrier;
	int more; /* another measured window: decided by one thread, read by all after a barrier */
	atomic_int failed;
	char error[192];
};

struct member_argument {
	struct team *team;
	size_t index;
	struct team_member *out;
};

static void team_fail(struct team *team, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

static void team_fail(struct team *team, const char *format, ...)
{
	va_list args;

	pthread_mutex_lock(&team->lock);
	if (!atomic_load(&team->failed)) {
		va_start(args, format);
		vsnprintf(team->error, sizeof(team->error), format, args);
		va_end(args);
		atomic_store(&team->failed, 1);
	}
	pthread_mutex_unlock(&team->lock);
}

static uint64_t calibrate_chunk(struct work *work)
{
	uint64_t rounds = 16;

	for (;;) {
		uint64_t started = timer_now_ns();

		work_do(work, rounds);
		if ((double)(timer_now_ns() - started) >= CHUNK_TARGET_NS || rounds >= (UINT64_C(1) << 40))
			return rounds;
		rounds *= 2;
	}
}

static double rusage_cpu_s(const struct rusage *usage)
{
	return (double)usage->ru_utime.tv_sec + (double)usage->ru_utime.tv_usec / 1e6 +
	       (double)usage->ru_stime.tv_sec + (double)usage->ru_stime.tv_usec / 1e6;
}

static void measure_windows(struct team *team, struct work *work, struct team_member *out)
{
	const struct team_request *request = team->request;
	double units = work_units_per_round(request->kind);
	uint64_t chunk = out->chunk_rounds;
	int previous = sched_getcpu();

	out->first_cpu = previous;
	for (size_t w = 0;; w++) {
		int measured = w >= request->warmup_windows;
		struct rusage before, after;
		uint64_t done = 0, started, now;

		/* Every thread has finished the window before (its sample stored):
		 * one of them asks the sampler for the team, all read the answer
		 * after the start barrier. */
		if (measured && pthread_barrier_wait(&team->barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
			request->run->count = w - request->warmup_windows;
			team->more = sampler_more(request->run);
		}
		pthread_barrier_wait(&team->barrier);
		if (measured && !team->more)
			break;
		getrusage(RUSAGE_THREAD, &before);
		previous = sched_getcpu();
		if (measured && previous >= 0 && previous < CPU_SETSIZE)
			CPU_SET(previous, &out->cpus_seen);
		started = timer_now_ns();
		do {
			int cpu;

			work_do(work, chunk);
			done += chunk;
			cpu = sched_getcpu();
			if (measured) {
				out->cpu_checks++;
				out->cpu_changes += cpu != previous;
				if (cpu >= 0 && cpu < CPU_SETSIZE)
					CPU_SET(cpu, &out->cpus_seen);
			}
			previous = cpu;
			now = timer_now_ns();
		} while ((double)(now - started) < request->window_ns);
		getrusage(RUSAGE_THREAD, &after);
		if (!measured)
			continue;
		/* units per ns = 1e9 units per s: Gop/s or GB/s. */
		out->samples[w - request->warmup_windows] = (double)done * units / (double)(now - started);
		out->voluntary_switches += after.ru_nvcsw - before.ru_nvcsw;
		out->involuntary_switches += after.ru_nivcsw - before.ru_nivcsw;
		out->cpu_s += rusage_cpu_s(&after) - rusage_cpu_s(&before);
		out->windows_s += (double)(now - started) / 1e9;
	}
	out->last_cpu = previous;
}

static void *member_main(void *argument)
{
	struct member_argument *member = argument;
	struct team *team = member->team;
	const struct team_request *request = team->request;
	struct team_member *out = member->out;
	struct work work;
	int ready = 0, gate;

	pthread_mutex_lock(&team->lock);
	while (team->gate == 0)
		pthread_cond_wait(&team->gate_opened, &team->lock);
	gate = team->gate;
	pthread_mutex_unlock(&team->lock);
	if (gate < 0)
		return NULL; /* a sibling thread could not be created: no barrier is used */

	memset(&work, 0, sizeof(work));
	if (request->cpus && sched_getcpu() != request->cpus[member->index])
		team_fail(team, "thread %zu was pinned to CPU %d but runs on CPU %d: the host did not honour the affinity",
			  member->index, request->cpus[member->index], sched_getcpu());
	else if (work_init(&work, request, member->index, &out->huge_bytes_granted) != 0)
		team_fail(team, "thread %zu cannot map its %llu-byte buffer: %s", member->index,
			  (unsigned long long)request->buffer_bytes, strerror(errno));
	else
		ready = 1;
	if (ready)
		out->chunk_rounds = calibrate_chunk(&work);
	/* Every thread reaches this barrier, failed or not; a failure before it
	 * is seen by all after it, so either all measure or none does. */
	pthread_barrier_wait(&team->barrier);
	if (!atomic_load(&team->failed))
		measure_windows(team, &work, out);
	if (ready)
		work_free(&work);
	return NULL;
}

static int start_member(pthread_t *thread, struct member_argument *argument, int cpu)
{
	pthread_attr_t attributes;
	cpu_set_t only;
	int error = pthread_attr_init(&attributes);

	if (error)
		return error;
	if (cpu >= 0) {
		CPU_ZERO(&only);
		CPU_SET(cpu, &only);
		error = pthread_attr_setaffinity_np(&attributes, sizeof(only), &only);
	}
	if (!error)
		error = pthread_create(thread, &attributes, member_main, argument);
	pthread_attr_destroy(&attributes);
	return error;
}

int team_run(const struct team_request *request, struct team_member *members, char *error,
	     size_t error_size)
{
	struct team team = {.request = request, .gate = 0};
	struct member_argument *arguments = calloc(request->threads, sizeof(*arguments));
	pthread_t *threads = calloc(request->threads, sizeof(*threads));
	size_t started = 0;
	int failure = 0;

	if (!arguments || !threads) {
		free(arguments);
		free(threads);
		snprintf(error, error_size, "out of memory starting %zu threads", request->threads);
		return -1;
	}
	pthread_mutex_init(&team.lock, NULL);
	pthread_cond_init(&team.gate_opened, NULL);
	pthread_barrier_init(&team.barrier, NULL, (unsigned)request->threads);
	atomic_init(&team.failed, 0);
	for (size_t i = 0; i < request->threads; i++) {
		double *samples = members[i].samples; /* the caller's array, kept */

		memset(&members[i], 0, sizeof(members[i]));
		members[i].samples = samples;
		CPU_ZERO(&members[i].cpus_seen);
		members[i].first_cpu = members[i].last_cpu = -1;
	}
	for (; started < request->threads; started++) {
		arguments[started] = (struct member_argument){&team, started, &members[started]};
		failure = start_member(&threads[started], &arguments[started],
				       request->cpus ? request->cpus[started] : -1);
		if (failure)
			break;
	}
	pthread_mutex_lock(&team.lock);
	team.gate = failure ? -1 : 1;
	pthread_cond_broadcast(&team.gate_opened);
	pthread_mutex_unlock(&team.lock);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (failure && request->cpus)
		snprintf(error, error_size, "cannot start thread %zu of %zu pinned to CPU %d: %s", started + 1,
			 request->threads, request->cpus[started], strerror(failure));
	else if (failure)
		snprintf(error, error_size, "cannot start thread %zu of %zu: %s", started + 1, request->threads,
			 strerror(failure));
	else if (atomic_load(&team.failed))
		snprintf(error, error_size, "%s", team.error);
	pthread_barrier_destroy(&team.barrier);
	pthread_cond_destroy(&team.gate_opened);
	pthread_mutex_destroy(&team.lock);
	free(arguments);
	free(threads);
	return failure || atomic_load(&team.failed) ? -1 : 0;
}

void team_member_context(struct json *json, const struct team_member *member)
{
	json_key(json, "chunk_rounds");
	json_uint(json, member->chunk_rounds);
	json_key(json, "cpu_checks");
	json_uint(json, member->cpu_checks);
	json_key(json, "migrations_observed");
	json_uint(json, member->cpu_changes);
	json_key(json, "cpus_seen");
	json_array_begin(json);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &member->cpus_seen))
			json_int(json, cpu);
	json_array_end(json);
	json_key(json, "first_cpu");
	json_int(json, member->first_cpu);
	json_key(json, "last_cpu");
	json_int(json, member->last_cpu);
	json_key(json, "voluntary_context_switches");
	json_int(json, member->voluntary_switches);
	json_key(json, "involuntary_context_switches");
	json_int(json, member->involuntary_switches);
	json_key(json, "thread_cpu_s");
	json_double(json, member->cpu_s);
	json_key(json, "windows_s");
	json_double(json, member->windows_s);
}

void team_member_record(struct record *record, const struct team_member *member, enum work_kind kind,
			const struct kopts *common, const struct sampler_run *run, uint64_t buffer_bytes,
			double wall_s, uint64_t order_index, const char *label)
{
	struct json *json = &record->json;

	json_key(json, "window_ms");
	json_double(json, common->min_sample_ms);
	json_key(json, "buffer_bytes");
	if (kind == WORK_MEMORY)
		json_uint(json, buffer_bytes);
	else
		json_null(json);
	json_key(json, "operation");
	json_string(json, work_kind_operation(kind));
	json_key(json, "seed");
	json_uint(json, common->seed);
	record_samples(record, member->samples, run->count);
	record_precision(record, run, member->samples);
	team_member_context(json, member);
	if (kind == WORK_MEMORY) {
		json_key(json, "huge_bytes_granted");
		json_uint(json, member->huge_bytes_granted);
	}
	json_key(json, "wall_s");
	json_double(json, wall_s);
	json_key(json, "order_index");
	json_uint(json, order_index);
	record_end(record, label);
}
