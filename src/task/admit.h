/*
 * admit.h - whether a container given one of nvtaskset's CDI devices may
 * start (admit.c): the checks its createRuntime hook makes on the runtime's
 * config.json and the user namespaces' uid_maps, each answering why not.
 * The hook (tools/nvtaskset/cdihook.c) reads the files, calls these in
 * order, and words the answer.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TASK_ADMIT_H
#define NVT_TASK_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "nvtaskset.h"
#include "core/cdi.h"
#include "core/gpusel.h"
#include "core/memlimit.h"
#include "core/prio.h"

/* Why a container may not start. Success is 0; NVT_ADMIT_BESIDE: a priority device beside a
 * partition device, whose hook makes the segment (this one has nothing to do). */
enum nvt_admit_rc {
	NVT_ADMIT_OK = 0,
	NVT_ADMIT_BESIDE = 1,
	NVT_ADMIT_MALFORMED = -1,       /* the container's variable `name` is malformed or too long */
	NVT_ADMIT_UNMAPPED = -2,        /* its user (uid) has no uid outside its user namespace */
	NVT_ADMIT_MAPPED = -3,          /* its user namespace maps uid to another (outside) */
	NVT_ADMIT_RUNDIR = -4,          /* it sets NVT_ENV_RUNDIR to another than the spec's */
	NVT_ADMIT_MPS_SERVER = -5,      /* it sets NVT_ENV_MPS_SERVER */
	NVT_ADMIT_OTHER_PARTITION = -6, /* another partition device too (`value`: its name, or "?") */
	NVT_ADMIT_PRIO_MALFORMED = -7,  /* its NVT_ENV_PRIORITY (`value`) is malformed */
	NVT_ADMIT_OTHER_PRIORITY = -8,  /* another priority too (`prio`; `device`: the device
					 * that gives it, or "" and `value`) */
	NVT_ADMIT_PRIO_NO_DEVICE = -9,  /* its NVT_ENV_PRIORITY (`value`) names no priority device */
	NVT_ADMIT_PRIO_NOT_ITS = -10,   /* `value` is not device `device`'s (`expected`) */
	NVT_ADMIT_PRIO_NO_HOOK = -11,   /* priority `prio`, but no device `device` was given */
	NVT_ADMIT_PRIO_TWICE = -12,     /* NVT_ENV_PRIORITY set twice, to different values */
	NVT_ADMIT_NO_GPU = -13,         /* the hook's NVT_ENV_PARTITION names no GPU */
	NVT_ADMIT_PARTITION = -14,      /* its NVT_ENV_PARTITION chosen (`value`: "not set", "not its
					 * device's" or "set") */
	NVT_ADMIT_LEVEL_PIPE = -15,     /* the hook's NVT_ENV_MPS_PIPE_DIR (`value`) is not a level's */
	NVT_ADMIT_MPS_PIPE = -16,       /* its NVT_ENV_MPS_PIPE_DIR is not the spec's (`value`) */
	NVT_ADMIT_MEM_NO_DEVICE = -17,  /* its NVT_ENV_MEM (`value`) names no memory device */
	NVT_ADMIT_OTHER_MEM = -18,      /* another memory device too (`value`) */
	NVT_ADMIT_MEM_NO_HOOK = -19,    /* limit `value`, but no device `device` was given */
	NVT_ADMIT_MEM_TWICE = -20,      /* NVT_ENV_MEM set twice, to different values */
	NVT_ADMIT_MEM_OTHER_GPU = -21,  /* its limit (`value`) is on a GPU the device does not use */
	NVT_ADMIT_NO_CDI_ENV = -22,     /* a partition device's, but no NVT_ENV_CDI in its
					 * environment (none, or no process): not given through CDI */
};

/* What an answer names, for its words. */
struct nvt_admit_why {
	const char *name;                     /* a variable's name */
	char value[NVT_PARTENV_TEXT_MAX];     /* a value, or a word */
	char device[NVT_CDI_VENDOR_MAX + NVT_CDI_DEVICE_TEXT_MAX + 8]; /* VENDOR/CLASS=NAME */
	char expected[NVT_PRIO_ENV_TEXT_MAX]; /* the device's own value */
	uint32_t uid, outside;
	uint8_t prio;
};

