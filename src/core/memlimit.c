/*
 * memlimit.c - a task's GPU memory limit: SIZE's text and the answers a
 * program is told (memlimit.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "memlimit.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpusel.h"
#include "text.h"

/* The power of 1024 a unit's letter names, or -1. */
static int unit_power(char c)
{
	switch (c) {
	case 'k': case 'K': return 1;
	case 'm': case 'M': return 2;
	case 'g': case 'G': return 3;
	case 't': case 'T': return 4;
	default: return -1;
	}
}

/* "1.5G", "50%": the digits before and after the point, and what follows. */
struct size_words {
	uint64_t whole;     /* the number before the point */
	uint64_t frac;      /* the digits after it, as a number */
	uint64_t frac_div;  /* 10 to the count of those digits */
	const char *rest;   /* the unit (or "%"), after the number */
};

/* Reads the number at text's start. Returns 0, or -1 (no digit, or too many). */
static int read_number(const char *text, struct size_words *w)
{
	const char *p = text;
	int digits = 0;

	w->whole = 0;
	w->frac = 0;
	w->frac_div = 1;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (w->whole > (UINT64_MAX - 9) / 10)
			return -1;
		w->whole = w->whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		for (int n = 0; *p >= '0' && *p <= '9'; p++, n++, digits++)
			if (n < 9) {
				w->frac = w->frac * 10 + (uint64_t)(*p - '0');
				w->frac_div *= 10;
			}
	}
	w->rest = p;
	return digits ? 0 : -1;
}

/* The GPU's memory in words for messages: " (the GPU has 80G, 85899345920 bytes)". */
static void gpu_words(uint64_t gpu_bytes, char *buf, size_t len)
{
	char text[NVT_MEM_TEXT_MAX];

	if (!gpu_bytes)
		snprintf(buf, len, " (the GPU's memory is not known)");
	else
		snprintf(buf, len, " (the GPU has %s, %llu bytes)",
			 nvt_memlimit_format(gpu_bytes, text, sizeof(text)), (unsigned long long)gpu_bytes);
}

/* Bytes of a percentage of gpu_bytes. Returns 0, or -1 with why. */
static int percent_of(const char *text, const struct size_words *w, uint64_t gpu_bytes,
		      uint64_t *bytes, char *why, size_t len)
{
	char has[96];
	/* Hundredths of a percent: enough for a GPU's memory, and no overflow. */
	uint64_t basis = w->whole * 10000 + w->frac * 10000 / w->frac_div;

	gpu_words(gpu_bytes, has, sizeof(has));
	if (!gpu_bytes)
		return nvt_why(why, len, "'%s' is a share of the GPU's memory, which is not known; "
			       "give bytes (K, M, G, T)", text);
	if (w->whole > 100 || basis > 1000000 || basis == 0)
		return nvt_why(why, len, "'%s' is not a share of the GPU's memory above 0%% and at "
			       "most 100%%%s", text, has);
	*bytes = (uint64_t)((unsigned __int128)gpu_bytes * basis / 1000000);
	return 0;
}

int nvt_memlimit_parse(const char *text, uint64_t gpu_bytes, uint64_t *bytes, char *why,
		       size_t len)
{
	struct size_words w;
	unsigned __int128 value;
	uint64_t got = 0;
	int power = 0;
	char has[96], min[NVT_MEM_TEXT_MAX];

	gpu_words(gpu_bytes, has, sizeof(has));
	if (!text || !*text)
		return nvt_why(why, len, "an empty memory size: give bytes with K, M, G or T (powers "
			       "of 1024), or a share of the GPU such as 50%%%s", has);
	if (text[0] == '-')
		return nvt_why(why, len, "'%s' is negative: a memory limit is a size such as 8G, "
			       "or a share of the GPU such as 50%%%s", text, has);
	if (read_number(text, &w))
		return nvt_why(why, len, "'%s' is not a memory size: give bytes with K, M, G or T "
			       "(powers of 1024), or a share of the GPU such as 50%%%s", text, has);
	if (!strcmp(w.rest, "%")) {
		if (percent_of(text, &w, gpu_bytes, &got, why, len))
			return -1;
	} else {
		if (*w.rest) {
			power = unit_power(*w.rest);
			/* (the unit in either case, as its letter: 8g, 8GB, 8gib) */
			if (power < 0 || (strcmp(w.rest + 1, "") && strcasecmp(w.rest + 1, "B") &&
					  strcasecmp(w.rest + 1, "iB")))
				return nvt_why(why, len, "'%s': unknown unit '%s' (K, M, G or T, powers of "
					       "1024; or %% of the GPU)%s", text, w.rest, has);
		}
		value = (unsigned __int128)w.whole * w.frac_div + w.frac;
		for (int i = 0; i < power; i++)
			value *= 1024;
		value /= w.frac_div;
		if (value > UINT64_MAX)
			return nvt_why(why, len, "'%s' is more memory than any GPU has%s", text, has);
		got = (uint64_t)value;
	}
	if (got == 0)
		return nvt_why(why, len, "'%s' is no memory at all: a limit is at least 1M%s", text, has);
	if (got < NVT_MEM_LIMIT_MIN)
		return nvt_why(why, len, "'%s' is less than %s, less than a CUDA program needs to start%s",
			       text, nvt_memlimit_format(NVT_MEM_LIMIT_MIN, min, sizeof(min)), has);
	if (gpu_bytes && got > gpu_bytes)
		return nvt_why(why, len, "'%s' is more memory than the GPU has%s", text, has);
	*bytes = got;
	return 0;
}

