/*
 * mps.c - the MPS control daemon ([ECRTS25] section 5.2; docs/hardware-facts.md, 6).
 *
 * The daemon writes its PID to nvidia-cuda-mps-control.pid in its pipe
 * directory; "echo quit | nvidia-cuda-mps-control" stops it.
 *
 * Over 500 lines on purpose: the daemon's start, query and stop share its
 * directories' checks and the one lock of its start.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "mps.h"
#include "nvtaskset.h"
#include "core/mpslog.h"
#include "core/prio.h"
#include "core/yield.h"
#include "os/child.h"
#include "os/proc.h"
#include "os/sysutil.h"
#include "os/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONTROL "nvidia-cuda-mps-control"
#define PID_FILE "nvidia-cuda-mps-control.pid"
#define SYSTEM_TMP "/tmp"
#define SYSTEM_PIPE_DIR SYSTEM_TMP "/nvidia-mps"
#define SYSTEM_LOG_DIR "/var/log/nvidia-mps"
#define START_LOCK "nvtaskset-start.lock"

/* Where NVIDIA's installers put the MPS binaries, after $PATH. */
static const char *const driver_dirs[] = {
	"/usr/local/nvidia/bin", "/usr/bin", "/usr/sbin", "/usr/local/bin",
	"/usr/lib/nvidia", "/opt/nvidia/bin",
};

static int find_in(const char *dir, size_t dir_len, char *out, size_t len)
{
	int n = snprintf(out, len, "%.*s/" CONTROL, (int)dir_len, dir);
	return n > 0 && (size_t)n < len && access(out, X_OK) == 0;
}

static void find_control(struct nvt_mps *mps)
{
	const char *path = getenv("PATH");

	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n && find_in(path, n, mps->control, sizeof(mps->control)))
			return;
		path = end ? end + 1 : NULL;
	}
	for (size_t i = 0; i < sizeof(driver_dirs) / sizeof(driver_dirs[0]); i++)
		if (find_in(driver_dirs[i], strlen(driver_dirs[i]), mps->control,
			    sizeof(mps->control)))
			return;
	mps->control[0] = '\0';
}

/*
 * Checks one of the daemon's directories: a directory (not a link) of root's
 * or the caller's that nobody else may write in; a pipe directory may be
 * sticky instead (the daemon's pid file is checked for its owner), a log
 * directory may not (anyone could write the server.log whose "last fatal
 * error" --mps status shows). One that does not exist yet passes
 * (nvt_mps_start makes it, and checks again). Returns 0, or -1 with the reason
 * in why; *owner: the entry's owner, refused or not ((uid_t)-1 where it could
 * not be looked at).
 */