/*
 * The container's user, uid inside, must be the same uid outside (the uid
 * the host's nvtaskset and its other tasks see). own: the hook's uid_map;
 * ctr: the container's process's, NULL when it is in the hook's user
 * namespace. *rootless: the hook runs in a namespace that maps uids (a
 * rootless runtime's). Returns enum nvt_admit_rc (UNMAPPED, MAPPED).
 */
int nvt_admit_users(const char *own, size_t own_len, const char *ctr, size_t ctr_len, uint32_t uid,
		    int *rootless, struct nvt_admit_why *w);

/*
 * What the container asks for in config.json (its variables, as the devices
 * set them), for the hook of device (VENDOR/CLASS=NAME, d parsed from its
 * CLASS=NAME): the spec's run directory and no MPS server of ours;
 * d must be the one that set NVT_ENV_CDI, or for a priority NVT_ENV_PRIORITY
 * (for a memory limit NVT_ENV_MEM: nvt_admit_memory), and a priority must be
 * its device's, given as a device. Its priority into
 * *prio (a device's yield=auto resolved, nvt_prio_resolve: partitioned where a partition
 * device set NVT_ENV_CDI), *has_prio 1 if it has one. Returns enum nvt_admit_rc (OK: this hook
 * makes the segment; BESIDE: another device's does, a partition device's,
 * or a priority device's beside a memory device; or why not).
 */
int nvt_admit_config(const char *config, size_t len, const char *device,
		     const struct nvt_cdi_device *d, struct nvt_slot_prio *prio, int *has_prio,
		     struct nvt_admit_why *w);

/*
 * The container's GPU memory limit (NVT_ENV_MEM) into *limit (bytes 0: none)
 * must be a memory device's, that device's hook among config.json's hooks
 * (the container's variables cannot add one), once, as for a priority: a
 * variable the container set itself is refused. gpus (n_gpus; the hook's
 * NVT_ENV_PARTITION) are the GPUs of device d: every GPU in the host's order
 * (d->gpu -1), or GPU d->gpu alone. A limit on one GPU (GPU-UUID=BYTES,
 * mem=N:SIZE) must be on one of them, and names the memory device of the GPU
 * the host numbers so. Returns enum nvt_admit_rc (MEM_NO_DEVICE, OTHER_MEM,
 * MEM_OTHER_GPU, MEM_NO_HOOK, MEM_TWICE, MALFORMED).
 */
int nvt_admit_memory(const char *config, size_t len, const char *device,
		     const struct nvt_cdi_device *d, const struct nvt_slot_view *gpus, int n_gpus,
		     struct nvt_mem_env *limit, struct nvt_admit_why *w);

/*
 * The GPUs of the container's segment, as the spec gave them to the hook
 * (given: the hook's NVT_ENV_PARTITION) into parts (NVT_MAX_GPUS), their
 * count into *n. A container's own variables never choose them: a gpc
 * device's container must carry given as its NVT_ENV_PARTITION, every
 * variable of the name, and other devices' containers none. Returns enum
 * nvt_admit_rc (NO_GPU, PARTITION, MALFORMED).
 */
int nvt_admit_partition(const char *config, size_t len, const struct nvt_cdi_device *d,
			const char *given, struct nvt_slot_view *parts, int *n, struct nvt_admit_why *w);

/*
 * A time-sliced priority device of a spec with MPS: level_pipe (the hook's
 * NVT_ENV_MPS_PIPE_DIR) must be level's daemon's, the shared one's with
 * "-LEVEL" after it (nvt_cdi_shared_pipe), and the container's own
 * NVT_ENV_MPS_PIPE_DIR the shared one's, every variable of the name: the
 * hook binds the level's over it (target, size bytes, gets it), and
 * elsewhere the bind would hide what the container's tasks must find (its
 * run directory, the shim). Returns enum nvt_admit_rc (LEVEL_PIPE, MPS_PIPE,
 * MALFORMED).
 */
int nvt_admit_mps(const char *config, size_t len, const char *level_pipe, const char *level,
		  char *target, size_t size, struct nvt_admit_why *w);

#endif /* NVT_TASK_ADMIT_H */
