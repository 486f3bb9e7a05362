/*
 * request.c - option values and GRES counts for the Slurm plugin.
 *
 * SPDX-License-Identifier: MIT
 */
#include "request.h"
#include "core/text.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int nvt_slurm_count_parse(const char *text, unsigned max, unsigned *out)
{
	unsigned long v = 0;

	if (!text || !*text || strlen(text) > 9)
		return -1;
	for (const char *p = text; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < 1 || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int nvt_slurm_path_arg(const char *arg, const char *prefix, char *buf, size_t len, char *why,
		       size_t why_len)
{
	size_t n = strlen(prefix);

	if (strncmp(arg, prefix, n))
		return 0;
	if (arg[n] != '/') {
		snprintf(why, why_len, "%s takes an absolute path, not '%s'", prefix, arg + n);
		return -1;
	}
	if (strlen(arg + n) >= len) {
		snprintf(why, why_len, "%s takes a path of at most %zu bytes (it has %zu)", prefix,
			 len - 1, strlen(arg + n));
		return -1;
	}
	snprintf(buf, len, "%s", arg + n);
	return 1;
}

/* Parses decimal digits at *p (at most 18); returns the value, or -1. Advances *p. */
static long digits(const char **p)
{
	uint64_t v;
	const char *end = nvt_decimal(*p, 999999999999999999ull, &v);

	if (!end)
		return -1;
	*p = end;
	return (long)v;
}

/*
 * The count of one item ("tpc", "tpc:16", "tpc:big:16", "tpc(CNT:16)",
 * "tpc=16") whose name was matched; p points just past the name and end
 * at the item's end. Returns the count or -1.
 */
static long item_count(const char *p, const char *end)
{
	const char *paren = memchr(p, '(', (size_t)(end - p)), *colon;
	int type_only;
	long n;

	/* A parenthesis closes at the item's end ("tpc(" is no item). */
	if (paren && end[-1] != ')')
		return -1;
	if (paren && !strncmp(paren, "(CNT:", 5)) {
		p = paren + 5;
		n = digits(&p);
		return n >= 0 && *p == ')' ? n : -1;
	}
	if (paren)
		end = paren; /* "(IDX:0-1)" and the like: the count comes before */
	if (p == end)
		return 1;
	if (*p == '=') {
		p++;
		n = digits(&p);
		return n >= 0 && p == end ? n : -1;
	}
	/* ":16", ":type:16", or ":type" (one) */
	if (*p != ':' || p + 1 == end)
		return -1;
	colon = p;
	for (const char *q = p + 1; q < end; q++)
		if (*q == ':')
			colon = q;
	if (colon + 1 == end)
		return -1;
	type_only = colon == p; /* one field after the name */
	p = colon + 1;
	n = digits(&p);
	if (n >= 0 && p == end)
		return n;
	/* Not a count: a type alone counts one; "type:junk" is malformed. */
	return type_only ? 1 : -1;
}

/*
 * Finds the next item of GRES name in text from *p on: returns its start
 * past the name, sets *end to the item's end and moves *p past it; returns
 * NULL when there is none.
 */
static const char *next_item(const char **p, const char *name, const char **end)
{
	size_t name_len = strlen(name);

	while (**p) {
		const char *item = *p, *e = *p;
		int depth = 0;

		/* An item ends at a ',' outside parentheses ("gpu:2(IDX:0,2)"). */
		while (*e && (*e != ',' || depth)) {
			depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
			e++;
		}
		*p = *e ? e + 1 : e;
		if (!strncmp(item, "gres:", 5) || !strncmp(item, "gres/", 5))
			item += 5;
		if ((size_t)(e - item) >= name_len && !strncmp(item, name, name_len) &&
		    (item + name_len == e || strchr(":=(", item[name_len]))) {
			*end = e;
			return item + name_len;
		}
	}
	return NULL;
}

long nvt_slurm_gres_count(const char *text, const char *name)
{
	const char *p = text, *item, *end;
	long sum = -1;

	if (!text)
		return -1;
	while ((item = next_item(&p, name, &end))) {
		long n = item_count(item, end);
		if (n < 0 || (sum > 0 && n > LONG_MAX - sum))
			return -1; /* malformed, or a sum past a long's range */
		sum = (sum < 0 ? 0 : sum) + n;
	}
	return sum;
}

/* Parses indices ("0,2-3") from p to end into *mask. Returns 0, or -1. */
static int index_list(const char *p, const char *end, uint64_t *mask)
{
	if (p == end)
		return -1;
	while (p < end) {
		long first, last;
		first = last = digits(&p);
		if (p < end && *p == '-') {
			p++;
			last = digits(&p);
		}
		if (first < 0 || last < first || last >= 64 || (p < end && *p != ','))
			return -1;
		for (long i = first; i <= last; i++)
			*mask |= (uint64_t)1 << i;
		if (p < end && ++p == end)
			return -1; /* a trailing ',' */
	}
	return 0;
}

int nvt_slurm_gres_index(const char *text, const char *name, uint64_t *mask)
{
	const char *p = text, *item, *end;
	int found = -1;

	*mask = 0;
	if (!text)
		return -1;
	while ((item = next_item(&p, name, &end))) {
		const char *idx = memchr(item, '(', (size_t)(end - item)), *close;
		if (found < 0)
			found = 0;
		if (!idx || strncmp(idx, "(IDX:", 5) || !strncmp(idx + 5, "N/A)", 4))
			continue; /* a count alone: no devices */
		close = memchr(idx, ')', (size_t)(end - idx));
		if (!close || index_list(idx + 5, close, mask))
			return -1;
		found = 1;
	}
	return found;
}

int nvt_slurm_index_list(const char *text, uint64_t *mask)
{
	*mask = 0;
	if (!text)
		return -1;
	return index_list(text, text + strlen(text), mask);
}
