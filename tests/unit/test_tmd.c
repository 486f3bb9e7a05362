/* Unit tests: TMD mask writing on synthetic TMDs. SPDX-License-Identifier: MIT */
#include "check.h"
#include "tmd.h"

#include <stdint.h>

#define TMD_BYTES 384

static void fill(uint8_t *tmd, uint8_t value, uint8_t version)
{
	memset(tmd, value, TMD_BYTES);
	tmd[NVT_TMD_VERSION_OFFSET] = version;
}

/* Returns the number of bytes that differ outside [from, to). */
static int changed_outside(const uint8_t *a, const uint8_t *b, int from, int to)
{
	int n = 0;
	for (int i = 0; i < TMD_BYTES; i++)
		if ((i < from || i >= to) && a[i] != b[i])
			n++;
	return n;
}

static void test_classify(void)
{
	CHECK(nvt_tmd_classify(0x00) == NVT_TMD_TOO_OLD);
	CHECK(nvt_tmd_classify(0x15) == NVT_TMD_TOO_OLD);
	CHECK(nvt_tmd_classify(0x16) == NVT_TMD_V1); /* V01_06, Kepler */
	CHECK(nvt_tmd_classify(0x17) == NVT_TMD_V1);
	CHECK(nvt_tmd_classify(0x22) == NVT_TMD_V1);
	CHECK(nvt_tmd_classify(0x30) == NVT_TMD_V1); /* V03_00, Ampere/Ada */
	CHECK(nvt_tmd_classify(0x31) == NVT_TMD_UNKNOWN);
	CHECK(nvt_tmd_classify(0x3f) == NVT_TMD_UNKNOWN);
	CHECK(nvt_tmd_classify(0x40) == NVT_TMD_V4);  /* V04_00, Hopper */
	CHECK(nvt_tmd_classify(0x41) == NVT_TMD_UNKNOWN);
	CHECK(nvt_tmd_classify(0x50) == NVT_TMD_UNKNOWN); /* Blackwell: unverified */
	CHECK(nvt_tmd_classify(0xff) == NVT_TMD_UNKNOWN);
}

static void test_v1(void)
{
	uint8_t tmd[TMD_BYTES], before[TMD_BYTES];

	fill(tmd, 0xaa, 0x30);
	memcpy(before, tmd, sizeof(tmd));
	nvt_tmd_write_v1(tmd, 0x0123456789abcdefull);
	CHECK(changed_outside(before, tmd, 84, 92) == 0);
	CHECK(tmd[84] == 0xef && tmd[87] == 0x89 && tmd[88] == 0x67 && tmd[91] == 0x01);
	CHECK(nvt_tmd_read_v1(tmd) == 0x0123456789abcdefull);
	CHECK(nvt_tmd_version(tmd) == 0x30);
}

static void test_v4(void)
{
	uint8_t tmd[TMD_BYTES], before[TMD_BYTES];
	uint32_t disable[4] = {0xfffffff0u, 0x12345678u, 0xffffffffu, 0x80000001u}, back[4];

	fill(tmd, 0x11, 0x40);
	tmd[3] = 0x11; /* bit 31 of word 0 clear */
	memcpy(before, tmd, sizeof(tmd));
	nvt_tmd_write_v4(tmd, disable);
	/* Only the mask words and the top byte of word 0 change. */
	CHECK(changed_outside(before, tmd, 304, 320) == 1);
	CHECK(tmd[3] == (0x11 | 0x80) && tmd[0] == 0x11 && tmd[1] == 0x11 && tmd[2] == 0x11);
	CHECK(tmd[304] == 0xf0 && tmd[308] == 0x78 && tmd[319] == 0x80);
	CHECK(nvt_tmd_read_v4(tmd, back) == 1);
	CHECK(memcmp(back, disable, sizeof(back)) == 0);
	/* Idempotent: writing again changes nothing. */
	memcpy(before, tmd, sizeof(tmd));
	nvt_tmd_write_v4(tmd, disable);
	CHECK(memcmp(before, tmd, sizeof(tmd)) == 0);
	fill(tmd, 0, 0x40);
	CHECK(nvt_tmd_read_v4(tmd, back) == 0);
}

int main(void)
{
	test_classify();
	test_v1();
	test_v4();
	return CHECK_DONE();
}
