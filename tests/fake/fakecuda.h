/*
 * fakecuda.h - test-only interface of the fake libcuda.so.1.
 *
 * The fake behaves like the real driver as the shim sees it: the private
 * export table, callback subscription, one callback per launch with an
 * 88-byte parameter block pointing at a TMD of the configured version. It
 * then "runs" the launch on a simulated chip and records which logical TPCs
 * the hardware would have used.
 *
 * It also runs nvtaskset's calibration probe (PTX entry nvt_probe_smid): each
 * block stores the SM it ran on, on the SMs the TMD's mask allows; cluster
 * launches keep each cluster inside one GPC.
 *
 * Configuration (environment, read at cuInit):
 *   FAKECUDA_CHIP=h100        the H100 of docs/hardware-facts.md: 66 TPCs whose V04
 *                             mask bits are permuted, floorswept slots, 8 GPCs
 *                             plus 4 lone TPCs (the default);
 *                             "identity": mask bit t = TPC t, GPC = TPC % 8;
 *                             "a100": pre-Hopper, V03 TMDs (64-bit mask),
 *                             54 TPCs, no clusters
 *   FAKECUDA_SMS=132          SM count of the identity chip
 *   FAKECUDA_TMD_VERSION      TMD version byte of every launch (default: the chip's)
 *   FAKECUDA_CTX_ERROR=N      cuDevicePrimaryCtxRetain returns N
 *   FAKECUDA_DRIVER_VERSION=N cuDriverGetVersion (default 13000)
 *   FAKECUDA_LOG=FILE         append "cuInit pid=P mps=DIR" and "module pid=P" lines
 *   FAKECUDA_PARAMS_SIZE=88   size word of the callback parameter block
 *   FAKECUDA_NO_TABLE=1       cuGetExportTable fails for the callback table
 *   FAKECUDA_DEVICES=1        cuDeviceGetCount
 *   FAKECUDA_INIT_ERROR=N     cuInit returns N
 *   FAKECUDA_INIT_HANG=1      cuInit never returns
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdint.h>

struct fakecuda_launch {
	uint8_t tmd_version;
	int mask_enabled;       /* V04: enable bit set; V1: always 1 */
	uint32_t disable[4];    /* the TMD's mask words after the callbacks */
	int hung;               /* the mask left no working TPC: a real GPU hangs */
	uint64_t ran_tpcs[4];   /* logical TPCs the launch ran on */
	int callbacks;          /* callbacks invoked for this launch */
};

/* Returns the record of the calling thread's last launch (0), or -1. */
int fakecuda_last_launch(struct fakecuda_launch *out);
/* Overrides the TMD version of the calling thread's launches (0 = default). */
void fakecuda_set_tmd_version(uint8_t version);

typedef int (*fakecuda_last_launch_fn)(struct fakecuda_launch *out);
typedef void (*fakecuda_set_tmd_version_fn)(uint8_t version);

#endif /* FAKECUDA_H */
