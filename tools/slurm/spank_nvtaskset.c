/*
 * spank_nvtaskset.c - nvtaskset's Slurm SPANK plugin: `srun --gpu-tpcs=N`
 * (or --gpu-gpcs=N) runs every task of a job step inside TPCs of a GPU of
 * its node that no other job holds, enforced by the hardware through the
 * nvtaskset shim.
 * Over 500 lines on purpose: SPANK wants one plugin file of callbacks over
 * one private state; placement, requests and MPS are in files of their own.
 *
 * Where each part runs (spank(8)):
 *  - srun, sbatch, salloc: the options are checked. Slurm sends them to
 *    slurmstepd and, from sbatch and salloc, puts them in the job's
 *    environment (SLURM_SPANK__SLURM_SPANK_OPTION_nvtaskset_gpu_tpcs), where
 *    an srun inside the job reads them as its own. nvtaskset's cli_filter.lua
 *    turns them into the count GRES `tpc` by which Slurm queues the job.
 *  - slurmd, as root (job prolog, for every job): makes sure the node's MPS
 *    control daemon runs (mpsnode.h), outside any job step.
 *  - slurmstepd, as root (init_post_opt): reads the tpc GRES Slurm granted
 *    the job on this node, and its GPUs (slurm_load_job), claims that many
 *    TPCs with the allocator in slurmstepd's own control segment (place.c),
 *    checks that the MPS control daemon runs, and gives every task the
 *    shim, its partition and MPS's settings through the environment. What
 *    it trusts comes from Slurm, not from the job's environment (which its
 *    user sets): see node_name() and step_gpus().
 *  - slurmstepd, as root (task_exit, exit): gives the TPCs back when the
 *    step's last task has ended. If slurmstepd dies first, its segment names
 *    a dead process, which the allocator ignores: the TPCs are free anyway.
 *
 * plugstack.conf arguments (all optional):
 *   mps=no         run tasks outside MPS (default: MPS, started by the job prolog)
 *   wait=SECONDS   how long TPCs Slurm counts free may still be held by an
 *                  ending step (default 10)
 *   rundir=DIR     where the control segments live (default /dev/shm)
 *   channels=N|default  CUDA_DEVICE_MAX_CONNECTIONS for the tasks, as
 *                  nvtaskset --channels (default: nvtaskset's, NVT_CHANNELS_DEFAULT)
 *   shim=PATH      the preload shim (default: libnvtaskset.so beside this plugin)
 *   mps_pipe=DIR, mps_log=DIR   the MPS daemon's directories, which must be
 *                  root's on a path of root's (default /run/nvidia-mps,
 *                  /run/nvidia-mps-log; see os/rootpath.h)
 *   mps_control=PATH  nvidia-cuda-mps-control, root's on a path of root's
 *                  (default: the first in a fixed list of system directories)
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdint.h> /* before slurm/spank.h, which uses its types */
#include <slurm/slurm.h>
#include <slurm/spank.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gpusel.h"
#include "core/mpslog.h"
#include "mps/mps.h"
#include "mpsnode.h"
#include "nvtaskset.h"
#include "place.h"
#include "request.h"
#include "seg/segfile.h"
#include "task/task.h"
#include "os/child.h"
#include "os/slurmproc.h"
#include "core/tpcset.h"
#include "core/prio.h"
#include "core/ptree.h"
#include "core/memlimit.h"
#include "gpu/gpu.h"

/* What the plugin exports (plugin_*, slurm_spank_*) spank.map says. */
SPANK_PLUGIN(nvtaskset, 1)

#define DEFAULT_WAIT_S 10
#define LOG "nvtaskset: "

enum { OPT_TPCS = 1, OPT_GPCS = 2, OPT_PRIORITY = 3, OPT_MEM = 4 };

static unsigned opt_tpcs, opt_gpcs; /* what the user asked; 0: not given */
/* --gpu-priority: the tasks' priority (docs/priorities.md), "" when not given */
static char opt_priority[NVT_PRIO_ENV_TEXT_MAX];
/* --gpu-mem: the tasks' GPU memory limit as given (read against the GPU's memory once the
 * step is placed), "" when not given */
static char opt_mem[32];