static int check_dir(const char *dir, int sticky_ok, uid_t *owner, char *why, size_t len)
{
	struct stat st;

	*owner = (uid_t)-1;
	if (lstat(dir, &st)) {
		if (errno != ENOENT) {
			snprintf(why, len, "%s", strerror(errno));
			return -1;
		}
		*owner = geteuid();
		return 0;
	}
	*owner = st.st_uid;
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, len, "it is a symbolic link");
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "it is not a directory");
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len, "it belongs to uid %lu", (unsigned long)st.st_uid);
		return -1;
	}
	if ((st.st_mode & 022) && !(sticky_ok && (st.st_mode & S_ISVTX))) {
		snprintf(why, len, "others may write in it (mode %04o)", (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

static int check_pipe_dir(const char *dir, uid_t *owner, char *why, size_t len)
{
	return check_dir(dir, 1, owner, why, len);
}

/*
 * Says in why that the daemon's directory dir (what: "pipe" or "log"; var: the variable that
 * names it) is refused for detail, with what the caller may do; an entry of another user's
 * (owner, neither root nor the caller) is mps->squatter, which she may not remove from a
 * sticky /tmp: root may.
 */
static void refuse_dir(struct nvt_mps *mps, const char *what, const char *dir, const char *var,
		       uid_t owner, const char *detail, char *why, size_t len)
{
	if (owner != (uid_t)-1 && owner != 0 && owner != geteuid())
		mps->squatter = owner;
	if (!mps->squatter || geteuid() == 0)
		snprintf(why, len, "refusing the MPS %s directory %s: %s (remove it, or set %s)", what,
			 dir, detail, var);
	else if (mps->named)
		snprintf(why, len, "refusing the MPS %s directory %s: %s (ask root to remove it, or "
			 "set %s to a directory of yours)", what, dir, detail, var);
	else
		snprintf(why, len, "refusing the MPS %s directory %s: %s (ask root to remove it, or "
			 "set " NVT_ENV_XDG_RUNTIME_DIR " to a directory of yours, or "
			 NVT_ENV_MPS_PIPE_DIR " and " NVT_ENV_MPS_LOG_DIR " to directories of yours)",
			 what, dir, detail);
}

/* Checks both directories. Returns 0, or -1 with the reason in why if one is refused (and
 * mps->squatter, where another user's entry is). */
static int check_dirs(struct nvt_mps *mps, char *why, size_t len)
{
	char detail[200];
	uid_t pipe_uid, log_uid;

	mps->squatter = 0;
	if (check_pipe_dir(mps->pipe_dir, &pipe_uid, detail, sizeof(detail))) {
		refuse_dir(mps, "pipe", mps->pipe_dir, NVT_ENV_MPS_PIPE_DIR, pipe_uid, detail, why, len);
		return -1;
	}
	mps->dir_uid = pipe_uid;
	if (check_dir(mps->log_dir, 0, &log_uid, detail, sizeof(detail))) {
		refuse_dir(mps, "log", mps->log_dir, NVT_ENV_MPS_LOG_DIR, log_uid, detail, why, len);
		return -1;
	}
	return 0;
}

int nvt_mps_squatted_default(const struct nvt_mps *mps)
{
	return !mps->named && mps->squatter != 0;
}

/* An absolute $XDG_RUNTIME_DIR that is the caller's own directory, or NULL. */
static const char *runtime_dir(void)
{
	const char *dir = getenv(NVT_ENV_XDG_RUNTIME_DIR);
	struct stat st;

	if (!dir || dir[0] != '/' || strlen(dir) > 200 || lstat(dir, &st) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022))
		return NULL;
	return dir;
}

int nvt_mps_setup(struct nvt_mps *mps, char *why, size_t len)
{
	const char *pipe = getenv(NVT_ENV_MPS_PIPE_DIR), *log = getenv(NVT_ENV_MPS_LOG_DIR);
	const char *xdg;
	uid_t me = geteuid(), system_uid;
	char detail[200];

	memset(mps, 0, sizeof(*mps));
	find_control(mps);
	mps->named = (pipe && *pipe) || (log && *log);
	mps->pipe_named = pipe && *pipe;
	if (pipe && *pipe) {
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "%s", pipe);
	} else {
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), SYSTEM_PIPE_DIR);
		/* A user joins root's system daemon, but never starts one there. */
		if (me != 0 && !(check_pipe_dir(SYSTEM_PIPE_DIR, &system_uid, detail, sizeof(detail)) == 0 &&
				 system_uid == 0 && nvt_mps_daemon(mps))) {
			mps->per_user = 1;
			if ((xdg = runtime_dir()))
				snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "%s/nvidia-mps", xdg);
			else
				snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "/tmp/nvidia-mps-%lu",
					 (unsigned long)me);
		}
	}
	if (log && *log)
		snprintf(mps->log_dir, sizeof(mps->log_dir), "%s", log);
	else if (!mps->per_user)
		snprintf(mps->log_dir, sizeof(mps->log_dir), SYSTEM_LOG_DIR);
	else if ((xdg = runtime_dir()))
		snprintf(mps->log_dir, sizeof(mps->log_dir), "%s/nvidia-mps-log", xdg);
	else
		snprintf(mps->log_dir, sizeof(mps->log_dir), "/tmp/nvidia-mps-log-%lu",
			 (unsigned long)me);
	return check_dirs(mps, why, len);
}

