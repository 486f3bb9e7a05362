/* Unit tests: the rules of priorities (src/core/prio.c) on plain buffers.
 * SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/prio.h"
#include "core/yield.h"
#include "core/topo.h"
#include "core/tpcset.h"

/* 24 TPCs in 4 GPCs of 6: GPC g holds TPCs 6g .. 6g+5. */
static struct nvt_topology topo24;

static struct nvt_tpcset list(const char *text)
{
	struct nvt_tpcset set;
	nvt_set_clear(&set);
	if (*text)
		CHECK(nvt_parse_list(text, NVT_MAX_TPCS, &set) == 0);
	return set;
}

static const char *text(const struct nvt_tpcset *set)
{
	static char buf[4][NVT_LIST_TEXT_MAX];
	static int next;
	char *b = buf[next++ % 4];
	nvt_format_list(set, b, NVT_LIST_TEXT_MAX);
	return b;
}

static struct nvt_prio_task task(const char *own, uint8_t prio, int active)
{
	struct nvt_prio_task t = {0};
	t.own = list(own);
	t.prio = prio;
	t.active = active;
	t.yield = NVT_YIELD_GUARD; /* the agent's way: guarded and borrowing */
	return t;
}

static void test_pack(void)
{
	struct nvt_tpcset out, avail = list("0-23"), avoid = list("0-2");

	/* Budget 4 from whole GPCs: one GPC, the lowest; away from avoid's GPC 0. */
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 4, &out) == 4);
	CHECK_STR(text(&out), "0-3");
	CHECK(nvt_prio_pack(&topo24, &avail, &avoid, 4, &out) == 4);
	CHECK_STR(text(&out), "6-9");
	/* Best fit: the GPC with 4 free holds 4 with nothing left over. */
	avail = list("6-11,14-17,18-23");
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 4, &out) == 4);
	CHECK_STR(text(&out), "14-17");
	/* More than a GPC: the fullest first, then the best fit for the rest. */
	avail = list("0-1,6-11,14-17");
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 8, &out) == 8);
	CHECK_STR(text(&out), "0-1,6-11");
	/* Avoided GPCs only when nothing else is left. */
	avail = list("0-5,6-7");
	avoid = list("0");
	CHECK(nvt_prio_pack(&topo24, &avail, &avoid, 4, &out) == 4);
	CHECK_STR(text(&out), "0-1,6-7");
	/* Budget above what there is; none; an empty set. */
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 100, &out) == 8);
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 0, &out) == 0 && nvt_set_count(&out) == 0);
	avail = list("");
	CHECK(nvt_prio_pack(&topo24, &avail, NULL, 3, &out) == 0);
	/* No GPCs known: the lowest TPCs. */
	avail = list("3-9");
	CHECK(nvt_prio_pack(NULL, &avail, NULL, 3, &out) == 3);
	CHECK_STR(text(&out), "3-5");
}

/* A guard the command takes: none, up to the GPU's TPCs, any where they are not known. */
static void test_guard_fits(void)
{
	struct nvt_topology unknown = {0};

	CHECK(nvt_prio_guard_fits(0, &topo24));
	CHECK(nvt_prio_guard_fits(1, &topo24));
	CHECK(nvt_prio_guard_fits(24, &topo24));
	CHECK(!nvt_prio_guard_fits(25, &topo24));
	CHECK(!nvt_prio_guard_fits(NVT_MAX_TPCS, &topo24));
	CHECK(nvt_prio_guard_fits(NVT_MAX_TPCS, &unknown));
}

