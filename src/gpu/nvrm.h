/*
 * nvrm.h - the NVIDIA kernel module's resource-manager (RM) interface as
 * nvtaskset uses it, written once: the ioctls libcuda allocates and
 * controls its objects with, the classes and controls of channel groups
 * (TSGs) and channels, and their parameter blocks. The shim follows the
 * channel groups its own process allocates through these ioctls and issues
 * controls on them (src/shim/shimchan.c); the fake driver's RM
 * (tests/fake/fakerm.c) answers the same ioctls, so what the shim issues and
 * what the fake checks are one declaration.
 *
 * Numbers and layouts after open-gpu-kernel-modules (nv_escape.h, nvos.h,
 * ctrla06c.h, ctrla06f/ctrla06fgpfifo.h); the controls used here carry
 * RMCTRL_FLAGS_NON_PRIVILEGED (g_kernel_channel_group_api_nvoc.c): any
 * process may issue them on its own objects. Measured on the H100 and H200
 * with driver 580: docs/hardware-facts.md, "Channel groups".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_NVRM_H
#define NVT_NVRM_H

#include <stdint.h>

/* ioctl(2) requests on /dev/nvidiactl: type NVRM_IOCTL_MAGIC, number NVRM_ESC_*,
 * size that of the parameter block (_IOWR). */
#define NVRM_IOCTL_MAGIC 'F'
#define NVRM_ESC_FREE 0x29    /* struct nvrm_free */
#define NVRM_ESC_CONTROL 0x2A /* struct nvrm_control */
#define NVRM_ESC_ALLOC 0x2B   /* struct nvrm_alloc, or struct nvrm_alloc64 */
/* The character devices of the driver's nodes, /dev/nvidiactl (minor 255) and /dev/nvidiaN (minor
 * N): the major number reserved for NVIDIA (nv-chardev-numbers.h's NV_MAJOR_DEVICE_NUMBER). */
#define NVRM_DEVICE_MAJOR 195

/* NVOS54_PARAMETERS: a control on object `object` of client `client`. */
struct nvrm_control {
	uint32_t client;
	uint32_t object;
	uint32_t cmd;
	uint32_t flags;
	uint64_t params; /* user address of the control's parameter block */
	uint32_t params_size;
	uint32_t status; /* NVRM_OK, or an NV_STATUS */
};

/* NVOS21_PARAMETERS: allocate `object` of class `cls` under `parent`. */
struct nvrm_alloc {
	uint32_t root; /* the client */
	uint32_t parent;
	uint32_t object;
	uint32_t cls;
	uint64_t alloc_params;
	uint32_t params_size;
	uint32_t status;
};

/* NVOS64_PARAMETERS: the same with requested rights (libcuda 580 uses this one). */
struct nvrm_alloc64 {
	uint32_t root;
	uint32_t parent;
	uint32_t object;
	uint32_t cls;
	uint64_t alloc_params;
	uint64_t rights;
	uint32_t params_size;
	uint32_t flags;
	uint32_t status;
	uint32_t pad;
};

/* NVOS00_PARAMETERS: free `object` (and everything under it). */
struct nvrm_free {
	uint32_t root;
	uint32_t parent;
	uint32_t object;
	uint32_t status;
};

#define NVRM_OK 0u
#define NVRM_ERR_INSUFFICIENT_PERMISSIONS 0x1bu
#define NVRM_ERR_NOT_SUPPORTED 0x56u
/* What the RM answers a request naming a client or an object it does not know (nvstatuscodes.h):
 * one freed, or one of a file that was closed (the module frees a file's clients at its
 * release). */
#define NVRM_ERR_INVALID_CLIENT 0x23u
#define NVRM_ERR_INVALID_OBJECT_HANDLE 0x33u
#define NVRM_ERR_INVALID_OBJECT_PARENT 0x36u
#define NVRM_ERR_OBJECT_NOT_FOUND 0x57u

/* NV01_ROOT (a client: freeing it frees all its objects), NV01_DEVICE_0 (a
 * GPU, or an SLI group) and NV20_SUBDEVICE_0 (one GPU of a device): a
 * channel group's parent is a device (or a subdevice). */
#define NVRM_CLASS_ROOT 0x0000u
#define NVRM_CLASS_DEVICE 0x0080u
#define NVRM_CLASS_SUBDEVICE 0x2080u

/* KEPLER_CHANNEL_GROUP_A: a channel group (TSG), the unit the GPU's
 * scheduler time-slices. */
#define NVRM_CLASS_CHANNEL_GROUP 0xa06cu
/* Channels (GPFIFO) of Ampere, Ada, Hopper and Blackwell: their parent is
 * their channel group. */
