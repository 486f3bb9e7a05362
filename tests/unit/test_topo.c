/*
 * test_topo.c - unit tests: topology maths and its text record.
 * Over 500 lines on purpose: the tests of the topology (src/core/topo.c and
 * topocal.c: its maths, picks, text and cache records), on the one H100
 * fixture they share.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "h100_fixture.h"
#include "core/topo.h"
#include "core/tpcset.h"

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
	t.tmd_layout = NVT_TMD_V04_00;
	t.cc_major = 9;
	return t;
}

/* The enabled (clear) bits below 128 of a disable mask, as a list; the words
 * above (V04_01, V05_00) must be 0. */
static const char *enabled_bits(const uint32_t d[NVT_TMD_MASK_WORDS])
{
	static char buf[NVT_LIST_TEXT_MAX];
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	for (unsigned b = 0; b < 128; b++)
		if (!((d[b / 32] >> (b % 32)) & 1))
			nvt_set_add(&s, b);
	for (unsigned w = 4; w < NVT_TMD_MASK_WORDS; w++)
		CHECK(d[w] == 0);
	nvt_format_list(&s, buf, sizeof(buf));
	return buf;
}

static void test_identity(void)
{
	struct nvt_topology t;
	struct nvt_tpcset s = set_of("0-3"), all;
	uint32_t d[NVT_TMD_MASK_WORDS];

	nvt_topo_identity(&t, 66);
	CHECK(nvt_topo_validate(&t) == 0);
	CHECK(t.tmd_layout == NVT_TMD_NONE); /* nothing measured, nothing verified */
	memset(d, 0x55, sizeof(d));
	CHECK(nvt_topo_disable(&t, &s, d) == 4);
	CHECK(d[0] == 0xfffffff0u && d[1] == ~0u && d[2] == ~0u && d[3] == ~0u);
	CHECK(d[4] == 0 && d[5] == 0 && d[6] == 0 && d[7] == 0);
	s = set_of("64-65");
	CHECK(nvt_topo_disable(&t, &s, d) == 2);
	CHECK_STR(enabled_bits(d), "64-65");
	s = set_of("66-100");
	CHECK(nvt_topo_disable(&t, &s, d) == 0); /* TPCs the GPU lacks enable nothing */
	nvt_topo_all(&t, &all);
	CHECK(nvt_set_count(&all) == 66 && nvt_set_highest(&all) == 65);
	nvt_topo_identity(&t, 200);
	CHECK(nvt_topo_validate(&t) == -1); /* more TPCs than V04 mask bits */
}

static void test_h100_map(void)
{
	struct nvt_topology t = h100(0);
	struct nvt_tpcset s;
	uint32_t d[NVT_TMD_MASK_WORDS];

	CHECK(nvt_topo_validate(&t) == 0);
	s = set_of("0");
	CHECK(nvt_topo_disable(&t, &s, d) == 1);
	CHECK_STR(enabled_bits(d), "0");
	s = set_of("1");
	nvt_topo_disable(&t, &s, d);
	CHECK_STR(enabled_bits(d), "9");
	s = set_of("62-65");
	CHECK(nvt_topo_disable(&t, &s, d) == 4);
	CHECK_STR(enabled_bits(d), "75,78,81,83");
	s = set_of("0-3");
	nvt_topo_disable(&t, &s, d);
	CHECK_STR(enabled_bits(d), "0,9,18,27");
	s = set_of("0-65");
	CHECK(nvt_topo_disable(&t, &s, d) == 66);
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
	/* Layouts: known ones only, only on a measured map, V01 within 64 bits. */
	t = h100(1);
	t.tmd_layout = NVT_TMD_LAYOUTS;
	CHECK(nvt_topo_validate(&t) == -1);
	t = h100(1);
	t.flags = 0;
	CHECK(nvt_topo_validate(&t) == -1);
	t.tmd_layout = NVT_TMD_NONE;
	CHECK(nvt_topo_validate(&t) == 0);
	t = h100(1);
	t.tmd_layout = NVT_TMD_V01; /* the H100 map reaches bit 83 */
	CHECK(nvt_topo_validate(&t) == -1);
	t.n_tpcs = 6; /* bits 0-54 */
	t.n_gpcs = 0;
	CHECK(nvt_topo_validate(&t) == 0);
	t = h100(1);
	t.tmd_layout = NVT_TMD_V05_00;
	CHECK(nvt_topo_validate(&t) == 0);
}