static void test_guard_and_lend(void)
{
	struct nvt_prio_task t[3];

	/* A high task active: the low one keeps 4 TPCs of its own, in one GPC. */
	t[0] = task("0-5", NVT_PRIO_HIGH, 1);
	t[1] = task("6-23", NVT_PRIO_LOW, 1);
	t[1].guard = 4;
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[0].tpcs), "0-5");
	CHECK(t[0].mode == NVT_MODE_OWN);
	CHECK_STR(text(&t[1].tpcs), "6-9");
	CHECK(t[1].mode == NVT_MODE_GUARDED);
	/* The default guard, when the task has none. */
	t[1].guard = 0;
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK(nvt_set_count(&t[1].tpcs) == 8);
	CHECK_STR(text(&t[1].tpcs), "6-13");
	/* The high task idle: the low one borrows its TPCs; it lends them. */
	t[0].active = 0;
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[1].tpcs), "0-23");
	CHECK(t[1].mode == NVT_MODE_BORROWING);
	CHECK(t[0].mode == NVT_MODE_LENDING);
	CHECK_STR(text(&t[0].tpcs), "0-5");
	/* ... unless it does not lend. */
	t[0].flags = NVT_PRIOF_NO_LEND;
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[1].tpcs), "6-23");
	CHECK(t[1].mode == NVT_MODE_OWN && t[0].mode == NVT_MODE_OWN);
	/* No lending needed when the low task holds the high one's TPCs already. */
	t[0] = task("0-5", NVT_PRIO_HIGH, 0);
	t[1] = task("0-23", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK(t[1].mode == NVT_MODE_OWN && t[0].mode == NVT_MODE_OWN);
	/* A guard that leaves own whole: own. */
	t[0].active = 1;
	t[1] = task("6-9", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[1].tpcs), "6-9");
	CHECK(t[1].mode == NVT_MODE_OWN);
	/* Never in an active higher task's GPC while own has TPCs in others, even below the guard. */
	t[0] = task("0-2", NVT_PRIO_HIGH, 1);
	t[1] = task("3-8", NVT_PRIO_LOW, 1);
	t[1].guard = 6;
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[1].tpcs), "6-8");
	CHECK(t[1].mode == NVT_MODE_GUARDED);
	/* ... but in it when own has nothing else (not squeezed: its own TPCs there are free). */
	t[1] = task("3-5", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK_STR(text(&t[1].tpcs), "3-5");
	CHECK(t[1].mode == NVT_MODE_OWN);
	t[0] = task("0-5", NVT_PRIO_HIGH, 1);
	/* Guard 0 and no default: no cap, only off the high task's TPCs. */
	t[1] = task("0-23", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 0, t, 2);
	CHECK_STR(text(&t[1].tpcs), "6-23");
	CHECK(t[1].mode == NVT_MODE_GUARDED);
}

static void test_squeezed_and_levels(void)
{
	struct nvt_prio_task t[3];

	/* The high task holds all of the low one's TPCs: one TPC, never none. */
	t[0] = task("0-11", NVT_PRIO_HIGH, 1);
	t[1] = task("4-7", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 8, t, 2);
	CHECK(nvt_set_count(&t[1].tpcs) == 1);
	CHECK(t[1].mode == NVT_MODE_SQUEEZED);
	CHECK(nvt_set_has(&t[1].own, (unsigned)nvt_set_highest(&t[1].tpcs)));
	/* A task without a priority neither guards nor is guarded nor borrows. */
	t[0] = task("0-5", NVT_PRIO_NONE, 1);
	t[1] = task("6-23", NVT_PRIO_LOW, 1);
	t[2] = task("0-23", NVT_PRIO_NONE, 1);
	nvt_prio_decide(&topo24, 4, t, 3);
	CHECK_STR(text(&t[1].tpcs), "6-23");
	CHECK_STR(text(&t[2].tpcs), "0-23");
	t[0].active = 0;
	t[2] = task("12-13", NVT_PRIO_HIGH, 0);
	nvt_prio_decide(&topo24, 4, t, 3);
	CHECK_STR(text(&t[1].tpcs), "6-23");
	CHECK(t[1].mode == NVT_MODE_OWN); /* 12-13 is its own already */
	/* Three levels: high active guards normal and low alike. */
	t[0] = task("0-5", NVT_PRIO_HIGH, 1);
	t[1] = task("6-11", NVT_PRIO_NORMAL, 1);
	t[2] = task("12-23", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 2, t, 3);
	CHECK_STR(text(&t[1].tpcs), "6-7");
	CHECK(nvt_set_count(&t[2].tpcs) == 2);
	/* High idle, normal active: normal borrows high's, low is guarded by normal. */
	t[0].active = 0;
	nvt_prio_decide(&topo24, 2, t, 3);
	CHECK_STR(text(&t[1].tpcs), "0-11");
	CHECK(t[1].mode == NVT_MODE_BORROWING && t[0].mode == NVT_MODE_LENDING);
	CHECK_STR(text(&t[2].tpcs), "12-13");
	/* Equal priorities never guard each other. */
	t[0] = task("0-5", NVT_PRIO_LOW, 1);
	t[1] = task("0-23", NVT_PRIO_LOW, 1);
	nvt_prio_decide(&topo24, 2, t, 2);
	CHECK_STR(text(&t[0].tpcs), "0-5");
	CHECK_STR(text(&t[1].tpcs), "0-23");
}

