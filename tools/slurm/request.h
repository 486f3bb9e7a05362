/*
 * request.h - the Slurm plugin's pure text work: option values, and the
 * count of a GRES in Slurm's descriptions of a job. No Slurm headers, no
 * side effects; unit-tested (tests/unit/test_slurmreq.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SLURM_REQUEST_H
#define NVT_SLURM_REQUEST_H

#include <stddef.h>

#include "nvtaskset.h"

/* Largest count --gpu-tpcs and --gpu-gpcs take. */
#define NVT_SLURM_MAX_COUNT 256

/*
 * Parses an option's count: decimal digits only (no sign, no space), 1 to
 * max. Returns 0, or -1 if text is not one.
 */
int nvt_slurm_count_parse(const char *text, unsigned max, unsigned *out);

/*
 * The count of GRES name in a job's description of one node, as
 * slurm_load_job() gives it: gres_detail_str ("gpu:2(IDX:0-1),tpc(CNT:16)")
 * or tres_per_node ("gres:tpc:16", "gres/tpc=16"); a type ("tpc:big:16")
 * is allowed and every type counts, and an item without a count counts 1.
 * Returns the sum, or -1 if text does not name the GRES or one of its
 * counts is malformed.
 */
long nvt_slurm_gres_count(const char *text, const char *name);

#endif /* NVT_SLURM_REQUEST_H */
