/*
 * cdi.c - nvtaskset --cdi: write the CDI spec of the machine's GPUs, so that
 * `podman run --device nvtaskset/gpc=0-3 IMAGE CMD` runs CMD partitioned
 * (docs/containers.md). One file per class (a CDI spec names one kind):
 * VENDOR-gpc.json, VENDOR-tpcs.json, VENDOR-priority.json. What each device
 * gives a container is chosen in src/task/container.c; this file lists the
 * devices and writes the JSON. The hooks run nvtaskset --cdi-hook (cdihook.c).
 * Over 500 lines on purpose: the one sub-command that sets up what every
 * container shares (the spec, the run directory's tmpfs, the MPS
 * daemons), in the order --cdi does it; the choices are src/task's.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "hint.h"
#include "core/cdi.h"
#include "core/gpusel.h"
#include "core/mpslog.h"
#include "core/text.h"
#include "os/rootpath.h"
#include "os/sysutil.h"
#include "mps/mps.h"
#include "task/container.h"

#define CDI_DEFAULT_DIR "/var/run/cdi"

/* What every device of the spec shares. */
struct spec {
	const char *vendor;
	char exe[PATH_MAX];    /* this command, which the hooks run */
	char base[PATH_MAX];   /* the run directory containers mount */
	char shim[PATH_MAX];
	char libdir[PATH_MAX]; /* the shim's directory, mounted at the same path */
	char preload[PATH_MAX]; /* the file mounted over the container's /etc/ld.so.preload */
	const char *pipe_dir;  /* --with-mps: MPS's pipe directory (shared_pipe); NULL: no MPS */
	char shared_pipe[PATH_MAX];
	/* --with-mps: each level's MPS daemon's pipe directory (a priority device's hook binds it
	 * over the container's pipe_dir where the container is time-sliced) */
	char level_pipe[NVT_PRIO_LEVELS][PATH_MAX];
	int n_gpus;
	struct nvt_slot_view gpu[NVT_MACHINE_GPUS]; /* each GPU unpartitioned: its uuid and topology */
	uint64_t least_mem;    /* the memory of the GPU that has least, bytes (0: not known) */
	uint64_t mem[NVT_MACHINE_GPUS]; /* each GPU's memory, bytes (0: not known) */
	char timeout[16];      /* NVTASKSET_CLAIM_TIMEOUT for the hooks, "" for the default */
};

/* "NAME=VALUE" as a JSON string. */
static struct json_object *json_var(const char *name, const char *value)
{
	struct json_object *v;
	char *var;

	if (asprintf(&var, "%s=%s", name, value) < 0)
		cli_err("out of memory");
	v = jsonout_text(var);
	free(var);
	return v;
}

/* "env":[...] of the variables e sets (it unsets none), added to edits. */
static void add_env(struct json_object *edits, const struct nvt_task_env *e)
{
	struct json_object *env = jsonout_array();

	jsonout_add(edits, "env", env);
	for (int i = 0; i < e->n; i++)
		if (e->vars[i].value)
			jsonout_append(env, json_var(e->vars[i].name, e->vars[i].value));
}

/* A hook that runs nvtaskset --cdi-hook WORD; gpus (n, NULL: none) go in its
 * NVTASKSET_PARTITION: the GPUs a claim picks on. */
static struct json_object *json_hook(const struct spec *s, const char *stage, const char *word,
				     const struct nvt_slot_view *gpus, int n, const char *level_pipe)
{
	static char record[NVT_PARTENV_TEXT_MAX];
	struct json_object *hook = jsonout_object(), *args = jsonout_array(), *env = jsonout_array();

	jsonout_add_text(hook, "hookName", stage);
	jsonout_add_text(hook, "path", s->exe);
	jsonout_add(hook, "args", args);
	jsonout_append(args, jsonout_text("nvtaskset"));
	jsonout_append(args, jsonout_text("--cdi-hook"));
	jsonout_append(args, jsonout_text(word));
	jsonout_add(hook, "env", env);
	jsonout_append(env, json_var(NVT_ENV_RUNDIR, s->base));
	if (s->timeout[0])
		jsonout_append(env, json_var(NVT_ENV_CLAIM_TIMEOUT, s->timeout));
	if (level_pipe)
		jsonout_append(env, json_var(NVT_ENV_MPS_PIPE_DIR, level_pipe));
	if (gpus) {
		if (nvt_gpusel_env_format(gpus, n, record, sizeof(record)) < 0)
			cli_errx("internal error: cannot format the GPUs of %s", word);
		jsonout_append(env, json_var(NVT_ENV_PARTITION, record));
	}
	return hook;
}

