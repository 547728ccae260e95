/* The compute engine of core_clock and peak_flops; see peak.h. */
#include "peak.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "peak_loops.h"
#include "timer.h"
#include "topology.h"

/* A chunk of a body between two clock reads: long enough that reading the
 * clock costs nothing beside it, short enough that a window ends within
 * about 1% of its length. */
#define CHUNK_TARGET_NS 50000.0
/* The ramp's chunk: 256 ruler rounds (16384 adds, ~5 us at 3.5 GHz), so a
 * clock read (~25 ns) costs under 1% of it even at the idle clock. */
#define RAMP_CHUNK_ROUNDS 256

volatile double peak_sink;

static const char *const precision_names[PEAK_PRECISION_COUNT] = {"fp64", "fp32"};

const char *peak_precision_name(enum peak_precision precision)
{
	return precision_names[precision];
}

/* ---- scalar_int: the ruler alone ---------------------------------------- */

#define ADD_EIGHT(value, step)                                                                            \
	PEAK_ADD(value, step) PEAK_ADD(value, step) PEAK_ADD(value, step) PEAK_ADD(value, step)          \
	PEAK_ADD(value, step) PEAK_ADD(value, step) PEAK_ADD(value, step) PEAK_ADD(value, step)

/* The loop counter is independent of value, so its update and branch run
 * beside the add chain: one round costs 64 cycles. */
__attribute__((noinline)) static uint64_t ruler_scalar_int(uint64_t rounds)
{
	uint64_t value = rounds, step = 1;

	__asm__ volatile("" : "+r"(step));
	while (rounds--) {
		ADD_EIGHT(value, step) ADD_EIGHT(value, step) ADD_EIGHT(value, step) ADD_EIGHT(value, step)
		ADD_EIGHT(value, step) ADD_EIGHT(value, step) ADD_EIGHT(value, step) ADD_EIGHT(value, step)
	}
	return value;
}

static int supported_always(void)
{
	return 1;
}

static unsigned bits_scalar_int(void)
{
	return 64;
}

const struct peak_class peak_class_scalar_int = {
	.name = "scalar_int", .operation = "64-bit integer add (dependent chain)", .fused = 0, .scalar = 1,
	.supported = supported_always, .vector_bits = bits_scalar_int, .throughput = NULL, .latency = NULL,
	.ruler = ruler_scalar_int,
};

/* ---- the classes -------------------------------------------------------- */

static const struct peak_class *const built_classes[] = {
	&peak_class_scalar_int,
#if defined(__x86_64__) || defined(__i386__)
	&peak_class_scalar_fma, &peak_class_sse2, &peak_class_fma128, &peak_class_fma256, &peak_class_fma512,
#else
	&peak_class_scalar_fp,
#endif
#if defined(__aarch64__)
	&peak_class_neon,
#if defined(PEAK_HAVE_SVE)
	&peak_class_sve,
#endif
#endif
};

#define BUILT_CLASSES (sizeof(built_classes) / sizeof(built_classes[0]))

size_t peak_classes(const struct peak_class *const **classes)
{
	*classes = built_classes;
	return BUILT_CLASSES;
}

const struct peak_class *peak_class_find(const char *name)
{
	for (size_t i = 0; i < BUILT_CLASSES; i++)
		if (strcmp(built_classes[i]->name, name) == 0)
			return built_classes[i];
	return NULL;
}

static int runs(const char *name)
{
	const struct peak_class *found = peak_class_find(name);

	return found && found->supported();
}

/* In "auto": a class another stands for is left out (sse2 where fma128 runs:
 * the same width, fused), and for the clock a scalar floating-point class
 * where a vector class runs (the integer ruler is the scalar class). */
static int automatic(const struct peak_class *peak_class, enum peak_use use, int vector_runs)
{
	if (!peak_class->supported())
		return 0;
	if (strcmp(peak_class->name, "sse2") == 0 && runs("fma128"))
		return 0;
	if (use == PEAK_USE_FLOPS)
		return peak_class->throughput != NULL;
	return peak_class->throughput == NULL || !peak_class->scalar || !vector_runs;
}

