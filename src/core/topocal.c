/*
 * topocal.c - what calibration finds: a GPU's map from a sweep of masks, its
 * GPCs, and the calibration cache's record that keeps them (topo.h).
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

/* ---- Calibration analysis ---------------------------------------------- */

static int sm_has(const struct nvt_smset *s, unsigned sm)
{
	return sm < NVT_MAX_SMS && ((s->w[sm / 64] >> (sm % 64)) & 1);
}

int nvt_topo_from_sweep(unsigned n_sms, unsigned n_bits, const struct nvt_smset *missing,
			struct nvt_topology *topo, char *why, size_t len)
{
	struct nvt_topology t;
	unsigned n_tpcs = n_sms / 2;

	if (n_sms < 2 || n_sms % 2 || n_tpcs > NVT_MAX_TPCS || n_bits > NVT_HW_BITS)
		return nvt_why(why, len, "cannot calibrate a GPU with %u SMs and %u mask bits", n_sms,
			       n_bits);
	nvt_topo_identity(&t, n_tpcs);
	memset(t.hw_bit, NVT_NONE, sizeof(t.hw_bit));
	for (unsigned b = 0; b < n_bits; b++) {
		unsigned count = 0, first = 0;
		for (unsigned sm = 0; sm < NVT_MAX_SMS; sm++) {
			if (sm_has(&missing[b], sm)) {
				if (!count)
					first = sm;
				count++;
			}
		}
		if (count == 0)
			continue; /* a slot with no working TPC */
		if (count != 2 || first % 2 || !sm_has(&missing[b], first + 1) || first >= n_sms)
			return nvt_why(why, len,
				       "disabling mask bit %u removed %u SMs that are not one TPC", b, count);
		if (t.hw_bit[first / 2] != NVT_NONE)
			return nvt_why(why, len, "mask bits %u and %u both remove TPC %u",
				       t.hw_bit[first / 2], b, first / 2);
		t.hw_bit[first / 2] = (uint8_t)b;
	}
	for (unsigned tpc = 0; tpc < n_tpcs; tpc++)
		if (t.hw_bit[tpc] == NVT_NONE)
			return nvt_why(why, len, "no mask bit removes TPC %u (SMs %u-%u)", tpc, 2 * tpc,
				       2 * tpc + 1);
	t.flags = NVT_TOPO_CALIBRATED;
	*topo = t;
	return 0;
}

int nvt_topo_set_gpcs(struct nvt_topology *topo, const unsigned *group, unsigned n_sms, char *why,
		      size_t len)
{
	unsigned parent[NVT_MAX_TPCS], id[NVT_MAX_TPCS], n_gpcs = 0;
	unsigned n = topo->n_tpcs;

	if (n_sms != 2 * n || n > NVT_MAX_TPCS)
		return nvt_why(why, len, "%u SM groups for %u TPCs", n_sms, n);
	/* TPC-level union-find: TPCs whose SMs share a group share a GPC. */
	for (unsigned a = 0; a < n; a++)
		parent[a] = a;
	for (unsigned a = 0; a < n; a++) {
		for (unsigned b = a + 1; b < n; b++) {
			int joined = 0;
			for (unsigned i = 0; i < 2 && !joined; i++)
				for (unsigned j = 0; j < 2 && !joined; j++)
					joined = group[2 * a + i] == group[2 * b + j];
			if (joined) {
				unsigned ra = a, rb = b;
				while (parent[ra] != ra)
					ra = parent[ra];
				while (parent[rb] != rb)
					rb = parent[rb];
				parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
			}
		}
	}
	for (unsigned a = 0; a < n; a++)
		id[a] = NVT_MAX_GPCS;
	for (unsigned a = 0; a < n; a++) {
		unsigned r = a;
		while (parent[r] != r)
			r = parent[r];
		if (id[r] == NVT_MAX_GPCS) {
			if (n_gpcs == NVT_MAX_GPCS)
				return nvt_why(why, len, "more than %d GPCs", NVT_MAX_GPCS);
			id[r] = n_gpcs++; /* the lowest TPC comes first: GPCs in its order */
		}
		topo->gpc[a] = (uint8_t)id[r];
	}
	topo->n_gpcs = n_gpcs;
	return 0;
}

/* ---- Calibration cache record ------------------------------------------ */

/* Version 2 records carry a version 2 topology line (with the TMD layout);
 * version 1 records, with a version 1 line, are still read. */
#define CACHE_HEADER "nvtaskset-cache 2"
#define CACHE_PREFIX "nvtaskset-cache " /* then the version digit */