/* A mount of host at container, with options ("ro,nosuid": its words, comma-separated),
 * appended to mounts. */
static void add_mount(struct json_object *mounts, const char *host, const char *container,
		      const char *options)
{
	struct json_object *mount = jsonout_object(), *words = jsonout_array();
	char list[64], *word, *next = list;

	jsonout_append(mounts, mount);
	jsonout_add_text(mount, "hostPath", host);
	jsonout_add_text(mount, "containerPath", container);
	jsonout_add(mount, "options", words);
	snprintf(list, sizeof(list), "%s", options);
	while ((word = strsep(&next, ",")))
		jsonout_append(words, jsonout_text(word));
}

/* The spec's own edits: the shim, the run directory, MPS, and the poststop hook. */
static struct json_object *json_common(const struct spec *s)
{
	static struct nvt_task_env env;
	struct json_object *edits = jsonout_object(), *mounts = jsonout_array(), *hooks;

	nvt_task_cdi_common_env(s->pipe_dir, &env);
	add_env(edits, &env);
	jsonout_add(edits, "mounts", mounts);
	add_mount(mounts, s->libdir, s->libdir, "ro,nosuid,nodev,rbind");
	add_mount(mounts, s->preload, "/etc/ld.so.preload", "ro,nosuid,nodev,bind");
	/* Read-only: the runtime makes the mount point, and each device's hook binds the
	 * container's own run directory over it (cdihook.c): the container writes nothing else of
	 * base, nor sees it. */
	add_mount(mounts, s->base, NVT_CONTAINER_RUNDIR, "ro,nosuid,nodev,noexec,rbind");
	if (s->pipe_dir) {
		/* MPS's clients share the daemon's shared memory: the host's /dev/shm,
		 * as --ipc=host gives it (docs/containers.md, "MPS"). */
		add_mount(mounts, s->pipe_dir, s->pipe_dir, "rw,nosuid,nodev,rbind");
		add_mount(mounts, "/dev/shm", "/dev/shm", "rw,nosuid,nodev,rbind");
	}
	hooks = jsonout_array();
	jsonout_add(edits, "hooks", hooks);
	jsonout_append(hooks, json_hook(s, "poststop", "poststop", NULL, 0, NULL));
	return edits;
}

/* One device, appended to devices: its name, its variables and its createRuntime hook. */
static void add_device(struct json_object *devices, const struct spec *s,
		       const struct nvt_cdi_device *d, const struct nvt_slot_view *parts, int n)
{
	static struct nvt_task_env env;
	char name[NVT_CDI_DEVICE_TEXT_MAX], word[NVT_CDI_VENDOR_MAX + NVT_CDI_DEVICE_TEXT_MAX + 8];
	char device[NVT_CDI_DEVICE_TEXT_MAX], why[256];
	struct json_object *dev = jsonout_object(), *edits = jsonout_object(), *hooks = jsonout_array();

	if (nvt_cdi_name_format(d, name, sizeof(name)) < 0 ||
	    nvt_cdi_device_format(d, device, sizeof(device)) < 0)
		cli_errx("internal error: cannot name a device");
	snprintf(word, sizeof(word), "%s/%s", s->vendor, device);
	if (nvt_task_cdi_device_env(d, parts, n, &env, why, sizeof(why)))
		cli_errx("%s", why);
	jsonout_append(devices, dev);
	jsonout_add_text(dev, "name", name);
	jsonout_add(dev, "containerEdits", edits);
	add_env(edits, &env);
	jsonout_add(edits, "hooks", hooks);
	/* The GPUs a tpcs device claims on and a priority applies to; a gpc device's
	 * partition (the container's own variable is the container's to set). A priority
	 * device's hook is told its level's MPS pipe directory: a -slice device's container is
	 * time-sliced, and so is a LEVEL device's alone (its hook tells). */
	jsonout_append(hooks, json_hook(s, "createRuntime", word, parts, n,
					d->cls == NVT_CDI_PRIORITY && s->pipe_dir
						? s->level_pipe[d->prio]
						: NULL));
}

