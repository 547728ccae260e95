/*
 * Fault injection for lab hosts: preloaded into every process of a lab host's SSH sessions (sshd
 * SetEnv LD_PRELOAD), it does nothing unless one of the host's trigger files says so. The trigger
 * files live in /run/fslab/<host>/ (the host's name comes from FSLAB_HOST):
 *
 *   crash-kernel   holds a kernel name, e.g. "zero_queue", as given to fleetscope-kernels as its
 *                  first argument: that kernel crashes for real, a message on stderr, then a NULL
 *                  store (SIGSEGV).
 *   hang-kernel    holds a kernel name: that kernel waits, before it measures anything, for as long
 *                  as the file exists (a run that holds the host while a test does something else).
 *   send-bundle    holds the path of an archive: the host's `tar -czf ARCHIVE ...` (collect packing
 *                  the bundle) writes that file to ARCHIVE instead, and succeeds (a hostile host).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of /run/fslab/<host>/<name> in `value`; 0 when there is no such trigger. */
static int trigger(const char *host, const char *name, char *value, size_t size)
{
	char path[256];
	snprintf(path, sizeof path, "/run/fslab/%s/%s", host, name);
	FILE *file = fopen(path, "r");
	if (file == NULL)
		return 0;
	if (fgets(value, (int)size, file) == NULL)
		value[0] = '\0';
	fclose(file);
	value[strcspn(value, "\n")] = '\0';
	return 1;
}

static int still_there(const char *host, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "/run/fslab/%s/%s", host, name);
	return access(path, F_OK) == 0;
}

static void kernel_faults(const char *host, int argc, char **argv)
{
	char kernel[64];
	if (argc < 2)
		return;
	if (trigger(host, "hang-kernel", kernel, sizeof kernel) && strcmp(kernel, argv[1]) == 0) {
		fprintf(stderr, "fslab fault injection: %s on %s waits while hang-kernel is there\n", argv[1], host);
		while (still_there(host, "hang-kernel"))
			usleep(20000);
	}
	if (trigger(host, "crash-kernel", kernel, sizeof kernel) && strcmp(kernel, argv[1]) == 0) {
		fprintf(stderr, "fslab fault injection: %s on %s stores through a NULL pointer\n", argv[1], host);
		fflush(stderr);
		*(volatile int *)0 = 1;
	}
}

static void tar_faults(const char *host, int argc, char **argv)
{
	char source[200];
	const char *archive = NULL;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "-czf") == 0)
			archive = argv[i + 1];
	if (archive == NULL || !trigger(host, "send-bundle", source, sizeof source))
		return;
	int in = open(source, O_RDONLY);
	int out = open(archive, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buffer[65536];
	ssize_t got = in < 0 || out < 0 ? -1 : 0;
	while (got >= 0 && (got = read(in, buffer, sizeof buffer)) > 0)
		if (write(out, buffer, (size_t)got) != got)
			got = -1;
	fprintf(stderr, "fslab fault injection: tar on %s sends %s instead of the bundle\n", host, source);
	_exit(got == 0 ? 0 : 2);
}

static void inject(int argc, char **argv, char **envp)
{
	(void)envp;
	const char *host = getenv("FSLAB_HOST");
	if (host == NULL || argc < 1 || argv == NULL || argv[0] == NULL)
		return;
	const char *program = strrchr(argv[0], '/');
	program = program ? program + 1 : argv[0];
	if (strcmp(program, "fleetscope-kernels") == 0)
		kernel_faults(host, argc, argv);
	else if (strcmp(program, "tar") == 0)
		tar_faults(host, argc, argv);
}

__attribute__((section(".init_array"))) void (*fslab_init)(int, char **, char **) = inject;