/* plugstack.conf's arguments */
static struct {
	int no_mps;
	int wait_s;
	int channels; /* a count or NVT_CHANNELS_CUDA (docs/bench/startup-2026-11-23/) */
	char rundir[PATH_MAX];
	char shim[PATH_MAX];
	char mps_pipe[200], mps_log[200], mps_control[PATH_MAX];
} conf;

/* The step's placement (slurmstepd); tasks that have ended; why it failed. */
static struct nvt_place place;
static uint32_t tasks_ended;
static char failure[1200];

static int opt_count(int val, const char *optarg, int remote);
static int opt_prio(int val, const char *optarg, int remote);
static int opt_memory(int val, const char *optarg, int remote);

/* Registered in slurm_spank_init: Slurm reads no static table in sbatch and salloc. */
static struct spank_option options[] = {
	{"gpu-tpcs", "N",
	 "Run the step's tasks on each node in N TPCs of a GPU that no other job uses (nvtaskset)",
	 1, OPT_TPCS, opt_count},
	{"gpu-gpcs", "N",
	 "Run the step's tasks on each node in N whole GPCs of a GPU that no other job uses "
	 "(nvtaskset)",
	 1, OPT_GPCS, opt_count},
	{"gpu-priority", "LEVEL[,guard=N][,no-lend][,yield=W+W...]",
	 "Give the step's tasks a priority (high, normal or low) among the tasks on their GPU, "
	 "yielding as nvtaskset --priority --yield W does (yield=slice: time-sliced, in the "
	 "level's MPS server)",
	 1, OPT_PRIORITY, opt_prio},
	{"gpu-mem", "SIZE",
	 "Let each task of the step hold at most SIZE of GPU memory (K, M, G or T, powers of 1024, "
	 "or a share of the GPU such as 25%) (nvtaskset --mem)",
	 1, OPT_MEM, opt_memory},
	SPANK_OPTIONS_TABLE_END,
};

/* Checks --gpu-priority's value, in every context. */
static int opt_prio(int val, const char *optarg, int remote)
{
	struct nvt_slot_prio prio = {0};

	(void)val, (void)remote;
	/* (yield=auto is a CDI priority device's: the step's tasks are given their ways) */
	if (!optarg || nvt_prio_env_parse(optarg, &prio) || (prio.flags & NVT_PRIOF_AUTO)) {
		slurm_error(LOG "--gpu-priority takes LEVEL[,guard=N][,no-lend][,yield=W+W...] (LEVEL "
			    "high, normal or low; N from 1 to %d; W --yield's words), not '%s'",
			    NVT_MAX_TPCS, optarg ? optarg : "");
		return -1;
	}
	snprintf(opt_priority, sizeof(opt_priority), "%s", optarg);
	return 0;
}

/* Checks --gpu-mem's value, in every context: its words here, its size against the GPU's
 * memory once the step is placed (memory_limit). */
static int opt_memory(int val, const char *optarg, int remote)
{
	char why[256];
	uint64_t bytes;
	size_t n = optarg ? strlen(optarg) : 0;

	(void)val, (void)remote;
	/* A share needs some GPU's memory: any, here (the placed GPU's decides). */
	if (n >= sizeof(opt_mem) ||
	    nvt_memlimit_parse(optarg ? optarg : "", n && optarg[n - 1] == '%' ? UINT64_MAX : 0,
			       &bytes, why, sizeof(why))) {
		slurm_error(LOG "--gpu-mem takes SIZE (bytes with K, M, G or T, or a share of the GPU "
			    "such as 25%%), not '%.40s'%s%s", optarg ? optarg : "",
			    n < sizeof(opt_mem) ? ": " : "", n < sizeof(opt_mem) ? why : "");
		return -1;
	}
	snprintf(opt_mem, sizeof(opt_mem), "%s", optarg);
	return 0;
}

/* Checks an option's value, in every context: srun, sbatch and salloc refuse a bad one. */
static int opt_count(int val, const char *optarg, int remote)
{
	const char *name = val == OPT_TPCS ? "gpu-tpcs" : "gpu-gpcs";
	unsigned count;

	(void)remote;
	if (nvt_slurm_count_parse(optarg, NVT_SLURM_MAX_COUNT, &count)) {
		slurm_error(LOG "--%s takes a count from 1 to %d, not '%s'", name, NVT_SLURM_MAX_COUNT,
			    optarg ? optarg : "");
		return -1;
	}
	if (val == OPT_TPCS)
		opt_tpcs = count;
	else
		opt_gpcs = count;
	if (opt_tpcs && opt_gpcs) {
		slurm_error(LOG "--gpu-tpcs and --gpu-gpcs exclude each other (one may come from the "
			    "job's environment: SLURM_SPANK__SLURM_SPANK_OPTION_nvtaskset_gpu_tpcs or "
			    "_gpu_gpcs, set by sbatch and salloc)");
		return -1;
	}
	return 0;
}