/* The GPUs a device of GPU gpu (-1: every GPU) is for, into out. Returns how many. */
static int gpus_of(const struct spec *s, int gpu, struct nvt_slot_view *out)
{
	if (gpu >= 0) {
		out[0] = s->gpu[gpu];
		return 1;
	}
	memcpy(out, s->gpu, sizeof(out[0]) * (size_t)s->n_gpus);
	return s->n_gpus;
}

/* Fewest GPCs (or TPCs, tpcs) among the GPUs of a device of GPU gpu. */
static unsigned smallest(const struct spec *s, int gpu, int tpcs)
{
	unsigned least = UINT_MAX;

	for (int g = 0; g < s->n_gpus; g++) {
		unsigned v = tpcs ? s->gpu[g].topo.n_tpcs : s->gpu[g].topo.n_gpcs;
		if ((gpu < 0 || g == gpu) && v < least)
			least = v;
	}
	return least == UINT_MAX ? 0 : least;
}

/* The devices of class cls for GPU gpu (-1: every GPU). Returns how many. */
static int add_devices(struct json_object *devices, const struct spec *s, int cls, int gpu)
{
	static struct nvt_slot_view parts[NVT_MACHINE_GPUS];
	struct nvt_cdi_device d = {.cls = cls, .gpu = gpu};
	int n = gpus_of(s, gpu, parts), count = 0;

	if (n > NVT_MAX_GPUS)
		return 0; /* more GPUs than a task has partitions on: per GPU only */
	if (cls == NVT_CDI_PRIORITY) {
		for (d.slice = 0; d.slice <= 1; d.slice++)
			for (d.prio = NVT_PRIO_HIGH; d.prio >= NVT_PRIO_LOW; d.prio--, count++)
				add_device(devices, s, &d, parts, n);
		return count;
	}
	if (cls == NVT_CDI_TPCS) {
		for (d.count = 1; d.count <= smallest(s, gpu, 1); d.count++, count++)
			add_device(devices, s, &d, parts, n);
		return count;
	}
	if (cls == NVT_CDI_MEM) {
		/* Whole GiB, up to what every GPU has (a limit is per GPU, on each of the task's),
		 * or a GPU's own. */
		uint64_t most = gpu >= 0 ? s->mem[gpu] : s->least_mem;
		for (d.mem_gib = 1; d.mem_gib <= most >> 30 && d.mem_gib <= NVT_CDI_MEM_GIB_MAX;
		     d.mem_gib++, count++)
			add_device(devices, s, &d, parts, n);
		return count;
	}
	for (d.first = 0; d.first < smallest(s, gpu, 0); d.first++)
		for (d.last = d.first; d.last < smallest(s, gpu, 0); d.last++, count++) {
			struct nvt_tpcset gpcs;
			nvt_set_clear(&gpcs);
			for (unsigned c = d.first; c <= d.last; c++)
				nvt_set_add(&gpcs, c);
			for (int i = 0; i < n; i++) {
				parts[i].state = NVT_SLOT_SET;
				if (nvt_topo_gpc_tpcs(&parts[i].topo, &gpcs, &parts[i].tpcs))
					cli_errx("internal error: GPCs %u-%u", d.first, d.last);
			}
			add_device(devices, s, &d, parts, n);
		}
	return count;
}

/* Writes class cls's spec to dir atomically (a new file renamed over the old). */
static void write_spec(const struct spec *s, const char *dir, int cls)
{
	char path[PATH_MAX], tmp[PATH_MAX], kind[NVT_CDI_VENDOR_MAX + 16];
	struct json_object *spec, *devices;
	int fd, count = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s-%s.json", dir, s->vendor, nvt_cdi_class_name(cls)) >=
		    (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s-%s.json.XXXXXX", dir, s->vendor,
		     nvt_cdi_class_name(cls)) >= (int)sizeof(tmp))
		cli_errx("--cdi: %s: path too long", dir);
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) || !(f = fdopen(fd, "w")))
		cli_err("--cdi: cannot write in %s", dir);
	spec = jsonout_object();
	snprintf(kind, sizeof(kind), "%s/%s", s->vendor, nvt_cdi_class_name(cls));
	jsonout_add_text(spec, "cdiVersion", "0.5.0");
	jsonout_add_text(spec, "kind", kind);
	jsonout_add(spec, "containerEdits", json_common(s));
	devices = jsonout_array();
	jsonout_add(spec, "devices", devices);
	/* Every GPU's devices, then each GPU's (a priority is the task's, on every GPU). */
	for (int gpu = -1; gpu < (cls == NVT_CDI_PRIORITY ? 0 : s->n_gpus); gpu++)
		count += add_devices(devices, s, cls, gpu);
	jsonout_print(f, spec);
	if (count == 0) /* (a priority device is always written) */
		warnx("warning: %s has no devices: %s", path,
		      cls == NVT_CDI_MEM ? "the GPUs' memory is not known" : "the GPUs' GPCs are not known");
	if (fflush(f) || ferror(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path)) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		cli_err("--cdi: cannot write %s", path);
	}
	printf("%s: %d devices\n", path, count);
}