static void test_gpcs(void)
{
	struct nvt_topology t = h100(1), plain;
	struct nvt_tpcset g = set_of("0"), out;
	char list[NVT_LIST_TEXT_MAX];

	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == 0);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "0,8,16,24");
	g = set_of("6");
	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == 0);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "6,14,22,30,37,44,51,58,60");
	g = set_of("8-11");
	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == 0);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "62-65");
	g = set_of("12");
	CHECK(nvt_topo_gpc_tpcs(&t, &g, &out) == -1);
	nvt_topo_identity(&plain, 66);
	g = set_of("0");
	CHECK(nvt_topo_gpc_tpcs(&plain, &g, &out) == -1);
	/* GPCs used in part (lone TPCs are whole GPCs of one TPC). */
	g = set_of("0,8,16,24");
	CHECK(nvt_topo_partial_gpcs(&t, &g) == 0);
	g = set_of("0-7");
	CHECK(nvt_topo_partial_gpcs(&t, &g) == 8);
	g = set_of("0-15:2");
	CHECK(nvt_topo_partial_gpcs(&t, &g) == 4);
	g = set_of("0,8,16,24,1,62-65");
	CHECK(nvt_topo_partial_gpcs(&t, &g) == 1);
	nvt_topo_all(&t, &g);
	CHECK(nvt_topo_partial_gpcs(&t, &g) == 0);
	g = set_of("0-7");
	CHECK(nvt_topo_partial_gpcs(&plain, &g) == 0); /* GPCs unknown */
	/* The GPCs a set holds whole, and the rest. */
	{
		struct nvt_tpcset whole, rest;
		g = set_of("0,8,16,24,6,14,22,30,37,44,51,58,60,62-63");
		CHECK(nvt_topo_whole_gpcs(&t, &g, &whole, &rest) == 0);
		nvt_format_list(&whole, list, sizeof(list));
		CHECK_STR(list, "0,6,8-9");
		CHECK(nvt_set_count(&rest) == 0);
		g = set_of("0,8,16,24,1,65");
		CHECK(nvt_topo_whole_gpcs(&t, &g, &whole, &rest) == 0);
		nvt_format_list(&whole, list, sizeof(list));
		CHECK_STR(list, "0,11");
		nvt_format_list(&rest, list, sizeof(list));
		CHECK_STR(list, "1");
		g = set_of("1,9");
		CHECK(nvt_topo_whole_gpcs(&t, &g, &whole, &rest) == 0);
		CHECK(nvt_set_count(&whole) == 0 && nvt_set_count(&rest) == 2);
		nvt_topo_all(&t, &g);
		CHECK(nvt_topo_whole_gpcs(&t, &g, &whole, &rest) == 0);
		CHECK(nvt_set_count(&whole) == 12 && nvt_set_count(&rest) == 0);
		CHECK(nvt_topo_whole_gpcs(&plain, &g, &whole, &rest) == -1);
	}
}