#define NVRM_CLASS_CHANNEL_AMPERE 0xc56fu
#define NVRM_CLASS_CHANNEL_ADA 0xc76fu
#define NVRM_CLASS_CHANNEL_HOPPER 0xc86fu
#define NVRM_CLASS_CHANNEL_BLACKWELL 0xc96fu
#define nvrm_is_channel_class(c)                                                                  \
	((c) == NVRM_CLASS_CHANNEL_AMPERE || (c) == NVRM_CLASS_CHANNEL_ADA ||                      \
	 (c) == NVRM_CLASS_CHANNEL_HOPPER || (c) == NVRM_CLASS_CHANNEL_BLACKWELL)

/* Channel-group controls (ctrla06c.h). */
#define NVRM_TSG_GPFIFO_SCHEDULE 0xa06c0101u /* struct nvrm_schedule */
#define NVRM_TSG_BIND 0xa06c0102u
#define NVRM_TSG_SET_TIMESLICE 0xa06c0103u /* struct nvrm_timeslice: "takes effect immediately" */
/* What the kernel module last accepted through SET_TIMESLICE: its own record,
 * not what the GPU's firmware schedules with. */
#define NVRM_TSG_GET_TIMESLICE 0xa06c0104u
#define NVRM_TSG_PREEMPT 0xa06c0105u /* struct nvrm_preempt */
/* The same controls on a channel (ctrla06fgpfifo.h): a channel's schedule
 * or bind (re)schedules its group. */
#define NVRM_CHANNEL_GPFIFO_SCHEDULE 0xa06f0103u
#define NVRM_CHANNEL_BIND 0xa06f0104u

struct nvrm_timeslice {
	uint64_t timeslice_us;
};

/* Three bytes: libcuda 580 issues it so, and a block of two is refused with
 * NV_ERR_INVALID_ARGUMENT (0x1f; H200, driver 580, 2026-11-24). */
struct nvrm_schedule {
	uint8_t enable; /* 1: on the runlist and enabled; 0: disabled, off the runlist */
	uint8_t skip_submit;
	uint8_t skip_enable;
};

struct nvrm_preempt {
	uint8_t wait;
	uint8_t manual_timeout;
	uint8_t pad[2];
	uint32_t timeout_us;
};

/* A subdevice's GPU UUID (ctrl2080gpu.h): flags NVRM_GID_BINARY asks for its 16 bytes. */
#define NVRM_SUBDEVICE_GET_GID_INFO 0x2080014au
#define NVRM_GID_BINARY 0x2u
struct nvrm_gid_info {
	uint32_t index;
	uint32_t flags;
	uint32_t length;
	uint8_t data[256];
};

/* The timeslice the kernel module gives a new channel group (kernel_fifo_gv100.c);
 * libcuda 580 sets its compute group's to 2048 us right after scheduling it. */
#define NVRM_DEFAULT_TIMESLICE_US 1024u
#define NVRM_LIBCUDA_TIMESLICE_US 2048u

/* The driver's layouts (x86-64 and aarch64: NvP64 and NvU64 8-byte aligned), checked where they
 * are declared: a field added or moved is a build error, not an ioctl the module refuses. */
_Static_assert(sizeof(struct nvrm_control) == 32, "NVOS54_PARAMETERS is 32 bytes");
_Static_assert(__builtin_offsetof(struct nvrm_control, params) == 16, "NVOS54's params at 16");
_Static_assert(sizeof(struct nvrm_alloc) == 32, "NVOS21_PARAMETERS is 32 bytes");
_Static_assert(sizeof(struct nvrm_alloc64) == 48, "NVOS64_PARAMETERS is 48 bytes");
_Static_assert(__builtin_offsetof(struct nvrm_alloc64, status) == 40, "NVOS64's status at 40");
_Static_assert(sizeof(struct nvrm_free) == 16, "NVOS00_PARAMETERS is 16 bytes");
_Static_assert(sizeof(struct nvrm_timeslice) == 8, "NVA06C_CTRL_TIMESLICE_PARAMS is 8 bytes");
_Static_assert(sizeof(struct nvrm_schedule) == 3, "libcuda 580's GPFIFO_SCHEDULE block is 3 bytes");
_Static_assert(sizeof(struct nvrm_preempt) == 8, "NVA06C_CTRL_PREEMPT_PARAMS is 8 bytes");
_Static_assert(sizeof(struct nvrm_gid_info) == 268, "NV2080_CTRL_GPU_GET_GID_INFO_PARAMS is 268 bytes");

#endif /* NVT_NVRM_H */
