/* Unit tests: memory halves from bandwidth probes, and their cache record
 * (src/core/membw.c). SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/membw.h"
#include "core/tpcset.h"
#include "h100_fixture.h"

#include <math.h>

/* The H100's halves as measured beside GPC 1 (docs/hardware-facts.md,
 * section 14): GPCs 1, 2, 3 and 7 in one, 0, 4, 5 and 6 in the other. */
static const int h100_half[12] = {0, 1, 1, 1, 0, 0, 0, 1, -1, -1, -1, -1};

static void h100_topo(struct nvt_topology *t)
{
	nvt_topo_identity(t, 66);
	t->n_gpcs = 12;
	for (unsigned i = 0; i < 66; i++)
		t->gpc[i] = h100_gpc(i);
}

/* A probe as the H100 would give it: a neighbour of GPC g streams at hog[g];
 * one in the reference's half costs 0.25 of its bandwidth, else 0.12, with
 * noise of +-jitter. Lone TPCs (8-11) stream little. */
static void probe_of(unsigned ref, double jitter, struct nvt_membw_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->ref = ref;
	p->base = 1000;
	for (unsigned g = 0; g < 12; g++) {
		double wiggle = jitter * ((int)((g * 7 + ref) % 5) - 2) / 2.0;
		if (g == ref)
			continue;
		p->hog[g] = g == 0 ? 520 : g < 8 ? 1000 : 130;
		p->beside[g] = p->base - p->hog[g] * ((h100_half[g] == h100_half[ref] && g < 8) ? 0.25 : 0.12) +
			       wiggle;
		p->spread[g] = jitter;
	}
}

static void test_split(void)
{
	struct nvt_membw_probe p;
	int8_t in[12];

	probe_of(1, 2, &p);
	CHECK(fabs(nvt_membw_cost(&p, 2) - 0.25) < 0.01);
	CHECK(fabs(nvt_membw_cost(&p, 4) - 0.12) < 0.01);
	CHECK(nvt_membw_split(&p, 12, in) == 8);
	for (unsigned g = 0; g < 8; g++)
		CHECK(in[g] == (h100_half[g] == 1));
	for (unsigned g = 8; g < 12; g++)
		CHECK(in[g] == NVT_HALF_UNKNOWN); /* a lone TPC streams too little to judge */

	/* Noise as large as the difference: no split. */
	probe_of(1, 60, &p);
	CHECK(nvt_membw_split(&p, 12, in) == 0);
	CHECK(in[2] == NVT_HALF_UNKNOWN);

	/* Every neighbour costs the same, up to noise: no halves. */
	probe_of(1, 2, &p);
	for (unsigned g = 0; g < 12; g++)
		if (g != 1)
			p.beside[g] = p.base - p.hog[g] * 0.2 + (g % 3);
	CHECK(nvt_membw_split(&p, 12, in) == 0);

	/* A smear (costs evenly spread) is not two groups. */
	for (unsigned g = 0; g < 12; g++)
		if (g != 1)
			p.beside[g] = p.base - p.hog[g] * (0.1 + 0.02 * g);
	CHECK(nvt_membw_split(&p, 12, in) == 0);

	/* Nonsense in: nothing judged. */
	memset(&p, 0, sizeof(p));
	CHECK(nvt_membw_split(&p, 12, in) == 0);
	p.ref = 40;
	p.base = 1;
	CHECK(nvt_membw_split(&p, 12, in) == 0);
}