static void test_text(void)
{
	struct nvt_topology t = h100(1), back;
	char text[NVT_TOPO_TEXT_MAX], bad[NVT_TOPO_TEXT_MAX + 2], small[16];

	CHECK(nvt_topo_format(&t, text, sizeof(text)) > 0);
	CHECK(strncmp(text, "nvtaskset-topology 2 tpcs=66 gpcs=12 flags=1 tmd=V04_00 cc=9.0 "
			    "map=0,9,18,",
		      74) == 0);
	CHECK(nvt_topo_parse(text, &back) == 0);
	CHECK(memcmp(&t, &back, sizeof(t)) == 0);
	snprintf(bad, sizeof(bad), "%s\n", text);
	CHECK(nvt_topo_parse(bad, &back) == 0);
	CHECK(nvt_topo_format(&t, small, sizeof(small)) == -1);
	/* Every layout and compute capability round-trips. */
	for (unsigned l = 0; l < NVT_TMD_LAYOUTS; l++) {
		t = h100(0);
		t.n_tpcs = 8; /* bits below 64: valid for V01 too */
		memset(t.hw_bit + 8, NVT_NONE, sizeof(t.hw_bit) - 8);
		t.tmd_layout = (uint8_t)l;
		t.cc_major = 12;
		t.cc_minor = 1;
		CHECK(nvt_topo_format(&t, text, sizeof(text)) > 0);
		CHECK(nvt_topo_parse(text, &back) == 0 && memcmp(&t, &back, sizeof(t)) == 0);
	}
	t.tmd_layout = NVT_TMD_LAYOUTS;
	CHECK(nvt_topo_format(&t, text, sizeof(text)) == -1);

	nvt_topo_identity(&t, 4);
	nvt_topo_format(&t, text, sizeof(text));
	CHECK_STR(text, "nvtaskset-topology 2 tpcs=4 gpcs=0 flags=0 tmd=none cc=0.0 map=0,1,2,3");
	CHECK(nvt_topo_parse(text, &back) == 0 && back.n_tpcs == 4 && back.gpc[0] == NVT_NONE);
	CHECK(back.tmd_layout == NVT_TMD_NONE);

	CHECK(nvt_topo_parse("", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 3 tpcs=1 gpcs=0 flags=0 tmd=none cc=0.0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V05 cc=12.0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V05_00 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V05_00 cc=12 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V05_00 cc=256.0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V05_00 cc=12.0 map=0", &back) == 0);
	CHECK(back.tmd_layout == NVT_TMD_V05_00 && back.cc_major == 12 && back.cc_minor == 0);
	/* A layout claims a calibration. */
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=0 tmd=V05_00 cc=12.0 map=0", &back) == -1);
	CHECK(nvt_topo_parse("nvtaskset-topology 2 tpcs=1 gpcs=0 flags=1 tmd=V01 cc=8.0 map=64", &back) == -1);
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
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=1 gpcs=0 flags=0 tmd=none cc=0.0 map=0", &back) == -1);
}

/*
 * Version 1 records (nvtaskset 0.1): V04_00 is verified only where the old
 * calibration must have swept it, a calibrated map naming a bit >= 64.
 */
static void test_legacy_text(void)
{
	struct nvt_topology t = h100(1), back;
	char text[NVT_TOPO_TEXT_MAX];
	int n = snprintf(text, sizeof(text), "nvtaskset-topology 1 tpcs=66 gpcs=0 flags=1 map=");

	for (unsigned i = 0; i < 66; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, i ? ",%u" : "%u", h100_bits[i]);
	CHECK(nvt_topo_parse(text, &back) == 0);
	CHECK(back.tmd_layout == NVT_TMD_V04_00 && back.cc_major == 0 && back.cc_minor == 0);
	CHECK(memcmp(back.hw_bit, t.hw_bit, sizeof(t.hw_bit)) == 0);
	CHECK(nvt_topo_legacy_layout(&back) == NVT_TMD_V04_00);
	/* Measured, but bits 0-63 only: a V01 sweep or a small V04 one. */
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=1 map=0,63", &back) == 0);
	CHECK(back.tmd_layout == NVT_TMD_NONE);
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=1 map=0,64", &back) == 0);
	CHECK(back.tmd_layout == NVT_TMD_V04_00);
	/* Not measured at all. */
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=0 map=0,64", &back) == 0);
	CHECK(back.tmd_layout == NVT_TMD_NONE);
}

/* The sweep a calibration would see on the H100 fixture. */
static void h100_sweep(struct nvt_smset *missing)
{
	memset(missing, 0, sizeof(struct nvt_smset) * NVT_HW_BITS);
	for (unsigned t = 0; t < 66; t++) {
		unsigned b = h100_bits[t];
		missing[b].w[(2 * t) / 64] |= (uint64_t)1 << ((2 * t) % 64);
		missing[b].w[(2 * t + 1) / 64] |= (uint64_t)1 << ((2 * t + 1) % 64);
	}
}

static void test_from_sweep(void)
{
	static struct nvt_smset missing[NVT_HW_BITS];
	struct nvt_topology t, want = h100(0);
	char err[160];

	h100_sweep(missing);
	CHECK(nvt_topo_from_sweep(132, 128, missing, &t, err, sizeof(err)) == 0);
	CHECK(memcmp(t.hw_bit, want.hw_bit, sizeof(t.hw_bit)) == 0);
	CHECK(t.n_tpcs == 66 && t.n_gpcs == 0 && (t.flags & NVT_TOPO_CALIBRATED));
	CHECK(nvt_topo_validate(&t) == 0);
	/* A bit that removed one SM, or three: not a TPC. */
	missing[4].w[0] = 1u << 2;
	CHECK(nvt_topo_from_sweep(132, 128, missing, &t, err, sizeof(err)) == -1);
	CHECK_STR(err, "disabling mask bit 4 removed 1 SMs that are not one TPC");
	h100_sweep(missing);
	missing[0].w[0] |= 1u << 2;
	CHECK(nvt_topo_from_sweep(132, 128, missing, &t, err, sizeof(err)) == -1);
	/* SMs 1 and 2 are two halves of different TPCs. */
	h100_sweep(missing);
	missing[4].w[0] = 0x6;
	CHECK(nvt_topo_from_sweep(132, 128, missing, &t, err, sizeof(err)) == -1);
	/* Two bits for one TPC. */
	h100_sweep(missing);
	missing[4] = missing[0];
	CHECK(nvt_topo_from_sweep(132, 128, missing, &t, err, sizeof(err)) == -1);
	CHECK_STR(err, "mask bits 0 and 4 both remove TPC 0");
	/* A TPC no bit removes (the sweep covered too few bits). */
	h100_sweep(missing);
	CHECK(nvt_topo_from_sweep(132, 64, missing, &t, err, sizeof(err)) == -1);
	CHECK_STR(err, "no mask bit removes TPC 15 (SMs 30-31)");
	CHECK(nvt_topo_from_sweep(131, 128, missing, &t, err, sizeof(err)) == -1);
}

static void test_set_gpcs(void)
{
	struct nvt_topology t = h100(0), want = h100(1);
	unsigned group[132];
	char err[160];

	/* Clusters joined the even SMs and the odd SMs of each GPC separately:
	 * the TPCs still tie them together. */
	for (unsigned s = 0; s < 132; s++)
		group[s] = 1000 + 2 * h100_gpc(s / 2) + s % 2;
	CHECK(nvt_topo_set_gpcs(&t, group, 132, err, sizeof(err)) == 0);
	CHECK(t.n_gpcs == 12);
	CHECK(memcmp(t.gpc, want.gpc, 66) == 0);
	CHECK(nvt_topo_validate(&t) == 0);
	/* Every SM on its own: each TPC a GPC, more than a topology holds. */
	for (unsigned s = 0; s < 132; s++)
		group[s] = s;
	CHECK(nvt_topo_set_gpcs(&t, group, 132, err, sizeof(err)) == -1);
	CHECK_STR(err, "more than 64 GPCs");
	CHECK(nvt_topo_set_gpcs(&t, group, 130, err, sizeof(err)) == -1);
}

static void test_cache_record(void)
{
	struct nvt_topology t = h100(1), back;
	struct nvt_cache_key key = {"GPU-0123-abcd", 13000, 132, "580.159.04"}, other = key, found;
	char text[NVT_CACHE_TEXT_MAX], bad[NVT_CACHE_TEXT_MAX + 8];
	int n = nvt_cache_format(&key, &t, text, sizeof(text));

	CHECK(n > 0 && text[n - 1] == '\n');
	CHECK(strncmp(text, "nvtaskset-cache 2 uuid=GPU-0123-abcd driver=13000 sms=132 nvrm=580.159.04\n"
			    "nvtaskset-topology 2 ",
		      95) == 0);
	CHECK(nvt_cache_parse(text, &key, &back, &found) == NVT_CACHE_OK);
	CHECK(found.sms == 132 && found.driver_version == 13000 && !strcmp(found.nvrm, "580.159.04"));
	/* Identified from /proc (no driver call): UUID and module version decide. */
	other = key;
	other.driver_version = 0;
	other.sms = 0;
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_OK);
	snprintf(other.nvrm, sizeof(other.nvrm), "580.160.01");
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	other = key;
	snprintf(other.nvrm, sizeof(other.nvrm), "-");
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_OK); /* the driver decides */
	other = key;
	snprintf(other.nvrm, sizeof(other.nvrm), "580.160.01"); /* same CUDA, new module */
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	CHECK(memcmp(&back, &t, sizeof(t)) == 0);
	snprintf(other.uuid, sizeof(other.uuid), "GPU-other");
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	other = key;
	other.driver_version = 12080;
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	other = key;
	other.sms = 130;
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	/* Any changed byte is caught. */
	for (int i = 0; i < n; i += 7) {
		memcpy(bad, text, (size_t)n + 1);
		bad[i] = bad[i] == '1' ? '2' : '1';
		CHECK(nvt_cache_parse(bad, &key, &back, NULL) != NVT_CACHE_OK);
	}
	memcpy(bad, text, (size_t)n + 1);
	bad[n - 1] = '\0';
	CHECK(nvt_cache_parse(bad, &key, &back, NULL) == NVT_CACHE_CORRUPT);
	snprintf(bad, sizeof(bad), "%sextra\n", text);
	CHECK(nvt_cache_parse(bad, &key, &back, NULL) == NVT_CACHE_CORRUPT);
	CHECK(nvt_cache_parse("", &key, &back, NULL) == NVT_CACHE_CORRUPT);
	/* Without a known module version, /proc identification never matches. */
	snprintf(key.nvrm, sizeof(key.nvrm), "-");
	n = nvt_cache_format(&key, &t, text, sizeof(text));
	other = key;
	other.driver_version = 0;
	CHECK(n > 0 && nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	/* A viewer that knows neither version takes the UUID's map; another GPU's it does not. */
	other.driver_version = NVT_CACHE_ANY_DRIVER;
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_OK);
	CHECK(memcmp(&back, &t, sizeof(t)) == 0);
	snprintf(other.uuid, sizeof(other.uuid), "GPU-other");
	CHECK(nvt_cache_parse(text, &other, &back, NULL) == NVT_CACHE_FOREIGN);
	snprintf(key.nvrm, sizeof(key.nvrm), "5 8");
	CHECK(nvt_cache_format(&key, &t, text, sizeof(text)) == -1);
	snprintf(key.uuid, sizeof(key.uuid), "bad uuid");
	CHECK(nvt_cache_format(&key, &t, text, sizeof(text)) == -1);
}

