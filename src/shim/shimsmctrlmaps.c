/*
 * shimsmctrlmaps.c - libsmctrl's masks in a program that nvtaskset did not
 * start (linked against libsmctrl.so, or loading it with dlopen or ctypes),
 * and on a GPU that nvtaskset gave no partition. Masks name logical TPCs and
 * need the GPU's calibrated map, which nvtaskset puts in a task's control
 * segment. At the program's first libsmctrl call, each GPU it can see that
 * its segment has no slot for gets one, with no partition and the GPU's map:
 * what `nvtaskset -c all` gives. The map comes from the calibration cache,
 * read by the command's own rules (gpu/topocache.h); where the cache has
 * none, the command calibrates the GPU once and saves it (`nvtaskset
 * --topology --gpu UUID`, ~1 s), else the program is told why, once, and its
 * masks do not apply on that GPU. Slow path only: never on a launch. It also
 * answers libsmctrl's queries (shimsmctrlapi.c) with the map of a CUDA
 * device ordinal.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "install_paths.h"
#include "gpu/cuda_driver.h"
#include "core/gpusel.h"
#include "core/segment.h"
#include "core/topo.h"
#include "gpu/topocache.h"
#include "seg/segfile.h"
#include "shimdriver.h"
#include "shimsmctrlmaps.h"
#include "shimsmcount.h"
#include "shimstate.h"

extern char **environ;

/* Held while a query reads a slot's topology (shim_smctrl_device_topology). */
static pthread_mutex_t query_lock = PTHREAD_MUTEX_INITIALIZER;

/* The GPUs CUDA shows this process (it calls cuInit), as keys of their cache
 * records, into keys (max). Returns how many (0 when the driver fails). */
static int cuda_gpus(struct nvt_cache_key *keys, int max)
{
	int count = 0, version = 0, n = 0;

	if (!shim_cu.init || !shim_cu.device_count || !shim_cu.device_get || !shim_cu.device_uuid ||
	    !shim_cu.version || shim_cu.init(0) || shim_cu.device_count(&count) ||
	    shim_cu.version(&version))
		return 0;
	for (int i = 0; i < count && n < max; i++) {
		CUdevice d;
		CUuuid uuid;
		int sms = 0;
		/* The GPU's own count, never a partition's (shimsmcount.c): the cache's key. */
		if (shim_cu.device_get(&d, i) || shim_cu.device_uuid(&uuid, d) ||
		    shim_smcount_driver_attribute(&sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
						  d))
			continue;
		memset(&keys[n], 0, sizeof(keys[n]));
		nvt_uuid_format((const uint8_t *)uuid.bytes, keys[n].uuid);
		keys[n].driver_version = version;
		keys[n].sms = sms;
		snprintf(keys[n].nvrm, sizeof(keys[n].nvrm), "-");
		n++;
	}
	return n;
}

/* The GPUs this process can see, each with what finds its cache record. */
struct gpu_key {
	struct nvt_cache_key key;
	uint8_t uuid[16];
};

/* Lists the GPUs CUDA shows this process: from the kernel module's list
 * (no CUDA call: the program may not have initialised CUDA yet, and may
 * fork before it does), else by asking the driver. Returns how many. */
static int visible_gpus(struct gpu_key *out, int max)
{
	static struct nvt_gpu_id ids[NVT_MACHINE_GPUS];
	static struct nvt_cache_key keys[NVT_MAX_GPUS];
	int idx[NVT_MACHINE_GPUS], n, count = 0;
	char nvrm[32];

	nvt_module_version(nvrm, sizeof(nvrm));
	n = nvt_gpus_from_proc(ids, NVT_MACHINE_GPUS);
	if (n > 0 && strcmp(nvrm, "-")) {
		n = nvt_gpus_visible_of(ids, n, 1, idx);
		for (int i = 0; i < n && count < max; i++) {
			struct gpu_key *k = &out[count];
			memset(k, 0, sizeof(*k));
			snprintf(k->key.uuid, sizeof(k->key.uuid), "%s", ids[idx[i]].uuid);
			snprintf(k->key.nvrm, sizeof(k->key.nvrm), "%s", nvrm);
			count += nvt_uuid_parse(k->key.uuid, k->uuid) == 0;
		}
		return count;
	}
	n = cuda_gpus(keys, max < NVT_MAX_GPUS ? max : NVT_MAX_GPUS);
	for (int i = 0; i < n; i++) {
		out[count].key = keys[i];
		count += nvt_uuid_parse(keys[i].uuid, out[count].uuid) == 0;
	}
	return count;
}

/* The command, as installed beside this library (LIBDIR as seen from
 * BINDIR), else in BINDIR. Returns 0 and the path, or -1. */
static int find_command(char *path, size_t len)
{
	Dl_info info;
	char dir[PATH_MAX];
	const char *slash;

	if (dladdr((void *)find_command, &info) && info.dli_fname && info.dli_fname[0] == '/' &&
	    (slash = strrchr(info.dli_fname, '/')) && (size_t)(slash - info.dli_fname) < sizeof(dir)) {
		memcpy(dir, info.dli_fname, (size_t)(slash - info.dli_fname));
		dir[slash - info.dli_fname] = '\0';
		snprintf(path, len, "%s/%s/nvtaskset", dir, NVT_BINDIR_FROM_LIBDIR);
		if (access(path, X_OK) == 0)
			return 0;
	}
	snprintf(path, len, "%s/nvtaskset", NVT_INSTALL_BINDIR);
	return access(path, X_OK) == 0 ? 0 : -1;
}

