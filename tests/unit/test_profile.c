/* Unit tests: the statistics of nvtaskset --profile (src/core/profile.c).
 * SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/profile.h"

#include <math.h>

static struct nvt_profile_size size_of(unsigned tpcs, const double *v, unsigned n)
{
	struct nvt_profile_size s = {.tpcs = tpcs, .n = n};
	for (unsigned i = 0; i < n; i++)
		s.value[i] = v[i];
	return s;
}

static void test_median(void)
{
	double a[] = {3, 1, 2}, b[] = {4, 1, 3, 2}, c[] = {7};
	CHECK(nvt_median(a, 3) == 2);
	CHECK(nvt_median(b, 4) == 2.5);
	CHECK(nvt_median(c, 1) == 7);
}

static void test_summary_and_pick(void)
{
	/* Time falls with size and flattens from 33 TPCs: 33 is within 5%. */
	const double t8[] = {40, 41, 39}, t16[] = {21, 20, 22}, t33[] = {10.4, 10.3, 10.6},
		     t66[] = {10, 10.1, 9.9};
	struct nvt_profile_size s[4];
	int best;

	s[0] = size_of(66, t66, 3);
	s[1] = size_of(8, t8, 3);
	s[2] = size_of(33, t33, 3);
	s[3] = size_of(16, t16, 3);
	best = nvt_profile_summarise(s, 4, 0);
	CHECK(best == 0);
	CHECK(s[1].median == 40 && s[1].min == 39 && s[1].max == 41);
	CHECK(fabs(s[2].ratio - 1.04) < 1e-9);
	CHECK(nvt_profile_pick(s, 4, 0.05) == 2);
	CHECK(nvt_profile_pick(s, 4, 0.01) == 0);
	CHECK(nvt_profile_pick(s, 4, 1.0) == 2); /* 16 TPCs take 2.0x: not within 100% */
	CHECK(nvt_profile_pick(s, 4, 1.1) == 3);
}

static void test_failed_and_empty(void)
{
	const double t8[] = {10}, t66[] = {10};
	struct nvt_profile_size s[2];

	s[0] = size_of(8, t8, 1);
	s[1] = size_of(66, t66, 1);
	s[0].failed = 1; /* as fast, but one of its runs failed: never picked */
	CHECK(nvt_profile_summarise(s, 2, 0) == 0);
	CHECK(nvt_profile_pick(s, 2, 0.05) == 1);
	s[0].n = s[1].n = 0;
	CHECK(nvt_profile_summarise(s, 2, 0) == -1);
	CHECK(nvt_profile_pick(s, 2, 0.05) == -1);
}

static void test_higher_is_better(void)
{
	/* Throughput: 100 at 66 TPCs, 96 at 33, 50 at 16. */
	const double a[] = {100}, b[] = {96}, c[] = {50};
	struct nvt_profile_size s[3];

	s[0] = size_of(66, a, 1);
	s[1] = size_of(33, b, 1);
	s[2] = size_of(16, c, 1);
	CHECK(nvt_profile_summarise(s, 3, 1) == 0);
	CHECK(fabs(s[1].ratio - 100.0 / 96) < 1e-9);
	CHECK(nvt_profile_pick(s, 3, 0.05) == 1);
	CHECK(nvt_profile_pick(s, 3, 0.03) == 0);
}

static void test_first_number(void)
{
	double v = 0;
	CHECK(nvt_first_number("step time: 12.5 ms", &v) == 0 && v == 12.5);
	CHECK(nvt_first_number("-3e2", &v) == 0 && v == -300);
	CHECK(nvt_first_number("x=.5", &v) == 0 && v == 0.5);
	CHECK(nvt_first_number("a-b 7", &v) == 0 && v == 7);
	CHECK(nvt_first_number("no number", &v) == -1);
	CHECK(nvt_first_number("", &v) == -1);
	CHECK(nvt_first_number("inf nan", &v) == -1);
}

