/* Command-line conventions shared by all kernels; see cli.h. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*note_before)(FILE *stream);

void cli_exit_note_before(void (*note)(FILE *stream))
{
	note_before = note;
}

void cli_exit(int status)
{
	const char *note = getenv(CLI_EXIT_NOTE_ENV);

	fflush(stdout);
	if (note && strcmp(note, "1") == 0) {
		if (status == CLI_EXIT_OK && note_before)
			note_before(stderr);
		fprintf(stderr, "%s: exit %d\n", CLI_PROGRAM, status);
	}
	exit(status);
}

void cli_fail(int status, const char *kernel, const char *format, ...)
{
	va_list args;

	fflush(stdout);
	if (kernel)
		fprintf(stderr, "%s %s: ", CLI_PROGRAM, kernel);
	else
		fprintf(stderr, "%s: ", CLI_PROGRAM);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	cli_exit(status);
}

int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *value)
{
	unsigned long long parsed;
	char *end;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	parsed = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || parsed < min || parsed > max)
		return -1;
	*value = parsed;
	return 0;
}

int cli_parse_double(const char *text, double min, double max, double *value)
{
	double parsed;
	char *end;

	if (!isdigit((unsigned char)text[0]) && text[0] != '.')
		return -1;
	errno = 0;
	parsed = strtod(text, &end);
	if (errno != 0 || *end != '\0' || !isfinite(parsed) || parsed < min || parsed > max)
		return -1;
	*value = parsed;
	return 0;
}