static void test_text(void)
{
	struct nvt_slot_prio p = {0};
	struct nvt_slot_view v = {0};
	struct nvt_tpcset own;
	char buf[NVT_PRIO_ENV_TEXT_MAX];
	uint8_t level;

	CHECK(nvt_prio_parse("high", &level) == 0 && level == NVT_PRIO_HIGH);
	CHECK(nvt_prio_parse("Low", &level) == 0 && level == NVT_PRIO_LOW);
	CHECK(nvt_prio_parse("normal", &level) == 0 && level == NVT_PRIO_NORMAL);
	CHECK(nvt_prio_parse("none", &level) == -1 && nvt_prio_parse("", &level) == -1);
	CHECK(nvt_prio_parse("3", &level) == -1);
	CHECK_STR(nvt_prio_name(NVT_PRIO_NONE), "-");
	CHECK_STR(nvt_prio_name(99), "-");
	/* --priority's words: "none" too; -p says "none". */
	CHECK(nvt_prio_parse_given("None", &level) == 0 && level == NVT_PRIO_NONE);
	CHECK(nvt_prio_parse_given("high", &level) == 0 && level == NVT_PRIO_HIGH);
	CHECK(nvt_prio_parse_given("-", &level) == -1 && nvt_prio_parse_given("", &level) == -1);
	CHECK_STR(nvt_prio_word(NVT_PRIO_NONE), "none");
	CHECK_STR(nvt_prio_word(NVT_PRIO_NORMAL), "normal");
	CHECK_STR(nvt_prio_mode_name(NVT_MODE_BORROWING), "borrowing");
	CHECK_STR(nvt_prio_mode_name(99), "?");
	CHECK(nvt_prio_env_parse("low,guard=8,no-lend", &p) == 0);
	CHECK(p.prio == NVT_PRIO_LOW && p.guard == 8 && p.flags == NVT_PRIOF_NO_LEND);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,guard=8,no-lend");
	CHECK(nvt_prio_env_parse("high", &p) == 0 && p.prio == NVT_PRIO_HIGH && !p.guard && !p.flags);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "high");
	CHECK(nvt_prio_env_format(&p, buf, 3) == -1);
	/* A CDI priority device's yield=auto: the default by partition, once resolved. */
	CHECK(nvt_prio_env_parse("low,yield=auto", &p) == 0 && p.prio == NVT_PRIO_LOW &&
	      p.flags == NVT_PRIOF_AUTO && p.yield == NVT_YIELD_DEFAULT);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,yield=auto");
	nvt_prio_resolve(&p, 0);
	CHECK(p.yield == NVT_YIELD_SLICE && !p.flags);
	nvt_prio_resolve(&p, 1); /* (resolved: left as it is) */
	CHECK(p.yield == NVT_YIELD_SLICE && !p.flags);
	CHECK(nvt_prio_env_parse("high,yield=auto", &p) == 0);
	nvt_prio_resolve(&p, 1);
	CHECK(p.yield == NVT_YIELD_DEFAULT && !p.flags && p.prio == NVT_PRIO_HIGH);
	CHECK(nvt_prio_env_parse("normal,no-lend,yield=auto", &p) == 0);
	nvt_prio_resolve(&p, 0);
	CHECK(p.yield == NVT_YIELD_SLICE && p.flags == NVT_PRIOF_NO_LEND);
	/* A guard keeps the partitioned default, with guard, on the whole GPU too. */
	CHECK(nvt_prio_env_parse("low,guard=4,yield=auto", &p) == 0);
	CHECK(nvt_prio_env_format(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "low,guard=4,yield=auto");
	nvt_prio_resolve(&p, 0);
	CHECK(p.yield == (NVT_YIELD_DEFAULT | NVT_YIELD_GUARD) && !p.flags);
	/* The last yield= wins; auto goes with no other word. */
	CHECK(nvt_prio_env_parse("low,yield=auto,yield=gate", &p) == 0 && !p.flags &&
	      p.yield == NVT_YIELD_GATE);
	CHECK(nvt_prio_env_parse("low,yield=gate,yield=auto", &p) == 0 && p.flags == NVT_PRIOF_AUTO);
	CHECK(nvt_prio_env_parse("low,yield=auto+gate", &p) == -1);
	CHECK(nvt_prio_env_parse("low,yield=gate+auto", &p) == -1);
	/* One without auto: resolving leaves it as it is. */
	CHECK(nvt_prio_env_parse("low", &p) == 0);
	nvt_prio_resolve(&p, 0);
	CHECK(p.yield == NVT_YIELD_DEFAULT && !p.flags);
	CHECK(nvt_prio_env_parse("", &p) == -1);
	CHECK(nvt_prio_env_parse("high,guard=0", &p) == -1);
	CHECK(nvt_prio_env_parse("high,guard=257", &p) == -1);
	CHECK(nvt_prio_env_parse("high,guard=4x", &p) == -1);
	CHECK(nvt_prio_env_parse("high,lend", &p) == -1);
	CHECK(nvt_prio_env_parse("guard=4", &p) == -1);
	CHECK(nvt_prio_env_parse("high,guard=4,no-lend,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", &p) == -1);
	/* A slot's own partition: the field, else its TPCs, else the whole GPU. */
	v.topo = topo24;
	nvt_prio_own_of(&v, &own);
	CHECK_STR(text(&own), "0-23");
	v.state = NVT_SLOT_SET;
	v.tpcs = list("3-4");
	nvt_prio_own_of(&v, &own);
	CHECK_STR(text(&own), "3-4");
	v.prio.own = list("5");
	nvt_prio_own_of(&v, &own);
	CHECK_STR(text(&own), "5");
}

