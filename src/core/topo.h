/*
 * topo.h - GPU topology: which logical TPCs work, which hardware mask bit
 * names each one, and which GPC holds it. Pure code: the maths and the text
 * record in topo.c, calibration's analysis and cache record in topocal.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TOPO_H
#define NVT_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "nvtaskset.h"
#include "tmd.h"

/* Fills topo for n_tpcs TPCs with bit t = TPC t and unknown GPCs. */
void nvt_topo_identity(struct nvt_topology *topo, unsigned n_tpcs);

/*
 * Returns 0 if topo is well formed: 1 <= n_tpcs <= NVT_MAX_TPCS, every
 * working TPC has a distinct hardware bit below NVT_HW_BITS (below 64 for the
 * V01 layout), the TMD layout is known (and only a calibrated topology has
 * one), and, when GPCs are known, every TPC has a GPC below n_gpcs and every
 * GPC a TPC. Returns -1 otherwise.
 */
int nvt_topo_validate(const struct nvt_topology *topo);

/*
 * Where the map of a GPU that a viewer draws comes from, the better last. A
 * task's slot holds whatever its user wrote in her own segment (a valid map
 * that is not the GPU's: every TPC in one GPC), so a slot's map is taken only
 * from a task of root's or of the viewer's own, never another user's (she
 * would decide what others see); the calibration cache the viewer trusts
 * (root's records and her own) is better than either. A GPU no such source
 * gives a map for has none: the viewers say the map is not known.
 */
enum nvt_map_from {
	NVT_MAP_NONE = 0,   /* no map, or only another user's task's: not taken */
	NVT_MAP_OWN_TASK,   /* a slot of a task of the viewer's own */
	NVT_MAP_ROOT_TASK,  /* a slot of a task of root's */
	NVT_MAP_CACHE,      /* the calibration cache */
};

/* Whose slot's map viewer may take, by the users of the segment's file (seg_owner: its run
 * directory's, who may write it) and of its task (task_uid: its effective uid, who may write it
 * too), the lesser of the two: NVT_MAP_ROOT_TASK for root's, NVT_MAP_OWN_TASK for viewer's own
 * (or root's), NVT_MAP_NONE where either is another user's (a setuid program one user started
 * keeps her file: its task's user is not whose map it holds). */
enum nvt_map_from nvt_map_from_task(uid_t seg_owner, uid_t task_uid, uid_t viewer);

/*
 * Computes the disable mask (set bit = slot disabled, bit b in word b/32)
 * that runs the TPCs of enabled that the GPU has: every bit below
 * NVT_HW_BITS that names no enabled TPC is set; the words from NVT_HW_BITS
 * up (V04_01, V05_00) are 0, as in the calibration probe that verified the
 * layout. Returns how many working TPCs it enables; 0 means the mask must not
 * be used (it would hang every launch).
 */
unsigned nvt_topo_disable(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			  uint32_t disable[NVT_TMD_MASK_WORDS]);

/*
 * Clusters: returns how many SMs of enabled the GPC that holds the most of
 * them has (a cluster of one CTA per SM fits in that many SMs), or 0 when
 * the GPCs are unknown. Sets gpcs_out, if not NULL, to every TPC of the
 * GPCs that enabled touches.
 */
unsigned nvt_topo_cluster_room(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			       struct nvt_tpcset *gpcs_out);

/* Sets out to every TPC the GPU has. */
void nvt_topo_all(const struct nvt_topology *topo, struct nvt_tpcset *out);

/*
 * Returns how many GPCs of more than one TPC tpcs uses only in part (0 when
 * the GPCs are unknown). MPS's active thread percentage on top of such a
 * partition can leave some of its SMs idle (docs/hardware-facts.md, 12).
 */
unsigned nvt_topo_partial_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs);

/*
 * Sets out to the TPCs of the GPCs in gpcs. Returns 0, or -1 if GPCs are
 * unknown or gpcs names a GPC the GPU does not have.
 */
int nvt_topo_gpc_tpcs(const struct nvt_topology *topo, const struct nvt_tpcset *gpcs,
		      struct nvt_tpcset *out);

