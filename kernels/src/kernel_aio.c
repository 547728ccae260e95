/* aio: async vs blocking reads of one file. Blocking pread() (queue depth k
 * = k threads, one read in flight each), POSIX AIO (aio_read, k in flight
 * from one thread; glibc serves them on its helper threads) and io_uring
 * (k in flight from one thread, system calls without liburing), at each
 * queue depth: throughput per time window (samples) and every read's
 * latency from submission to completion (percentiles and a histogram).
 *
 * The scratch file is anonymous: created with O_TMPFILE (or, where the
 * filesystem refuses that, created and unlinked at once), so it has no name
 * to leave behind when the process ends, whether it finishes, fails or is
 * killed. O_DIRECT is used where the filesystem accepts it (recorded), and
 * the file's page cache is dropped before every point with
 * posix_fadvise(DONTNEED), verified with mincore (recorded). */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "rng.h"
#include "sampler.h"
#include "sizes.h"
#include "timer.h"
#include "uring.h"

#define KERNEL "aio"
#define DEFAULT_EXPERIMENT "aio"
#define DEFAULT_SIZE ((uint64_t)256 << 20)
#define DEFAULT_BLOCK ((uint64_t)4096)
#define MAX_DEPTH 1024
#define LAYOUT_CHUNK ((size_t)1 << 20)
#define FREE_SPACE_MARGIN ((uint64_t)64 << 20)
#define BUFFER_ALIGN 4096
#define WARMUP_WINDOWS 1
#define MAX_WINDOW_MS 2000.0 /* widest window a stalled point is re-measured with */
#define AIO_RNG_STREAM 0x61696fu
#define HISTOGRAM_SUB_BUCKETS 8 /* per power of two: 9% wide at most */
#define HISTOGRAM_BUCKETS (64 * HISTOGRAM_SUB_BUCKETS)

enum engine { ENGINE_BLOCKING, ENGINE_POSIX_AIO, ENGINE_IO_URING, ENGINE_COUNT };
enum direct_choice { DIRECT_AUTO, DIRECT_ON, DIRECT_OFF };

static const char *const engine_names[ENGINE_COUNT] = {"blocking", "posix_aio", "io_uring"};
static const double percentiles[] = {50, 90, 95, 99, 99.9, 99.99};
static const char *const percentile_keys[] = {"latency_p50_us", "latency_p90_us", "latency_p95_us",
					      "latency_p99_us", "latency_p99_9_us", "latency_p99_99_us"};
#define PERCENTILE_COUNT (sizeof(percentiles) / sizeof(percentiles[0]))

struct aio_options {
	struct kopts common;
	const char *directory, *file;
	uint64_t size;
	int have_size;
	int engines[ENGINE_COUNT];
	size_t engine_count;
	uint64_t *depths;
	size_t depth_count;
	uint64_t block_size;
	int sequential;
	enum direct_choice direct;
	int plan_only;
};

struct target {
	int fd;
	uint64_t bytes;  /* the span read: whole blocks */
	uint64_t blocks;
	const char *mode;
	int direct;
	char direct_note[256];
	char filesystem[32];
	double layout_s;
};

/* One point's run of one engine at one depth. Completions are placed in
 * windows by their time; those in the warm-up window are not kept, those
 * after the end are not counted, and nothing is submitted after the end.
 * The end is decided as the run goes: the first completion in a window not
 * yet allowed asks the sampler (the windows before it are over); when it
 * needs no more samples, the end moves to the start of that window. */
struct io_run {
	const struct target *target;
	uint64_t block_size;
	int sequential;
	unsigned depth;
	uint64_t start_ns;
	_Atomic uint64_t end_ns;
	double window_ns;
	size_t windows; /* warm-up included: the most the sampler can allow */
	_Atomic size_t allowed; /* windows the sampler allowed so far (warm-up included) */
	int stopped;            /* the sampler has decided the end (under lock) */
	struct sampler_run *sampling; /* its series: MB/s per measured window */
	_Atomic uint64_t *window_ios;
	_Atomic uint64_t cursor; /* sequential: next block */
	_Atomic int failed;
	char error[256];
	pthread_mutex_t lock;
	uint64_t seed;
	const char *detail; /* how the engine issued its reads, for the record */
};

/* Latencies of kept completions (ns), growing. */
struct latencies {
	uint64_t *values;
	size_t count, capacity;
};

