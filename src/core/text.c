/*
 * text.c - small text helpers (text.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>

#include "text.h"

int nvt_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

const char *nvt_decimal_in(const char *p, const char *end, uint64_t max, uint64_t *out)
{
	const char *first = p;
	uint64_t v = 0;

	for (; (!end || p < end) && *p >= '0' && *p <= '9'; p++) {
		uint64_t digit = (uint64_t)(*p - '0');
		if (digit > max || v > (max - digit) / 10)
			return NULL;
		v = v * 10 + digit;
	}
	if (p == first)
		return NULL;
	*out = v;
	return p;
}

const char *nvt_decimal(const char *p, uint64_t max, uint64_t *out)
{
	return nvt_decimal_in(p, NULL, max, out);
}

int nvt_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
