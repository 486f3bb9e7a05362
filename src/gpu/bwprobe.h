/*
 * bwprobe.h - learning a GPU's memory halves (core/membw.h) with a short
 * bandwidth probe, in a child process outside MPS: a copy kernel on one GPC
 * is timed alone and beside the same kernel streaming on each other GPC, for
 * two reference GPCs. Returns codes and texts; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_BWPROBE_H
#define NVT_BWPROBE_H

#include <stddef.h>
#include "core/membw.h"

/* What the probe measured, for --calibrate's report and its JSON. */
struct nvt_bwprobe_result {
	struct nvt_membw halves;           /* every half unknown when no split was found */
	struct nvt_membw_probe probe[2];   /* against the two references */
	unsigned n_probes;                 /* probes run: 0, 1 or 2 */
	double seconds;
	char why[200];                     /* how the halves were judged */
};

/*
 * Probes CUDA device ordinal, whose calibrated topology is topo (with GPCs).
 * Waits at most timeout_ms. Returns 0 with out filled (halves possibly all
 * unknown, with why), or -1 with the reason in why (the probe could not run).
 */
int nvt_bwprobe(int ordinal, const struct nvt_topology *topo, int timeout_ms,
		struct nvt_bwprobe_result *out, char *why, size_t len);

#endif /* NVT_BWPROBE_H */