static void aio_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, aio_help);
	fprintf(out,
		"Usage: %s aio (--directory DIR | --file FILE) [--engines LIST]\n"
		"          [--queue-depths LIST] [--size SIZE] [OPTIONS]\n"
		"       %s aio --plan\n"
		"\n"
		"Async vs blocking reads of one file, at each queue depth k:\n"
		"  blocking   pread() from k threads, one read in flight each\n"
		"  posix_aio  aio_read(), k in flight from one thread (aio_suspend to wait;\n"
		"             glibc serves them on helper threads)\n"
		"  io_uring   k reads in flight from one thread (io_uring_enter; system\n"
		"             calls, no liburing; set up as fio does)\n"
		"Each point runs one warm-up window and --samples windows of --min-sample-ms;\n"
		"a sample is the MB/s (1e6 B/s) completed in a window. Every read's latency,\n"
		"submission to completion (fio's 'lat'), goes into percentiles and a\n"
		"histogram. Points (engine x depth) run in a seeded random order. A point\n"
		"that completes no read in its measured windows is measured again with\n"
		"windows twice as long (up to 2 s); window_ms records the one used.\n"
		"\n"
		"Target:\n"
		"  -d, --directory DIR     write a scratch file of --size in DIR and read it.\n"
		"                          The file is anonymous (O_TMPFILE; where the\n"
		"                          filesystem refuses, created and unlinked at once):\n"
		"                          nothing is left in DIR however the process ends.\n"
		"                          Refused (exit 1) unless DIR has --size + 64 MiB free\n"
		"  -f, --file FILE         read an existing regular file instead (never\n"
		"                          written, never removed): e.g. the one fio reads\n"
		"  -s, --size SIZE         file size (default 256m); with --file, read only\n"
		"                          the first SIZE bytes\n"
		"\n"
		"Reads:\n"
		"  -E, --engines LIST      blocking,posix_aio,io_uring (default all); an\n"
		"                          engine this host lacks exits 4 with the reason\n"
		"                          (--plan says which are available)\n"
		"  -q, --queue-depths LIST reads in flight, 1..%d (default 1,2,4,8,16,32)\n"
		"  -b, --block-size SIZE   bytes per read, a multiple of 512 (default 4k)\n"
		"  -P, --pattern P         random (default: uniform over the file's blocks)\n"
		"                          or sequential\n"
		"  -D, --direct MODE       auto (default: O_DIRECT where the filesystem\n"
		"                          accepts it, else buffered, recorded), on (exit 1\n"
		"                          if refused) or off\n"
		"  -L, --plan              print which engines this host can run as one JSON\n"
		"                          object and exit; nothing is written or measured\n"
		"\n",
		CLI_PROGRAM, CLI_PROGRAM, MAX_DEPTH);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"Before every point the file's page cache is dropped (posix_fadvise\n"
		"DONTNEED, this file only) and what stays resident is measured (mincore).\n"
		"One JSON object per point: metric \"throughput\", unit \"MB/s\",\n"
		"  params {engine, engine_detail, queue_depth, threads, block_size_bytes,\n"
		"          pattern, file_bytes, file_mode, filesystem, direct, direct_note,\n"
		"          cache_dropped, cache_resident_bytes_before_drop,\n"
		"          cache_resident_bytes_after_drop, window_ms, seed},\n"
		"  samples [MB/s per window], summary {...},\n"
		"  context {ios, iops, latency_min_us, latency_mean_us, latency_p50_us,\n"
		"           latency_p90_us, latency_p95_us, latency_p99_us,\n"
		"           latency_p99_9_us, latency_p99_99_us, latency_max_us,\n"
		"           latency_histogram_upper_us, latency_histogram_counts,\n"
		"           voluntary_context_switches, involuntary_context_switches\n"
		"           (the process, over the point), layout_s, wall_s, order_index}.\n"
		"\n"
		"Examples:\n"
		"  %s aio --directory /var/tmp --size 1g --samples 11 --min-sample-ms 200\n"
		"  %s aio --file /data/fio.dat --engines io_uring --queue-depths 1,32 --direct on\n",
		CLI_PROGRAM, CLI_PROGRAM);
}

static void parse_engines(struct aio_options *options, const char *text)
{
	char *copy = strdup(text), *item, *rest;

	if (!copy)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory parsing --engines");
	options->engine_count = 0;
	for (item = copy; item; item = rest) {
		int found = -1;

		rest = strchr(item, ',');
		if (rest)
			*rest++ = '\0';
		for (int i = 0; i < ENGINE_COUNT; i++)
			if (strcmp(item, engine_names[i]) == 0)
				found = i;
		if (found < 0)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--engines item '%s' is not blocking, posix_aio or io_uring", item);
		for (size_t i = 0; i < options->engine_count; i++)
			if (options->engines[i] == found)
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--engines names '%s' twice", item);
		options->engines[options->engine_count++] = found;
	}
	free(copy);
}

static void aio_option(void *context, int option, const char *arg)
{
	struct aio_options *options = context;

	switch (option) {
	case 'd':
		if (!*arg)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--directory is empty; give a directory");
		options->directory = arg;
		break;
	case 'f':
		if (!*arg)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--file is empty; give a file");
		options->file = arg;
		break;
	case 's':
		options->size = kopts_size(&options->common, "--size", arg);
		options->have_size = 1;
		break;
	case 'E':
		parse_engines(options, arg);
		break;
	case 'q':
		free(options->depths);
		options->depth_count = kopts_u64_list(&options->common, "--queue-depths", arg, 1, MAX_DEPTH, 0,
						       &options->depths);
		break;
	case 'b':
		options->block_size = kopts_size(&options->common, "--block-size", arg);
		break;
	case 'P':
		if (strcmp(arg, "random") == 0)
			options->sequential = 0;
		else if (strcmp(arg, "sequential") == 0)
			options->sequential = 1;
		else
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--pattern '%s' is not random or sequential", arg);
		break;
	case 'D':
		if (strcmp(arg, "auto") == 0)
			options->direct = DIRECT_AUTO;
		else if (strcmp(arg, "on") == 0)
			options->direct = DIRECT_ON;
		else if (strcmp(arg, "off") == 0)
			options->direct = DIRECT_OFF;
		else
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--direct '%s' is not auto, on or off", arg);
		break;
	case 'L':
		options->plan_only = 1;
		break;
	}
}

/* Whether this host can run an engine now; reason says why not. */
static int engine_available(int engine, const char **reason)
{
	struct uring ring;

	*reason = NULL;
	if (engine != ENGINE_IO_URING)
		return 1;
	if (uring_open(&ring, 4) != 0) {
		*reason = uring_unavailable(errno);
		return 0;
	}
	uring_close(&ring);
	return 1;
}