uint64_t nvt_text_checksum(const char *text, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)text[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int uuid_ok(const char *uuid)
{
	size_t n = strlen(uuid);
	if (n == 0 || n >= sizeof(((struct nvt_cache_key *)0)->uuid))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = uuid[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-'))
			return 0;
	}
	return 1;
}

int nvt_cache_format(const struct nvt_cache_key *key, const struct nvt_topology *topo, char *buf,
		     size_t len)
{
	int n, m;

	if (!uuid_ok(key->uuid))
		return -1;
	for (const char *c = key->nvrm; *c; c++)
		if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
			return -1;
	n = snprintf(buf, len, CACHE_HEADER " uuid=%s driver=%d sms=%d nvrm=%s\n", key->uuid,
		     key->driver_version, key->sms, key->nvrm[0] ? key->nvrm : "-");
	if (n < 0 || (size_t)n >= len)
		return -1;
	m = nvt_topo_format(topo, buf + n, len - (size_t)n);
	if (m < 0 || (size_t)(n + m + 1) >= len)
		return -1;
	n += m;
	buf[n++] = '\n';
	m = snprintf(buf + n, len - (size_t)n, "checksum=%016llx\n",
		     (unsigned long long)nvt_text_checksum(buf, (size_t)n));
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return -1;
	return n + m;
}

int nvt_cache_parse(const char *text, const struct nvt_cache_key *want, struct nvt_topology *out,
		    struct nvt_cache_key *found)
{
	char line[NVT_TOPO_TEXT_MAX], uuid[64], nvrm[32], tail;
	const char *l2, *l3;
	struct nvt_topology topo;
	unsigned long long sum;
	int driver, sms, used = 0;

	char version, topo_header[32];

	if (!text || strncmp(text, CACHE_PREFIX, strlen(CACHE_PREFIX)))
		return NVT_CACHE_CORRUPT;
	version = text[strlen(CACHE_PREFIX)];
	if ((version != '1' && version != '2') || strncmp(text + strlen(CACHE_PREFIX) + 1, " uuid=", 6))
		return NVT_CACHE_CORRUPT;
	/* A record cut short has fewer lines: test before stepping past the '\n'
	 * (NULL + 1 is undefined; clang's UBSan found it). */
	l2 = strchr(text, '\n');
	if (!l2)
		return NVT_CACHE_CORRUPT;
	l2++;
	l3 = strchr(l2, '\n');
	if (!l3)
		return NVT_CACHE_CORRUPT;
	l3++;
	if ((size_t)(l3 - l2) > sizeof(line))
		return NVT_CACHE_CORRUPT;
	if (sscanf(l3, "checksum=%16llx%c%n", &sum, &tail, &used) != 2 || tail != '\n' ||
	    l3[used] != '\0' || strlen(l3) != 26 || sum != nvt_text_checksum(text, (size_t)(l3 - text)))
		return NVT_CACHE_CORRUPT;
	if (sscanf(text + strlen(CACHE_PREFIX) + 1,
		   " uuid=%47[A-Za-z0-9-] driver=%d sms=%d nvrm=%31[0-9.-]%c", uuid, &driver, &sms,
		   nvrm, &tail) != 5 ||
	    tail != '\n')
		return NVT_CACHE_CORRUPT;
	memcpy(line, l2, (size_t)(l3 - l2 - 1));
	line[l3 - l2 - 1] = '\0';
	/* A record's topology line has the record's own version. */
	snprintf(topo_header, sizeof(topo_header), "nvtaskset-topology %c ", version);
	if (strncmp(line, topo_header, strlen(topo_header)) || nvt_topo_parse(line, &topo) ||
	    (int)topo.n_tpcs * 2 != sms)
		return NVT_CACHE_CORRUPT;
	if (strcmp(uuid, want->uuid))
		return NVT_CACHE_FOREIGN;
	if (want->driver_version == NVT_CACHE_ANY_DRIVER)
		; /* a viewer's look: the UUID's map */
	else if (want->driver_version == 0 ? (!strcmp(nvrm, "-") || strcmp(nvrm, want->nvrm))
					   : (driver != want->driver_version || sms != want->sms))
		return NVT_CACHE_FOREIGN;
	/* Another kernel module than the one measured under: measure again. */
	if (want->nvrm[0] && strcmp(want->nvrm, "-") && strcmp(nvrm, "-") && strcmp(nvrm, want->nvrm))
		return NVT_CACHE_FOREIGN;
	/* A version 1 record that proves no layout: calibrate so that one is. */
	if (topo.tmd_layout == NVT_TMD_NONE)
		return NVT_CACHE_UNVERIFIED;
	*out = topo;
	if (found) {
		memset(found, 0, sizeof(*found));
		snprintf(found->uuid, sizeof(found->uuid), "%.47s", uuid);
		found->driver_version = driver;
		found->sms = sms;
		snprintf(found->nvrm, sizeof(found->nvrm), "%s", nvrm);
	}
	return NVT_CACHE_OK;
}
