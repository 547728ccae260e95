/* The bandwidth engine: the one memory-traffic loop code behind the
 * bandwidth kernel (every op, pattern, stride, mix, thread count) and the
 * load threads of loaded_latency.
 *
 * Ops: read (sum every 64-bit lane loaded), write (store a constant), copy
 * (a = b), triad (a = b + s*c on doubles) and mix (per group of R + W blocks
 * in visiting order: R lines read, then W lines written, so the ratio is
 * exact by construction). Stores are regular or non-temporal (streaming
 * stores, then a store fence). The loops exist per instruction set
 * (include/bw_loops.h): SSE2, AVX2 and AVX-512F on x86, NEON and SVE on
 * AArch64, each compiled for its target alone and chosen at run time from
 * what the CPU reports (the Makefile keeps -O2 without -march), and plain C
 * everywhere (`scalar`, without streaming stores). `auto` probes the CPU
 * once: see bw_isa_auto.
 *
 * Accounting is in 64-byte lines actually moved by the program: a block of a
 * strided walk moves one whole line (every vector of the line is read or
 * written), never stride bytes; copy moves one source and one destination
 * line per block, triad two sources and one destination. The reads that
 * regular stores cause (write-allocate) are not counted, as STREAM does
 * not; bw_buffer.write_allocate_lines_per_pass reports them.
 *
 * A checksum of everything read comes back from every run: the read loops
 * add 64-bit lanes, so on a buffer whose lines hold 1 in their first qword
 * and 0 elsewhere (bw_fill_pattern) the checksum is the count of lines read.
 *
 * Load generation (loaded_latency): prepare a buffer on the load thread
 * (first touch puts its pages near that thread), then call bw_run over
 * chunks of blocks, e.g. 4096 at a time, checking a stop flag between
 * chunks and adding bw_lines(request, buffer, chunk) to a counter; the
 * request's delay spins that many iterations after every group. */
#ifndef FLEETSCOPE_BW_H
#define FLEETSCOPE_BW_H

#include <stddef.h>
#include <stdint.h>

#include "buffers.h"
#include "sampler.h"

enum bw_op { BW_OP_READ, BW_OP_WRITE, BW_OP_COPY, BW_OP_TRIAD, BW_OP_MIX };
enum bw_store { BW_STORE_NONE, BW_STORE_REGULAR, BW_STORE_NT };
enum bw_isa { BW_ISA_AUTO, BW_ISA_SCALAR, BW_ISA_SSE2, BW_ISA_AVX2, BW_ISA_AVX512, BW_ISA_NEON, BW_ISA_SVE };
#define BW_ISA_COUNT 7
enum bw_pattern { BW_PATTERN_SEQUENTIAL, BW_PATTERN_RANDOM };

#define BW_LINE 64

struct bw_request {
	enum bw_op op;
	enum bw_store store;      /* BW_STORE_NONE exactly when nothing is written */
	enum bw_isa isa;          /* resolved (bw_isa_resolve) before bw_prepare */
	enum bw_pattern pattern;  /* random: read, write and mix only */
	uint64_t stride_bytes;    /* a multiple of 64; 64 = every line */
	unsigned read_lines, write_lines; /* mix group; set for every op by bw_request_ratio */
	int software_prefetch;    /* prefetch prefetch_blocks ahead in visiting order (x86 prefetcht0, Arm prfm pldl1keep) */
	uint64_t prefetch_blocks;
	uint64_t working_set_bytes; /* per thread, every array together */
	enum page_policy page_policy;
	uint64_t delay;           /* spin iterations after every group; 0 = none */
	uint64_t seed;            /* the random order's key */
};

struct bw_buffer {
	struct buffer buffer;
	char *a, *b, *c;          /* copy: a = b; triad: a = b + s*c; others: a */
	uint64_t blocks;          /* blocks per pass (one line of each array per block) */
	uint64_t working_set_bytes; /* what the arrays span (random: cut to a power of two of blocks) */
	uint64_t lines_read_per_pass, lines_written_per_pass;
	uint64_t lines_per_pass;  /* read + written: the bytes counted are 64 x this */
	uint64_t write_allocate_lines_per_pass; /* regular stores: lines read for ownership */
	uint64_t huge_bytes_granted;
	unsigned random_bits;     /* random order: blocks = 2^random_bits */
};

const char *bw_op_name(enum bw_op op);
int bw_op_parse(const char *name, enum bw_op *op);
const char *bw_store_name(enum bw_store store);
int bw_store_parse(const char *name, enum bw_store *store);   /* regular | nt */
const char *bw_isa_name(enum bw_isa isa);
/* auto | scalar | sse2 | avx2 | avx512 | neon | sve, on every architecture
 * (bw_isa_supported says what this one runs) */
int bw_isa_parse(const char *name, enum bw_isa *isa);
const char *bw_pattern_name(enum bw_pattern pattern);
int bw_pattern_parse(const char *name, enum bw_pattern *pattern);