/* Writes DIR/VENDOR.ld.so.preload, which the spec mounts over the container's
 * /etc/ld.so.preload (not a spec: CDI reads only *.json and *.yaml). */
static void write_preload(struct spec *s, const char *dir)
{
	char text[PATH_MAX + 2], tmp[PATH_MAX];
	int fd, n = nvt_task_cdi_preload(s->shim, text, sizeof(text));

	if (n < 0)
		cli_errx("--cdi: the shim's path (%s) holds white space or ':', which the dynamic "
			 "loader splits at",
			 s->shim);
	if (snprintf(s->preload, sizeof(s->preload), "%s/%s.ld.so.preload", dir, s->vendor) >=
		    (int)sizeof(s->preload) ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", s->preload) >= (int)sizeof(tmp))
		cli_errx("--cdi: %s: path too long", dir);
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) || write(fd, text, (size_t)n) != n || fsync(fd) ||
	    close(fd) || rename(tmp, s->preload)) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		cli_err("--cdi: cannot write %s", s->preload);
	}
}

/* 1 if directory dir holds nothing but run directories (nvtaskset-UID, and what a squatter's
 * was renamed to), 0 if it holds anything else or cannot be read. */
static int only_run_directories(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	int only = d != NULL;

	while (only && (ent = readdir(d)))
		only = !strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..") ||
		       !strncmp(ent->d_name, NVT_USERDIR_PREFIX, strlen(NVT_USERDIR_PREFIX));
	if (d)
		closedir(d);
	return only;
}

/* The run directory on which this command mounted its tmpfs, and whether the command got to
 * its end: one that fails after the mount unmounts it (at exit), and leaves the machine as it
 * found it. */
static char mounted_here[PATH_MAX];
static int cdi_done;

static void unmount_if_failed(void)
{
	if (cdi_done || !mounted_here[0])
		return;
	if (nvt_fs_unmount(mounted_here))
		warn("--cdi: cannot unmount the tmpfs it mounted on %s", mounted_here);
	else
		warnx("--cdi: unmounted the tmpfs it mounted on %s", mounted_here);
}

/* Makes base a file system of its own that containers cannot leave programs in for the host
 * nor fill beyond it (nvt_task_cdi_rundir_mount): root mounts its tmpfs there, unless tasks
 * keep their segments there (the tmpfs would hide them); another user is warned. */
static void own_filesystem(const char *base)
{
	char why[512];
	pid_t *pids;
	int n, rc;

	if (nvt_task_cdi_rundir_check(base, why, sizeof(why)) == 0)
		return;
	if (geteuid() != 0) {
		warnx("warning: %s; only root can mount one there: run --cdi as root", why);
		return;
	}
	if (!only_run_directories(base))
		cli_errx("--cdi: %s holds other files than run directories: a tmpfs mounted there would "
			 "hide them. Give containers a directory of their own (%s)",
			 base, NVT_ENV_RUNDIR);
	n = nvt_seg_tasks(base, 1, &pids);
	if (n >= 0)
		free(pids);
	if (n > 0)
		cli_errx("--cdi: %d tasks keep their control segments in %s, which is not a file system "
			 "of its own: a tmpfs mounted there would hide them. Stop them, then run --cdi "
			 "again",
			 n, base);
	rc = nvt_task_cdi_rundir_mount(base, why, sizeof(why));
	if (rc < 0)
		cli_errx("--cdi: %s", why);
	if (rc == 1) {
		snprintf(mounted_here, sizeof(mounted_here), "%s", base);
		if (atexit(unmount_if_failed)) {
			nvt_fs_unmount(base);
			cli_errx("--cdi: cannot register the undoing of its mount on %s", base);
		}
	}
	printf("%s: a tmpfs of its own (nosuid,nodev,noexec,%s)\n", base, NVT_CDI_RUNDIR_OPTIONS);
}

