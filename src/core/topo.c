/*
 * topo.c - GPU topology maths and its text record (what calibration finds and
 * the cache record that keeps it: topocal.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "topo.h"
#include "tpcset.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version 2 added tmd= and cc=; version 1 records are still read. */
#define TOPO_HEADER "nvtaskset-topology 2"
#define TOPO_HEADER_V1 "nvtaskset-topology 1"

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

	unsigned bits = topo->tmd_layout == NVT_TMD_V01 ? 64 : NVT_HW_BITS;

	if (topo->n_tpcs < 1 || topo->n_tpcs > NVT_MAX_TPCS || topo->n_gpcs > NVT_MAX_GPCS)
		return -1;
	/* A layout is one that calibration verified: only a measured map has one. */
	if (topo->tmd_layout >= NVT_TMD_LAYOUTS ||
	    (topo->tmd_layout != NVT_TMD_NONE && !(topo->flags & NVT_TOPO_CALIBRATED)))
		return -1;
	for (unsigned t = 0; t < topo->n_tpcs; t++) {
		uint8_t b = topo->hw_bit[t];
		if (b >= bits || bit_used[b])
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

static enum nvt_map_from map_from_user(uid_t user, uid_t viewer)
{
	if (user == 0)
		return NVT_MAP_ROOT_TASK;
	return user == viewer ? NVT_MAP_OWN_TASK : NVT_MAP_NONE;
}

enum nvt_map_from nvt_map_from_task(uid_t seg_owner, uid_t task_uid, uid_t viewer)
{
	enum nvt_map_from a = map_from_user(seg_owner, viewer), b = map_from_user(task_uid, viewer);

	return a < b ? a : b;
}

unsigned nvt_topo_disable(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			  uint32_t disable[NVT_TMD_MASK_WORDS])
{
	uint32_t on[NVT_HW_BITS / 32] = {0};
	unsigned count = 0;

	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++) {
		uint8_t b = topo->hw_bit[t];
		if (!nvt_set_has(enabled, t) || b >= NVT_HW_BITS)
			continue;
		if (!(on[b / 32] & (1u << (b % 32))))
			count++;
		on[b / 32] |= 1u << (b % 32);
	}
	for (unsigned i = 0; i < NVT_TMD_MASK_WORDS; i++)
		disable[i] = i < NVT_HW_BITS / 32 ? ~on[i] : 0;
	return count;
}

void nvt_topo_all(const struct nvt_topology *topo, struct nvt_tpcset *out)
{
	nvt_set_fill(out, topo->n_tpcs);
}

unsigned nvt_topo_partial_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs)
{
	unsigned size[NVT_MAX_GPCS] = {0}, used[NVT_MAX_GPCS] = {0}, partial = 0;

	if (!topo->n_gpcs || topo->n_gpcs > NVT_MAX_GPCS)
		return 0;
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++) {
		if (topo->gpc[t] >= topo->n_gpcs)
			return 0; /* not a validated topology */
		size[topo->gpc[t]]++;
		used[topo->gpc[t]] += (unsigned)nvt_set_has(tpcs, t);
	}
	for (unsigned g = 0; g < topo->n_gpcs; g++)
		partial += size[g] > 1 && used[g] && used[g] < size[g];
	return partial;
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

int nvt_topo_whole_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *set,
			struct nvt_tpcset *whole, struct nvt_tpcset *rest)
{
	struct nvt_tpcset present, partial, tpcs;

	if (!topo->n_gpcs || topo->n_gpcs > NVT_MAX_GPCS)
		return -1;
	nvt_set_clear(&present);
	nvt_set_clear(&partial);
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++) {
		if (topo->gpc[t] >= topo->n_gpcs)
			continue; /* (NVT_NONE: a TPC of no known GPC) */
		nvt_set_add(&present, topo->gpc[t]);
		if (!nvt_set_has(set, t))
			nvt_set_add(&partial, topo->gpc[t]);
	}
	nvt_set_andnot(whole, &present, &partial);
	if (nvt_topo_gpc_tpcs(topo, whole, &tpcs))
		return -1;
	nvt_set_andnot(rest, set, &tpcs);
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
	const char *layout = nvt_tmd_layout_name(topo->tmd_layout);
	int w;

	if (!layout)
		return -1;
	w = snprintf(buf, len, TOPO_HEADER " tpcs=%u gpcs=%u flags=%u tmd=%s cc=%u.%u",
		     topo->n_tpcs, topo->n_gpcs, topo->flags, layout, topo->cc_major,
		     topo->cc_minor);
	if (w < 0 || (size_t)w >= len || topo->n_tpcs > NVT_MAX_TPCS)
		return -1;
	pos = (size_t)w;
	if (format_bytes(buf, len, &pos, "map", topo->hw_bit, topo->n_tpcs))
		return -1;
	if (topo->n_gpcs && format_bytes(buf, len, &pos, "gpc", topo->gpc, topo->n_tpcs))
		return -1;
	return (int)pos;
}