/* A record as nvtaskset 0.1 wrote it: its checksum is FNV-1a of the first two lines. */
static void v1_record(char *buf, size_t len, const char *topo_line)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int n = snprintf(buf, len, "nvtaskset-cache 1 uuid=GPU-1 driver=13000 sms=4 nvrm=580.1\n%s\n",
			 topo_line);
	for (int i = 0; i < n; i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ull;
	}
	snprintf(buf + n, len - (size_t)n, "checksum=%016llx\n", (unsigned long long)h);
}

static void test_legacy_cache(void)
{
	struct nvt_cache_key key = {"GPU-1", 13000, 4, "580.1"};
	struct nvt_topology back;
	char text[NVT_CACHE_TEXT_MAX];

	/* A Hopper record, measured through V04_00: kept, V04_00 verified. */
	v1_record(text, sizeof(text), "nvtaskset-topology 1 tpcs=2 gpcs=0 flags=1 map=75,83");
	CHECK(nvt_cache_parse(text, &key, &back, NULL) == NVT_CACHE_OK);
	CHECK(back.tmd_layout == NVT_TMD_V04_00 && back.hw_bit[1] == 83);
	/* One that proves no layout: measured again. */
	v1_record(text, sizeof(text), "nvtaskset-topology 1 tpcs=2 gpcs=0 flags=1 map=0,1");
	CHECK(nvt_cache_parse(text, &key, &back, NULL) == NVT_CACHE_UNVERIFIED);
	/* Versions must agree: a version 1 record with a version 2 line, and the reverse. */
	v1_record(text, sizeof(text),
		  "nvtaskset-topology 2 tpcs=2 gpcs=0 flags=1 tmd=V05_00 cc=12.0 map=0,1");
	CHECK(nvt_cache_parse(text, &key, &back, NULL) == NVT_CACHE_CORRUPT);
	back = (struct nvt_topology){0};
	CHECK(nvt_topo_parse("nvtaskset-topology 1 tpcs=2 gpcs=0 flags=1 map=75,83", &back) == 0);
	CHECK(nvt_cache_format(&key, &back, text, sizeof(text)) > 0);
	CHECK(strstr(text, "nvtaskset-cache 2 ") == text && strstr(text, "tmd=V04_00 cc=0.0"));
	CHECK(nvt_cache_parse(text, &key, &back, NULL) == NVT_CACHE_OK);
	text[strlen("nvtaskset-cache ")] = '3';
	CHECK(nvt_cache_parse(text, &key, &back, NULL) == NVT_CACHE_CORRUPT);
}

