/*
 * test_yield.c - how a lower task yields (src/core/yield.c): the words of
 * --yield, the activity a shim publishes, and the verdict before a launch.
 * Over 500 lines on purpose: one subject, src/core/yield.c, whose cases
 * share their fixtures (periodic activity).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "core/prio.h"
#include "core/yield.h"

#include <math.h>
#include <string.h>

#define MS 1000000ull
#define US 1000ull

/* --yield default: the words without --yield (slice with no partition and no guard, client
 * otherwise), beside any other word given (nvt_prio_given). */
static void test_default_words(void)
{
	struct nvt_slot_prio yield = {0}, given;

	CHECK(nvt_yield_parse("default", &yield, NULL, 0) == 0);
	nvt_prio_given(NVT_PRIO_LOW, 0, 0, &yield, 1, &given);
	CHECK(given.yield == NVT_YIELD_SLICE && !given.flags);
	nvt_prio_given(NVT_PRIO_LOW, 0, 0, &yield, 0, &given);
	CHECK(given.yield == NVT_YIELD_DEFAULT && !given.flags);
	nvt_prio_given(NVT_PRIO_LOW, 0, 4, &yield, 1, &given);
	CHECK(given.yield == (NVT_YIELD_DEFAULT | NVT_YIELD_GUARD));
	CHECK(nvt_yield_parse("default,borrow", &yield, NULL, 0) == 0);
	nvt_prio_given(NVT_PRIO_LOW, 0, 0, &yield, 1, &given);
	CHECK(given.yield == (NVT_YIELD_SLICE | NVT_YIELD_BORROW));
}

