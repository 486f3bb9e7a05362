/*
 * json.h - reading a JSON text (RFC 8259): the whole text checked once,
 * then values found in it by member name and by position in an array, and
 * strings and whole numbers read out of them. Pure: the caller reads the
 * file. Used by the CDI hook (the OCI runtime's state and the container's
 * configuration, docs/containers.md).
 *
 * A value is named by its offset in the text (a size_t); functions that
 * find one return its offset, or -1 when there is none. They expect a text
 * that nvt_json_check accepted, and stay within len bytes whatever they get.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_JSON_H
#define NVT_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Objects and arrays nest at most this deep (a deeper text is refused). */
#define NVT_JSON_DEPTH 64

enum nvt_json_type {
	NVT_JSON_BAD = -1,
	NVT_JSON_OBJECT = 0,
	NVT_JSON_ARRAY,
	NVT_JSON_STRING,
	NVT_JSON_NUMBER,
	NVT_JSON_TRUE,
	NVT_JSON_FALSE,
	NVT_JSON_NULL,
};

/* 0 if text (len bytes) is one JSON value, white space around it allowed,
 * with no control character inside a string and at most NVT_JSON_DEPTH
 * levels; else -1. */
int nvt_json_check(const char *text, size_t len);
/* The offset of the text's value (after leading white space). */
size_t nvt_json_root(const char *text, size_t len);
/* The end of the value at offset at (the offset just past it), or -1. */
long nvt_json_end(const char *text, size_t len, size_t at);
/* The type of the value at offset at. Returns enum nvt_json_type. */
int nvt_json_type(const char *text, size_t len, size_t at);
/* The value of the member named key in the object at offset at (the last
 * one, where a name repeats), or -1. */
long nvt_json_member(const char *text, size_t len, size_t at, const char *key);
/* The value found by following a path of member names from at (n names), or -1. */
long nvt_json_path(const char *text, size_t len, size_t at, const char *const *keys, int n);
/* The first element of the array at offset at, or -1 (empty, or no array). */
long nvt_json_first(const char *text, size_t len, size_t at);
/* The element after the one at offset at (an element of an array), or -1. */
long nvt_json_next(const char *text, size_t len, size_t at);
/*
 * Decodes the string at offset at into buf (size bytes, NUL-terminated):
 * escapes resolved, \u escapes as UTF-8. Returns its length, or -1 if it is
 * no string, does not fit, holds a NUL (\u0000) or a lone surrogate.
 */
long nvt_json_string(const char *text, size_t len, size_t at, char *buf, size_t size);
/* The same for a string that may not fit: as many of its first bytes as fit in buf
 * (a character that does not fit whole is left out), NUL-terminated. Returns the
 * bytes written, or -1 if it is no string, or holds a NUL or a lone surrogate
 * within what fits. */
long nvt_json_string_head(const char *text, size_t len, size_t at, char *buf, size_t size);
/* The number at offset at, if it is a whole number from 0 to max (no
 * fraction, exponent or sign): 0 with *out; else -1. */
int nvt_json_uint(const char *text, size_t len, size_t at, uint64_t max, uint64_t *out);
/* The number at offset at as a double, if it is finite and at most 63
 * characters long: 0 with *out; else -1. */
int nvt_json_number(const char *text, size_t len, size_t at, double *out);

#endif /* NVT_JSON_H */
