/*
 * gpus.c - the machine's GPUs and their cached or measured topologies.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpus.h"
#include "core/text.h"
#include "calibrate.h"
#include "driverinfo.h"
#include "os/sysutil.h"
#include "os/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* Removes the caller's records of kind ext for uuid in dir named afresh
 * (UUID.uUID.R.EXT, topocache.h) but keep. */
static void drop_other_records(const char *dir, const char *uuid, const char *ext, const char *keep)
{
	char prefix[96], suffix[16];
	struct dirent *ent;
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(prefix, sizeof(prefix), "%.47s.u%lu.", uuid, (unsigned long)geteuid());
	snprintf(suffix, sizeof(suffix), ".%.8s", ext);
	while ((ent = readdir(d))) {
		size_t n = strlen(ent->d_name);
		if (strncmp(ent->d_name, prefix, strlen(prefix)) || n <= strlen(prefix) + strlen(suffix) ||
		    strcmp(ent->d_name + n - strlen(suffix), suffix) || !strcmp(ent->d_name, keep))
			continue;
		if (fstatat(fd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(fd, ent->d_name, 0);
	}
	closedir(d);
}

/*
 * Saves text as the caller's record of kind ext for uuid in dir (the names of
 * topocache.h), atomically, readable by all; its path into path. Returns 0,
 * or -1 with errno set.
 */
static int save(const char *dir, const char *uuid, const char *ext, const char *text, char *path,
		size_t len)
{
	char tmp[600], name[128];
	size_t n = strlen(text);
	int fd, saved, per_user;

	if (nvt_mkdirs(dir, 0755))
		return -1;
	per_user = geteuid() != 0 && nvt_cache_dir_shared(dir);
	if (per_user)
		snprintf(name, sizeof(name), "%.47s.u%lu.%.8s", uuid, (unsigned long)geteuid(), ext);
	else
		snprintf(name, sizeof(name), "%.47s.%.8s", uuid, ext);
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
	if (rename(tmp, path) == 0) {
		if (per_user)
			drop_other_records(dir, uuid, ext, name);
		return 0;
	}
	saved = errno;
	/* In a shared directory, another user made something of her name first
	 * (a file of hers, a FIFO, a directory), which a sticky directory keeps
	 * the caller from replacing: a name made afresh, which nobody has. */
	for (int tries = 0; per_user && tries < 16; tries++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(name, sizeof(name), "%.47s.u%lu.%lx%lx.%.8s", uuid, (unsigned long)geteuid(),
			 (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 20), (unsigned long)tries,
			 ext);
		snprintf(path, len, "%.255s/%.200s", dir, name);
		if (link(tmp, path) == 0) {
			unlink(tmp);
			drop_other_records(dir, uuid, ext, name);
			return 0;
		}
		saved = errno;
		if (saved != EEXIST)
			break;
	}
	unlink(tmp);
	errno = saved;
	return -1;
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

int nvt_gpus_list(int timeout_ms, struct nvt_gpus *out, char *why, size_t len)
{
	static struct nvt_gpu_list list;
	char detail[256];
	int n;

	memset(out, 0, sizeof(*out));
	nvt_module_version(out->nvrm, sizeof(out->nvrm));
	n = nvt_gpus_from_proc(out->id, NVT_MACHINE_GPUS);
	if (n > 0) {
		out->n = n;
		out->from_proc = 1;
		parse_uuids(out);
		return 0;
	}
	memset(out->id, 0, sizeof(out->id));
	if (nvt_gpu_enumerate(timeout_ms, &list, detail, sizeof(detail))) {
		snprintf(why, len, "cannot list the GPUs: %s", detail);
		return -1;
	}
	if (list.count == 0) {
		snprintf(why, len, "CUDA sees no GPU");
		return -1;
	}
	for (int g = 0; g < list.count && g < NVT_MACHINE_GPUS; g++) {
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

/* What nvt_gpu_read_halves accepts: a memory halves record of out's GPU. */
static int accept_halves(const char *text, void *arg)
{
	struct nvt_gpu_topology *out = arg;
	return nvt_membw_parse(text, out->key.uuid, 2 * out->topo.n_tpcs, out->topo.n_gpcs,
			       &out->halves) == 0;
}

void nvt_gpu_read_halves(struct nvt_gpu_topology *out)
{
	char dirs[2][256], text[NVT_MEMBW_TEXT_MAX + 64];
	int n_dirs = nvt_cache_dirs(dirs);

	out->halves_measured = 0;
	memset(&out->halves, 0, sizeof(out->halves));
	for (int d = 0; d < n_dirs; d++)
		if (nvt_cache_read_record(dirs[d], out->key.uuid, "mem", accept_halves, out, text,
					  sizeof(text), NULL, 0) == 0) {
			out->halves_measured = 1;
			return;
		}
}

int nvt_gpu_probe_halves(struct nvt_gpu_topology *gt, int timeout_ms, struct nvt_bwprobe_result *res,
			 char *why, size_t len)
{
	char dirs[2][256], path[600], text[NVT_MEMBW_TEXT_MAX], detail[256];
	int n_dirs = nvt_cache_dirs(dirs), w = write_dir_of(n_dirs);
	uint8_t uuid[16];
	struct nvt_gpu_info info;

	memset(&info, 0, sizeof(info));
	if (nvt_uuid_parse(gt->key.uuid, uuid)) {
		snprintf(why, len, "GPU %d has a malformed UUID '%s'", gt->index, gt->key.uuid);
		return -1;
	}
	if (nvt_gpu_query(uuid, timeout_ms, &info, detail, sizeof(detail))) {
		snprintf(why, len, "cannot query GPU %d: %s", gt->index, detail);
		return -1;
	}
	if (nvt_bwprobe(info.ordinal, &gt->topo, timeout_ms, res, why, len))
		return -1;
	gt->halves = res->halves;
	gt->halves_measured = 1;
	if (nvt_membw_format(gt->key.uuid, 2 * gt->topo.n_tpcs, &res->halves, text, sizeof(text)) < 0)
		snprintf(gt->note, sizeof(gt->note), "cannot write the memory halves of GPU %d as a "
			 "record; they are not kept", gt->index);
	else if (save(dirs[w], gt->key.uuid, "mem", text, path, sizeof(path)))
		snprintf(gt->note, sizeof(gt->note),
			 "cannot save the memory halves in %.250s (%s); they are not kept", dirs[w],
			 strerror(errno));
	return 0;
}

int nvt_gpu_topology(const struct nvt_gpus *gpus, int index, int force, int timeout_ms,
		     FILE *progress, struct nvt_gpu_topology *out, char *why, size_t len)
{
	const struct nvt_gpu_id *id = &gpus->id[index];
	struct nvt_cache_key fast, found;
	uint8_t uuid[16];
	char dirs[2][256], text[NVT_CACHE_TEXT_MAX], detail[400];
	int n_dirs = nvt_cache_dirs(dirs), write_dir;
	double start;

	memset(out, 0, sizeof(*out));
	out->index = index;
	if (nvt_uuid_is_zero(id->uuid_bytes)) {
		snprintf(why, len, "GPU %d has a malformed UUID '%s'", index, id->uuid);
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
	if (nvt_gpu_query(uuid, timeout_ms, &out->info, detail, sizeof(detail))) {
		int hidden = !strncmp(detail, NVT_GPU_NOT_VISIBLE, strlen(NVT_GPU_NOT_VISIBLE));
		if (hidden)
			snprintf(why, len, "GPU %d (%s) is %s", index, id->uuid, detail);
		else
			snprintf(why, len, "cannot query GPU %d: %s", index, detail);
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
			save(dirs[write_dir_of(n_dirs)], out->key.uuid, "topo", text, out->cache_path,
			     sizeof(out->cache_path));
		}
		return 0;
	}
	if (progress)
		fprintf(progress, "nvtaskset: calibrating GPU %d (%s)...\n", index, out->info.name);
	start = nvt_clock_s();
	/* Bit-by-bit progress is for a person at a terminal, not for logs. */
	if (nvt_calibrate(out->info.ordinal, timeout_ms, progress && isatty(fileno(progress)),
			  &out->topo, detail, sizeof(detail))) {
		snprintf(why, len, "cannot calibrate GPU %d: %s", index, detail);
		return -1;
	}
	out->seconds = nvt_clock_s() - start;
	write_dir = write_dir_of(n_dirs);
	if (nvt_cache_format(&out->key, &out->topo, text, sizeof(text)) < 0 ||
	    save(dirs[write_dir], out->key.uuid, "topo", text, out->cache_path, sizeof(out->cache_path))) {
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

int nvt_gpus_timeout_ms(const char *text)
{
	uint64_t v;
	const char *end;

	if (!text || !*text)
		return NVT_DRIVER_TIMEOUT_S * 1000;
	end = nvt_decimal(text + (text[0] == '+'), 3600, &v);
	return end && !*end && v ? (int)v * 1000 : -1;
}
