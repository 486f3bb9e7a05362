/*
 * cdihook.c - nvtaskset --cdi-hook VENDOR/CLASS=NAME | poststop: what the OCI
 * runtime runs for a container given one of nvtaskset's CDI devices (cdi.c
 * writes them). As a createRuntime hook (the container's first process is
 * made and held before its exec; the hook runs beside the runtime, on the
 * host), it checks that the container's tasks can be trusted and that no
 * other device of ours replaced this one, and makes the control segment
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
#include "core/gpusel.h"
#include "core/prio.h"
#include "core/memlimit.h"
#include "os/sysutil.h"
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
	char path[64];
	struct stat mine, its;

	snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)pid);
	if (stat("/proc/self/ns/user", &mine) || stat(path, &its))
		cli_err("--cdi-hook: cannot read %s", path);
	return mine.st_dev == its.st_dev && mine.st_ino == its.st_ino;
}

/*
 * Ends the hook unless the container's user, uid inside, is the same uid
 * outside (the uid the host's nvtaskset and its other tasks see): in a user
 * namespace that maps uids its tasks' control segments would be one user's
 * inside and another's outside, and are trusted by neither. Sets *rootless
 * when the hook itself runs in such a namespace (a rootless runtime's).
 */
static void check_users(const char *device, pid_t pid, uint32_t uid, int *rootless)
{
	char map[MAP_MAX], own[MAP_MAX];
	uint32_t mid, outside;

	read_map(0, own, sizeof(own));
	*rootless = !nvt_uid_map_is_identity(own, strlen(own));
	/* In our own user namespace (a rootless runtime's, without one of its own
	 * for the container), pid's map says what ours says: its uid is ours. */
	if (same_user_namespace(pid)) {
		mid = uid;
	} else {
		read_map(pid, map, sizeof(map));
		if (nvt_uid_map_outside(map, strlen(map), uid, &mid))
			mid = UINT32_MAX;
	}
	if (mid == UINT32_MAX || (*rootless && nvt_uid_map_outside(own, strlen(own), mid, &outside)))
		cli_errx("%s: the container's user (uid %lu) has no uid outside its user namespace",
			 device, (unsigned long)uid);
	if (!*rootless)
		outside = mid;
	if (outside != uid)
		cli_errx("%s: the container runs in a user namespace that maps user ids (its uid %lu "
			 "is uid %lu outside): nvtaskset cannot trust its tasks' control segments, so "
			 "claims would not count them, nor could nvtaskset list or move them. Run it "
			 "without --userns or --uidmap (as root), or rootless with --userns=keep-id and "
			 "as your own user",
			 device, (unsigned long)uid, (unsigned long)outside);
}

/* The container's variable name (config.json's process.env) into buf; 0 if set, 1 if not. */
static int config_env(const char *config, size_t len, const char *name, char *buf, size_t size)
{
	int rc = nvt_oci_config_env(config, len, name, buf, size);

	if (rc < 0)
		cli_errx("--cdi-hook: the container's %s is malformed or too long", name);
	return rc;
}

/* 1 if the container's environment sets name to anything but value (NULL: at all), in any of
 * its variables of that name. */
static int config_env_other(const char *config, size_t len, const char *name, const char *value)
{
	int rc = nvt_oci_config_env_other(config, len, name, value);

	if (rc < 0)
		cli_errx("--cdi-hook: the container's %s is malformed or too long", name);
	return rc;
}

/* A partition record (NVT_ENV_PARTITION's form) into parts. Returns how many GPUs. */
static int records(const char *device, const char *text, const char *whose,
		   struct nvt_slot_view *parts)
{
	int n = text ? nvt_gpusel_env_parse(text, parts, NVT_MAX_GPUS) : -1;

	if (n < 1)
		cli_errx("%s: %s %s names no GPU: write the spec again (nvtaskset --cdi)", device, whose,
			 NVT_ENV_PARTITION);
	return n;
}

/* The poststop hook: the container's run directory goes (its processes are gone), and the
 * segments of other processes gone are removed. */
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
	if (nvt_oci_state_parse(text, len, &state, why, sizeof(why)) == 0 && nvt_seg_ctr_id_valid(state.id) &&
	    nvt_seg_ctr_remove(nvt_rundir(), state.id) && errno != ENOENT)
		warnx("warning: cannot remove all of %s/%s/%s", nvt_rundir(), NVT_CONTAINERS_DIR, state.id);
	free(text);
	n = nvt_seg_tasks(nvt_rundir(), 1, &pids);
	if (n >= 0)
		free(pids);
	return EXIT_SUCCESS;
}

