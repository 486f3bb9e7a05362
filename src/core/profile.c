/*
 * profile.c - see profile.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "json.h"

static void sort_values(double *v, size_t n)
{
	/* Insertion sort: at most NVT_PROFILE_MAX_ROUNDS values. */
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

double nvt_median(double *values, size_t n)
{
	sort_values(values, n);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int nvt_profile_summarise(struct nvt_profile_size *sizes, size_t n, int higher_is_better)
{
	int best = -1;

	for (size_t i = 0; i < n; i++) {
		struct nvt_profile_size *s = &sizes[i];
		double sorted[NVT_PROFILE_MAX_ROUNDS];

		s->median = s->min = s->max = s->ratio = 0;
		if (!s->n || s->n > NVT_PROFILE_MAX_ROUNDS)
			continue;
		memcpy(sorted, s->value, s->n * sizeof(double));
		s->median = nvt_median(sorted, s->n);
		s->min = sorted[0];
		s->max = sorted[s->n - 1];
		if (best < 0 || (higher_is_better ? s->median > sizes[best].median
						  : s->median < sizes[best].median))
			best = (int)i;
	}
	if (best < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct nvt_profile_size *s = &sizes[i];
		if (!s->n || s->n > NVT_PROFILE_MAX_ROUNDS)
			continue;
		if (higher_is_better)
			s->ratio = s->median > 0 ? sizes[best].median / s->median : INFINITY;
		else
			s->ratio = sizes[best].median > 0 ? s->median / sizes[best].median
							  : (s->median > 0 ? INFINITY : 1);
	}
	return best;
}

int nvt_profile_pick(const struct nvt_profile_size *sizes, size_t n, double slowdown)
{
	int pick = -1;

	for (size_t i = 0; i < n; i++) {
		const struct nvt_profile_size *s = &sizes[i];
		if (!s->n || s->failed || s->ratio > 1 + slowdown + 1e-12)
			continue;
		if (pick < 0 || s->tpcs < sizes[pick].tpcs)
			pick = (int)i;
	}
	return pick;
}

int nvt_first_number(const char *text, double *out)
{
	for (const char *p = text; *p; p++) {
		char *end;
		double v;
		int digit_next = (*p == '-' || *p == '+' || *p == '.') &&
				 ((p[1] >= '0' && p[1] <= '9') || (p[1] == '.' && p[2] >= '0' && p[2] <= '9'));
		if (!(*p >= '0' && *p <= '9') && !digit_next)
			continue;
		v = strtod(p, &end);
		if (end == p)
			continue;
		if (!isfinite(v))
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

/* ---- Reading --profile's JSON -------------------------------------------- */

/* Member key of the object at at, read as a finite number into *out if it is a
 * number: 1 if it was, 0 if it is absent or another type (null: no figure), -1
 * if it is a number out of range. */
static int size_number(const char *text, size_t len, size_t at, const char *key, double *out)
{
	long m = nvt_json_member(text, len, at, key);

	if (m < 0 || nvt_json_type(text, len, (size_t)m) != NVT_JSON_NUMBER)
		return 0;
	return nvt_json_number(text, len, (size_t)m, out) ? -1 : 1;
}

/* One element of a curve: an object with tpcs (1-4096) and numeric fields. */
static int read_size(const char *text, size_t len, size_t at, struct nvt_profile_size *s)
{
	double failed = 0;
	uint64_t v;
	long m;
	int rc;

	memset(s, 0, sizeof(*s));
	if (nvt_json_type(text, len, at) != NVT_JSON_OBJECT)
		return -1;
	m = nvt_json_member(text, len, at, "tpcs");
	if (m < 0 || nvt_json_uint(text, len, (size_t)m, 4096, &v) || !v)
		return -1;
	s->tpcs = (unsigned)v;
	if ((rc = size_number(text, len, at, "median", &s->median)) < 0 ||
	    size_number(text, len, at, "max", &s->max) < 0 ||
	    size_number(text, len, at, "min", &s->min) < 0 ||
	    size_number(text, len, at, "failed", &failed) < 0)
		return -1;
	s->n = rc == 1; /* a median given */
	if (failed >= 0 && failed <= 1e6 && failed == (unsigned)failed)
		s->failed = (unsigned)failed;
	return 0;
}

int nvt_profile_parse_json(const char *text, const char *key, struct nvt_profile_size *sizes,
			   size_t max)
{
	size_t len = strlen(text), n = 0;
	long arr;

	if (nvt_json_check(text, len))
		return -1;
	arr = nvt_json_member(text, len, nvt_json_root(text, len), key);
	if (arr < 0 || nvt_json_type(text, len, (size_t)arr) != NVT_JSON_ARRAY)
		return -1;
	for (long e = nvt_json_first(text, len, (size_t)arr); e >= 0 && n < max;
	     e = nvt_json_next(text, len, (size_t)e), n++)
		if (read_size(text, len, (size_t)e, &sizes[n]))
			return -1;
	return (int)n;
}

/* ---- Plans ---------------------------------------------------------------- */

int nvt_profile_needed(const struct nvt_profile_size *sizes, size_t n, const struct nvt_bound *bound)
{
	double best = 0;
	int pick = -1;

	for (size_t i = 0; i < n; i++)
		if (sizes[i].n && !sizes[i].failed && (best == 0 || sizes[i].median < best))
			best = sizes[i].median;
	for (size_t i = 0; i < n; i++) {
		const struct nvt_profile_size *s = &sizes[i];
		int ok;
		if (!s->n || s->failed)
			continue;
		if (bound->kind == NVT_BOUND_DEADLINE)
			ok = (s->max > 0 ? s->max : s->median) <= bound->value;
		else
			ok = best > 0 && s->median <= best * (1 + bound->value) + 1e-12;
		if (ok && (pick < 0 || s->tpcs < sizes[pick].tpcs))
			pick = (int)i;
	}
	return pick;
}

int nvt_bound_parse(const char *text, struct nvt_bound *out)
{
	const char *v;
	char *end;
	double x;

	if (!strncmp(text, "slowdown=", 9)) {
		out->kind = NVT_BOUND_SLOWDOWN;
		v = text + 9;
	} else if (!strncmp(text, "deadline=", 9)) {
		out->kind = NVT_BOUND_DEADLINE;
		v = text + 9;
	} else {
		return -1;
	}
	x = strtod(v, &end);
	if (end == v || !isfinite(x) || x < 0)
		return -1;
	if (out->kind == NVT_BOUND_SLOWDOWN) {
		if (strcmp(end, "%") && *end)
			return -1;
		x /= 100;
	} else if (strcmp(end, "ms") && *end) {
		return -1;
	}
	out->value = x;
	return 0;
}