static void test_words(void)
{
	struct nvt_slot_prio p = {0};
	char why[120] = "";
	char buf[128];

	CHECK(nvt_yield_parse("gate,bound=500", &p, why, sizeof(why)) == 0);
	CHECK(p.yield == (NVT_YIELD_GATE | NVT_YIELD_BOUND) && p.bound_us == 500 && !p.ahead_us);
	CHECK(nvt_yield_format(&p, ',', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "gate,bound=500");
	/* default: the words without --yield, by partition (nvt_prio_given gives them). */
	CHECK(nvt_yield_parse("default,duty=30", &p, why, sizeof(why)) == 0);
	CHECK(!p.yield && (p.flags & NVT_PRIOF_AUTO) && p.duty_pct == 30 && !p.bound_us);
	CHECK(!nvt_prio_yield_default_alone(&p));
	CHECK(nvt_yield_parse("default", &p, why, sizeof(why)) == 0 && nvt_prio_yield_default_alone(&p));
	CHECK(nvt_yield_parse("default,none", &p, why, sizeof(why)) == 0 && !p.yield && !p.flags);
	CHECK(nvt_yield_parse("client,duty=30", &p, why, sizeof(why)) == 0);
	CHECK(p.yield == NVT_YIELD_DEFAULT && p.duty_pct == 30 && !p.bound_us && !p.flags);
	CHECK(nvt_yield_format(&p, '+', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "client+duty=30");
	CHECK(nvt_yield_parse("protect", &p, why, sizeof(why)) == 0 && p.yield == NVT_YIELD_PROTECT);
	CHECK(nvt_yield_format(&p, ',', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "gate,bound,ahead,client");
	CHECK(nvt_yield_parse("gate,any", &p, NULL, 0) == 0 && p.yield == (NVT_YIELD_GATE | NVT_YIELD_ANY));
	CHECK(nvt_yield_format(&p, ',', buf, sizeof(buf)) > 0 && !strcmp(buf, "gate,any"));
	CHECK(nvt_yield_parse("none", &p, why, sizeof(why)) == 0 && p.yield == 0);
	CHECK(nvt_yield_format(&p, ',', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "none");
	CHECK(nvt_yield_parse("ahead=2000,borrow,guard,client", &p, why, sizeof(why)) == 0);
	CHECK(p.ahead_us == 2000 && p.yield == (NVT_YIELD_AHEAD | NVT_YIELD_BORROW | NVT_YIELD_GUARD |
						  NVT_YIELD_CLIENT));
	/* Wrong ones say why, and change nothing. */
	p.yield = NVT_YIELD_GATE;
	CHECK(nvt_yield_parse("gate,fast", &p, why, sizeof(why)) == -1 && strstr(why, "gate, bound"));
	CHECK(p.yield == NVT_YIELD_GATE);
	CHECK(nvt_yield_parse("bound=0", &p, why, sizeof(why)) == -1 && strstr(why, "bound="));
	CHECK(nvt_yield_parse("bound=1000001", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("bound=-5", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("bound=5x", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("duty=101", &p, why, sizeof(why)) == -1);
	CHECK_STR(why, "duty= takes a share of time from 1 to 100 (%)");
	CHECK(nvt_yield_parse("duty", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("gate=1", &p, why, sizeof(why)) == -1 && strstr(why, "take a value"));
	CHECK(nvt_yield_parse("", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("gate,fast", &p, why, 12) == -1 && strlen(why) == 11); /* cut to fit */
	CHECK(nvt_yield_format(&p, ',', buf, 3) == -1);
	CHECK_STR(nvt_yield_state_name(NVT_YS_GATED), "gated");
	CHECK_STR(nvt_yield_state_name(99), "?");
}

static void test_priority_text(void)
{
	struct nvt_slot_prio p = {0};
	char buf[NVT_PRIO_ENV_TEXT_MAX];

	/* Without yield=, the default words; with guard=, the agent's way too. */
	CHECK(nvt_prio_env_parse("low", &p) == 0 && p.yield == NVT_YIELD_DEFAULT);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low");
	CHECK(nvt_prio_env_parse("low,guard=9", &p) == 0);
	CHECK(p.yield == (NVT_YIELD_DEFAULT | NVT_YIELD_GUARD));
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,guard=9");
	CHECK(nvt_prio_env_parse("low,yield=gate+bound=700,duty=40", &p) == 0);
	CHECK(p.yield == (NVT_YIELD_GATE | NVT_YIELD_BOUND) && p.bound_us == 700 && p.duty_pct == 40);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,yield=gate+bound=700,duty=40");
	CHECK(nvt_prio_env_parse("low,yield=none", &p) == 0 && p.yield == 0);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,yield=none");
	/* A guard with words of its own: the agent's way too, as --guard N --yield gate gives
	 * it (nvt_prio_imply_guard), and the text says so. */
	CHECK(nvt_prio_env_parse("low,guard=9,yield=gate", &p) == 0);
	CHECK(p.yield == (NVT_YIELD_GATE | NVT_YIELD_GUARD) && p.guard == 9);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,guard=9,yield=gate+guard");
	CHECK(nvt_prio_env_parse(buf, &p) == 0 && p.yield == (NVT_YIELD_GATE | NVT_YIELD_GUARD));
	CHECK(nvt_prio_env_parse("low,guard=9,yield=none", &p) == 0 && p.yield == NVT_YIELD_GUARD);
	/* A value alone adds no word. */
	CHECK(nvt_prio_env_parse("normal,yield=gate,bound=300", &p) == 0);
	CHECK(p.yield == NVT_YIELD_GATE && p.bound_us == 300);
	CHECK(nvt_prio_env_parse("low,yield=gate+fast", &p) == -1);
	CHECK(nvt_prio_env_parse("low,bound=0", &p) == -1);
}

/* A task with requests of busy ns every period ns, n of them from t0. */
static struct nvt_slot_activity periodic(uint64_t t0, uint64_t period, uint64_t busy, int n)
{
	struct nvt_slot_activity a = {0};

	a.flags = NVT_ACT_TRACKED;
	for (int i = 0; i < n; i++) {
		nvt_act_begin(&a, t0 + (uint64_t)i * period);
		nvt_act_end(&a, t0 + (uint64_t)i * period + busy);
	}
	return a;
}

static void test_activity(void)
{
	struct nvt_slot_activity a = periodic(1000 * MS, 10 * MS, 1 * MS, 20);

	CHECK(a.begins == 20 && a.ends == 20);
	CHECK(a.period_ns == 10 * MS && a.jitter_ns == 0 && a.busy_ns == 1 * MS);
	CHECK(nvt_act_duty_pm(&a) == 100);
	CHECK(nvt_act_periodic(&a));
	/* Too few requests: nothing learnt yet. */
	a = periodic(1000 * MS, 10 * MS, 1 * MS, 3);
	CHECK(nvt_act_duty_pm(&a) == 0 && !nvt_act_periodic(&a));
	/* Gaps of 5 and 15 ms alternating: not periodic (jitter 5 ms of 10). */
	memset(&a, 0, sizeof(a));
	for (uint64_t i = 0, t = 0; i < 40; i++, t += i % 2 ? 5 * MS : 15 * MS) {
		nvt_act_begin(&a, t);
		nvt_act_end(&a, t + MS);
	}
	CHECK(!nvt_act_periodic(&a));
	CHECK(a.period_ns > 8 * MS && a.period_ns < 12 * MS);
	/* A long pause counts as four periods at most. */
	a = periodic(1000 * MS, 10 * MS, 1 * MS, 20);
	nvt_act_begin(&a, a.begin_ns + 10000 * MS);
	CHECK(a.period_ns <= 10 * MS + 40 * MS / 8);
	/* Back to back: busy all the time. */
	a = periodic(0, 1 * MS, 1 * MS, 20);
	CHECK(nvt_act_duty_pm(&a) == 1000);
	/* An end lost to a racing begin (two threads storing the record at once): the next end
	 * ends every request begun, so the task does not look busy from then on. */
	a = periodic(1000 * MS, 10 * MS, 1 * MS, 20);
	nvt_act_begin(&a, a.begin_ns + 10 * MS);
	nvt_act_begin(&a, a.begin_ns + 10 * MS); /* (its end was lost) */
	nvt_act_end(&a, a.begin_ns + MS);
	CHECK(a.begins == 22 && a.ends == 22);
}

/* A new rate is learnt from NVT_ACT_SHIFT gaps; a pause, or arrivals at random, are not one. */
static void test_rate_shift(void)
{
	/* Back to back at 0.55 ms, then one request every 5.5 ms (10 % duty): periodic again
	 * at the new period after three gaps, not after ~20. */
	struct nvt_slot_activity a = periodic(0, 550000, 550000, 40);
	uint64_t t = a.begin_ns;
	int learnt = 0;

	CHECK(nvt_act_duty_pm(&a) == 1000);
	nvt_act_end(&a, t + 550000);
	for (int i = 1; i <= 12 && !learnt; i++) {
		t += 5500000 + (i % 2 ? 20000 : 0); /* 20 us of jitter */
		nvt_act_begin(&a, t);
		nvt_act_end(&a, t + 550000);
		if (nvt_act_periodic(&a) && nvt_act_duty_pm(&a) < 120)
			learnt = i;
	}
	CHECK(learnt == NVT_ACT_SHIFT);
	CHECK(a.period_ns >= 5500000 && a.period_ns <= 5520000 && a.jitter_ns <= 10000);
	/* Down: every 10 ms, then every 2 ms. */
	a = periodic(0, 10 * MS, MS / 2, 30);
	for (int i = 0; i < NVT_ACT_SHIFT; i++)
		nvt_act_begin(&a, a.begin_ns + 2 * MS), nvt_act_end(&a, a.begin_ns + MS / 2);
	CHECK(a.period_ns == 2 * MS && a.jitter_ns == 0 && nvt_act_periodic(&a));
	/* One pause and back to the old rate: no new rate (the pause counts as 4 periods). */
	a = periodic(0, 10 * MS, MS, 30);
	nvt_act_begin(&a, a.begin_ns + 2000 * MS);
	for (int i = 0; i < 5; i++)
		nvt_act_begin(&a, a.begin_ns + 10 * MS);
	CHECK(a.period_ns > 10 * MS && a.period_ns <= 10 * MS + 40 * MS / 8);
	/* Gaps far above the period but not within a quarter of each other: no new rate
	 * from them, and (jittery) not periodic. */
	a = periodic(0, 10 * MS, MS, 30);
	{
		static const uint64_t gaps[] = {16, 30, 21, 45, 17, 33};
		for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
			nvt_act_begin(&a, a.begin_ns + gaps[i] * MS);
	}
	CHECK(!nvt_act_periodic(&a));
	/* Arrivals at random (exponential gaps, mean 5 ms): periodic under 1 % of the time. */
	{
		uint64_t x = 88172645463325252ull, at = 0;
		int periodic_seen = 0;
		memset(&a, 0, sizeof(a));
		for (int i = 0; i < 20000; i++) {
			double u;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			u = (double)(x >> 11) / 9007199254740992.0;
			at += (uint64_t)(-5e6 * log(1.0 - u)) + 1;
			nvt_act_begin(&a, at);
			nvt_act_end(&a, at + MS / 2);
			periodic_seen += i > 20 && nvt_act_periodic(&a);
		}
		printf("poisson: periodic after %d of 20000 requests\n", periodic_seen);
		CHECK(periodic_seen * 100 < 20000); /* under 1 % of the time */
	}
}

static void test_verdict(void)
{
	struct nvt_yield_cfg c;
	struct nvt_slot_prio p = {0};
	struct nvt_watched w[2];
	uint64_t wake, t;

	p.yield = NVT_YIELD_PROTECT;
	nvt_yield_cfg_of(&p, &c);
	CHECK(c.bound_ns == NVT_YIELD_BOUND_US * US && c.duty_pm == NVT_YIELD_DUTY_PCT * 10 && !c.ahead_ns);
	/* Nobody to yield to. */
	CHECK(nvt_yield_verdict(&c, w, 0, 5 * MS, 0, &wake) == NVT_YV_GO && wake == 0);

	/* A periodic task, 1 ms every 10 ms, last began at 1190 ms. */
	w[0].act = periodic(1000 * MS, 10 * MS, 1 * MS, 20);
	w[0].moved_ns = 1190 * MS;
	/* Busy (began, not ended): gate. */
	nvt_act_begin(&w[0].act, 1200 * MS);
	w[0].moved_ns = 1200 * MS;
	CHECK(nvt_yield_verdict(&c, w, 1, 1200 * MS + 300 * US, 0, &wake) == NVT_YV_GATE);
	CHECK(wake > 1200 * MS);
	/* Without gate: launch. */
	c.yield = NVT_YIELD_BOUND;
	CHECK(nvt_yield_verdict(&c, w, 1, 1200 * MS + 300 * US, 0, &wake) == NVT_YV_GO);
	c.yield = NVT_YIELD_PROTECT;
	/* Busy but still for longer than NVT_YIELD_STALE_MS: dead, or stuck: launch. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1200 * MS + (NVT_YIELD_STALE_MS + 1) * MS, 0, &wake) ==
	      NVT_YV_GO);
	nvt_act_end(&w[0].act, 1201 * MS);
	/* Idle, next request due at 1210 ms: hold from 1210 - ahead. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1205 * MS, 1 * MS, &wake) == NVT_YV_GO);
	CHECK(nvt_yield_verdict(&c, w, 1, 1209 * MS + 100 * US, 1 * MS, &wake) == NVT_YV_AHEAD);
	CHECK(wake >= 1210 * MS && wake < 1211 * MS);
	/* Its own ahead= wins over the learnt one. */
	p.ahead_us = 3000;
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_yield_verdict(&c, w, 1, 1207 * MS + 500 * US, 1 * MS, &wake) == NVT_YV_AHEAD);
	p.ahead_us = 0;
	nvt_yield_cfg_of(&p, &c);
	/* The learnt lead is at most a quarter of the period, its own ahead= half. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1207 * MS, 4 * MS, &wake) == NVT_YV_GO);
	CHECK(nvt_yield_verdict(&c, w, 1, 1208 * MS, 4 * MS, &wake) == NVT_YV_AHEAD);
	p.ahead_us = 4000;
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_yield_verdict(&c, w, 1, 1207 * MS, 0, &wake) == NVT_YV_AHEAD);
	p.ahead_us = 0;
	nvt_yield_cfg_of(&p, &c);
	/* Never held most of the period, whatever ahead says. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1203 * MS, 9 * MS, &wake) == NVT_YV_GO);
	/* A request late past its slack: the next period's is the one due. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1212 * MS, 1 * MS, &wake) == NVT_YV_GO);
	CHECK(nvt_yield_verdict(&c, w, 1, 1219 * MS + 500 * US, 1 * MS, &wake) == NVT_YV_AHEAD);
	/* Quiet for more than four periods: foresee nothing. */
	CHECK(nvt_yield_verdict(&c, w, 1, 1249 * MS + 500 * US, 1 * MS, &wake) == NVT_YV_GO);
	/* Without ahead: launch. */
	c.yield = NVT_YIELD_GATE;
	CHECK(nvt_yield_verdict(&c, w, 1, 1209 * MS + 500 * US, 1 * MS, &wake) == NVT_YV_GO);
	c.yield = NVT_YIELD_PROTECT;

	/* A task busy 80% of the time: launch beside it (duty 50%). */
	w[1].act = periodic(1000 * MS, 10 * MS, 8 * MS, 20);
	nvt_act_begin(&w[1].act, 1200 * MS);
	w[1].moved_ns = 1200 * MS;
	CHECK(nvt_yield_verdict(&c, &w[1], 1, 1201 * MS, 0, &wake) == NVT_YV_BESIDE);
	p.duty_pct = 90;
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_yield_verdict(&c, &w[1], 1, 1201 * MS, 0, &wake) == NVT_YV_GATE);
	p.duty_pct = 0;
	nvt_yield_cfg_of(&p, &c);
	/* Back to back (its averages: busy all the time), then a request after 20 ms idle:
	 * waited for at once with any, not once the averages have followed; by default
	 * its requests no longer come periodically: beside it. */
	c.yield |= NVT_YIELD_ANY;
	w[1].act = periodic(1000 * MS, MS / 2, MS / 2, 40);
	CHECK(nvt_act_duty_pm(&w[1].act) == 1000);
	nvt_act_begin(&w[1].act, w[1].act.end_ns + 20 * MS);
	w[1].moved_ns = w[1].act.begin_ns;
	CHECK(w[1].act.idle_us == 20000 && nvt_act_duty_pm(&w[1].act) > c.duty_pm);
	CHECK(nvt_yield_verdict(&c, &w[1], 1, w[1].act.begin_ns + 100 * US, 0, &wake) == NVT_YV_GATE);
	c.yield &= ~NVT_YIELD_ANY;
	CHECK(nvt_yield_verdict(&c, &w[1], 1, w[1].act.begin_ns + 100 * US, 0, &wake) == NVT_YV_BESIDE);
	c.yield |= NVT_YIELD_ANY;
	/* Back to back again (20 us between requests): beside it. */
	nvt_act_end(&w[1].act, w[1].act.begin_ns + MS / 2);
	nvt_act_begin(&w[1].act, w[1].act.end_ns + 20 * US);
	w[1].moved_ns = w[1].act.begin_ns;
	CHECK(nvt_yield_verdict(&c, &w[1], 1, w[1].act.begin_ns + 100 * US, 0, &wake) == NVT_YV_BESIDE);
	/* Two tasks: one busy and waited for wins over the one beside. */
	w[0].act = periodic(1000 * MS, 10 * MS, 1 * MS, 20);
	nvt_act_begin(&w[0].act, 1200 * MS);
	w[0].moved_ns = 1200 * MS;
	CHECK(nvt_yield_verdict(&c, w, 2, 1200 * MS + 200 * US, 0, &wake) == NVT_YV_GATE);

	/* A task whose shim does not follow its synchronisations: busy for
	 * NVT_YIELD_HOLD_MS after its launches were last seen to move. */
	memset(&w[0], 0, sizeof(w[0]));
	t = 5000 * MS;
	w[0].moved_ns = t;
	CHECK(nvt_yield_verdict(&c, w, 1, t + 1 * MS, 0, &wake) == NVT_YV_GATE);
	CHECK(nvt_yield_verdict(&c, w, 1, t + NVT_YIELD_HOLD_MS * MS + 1, 0, &wake) == NVT_YV_GO);
	/* With protect, which acts for periodic tasks only, nothing of its requests can be
	 * foreseen: beside it. */
	c.yield = NVT_YIELD_PROTECT;
	CHECK(nvt_yield_verdict(&c, w, 1, t + 1 * MS, 0, &wake) == NVT_YV_BESIDE);

	/* Requests at random (Poisson): beside them by default, gated with any. */
	w[0].act = periodic(1000 * MS, 10 * MS, 1 * MS, 20);
	t = w[0].act.end_ns;
	for (int i = 0; i < 6; i++) {
		t += (uint64_t)(i % 2 ? 3 : 17) * MS;
		nvt_act_begin(&w[0].act, t);
		nvt_act_end(&w[0].act, t + MS);
	}
	CHECK(!nvt_act_periodic(&w[0].act));
	nvt_act_begin(&w[0].act, t + 9 * MS);
	w[0].moved_ns = t + 9 * MS;
	CHECK(nvt_yield_verdict(&c, w, 1, t + 9 * MS + 100 * US, 0, &wake) == NVT_YV_BESIDE);
	c.yield |= NVT_YIELD_ANY;
	CHECK(nvt_yield_verdict(&c, w, 1, t + 9 * MS + 100 * US, 0, &wake) == NVT_YV_GATE);

	/* A request open for more than NVT_YIELD_OPEN_MS (a task that never
	 * synchronises): busy all the time, beside it even with any. */
	w[0].moved_ns = t + 9 * MS + (NVT_YIELD_OPEN_MS - 1) * MS;
	CHECK(nvt_yield_verdict(&c, w, 1, w[0].moved_ns, 0, &wake) == NVT_YV_GATE);
	w[0].moved_ns = t + 9 * MS + (NVT_YIELD_OPEN_MS + 1) * MS;
	CHECK(nvt_yield_verdict(&c, w, 1, w[0].moved_ns, 0, &wake) == NVT_YV_BESIDE);
}

static void test_after_warm_up(void)
{
	/* 30 warm-up requests of 11 ms back to back, a pause of 2 s, then 0.5 ms every
	 * 5 ms: waited for from its second request on with any, from the fourth by
	 * default (once it is periodic again), foreseen from its fourth. */
	struct nvt_slot_prio p = {0};
	struct nvt_yield_cfg c;
	struct nvt_watched w;
	uint64_t t, wake;
	int verdict;

	for (int any = 0; any < 2; any++) {
		p.yield = NVT_YIELD_PROTECT | (any ? NVT_YIELD_ANY : 0);
		nvt_yield_cfg_of(&p, &c);
		w.act = periodic(1000 * MS, 11 * MS, 11 * MS, 30);
		t = w.act.end_ns + 2000 * MS;
		for (int i = 0; i < 8; i++, t += 5 * MS) {
			nvt_act_begin(&w.act, t);
			w.moved_ns = t;
			verdict = nvt_yield_verdict(&c, &w, 1, t + 100 * US, MS, &wake);
			if (i >= (any ? 1 : 3))
				CHECK(verdict == NVT_YV_GATE);
			if (!any && i < 2)
				CHECK(verdict == NVT_YV_BESIDE);
			nvt_act_end(&w.act, t + MS / 2);
			verdict = nvt_yield_verdict(&c, &w, 1, t + 4500 * US, MS, &wake);
			if (i >= 3)
				CHECK(verdict == NVT_YV_AHEAD);
		}
		CHECK(w.act.busy_ns == MS / 2 && nvt_act_duty_pm(&w.act) <= 110);
	}
	/* Longer requests again: followed up with weight 1/8. */
	nvt_act_begin(&w.act, t);
	nvt_act_end(&w.act, t + 4 * MS + MS / 2);
	CHECK(w.act.busy_ns == MS / 2 + 4 * MS / 8);
}

static void test_may_lend(void)
{
	/* 1 ms every 10 ms, the last from 1190 to 1191 ms. */
	struct nvt_slot_activity a = periodic(1000 * MS, 10 * MS, 1 * MS, 20);

	CHECK(nvt_act_may_lend(&a, 1192 * MS, 5 * MS));      /* due at 1200 */
	CHECK(!nvt_act_may_lend(&a, 1196 * MS, 5 * MS));     /* too close to it */
	/* Late: due at 1200, not begun at 1201 ms. Borrowing now would meet it on
	 * its own TPCs; not until it begins (or has been quiet four periods). */
	CHECK(!nvt_act_may_lend(&a, 1201 * MS, MS));
	CHECK(!nvt_act_may_lend(&a, 1225 * MS, MS));
	CHECK(nvt_act_may_lend(&a, 1231 * MS, MS));
	/* Busy: never. */
	nvt_act_begin(&a, 1200 * MS);
	CHECK(!nvt_act_may_lend(&a, 1200 * MS + 500 * US, MS));
	/* Not periodic: never. */
	a = periodic(1000 * MS, 10 * MS, 1 * MS, 2);
	CHECK(!nvt_act_may_lend(&a, 1012 * MS, MS));
}

static void test_launch_avg(void)
{
	uint64_t avg = nvt_yield_launch_avg(0, 10 * US); /* a set-up kernel first */
	int n = 0;

	CHECK(avg == 10 * US);
	while (avg < 2300 * US * 9 / 10 && n < 100)
		avg = nvt_yield_launch_avg(avg, 2300 * US), n++;
	CHECK(n <= 4); /* ~20 with weight 1/8 */
	/* One short launch between long ones moves it an eighth of the way. */
	avg = nvt_yield_launch_avg(2300 * US, 100 * US);
	CHECK(avg >= 2000 * US && avg < 2300 * US);
	/* Shorter launches for good: it follows them down. */
	for (int i = 0; i < 40; i++)
		avg = nvt_yield_launch_avg(avg, 400 * US);
	CHECK(avg >= 400 * US && avg < 420 * US);
}

static void test_inflight(void)
{
	CHECK(nvt_yield_inflight(1000 * US, 0, 63) == 1);
	CHECK(nvt_yield_inflight(1000 * US, 250 * US, 63) == 4);
	CHECK(nvt_yield_inflight(1000 * US, 2500 * US, 63) == 1);
	CHECK(nvt_yield_inflight(1000 * US, 1 * US, 63) == 63);
}

/* Which tasks hold their own launches back in their shim. */
static void test_by_shim(void)
{
	CHECK(nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_GATE));
	CHECK(nvt_yield_by_shim(NVT_PRIO_NORMAL, NVT_YIELD_BOUND | NVT_YIELD_CLIENT));
	CHECK(nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_AHEAD));
	CHECK(nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_BORROW));
	CHECK(nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_PROTECT));
	/* High yields to nobody; no priority is not managed. */
	CHECK(!nvt_yield_by_shim(NVT_PRIO_HIGH, NVT_YIELD_PROTECT));
	CHECK(!nvt_yield_by_shim(NVT_PRIO_NONE, NVT_YIELD_PROTECT));
	/* MPS's client priority and the agent's guard are not the shim's ways. */
	CHECK(!nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_CLIENT | NVT_YIELD_GUARD | NVT_YIELD_ANY));
	CHECK(!nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_DEFAULT));
	CHECK(!nvt_yield_by_shim(NVT_PRIO_LOW, 0));
}

/* What -p's words do for a task, by what its start gave its shim. */
static void test_not_taken(void)
{
	struct nvt_slot_prio none = {0}, client = {.prio = NVT_PRIO_LOW, .yield = NVT_YIELD_CLIENT};
	struct nvt_slot_prio protect = {.prio = NVT_PRIO_LOW, .yield = NVT_YIELD_PROTECT};
	struct nvt_slot_prio slice = {.prio = NVT_PRIO_LOW, .yield = NVT_YIELD_SLICE};

	/* Started without a priority: its shim follows nothing, MPS's priority is fixed; only
	 * the agent's guard is taken up. */
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_LOW, NVT_YIELD_PROTECT) == NVT_YIELD_PROTECT);
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_LOW, NVT_YIELD_DEFAULT) == NVT_YIELD_CLIENT);
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_LOW, NVT_YIELD_GUARD) == 0);
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_LOW, NVT_YIELD_SLICE | NVT_YIELD_GUARD) ==
	      NVT_YIELD_SLICE);
	/* A high task holds nobody back by its words; taking the priority away loses nothing. */
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_HIGH, NVT_YIELD_DEFAULT) == 0);
	CHECK(nvt_yield_not_taken(&none, NVT_PRIO_NONE, NVT_YIELD_PROTECT) == 0);
	/* Started with client alone: its shim does not follow its launch calls either. */
	CHECK(nvt_yield_not_taken(&client, NVT_PRIO_LOW, NVT_YIELD_PROTECT) ==
	      (NVT_YIELD_GATE | NVT_YIELD_BOUND | NVT_YIELD_AHEAD));
	/* Started with protect: every shim way, and client, are taken up; slice is not. */
	CHECK(nvt_yield_not_taken(&protect, NVT_PRIO_NORMAL,
				  NVT_YIELD_PROTECT | NVT_YIELD_BORROW | NVT_YIELD_ANY) == 0);
	CHECK(nvt_yield_not_taken(&protect, NVT_PRIO_LOW, NVT_YIELD_SLICE) == NVT_YIELD_SLICE);
	CHECK(nvt_yield_not_taken(&slice, NVT_PRIO_LOW, NVT_YIELD_SLICE) == 0);
	/* What -p refuses: every word not taken up, but client on a task started with a
	 * priority (written: it takes slice away). */
	CHECK(nvt_yield_refused(&none, NVT_PRIO_LOW, NVT_YIELD_DEFAULT) == NVT_YIELD_CLIENT);
	CHECK(nvt_yield_refused(&none, NVT_PRIO_LOW, NVT_YIELD_GUARD) == 0);
	CHECK(nvt_yield_refused(&slice, NVT_PRIO_LOW, NVT_YIELD_CLIENT) == 0);
	CHECK(nvt_yield_refused(&slice, NVT_PRIO_HIGH, NVT_YIELD_CLIENT) == 0);
	CHECK(nvt_yield_refused(&slice, NVT_PRIO_LOW, NVT_YIELD_SLICE | NVT_YIELD_GATE) ==
	      NVT_YIELD_GATE);
	CHECK(nvt_yield_refused(&client, NVT_PRIO_LOW, NVT_YIELD_PROTECT) ==
	      (NVT_YIELD_GATE | NVT_YIELD_BOUND | NVT_YIELD_AHEAD));
	/* What -p --yield takes away and says: slice, from a time-sliced task only. */
	CHECK(nvt_yield_taken_away(&slice, NVT_YIELD_CLIENT) == NVT_YIELD_SLICE);
	CHECK(nvt_yield_taken_away(&slice, 0) == NVT_YIELD_SLICE);
	CHECK(nvt_yield_taken_away(&slice, NVT_YIELD_CLIENT | NVT_YIELD_SLICE) == 0);
	CHECK(nvt_yield_taken_away(&protect, NVT_YIELD_CLIENT) == 0);
	CHECK(nvt_yield_taken_away(&none, NVT_YIELD_CLIENT) == 0);
	/* A start and -p agree: the words a task was started with are taken again, whichever
	 * go together (slice with the shim's ways, guard with client). */
	{
		static const uint32_t sets[] = {
			NVT_YIELD_SLICE | NVT_YIELD_GATE, NVT_YIELD_SLICE | NVT_YIELD_PROTECT,
			NVT_YIELD_GUARD | NVT_YIELD_CLIENT, NVT_YIELD_BORROW | NVT_YIELD_ANY, 0};
		for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
			for (unsigned prio = NVT_PRIO_LOW; prio <= NVT_PRIO_HIGH; prio++) {
				struct nvt_slot_prio started = {.prio = (uint8_t)prio, .yield = sets[i]};
				CHECK(nvt_yield_refused(&started, prio, sets[i]) == 0);
			}
	}
}

