/*
 * gpusel.c - naming GPUs, and the per-GPU partition record. Pure code.
 *
 * SPDX-License-Identifier: MIT
 */
#include "gpusel.h"
#include "topo.h"
#include "tpcset.h"
#include "text.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void nvt_uuid_format(const uint8_t u[16], char *buf)
{
	sprintf(buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		u[15]);
}

int nvt_uuid_parse(const char *text, uint8_t uuid[16])
{
	/* Dashes after 8, 12, 16 and 20 hex digits, as nvidia-smi prints them. */
	static const int dash_after[] = {8, 12, 16, 20};
	const char *p = text;
	int digits = 0, next_dash = 0;
	uint8_t out[16];

	if (strncmp(p, "GPU-", 4))
		return -1;
	p += 4;
	while (digits < 32) {
		int hi, lo;
		if (next_dash < 4 && digits == dash_after[next_dash]) {
			if (*p++ != '-')
				return -1;
			next_dash++;
			continue;
		}
		hi = nvt_hex_digit(p[0]);
		lo = hi < 0 ? -1 : nvt_hex_digit(p[1]);
		if (lo < 0)
			return -1;
		out[digits / 2] = (uint8_t)(hi << 4 | lo);
		digits += 2;
		p += 2;
	}
	if (*p != '\0')
		return -1;
	memcpy(uuid, out, sizeof(out));
	return 0;
}

int nvt_uuid_is_zero(const uint8_t uuid[16])
{
	for (int i = 0; i < 16; i++)
		if (uuid[i])
			return 0;
	return 1;
}

/* Returns 1 if the len bytes at text are a plain decimal number (no sign, no
 * spaces, at most 6 digits) and stores it. */
static int decimal(const char *text, size_t len, int *value)
{
	uint64_t v;

	if (len == 0 || len > 6 || nvt_decimal(text, 999999, &v) != text + len)
		return 0;
	*value = (int)v;
	return 1;
}

/* Resolves the len bytes at arg (not NUL-terminated) as nvt_gpusel_resolve does. */
static int resolve(const char *arg, size_t len, const struct nvt_gpu_id *gpus, int n)
{
	int index, found = NVT_GPU_NONE;

	if (decimal(arg, len, &index))
		return index < n ? index : NVT_GPU_NONE;
	/* CUDA takes "the first few characters of the UUID (including GPU-)" (NVIDIA's MPS
	 * guide, CUDA_VISIBLE_DEVICES): any of them, so long as they name one GPU. */
	if (len < 5 || strncasecmp(arg, "GPU-", 4))
		return NVT_GPU_NONE;
	for (int g = 0; g < n; g++) {
		if (strlen(gpus[g].uuid) < len || strncasecmp(gpus[g].uuid, arg, len))
			continue;
		if (found != NVT_GPU_NONE)
			return NVT_GPU_AMBIGUOUS;
		found = g;
	}
	return found;
}

int nvt_gpusel_resolve(const char *arg, const struct nvt_gpu_id *gpus, int n)
{
	return resolve(arg, strlen(arg), gpus, n);
}

int nvt_visible_gpus(const char *text, const struct nvt_gpu_id *gpus, int n, int pci_order,
		     int *out)
{
	int count = 0, same_model = 1;
	const char *p = text;

	for (int g = 1; g < n; g++)
		if (strcmp(gpus[g].model, gpus[0].model))
			same_model = 0;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int index, g, dup = 0;

		/* CUDA ignores blanks around entries. */
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len >= 4 && !strncasecmp(p, "MIG-", 4))
			return -1;
		if (decimal(p, len, &index) && !pci_order && !same_model)
			return -1;
		g = resolve(p, len, gpus, n);
		if (g < 0)
			break; /* CUDA stops at the first entry it cannot use */
		for (int i = 0; i < count; i++)
			dup |= out[i] == g;
		if (dup)
			break;
		out[count++] = g;
		if (!end)
			break;
		p = end + 1;
	}
	return count;
}

/* ---- The per-GPU partition record --------------------------------------- */

int nvt_gpusel_env_format(const struct nvt_slot_view *parts, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		char uuid[NVT_UUID_TEXT_MAX];
		int m;

		nvt_uuid_format(parts[i].uuid, uuid);
		m = snprintf(buf + used, len - used, "%s%s ", i ? ";" : "", uuid);
		if (m < 0 || (size_t)m >= len - used)
			return -1;
		used += (size_t)m;
		if (parts[i].state == NVT_SLOT_SET)
			m = nvt_format_list(&parts[i].tpcs, buf + used, len - used);
		else
			m = snprintf(buf + used, len - used, "all");
		if (m < 0 || (size_t)m + 1 >= len - used)
			return -1;
		used += (size_t)m;
		buf[used++] = ' ';
		m = nvt_topo_format(&parts[i].topo, buf + used, len - used);
		if (m < 0)
			return -1;
		used += (size_t)m;
	}
	return (int)used;
}

int nvt_gpusel_env_parse(const char *text, struct nvt_slot_view *out, int max)
{
	const char *p = text;
	int n = 0;

	if (!text || !*text)
		return -1;
	for (;;) {
		char record[NVT_UUID_TEXT_MAX + NVT_LIST_MAX_CHARS + NVT_TOPO_TEXT_MAX + 4];
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *list, *topo;
		struct nvt_slot_view v;
		struct nvt_tpcset all;

		if (n >= max || len >= sizeof(record))
			return -1;
		memcpy(record, p, len);
		record[len] = '\0';
		list = strchr(record, ' ');
		if (!list)
			return -1;
		*list++ = '\0';
		topo = strchr(list, ' ');
		if (!topo)
			return -1;
		*topo++ = '\0';
		memset(&v, 0, sizeof(v));
		if (nvt_uuid_parse(record, v.uuid) || nvt_uuid_is_zero(v.uuid) ||
		    nvt_topo_parse(topo, &v.topo))
			return -1;
		if (!strcmp(list, "all")) {
			v.state = NVT_SLOT_UNSET;
		} else {
			if (nvt_parse_list(list, NVT_MAX_TPCS, &v.tpcs) != NVT_PARSE_OK)
				return -1;
			nvt_topo_all(&v.topo, &all);
			nvt_set_and(&all, &all, &v.tpcs);
			if (!nvt_set_count(&all))
				return -1; /* would hang every launch */
			v.state = NVT_SLOT_SET;
		}
		for (int i = 0; i < n; i++)
			if (!memcmp(out[i].uuid, v.uuid, 16))
				return -1;
		out[n++] = v;
		if (!end)
			return n;
		p = end + 1;
	}
}