/*
 * The GPCs of topo that set holds whole (every TPC of theirs) into *whole, and the TPCs of set
 * outside them into *rest. Returns 0, or -1 if GPCs are unknown (topo->n_gpcs 0).
 */
int nvt_topo_whole_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *set,
			struct nvt_tpcset *whole, struct nvt_tpcset *rest);

/* Writes the one-line text record of topo (version 2). Returns its length or -1. */
int nvt_topo_format(const struct nvt_topology *topo, char *buf, size_t len);
#define NVT_TOPO_TEXT_MAX (64 + 2 * 4 * NVT_MAX_TPCS)

/*
 * Parses a text record. Returns 0 (and fills out) if it is well formed and
 * passes nvt_topo_validate(), else -1. A version 1 record (no tmd=, cc=)
 * gets the layout its calibration proved, see nvt_topo_legacy_layout().
 */
int nvt_topo_parse(const char *text, struct nvt_topology *out);

/*
 * Returns the TMD layout a version 1 record (nvtaskset 0.1, which recorded
 * none) proves verified on its GPU: NVT_TMD_V04_00 for a calibrated map
 * that names a bit >= 64, else NVT_TMD_NONE.
 */
unsigned nvt_topo_legacy_layout(const struct nvt_topology *topo);

/* ---- Choosing TPCs for the user (-n) --------------------------------- */

enum nvt_strategy {
	NVT_PACKED, /* whole GPCs first ([ECRTS25], [RTAS23]: GPC-aligned partitions) */
	NVT_SPREAD, /* evenly over GPCs ([RTNS21]'s SE-distributed); docs/hardware-facts.md, 4 */
	/* Blocks of 8 TPCs of a GPC first, then the rest in one GPC: a partition
	 * that holds as many thread-block clusters of 4, 8 and 16 SMs as an MPS
	 * share of its size (docs/bench/clusters-2026-11-22/). */
	NVT_CLUSTERS,
};

/* TPCs per block of NVT_CLUSTERS: 16 SMs, the largest cluster Hopper allows. */
#define NVT_CLUSTER_BLOCK 8u

/* "packed", "spread" or "clusters" into *out. Returns 0, or -1 for another word. */
int nvt_strategy_parse(const char *text, enum nvt_strategy *out);
/* The word for s, as nvt_strategy_parse reads it. */
const char *nvt_strategy_name(enum nvt_strategy s);

/*
 * Picks count TPCs among available. Packed takes a set of whole available
 * GPCs that adds up to count with the fewest GPCs, else the largest such set
 * below count topped up from as few other GPCs as possible. Spread takes one
 * TPC per GPC in turn. Clusters takes blocks of NVT_CLUSTER_BLOCK TPCs of one
 * GPC (GPCs whose free TPCs are a whole number of blocks first), then the
 * rest from the one GPC that holds it with the fewest TPCs to spare, else in
 * even shares from the GPCs with the most free. Without GPCs, packed and
 * clusters take the lowest TPCs and spread evenly spaced ones. Returns 0, or -1 if fewer than count are available.
 */
int nvt_topo_pick(const struct nvt_topology *topo, const struct nvt_tpcset *available,
		  unsigned count, enum nvt_strategy strategy, struct nvt_tpcset *out);

/* The TPCs of avail in each GPC of topo (GPC numbers past NVT_MAX_GPCS count nowhere). */
void nvt_topo_gpc_counts(const struct nvt_topology *topo, const struct nvt_tpcset *avail,
			 unsigned per_gpc[NVT_MAX_GPCS]);

/*
 * How many thread-block clusters of cluster_tpcs TPCs (2 * cluster_tpcs
 * CTAs of one SM each) tpcs holds at once: a cluster lies inside one GPC.
 * Without GPCs, count / cluster_tpcs.
 */
unsigned nvt_topo_cluster_capacity(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs,
				   unsigned cluster_tpcs);