/* The word of preemption: slice[=US]. */
static void test_preempt_words(void)
{
	struct nvt_slot_prio p = {0};
	struct nvt_yield_cfg c;
	char why[160] = "", buf[128];

	CHECK(nvt_yield_parse("slice", &p, why, sizeof(why)) == 0 && p.yield == NVT_YIELD_SLICE);
	CHECK(nvt_yield_format(&p, ',', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "slice");
	CHECK(nvt_yield_parse("slice=20,client", &p, why, sizeof(why)) == 0);
	CHECK(p.yield == (NVT_YIELD_SLICE | NVT_YIELD_CLIENT) && p.slice_us == 20);
	CHECK(nvt_yield_format(&p, '+', buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "client+slice=20");
	nvt_yield_cfg_of(&p, &c);
	CHECK(c.slice_us == 20);
	/* A new list starts from no value. */
	CHECK(nvt_yield_parse("slice", &p, why, sizeof(why)) == 0 && p.slice_us == 0);
	nvt_yield_cfg_of(&p, &c);
	CHECK(c.slice_us == NVT_SLICE_LOW_US);
	CHECK(nvt_yield_parse("slice=0", &p, why, sizeof(why)) == -1 && strstr(why, "slice="));
	CHECK(nvt_yield_parse("slice=1000001", &p, why, sizeof(why)) == -1);
	CHECK(nvt_yield_parse("any=3", &p, why, sizeof(why)) == -1 && strstr(why, "slice and duty"));
	CHECK(nvt_yield_parse("slcie", &p, why, sizeof(why)) == -1 && strstr(why, "slice[=US]"));
	CHECK_STR(nvt_yield_state_name(NVT_YS_SLICED), "sliced");
	/* Not a way of the launch path: its shim's thread and the driver do it. */
	CHECK(!nvt_yield_by_shim(NVT_PRIO_LOW, NVT_YIELD_SLICE));
}

/* Which timeslice a task's channel groups run at. */
static void test_timeslice(void)
{
	struct nvt_slot_prio p = {0};
	struct nvt_yield_cfg c;

	nvt_yield_parse("slice", &p, NULL, 0);
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_LOW, &c, 0) == NVT_SLICE_LOW_US);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_NORMAL, &c, 0) == NVT_SLICE_LOW_US);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_HIGH, &c, 0) == NVT_SLICE_HIGH_US);
	/* Beside higher tasks that never idle: a share. */
	CHECK(nvt_preempt_timeslice(NVT_PRIO_LOW, &c, 1) == NVT_SLICE_SHARE_US);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_HIGH, &c, 1) == NVT_SLICE_HIGH_US);
	/* A high task's slice=US lengthens its timeslice, never shortens it. */
	c.slice_us = 100000;
	CHECK(nvt_preempt_timeslice(NVT_PRIO_HIGH, &c, 0) == 100000);
	c.slice_us = 50;
	CHECK(nvt_preempt_timeslice(NVT_PRIO_HIGH, &c, 0) == NVT_SLICE_HIGH_US);
	/* Its own slice= above the share stays. */
	p.slice_us = 5000;
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_LOW, &c, 1) == 5000);
	/* Without slice, or without a priority: the driver's own. */
	nvt_yield_parse("gate,client", &p, NULL, 0);
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_LOW, &c, 0) == 0);
	nvt_yield_parse("slice", &p, NULL, 0);
	nvt_yield_cfg_of(&p, &c);
	CHECK(nvt_preempt_timeslice(NVT_PRIO_NONE, &c, 0) == 0);
}