/* Reads plugstack.conf's arguments. Returns 0, or -1 after saying what is wrong. */
static int parse_args(int ac, char **av)
{
	conf.wait_s = DEFAULT_WAIT_S;
	conf.channels = NVT_CHANNELS_DEFAULT;
	const struct {
		const char *prefix;
		char *buf;
		size_t len;
	} paths[] = {
		{"mps_pipe=", conf.mps_pipe, sizeof(conf.mps_pipe)},
		{"mps_log=", conf.mps_log, sizeof(conf.mps_log)},
		{"mps_control=", conf.mps_control, sizeof(conf.mps_control)},
		{"rundir=", conf.rundir, NVT_RUNDIR_MAX}, /* as the shim takes it */
		{"shim=", conf.shim, sizeof(conf.shim)},
	};

	for (int i = 0; i < ac; i++) {
		char why[200];
		unsigned v;
		int path = 0;
		for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]) && !path; k++)
			path = nvt_slurm_path_arg(av[i], paths[k].prefix, paths[k].buf, paths[k].len, why,
						  sizeof(why));
		if (path < 0) {
			slurm_error(LOG "plugstack.conf: %s", why);
			return -1;
		}
		if (path) {
			continue;
		} else if (!strcmp(av[i], "mps=no") || !strcmp(av[i], "mps=yes")) {
			conf.no_mps = !strcmp(av[i], "mps=no");
		} else if (!strncmp(av[i], "wait=", 5) &&
			   nvt_slurm_count_parse(av[i] + 5, 3600, &v) == 0) {
			conf.wait_s = (int)v;
		} else if (!strncmp(av[i], "channels=", 9) &&
			   nvt_channels_parse(av[i] + 9, &conf.channels) == 0) {
			continue;
		} else {
			slurm_error(LOG "unknown or malformed argument '%s' in plugstack.conf (takes "
				    "mps=yes|no, wait=SECONDS, channels=N|default, rundir=/DIR, shim=/PATH, mps_pipe=/DIR, "
				    "mps_log=/DIR, mps_control=/PATH)", av[i]);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (parse_args(ac, av))
		return -1;
	for (int i = 0; options[i].name; i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
			slurm_error(LOG "cannot register --%s", options[i].name);
			return -1;
		}
	return 0;
}

/* ---- slurmstepd ------------------------------------------------------------ */

/* Records why the step cannot run (its tasks print it); returns -1. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(failure, sizeof(failure), fmt, ap);
	va_end(ap);
	return -1;
}

/* Where segments live: rundir= or the default (as the shim sees it). */
static const char *run_base(void)
{
	return conf.rundir[0] ? conf.rundir : nvt_rundir();
}

/* The shim: shim=, else libnvtaskset.so in this plugin's directory. */
static int find_shim(char *buf, size_t len)
{
	Dl_info info;
	char *slash;

	if (conf.shim[0]) {
		snprintf(buf, len, "%s", conf.shim);
	} else {
		if (!dladdr((void *)find_shim, &info) || !info.dli_fname ||
		    !realpath(info.dli_fname, buf))
			return -1;
		slash = strrchr(buf, '/');
		if (!slash || (size_t)(slash - buf) + sizeof("/libnvtaskset.so") > len)
			return -1;
		strcpy(slash, "/libnvtaskset.so");
	}
	return access(buf, R_OK);
}

/* What Slurm granted a job on this node. */
struct granted {
	long tpcs;     /* its tpc GRES; -1: none */
	int has_gpus;  /* as nvt_slurm_gres_index: 1: gpus holds its gpu GRES's devices */
	uint64_t gpus; /* bit i: Slurm's GPU index i on this node */
};

/*
 * Asks slurmctld what job holds on node (its name as slurmd knows it).
 * Returns 0, or -1 with failure set if slurmctld cannot be asked.
 */
