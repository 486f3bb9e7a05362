/*
 * container.c - a container's tasks through nvtaskset's CDI devices: the
 * environment each device gives, and the segment a device's hook makes for
 * the container's first process (see container.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "container.h"
#include "alloc/reserve.h"
#include "core/gpusel.h"
#include "core/prio.h"
#include "core/text.h"
#include "core/yield.h"
#include "mps/mps.h"
#include "os/child.h"
#include "os/proc.h"
#include "os/sysutil.h"
#include "seg/segfile.h"

/* How long the child that binds a container's run directory may take: a mount in a mount
 * namespace, milliseconds on an idle machine; a hang ends the hook rather than the runtime. */
#define BIND_TIMEOUT_MS 10000

static void env_add(struct nvt_task_env *e, const char *name, const char *value)
{
	e->vars[e->n].name = name;
	e->vars[e->n].value = value;
	e->vars[e->n++].overwrite = 1;
}

void nvt_task_cdi_common_env(const char *pipe_dir, struct nvt_task_env *out)
{
	out->n = 0;
	env_add(out, NVT_ENV_RUNDIR, NVT_CONTAINER_RUNDIR);
	env_add(out, NVT_ENV_MPS_PIPE_DIR, pipe_dir ? pipe_dir : "/dev/null");
}

int nvt_task_cdi_preload(const char *shim, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s\n", shim);

	return n > 0 && (size_t)n < len && !strpbrk(shim, " \t\n:") ? n : -1;
}

int nvt_task_cdi_device_env(const struct nvt_cdi_device *d, const struct nvt_slot_view *parts, int n,
			    struct nvt_task_env *out, char *why, size_t len)
{
	struct nvt_slot_prio prio = {0};

	out->n = 0;
	if (d->cls == NVT_CDI_PRIORITY) {
		/* A level: the default ways of yielding by partition (yield=auto: the spec's
		 * variables are the same beside a partition device or alone, and whoever reads them
		 * tells which from NVT_ENV_CDI, nvt_prio_resolve; the shim sets MPS's client
		 * priority or the bridge's connections as they say); "-slice": --yield slice. */
		if (nvt_prio_env_parse(nvt_prio_name(d->prio), &prio))
			return nvt_why(why, len, "internal error: cannot format the priority");
		if (d->slice)
			prio.yield = NVT_YIELD_SLICE;
		else
			prio.flags |= NVT_PRIOF_AUTO;
		if (nvt_prio_env_format(&prio, out->priority, sizeof(out->priority)) < 0)
			return nvt_why(why, len, "internal error: cannot format the priority");
		env_add(out, NVT_ENV_PRIORITY, out->priority);
		/* The bridge of a high time-sliced task (nvt_task_env_self). */
		if (d->slice && nvt_bridge_on(nvt_bridge_wanted(prio.prio, prio.yield, "1", NULL)))
			env_add(out, NVT_ENV_CUDA_CONNECTIONS, "1");
		return 0;
	}
	if (d->cls == NVT_CDI_MEM) {
		/* Taken where the partition comes from the environment (podman exec's processes).
		 * A device of one GPU names it by UUID: the container may number its GPUs otherwise. */
		struct nvt_mem_env mem = {.bytes = (uint64_t)d->mem_gib << 30, .one_gpu = d->gpu >= 0};
		if (mem.one_gpu && n != 1)
			return nvt_why(why, len, "internal error: a memory device of GPU %d has %d GPUs",
				       d->gpu, n);
		if (mem.one_gpu)
			memcpy(mem.uuid, parts[0].uuid, sizeof(mem.uuid));
		if (nvt_memlimit_env_write(&mem, out->mem, sizeof(out->mem)) < 0)
			return nvt_why(why, len, "internal error: cannot format the memory limit");
		env_add(out, NVT_ENV_MEM, out->mem);
		return 0;
	}
	if (nvt_cdi_device_format(d, out->cdi, sizeof(out->cdi)) < 0)
		return nvt_why(why, len, "internal error: cannot name the device");
	env_add(out, NVT_ENV_CDI, out->cdi);
	if (d->cls == NVT_CDI_GPC) {
		if (nvt_gpusel_env_format(parts, n, out->partition, sizeof(out->partition)) < 0)
			return nvt_why(why, len, "internal error: cannot format the partition");
		env_add(out, NVT_ENV_PARTITION, out->partition);
	}
	return 0;
}