/* Which tasks bridge their steps, and when a wait is bridged. */
static void test_bridge(void)
{
	struct nvt_slot_prio p = {0};
	struct nvt_bridge_learn l = {0};
	uint32_t c;

	nvt_yield_parse("slice", &p, NULL, 0);
	c = p.yield;
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "1", NULL) == NVT_BRIDGE_ON);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "1", "1") == NVT_BRIDGE_ON);
	CHECK(nvt_bridge_wanted(NVT_PRIO_NORMAL, c, "1", NULL) == NVT_BRIDGE_NOT_SLICED);
	CHECK(nvt_bridge_wanted(NVT_PRIO_LOW, c, "1", NULL) == NVT_BRIDGE_NOT_SLICED);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "1", "0") == NVT_BRIDGE_TURNED_OFF);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, NULL, NULL) == NVT_BRIDGE_CONNECTIONS);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "2", NULL) == NVT_BRIDGE_CONNECTIONS);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "01", NULL) == NVT_BRIDGE_CONNECTIONS);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, c, "1", "on") == NVT_BRIDGE_BAD_WORD);
	CHECK(nvt_bridge_on(NVT_BRIDGE_ON) && nvt_bridge_on(NVT_BRIDGE_BAD_WORD));
	CHECK(!nvt_bridge_on(NVT_BRIDGE_TURNED_OFF) && !nvt_bridge_on(NVT_BRIDGE_CONNECTIONS) &&
	      !nvt_bridge_on(NVT_BRIDGE_NOT_SLICED));
	nvt_yield_parse("client", &p, NULL, 0);
	CHECK(nvt_bridge_wanted(NVT_PRIO_HIGH, p.yield, "1", NULL) == NVT_BRIDGE_NOT_SLICED);
	/* The first wait is bridged, with the whole linger; then as the gaps say: one long gap turns
	 * it off, steps that follow at once turn it back on within a few waits. */
	CHECK(nvt_bridge_linger_us(&l) == NVT_BRIDGE_LINGER_US);
	nvt_bridge_gap(&l, 5 * MS);
	CHECK(nvt_bridge_linger_us(&l) == 0 && l.share[NVT_BRIDGE_GAPS - 1] == NVT_BRIDGE_ONE);
	int n = 0;
	while (nvt_bridge_linger_us(&l) < NVT_BRIDGE_LINGER_US && n < 100) {
		nvt_bridge_gap(&l, 20 * US);
		n++;
		CHECK(n >= 2 || nvt_bridge_linger_us(&l) == 0);
	}
	CHECK(n >= 4 && n <= 8);
	/* Token by token: 7 of 8 waits followed at once (or after a slow host's 80 us), the 8th by
	 * the next request's arrival: the whole linger at every wait. */
	for (int i = 0; i < 800; i++) {
		nvt_bridge_gap(&l, i % 8 == 7 ? 10 * MS : (i / 400 ? 80 : 30) * US);
		if (i % 400 >= 100)
			CHECK(nvt_bridge_linger_us(&l) == NVT_BRIDGE_LINGER_US);
	}
	/* One step a request: a fifth of the requests queued (the next launch 20 us after the
	 * wait), the rest arriving 2 ms later: a short linger catches the queued ones at no more
	 * than the switches cost the lower task; a tenth queued: 20-30 us; a twentieth mostly none, or
	 * requests that never queue (periodic), and the queued ones 60 us apart: none. */
	/* Each: one request in .every queued; the moving averages swing, so the linger takes
	 * .most at most waits and .other at the others. */
	struct {
		int every;
		uint32_t most, other;
	} q[] = {{5, 50, 70}, {10, 20, 30}, {20, 0, 20}, {1000, 0, 0}};
	for (int k = 0; k < 4; k++) {
		int most = 0, other = 0;
		for (int i = 0; i < 400; i++) {
			nvt_bridge_gap(&l, i % q[k].every ? 2 * MS : 20 * US);
			uint32_t got = nvt_bridge_linger_us(&l);
			if (i < 100)
				continue;
			CHECK(got == q[k].most || got == q[k].other);
			most += got == q[k].most;
			other += got != q[k].most;
		}
		CHECK(most > other);
	}
	for (int i = 0; i < 400; i++)
		nvt_bridge_gap(&l, i % 5 ? 2 * MS : 60 * US);
	CHECK(nvt_bridge_linger_us(&l) == 0);
	/* A service's steps while its host is slow: 3 gaps in 5 of 150 us, the others long. The
	 * expected cost alone would not bridge them; half or more within the linger keeps all of
	 * it. */
	for (int i = 0; i < 400; i++) {
		nvt_bridge_gap(&l, i % 5 < 2 ? 2 * MS : 150 * US);
		if (i >= 100)
			CHECK(nvt_bridge_linger_us(&l) == NVT_BRIDGE_LINGER_US);
	}
	/* Each gap counts in the range up to its bound; a gap longer than the linger in the last. */
	CHECK(l.waits == (uint32_t)(801 + n + 2400));
	uint64_t bounds[] = {20, 30, 40, 50, 70, 100, 150, 200, NVT_BRIDGE_LINGER_US};
	for (int r = 0; r < NVT_BRIDGE_GAPS - 1; r++) {
		struct nvt_bridge_learn one = {{0}, 0, 0};
		nvt_bridge_gap(&one, bounds[r] * US);
		CHECK(one.share[r] == NVT_BRIDGE_ONE && one.waits == 1);
		nvt_bridge_gap(&one, bounds[r] * US + 1);
		CHECK(one.share[r + 1] == NVT_BRIDGE_ONE / 16 && one.share[r] == NVT_BRIDGE_ONE - NVT_BRIDGE_ONE / 16);
	}
	/* Gaps of the linger are within it, longer ones not. */
	for (int i = 0; i < 100; i++)
		nvt_bridge_gap(&l, (uint64_t)NVT_BRIDGE_LINGER_US * US + 1);
	CHECK(nvt_bridge_linger_us(&l) == 0);
	for (int i = 0; i < 100; i++)
		nvt_bridge_gap(&l, (uint64_t)NVT_BRIDGE_LINGER_US * US);
	CHECK(nvt_bridge_linger_us(&l) == NVT_BRIDGE_LINGER_US);
	/* A tie counts as paid for: 5000 of 70000 caught at 20 us cost 5000 x 40 + 65000 x 320,
	 * the switches 70000 x 300. Learnt from, with every share 0 (a copy read half-way): none. */
	struct nvt_bridge_learn tie = {{5000, 0, 0, 0, 0, 0, 0, 0, 0, 65000}, 0, 5}, empty = {{0}, 0, 1};
	CHECK(nvt_bridge_linger_us(&tie) == 20 && nvt_bridge_linger_us(&empty) == 0);
	tie.share[0] = 4999;
	CHECK(nvt_bridge_linger_us(&tie) == 0);
	/* A wait after a wait (no launch between) is a long gap. */
	for (int i = 0; i < 100; i++)
		nvt_bridge_gap(&l, UINT64_MAX);
	CHECK(nvt_bridge_linger_us(&l) == 0 && l.share[NVT_BRIDGE_GAPS - 1] > NVT_BRIDGE_ONE - 256);
}