static const char *pick(const struct nvt_topology *t, const char *avail, unsigned n,
			enum nvt_strategy strategy)
{
	static char buf[NVT_LIST_TEXT_MAX];
	struct nvt_tpcset a = set_of(avail), out;
	if (nvt_topo_pick(t, &a, n, strategy, &out))
		return "<none>";
	CHECK(nvt_set_count(&out) == n);
	nvt_format_list(&out, buf, sizeof(buf));
	return buf;
}

static void test_pick(void)
{
	struct nvt_topology t = h100(1), plain;

	/* Packed: the fewest whole GPCs, lowest first. */
	CHECK_STR(pick(&t, "0-65", 4, NVT_PACKED), "0,8,16,24");
	CHECK_STR(pick(&t, "0-65", 8, NVT_PACKED), "1,9,17,25,32,39,46,53");
	CHECK_STR(pick(&t, "0-65", 9, NVT_PACKED), "6,14,22,30,37,44,51,58,60");
	CHECK_STR(pick(&t, "0-65", 1, NVT_PACKED), "62");
	CHECK_STR(pick(&t, "0-65", 66, NVT_PACKED), "0-65");
	/* 3 TPCs: no whole GPC fits; three lone TPCs are whole "GPCs" of one. */
	CHECK_STR(pick(&t, "0-65", 3, NVT_PACKED), "62-64");
	/* GPC 1 busy: the next whole GPC of 8. */
	CHECK_STR(pick(&t, "0,2-8,10-16,18-24,26-31,33-38,40-45,47-52,54-65", 8, NVT_PACKED),
		  "2,10,18,26,33,40,47,54");
	/* 7 with lone TPCs busy: no whole set adds up: GPC 0 (4) + 3 from one GPC. */
	CHECK_STR(pick(&t, "0-61", 7, NVT_PACKED), "0-1,8-9,16-17,24");
	/* Spread: one TPC per GPC in turn. */
	CHECK_STR(pick(&t, "0-65", 8, NVT_SPREAD), "0-7");
	CHECK_STR(pick(&t, "0-65", 13, NVT_SPREAD), "0-8,62-65");
	CHECK_STR(pick(&t, "0-3", 5, NVT_SPREAD), "<none>");
	CHECK_STR(pick(&t, "0-65", 67, NVT_PACKED), "<none>");
	CHECK_STR(pick(&t, "0-65", 0, NVT_PACKED), "<none>");
	CHECK_STR(pick(&t, "60-200", 6, NVT_PACKED), "60-65");
	/* Without GPCs: lowest, or evenly spaced. */
	nvt_topo_identity(&plain, 54);
	CHECK_STR(pick(&plain, "0-53", 4, NVT_PACKED), "0-3");
	CHECK_STR(pick(&plain, "0-53", 3, NVT_SPREAD), "0,18,36");
	CHECK_STR(pick(&plain, "0-53", 4, NVT_CLUSTERS), "0-3");
}

