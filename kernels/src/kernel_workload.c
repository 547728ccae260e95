/* workload: a user's command, timed. Runs COMMAND (an argv, no shell) once
 * per sample in its own process group, with a timeout, and records the wall
 * time of each run plus what the kernel accounts to it (wait4's rusage: user
 * and system CPU time, peak RSS, page faults, context switches, block I/O).
 * The fleetscope workloads role runs it inside `perf stat -x,` (counting the
 * command's processes too) to classify where the command stalls. A run that
 * fails (non-zero exit, a signal, the timeout, a command that cannot be
 * executed) writes no record: the reason goes to stderr after the command's
 * own stderr, and the exit status is 5. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "kopts.h"
#include "record.h"
#include "registry.h"
#include "timer.h"

#define KERNEL "workload"
#define DEFAULT_EXPERIMENT "workloads"
#define DEFAULT_TIMEOUT_S 600
#define MAX_NAME 64
#define POLL_NS 50000000L /* at most this long between checks, signal or not */

struct workload_options {
	struct kopts common;
	const char *name;
	uint64_t timeout_s;
	const char *chdir;
	char **command;
	int command_count;
};

struct run_usage {
	double wall_s, user_s, sys_s;
	uint64_t max_rss_bytes, minor_faults, major_faults, voluntary_switches, involuntary_switches;
	uint64_t block_inputs, block_outputs;
};

static void workload_help(FILE *out)
{
	struct kopts defaults;

	kopts_init(&defaults, KERNEL, DEFAULT_EXPERIMENT, workload_help);
	defaults.samples = 1;
	fprintf(out,
		"Usage: %s workload --name NAME [--samples N] [--timeout-s S] [--chdir DIR]\n"
		"                          [OPTIONS] -- COMMAND [ARGUMENT...]\n"
		"\n"
		"Runs COMMAND (executed directly from PATH, never through a shell) once per\n"
		"sample, each run in its own process group with stdout discarded and stderr\n"
		"passed through, and records the wall time of every run (CLOCK_MONOTONIC,\n"
		"fork to reap) with wait4's accounting of it.\n"
		"\n"
		"Options:\n"
		"  -N, --name NAME         the workload's name, 1-%d of A-Z a-z 0-9 _ . -\n"
		"                          starting with a letter or digit (required)\n"
		"  -T, --timeout-s S       kill a run (its whole process group) after S\n"
		"                          seconds, 1..86400 (default %d)\n"
		"  -C, --chdir DIR         run the command in DIR (default: here)\n"
		"  -n, --samples N         runs of the command (default 1)\n"
		"  -c, --cpu N             pin the command (and its children) to CPU N\n"
		"  --min-sample-ms, --max-bytes, --ordered and --seed do not apply (accepted,\n"
		"  ignored)\n"
		"\n",
		CLI_PROGRAM, MAX_NAME, DEFAULT_TIMEOUT_S);
	kopts_help(out, &defaults);
	fprintf(out,
		"\n"
		"On success, one JSON object: metric \"wall_time\", unit \"s\",\n"
		"  params {workload, argv, runs, timeout_s, chdir, cpu},\n"
		"  samples [wall seconds of each run], summary {...},\n"
		"  context {user_s, sys_s, max_rss_bytes, minor_faults, major_faults,\n"
		"           voluntary_context_switches, involuntary_context_switches,\n"
		"           block_input_ops, block_output_ops (each a list, one per run),\n"
		"           wall_s (all runs), order_index}.\n"
		"A run that exits non-zero, is killed by a signal, times out or cannot be\n"
		"executed ends the kernel with exit status 5 and one line saying which\n"
		"(after the command's own stderr); no record is written.\n"
		"\n"
		"Examples:\n"
		"  %s workload --name gzip --samples 3 -- gzip -9 -c /usr/share/dict/words\n"
		"  %s workload --name build --timeout-s 900 --chdir /src/app -- make -j4\n",
		CLI_PROGRAM, CLI_PROGRAM);
}