int nvt_task_cdi_rundir_check(const char *base, char *why, size_t len)
{
	int own = nvt_fs_is_own(base, ST_NOSUID | ST_NODEV | ST_NOEXEC);

	if (own < 0)
		return nvt_why(why, len, "cannot look at the run directory %s: %s", base, strerror(errno));
	if (!own)
		return nvt_why(why, len,
			       "the run directory %s is not a file system of its own mounted nosuid, "
			       "nodev and noexec: a container could leave a program there that the host "
			       "runs, or fill the file system it lies on",
			       base);
	return 0;
}

int nvt_task_cdi_rundir_mount(const char *base, char *why, size_t len)
{
	if (nvt_fs_is_own(base, ST_NOSUID | ST_NODEV | ST_NOEXEC) == 1)
		return 0;
	if (nvt_fs_mount_tmpfs(base, NVT_CDI_RUNDIR_OPTIONS))
		return nvt_why(why, len, "cannot mount a tmpfs on %s (%s): %s", base,
			       NVT_CDI_RUNDIR_OPTIONS, strerror(errno));
	if (nvt_task_cdi_rundir_check(base, why, len) == 0)
		return 1;
	nvt_fs_unmount(base); /* a mount that fails the check is none to keep */
	return -1;
}

/* Claims c->count TPCs on each GPU of c in the caller's own segment (own), into out. */
static int claim(const char *base, const struct nvt_task_container *c, struct nvt_slot_view *out,
		 struct nvt_seg_own *own, char *why, size_t len)
{
	static struct nvt_claim_gpu req[NVT_MAX_GPUS];
	int rc;

	for (int i = 0; i < c->n_parts; i++) {
		memset(&req[i], 0, sizeof(req[i]));
		memcpy(req[i].uuid, c->parts[i].uuid, sizeof(req[i].uuid));
		req[i].topo = c->parts[i].topo;
		req[i].count = c->count;
		req[i].strategy = NVT_PACKED; /* as -n's default */
		if (c->prio)
			req[i].prio = *c->prio;
		req[i].mem_limit = nvt_memlimit_env_on(&c->mem, c->parts[i].uuid);
	}
	rc = nvt_reserve_claim(base, req, c->n_parts, c->timeout_ms, out, own, NULL, why, len);
	if (rc == NVT_RESERVE_ERROR) {
		char inner[512];
		snprintf(inner, sizeof(inner), "%s", why);
		nvt_why(why, len, "cannot reserve TPCs for the container: %s", inner);
	}
	return rc ? NVT_TASK_ECLAIM : NVT_TASK_OK;
}

int nvt_task_prepare_container(const char *base, const struct nvt_task_container *c,
			       struct nvt_slot_view *out, int *already, char *why, size_t len)
{
	struct nvt_seg_own own = {0};
	int rc, made;

	*already = 0;
	if (c->n_parts < 1 || c->n_parts > NVT_MAX_GPUS) {
		nvt_why(why, len, "%d GPUs: a container's task has partitions on 1 to %d", c->n_parts,
			NVT_MAX_GPUS);
		return NVT_TASK_ESEG;
	}
	if (c->count) {
		rc = claim(base, c, out, &own, why, len);
		if (rc)
			return rc;
	} else {
		for (int i = 0; i < c->n_parts; i++) {
			out[i] = c->parts[i];
			out[i].flags = 0;
			memset(&out[i].prio, 0, sizeof(out[i].prio));
			/* Its own partition is what it is given, as a start carries it. */
			if (c->prio)
				nvt_prio_carry(&out[i], NULL, c->prio);
			out[i].mem_limit = nvt_memlimit_env_on(&c->mem, c->parts[i].uuid);
		}
	}
	/* The container's segment holds the pick before the caller's lets it go:
	 * every scan meanwhile finds it in one of them, or both. */
	made = nvt_seg_make_for(c->seg_base ? c->seg_base : base, c->pid, c->uid, c->gid, out,
				c->n_parts, why, len);
	if (own.seg) {
		nvt_seg_remove(&own);
		munmap(own.seg, sizeof(*own.seg));
	}
	if (made < 0)
		return NVT_TASK_ESEG;
	*already = made == NVT_SEG_MADE_ALREADY;
	return NVT_TASK_OK;
}

/* Opens path inside root (links resolved as if root were /). Returns an O_PATH fd or -1. */
static int open_in_root(int root, const char *path)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
}

/* The child's part of nvt_task_container_bind, in the container's mount namespace: returns 0,
 * or -1 with the reason in why. By file descriptors throughout (the namespace's /proc may be
 * another PID namespace's, where this process has no /proc/self). */
