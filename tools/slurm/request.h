/*
 * request.h - the Slurm plugin's pure text work: option values, and the
 * count and device indices of a GRES in Slurm's descriptions of a job. No Slurm headers, no
 * side effects; unit-tested (tests/unit/test_slurmreq.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SLURM_REQUEST_H
#define NVT_SLURM_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "nvtaskset.h"

/* Largest count --gpu-tpcs and --gpu-gpcs take. */
#define NVT_SLURM_MAX_COUNT 256

/*
 * Parses an option's count: decimal digits only (no sign, no space), 1 to
 * max. Returns 0, or -1 if text is not one.
 */
int nvt_slurm_count_parse(const char *text, unsigned max, unsigned *out);

/*
 * A plugstack.conf argument PREFIX/PATH ("rundir=/run/nvt"): 0 if arg does not
 * start with prefix; 1 if it does and names an absolute path shorter than len
 * bytes (copied to buf); -1 if it does but its path is not absolute or too
 * long (why says so).
 */
int nvt_slurm_path_arg(const char *arg, const char *prefix, char *buf, size_t len, char *why,
		       size_t why_len);

/*
 * The count of GRES name in a job's description of one node, as
 * slurm_load_job() gives it: gres_detail_str ("gpu:2(IDX:0-1),tpc(CNT:16)")
 * or tres_per_node ("gres:tpc:16", "gres/tpc=16"); a type ("tpc:big:16")
 * is allowed and every type counts, and an item without a count counts 1.
 * Returns the sum, or -1 if text does not name the GRES or one of its
 * counts is malformed.
 */
long nvt_slurm_gres_count(const char *text, const char *name);

/*
 * The device indices of GRES name in a job's gres_detail_str for one node
 * ("gpu:a100:2(IDX:0-1,3)"; the items of every type add up): sets *mask
 * (bit i: index i) and returns 1. Returns 0 (mask 0) if the GRES is there
 * without indices (one with no device files: "gpu(CNT:2)", "IDX:N/A"), -1
 * if text does not name it, or an index list is malformed or names an
 * index above 63.
 */
int nvt_slurm_gres_index(const char *text, const char *name, uint64_t *mask);

/*
 * Parses device indices as Slurm's SLURM_STEP_GPUS and SLURM_JOB_GPUS give
 * them ("0,2-3"), each below 64, into *mask. Returns 0, or -1 if malformed.
 */
int nvt_slurm_index_list(const char *text, uint64_t *mask);

#endif /* NVT_SLURM_REQUEST_H */