int nvt_mps_setup_level(struct nvt_mps *mps, const char *level, const char *server_env,
			const char *shim, char *why, size_t len)
{
	const char *pipe = getenv(NVT_ENV_MPS_PIPE_DIR), *log = getenv(NVT_ENV_MPS_LOG_DIR);
	const char *xdg = runtime_dir();
	unsigned long me = (unsigned long)geteuid();

	memset(mps, 0, sizeof(*mps));
	find_control(mps);
	if (strlen(level) >= sizeof(mps->level) || strlen(server_env) >= sizeof(mps->server_env) ||
	    strlen(shim) >= sizeof(mps->shim) || strchr(level, '/')) {
		snprintf(why, len, "internal error: a priority level's MPS daemon too long to name");
		return -1;
	}
	snprintf(mps->level, sizeof(mps->level), "%s", level);
	snprintf(mps->server_env, sizeof(mps->server_env), "%s", server_env);
	snprintf(mps->shim, sizeof(mps->shim), "%s", shim);
	mps->per_user = me != 0;
	mps->named = (pipe && *pipe) || (log && *log);
	mps->pipe_named = pipe && *pipe;
	if (pipe && *pipe)
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "%.200s-%s", pipe, level);
	else if (me == 0)
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), SYSTEM_PIPE_DIR "-%s", level);
	else if (xdg)
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "%s/nvidia-mps-%s", xdg, level);
	else
		snprintf(mps->pipe_dir, sizeof(mps->pipe_dir), "/tmp/nvidia-mps-%s-%lu", level, me);
	if (log && *log)
		snprintf(mps->log_dir, sizeof(mps->log_dir), "%.200s-%s", log, level);
	else if (me == 0)
		snprintf(mps->log_dir, sizeof(mps->log_dir), SYSTEM_LOG_DIR "-%s", level);
	else if (xdg)
		snprintf(mps->log_dir, sizeof(mps->log_dir), "%s/nvidia-mps-log-%s", xdg, level);
	else
		snprintf(mps->log_dir, sizeof(mps->log_dir), "/tmp/nvidia-mps-log-%s-%lu", level, me);
	return check_dirs(mps, why, len);
}

/* Returns 1 if pid is alive and its command name starts with "nvidia-cuda-mps". A zombie is
 * not: a daemon killed whose parent has not reaped it (one that exited after starting it, its
 * orphans left to an init that reaps late) kept its name and user, and passed for running. */
static int is_mps_process(pid_t pid)
{
	char comm[64];
	uint64_t start;

	return nvt_proc_comm(pid, comm, sizeof(comm)) >= 0 && strncmp(comm, "nvidia-cuda-mps", 15) == 0 &&
	       nvt_proc_start_time(pid, &start) == 0;
}

/* Effective uid of pid, or (uid_t)-1. */
static uid_t process_uid(pid_t pid)
{
	uid_t euid;

	return nvt_proc_euid(pid, &euid) ? (uid_t)-1 : euid;
}

pid_t nvt_mps_daemon(const struct nvt_mps *mps)
{
	char path[512];
	uid_t owner;
	pid_t pid;

	snprintf(path, sizeof(path), "%.400s/" PID_FILE, mps->pipe_dir);
	/* Only a file of the directory's owner (or root's): a planted one must not fool us. */
	pid = nvt_pid_file_read(AT_FDCWD, path, mps->dir_uid, NVT_PID_FILE_ROOT | NVT_PID_FILE_LINKED,
				&owner, NULL);
	/* The daemon runs as the user who wrote its pid file. */
	return pid && is_mps_process(pid) && process_uid(pid) == owner ? pid : 0;
}

static int make_dir(const char *dir, mode_t mode, char *why, size_t len)
{
	if (nvt_mkdirs(dir, mode) == 0)
		return 0;
	snprintf(why, len, "cannot create the MPS directory %s: %s", dir, strerror(errno));
	return -1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}


#define CONTROL_TIMED_OUT (-2)