static int job_on_node(uint32_t job, const char *node, struct granted *out)
{
	job_info_msg_t *msg = NULL;

	out->tpcs = -1;
	out->has_gpus = -1;
	out->gpus = 0;
	if (slurm_load_job(&msg, job, SHOW_DETAIL) || !msg || msg->record_count < 1) {
		fail("cannot ask slurmctld about job %u: %s", job, slurm_strerror(slurm_get_errno()));
		if (msg)
			slurm_free_job_info_msg(msg);
		return -1;
	}
	for (uint32_t r = 0; r < msg->record_count; r++) {
		slurm_job_info_t *j = &msg->job_array[r];
		hostlist_t hl = j->nodes ? slurm_hostlist_create(j->nodes) : NULL;
		int index = hl ? slurm_hostlist_find(hl, node) : -1;

		if (hl)
			slurm_hostlist_destroy(hl);
		if (j->job_id != job || index < 0)
			continue;
		/* Per node, as allocated; a job without details says what it asked per node. */
		if ((uint32_t)index < j->gres_detail_cnt && j->gres_detail_str) {
			out->tpcs = nvt_slurm_gres_count(j->gres_detail_str[index], "tpc");
			out->has_gpus = nvt_slurm_gres_index(j->gres_detail_str[index], "gpu",
							     &out->gpus);
		} else if (j->tres_per_node) {
			out->tpcs = nvt_slurm_gres_count(j->tres_per_node, "tpc");
		}
		break;
	}
	slurm_free_job_info_msg(msg);
	return 0;
}

/*
 * This node's name as slurmd knows it: SLURMD_NODENAME in slurmstepd's own
 * environment, which slurmstepd sets from slurmd's configuration (Slurm
 * 22.05 and later) - not the job's, which its user sets - else the host
 * name. Returns 0 or -1.
 */
static int node_name(char *buf, size_t len)
{
	const char *name = getenv("SLURMD_NODENAME");

	if (name && *name && strlen(name) < len) {
		snprintf(buf, len, "%s", name);
		return 0;
	}
	if (gethostname(buf, len))
		return -1;
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0'; /* Slurm names nodes by short host names */
	return 0;
}

/*
 * The priority level whose own MPS daemon a step of priority text (its
 * --gpu-priority; NULL or "": none) joins: one time-sliced (yield=slice),
 * as nvtaskset's start chooses it (nvt_prio_mps_level); its server's
 * NVT_ENV_MPS_SERVER text to server_env, at the level's own timeslice: the
 * node's daemon serves every user's jobs, and one job's slice= must not set
 * the others' (step_slice_refused). Returns the level, or NVT_PRIO_NONE: the
 * node's shared daemon.
 */
static int step_level(const char *text, char *server_env, size_t len)
{
	struct nvt_slot_view part;
	int level;

	memset(&part, 0, sizeof(part));
	if (!text || !*text || nvt_prio_env_parse(text, &part.prio))
		return NVT_PRIO_NONE;
	part.prio.slice_us = 0;
	level = nvt_prio_mps_level(&part, 1, server_env, len);
	return level < 0 ? NVT_PRIO_NONE : level;
}

/* The pipe directory of a level's node daemon (nvt_node_mps_setup_level's), to dir. */
static void level_pipe_dir(int level, char *dir, size_t len)
{
	snprintf(dir, len, "%.240s-%s", conf.mps_pipe[0] ? conf.mps_pipe : NVT_NODE_MPS_PIPE,
		 nvt_prio_name((unsigned)level));
}

/* 1 if no level's pipe directory exists: no prolog made it (a refused one says why). */
static int level_dir_missing(int level)
{
	char dir[300];

	level_pipe_dir(level, dir, sizeof(dir));
	return access(dir, F_OK) != 0;
}

/* Says why a step time-sliced at level cannot start: its daemon does not run. Returns -1. */
static int level_not_running(int level, char *why, size_t len)
{
	char dir[300];

	/* Only a job's own priority tells the prolog which level's daemon to start. */
	level_pipe_dir(level, dir, sizeof(dir));
	snprintf(why, len, "the MPS control daemon of priority %s does not run on this node (pipe "
		 "directory %s); the plugin's job prolog starts it for a job whose own "
		 "--gpu-priority (salloc's, sbatch's, or that of the srun that makes the job) is "
		 "time-sliced at that level: give the job that priority, or give this step the "
		 "job's, or no yield=slice (slurmd's log says why a prolog did not start it; "
		 "plugstack.conf's mps=no runs steps outside MPS, in contexts of their own)",
		 nvt_prio_name((unsigned)level), dir);
	return -1;
}

