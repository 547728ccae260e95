/* The table of kernels; see registry.h for how to add one. */
#include "registry.h"

#include <string.h>

/* Every kernel, in --list order: X(name) for each `name##_kernel` that
 * src/kernel_<name>.c defines. The declarations and the table below are
 * both expanded from this one list. */
#define KERNELS(X)            \
	X(chase)              \
	X(tlb)                \
	X(zero_queue)         \
	X(pattern_stride)     \
	X(mlp)                \
	X(write_cost)         \
	X(c2c)                \
	X(affinity)           \
	X(smt)                \
	X(aio)                \
	X(workload)           \
	X(alloc_walk)         \
	X(bandwidth)          \
	X(saxpy)              \
	X(loaded_latency)     \
	X(core_clock)         \
	X(peak_flops)

#define DECLARE_KERNEL(name) extern const struct kernel_spec name##_kernel;
KERNELS(DECLARE_KERNEL)

#define KERNEL_ENTRY(name) &name##_kernel,
static const struct kernel_spec *const kernel_registry[] = {KERNELS(KERNEL_ENTRY)};

#define KERNEL_COUNT (sizeof(kernel_registry) / sizeof(kernel_registry[0]))

const struct kernel_spec *registry_find(const char *name)
{
	for (size_t i = 0; i < KERNEL_COUNT; i++)
		if (strcmp(kernel_registry[i]->name, name) == 0)
			return kernel_registry[i];
	return NULL;
}

void registry_print(FILE *out, const char *indent)
{
	for (size_t i = 0; i < KERNEL_COUNT; i++) {
		const struct kernel_spec *kernel = kernel_registry[i];
		char experiments[256];

		snprintf(experiments, sizeof(experiments), "%s%s%s", kernel->experiment,
			 kernel->also_feeds ? "," : "", kernel->also_feeds ? kernel->also_feeds : "");
		fprintf(out, "%s%-15s %-15s %s\n", indent, kernel->name, experiments, kernel->description);
	}
}