static int valid_name(const char *name)
{
	size_t length = strlen(name);

	if (length == 0 || length > MAX_NAME)
		return 0;
	for (size_t i = 0; i < length; i++) {
		char c = name[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return 0;
	}
	return 1;
}

static void workload_option(void *context, int option, const char *arg)
{
	struct workload_options *options = context;

	switch (option) {
	case 'N':
		if (!valid_name(arg))
			cli_fail(CLI_EXIT_USAGE, KERNEL,
				 "--name '%s' must be 1-%d of A-Z a-z 0-9 _ . - starting with a letter or digit", arg,
				 MAX_NAME);
		options->name = arg;
		break;
	case 'T':
		options->timeout_s = kopts_u64(&options->common, "--timeout-s", arg, 1, 86400);
		break;
	case 'C':
		if (!*arg)
			cli_fail(CLI_EXIT_USAGE, KERNEL, "--chdir is empty; give a directory");
		options->chdir = arg;
		break;
	}
}

/* Everything before "--" is ours; everything after is the command. */
static void parse_options(int argc, char **argv, struct workload_options *options)
{
	static const struct option long_options[] = {
		{"name", required_argument, NULL, 'N'},
		{"timeout-s", required_argument, NULL, 'T'},
		{"chdir", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	int split = argc;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			split = i;
			break;
		}
	memset(options, 0, sizeof(*options));
	options->timeout_s = DEFAULT_TIMEOUT_S;
	kopts_init(&options->common, KERNEL, DEFAULT_EXPERIMENT, workload_help);
	options->common.samples = 1;
	kopts_parse(&options->common, split, argv, "N:T:C:", long_options, workload_option, options);
	if (!options->name)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--name is required: name the workload, e.g. --name gzip");
	if (options->common.target_rel > 0.0)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "--target-ci does not apply to workload: it runs the command --samples times");
	if (split >= argc - 1)
		cli_fail(CLI_EXIT_USAGE, KERNEL, "no command: give it after '--', e.g. %s workload --name gzip -- gzip -9 FILE",
			 CLI_PROGRAM);
	if (argv[split + 1][0] == '\0')
		cli_fail(CLI_EXIT_USAGE, KERNEL, "the command after '--' is an empty string");
	options->command = argv + split + 1;
	options->command_count = argc - split - 1;
}

static double seconds(struct timeval time)
{
	return (double)time.tv_sec + (double)time.tv_usec / 1e6;
}

/* Runs the command once. Returns 0, or -1 with why it failed in reason. */
static int run_once(const struct workload_options *options, struct run_usage *usage, char *reason,
		    size_t reason_size)
{
	uint64_t started, deadline;
	sigset_t child_signal, previous;
	struct rusage rusage;
	int status = 0, timed_out = 0;
	pid_t pid, reaped;

	sigemptyset(&child_signal);
	sigaddset(&child_signal, SIGCHLD);
	sigprocmask(SIG_BLOCK, &child_signal, &previous);
	started = timer_now_ns();
	deadline = started + options->timeout_s * UINT64_C(1000000000);
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &previous, NULL);
		snprintf(reason, reason_size, "cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		sigprocmask(SIG_SETMASK, &previous, NULL);
		setpgid(0, 0);
		if (null < 0 || dup2(null, STDOUT_FILENO) < 0) {
			fprintf(stderr, "%s %s: cannot send the command's stdout to /dev/null: %s\n", CLI_PROGRAM, KERNEL,
				strerror(errno));
			_exit(126);
		}
		if (options->chdir && chdir(options->chdir) != 0) {
			fprintf(stderr, "%s %s: cannot change to --chdir '%s': %s\n", CLI_PROGRAM, KERNEL, options->chdir,
				strerror(errno));
			_exit(126);
		}
		execvp(options->command[0], options->command);
		fprintf(stderr, "%s %s: cannot execute '%s': %s\n", CLI_PROGRAM, KERNEL, options->command[0],
			strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* both sides, so the group exists before any kill */
	for (;;) {
		uint64_t now;
		struct timespec wait;

		reaped = wait4(pid, &status, WNOHANG, &rusage);
		if (reaped == pid)
			break;
		if (reaped < 0 && errno != EINTR) {
			snprintf(reason, reason_size, "cannot wait for the command: %s", strerror(errno));
			kill(-pid, SIGKILL);
			sigprocmask(SIG_SETMASK, &previous, NULL);
			return -1;
		}
		now = timer_now_ns();
		if (now >= deadline) {
			kill(-pid, SIGKILL);
			while (wait4(pid, &status, 0, &rusage) < 0 && errno == EINTR)
				;
			timed_out = 1;
			break;
		}
		wait.tv_sec = 0;
		wait.tv_nsec = deadline - now < (uint64_t)POLL_NS ? (long)(deadline - now) : POLL_NS;
		sigtimedwait(&child_signal, NULL, &wait);
	}
	usage->wall_s = (double)(timer_now_ns() - started) / 1e9;
	sigprocmask(SIG_SETMASK, &previous, NULL);
	if (timed_out) {
		snprintf(reason, reason_size, "did not finish within --timeout-s %" PRIu64 " s and was killed (its process group)",
			 options->timeout_s);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(reason, reason_size, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	if (WEXITSTATUS(status) != 0) {
		snprintf(reason, reason_size, "exited with status %d%s", WEXITSTATUS(status),
			 WEXITSTATUS(status) == 127 ? " (127: the command was not found or could not be executed)" : "");
		return -1;
	}
	usage->user_s = seconds(rusage.ru_utime);
	usage->sys_s = seconds(rusage.ru_stime);
	usage->max_rss_bytes = (uint64_t)rusage.ru_maxrss * 1024;
	usage->minor_faults = (uint64_t)rusage.ru_minflt;
	usage->major_faults = (uint64_t)rusage.ru_majflt;
	usage->voluntary_switches = (uint64_t)rusage.ru_nvcsw;
	usage->involuntary_switches = (uint64_t)rusage.ru_nivcsw;
	usage->block_inputs = (uint64_t)rusage.ru_inblock;
	usage->block_outputs = (uint64_t)rusage.ru_oublock;
	return 0;
}

static void put_list(struct json *json, const char *key, const struct run_usage *runs, size_t count,
		     size_t offset, int is_double)
{
	json_key(json, key);
	json_array_begin(json);
	for (size_t i = 0; i < count; i++) {
		const char *field = (const char *)&runs[i] + offset;

		if (is_double)
			json_double(json, *(const double *)field);
		else
			json_uint(json, *(const uint64_t *)field);
	}
	json_array_end(json);
}

static int workload_run(int argc, char **argv)
{
	struct workload_options options;
	const struct kopts *opts = &options.common;
	struct run_usage *runs;
	struct record record;
	struct json *json = &record.json;
	double *samples, total = 0.0;
	char reason[256];

	parse_options(argc, argv, &options);
	runs = calloc(opts->samples, sizeof(*runs));
	samples = calloc(opts->samples, sizeof(*samples));
	if (!runs || !samples)
		cli_fail(CLI_EXIT_RUNTIME, KERNEL, "out of memory planning %" PRIu64 " runs", opts->samples);
	/* Children must be reapable here whatever the parent set (SIG_IGN
	 * would reap them away from wait4). */
	signal(SIGCHLD, SIG_DFL);
	kopts_pin(opts);
	record_open(&record, opts);
	for (uint64_t i = 0; i < opts->samples; i++) {
		if (run_once(&options, &runs[i], reason, sizeof(reason)) != 0)
			cli_fail(CLI_EXIT_WORKLOAD, KERNEL, "workload '%s' failed: '%s' %s (run %" PRIu64 " of %" PRIu64 ")",
				 options.name, options.command[0], reason, i + 1, opts->samples);
		samples[i] = runs[i].wall_s;
		total += runs[i].wall_s;
		fprintf(stderr, "%s: %s run %" PRIu64 "/%" PRIu64 ": %.4g s wall, %.4g s user, %.4g s system\n", KERNEL,
			options.name, i + 1, opts->samples, runs[i].wall_s, runs[i].user_s, runs[i].sys_s);
	}

	record_begin(&record, "wall_time", "s");
	json_key(json, "workload");
	json_string(json, options.name);
	json_key(json, "argv");
	json_array_begin(json);
	for (int i = 0; i < options.command_count; i++)
		json_string(json, options.command[i]);
	json_array_end(json);
	json_key(json, "runs");
	json_uint(json, opts->samples);
	json_key(json, "timeout_s");
	json_uint(json, options.timeout_s);
	json_key(json, "chdir");
	if (options.chdir)
		json_string(json, options.chdir);
	else
		json_null(json);
	json_key(json, "cpu");
	if (opts->cpu < 0)
		json_null(json);
	else
		json_int(json, opts->cpu);
	record_samples(&record, samples, opts->samples);
	put_list(json, "user_s", runs, opts->samples, offsetof(struct run_usage, user_s), 1);
	put_list(json, "sys_s", runs, opts->samples, offsetof(struct run_usage, sys_s), 1);
	put_list(json, "max_rss_bytes", runs, opts->samples, offsetof(struct run_usage, max_rss_bytes), 0);
	put_list(json, "minor_faults", runs, opts->samples, offsetof(struct run_usage, minor_faults), 0);
	put_list(json, "major_faults", runs, opts->samples, offsetof(struct run_usage, major_faults), 0);
	put_list(json, "voluntary_context_switches", runs, opts->samples,
		 offsetof(struct run_usage, voluntary_switches), 0);
	put_list(json, "involuntary_context_switches", runs, opts->samples,
		 offsetof(struct run_usage, involuntary_switches), 0);
	put_list(json, "block_input_ops", runs, opts->samples, offsetof(struct run_usage, block_inputs), 0);
	put_list(json, "block_output_ops", runs, opts->samples, offsetof(struct run_usage, block_outputs), 0);
	json_key(json, "wall_s");
	json_double(json, total);
	json_key(json, "order_index");
	json_uint(json, 0);
	record_end(&record, options.name);
	record_close(&record);
	free(runs);
	free(samples);
	return CLI_EXIT_OK;
}

const struct kernel_spec workload_kernel = {
	.name = "workload",
	.experiment = DEFAULT_EXPERIMENT,
	.description = "a user's command, timed per run with its rusage (the workloads role adds perf stat)",
	.run = workload_run,
	.print_help = workload_help,
};
