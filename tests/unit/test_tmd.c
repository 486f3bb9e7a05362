/* Unit tests: TMD mask writing on synthetic TMDs. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/tmd.h"

#include <stdint.h>

#define TMD_BYTES 384 /* a Hopper or Blackwell TMD */

/* A poisoned TMD: every byte busy, the layout's version byte set. */
static void poison(uint8_t *tmd, unsigned version_at, uint8_t version)
{
	for (int i = 0; i < TMD_BYTES; i++)
		tmd[i] = (uint8_t)(0x5a ^ (i * 13));
	tmd[version_at] = version;
}

static int bytes_equal(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, TMD_BYTES) == 0;
}

/* Where NVIDIA's class headers put each layout's fields, written out as the
 * test's own expectation (open-gpu-doc classes/compute/, see src/core/tmd.c). */
static const struct expect {
	unsigned layout;
	unsigned version_at;
	uint8_t version;
	unsigned part_at[2], part_words[2];
	int valid_byte; /* the byte holding the valid bit as its bit 7; -1 none */
} expects[] = {
	/* clc6c0qmd.h SM_DISABLE_MASK_LOWER/UPPER MW(703:672)/MW(735:704). */
	{NVT_TMD_V01, 72, 0x30, {84, 0}, {2, 0}, -1},
	/* clcbc0qmd.h TPC_DISABLE_MASK(i) MW(2463+32i:2432+32i), _VALID MW(31:31). */
	{NVT_TMD_V04_00, 72, 0x40, {304, 0}, {4, 0}, 3},
	/* clcdc0qmd.h V04_01: the same plus TPC_DISABLE_MASK_UPPER(i) MW(2719+32i:2688+32i). */
	{NVT_TMD_V04_01, 72, 0x41, {304, 336}, {4, 4}, 3},
	/* clcdc0qmd.h V05_00: TPC_DISABLE_MASK(i) MW(2271+32i:2240+32i), _VALID MW(159:159),
	 * QMD_MAJOR/MINOR_VERSION MW(471:464). */
	{NVT_TMD_V05_00, 58, 0x50, {280, 0}, {8, 0}, 19},
};

static void test_names(void)
{
	CHECK_STR(nvt_tmd_layout_name(NVT_TMD_NONE), "none");
	CHECK_STR(nvt_tmd_layout_name(NVT_TMD_V01), "V01");
	CHECK_STR(nvt_tmd_layout_name(NVT_TMD_V04_00), "V04_00");
	CHECK_STR(nvt_tmd_layout_name(NVT_TMD_V04_01), "V04_01");
	CHECK_STR(nvt_tmd_layout_name(NVT_TMD_V05_00), "V05_00");
	CHECK(nvt_tmd_layout_name(NVT_TMD_LAYOUTS) == NULL);
	for (unsigned l = 0; l < NVT_TMD_LAYOUTS; l++) {
		const char *name = nvt_tmd_layout_name(l);
		CHECK(nvt_tmd_layout_from_name(name, strlen(name)) == (int)l);
	}
	CHECK(nvt_tmd_layout_from_name("V05_0", 5) == -1);
	CHECK(nvt_tmd_layout_from_name("V05_001", 7) == -1);
	CHECK(nvt_tmd_layout_from_name("V05_00 ", 6) == NVT_TMD_V05_00); /* len counts */
	CHECK(nvt_tmd_layout_from_name("", 0) == -1);
	CHECK(nvt_tmd_layout_bits(NVT_TMD_NONE) == 0);
	CHECK(nvt_tmd_layout_bits(NVT_TMD_V01) == 64);
	CHECK(nvt_tmd_layout_bits(NVT_TMD_V04_00) == 128);
	CHECK(nvt_tmd_layout_bits(NVT_TMD_V04_01) == 256);
	CHECK(nvt_tmd_layout_bits(NVT_TMD_V05_00) == 256);
	CHECK(nvt_tmd_layout_bits(99) == 0);
	CHECK(nvt_tmd_version_offset(NVT_TMD_V05_00) == 58);
	CHECK(nvt_tmd_version_offset(NVT_TMD_V04_00) == 72);
	CHECK(nvt_tmd_version_offset(NVT_TMD_V04_01) == 72);
	CHECK(nvt_tmd_version_offset(NVT_TMD_V01) == 72);
}

