/* The table of kernels: drives dispatch, --list and --help.
 *
 * To add a kernel: define a `const struct kernel_spec` in its own
 * src/kernel_<name>.c, declare it below, and add it to kernel_registry in
 * src/registry.c. */
#ifndef FLEETSCOPE_REGISTRY_H
#define FLEETSCOPE_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

struct kernel_spec {
	const char *name;        /* the subcommand */
	const char *experiment;  /* default experiment label it feeds */
	const char *description; /* one line for --list */
	/* argv[0] is the kernel name; returns the process exit status. */
	int (*run)(int argc, char **argv);
	void (*print_help)(FILE *out);
};

extern const struct kernel_spec chase_kernel;
extern const struct kernel_spec tlb_kernel;
extern const struct kernel_spec zero_queue_kernel;
extern const struct kernel_spec pattern_stride_kernel;
extern const struct kernel_spec mlp_kernel;
extern const struct kernel_spec write_cost_kernel;
extern const struct kernel_spec c2c_kernel;
extern const struct kernel_spec affinity_kernel;
extern const struct kernel_spec smt_kernel;
extern const struct kernel_spec aio_kernel;
extern const struct kernel_spec workload_kernel;
extern const struct kernel_spec bandwidth_kernel;
extern const struct kernel_spec saxpy_kernel;
extern const struct kernel_spec loaded_latency_kernel;

extern const struct kernel_spec *const kernel_registry[];
extern const size_t kernel_registry_count;

const struct kernel_spec *registry_find(const char *name);

#endif
