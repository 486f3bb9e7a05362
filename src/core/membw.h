/*
 * membw.h - a GPU's memory halves: which GPCs share a half of the memory
 * system, learned from a short bandwidth probe (gpu/bwprobe.c), kept in a cache
 * file beside the topology's, and used by -n --memory-half to place a task
 * away from its neighbours' half. Pure code: no I/O, no allocation, no
 * global state.
 *
 * Why halves: on the H100 a memory-bound task slows ~15% more beside a
 * neighbour streaming in its own half than beside one in the other half
 * (docs/hardware-facts.md, section 14; docs/memory-halves.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MEMBW_H
#define NVT_MEMBW_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"
#include "topo.h"

#define NVT_HALF_UNKNOWN (-1)

/* The halves of one GPU's GPCs: 0, 1 or NVT_HALF_UNKNOWN each. */
struct nvt_membw {
	unsigned n_gpcs;
	int8_t half[NVT_MAX_GPCS];
};

/*
 * One probe against one reference GPC r: the reference's copy bandwidth
 * alone (base) and beside a streaming neighbour on each other GPC g
 * (beside[g]), and that neighbour's own bandwidth (hog[g]); GB/s, medians of
 * the probe's repetitions; spread[g]: the largest minus the smallest
 * repetition of beside[g] (the noise).
 */
struct nvt_membw_probe {
	unsigned ref;
	double base;
	double beside[NVT_MAX_GPCS], hog[NVT_MAX_GPCS], spread[NVT_MAX_GPCS];
};

/*
 * What a neighbour on g costs the reference per unit of its own bandwidth:
 * (base - beside[g]) / hog[g]. A neighbour in the reference's half costs more.
 */
double nvt_membw_cost(const struct nvt_membw_probe *p, unsigned g);

/*
 * Splits the GPCs of one probe in two: those whose neighbour costs the
 * reference most (its half, the reference included: in_ref_half[g] = 1) and
 * the rest (0). GPCs whose neighbour streams at less than a quarter of the
 * median neighbour (a lone TPC) are not judged (-1), nor is any GPC when the
 * largest gap between sorted costs is not clearly above the probe's noise.
 * Returns the number of GPCs judged (0: no split found).
 */
unsigned nvt_membw_split(const struct nvt_membw_probe *p, unsigned n_gpcs, int8_t in_ref_half[]);

/*
 * The halves from two probes, the second against a reference in the other
 * half of the first's split: a GPC gets a half only where both agree (and
 * the second reference is judged outside the first's half). Half 0 holds the
 * lowest-numbered judged GPC. Returns 0, or -1 (every half unknown) when the
 * probes disagree on more than one GPC or either found no split. why gets a
 * sentence either way.
 */
int nvt_membw_combine(const struct nvt_membw_probe *first, const struct nvt_membw_probe *second,
		      unsigned n_gpcs, struct nvt_membw *out, char *why, size_t len);

/* How many GPCs have a known half. */
unsigned nvt_membw_known(const struct nvt_membw *m);

/* The TPCs of topo whose GPC is in half h (0 or 1). Returns how many. */
unsigned nvt_membw_half_tpcs(const struct nvt_topology *topo, const struct nvt_membw *m, int h,
			     struct nvt_tpcset *out);

/*
 * The half a set of TPCs sits in: 0 or 1 when every TPC's GPC is in that
 * half, 2 when it has TPCs in both, NVT_HALF_UNKNOWN when any TPC's half is
 * unknown (or the set is empty).
 */
int nvt_membw_half_of(const struct nvt_topology *topo, const struct nvt_membw *m,
		      const struct nvt_tpcset *tpcs);

/*
 * The half for -n --memory-half auto: the one where the others (the TPCs
 * other tasks hold) hold fewest TPCs, among the halves with at least need
 * TPCs of avail; ties go to the half with more of avail, then to half 0.
 * Returns 0 or 1, or NVT_HALF_UNKNOWN when neither half has need TPCs free.
 */
int nvt_membw_auto_half(const struct nvt_topology *topo, const struct nvt_membw *m,
			const struct nvt_tpcset *avail, const struct nvt_tpcset *others,
			unsigned need);

/*
 * The cache record: "nvtaskset-memory 1 uuid=U sms=N gpcs=G halves=0,1,-,...\n"
 * then "checksum=%016x\n" over the first line. Returns the length, or -1 if
 * it does not fit or uuid is malformed.
 */
int nvt_membw_format(const char *uuid, unsigned sms, const struct nvt_membw *m, char *buf,
		     size_t len);
#define NVT_MEMBW_TEXT_MAX (160 + 3 * NVT_MAX_GPCS)

/*
 * Parses a record for GPU uuid with sms SMs and n_gpcs GPCs (the topology in
 * use). Returns 0, 1 for a well-formed record of another GPU or topology,
 * or -1 for a malformed one (checksum, syntax, a value out of range).
 */
int nvt_membw_parse(const char *text, const char *uuid, unsigned sms, unsigned n_gpcs,
		    struct nvt_membw *out);

/* "0,4-6" for the GPCs of half h (into buf); "" when none. */
void nvt_membw_gpcs_text(const struct nvt_membw *m, int h, char *buf, size_t len);

#endif /* NVT_MEMBW_H */