/* Held steps: each way measured, the better (by the medians) taken, the other tried. Runs n
 * bridges from h, each step taking rel_us released and held_us held (plus spike_us on every 29th
 * step); each step is learnt from, as in the shim, once the next bridge was decided (the step
 * ends at the wait that queues the next bridge). Returns how many were held. */
struct hold_pending {
	int on, way;
	uint64_t ns;
};

static int hold_run(struct nvt_bridge_hold *h, struct hold_pending *p, int n, uint32_t rel_us, uint32_t held_us,
		    uint32_t spike_us)
{
	int held = 0, learn;

	for (int i = 0; i < n; i++) {
		int way = nvt_bridge_hold_next(h, NVT_BRIDGE_HOLD_LEARN, &learn);
		if (p->on)
			nvt_bridge_hold_learn(h, p->way, p->ns);
		held += way;
		p->on = learn;
		p->way = way;
		p->ns = ((uint64_t)(way ? held_us : rel_us) + (i % 29 == 28 ? spike_us : 0)) * US;
	}
	return held;
}

static void test_bridge_hold(void)
{
	struct nvt_bridge_hold h = {{{0}}, {0}, 0, 0, 0, 0, 0, 0}, f = h;
	struct hold_pending p = {0, 0, 0};
	int held, learn;

	CHECK(nvt_bridge_hold_mode(NULL) == NVT_BRIDGE_HOLD_LEARN);
	CHECK(nvt_bridge_hold_mode("0") == NVT_BRIDGE_HOLD_NEVER && nvt_bridge_hold_mode("1") == NVT_BRIDGE_HOLD_ALWAYS);
	CHECK(nvt_bridge_hold_mode("") == -1 && nvt_bridge_hold_mode("yes") == -1 && nvt_bridge_hold_mode("01") == -1);
	/* Fixed ways do not learn or try. */
	for (int i = 0; i < 100; i++) {
		CHECK(!nvt_bridge_hold_next(&f, NVT_BRIDGE_HOLD_NEVER, &learn) && !learn);
		CHECK(nvt_bridge_hold_next(&f, NVT_BRIDGE_HOLD_ALWAYS, &learn) && !learn);
	}
	/* Nothing learnt: the first NVT_BRIDGE_HOLD_SKIP bridges released, their steps not learnt
	 * from; then the ways alternate, whatever was measured... */
	for (int i = 0; i < NVT_BRIDGE_HOLD_SKIP; i++)
		CHECK(nvt_bridge_hold_next(&h, NVT_BRIDGE_HOLD_LEARN, &learn) == 0 && !learn);
	for (int i = 0; i < 2 * NVT_BRIDGE_HOLD_FIRST; i++)
		CHECK(nvt_bridge_hold_next(&h, NVT_BRIDGE_HOLD_LEARN, &learn) == (i & 1) && learn);
	/* ... then, while a way was measured fewer than NVT_BRIDGE_HOLD_FIRST times, that one. */
	CHECK(nvt_bridge_hold_next(&h, NVT_BRIDGE_HOLD_LEARN, &learn) == 0);
	for (int i = 0; i < NVT_BRIDGE_HOLD_FIRST; i++)
		nvt_bridge_hold_learn(&h, 1, 100 * US);
	CHECK(nvt_bridge_hold_next(&h, NVT_BRIDGE_HOLD_LEARN, &learn) == 0);
	for (int i = 0; i < NVT_BRIDGE_HOLD_FIRST; i++)
		nvt_bridge_hold_learn(&h, 0, 100 * US);
	/* Then the better, equal ones released, the other tried after NVT_BRIDGE_HOLD_TRY / 2
	 * bridges, then twice as far: 64 bridges, tries at the 9th and the 41st. */
	h.bridges = NVT_BRIDGE_HOLD_SKIP + 2 * NVT_BRIDGE_HOLD_FIRST + 2;
	held = hold_run(&h, &p, 64, 100, 100, 0);
	CHECK(held == 2 && h.period == 4 * NVT_BRIDGE_HOLD_TRY);
	/* Alone, a held step costs its kernels after its host (70 us more than released, not
	 * NVT_BRIDGE_HOLD_FAR_US): released, the tries ever further apart, up to
	 * NVT_BRIDGE_HOLD_TRY_MAX (64 to 1024: 5 more in 2000 bridges). */
	held = hold_run(&h, &p, 2000, 100, 170, 0);
	CHECK(held == 5 && h.period == NVT_BRIDGE_HOLD_TRY_MAX);
	/* A steady released way: no try for hundreds of bridges; steps that change (their median
	 * moves by an eighth) start the tries again within a few bridges. */
	if (h.left < 100)
		hold_run(&h, &p, (int)h.left + 1, 100, 170, 0);
	CHECK(h.left >= 100 && hold_run(&h, &p, 60, 100, 170, 0) == 0);
	CHECK(hold_run(&h, &p, 3 + NVT_BRIDGE_HOLD_TRY + 4, 130, 170, 0) == 1 && h.period == 2 * NVT_BRIDGE_HOLD_TRY);
	/* Beside a batch a released step pays the switches (550 us), a held one not (170): the
	 * released median shows it at once, so held within a few bridges (no try needed); then
	 * the released way tried from NVT_BRIDGE_HOLD_TRY_SLOW / 2 bridges on, ever further. */
	held = hold_run(&h, &p, 16, 550, 170, 0);
	CHECK(held >= 16 - 4 && held < 16);
	held = hold_run(&h, &p, 2000, 550, 170, 0);
	CHECK(held >= 2000 - 7 && held <= 2000 - 5);
	CHECK(nvt_bridge_hold_median(&h, 1) == 170 && nvt_bridge_hold_median(&h, 0) == 550);
	/* The batch gone: held steps take what they took, so only the next try shows it (at most
	 * NVT_BRIDGE_HOLD_TRY_MAX bridges on); it beats the held median and is tried again: back
	 * to released, then tried from NVT_BRIDGE_HOLD_TRY / 2 bridges on again. */
	held = hold_run(&h, &p, NVT_BRIDGE_HOLD_TRY_MAX + 8, 100, 170, 0);
	CHECK(held >= 8 && held <= NVT_BRIDGE_HOLD_TRY_MAX + 3);
	CHECK(!h.best && hold_run(&h, &p, 64, 100, 170, 0) <= 2);
	/* Held, the way stays held while released steps do not beat held ones by the margin
	 * (a host slow for a while: 520 released against 500 held), and turns where they do. */
	struct nvt_bridge_hold y = {{{0}}, {0}, 0, 0, 0, 0, 0, 0};
	struct hold_pending py = {0, 0, 0};
	hold_run(&y, &py, 200, 550, 400, 0);
	CHECK(y.best == 1 && hold_run(&y, &py, 400, 520, 500, 0) >= 394);
	hold_run(&y, &py, 300, 450, 500, 0);
	CHECK(y.best == 0 && hold_run(&y, &py, 16, 450, 500, 0) <= 1);
	/* Turned between close medians (held 930 against 1000: by a sixteenth, not an eighth), the
	 * tries start again too: the released way tried within NVT_BRIDGE_HOLD_TRY + 1 bridges. */
	struct nvt_bridge_hold c = {{{0}}, {0}, 0, 0, 0, 0, 0, 0};
	struct hold_pending pc = {0, 0, 0};
	hold_run(&c, &pc, 2000, 1000, 1100, 0);
	CHECK(!c.best && c.period == NVT_BRIDGE_HOLD_TRY_MAX);
	int k = 0, since = 0;
	while (c.best != 1 && k++ < 2 * NVT_BRIDGE_HOLD_TRY_MAX)
		hold_run(&c, &pc, 1, 1000, 930, 0);
	while (hold_run(&c, &pc, 1, 1000, 930, 0) && since < 2 * NVT_BRIDGE_HOLD_TRY_MAX)
		since++;
	CHECK(c.best == 1 && since <= NVT_BRIDGE_HOLD_TRY);
	/* A better way's median that moves at every bridge (released steps of 100 and 130 us in
	 * turn) does not put the tries off: held steps that become 40 us are held within a period
	 * or two. */
	struct nvt_bridge_hold alt = {{{0}}, {0}, 0, 0, 0, 0, 0, 0};
	int on = 0, pway = 0, alt_held = 0;
	uint64_t pns = 0;
	for (int i = 0; i < 400; i++) {
		int way = nvt_bridge_hold_next(&alt, NVT_BRIDGE_HOLD_LEARN, &learn);
		if (on)
			nvt_bridge_hold_learn(&alt, pway, pns);
		on = learn;
		pway = way;
		pns = (uint64_t)(way ? (i < 100 ? 300 : 40) : (i % 2 ? 100 : 130)) * US;
		alt_held += i >= 200 && way;
	}
	CHECK(alt_held >= 195);
	/* Learnt from its start, such a task holds from its fourteenth bridge or so. */
	struct nvt_bridge_hold fresh = {{{0}}, {0}, 0, 0, 0, 0, 0, 0};
	struct hold_pending fp = {0, 0, 0};
	held = hold_run(&fresh, &fp, 64, 550, 170, 0);
	CHECK(held >= 64 - NVT_BRIDGE_HOLD_SKIP - 2 * NVT_BRIDGE_HOLD_FIRST - 2 && held <= 64 - NVT_BRIDGE_HOLD_SKIP);
	/* Gains under NVT_BRIDGE_HOLD_GAIN_US or a sixteenth do not turn the way; spikes (one step
	 * in 29 slow by 2 ms, either way) neither; a gain of both does (an eager step whose host
	 * outlasts the linger: 752 us held against 829 released, H100). */
	struct nvt_bridge_hold g1 = {{{0}}, {0}, 0, 0, 0, 0, 0, 0}, g2 = g1, g3 = g1, g4 = g1;
	struct hold_pending p1 = {0, 0, 0}, p2 = p1, p3 = p1, p4 = p1;
	CHECK(hold_run(&g1, &p1, 320, 100, 85, 2000) <= NVT_BRIDGE_HOLD_FIRST + 1 + 320 / NVT_BRIDGE_HOLD_TRY);
	CHECK(hold_run(&g2, &p2, 320, 1000, 945, 2000) <= NVT_BRIDGE_HOLD_FIRST + 1 + 320 / NVT_BRIDGE_HOLD_TRY);
	CHECK(hold_run(&g3, &p3, 320, 300, 250, 2000) > 320 * 3 / 4);
	CHECK(hold_run(&g4, &p4, 320, 829, 752, 2000) > 320 * 3 / 4);
	/* Steps count up to NVT_BRIDGE_HOLD_MAX_US; the ring keeps the last NVT_BRIDGE_HOLD_LAST. */
	struct nvt_bridge_hold r = {{{0}}, {0}, 0, 0, 0, 0, 0, 0};
	CHECK(nvt_bridge_hold_median(&r, 0) == 0);
	for (uint32_t i = 1; i <= 3 * NVT_BRIDGE_HOLD_LAST; i++)
		nvt_bridge_hold_learn(&r, 0, (uint64_t)i * US);
	CHECK(nvt_bridge_hold_median(&r, 0) == 2 * NVT_BRIDGE_HOLD_LAST + 1 + NVT_BRIDGE_HOLD_LAST / 2);
	nvt_bridge_hold_learn(&r, 1, UINT64_MAX);
	CHECK(nvt_bridge_hold_median(&r, 1) == NVT_BRIDGE_HOLD_MAX_US && r.n[1] == 1);
}

