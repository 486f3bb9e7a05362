/*
 * agentbeat.c - an agent's heartbeat: it touches its pid file
 * (NVT_AGENT_PID_NAME) every NVT_AGENT_HEARTBEAT_MS, and a task whose agent
 * lent it TPCs gives them back itself once no agent has touched one within
 * NVT_AGENT_LEASE_MS (the shim, shimlease.c; see agent.h). Linked by the
 * command and the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "agentbeat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seg/segfile.h"

void nvt_agent_heartbeat(const char *base)
{
	int dirfd = nvt_userdir_open(base, geteuid());

	if (dirfd < 0)
		return;
	/* Its own file, written when it took the lock; never through a link. */
	utimensat(dirfd, NVT_AGENT_PID_NAME, NULL, AT_SYMLINK_NOFOLLOW);
	close(dirfd);
}

int nvt_agent_fresh(const char *base, uid_t uid, int max_ms)
{
	struct timespec now;
	struct stat st;
	int64_t age_ms;
	int dirfd = nvt_userdir_open(base, uid), rc;

	if (dirfd < 0)
		return 0;
	rc = fstatat(dirfd, NVT_AGENT_PID_NAME, &st, AT_SYMLINK_NOFOLLOW);
	close(dirfd);
	if (rc || !S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1 ||
	    clock_gettime(CLOCK_REALTIME, &now))
		return 0;
	age_ms = ((int64_t)now.tv_sec - (int64_t)st.st_mtim.tv_sec) * 1000 +
		 ((int64_t)now.tv_nsec - (int64_t)st.st_mtim.tv_nsec) / 1000000;
	/* (A time ahead of ours, beyond the lease, is no heartbeat either.) */
	return age_ms < max_ms && age_ms > -(int64_t)max_ms;
}