size_t peak_classes_parse(const char *kernel, const char *option, const char *text, enum peak_use use,
			  const struct peak_class *out[PEAK_MAX_CLASSES])
{
	size_t count = 0;
	char *copy, *item, *rest;

	if (strcmp(text, "auto") == 0) {
		int vector_runs = 0;

		for (size_t i = 0; i < BUILT_CLASSES; i++)
			vector_runs |= !built_classes[i]->scalar && built_classes[i]->supported();
		for (size_t i = 0; i < BUILT_CLASSES && count < PEAK_MAX_CLASSES; i++)
			if (automatic(built_classes[i], use, vector_runs))
				out[count++] = built_classes[i];
		return count;
	}
	copy = strdup(text);
	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, kernel, "out of memory parsing %s", option);
	for (item = copy; item; item = rest) {
		const struct peak_class *found;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		found = peak_class_find(item);
		if (!found) {
			char names[256] = "";

			for (size_t i = 0; i < BUILT_CLASSES; i++)
				if (use == PEAK_USE_CLOCK || built_classes[i]->throughput)
					snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
						 built_classes[i]->name);
			cli_fail(CLI_EXIT_USAGE, kernel, "%s item '%s' is not a class of this build (%s; or auto)", option,
				 item, names);
		}
		if (use == PEAK_USE_FLOPS && !found->throughput)
			cli_fail(CLI_EXIT_USAGE, kernel, "%s item '%s' does no floating-point work: it is a clock class only",
				 option, item);
		for (size_t i = 0; i < count; i++)
			if (out[i] == found)
				cli_fail(CLI_EXIT_USAGE, kernel, "%s names '%s' twice", option, item);
		if (!found->supported())
			cli_fail(CLI_EXIT_UNSUPPORTED, kernel, "%s item '%s' (%s): this CPU does not run it", option, item,
				 found->operation);
		if (count == PEAK_MAX_CLASSES)
			cli_fail(CLI_EXIT_USAGE, kernel, "%s names more than %d classes", option, PEAK_MAX_CLASSES);
		out[count++] = found;
	}
	free(copy);
	return count;
}

unsigned peak_lanes(const struct peak_class *peak_class, enum peak_precision precision)
{
	if (peak_class->scalar)
		return 1;
	return peak_class->vector_bits() / (precision == PEAK_FP64 ? 64 : 32);
}

double peak_flops_per_round(const struct peak_class *peak_class, enum peak_precision precision)
{
	return (double)PEAK_CHAINS * peak_lanes(peak_class, precision) * 2.0;
}

/* ---- the team ------------------------------------------------------------- */

struct team {
	const struct peak_team_request *request;
	pthread_mutex_t lock;
	pthread_cond_t gate_opened;
	int gate; /* 0 closed, 1 go, -1 abort: set once every thread exists (or not) */
	pthread_barrier_t barrier;
	int more;
	atomic_int failed;
	char error[192];
};

struct member {
	struct team *team;
	size_t index;
};

static void team_fail(struct team *team, const char *format, ...) __attribute__((format(printf, 2, 3)));

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

static void body_rounds(const struct peak_team_request *request, enum peak_body body, uint64_t rounds)
{
	if (body == PEAK_BODY_THROUGHPUT)
		peak_sink = request->peak_class->throughput(request->precision, rounds);
	else
		peak_sink = (double)request->peak_class->ruler(rounds);
}

static uint64_t calibrate_chunk(const struct peak_team_request *request, enum peak_body body)
{
	uint64_t rounds = 16;

	for (;;) {
		uint64_t started = timer_now_ns();

		body_rounds(request, body, rounds);
		if ((double)(timer_now_ns() - started) >= CHUNK_TARGET_NS || rounds >= (UINT64_C(1) << 40))
			return rounds;
		rounds *= 2;
	}
}

