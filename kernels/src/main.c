/* fleetscope-kernels: the microbenchmarks of fleetscope (memory hierarchy,
 * CPU/OS behaviour, I/O).
 * Dispatches to a kernel from the registry; --list and --help come from the
 * same table, so a new kernel shows up in both by being registered. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "registry.h"

static void print_help(FILE *out)
{
	fprintf(out,
		"Usage: %s KERNEL [OPTIONS]\n"
		"       %s KERNEL --help\n"
		"       %s --list | --help\n"
		"\n"
		"Microbenchmarks for fleetscope: the memory hierarchy, CPU/OS behaviour and\n"
		"I/O. Each kernel measures one thing and writes one JSON object per measured\n"
		"point to stdout (or appends to --output FILE); progress and diagnostics go\n"
		"to stderr.\n"
		"\n"
		"Kernels (name, experiments it feeds, description):\n",
		CLI_PROGRAM, CLI_PROGRAM, CLI_PROGRAM);
	registry_print(out, "  ");
	fprintf(out,
		"\n"
		"Options:\n"
		"  -l, --list    list kernels, one per line: name, experiments, description\n"
		"  -h, --help    show this help; 'KERNEL --help' shows a kernel's options\n"
		"\n"
		"Sizes take binary k/m/g suffixes: 4k = 4096 bytes, 1m = 1048576.\n"
		"\n"
		"Exit status: 0 success, 1 the host refused a resource (memory, output),\n"
		"2 invalid arguments (nothing measured, nothing on stdout), 3 a kernel\n"
		"self-check failed, 4 the host lacks what the kernel measures (the reason on\n"
		"stderr), 5 the command 'workload' runs failed.\n"
		"\n"
		"Example:\n"
		"  %s chase --sizes 16k,1m,256m --cpu 0\n",
		CLI_PROGRAM);
}

int main(int argc, char **argv)
{
	const struct kernel_spec *kernel;

	if (argc < 2)
		cli_fail(CLI_EXIT_USAGE, NULL,
			 "no kernel given; run '%s --list' to see kernels or '%s --help'",
			 CLI_PROGRAM, CLI_PROGRAM);
	if (strcmp(argv[1], "--list") == 0 || strcmp(argv[1], "-l") == 0) {
		registry_print(stdout, "");
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_help(stdout);
		return CLI_EXIT_OK;
	}
	if (argv[1][0] == '-')
		cli_fail(CLI_EXIT_USAGE, NULL,
			 "unknown option '%s' before the kernel name; usage: %s KERNEL [OPTIONS], see '%s --help'",
			 argv[1], CLI_PROGRAM, CLI_PROGRAM);
	kernel = registry_find(argv[1]);
	if (!kernel)
		cli_fail(CLI_EXIT_USAGE, NULL,
			 "unknown kernel '%s'; run '%s --list' to see the available kernels",
			 argv[1], CLI_PROGRAM);
	cli_exit(kernel->run(argc - 1, argv + 1));
}
