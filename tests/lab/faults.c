/*
 * Fault injection for lab hosts: preloaded into every process of a lab host's SSH sessions (sshd
 * SetEnv LD_PRELOAD), it does nothing unless the host's trigger file names the kernel being
 * started. Then that kernel crashes for real: a message on stderr, then a NULL store (SIGSEGV).
 *
 * The trigger file is /run/fslab/<host>/crash-kernel (the host's name comes from FSLAB_HOST); it
 * holds one kernel name, e.g. "zero_queue", as given to fleetscope-kernels as its first argument.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void crash_if_triggered(int argc, char **argv, char **envp)
{
	(void)envp;
	const char *host = getenv("FSLAB_HOST");
	if (host == NULL || argc < 2 || argv == NULL || argv[0] == NULL)
		return;
	const char *program = strrchr(argv[0], '/');
	program = program ? program + 1 : argv[0];
	if (strcmp(program, "fleetscope-kernels") != 0)
		return;

	char path[256];
	snprintf(path, sizeof path, "/run/fslab/%s/crash-kernel", host);
	FILE *trigger = fopen(path, "r");
	if (trigger == NULL)
		return;
	char kernel[64] = "";
	if (fgets(kernel, sizeof kernel, trigger) == NULL)
		kernel[0] = '\0';
	fclose(trigger);
	kernel[strcspn(kernel, "\n")] = '\0';
	if (strcmp(kernel, argv[1]) != 0)
		return;

	fprintf(stderr, "fslab fault injection: %s on %s stores through a NULL pointer\n", argv[1], host);
	fflush(stderr);
	*(volatile int *)0 = 1;
}

__attribute__((section(".init_array"))) void (*fslab_init)(int, char **, char **) = crash_if_triggered;