uint64_t peak_thread_cpu_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* One sample: the body's work per ns of the thread's own CPU time over one
 * window (GFLOP/s or GHz while it ran: time another process or the host
 * took from it is not the core's), and the share of the window it ran. */
static double run_window(const struct peak_team_request *request, enum peak_body body, uint64_t chunk,
			 double *share)
{
	uint64_t done = 0, started = timer_now_ns(), cpu_started = peak_thread_cpu_ns(), now, cpu_ns;
	double per_round = body == PEAK_BODY_THROUGHPUT
				   ? peak_flops_per_round(request->peak_class, request->precision)
				   : (double)PEAK_RULER_ADDS;

	do {
		body_rounds(request, body, chunk);
		done += chunk;
		now = timer_now_ns();
	} while ((double)(now - started) < request->window_ns);
	cpu_ns = peak_thread_cpu_ns() - cpu_started;
	*share = (double)cpu_ns / (double)(now - started);
	return (double)done * per_round / (double)(cpu_ns ? cpu_ns : 1);
}

static void *member_main(void *argument)
{
	struct member *member = argument;
	struct team *team = member->team;
	const struct peak_team_request *request = team->request;
	uint64_t chunks[2] = {0, 0};
	int gate;

	pthread_mutex_lock(&team->lock);
	while (team->gate == 0)
		pthread_cond_wait(&team->gate_opened, &team->lock);
	gate = team->gate;
	pthread_mutex_unlock(&team->lock);
	if (gate < 0)
		return NULL; /* a sibling thread could not be created: no barrier is used */
	if (sched_getcpu() != request->cpus[member->index])
		team_fail(team, "thread %zu was pinned to CPU %d but runs on CPU %d: the host did not honour the affinity",
			  member->index, request->cpus[member->index], sched_getcpu());
	else
		for (size_t b = 0; b < request->body_count; b++)
			chunks[b] = calibrate_chunk(request, request->bodies[b]);
	/* Every thread reaches this barrier, failed or not: all measure or none. */
	pthread_barrier_wait(&team->barrier);
	if (atomic_load(&team->failed))
		return NULL;
	for (size_t w = 0;; w++) {
		int measured = w >= request->warmup_windows;

		/* Every thread has stored its samples of the window before: one asks
		 * the sampler for the team, all read the answer after the barrier. */
		if (pthread_barrier_wait(&team->barrier) == PTHREAD_BARRIER_SERIAL_THREAD && measured) {
			request->run->count = w - request->warmup_windows;
			team->more = sampler_more(request->run);
		}
		pthread_barrier_wait(&team->barrier);
		if (measured && !team->more)
			break;
		for (size_t b = 0; b < request->body_count; b++) {
			size_t series = member->index * request->body_count + b;
			double sample, share;

			if (b > 0) /* each body's window starts on every thread together */
				pthread_barrier_wait(&team->barrier);
			sample = run_window(request, request->bodies[b], chunks[b], &share);
			if (measured) {
				request->samples[series][w - request->warmup_windows] = sample;
				request->shares[series][w - request->warmup_windows] = share;
			}
		}
	}
	return NULL;
}

static int start_member(pthread_t *thread, struct member *argument, int cpu)
{
	pthread_attr_t attributes;
	cpu_set_t only;
	int error = pthread_attr_init(&attributes);

	if (error)
		return error;
	CPU_ZERO(&only);
	CPU_SET(cpu, &only);
	error = pthread_attr_setaffinity_np(&attributes, sizeof(only), &only);
	if (!error)
		error = pthread_create(thread, &attributes, member_main, argument);
	pthread_attr_destroy(&attributes);
	return error;
}

int peak_team_run(const struct peak_team_request *request, char *error, size_t error_size)
{
	struct team team = {.request = request, .gate = 0};
	struct member *members = calloc(request->threads, sizeof(*members));
	pthread_t *threads = calloc(request->threads, sizeof(*threads));
	size_t started = 0;
	int failure = 0;

	if (!members || !threads) {
		free(members);
		free(threads);
		snprintf(error, error_size, "out of memory starting %zu threads", request->threads);
		return -1;
	}
	pthread_mutex_init(&team.lock, NULL);
	pthread_cond_init(&team.gate_opened, NULL);
	pthread_barrier_init(&team.barrier, NULL, (unsigned)request->threads);
	atomic_init(&team.failed, 0);
	for (; started < request->threads; started++) {
		members[started] = (struct member){&team, started};
		failure = start_member(&threads[started], &members[started], request->cpus[started]);
		if (failure)
			break;
	}
	pthread_mutex_lock(&team.lock);
	team.gate = failure ? -1 : 1;
	pthread_cond_broadcast(&team.gate_opened);
	pthread_mutex_unlock(&team.lock);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (failure)
		snprintf(error, error_size, "cannot start thread %zu of %zu pinned to CPU %d: %s", started + 1,
			 request->threads, request->cpus[started], strerror(failure));
	else if (atomic_load(&team.failed))
		snprintf(error, error_size, "%s", team.error);
	pthread_barrier_destroy(&team.barrier);
	pthread_cond_destroy(&team.gate_opened);
	pthread_mutex_destroy(&team.lock);
	free(members);
	free(threads);
	return failure || atomic_load(&team.failed) ? -1 : 0;
}

size_t peak_default_cpus(const char *kernel, int **cpus)
{
	size_t cores = 0;

	topology_cpu_order(kernel, cpus, &cores, NULL);
	return cores;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double peak_median(double *values, size_t count)
{
	if (count == 0)
		return 0.0;
	qsort(values, count, sizeof(*values), compare_doubles);
	return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

/* ---- the clock after idle ------------------------------------------------ */

size_t peak_ramp(double idle_ns, double ramp_ns, double slice_ns, double *ghz, double *shares, double *ends_us,
		 size_t capacity)
{
	struct timespec idle = {.tv_sec = (time_t)(idle_ns / 1e9), .tv_nsec = (long)((uint64_t)idle_ns % 1000000000u)};
	uint64_t started, slice_started, now;
	size_t slices = 0;

	while (nanosleep(&idle, &idle) != 0 && errno == EINTR)
		;
	started = slice_started = timer_now_ns();
	while (slices < capacity) {
		uint64_t done = 0, cpu_started = peak_thread_cpu_ns(), cpu_ns;

		do {
			peak_sink = (double)ruler_scalar_int(RAMP_CHUNK_ROUNDS);
			done += RAMP_CHUNK_ROUNDS;
			now = timer_now_ns();
		} while ((double)(now - slice_started) < slice_ns);
		cpu_ns = peak_thread_cpu_ns() - cpu_started;
		ghz[slices] = (double)done * PEAK_RULER_ADDS / (double)(cpu_ns ? cpu_ns : 1);
		shares[slices] = (double)cpu_ns / (double)(now - slice_started);
		ends_us[slices++] = (double)(now - started) / 1e3;
		slice_started = now;
		if ((double)(now - started) >= ramp_ns)
			break;
	}
	return slices;
}
