/*
 * json.c - reading a JSON text (see json.h). Every step is bounded by the
 * text's length: a function given an offset past it, or a text it was not
 * meant for, answers "none" (-1), never reads beyond len.
 *
 * SPDX-License-Identifier: MIT
 */
#include "json.h"
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE ((size_t)-1)

static size_t skip_ws(const char *t, size_t len, size_t at)
{
	while (at < len && (t[at] == ' ' || t[at] == '\t' || t[at] == '\n' || t[at] == '\r'))
		at++;
	return at;
}

/* Four hex digits at t[at..]: their value, or -1. */
static long hex4(const char *t, size_t len, size_t at)
{
	long v = 0;

	if (at + 4 > len)
		return -1;
	for (int i = 0; i < 4; i++) {
		int d = nvt_hex_digit(t[at + (size_t)i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The end of the string whose '"' is at at, or NONE. */
static size_t skip_string(const char *t, size_t len, size_t at)
{
	if (at >= len || t[at] != '"')
		return NONE;
	for (at++; at < len; at++) {
		unsigned char c = (unsigned char)t[at];
		if (c == '"')
			return at + 1;
		if (c < 0x20)
			return NONE;
		if (c != '\\')
			continue;
		if (++at >= len)
			return NONE;
		if (t[at] == 'u') {
			if (hex4(t, len, at + 1) < 0)
				return NONE;
			at += 4;
		} else if (!t[at] || !strchr("\"\\/bfnrt", t[at])) {
			return NONE;
		}
	}
	return NONE;
}

static size_t skip_digits(const char *t, size_t len, size_t at)
{
	while (at < len && t[at] >= '0' && t[at] <= '9')
		at++;
	return at;
}

/* The end of the number at at, or NONE. */
static size_t skip_number(const char *t, size_t len, size_t at)
{
	size_t start;

	if (at < len && t[at] == '-')
		at++;
	if (at >= len || t[at] < '0' || t[at] > '9')
		return NONE;
	at = t[at] == '0' ? at + 1 : skip_digits(t, len, at);
	if (at < len && t[at] == '.') {
		start = ++at;
		at = skip_digits(t, len, at);
		if (at == start)
			return NONE;
	}
	if (at < len && (t[at] == 'e' || t[at] == 'E')) {
		at++;
		if (at < len && (t[at] == '+' || t[at] == '-'))
			at++;
		start = at;
		at = skip_digits(t, len, at);
		if (at == start)
			return NONE;
	}
	return at;
}

static size_t skip_word(const char *t, size_t len, size_t at, const char *word)
{
	size_t n = strlen(word);

	return at + n <= len && !memcmp(t + at, word, n) ? at + n : NONE;
}

static size_t skip_value(const char *t, size_t len, size_t at, int depth);

/* The end of the object or array whose opening bracket is at at, or NONE. */
static size_t skip_container(const char *t, size_t len, size_t at, int depth)
{
	char close = t[at] == '{' ? '}' : ']';
	int object = close == '}';

	if (depth >= NVT_JSON_DEPTH)
		return NONE;
	at = skip_ws(t, len, at + 1);
	if (at < len && t[at] == close)
		return at + 1;
	for (;;) {
		if (object) {
			at = skip_string(t, len, at);
			if (at == NONE)
				return NONE;
			at = skip_ws(t, len, at);
			if (at >= len || t[at] != ':')
				return NONE;
			at = skip_ws(t, len, at + 1);
		}
		at = skip_value(t, len, at, depth + 1);
		if (at == NONE)
			return NONE;
		at = skip_ws(t, len, at);
		if (at >= len)
			return NONE;
		if (t[at] == close)
			return at + 1;
		if (t[at] != ',')
			return NONE;
		at = skip_ws(t, len, at + 1);
	}
}

/* The end of the value at at (no white space before it), or NONE. */
static size_t skip_value(const char *t, size_t len, size_t at, int depth)
{
	if (at >= len)
		return NONE;
	switch (t[at]) {
	case '{':
	case '[': return skip_container(t, len, at, depth);
	case '"': return skip_string(t, len, at);
	case 't': return skip_word(t, len, at, "true");
	case 'f': return skip_word(t, len, at, "false");
	case 'n': return skip_word(t, len, at, "null");
	default: return skip_number(t, len, at);
	}
}

int nvt_json_check(const char *text, size_t len)
{
	size_t end = skip_value(text, len, skip_ws(text, len, 0), 0);

	return end != NONE && skip_ws(text, len, end) == len ? 0 : -1;
}

size_t nvt_json_root(const char *text, size_t len)
{
	return skip_ws(text, len, 0);
}

long nvt_json_end(const char *text, size_t len, size_t at)
{
	size_t end = skip_value(text, len, at, 0);

	return end == NONE ? -1 : (long)end;
}

int nvt_json_type(const char *text, size_t len, size_t at)
{
	if (at >= len)
		return NVT_JSON_BAD;
	switch (text[at]) {
	case '{': return NVT_JSON_OBJECT;
	case '[': return NVT_JSON_ARRAY;
	case '"': return NVT_JSON_STRING;
	case 't': return NVT_JSON_TRUE;
	case 'f': return NVT_JSON_FALSE;
	case 'n': return NVT_JSON_NULL;
	default: return skip_number(text, len, at) == NONE ? NVT_JSON_BAD : NVT_JSON_NUMBER;
	}
}

/* 1 if the string at at (a member's name) decodes to key. */
static int name_is(const char *t, size_t len, size_t at, const char *key)
{
	char name[256];
	long n = nvt_json_string(t, len, at, name, sizeof(name));

	return n >= 0 && (size_t)n == strlen(key) && !memcmp(name, key, (size_t)n);
}

long nvt_json_member(const char *text, size_t len, size_t at, const char *key)
{
	long found = -1;

	if (nvt_json_type(text, len, at) != NVT_JSON_OBJECT)
		return -1;
	at = skip_ws(text, len, at + 1);
	while (at < len && text[at] == '"') {
		size_t name = at, value;
		at = skip_string(text, len, at);
		if (at == NONE)
			return -1;
		at = skip_ws(text, len, at);
		if (at >= len || text[at] != ':')
			return -1;
		value = skip_ws(text, len, at + 1);
		at = skip_value(text, len, value, 0);
		if (at == NONE)
			return -1;
		if (name_is(text, len, name, key))
			found = (long)value;
		at = skip_ws(text, len, at);
		if (at >= len || text[at] != ',')
			break;
		at = skip_ws(text, len, at + 1);
	}
	return found;
}

long nvt_json_path(const char *text, size_t len, size_t at, const char *const *keys, int n)
{
	long v = (long)at;

	for (int i = 0; i < n && v >= 0; i++)
		v = nvt_json_member(text, len, (size_t)v, keys[i]);
	return v;
}

long nvt_json_first(const char *text, size_t len, size_t at)
{
	if (nvt_json_type(text, len, at) != NVT_JSON_ARRAY)
		return -1;
	at = skip_ws(text, len, at + 1);
	return at < len && text[at] != ']' ? (long)at : -1;
}

long nvt_json_next(const char *text, size_t len, size_t at)
{
	at = skip_value(text, len, at, 0);
	if (at == NONE)
		return -1;
	at = skip_ws(text, len, at);
	if (at >= len || text[at] != ',')
		return -1;
	at = skip_ws(text, len, at + 1);
	return at < len ? (long)at : -1;
}

/* Appends code point cp to buf as UTF-8. Returns the new length, or -1 if it does not fit. */
static long put_utf8(char *buf, size_t size, size_t n, unsigned long cp)
{
	unsigned char out[4];
	size_t k;

	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		out[0] = (unsigned char)(0xf0 | (cp >> 18));
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (n + k >= size)
		return -1;
	memcpy(buf + n, out, k);
	return (long)(n + k);
}

/* The code point of the \u escape whose 'u' is at *at (a surrogate pair
 * read whole), *at moved to its last digit; or -1. */
static long unicode_escape(const char *t, size_t len, size_t *at)
{
	long hi = hex4(t, len, *at + 1), lo;

	if (hi < 0 || (hi >= 0xdc00 && hi <= 0xdfff))
		return -1;
	*at += 4;
	if (hi < 0xd800 || hi > 0xdbff)
		return hi;
	if (*at + 2 >= len || t[*at + 1] != '\\' || t[*at + 2] != 'u')
		return -1;
	lo = hex4(t, len, *at + 3);
	if (lo < 0xdc00 || lo > 0xdfff)
		return -1;
	*at += 6;
	return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* nvt_json_string, or with head its first bytes that fit (nvt_json_string_head). */
static long decode_string(const char *text, size_t len, size_t at, char *buf, size_t size, int head)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	size_t end = skip_string(text, len, at);
	long n = 0, next;

	if (end == NONE || size == 0)
		return -1;
	for (at++; at < end - 1 && !(head && (size_t)n + 1 >= size); at++) {
		long cp = (unsigned char)text[at];
		if (cp == '\\') {
			at++;
			if (text[at] == 'u')
				cp = unicode_escape(text, len, &at);
			else
				cp = to[strchr(from, text[at]) - from];
			if (cp <= 0)
				return -1; /* a lone surrogate, or a NUL */
			next = put_utf8(buf, size, (size_t)n, (unsigned long)cp);
		} else if ((size_t)n + 1 < size) {
			buf[n] = (char)cp; /* a byte as it is (UTF-8 passes through) */
			next = n + 1;
		} else {
			next = -1;
		}
		if (next < 0 && head)
			break; /* buf is full: what fits is the answer */
		if (next < 0)
			return -1;
		n = next;
	}
	buf[n] = '\0';
	return n;
}

long nvt_json_string(const char *text, size_t len, size_t at, char *buf, size_t size)
{
	return decode_string(text, len, at, buf, size, 0);
}

long nvt_json_string_head(const char *text, size_t len, size_t at, char *buf, size_t size)
{
	return decode_string(text, len, at, buf, size, 1);
}

int nvt_json_number(const char *text, size_t len, size_t at, double *out)
{
	size_t end = skip_number(text, len, at);
	char num[64], *stop;

	if (end == NONE || end - at >= sizeof(num))
		return -1;
	memcpy(num, text + at, end - at);
	num[end - at] = '\0';
	*out = strtod(num, &stop);
	return stop == num + (end - at) && isfinite(*out) ? 0 : -1;
}

int nvt_json_uint(const char *text, size_t len, size_t at, uint64_t max, uint64_t *out)
{
	size_t end = skip_number(text, len, at);

	/* Digits to the number's end: no sign, fraction or exponent. */
	if (end == NONE || nvt_decimal_in(text + at, text + end, max, out) != text + end)
		return -1;
	return 0;
}
