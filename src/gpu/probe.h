/*
 * probe.h - the CUDA driver as the probes of calibrate.c (the TPC map and
 * GPCs) and bwprobe.c (memory halves) call it, in their child process outside
 * MPS: the command's table of driver entry points (driver.h), and the launch
 * callback that writes each probe launch's TPC mask.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROBE_H
#define NVT_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include "driver.h"
#include "core/tmd.h"
#include "core/text.h"

/* Returns -1 from the caller, the reason in r->error, when a driver call fails. */
#define NVT_CU_CHECK(r, call, what)                                                   \
	do {                                                                          \
		CUresult rc_ = (call);                                                \
		if (rc_)                                                              \
			return nvt_why((r)->error, sizeof((r)->error),                \
				       "%s failed: CUDA error %d", what, rc_);        \
	} while (0)

/* Loads the driver into nvt_cu and subscribes the probes' launch callback.
 * Returns 0, or -1 with the reason in why. */
int nvt_probe_open(char *why, size_t len);

/* Whether the callback saw launches and wrote every mask asked for since the
 * process began (a TMD of another layout is left alone and counted). */
int nvt_probe_masks_applied(void);

/* Every later launch of this thread runs with disable (hardware mask bits
 * of TMD layout layout; NVT_TMD_NONE: the launch is left alone). */
void nvt_probe_mask(unsigned layout, const uint32_t disable[NVT_TMD_MASK_WORDS]);

#endif /* NVT_PROBE_H */