struct control_call {
	const struct nvt_mps *mps;
	const char *arg;
};

/* 1 if the clients of mps's level server bridge their steps (core/yield.h): the server's
 * work queues are its clients', so it gets their one hardware queue each. */
static int bridged_level(const struct nvt_mps *mps)
{
	struct nvt_slot_prio p = {0};

	if (!mps->server_env[0] || nvt_prio_env_parse(mps->server_env, &p))
		return 0;
	/* The starter's NVTASKSET_BRIDGE=0: no bridge, CUDA's own queues. */
	return nvt_bridge_on(nvt_bridge_wanted(p.prio, p.yield, "1", getenv(NVT_ENV_BRIDGE)));
}

/* In a child: runs the control binary with arg (or none), as mps->clean_env says. */
static void exec_control(void *ctx, int out_fd)
{
	const struct control_call *call = ctx;
	const struct nvt_mps *mps = call->mps;
	const char *arg = call->arg;

	(void)out_fd;
	if (mps->clean_env) {
		static char pipe_env[300], log_env[300], path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
		static char preload_env[600], server_env[200], conn_env[] = NVT_ENV_CUDA_CONNECTIONS "=1";
		char *env[] = {path_env, pipe_env, log_env, NULL, NULL, NULL, NULL};
		char *argv[] = {(char *)mps->control, (char *)arg, NULL};
		snprintf(pipe_env, sizeof(pipe_env), "CUDA_MPS_PIPE_DIRECTORY=%s", mps->pipe_dir);
		snprintf(log_env, sizeof(log_env), "CUDA_MPS_LOG_DIRECTORY=%s", mps->log_dir);
		if (mps->server_env[0]) {
			snprintf(preload_env, sizeof(preload_env), NVT_ENV_LD_PRELOAD "=%s", mps->shim);
			snprintf(server_env, sizeof(server_env), NVT_ENV_MPS_SERVER "=%s", mps->server_env);
			env[3] = preload_env;
			env[4] = server_env;
			if (bridged_level(mps))
				env[5] = conn_env;
		}
		execve(mps->control, argv, env);
		_exit(127);
	}
	setenv(NVT_ENV_MPS_PIPE_DIR, mps->pipe_dir, 1);
	setenv(NVT_ENV_MPS_LOG_DIR, mps->log_dir, 1);
	/* A plain daemon needs no shim; a level's server loads it, for its channel groups. */
	if (mps->server_env[0]) {
		setenv(NVT_ENV_LD_PRELOAD, mps->shim, 1);
		setenv(NVT_ENV_MPS_SERVER, mps->server_env, 1);
		if (bridged_level(mps))
			setenv(NVT_ENV_CUDA_CONNECTIONS, "1", 0); /* the caller's own count wins */
	} else {
		unsetenv(NVT_ENV_LD_PRELOAD);
		unsetenv(NVT_ENV_MPS_SERVER);
	}
	if (arg)
		execl(mps->control, mps->control, arg, (char *)NULL);
	else
		execl(mps->control, mps->control, (char *)NULL);
	_exit(127);
}

/*
 * Runs the control binary with arg and input on stdin (its answer to out, if
 * out), in a process group of its own (the daemon's own chatter to
 * /dev/null), for at most timeout_ms: then the group is killed (a wedged
 * daemon must not hang nvtaskset). Returns its exit status, -1 if it could
 * not run, or CONTROL_TIMED_OUT.
 */
static int run_control(const struct nvt_mps *mps, const char *arg, const char *input, char *out,
		       size_t out_len, int timeout_ms)
{
	struct control_call call = {mps, arg};
	struct nvt_child c = {.fn = exec_control, .ctx = &call, .input = input, .output = out,
			      .output_len = out_len, .timeout_ms = timeout_ms,
			      .flags = NVT_CHILD_GROUP | (out ? NVT_CHILD_STDOUT : 0) |
				       (input && !out ? NVT_CHILD_STDERR : 0)};
	int rc = nvt_child_run(&c);

	if (rc == NVT_CHILD_TIMEOUT)
		return CONTROL_TIMED_OUT;
	if (rc != NVT_CHILD_OK)
		return -1;
	return WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
}

