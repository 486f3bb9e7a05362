/*
 * tmd.c - TMD mask layouts.
 *
 * Where the facts come from (bit positions are NVIDIA's MW(high:low) ranges
 * from open-gpu-doc, classes/compute/; byte = low bit / 8):
 *
 *  V01     clc3c0qmd.h (Volta, QMD V02_02), clc6c0qmd.h (Ampere, V02_03,
 *          V02_04, V03_00), clc9c0qmd.h (Ada, V02_04, V03_00):
 *          QMD_VERSION MW(579:576) and QMD_MAJOR_VERSION MW(583:580), so the
 *          version byte is byte 72; SM_DISABLE_MASK_LOWER MW(703:672) and
 *          _UPPER MW(735:704), bytes 84-91: bit t = TPC t (libsmctrl paper).
 *          There is no valid bit. No such GPU was at hand: unverified here.
 *  V04_00  clcbc0qmd.h (HOPPER_COMPUTE_A): QMD_MINOR_VERSION MW(579:576),
 *          QMD_MAJOR_VERSION MW(583:580) (byte 72 = 0x40);
 *          TPC_DISABLE_MASK_VALID MW(31:31); TPC_DISABLE_MASK(i)
 *          MW((2463+i*32):(2432+i*32)), bytes 304-319 for i = 0-3. Measured
 *          on an H100 and an H200 with driver 580 (docs/hardware-facts.md, section 2): the
 *          mask is honoured only with the valid bit set.
 *  V04_01  clcdc0qmd.h (BLACKWELL_COMPUTE_A) and clcec0qmd.h
 *          (BLACKWELL_COMPUTE_B), which define it next to V05_00/V05_01 with
 *          the same fields as V04_00 (version byte 72 = 0x41, valid bit 31,
 *          TPC_DISABLE_MASK(i) at byte 304) plus TPC_DISABLE_MASK_UPPER(i)
 *          MW((2719+i*32):(2688+i*32)), byte 336. The headers list these as
 *          "inferred arrays" without a length: we write four upper words
 *          (bits 2688-2815, well before OUTER_PUT at 3008), 256 bits as V05.
 *  V05_00  clcdc0qmd.h and clcec0qmd.h (identical QMD fields):
 *          QMD_MINOR_VERSION MW(467:464), QMD_MAJOR_VERSION MW(471:468)
 *          (byte 58 = 0x50); TPC_DISABLE_MASK_VALID MW(159:159) (bit 31 of
 *          the word at byte 16); TPC_DISABLE_MASK(i) MW((2271+i*32):(2240+i*32)),
 *          byte 280+4i; eight words fit before INCOMPLETE_BOX_BASE_WIDTH_RESUME
 *          (bit 2496).
 *
 * A V05 TMD's byte 72 is part of RELEASE_SEMAPHORE0_PAYLOAD_UPPER and a V04
 * TMD's byte 58 part of DEPENDENT_QMD0_POINTER: either may hold anything, so
 * reading one version byte and falling back to the other can misread a TMD.
 * The layout comes from the compute capability; its version byte confirms it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tmd.h"

#include <string.h>

struct mask_part {
	uint16_t offset; /* byte offset of the part's first word; 0 = unused */
	uint8_t words;
};

struct layout {
	const char *name;
	uint8_t version_offset;
	uint8_t version_min, version_max; /* version bytes the layout covers */
	struct mask_part part[2];         /* mask words 0.., then the rest */
	int16_t valid_offset;             /* byte of the 32-bit word with the valid bit; -1: none */
	uint32_t valid_bit;
	/* Thread-block clusters (CGAs): QMD_TYPE is 3 bits at type_shift of the
	 * 32-bit word at type_offset; GPC_CGA_WIDTH, _HEIGHT and _DEPTH are the
	 * low 6 bits of bytes cga_offset, +1 and +2. type_offset -1: none. */
	int16_t type_offset;
	uint8_t type_shift;
	uint16_t cga_offset;
};

/* QMD_TYPE values whose CTAs come in clusters that must share one GPC. */
#define QMD_TYPE_GRID_GPC_CGA 3
#define QMD_TYPE_GRID_GPU_GPC_CGA 5

