/*
 * cli.h - what the nvtaskset command's files share: its options, and the
 * helpers that turn command-line partitions and control segments into
 * messages. Only the command (tools/nvtaskset/) includes it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_H
#define NVT_CLI_H

#include <stdio.h>
#include <sys/types.h>

#include "calibrate.h"
#include "nvtaskset.h"
#include "segfile.h"
#include "segment.h"
#include "topo.h"
#include "tpcset.h"

#define GPU_QUERY_TIMEOUT_S 60
#define SEG_LOCK_TIMEOUT_MS 2000
#define MPS_TIMEOUT_MS 10000
#define MPS_QUERY_TIMEOUT_MS 10000
#define EXIT_MPS_NOT_RUNNING 3

struct options {
	int pid_mode;
	int list_mode;
	int tpc_list; /* -c: MASK is a TPC list */
	int gpc_list; /* -g: MASK is a GPC list */
	int json;
	int no_mps;
	const char *mps_action;
	int gpu;        /* --gpu: the GPU whose TPCs MASK names (-1: not given) */
	unsigned count; /* -n: pick this many TPCs (0: not given) */
	enum nvt_strategy strategy;
	int exclude_running;
	int calibrate;
	int topology;
};

/* ---- The sub-commands (one file each) ---- */
int nvt_cmd_run(const struct options *o, char **argv);             /* run.c */
int nvt_cmd_pid(const struct options *o, int argc, char **argv);   /* pid.c */
int nvt_cmd_list(const struct options *o);                         /* list.c */
int nvt_cmd_mps(const struct options *o);                          /* mpsctl.c */
int nvt_cmd_topology(const struct options *o);                     /* topology.c */

/* ---- main.c ---- */
/* Prints "nvtaskset: WHAT" and the --help hint; exits 1. */
void bad_usage(const char *what) __attribute__((noreturn));

/* ---- common.c: shared by the sub-commands ---- */
/* Prints s as a JSON string: valid UTF-8 whatever s holds (bytes that are
 * not UTF-8 become U+FFFD), controls escaped. */
void json_string(const char *s);
/* Copies s into out (len bytes) for a terminal: controls, C1 controls,
 * text-direction overrides and bytes that are not UTF-8 become '?'. */
void terminal_text(const char *s, char *out, size_t len);
/* Fills list and mask texts of set. */
void describe(const struct nvt_tpcset *set, char *list, char *mask);
/* Milliseconds to wait for the driver ($NVTASKSET_DRIVER_TIMEOUT); exits on a bad value. */
int driver_timeout_ms(void);
/* Loads (or measures) GPU gpu's topology, or exits with the reason. */
struct nvt_gpu_topology load_gpu(int gpu, int force);
/* The topology MASK refers to (--gpu, default 0), or exits. */
struct nvt_topology gpu_topology(const struct options *o);
/* Turns MASK (hex, -c list, -g list or -n) into a TPC set for topo, or exits. */
struct nvt_tpcset parse_partition(const struct options *o, const char *text,
				  const struct nvt_topology *topo, pid_t self);
/* Words for an enum nvt_seg_err. */
const char *seg_error(int rc, const struct nvt_seg_handle *h, char *buf, size_t len);
/* Channels each new MPS client asks for: $CUDA_DEVICE_MAX_CONNECTIONS, else 8. */
int client_connections(void);

#endif /* NVT_CLI_H */