static void test_combine(void)
{
	struct nvt_membw_probe a, b;
	struct nvt_membw m;
	char why[200];

	probe_of(1, 2, &a);
	probe_of(4, 2, &b);
	CHECK(nvt_membw_combine(&a, &b, 12, &m, why, sizeof(why)) == 0);
	CHECK(m.n_gpcs == 12);
	for (unsigned g = 0; g < 12; g++)
		CHECK(m.half[g] == h100_half[g]); /* half 0 holds GPC 0 */
	CHECK(nvt_membw_known(&m) == 8);
	CHECK(strstr(why, "8 of 12") != NULL);

	/* The second reference must lie in the first's other half. */
	probe_of(2, 2, &b);
	CHECK(nvt_membw_combine(&a, &b, 12, &m, why, sizeof(why)) == -1);
	CHECK(nvt_membw_known(&m) == 0);

	/* One GPC judged differently by the two: that one unknown. */
	probe_of(4, 2, &b);
	b.beside[5] = b.base - b.hog[5] * 0.12; /* GPC 5 now looks like GPC 4's other half */
	CHECK(nvt_membw_combine(&a, &b, 12, &m, why, sizeof(why)) == 0);
	CHECK(m.half[5] == NVT_HALF_UNKNOWN && m.half[6] == 0 && m.half[7] == 1);
	/* Two: no halves at all. */
	b.beside[6] = b.base - b.hog[6] * 0.12;
	CHECK(nvt_membw_combine(&a, &b, 12, &m, why, sizeof(why)) == -1);
	CHECK(nvt_membw_known(&m) == 0 && strstr(why, "disagree on 2"));
}

static void h100_halves(struct nvt_membw *m)
{
	memset(m, 0, sizeof(*m));
	m->n_gpcs = 12;
	for (unsigned g = 0; g < 12; g++)
		m->half[g] = (int8_t)h100_half[g];
}

static void test_sets(void)
{
	struct nvt_topology t;
	struct nvt_membw m;
	struct nvt_tpcset s, avail, others;
	char buf[64];

	h100_topo(&t);
	h100_halves(&m);
	/* GPC 0 has 4 TPCs, 1-5 have 8, 6-7 have 9; 8-11 one each. */
	CHECK(nvt_membw_half_tpcs(&t, &m, 0, &s) == 4 + 8 + 8 + 9);
	CHECK(nvt_set_has(&s, 0) && !nvt_set_has(&s, 1) && !nvt_set_has(&s, 62));
	CHECK(nvt_membw_half_tpcs(&t, &m, 1, &s) == 8 + 8 + 8 + 9);
	nvt_membw_gpcs_text(&m, 0, buf, sizeof(buf));
	CHECK_STR(buf, "0,4-6");
	nvt_membw_gpcs_text(&m, 1, buf, sizeof(buf));
	CHECK_STR(buf, "1-3,7");

	nvt_parse_list("0,8", 66, &s); /* GPC 0 */
	CHECK(nvt_membw_half_of(&t, &m, &s) == 0);
	nvt_parse_list("1,9", 66, &s); /* GPC 1 */
	CHECK(nvt_membw_half_of(&t, &m, &s) == 1);
	nvt_parse_list("0,1", 66, &s);
	CHECK(nvt_membw_half_of(&t, &m, &s) == 2);
	nvt_parse_list("0,62", 66, &s); /* a lone TPC: unknown */
	CHECK(nvt_membw_half_of(&t, &m, &s) == NVT_HALF_UNKNOWN);
	nvt_set_clear(&s);
	CHECK(nvt_membw_half_of(&t, &m, &s) == NVT_HALF_UNKNOWN);

	/* auto: away from the half the others hold. */
	nvt_topo_all(&t, &avail);
	nvt_parse_list("1,9,17,25", 66, &others); /* in half 1 */
	nvt_set_andnot(&avail, &avail, &others);
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 16) == 0);
	nvt_parse_list("0,8,16,24,4", 66, &others); /* in half 0 */
	nvt_topo_all(&t, &avail);
	nvt_set_andnot(&avail, &avail, &others);
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 16) == 1);
	/* 34 fit in neither half (24 and 33 free); 25 only in half 1. */
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 34) == NVT_HALF_UNKNOWN);
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 25) == 1);
	/* Nobody else: the half with more free TPCs (half 1: 33 against 29). */
	nvt_set_clear(&others);
	nvt_topo_all(&t, &avail);
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 4) == 1);
	CHECK(nvt_membw_auto_half(&t, &m, &avail, &others, 0) == NVT_HALF_UNKNOWN);
}