/*
 * Picks n whole GPCs among available (every TPC of each one available) that
 * hold at most max_tpcs TPCs together: the n largest (ties: the lower
 * numbered), else, if those hold more, the n smallest. Returns their TPC
 * count and sets out, or -1 if the GPCs are unknown or no n whole available
 * GPCs hold at most max_tpcs.
 */
int nvt_topo_pick_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *available,
		       unsigned n, unsigned max_tpcs, struct nvt_tpcset *out);

/* ---- Calibration analysis ---------------------------------------------- */

#define NVT_MAX_SMS (2 * NVT_MAX_TPCS)
/* A set of SM IDs. */
struct nvt_smset {
	uint64_t w[NVT_MAX_SMS / 64];
};

/*
 * Builds the logical TPC -> mask bit map from a sweep that disabled one
 * hardware bit at a time: missing[b] holds the SMs that received no block
 * while bit b alone was disabled. Each bit must remove nothing (a slot with
 * no working TPC) or exactly SMs 2t and 2t+1 of one TPC t, and every TPC must
 * be removed by exactly one bit. Returns 0 and fills topo (identity GPCs:
 * unknown), or -1 with the reason in why.
 */
int nvt_topo_from_sweep(unsigned n_sms, unsigned n_bits, const struct nvt_smset *missing,
			struct nvt_topology *topo, char *why, size_t len);

/*
 * Sets topo's GPCs from the groups of SMs that thread-block clusters shared:
 * group[s] labels SM s's group (equal labels = one GPC). The two SMs of a
 * TPC always share its GPC. GPCs are numbered in order of their lowest TPC.
 * Returns 0, or -1 with the reason in why.
 */
int nvt_topo_set_gpcs(struct nvt_topology *topo, const unsigned *group, unsigned n_sms, char *why,
		      size_t len);

/* ---- Calibration cache record ------------------------------------------ */

/* What a cached calibration belongs to: a stale or foreign record is rebuilt. */
struct nvt_cache_key {
	char uuid[48]; /* "GPU-xxxxxxxx-..." */
	int driver_version; /* cuDriverGetVersion(); 0 = not asked, NVT_CACHE_ANY_DRIVER: a
			     * viewer's look (see nvt_cache_parse) */
	int sms;
	char nvrm[32]; /* kernel module version from /proc ("580.159.04"), "-" if unknown */
};

enum nvt_cache_rc {
	NVT_CACHE_OK = 0,
	NVT_CACHE_CORRUPT = -1,    /* malformed, checksum wrong, or an invalid topology */
	NVT_CACHE_FOREIGN = -2,    /* well formed but for another GPU or driver */
	NVT_CACHE_UNVERIFIED = -3, /* this GPU's, but it proves no TMD layout: measure again */
};

/* Writes the record (three lines, version 2). Returns its length or -1. */
int nvt_cache_format(const struct nvt_cache_key *key, const struct nvt_topology *topo, char *buf,
		     size_t len);
#define NVT_CACHE_TEXT_MAX (NVT_TOPO_TEXT_MAX + 256)

/* A want's driver_version for a viewer (top, -l --svg, the metrics) that knows neither the
 * driver's version nor the kernel module's: the last map measured for the UUID, whatever
 * measured it. Shown, never enforced: a start matches on what it knows. */
#define NVT_CACHE_ANY_DRIVER (-1)
/*
 * Parses a record made for want. A want with driver_version 0 (the GPU was
 * identified from /proc, without the driver) matches on UUID and kernel
 * module version, which must be known; NVT_CACHE_ANY_DRIVER on UUID alone;
 * otherwise on UUID, driver version and SM count. Version 1 records are read too (see nvt_topo_legacy_layout()).
 * Returns enum nvt_cache_rc; on OK fills out and, if found is not NULL, the
 * record's own key.
 */
int nvt_cache_parse(const char *text, const struct nvt_cache_key *want, struct nvt_topology *out,
		    struct nvt_cache_key *found);

/* The 64-bit FNV-1a hash of len bytes of text: the cache records' checksum. */
uint64_t nvt_text_checksum(const char *text, size_t len);

#endif /* NVT_TOPO_H */
