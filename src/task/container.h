/*
 * container.h - a container's tasks, started through nvtaskset's CDI devices
 * (docs/containers.md): the environment each device gives a container, and
 * the control segment the device's hook makes for the container's first
 * process before its program runs (a partition fixed in the spec, or TPCs
 * claimed race-free as -n --exclude-running claims them). The command's
 * --cdi writes the spec and its --cdi-hook runs these steps; they choose,
 * the command parses and prints. Return codes: README.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TASK_CONTAINER_H
#define NVT_TASK_CONTAINER_H

#include <stddef.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/cdi.h"
#include "core/memlimit.h"
#include "core/segment.h"
#include "task.h"

/*
 * The variables every device of the spec gives a container (the spec's own
 * edits): the run directory mounted at NVT_CONTAINER_RUNDIR, and MPS's pipe
 * directory (pipe_dir, mounted at the same path; NULL: no MPS, /dev/null as
 * with --no-mps). The shim is not among them: the spec mounts a file over
 * the container's /etc/ld.so.preload (nvt_task_cdi_preload) that the
 * dynamic loader reads for every process of the container, those podman
 * exec starts too (they get none of the devices' variables), and the
 * image's own LD_PRELOAD stays as it is.
 */
void nvt_task_cdi_common_env(const char *pipe_dir, struct nvt_task_env *out);
/* The text of that file: the shim's path (mounted at the same path in the
 * container). Returns its length, or -1 if it does not fit or the path holds
 * a separator the loader splits at (white space, ':'). */
int nvt_task_cdi_preload(const char *shim, char *buf, size_t len);

/*
 * The variables device d gives a container, into out: NVT_ENV_CDI naming it
 * and, for a GPC device, its partition of each GPU of parts (n; state
 * NVT_SLOT_SET, the TPCs of its GPCs) in NVT_ENV_PARTITION (what processes
 * that `podman exec` starts take); for a priority, NVT_ENV_PRIORITY with the
 * default ways of yielding by partition (yield=auto: those a start gives, partitioned or on
 * the whole GPU, once the reader knows which: nvt_prio_resolve), or with slice for a
 * "-slice" device, and then the bridge's connections for a high one (nvt_task_env_self);
 * for a memory
 * device, NVT_ENV_MEM with its limit in bytes, on the GPU of parts (n 1)
 * alone for a device of one GPU (GPU-UUID=BYTES). Returns 0, or -1
 * if a value does not fit (why says).
 */
int nvt_task_cdi_device_env(const struct nvt_cdi_device *d, const struct nvt_slot_view *parts, int n,
			    struct nvt_task_env *out, char *why, size_t len);

/*
 * The run directory that CDI devices mount into containers (base, on the
 * host) is a file system of its own, a tmpfs of NVT_CDI_RUNDIR_SIZE made by
 * --cdi, mounted nosuid, nodev and noexec on the host: a container, which
 * writes its tasks' segments there, can leave nothing there that the host
 * runs (a setuid program of its root's), and can fill that file system only,
 * never the one it lies on (/run, which the host's services share).
 */
#define NVT_CDI_RUNDIR_OPTIONS "mode=1777,size=128m,nr_inodes=65536"
/* Checks base by that rule. Returns 0, or -1 with the reason in why. */
int nvt_task_cdi_rundir_check(const char *base, char *why, size_t len);
/* Mounts base's tmpfs (NVT_CDI_RUNDIR_OPTIONS) unless base passes the check
 * already. Returns 0 (it passed), 1 (mounted), or -1 with the reason in why. */
int nvt_task_cdi_rundir_mount(const char *base, char *why, size_t len);

/* What a device's hook gives the container's first process. */
struct nvt_task_container {
	pid_t pid;          /* the process, as the caller's /proc numbers it */
	uid_t uid;          /* the user its program runs as (config.json's process.user) */
	gid_t gid;
	/* Its GPUs (n_parts; uuid and topology of each) and, unless count is
	 * set, the partition of each (state NVT_SLOT_UNSET: all TPCs). */
	const struct nvt_slot_view *parts;
	int n_parts;
	unsigned count;     /* > 0: claim count TPCs on each GPU of parts instead */
	int timeout_ms;     /* how long a claim waits for other claimers */
	const struct nvt_slot_prio *prio; /* its priority, or NULL: none */
	struct nvt_mem_env mem; /* its GPU memory limit (on each GPU, or one); bytes 0: none */
	const char *seg_base; /* where its segment goes (its container's run directory); NULL: base */
};

/*
 * Makes c's process's control segment (nvt_seg_make_for) holding its
 * partitions: parts as given, or with c->count the TPCs claimed on each GPU
 * race-free against every task on the machine, every user's (nvt_reserve_claim,
 * held in the caller's own segment until the container's is made, then let
 * go). Each partition carries c->prio and its GPU's limit of c->mem. out (n_parts entries) gets what was
 * written. The caller is root (or c->uid) and no task (the command).
 * Returns enum nvt_task_rc: NVT_TASK_ECLAIM when no claim could be made
 * (why says how many TPCs are free), NVT_TASK_ESEG when the segment could
 * not be made (why says), NVT_TASK_OK also when a segment for the process
 * was there already (another device's hook made it): *already is then 1.
 */
int nvt_task_prepare_container(const char *base, const struct nvt_task_container *c,
			       struct nvt_slot_view *out, int *already, char *why, size_t len);

/*
 * Binds dir (a directory on the host: the container's run directory) at
 * target (NVT_CONTAINER_RUNDIR, say) of the container's root file system
 * rootfs, nosuid, nodev and noexec, in
 * the mount namespace of its process pid (which the runtime holds before
 * pivot_root: runc runs createRuntime hooks there). The caller's own
 * namespace is left as it is (a child process joins the container's). The
 * path is resolved inside rootfs (its image's links stay in it), and dir
 * must be the very directory the caller sees. Root's. Returns 0, or -1 with
 * the reason in why.
 */
int nvt_task_container_bind(pid_t pid, const char *rootfs, const char *dir, const char *target,
			    char *why, size_t len);

/*
 * A time-sliced priority's device (docs/containers.md, "MPS"): the MPS
 * control daemon of priority level (its name) whose pipe directory is the
 * caller's CUDA_MPS_PIPE_DIRECTORY (the spec gives the hook the level's)
 * must run; its pipe directory is bound at target (the container's own
 * CUDA_MPS_PIPE_DIRECTORY, where the spec mounts the shared daemon's) with
 * nvt_task_container_bind, so that the container's programs are clients of
 * the level's server; rootfs NULL: only the check (a hook that is not
 * root's). The hook starts no daemon. Returns 0, or -1 with the reason in
 * why.
 */
int nvt_task_container_mps(pid_t pid, const char *rootfs, const char *level, const char *target,
			   char *why, size_t len);

#endif /* NVT_TASK_CONTAINER_H */
