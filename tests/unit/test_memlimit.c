/*
 * test_memlimit.c - --mem's SIZE, the words a limit is shown in, and what a
 * program that asks for its GPU's memory is told (src/core/memlimit.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/gpusel.h"
#include "core/memlimit.h"

#define GIB (1024ull * 1024 * 1024)
#define MIB (1024ull * 1024)
/* An H100 80GB HBM3 as driver 580 reports it. */
#define H100 85030961152ull

static uint64_t parsed(const char *text, uint64_t gpu)
{
	char why[256];
	uint64_t bytes = 12345;

	return nvt_memlimit_parse(text, gpu, &bytes, why, sizeof(why)) ? 0 : bytes;
}

/* The reason text gives, "" when it parses. */
static const char *reason(const char *text, uint64_t gpu)
{
	static char why[256];
	uint64_t bytes;

	if (!nvt_memlimit_parse(text, gpu, &bytes, why, sizeof(why)))
		return "";
	return why;
}

static void sizes(void)
{
	CHECK(parsed("8G", H100) == 8 * GIB);
	CHECK(parsed("8g", H100) == 8 * GIB);
	CHECK(parsed("8GiB", H100) == 8 * GIB);
	CHECK(parsed("8GB", H100) == 8 * GIB);
	CHECK(parsed("8gib", H100) == 8 * GIB);
	CHECK(parsed("512mb", H100) == 512 * MIB);
	CHECK(parsed("1.5G", H100) == 3 * GIB / 2);
	CHECK(parsed("512M", H100) == 512 * MIB);
	CHECK(parsed("1048576", H100) == MIB);
	CHECK(parsed("2048K", H100) == 2 * MIB);
	CHECK(parsed("0.25T", 0) == 256 * GIB);
	CHECK(parsed("50%", H100) == H100 / 2);
	CHECK(parsed("100%", H100) == H100);
	CHECK(parsed("12.5%", 80 * GIB) == 10 * GIB);
	/* Exactly the GPU's memory is allowed; a byte more is not. */
	CHECK(parsed("85030961152", H100) == H100);
	CHECK(parsed("85030961153", H100) == 0);
	/* Unknown GPU memory: bytes work, a share cannot. */
	CHECK(parsed("64G", 0) == 64 * GIB);
	CHECK(parsed("50%", 0) == 0);
}

static void bad_input(void)
{
	/* Each names what is wrong and the GPU's memory. */
	CHECK(strstr(reason("0", H100), "no memory at all"));
	CHECK(strstr(reason("0", H100), "the GPU has 79.1G, 85030961152 bytes"));
	CHECK(strstr(reason("0G", H100), "no memory at all"));
	CHECK(strstr(reason("-1G", H100), "negative"));
	CHECK(strstr(reason("-1G", H100), "85030961152 bytes"));
	CHECK(strstr(reason("lots", H100), "is not a memory size"));
	CHECK(strstr(reason("", H100), "empty"));
	CHECK(strstr(reason("G", H100), "is not a memory size"));
	CHECK(strstr(reason("8X", H100), "unknown unit 'X'"));
	CHECK(strstr(reason("8Gb!", H100), "unknown unit"));
	CHECK(strstr(reason("8 G", H100), "unknown unit"));
	CHECK(strstr(reason("100G", H100), "more memory than the GPU has"));
	CHECK(strstr(reason("100G", H100), "the GPU has 79.1G"));
	CHECK(strstr(reason("101%", H100), "at most 100%"));
	CHECK(strstr(reason("0%", H100), "above 0%"));
	CHECK(strstr(reason("50%", 0), "not known"));
	CHECK(strstr(reason("99999999999999999999", H100), "not a memory size"));
	CHECK(strstr(reason("20000000T", 0), "more memory than any GPU"));
	CHECK(strstr(reason("512K", H100), "less than 1M"));
	CHECK(strcmp(reason("1M", H100), "") == 0);
}

