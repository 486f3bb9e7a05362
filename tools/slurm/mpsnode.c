/*
 * mpsnode.c - the node's MPS control daemon as the Slurm plugin runs it
 * (see mpsnode.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "mpsnode.h"
#include "os/rootpath.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CONTROL "nvidia-cuda-mps-control"

/* Where a root-run plugin looks for the control binary: never $PATH. */
static const char *const system_dirs[] = {
	"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin",
	"/usr/local/nvidia/bin", "/opt/nvidia/bin",
};

/* Finds the control binary: configured, or in system_dirs. Returns 0 or -1 with why. */
static int find_control(const char *configured, char *out, size_t out_len, char *why, size_t len)
{
	char path[64], refused[512] = "";

	if (configured && *configured) {
		char reason[512];
		if (nvt_root_exec(configured, out, out_len, reason, sizeof(reason)) == 0)
			return 0;
		snprintf(why, len, "refusing mps_control=%s: %s", configured, reason);
		return -1;
	}
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
		char reason[400];
		snprintf(path, sizeof(path), "%s/" CONTROL, system_dirs[i]);
		if (access(path, F_OK))
			continue;
		if (nvt_root_exec(path, out, out_len, reason, sizeof(reason)) == 0)
			return 0;
		if (!refused[0])
			snprintf(refused, sizeof(refused), "; refused %.60s: %.400s", path, reason);
	}
	snprintf(why, len, "cannot find " CONTROL " in /usr/bin, /usr/sbin, /bin, /sbin, "
		 "/usr/local/bin, /usr/local/sbin, /usr/local/nvidia/bin or /opt/nvidia/bin%s (give "
		 "mps_control=/PATH in plugstack.conf)", refused);
	return -1;
}

int nvt_node_mps_setup(const char *pipe_dir, const char *log_dir, const char *control, int make,
		       struct nvt_mps *mps, char *why, size_t len)
{
	const char *pipe = pipe_dir && *pipe_dir ? pipe_dir : NVT_NODE_MPS_PIPE;
	const char *log = log_dir && *log_dir ? log_dir : NVT_NODE_MPS_LOG;
	char reason[512];

	memset(mps, 0, sizeof(*mps));
	mps->clean_env = 1;
	if (nvt_root_dir(pipe, make ? 0755 : 0, mps->pipe_dir, sizeof(mps->pipe_dir), reason,
			 sizeof(reason))) {
		snprintf(why, len, "refusing the MPS pipe directory %s (mps_pipe=): %s", pipe, reason);
		return -1;
	}
	if (nvt_root_dir(log, make ? 0755 : 0, mps->log_dir, sizeof(mps->log_dir), reason,
			 sizeof(reason))) {
		snprintf(why, len, "refusing the MPS log directory %s (mps_log=): %s", log, reason);
		return -1;
	}
	return find_control(control, mps->control, sizeof(mps->control), why, len);
}

int nvt_node_mps_setup_level(const char *pipe_dir, const char *log_dir, const char *control,
			     int make, const char *level, const char *server_env, const char *shim,
			     struct nvt_mps *mps, char *why, size_t len)
{
	char pipe[sizeof(mps->pipe_dir)], log[sizeof(mps->log_dir)];
	int n, m;

	n = snprintf(pipe, sizeof(pipe), "%s-%s", pipe_dir && *pipe_dir ? pipe_dir : NVT_NODE_MPS_PIPE,
		     level);
	m = snprintf(log, sizeof(log), "%s-%s", log_dir && *log_dir ? log_dir : NVT_NODE_MPS_LOG,
		     level);
	if (n < 0 || m < 0 || (size_t)n >= sizeof(pipe) || (size_t)m >= sizeof(log) ||
	    strchr(level, '/') || strlen(level) >= sizeof(mps->level) ||
	    strlen(server_env) >= sizeof(mps->server_env) || strlen(shim) >= sizeof(mps->shim)) {
		snprintf(why, len, "the MPS directories of priority %.20s are too long to name", level);
		return -1;
	}
	if (nvt_node_mps_setup(pipe, log, control, make, mps, why, len))
		return -1;
	/* Its server loads the shim, told the level (nvt_mps_setup_level's, as root's). */
	snprintf(mps->level, sizeof(mps->level), "%s", level);
	snprintf(mps->server_env, sizeof(mps->server_env), "%s", server_env);
	snprintf(mps->shim, sizeof(mps->shim), "%s", shim);
	return 0;
}

int nvt_node_mps_start(struct nvt_mps *mps, int timeout_ms, char *why, size_t len)
{
	char detail[1024];

	if (nvt_mps_daemon(mps))
		return 0;
	/* nvt_mps_start serialises prologs starting at once (a lock that only
	 * root may take): one starts the daemon, the others use it. */
	if (nvt_mps_start(mps, timeout_ms, detail, sizeof(detail)) && !nvt_mps_daemon(mps)) {
		snprintf(why, len, "cannot start the MPS control daemon: %s", detail);
		return -1;
	}
	return mps->started ? 1 : 0;
}
