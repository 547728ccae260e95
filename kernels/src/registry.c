/* The table of kernels; see registry.h for how to add one. */
#include "registry.h"

#include <string.h>

const struct kernel_spec *const kernel_registry[] = {
	&chase_kernel,
	&tlb_kernel,
	&zero_queue_kernel,
	&pattern_stride_kernel,
	&mlp_kernel,
	&write_cost_kernel,
	&c2c_kernel,
	&affinity_kernel,
	&smt_kernel,
	&aio_kernel,
	&workload_kernel,
	&bandwidth_kernel,
	&saxpy_kernel,
	&loaded_latency_kernel,
};

const size_t kernel_registry_count = sizeof(kernel_registry) / sizeof(kernel_registry[0]);

const struct kernel_spec *registry_find(const char *name)
{
	for (size_t i = 0; i < kernel_registry_count; i++)
		if (strcmp(kernel_registry[i]->name, name) == 0)
			return kernel_registry[i];
	return NULL;
}