/* Clusters of cluster_tpcs TPCs that list holds on t. */
static unsigned capacity(const struct nvt_topology *t, const char *list, unsigned cluster_tpcs)
{
	struct nvt_tpcset s = set_of(list);
	return nvt_topo_cluster_capacity(t, &s, cluster_tpcs);
}

static void test_pick_clusters(void)
{
	struct nvt_topology t = h100(1), plain;
	char list[NVT_LIST_TEXT_MAX];

	/* What the H100 measured (docs/bench/clusters-2026-11-22/): -n 42's
	 * packed pick, GPCs 1, 2, 3 (8 TPCs), 6 and 7 (9), holds 20 clusters of
	 * 4 SMs, where MPS's 84 SMs hold 21. */
	CHECK(capacity(&t, pick(&t, "0-65", 42, NVT_PACKED), 2) == 20);
	/* Blocks of 8 from the GPCs of 8 first, then the rest in the GPC with
	 * the fewest to spare: GPCs 1-5 and 2 of GPC 0's 4. */
	CHECK_STR(pick(&t, "0-65", 42, NVT_CLUSTERS), "0-5,8-13,17-21,25-29,32-36,39-43,46-50,53-57");
	/* 50: GPCs 1-5, 8 of GPC 6's 9, 2 of GPC 0. */
	snprintf(list, sizeof(list), "%s", pick(&t, "0-65", 50, NVT_CLUSTERS));
	CHECK_STR(list, "0-6,8-14,17-22,25-30,32-37,39-44,46-51,53-58");
	/* Every size up to 56 holds as many clusters of 4, 8 and 16 SMs as an MPS
	 * share of 2N SMs does: floor(2N / k). */
	for (unsigned n = 1; n <= 56; n++) {
		snprintf(list, sizeof(list), "%s", pick(&t, "0-65", n, NVT_CLUSTERS));
		for (unsigned u = 2; u <= NVT_CLUSTER_BLOCK; u *= 2)
			if (capacity(&t, list, u) != n / u)
				CHECK(!"a clusters pick holds fewer clusters than MPS's share");
	}
	/* Small ones: a lone TPC for 1, GPC 0 for 2 to 4 (two lone TPCs would
	 * hold no cluster of 4 SMs). */
	CHECK_STR(pick(&t, "0-65", 1, NVT_CLUSTERS), "62");
	CHECK_STR(pick(&t, "0-65", 2, NVT_CLUSTERS), "0,8");
	CHECK_STR(pick(&t, "0-65", 4, NVT_CLUSTERS), "0,8,16,24");
	/* Every TPC, and more than there are. */
	CHECK_STR(pick(&t, "0-65", 66, NVT_CLUSTERS), "0-65");
	CHECK_STR(pick(&t, "0-65", 67, NVT_CLUSTERS), "<none>");
	/* Scattered free TPCs (3 in each of GPCs 0, 1 and 2, and lone 62): even
	 * shares from the GPCs with the most free, then the rest in one GPC. */
	CHECK_STR(pick(&t, "0-2,8-10,16-18,62", 6, NVT_CLUSTERS), "0-2,8-10");
	CHECK_STR(pick(&t, "0-2,8-10,16-18,62", 7, NVT_CLUSTERS), "0-2,8-10,18");
	CHECK(capacity(&t, "0-2,8-10,18", 2) == 3);
	/* Capacity without GPCs: the count. */
	nvt_topo_identity(&plain, 54);
	CHECK(capacity(&plain, "0-9", 4) == 2);
	CHECK(capacity(&t, "0-65", 0) == 0);
}