/*
 * Root's --cdi mounts a tmpfs (mode 1777) on the run directory, and its hooks act there as
 * root: NVTASKSET_RUNDIR must be on a path that only root can change, as given and with its
 * links followed (s->base). Another user's link or directory on it (in /tmp, say) would have
 * the mount made where she points it: over a directory of root's, which every user could then
 * write in.
 */
static void check_roots_path(const char *given, const char *real)
{
	char why[PATH_MAX + 128], walked[PATH_MAX];

	if (geteuid() != 0)
		return;
	if (nvt_root_mount_point(given, walked, sizeof(walked), why, sizeof(why)))
		cli_errx("--cdi: the run directory %s is not on a path that only root can change: %s",
			 given, why);
	/* (the walk follows only root's links: it ends where realpath did, unless a link
	 * changed between the two) */
	if (strcmp(walked, real))
		cli_errx("--cdi: the run directory %s changed while it was checked (%s, then %s)",
			 given, real, walked);
}

/* The run directory containers mount: NVTASKSET_RUNDIR, or NVT_SHARED_RUNDIR, made if need be. */
static void choose_base(struct spec *s)
{
	const char *env = getenv(NVT_ENV_RUNDIR);
	struct stat st;
	pid_t *pids;
	int n;

	if (!env || !*env) {
		if (mkdir(NVT_SHARED_RUNDIR, 0700) && errno != EEXIST) {
			if (errno == EACCES || errno == EPERM)
				cli_errx("--cdi: cannot make %s, which every user's tasks and the "
					 "containers share: run nvtaskset --cdi as root",
					 NVT_SHARED_RUNDIR);
			cli_err("--cdi: cannot make %s", NVT_SHARED_RUNDIR);
		}
		/* (chmod: the umask may have taken bits; a directory someone else
		 * made in /run, which only root can write, is refused below) */
		if (chmod(NVT_SHARED_RUNDIR, NVT_SHARED_RUNDIR_MODE) && errno != EPERM)
			cli_err("--cdi: cannot set the mode of %s", NVT_SHARED_RUNDIR);
		if (strcmp(nvt_rundir(), NVT_SHARED_RUNDIR))
			cli_errx("--cdi: %s must be a directory of root's with mode %o",
				 NVT_SHARED_RUNDIR, NVT_SHARED_RUNDIR_MODE);
		/* Tasks started before it existed keep their segments in /dev/shm. */
		n = nvt_seg_tasks(NVT_DEFAULT_RUNDIR, 0, &pids);
		if (n > 0)
			warnx("warning: %d tasks started before %s existed keep their control "
			      "segments in %s: nvtaskset -l no longer lists them, and claims do not "
			      "count their TPCs; restart them",
			      n, NVT_SHARED_RUNDIR, NVT_DEFAULT_RUNDIR);
		if (n >= 0)
			free(pids);
	}
	if (!realpath(nvt_rundir(), s->base))
		cli_err("--cdi: %s", nvt_rundir());
	check_roots_path(nvt_rundir(), s->base);
	/* Containers must not get every program's shared memory. */
	if (!strcmp(s->base, NVT_DEFAULT_RUNDIR))
		cli_errx("--cdi: %s=%s would give containers all of %s: use a directory of its own "
			 "(unset it: %s)",
			 NVT_ENV_RUNDIR, env, NVT_DEFAULT_RUNDIR, NVT_SHARED_RUNDIR);
	own_filesystem(s->base);
	/* Processes that podman exec starts get no NVTASKSET_RUNDIR: they find
	 * the mount by the default's rule (nvt_rundir). */
	if (stat(s->base, &st) || st.st_uid != 0 || (st.st_mode & 07777) != NVT_SHARED_RUNDIR_MODE)
		warnx("warning: %s is not root's with mode %o: processes that podman exec starts in a "
		      "container will not use it, and run without the container's partition",
		      s->base, NVT_SHARED_RUNDIR_MODE);
}

/* The MPS control daemons this command started, each with its pid: one that fails after it
 * started them stops them (at exit), as it unmounts its tmpfs. A daemon that ran before it,
 * one that serves a task by then (a container's, of an earlier spec), or that is another
 * daemon by then, runs on. */
static struct {
	struct nvt_mps mps;
	pid_t pid;
} started_here[1 + NVT_PRIO_LEVELS];
static int n_started;

