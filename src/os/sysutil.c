/*
 * sysutil.c - directories, small files, processes.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nvt_mkdirs(const char *dir, mode_t mode)
{
	char partial[512];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(partial) || dir[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 1; i <= n; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		memcpy(partial, dir, i);
		partial[i] = '\0';
		if (mkdir(partial, mode) && errno != EEXIST)
			return -1;
	}
	return 0;
}

ssize_t nvt_read_file(const char *path, char *buf, size_t len, int tail)
{
	/* Not blocking, and only regular files: a FIFO put where a file should
	 * be must not hang the reader. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;
	int saved;

	if (fd < 0)
		return -1;
	if (len == 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (tail) {
		off_t size = lseek(fd, 0, SEEK_END);
		if (size < 0 ||
		    lseek(fd, size > (off_t)len - 1 ? size - (off_t)len + 1 : 0, SEEK_SET) < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
	}
	n = read(fd, buf, len - 1);
	saved = errno;
	close(fd);
	errno = saved;
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int nvt_proc_links(struct nvt_proc_link **links)
{
	struct nvt_proc_link *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *ent;
	DIR *proc;

	*links = NULL;
	proc = opendir("/proc");
	if (!proc)
		return -1;
	while ((ent = readdir(proc))) {
		char path[64], text[1024];
		struct nvt_stat st;
		char *end;
		long pid = strtol(ent->d_name, &end, 10);

		if (*end || end == ent->d_name || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (nvt_read_file(path, text, sizeof(text), 0) < 0) {
			if (errno == ENOENT || errno == ESRCH)
				continue; /* ended meanwhile */
			/* Out of descriptors or memory: a list without this process
			 * would hide it (and its tasks) from -a -p and -l. */
			int saved = errno;
			free(v);
			closedir(proc);
			errno = saved;
			return -1;
		}
		if (nvt_stat_parse(text, &st))
			continue; /* a zombie's, or ended while read */
		if (n == cap) {
			size_t more = cap ? cap * 2 : 256;
			struct nvt_proc_link *bigger = realloc(v, more * sizeof(*v));
			if (!bigger) {
				free(v);
				closedir(proc);
				errno = ENOMEM;
				return -1;
			}
			v = bigger;
			cap = more;
		}
		v[n].pid = st.pid;
		v[n++].ppid = st.ppid;
	}
	closedir(proc);
	nvt_links_sort(v, n);
	*links = v;
	return (int)n;
}

int nvt_proc_tgid(pid_t tid, pid_t *tgid)
{
	char path[64], status[4096], *line;
	long v;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	if (nvt_read_file(path, status, sizeof(status), 0) < 0)
		return -1;
	line = strstr(status, "\nTgid:");
	if (!line || sscanf(line + 6, "%ld", &v) != 1 || v <= 0) {
		errno = EINVAL;
		return -1;
	}
	*tgid = (pid_t)v;
	return 0;
}

int nvt_proc_env(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	static char env[65536];
	size_t n = strlen(name);
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	got = nvt_read_file(path, env, sizeof(env), 0);
	if (got <= 0)
		return -1;
	for (char *p = env; p < env + got; p += strlen(p) + 1)
		if (!strncmp(p, name, n) && p[n] == '=') {
			snprintf(buf, len, "%s", p + n + 1);
			return 0;
		}
	return -1;
}