/*
 * The container's priority (value, read into prio) must be a priority
 * device's as the spec gives it, words included, and beside a partition
 * device that priority device's hook must be among config.json's hooks (which
 * the container's variables cannot add). A variable the container set itself
 * (-e, a pod's env) would be its own priority and ways of yielding, root's for
 * a rootful container's root: every user's lower tasks would yield to it.
 */
static void priority_given(const char *device, const struct nvt_cdi_device *d, const char *config,
			   size_t len, const char *value, const struct nvt_slot_prio *prio)
{
	static struct nvt_task_env env;
	struct nvt_cdi_device pd = {.cls = NVT_CDI_PRIORITY, .gpu = -1, .prio = prio->prio};
	char name[NVT_CDI_DEVICE_TEXT_MAX], arg[NVT_CDI_VENDOR_MAX + NVT_CDI_DEVICE_TEXT_MAX + 8];
	char why[256];
	const char *slash = strchr(device, '/');

	if (nvt_cdi_device_format(&pd, name, sizeof(name)) < 0 ||
	    nvt_task_cdi_device_env(&pd, NULL, 0, &env, why, sizeof(why)))
		cli_errx("%s: the container's %s=%s names no priority device", device, NVT_ENV_PRIORITY,
			 value);
	snprintf(arg, sizeof(arg), "%.*s/%s", (int)(slash - device), device, name);
	if (strcmp(value, env.priority))
		cli_errx("%s: the container's %s is %s, not the device %s's (%s): a container does not "
			 "choose its priority (give the device, not -e %s)",
			 device, NVT_ENV_PRIORITY, value, arg, env.priority, NVT_ENV_PRIORITY);
	if (d->cls != NVT_CDI_PRIORITY && nvt_oci_config_has_hook(config, len, "createRuntime", arg) != 1)
		cli_errx("%s: the container's %s is %s, but it was given no device %s: a container "
			 "does not choose its priority (give the device, not -e %s)",
			 device, NVT_ENV_PRIORITY, nvt_prio_name(prio->prio), arg, NVT_ENV_PRIORITY);
}

/*
 * The container's GPU memory limit (NVT_ENV_MEM's value, bytes) must be a memory device's,
 * and that device's hook among config.json's hooks (the container's variables cannot add
 * one), as for a priority: a variable the container set itself (-e) is refused. Returns the
 * limit.
 */
