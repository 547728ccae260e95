/* A JSON-lines writer; see json.h. */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void json_init(struct json *json)
{
	memset(json, 0, sizeof(*json));
}

void json_free(struct json *json)
{
	free(json->text);
	json_init(json);
}

void json_reset(struct json *json)
{
	char *text = json->text;
	size_t capacity = json->capacity;

	json_init(json);
	json->text = text;
	json->capacity = capacity;
}

static void append(struct json *json, const char *bytes, size_t count)
{
	if (json->failed)
		return;
	if (json->length + count + 1 > json->capacity) {
		size_t capacity = json->capacity ? json->capacity : 512;
		char *text;

		while (json->length + count + 1 > capacity)
			capacity *= 2;
		text = realloc(json->text, capacity);
		if (!text) {
			json->failed = 1;
			return;
		}
		json->text = text;
		json->capacity = capacity;
	}
	memcpy(json->text + json->length, bytes, count);
	json->length += count;
	json->text[json->length] = '\0';
}

static void append_str(struct json *json, const char *text)
{
	append(json, text, strlen(text));
}

/* Separates a value from the previous one at the same level, unless it
 * directly follows its key. */
static void before_value(struct json *json)
{
	if (json->after_key) {
		json->after_key = 0;
		return;
	}
	if (json->has_items[json->depth])
		append_str(json, ", ");
	json->has_items[json->depth] = 1;
}

static void open_container(struct json *json, char bracket)
{
	before_value(json);
	if (json->depth + 1 >= JSON_MAX_DEPTH) {
		json->failed = 1;
		return;
	}
	append(json, &bracket, 1);
	json->depth++;
	json->has_items[json->depth] = 0;
}

static void close_container(struct json *json, char bracket)
{
	if (json->depth == 0) {
		json->failed = 1;
		return;
	}
	json->depth--;
	append(json, &bracket, 1);
}

void json_object_begin(struct json *json) { open_container(json, '{'); }
void json_object_end(struct json *json) { close_container(json, '}'); }
void json_array_begin(struct json *json) { open_container(json, '['); }
void json_array_end(struct json *json) { close_container(json, ']'); }

/* Length of the well-formed UTF-8 sequence at text (1-4), or 0 if the bytes
 * there are not one (overlong forms, surrogates, > U+10FFFF included). */
static size_t utf8_sequence_length(const unsigned char *text)
{
	unsigned char lead = text[0];
	size_t length;
	uint32_t code_point;

	if (lead < 0x80)
		return 1;
	if (lead >= 0xc2 && lead <= 0xdf) {
		length = 2;
		code_point = lead & 0x1f;
	} else if (lead >= 0xe0 && lead <= 0xef) {
		length = 3;
		code_point = lead & 0x0f;
	} else if (lead >= 0xf0 && lead <= 0xf4) {
		length = 4;
		code_point = lead & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < length; i++) {
		if ((text[i] & 0xc0) != 0x80)
			return 0;
		code_point = (code_point << 6) | (text[i] & 0x3f);
	}
	if ((length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000) ||
	    (code_point >= 0xd800 && code_point <= 0xdfff) || code_point > 0x10ffff)
		return 0;
	return length;
}

static void append_escaped(struct json *json, const char *value)
{
	const unsigned char *text = (const unsigned char *)value;

	append_str(json, "\"");
	while (*text) {
		unsigned char c = *text;
		char escape[8];
		size_t length;

		switch (c) {
		case '"': append_str(json, "\\\""); text++; continue;
		case '\\': append_str(json, "\\\\"); text++; continue;
		case '\b': append_str(json, "\\b"); text++; continue;
		case '\f': append_str(json, "\\f"); text++; continue;
		case '\n': append_str(json, "\\n"); text++; continue;
		case '\r': append_str(json, "\\r"); text++; continue;
		case '\t': append_str(json, "\\t"); text++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			snprintf(escape, sizeof(escape), "\\u%04x", c);
			append_str(json, escape);
			text++;
			continue;
		}
		length = utf8_sequence_length(text);
		if (length == 0) {
			append_str(json, "\\ufffd");
			text++;
			continue;
		}
		append(json, (const char *)text, length);
		text += length;
	}
	append_str(json, "\"");
}

void json_key(struct json *json, const char *key)
{
	before_value(json);
	append_escaped(json, key);
	append_str(json, ": ");
	json->after_key = 1;
}

void json_string(struct json *json, const char *value)
{
	before_value(json);
	append_escaped(json, value);
}

void json_double(struct json *json, double value)
{
	char number[32];

	before_value(json);
	if (!isfinite(value)) {
		append_str(json, "null");
		return;
	}
	/* 9 significant digits: well below measurement noise, round-trips the
	 * nanosecond counts the samples come from. */
	snprintf(number, sizeof(number), "%.9g", value);
	append_str(json, number);
}

void json_uint(struct json *json, uint64_t value)
{
	char number[32];

	before_value(json);
	snprintf(number, sizeof(number), "%" PRIu64, value);
	append_str(json, number);
}

void json_int(struct json *json, int64_t value)
{
	char number[32];

	before_value(json);
	snprintf(number, sizeof(number), "%" PRId64, value);
	append_str(json, number);
}

void json_null(struct json *json)
{
	before_value(json);
	append_str(json, "null");
}

void json_bool(struct json *json, int value)
{
	before_value(json);
	append_str(json, value ? "true" : "false");
}

int json_write_line(struct json *json, int fd)
{
	ssize_t written;

	if (json->depth != 0)
		json->failed = 1;
	append_str(json, "\n");
	if (json->failed) {
		errno = ENOMEM;
		return -1;
	}
	do
		written = write(fd, json->text, json->length);
	while (written < 0 && errno == EINTR);
	if (written < 0)
		return -1;
	if ((size_t)written != json->length) {
		errno = EIO;
		return -1;
	}
	return 0;
}
