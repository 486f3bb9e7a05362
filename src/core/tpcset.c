/*
 * tpcset.c - sets of logical TPCs: parsing and formatting.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tpcset.h"
#include "text.h"

#include <string.h>

#define WORDS (NVT_MAX_TPCS / 64)

void nvt_set_clear(struct nvt_tpcset *set)
{
	memset(set, 0, sizeof(*set));
}

void nvt_set_fill(struct nvt_tpcset *set, unsigned count)
{
	nvt_set_clear(set);
	for (unsigned t = 0; t < count && t < NVT_MAX_TPCS; t++)
		nvt_set_add(set, t);
}

void nvt_set_add(struct nvt_tpcset *set, unsigned tpc)
{
	if (tpc < NVT_MAX_TPCS)
		set->w[tpc / 64] |= (uint64_t)1 << (tpc % 64);
}

int nvt_set_has(const struct nvt_tpcset *set, unsigned tpc)
{
	if (tpc >= NVT_MAX_TPCS)
		return 0;
	return (int)((set->w[tpc / 64] >> (tpc % 64)) & 1);
}

unsigned nvt_set_count(const struct nvt_tpcset *set)
{
	unsigned n = 0;
	for (int i = 0; i < WORDS; i++)
		n += (unsigned)__builtin_popcountll(set->w[i]);
	return n;
}

int nvt_set_highest(const struct nvt_tpcset *set)
{
	for (int i = WORDS - 1; i >= 0; i--)
		if (set->w[i])
			return i * 64 + 63 - __builtin_clzll(set->w[i]);
	return -1;
}

int nvt_set_equal(const struct nvt_tpcset *a, const struct nvt_tpcset *b)
{
	return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

void nvt_set_and(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b)
{
	for (int i = 0; i < WORDS; i++)
		out->w[i] = a->w[i] & b->w[i];
}

void nvt_set_or(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b)
{
	for (int i = 0; i < WORDS; i++)
		out->w[i] = a->w[i] | b->w[i];
}

void nvt_set_andnot(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b)
{
	for (int i = 0; i < WORDS; i++)
		out->w[i] = a->w[i] & ~b->w[i];
}

/* Fails a parse with problem (and nothing more to say of it). */
static int fail(struct nvt_parse_error *err, enum nvt_parse_problem problem)
{
	if (err)
		err->problem = problem;
	return problem == NVT_PARSE_TOO_HIGH ? NVT_PARSE_RANGE : NVT_PARSE_SYNTAX;
}

/* The highest bit that the hex digits from p to end name (commas between words). */
static long highest_bit(const char *p, const char *end)
{
	long digits = 0, top = -1;

	for (; p < end; p++) {
		int d = nvt_hex_digit(*p);
		if (d < 0 || (!digits && !d))
			continue; /* a comma, or a leading zero */
		if (!digits)
			top = d >= 8 ? 3 : d >= 4 ? 2 : d >= 2 ? 1 : 0;
		digits++;
	}
	return digits ? top + 4 * (digits - 1) : -1;
}

int nvt_mask_spelled_out(const char *word)
{
	int digits = 0;

	if (!word)
		return 0;
	if (word[0] == '0' && (word[1] == 'x' || word[1] == 'X'))
		return 1;
	for (const char *p = word; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p != ',')
			return 0;
	}
	return digits > 0;
}

int nvt_parse_mask(const char *text, unsigned limit, struct nvt_tpcset *out)
{
	return nvt_parse_mask_why(text, limit, out, NULL);
}

