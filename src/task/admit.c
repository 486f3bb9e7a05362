/*
 * admit.c - whether a container given one of nvtaskset's CDI devices may
 * start (admit.h): its user namespace, and what its config.json's variables
 * ask for. Each check answers why not in enum nvt_admit_rc, the names and
 * values it found in struct nvt_admit_why; the hook words them.
 *
 * A container's own variables (-e, a pod's env) are whoever starts it's to
 * choose: they may not name its partition, priority, memory limit, run directory or an MPS
 * server of ours, which only the devices' spec gives.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "admit.h"
#include "container.h"
#include "task.h"
#include "core/memlimit.h"
#include "core/yield.h"

int nvt_admit_users(const char *own, size_t own_len, const char *ctr, size_t ctr_len, uint32_t uid,
		    int *rootless, struct nvt_admit_why *w)
{
	uint32_t mid, outside = 0;

	memset(w, 0, sizeof(*w));
	w->uid = uid;
	*rootless = !nvt_uid_map_is_identity(own, own_len);
	/* In the hook's own user namespace (a rootless runtime's, without one of its own for the
	 * container), the container's map says what the hook's says: its uid is the hook's. */
	if (!ctr)
		mid = uid;
	else if (nvt_uid_map_outside(ctr, ctr_len, uid, &mid))
		mid = UINT32_MAX;
	if (mid == UINT32_MAX || (*rootless && nvt_uid_map_outside(own, own_len, mid, &outside)))
		return NVT_ADMIT_UNMAPPED;
	if (!*rootless)
		outside = mid;
	w->outside = outside;
	return outside != uid ? NVT_ADMIT_MAPPED : NVT_ADMIT_OK;
}

/* The container's variable name into buf (size): 0 set, 1 not; MALFORMED in *rc. */
static int env_of(const char *config, size_t len, const char *name, char *buf, size_t size,
		  int *rc, struct nvt_admit_why *w)
{
	int set = nvt_oci_config_env(config, len, name, buf, size);

	if (set < 0) {
		w->name = name;
		*rc = NVT_ADMIT_MALFORMED;
	}
	return set;
}

/* 1 if the container sets name to anything but value (NULL: at all) in any variable of that
 * name; MALFORMED in *rc. */
static int env_other(const char *config, size_t len, const char *name, const char *value, int *rc,
		     struct nvt_admit_why *w)
{
	int other = nvt_oci_config_env_other(config, len, name, value);

	if (other < 0) {
		w->name = name;
		*rc = NVT_ADMIT_MALFORMED;
	}
	return other;
}

/*
 * The container's priority (w->value, parsed into prio) must be a priority
 * device's as the spec gives it, words included, and beside a partition
 * device that priority device's hook must be among config.json's hooks (which
 * the container's variables cannot add). A variable the container set itself
 * would be its own priority and ways of yielding, root's for a rootful
 * container's root: every user's lower tasks would yield to it.
 */
static int priority_given(const char *config, size_t len, const char *device,
			  const struct nvt_cdi_device *d, const struct nvt_slot_prio *prio,
			  struct nvt_admit_why *w)
{
	static struct nvt_task_env env;
	struct nvt_cdi_device pd = {.cls = NVT_CDI_PRIORITY, .gpu = -1, .prio = prio->prio,
				    .slice = (prio->yield & NVT_YIELD_SLICE) != 0};
	char name[NVT_CDI_DEVICE_TEXT_MAX], why[256];
	const char *slash = strchr(device, '/');

	w->prio = prio->prio;
	if (nvt_cdi_device_format(&pd, name, sizeof(name)) < 0 ||
	    nvt_task_cdi_device_env(&pd, NULL, 0, &env, why, sizeof(why)))
		return NVT_ADMIT_PRIO_NO_DEVICE;
	snprintf(w->device, sizeof(w->device), "%.*s/%s", slash ? (int)(slash - device) : 0, device,
		 name);
	snprintf(w->expected, sizeof(w->expected), "%s", env.priority);
	if (strcmp(w->value, env.priority))
		return NVT_ADMIT_PRIO_NOT_ITS;
	if (d->cls != NVT_CDI_PRIORITY &&
	    nvt_oci_config_has_hook(config, len, "createRuntime", w->device) != 1)
		return NVT_ADMIT_PRIO_NO_HOOK;
	return NVT_ADMIT_OK;
}

/* Its priority, if the container has one: the device's, once. */
static int priority_asked(const char *config, size_t len, const char *device,
			  const struct nvt_cdi_device *d, struct nvt_slot_prio *prio, int *has_prio,
			  struct nvt_admit_why *w)
{
	int rc = NVT_ADMIT_OK, set = env_of(config, len, NVT_ENV_PRIORITY, w->value, sizeof(w->value),
					    &rc, w);