static void shown(void)
{
	char buf[NVT_MEM_TEXT_MAX];

	CHECK_STR(nvt_memlimit_format(80 * GIB, buf, sizeof(buf)), "80G");
	CHECK_STR(nvt_memlimit_format(3 * GIB / 2, buf, sizeof(buf)), "1.5G");
	CHECK_STR(nvt_memlimit_format(512 * MIB, buf, sizeof(buf)), "512M");
	CHECK_STR(nvt_memlimit_format(1023, buf, sizeof(buf)), "1023");
	CHECK_STR(nvt_memlimit_format(0, buf, sizeof(buf)), "0");
	CHECK_STR(nvt_memlimit_format(H100, buf, sizeof(buf)), "79.1G");
	CHECK_STR(nvt_memlimit_format(UINT64_MAX, buf, sizeof(buf)), "15.9E");
	CHECK(strlen(nvt_memlimit_format(UINT64_MAX - 1, buf, sizeof(buf))) < NVT_MEM_TEXT_MAX);
}

static void usage_shown(void)
{
	char buf[NVT_MEM_USAGE_TEXT_MAX];

	CHECK_STR(nvt_memlimit_usage(GIB * 6 / 5, 4 * GIB, buf, sizeof(buf)), "1.1G/4G");
	CHECK_STR(nvt_memlimit_usage(48 * MIB, 0, buf, sizeof(buf)), "48M/-");
	CHECK_STR(nvt_memlimit_usage(0, 64 * MIB, buf, sizeof(buf)), "0/64M");
	CHECK_STR(nvt_memlimit_usage(0, 0, buf, sizeof(buf)), "-");
	CHECK(strlen(nvt_memlimit_usage(UINT64_MAX - 1, UINT64_MAX - 1, buf, sizeof(buf))) <
	      NVT_MEM_USAGE_TEXT_MAX);
}