/* Held steps chained (core/yield.h): a new bridge every NVT_BRIDGE_REARM_US within the held
 * span while that much of it is left; past it, only at a request's first launch. */
static void test_bridge_rearm(void)
{
	const uint64_t us = 1000, span = NVT_BRIDGE_HELD_SPAN_US * us, every = NVT_BRIDGE_REARM_US * us;
	const uint64_t t0 = 1000000 * us, a = t0 + 2 * every; /* the step began at t0, last armed at a */

	/* Too soon after the step began or after the last bridge: none. */
	CHECK(nvt_bridge_rearm(t0, t0, t0, t0 + every - 1) == 0);
	CHECK(nvt_bridge_rearm(t0, a, a + 10 * us, a + every - 1) == 0);
	/* Due: the rest of the step's span. */
	CHECK(nvt_bridge_rearm(t0, t0, t0, t0 + every) == span - every);
	CHECK(nvt_bridge_rearm(t0, a, a + 10 * us, a + every) == span - 3 * every);
	/* Less than NVT_BRIDGE_REARM_US of the span left: none. */
	CHECK(nvt_bridge_rearm(t0, t0 + span - 3 * every, t0, t0 + span - every + 1) == 0);
	CHECK(nvt_bridge_rearm(t0, t0 + span - 3 * every, t0, t0 + span - 1) == 0);
	CHECK(nvt_bridge_rearm(t0, t0 + span - 3 * every, t0, t0 + span - every) == every);
	/* Past the span: a step that launched since its wait returned goes on unheld, however slow
	 * its host... */
	CHECK(nvt_bridge_rearm(t0, t0 + span - every, t0 + span, t0 + span + 80 * us) == 0);
	CHECK(nvt_bridge_rearm(t0, t0, t0 + 1, t0 + 5 * span) == 0);
	/* ... the first launch after the wait (a request's first step) starts a chain; one after
	 * a chain that began at its launch before (a host slower than the span) does not. */
	CHECK(nvt_bridge_rearm(t0, t0, t0 - 1, t0 + span) == span);
	CHECK(nvt_bridge_rearm(t0, t0 + NVT_BRIDGE_CHAIN_FIRST_US * us, t0, t0 + span) == 0);
	CHECK(nvt_bridge_rearm(t0, t0, t0 - 7 * us, t0 + 10 * span) == span);
	CHECK(nvt_bridge_rearm(t0, t0, 0, t0 + 10 * span) == span);
	/* A clock read before the times it is compared with (a chain not to be chained again
	 * before its switch-in: armed in the future): none. */
	CHECK(nvt_bridge_rearm(t0, t0, t0, t0 - 1) == 0);
	CHECK(nvt_bridge_rearm(t0, t0 + NVT_BRIDGE_CHAIN_FIRST_US * us, t0, t0 + every) == 0);
	CHECK(nvt_bridge_rearm(t0, t0 + NVT_BRIDGE_CHAIN_FIRST_US * us, t0, t0 + NVT_BRIDGE_CHAIN_FIRST_US * us + every) ==
	      span - NVT_BRIDGE_CHAIN_FIRST_US * us - every);
}

/* Held steps chained by default once seen (core/yield.h): the word, and the steps that count. */
/* Bridged context synchronisations stop after four waits that took their bridges in, in a row,
 * or one in eight for long; one in nine never stops them; other waits alone never. */
static int ctx_stops(int every_kth_taken, int waits)
{
	struct nvt_bridge_ctx c = {0};

	for (int k = 0; k < waits; k++)
		if (nvt_bridge_ctx_seen(&c, k % every_kth_taken == 0))
			return 1;
	return 0;
}

static void test_bridge_ctx_seen(void)
{
	struct nvt_bridge_ctx c = {0};
	int k, off = 0;

	for (k = 0; k < 100000 && !off; k++)
		off = nvt_bridge_ctx_seen(&c, 0);
	CHECK(!off && c.score == 0 && nvt_bridge_ctx_may(&c));
	for (k = 0; k < 3; k++)
		CHECK(nvt_bridge_ctx_seen(&c, 1) == 0);
	CHECK(nvt_bridge_ctx_seen(&c, 1) == 1 && c.off && c.stops == 1);
	/* Stopped, other waits do not start them again; only waits skipped do. */
	CHECK(nvt_bridge_ctx_seen(&c, 0) == 1 && nvt_bridge_ctx_seen(&c, 1) == 1 && c.stops == 1);
	CHECK(!ctx_stops(9, 9 * 10000));
	CHECK(ctx_stops(8, 8 * 1000));
}

/* Stopped, they are tried again after NVT_BRIDGE_CTX_RETRY skipped waits, twice as many after
 * each stop up to the doublings' bound; a try that meets one long wait stops again at once, one
 * of short waits goes on. */
static void test_bridge_ctx_retry(void)
{
	struct nvt_bridge_ctx c = {0};
	uint32_t want = NVT_BRIDGE_CTX_RETRY;

	for (int k = 0; k < 4; k++)
		nvt_bridge_ctx_seen(&c, 1);
	CHECK(c.off);
	for (int stop = 1; stop <= NVT_BRIDGE_CTX_RETRY_DOUBLINGS + 3; stop++) {
		uint32_t skipped = 0;
		CHECK(nvt_bridge_ctx_pause(&c) == want);
		while (!nvt_bridge_ctx_may(&c) && skipped < 1u << 30)
			skipped++;
		CHECK(skipped == want - 1 && !c.off);
		CHECK(nvt_bridge_ctx_may(&c)); /* on: no wait skipped */
		CHECK(nvt_bridge_ctx_seen(&c, 1) == 1 && c.stops == (uint32_t)stop + 1);
		if (stop < NVT_BRIDGE_CTX_RETRY_DOUBLINGS + 1)
			want *= 2;
	}
	/* A try whose waits did not take their bridges in stays on, and forgets the stop's score. */
	while (!nvt_bridge_ctx_may(&c))
		;
	for (int k = 0; k < 1000; k++)
		CHECK(nvt_bridge_ctx_seen(&c, 0) == 0);
	CHECK(c.score == 0);
}

/* A waiting thread that may run on one CPU has its context synchronisations not bridged (the
 * shim's thread would take the CPU from it); on two or more, bridged. */
static void test_bridge_ctx_cpus(void)
{
	CHECK(!nvt_bridge_ctx_cpus_enough(0) && !nvt_bridge_ctx_cpus_enough(1));
	CHECK(nvt_bridge_ctx_cpus_enough(2) && nvt_bridge_ctx_cpus_enough(1024));
}

/* Bridged for a pause's worth of waits after a try, they count one stop less: the pause after
 * the next stop is the shorter one again. */
static void test_bridge_ctx_stops_decay(void)
{
	struct nvt_bridge_ctx c = {0};

	for (int stop = 0; stop < 2; stop++) {
		for (int k = 0; k < 4; k++)
			nvt_bridge_ctx_seen(&c, 1);
		while (!nvt_bridge_ctx_may(&c))
			;
	}
	CHECK(c.stops == 2 && nvt_bridge_ctx_pause(&c) == 2 * NVT_BRIDGE_CTX_RETRY);
	for (uint32_t k = 0; k + 1 < 2 * NVT_BRIDGE_CTX_RETRY; k++)
		CHECK(nvt_bridge_ctx_seen(&c, 0) == 0);
	CHECK(c.stops == 2);
	CHECK(nvt_bridge_ctx_seen(&c, 0) == 0 && c.stops == 1);
	for (uint32_t k = 0; k < NVT_BRIDGE_CTX_RETRY; k++)
		CHECK(nvt_bridge_ctx_seen(&c, 0) == 0);
	CHECK(c.stops == 0);
	for (int k = 0; k < 1000; k++)
		nvt_bridge_ctx_seen(&c, 0);
	CHECK(c.stops == 0 && !c.off);
}

/* The GPU's clock told from the host's by the least of (GPU saw the return - host returned) and
 * (bridge started - host queued), allowed to grow by the drift a sample; a capped bridge was
 * taken in only if its wait returned within the prompt bound of its end, where the clock had a
 * tight sample lately (the record alone before, or with loose samples only). */
