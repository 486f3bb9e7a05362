/*
 * profile.c - see profile.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

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

/* A cursor over JSON text; depth bounds recursion (hostile input). */
struct json_cur {
	const char *p;
	int depth;
};

static void ws(struct json_cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

/* Skips a string; copies up to len-1 bytes of it (no escapes kept) into out if given. */
static int json_string_at(struct json_cur *c, char *out, size_t len)
{
	size_t k = 0;

	if (*c->p != '"')
		return -1;
	for (c->p++; *c->p && *c->p != '"'; c->p++) {
		if (*c->p == '\\') {
			if (!c->p[1])
				return -1;
			c->p++;
		}
		if (out && k + 1 < len)
			out[k++] = *c->p;
	}
	if (*c->p != '"')
		return -1;
	c->p++;
	if (out && len)
		out[k] = '\0';
	return 0;
}

static int json_skip(struct json_cur *c);

static int json_skip_container(struct json_cur *c, char close)
{
	if (++c->depth > 32)
		return -1;
	c->p++;
	ws(c);
	if (*c->p == close) {
		c->p++;
		c->depth--;
		return 0;
	}
	for (;;) {
		ws(c);
		if (close == '}') {
			if (json_string_at(c, NULL, 0))
				return -1;
			ws(c);
			if (*c->p++ != ':')
				return -1;
		}
		if (json_skip(c))
			return -1;
		ws(c);
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		if (*c->p++ != close)
			return -1;
		c->depth--;
		return 0;
	}
}

static int json_skip(struct json_cur *c)
{
	ws(c);
	switch (*c->p) {
	case '{': return json_skip_container(c, '}');
	case '[': return json_skip_container(c, ']');
	case '"': return json_string_at(c, NULL, 0);
	case '\0': return -1;
	default: {
		const char *start = c->p;
		while (*c->p && !strchr(",]} \t\r\n", *c->p))
			c->p++;
		return c->p == start ? -1 : 0;
	}
	}
}

/* Reads one element of a curve: an object with numeric fields. */
static int json_size(struct json_cur *c, struct nvt_profile_size *s)
{
	char key[32];

	memset(s, 0, sizeof(*s));
	ws(c);
	if (*c->p != '{' || ++c->depth > 32)
		return -1;
	c->p++;
	for (;;) {
		ws(c);
		if (*c->p == '}') {
			c->p++;
			c->depth--;
			return 0;
		}
		if (json_string_at(c, key, sizeof(key)))
			return -1;
		ws(c);
		if (*c->p++ != ':')
			return -1;
		ws(c);
		if ((*c->p >= '0' && *c->p <= '9') || *c->p == '-') {
			char *end;
			double v = strtod(c->p, &end);
			if (end == c->p || !isfinite(v))
				return -1;
			c->p = end;
			if (!strcmp(key, "tpcs") && v >= 1 && v <= 4096 && v == (unsigned)v)
				s->tpcs = (unsigned)v;
			else if (!strcmp(key, "median")) {
				s->median = v;
				s->n = 1;
			} else if (!strcmp(key, "max"))
				s->max = v;
			else if (!strcmp(key, "min"))
				s->min = v;
			else if (!strcmp(key, "failed") && v >= 0 && v <= 1e6)
				s->failed = (unsigned)v;
		} else if (json_skip(c)) {
			return -1;
		}
		ws(c);
		if (*c->p == ',')
			c->p++;
		else if (*c->p != '}')
			return -1;
	}
}

int nvt_profile_parse_json(const char *text, const char *key, struct nvt_profile_size *sizes,
			   size_t max)
{
	struct json_cur c = {text, 0};
	char name[32];

	ws(&c);
	if (*c.p++ != '{')
		return -1;
	for (;;) {
		ws(&c);
		if (*c.p == '}')
			return -1; /* no such key */
		if (json_string_at(&c, name, sizeof(name)))
			return -1;
		ws(&c);
		if (*c.p++ != ':')
			return -1;
		ws(&c);
		if (!strcmp(name, key) && *c.p == '[')
			break;
		if (json_skip(&c))
			return -1;
		ws(&c);
		if (*c.p == ',')
			c.p++;
		else
			return -1;
	}
	c.p++;
	size_t n = 0;
	for (;;) {
		ws(&c);
		if (*c.p == ']')
			return (int)n;
		if (n == max)
			return (int)n;
		if (json_size(&c, &sizes[n]) || !sizes[n].tpcs)
			return -1;
		n++;
		ws(&c);
		if (*c.p == ',')
			c.p++;
		else if (*c.p != ']')
			return -1;
	}
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