static void test_layouts_for_cc(void)
{
	unsigned l[4];

	CHECK(nvt_tmd_layouts_for_cc(6, 1, l, 4) == 0);
	CHECK(nvt_tmd_layouts_for_cc(7, 0, l, 4) == 1 && l[0] == NVT_TMD_V01);
	CHECK(nvt_tmd_layouts_for_cc(8, 9, l, 4) == 1 && l[0] == NVT_TMD_V01);
	CHECK(nvt_tmd_layouts_for_cc(9, 0, l, 4) == 1 && l[0] == NVT_TMD_V04_00);
	CHECK(nvt_tmd_layouts_for_cc(10, 0, l, 4) == 2 && l[0] == NVT_TMD_V05_00 &&
	      l[1] == NVT_TMD_V04_01);
	CHECK(nvt_tmd_layouts_for_cc(12, 1, l, 4) == 2 && l[0] == NVT_TMD_V05_00);
	CHECK(nvt_tmd_layouts_for_cc(12, 0, l, 1) == 1 && l[0] == NVT_TMD_V05_00); /* room for 1 */
	CHECK(nvt_tmd_layouts_for_cc(13, 0, l, 4) == 0); /* nothing known: nothing written */
}

static void test_version_check(void)
{
	uint8_t tmd[TMD_BYTES];

	poison(tmd, 72, 0x40);
	CHECK(nvt_tmd_is(NVT_TMD_V04_00, tmd) && !nvt_tmd_is(NVT_TMD_V04_01, tmd));
	CHECK(!nvt_tmd_is(NVT_TMD_NONE, tmd) && !nvt_tmd_is(NVT_TMD_V01, tmd));
	for (unsigned v = 0; v < 256; v++) {
		tmd[72] = (uint8_t)v;
		CHECK(nvt_tmd_is(NVT_TMD_V01, tmd) == (v >= 0x16 && v <= 0x30));
		CHECK(nvt_tmd_is(NVT_TMD_V04_00, tmd) == (v == 0x40));
	}
	/* A V05 TMD is known by byte 58 alone: byte 72 (RELEASE_SEMAPHORE0_PAYLOAD_UPPER
	 * there) may read like a Hopper version. */
	poison(tmd, 58, 0x50);
	tmd[72] = 0x40;
	CHECK(nvt_tmd_is(NVT_TMD_V05_00, tmd));
	tmd[58] = 0x51; /* V05_01 has another layout */
	CHECK(!nvt_tmd_is(NVT_TMD_V05_00, tmd));
	tmd[58] = 0x40;
	CHECK(!nvt_tmd_is(NVT_TMD_V05_00, tmd));
}

/* Writes each layout's mask on a poisoned TMD and checks every byte. */
static void test_write_layouts(void)
{
	const uint32_t disable[NVT_TMD_MASK_WORDS] = {0xfffffff0u, 0x12345678u, 0x9abcdef0u,
						      0x80000001u, 0x0f0f0f0fu, 0xdeadbeefu,
						      0x00000003u, 0xc0000000u};

	for (size_t e = 0; e < sizeof(expects) / sizeof(expects[0]); e++) {
		const struct expect *x = &expects[e];
		uint8_t tmd[TMD_BYTES], before[TMD_BYTES];

		poison(tmd, x->version_at, x->version);
		if (x->valid_byte >= 0)
			tmd[x->valid_byte] &= 0x7f; /* valid bit clear */
		memcpy(before, tmd, sizeof(tmd));
		CHECK(nvt_tmd_write(x->layout, tmd, disable) == 0);
		for (int i = 0; i < TMD_BYTES; i++) {
			int in_mask = 0;
			uint8_t want = before[i];
			for (unsigned p = 0; p < 2; p++) {
				unsigned at = x->part_at[p], words = x->part_words[p];
				if (words && (unsigned)i >= at && (unsigned)i < at + 4 * words) {
					unsigned word = (p ? x->part_words[0] : 0) + ((unsigned)i - at) / 4;
					want = (uint8_t)(disable[word] >> (8 * (((unsigned)i - at) % 4)));
					in_mask = 1;
				}
			}
			if (!in_mask && i == x->valid_byte)
				want = before[i] | 0x80;
			if (tmd[i] != want) {
				fprintf(stderr, "layout %s: byte %d is 0x%02x, expected 0x%02x\n",
					nvt_tmd_layout_name(x->layout), i, tmd[i], want);
				CHECK(0);
			}
		}
		/* Idempotent: writing again changes nothing. */
		memcpy(before, tmd, sizeof(tmd));
		CHECK(nvt_tmd_write(x->layout, tmd, disable) == 0);
		CHECK(bytes_equal(before, tmd));
	}
}

