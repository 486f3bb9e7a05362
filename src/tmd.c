/*
 * tmd.c - TMD mask fields. Offsets were measured on an H100 with driver 580
 * (docs/hardware-facts.md, section 2) and, for V01_06-V03_00, come from the
 * libsmctrl paper, [RTAS23] there (NVIDIA's open TMD documentation names them
 * SM_DISABLE_MASK_LOWER/UPPER).
 *
 * SPDX-License-Identifier: MIT
 */
#include "tmd.h"

#include <string.h>

#define V1_MASK_LO 84
#define V1_MASK_HI 88
#define V4_MASK 304 /* four words: 304, 308, 312, 316 */
/* Bit 31 of word 0 makes a V04 TMD's mask effective: without it a mask that
 * enabled 4 TPCs still ran on all 132 SMs (measured, H100, driver 580). */
#define V4_MASK_ENABLE 0x80000000u

enum nvt_tmd_kind nvt_tmd_classify(uint8_t version)
{
	if (version < 0x16)
		return NVT_TMD_TOO_OLD;
	if (version <= 0x30)
		return NVT_TMD_V1;
	if (version == 0x40)
		return NVT_TMD_V4;
	return NVT_TMD_UNKNOWN;
}

uint8_t nvt_tmd_version(const void *tmd)
{
	return ((const uint8_t *)tmd)[NVT_TMD_VERSION_OFFSET];
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

void nvt_tmd_write_v1(void *tmd, uint64_t disable)
{
	put32(tmd, V1_MASK_LO, (uint32_t)disable);
	put32(tmd, V1_MASK_HI, (uint32_t)(disable >> 32));
}

uint64_t nvt_tmd_read_v1(const void *tmd)
{
	return (uint64_t)get32(tmd, V1_MASK_LO) | (uint64_t)get32(tmd, V1_MASK_HI) << 32;
}

void nvt_tmd_write_v4(void *tmd, const uint32_t disable[4])
{
	for (unsigned i = 0; i < 4; i++)
		put32(tmd, V4_MASK + 4 * i, disable[i]);
	put32(tmd, 0, get32(tmd, 0) | V4_MASK_ENABLE);
}

int nvt_tmd_read_v4(const void *tmd, uint32_t disable[4])
{
	for (unsigned i = 0; i < 4; i++)
		disable[i] = get32(tmd, V4_MASK + 4 * i);
	return (get32(tmd, 0) & V4_MASK_ENABLE) != 0;
}