/* Which tasks are the agent's, and a guard asking for its way. */
/* What the options give, and what a writer carries into a slot: every field given. */
static void test_given_and_carried(void)
{
	struct nvt_slot_prio yield = {0}, given;
	struct nvt_slot_view want = {0}, old = {0};

	nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 0, &given);
	CHECK(given.prio == NVT_PRIO_LOW && given.yield == NVT_YIELD_DEFAULT && !given.flags &&
	      !given.guard && given.mode == NVT_MODE_OWN && !nvt_set_count(&given.own));
	/* No partition and no --yield: time-sliced, at every level, unless a guard asks its form. */
	for (uint8_t level = NVT_PRIO_LOW; level <= NVT_PRIO_HIGH; level++) {
		nvt_prio_given(level, 0, 0, NULL, 1, &given);
		CHECK(given.yield == NVT_YIELD_SLICE && !given.slice_us);
	}
	nvt_prio_given(NVT_PRIO_LOW, 0, 4, NULL, 1, &given);
	CHECK(given.yield == (NVT_YIELD_DEFAULT | NVT_YIELD_GUARD));
	nvt_prio_given(NVT_PRIO_NONE, 0, 0, NULL, 1, &given);
	CHECK(given.yield == NVT_YIELD_DEFAULT);
	nvt_prio_given(NVT_PRIO_HIGH, 0, 0, &yield, 1, &given); /* --yield given: its words, none */
	CHECK(given.yield == 0);
	CHECK(nvt_yield_item("bound=900", &yield, NULL, 0) == 0);
	CHECK(nvt_yield_item("ahead=700", &yield, NULL, 0) == 0);
	CHECK(nvt_yield_item("duty=40", &yield, NULL, 0) == 0);
	yield.mode = NVT_MODE_LENDING; /* (not --yield's: left out) */
	nvt_prio_given(NVT_PRIO_NORMAL, 1, 6, &yield, 0, &given);
	CHECK(given.prio == NVT_PRIO_NORMAL && given.flags == NVT_PRIOF_NO_LEND && given.guard == 6);
	CHECK(given.yield == (NVT_YIELD_BOUND | NVT_YIELD_AHEAD | NVT_YIELD_GUARD));
	CHECK(given.bound_us == 900 && given.ahead_us == 700 && given.duty_pct == 40);
	CHECK(given.mode == NVT_MODE_OWN);
	/* Carried whole over the slot's old priority; its own partition is its TPCs. */
	old.prio.prio = NVT_PRIO_HIGH;
	old.prio.duty_pct = 99;
	want.state = NVT_SLOT_SET;
	nvt_parse_list("4-7", NVT_MAX_TPCS, &want.tpcs);
	nvt_prio_carry(&want, &old, &given);
	CHECK(want.prio.prio == NVT_PRIO_NORMAL && want.prio.guard == 6 && want.prio.duty_pct == 40);
	CHECK(want.prio.bound_us == 900 && want.prio.ahead_us == 700 && want.prio.flags == NVT_PRIOF_NO_LEND);
	CHECK(want.prio.mode == NVT_MODE_OWN && nvt_set_count(&want.prio.own) == 4);
	/* -p --priority without --yield keeps a time-sliced task's words, no other task's. */
	{
		struct nvt_slot_prio sliced = {0}, g;
		sliced.prio = NVT_PRIO_LOW;
		sliced.yield = NVT_YIELD_SLICE;
		sliced.slice_us = 50;
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 0, &g);
		nvt_prio_keep_slice(&g, &sliced);
		CHECK(g.prio == NVT_PRIO_HIGH && g.yield == NVT_YIELD_SLICE && g.slice_us == 50);
		sliced.yield = NVT_YIELD_CLIENT;
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 0, &g);
		nvt_prio_keep_slice(&g, &sliced);
		CHECK(g.yield == NVT_YIELD_DEFAULT);
	}
	/* -p --priority without --yield: the words that take effect on the running task. */
	{
		struct nvt_slot_prio none = {0}, guarded = {0}, sliced = {0}, g;
		guarded.prio = NVT_PRIO_LOW;
		guarded.yield = NVT_YIELD_GUARD;
		guarded.guard = 4;
		sliced.prio = NVT_PRIO_LOW;
		sliced.yield = NVT_YIELD_SLICE;
		sliced.slice_us = 50;
		/* Started and running without a priority: only the agent's guard takes effect. */
		nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &none, &none) == NVT_YIELD_CLIENT);
		CHECK(g.prio == NVT_PRIO_LOW && g.yield == NVT_YIELD_GUARD && !g.guard);
		nvt_prio_given(NVT_PRIO_NORMAL, 0, 3, NULL, 0, &g); /* --guard 3: no client beside it */
		CHECK(nvt_prio_for_running(&g, &none, &none) == NVT_YIELD_CLIENT);
		CHECK(g.yield == NVT_YIELD_GUARD && g.guard == 3);
		/* A high task yields to nobody: it keeps what takes effect, no guard is added. */
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 1, &g);
		CHECK(nvt_prio_for_running(&g, &none, &none) == NVT_YIELD_SLICE && g.yield == 0);
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &none, &none) == 0 && g.yield == NVT_YIELD_CLIENT);
		/* A guarded task stays guarded, with its guard; made high, it is not guarded. */
		nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &none, &guarded) == 0);
		CHECK(g.yield == NVT_YIELD_GUARD && g.guard == 4);
		nvt_prio_given(NVT_PRIO_LOW, 0, 6, NULL, 0, &g); /* --guard 6 replaces it */
		CHECK(nvt_prio_for_running(&g, &none, &guarded) == 0 && g.guard == 6);
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &none, &guarded) == 0 && g.yield == NVT_YIELD_CLIENT);
		/* A time-sliced task stays time-sliced, its values kept. */
		nvt_prio_given(NVT_PRIO_HIGH, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &sliced, &sliced) == 0);
		CHECK(g.yield == NVT_YIELD_SLICE && g.slice_us == 50);
		/* Its start read as none (its environment overwritten): its words now are kept. */
		nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 1, &g);
		CHECK(nvt_prio_for_running(&g, &none, &sliced) == 0);
		CHECK(g.yield == NVT_YIELD_SLICE && g.slice_us == 50);
		/* No priority now: the level's words less what its start did not set up. */
		nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 1, &g);
		CHECK(nvt_prio_for_running(&g, &none, &none) == NVT_YIELD_SLICE);
		CHECK(g.yield == NVT_YIELD_GUARD);
		nvt_prio_given(NVT_PRIO_LOW, 0, 0, NULL, 1, &g);
		CHECK(nvt_prio_for_running(&g, &sliced, &none) == 0 && g.yield == NVT_YIELD_SLICE);
		/* Started with protect: its shim's words take effect, and are kept. */
		guarded.yield = NVT_YIELD_PROTECT;
		nvt_prio_given(NVT_PRIO_NORMAL, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &guarded, &guarded) == 0 && g.yield == NVT_YIELD_PROTECT);
		nvt_prio_given(NVT_PRIO_NONE, 0, 0, NULL, 0, &g);
		CHECK(nvt_prio_for_running(&g, &none, &guarded) == 0 && g.prio == NVT_PRIO_NONE);
	}
	nvt_prio_carry(&want, &old, NULL); /* -p MASK: the old priority kept */
	CHECK(want.prio.prio == NVT_PRIO_HIGH && want.prio.duty_pct == 99);
}