static uint64_t memory_given(const char *device, const struct nvt_cdi_device *d,
			     const char *config, size_t len, const char *value)
{
	struct nvt_cdi_device md = {.cls = NVT_CDI_MEM, .gpu = -1};
	char name[NVT_CDI_DEVICE_TEXT_MAX], arg[NVT_CDI_VENDOR_MAX + NVT_CDI_DEVICE_TEXT_MAX + 8];
	const char *slash = strchr(device, '/');
	uint64_t bytes;

	if (nvt_memlimit_env_parse(value, &bytes) || bytes % (1ull << 30) ||
	    (bytes >> 30) > NVT_CDI_MEM_GIB_MAX)
		cli_errx("%s: the container's %s=%.40s names no memory device: a container does not "
			 "choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, value, NVT_ENV_MEM);
	md.mem_gib = (unsigned)(bytes >> 30);
	if (d->cls == NVT_CDI_MEM && md.mem_gib != d->mem_gib)
		cli_errx("%s: the container was given another memory limit too (%s=%s): give one",
			 device, NVT_ENV_MEM, value);
	if (nvt_cdi_device_format(&md, name, sizeof(name)) < 0)
		cli_errx("%s: internal error: cannot name a memory device", device);
	snprintf(arg, sizeof(arg), "%.*s/%s", (int)(slash - device), device, name);
	if (d->cls != NVT_CDI_MEM && nvt_oci_config_has_hook(config, len, "createRuntime", arg) != 1)
		cli_errx("%s: the container's %s is %s, but it was given no device %s: a container "
			 "does not choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, value, arg, NVT_ENV_MEM);
	if (config_env_other(config, len, NVT_ENV_MEM, value))
		cli_errx("%s: the container's %s is set twice, to different values: a container does "
			 "not choose its memory limit (give the device, not -e %s)",
			 device, NVT_ENV_MEM, NVT_ENV_MEM);
	return bytes;
}

/*
 * What the container asks for, from its config.json (its variables, as the
 * devices set them): the device named device (d; CLASS=NAME in mine) must be
 * the one that set NVT_ENV_CDI, or, for a priority, NVT_ENV_PRIORITY, for a
 * memory limit NVT_ENV_MEM; its priority into *prio (c->prio), its memory
 * limit into c->mem_limit. Returns 1 if this hook makes the segment (a
 * partition device's, or a priority's or memory limit's given without one),
 * else 0.
 */
static int container_asks(const char *device, const struct nvt_cdi_device *d, const char *mine,
			  const char *config, size_t len, struct nvt_task_container *c,
			  struct nvt_slot_prio *prio)
{
	static char value[NVT_PARTENV_TEXT_MAX];
	const char *slash = strchr(device, '/');
	struct nvt_cdi_device other;
	int has_partition;

	/* Another device of ours set these too (the last given wins): refuse both. */
	value[0] = '\0';
	has_partition = config_env(config, len, NVT_ENV_CDI, value, sizeof(value)) == 0;
	if (d->cls != NVT_CDI_PRIORITY && d->cls != NVT_CDI_MEM && strcmp(value, mine))
		cli_errx("%s: the container was given another partition device too (%.*s/%s): give "
			 "one",
			 device, (int)(slash - device), device,
			 nvt_cdi_device_parse(value, &other) ? "?" : value);
	c->prio = NULL;
	if (config_env(config, len, NVT_ENV_PRIORITY, value, sizeof(value)) == 0) {
		if (nvt_prio_env_parse(value, prio))
			cli_errx("%s: the container's %s=%s is malformed", device, NVT_ENV_PRIORITY, value);
		if (d->cls == NVT_CDI_PRIORITY && prio->prio != d->prio)
			cli_errx("%s: the container was given another priority too (%s): give one",
				 device, nvt_prio_name(prio->prio));
		priority_given(device, d, config, len, value, prio);
		if (config_env_other(config, len, NVT_ENV_PRIORITY, value))
			cli_errx("%s: the container's %s is set twice, to different values: a container "
				 "does not choose its priority (give the device, not -e %s)",
				 device, NVT_ENV_PRIORITY, NVT_ENV_PRIORITY);
		c->prio = prio;
	}
	c->mem_limit = 0;
	if (config_env(config, len, NVT_ENV_MEM, value, sizeof(value)) == 0)
		c->mem_limit = memory_given(device, d, config, len, value);
	return (d->cls != NVT_CDI_PRIORITY && d->cls != NVT_CDI_MEM) || !has_partition;
}

/* The GPUs of the container's segment, as the spec gave them to the hook (a
 * gpc device's partition, the GPUs of the others). A container's own
 * variables never choose them: whoever starts it may set any (-e, a pod's
 * env), so a container whose NVT_ENV_PARTITION is not its gpc device's is
 * refused (the program would read it), and other devices' containers may set
 * none (the program would take it for its partition). */
static void container_gpus(const char *device, const struct nvt_cdi_device *d, const char *config,
			   size_t len, struct nvt_task_container *c, struct nvt_slot_view *parts)
{
	static char value[NVT_PARTENV_TEXT_MAX];
	const char *given = getenv(NVT_ENV_PARTITION);
	int set;

	c->n_parts = records(device, given, "the hook's", parts);
	set = config_env(config, len, NVT_ENV_PARTITION, value, sizeof(value)) == 0;
	/* (every variable of the name: a runtime may hand the program any of them) */
	if (d->cls == NVT_CDI_GPC ? !set || config_env_other(config, len, NVT_ENV_PARTITION, given) : set)
		cli_errx("%s: the container's %s is %s: a container does not choose its partition "
			 "(give no -e %s)",
			 device, NVT_ENV_PARTITION,
			 !set ? "not set" : d->cls == NVT_CDI_GPC ? "not its device's" : "set", NVT_ENV_PARTITION);
	c->parts = parts;
	c->count = d->cls == NVT_CDI_TPCS ? d->count : 0;
}

/* The PID namespace of process pid (its inode). */
static uint64_t pidns_of(const char *device, pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld/ns/pid", (long)pid);
	if (stat(path, &st))
		cli_err("%s: cannot read %s", device, path);
	return (uint64_t)st.st_ino;
}

/*
 * Root's runtime: the container's run directory of its own (segctr.c), made
 * for container state->id with the PID namespace of its process, its path
 * into dir. The container sees it alone (nvt_task_container_bind): what its
 * root writes there names its own processes only, and it can write nothing
 * else of the host's run directory.
 */
static void own_run_directory(const char *device, const struct nvt_oci_state *state, char *dir,
			      size_t size)
{
	struct nvt_seg_ctr ctr;
	char why[512];

	memset(&ctr, 0, sizeof(ctr));
	if (!nvt_seg_ctr_id_valid(state->id))
		cli_errx("%s: the container's id (%.40s) is no name for a directory of its own: 1 to %d of "
			 "A-Z, a-z, 0-9, '_', '.' and '-', not starting with '.'",
			 device, state->id, NVT_CONTAINER_ID_MAX);
	snprintf(ctr.id, sizeof(ctr.id), "%s", state->id);
	ctr.pidns = pidns_of(device, (pid_t)state->pid);
	if (ctr.pidns == pidns_of(device, getpid()))
		cli_errx("%s: the container shares the host's PID namespace (--pid=host): its tasks' "
			 "control segments could not be told from the host's. Run it with a PID "
			 "namespace of its own",
			 device);
	if (nvt_seg_ctr_make(nvt_rundir(), &ctr, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	if (nvt_seg_ctr_base(dir, size, nvt_rundir(), ctr.id))
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
	unbound = !rc && c->seg_base && nvt_task_container_bind(c->pid, rootfs, own_dir, why, sizeof(why));
	if ((rc || unbound) && c->seg_base)
		nvt_seg_ctr_remove(nvt_rundir(), state->id);
	if (unbound)
		cli_errx("%s: cannot give the container its run directory: %s", device, why);
	if (rc == NVT_TASK_ECLAIM)
		cli_errx("%s: the container does not start: %s", device, why);
	if (rc)
		cli_errx("%s: cannot make the control segment of the container's process %ld: %s",
			 device, state->pid, why);
}

int nvt_cmd_cdi_hook(int argc, char **argv)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS], out[NVT_MAX_GPUS];
	struct nvt_task_container c = {0};
	struct nvt_cdi_device d;
	struct nvt_oci_state state;
	struct nvt_slot_prio prio;
	char why[1024], mine[NVT_CDI_DEVICE_TEXT_MAX], *text, *config, *slash;
	const char *device;
	size_t len, config_len;
	int rootless;

	if (argc != 2)
		bad_usage("--cdi-hook takes VENDOR/CLASS=NAME or poststop (the CDI spec runs it)");
	device = argv[1];
	if (!strcmp(device, "poststop"))
		return poststop();
	slash = strchr(device, '/');
	if (!slash || nvt_cdi_device_parse(slash + 1, &d))
		bad_usage("--cdi-hook takes VENDOR/CLASS=NAME or poststop (the CDI spec runs it)");
	snprintf(mine, sizeof(mine), "%s", slash + 1);
	text = read_all(STDIN_FILENO, STATE_MAX, &len, "the runtime's state");
	if (nvt_oci_state_parse(text, len, &state, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	free(text);
	if (state.pid <= 0)
		cli_errx("%s: the runtime's state names no process: run this hook as createRuntime",
			 device);
	config = read_config(state.bundle, &config_len);
	if (nvt_oci_config_user(config, config_len, &c.uid, &c.gid, why, sizeof(why)))
		cli_errx("%s: %s", device, why);
	check_users(device, (pid_t)state.pid, c.uid, &rootless);
	/* The spec's run directory, or the program's segment would lie where no claim
	 * looks: it would run on every TPC, and this device's claim would stay held. */
	if (config_env_other(config, config_len, NVT_ENV_RUNDIR, NVT_CONTAINER_RUNDIR))
		cli_errx("%s: the container's %s is not the spec's %s: a container does not choose its "
			 "run directory (give no -e %s)",
			 device, NVT_ENV_RUNDIR, NVT_CONTAINER_RUNDIR, NVT_ENV_RUNDIR);
	/* Nor whether it is a priority level's MPS server: the shim of a program given the variable
	 * makes no partition, and the container's would run on every TPC. */
	if (config_env_other(config, config_len, NVT_ENV_MPS_SERVER, NULL))
		cli_errx("%s: the container sets %s: a container is no MPS server of nvtaskset's "
			 "(give no -e %s)",
			 device, NVT_ENV_MPS_SERVER, NVT_ENV_MPS_SERVER);
	if (!container_asks(device, &d, mine, config, config_len, &c, &prio))
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
	container_gpus(device, &d, config, config_len, &c, parts);
	c.pid = (pid_t)state.pid;
	c.timeout_ms = claim_timeout_ms();
	give_segment(device, &state, config, config_len, &c, out);
	free(config);
	return EXIT_SUCCESS;
}