	*has_prio = 0;
	if (rc || set)
		return rc;
	if (nvt_prio_env_parse(w->value, prio))
		return NVT_ADMIT_PRIO_MALFORMED;
	w->prio = prio->prio;
	/* (priority=low and priority=low-slice are two) */
	if (d->cls == NVT_CDI_PRIORITY &&
	    (prio->prio != d->prio || !(prio->yield & NVT_YIELD_SLICE) != !d->slice)) {
		/* (named as the device that gives that value, where one does) */
		if (priority_given(config, len, device, d, prio, w) != NVT_ADMIT_OK)
			w->device[0] = '\0';
		return NVT_ADMIT_OTHER_PRIORITY;
	}
	if ((rc = priority_given(config, len, device, d, prio, w)))
		return rc;
	if (env_other(config, len, NVT_ENV_PRIORITY, w->value, &rc, w))
		return rc ? rc : NVT_ADMIT_PRIO_TWICE;
	*has_prio = 1;
	return NVT_ADMIT_OK;
}

int nvt_admit_config(const char *config, size_t len, const char *device,
		     const struct nvt_cdi_device *d, struct nvt_slot_prio *prio, int *has_prio,
		     struct nvt_admit_why *w)
{
	const char *slash = strchr(device, '/'), *mine = slash ? slash + 1 : device;
	struct nvt_cdi_device other;
	int rc = NVT_ADMIT_OK, has_partition;

	memset(w, 0, sizeof(*w));
	*has_prio = 0;
	/* The spec's run directory, or the program's segment would lie where no claim looks: it
	 * would run on every TPC, and this device's claim would stay held. */
	if (env_other(config, len, NVT_ENV_RUNDIR, NVT_CONTAINER_RUNDIR, &rc, w))
		return rc ? rc : NVT_ADMIT_RUNDIR;
	/* Nor whether it is a priority level's MPS server: the shim of a program given the
	 * variable makes no partition, and the container's would run on every TPC. */
	if (env_other(config, len, NVT_ENV_MPS_SERVER, NULL, &rc, w))
		return rc ? rc : NVT_ADMIT_MPS_SERVER;
	/* Another device of ours set these too (the last given wins): refuse both. */
	has_partition = env_of(config, len, NVT_ENV_CDI, w->value, sizeof(w->value), &rc, w) == 0;
	if (rc)
		return rc;
	if (d->cls != NVT_CDI_PRIORITY && d->cls != NVT_CDI_MEM && !has_partition)
		return NVT_ADMIT_NO_CDI_ENV;
	if (d->cls != NVT_CDI_PRIORITY && d->cls != NVT_CDI_MEM && strcmp(w->value, mine)) {
		/* (a device's name that parses fits NVT_CDI_DEVICE_TEXT_MAX) */
		snprintf(w->device, sizeof(w->device), "%.*s/%.*s", slash ? (int)(slash - device) : 0,
			 device, NVT_CDI_DEVICE_TEXT_MAX,
			 nvt_cdi_device_parse(w->value, &other) ? "?" : w->value);
		return NVT_ADMIT_OTHER_PARTITION;
	}
	if ((rc = priority_asked(config, len, device, d, prio, has_prio, w)))
		return rc;
	/* A priority device's yield=auto: partitioned beside a partition device, else the whole
	 * GPU's (what the container's shims make of it too). */
	if (*has_prio)
		nvt_prio_resolve(prio, has_partition);
	/* A memory device beside a priority device: that one's hook makes the segment, on every
	 * GPU (a memory device of one GPU's would hold that GPU alone, and the priority with it). */
	if (d->cls == NVT_CDI_MEM && *has_prio)
		return NVT_ADMIT_BESIDE;
	return (d->cls != NVT_CDI_PRIORITY && d->cls != NVT_CDI_MEM) || !has_partition
		       ? NVT_ADMIT_OK
		       : NVT_ADMIT_BESIDE;
}

/* The index among gpus (n) of the GPU of uuid, or -1. */
static int gpu_index(const struct nvt_slot_view *gpus, int n, const uint8_t uuid[16])
{
	for (int i = 0; i < n; i++)
		if (!memcmp(gpus[i].uuid, uuid, sizeof(gpus[i].uuid)))
			return i;
	return -1;
}