/* 3 GPCs: 0 holds TPCs 0-3, 1 holds 4-11, 2 holds 12-13. */
static void small_topology(struct nvt_topology *topo)
{
	nvt_topo_identity(topo, 14);
	topo->n_gpcs = 3;
	for (unsigned t = 0; t < 14; t++)
		topo->gpc[t] = t < 4 ? 0 : t < 12 ? 1 : 2;
}

static void test_pick_gpcs(void)
{
	struct nvt_topology topo;
	struct nvt_tpcset free, out;
	char list[NVT_LIST_TEXT_MAX];

	small_topology(&topo);
	nvt_topo_all(&topo, &free);
	/* The largest whole GPCs that fit in max_tpcs. */
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 1, 9, &out) == 8);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "4-11");
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 2, 18, &out) == 12);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "0-11");
	/* Too few TPCs allowed for the largest: the smallest. */
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 2, 6, &out) == 6);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "0-3,12-13");
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 2, 5, &out) == -1);
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 4, 100, &out) == -1);
	/* A GPC with one TPC taken is not whole. */
	free.w[0] &= ~(1ull << 5);
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 1, 9, &out) == 4);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "0-3");
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 3, 100, &out) == -1);
	/* GPCs unknown (before Hopper). */
	topo.n_gpcs = 0;
	CHECK(nvt_topo_pick_gpcs(&topo, &free, 1, 9, &out) == -1);
}


/* The fake H100 (tests/unit/h100_fixture.h): GPCs of 4, 8 (five), 9 (two) and 1 (four) TPCs. */
static void test_pick_gpcs_h100(void)
{
	struct nvt_topology t = h100(1);
	struct nvt_tpcset all = set_of("0-65"), out;
	char list[NVT_LIST_TEXT_MAX];

	CHECK(nvt_topo_pick_gpcs(&t, &all, 2, 18, &out) == 18);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "6-7,14-15,22-23,30-31,37-38,44-45,51-52,58-61");
	/* Four GPCs of at most 4 TPCs: the four lone TPCs, not GPC 0 (one GPC
	 * of 4, which a packed pick of 4 TPCs takes). */
	CHECK(nvt_topo_pick_gpcs(&t, &all, 4, 4, &out) == 4);
	nvt_format_list(&out, list, sizeof(list));
	CHECK_STR(list, "62-65");
	CHECK(nvt_topo_pick_gpcs(&t, &all, 5, 7, &out) == -1);
	CHECK(nvt_topo_pick_gpcs(&t, &all, 13, 66, &out) == -1);
	CHECK(nvt_topo_pick_gpcs(&t, &all, 12, 66, &out) == 66);
}

