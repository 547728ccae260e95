/* A JSON-lines writer: builds one object in memory, then writes it with a
 * single write(2) so lines appended by concurrent processes never interleave.
 *
 * Strings are escaped (quotes, backslashes, control characters, invalid UTF-8
 * replaced by U+FFFD); non-finite doubles are written as null, never as the
 * invalid tokens nan/inf. */
#ifndef FLEETSCOPE_JSON_H
#define FLEETSCOPE_JSON_H

#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

struct json {
	char *text;
	size_t length;
	size_t capacity;
	int depth;
	int after_key;
	int failed; /* sticky: out of memory or nesting too deep */
	unsigned char has_items[JSON_MAX_DEPTH];
};

void json_init(struct json *json);
void json_free(struct json *json);
void json_reset(struct json *json);

void json_object_begin(struct json *json);
void json_object_end(struct json *json);
void json_array_begin(struct json *json);
void json_array_end(struct json *json);
void json_key(struct json *json, const char *key);
void json_string(struct json *json, const char *value);
void json_double(struct json *json, double value);
void json_uint(struct json *json, uint64_t value);
void json_int(struct json *json, int64_t value);
void json_null(struct json *json);
void json_bool(struct json *json, int value);

/* Appends a newline and writes the document to fd in one call.
 * Returns 0, or -1 (errno set) on a failed or short write or a failed build. */
int json_write_line(struct json *json, int fd);

#endif