/*
 * Runs the node's MPS control daemon (make: the job prolog) or finds it
 * running (a job step), and copies its pipe directory to pipe_dir: the
 * shared one, or that of the priority level a step of priority text is
 * time-sliced at (step_level). Returns 0, or -1 with the reason in why.
 */
static int node_mps(int make, const char *priority, char *pipe_dir, size_t len, char *why,
		    size_t why_len)
{
	static const char prolog[] = "the plugin's job prolog makes the MPS directories and "
				     "starts the daemon: slurmd's log says why it did not (restart "
				     "slurmd if it has not run the prolog since plugstack.conf named "
				     "the plugin, or give mps=no)";
	static struct nvt_mps mps;
	char server_env[NVT_PRIO_ENV_TEXT_MAX], shim[PATH_MAX], of_level[64] = "";
	int level = step_level(priority, server_env, sizeof(server_env)), rc;
	size_t n;

	if (level != NVT_PRIO_NONE) {
		snprintf(of_level, sizeof(of_level), " of priority %s", nvt_prio_name((unsigned)level));
		if (find_shim(shim, sizeof(shim))) {
			snprintf(why, why_len, "cannot find the shim %.600s for the MPS server%s (give "
				 "shim=/PATH in plugstack.conf)",
				 conf.shim[0] ? conf.shim : "libnvtaskset.so beside the plugin", of_level);
			return -1;
		}
		rc = nvt_node_mps_setup_level(conf.mps_pipe, conf.mps_log, conf.mps_control, make,
					      nvt_prio_name((unsigned)level), server_env, shim, &mps,
					      why, why_len);
	} else {
		rc = nvt_node_mps_setup(conf.mps_pipe, conf.mps_log, conf.mps_control, make, &mps,
					why, why_len);
	}
	if (!make && level != NVT_PRIO_NONE && (rc ? level_dir_missing(level) : !nvt_mps_daemon(&mps)))
		return level_not_running(level, why, why_len);
	if (rc) {
		n = strlen(why);
		if (!make && n + 3 < why_len)
			snprintf(why + n, why_len - n, "; %s", prolog);
		return -1;
	}
	snprintf(pipe_dir, len, "%s", mps.pipe_dir);
	if (!make) {
		/* A step never starts it: the daemon would be one of the step's
		 * processes, which proctrack/cgroup kills when the step ends. */
		if (nvt_mps_daemon(&mps))
			return 0;
		snprintf(why, why_len, "the MPS control daemon does not run on this node (pipe "
			 "directory %s); %s", mps.pipe_dir, prolog);
		return -1;
	}
	rc = nvt_node_mps_start(&mps, NVT_MPS_TIMEOUT_MS, why, why_len);
	if (rc == 1)
		slurm_info(LOG "started the MPS control daemon%s %s (pipe directory %s)", of_level,
			   mps.control, mps.pipe_dir);
	return rc < 0 ? -1 : 0;
}

/* Sets a variable of the job's environment; one that is set already is kept
 * unless overwrite. Returns 0 or -1. */
static int set_env(spank_t sp, const char *name, const char *value, int overwrite)
{
	spank_err_t rc = spank_setenv(sp, name, value, overwrite);

	return rc == ESPANK_SUCCESS || (rc == ESPANK_ENV_EXISTS && !overwrite) ? 0 : -1;
}

/* Sets (or unsets) in the job's environment what nvt_task_env_build or
 * nvt_task_env_self chose. Returns 0 or -1. */
static int apply_env(spank_t sp, const struct nvt_task_env *env)
{
	int rc = 0;

	for (int i = 0; i < env->n; i++)
		if (env->vars[i].value)
			rc |= set_env(sp, env->vars[i].name, env->vars[i].value, env->vars[i].overwrite);
		else
			rc |= spank_unsetenv(sp, env->vars[i].name) == ESPANK_SUCCESS ? 0 : -1;
	return rc;
}