static void print_plan(void)
{
	struct json json;

	json_init(&json);
	json_object_begin(&json);
	json_key(&json, "kernel");
	json_string(&json, KERNEL);
	json_key(&json, "engines");
	json_array_begin(&json);
	for (int engine = 0; engine < ENGINE_COUNT; engine++) {
		const char *reason;
		int available = engine_available(engine, &reason);

		json_object_begin(&json);
		json_key(&json, "engine");
		json_string(&json, engine_names[engine]);
		json_key(&json, "available");
		json_bool(&json, available);
		json_key(&json, "reason");
		if (reason)
			json_string(&json, reason);
		else
			json_null(&json);
		json_object_end(&json);
	}
	json_array_end(&json);
	json_object_end(&json);
	if (json_write_line(&json, STDOUT_FILENO) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot write the plan: %s", strerror(errno));
	json_free(&json);
}

static void filesystem_name(int fd, char *out, size_t size)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} known[] = {
		{0xEF53, "ext2/3/4"}, {0x58465342, "xfs"}, {0x9123683E, "btrfs"}, {0x01021994, "tmpfs"},
		{0x794C7630, "overlayfs"}, {0x6969, "nfs"}, {0x2FC12FC1, "zfs"}, {0xF2F52010, "f2fs"},
		{0x65735546, "fuse"}, {0x858458F6, "ramfs"},
	};
	struct statfs info;

	if (fstatfs(fd, &info) != 0) {
		snprintf(out, size, "unknown");
		return;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if ((unsigned long)info.f_type == known[i].magic) {
			snprintf(out, size, "%s", known[i].name);
			return;
		}
	snprintf(out, size, "0x%lx", (unsigned long)info.f_type);
}

static void *aligned_buffer(size_t bytes)
{
	void *buffer = NULL;

	if (posix_memalign(&buffer, BUFFER_ALIGN, bytes) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for a %zu-byte read buffer", bytes);
	memset(buffer, 0, bytes);
	return buffer;
}

/* An anonymous file in directory: O_TMPFILE has no name at all; the
 * fallback's name exists only between open and unlink. */
static int create_anonymous(const char *directory, const char **mode)
{
	char path[4096];
	int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0) {
		*mode = "anonymous scratch file (O_TMPFILE)";
		return fd;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot create a scratch file in --directory '%s': %s", directory,
			 strerror(errno));
	if (snprintf(path, sizeof(path), "%s/.fleetscope-aio-XXXXXX", directory) >= (int)sizeof(path))
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--directory '%s' is too long", directory);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot create a scratch file in --directory '%s': %s", directory,
			 strerror(errno));
	if (unlink(path) != 0) {
		int saved = errno;

		close(fd);
		unlink(path);
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot unlink the scratch file %s: %s", path, strerror(saved));
	}
	*mode = "scratch file unlinked at creation (the filesystem refused O_TMPFILE)";
	return fd;
}

/* Real data, so a thin or deduplicating virtual disk cannot answer reads of
 * unwritten or repeated blocks without touching the device. */
static void lay_out(struct target *target, const struct aio_options *options)
{
	uint64_t started = timer_now_ns(), seed = options->common.seed;
	uint64_t *chunk = aligned_buffer(LAYOUT_CHUNK);
	struct rng rng;

	rng_seed(&rng, seed, AIO_RNG_STREAM + 1);
	for (uint64_t offset = 0; offset < target->bytes; offset += LAYOUT_CHUNK) {
		size_t bytes = target->bytes - offset < LAYOUT_CHUNK ? (size_t)(target->bytes - offset) : LAYOUT_CHUNK;
		size_t done = 0;

		for (size_t i = 0; i < LAYOUT_CHUNK / sizeof(uint64_t); i++)
			chunk[i] = rng_next(&rng);
		while (done < bytes) {
			ssize_t wrote = pwrite(target->fd, (char *)chunk + done, bytes - done, (off_t)(offset + done));

			if (wrote < 0 && errno == EINTR)
				continue;
			if (wrote <= 0)
				cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot write the scratch file at %" PRIu64 ": %s",
					 offset + done, wrote < 0 ? strerror(errno) : "no progress");
			done += (size_t)wrote;
		}
	}
	if (fsync(target->fd) != 0)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot fsync the scratch file: %s", strerror(errno));
	free(chunk);
	target->layout_s = (double)(timer_now_ns() - started) / 1e9;
}

static void choose_direct(struct target *target, const struct aio_options *options)
{
	int flags = fcntl(target->fd, F_GETFL);
	void *probe;
	ssize_t got;

	target->direct = 0;
	if (options->direct == DIRECT_OFF) {
		snprintf(target->direct_note, sizeof(target->direct_note), "buffered reads (--direct off)");
		return;
	}
	if (flags < 0 || fcntl(target->fd, F_SETFL, flags | O_DIRECT) != 0) {
		snprintf(target->direct_note, sizeof(target->direct_note),
			 "O_DIRECT refused by the %s filesystem (%s): buffered reads, page cache dropped before each point",
			 target->filesystem, strerror(errno));
	} else {
		probe = aligned_buffer(options->block_size);
		got = pread(target->fd, probe, options->block_size, 0);
		free(probe);
		if (got == (ssize_t)options->block_size) {
			target->direct = 1;
			snprintf(target->direct_note, sizeof(target->direct_note), "O_DIRECT accepted by the %s filesystem",
				 target->filesystem);
			return;
		}
		snprintf(target->direct_note, sizeof(target->direct_note),
			 "O_DIRECT reads of %" PRIu64 " bytes refused on the %s filesystem (%s): buffered reads, page cache dropped before each point",
			 options->block_size, target->filesystem, got < 0 ? strerror(errno) : "short read");
		fcntl(target->fd, F_SETFL, flags);
	}
	if (options->direct == DIRECT_ON)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "--direct on: %s", target->direct_note);
}