/*
 * Takes the start lock: nvtaskset-start.lock in the pipe directory, a file of
 * the directory's owner that only she (and root) may open, so that nobody
 * else can hold it; waits at most until deadline. Returns its descriptor, or
 * -1 with the reason in why (a lock file of another user's, or a lock not had in time).
 */
static int lock_start(struct nvt_mps *mps, long deadline, char *why, size_t len)
{
	char path[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%.400s/" START_LOCK, mps->pipe_dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != mps->dir_uid && st.st_uid != 0) || (st.st_mode & 077)) {
		snprintf(why, len,
			 "refusing the MPS start lock %.400s: %s (remove it)", path,
			 fd < 0 ? strerror(errno) : "not a file of the directory's owner's, mode 0600");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || nvt_clock_ms() >= deadline) {
			snprintf(why, len,
				 "another nvtaskset of this user has been starting the MPS control "
				 "daemon for too long (lock %.400s held)", path);
			close(fd);
			return -1;
		}
		sleep_ms(10);
	}
	return fd;
}

/* With the start lock held: starts the daemon, unless one runs already. */
static int start_locked(struct nvt_mps *mps, int timeout_ms, long deadline, char *why,
			size_t len)
{
	int rc;

	if (nvt_mps_daemon(mps))
		return 0; /* another start won: use its daemon */
	rc = run_control(mps, "-d", NULL, NULL, 0, timeout_ms);
	if (rc == CONTROL_TIMED_OUT) {
		snprintf(why, len, "%.300s -d did not return within %d ms",
			 mps->control, timeout_ms);
		return -1;
	}
	if (rc != 0) {
		snprintf(why, len,
			 "%.300s -d failed (exit status %d); see %.300s/control.log", mps->control, rc,
			 mps->log_dir);
		return -1;
	}
	while (nvt_clock_ms() < deadline) {
		if (nvt_mps_daemon(mps)) {
			mps->started = 1;
			return 0;
		}
		sleep_ms(20);
	}
	snprintf(why, len,
		 "the MPS control daemon did not come up within %d ms; see %s/control.log",
		 timeout_ms, mps->log_dir);
	return -1;
}

/*
 * An ordinary user's start on a pipe directory that is not hers (root's: check_dirs refuses
 * any other): a daemon of hers there would write a pid file that nobody trusts
 * (nvt_mps_daemon), into a directory where she may not even make the start lock. Returns 0
 * for her own directory (or root), 1 if root's daemon runs there now (nothing to start), or -1
 * with why.
 */
static int roots_directory(const struct nvt_mps *mps, char *why, size_t len)
{
	struct stat st;

	if (geteuid() == 0 || (stat(mps->pipe_dir, &st) == 0 && st.st_uid == geteuid()))
		return 0;
	if (nvt_mps_daemon(mps))
		return 1; /* root's came up meanwhile */
	snprintf(why, len,
		 "the MPS pipe directory %s is root's and no daemon runs there: only root may start "
		 "one there; ask root to, or start a daemon of your own (unset "
		 "CUDA_MPS_PIPE_DIRECTORY, or set it to a directory of yours)",
		 mps->pipe_dir);
	return -1;
}

/*
 * Root's default pipe directory, refused for another user's entry (mps->squatter) with no daemon
 * of hers there: renamed aside, its new path into aside. Returns 0, or -1 (not root's, not
 * hers, not /tmp's, her daemon, or the rename failed: the refusal stands).
 */