int nvt_parse_mask_why(const char *text, unsigned limit, struct nvt_tpcset *out,
		       struct nvt_parse_error *err)
{
	struct nvt_tpcset set;
	const char *p = text, *end;
	unsigned bit = 0;
	int digits = 0;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!text || limit > NVT_MAX_TPCS)
		return fail(err, NVT_PARSE_MALFORMED);
	if (!*text)
		return fail(err, NVT_PARSE_EMPTY);
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (*p == '\0' || *p == ',')
		return fail(err, NVT_PARSE_MALFORMED);
	for (end = p; *end; end++)
		if (*end != ',' && nvt_hex_digit(*end) < 0)
			return fail(err, NVT_PARSE_MALFORMED);
	if (end[-1] == ',')
		return fail(err, NVT_PARSE_MALFORMED);

	/* Walk from the least significant digit. */
	nvt_set_clear(&set);
	for (const char *q = end - 1; q >= p; q--) {
		if (*q == ',') {
			if (q[-1] == ',')
				return fail(err, NVT_PARSE_MALFORMED);
			continue;
		}
		int v = nvt_hex_digit(*q);
		for (int b = 0; b < 4; b++, bit++) {
			if (!(v & (1 << b)))
				continue;
			if (bit >= limit) {
				if (err)
					err->highest = highest_bit(p, end);
				return fail(err, NVT_PARSE_TOO_HIGH);
			}
			nvt_set_add(&set, bit);
		}
		digits++;
	}
	if (!digits)
		return fail(err, NVT_PARSE_MALFORMED);
	*out = set;
	return NVT_PARSE_OK;
}

/* Reads a decimal number (nvt_decimal); returns 0 with *pp advanced,
 * NVT_PARSE_SYNTAX if there is none, NVT_PARSE_RANGE if it is absurdly large
 * (its digits read, *value 1000000). */
static int read_number(const char **pp, unsigned long *value)
{
	uint64_t v;
	const char *end = nvt_decimal(*pp, 1000000, &v);

	if (end) {
		*pp = end;
		*value = (unsigned long)v;
		return 0;
	}
	if (**pp < '0' || **pp > '9')
		return NVT_PARSE_SYNTAX;
	while (**pp >= '0' && **pp <= '9')
		(*pp)++; /* far beyond any TPC count */
	*value = 1000000;
	return NVT_PARSE_RANGE;
}

int nvt_parse_list(const char *text, unsigned limit, struct nvt_tpcset *out)
{
	return nvt_parse_list_why(text, limit, out, NULL);
}

/* The largest number text names, at most 99999 (-1 if none), and where it
 * is written, leading zeros off (a step after ':' is no TPC): what a message
 * about a list that names too high a value quotes, however long. */
static long highest_number(const char *text, size_t *at, size_t *at_len)
{
	long top = -1;

	*at = *at_len = 0;
	for (const char *p = text; *p;) {
		const char *q = p, *v = p;
		unsigned long n;
		size_t len;
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		read_number(&q, &n);
		len = (size_t)(q - p);
		if (p == text || p[-1] != ':') {
			while (len > 1 && *v == '0')
				v++, len--;
			if (!*at_len || len > *at_len ||
			    (len == *at_len && strncmp(v, text + *at, len) > 0)) {
				*at = (size_t)(v - text);
				*at_len = len;
				n = n > 99999 ? 99999 : n;
				top = (long)n;
			}
		}
		p = q;
	}
	return top;
}

/* A list that does not parse: its item from item, and where at it goes wrong. */
static int malformed(struct nvt_parse_error *err, const char *text, const char *item, const char *at)
{
	if (err) {
		err->word = (size_t)(item - text);
		err->word_len = strcspn(item, ",");
		err->at = (size_t)(at - text);
	}
	return fail(err, NVT_PARSE_MALFORMED);
}

