/* The options every kernel shares (samples, precision, timing, pinning, seed,
 * order, output, memory cap) and the one getopt loop that parses them beside a
 * kernel's own options, so every kernel fails on bad arguments the same way:
 * exit 2, one line on stderr, nothing on stdout, nothing measured. */
#ifndef FLEETSCOPE_KOPTS_H
#define FLEETSCOPE_KOPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define KOPTS_DEFAULT_TRIES 3
#define KOPTS_MAX_TRIES 8

struct kopts {
	const char *kernel;       /* name used in messages */
	void (*help)(FILE *out);  /* the kernel's --help text */
	uint64_t samples;         /* samples per point (the minimum with target_rel), every one kept */
	double target_rel;        /* --target-ci: sample until the median's CI95 half-width is at
				     most this share of the median; 0: exactly `samples` */
	double max_point_s;       /* --max-point-seconds: a point's sampling time cap (target_rel) */
	unsigned attempt;         /* --attempt: 1, or 2 for a re-queued point (never re-queued again) */
	int test_drift;           /* --test-drift (tests only): every point counts as drifting */
	uint64_t max_requeues;    /* --max-requeues: most points of this process measured again after
				     drifting to their cap (the plan prices that many); UINT64_MAX: any */
	unsigned tries;           /* --tries: most measurements of a latency point whose samples are
				     unsettled (sampler_unsettled), each recorded; 1: never again */
	int test_unsettled;       /* --test-unsettled (tests only): every try counts as unsettled */
	int have_max_point_s;
	int have_bank_s;
	double bank_s;            /* --bank-s: sampling time earlier processes of the experiment were priced
				     for and left unused, seeding this process's bank (sampler.c) */
	double min_sample_ms;     /* calibrated minimum time of one sample */
	int cpu;                  /* -1: not pinned */
	int mem_node;             /* --mem-node: memory bound to this NUMA node; -1: not bound */
	uint64_t seed;
	int have_seed;
	int ordered;              /* measure points in the order given */
	const char *experiment;
	const char *output_path;  /* NULL: stdout */
	int human;
	uint64_t max_bytes;       /* largest buffer a point may map */
	int have_max_bytes;
};

/* A kernel's own option: called with getopt's option value and optarg. */
typedef void (*kopts_handler)(void *context, int option, const char *arg);

void kopts_init(struct kopts *opts, const char *kernel, const char *experiment,
		void (*help)(FILE *out));

/* Parses argv: the kernel's options (short letters in specific_short, long
 * ones in specific_long, terminated by a zeroed entry; may be NULL) go to
 * handle, the shared ones are stored in opts. Unknown options, missing
 * values and stray arguments exit 2. Then fills the defaults that depend on
 * the host: seed from the clock, max_bytes = 80% of MemAvailable. */
void kopts_parse(struct kopts *opts, int argc, char **argv, const char *specific_short,
		 const struct option *specific_long, kopts_handler handle, void *context);

/* Parses a size option (4k, 1m ...) or exits 2 naming the option. */
uint64_t kopts_size(const struct kopts *opts, const char *option, const char *text);

/* Parses a whole number in [min, max] or exits 2 naming the option. */
uint64_t kopts_u64(const struct kopts *opts, const char *option, const char *text, uint64_t min,
		   uint64_t max);

/* Parses a comma list of whole numbers in [min, max] (or of sizes when
 * sizes is set) into a malloc'd array; exits 2 naming the option and the bad
 * item. An empty list is refused. */
size_t kopts_u64_list(const struct kopts *opts, const char *option, const char *text, uint64_t min,
		      uint64_t max, int sizes, uint64_t **values);

/* Exits 2 if bytes is above --max-bytes; what names the buffer. */
void kopts_check_bytes(const struct kopts *opts, uint64_t bytes, const char *what);

/* Pins to --cpu when given; exits 1 if the host refuses. */
void kopts_pin(const struct kopts *opts);

/* A seeded random permutation of 0..count-1, or 0..count-1 with --ordered:
 * the measuring order of a kernel's points, so drift over the run does not
 * masquerade as a trend over a parameter. Exits 1 if memory runs out. */
size_t *kopts_order(const struct kopts *opts, size_t count);

/* The help text of the shared options. */
void kopts_help(FILE *out, const struct kopts *defaults);

#endif
