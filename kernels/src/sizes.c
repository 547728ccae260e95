/* Byte sizes with k/m/g suffixes; see sizes.h. */
#include "sizes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *size_parse(const char *text, uint64_t *bytes)
{
	uint64_t value = 0;
	unsigned shift = 0;
	const char *p = text;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-')
		return "is negative; sizes must be positive";
	if (!isdigit((unsigned char)*p))
		return "is not a number; expected digits with an optional k/m/g suffix, e.g. 64k";
	for (; isdigit((unsigned char)*p); p++) {
		uint64_t digit = (uint64_t)(*p - '0');

		if (value > (UINT64_MAX - digit) / 10)
			return "is too large";
		value = value * 10 + digit;
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	default: break;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '\0')
		return "has an unknown suffix; use k, m or g (binary: 4k = 4096 bytes)";
	if (value == 0)
		return "is zero; sizes must be positive";
	if (value > (UINT64_MAX >> shift))
		return "is too large";
	*bytes = value << shift;
	return NULL;
}

const char *size_list_parse(const char *text, uint64_t **sizes, size_t *count, char **bad_item)
{
	size_t capacity = 1;
	uint64_t *list;
	const char *item = text;

	for (const char *p = text; *p; p++)
		capacity += (*p == ',');
	list = malloc(capacity * sizeof(*list));
	if (!list)
		return "could not be stored: out of memory";
	*count = 0;
	for (;;) {
		size_t length = strcspn(item, ",");
		char *copy = strndup(item, length);
		const char *error;

		if (!copy) {
			free(list);
			return "could not be stored: out of memory";
		}
		error = length == 0 ? "is empty; separate sizes with single commas, e.g. 16k,1m"
				    : size_parse(copy, &list[*count]);
		if (error) {
			*bad_item = copy;
			free(list);
			return error;
		}
		free(copy);
		(*count)++;
		if (item[length] == '\0')
			break;
		item += length + 1;
	}
	*sizes = list;
	return NULL;
}

void size_format(uint64_t bytes, char *out, size_t out_size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double value = (double)bytes;
	size_t unit = 0;

	while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
		value /= 1024.0;
		unit++;
	}
	snprintf(out, out_size, "%.4g %s", value, units[unit]);
}