int nvt_parse_list_why(const char *text, unsigned limit, struct nvt_tpcset *out,
		       struct nvt_parse_error *err)
{
	struct nvt_tpcset set;
	const char *p = text;
	int range_error = 0, rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!text || limit > NVT_MAX_TPCS)
		return fail(err, NVT_PARSE_MALFORMED);
	if (*text == '\0')
		return fail(err, NVT_PARSE_EMPTY);
	if (!strcmp(text, "all")) {
		/* What -l and -p print for a task that is not partitioned. */
		if (!limit) {
			if (err)
				err->highest = -1;
			return fail(err, NVT_PARSE_TOO_HIGH);
		}
		nvt_set_fill(out, limit);
		return NVT_PARSE_OK;
	}
	nvt_set_clear(&set);
	for (;;) {
		const char *item = p;
		unsigned long first, last, stride = 1;

		if ((rc = read_number(&p, &first)) == NVT_PARSE_SYNTAX)
			return malformed(err, text, item, p);
		range_error |= rc;
		last = first;
		if (*p == '-') {
			p++;
			if ((rc = read_number(&p, &last)) == NVT_PARSE_SYNTAX)
				return malformed(err, text, item, p);
			if (last < first) {
				if (err)
					err->first = first, err->last = last;
				return fail(err, NVT_PARSE_DOWN);
			}
			range_error |= rc;
			if (*p == ':') {
				p++;
				if ((rc = read_number(&p, &stride)))
					return malformed(err, text, item, p);
				if (stride == 0) {
					if (err)
						err->word = (size_t)(item - text),
						err->word_len = strcspn(item, ",");
					return fail(err, NVT_PARSE_ZERO_STEP);
				}
			}
		}
		for (unsigned long v = first; v <= last; v += stride) {
			if (v >= limit) {
				range_error = 1;
				break;
			}
			nvt_set_add(&set, (unsigned)v);
		}
		if (*p == '\0')
			break;
		if (*p != ',' || p[1] == '\0')
			return malformed(err, text, item, p);
		p++;
	}
	if (range_error) {
		if (err)
			err->highest = highest_number(text, &err->top, &err->top_len);
		return fail(err, NVT_PARSE_TOO_HIGH);
	}
	*out = set;
	return NVT_PARSE_OK;
}

int nvt_list_tidied(const char *text, unsigned limit, char *out, size_t len)
{
	struct nvt_tpcset set;
	size_t n = 0;

	if (!text || !len)
		return -1;
	for (const char *p = text; *p; p++) {
		char c = *p;
		if (c == ' ' || c == '\t')
			continue; /* "1-3, 6" */
		if (c == '.' && p[1] == '.') {
			c = '-'; /* "1..3" */
			p++;
		}
		if (c == ',' && (n == 0 || out[n - 1] == ','))
			continue; /* ",,", a leading comma */
		if (n + 1 >= len)
			return -1;
		out[n++] = c;
	}
	if (n && out[n - 1] == ',')
		n--; /* a comma at the end */
	out[n] = '\0';
	if (!strcmp(out, text) || nvt_parse_list(out, limit, &set) != NVT_PARSE_OK)
		return -1;
	return 0;
}

int nvt_format_mask(const struct nvt_tpcset *set, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	int top = nvt_set_highest(set);
	int ndigits = top < 0 ? 1 : top / 4 + 1;

	if (!buf || len < (size_t)ndigits + 1)
		return -1;
	for (int d = 0; d < ndigits; d++) {
		unsigned bit = (unsigned)(ndigits - 1 - d) * 4, v = 0;
		for (unsigned b = 0; b < 4; b++)
			v |= (unsigned)nvt_set_has(set, bit + b) << b;
		buf[d] = digits[v];
	}
	buf[ndigits] = '\0';
	return ndigits;
}

/* Appends text to buf at *pos; returns -1 if it does not fit. */
static int append(char *buf, size_t len, size_t *pos, const char *text)
{
	size_t n = strlen(text);
	if (*pos + n + 1 > len)
		return -1;
	memcpy(buf + *pos, text, n + 1);
	*pos += n;
	return 0;
}

static void utoa(unsigned v, char *out)
{
	char tmp[12];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
}

int nvt_format_list(const struct nvt_tpcset *set, char *buf, size_t len)
{
	size_t pos = 0;
	char num[12];

	if (!buf || len == 0)
		return -1;
	buf[0] = '\0';
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++) {
		unsigned end = t;
		if (!nvt_set_has(set, t))
			continue;
		while (end + 1 < NVT_MAX_TPCS && nvt_set_has(set, end + 1))
			end++;
		if (pos && append(buf, len, &pos, ","))
			return -1;
		utoa(t, num);
		if (append(buf, len, &pos, num))
			return -1;
		if (end > t) {
			utoa(end, num);
			if (append(buf, len, &pos, "-") || append(buf, len, &pos, num))
				return -1;
		}
		t = end;
	}
	return (int)pos;
}