/* Stops started_here[i] if it is still the daemon this command started and serves no task. */
static void stop_started(int i)
{
	struct nvt_mps *mps = &started_here[i].mps;
	struct nvt_mps_client client;
	char why[1024], name[64] = "";
	int clients;

	if (mps->level[0])
		snprintf(name, sizeof(name), " of priority %s", mps->level);
	if (nvt_mps_daemon(mps) != started_here[i].pid)
		return;
	clients = nvt_mps_client_list(mps, &client, 1, NVT_MPS_TIMEOUT_MS);
	if (clients != 0)
		warnx("warning: --cdi: leaves the MPS control daemon%s it started running (pipe "
		      "directory %s): %s",
		      name, mps->pipe_dir,
		      clients > 0 ? "it serves tasks" : "it did not say which tasks it serves");
	else if (nvt_mps_stop(mps, -1, NVT_MPS_TIMEOUT_MS, why, sizeof(why)))
		warnx("--cdi: cannot stop the MPS control daemon%s it started: %s", name, why);
	else
		warnx("--cdi: stopped the MPS control daemon%s it started (pipe directory %s)", name,
		      mps->pipe_dir);
}

/* At exit: a --cdi that did not get to its end stops the daemons it started, the last first. */
static void stop_mps_if_failed(void)
{
	for (int i = n_started - 1; !cdi_done && i >= 0; i--)
		stop_started(i);
}

/* ensure_mps for --cdi: the daemon's pipe directory; one it started is noted in started_here. */
static const char *ensure_mps_noted(const struct nvt_slot_view *level)
{
	const struct nvt_mps *mps = ensure_mps_daemon(0, level, level ? 1 : 0);

	if (mps->started && n_started < (int)(sizeof(started_here) / sizeof(started_here[0]))) {
		started_here[n_started].mps = *mps;
		started_here[n_started++].pid = nvt_mps_daemon(mps);
	}
	return mps->pipe_dir;
}

/*
 * --with-mps: starts the host's MPS control daemon, and each priority level's (whose server
 * loads the shim: docs/priorities.md, "Preemption"), unless they run, and names their pipe
 * directories in s. A time-sliced device's hook finds its level's daemon running (it starts
 * none: a daemon started there would live in the runtime's cgroup, which ends with the
 * container).
 */
static void start_mps(struct spec *s)
{
	struct nvt_slot_view level;

	if (atexit(stop_mps_if_failed))
		cli_errx("--cdi: cannot register the stopping of the MPS daemons it starts");
	snprintf(s->shared_pipe, sizeof(s->shared_pipe), "%s", ensure_mps_noted(NULL));
	s->pipe_dir = s->shared_pipe;
	/* Each level's beside it, "-LEVEL" after it (root's are so anyway): a hook binds only
	 * over the shared one's mount (nvt_cdi_shared_pipe). */
	if (setenv(NVT_ENV_MPS_PIPE_DIR, s->shared_pipe, 1))
		cli_err("setenv");
	for (unsigned p = NVT_PRIO_LOW; p <= NVT_PRIO_HIGH; p++) {
		memset(&level, 0, sizeof(level));
		level.prio.prio = (uint8_t)p;
		level.prio.yield = NVT_YIELD_SLICE;
		snprintf(s->level_pipe[p], sizeof(s->level_pipe[p]), "%s", ensure_mps_noted(&level));
	}
}

/* The machine's GPUs, each unpartitioned with its topology (calibrated if need be). */
static void list_gpus(struct spec *s)
{
	const struct nvt_gpus *gpus = machine_gpus();

	s->n_gpus = gpus->n;
	s->least_mem = UINT64_MAX;
	for (int g = 0; g < gpus->n; g++) {
		struct nvt_gpu_topology t = load_gpu(g, 0);
		char why[256];
		uint64_t mem;
		memset(&s->gpu[g], 0, sizeof(s->gpu[g]));
		s->gpu[g].state = NVT_SLOT_UNSET;
		s->gpu[g].topo = t.topo;
		if (nvt_uuid_parse(gpus->id[g].uuid, s->gpu[g].uuid))
			cli_errx("GPU %d has a malformed UUID (%s)", g, gpus->id[g].uuid);
		mem = gpu_memory(s->gpu[g].uuid, why, sizeof(why));
		if (!mem)
			warnx("warning: GPU %d's memory is not known (%s): no memory devices", g, why);
		s->mem[g] = mem;
		s->least_mem = mem < s->least_mem ? mem : s->least_mem;
	}
	if (!s->n_gpus)
		cli_errx("--cdi: this machine has no GPU");
}