/* 1 if the step's priority is time-sliced with a timeslice of its own (slice=US). */
static int step_slice_refused(void)
{
	struct nvt_slot_prio prio = {0};

	return opt_priority[0] && !nvt_prio_env_parse(opt_priority, &prio) &&
	       (prio.yield & NVT_YIELD_SLICE) && prio.slice_us;
}

/* Gives the step's tasks the shim, their partition and MPS's settings
 * (nvt_task_env_build, as the command's start). */
static int task_environment(spank_t sp, int had_visible)
{
	static struct nvt_task_env env;
	static char old_preload[8192];
	char shim[PATH_MAX], pipe_dir[256], why[1100];
	struct nvt_task_env_in in = {0};

	if (find_shim(shim, sizeof(shim)))
		return fail("cannot find the shim %s (give shim=/PATH in plugstack.conf)",
			    conf.shim[0] ? conf.shim : "libnvtaskset.so beside the plugin");
	if (!conf.no_mps && step_slice_refused())
		return fail("--gpu-priority=%s: slice=US is not a step's to choose in MPS: the node's "
			    "MPS daemon of its level serves every job at the level's timeslice (give "
			    "yield=slice alone; plugstack.conf's mps=no runs steps outside MPS, where "
			    "a step's own context takes it)",
			    opt_priority);
	if (!conf.no_mps && node_mps(0, opt_priority, pipe_dir, sizeof(pipe_dir), why, sizeof(why)))
		return fail("%s", why);
	in.parts = &place.part;
	in.n_parts = 1;
	in.shim = shim;
	if (spank_getenv(sp, NVT_ENV_LD_PRELOAD, old_preload, sizeof(old_preload)) == ESPANK_SUCCESS)
		in.old_preload = old_preload;
	/* Channels as nvtaskset's run.c gives them; never over the job's own. */
	in.channels = conf.channels;
	in.pipe_dir = conf.no_mps ? NULL : pipe_dir; /* NULL: never connect */
	if (place.n_gpus > 1 || had_visible)
		in.visible = place.uuid;
	if (strcmp(run_base(), NVT_DEFAULT_RUNDIR))
		in.rundir = run_base();
	if (nvt_task_env_build(&in, &env, why, sizeof(why)))
		return fail("%s", why);
	return apply_env(sp, &env) ? fail("cannot set the tasks' environment") : 0;
}

/* The job's environment's text for name in buf, or NULL. */
static const char *job_env(spank_t sp, const char *name, char *buf, size_t len)
{
	return spank_getenv(sp, name, buf, (int)len) == ESPANK_SUCCESS ? buf : NULL;
}

/*
 * Sets the GPUs the step may use (req->gpus, req->visible) from what Slurm
 * granted; the job's environment, which its user sets, may only narrow them:
 *  - A job that holds gpu GRES with device files on this node may use those
 *    GPUs (slurmctld's indices), and the step those of them in
 *    SLURM_STEP_GPUS (SLURM_JOB_GPUS in a batch or interactive step), which
 *    slurmstepd's gres/gpu sets or clears before the plugin runs. Its
 *    CUDA_VISIBLE_DEVICES is not read: with ConstrainDevices it counts from
 *    the step's first GPU.
 *  - Another job may use every GPU of the node, as Slurm keeps it from none;
 *    its CUDA_VISIBLE_DEVICES (with CUDA_DEVICE_ORDER) may narrow them.
 * Slurm's indices count a node's GPUs in gres.conf's order, PCI bus order
 * (AutoDetect's), as nvtaskset numbers them. Returns 0, or -1 with failure.
 */
static int step_gpus(spank_t sp, uint32_t step, const struct granted *g,
		     struct nvt_place_req *req, char *visible, size_t len)
{
	const char *var = step == SLURM_BATCH_SCRIPT || step == SLURM_INTERACTIVE_STEP ?
				  NVT_ENV_SLURM_JOB_GPUS : NVT_ENV_SLURM_STEP_GPUS;
	char text[256], order[32];
	uint64_t mask;

	if (g->has_gpus == 1) {
		req->gpus = g->gpus;
		if (!job_env(sp, var, text, sizeof(text)))
			return 0; /* the step holds none of the job's GPUs: any of them */
		if (nvt_slurm_index_list(text, &mask) || !(mask & g->gpus))
			return fail("%s=%s names none of the GPUs Slurm granted job %u on this node",
				    var, text, req->job);
		req->gpus &= mask;
		return 0;
	}
	req->visible = job_env(sp, NVT_ENV_CUDA_VISIBLE, visible, len);
	req->pci_order = job_env(sp, NVT_ENV_CUDA_ORDER, order, sizeof(order)) &&
			 !strcmp(order, "PCI_BUS_ID");
	return 0;
}

