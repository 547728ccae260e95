/* The compute engine of core_clock and peak_flops: the CPU's instruction
 * classes, a loop of each that keeps its units busy, and a team of pinned
 * threads that runs them side by side through common windows.
 *
 * A class is what the clock may depend on: scalar integer work, or a
 * floating-point multiply-add of one vector width (x86: scalar, 128-, 256-
 * and 512-bit FMA, and SSE2's separate multiply and add where a CPU has no
 * FMA; AArch64: scalar FMA, NEON, SVE at the CPU's vector length; anything
 * else: scalar). Each class has three loops, each in one file per
 * architecture (src/peak_x86.c, src/peak_arm.c, src/peak_scalar.c; a file
 * whose architecture the compiler does not target defines nothing), every
 * function compiled for its own instruction set alone
 * (__attribute__((target))) and run only where the CPU has it
 * (__builtin_cpu_supports on x86, getauxval(AT_HWCAP) on AArch64):
 *
 *   throughput  PEAK_CHAINS independent multiply-add chains: enough to hide
 *               the latency of every current core's FMA pipes (latency x
 *               pipes is 8 on Zen 4 and Golden Cove, 16 on Neoverse V1;
 *               the kernel measures both and records whether the chains
 *               covered them), so the pipes, not one chain, set the pace.
 *   latency     one dependent chain: cycles per multiply-add, at the clock.
 *   ruler       64 dependent integer adds (one cycle each on every current
 *               x86-64 and Arm core: the clock's ruler, as src/coreclock.c)
 *               with 32 of the class's multiply-adds beside them on
 *               independent chains, half the rate the narrowest FMA pipe
 *               sustains: the vector units stay busy (an AVX-512 licence
 *               or a wide-vector clock offset applies), and the adds, not
 *               the multiply-adds, set the pace. cycles = adds.
 *
 * Values stay finite and normal: every chain is a <- a * m + c with m < 1,
 * converging on c / (1 - m), so no denormal or infinity slows a pipe. The
 * constants come through volatile loads and every result feeds the return
 * value, so the compiler can neither fold nor drop a multiply-add. */
#ifndef FLEETSCOPE_PEAK_H
#define FLEETSCOPE_PEAK_H

#include <stddef.h>
#include <stdint.h>

#include "kopts.h"
#include "sampler.h"

#define PEAK_CHAINS 12          /* throughput loop's independent chains */
#define PEAK_RULER_ADDS 64      /* dependent adds per ruler round */
#define PEAK_RULER_FMAS 32      /* the class's multiply-adds beside them */
#define PEAK_LATENCY_STEPS 8    /* dependent multiply-adds per latency round */
#define PEAK_MAX_CLASSES 8

enum peak_precision { PEAK_FP64, PEAK_FP32, PEAK_PRECISION_COUNT };

const char *peak_precision_name(enum peak_precision precision);

struct peak_class {
	const char *name;         /* scalar_int, scalar_fma, sse2, fma128, fma256, fma512, neon, sve */
	const char *operation;    /* what one multiply-add is, in words */
	int fused;                /* 1: fused multiply-add; 0: a separate multiply and add (SSE2) */
	int scalar;               /* one lane whatever the precision (scalar_int, scalar_fma) */
	int (*supported)(void);   /* this CPU runs it */
	unsigned (*vector_bits)(void); /* register width used: 64 for scalar classes; SVE asks the CPU */
	/* NULL for scalar_int (a clock class only): rounds x PEAK_CHAINS
	 * multiply-adds of every lane. Returns a value that depends on them all. */
	double (*throughput)(enum peak_precision precision, uint64_t rounds);
	/* rounds x PEAK_LATENCY_STEPS dependent multiply-adds. */
	double (*latency)(enum peak_precision precision, uint64_t rounds);
	/* rounds x PEAK_RULER_ADDS dependent adds with the class's work beside
	 * them (scalar_int: none). */
	uint64_t (*ruler)(uint64_t rounds);
};

