/*
 * topocache.c - the calibration cache's directories and trusted records, and
 * the GPUs the kernel module lists (topocache.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "topocache.h"
#include "driverinfo.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nvt_cache_dirs(char dirs[2][256])
{
	const char *env = secure_getenv(NVT_ENV_CACHE_DIR), *xdg = secure_getenv(NVT_ENV_XDG_CACHE_HOME),
		   *home = secure_getenv(NVT_ENV_HOME);
	int n = 0;

	if (env && env[0] == '/') {
		snprintf(dirs[0], sizeof(dirs[0]), "%s", env);
		return 1;
	}
	snprintf(dirs[n++], sizeof(dirs[0]), NVT_SYSTEM_CACHE_DIR);
	if (geteuid() != 0) {
		if (xdg && xdg[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/nvtaskset", xdg);
		else if (home && home[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/.cache/nvtaskset", home);
	}
	return n;
}

int nvt_cache_read_trusted(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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

int nvt_cache_dir_shared(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 022);
}

/* Reads dir/name if trusted and accepted. Returns 0 (path filled) or -1. */
static int read_named(const char *dir, const char *name, int (*accept)(const char *, void *),
		      void *arg, char *buf, size_t len, char *path, size_t pathlen)
{
	char file[600];

	snprintf(file, sizeof(file), "%.255s/%.300s", dir, name);
	if (nvt_cache_read_trusted(file, buf, len) || !accept(buf, arg))
		return -1;
	if (path)
		snprintf(path, pathlen, "%s", file);
	return 0;
}

int nvt_cache_read_record(const char *dir, const char *uuid, const char *ext,
			  int (*accept)(const char *text, void *arg), void *arg, char *buf, size_t len,
			  char *path, size_t pathlen)
{
	char name[128], prefix[96], suffix[16];
	struct dirent *ent;
	int rc = -1;
	DIR *d;

	snprintf(name, sizeof(name), "%.47s.%.8s", uuid, ext);
	if (read_named(dir, name, accept, arg, buf, len, path, pathlen) == 0)
		return 0;
	if (geteuid() == 0)
		return -1; /* root's record has one name */
	snprintf(name, sizeof(name), "%.47s.u%lu.%.8s", uuid, (unsigned long)geteuid(), ext);
	if (read_named(dir, name, accept, arg, buf, len, path, pathlen) == 0)
		return 0;
	if (!nvt_cache_dir_shared(dir) || !(d = opendir(dir)))
		return -1;
	/* Where another user took that name first: her own, by a name made afresh. */
	snprintf(prefix, sizeof(prefix), "%.47s.u%lu.", uuid, (unsigned long)geteuid());
	snprintf(suffix, sizeof(suffix), ".%.8s", ext);
	while (rc && (ent = readdir(d))) {
		size_t n = strlen(ent->d_name);
		if (!strncmp(ent->d_name, prefix, strlen(prefix)) && n > strlen(prefix) + strlen(suffix) &&
		    !strcmp(ent->d_name + n - strlen(suffix), suffix))
			rc = read_named(dir, ent->d_name, accept, arg, buf, len, path, pathlen);
	}
	closedir(d);
	return rc;
}

/* What nvt_cache_find accepts: a topology record of its key. */
struct topo_want {
	const struct nvt_cache_key *key;
	struct nvt_topology *topo;
	struct nvt_cache_key *found;
};

static int accept_topo(const char *text, void *arg)
{
	struct topo_want *w = arg;
	return nvt_cache_parse(text, w->key, w->topo, w->found) == NVT_CACHE_OK;
}

int nvt_cache_find(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		   struct nvt_topology *topo, struct nvt_cache_key *found, char *path, size_t pathlen)
{
	char text[NVT_CACHE_TEXT_MAX];
	struct topo_want want = {key, topo, found};

	for (int d = 0; d < n_dirs; d++)
		if (nvt_cache_read_record(dirs[d], key->uuid, "topo", accept_topo, &want, text, sizeof(text),
					  path, pathlen) == 0)
			return 0;
	return -1;
}

const char *nvt_gpus_proc_dir(void)
{
	const char *dir = secure_getenv(NVT_ENV_PROC_NVIDIA);
	return dir && dir[0] == '/' && strlen(dir) < 200 ? dir : "/proc/driver/nvidia";
}

void nvt_module_version(char *out, size_t len)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "%s/version", nvt_gpus_proc_dir());
	if (nvt_read_file(path, text, sizeof(text), 0) < 0 || nvt_parse_nvrm_version(text, out, len))
		snprintf(out, len, "-");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int nvt_gpus_from_proc(struct nvt_gpu_id *ids, int max)
{
	char dir[256], path[600], text[4096];
	static char names[NVT_MACHINE_GPUS][256];
	char *sorted[NVT_MACHINE_GPUS];
	struct dirent *ent;
	int n = 0;
	DIR *d;

	if (max > NVT_MACHINE_GPUS)
		max = NVT_MACHINE_GPUS;
	snprintf(dir, sizeof(dir), "%s/gpus", nvt_gpus_proc_dir());
	d = opendir(dir);
	if (!d)
		return -1;
	while ((ent = readdir(d))) {
		if (ent->d_name[0] == '.')
			continue;
		if (n == max) {
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
		    nvt_parse_gpu_information(text, ids[g].uuid, sizeof(ids[g].uuid), ids[g].model,
					      sizeof(ids[g].model)))
			return -1;
	}
	return n;
}

int nvt_gpus_visible_of(const struct nvt_gpu_id *ids, int n, int from_proc, int *idx)
{
	const char *visible = secure_getenv(NVT_ENV_CUDA_VISIBLE),
		   *order = secure_getenv(NVT_ENV_CUDA_ORDER);
	int count = -1;

	/* Listed by CUDA: already what this environment sees. */
	if (from_proc && visible)
		count = nvt_visible_gpus(visible, ids, n, order && !strcmp(order, "PCI_BUS_ID"), idx);
	if (count < 0) {
		for (int g = 0; g < n; g++)
			idx[g] = g;
		count = n;
	}
	return count;
}