static void open_target(struct target *target, const struct aio_options *options)
{
	memset(target, 0, sizeof(*target));
	if (options->directory) {
		struct statvfs space;
		uint64_t free_bytes;

		if (statvfs(options->directory, &space) != 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot read the free space of --directory '%s': %s",
				 options->directory, strerror(errno));
		free_bytes = (uint64_t)space.f_bavail * space.f_frsize;
		if (options->size + FREE_SPACE_MARGIN > free_bytes) {
			char need[32], have[32];

			size_format(options->size + FREE_SPACE_MARGIN, need, sizeof(need));
			size_format(free_bytes, have, sizeof(have));
			cli_fail(CLI_EXIT_RUNTIME, KERNEL,
				 "--directory '%s' has %s free; the scratch file needs %s (--size + 64 MiB): use a smaller --size or another directory",
				 options->directory, have, need);
		}
		target->fd = create_anonymous(options->directory, &target->mode);
		target->bytes = options->size / options->block_size * options->block_size;
		filesystem_name(target->fd, target->filesystem, sizeof(target->filesystem));
		lay_out(target, options);
	} else {
		struct stat info;

		target->fd = open(options->file, O_RDONLY | O_CLOEXEC);
		if (target->fd < 0)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot open --file '%s': %s", options->file, strerror(errno));
		if (fstat(target->fd, &info) != 0 || !S_ISREG(info.st_mode))
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--file '%s' is not a regular file", options->file);
		target->bytes = (uint64_t)info.st_size;
		if (options->have_size && options->size < target->bytes)
			target->bytes = options->size;
		target->bytes = target->bytes / options->block_size * options->block_size;
		target->mode = "existing file (--file; not written, not removed)";
		filesystem_name(target->fd, target->filesystem, sizeof(target->filesystem));
	}
	target->blocks = target->bytes / options->block_size;
	if (target->blocks < 2)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "the file holds %" PRIu64 " bytes: at least two blocks of --block-size are needed",
			 target->bytes);
	choose_direct(target, options);
}

/* Bytes of the file in the page cache, from mincore over a mapping of it;
 * -1 if it cannot be measured. */
static int64_t resident_bytes(const struct target *target)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = (size_t)((target->bytes + (uint64_t)page - 1) / (uint64_t)page);
	unsigned char *vector = malloc(pages ? pages : 1);
	void *map;
	int64_t resident = 0;

	if (!vector)
		return -1;
	map = mmap(NULL, target->bytes, PROT_READ, MAP_SHARED, target->fd, 0);
	if (map == MAP_FAILED || mincore(map, target->bytes, vector) != 0) {
		if (map != MAP_FAILED)
			munmap(map, target->bytes);
		free(vector);
		return -1;
	}
	for (size_t i = 0; i < pages; i++)
		resident += (vector[i] & 1) ? page : 0;
	munmap(map, target->bytes);
	free(vector);
	return resident;
}

static void latencies_add(struct latencies *latencies, uint64_t value)
{
	if (latencies->count == latencies->capacity) {
		size_t capacity = latencies->capacity ? 2 * latencies->capacity : 4096;
		uint64_t *grown = realloc(latencies->values, capacity * sizeof(*grown));

		if (!grown)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory keeping %zu latencies", latencies->count);
		latencies->values = grown;
		latencies->capacity = capacity;
	}
	latencies->values[latencies->count++] = value;
}