static void test_bridge_clock(void)
{
	const uint64_t gpu0 = 1760000000000000000ull, host0 = 5000000000ull;
	const int64_t off = (int64_t)(gpu0 - host0);
	struct nvt_bridge_clock c = {0};

	CHECK(nvt_bridge_ctx_taken_in(&c, 1, gpu0, host0 + 99000000) == 1);
	CHECK(nvt_bridge_ctx_taken_in(&c, 0, 0, host0) == 0);
	nvt_bridge_clock_sample(&c, gpu0 + 3000, host0, 1);
	CHECK(c.known && c.off_ns == off + 3000);
	nvt_bridge_clock_sample(&c, gpu0 + 1000 + 1000000, host0 + 1000000, 1);
	CHECK(c.off_ns == off + 1000);
	/* A slow sample (the kernel saw it late) 1 ms later moves it up by the drift only. */
	nvt_bridge_clock_sample(&c, gpu0 + 500000 + 2000000, host0 + 2000000, 0);
	CHECK(c.off_ns == off + 1000 + NVT_BRIDGE_CLOCK_DRIFT_NS + 1000000 / 1000000 * NVT_BRIDGE_CLOCK_PPM);
	/* A bridge that ended at gpu0 + 10 ms (host0 + 10 ms in the host's clock, about). */
	const uint64_t end = gpu0 + 10000000;
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 10000000 + 30000) == 1);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 10000000 - 5000) == 1);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 10000000 + (uint64_t)NVT_BRIDGE_CTX_PROMPT_US * 1000 - 5000) == 1);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 10000000 + (uint64_t)NVT_BRIDGE_CTX_PROMPT_US * 1000 + 5000) == 0);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 17000000) == 0);
	CHECK(nvt_bridge_ctx_taken_in(&c, 0, end, host0 + 10000000) == 0);
	/* Too many loose samples since the last tight one (one above): the record alone. */
	for (int k = 1; k < NVT_BRIDGE_CLOCK_FRESH; k++)
		nvt_bridge_clock_sample(&c, gpu0 + 3000000, host0, 0);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 17000000) == 0);
	nvt_bridge_clock_sample(&c, gpu0 + 3000000, host0, 0);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, end, host0 + 17000000) == 1);
}

/* The GPU's clock 50 parts per million faster than the host's, tight samples a second apart for
 * 200 s (10 ms of drift): the clock follows; a bridge that ended 3 ms before its wait returned
 * was not taken in, one that ended 20 us before was. A sample a day later grows it at most
 * NVT_BRIDGE_CLOCK_GROW_NS. */
static void test_bridge_clock_drift(void)
{
	const uint64_t gpu0 = 1760000000000000000ull, host0 = 5000000000ull, second = 1000000000ull;
	struct nvt_bridge_clock c = {0};
	uint64_t h = host0, g = gpu0;

	for (int k = 0; k < 200; k++, h += second, g += second + second / 1000000 * 50)
		nvt_bridge_clock_sample(&c, g + 1000, h, 1);
	CHECK(c.off_ns >= (int64_t)(g - h) - 100000 && c.off_ns <= (int64_t)(g - h) + 1000);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, g, h + 3000000) == 0);
	CHECK(nvt_bridge_ctx_taken_in(&c, 1, g, h + 20000) == 1);
	int64_t before = c.off_ns;
	nvt_bridge_clock_sample(&c, g + 86400 * second + 50000000, h + 86400 * second, 0);
	CHECK(c.off_ns == before + NVT_BRIDGE_CLOCK_GROW_NS);
}

/* A driver that takes every bridge in, behind 2 ms of a step's work each: the bridges start 2 ms
 * after their queueing (loose samples), never see a return (no tight one), and each wait returns
 * 15 us after its bridge's end: every one is taken in. */
static void test_bridge_clock_loose_only(void)
{
	const uint64_t gpu0 = 1760000000000000000ull, host0 = 5000000000ull;
	const uint64_t cap = (uint64_t)NVT_BRIDGE_CTX_CAP_US * 1000;
	struct nvt_bridge_clock c = {0};
	int taken = 0;

	for (int k = 0; k < 100; k++) {
		uint64_t q = host0 + (uint64_t)k * 10000000, start = gpu0 + (q - host0) + 2000000;
		nvt_bridge_clock_sample(&c, start, q, 0);
		taken += nvt_bridge_ctx_taken_in(&c, 1, start + cap, q + 2000000 + cap + 15000);
	}
	CHECK(taken == 100);
}

static void test_bridge_chain_seen(void)
{
	const uint64_t every = NVT_BRIDGE_REARM_US * 1000;

	CHECK(nvt_bridge_chain_mode(NULL) == NVT_BRIDGE_CHAIN_SEEN);
	CHECK(nvt_bridge_chain_mode("0") == NVT_BRIDGE_CHAIN_NEVER && nvt_bridge_chain_mode("1") == NVT_BRIDGE_CHAIN_ALWAYS);
	CHECK(nvt_bridge_chain_mode("") == -1 && nvt_bridge_chain_mode("yes") == -1 && nvt_bridge_chain_mode("10") == -1);
	/* Enough launches behind the held bridge and a host long enough for a chain: it counts. */
	CHECK(nvt_bridge_chain_step(NVT_BRIDGE_CHAIN_LAUNCHES, every) == 1);
	CHECK(nvt_bridge_chain_step(40, 10 * every) == 1);
	/* Fewer launches (a step that replays a graph), or a host too quick to be chained: not. */
	CHECK(nvt_bridge_chain_step(NVT_BRIDGE_CHAIN_LAUNCHES - 1, 10 * every) == 0);
	CHECK(nvt_bridge_chain_step(0, 10 * every) == 0);
	CHECK(nvt_bridge_chain_step(40, every - 1) == 0);
	CHECK(nvt_bridge_chain_step(UINT32_MAX, 0) == 0);
	/* Followed once 28 of a window of 32 held steps were such: every step, at the 32nd; 27 of a
	 * window, never; not on a set-up's burst of 20 followed by a graph's replays. */
	struct nvt_bridge_chain c = {0};
	int due = 0, k = 0;
	while (!due && k < 1000)
		due = nvt_bridge_chain_seen(&c, 1), k++;
	CHECK(due && k == NVT_BRIDGE_CHAIN_WINDOW && c.steps == 32 && c.best == 32 && c.in_window == 0);
	memset(&c, 0, sizeof(c));
	for (k = 0, due = 0; k < 32 * 100; k++)
		due |= nvt_bridge_chain_seen(&c, k % 32 >= 5);
	CHECK(!due && c.best == 27);
	memset(&c, 0, sizeof(c));
	for (k = 0, due = 0; k < 32 * 100; k++)
		due |= nvt_bridge_chain_seen(&c, k % 32 >= 4);
	CHECK(due && c.best == 28);
	memset(&c, 0, sizeof(c));
	for (k = 0, due = 0; k < 10000; k++)
		due |= nvt_bridge_chain_seen(&c, k < 20);
	CHECK(!due && c.best == 20 && c.steps == 10000);
	/* Steps such half the time at random (a fixed generator): never in 100000; nine in ten: soon. */
	uint32_t x = 12345;
	memset(&c, 0, sizeof(c));
	for (k = 0, due = 0; k < 100000; k++) {
		x = x * 1103515245u + 12345u;
		due |= nvt_bridge_chain_seen(&c, (x >> 16) & 1);
	}
	CHECK(!due && c.best < NVT_BRIDGE_CHAIN_NEED);
	memset(&c, 0, sizeof(c));
	for (k = 0, due = 0; k < 32 * 20 && !due; k++) {
		x = x * 1103515245u + 12345u;
		due = nvt_bridge_chain_seen(&c, (x >> 16) % 10 != 0);
	}
	CHECK(due);
	/* A window it does not know (more such than steps) starts again; the count stops at its bound. */
	c = (struct nvt_bridge_chain){.steps = UINT32_MAX, .in_window = 3, .such = 9};
	CHECK(nvt_bridge_chain_seen(&c, 1) == 0 && c.in_window == 1 && c.such == 1 && c.steps == UINT32_MAX);
}

/* Whether a bridge waits for its step's graph replay: by the waits replays followed. */
static void test_bridge_replays(void)
{
	uint32_t pm = 0;
	int n = 0;

	/* Steps that replay a graph: a few waits teach it (the first ten do not yet). */
	while (!nvt_bridge_replays(&pm, 1))
		n++;
	CHECK(n == 10 && pm >= NVT_BRIDGE_REPLAY_PM && pm < 800);
	for (int i = 0; i < 100; i++)
		CHECK(nvt_bridge_replays(&pm, 1));
	CHECK(pm > 980 && pm <= 1000);
	/* Token by token, the 8th wait of each request followed by nothing: waits at every one. */
	for (int i = 0, armed = 0; i < 800; i++) {
		armed += nvt_bridge_replays(&pm, i % 8 != 7);
		if (i == 799)
			CHECK(armed == 800);
	}
	/* Steps whose waits alternate a replay and none: once settled, never (a guess on each
	 * would be wrong each time). */
	for (int i = 0; i < 40; i++)
		nvt_bridge_replays(&pm, i % 2 == 0);
	for (int i = 0; i < 200; i++)
		CHECK(!nvt_bridge_replays(&pm, i % 2 == 0));
	for (int i = 0; i < 100; i++)
		nvt_bridge_replays(&pm, 1);
	/* Plain launches: it stops waiting within a few waits. */
	for (n = 0; nvt_bridge_replays(&pm, 0); n++)
		;
	CHECK(n >= 1 && n <= 3 && pm < NVT_BRIDGE_REPLAY_PM);
	for (int i = 0; i < 100; i++)
		CHECK(!nvt_bridge_replays(&pm, 0));
	CHECK(pm < 10);
}