static void from_environment(void)
{
	uint64_t bytes = 7;

	CHECK(nvt_memlimit_env_parse("67108864", &bytes) == 0 && bytes == 64 * MIB);
	CHECK(nvt_memlimit_env_parse("1048576", &bytes) == 0 && bytes == MIB);
	CHECK(nvt_memlimit_env_parse("1125899906842624", &bytes) == 0 && bytes == 1ull << 50);
	bytes = 7;
	CHECK(nvt_memlimit_env_parse("1048575", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("1125899906842625", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("99999999999999999999", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("18446744073709551617", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("4G", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("067108864", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("-67108864", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse(" 67108864", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse("", &bytes) == -1);
	CHECK(nvt_memlimit_env_parse(NULL, &bytes) == -1);
	CHECK(bytes == 7);
}

/* NVTASKSET_MEM's form for one GPU (a CDI device mem=GPU:SIZE): GPU-UUID=BYTES. */
static void from_environment_one_gpu(void)
{
	static const char uuid_text[] = "GPU-0123abcd-0000-1111-2222-456789abcdef";
	uint8_t gpu[16], other[16] = {1};
	struct nvt_mem_env m = {.bytes = 7};
	char buf[NVT_MEM_ENV_TEXT_MAX], text[128];

	CHECK(nvt_uuid_parse(uuid_text, gpu) == 0);
	snprintf(text, sizeof(text), "%s=17179869184", uuid_text);
	CHECK(nvt_memlimit_env_read(text, &m) == 0 && m.one_gpu && m.bytes == 16 * GIB &&
	      !memcmp(m.uuid, gpu, 16));
	CHECK(nvt_memlimit_env_on(&m, gpu) == 16 * GIB);
	CHECK(nvt_memlimit_env_on(&m, other) == 0);
	CHECK(nvt_memlimit_env_write(&m, buf, sizeof(buf)) == (int)strlen(text));
	CHECK_STR(buf, text);
	/* The plain form: every GPU. */
	CHECK(nvt_memlimit_env_read("67108864", &m) == 0 && !m.one_gpu && m.bytes == 64 * MIB);
	CHECK(nvt_memlimit_env_on(&m, gpu) == 64 * MIB && nvt_memlimit_env_on(&m, other) == 64 * MIB);
	CHECK(nvt_memlimit_env_write(&m, buf, sizeof(buf)) == 8);
	CHECK_STR(buf, "67108864");
	/* The longest fits its buffer; a short one is refused. */
	m.one_gpu = 1;
	m.bytes = NVT_MEM_LIMIT_MAX;
	CHECK(nvt_memlimit_env_write(&m, buf, sizeof(buf)) > 0);
	CHECK(nvt_memlimit_env_write(&m, buf, 20) == -1);
	/* Malformed: nothing read. */
	m.bytes = 7;
	m.one_gpu = 0;
	static const char *const bad[] = {
		"GPU-0123abcd-0000-1111-2222-456789abcdef=",
		"GPU-0123abcd-0000-1111-2222-456789abcdef=4G",
		"GPU-0123abcd-0000-1111-2222-456789abcdef=1048575",
		"GPU-0123abcd-0000-1111-2222-456789abcdef=017179869184",
		"GPU-0123ABCD-0000-1111-2222-456789abcdef=17179869184",
		"GPU-0123abcd-0000-1111-2222-456789abcde=17179869184",
		"GPU-0123abcd-0000-1111-2222-456789abcdef0=17179869184",
		"GPU-0123abcd-0000-1111-2222-456789abcdeg=17179869184",
		"GPU-0123abcd00000-1111-2222-456789abcdef=17179869184",
		"0123abcd-0000-1111-2222-456789abcdef=17179869184",
		"GPU-0123abcd-0000-1111-2222-456789abcdef=17179869184=1",
		"GPU-0123abcd-0000-1111-2222-456789abcdef =17179869184",
		"1=17179869184",
		"=17179869184",
		"=",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(nvt_memlimit_env_read(bad[i], &m) == -1);
	CHECK(nvt_memlimit_env_read(NULL, &m) == -1);
	CHECK(m.bytes == 7 && !m.one_gpu);
}

static void room(void)
{
	/* 80G: 30G and 50G given leave nothing; 30G and 40G leave 10G. */
	CHECK(nvt_memlimit_has_room(80 * GIB, 30 * GIB, 50 * GIB));
	CHECK(!nvt_memlimit_has_room(80 * GIB, 30 * GIB, 50 * GIB + 1));
	CHECK(nvt_memlimit_has_room(80 * GIB, 0, 80 * GIB));
	/* No limit: the whole GPU, beside nobody's. */
	CHECK(nvt_memlimit_has_room(80 * GIB, 0, 0));
	CHECK(!nvt_memlimit_has_room(80 * GIB, 1, 0));
	/* Limits given past the GPU already (before this rule): nothing fits. */
	CHECK(!nvt_memlimit_has_room(80 * GIB, 90 * GIB, 1));
	CHECK(!nvt_memlimit_has_room(80 * GIB, UINT64_MAX, UINT64_MAX));
}

static void told(void)
{
	uint64_t free_bytes = 70 * GIB, total = 80 * GIB;

	/* No limit: the driver's answer. */
	nvt_memlimit_told(0, 5 * GIB, &free_bytes, &total);
	CHECK(free_bytes == 70 * GIB && total == 80 * GIB);
	/* The limit, and what is left of it. */
	nvt_memlimit_told(8 * GIB, 3 * GIB, &free_bytes, &total);
	CHECK(free_bytes == 5 * GIB && total == 8 * GIB);
	/* Never more free than the GPU has. */
	free_bytes = GIB, total = 80 * GIB;
	nvt_memlimit_told(8 * GIB, 3 * GIB, &free_bytes, &total);
	CHECK(free_bytes == GIB && total == 8 * GIB);
	/* Past the limit (lowered below what it holds): nothing left. */
	free_bytes = 70 * GIB;
	nvt_memlimit_told(2 * GIB, 3 * GIB, &free_bytes, &total);
	CHECK(free_bytes == 0 && total == 2 * GIB);
	/* cuDeviceTotalMem: total alone. */
	total = 80 * GIB;
	nvt_memlimit_told(8 * GIB, 0, NULL, &total);
	CHECK(total == 8 * GIB);

	CHECK(nvt_memlimit_fits(0, UINT64_MAX, UINT64_MAX));
	CHECK(nvt_memlimit_fits(8 * GIB, 6 * GIB, 2 * GIB));
	CHECK(!nvt_memlimit_fits(8 * GIB, 6 * GIB, 2 * GIB + 1));
	CHECK(!nvt_memlimit_fits(8 * GIB, 9 * GIB, 0));
	CHECK(!nvt_memlimit_fits(8 * GIB, 1, UINT64_MAX));
}

static void rounded(void)
{
	CHECK(nvt_memlimit_pool_rounded(0) == 0);
	CHECK(nvt_memlimit_pool_rounded(1) == 512);
	CHECK(nvt_memlimit_pool_rounded(512) == 512);
	CHECK(nvt_memlimit_pool_rounded(513) == 1024);
	CHECK(nvt_memlimit_pool_rounded((1ull << 20) + 1) == 1049088);
	CHECK(nvt_memlimit_pool_rounded((2ull << 20) + 1) == 2097664);
	CHECK(nvt_memlimit_pool_rounded(1ull << 30) == 1ull << 30);
	CHECK(nvt_memlimit_pool_rounded(UINT64_MAX - 511) == UINT64_MAX - 511);
	CHECK(nvt_memlimit_pool_rounded(UINT64_MAX - 510) == UINT64_MAX);
	CHECK(nvt_memlimit_pool_rounded(UINT64_MAX) == UINT64_MAX);
}

static void alloc_rounded(void)
{
	CHECK(nvt_memlimit_alloc_rounded(0) == 0);
	CHECK(nvt_memlimit_alloc_rounded(1) == 512);
	CHECK(nvt_memlimit_alloc_rounded(512) == 512);
	CHECK(nvt_memlimit_alloc_rounded(513) == 1024);
	CHECK(nvt_memlimit_alloc_rounded(65537) == 66048);
	CHECK(nvt_memlimit_alloc_rounded(1ull << 20) == 1ull << 20);
	CHECK(nvt_memlimit_alloc_rounded((1ull << 20) + 1) == 2ull << 20);
	CHECK(nvt_memlimit_alloc_rounded((2ull << 20) + 1) == 4ull << 20);
	CHECK(nvt_memlimit_alloc_rounded(1ull << 30) == 1ull << 30);
	CHECK(nvt_memlimit_alloc_rounded(UINT64_MAX - (2ull << 20) + 1) == UINT64_MAX - (2ull << 20) + 1);
	CHECK(nvt_memlimit_alloc_rounded(UINT64_MAX - (2ull << 20) + 2) == UINT64_MAX);
	CHECK(nvt_memlimit_alloc_rounded(UINT64_MAX) == UINT64_MAX);
}

static void pitched(void)
{
	/* Each row padded to the pitch's alignment: a 4-byte row takes 512. */
	CHECK(nvt_memlimit_pitched(4, 16000000) == 512ull * 16000000);
	CHECK(nvt_memlimit_pitched(512, 3) == 1536);
	CHECK(nvt_memlimit_pitched(513, 2) == 2048);
	CHECK(nvt_memlimit_pitched(0, 7) == 0);
	CHECK(nvt_memlimit_pitched(4096, 0) == 0);
	/* Past any size: the most there is, not a wrapped small count. */
	CHECK(nvt_memlimit_pitched(UINT64_MAX, 1) == UINT64_MAX);
	CHECK(nvt_memlimit_pitched(1ull << 40, 1ull << 40) == UINT64_MAX);
}

int main(void)
{
	sizes();
	bad_input();
	shown();
	usage_shown();
	from_environment();
	from_environment_one_gpu();
	room();
	told();
	pitched();
	rounded();
	alloc_rounded();
	return CHECK_DONE();
}
