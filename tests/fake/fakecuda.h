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
 *                             54 TPCs, no clusters;
 *                             "blackwell": compute capability 12.0, V05_00
 *                             TMDs (version byte 58, mask at byte 280, valid
 *                             bit 159; byte 72 reads 0x40), 85 TPCs in 96
 *                             slots, 12 GPCs;
 *                             "blackwell-misread": the same TMDs, but the
 *                             hardware reads the mask 8 bytes further on;
 *                             "blackwell-novalid": the same, but it honours
 *                             the mask only with bit 31 of word 0 (V04's bit)
 *   FAKECUDA_TMD_LAYOUT=V04_01 a Blackwell chip emits and reads V04_01 TMDs
 *                             (version 0x41 at byte 72, mask at 304 and 336)
 *   FAKECUDA_TMD_POKE=OFF:VAL set TMD byte OFF to VAL (after the version)
 *   FAKECUDA_SMS=132          SM count of the identity chip
 *   FAKECUDA_TMD_VERSION      TMD version byte of every launch (default: the chip's)
 *   FAKECUDA_CTX_ERROR=N      cuDevicePrimaryCtxRetain returns N
 *   FAKECUDA_DRIVER_VERSION=N cuDriverGetVersion (default 13000)
 *   FAKECUDA_LOG=FILE         append "cuInit pid=P mps=DIR" and "module pid=P" lines
 *   FAKECUDA_PARAMS_SIZE=88   size word of the callback parameter block
 *   FAKECUDA_NO_TABLE=1       cuGetExportTable fails for the callback table
 *   FAKECUDA_DEVICES=1        cuDeviceGetCount
 *   FAKECUDA_CHIPS=a,b,...    one device per name, each its own chip (names as
 *                             FAKECUDA_CHIP, and "h100-alt": the H100's TPCs in
 *                             other mask slots, as on another floorswept chip)
 *   CUDA_VISIBLE_DEVICES      indices of the devices CUDA shows, as CUDA does
 *   FAKECUDA_CTX_GET_DEVICE_ERROR=1  cuCtxGetDevice fails
 * Launches run on the device of the thread's current context (device 0's
 * until cuCtxSetCurrent), which the callback's word 1 names.
 *   FAKECUDA_INIT_ERROR=N     cuInit returns N
 *   FAKECUDA_INIT_HANG=1      cuInit never returns
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdint.h>

struct fakecuda_launch {
	uint8_t tmd_version;    /* at the chip's version byte (72, or 58 for V05) */
	int mask_enabled;       /* the valid bit the hardware reads is set; V01: always */
	uint32_t disable[4];    /* the mask words 0-3 the hardware read, after the callbacks */
	int hung;               /* the mask left no working TPC: a real GPU hangs */
	uint64_t ran_tpcs[4];   /* logical TPCs the launch ran on */
	int callbacks;          /* callbacks invoked for this launch */
	uint32_t disable_hi[4]; /* mask words 4-7 (V04_01's upper mask, V05_00) */
	int stray_bits;         /* bits written outside the TMD layout's mask and valid bit */
};

/* As in cuda.h: the cluster dimension is launch attribute 4. */
struct fakecuda_launch_attribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		unsigned dims[3];
	} value;
};
struct fakecuda_launch_config {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	struct fakecuda_launch_attribute *attrs;
	unsigned num_attrs;
};
typedef int (*fakecuda_launch_ex_fn)(const struct fakecuda_launch_config *cfg, void *f, void **params,
				     void **extra);

/* Returns the record of the calling thread's last launch (0), or -1. */
int fakecuda_last_launch(struct fakecuda_launch *out);
/* Overrides the TMD version of the calling thread's launches (0 = default). */
void fakecuda_set_tmd_version(uint8_t version);

typedef int (*fakecuda_last_launch_fn)(struct fakecuda_launch *out);
typedef void (*fakecuda_set_tmd_version_fn)(uint8_t version);

#endif /* FAKECUDA_H */
