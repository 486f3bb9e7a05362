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

int nvt_cache_find(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		   struct nvt_topology *topo, struct nvt_cache_key *found, char *path, size_t pathlen)
{
	char file[600], text[NVT_CACHE_TEXT_MAX];

	for (int d = 0; d < n_dirs; d++) {
		snprintf(file, sizeof(file), "%.255s/%.47s.topo", dirs[d], key->uuid);
		if (nvt_cache_read_trusted(file, text, sizeof(text)) == 0 &&
		    nvt_cache_parse(text, key, topo, found) == NVT_CACHE_OK) {
			if (path)
				snprintf(path, pathlen, "%s", file);
			return 0;
		}
	}
	return -1;
}

const char *nvt_proc_nvidia(void)
{
	const char *dir = secure_getenv(NVT_ENV_PROC_NVIDIA);
	return dir && dir[0] == '/' && strlen(dir) < 200 ? dir : "/proc/driver/nvidia";
}

void nvt_module_version(char *out, size_t len)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "%s/version", nvt_proc_nvidia());
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
	static char names[NVT_GPUS_MAX][256];
	char *sorted[NVT_GPUS_MAX];
	struct dirent *ent;
	int n = 0;
	DIR *d;

	if (max > NVT_GPUS_MAX)
		max = NVT_GPUS_MAX;
	snprintf(dir, sizeof(dir), "%s/gpus", nvt_proc_nvidia());
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
