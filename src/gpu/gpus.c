/*
 * gpus.c - the machine's GPUs and their cached or measured topologies.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpus.h"
#include "calibrate.h"
#include "driverinfo.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SYSTEM_CACHE_DIR "/var/cache/nvtaskset"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The directories searched for cached calibrations, most trusted first. */
static int cache_dirs(char dirs[2][256])
{
	const char *env = getenv(NVT_ENV_CACHE_DIR), *xdg = getenv(NVT_ENV_XDG_CACHE_HOME),
		   *home = getenv(NVT_ENV_HOME);
	int n = 0;

	if (env && env[0] == '/') {
		snprintf(dirs[0], sizeof(dirs[0]), "%s", env);
		return 1;
	}
	snprintf(dirs[n++], sizeof(dirs[0]), SYSTEM_CACHE_DIR);
	if (geteuid() != 0) {
		if (xdg && xdg[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/nvtaskset", xdg);
		else if (home && home[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/.cache/nvtaskset", home);
	}
	return n;
}

/* Reads a cache file only if nobody but root or the caller could have written it. */
static int read_trusted(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022) || st.st_size <= 0 || (size_t)st.st_size >= len) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	if (n != st.st_size)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Saves text as dir/name atomically, readable by all. */
static int save(const char *dir, const char *name, const char *text, char *path, size_t len)
{
	char tmp[600];
	size_t n = strlen(text);
	int fd, saved;

	if (nvt_mkdirs(dir, 0755))
		return -1;
	snprintf(path, len, "%.255s/%.200s", dir, name);
	snprintf(tmp, sizeof(tmp), "%.255s/.%.200s.XXXXXX", dir, name);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0644) || write(fd, text, n) != (ssize_t)n || fsync(fd)) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	close(fd);
	if (rename(tmp, path)) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

/* Where the kernel module describes itself: $NVTASKSET_PROC_NVIDIA (tests), else /proc. */
static const char *proc_nvidia(void)
{
	const char *dir = getenv(NVT_ENV_PROC_NVIDIA);
	return dir && dir[0] == '/' && strlen(dir) < 200 ? dir : "/proc/driver/nvidia";
}

/* The kernel module's version, or "-" if it cannot be read. */
static void module_version(char *out, size_t len)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "%s/version", proc_nvidia());
	if (nvt_read_file(path, text, sizeof(text), 0) < 0 || nvt_parse_nvrm_version(text, out, len))
		snprintf(out, len, "-");
}

/* Reads a cached record for key from the cache directories. Returns 0 or -1. */
static int read_cache(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		      struct nvt_gpu_topology *out, struct nvt_cache_key *found)
{
	char path[600], text[NVT_CACHE_TEXT_MAX];

	for (int d = 0; d < n_dirs; d++) {
		snprintf(path, sizeof(path), "%.255s/%.47s.topo", dirs[d], key->uuid);
		if (read_trusted(path, text, sizeof(text)) == 0 &&
		    nvt_cache_parse(text, key, &out->topo, found) == NVT_CACHE_OK) {
			snprintf(out->cache_path, sizeof(out->cache_path), "%s", path);
			out->from_cache = 1;
			return 0;
		}
	}
	return -1;
}


static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Lists the GPUs the kernel module describes, in PCI bus order (the order of
 * their directory names, "0000:17:00.0"), which is nvidia-smi's. Returns 0,
 * or -1 if the directory cannot be read or a GPU is not described.
 */
static int list_from_proc(struct nvt_gpus *out)
{
	char dir[256], path[600], text[4096];
	static char names[NVT_GPUS_MAX][256];
	char *sorted[NVT_GPUS_MAX];
	struct dirent *ent;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/gpus", proc_nvidia());
	d = opendir(dir);
	if (!d)
		return -1;
	while ((ent = readdir(d))) {
		if (ent->d_name[0] == '.')
			continue;
		if (n == NVT_GPUS_MAX) {
			closedir(d);
			return -1;
		}
		snprintf(names[n], sizeof(names[n]), "%s", ent->d_name);
		sorted[n] = names[n];
		n++;
	}
	closedir(d);
	if (n == 0)
		return -1;
	qsort(sorted, (size_t)n, sizeof(sorted[0]), cmp_name);
	for (int g = 0; g < n; g++) {
		snprintf(path, sizeof(path), "%s/%.255s/information", dir, sorted[g]);
		if (nvt_read_file(path, text, sizeof(text), 0) < 0 ||
		    nvt_parse_gpu_information(text, out->id[g].uuid, sizeof(out->id[g].uuid),
					      out->id[g].model, sizeof(out->id[g].model)))
			return -1;
	}
	out->n = n;
	return 0;
}