char *nvt_memlimit_format(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	int u = -1;
	uint64_t scale = 1;

	while (u < 5 && bytes / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else if (bytes % scale == 0)
		snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / scale), units[u]);
	else
		/* One decimal, rounded down: a limit is never shown above what it is. */
		snprintf(buf, len, "%llu.%llu%c", (unsigned long long)(bytes / scale),
			 (unsigned long long)(bytes % scale * 10 / scale), units[u]);
	return buf;
}

void nvt_memlimit_told(uint64_t limit, uint64_t used, uint64_t *free_bytes, uint64_t *total)
{
	uint64_t left;

	if (!limit)
		return;
	left = used < limit ? limit - used : 0;
	if (free_bytes && *free_bytes > left)
		*free_bytes = left;
	if (total)
		*total = limit;
}

uint64_t nvt_memlimit_pitched(uint64_t width, uint64_t height)
{
	unsigned __int128 row = ((unsigned __int128)width + NVT_MEM_PITCH_ALIGN - 1) /
				NVT_MEM_PITCH_ALIGN * NVT_MEM_PITCH_ALIGN;
	unsigned __int128 b = row * height;

	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

static uint64_t rounded_to(uint64_t bytes, uint64_t unit)
{
	return bytes > UINT64_MAX - (unit - 1) ? UINT64_MAX : (bytes + unit - 1) / unit * unit;
}

uint64_t nvt_memlimit_alloc_rounded(uint64_t bytes)
{
	return rounded_to(bytes, bytes > NVT_MEM_BLOCK_SMALL ? NVT_MEM_BLOCK_LARGE : NVT_MEM_BLOCK_MIN);
}

uint64_t nvt_memlimit_pool_rounded(uint64_t bytes)
{
	return rounded_to(bytes, NVT_MEM_POOL_ALIGN);
}

int nvt_memlimit_fits(uint64_t limit, uint64_t used, uint64_t bytes)
{
	return !limit || (used <= limit && bytes <= limit - used);
}

char *nvt_memlimit_usage(uint64_t used, uint64_t limit, char *buf, size_t len)
{
	char held[NVT_MEM_TEXT_MAX], most[NVT_MEM_TEXT_MAX];

	if (!used && !limit)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s/%s", nvt_memlimit_format(used, held, sizeof(held)),
			 limit ? nvt_memlimit_format(limit, most, sizeof(most)) : "-");
	return buf;
}

int nvt_memlimit_has_room(uint64_t gpu_bytes, uint64_t given, uint64_t want)
{
	if (!want)
		return given == 0;
	return given <= gpu_bytes && want <= gpu_bytes - given;
}

int nvt_memlimit_env_parse(const char *text, uint64_t *bytes)
{
	uint64_t v = 0;

	if (!text || !*text || strlen(text) > 20 || text[0] == '0')
		return -1;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9' || v > NVT_MEM_LIMIT_MAX)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < NVT_MEM_LIMIT_MIN || v > NVT_MEM_LIMIT_MAX)
		return -1;
	*bytes = v;
	return 0;
}

int nvt_memlimit_env_read(const char *text, struct nvt_mem_env *out)
{
	char given[NVT_UUID_TEXT_MAX], again[NVT_UUID_TEXT_MAX];
	const char *eq = text ? strchr(text, '=') : NULL;
	struct nvt_mem_env m = {0};

	if (!text)
		return -1;
	if (eq) {
		if ((size_t)(eq - text) != sizeof(given) - 1)
			return -1;
		memcpy(given, text, sizeof(given) - 1);
		given[sizeof(given) - 1] = '\0';
		/* One spelling, nvt_uuid_format's: a UUID that reads back as written. */
		if (nvt_uuid_parse(given, m.uuid))
			return -1;
		nvt_uuid_format(m.uuid, again);
		if (strcmp(again, given))
			return -1;
		m.one_gpu = 1;
		text = eq + 1;
	}
	if (nvt_memlimit_env_parse(text, &m.bytes))
		return -1;
	*out = m;
	return 0;
}

int nvt_memlimit_env_write(const struct nvt_mem_env *m, char *buf, size_t len)
{
	char uuid[NVT_UUID_TEXT_MAX] = "";
	int n;

	if (m->one_gpu)
		nvt_uuid_format(m->uuid, uuid);
	n = snprintf(buf, len, "%s%s%llu", uuid, m->one_gpu ? "=" : "", (unsigned long long)m->bytes);
	return n >= 0 && (size_t)n < len ? n : -1;
}

uint64_t nvt_memlimit_env_on(const struct nvt_mem_env *m, const uint8_t uuid[16])
{
	return !m->one_gpu || !memcmp(m->uuid, uuid, sizeof(m->uuid)) ? m->bytes : 0;
}