static void run_fail(struct io_run *run, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void run_fail(struct io_run *run, const char *format, ...)
{
	va_list args;

	pthread_mutex_lock(&run->lock);
	if (!atomic_load(&run->failed)) {
		va_start(args, format);
		vsnprintf(run->error, sizeof(run->error), format, args);
		va_end(args);
		atomic_store(&run->failed, 1);
	}
	pthread_mutex_unlock(&run->lock);
}

static uint64_t next_offset(struct io_run *run, struct rng *rng)
{
	uint64_t block;

	if (run->sequential)
		block = atomic_fetch_add_explicit(&run->cursor, 1, memory_order_relaxed) % run->target->blocks;
	else
		block = rng_bounded(rng, run->target->blocks);
	return block * run->block_size;
}

/* MB/s of measured window i (bytes per ns = GB/s; x 1000 = MB/s). */
static double window_mb_s(const struct io_run *run, size_t i)
{
	return (double)atomic_load(&run->window_ios[WARMUP_WINDOWS + i]) * (double)run->block_size /
	       run->window_ns * 1000.0;
}

static void start_clock(struct io_run *run)
{
	run->start_ns = timer_now_ns();
	atomic_store(&run->end_ns, run->start_ns + (uint64_t)(run->window_ns * (double)run->windows));
}

/* The first completion in a window beyond those allowed: every window
 * before it is over, so the sampler decides on them, one at a time. */
static void decide(struct io_run *run, size_t window)
{
	pthread_mutex_lock(&run->lock);
	while (!run->stopped && atomic_load(&run->allowed) <= window) {
		size_t allowed = atomic_load(&run->allowed);
		struct sampler_run *sampling = run->sampling;

		sampling->count = allowed - WARMUP_WINDOWS;
		for (size_t i = 0; i < sampling->count; i++)
			sampling->series[0][i] = window_mb_s(run, i);
		if (!sampler_more(sampling)) {
			atomic_store(&run->end_ns, run->start_ns + (uint64_t)(run->window_ns * (double)allowed));
			run->stopped = 1;
			break;
		}
		atomic_store(&run->allowed, allowed + 1);
	}
	pthread_mutex_unlock(&run->lock);
}

/* A completion at now that took latency ns. Returns 0 when the run is over
 * (nothing more may be submitted). */
static int complete(struct io_run *run, struct latencies *latencies, uint64_t now, uint64_t latency)
{
	size_t window;

	if (now >= atomic_load(&run->end_ns))
		return 0;
	window = (size_t)((double)(now - run->start_ns) / run->window_ns);
	if (window >= run->windows)
		window = run->windows - 1;
	if (window >= atomic_load(&run->allowed)) {
		decide(run, window);
		if (now >= atomic_load(&run->end_ns))
			return 0;
	}
	atomic_fetch_add_explicit(&run->window_ios[window], 1, memory_order_relaxed);
	if (window >= WARMUP_WINDOWS)
		latencies_add(latencies, latency);
	return 1;
}

/* ---- blocking: k threads, one pread each ---- */

struct blocking_gate {
	pthread_mutex_t lock;
	pthread_cond_t opened;
	int state; /* 0 closed, 1 go, -1 abort: a thread could not be created */
};

struct blocking_thread {
	struct io_run *run;
	struct blocking_gate *gate;
	unsigned index;
	struct latencies latencies;
};

static void *blocking_main(void *argument)
{
	struct blocking_thread *thread = argument;
	struct io_run *run = thread->run;
	void *buffer = aligned_buffer(run->block_size);
	struct rng rng;
	int state;

	rng_seed(&rng, run->seed, AIO_RNG_STREAM + 16 + thread->index);
	pthread_mutex_lock(&thread->gate->lock);
	while ((state = thread->gate->state) == 0)
		pthread_cond_wait(&thread->gate->opened, &thread->gate->lock);
	pthread_mutex_unlock(&thread->gate->lock);
	while (state > 0 && !atomic_load_explicit(&run->failed, memory_order_relaxed)) {
		uint64_t offset = next_offset(run, &rng), submitted = timer_now_ns(), done;
		ssize_t got;

		if (submitted >= atomic_load(&run->end_ns))
			break;
		got = pread(run->target->fd, buffer, run->block_size, (off_t)offset);
		done = timer_now_ns();
		if (got != (ssize_t)run->block_size) {
			run_fail(run, "pread of %" PRIu64 " bytes at offset %" PRIu64 " returned %zd: %s", run->block_size,
				 offset, got, got < 0 ? strerror(errno) : "short read");
			break;
		}
		if (!complete(run, &thread->latencies, done, done - submitted))
			break;
	}
	free(buffer);
	return NULL;
}

static void run_blocking(struct io_run *run, struct latencies *all)
{
	struct blocking_thread *threads = calloc(run->depth, sizeof(*threads));
	pthread_t *ids = calloc(run->depth, sizeof(*ids));
	struct blocking_gate gate = {.state = 0};
	unsigned created = 0;
	int error = 0;

	if (!threads || !ids)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory starting %u threads", run->depth);
	pthread_mutex_init(&gate.lock, NULL);
	pthread_cond_init(&gate.opened, NULL);
	for (; created < run->depth; created++) {
		threads[created] = (struct blocking_thread){.run = run, .gate = &gate, .index = created};
		error = pthread_create(&ids[created], NULL, blocking_main, &threads[created]);
		if (error)
			break;
	}
	start_clock(run);
	pthread_mutex_lock(&gate.lock);
	gate.state = error ? -1 : 1;
	pthread_cond_broadcast(&gate.opened);
	pthread_mutex_unlock(&gate.lock);
	for (unsigned i = 0; i < created; i++)
		pthread_join(ids[i], NULL);
	pthread_cond_destroy(&gate.opened);
	pthread_mutex_destroy(&gate.lock);
	if (error)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "cannot start reading thread %u of %u: %s", created + 1, run->depth,
			 strerror(error));
	for (unsigned i = 0; i < run->depth; i++) {
		for (size_t j = 0; j < threads[i].latencies.count; j++)
			latencies_add(all, threads[i].latencies.values[j]);
		free(threads[i].latencies.values);
	}
	free(threads);
	free(ids);
}

/* ---- POSIX AIO: k aiocbs in flight from this thread ---- */

static void run_posix_aio(struct io_run *run, struct latencies *latencies)
{
	struct aiocb *blocks = calloc(run->depth, sizeof(*blocks));
	const struct aiocb **list = calloc(run->depth, sizeof(*list));
	uint64_t *submitted = calloc(run->depth, sizeof(*submitted));
	void **buffers = calloc(run->depth, sizeof(*buffers));
	unsigned in_flight = 0;
	struct rng rng;

	if (!blocks || !list || !submitted || !buffers)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for %u AIO control blocks", run->depth);
	rng_seed(&rng, run->seed, AIO_RNG_STREAM + 2);
	for (unsigned i = 0; i < run->depth; i++)
		buffers[i] = aligned_buffer(run->block_size);
	start_clock(run);
	for (unsigned i = 0; i < run->depth; i++) {
		memset(&blocks[i], 0, sizeof(blocks[i]));
		blocks[i].aio_fildes = run->target->fd;
		blocks[i].aio_buf = buffers[i];
		blocks[i].aio_nbytes = run->block_size;
		blocks[i].aio_offset = (off_t)next_offset(run, &rng);
		blocks[i].aio_sigevent.sigev_notify = SIGEV_NONE;
		submitted[i] = timer_now_ns();
		if (aio_read(&blocks[i]) != 0) {
			run_fail(run, "aio_read: %s", strerror(errno));
			break;
		}
		list[i] = &blocks[i];
		in_flight++;
	}
	while (in_flight > 0) {
		uint64_t now;

		if (aio_suspend(list, (int)run->depth, NULL) != 0 && errno != EINTR && errno != EAGAIN) {
			run_fail(run, "aio_suspend: %s", strerror(errno));
			/* still drain below: every started read must end before its
			 * buffer is freed */
		}
		now = timer_now_ns();
		for (unsigned i = 0; i < run->depth; i++) {
			int status;
			ssize_t got;

			if (!list[i] || (status = aio_error(&blocks[i])) == EINPROGRESS)
				continue;
			got = aio_return(&blocks[i]);
			list[i] = NULL;
			in_flight--;
			if (status != 0 || got != (ssize_t)run->block_size) {
				run_fail(run, "aio_read of %" PRIu64 " bytes at offset %lld returned %zd: %s", run->block_size,
					 (long long)blocks[i].aio_offset, got, status ? strerror(status) : "short read");
				continue;
			}
			if (!complete(run, latencies, now, now - submitted[i]) || atomic_load(&run->failed))
				continue;
			blocks[i].aio_offset = (off_t)next_offset(run, &rng);
			submitted[i] = timer_now_ns();
			if (aio_read(&blocks[i]) != 0) {
				run_fail(run, "aio_read: %s", strerror(errno));
				continue;
			}
			list[i] = &blocks[i];
			in_flight++;
		}
	}
	for (unsigned i = 0; i < run->depth; i++)
		free(buffers[i]);
	free(buffers);
	free(submitted);
	free(list);
	free(blocks);
}