/* --gpu-mem read against the placed GPU's memory, given to the step's tasks (none
 * without it: a step inside another's partition has its own). Returns 0, or -1 with
 * failure set. */
static int memory_limit(void)
{
	struct nvt_gpu_info info;
	char why[512];
	uint64_t limit = 0;

	if (opt_mem[0]) {
		if (nvt_gpu_query(place.part.uuid, NVT_DRIVER_TIMEOUT_S * 1000, &info, why, sizeof(why)))
			return fail("--gpu-mem: cannot ask the driver GPU %d's memory: %s", place.gpu,
				    why);
		if (nvt_memlimit_parse(opt_mem, info.total_mem, &limit, why, sizeof(why)))
			return fail("--gpu-mem on GPU %d (%s): %s", place.gpu, place.uuid, why);
	}
	if (nvt_place_limit_memory(&place, limit, why, sizeof(why)))
		return fail("--gpu-mem: %s", why);
	return 0;
}

/* Places a step and sets its tasks' environment. Returns 0, or -1 with failure set. */
static int place_step(spank_t sp, uint32_t job, uint32_t step, const char *step_text)
{
	char node[256], visible[1024], why[1024], list[NVT_LIST_TEXT_MAX];
	struct nvt_place_req req;
	struct granted granted;
	int rc;

	memset(&req, 0, sizeof(req));
	req.job = job;
	req.tpcs = opt_tpcs;
	req.gpcs = opt_gpcs;
	if (node_name(node, sizeof(node)))
		return fail("cannot tell this node's name");
	if (job_on_node(job, node, &granted)) {
		if (opt_tpcs || opt_gpcs)
			return -1;
		/* A job that did not ask for TPCs (most) must not fail because
		 * slurmctld did not answer: say so in slurmd's log and go on. */
		slurm_info(LOG "%s; steps of job %u that hold TPCs through --gres=tpc alone are "
			   "not placed", failure, job);
		failure[0] = '\0';
		return 0;
	}
	req.granted = granted.tpcs;
	if (req.granted <= 0 && !opt_tpcs && !opt_gpcs && opt_mem[0])
		return fail("--gpu-mem goes with TPCs: give --gpu-tpcs or --gpu-gpcs too");
	if (req.granted <= 0 && !opt_tpcs && !opt_gpcs)
		return 0; /* no TPCs asked or granted: the step runs as without the plugin */
	if (step_gpus(sp, step, &granted, &req, visible, sizeof(visible)))
		return -1;
	req.base = run_base();
	req.wait_ms = conf.wait_s * 1000;
	rc = nvt_place_step(&req, &place, why, sizeof(why));
	if (rc == NVT_PLACE_NONE)
		return 0;
	if (rc != NVT_PLACE_OK)
		return fail("%s", why);
	nvt_format_list(&place.part.tpcs, list, sizeof(list));
	if (place.shared) {
		char from[NVT_SLURM_STEP_TEXT_MAX];
		nvt_slurmproc_step_format(&place.from, from, sizeof(from));
		slurm_info(LOG "step %u.%s runs on TPCs %s of GPU %d (%s), inside step %s's", job,
			   step_text, list, place.gpu, place.uuid, from);
	} else {
		slurm_info(LOG "step %u.%s runs on TPCs %s of GPU %d (%s), placed in %.3f s", job,
			   step_text, list, place.gpu, place.uuid, place.seconds);
	}
	if (memory_limit() ||
	    task_environment(sp, job_env(sp, NVT_ENV_CUDA_VISIBLE, visible, sizeof(visible)) !=
				     NULL)) {
		nvt_place_release(&place);
		return -1;
	}
	return 0;
}