static const struct layout layouts[NVT_TMD_LAYOUTS] = {
	[NVT_TMD_NONE] = {"none", 0, 1, 0, {{0, 0}, {0, 0}}, -1, 0, -1, 0, 0},
	[NVT_TMD_V01] = {"V01", 72, 0x16, 0x30, {{84, 2}, {0, 0}}, -1, 0, -1, 0, 0},
	/* clcbc0qmd.h: QMD_TYPE MW(25:23), GPC_CGA_WIDTH MW(2149:2144),
	 * _HEIGHT MW(2157:2152), _DEPTH MW(2165:2160). V04_01 keeps V04_00's
	 * fields (clcdc0qmd.h defines it as V04_00 plus an upper mask). */
	[NVT_TMD_V04_00] = {"V04_00", 72, 0x40, 0x40, {{304, 4}, {0, 0}}, 0, 0x80000000u, 0, 23, 268},
	[NVT_TMD_V04_01] = {"V04_01", 72, 0x41, 0x41, {{304, 4}, {336, 4}}, 0, 0x80000000u, 0, 23, 268},
	/* clcdc0qmd.h: QMD_TYPE MW(153:151), GPC_CGA_WIDTH MW(2053:2048), ... */
	[NVT_TMD_V05_00] = {"V05_00", 58, 0x50, 0x50, {{280, 8}, {0, 0}}, 16, 0x80000000u, 16, 23, 256},
};

static const struct layout *get(unsigned layout)
{
	return layout < NVT_TMD_LAYOUTS ? &layouts[layout] : NULL;
}

const char *nvt_tmd_layout_name(unsigned layout)
{
	const struct layout *l = get(layout);
	return l ? l->name : NULL;
}

int nvt_tmd_layout_from_name(const char *name, size_t len)
{
	for (unsigned i = 0; i < NVT_TMD_LAYOUTS; i++)
		if (strlen(layouts[i].name) == len && !memcmp(layouts[i].name, name, len))
			return (int)i;
	return -1;
}

unsigned nvt_tmd_layout_bits(unsigned layout)
{
	const struct layout *l = get(layout);
	return l ? 32u * (l->part[0].words + l->part[1].words) : 0;
}

unsigned nvt_tmd_version_offset(unsigned layout)
{
	const struct layout *l = get(layout);
	return l ? l->version_offset : 0;
}

int nvt_tmd_is(unsigned layout, const void *tmd)
{
	const struct layout *l = get(layout);
	uint8_t v;

	if (!l || l->version_min > l->version_max)
		return 0;
	v = ((const uint8_t *)tmd)[l->version_offset];
	return v >= l->version_min && v <= l->version_max;
}

unsigned nvt_tmd_layouts_for_cc(unsigned major, unsigned minor, unsigned *out, unsigned max)
{
	unsigned n = 0;

	(void)minor; /* no layout depends on it yet */
	/* Volta (7.x) to Ada (8.9): the class headers above, all V02_xx/V03_00. */
	if (major == 7 || major == 8) {
		if (n < max)
			out[n++] = NVT_TMD_V01;
	} else if (major == 9) {
		if (n < max)
			out[n++] = NVT_TMD_V04_00;
	} else if (major >= 10 && major <= 12) {
		/* Blackwell (10.x B200/GB200, 11.x Thor, 12.x RTX 50/GB10): its
		 * compute classes define V05_00 and V04_01. */
		if (n < max)
			out[n++] = NVT_TMD_V05_00;
		if (n < max)
			out[n++] = NVT_TMD_V04_01;
	}
	return n;
}

static void put32(void *tmd, unsigned offset, uint32_t v)
{
	memcpy((uint8_t *)tmd + offset, &v, sizeof(v));
}

static uint32_t get32(const void *tmd, unsigned offset)
{
	uint32_t v;
	memcpy(&v, (const uint8_t *)tmd + offset, sizeof(v));
	return v;
}

int nvt_tmd_write(unsigned layout, void *tmd, const uint32_t disable[NVT_TMD_MASK_WORDS])
{
	const struct layout *l = get(layout);
	unsigned w = 0;

	if (!l || !nvt_tmd_is(layout, tmd))
		return -1;
	for (unsigned p = 0; p < 2; p++)
		for (unsigned i = 0; i < l->part[p].words; i++)
			put32(tmd, l->part[p].offset + 4 * i, disable[w++]);
	if (l->valid_offset >= 0)
		put32(tmd, (unsigned)l->valid_offset,
		      get32(tmd, (unsigned)l->valid_offset) | l->valid_bit);
	return 0;
}

unsigned nvt_tmd_cluster_size(unsigned layout, const void *tmd)
{
	const struct layout *l = get(layout);
	const uint8_t *bytes = tmd;
	uint32_t word, type;
	unsigned size;

	if (!l || l->type_offset < 0)
		return 1;
	memcpy(&word, bytes + l->type_offset, sizeof(word));
	type = (word >> l->type_shift) & 7;
	if (type != QMD_TYPE_GRID_GPC_CGA && type != QMD_TYPE_GRID_GPU_GPC_CGA)
		return 1;
	size = (bytes[l->cga_offset] & 0x3fu) * (bytes[l->cga_offset + 1] & 0x3fu) *
	       (bytes[l->cga_offset + 2] & 0x3fu);
	return size ? size : 1;
}
