/*
 * run.c - nvtaskset MASK COMMAND: start a command in a partition.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mps.h"
#include "mpslog.h"

/* ---- Starting a task ----------------------------------------------------- */

/* Finds the preload shim: $NVTASKSET_SHIM, else ../lib/nvtaskset/ beside our binary. */
static void find_shim(char *buf, size_t len)
{
	const char *env = getenv(NVT_ENV_SHIM);
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (env[0] != '/' || access(env, R_OK))
			errx(EXIT_FAILURE, "%s=%s is not a readable absolute path", NVT_ENV_SHIM, env);
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		err(EXIT_FAILURE, "cannot find my own executable");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(buf, len, "%s/../lib/nvtaskset/libnvtaskset.so", self) >= (int)len)
		errx(EXIT_FAILURE, "path of the nvtaskset shim too long");
	/* Canonical, so that a shim already in LD_PRELOAD is recognised. */
	if (!realpath(buf, self) || access(self, R_OK))
		errx(EXIT_FAILURE, "cannot find the nvtaskset shim at %s", buf);
	snprintf(buf, len, "%s", self);
}

/* Appends value to the colon-separated variable name unless already there. */
static void env_append(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *joined;

	if (old && *old) {
		size_t n = strlen(value);
		for (const char *p = old; (p = strstr(p, value)); p++)
			if ((p == old || p[-1] == ':' || p[-1] == ' ') &&
			    (p[n] == '\0' || p[n] == ':' || p[n] == ' '))
				return;
		if (asprintf(&joined, "%s:%s", old, value) < 0)
			err(EXIT_FAILURE, "out of memory");
		setenv(name, joined, 1);
		free(joined);
	} else {
		setenv(name, value, 1);
	}
}

/* Makes sure an MPS control daemon the task may join runs, and tells the task where. */
static void ensure_mps(void)
{
	struct nvt_mps mps;
	pid_t server;
	int clients, limit = nvt_mps_client_limit(client_connections());

	if (nvt_mps_setup(&mps))
		errx(EXIT_FAILURE, "%s; run with --no-mps to run without MPS", mps.error);
	/* The directory chosen may be this user's own: CUDA must look there too. */
	setenv("CUDA_MPS_PIPE_DIRECTORY", mps.pipe_dir, 1);
	if (nvt_mps_daemon(&mps)) {
		/* A client past the server's channels fails in CUDA with a misleading
		 * "out of memory" (seen on an H100 with the 16th client): say why now. */
		if (nvt_mps_clients(&mps, geteuid(), &server, &clients, MPS_QUERY_TIMEOUT_MS))
			warnx("cannot ask the MPS control daemon how many clients it serves");
		else if (server && clients >= limit)
			errx(EXIT_FAILURE,
			     "the MPS server (pid %ld) already has %d clients, the most it takes with %d "
			     "channels each (paper 000, section 5.3); this task would fail to start CUDA. "
			     "Stop a task, or run this one with --no-mps",
			     (long)server, clients, client_connections());
		return;
	}
	if (nvt_mps_start(&mps, MPS_TIMEOUT_MS))
		errx(EXIT_FAILURE, "cannot start MPS: %s; run with --no-mps to run without it",
		     mps.error);
	warnx("started the MPS control daemon (pipe directory %s); stop it with 'nvtaskset --mps "
	      "stop'",
	      mps.pipe_dir);
}

int nvt_cmd_run(const struct options *o, char **argv)
{
	struct nvt_topology topo = gpu_topology(o);
	struct nvt_tpcset set = parse_partition(o, o->count ? "" : argv[0], &topo, 0);
	char list[NVT_LIST_TEXT_MAX], topo_text[NVT_TOPO_TEXT_MAX], shim[PATH_MAX];

	find_shim(shim, sizeof(shim));
	if (nvt_format_list(&set, list, sizeof(list)) < 0 ||
	    nvt_topo_format(&topo, topo_text, sizeof(topo_text)) < 0)
		errx(EXIT_FAILURE, "internal error: cannot format the partition");
	/* MPS clients get 2 channels unless told otherwise (paper 000, Pitfall 4). */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 0);
	if (o->no_mps)
		setenv("CUDA_MPS_PIPE_DIRECTORY", "/dev/null", 1); /* never connect */
	else
		ensure_mps();
	setenv(NVT_ENV_TPCS, list, 1);
	setenv(NVT_ENV_TOPOLOGY, topo_text, 1);
	env_append("LD_PRELOAD", shim);
	if (!o->count)
		argv++;
	execvp(argv[0], argv);
	warn("failed to execute %s", argv[0]);
	return errno == ENOENT ? 127 : 126;
}

