/*
 * topo.c - GPU topology maths and its text record.
 *
 * SPDX-License-Identifier: MIT
 */
#include "topo.h"
#include "tpcset.h"

#include <stdio.h>
#include <string.h>

#define TOPO_HEADER "nvtaskset-topology 1"

void nvt_topo_identity(struct nvt_topology *topo, unsigned n_tpcs)
{
	memset(topo, 0, sizeof(*topo));
	memset(topo->hw_bit, NVT_NONE, sizeof(topo->hw_bit));
	memset(topo->gpc, NVT_NONE, sizeof(topo->gpc));
	if (n_tpcs > NVT_MAX_TPCS)
		n_tpcs = NVT_MAX_TPCS;
	topo->n_tpcs = n_tpcs;
	for (unsigned t = 0; t < n_tpcs && t < NVT_HW_BITS; t++)
		topo->hw_bit[t] = (uint8_t)t;
}

int nvt_topo_validate(const struct nvt_topology *topo)
{
	uint8_t bit_used[NVT_HW_BITS] = {0};
	unsigned gpc_tpcs[NVT_MAX_GPCS] = {0};

	if (topo->n_tpcs < 1 || topo->n_tpcs > NVT_MAX_TPCS || topo->n_gpcs > NVT_MAX_GPCS)
		return -1;
	for (unsigned t = 0; t < topo->n_tpcs; t++) {
		uint8_t b = topo->hw_bit[t];
		if (b >= NVT_HW_BITS || bit_used[b])
			return -1;
		bit_used[b] = 1;
		if (topo->n_gpcs) {
			if (topo->gpc[t] >= topo->n_gpcs)
				return -1;
			gpc_tpcs[topo->gpc[t]]++;
		}
	}
	for (unsigned g = 0; g < topo->n_gpcs; g++)
		if (!gpc_tpcs[g])
			return -1;
	return 0;
}

unsigned nvt_topo_disable_v4(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			     uint32_t disable[4])
{
	uint32_t on[4] = {0};
	unsigned count = 0;

	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++) {
		uint8_t b = topo->hw_bit[t];
		if (!nvt_set_has(enabled, t) || b >= NVT_HW_BITS)
			continue;
		if (!(on[b / 32] & (1u << (b % 32))))
			count++;
		on[b / 32] |= 1u << (b % 32);
	}
	for (int i = 0; i < 4; i++)
		disable[i] = ~on[i];
	return count;
}

unsigned nvt_topo_disable_v1(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			     uint64_t *disable)
{
	uint64_t on = 0;
	unsigned count = 0;

	for (unsigned t = 0; t < topo->n_tpcs && t < 64; t++) {
		if (nvt_set_has(enabled, t)) {
			on |= (uint64_t)1 << t;
			count++;
		}
	}
	*disable = ~on;
	return count;
}

void nvt_topo_all(const struct nvt_topology *topo, struct nvt_tpcset *out)
{
	nvt_set_fill(out, topo->n_tpcs);
}

int nvt_topo_gpc_tpcs(const struct nvt_topology *topo, const struct nvt_tpcset *gpcs,
		      struct nvt_tpcset *out)
{
	if (!topo->n_gpcs)
		return -1;
	if (nvt_set_highest(gpcs) >= (int)topo->n_gpcs)
		return -1;
	nvt_set_clear(out);
	for (unsigned t = 0; t < topo->n_tpcs; t++)
		if (topo->gpc[t] != NVT_NONE && nvt_set_has(gpcs, topo->gpc[t]))
			nvt_set_add(out, t);
	return 0;
}

/* Appends "key=v0,v1,..." for the first n bytes of values. */
static int format_bytes(char *buf, size_t len, size_t *pos, const char *key, const uint8_t *values,
			unsigned n)
{
	int w = snprintf(buf + *pos, len - *pos, " %s=", key);
	if (w < 0 || (size_t)w >= len - *pos)
		return -1;
	*pos += (size_t)w;
	for (unsigned i = 0; i < n; i++) {
		w = snprintf(buf + *pos, len - *pos, i ? ",%u" : "%u", values[i]);
		if (w < 0 || (size_t)w >= len - *pos)
			return -1;
		*pos += (size_t)w;
	}
	return 0;
}

int nvt_topo_format(const struct nvt_topology *topo, char *buf, size_t len)
{
	size_t pos = 0;
	int w = snprintf(buf, len, TOPO_HEADER " tpcs=%u gpcs=%u flags=%u", topo->n_tpcs,
			 topo->n_gpcs, topo->flags);
	if (w < 0 || (size_t)w >= len || topo->n_tpcs > NVT_MAX_TPCS)
		return -1;
	pos = (size_t)w;
	if (format_bytes(buf, len, &pos, "map", topo->hw_bit, topo->n_tpcs))
		return -1;
	if (topo->n_gpcs && format_bytes(buf, len, &pos, "gpc", topo->gpc, topo->n_tpcs))
		return -1;
	return (int)pos;
}

/* Parses a decimal number no larger than max; advances *pp. */
static int parse_uint(const char **pp, unsigned max, unsigned *out)
{
	const char *p = *pp;
	unsigned v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			return -1;
		p++;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* Expects " key=" at *pp; advances past it. */
static int expect_key(const char **pp, const char *key)
{
	size_t n = strlen(key);
	if ((*pp)[0] != ' ' || strncmp(*pp + 1, key, n) != 0 || (*pp)[n + 1] != '=')
		return -1;
	*pp += n + 2;
	return 0;
}

/* Parses exactly n comma-separated values, each below max. */
static int parse_bytes(const char **pp, unsigned n, unsigned max, uint8_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned v;
		if (i && *(*pp)++ != ',')
			return -1;
		if (parse_uint(pp, max - 1, &v))
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int nvt_topo_parse(const char *text, struct nvt_topology *out)
{
	struct nvt_topology topo;
	const char *p = text;
	unsigned n_tpcs, n_gpcs, flags;

	if (!text || strncmp(p, TOPO_HEADER, strlen(TOPO_HEADER)) != 0)
		return -1;
	p += strlen(TOPO_HEADER);
	if (expect_key(&p, "tpcs") || parse_uint(&p, NVT_MAX_TPCS, &n_tpcs) ||
	    expect_key(&p, "gpcs") || parse_uint(&p, NVT_MAX_GPCS, &n_gpcs) ||
	    expect_key(&p, "flags") || parse_uint(&p, 0xffff, &flags))
		return -1;
	nvt_topo_identity(&topo, 0);
	topo.n_tpcs = n_tpcs;
	topo.n_gpcs = n_gpcs;
	topo.flags = flags;
	if (expect_key(&p, "map") || parse_bytes(&p, n_tpcs, NVT_HW_BITS, topo.hw_bit))
		return -1;
	if (n_gpcs && (expect_key(&p, "gpc") || parse_bytes(&p, n_tpcs, n_gpcs, topo.gpc)))
		return -1;
	if (*p == '\n')
		p++;
	if (*p != '\0' || nvt_topo_validate(&topo))
		return -1;
	*out = topo;
	return 0;
}