static void test_agent_rules(void)
{
	struct nvt_slot_prio p = {0};

	CHECK(nvt_prio_needs_agent(NVT_PRIO_LOW, NVT_YIELD_GUARD));
	CHECK(nvt_prio_needs_agent(NVT_PRIO_HIGH, NVT_YIELD_GUARD | NVT_YIELD_GATE));
	CHECK(!nvt_prio_needs_agent(NVT_PRIO_LOW, NVT_YIELD_DEFAULT)); /* its shim's ways only */
	CHECK(!nvt_prio_needs_agent(NVT_PRIO_NONE, NVT_YIELD_GUARD));  /* no priority */
	CHECK(!nvt_prio_needs_agent(NVT_PRIO_LOW, 0));
	p.prio = NVT_PRIO_LOW;
	p.yield = NVT_YIELD_GATE;
	nvt_prio_imply_guard(&p); /* no guard: the words as they are */
	CHECK(p.yield == NVT_YIELD_GATE);
	p.guard = 4;
	nvt_prio_imply_guard(&p);
	CHECK(p.yield == (NVT_YIELD_GATE | NVT_YIELD_GUARD) && p.guard == 4);
	CHECK(nvt_prio_needs_agent(p.prio, p.yield));
}

static void test_owner(void)
{
	/* Root's task, root through and through: root's. */
	CHECK(nvt_prio_owner(0, 0, 0) == 0);
	/* Root's segment, the process dropped to uid 1000 (setuid, or seteuid): 1000's. */
	CHECK(nvt_prio_owner(0, 1000, 1000) == 1000);
	CHECK(nvt_prio_owner(0, 0, 1000) == 1000);
	CHECK(nvt_prio_owner(0, 1000, 0) == 1000);
	/* A user's segment is hers, whatever the process became (root's included). */
	CHECK(nvt_prio_owner(1000, 1000, 1000) == 1000);
	CHECK(nvt_prio_owner(1000, 0, 0) == 1000);
	CHECK(nvt_prio_owner(1000, 2000, 2000) == 1000);
}

