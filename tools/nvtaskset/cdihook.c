/*
 * cdihook.c - nvtaskset --cdi-hook VENDOR/CLASS=NAME | poststop: what the OCI
 * runtime runs for a container given one of nvtaskset's CDI devices (cdi.c
 * writes them). As a createRuntime hook (the container's first process is
 * made and held before its exec; the hook runs beside the runtime, on the
 * host), it checks that the container's tasks can be trusted and that no
 * other device of ours replaced this one (the decisions: src/task/admit.c;
 * here the files read and the answers worded), and makes the control segment
 * that the container's program adopts: the spec's GPCs, or TPCs claimed
 * race-free (src/task/container.c). Failing, it says why on stderr and
 * exits 1, and the runtime does not start the container. As a poststop
 * hook, it removes the segments of processes that are gone.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/cdi.h"
#include "core/prio.h"
#include "core/memlimit.h"
#include "os/sysutil.h"
#include "task/admit.h"
#include "task/container.h"

#define STATE_MAX (1 << 20)
#define CONFIG_MAX (16 << 20)
#define MAP_MAX NVT_UID_MAP_MAX

/* Reads all of fd (at most max bytes) into a new string; its length in *len. */
static char *read_all(int fd, size_t max, size_t *len, const char *what)
{
	char *buf = malloc(max + 1);
	size_t n = 0;

	if (!buf)
		cli_err("out of memory");
	for (;;) {
		ssize_t got = read(fd, buf + n, max + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			cli_err("--cdi-hook: cannot read %s", what);
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max)
			cli_errx("--cdi-hook: %s is larger than %zu bytes", what, max);
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The container's config.json, in the bundle the runtime named. */
static char *read_config(const char *bundle, size_t *len)
{
	char path[NVT_OCI_PATH_MAX + 16];
	struct stat st;
	char *text;
	int fd;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		cli_err("--cdi-hook: cannot read %s", path);
	text = read_all(fd, CONFIG_MAX, len, path);
	close(fd);
	return text;
}

/* A uid_map (/proc/PID/uid_map; pid 0: our own), whole, into buf. */
static void read_map(pid_t pid, char *buf, size_t size)
{
	if (nvt_proc_uid_map(pid, buf, size))
		cli_err("--cdi-hook: cannot read the uid_map of %s", pid ? "the container's process" : "the hook");
}

/* 1 if process pid is in the caller's user namespace. */
static int same_user_namespace(pid_t pid)
{
	int same = nvt_proc_shares(pid, "ns/user");

	if (same < 0)
		cli_err("--cdi-hook: cannot read /proc/%ld/ns/user", (long)pid);
	return same;
}

/* Ends the hook if rc is a refusal of the container's memory limit, saying why. */
static void refused_memory(const char *device, int rc, const struct nvt_admit_why *w)
{
	switch (rc) {
	case NVT_ADMIT_MEM_NO_DEVICE:
		cli_errx("%s: the container's %s=%.40s names no memory device: a container does not "
			 "choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, w->value, NVT_ENV_MEM);
	case NVT_ADMIT_OTHER_MEM:
		cli_errx("%s: the container was given another memory limit too (%s=%s): give one",
			 device, NVT_ENV_MEM, w->value);
	case NVT_ADMIT_MEM_NO_HOOK:
		cli_errx("%s: the container's %s is %s, but it was given no device %s: a container "
			 "does not choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, w->value, w->device, NVT_ENV_MEM);
	case NVT_ADMIT_MEM_OTHER_GPU:
		cli_errx("%s: the container's memory limit %s=%s is on a GPU this device does not give "
			 "it: give a memory device of one of its GPUs, or mem=SIZE for each",
			 device, NVT_ENV_MEM, w->value);
	case NVT_ADMIT_MEM_TWICE:
		cli_errx("%s: the container's %s is set twice, to different values: a container does "
			 "not choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, NVT_ENV_MEM);
	}
}

/* Ends the hook, saying why the container may not start (rc: enum nvt_admit_rc, w its names). */
static void refused(const char *device, int rc, const struct nvt_admit_why *w)
{
	refused_memory(device, rc, w);
	switch (rc) {
	case NVT_ADMIT_MALFORMED:
		cli_errx("--cdi-hook: the container's %s is malformed or too long", w->name);
	case NVT_ADMIT_UNMAPPED:
		cli_errx("%s: the container's user (uid %lu) has no uid outside its user namespace",
			 device, (unsigned long)w->uid);
	case NVT_ADMIT_MAPPED:
		cli_errx("%s: the container runs in a user namespace that maps user ids (its uid %lu "
			 "is uid %lu outside): nvtaskset cannot trust its tasks' control segments, so "
			 "claims would not count them, nor could nvtaskset list or move them. Run it "
			 "without --userns or --uidmap (as root), or rootless with --userns=keep-id and "
			 "as your own user",
			 device, (unsigned long)w->uid, (unsigned long)w->outside);
	case NVT_ADMIT_RUNDIR:
		cli_errx("%s: the container's %s is not the spec's %s: a container does not choose its "
			 "run directory (give no -e %s)",
			 device, NVT_ENV_RUNDIR, NVT_CONTAINER_RUNDIR, NVT_ENV_RUNDIR);
	case NVT_ADMIT_MPS_SERVER:
		cli_errx("%s: the container sets %s: a container is no MPS server of nvtaskset's "
			 "(give no -e %s)",
			 device, NVT_ENV_MPS_SERVER, NVT_ENV_MPS_SERVER);
	case NVT_ADMIT_NO_CDI_ENV:
		cli_errx("%s: the container's environment lacks the device's %s (its config.json has "
			 "no process, or the device's environment was not applied): give the device "
			 "through CDI (--device %s)",
			 device, NVT_ENV_CDI, device);
	case NVT_ADMIT_OTHER_PARTITION:
		cli_errx("%s: the container was given another partition device too (%s): give one",
			 device, w->device);
	case NVT_ADMIT_PRIO_MALFORMED:
		cli_errx("%s: the container's %s=%s is malformed", device, NVT_ENV_PRIORITY, w->value);
	case NVT_ADMIT_OTHER_PRIORITY:
		if (w->device[0])
			cli_errx("%s: the container was given another priority device too (%s): give one",
				 device, w->device);
		cli_errx("%s: the container was given another priority too (%s=%s): give one", device,
			 NVT_ENV_PRIORITY, w->value);
	case NVT_ADMIT_PRIO_NO_DEVICE:
		cli_errx("%s: the container's %s=%s names no priority device", device, NVT_ENV_PRIORITY,
			 w->value);
	case NVT_ADMIT_PRIO_NOT_ITS:
		cli_errx("%s: the container's %s is %s, not the device %s's (%s): a container does not "
			 "choose its priority (give the device, not -e %s)",
			 device, NVT_ENV_PRIORITY, w->value, w->device, w->expected, NVT_ENV_PRIORITY);
	case NVT_ADMIT_PRIO_NO_HOOK:
		cli_errx("%s: the container's %s is %s, but it was given no device %s: a container "
			 "does not choose its priority (give the device, not -e %s)",
			 device, NVT_ENV_PRIORITY, nvt_prio_name(w->prio), w->device, NVT_ENV_PRIORITY);
	case NVT_ADMIT_PRIO_TWICE:
		cli_errx("%s: the container's %s is set twice, to different values: a container "
			 "does not choose its priority (give the device, not -e %s)",
			 device, NVT_ENV_PRIORITY, NVT_ENV_PRIORITY);
	case NVT_ADMIT_NO_GPU:
		cli_errx("%s: the hook's %s names no GPU: write the spec again (nvtaskset --cdi)",
			 device, NVT_ENV_PARTITION);
	case NVT_ADMIT_PARTITION:
		cli_errx("%s: the container's %s is %s: a container does not choose its partition "
			 "(give no -e %s)",
			 device, NVT_ENV_PARTITION, w->value, NVT_ENV_PARTITION);
	case NVT_ADMIT_LEVEL_PIPE:
		cli_errx("%s: the hook's %s (%s) is not the MPS pipe directory of the device's "
			 "priority: write the spec again (nvtaskset --cdi --with-mps)",
			 device, NVT_ENV_MPS_PIPE_DIR, w->value);
	case NVT_ADMIT_MPS_PIPE:
		cli_errx("%s: the container's %s is not the spec's %s: a container does not choose "
			 "its MPS pipe directory (give no -e %s)",
			 device, NVT_ENV_MPS_PIPE_DIR, w->value, NVT_ENV_MPS_PIPE_DIR);
	}
	cli_errx("%s: the container may not start (%d)", device, rc);
}

/* The container's user, uid inside, must be the same uid outside (nvt_admit_users); *rootless
 * when the hook runs in a user namespace that maps uids (a rootless runtime's). */
static void check_users(const char *device, pid_t pid, uint32_t uid, int *rootless)
{
	char map[MAP_MAX], own[MAP_MAX];
	struct nvt_admit_why w;
	int same, rc;

	read_map(0, own, sizeof(own));
	same = same_user_namespace(pid);
	if (!same)
		read_map(pid, map, sizeof(map));
	rc = nvt_admit_users(own, strlen(own), same ? NULL : map, same ? 0 : strlen(map), uid,
			     rootless, &w);
	if (rc)
		refused(device, rc, &w);
}

/* What the poststop hook finds of container id's directory: whether it may go. */
enum recorded { RECORDED_GONE, RECORDED_RUNS, RECORDED_UNKNOWN };

/* Whether the first process that container id's directory records (its pid in *init) ended, as
 * the poststop hook of the container stopped finds it (nvt_seg_container_gone; a directory that
 * records none, or is not listed, is that container's). One whose process runs is another
 * container's of that id: a runtime of another state directory, or containerd's other
 * namespace, may give one the same id. */
static enum recorded recorded_gone(const char *id, pid_t *init)
{
	struct nvt_seg_container *v;
	char bad_name[NVT_CONTAINER_ID_MAX + 1], gone = 1;
	int bad, n = nvt_seg_container_list(nvt_rundir(), &v, &bad, bad_name, sizeof(bad_name));
	enum recorded rc = RECORDED_GONE;

	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].id, id) && v[i].init) {
			*init = v[i].init;
			if (nvt_seg_container_gone(&v[i], 1, &gone))
				rc = RECORDED_UNKNOWN;
			else if (!gone)
				rc = RECORDED_RUNS;
			break;
		}
	free(v);
	return rc;
}

/* Removes the directory of container id, stopped, unless it is another's (recorded_gone). */
static void remove_own(const char *id)
{
	pid_t init = 0;
	enum recorded rc = recorded_gone(id, &init);

	if (rc == RECORDED_RUNS)
		warnx("warning: left %s/%s/%s: its first process, pid %ld, runs (another container of "
		      "that id)",
		      nvt_rundir(), NVT_CONTAINERS_DIR, id, (long)init);
	else if (rc == RECORDED_UNKNOWN)
		warnx("warning: left %s/%s/%s: cannot tell whether its first process, pid %ld, ended",
		      nvt_rundir(), NVT_CONTAINERS_DIR, id, (long)init);
	else if (nvt_seg_container_remove(nvt_rundir(), id) && errno != ENOENT)
		warnx("warning: cannot remove all of %s/%s/%s", nvt_rundir(), NVT_CONTAINERS_DIR, id);
}

/* The poststop hook: the container's run directory goes (its processes are gone), and so do
 * the directories of other containers gone whose poststop hook never ran (nvt_seg_container_tidy)
 * and the segments of other processes gone. */
static int poststop(void)
{
	struct nvt_oci_state state;
	char own[MAP_MAX], why[256], *text;
	pid_t *pids;
	size_t len;
	int n;

	/* Only root's look may remove every user's; a rootless runtime's sees few. */
	if (geteuid() != 0 || nvt_proc_uid_map(0, own, sizeof(own)) ||
	    !nvt_uid_map_is_identity(own, strlen(own)))
		return EXIT_SUCCESS;
	text = read_all(STDIN_FILENO, STATE_MAX, &len, "the runtime's state");
	if (nvt_oci_state_parse(text, len, &state, why, sizeof(why)) == 0 && nvt_seg_container_id_valid(state.id))
		remove_own(state.id);
	free(text);
	nvt_seg_container_tidy(nvt_rundir());
	n = nvt_seg_tasks(nvt_rundir(), 1, &pids);
	if (n >= 0)
		free(pids);
	return EXIT_SUCCESS;
}

/* The PID namespace of process pid (its inode). */
static uint64_t pidns_of(const char *device, pid_t pid)
{
	uint64_t ino;

	if (nvt_proc_inode(pid, "ns/pid", NULL, &ino))
		cli_err("%s: cannot read /proc/%ld/ns/pid", device, (long)pid);
	return ino;
}

/*
 * Root's runtime: the container's run directory of its own (segcontainer.c), made
 * for container state->id with the PID namespace of its process, its path
 * into dir. The container sees it alone (nvt_task_container_bind): what its
 * root writes there names its own processes only, and it can write nothing
 * else of the host's run directory.
 */
static void own_run_directory(const char *device, const struct nvt_oci_state *state, char *dir,
			      size_t size)
{
	struct nvt_seg_container ctr;
	char why[512];

	memset(&ctr, 0, sizeof(ctr));
	if (!nvt_seg_container_id_valid(state->id))
		cli_errx("%s: the container's id (%.40s) is no name for a directory of its own: 1 to %d of "
			 "A-Z, a-z, 0-9, '_', '.' and '-', not starting with '.'",
			 device, state->id, NVT_CONTAINER_ID_MAX);
	snprintf(ctr.id, sizeof(ctr.id), "%s", state->id);
	ctr.pidns = pidns_of(device, (pid_t)state->pid);
	/* Its first process: the container is stopped once it ended (nvt_seg_container_gone). */
	ctr.init = (pid_t)state->pid;
	if (nvt_proc_start_time(ctr.init, &ctr.init_start))
		cli_err("%s: cannot read the start time of the container's process %ld", device,
			(long)ctr.init);
	if (ctr.pidns == pidns_of(device, getpid()))
		cli_errx("%s: the container shares the host's PID namespace (--pid=host): its tasks' "
			 "control segments could not be told from the host's. Run it with a PID "
			 "namespace of its own",
			 device);
	/* What containers gone left (their poststop hooks never ran) goes first: a full run
	 * directory keeps no container from starting for long. */
	nvt_seg_container_tidy(nvt_rundir());
	if (nvt_seg_container_make(nvt_rundir(), &ctr, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	if (nvt_seg_container_base(dir, size, nvt_rundir(), ctr.id))
		cli_errx("%s: %s: path too long", device, nvt_rundir());
}

/*
 * Makes the segment of c's process (out: what it holds) and, for root's runtime (a real
 * one's), the container's own run directory, bound at its NVT_CONTAINER_RUNDIR, which holds
 * it. (A hook of another user's, the tests' stand-in runtime's, is that user's: her
 * container's segments lie in her run directory, which only she writes.) Ends the hook,
 * saying why, if it cannot.
 */
static void give_segment(const char *device, const struct nvt_oci_state *state, const char *config,
			 size_t config_len, struct nvt_task_container *c, struct nvt_slot_view *out)
{
	static char own_dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32], rootfs[NVT_OCI_PATH_MAX];
	char why[1024];
	int rc, already, unbound;

	if (geteuid() == 0) {
		if (nvt_oci_config_root(config, config_len, state->bundle, rootfs, sizeof(rootfs)))
			cli_errx("%s: the container's config.json names no root file system (root.path)",
				 device);
		own_run_directory(device, state, own_dir, sizeof(own_dir));
		c->seg_base = own_dir;
	}
	rc = nvt_task_prepare_container(nvt_rundir(), c, out, &already, why, sizeof(why));
	unbound = !rc && c->seg_base &&
		  nvt_task_container_bind(c->pid, rootfs, own_dir, NVT_CONTAINER_RUNDIR, why, sizeof(why));
	if ((rc || unbound) && c->seg_base)
		nvt_seg_container_remove(nvt_rundir(), state->id);
	if (unbound)
		cli_errx("%s: cannot give the container its run directory: %s", device, why);
	if (rc == NVT_TASK_ECLAIM)
		cli_errx("%s: the container does not start: %s", device, why);
	if (rc)
		cli_errx("%s: cannot make the control segment of the container's process %ld: %s",
			 device, state->pid, why);
}

/*
 * A time-sliced priority device (LEVEL-slice, or LEVEL alone in the container) of a spec with
 * MPS (the hook's CUDA_MPS_PIPE_DIRECTORY, the
 * level daemon's; none: the container runs outside MPS, in a context of its own): the
 * container's programs must be clients of their level's MPS server, whose channel groups get
 * the level's timeslice, never of the shared one. Its daemon must run (--cdi --with-mps starts
 * it); root's hook binds its pipe directory over the container's CUDA_MPS_PIPE_DIRECTORY, the
 * spec's shared one (nvt_admit_mps; a variable two devices set could end either way).
 */
static void level_mps(const char *device, const struct nvt_cdi_device *d,
		      const struct nvt_oci_state *state, const char *config, size_t len)
{
	static char target[NVT_OCI_PATH_MAX], rootfs[NVT_OCI_PATH_MAX];
	const char *level_pipe = getenv(NVT_ENV_MPS_PIPE_DIR);
	struct nvt_admit_why w;
	char why[1024];
	int rc;

	if (!level_pipe || !*level_pipe)
		return;
	rc = nvt_admit_mps(config, len, level_pipe, nvt_prio_name(d->prio), target, sizeof(target), &w);
	if (rc)
		refused(device, rc, &w);
	if (geteuid() == 0 &&
	    nvt_oci_config_root(config, len, state->bundle, rootfs, sizeof(rootfs)))
		cli_errx("%s: the container's config.json names no root file system (root.path)", device);
	if (nvt_task_container_mps((pid_t)state->pid, geteuid() == 0 ? rootfs : NULL,
				   nvt_prio_name(d->prio), target, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
}

int nvt_cmd_cdi_hook(int argc, char **argv)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS], out[NVT_MAX_GPUS];
	struct nvt_task_container c = {0};
	struct nvt_cdi_device d;
	struct nvt_oci_state state;
	struct nvt_slot_prio prio = {0};
	struct nvt_admit_why w;
	char why[1024], *text, *config, *slash;
	const char *device;
	size_t len, config_len;
	int rootless, has_prio, rc, rc2, n_gpus;

	if (argc != 2)
		bad_usage("--cdi-hook takes VENDOR/CLASS=NAME or poststop (the CDI spec runs it)");
	device = argv[1];
	if (!strcmp(device, "poststop"))
		return poststop();
	slash = strchr(device, '/');
	if (!slash || nvt_cdi_device_parse(slash + 1, &d))
		bad_usage("--cdi-hook takes VENDOR/CLASS=NAME or poststop (the CDI spec runs it)");
	text = read_all(STDIN_FILENO, STATE_MAX, &len, "the runtime's state");
	if (nvt_oci_state_parse(text, len, &state, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	free(text);
	if (state.pid <= 0)
		cli_errx("%s: the runtime's state names no process: run this hook as createRuntime",
			 device);
	config = read_config(state.bundle, &config_len);
	if (nvt_oci_config_check(config, config_len, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	if (nvt_oci_config_user(config, config_len, &c.uid, &c.gid, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	check_users(device, (pid_t)state.pid, c.uid, &rootless);
	rc = nvt_admit_config(config, config_len, device, &d, &prio, &has_prio, &w);
	if (rc < 0)
		refused(device, rc, &w);
	c.prio = has_prio ? &prio : NULL;
	/* (the device's GPUs, for a limit on one of them; nvt_admit_partition checks them) */
	n_gpus = getenv(NVT_ENV_PARTITION)
			 ? nvt_gpusel_env_parse(getenv(NVT_ENV_PARTITION), parts, NVT_MAX_GPUS)
			 : 0;
	if ((rc2 = nvt_admit_memory(config, config_len, device, &d, parts, n_gpus > 0 ? n_gpus : 0,
				    &c.mem, &w)))
		refused(device, rc2, &w);
	/* (a priority device alone is time-sliced too: its yield=auto, resolved) */
	if (d.cls == NVT_CDI_PRIORITY && (d.slice || (has_prio && (prio.yield & NVT_YIELD_SLICE))))
		level_mps(device, &d, &state, config, config_len);
	if (rc == NVT_ADMIT_BESIDE)
		return EXIT_SUCCESS; /* a priority beside a partition device: that one's hook */
	/*
	 * A rootless runtime's hook runs in its user namespace, where other users'
	 * run directories (and root's /run/nvtaskset) are nobody's: it can neither
	 * claim against their tasks nor make the container's segment, and the
	 * processes podman exec starts would find no run directory they trust.
	 */
	if (rootless)
		cli_errx("%s: the container runtime runs rootless (in a user namespace that maps user "
			 "ids): its hook cannot see other users' tasks or make the container's control "
			 "segment, and the container's program would not be listed, moved or counted "
			 "by other tasks. Run the container with root's podman",
			 device);
	/* Root's runtime: the container's root can write root's files there. */
	if (geteuid() == 0 && nvt_task_cdi_rundir_check(nvt_rundir(), why, sizeof(why)))
		cli_errx("%s: %s. Run nvtaskset --cdi again (as root): it mounts one there", device, why);
	rc = nvt_admit_partition(config, config_len, &d, getenv(NVT_ENV_PARTITION), parts, &c.n_parts,
				 &w);
	if (rc)
		refused(device, rc, &w);
	c.parts = parts;
	c.count = d.cls == NVT_CDI_TPCS ? d.count : 0;
	c.pid = (pid_t)state.pid;
	c.timeout_ms = claim_timeout_ms();
	give_segment(device, &state, config, config_len, &c, out);
	free(config);
	return EXIT_SUCCESS;
}