static int set_aside(const struct nvt_mps *mps, char *aside, size_t len)
{
	const char *leaf = mps->pipe_dir + strlen(SYSTEM_TMP "/");
	struct nvt_mps hers = *mps;
	char name[NAME_MAX + 1];
	struct stat st, now;
	int tmp, rc;

	if (geteuid() != 0 || mps->pipe_named || !mps->squatter ||
	    strncmp(mps->pipe_dir, SYSTEM_TMP "/", strlen(SYSTEM_TMP "/")) || strchr(leaf, '/') ||
	    lstat(mps->pipe_dir, &st) || st.st_uid != mps->squatter)
		return -1;
	/* (her daemon's pid file, hers; a daemon of hers there serves her clients) */
	hers.dir_uid = mps->squatter;
	if (nvt_mps_daemon(&hers))
		return -1;
	tmp = open(SYSTEM_TMP, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmp < 0)
		return -1;
	/* Still the entry looked at (another root start may have set it aside and made its own,
	 * its daemon starting there), as close to the rename as it can be. */
	if (fstatat(tmp, leaf, &now, AT_SYMLINK_NOFOLLOW) || now.st_dev != st.st_dev ||
	    now.st_ino != st.st_ino || now.st_uid != st.st_uid) {
		close(tmp);
		return -1;
	}
	rc = nvt_rename_aside(tmp, leaf, &st, name, sizeof(name));
	close(tmp);
	if (rc)
		return -1;
	snprintf(aside, len, SYSTEM_TMP "/%s", name);
	return 0;
}

int nvt_mps_setup_taking(struct nvt_mps *mps, const char *level, const char *server_env,
			 const char *shim, char *aside, size_t aside_len, char *why, size_t len)
{
	uid_t from = 0;
	int rc;

	aside[0] = '\0';
	/* (twice at most: she may make another at once, which stays refused) */
	for (int tries = 0;; tries++) {
		rc = level ? nvt_mps_setup_level(mps, level, server_env, shim, why, len)
			   : nvt_mps_setup(mps, why, len);
		mps->aside_uid = from;
		if (rc == 0 || tries == 1 || set_aside(mps, aside, aside_len))
			return rc;
		from = mps->squatter;
	}
}

int nvt_mps_start(struct nvt_mps *mps, int timeout_ms, char *why, size_t len)
{
	long deadline = nvt_clock_ms() + timeout_ms;
	mode_t mode = mps->per_user ? 0700 : 0755;
	int lock, rc;

	mps->started = 0;
	if (!mps->control[0]) {
		snprintf(why, len,
			 "cannot find " CONTROL " in PATH or the driver's directories");
		return -1;
	}
	if (make_dir(mps->pipe_dir, mode, why, len))
		return -1;
	/* (before the log directory, which she may not make beside root's either) */
	rc = roots_directory(mps, why, len);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (make_dir(mps->log_dir, mode, why, len))
		return -1;
	/* Someone may have made them between the check and now. */
	if (check_dirs(mps, why, len))
		return -1;
	rc = roots_directory(mps, why, len);
	if (rc)
		return rc < 0 ? -1 : 0;
	lock = lock_start(mps, deadline, why, len);
	if (lock < 0)
		return -1;
	rc = start_locked(mps, timeout_ms, deadline, why, len);
	close(lock);
	return rc;
}

/* Says in why that the daemon pid runs as owner, not as the caller: only its user and root may
 * stop it, so the caller is refused at once rather than sending "quit" and waiting in vain. */
static void not_yours(const struct nvt_mps *mps, pid_t pid, uid_t owner, char *why, size_t len)
{
	struct passwd pw, *found = NULL;
	char buf[1024];

	if (owner == 0) {
		snprintf(why, len,
			 "the MPS control daemon (pid %ld) of pipe directory %s runs as root; only "
			 "root may stop it",
			 (long)pid, mps->pipe_dir);
		return;
	}
	if (getpwuid_r(owner, &pw, buf, sizeof(buf), &found))
		found = NULL;
	snprintf(why, len,
		 "the MPS control daemon (pid %ld) of pipe directory %s runs as uid %lu%s%s%s; only "
		 "that user and root may stop it",
		 (long)pid, mps->pipe_dir, (unsigned long)owner, found ? " (" : "",
		 found ? found->pw_name : "", found ? ")" : "");
}