/* A TMD whose version byte is not the layout's is left as it is. */
static void test_mismatch_untouched(void)
{
	static const uint8_t wrong[] = {0x00, 0x15, 0x30, 0x40, 0x41, 0x50, 0x51, 0xff};
	const uint32_t disable[NVT_TMD_MASK_WORDS] = {1, 2, 3, 4, 5, 6, 7, 8};

	for (size_t e = 0; e < sizeof(expects) / sizeof(expects[0]); e++) {
		const struct expect *x = &expects[e];
		for (size_t v = 0; v < sizeof(wrong); v++) {
			uint8_t tmd[TMD_BYTES], before[TMD_BYTES];
			if (wrong[v] == x->version)
				continue;
			poison(tmd, x->version_at, wrong[v]);
			/* The other layout family's version byte says "mine": still not. */
			tmd[x->version_at == 58 ? 72 : 58] = x->version;
			memcpy(before, tmd, sizeof(tmd));
			CHECK(nvt_tmd_write(x->layout, tmd, disable) == -1);
			CHECK(bytes_equal(before, tmd));
		}
	}
	/* No layout, or one out of range: never written. */
	{
		uint8_t tmd[TMD_BYTES], before[TMD_BYTES];
		poison(tmd, 72, 0x40);
		memcpy(before, tmd, sizeof(tmd));
		CHECK(nvt_tmd_write(NVT_TMD_NONE, tmd, disable) == -1);
		CHECK(nvt_tmd_write(NVT_TMD_LAYOUTS, tmd, disable) == -1);
		CHECK(bytes_equal(before, tmd));
	}
}

/* The valid bit of a V05 TMD is bit 159: bit 7 of byte 19, and not the bit
 * V04 uses (bit 31 of word 0 is HW_ONLY_REQUIRE_SCHEDULING_PCAS in V05). */
static void test_v05_valid_bit(void)
{
	uint8_t tmd[TMD_BYTES];
	uint32_t zero[NVT_TMD_MASK_WORDS] = {0};

	memset(tmd, 0, sizeof(tmd));
	tmd[58] = 0x50;
	CHECK(nvt_tmd_write(NVT_TMD_V05_00, tmd, zero) == 0);
	CHECK(tmd[19] == 0x80 && tmd[3] == 0 && tmd[16] == 0);
	memset(tmd, 0, sizeof(tmd));
	tmd[72] = 0x40;
	CHECK(nvt_tmd_write(NVT_TMD_V04_00, tmd, zero) == 0);
	CHECK(tmd[3] == 0x80 && tmd[19] == 0);
}

/* Cluster shapes: QMD_TYPE GRID_GPC_CGA (3) and GPC_CGA_WIDTH/HEIGHT/DEPTH,
 * at V04's word 0 bits 23-25 and bytes 268-270, V05's word at 16 and bytes
 * 256-258 (open-gpu-doc clcbc0qmd.h, clcdc0qmd.h). */
static void set_type(uint8_t *tmd, unsigned word_at, uint32_t type)
{
	uint32_t w;
	memcpy(&w, tmd + word_at, 4);
	w = (w & ~(7u << 23)) | type << 23;
	memcpy(tmd + word_at, &w, 4);
}

static void test_cluster_size(void)
{
	uint8_t tmd[384];

	memset(tmd, 0xff, sizeof(tmd));
	tmd[72] = 0x40;
	set_type(tmd, 0, 2); /* GRID_CTA: no clusters, whatever the shape bytes say */
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_00, tmd) == 1);
	set_type(tmd, 0, 3);
	tmd[268] = 0xc4, tmd[269] = 0xc1, tmd[270] = 0x41; /* the high bits are not the shape */
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_00, tmd) == 4);
	tmd[269] = 2, tmd[270] = 2;
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_00, tmd) == 16);
	set_type(tmd, 0, 5); /* GRID_GPU_GPC_CGA: GPC clusters too */
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_00, tmd) == 16);
	set_type(tmd, 0, 4); /* GRID_GPU_CGA: no GPC clusters */
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_00, tmd) == 1);
	tmd[72] = 0x41;
	set_type(tmd, 0, 3);
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V04_01, tmd) == 16);
	memset(tmd, 0, sizeof(tmd));
	tmd[58] = 0x50;
	set_type(tmd, 0, 3); /* V05 keeps its type elsewhere */
	tmd[268] = 4, tmd[269] = 1, tmd[270] = 1;
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V05_00, tmd) == 1);
	set_type(tmd, 16, 3);
	tmd[256] = 8, tmd[257] = 1, tmd[258] = 1;
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V05_00, tmd) == 8);
	tmd[257] = 0; /* a zero dimension: treat as no clusters */
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V05_00, tmd) == 1);
	CHECK(nvt_tmd_cluster_size(NVT_TMD_V01, tmd) == 1);
	CHECK(nvt_tmd_cluster_size(NVT_TMD_NONE, tmd) == 1);
	CHECK(nvt_tmd_cluster_size(99, tmd) == 1);
}

int main(void)
{
	test_cluster_size();
	test_names();
	test_layouts_for_cc();
	test_version_check();
	test_write_layouts();
	test_mismatch_untouched();
	test_v05_valid_bit();
	return CHECK_DONE();
}
