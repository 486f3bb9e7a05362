/*
 * mps.h - finding, starting, querying and stopping NVIDIA's MPS control
 * daemon. Side effects; returns codes and fills an error text, never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MPS_H
#define NVT_MPS_H

#include <stddef.h>
#include <sys/types.h>

struct nvt_mps {
	char pipe_dir[256]; /* $CUDA_MPS_PIPE_DIRECTORY or /tmp/nvidia-mps */
	char log_dir[256];  /* $CUDA_MPS_LOG_DIRECTORY or /var/log/nvidia-mps */
	char control[512];  /* path of nvidia-cuda-mps-control, "" if not found */
	char error[1024];
};

/* Fills the directories from the environment and looks for the control binary. */
void nvt_mps_setup(struct nvt_mps *mps);

/* Returns the PID of the running control daemon of mps->pipe_dir, or 0. */
pid_t nvt_mps_daemon(const struct nvt_mps *mps);

/* Starts the daemon and waits (at most timeout_ms) until it is up. Returns 0 or -1. */
int nvt_mps_start(struct nvt_mps *mps, int timeout_ms);

/* Asks the daemon to quit and waits (at most timeout_ms) until it has. Returns 0 or -1. */
int nvt_mps_stop(struct nvt_mps *mps, int timeout_ms);

/*
 * Sends one command (e.g. "get_server_list") to the daemon and stores its
 * answer in out. Waits at most timeout_ms. Returns 0 or -1.
 */
int nvt_mps_query(struct nvt_mps *mps, const char *command, char *out, size_t len, int timeout_ms);

/*
 * Finds the MPS server that a task of user uid would join and counts its
 * clients. Returns 0 with *server = 0 if it has no clients (or none runs),
 * 0 with *server and *clients filled, or -1 if the daemon did not answer.
 */
int nvt_mps_clients(struct nvt_mps *mps, uid_t uid, pid_t *server, int *clients, int timeout_ms);

/* Reads the tail of the server log into buf. Returns 0 or -1. */
int nvt_mps_read_log(const struct nvt_mps *mps, char *buf, size_t len);

#endif /* NVT_MPS_H */