/* The clock class every build has: the ruler alone. */
extern const struct peak_class peak_class_scalar_int;

/* The classes this build has (supported or not), in order: scalar_int first,
 * then by width. */
size_t peak_classes(const struct peak_class *const **classes);

/* The class named name in this build, or NULL. */
const struct peak_class *peak_class_find(const char *name);

/* What a list of classes is for: the clock (scalar_int and one class per
 * vector width) or FLOP/s (every floating-point class). */
enum peak_use { PEAK_USE_CLOCK, PEAK_USE_FLOPS };

/* A comma list of class names, or "auto": the classes of this build the CPU
 * runs, less sse2 where fma128 runs (the same width, fused); for the clock,
 * scalar_int first and the scalar floating-point class only where no vector
 * class runs; for FLOP/s every floating-point class. Exits 2 on a name this
 * build lacks, a name given twice or scalar_int for FLOP/s, and 4 (naming
 * the class) on one this CPU does not run. Returns the count. */
size_t peak_classes_parse(const char *kernel, const char *option, const char *text, enum peak_use use,
			  const struct peak_class *out[PEAK_MAX_CLASSES]);

/* Lanes of one vector of the class at precision. */
unsigned peak_lanes(const struct peak_class *peak_class, enum peak_precision precision);

/* FLOP of one throughput round: PEAK_CHAINS x lanes x 2 (a multiply-add is
 * two floating-point operations, fused or not). */
double peak_flops_per_round(const struct peak_class *peak_class, enum peak_precision precision);

/* ---- a team of pinned threads through common windows ---------------------- */

enum peak_body {
	PEAK_BODY_THROUGHPUT, /* samples in GFLOP/s */
	PEAK_BODY_RULER,      /* samples in GHz */
};

struct peak_team_request {
	const struct peak_class *peak_class;
	enum peak_precision precision;
	const int *cpus;          /* thread i on cpus[i] */
	size_t threads;
	double window_ns;
	size_t warmup_windows;    /* run first, not kept */
	/* The bodies, in this order within each window pair; a window of each
	 * is one sample of each. body_count 1 or 2. */
	enum peak_body bodies[2];
	size_t body_count;
	struct sampler_run *run;  /* begun by the caller over (some of) the series below */
	/* The caller's arrays of sampler_capacity entries, one per thread and
	 * body (index thread x body_count + body): each window's rate per ns of
	 * the thread's own CPU time (GFLOP/s or GHz while it ran), and the share
	 * of the window's wall time it ran (1: it had its CPU alone). */
	double **samples;
	double **shares;
};

/* Runs the team: every thread pinned, all start each window together and
 * run their body until the window's time is up (so every thread is busy
 * through all of every window), one sample (and share) per thread, window
 * and body.
 * Thread 0 asks the sampler for another window pair after each. Returns 0,
 * or -1 with what failed in error (no thread is left running). */
int peak_team_run(const struct peak_team_request *request, char *error, size_t error_size);

/* The CPUs a team takes by default: one per physical core this process may
 * run on (the first allowed CPU of each core, sysfs topology), ascending.
 * Returns the count and a malloc'd array (caller frees). */
size_t peak_default_cpus(const char *kernel, int **cpus);

/* The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): the time
 * it ran, which another process or the hypervisor cannot add to. */
uint64_t peak_thread_cpu_ns(void);

/* The median of values[0, count) (reorders them). */
double peak_median(double *values, size_t count);

/* ---- the clock after idle ------------------------------------------------ */

/* On the calling (pinned) thread: sleeps idle_ns, then runs the scalar ruler
 * for ramp_ns in slices of slice_ns, writing each slice's clock in GHz (adds
 * per ns of the thread's CPU time) to ghz[], the share of the slice it ran to
 * shares[] and its end in us after the ruler started to ends_us[] (capacity
 * slices each). Returns the slices taken. */
size_t peak_ramp(double idle_ns, double ramp_ns, double slice_ns, double *ghz, double *shares, double *ends_us,
		 size_t capacity);

#endif
