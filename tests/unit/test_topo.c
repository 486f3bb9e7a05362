/* Unit tests: topology maths and its text record. SPDX-License-Identifier: MIT */
#include "check.h"
#include "h100_fixture.h"
#include "topo.h"
#include "tpcset.h"

static struct nvt_tpcset set_of(const char *list)
{
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	nvt_parse_list(list, NVT_MAX_TPCS, &s);
	return s;
}

static struct nvt_topology h100(int with_gpcs)
{
	struct nvt_topology t;
	nvt_topo_identity(&t, 66);
	for (unsigned i = 0; i < 66; i++) {
		t.hw_bit[i] = h100_bits[i];
		if (with_gpcs)
			t.gpc[i] = h100_gpc(i);
	}
	t.n_gpcs = with_gpcs ? 12 : 0;
	t.flags = NVT_TOPO_CALIBRATED;
	return t;
}

/* The enabled (clear) bits of a V04 disable mask, as a list. */
static const char *enabled_bits(const uint32_t d[4])
{
	static char buf[NVT_LIST_TEXT_MAX];
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	for (unsigned b = 0; b < 128; b++)
		if (!((d[b / 32] >> (b % 32)) & 1))
			nvt_set_add(&s, b);
	nvt_format_list(&s, buf, sizeof(buf));
	return buf;
}

static void test_identity(void)
{
	struct nvt_topology t;
	struct nvt_tpcset s = set_of("0-3"), all;
	uint32_t d[4];
	uint64_t d1;

	nvt_topo_identity(&t, 66);
	CHECK(nvt_topo_validate(&t) == 0);
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 4);
	CHECK(d[0] == 0xfffffff0u && d[1] == ~0u && d[2] == ~0u && d[3] == ~0u);
	CHECK(nvt_topo_disable_v1(&t, &s, &d1) == 4 && d1 == ~0xfull);
	s = set_of("64-65");
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 2);
	CHECK(nvt_topo_disable_v1(&t, &s, &d1) == 0); /* not expressible in 64 bits */
	s = set_of("66-100");
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 0); /* TPCs the GPU lacks enable nothing */
	nvt_topo_all(&t, &all);
	CHECK(nvt_set_count(&all) == 66 && nvt_set_highest(&all) == 65);
	nvt_topo_identity(&t, 200);
	CHECK(nvt_topo_validate(&t) == -1); /* more TPCs than V04 mask bits */
}

static void test_h100_map(void)
{
	struct nvt_topology t = h100(0);
	struct nvt_tpcset s;
	uint32_t d[4];

	CHECK(nvt_topo_validate(&t) == 0);
	s = set_of("0");
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 1);
	CHECK_STR(enabled_bits(d), "0");
	s = set_of("1");
	nvt_topo_disable_v4(&t, &s, d);
	CHECK_STR(enabled_bits(d), "9");
	s = set_of("62-65");
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 4);
	CHECK_STR(enabled_bits(d), "75,78,81,83");
	s = set_of("0-3");
	nvt_topo_disable_v4(&t, &s, d);
	CHECK_STR(enabled_bits(d), "0,9,18,27");
	s = set_of("0-65");
	CHECK(nvt_topo_disable_v4(&t, &s, d) == 66);
	CHECK_STR(enabled_bits(d), "0-3,9-16,18-25,27-34,36-43,45-52,54-71,75,78,81,83");
}

static void test_validate(void)
{
	struct nvt_topology t = h100(1);

	CHECK(nvt_topo_validate(&t) == 0);
	t.n_tpcs = 0;
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.n_tpcs = NVT_MAX_TPCS + 1;
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.hw_bit[5] = t.hw_bit[6]; /* two TPCs on one slot */
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.hw_bit[5] = 128;
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.gpc[3] = 12;
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.n_gpcs = 13; /* GPC 12 has no TPC */
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.n_gpcs = NVT_MAX_GPCS + 1;
	CHECK(nvt_topo_validate(&t) == -1);
}

static void test_gpcs(void)
{
	struct nvt_topology t = h100(1), plain;
	struct nvt_tpcset g = set_of("0"), out;
	char list[NVT_LIST_TEXT_MAX];

	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == 0);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "0,8,16,24,32,40,48,56");
	g = set_of("8-11");
	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == 0);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "62-65");
	g = set_of("12");
	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == -1);
	nvt_topo_identity(&plain, 66);
	g = set_of("0");
	CHECK(nvt_topo_gpc_tpcs(&plain, &g, &out) == -1);
}

static void test_text(void)
{
	struct nvt_topology t = h100(1), back;
	char text[NVT_TOPO_TEXT_MAX], bad[NVT_TOPO_TEXT_MAX + 2], small[16];

	CHECK(nvt_topo_format(&t, text, sizeof(text)) > 0);
	CHECK(strncmp(text, "nvtaskset-topology 1 tpcs=66 gpcs=12 flags=1 map=0,9,18,", 56) == 0);
	CHECK(nvt_topo_parse(text, &back) == 0);
	CHECK(memcmp(&t, &back, sizeof(t)) == 0);
	snprintf(bad, sizeof(bad), "%s\n", text);
	CHECK(nvt_topo_parse(bad, &back) == 0);
	CHECK(nvt_topo_format(&t, small, sizeof(small)) == -1);

	nvt_topo_identity(&t, 4);
	nvt_topo_format(&t, text, sizeof(text));
	CHECK_STR(text, "nvtaskset-topology 1 tpcs=4 gpcs=0 flags=0 map=0,1,2,3");
	CHECK(nvt_topo_parse(text, &back) == 0 && back.n_tpcs == 4 && back.gpc[0] == NVT_NONE);

	CHECK(nvt_topo_parse("", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=1 gpcs=0 flags=0 map=0 ", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=0 map=0,0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=1 gpcs=0 flags=0 map=128", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=1 gpcs=0 flags=0 map=-1", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=0 gpcs=0 flags=0 map=", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=1 flags=0 map=0,1 gpc=0,1", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=2 flags=0 map=0,1", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=2 flags=0 map=0,1 gpc=1,0", &back) == 0);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=999 gpcs=0 flags=0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=1 gpcs=0 flags=99999999 map=0", &back) == -1);
}

int main(void)
{
	test_identity();
	test_h100_map();
	test_validate();
	test_gpcs();
	test_text();
	return CHECK_DONE();
}