static void cdi_usage(FILE *out)
{
	fprintf(out,
		"Usage: nvtaskset --cdi [--cdi-dir DIR] [--vendor NAME] [--with-mps]\n\n"
		"Write the CDI spec of this machine's GPUs to DIR (default %s), so that\n"
		"`podman run --device nvtaskset/CLASS=NAME IMAGE CMD` runs CMD partitioned:\n"
		"  gpc=0-3, gpc=1:0-3    GPCs 0-3 of every GPU (of GPU 1), as -g 0-3\n"
		"  tpcs=16, tpcs=1:16    16 TPCs that no other task holds, claimed when the\n"
		"                        container starts, as -n 16 --exclude-running\n"
		"  priority=high         with a priority (high, normal or low), as --priority\n"
		"  priority=high-slice   time-sliced, as --priority high --yield slice\n"
		"  mem=16G, mem=1:16G    at most 16 GiB of GPU memory on each GPU (on GPU 1\n"
		"                        only), as --mem 16G\n"
		"--vendor names the devices NAME/CLASS=... (default nvtaskset); --with-mps\n"
		"makes containers MPS clients of the host's daemon (they get /dev/shm),\n"
		"time-sliced ones of their level's, and starts the daemons.\n"
		"Run it as root, again after --calibrate. See docs/containers.md.\n",
		CDI_DEFAULT_DIR);
	exit(out == stdout ? EXIT_SUCCESS : EXIT_FAILURE);
}

const struct option nvt_cdi_options[] = {
	{"cdi-dir", required_argument, NULL, 'd'}, {"vendor", required_argument, NULL, 'v'},
	{"with-mps", no_argument, NULL, 'm'},      {"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

int nvt_cmd_cdi(int argc, char **argv)
{
	static struct spec s;
	const char *dir = CDI_DEFAULT_DIR, *timeout = getenv(NVT_ENV_CLAIM_TIMEOUT);
	int c, with_mps = 0, help = 0;

	s.vendor = NVT_CDI_VENDOR;
	usage_names("nvtaskset --cdi");
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", nvt_cdi_options, NULL)) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'v')
			s.vendor = optarg;
		else if (c == 'm')
			with_mps = 1;
		else if (c == 'h')
			help = 1; /* once every option is known: an unknown one beside it is an error */
		else
			hint_sub_usage("--cdi takes [--cdi-dir DIR] [--vendor NAME] [--with-mps]", argc, argv,
				       nvt_cdi_options);
	}
	if (help)
		cdi_usage(stdout);
	if (optind != argc)
		bad_usage("--cdi takes no further arguments");
	if (!nvt_cdi_vendor_valid(s.vendor))
		bad_usage("--vendor takes a CDI vendor name: a letter, then letters, digits, '-', '_' "
			  "and '.', ending in a letter or digit");
	if (dir[0] != '/')
		bad_usage("--cdi-dir takes an absolute path");
	claim_timeout_ms(); /* a bad value says so now, not in every container's start */
	if (timeout && *timeout)
		snprintf(s.timeout, sizeof(s.timeout), "%s", timeout);
	if (nvt_proc_exe(0, s.exe, sizeof(s.exe)) < 0)
		cli_err("cannot find my own executable");
	if (find_lib_file("libnvtaskset.so", s.shim, sizeof(s.shim)) || !realpath(s.shim, s.libdir))
		cli_errx("cannot find the nvtaskset shim in %s", s.shim);
	snprintf(s.shim, sizeof(s.shim), "%s", s.libdir);
	*strrchr(s.libdir, '/') = '\0';
	choose_base(&s);
	list_gpus(&s);
	if (with_mps)
		start_mps(&s);
	if (nvt_mkdirs(dir, 0755))
		cli_err("--cdi: cannot make %s", dir);
	write_preload(&s, dir);
	for (int cls = 0; cls < NVT_CDI_CLASSES; cls++)
		write_spec(&s, dir, cls);
	printf("run directory mounted in containers: %s; e.g. podman run --device %s/tpcs=16 IMAGE "
	       "COMMAND\n",
	       s.base, s.vendor);
	cdi_done = 1;
	return EXIT_SUCCESS;
}