int nvt_mps_may_stop(const struct nvt_mps *mps, char *why, size_t len)
{
	pid_t pid = nvt_mps_daemon(mps);
	uid_t owner;

	if (!pid)
		return 0;
	owner = process_uid(pid);
	if (geteuid() != 0 && owner != (uid_t)-1 && owner != geteuid()) {
		not_yours(mps, pid, owner, why, len);
		return -1;
	}
	return 0;
}

int nvt_mps_stop(struct nvt_mps *mps, int grace_s, int timeout_ms, char *why, size_t len)
{
	pid_t pid = nvt_mps_daemon(mps);
	char quit[32] = "quit\n";
	long deadline;
	int rc;

	if (!pid)
		return 0;
	if (nvt_mps_may_stop(mps, why, len))
		return -1;
	if (!mps->control[0]) {
		snprintf(why, len,
			 "cannot find " CONTROL " to stop daemon %ld", (long)pid);
		return -1;
	}
	/* "quit -t" answers once the daemon has stopped its servers, grace_s seconds at most. */
	if (grace_s >= 0) {
		snprintf(quit, sizeof(quit), "quit -t %d\n", grace_s);
		timeout_ms += grace_s * 1000;
	}
	deadline = nvt_clock_ms() + timeout_ms;
	rc = run_control(mps, NULL, quit, NULL, 0, timeout_ms);
	if (rc != 0) {
		snprintf(why, len, "\"echo %.*s | %.300s\" %s", (int)strlen(quit) - 1, quit, mps->control,
			 rc == CONTROL_TIMED_OUT ? "did not return in time" : "failed");
		return -1;
	}
	while (nvt_clock_ms() < deadline) {
		if (kill(pid, 0) && errno == ESRCH)
			return 0;
		if (!is_mps_process(pid))
			return 0;
		sleep_ms(20);
	}
	snprintf(why, len,
		 "the MPS control daemon (pid %ld) is still running after %d ms", (long)pid,
		 timeout_ms);
	return -1;
}

int nvt_mps_query(struct nvt_mps *mps, const char *command, char *out, size_t len, int timeout_ms)
{
	char input[256];

	if (!mps->control[0] || len == 0)
		return -1;
	out[0] = '\0';
	if ((size_t)snprintf(input, sizeof(input), "%s\n", command) >= sizeof(input))
		return -1;
	if (run_control(mps, NULL, input, out, len, timeout_ms) != 0)
		return -1;
	nvt_mpslog_whole_rows(out, len); /* (a row cut by the buffer's end is no row) */
	return 0;
}

int nvt_mps_clients(struct nvt_mps *mps, uid_t uid, pid_t *server, int *clients, int timeout_ms)
{
	char answer[16384];
	long servers[NVT_MPS_MAX_PIDS];
	int counts[NVT_MPS_MAX_PIDS], n;

	*server = 0;
	*clients = 0;
	/* One "ps" lists every client with its server: one round trip, which
	 * matters on every task's start. */
	if (nvt_mps_query(mps, "ps", answer, sizeof(answer), timeout_ms))
		return -1;
	n = nvt_mpslog_parse_ps(answer, servers, counts, NVT_MPS_MAX_PIDS);
	if (n < 0)
		return -1;
	for (int i = 0; i < n && i < NVT_MPS_MAX_PIDS; i++) {
		if (process_uid((pid_t)servers[i]) == uid) {
			*server = (pid_t)servers[i];
			*clients = counts[i];
			break;
		}
	}
	return 0;
}

int nvt_mps_read_log(const struct nvt_mps *mps, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%.300s/server.log", mps->log_dir);
	return nvt_read_file(path, buf, len, 1) < 0 ? -1 : 0;
}

int nvt_mps_client_list(struct nvt_mps *mps, struct nvt_mps_client *out, int max, int timeout_ms)
{
	static char answer[65536]; /* (48 clients a server, a line each, some servers) */

	if (nvt_mps_query(mps, "ps", answer, sizeof(answer), timeout_ms))
		return -1;
	return nvt_mpslog_parse_clients(answer, out, max);
}