/* A thread's looks at its work: which begin a wait (full or tentative), and which return from it. */
static void test_bridge_poll(void)
{
	struct nvt_bridge_poll p;
	const uint64_t look = (uint64_t)NVT_BRIDGE_POLL_LOOK_US * 1000;
	int ev, other, act;
	uint64_t t = 1000000000;

	CHECK(NVT_BRIDGE_POLL_CAP_US == NVT_BRIDGE_POLL_LOOK_US + NVT_BRIDGE_LINGER_US);
	/* A loop of quick looks: its second "not ready" begins the wait, later ones nothing more, the
	 * look that finds it done returns from it. */
	memset(&p, 0, sizeof(p));
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 0, t) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 0, t += 50000) == NVT_BRIDGE_POLL_BEGIN);
	nvt_bridge_poll_begun(&p, 0, 7, NVT_BRIDGE_POLL_BEGIN);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 0, t += 50000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 1, t += 50000) == NVT_BRIDGE_POLL_RETURNED);
	CHECK(!p.waiting && p.fast);
	/* Once such a loop was seen, its next poll's first look begins a tentative wait; a later "not
	 * ready" makes it a full one (once) where its next look and a whole linger may come after
	 * the tentative cap: looks 50 us apart after 550 us, 300 us apart at once. */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_TENTATIVE);
	nvt_bridge_poll_begun(&p, 0, 8, NVT_BRIDGE_POLL_TENTATIVE);
	for (int i = 1; i <= 11; i++)
		CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 0, t += 50000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 0, t += 50001) == NVT_BRIDGE_POLL_FULL);
	nvt_bridge_poll_begun(&p, 0, 8, NVT_BRIDGE_POLL_FULL);
	CHECK(!p.tentative && p.waiting);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 0, t += 50000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 1, t += 50000) == NVT_BRIDGE_POLL_RETURNED);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 9, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_TENTATIVE);
	nvt_bridge_poll_begun(&p, 0, 9, NVT_BRIDGE_POLL_TENTATIVE);
	CHECK(p.tentative);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 9, 0, 0, t += 300001) == NVT_BRIDGE_POLL_FULL);
	nvt_bridge_poll_begun(&p, 0, 9, NVT_BRIDGE_POLL_FULL);
	CHECK(!p.tentative);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 9, 0, 0, t += 300000) == NVT_BRIDGE_POLL_NONE);
	/* A look after a launch returns from nothing: the request goes on. */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 9, 1, 1, t += 10000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 9, 0, 1, t += 10000) == NVT_BRIDGE_POLL_RETURNED);
	/* A tentative wait that its second look finds done returns. */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 11, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_TENTATIVE);
	nvt_bridge_poll_begun(&p, 0, 11, NVT_BRIDGE_POLL_TENTATIVE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 11, 0, 1, t += 400000) == NVT_BRIDGE_POLL_RETURNED);
	CHECK(p.fast);

	/* A single look (a watchdog's, an allocator's) then another object's: nothing begins. */
	memset(&p, 0, sizeof(p));
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 0, t) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &other, 7, 0, 0, t += 1000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 7, 0, 0, t += 1000) == NVT_BRIDGE_POLL_NONE);
	/* ... nor a look at the same object after a launch (another launch count). */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 8, 0, 0, t += 1000) == NVT_BRIDGE_POLL_NONE);

	/* A loop that sleeps between its looks: one "not ready", then done. Looks up to the bound
	 * apart teach it the tentative first look; further apart they unteach it. */
	memset(&p, 0, sizeof(p));
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 1, 0, 0, t) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 1, 0, 1, t += look + 1) == NVT_BRIDGE_POLL_NONE);
	CHECK(!p.fast);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 2, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 2, 0, 1, t += look) == NVT_BRIDGE_POLL_NONE);
	CHECK(p.fast);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 3, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_TENTATIVE);
	nvt_bridge_poll_begun(&p, 0, 3, NVT_BRIDGE_POLL_TENTATIVE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 3, 0, 1, t += 2 * look) == NVT_BRIDGE_POLL_RETURNED);
	CHECK(!p.fast);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 4, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_NONE);
	/* The gap that teaches is the one from the last "not ready": three looks 400 us apart (the
	 * first to the done 1.2 ms) teach it. */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 4, 0, 0, t += 400000) == NVT_BRIDGE_POLL_BEGIN);
	nvt_bridge_poll_begun(&p, 0, 4, NVT_BRIDGE_POLL_BEGIN);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 4, 0, 0, t += 400000) == NVT_BRIDGE_POLL_NONE);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 4, 0, 1, t += 400000) == NVT_BRIDGE_POLL_RETURNED);
	CHECK(p.fast);
	/* Done at the first look teaches nothing; nor does another GPU's wait return this one. */
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 5, 0, 1, t += 1000000) == NVT_BRIDGE_POLL_NONE);
	CHECK(p.fast);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 6, 0, 0, t += 1000000) == NVT_BRIDGE_POLL_TENTATIVE);
	nvt_bridge_poll_begun(&p, 0, 6, NVT_BRIDGE_POLL_TENTATIVE);
	CHECK(nvt_bridge_poll_look(&p, 1, &other, 6, 0, 1, t += 1000) == NVT_BRIDGE_POLL_NONE);
	CHECK(p.waiting);

	/* A thread that polls two GPUs' events in turn, having learnt: one tentative wait at its
	 * poll's first look, then nothing more while it alternates. */
	memset(&p, 0, sizeof(p));
	p.fast = 1;
	int begins = 0;
	for (int i = 0; i < 40; i++) {
		act = nvt_bridge_poll_look(&p, i % 2, i % 2 ? (void *)&other : (void *)&ev, 20, 0, 0, t += 50000);
		if (act != NVT_BRIDGE_POLL_NONE) {
			begins++;
			nvt_bridge_poll_begun(&p, i % 2, 20, act);
		}
	}
	CHECK(begins == 1 && p.waiting && p.g == 0 && p.tentative);

	/* A loop that queries an idle stream (done) and its event (not ready) in turn, having
	 * learnt: the stream's "done" neither returns the event's wait nor restarts its poll. */
	memset(&p, 0, sizeof(p));
	p.fast = 1;
	begins = 0;
	int fulls = 0;
	for (int i = 0; i < 40; i++) {
		act = nvt_bridge_poll_look(&p, 0, i % 2 ? (void *)&ev : (void *)&other, 30, 0, !(i % 2), t += 50000);
		CHECK(act != NVT_BRIDGE_POLL_RETURNED);
		begins += act == NVT_BRIDGE_POLL_BEGIN || act == NVT_BRIDGE_POLL_TENTATIVE;
		fulls += act == NVT_BRIDGE_POLL_FULL;
		if (act != NVT_BRIDGE_POLL_NONE)
			nvt_bridge_poll_begun(&p, 0, 30, act);
	}
	CHECK(begins == 1 && fulls == 1 && p.waiting && p.wobj == &ev);
	CHECK(nvt_bridge_poll_look(&p, 0, &ev, 30, 0, 1, t += 50000) == NVT_BRIDGE_POLL_RETURNED);
}

/* Which copies to the host a kernel does. */
static void test_bridge_copy(void)
{
	struct nvt_bridge_copy ok = {.bytes = 8, .dst_type = {1, 1}, .dst_dev = {0x1000, 0x1007},
				     .src_type = 2, .src_ordinal = 3, .ordinal = 3, .src_ours = 1,
				     .src_start = 0x7000, .src_size = 0x100, .src = 0x7010}, c;

	CHECK(nvt_bridge_copy_by_kernel(&ok));
	c = ok;
	c.bytes = 0;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	/* A task that queued a host function: the driver's. */
	c = ok;
	c.host_fns = 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.bytes = NVT_BRIDGE_COPY_MAX;
	c.dst_dev[1] = c.dst_dev[0] + NVT_BRIDGE_COPY_MAX - 1;
	c.src_size = 0x2000;
	CHECK(nvt_bridge_copy_by_kernel(&c));
	c.bytes++;
	c.dst_dev[1]++;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.capturing = 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	/* Pageable (unknown to the driver) or device memory at either end of dst; managed memory. */
	for (int i = 0; i < 2; i++) {
		c = ok;
		c.dst_type[i] = 0;
		CHECK(!nvt_bridge_copy_by_kernel(&c));
		c.dst_type[i] = 2;
		CHECK(!nvt_bridge_copy_by_kernel(&c));
	}
	c = ok;
	c.dst_managed = 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.src_managed = 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	/* A source on the host, another GPU's, another context's that this one may not read. */
	c = ok;
	c.src_type = 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.src_ordinal = 2;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.src_ours = 0;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	/* A source that runs past its allocation (the driver refuses it), or starts before it. */
	c = ok;
	c.src = c.src_start + c.src_size - 8;
	CHECK(nvt_bridge_copy_by_kernel(&c));
	c.src++;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c.src = c.src_start - 1;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.src_size = 0;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	/* A destination the driver did not map for this context (no device address), even of one
	 * byte; or its two ends in two mappings. */
	c = ok;
	c.bytes = 1;
	c.dst_dev[0] = c.dst_dev[1] = 0;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c = ok;
	c.dst_dev[1] = 0x9007;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
	c.dst_dev[1] = 0x0fff;
	CHECK(!nvt_bridge_copy_by_kernel(&c));
}

/* A share beside higher tasks that never idle, by the looks, not the averages. */
static void test_share(void)
{
	struct nvt_share s;
	uint64_t t = 1000 * MS;
	int on = 0;

	memset(&s, 0, sizeof(s));
	/* Busy at 95 % of the looks: on after two windows, not one. */
	for (int i = 0; i < 40000 && !on; i++, t += 50 * US)
		on = nvt_preempt_share(&s, i % 20 != 0, t);
	CHECK(on && t > 1000 * MS + 2 * NVT_SHARE_WINDOW_MS * MS - MS &&
	      t < 1000 * MS + 2 * NVT_SHARE_WINDOW_MS * MS + MS);
	/* Busy at 70 %: stays on (over the off threshold), then 10 %: off after a window. */
	for (int i = 0; i < 12000; i++, t += 50 * US)
		on = nvt_preempt_share(&s, i % 10 < 7, t);
	CHECK(on);
	for (int i = 0; i < 12000; i++, t += 50 * US)
		on = nvt_preempt_share(&s, i % 10 == 0, t);
	CHECK(!on);
	/* A service at 10 % with a warm-up of 0.3 s back to back: never on. */
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 6000; i++, t += 50 * US)
		on |= nvt_preempt_share(&s, 1, t);
	for (int i = 0; i < 60000; i++, t += 50 * US)
		on |= nvt_preempt_share(&s, i % 200 < 20, t);
	CHECK(!on);
}

int main(void)
{
	test_share();
	test_preempt_words();
	test_timeslice();
	test_bridge();
	test_bridge_replays();
	test_bridge_hold();
	test_bridge_rearm();
	test_bridge_chain_seen();
	test_bridge_ctx_seen();
	test_bridge_ctx_retry();
	test_bridge_ctx_cpus();
	test_bridge_ctx_stops_decay();
	test_bridge_clock();
	test_bridge_clock_drift();
	test_bridge_clock_loose_only();
	test_bridge_copy();
	test_bridge_poll();
	test_words();
	test_default_words();
	test_priority_text();
	test_activity();
	test_rate_shift();
	test_verdict();
	test_after_warm_up();
	test_may_lend();
	test_launch_avg();
	test_inflight();
	test_by_shim();
	test_not_taken();
	return CHECK_DONE();
}