int nvt_gpus_list(int timeout_ms, struct nvt_gpus *out, char *err, size_t errlen)
{
	static struct nvt_gpu_list list;

	memset(out, 0, sizeof(*out));
	module_version(out->nvrm, sizeof(out->nvrm));
	if (list_from_proc(out) == 0) {
		out->from_proc = 1;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	module_version(out->nvrm, sizeof(out->nvrm));
	if (nvt_gpu_enumerate(timeout_ms, &list)) {
		snprintf(err, errlen, "cannot list the GPUs: %s", list.error);
		return -1;
	}
	if (list.count == 0) {
		snprintf(err, errlen, "CUDA sees no GPU");
		return -1;
	}
	for (int g = 0; g < list.count && g < NVT_GPUS_MAX; g++) {
		nvt_uuid_format(list.gpu[g].uuid, out->id[g].uuid);
		snprintf(out->id[g].model, sizeof(out->id[g].model), "%s", list.gpu[g].name);
		out->n = g + 1;
	}
	return 0;
}

int nvt_gpus_visible(const struct nvt_gpus *gpus, int *idx)
{
	const char *visible = getenv(NVT_ENV_CUDA_VISIBLE), *order = getenv(NVT_ENV_CUDA_ORDER);
	int n = -1;

	/* Listed by CUDA: already what this environment sees. */
	if (gpus->from_proc && visible)
		n = nvt_visible_gpus(visible, gpus->id, gpus->n, order && !strcmp(order, "PCI_BUS_ID"),
				     idx);
	if (n < 0) {
		for (int g = 0; g < gpus->n; g++)
			idx[g] = g;
		n = gpus->n;
	}
	return n;
}

/* The directory a calibration is saved in: root's go where every user's
 * tasks can read them. */
static int write_dir_of(int n_dirs)
{
	return (geteuid() == 0 || n_dirs == 1) ? 0 : n_dirs - 1;
}

void nvt_gpu_read_halves(struct nvt_gpu_topology *out)
{
	char dirs[2][256], path[600], text[NVT_MEMBW_TEXT_MAX + 64];
	int n_dirs = cache_dirs(dirs);

	out->halves_measured = 0;
	memset(&out->halves, 0, sizeof(out->halves));
	for (int d = 0; d < n_dirs; d++) {
		snprintf(path, sizeof(path), "%.255s/%.47s.mem", dirs[d], out->key.uuid);
		if (read_trusted(path, text, sizeof(text)) == 0 &&
		    nvt_membw_parse(text, out->key.uuid, 2 * out->topo.n_tpcs, out->topo.n_gpcs,
				    &out->halves) == 0) {
			out->halves_measured = 1;
			return;
		}
	}
}

int nvt_gpu_probe_halves(struct nvt_gpu_topology *gt, int timeout_ms, struct nvt_bwprobe_result *res,
			 char *err, size_t errlen)
{
	char dirs[2][256], name[64], path[600], text[NVT_MEMBW_TEXT_MAX];
	int n_dirs = cache_dirs(dirs), w = write_dir_of(n_dirs);
	uint8_t uuid[16];
	struct nvt_gpu_info info;

	memset(&info, 0, sizeof(info));
	if (nvt_uuid_parse(gt->key.uuid, uuid)) {
		snprintf(err, errlen, "GPU %d has a malformed UUID '%s'", gt->index, gt->key.uuid);
		return -1;
	}
	if (nvt_gpu_query(uuid, timeout_ms, &info)) {
		snprintf(err, errlen, "cannot query GPU %d: %s", gt->index, info.error);
		return -1;
	}
	if (nvt_bwprobe(info.ordinal, &gt->topo, timeout_ms, res, err, errlen))
		return -1;
	gt->halves = res->halves;
	gt->halves_measured = 1;
	snprintf(name, sizeof(name), "%.47s.mem", gt->key.uuid);
	if (nvt_membw_format(gt->key.uuid, 2 * gt->topo.n_tpcs, &res->halves, text, sizeof(text)) < 0)
		snprintf(gt->note, sizeof(gt->note), "cannot write the memory halves of GPU %d as a "
			 "record; they are not kept", gt->index);
	else if (save(dirs[w], name, text, path, sizeof(path)))
		snprintf(gt->note, sizeof(gt->note),
			 "cannot save the memory halves in %.250s (%s); they are not kept", dirs[w],
			 strerror(errno));
	return 0;
}

int nvt_gpu_topology(const struct nvt_gpus *gpus, int index, int force, int timeout_ms,
		     FILE *progress, struct nvt_gpu_topology *out, char *err, size_t errlen)
{
	const struct nvt_gpu_id *id = &gpus->id[index];
	struct nvt_cache_key fast, found;
	uint8_t uuid[16];
	char dirs[2][256], path[600], text[NVT_CACHE_TEXT_MAX], why[400];
	int n_dirs = cache_dirs(dirs), write_dir;
	double start;

	memset(out, 0, sizeof(*out));
	out->index = index;
	if (nvt_uuid_parse(id->uuid, uuid)) {
		snprintf(err, errlen, "GPU %d has a malformed UUID '%s'", index, id->uuid);
		return -1;
	}
	/* Fast: measured under this very kernel module; no driver call. */
	memset(&fast, 0, sizeof(fast));
	snprintf(fast.uuid, sizeof(fast.uuid), "%s", id->uuid);
	snprintf(fast.nvrm, sizeof(fast.nvrm), "%s", gpus->nvrm);
	if (!force && strcmp(fast.nvrm, "-") && read_cache(dirs, n_dirs, &fast, out, &out->key) == 0) {
		snprintf(out->info.name, sizeof(out->info.name), "%s", id->model);
		out->info.sms = out->key.sms;
		out->info.driver_version = out->key.driver_version;
		memcpy(out->info.uuid, uuid, sizeof(uuid));
		return 0;
	}
	if (nvt_gpu_query(uuid, timeout_ms, &out->info)) {
		int hidden = !strncmp(out->info.error, NVT_GPU_NOT_VISIBLE, strlen(NVT_GPU_NOT_VISIBLE));
		if (hidden)
			snprintf(err, errlen, "GPU %d (%s) is %s", index, id->uuid, out->info.error);
		else
			snprintf(err, errlen, "cannot query GPU %d: %s", index, out->info.error);
		return hidden ? NVT_GPU_HIDDEN : -1;
	}
	snprintf(out->key.uuid, sizeof(out->key.uuid), "%s", id->uuid);
	out->key.driver_version = out->info.driver_version;
	out->key.sms = out->info.sms;
	snprintf(out->key.nvrm, sizeof(out->key.nvrm), "%s", gpus->nvrm);
	if (!force && read_cache(dirs, n_dirs, &out->key, out, &found) == 0) {
		/* Measured before the module's version was known: note it, so that
		 * the next start can skip the driver. */
		if (!strcmp(found.nvrm, "-") && strcmp(out->key.nvrm, "-") &&
		    nvt_cache_format(&out->key, &out->topo, text, sizeof(text)) > 0) {
			snprintf(path, sizeof(path), "%s.topo", out->key.uuid);
			save(dirs[write_dir_of(n_dirs)], path, text,
			     out->cache_path, sizeof(out->cache_path));
		}
		return 0;
	}
	if (progress)
		fprintf(progress, "nvtaskset: calibrating GPU %d (%s)...\n", index, out->info.name);
	start = now_s();
	/* Bit-by-bit progress is for a person at a terminal, not for logs. */
	if (nvt_calibrate(out->info.ordinal, timeout_ms, progress && isatty(fileno(progress)),
			  &out->topo, why, sizeof(why))) {
		snprintf(err, errlen, "cannot calibrate GPU %d: %s", index, why);
		return -1;
	}
	out->seconds = now_s() - start;
	write_dir = write_dir_of(n_dirs);
	snprintf(path, sizeof(path), "%s.topo", out->key.uuid);
	if (nvt_cache_format(&out->key, &out->topo, text, sizeof(text)) < 0 ||
	    save(dirs[write_dir], path, text, out->cache_path, sizeof(out->cache_path))) {
		snprintf(out->note, sizeof(out->note),
			 "cannot save the calibration in %.250s (%s); it will be measured again next "
			 "time",
			 dirs[write_dir], strerror(errno));
		out->cache_path[0] = '\0';
	}
	if (progress)
		fprintf(progress, "nvtaskset: calibrated GPU %d in %.2f s\n", index, out->seconds);
	return 0;
}