static int bind_inside(int ns, const char *rootfs, const char *dir, const char *target,
		       const struct stat *want, char *why, size_t len)
{
	struct mount_attr attr;
	struct stat st;
	int src, root, at, tree;

	if (setns(ns, CLONE_NEWNS))
		return nvt_why(why, len, "cannot join the container's mount namespace: %s", strerror(errno));
	src = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) || st.st_dev != want->st_dev || st.st_ino != want->st_ino)
		return nvt_why(why, len, "%s is not in sight of the container's mount namespace "
					 "(a runtime that ran the hook after pivot_root?)",
			       dir);
	root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	at = root < 0 ? -1 : open_in_root(root, target);
	if (at < 0)
		return nvt_why(why, len, "the container has no directory %s in its root file system %s: %s",
			       target, rootfs, strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) ||
	    move_mount(tree, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
		return nvt_why(why, len, "cannot bind %s at the container's %s (nosuid, nodev, noexec): %s",
			       dir, target, strerror(errno));
	/* What the container's path shows now. */
	close(at);
	at = open_in_root(root, target);
	if (at < 0 || fstat(at, &st) || st.st_dev != want->st_dev || st.st_ino != want->st_ino)
		return nvt_why(why, len, "the container's %s is not %s once bound", target, dir);
	return 0;
}

/* What the child that binds is given, and what it answers. */
struct bind_call {
	int ns;
	const char *rootfs, *dir, *target;
	struct stat want;
};
struct bind_answer {
	int failed;
	char why[512];
};

static void bind_in_child(void *ctx, void *result)
{
	const struct bind_call *call = ctx;
	struct bind_answer *answer = result;

	answer->failed = bind_inside(call->ns, call->rootfs, call->dir, call->target, &call->want,
				     answer->why, sizeof(answer->why)) != 0;
}

int nvt_task_container_bind(pid_t pid, const char *rootfs, const char *dir, const char *target,
			    char *why, size_t len)
{
	struct bind_call call = {-1, rootfs, dir, target, {0}};
	struct bind_answer answer;
	char path[64];
	int shares, rc;

	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", (long)pid);
	if (stat(dir, &call.want))
		return nvt_why(why, len, "%s: %s", dir, strerror(errno));
	/* Never over the caller's own paths: a container without a mount namespace of its own
	 * (none that runc makes) would have its "root file system" bound on the host. */
	shares = nvt_proc_shares(pid, "ns/mnt");
	if (shares < 0)
		return nvt_why(why, len, "cannot read %s: %s", path, strerror(errno));
	if (shares)
		return nvt_why(why, len, "the container has no mount namespace of its own");
	call.ns = nvt_proc_ns_open(pid, "ns/mnt");
	if (call.ns < 0)
		return nvt_why(why, len, "cannot open %s: %s", path, strerror(errno));
	/* In a child of its own: setns(2) would move this process into the container's. */
	rc = nvt_child_call(bind_in_child, &call, &answer, sizeof(answer), BIND_TIMEOUT_MS);
	close(call.ns);
	if (rc == NVT_CHILD_OK && !answer.failed)
		return 0;
	if (rc == NVT_CHILD_OK)
		return nvt_why(why, len, "%s", answer.why);
	if (rc == NVT_CHILD_TIMEOUT)
		return nvt_why(why, len, "the process that binds %s did not end in %d s", dir,
			       BIND_TIMEOUT_MS / 1000);
	if (rc == NVT_CHILD_ESYS)
		return nvt_why(why, len, "cannot start the process that binds %s: %s", dir,
			       strerror(errno));
	return nvt_why(why, len, "the process that binds %s ended without an answer", dir);
}

int nvt_task_container_mps(pid_t pid, const char *rootfs, const char *level, const char *target,
			   char *why, size_t len)
{
	struct nvt_mps mps;
	char detail[512];

	if (nvt_mps_setup(&mps, detail, sizeof(detail)))
		return nvt_why(why, len, "%s", detail);
	if (!nvt_mps_daemon(&mps))
		return nvt_why(why, len, "the MPS control daemon of priority %s does not run (pipe "
					 "directory %s): run nvtaskset --cdi --with-mps again (as root), "
					 "which starts it",
			       level, mps.pipe_dir);
	if (!rootfs)
		return 0;
	if (nvt_task_container_bind(pid, rootfs, mps.pipe_dir, target, detail, sizeof(detail)))
		return nvt_why(why, len, "cannot give the container the MPS pipe directory of priority "
					 "%s: %s", level, detail);
	return 0;
}
