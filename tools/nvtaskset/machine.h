/*
 * machine.h - what the command knows of the machine it runs on: its GPUs
 * (listed once), their topologies, how long to wait for the driver and for
 * other claimers (from the environment), nvtaskset's own library directory,
 * and the channels an MPS client asks for. Above output.h; exits with a
 * message where it says so.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_MACHINE_H
#define NVT_CLI_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/gpus.h"

struct json_object;

#define CLAIM_TIMEOUT_S 10 /* default of NVTASKSET_CLAIM_TIMEOUT */

/* Milliseconds -n --exclude-running waits for other claimers' overlapping claims:
 * $NVTASKSET_CLAIM_TIMEOUT seconds (1-3600; unset or empty: 10); exits on a bad value. */
int claim_timeout_ms(void);
/* Milliseconds to wait for the driver ($NVTASKSET_DRIVER_TIMEOUT); exits on a bad value. */
int driver_timeout_ms(void);
/* The machine's GPUs (listed once), or exits. */
const struct nvt_gpus *machine_gpus(void);
/* The machine's GPUs (listed once), or NULL where they cannot be listed (no driver). */
const struct nvt_gpus *machine_gpus_if_listed(void);
/* The number of the GPU a --gpu argument names, or exits with the reason. */
int resolve_gpu(const char *arg);
/* Loads (or measures) GPU index's topology. Returns 0, or -1 or NVT_GPU_HIDDEN with why. */
int load_topology(int index, int force, struct nvt_gpu_topology *out, char *why, size_t len);
/* The same, or exits with the reason. */
struct nvt_gpu_topology load_gpu(int index, int force);
/* nvtaskset's number of the GPU with this UUID, or -1. */
int gpu_index_of(const uint8_t uuid[16]);
/* "this GPU" when the task has one GPU, else "GPU N". */
void gpu_name(int index, int n_task, char *buf, size_t len);
/* A GPU's JSON object, its first members: {"gpu":N,"uuid":"..."} (gpu null when not on this
 * machine's list); the caller adds the rest. */
struct json_object *json_gpu_object(const uint8_t uuid[16]);
/*
 * Finds file name of nvtaskset's library directory (LIBDIR as seen from the
 * command's directory, the build tree's lib/nvtaskset, LIBDIR): 0 and its
 * path in buf, or -1 and the places looked at in buf.
 */
int find_lib_file(const char *name, char *buf, size_t len);

#endif /* NVT_CLI_MACHINE_H */
