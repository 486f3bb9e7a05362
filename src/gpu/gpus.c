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

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* Reads a cached record for key from the cache directories into out. Returns 0 or -1. */
static int read_cache(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		      struct nvt_gpu_topology *out, struct nvt_cache_key *found)
{
	if (nvt_cache_find(dirs, n_dirs, key, &out->topo, found, out->cache_path,
			   sizeof(out->cache_path)))
		return -1;
	out->from_cache = 1;
	return 0;
}

/* Each GPU's UUID as bytes, parsed once here (zero where malformed). */
static void parse_uuids(struct nvt_gpus *gpus)
{
	for (int g = 0; g < gpus->n; g++)
		if (nvt_uuid_parse(gpus->id[g].uuid, gpus->id[g].uuid_bytes))
			memset(gpus->id[g].uuid_bytes, 0, 16);
}

int nvt_gpus_find(const struct nvt_gpus *gpus, const uint8_t uuid[16])
{
	for (int g = 0; gpus && g < gpus->n; g++)
		if (!nvt_uuid_is_zero(gpus->id[g].uuid_bytes) && !memcmp(gpus->id[g].uuid_bytes, uuid, 16))
			return g;
	return -1;
}

int nvt_gpus_list(int timeout_ms, struct nvt_gpus *out, char *err, size_t errlen)
{
	static struct nvt_gpu_list list;
	int n;

	memset(out, 0, sizeof(*out));
	nvt_module_version(out->nvrm, sizeof(out->nvrm));
	n = nvt_gpus_from_proc(out->id, NVT_GPUS_MAX);
	if (n > 0) {
		out->n = n;
		out->from_proc = 1;
		parse_uuids(out);
		return 0;
	}
	memset(out->id, 0, sizeof(out->id));
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
	parse_uuids(out);
	return 0;
}

int nvt_gpus_visible(const struct nvt_gpus *gpus, int *idx)
{
	return nvt_gpus_visible_of(gpus->id, gpus->n, gpus->from_proc, idx);
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
	int n_dirs = nvt_cache_dirs(dirs);

	out->halves_measured = 0;
	memset(&out->halves, 0, sizeof(out->halves));
	for (int d = 0; d < n_dirs; d++) {
		snprintf(path, sizeof(path), "%.255s/%.47s.mem", dirs[d], out->key.uuid);
		if (nvt_cache_read_trusted(path, text, sizeof(text)) == 0 &&
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
	int n_dirs = nvt_cache_dirs(dirs), w = write_dir_of(n_dirs);
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
	int n_dirs = nvt_cache_dirs(dirs), write_dir;
	double start;

	memset(out, 0, sizeof(*out));
	out->index = index;
	if (nvt_uuid_is_zero(id->uuid_bytes)) {
		snprintf(err, errlen, "GPU %d has a malformed UUID '%s'", index, id->uuid);
		return -1;
	}
	memcpy(uuid, id->uuid_bytes, 16);
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