/* Which MPS server a task joins: its level's own when it is time-sliced. */
static void test_mps_level(void)
{
	struct nvt_slot_view parts[2];
	struct nvt_slot_prio back;
	char text[NVT_PRIO_ENV_TEXT_MAX];

	memset(parts, 0, sizeof(parts));
	CHECK(nvt_prio_mps_level(parts, 1, text, sizeof(text)) == NVT_PRIO_NONE);
	parts[0].prio.prio = parts[1].prio.prio = NVT_PRIO_LOW;
	parts[0].prio.yield = parts[1].prio.yield = NVT_YIELD_CLIENT;
	CHECK(nvt_prio_mps_level(parts, 2, text, sizeof(text)) == NVT_PRIO_NONE);
	parts[0].prio.yield = parts[1].prio.yield = NVT_YIELD_SLICE | NVT_YIELD_CLIENT;
	CHECK(nvt_prio_mps_level(parts, 2, text, sizeof(text)) == NVT_PRIO_LOW);
	CHECK_STR(text, "low,yield=slice");
	/* The server's text reads back as its level, time-sliced; values it does not give are
	 * none, whatever the block held (an MPS server's slice read 1707920699 us once). */
	memset(&back, 0xa5, sizeof(back));
	CHECK(nvt_prio_env_parse(text, &back) == 0 && back.prio == NVT_PRIO_LOW &&
	      back.yield == NVT_YIELD_SLICE && !back.slice_us);
	parts[0].prio.slice_us = parts[1].prio.slice_us = 20;
	CHECK(nvt_prio_mps_level(parts, 2, text, sizeof(text)) == NVT_PRIO_LOW);
	CHECK_STR(text, "low,yield=slice=20");
	CHECK(nvt_prio_env_parse(text, &back) == 0 && back.slice_us == 20);
	CHECK(nvt_prio_mps_level(parts, 2, text, 8) == -1);
	/* GPUs that disagree (a level, or slice on one only): the shared server. */
	parts[1].prio.prio = NVT_PRIO_HIGH;
	CHECK(nvt_prio_mps_level(parts, 2, text, sizeof(text)) == NVT_PRIO_NONE);
	parts[1].prio.prio = NVT_PRIO_LOW;
	parts[1].prio.slice_us = 5;
	CHECK(nvt_prio_mps_level(parts, 2, text, sizeof(text)) == NVT_PRIO_NONE);
	parts[1].prio.slice_us = 20;
	parts[1].prio.yield = NVT_YIELD_CLIENT;
	CHECK(nvt_prio_mps_level(parts, 2, NULL, 0) == NVT_PRIO_NONE);
	parts[0].prio.prio = NVT_PRIO_HIGH;
	CHECK(nvt_prio_mps_level(parts, 1, NULL, 0) == NVT_PRIO_HIGH);
}

