/*
 * topo.h - GPU topology: which logical TPCs work, which hardware mask bit
 * names each one, and which GPC holds it. Pure code.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TOPO_H
#define NVT_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"

/* Fills topo for n_tpcs TPCs with bit t = TPC t and unknown GPCs. */
void nvt_topo_identity(struct nvt_topology *topo, unsigned n_tpcs);

/*
 * Returns 0 if topo is well formed: 1 <= n_tpcs <= NVT_MAX_TPCS, every
 * working TPC has a distinct hardware bit below NVT_HW_BITS, and, when GPCs
 * are known, every TPC has a GPC below n_gpcs and every GPC a TPC.
 * Returns -1 otherwise.
 */
int nvt_topo_validate(const struct nvt_topology *topo);

/*
 * Computes the V04 disable mask (set bit = slot disabled) that runs the
 * TPCs of enabled that the GPU has. Returns how many working TPCs it enables;
 * 0 means the mask must not be used (it would hang every launch).
 */
unsigned nvt_topo_disable_v4(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			     uint32_t disable[4]);

/* The same for 64-bit (pre-Hopper) TMDs, where bit t names TPC t. */
unsigned nvt_topo_disable_v1(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			     uint64_t *disable);

/* Sets out to every TPC the GPU has. */
void nvt_topo_all(const struct nvt_topology *topo, struct nvt_tpcset *out);

/*
 * Sets out to the TPCs of the GPCs in gpcs. Returns 0, or -1 if GPCs are
 * unknown or gpcs names a GPC the GPU does not have.
 */
int nvt_topo_gpc_tpcs(const struct nvt_topology *topo, const struct nvt_tpcset *gpcs,
		      struct nvt_tpcset *out);

/* Writes the one-line text record of topo. Returns its length or -1. */
int nvt_topo_format(const struct nvt_topology *topo, char *buf, size_t len);
#define NVT_TOPO_TEXT_MAX (64 + 2 * 4 * NVT_MAX_TPCS)

/* Parses a text record. Returns 0 (and fills out) if it is well formed and
 * passes nvt_topo_validate(), else -1. */
int nvt_topo_parse(const char *text, struct nvt_topology *out);

#endif /* NVT_TOPO_H */