/* ---- io_uring: k reads in flight from this thread ---- */

static void run_io_uring(struct io_run *run, struct latencies *latencies)
{
	struct iovec *vectors = calloc(run->depth, sizeof(*vectors));
	uint64_t *submitted = calloc(run->depth, sizeof(*submitted));
	unsigned in_flight = 0;
	struct uring ring;
	struct rng rng;

	if (!vectors || !submitted)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for %u io_uring slots", run->depth);
	if (uring_open(&ring, run->depth) != 0)
		cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "%s", uring_unavailable(errno));
	run->detail = uring_describe(&ring);
	rng_seed(&rng, run->seed, AIO_RNG_STREAM + 3);
	for (unsigned i = 0; i < run->depth; i++) {
		vectors[i].iov_base = aligned_buffer(run->block_size);
		vectors[i].iov_len = run->block_size;
	}
	start_clock(run);
	for (unsigned i = 0; i < run->depth; i++) {
		submitted[i] = timer_now_ns();
		uring_queue_read(&ring, run->target->fd, &vectors[i], next_offset(run, &rng), i);
		in_flight++;
	}
	/* The first reads go in together; after that each read is submitted
	 * the moment its slot frees (one io_uring_enter per read: fio's default,
	 * iodepth_batch_submit=1), before the next completion is looked at. */
	while (in_flight > 0 && !atomic_load(&run->failed)) {
		uint64_t slot;
		int32_t result;

		if (uring_submit_and_wait(&ring, 1) != 0) {
			/* The process exits on this failure as soon as this
			 * point returns, reads still in flight or not. */
			run_fail(run, "io_uring_enter: %s", strerror(errno));
			break;
		}
		while (uring_pop(&ring, &slot, &result)) {
			uint64_t now = timer_now_ns();

			in_flight--;
			if (result != (int32_t)run->block_size) {
				run_fail(run, "io_uring read of %" PRIu64 " bytes returned %d: %s", run->block_size, result,
					 result < 0 ? strerror(-result) : "short read");
				continue;
			}
			if (!complete(run, latencies, now, now - submitted[slot]) || atomic_load(&run->failed))
				continue;
			submitted[slot] = timer_now_ns();
			uring_queue_read(&ring, run->target->fd, &vectors[slot], next_offset(run, &rng), slot);
			in_flight++;
			if (uring_submit_and_wait(&ring, 0) != 0) {
				run_fail(run, "io_uring_enter: %s", strerror(errno));
				break;
			}
		}
	}
	uring_close(&ring);
	for (unsigned i = 0; i < run->depth; i++)
		free(vectors[i].iov_base);
	free(vectors);
	free(submitted);
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Log-linear buckets: HISTOGRAM_SUB_BUCKETS per power of two. */
static size_t histogram_bucket(uint64_t ns)
{
	int octave;
	uint64_t sub;

	if (ns < HISTOGRAM_SUB_BUCKETS)
		return (size_t)ns;
	octave = 63 - __builtin_clzll(ns);
	sub = (ns >> (octave - 3)) & (HISTOGRAM_SUB_BUCKETS - 1);
	return (size_t)(octave - 2) * HISTOGRAM_SUB_BUCKETS + (size_t)sub;
}

/* The largest value of a bucket (ns). */
static uint64_t histogram_upper(size_t bucket)
{
	size_t octave = bucket / HISTOGRAM_SUB_BUCKETS + 2, sub = bucket % HISTOGRAM_SUB_BUCKETS;

	if (bucket < HISTOGRAM_SUB_BUCKETS)
		return bucket;
	return ((uint64_t)(HISTOGRAM_SUB_BUCKETS + sub + 1) << (octave - 3)) - 1;
}

/* Writes the latency keys of the context; *p50_us and *p99_us for the
 * progress line. */
static void write_latency_context(struct json *json, struct latencies *latencies, double *p50_us, double *p99_us)
{
	uint64_t *counts = calloc(HISTOGRAM_BUCKETS, sizeof(*counts));
	uint64_t *values = latencies->values;
	size_t n = latencies->count;
	double sum = 0.0;

	if (!counts)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory for the latency histogram");
	qsort(values, n, sizeof(*values), compare_u64);
	for (size_t i = 0; i < n; i++) {
		sum += (double)values[i];
		counts[histogram_bucket(values[i])]++;
	}
	json_key(json, "latency_min_us");
	json_double(json, n ? (double)values[0] / 1e3 : NAN);
	json_key(json, "latency_mean_us");
	json_double(json, n ? sum / (double)n / 1e3 : NAN);
	for (size_t p = 0; p < PERCENTILE_COUNT; p++) {
		/* nearest rank: the smallest value with at least p% at or below it */
		size_t rank = (size_t)((percentiles[p] / 100.0) * (double)n + 0.999999);

		double value = n ? (double)values[(rank ? rank : 1) - 1] / 1e3 : NAN;

		json_key(json, percentile_keys[p]);
		json_double(json, value);
		if (percentiles[p] == 50)
			*p50_us = value;
		else if (percentiles[p] == 99)
			*p99_us = value;
	}
	json_key(json, "latency_max_us");
	json_double(json, n ? (double)values[n - 1] / 1e3 : NAN);
	json_key(json, "latency_histogram_upper_us");
	json_array_begin(json);
	for (size_t b = 0; b < HISTOGRAM_BUCKETS; b++)
		if (counts[b])
			json_double(json, (double)histogram_upper(b) / 1e3);
	json_array_end(json);
	json_key(json, "latency_histogram_counts");
	json_array_begin(json);
	for (size_t b = 0; b < HISTOGRAM_BUCKETS; b++)
		if (counts[b])
			json_uint(json, counts[b]);
	json_array_end(json);
	free(counts);
}