/* Which partitions share TPCs against the design: -l's Overlap and the warning of a start or -p. */
static void test_clash(void)
{
	struct nvt_slot_prio none = {0}, hi = {0}, lo = {0}, lo2 = {0}, sl = {0}, sl2 = {0};
	struct nvt_tpcset a, b, both;

	CHECK(nvt_parse_list("0-7", NVT_MAX_TPCS, &a) == 0);
	CHECK(nvt_parse_list("4-11", NVT_MAX_TPCS, &b) == 0);
	hi.prio = NVT_PRIO_HIGH;
	lo.prio = lo2.prio = sl.prio = sl2.prio = NVT_PRIO_LOW;
	sl.yield = sl2.yield = NVT_YIELD_SLICE;
	/* Plain tasks: what their TPCs share. */
	CHECK(nvt_prio_clash(&a, &none, &b, &none, &both) == 4);
	CHECK(nvt_set_has(&both, 4) && nvt_set_has(&both, 7) && !nvt_set_has(&both, 8));
	/* Other levels, a slice pair: by design. */
	CHECK(nvt_prio_may_share(&hi, &lo) && nvt_prio_may_share(&sl, &sl2));
	CHECK(!nvt_prio_may_share(&lo, &lo2) && !nvt_prio_may_share(&none, &hi));
	CHECK(!nvt_prio_may_share(&sl, &lo2)); /* one of the pair not time-sliced */
	hi.own = a;
	lo.own = b;
	CHECK(nvt_prio_clash(&a, &hi, &b, &lo, &both) == 0 && nvt_set_count(&both) == 0);
	/* One level: by their own partitions, not what an agent lends them now. */
	lo2.own = a;
	CHECK(nvt_prio_clash(&b, &lo2, &b, &lo, &both) == 4);
	/* A plain task beside one with a priority: a clash. */
	CHECK(nvt_prio_clash(&a, &none, &b, &hi, &both) == 8);
}

int main(void)
{
	test_mps_level();
	nvt_topo_identity(&topo24, 24);
	topo24.n_gpcs = 4;
	for (unsigned t = 0; t < 24; t++)
		topo24.gpc[t] = (uint8_t)(t / 6);
	test_pack();
	test_guard_fits();
	test_guard_and_lend();
	test_squeezed_and_levels();
	test_text();
	test_given_and_carried();
	test_agent_rules();
	test_owner();
	test_clash();
	return CHECK_DONE();
}
