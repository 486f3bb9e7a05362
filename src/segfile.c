/*
 * segfile.c - control segment files.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segfile.h"
#include "segment.h"
#include "sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *nvt_rundir(void)
{
	const char *dir = getenv(NVT_ENV_RUNDIR);
	if (dir && dir[0] == '/' && strlen(dir) < 200)
		return dir;
	return NVT_DEFAULT_RUNDIR;
}

int nvt_seg_path(char *buf, size_t len, const char *rundir, pid_t pid)
{
	int n = snprintf(buf, len, "%s/" NVT_SEG_PREFIX "%ld", rundir, (long)pid);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int nvt_proc_start_time(pid_t pid, uint64_t *start_time)
{
	char path[64], buf[1024];
	const char *p;
	char *end;
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (nvt_read_file(path, buf, sizeof(buf), 0) < 0)
		return -1;
	/* comm may hold spaces and parentheses: fields resume after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		goto bad;
	p++;
	/* A zombie (killed, not yet reaped) is gone as far as partitions go. */
	if (p[1] == 'Z' || p[1] == 'X') {
		errno = ESRCH;
		return -1;
	}
	/* After ")" come fields 3 .. ; start time is field 22. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			goto bad;
	}
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1 || *end != ' ')
		goto bad;
	*start_time = v;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int nvt_proc_euid(pid_t pid, uid_t *euid)
{
	char path[64], buf[4096];
	const char *line;
	unsigned long ruid, uid;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (nvt_read_file(path, buf, sizeof(buf), 0) < 0)
		return -1;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu", &ruid, &uid) != 2) {
		errno = EINVAL;
		return -1;
	}
	*euid = (uid_t)uid;
	return 0;
}

/* Maps a segment-sized file read-write. */
static struct nvt_segment *map_segment(int fd)
{
	void *p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct nvt_segment *nvt_seg_create(const char *rundir, int *adopted)
{
	char path[256];
	pid_t pid = getpid();
	uint64_t start;
	struct stat st;
	struct nvt_segment *seg;
	int fd, saved;

	*adopted = 0;
	if (nvt_seg_path(path, sizeof(path), rundir, pid) || nvt_proc_start_time(pid, &start)) {
		errno = errno ? errno : ENAMETOOLONG;
		return NULL;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			close(fd);
			errno = EEXIST; /* someone else's file sits at our path */
			return NULL;
		}
		if ((size_t)st.st_size == sizeof(*seg) && (seg = map_segment(fd))) {
			if (nvt_seg_check(seg, sizeof(*seg)) == NVT_SEG_VALID && seg->pid == pid &&
			    seg->start_time == start) {
				*adopted = 1; /* this process exec'd: keep its partition */
				close(fd);
				return seg;
			}
			munmap(seg, sizeof(*seg));
		}
		/* A dead process's leftover: start afresh. */
		if (ftruncate(fd, 0))
			goto fail;
	}
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*seg)) || !(seg = map_segment(fd)))
		goto fail;
	nvt_seg_init(seg, pid, (uint32_t)geteuid(), start);
	close(fd);
	return seg;
fail:
	saved = errno;
	close(fd);
	unlink(path);
	errno = saved;
	return NULL;
}

int nvt_seg_open(const char *rundir, pid_t pid, int writable, struct nvt_seg_handle *h)
{
	char path[256];
	uint64_t start;
	uid_t owner;
	struct stat st;
	int rc;
	void *p;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->pid = pid;
	if (pid <= 0)
		return NVT_SEG_ENOPROC;
	if (nvt_proc_euid(pid, &owner) || nvt_proc_start_time(pid, &start))
		return errno == ENOENT || errno == ESRCH ? NVT_SEG_ENOPROC : NVT_SEG_ESYS;
	h->owner = owner;
	if (geteuid() != 0 && geteuid() != owner)
		return NVT_SEG_EPERM;
	if (nvt_seg_path(path, sizeof(path), rundir, pid))
		return NVT_SEG_ENOTASK;
	h->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
	if (h->fd < 0) {
		if (errno == ENOENT)
			return NVT_SEG_ENOTASK;
		if (errno == EACCES || errno == EPERM)
			return NVT_SEG_EPERM;
		return NVT_SEG_ESYS;
	}
	rc = NVT_SEG_ECORRUPT;
	if (fstat(h->fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	if (st.st_uid != owner) {
		rc = NVT_SEG_ENOTASK; /* not created by the task: never trust it */
		goto fail;
	}
	if ((size_t)st.st_size < offsetof(struct nvt_segment, gpu))
		goto fail;
	p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED,
		 h->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	h->seg = p;
	switch (nvt_seg_check(h->seg, (size_t)st.st_size)) {
	case NVT_SEG_VALID:
		break;
	case NVT_SEG_BAD_VERSION:
		h->found_version = h->seg->version;
		rc = NVT_SEG_EVERSION;
		goto fail;
	default:
		goto fail;
	}
	if (h->seg->pid != pid || h->seg->start_time != start) {
		rc = NVT_SEG_ENOTASK; /* left by an earlier process with this PID */
		goto fail;
	}
	return NVT_SEG_OK;
fail:
	nvt_seg_close(h);
	return rc;
}

int nvt_seg_lock(struct nvt_seg_handle *h, int timeout_ms)
{
	struct timespec pause = {0, 1000000};

	for (int waited = 0;; waited++) {
		if (flock(h->fd, LOCK_EX | LOCK_NB) == 0)
			return NVT_SEG_OK;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return NVT_SEG_ESYS;
		if (waited >= timeout_ms)
			return NVT_SEG_EBUSY;
		nanosleep(&pause, NULL);
	}
}

void nvt_seg_close(struct nvt_seg_handle *h)
{
	if (h->seg)
		munmap(h->seg, sizeof(struct nvt_segment));
	if (h->fd >= 0)
		close(h->fd); /* also drops the flock */
	h->seg = NULL;
	h->fd = -1;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int nvt_seg_scan(const char *rundir, pid_t *pids, int max)
{
	DIR *dir = opendir(rundir);
	struct dirent *ent;
	int n = 0;

	if (!dir)
		return -1;
	while ((ent = readdir(dir))) {
		const char *name = ent->d_name, *digits;
		char *end;
		long v;

		if (strncmp(name, NVT_SEG_PREFIX, strlen(NVT_SEG_PREFIX)) != 0)
			continue;
		digits = name + strlen(NVT_SEG_PREFIX);
		if (*digits < '1' || *digits > '9')
			continue;
		errno = 0;
		v = strtol(digits, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff)
			continue;
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
	}
	closedir(dir);
	qsort(pids, (size_t)(n < max ? n : max), sizeof(*pids), cmp_pid);
	return n;
}