/*
 * In slurmstepd, before the tasks start: places the step. One that cannot be
 * placed still starts, so that its tasks can say why where the user reads
 * (a failed init_post_opt shows only "Plugin initialization failed" and
 * leaves srun's exit status 0); slurm_spank_task_init ends each task.
 */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t job, step;
	char step_text[16];

	(void)ac, (void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) || spank_get_item(sp, S_JOB_STEPID, &step)) {
		slurm_error(LOG "cannot tell the job and step");
		return -1;
	}
	if (step == SLURM_EXTERN_CONT)
		return 0;
	/* The maps of a task, read to tell its segment from a rival file, are read in a child
	 * that a stall does not hold (seg/segfile.h): a user who holds her task's memory map's
	 * lock must not hold another user's step in slurmstepd. Not read in time, every file
	 * that names the task holds its TPCs (alloc/placement.c). */
	nvt_seg_maps_reader(nvt_proc_maps_bounded);
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(step_text, sizeof(step_text), "batch");
	else if (step == SLURM_INTERACTIVE_STEP)
		snprintf(step_text, sizeof(step_text), "interactive");
	else
		snprintf(step_text, sizeof(step_text), "%u", step);
	if (place_step(sp, job, step, step_text))
		slurm_error(LOG "step %u.%s: %s", job, step_text, failure);
	return 0;
}

/*
 * --gpu-priority, in the task (before it runs the program): its priority,
 * and its partition from the environment, not from slurmstepd's segment
 * (which holds the job's TPCs and has no priority): NVT_ENV_PARTITION_FOR
 * names this process, as nvtaskset names its COMMAND. The node's agent
 * (root's, a service: docs/priorities.md) manages it.
 */
static int task_priority(spank_t sp)
{
	static struct nvt_task_env env;
	struct nvt_slot_prio prio = {0};
	char why[160];

	if (!opt_priority[0] || (!place.holding && !place.shared))
		return 0;
	/* A process that cannot be named keeps slurmstepd's partition, unchanged. */
	if (nvt_prio_env_parse(opt_priority, &prio) == 0 &&
	    nvt_task_env_self(&prio, &env, why, sizeof(why)) == 0 &&
	    (!env.named || apply_env(sp, &env) == 0))
		return 0;
	fprintf(stderr, LOG "cannot give the task its priority\n");
	return -1;
}

/* In each task, before it runs the program: a step that could not be placed ends here. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac, (void)av;
	if (!failure[0])
		return task_priority(sp);
	fprintf(stderr, LOG "%s\n", failure);
	return -1;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	uint32_t local_tasks;

	(void)ac, (void)av;
	if (spank_context() != S_CTX_REMOTE || !place.holding)
		return 0;
	/* The last task has ended: the TPCs are free for the next job now, not
	 * only when slurmstepd exits. A task's children that outlive it hold
	 * them in their own segments, as any nvtaskset task does. */
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) == ESPANK_SUCCESS &&
	    ++tasks_ended >= local_tasks)
		nvt_place_release(&place);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	if (spank_context() == S_CTX_REMOTE)
		nvt_place_release(&place);
	return 0;
}

/* ---- Job prolog (slurmd, root) ---------------------------------------------- */

/*
 * Starts the node's MPS control daemon unless it runs, for every job (a
 * job that holds TPCs through --gres=tpc alone has no option to tell it
 * by), outside any step: a daemon that a step started would belong to that
 * step's processes, which proctrack/cgroup kills when the step ends, and
 * steps only check that it runs. The daemon's pipe directory is not CUDA's
 * default, so only the plugin's tasks connect to it. A job whose own
 * --gpu-priority is time-sliced (yield=slice) also gets its level's daemon
 * (step_level), whose server loads the shim. A failure is logged, not
 * returned: a failed prolog drains the node, and the job's steps say what
 * is wrong. Only the job callbacks run here: slurm_spank_init does not, so
 * the arguments are read again; the job's options come from its
 * environment (spank_option_getopt).
 */
int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	char pipe_dir[256], why[1100], *priority = NULL;

	if (parse_args(ac, av) || conf.no_mps)
		return 0;
	if (node_mps(1, NULL, pipe_dir, sizeof(pipe_dir), why, sizeof(why)))
		slurm_error(LOG "job prolog: %s", why);
	if (spank_option_getopt(sp, &options[OPT_PRIORITY - 1], &priority) != ESPANK_SUCCESS ||
	    step_level(priority, why, sizeof(why)) == NVT_PRIO_NONE)
		return 0;
	if (node_mps(1, priority, pipe_dir, sizeof(pipe_dir), why, sizeof(why)))
		slurm_error(LOG "job prolog: %s", why);
	return 0;
}