static void test_parse_json(void)
{
	struct nvt_profile_size s[4];
	const char *doc = "{\"version\":2,\"command\":[\"a\",\"b\\\"c\"],\"x\":{\"y\":[1,{}]},"
			  "\"sizes\":[{\"tpcs\":8,\"tpc_list\":\"0-7\",\"values\":[3,4],\"failed\":0,"
			  "\"median\":3.5,\"min\":3,\"max\":4,\"ratio\":1.75},"
			  "{\"tpcs\":66,\"values\":[],\"failed\":2}],"
			  "\"beside_hog\":[{\"tpcs\":8,\"median\":9,\"max\":10}]}";

	CHECK(nvt_profile_parse_json(doc, "sizes", s, 4) == 2);
	CHECK(s[0].tpcs == 8 && s[0].n == 1 && s[0].median == 3.5 && s[0].max == 4 && s[0].min == 3);
	CHECK(s[1].tpcs == 66 && s[1].n == 0 && s[1].failed == 2);
	CHECK(nvt_profile_parse_json(doc, "beside_hog", s, 4) == 1 && s[0].median == 9);
	CHECK(nvt_profile_parse_json(doc, "sizes", s, 1) == 1);
	CHECK(nvt_profile_parse_json(doc, "nothing", s, 4) == -1);
	CHECK(nvt_profile_parse_json("", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[{\"tpcs\":0}]}", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[{\"tpcs\":1,\"median\":1e999}]}", "sizes", s, 4) == -1);
	/* Deeper than the JSON reader goes (NVT_JSON_DEPTH): refused. */
	{
		char deep[256];
		int k = snprintf(deep, sizeof(deep), "{\"a\":");
		for (int i = 0; i < 70; i++)
			deep[k++] = '[';
		for (int i = 0; i < 70; i++)
			deep[k++] = ']';
		snprintf(deep + k, sizeof(deep) - (size_t)k, ",\"sizes\":[]}");
		CHECK(nvt_profile_parse_json(deep, "sizes", s, 4) == -1);
		deep[5 + 60] = '\0'; /* 60 deep, closed: read */
		k = 5 + 60;
		for (int i = 0; i < 60; i++)
			deep[k++] = ']';
		snprintf(deep + k, sizeof(deep) - (size_t)k, ",\"sizes\":[]}");
		CHECK(nvt_profile_parse_json(deep, "sizes", s, 4) == 0);
	}
	/* null figures (a size without a finite median) are no figures; a string is no size. */
	CHECK(nvt_profile_parse_json("{\"sizes\":[{\"tpcs\":4,\"median\":null,\"failed\":1}]}", "sizes", s, 4) == 1 &&
	      s[0].n == 0 && s[0].failed == 1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[\"4\"]}", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":{\"tpcs\":4}}", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[]} trailing", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[{\"tpcs\":4", "sizes", s, 4) == -1);
	CHECK(nvt_profile_parse_json("{\"sizes\":[]}", "sizes", s, 4) == 0);
}

static void test_needed_and_bounds(void)
{
	const double a[] = {30, 31}, b[] = {40, 45}, c[] = {100, 120};
	struct nvt_profile_size s[3];
	struct nvt_bound bound;

	s[0] = size_of(66, a, 2);
	s[1] = size_of(25, b, 2);
	s[2] = size_of(10, c, 2);
	nvt_profile_summarise(s, 3, 0);
	CHECK(nvt_bound_parse("slowdown=40%", &bound) == 0 && bound.kind == NVT_BOUND_SLOWDOWN &&
	      fabs(bound.value - 0.4) < 1e-12);
	CHECK(nvt_profile_needed(s, 3, &bound) == 1); /* 42.5 / 30.5 = 1.39 */
	CHECK(nvt_bound_parse("deadline=44ms", &bound) == 0 && bound.kind == NVT_BOUND_DEADLINE &&
	      bound.value == 44);
	CHECK(nvt_profile_needed(s, 3, &bound) == 0); /* 25 TPCs' worst run took 45 */
	CHECK(nvt_bound_parse("deadline=45", &bound) == 0 && nvt_profile_needed(s, 3, &bound) == 1);
	CHECK(nvt_bound_parse("deadline=1", &bound) == 0 && nvt_profile_needed(s, 3, &bound) == -1);
	CHECK(nvt_bound_parse("slowdown=5", &bound) == 0 && fabs(bound.value - 0.05) < 1e-12);
	CHECK(nvt_bound_parse("slowdown=-5%", &bound) == -1);
	CHECK(nvt_bound_parse("slowdown=5%%", &bound) == -1);
	CHECK(nvt_bound_parse("deadline=3s", &bound) == -1);
	CHECK(nvt_bound_parse("fast", &bound) == -1);
	CHECK(nvt_bound_parse("deadline=", &bound) == -1);
}

int main(void)
{
	test_parse_json();
	test_needed_and_bounds();
	test_median();
	test_summary_and_pick();
	test_failed_and_empty();
	test_higher_is_better();
	test_first_number();
	return CHECK_DONE();
}
