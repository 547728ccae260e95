/* The table of kernels: drives dispatch, --list and --help.
 *
 * To add a kernel: define a `const struct kernel_spec <name>_kernel` in its
 * own src/kernel_<name>.c and add <name> to KERNELS in src/registry.c, the
 * one list of kernels. */
#ifndef FLEETSCOPE_REGISTRY_H
#define FLEETSCOPE_REGISTRY_H

#include <stdio.h>

struct kernel_spec {
	const char *name;        /* the subcommand */
	const char *experiment;  /* default experiment label it feeds (--experiment) */
	/* comma list of the other experiments the kernels role runs it for
	 * (each with its own --experiment label), or NULL */
	const char *also_feeds;
	const char *description; /* one line for --list */
	/* argv[0] is the kernel name; returns the process exit status. */
	int (*run)(int argc, char **argv);
	void (*print_help)(FILE *out);
};

/* The kernel named `name`, or NULL. */
const struct kernel_spec *registry_find(const char *name);

/* One line per kernel, each after `indent`: name, the experiments it feeds
 * (comma-separated, the default first), description. */
void registry_print(FILE *out, const char *indent);

#endif
