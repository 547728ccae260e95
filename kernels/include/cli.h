/* Command-line conventions shared by all kernels: exit statuses, the
 * one-line usage error, and strict number parsing. */
#ifndef FLEETSCOPE_CLI_H
#define FLEETSCOPE_CLI_H

#include <stdint.h>
#include <stdio.h>

#define CLI_PROGRAM "fleetscope-kernels"

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_RUNTIME = 1,    /* the host refused something: memory, I/O */
	CLI_EXIT_USAGE = 2,      /* bad arguments; nothing was measured */
	CLI_EXIT_SELF_CHECK = 3, /* a kernel's own consistency check failed */
	CLI_EXIT_UNSUPPORTED = 4, /* the host lacks what the kernel measures (no SMT
				   * siblings, no io_uring): the reason on stderr,
				   * nothing on stdout */
	CLI_EXIT_WORKLOAD = 5,   /* the command a kernel runs (workload) failed */
};

/* The environment variable that asks for the exit note (below). */
#define CLI_EXIT_NOTE_ENV "FLEETSCOPE_KERNELS_EXIT_NOTE"

/* Exits with status. When CLI_EXIT_NOTE_ENV is set to 1, first prints
 * "fleetscope-kernels: exit <status>" as the last line on stderr: a process
 * that ends without that line did not end by itself (a signal, the OOM
 * killer), whatever its parent says. perf stat (6.1) reports a workload that
 * ends before perf waits for it as exit 0, with no signal line; the kernels
 * role runs every point under perf and trusts this note instead. Every exit
 * the program makes itself goes through here. */
_Noreturn void cli_exit(int status);

/* A line cli_exit writes on stderr just before the exit note (and only with
 * it) when the status is 0: the sampler's leftover time bank
 * ("fleetscope-kernels: bank left <seconds> s"), which the caller passes to the
 * experiment's next process (--bank-s). NULL: none. */
void cli_exit_note_before(void (*note)(FILE *stream));

/* Prints "fleetscope-kernels <kernel>: <message>" as one line on stderr and
 * exits with status (cli_exit); the message should say what was wrong and
 * what to do. */
_Noreturn void cli_fail(int status, const char *kernel, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/* Strict decimal parsing: the whole string, no sign, no overflow, within
 * [min, max]. Return 0 on success, -1 otherwise. */
int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *value);
int cli_parse_double(const char *text, double min, double max, double *value);

#endif