/* A decimal number no larger than max (nvt_decimal); advances *pp. Returns 0 or -1. */
static int parse_uint(const char **pp, unsigned max, unsigned *out)
{
	uint64_t v;
	const char *end = nvt_decimal(*pp, max, &v);

	if (!end)
		return -1;
	*pp = end;
	*out = (unsigned)v;
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

/* Parses " tmd=NAME cc=M.m" into topo. */
static int parse_layout(const char **pp, struct nvt_topology *topo)
{
	const char *name;
	unsigned major, minor;
	int layout;
	size_t n = 0;

	if (expect_key(pp, "tmd"))
		return -1;
	name = *pp;
	while ((name[n] >= 'A' && name[n] <= 'Z') || (name[n] >= 'a' && name[n] <= 'z') ||
	       (name[n] >= '0' && name[n] <= '9') || name[n] == '_')
		n++;
	layout = nvt_tmd_layout_from_name(name, n);
	if (layout < 0)
		return -1;
	*pp += n;
	if (expect_key(pp, "cc") || parse_uint(pp, 255, &major) || *(*pp)++ != '.' ||
	    parse_uint(pp, 255, &minor))
		return -1;
	topo->tmd_layout = (uint8_t)layout;
	topo->cc_major = (uint8_t)major;
	topo->cc_minor = (uint8_t)minor;
	return 0;
}

unsigned nvt_topo_legacy_layout(const struct nvt_topology *topo)
{
	/*
	 * nvtaskset 0.1 calibrated with V04_00 writes (128 bits) only when the
	 * probe's TMD read 0x40 at byte 72, with V01 writes (64 bits) otherwise,
	 * and kept a record only if every bit removed one TPC or nothing. So a
	 * calibrated map that names a bit >= 64 shows that V04_00 worked on that
	 * GPU (every H100 and H200 map does: they reach bit 83). On a Blackwell
	 * such writes land outside its mask and cannot pass. A map with low bits
	 * only may be either layout: it proves none.
	 */
	if (!(topo->flags & NVT_TOPO_CALIBRATED))
		return NVT_TMD_NONE;
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		if (topo->hw_bit[t] >= 64 && topo->hw_bit[t] < NVT_HW_BITS)
			return NVT_TMD_V04_00;
	return NVT_TMD_NONE;
}

int nvt_topo_parse(const char *text, struct nvt_topology *out)
{
	struct nvt_topology topo;
	const char *p = text;
	unsigned n_tpcs, n_gpcs, flags;
	int v1;

	if (!text)
		return -1;
	v1 = !strncmp(p, TOPO_HEADER_V1, strlen(TOPO_HEADER_V1));
	if (!v1 && strncmp(p, TOPO_HEADER, strlen(TOPO_HEADER)) != 0)
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
	if (!v1 && parse_layout(&p, &topo))
		return -1;
	if (expect_key(&p, "map") || parse_bytes(&p, n_tpcs, NVT_HW_BITS, topo.hw_bit))
		return -1;
	if (n_gpcs && (expect_key(&p, "gpc") || parse_bytes(&p, n_tpcs, n_gpcs, topo.gpc)))
		return -1;
	if (*p == '\n')
		p++;
	if (v1)
		topo.tmd_layout = (uint8_t)nvt_topo_legacy_layout(&topo);
	if (*p != '\0' || nvt_topo_validate(&topo))
		return -1;
	*out = topo;
	return 0;
}

unsigned nvt_topo_cluster_room(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			       struct nvt_tpcset *gpcs_out)
{
	unsigned count[NVT_MAX_GPCS] = {0}, best = 0;

	if (gpcs_out)
		nvt_set_clear(gpcs_out);
	if (!topo->n_gpcs || topo->n_gpcs > NVT_MAX_GPCS)
		return 0;
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		if (nvt_set_has(enabled, t) && topo->gpc[t] < topo->n_gpcs)
			count[topo->gpc[t]]++;
	for (unsigned g = 0; g < topo->n_gpcs; g++)
		if (count[g] > best)
			best = count[g];
	for (unsigned t = 0; gpcs_out && t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		if (topo->gpc[t] < topo->n_gpcs && count[topo->gpc[t]])
			nvt_set_add(gpcs_out, t);
	return 2 * best;
}