static void test_record(void)
{
	struct nvt_membw m, got;
	const char *uuid = "GPU-00010203-0405-0607-0809-0a0b0c0d0e84";
	char buf[NVT_MEMBW_TEXT_MAX], bad[NVT_MEMBW_TEXT_MAX];
	int n;

	h100_halves(&m);
	n = nvt_membw_format(uuid, 132, &m, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf));
	CHECK(strstr(buf, "halves=0,1,1,1,0,0,0,1,-,-,-,-\n") != NULL);
	memset(&got, 0, sizeof(got));
	CHECK(nvt_membw_parse(buf, uuid, 132, 12, &got) == 0);
	CHECK(got.n_gpcs == 12 && !memcmp(got.half, m.half, 12));
	/* Another GPU, SM count or GPC count: well formed, not this one's. */
	CHECK(nvt_membw_parse(buf, "GPU-00010203-0405-0607-0809-0a0b0c0d0e85", 132, 12, &got) == 1);
	CHECK(nvt_membw_parse(buf, uuid, 130, 12, &got) == 1);
	CHECK(nvt_membw_parse(buf, uuid, 132, 11, &got) == 1);
	/* A changed byte, a cut, junk: malformed. */
	snprintf(bad, sizeof(bad), "%s", buf);
	*strstr(bad, "halves=0") = 'H';
	CHECK(nvt_membw_parse(bad, uuid, 132, 12, &got) == -1);
	snprintf(bad, sizeof(bad), "%s", buf);
	strstr(bad, "halves=")[7] = '2';
	CHECK(nvt_membw_parse(bad, uuid, 132, 12, &got) == -1);
	snprintf(bad, sizeof(bad), "%.*s", n - 3, buf);
	CHECK(nvt_membw_parse(bad, uuid, 132, 12, &got) == -1);
	CHECK(nvt_membw_parse("", uuid, 132, 12, &got) == -1);
	CHECK(nvt_membw_parse(NULL, uuid, 132, 12, &got) == -1);
	/* Well checksummed but not in the form written: refused. */
	{
		static const char *const odd[] = {
			"nvtaskset-memory 1 uuid=GPU-0 sms=1 gpcs=1xx0\n",
			"nvtaskset-memory 1 uuid=GPU-0 sms=+132 gpcs=1 halves=0\n",
			"nvtaskset-memory 1 uuid=GPU-0 sms= 132 gpcs=1 halves=0\n",
			"nvtaskset-memory 1 uuid=GPU-0 sms=-4294967164 gpcs=1 halves=0\n",
			"nvtaskset-memory 1 uuid=GPU-0 sms=132 gpcs=01 halves=0\n",
			"nvtaskset-memory 1 uuid=GPU-0 sms=132 gpcs=1 halves=0 \n",
			"nvtaskset-memory 1  uuid=GPU-0 sms=132 gpcs=1 halves=0\n",
		};
		for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
			snprintf(bad, sizeof(bad), "%schecksum=%016llx\n", odd[i],
				 (unsigned long long)nvt_text_checksum(odd[i], strlen(odd[i])));
			CHECK(nvt_membw_parse(bad, "GPU-0", 132, 1, &got) == -1);
		}
		/* The same, as written: accepted. */
		const char *good = "nvtaskset-memory 1 uuid=GPU-0 sms=132 gpcs=1 halves=0\n";
		snprintf(bad, sizeof(bad), "%schecksum=%016llx\n", good,
			 (unsigned long long)nvt_text_checksum(good, strlen(good)));
		CHECK(nvt_membw_parse(bad, "GPU-0", 132, 1, &got) == 0 && got.half[0] == 0);
	}
	CHECK(nvt_membw_format("not-a-uuid", 132, &m, buf, sizeof(buf)) == -1);
	CHECK(nvt_membw_format(uuid, 132, &m, buf, 40) == -1);
	m.n_gpcs = 0;
	CHECK(nvt_membw_format(uuid, 132, &m, buf, sizeof(buf)) == -1);
}

int main(void)
{
	test_split();
	test_combine();
	test_sets();
	test_record();
	return CHECK_DONE();
}