int nvt_admit_memory(const char *config, size_t len, const char *device,
		     const struct nvt_cdi_device *d, const struct nvt_slot_view *gpus, int n_gpus,
		     struct nvt_mem_env *limit, struct nvt_admit_why *w)
{
	struct nvt_cdi_device md = {.cls = NVT_CDI_MEM, .gpu = -1};
	struct nvt_mem_env m;
	char name[NVT_CDI_DEVICE_TEXT_MAX];
	const char *slash = strchr(device, '/');
	int rc = NVT_ADMIT_OK, set, i;

	memset(w, 0, sizeof(*w));
	memset(limit, 0, sizeof(*limit));
	set = env_of(config, len, NVT_ENV_MEM, w->value, sizeof(w->value), &rc, w);
	if (rc || set)
		return rc;
	if (nvt_memlimit_env_read(w->value, &m) || m.bytes % (1ull << 30) ||
	    (m.bytes >> 30) > NVT_CDI_MEM_GIB_MAX)
		return NVT_ADMIT_MEM_NO_DEVICE;
	md.mem_gib = (unsigned)(m.bytes >> 30);
	if (m.one_gpu) {
		/* The device's GPU, as the host numbers it: the hook's GPUs are its device's, every
		 * GPU in the host's order or GPU d->gpu alone. The segment holds those GPUs only. */
		i = gpu_index(gpus, n_gpus, m.uuid);
		if (i < 0)
			return d->cls == NVT_CDI_MEM ? NVT_ADMIT_OTHER_MEM : NVT_ADMIT_MEM_OTHER_GPU;
		md.gpu = d->gpu >= 0 ? d->gpu : i;
	}
	if (d->cls == NVT_CDI_MEM && (md.mem_gib != d->mem_gib || md.gpu != d->gpu))
		return NVT_ADMIT_OTHER_MEM;
	if (nvt_cdi_device_format(&md, name, sizeof(name)) < 0)
		return NVT_ADMIT_MEM_NO_DEVICE;
	snprintf(w->device, sizeof(w->device), "%.*s/%s", slash ? (int)(slash - device) : 0, device,
		 name);
	if (d->cls != NVT_CDI_MEM &&
	    nvt_oci_config_has_hook(config, len, "createRuntime", w->device) != 1)
		return NVT_ADMIT_MEM_NO_HOOK;
	if (env_other(config, len, NVT_ENV_MEM, w->value, &rc, w))
		return rc ? rc : NVT_ADMIT_MEM_TWICE;
	*limit = m;
	return NVT_ADMIT_OK;
}

int nvt_admit_partition(const char *config, size_t len, const struct nvt_cdi_device *d,
			const char *given, struct nvt_slot_view *parts, int *n, struct nvt_admit_why *w)
{
	int rc = NVT_ADMIT_OK, set, other = 0;

	memset(w, 0, sizeof(*w));
	*n = given ? nvt_gpusel_env_parse(given, parts, NVT_MAX_GPUS) : -1;
	if (*n < 1)
		return NVT_ADMIT_NO_GPU;
	set = env_of(config, len, NVT_ENV_PARTITION, w->value, sizeof(w->value), &rc, w) == 0;
	/* (every variable of the name: a runtime may hand the program any of them) */
	if (!rc && d->cls == NVT_CDI_GPC && set)
		other = env_other(config, len, NVT_ENV_PARTITION, given, &rc, w);
	if (rc)
		return rc;
	if (d->cls == NVT_CDI_GPC ? !set || other : set) {
		snprintf(w->value, sizeof(w->value), "%s",
			 !set ? "not set" : d->cls == NVT_CDI_GPC ? "not its device's" : "set");
		return NVT_ADMIT_PARTITION;
	}
	return NVT_ADMIT_OK;
}

int nvt_admit_mps(const char *config, size_t len, const char *level_pipe, const char *level,
		  char *target, size_t size, struct nvt_admit_why *w)
{
	int rc = NVT_ADMIT_OK;

	memset(w, 0, sizeof(*w));
	if (nvt_cdi_shared_pipe(level_pipe, level, target, size)) {
		snprintf(w->value, sizeof(w->value), "%s", level_pipe);
		return NVT_ADMIT_LEVEL_PIPE;
	}
	/* Only over the shared daemon's mount: elsewhere (the run directory, the shim's
	 * directory) the bind would hide what the container's tasks must find. */
	if (env_other(config, len, NVT_ENV_MPS_PIPE_DIR, target, &rc, w)) {
		snprintf(w->value, sizeof(w->value), "%s", target);
		return rc ? rc : NVT_ADMIT_MPS_PIPE;
	}
	return NVT_ADMIT_OK;
}