/* 1 if this build has the loops and this CPU runs them (AUTO: always). */
int bw_isa_supported(enum bw_isa isa);
/* "scalar,sse2,avx2" ...: what this CPU runs, for messages. */
const char *bw_isa_available(void);
/* Every name --isa takes, for messages. */
const char *bw_isa_known(void);
/* The vector width of isa's loops (SVE: the CPU's); 0 for one not built. */
unsigned bw_isa_vector_bytes(enum bw_isa isa);
/* NULL when isa's loops have non-temporal stores, else why they have none. */
const char *bw_isa_no_nt_stores(enum bw_isa isa);

/* What `auto` means on this CPU, decided once per process: among the vector
 * loops it runs (plain C where there are none), from the widest down, the
 * first whose L1-resident read is at least gain_required x the next
 * narrower one's (the median ratio of interleaved rounds); a width the core
 * splits (no faster at L1) is passed over for the narrower. Every
 * comparison made is kept for the record. */
struct bw_isa_comparison {
	enum bw_isa wide, narrow;
	double wide_gb_s, narrow_gb_s; /* the best round of each */
	double ratio;                  /* median over the rounds of wide / narrow */
};
struct bw_isa_choice {
	enum bw_isa isa;
	double gain_required;
	size_t compared;
	struct bw_isa_comparison comparisons[BW_ISA_COUNT];
};
const struct bw_isa_choice *bw_isa_auto(void);
/* AUTO becomes bw_isa_auto's choice; others are returned as they are. */
enum bw_isa bw_isa_resolve(enum bw_isa isa);
struct json;
/* Writes context key "isa_auto": the choice and its probe when requested is
 * AUTO, else null. */
void bw_isa_context(struct json *json, enum bw_isa requested);

/* Fills read_lines / write_lines from the op (read 1:0, write 0:1, copy 1:1,
 * triad 2:1; mix keeps the caller's) and store (NONE when nothing is written). */
void bw_request_ratio(struct bw_request *request);

/* NULL if the request can run, else what is wrong with it (for exit 2). */
const char *bw_request_check(const struct bw_request *request);

/* Maps the arrays (page policy), touches them from the calling thread, fills
 * them (bw_fill_pattern) and measures the huge-page grant. Returns 0, or -1
 * with errno set. */
int bw_prepare(const struct bw_request *request, struct bw_buffer *buffer);
void bw_release(struct bw_buffer *buffer);

/* Every line of every array: 1 in its first qword, 0 elsewhere (for copy and
 * triad the destination too). bw_prepare calls it; --verify calls it again. */
void bw_fill_pattern(const struct bw_request *request, struct bw_buffer *buffer);

/* Runs blocks [first, first + count) of a pass; returns the checksum of
 * what was read. */
uint64_t bw_run(const struct bw_request *request, struct bw_buffer *buffer, uint64_t first,
		uint64_t count);

/* One whole pass. */
uint64_t bw_pass(const struct bw_request *request, struct bw_buffer *buffer);

/* Lines moved by count blocks of a pass starting at first (mix groups are
 * counted exactly). */
uint64_t bw_lines(const struct bw_request *request, const struct bw_buffer *buffer, uint64_t first,
		  uint64_t count);

/* The lines of the destination (a) that differ from bw_fill_pattern's
 * content: after one pass on a freshly patterned buffer, the lines written. */
uint64_t bw_count_changed_lines(const struct bw_request *request, const struct bw_buffer *buffer);

/* Threads side by side: each pinned to cpus[i] (NULL: not pinned) with a
 * buffer of its own, prepared and first-touched by itself (mem_node >= 0:
 * the process's memory is bound there, and each thread then asks where a
 * sample of its pages lies, numa.h); one warm-up pass,
 * then passes calibrated so that a sample lasts at least min_sample_ns, run
 * between two barriers (every thread starts together; the sample ends when
 * the last one finishes), as many as run asks for (begun by the caller, its
 * series the samples). samples[i] = GB/s of all threads together. */
struct bw_team_result {
	uint64_t passes_per_sample;
	uint64_t huge_bytes_granted;   /* all threads */
	uint64_t lines_per_pass;       /* per thread */
	uint64_t lines_read_per_pass, lines_written_per_pass;
	uint64_t write_allocate_lines_per_pass;
	uint64_t working_set_bytes;    /* per thread */
	uint64_t blocks;
	uint64_t mem_pages_sampled;    /* all threads; 0 without mem_node */
	uint64_t mem_pages_on_node;    /* of those, the pages on mem_node */
};

int bw_team_measure(const struct bw_request *request, size_t threads, const int *cpus, int mem_node,
		    double min_sample_ns, struct sampler_run *run, struct bw_team_result *result,
		    char *error, size_t error_size);

#endif