/*
 * Runs `nvtaskset --topology --gpu UUID`, which calibrates the GPU (outside
 * MPS) and saves its map where this process reads it; its messages go to
 * this process's stderr. posix_spawn: no fork handler of the program runs,
 * and the command starts CUDA afresh (a forked copy of a process that uses
 * CUDA cannot). Returns its exit status, or -1 with why set.
 */
static int run_calibration(const char *uuid, char *why, size_t len)
{
	char command[PATH_MAX + 64], gpu[64];
	char *argv[] = {"nvtaskset", "--topology", "--gpu", gpu, NULL};
	posix_spawn_file_actions_t actions;
	int status = 0, rc;
	pid_t pid;

	if (getauxval(AT_SECURE)) {
		snprintf(why, len, "a setuid program runs no calibration");
		return -1;
	}
	if (find_command(command, sizeof(command))) {
		snprintf(why, len, "nvtaskset's command is neither beside this library nor in %s",
			 NVT_INSTALL_BINDIR);
		return -1;
	}
	snprintf(gpu, sizeof(gpu), "%s", uuid);
	if (posix_spawn_file_actions_init(&actions)) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		return -1;
	}
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, command, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (rc) {
		snprintf(why, len, "cannot run %.200s: %s", command, strerror(rc));
		return -1;
	}
	while ((rc = (int)waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0) /* SIGCHLD ignored: reaped already; the cache tells */
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, len, "'%.200s --topology --gpu %.47s' failed (%s %d)", command, uuid,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	return 0;
}

/* k's map from the cache, calibrated first if it has none. Returns 0 or -1 (why set). */
static int gpu_map(const struct gpu_key *k, struct nvt_topology *topo, char *why, size_t len)
{
	char dirs[2][256];
	int n_dirs = nvt_cache_dirs(dirs);

	if (nvt_cache_find(dirs, n_dirs, &k->key, topo, NULL, NULL, 0) == 0)
		return 0;
	if (run_calibration(k->key.uuid, why, len))
		return -1;
	if (nvt_cache_find(dirs, n_dirs, &k->key, topo, NULL, NULL, 0) == 0)
		return 0;
	snprintf(why, len, "it was calibrated, but its map could not be saved in %s (see nvtaskset's "
		 "message above)", dirs[n_dirs - 1]);
	return -1;
}

static void add_slots(void)
{
	static struct gpu_key gpus[NVT_MAX_GPUS];
	static struct nvt_slot_view views[NVT_MAX_GPUS];
	int n = visible_gpus(gpus, NVT_MAX_GPUS), n_views = 0, added;
	char why[512];

	for (int i = 0; i < n; i++) {
		struct nvt_slot_view *v = &views[n_views];
		if (nvt_segment_find_gpu(shim.seg, gpus[i].uuid) >= 0)
			continue; /* nvtaskset gave it a partition */
		memset(v, 0, sizeof(*v));
		if (gpu_map(&gpus[i], &v->topo, why, sizeof(why))) {
			shim_first_time(WARN_SMCTRL); /* said here, with why: not again at a launch */
			shim_warn("pid %ld: libsmctrl masks need the TPC map of GPU %s, and there is none: %s; "
				  "its launches run without the masks (nvtaskset --calibrate makes one)",
				  (long)getpid(), gpus[i].key.uuid, why);
			continue;
		}
		memcpy(v->uuid, gpus[i].uuid, sizeof(v->uuid));
		v->state = NVT_SLOT_UNSET;
		n_views++;
	}
	if (!n_views)
		return;
	added = shim.seg_shared ? nvt_seg_own_add_gpus(&shim.own, views, n_views)
				: nvt_segment_add_gpus(shim.seg, views, n_views);
	if (added < 0)
		shim_warn("pid %ld: cannot add the GPUs' maps to this task's control segment (%s); "
			  "libsmctrl masks do not apply",
			  (long)getpid(), strerror(errno));
}

/* Once per process; a thread that comes meanwhile waits for the maps. */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int maps_done;

void shim_smctrl_maps(void)
{
	if (__atomic_load_n(&maps_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&maps_lock);
	if (!maps_done && shim.seg)
		add_slots();
	__atomic_store_n(&maps_done, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&maps_lock);
}

/* In a forked child: another thread may have held the lock. The child's
 * segment holds its parent's slots, maps included. */
void shim_smctrl_maps_after_fork(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	maps_lock = fresh;
	query_lock = fresh;
}

int shim_smctrl_device_topology(int dev, struct nvt_topology *out)
{
	static struct nvt_slot_view view;
	CUdevice d;
	CUuuid uuid;
	int g, rc = ENOENT;

	if (!shim_cu.init || !shim_cu.device_get || !shim_cu.device_uuid || shim_cu.init(0))
		return EIO;
	if (dev < 0 || shim_cu.device_get(&d, dev))
		return EINVAL;
	if (shim_cu.device_uuid(&uuid, d))
		return EIO;
	shim_smctrl_maps();
	pthread_mutex_lock(&query_lock);
	g = shim.seg ? nvt_segment_find_gpu(shim.seg, (const uint8_t *)uuid.bytes) : -1;
	if (g >= 0 && nvt_slot_read(&shim.seg->gpu[g], &view, 100) == 0 &&
	    (view.topo.flags & NVT_TOPO_CALIBRATED) && !nvt_topo_validate(&view.topo)) {
		*out = view.topo;
		rc = 0;
	}
	pthread_mutex_unlock(&query_lock);
	return rc;
}
