/*
 * mpsnode.h - the node's MPS control daemon as the Slurm plugin runs it:
 * one of root's, on a pipe directory that only root can make (default
 * /run/nvidia-mps), started from an nvidia-cuda-mps-control that only root
 * can change, with no environment but its directories and a fixed PATH. It
 * serves every user: it starts each user's MPS server itself, on the same
 * pipe directory, so no directory of a user's is involved.
 *
 * The plugin's job prolog starts it (outside any job step, so that no
 * step's end can take it down); job steps only check that it runs.
 *
 * No Slurm headers. Side effects: directories, the daemon. Returns codes
 * and a reason; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SLURM_MPSNODE_H
#define NVT_SLURM_MPSNODE_H

#include <stddef.h>

#include "mps/mps.h"

#define NVT_NODE_MPS_PIPE "/run/nvidia-mps"
#define NVT_NODE_MPS_LOG "/run/nvidia-mps-log"

/*
 * Fills mps for the node's daemon: pipe_dir and log_dir (NULL or "": the
 * defaults above) checked with nvt_root_dir, and made (mode 0755) if make;
 * control (NULL or "": the first nvidia-cuda-mps-control in a fixed list
 * of system directories) checked with nvt_root_exec. Returns 0, or -1 with
 * why.
 */
int nvt_node_mps_setup(const char *pipe_dir, const char *log_dir, const char *control, int make,
		       struct nvt_mps *mps, char *why, size_t len);

/*
 * The same for the daemon of a priority level (docs/priorities.md,
 * "Preemption"): its directories are the node daemon's with "-LEVEL" after
 * them (default /run/nvidia-mps-LEVEL, /run/nvidia-mps-log-LEVEL), and its
 * server loads the shim (shim, its path), told server_env (the level's
 * NVT_ENV_PRIORITY text, nvt_prio_mps_level's) as NVT_ENV_MPS_SERVER, so
 * that the channel groups of the level's tasks get the level's timeslice.
 * Returns 0, or -1 with why.
 */
int nvt_node_mps_setup_level(const char *pipe_dir, const char *log_dir, const char *control,
			     int make, const char *level, const char *server_env, const char *shim,
			     struct nvt_mps *mps, char *why, size_t len);

/*
 * Starts the daemon unless it runs, locked against other prologs of the
 * node. Returns 1 if it started it, 0 if it ran, or -1 with why.
 */
int nvt_node_mps_start(struct nvt_mps *mps, int timeout_ms, char *why, size_t len);

#endif /* NVT_SLURM_MPSNODE_H */
