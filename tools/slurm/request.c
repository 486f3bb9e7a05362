/*
 * request.c - option values and GRES counts for the Slurm plugin.
 *
 * SPDX-License-Identifier: MIT
 */
#include "request.h"

#include <ctype.h>
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

/* Parses decimal digits at *p (at most 18); returns the value, or -1. Advances *p. */
static long digits(const char **p)
{
	long v = 0;
	int n = 0;

	while (isdigit((unsigned char)**p) && n < 18) {
		v = v * 10 + (**p - '0');
		(*p)++, n++;
	}
	return n && !isdigit((unsigned char)**p) ? v : -1;
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

long nvt_slurm_gres_count(const char *text, const char *name)
{
	size_t name_len = strlen(name);
	long sum = -1;
	const char *p = text;

	if (!text)
		return -1;
	while (*p) {
		const char *end = p;
		int depth = 0;

		/* An item ends at a ',' outside parentheses ("gpu:2(IDX:0,2)"). */
		while (*end && (*end != ',' || depth)) {
			depth += *end == '(' ? 1 : *end == ')' ? -1 : 0;
			end++;
		}
		if (!strncmp(p, "gres:", 5) || !strncmp(p, "gres/", 5))
			p += 5;
		if ((size_t)(end - p) >= name_len && !strncmp(p, name, name_len) &&
		    (p + name_len == end || strchr(":=(", p[name_len]))) {
			long n = item_count(p + name_len, end);
			if (n < 0)
				return -1;
			sum = (sum < 0 ? 0 : sum) + n;
		}
		p = *end ? end + 1 : end;
	}
	return sum;
}
