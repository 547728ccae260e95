/* Byte sizes as people type them: 4096, 16k, 1m, 2g (binary: 4k = 4096). */
#ifndef FLEETSCOPE_SIZES_H
#define FLEETSCOPE_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* Parses a positive size with an optional k/m/g (or K/M/G) suffix.
 * Returns NULL on success, else a static message saying what is wrong. */
const char *size_parse(const char *text, uint64_t *bytes);

/* Parses a comma-separated list of sizes into a malloc'd array.
 * Returns NULL on success; on failure returns a message and points *bad_item
 * at a malloc'd copy of the offending item (caller frees). */
const char *size_list_parse(const char *text, uint64_t **sizes, size_t *count, char **bad_item);

/* Formats bytes for people: "64 KiB", "1.5 MiB", "100 B". */
void size_format(uint64_t bytes, char *out, size_t out_size);

#endif
