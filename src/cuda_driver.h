/*
 * cuda_driver.h - the few CUDA driver API declarations nvtaskset uses, so
 * that building needs no CUDA toolkit. libcuda.so.1 is loaded at run time.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CUDA_DRIVER_H
#define NVT_CUDA_DRIVER_H

#include <stdint.h>

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef struct {
	char bytes[16];
} CUuuid;

#define NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

typedef CUresult (*nvt_cuGetExportTable_fn)(const void **table, const CUuuid *id);
typedef CUresult (*nvt_cuInit_fn)(unsigned flags);
typedef CUresult (*nvt_cuDeviceGetCount_fn)(int *count);
typedef CUresult (*nvt_cuDeviceGet_fn)(CUdevice *dev, int ordinal);
typedef CUresult (*nvt_cuDeviceGetAttribute_fn)(int *value, int attribute, CUdevice dev);
typedef CUresult (*nvt_cuDeviceGetUuid_fn)(CUuuid *uuid, CUdevice dev);
typedef CUresult (*nvt_cuDeviceGetName_fn)(char *name, int len, CUdevice dev);
typedef CUresult (*nvt_cuDriverGetVersion_fn)(int *version);

/*
 * The private export table that offers launch callbacks (docs/hardware-facts.md,
 * section 1, measured on an H100, driver 580): entry 3 subscribes a callback,
 * entry 6 enables one (domain, callback id) pair for it.
 */
#define NVT_CB_TABLE_UUID                                                                    \
	{                                                                                    \
		{                                                                            \
			(char)0x2c, (char)0x8e, (char)0x0a, (char)0xd8, (char)0x07, (char)0x10, \
			(char)0xab, (char)0x4e, (char)0x90, (char)0xdd, (char)0x54, (char)0x71, \
			(char)0x9f, (char)0xe5, (char)0xf7, (char)0x4b                       \
		}                                                                            \
	}
#define NVT_CB_TABLE_SUBSCRIBE 3
#define NVT_CB_TABLE_ENABLE 6
/* Fires once per kernel launch, after the TMD is built, before it is uploaded. */
#define NVT_CB_DOMAIN_LAUNCH 0xb
#define NVT_CB_ID_LAUNCH 0x1
/*
 * Launch parameter block: uint32 size first; 8-byte word 1 is the launching
 * context (measured on two H200s, driver 580), word 4 the TMD pointer.
 */
#define NVT_CB_PARAMS_CTX_WORD 1
#define NVT_CB_PARAMS_TMD_WORD 4
#define NVT_CB_PARAMS_MIN_SIZE ((NVT_CB_PARAMS_TMD_WORD + 1) * 8)

typedef void (*nvt_launch_cb)(void *user, int domain, int cbid, const void *params);
typedef int (*nvt_cb_subscribe_fn)(uint32_t *handle, nvt_launch_cb cb, void *user);
typedef int (*nvt_cb_enable_fn)(uint32_t on, uint32_t handle, int domain, int cbid);

#endif /* NVT_CUDA_DRIVER_H */