static void test_cluster_room(void)
{
	struct nvt_topology t = h100(1), plain;
	struct nvt_tpcset on = set_of("0,8"), gpcs;
	char list[NVT_LIST_TEXT_MAX];

	CHECK(nvt_topo_cluster_room(&t, &on, &gpcs) == 4);
	nvt_format_list(&gpcs, list, sizeof(list));
	CHECK_STR(list, "0,8,16,24");
	on = set_of("0-1");
	CHECK(nvt_topo_cluster_room(&t, &on, &gpcs) == 2);
	nvt_format_list(&gpcs, list, sizeof(list));
	CHECK_STR(list, "0-1,8-9,16-17,24-25,32,39,46,53");
	CHECK(nvt_topo_cluster_room(&t, &gpcs, NULL) == 16);
	on = set_of("62");
	CHECK(nvt_topo_cluster_room(&t, &on, &gpcs) == 2);
	nvt_format_list(&gpcs, list, sizeof(list));
	CHECK_STR(list, "62");
	on = set_of("6,14,22,30,37,44,51,58,60,62");
	CHECK(nvt_topo_cluster_room(&t, &on, NULL) == 18);
	on = set_of("70"); /* a TPC the GPU lacks counts nowhere */
	CHECK(nvt_topo_cluster_room(&t, &on, &gpcs) == 0 && nvt_set_count(&gpcs) == 0);
	nvt_topo_identity(&plain, 66); /* GPCs unknown */
	on = set_of("0-3");
	CHECK(nvt_topo_cluster_room(&plain, &on, &gpcs) == 0 && nvt_set_count(&gpcs) == 0);
}

static void test_strategy_words(void)
{
	enum nvt_strategy st = NVT_PACKED;
	const enum nvt_strategy all[] = {NVT_PACKED, NVT_SPREAD, NVT_CLUSTERS};

	for (unsigned i = 0; i < 3; i++) {
		CHECK(nvt_strategy_parse(nvt_strategy_name(all[i]), &st) == 0);
		CHECK(st == all[i]);
	}
	CHECK_STR(nvt_strategy_name(NVT_SPREAD), "spread");
	st = NVT_SPREAD;
	CHECK(nvt_strategy_parse("Packed", &st) == -1 && st == NVT_SPREAD);
	CHECK(nvt_strategy_parse("", &st) == -1);
	CHECK(nvt_strategy_parse(NULL, &st) == -1);
}

/* A slot's map is taken from a task of root's or the viewer's own, never another user's. */
static void test_map_from_task(void)
{
	CHECK(nvt_map_from_task(0, 0, 1000) == NVT_MAP_ROOT_TASK);
	CHECK(nvt_map_from_task(0, 0, 0) == NVT_MAP_ROOT_TASK);
	CHECK(nvt_map_from_task(1000, 1000, 1000) == NVT_MAP_OWN_TASK);
	CHECK(nvt_map_from_task(1001, 1001, 1000) == NVT_MAP_NONE);
	CHECK(nvt_map_from_task(1000, 1000, 0) == NVT_MAP_NONE);
	/* A setuid-root program a user started keeps her file (no shim of its own): hers to write,
	 * not root's map, for root or another user; her own for her. */
	CHECK(nvt_map_from_task(1000, 0, 0) == NVT_MAP_NONE);
	CHECK(nvt_map_from_task(1000, 0, 1001) == NVT_MAP_NONE);
	CHECK(nvt_map_from_task(1000, 0, 1000) == NVT_MAP_OWN_TASK);
	/* Another user's setuid program she started: not the program's user's own. */
	CHECK(nvt_map_from_task(1000, 1001, 1001) == NVT_MAP_NONE);
	/* A root task that became hers (setuid), its file in root's directory: hers may write it. */
	CHECK(nvt_map_from_task(0, 1000, 0) == NVT_MAP_NONE);
	CHECK(nvt_map_from_task(0, 1000, 1000) == NVT_MAP_OWN_TASK);
	/* The cache over root's tasks, root's over the viewer's own, hers over nothing. */
	CHECK(NVT_MAP_CACHE > NVT_MAP_ROOT_TASK && NVT_MAP_ROOT_TASK > NVT_MAP_OWN_TASK &&
	      NVT_MAP_OWN_TASK > NVT_MAP_NONE);
}

int main(void)
{
	test_map_from_task();
	test_strategy_words();
	test_cluster_room();
	test_from_sweep();
	test_set_gpcs();
	test_cache_record();
	test_pick();
	test_pick_clusters();
	test_pick_gpcs();
	test_pick_gpcs_h100();
	test_identity();
	test_h100_map();
	test_validate();
	test_gpcs();
	test_text();
	test_legacy_text();
	test_legacy_cache();
	return CHECK_DONE();
}
