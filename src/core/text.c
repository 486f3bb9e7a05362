/*
 * text.c - small text helpers (text.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* The edit distance of a (la) and b (lb), two letters swapped counting one (optimal string
 * alignment); beyond NVT_NEAR_MAX letters, a distance no answer takes. */
#define NVT_NEAR_MAX 64
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[NVT_NEAR_MAX + 1][NVT_NEAR_MAX + 1];

	if (la > NVT_NEAR_MAX || lb > NVT_NEAR_MAX)
		return NVT_NEAR_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

int nvt_nearest_word(const char *word, size_t len, const char *const *words, size_t n)
{
	size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = NVT_NEAR_MAX;
	int found = -1, tie = 0;

	for (size_t i = 0; i < n; i++) {
		size_t d;
		if (!words[i])
			continue;
		d = distance(word, len, words[i], strlen(words[i]));
		if (d == 0)
			return -1;
		if (d < best) {
			best = d;
			found = (int)i;
			tie = 0;
		} else if (d == best) {
			tie = 1;
		}
	}
	return found >= 0 && best <= limit && !tie ? found : -1;
}