struct point_cache {
	int64_t before, after;
};

/* Drops this file's pages from the page cache and measures what stays. */
static struct point_cache drop_cache(const struct target *target, int sequential)
{
	struct point_cache cache;

	cache.before = resident_bytes(target);
	posix_fadvise(target->fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(target->fd, 0, 0, sequential ? POSIX_FADV_SEQUENTIAL : POSIX_FADV_RANDOM);
	cache.after = resident_bytes(target);
	return cache;
}

static void put_resident(struct json *json, const char *key, int64_t bytes)
{
	json_key(json, key);
	if (bytes < 0)
		json_null(json);
	else
		json_uint(json, (uint64_t)bytes);
}

static void measure_point(struct record *record, const struct aio_options *options, const struct target *target,
			  int engine, unsigned depth, struct sampler_sweep *sweep)
{
	const struct kopts *opts = &options->common;
	/* One window past the most the sampler can allow: a completion there
	 * is what asks it to stop. */
	size_t windows = WARMUP_WINDOWS + sampler_capacity(opts) + 1;
	struct sampler_run sampling;
	struct io_run run = {
		.target = target,
		.block_size = options->block_size,
		.sequential = options->sequential,
		.depth = depth,
		.window_ns = opts->min_sample_ms * 1e6,
		.windows = windows,
		.sampling = &sampling,
		.seed = opts->seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (sweep->position + 1)),
	};
	struct latencies latencies = {0};
	struct json *json = &record->json;
	struct rusage before, after;
	struct point_cache cache;
	uint64_t started = timer_now_ns(), ios = 0;
	unsigned widened = 0;
	double p50_us = NAN, p99_us = NAN;
	double *samples = calloc(sampler_capacity(opts), sizeof(*samples));
	char label[96];

	run.window_ios = calloc(windows, sizeof(*run.window_ios));
	if (!samples || !run.window_ios)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning a point");
	pthread_mutex_init(&run.lock, NULL);
	atomic_init(&run.failed, 0);
	atomic_init(&run.cursor, 0);
	run.detail = engine == ENGINE_BLOCKING ? "pread, one per thread"
		     : "aio_read + aio_suspend (glibc serves them on helper threads)";
	/* A stall (a busy shared disk, a descheduled helper thread) can leave
	 * every measured window empty. Rather than fail or report 0 MB/s, widen
	 * the window and measure the point again, up to MAX_WINDOW_MS; the
	 * record carries the window that was used. */
	for (;;) {
		sampler_begin(&sampling, opts, sweep->attempt, &samples, 1);
		atomic_init(&run.allowed, WARMUP_WINDOWS);
		run.stopped = 0;
		cache = drop_cache(target, options->sequential);
		getrusage(RUSAGE_SELF, &before);
		if (engine == ENGINE_BLOCKING)
			run_blocking(&run, &latencies);
		else if (engine == ENGINE_POSIX_AIO)
			run_posix_aio(&run, &latencies);
		else
			run_io_uring(&run, &latencies);
		getrusage(RUSAGE_SELF, &after);
		if (atomic_load(&run.failed))
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "%s at queue depth %u: %s", engine_names[engine], depth,
				 run.error);
		/* Runs that ended without a completion past the last allowed
		 * window (a stall to the end) still get the sampler's verdict. */
		decide(&run, windows - 1);
		ios = 0;
		for (size_t w = 0; w < sampling.count; w++)
			ios += atomic_load(&run.window_ios[WARMUP_WINDOWS + w]);
		if (ios > 0)
			break;
		if (run.window_ns * 2 > MAX_WINDOW_MS * 1e6)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL,
				 "%s at queue depth %u completed no read in %zu windows of %g ms: is the device stalled?",
				 engine_names[engine], depth, sampling.count, run.window_ns / 1e6);
		fprintf(stderr, "%s: %s queue depth %u completed no read in %zu windows of %g ms; measuring again with %g ms windows\n",
			KERNEL, engine_names[engine], depth, sampling.count, run.window_ns / 1e6, run.window_ns * 2 / 1e6);
		run.window_ns *= 2;
		widened++;
		for (size_t w = 0; w < windows; w++)
			atomic_store(&run.window_ios[w], 0);
		latencies.count = 0;
	}
	/* Again, with the completions that landed after the sampler's look. */
	for (size_t w = 0; w < sampling.count; w++)
		samples[w] = window_mb_s(&run, w);

	record_begin(record, "throughput", "MB/s");
	json_key(json, "engine");
	json_string(json, engine_names[engine]);
	json_key(json, "queue_depth");
	json_uint(json, depth);
	json_key(json, "engine_detail");
	json_string(json, run.detail);
	json_key(json, "threads");
	json_uint(json, engine == ENGINE_BLOCKING ? depth : 1);
	json_key(json, "block_size_bytes");
	json_uint(json, options->block_size);
	json_key(json, "pattern");
	json_string(json, options->sequential ? "sequential" : "random");
	json_key(json, "file_bytes");
	json_uint(json, target->bytes);
	json_key(json, "file_mode");
	json_string(json, target->mode);
	json_key(json, "filesystem");
	json_string(json, target->filesystem);
	json_key(json, "direct");
	json_bool(json, target->direct);
	json_key(json, "direct_note");
	json_string(json, target->direct_note);
	json_key(json, "cache_dropped");
	if (cache.after < 0)
		json_null(json);
	else
		json_bool(json, cache.after == 0);
	put_resident(json, "cache_resident_bytes_before_drop", cache.before);
	put_resident(json, "cache_resident_bytes_after_drop", cache.after);
	json_key(json, "window_ms");
	json_double(json, run.window_ns / 1e6);
	json_key(json, "window_widened");
	json_uint(json, widened);
	json_key(json, "seed");
	json_uint(json, opts->seed);
	record_samples(record, samples, sampling.count);
	record_precision(record, &sampling, samples);
	json_key(json, "ios");
	json_uint(json, ios);
	json_key(json, "iops");
	json_double(json, (double)ios / (run.window_ns * (double)sampling.count / 1e9));
	write_latency_context(json, &latencies, &p50_us, &p99_us);
	json_key(json, "voluntary_context_switches");
	json_int(json, after.ru_nvcsw - before.ru_nvcsw);
	json_key(json, "involuntary_context_switches");
	json_int(json, after.ru_nivcsw - before.ru_nivcsw);
	json_key(json, "layout_s");
	json_double(json, target->layout_s);
	json_key(json, "wall_s");
	json_double(json, (double)(timer_now_ns() - started) / 1e9);
	json_key(json, "order_index");
	json_uint(json, sweep->position);
	snprintf(label, sizeof(label), "%s qd %u", engine_names[engine], depth);
	record_end(record, label);
	fprintf(stderr, "%s: %zu/%zu %s queue depth %u: median %.4g MB/s, p50 %.4g us, p99 %.4g us (%" PRIu64 " reads), %zu windows, %s\n",
		KERNEL, sweep->position + 1, sweep->length, engine_names[engine], depth, record->summary.median, p50_us,
		p99_us, ios, sampling.count, sampler_stop_name(sampling.stop));
	sampler_sweep_done(sweep, &sampling, label);
	pthread_mutex_destroy(&run.lock);
	free(run.window_ios);
	free(latencies.values);
	free(samples);
}

static int aio_run(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"directory", required_argument, NULL, 'd'},
		{"file", required_argument, NULL, 'f'},
		{"size", required_argument, NULL, 's'},
		{"engines", required_argument, NULL, 'E'},
		{"queue-depths", required_argument, NULL, 'q'},
		{"block-size", required_argument, NULL, 'b'},
		{"pattern", required_argument, NULL, 'P'},
		{"direct", required_argument, NULL, 'D'},
		{"plan", no_argument, NULL, 'L'},
		{NULL, 0, NULL, 0},
	};
	static const uint64_t default_depths[] = {1, 2, 4, 8, 16, 32};
	struct aio_options options = {
		.size = DEFAULT_SIZE,
		.engines = {ENGINE_BLOCKING, ENGINE_POSIX_AIO, ENGINE_IO_URING},
		.engine_count = ENGINE_COUNT,
		.block_size = DEFAULT_BLOCK,
	};
	const struct kopts *opts = &options.common;
	struct target target;
	struct record record;
	struct sampler_sweep sweep;
	size_t points;

	kopts_init(&options.common, KERNEL, DEFAULT_EXPERIMENT, aio_help);
	kopts_parse(&options.common, argc, argv, "d:f:s:E:q:b:P:D:L", long_options, aio_option, &options);
	if (options.plan_only) {
		print_plan();
		return CLI_EXIT_OK;
	}
	if (!options.directory == !options.file)
		cli_fail(CLI_EXIT_USAGE, KERNEL,
			 "give exactly one of --directory DIR (a scratch file is written there) or --file FILE (an existing file is read)");
	if (options.block_size < 512 || options.block_size % 512 || options.block_size > ((uint64_t)64 << 20))
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--block-size %" PRIu64 " must be a multiple of 512 bytes, at most 64m",
			 options.block_size);
	if (options.directory && (options.size < 2 * options.block_size))
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--size %" PRIu64 " must hold at least two blocks of %" PRIu64 " bytes",
			 options.size, options.block_size);
	if (opts->cpu >= 0)
		kopts_pin(opts);
	if (!options.depths) {
		options.depth_count = sizeof(default_depths) / sizeof(default_depths[0]);
		options.depths = malloc(sizeof(default_depths));
		if (!options.depths)
			cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory");
		memcpy(options.depths, default_depths, sizeof(default_depths));
	}
	for (size_t i = 0; i < options.depth_count; i++)
		for (size_t j = 0; j < i; j++)
			if (options.depths[i] == options.depths[j])
				cli_fail(CLI_EXIT_USAGE, KERNEL, "--queue-depths names %" PRIu64 " twice", options.depths[i]);
	for (size_t i = 0; i < options.engine_count; i++) {
		const char *reason;

		if (!engine_available(options.engines[i], &reason))
			cli_fail(CLI_EXIT_UNSUPPORTED, KERNEL, "%s; leave %s out of --engines", reason,
				 engine_names[options.engines[i]]);
	}

	points = options.engine_count * options.depth_count;
	sampler_sweep_open(&sweep, opts, points);
	record_open(&record, opts);
	open_target(&target, &options);
	fprintf(stderr, "%s: %s, %" PRIu64 " bytes on %s (%s), %s; %zu points, seed %" PRIu64 "\n", KERNEL,
		target.mode, target.bytes, target.filesystem, target.direct ? "O_DIRECT" : "buffered",
		options.sequential ? "sequential" : "random", points, opts->seed);
	while (sampler_sweep_next(&sweep)) {
		int engine = options.engines[sweep.point / options.depth_count];
		unsigned depth = (unsigned)options.depths[sweep.point % options.depth_count];

		measure_point(&record, &options, &target, engine, depth, &sweep);
	}
	sampler_sweep_close(&sweep);
	close(target.fd);
	record_close(&record);
	free(options.depths);
	return CLI_EXIT_OK;
}

const struct kernel_spec aio_kernel = {
	.name = "aio",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "async vs blocking reads: pread threads, POSIX AIO, io_uring at queue depths 1..32",
	.run = aio_run,
	.print_help = aio_help,
};
