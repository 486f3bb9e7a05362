/*
 * fakeapp.c - a "CUDA program" for the fake driver. Built twice: one copy
 * dlopen()s libcuda.so.1 and looks its entry points up through that handle,
 * as static cudart does (-DUSE_DLOPEN); the other is linked against it.
 * Over 500 lines on purpose: the modes below share its entry points and
 * launch helpers (fakeapp.h); modes of a subject of their own are in
 * fakeapp*.c.
 *
 *   fakeapp info                          print the SM count
 *   fakeapp launch N [VERSION]            N launches; print the last one
 *   fakeapp batches[-ex] N REPS           REPS batches of N launches (-ex: cuLaunchKernelEx
 *                                         calls), each timed (then a
 *                                         synchronisation); print the 10th percentile and the
 *                                         median of the time per launch, "p10_us=T median_us=T",
 *                                         as tests/bench/launch.cu's mode of that name
 *   fakeapp loop STOP STATE               launch until file STOP exists; write
 *                                         the TPCs of the latest launch to STATE
 *                                         whenever they change
 *   fakeapp stress THREADS STOP HEX...    THREADS threads launch until STOP
 *                                         (FAKEAPP_REINIT=1: each calls cuInit before each);
 *                                         every launch must run on exactly one of
 *                                         the HEX TPC masks, none may hang
 *   fakeapp fork STOP STATE               fork; both loop (STATE.parent, STATE.child)
 *   fakeapp exec STOP STATE               launch once, then exec "loop" in place
 *   fakeapp reset STOP STATE              launch once, reset the device's primary context
 *                                         (cuDevicePrimaryCtxReset: its driver objects
 *                                         freed), then "loop" in a new one
 *   fakeapp reopen STOP STATE             launch once, close the fake RM's descriptor and
 *                                         open /dev/null on its number, then "loop"
 *                                         (fakeappioctl.c)
 *   fakeapp uuids                         print "DEVICE UUID" for each device
 *   fakeapp cluster N                     one launch in thread-block clusters of N
 *                                         (cuLaunchKernelEx); print it
 *
 * "loop" launches nothing while the file $FAKEAPP_PAUSE exists (an idle
 * task; it makes $FAKEAPP_PAUSE.seen once paused, removed when it goes on), and appends "NS LIST" to the file $FAKEAPP_STAMP whenever its TPCs
 * change (before it writes STATE) and "NS resume" before its first launch after a pause, NS the
 * CLOCK_MONOTONIC time; with FAKEAPP_STAMP_LAUNCHES=1 also "NS launch" after
 * each launch (the priority agent's reaction, counted in the higher task's
 * launches; "nothing happened", counted in launches), and "graph" after each
 * replay. A child that "fork" or "fork-on" forks stamps to $FAKEAPP_STAMP.child.
 * FAKEAPP_SYNC=1 makes "loop" call cuCtxSynchronize after each launch (a
 * task whose requests end: its shim follows synchronisations).
 * FAKEAPP_EX=1 makes "launch", "launch-wait" and "loop" launch through
 * cuLaunchKernelEx (a call every task's shim follows, to find cooperative grids).
 * FAKEAPP_DEVICE=D makes device D's context current first; FAKEAPP_ALL=1
 * makes "launch" and "loop" launch on every device in turn (printing and
 * writing each device's result, joined by '|').
 *   fakeapp fork-on GO STOP STATE         loop (STATE.parent); when file GO appears,
 *                                         fork once: the child loops (STATE.child) and
 *                                         its PID goes to STATE.childpid
 *   fakeapp spawn-on GO STOP STATE HOW    as fork-on, but the child is started by HOW:
 *                                         fork (it loops on), fork-exec, vfork or
 *                                         posix_spawn (each execs "loop" in the child),
 *                                         exec (this process execs "loop STOP
 *                                         STATE.child" itself: no child), or sh (a
 *                                         shell that runs "fakeapp fork STOP
 *                                         STATE.child" and stays: a process between
 *                                         two tasks, without the shim unless it is
 *                                         preloaded)
 *   fakeapp launch-at                     one launch; print "at=NS tpcs=LIST", NS the
 *                                         CLOCK_MONOTONIC time just before it
 *   fakeapp launch-wait N STOP            N launches, then wait (launching nothing)
 *                                         until file STOP exists; print the last one
 *   fakeapp setuid UID MODE...            become user UID (setgid, setuid), then MODE
 *   fakeapp forge-high STOP STATE         write priority high and an own partition of
 *                                         every TPC into slot 0 of the control segment
 *                                         it maps (through its shim's writable mapping,
 *                                         as a program that dropped root could), then loop
 *
 * RM ioctls the kernel refuses (fakeappioctl.c, FAKECUDA_RM=1): rm-ioctl FORM.
 *
 * The SM count, cooperative grids and clusters (fakeappsms.c): sms, sms-on GO, coop BLOCK [ex],
 * clusters BLOCK SMEM,
 * coop-on GO BLOCK [ex].
 *
 * CUDA graphs (fakeappgraph.c): a graph of NODES kernel nodes, each with one
 * 64-bit argument (node i: i + 1), in creation order after them the options'
 * nodes; instantiated with cuGraphInstantiateWithFlags unless an option says
 * otherwise.
 *   fakeapp graph NODES STOP OUT [OPTION...]   replay until file STOP exists;
 *                                         after each replay write OUT (atomically):
 *                                         "node I tpcs=LIST" for each kernel node
 *                                         of the exec, depth first in creation order
 *                                         ("tpcs=-": it did not run), then
 *                                         "replays=N"; at the end print
 *                                         "replays=N hung=H bad=B"
 *   fakeapp graph-once NODES [OPTION...]  instantiate, replay once, print what
 *                                         graph writes to OUT
 *   Options: child (a child-graph node holding one kernel, argument 101),
 *   cond (a conditional node whose body holds one kernel, argument 201),
 *   alloc (a mem-alloc node), device (the device-launch flag), params
 *   (cuGraphInstantiateWithParams with the upload flag), v2
 *   (cuGraphInstantiate_v2), upload (cuGraphUpload after instantiating);
 *   every K replays, before replay K, 2K, ...: setparams=K (node 0 gets the
 *   same function and a new argument through cuGraphExecKernelNodeSetParams;
 *   the replay must run it), update=K (cuGraphExecUpdate with a freshly built
 *   identical graph), toggle=K (node 0 disabled for that replay, which must
 *   not run it), reinst=K (the exec destroyed and instantiated again). A hang,
 *   a failed call or a wrong argument makes the exit status 1.
 *
 * Arguments it cannot use (a mode it does not know, a number that is not a
 * whole one in its range, FAKEAPP_DEVICE's too): a message, exit status 2.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeapp.h"
#include "fakecuda.h"
#include "nvtaskset.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <spawn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*attr_fn)(int *, int, int);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

typedef int (*retain_fn)(void **, int);
typedef int (*set_current_fn)(void *);
typedef int (*count_fn)(int *);
typedef int (*uuid_fn)(unsigned char *, int);

static retain_fn p_retain;
static set_current_fn p_set_current;
static count_fn p_count;
static uuid_fn p_uuid;
static fakecuda_launch_ex_fn p_launch_ex;
static init_fn p_init;
static attr_fn p_attr;
static launch_fn p_launch;
static fakecuda_last_launch_fn p_last;
static fakecuda_set_tmd_version_fn p_version;
typedef int (*sync_fn)(void);
static sync_fn p_sync;
typedef int (*reset_fn)(int);
static reset_fn p_reset; /* FAKEAPP_SYNC=1: loop synchronises after each launch */

#ifdef USE_DLOPEN
#include <dlfcn.h>
void *fakeapp_lib;

static void load(void)
{
	void *lib = fakeapp_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "fakeapp: %s\n", dlerror());
		exit(2);
	}
	p_init = (init_fn)dlsym(lib, "cuInit");
	p_attr = (attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	p_launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
	p_last = (fakecuda_last_launch_fn)dlsym(lib, "fakecuda_last_launch");
	p_version = (fakecuda_set_tmd_version_fn)dlsym(lib, "fakecuda_set_tmd_version");
	p_retain = (retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
	p_set_current = (set_current_fn)dlsym(lib, "cuCtxSetCurrent");
	p_count = (count_fn)dlsym(lib, "cuDeviceGetCount");
	p_uuid = (uuid_fn)dlsym(lib, "cuDeviceGetUuid");
	p_launch_ex = (fakecuda_launch_ex_fn)dlsym(lib, "cuLaunchKernelEx");
	p_sync = (sync_fn)dlsym(lib, "cuCtxSynchronize");
	p_reset = (reset_fn)dlsym(lib, "cuDevicePrimaryCtxReset_v2");
	if (!p_launch_ex || !p_retain || !p_reset || !p_set_current || !p_count || !p_uuid || !p_init || !p_attr || !p_launch || !p_last || !p_version) {
		fprintf(stderr, "fakeapp: symbol missing behind the libcuda.so.1 handle\n");
		exit(2);
	}
}
#else
int cuInit(unsigned);
int cuDeviceGetAttribute(int *, int, int);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		   void *, void **, void **);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuDeviceGetCount(int *);
int cuDeviceGetUuid(unsigned char *, int);
int cuLaunchKernelEx(const NVT_LAUNCH_CONFIG *, void *, void **, void **);
int cuCtxSynchronize(void);
int cuDevicePrimaryCtxReset_v2(int);
static void load(void)
{
	p_reset = cuDevicePrimaryCtxReset_v2;
	p_sync = cuCtxSynchronize;
	p_launch_ex = cuLaunchKernelEx;
	p_retain = cuDevicePrimaryCtxRetain;
	p_set_current = cuCtxSetCurrent;
	p_count = cuDeviceGetCount;
	p_uuid = cuDeviceGetUuid;
	p_init = cuInit;
	p_attr = cuDeviceGetAttribute;
	p_launch = cuLaunchKernel;
	p_last = fakecuda_last_launch;
	p_version = fakecuda_set_tmd_version;
}
#endif

/* Launches once (through cuLaunchKernelEx with FAKEAPP_EX=1); fills rec. Returns the
 * driver's result. */
static int launch(struct fakecuda_launch *rec)
{
	static const NVT_LAUNCH_CONFIG cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
	static int ex = -1;
	int rc;

	if (ex < 0)
		ex = getenv("FAKEAPP_EX") && !strcmp(getenv("FAKEAPP_EX"), "1");
	rc = ex ? p_launch_ex(&cfg, (void *)1, NULL, NULL) : p_launch((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	if (p_last(rec)) {
		fprintf(stderr, "fakeapp: no launch record\n");
		exit(2);
	}
	return rc;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* "batches N REPS": what tests/bench/launchcost.py reads, on the fake driver; "batches-ex"
 * (ex): the same through cuLaunchKernelEx, as launch.cu's mode of that name. */
static int batches(long n, long reps, int ex)
{
	NVT_LAUNCH_CONFIG cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
	double per[1000];
	struct timespec t0, t1;

	if (n < 1 || reps < 1 || reps > 1000)
		return 2;
	for (long r = 0; r < reps; r++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long i = 0; i < n; i++)
			if (ex ? p_launch_ex(&cfg, (void *)1, NULL, NULL)
			       : p_launch((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
				return 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (p_sync && p_sync())
			return 1;
		per[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 /
			 (double)n;
	}
	qsort(per, (size_t)reps, sizeof(per[0]), compare_double);
	printf("p10_us=%.4f median_us=%.4f\n", per[reps / 10], per[reps / 2]);
	return 0;
}

void tpcs_text(const uint64_t w[4], char *buf, size_t len)
{
	size_t pos = 0;
	buf[0] = '\0';
	for (int t = 0; t < 256; t++) {
		int end = t;
		if (!((w[t / 64] >> (t % 64)) & 1))
			continue;
		while (end + 1 < 256 && ((w[(end + 1) / 64] >> ((end + 1) % 64)) & 1))
			end++;
		pos += (size_t)snprintf(buf + pos, len - pos, pos ? ",%d" : "%d", t);
		if (end > t)
			pos += (size_t)snprintf(buf + pos, len - pos, "-%d", end);
		t = end;
	}
}

static void hex_text(const uint64_t w[4], char *buf, size_t len)
{
	int top = 3;
	while (top > 0 && !w[top])
		top--;
	size_t pos = (size_t)snprintf(buf, len, "%lx", (unsigned long)w[top]);
	for (int i = top - 1; i >= 0; i--)
		pos += (size_t)snprintf(buf + pos, len - pos, "%016lx", (unsigned long)w[i]);
}

static void print_launch(const struct fakecuda_launch *rec)
{
	char list[1200];
	tpcs_text(rec->ran_tpcs, list, sizeof(list));
	printf("tpcs=%s hung=%d version=0x%02x masked=%d callbacks=%d disable=%08x,%08x,%08x,%08x "
	       "upper=%08x,%08x,%08x,%08x stray=%d\n",
	       list, rec->hung, rec->tmd_version, rec->mask_enabled, rec->callbacks,
	       rec->disable[3], rec->disable[2], rec->disable[1], rec->disable[0],
	       rec->disable_hi[3], rec->disable_hi[2], rec->disable_hi[1], rec->disable_hi[0],
	       rec->stray_bits);
	fflush(stdout);
}

long arg_number(const char *what, const char *text, int base, long min, long max)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, base);
	if (errno || end == text || *end || n < min || n > max) {
		fprintf(stderr, "fakeapp: %s: '%s' is not a number from %ld to %ld\n", what, text, min, max);
		exit(2);
	}
	return n;
}

int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

void write_state(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		exit(2);
	fprintf(f, "%s\n", text);
	fclose(f);
	rename(tmp, path);
}

/* Makes device dev's primary context current. Returns 0 or -1. */
static int use_device(int dev)
{
	void *ctx;
	return p_retain(&ctx, dev) || p_set_current(ctx) ? -1 : 0;
}

/* With FAKEAPP_ALL: the number of devices to launch on in turn, else 0. */
static int all_devices(void)
{
	int n = 0;
	if (!getenv("FAKEAPP_ALL") || p_count(&n))
		return 0;
	return n;
}

/* Launches once (on every device with FAKEAPP_ALL); writes the TPCs to now. */
static int launch_round(struct fakecuda_launch *rec, char *now, size_t len, long *hung)
{
	int n = all_devices(), rc = 0;
	size_t used = 0;

	if (!n) {
		rc = launch(rec);
		*hung += rec->hung;
		tpcs_text(rec->ran_tpcs, now, len);
		return rc;
	}
	for (int d = 0; d < n && used + 2 < len; d++) {
		if (use_device(d))
			return 1;
		rc |= launch(rec);
		*hung += rec->hung;
		if (d)
			now[used++] = '|';
		tpcs_text(rec->ran_tpcs, now + used, len - used);
		used += strlen(now + used);
	}
	return rc;
}

/* Appends "NS TEXT" to $FAKEAPP_STAMP, if set. */
void stamp(const char *text)
{
	const char *path = getenv("FAKEAPP_STAMP");
	struct timespec ts;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(f, "%lld %s\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, text);
	fclose(f);
}

/* In a forked child: its stamps go to FAKEAPP_STAMP.child, apart from its parent's. */
static void stamp_apart(void)
{
	const char *path = getenv("FAKEAPP_STAMP");
	char child[4096];

	if (path && snprintf(child, sizeof(child), "%s.child", path) < (int)sizeof(child))
		setenv("FAKEAPP_STAMP", child, 1);
}

/* Makes (on) or removes the file HOLD.seen: the loop is paused, its last state written. */
static void touch_seen(const char *hold, int on)
{
	char seen[4096];
	int fd;

	if (snprintf(seen, sizeof(seen), "%s.seen", hold) >= (int)sizeof(seen))
		return;
	if (!on) {
		unlink(seen);
		return;
	}
	fd = open(seen, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/* Launches until stop exists, or go (if given) does; returns 1 on a hang. */
static int loop_until(const char *stop, const char *go, const char *state)
{
	char prev[1200] = "-", now[1200];
	const char *hold = getenv("FAKEAPP_PAUSE");
	const char *sync = getenv("FAKEAPP_SYNC"), *each = getenv("FAKEAPP_STAMP_LAUNCHES");
	int sync_each = sync && !strcmp(sync, "1"), stamp_each = each && !strcmp(each, "1");
	long n = 0, hung = 0;
	struct timespec pause = {0, 200000};
	int paused = 0;

	while (!exists(stop) && !(go && exists(go))) {
		struct fakecuda_launch rec;
		if (hold && exists(hold)) {
			if (!paused)
				touch_seen(hold, 1);
			paused = 1;
			nanosleep(&pause, NULL);
			continue;
		}
		if (paused) {
			stamp("resume");
			touch_seen(hold, 0);
		}
		paused = 0;
		launch_round(&rec, now, sizeof(now), &hung);
		if (sync_each && p_sync)
			p_sync();
		n++;
		if (stamp_each)
			stamp("launch");
		if (strcmp(now, prev)) {
			/* The stamp first: a test that read the state finds its stamp (a
			 * stamp_mark taken then counts it before the mark, not after). */
			stamp(now);
			write_state(state, now);
			strcpy(prev, now);
		}
		nanosleep(&pause, NULL);
	}
	if (!go)
		printf("launches=%ld hung=%ld\n", n, hung);
	return hung ? 1 : 0;
}

/* forge-high: returns 0, or -1 if it maps no control segment (see the usage above). */
static int forge_high(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct nvt_segment *seg = NULL;
	struct nvt_gpu_slot *s;
	char line[768], perms[8];
	unsigned long lo;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%*x %7s", &lo, perms) == 2 && perms[1] == 'w' &&
		    perms[3] == 's' && strstr(line, "/" NVT_SEG_PREFIX))
			seg = (struct nvt_segment *)lo;
	fclose(f);
	if (!seg || seg->magic != NVT_SEG_MAGIC)
		return -1;
	s = &seg->gpu[0];
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL); /* odd: being written */
	memset(&s->prio.own, 0, sizeof(s->prio.own));
	for (unsigned t = 0; t < s->topo.n_tpcs && t < NVT_MAX_TPCS; t++)
		s->prio.own.w[t / 64] |= 1ull << (t % 64);
	s->tpcs = s->prio.own;
	s->state = NVT_SLOT_SET;
	s->prio.prio = NVT_PRIO_HIGH;
	s->prio.mode = 0;
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
	return 0;
}

static int loop(const char *stop, const char *state)
{
	return loop_until(stop, NULL, state);
}

struct stress {
	const char *stop;
	char **allowed;
	int n_allowed;
	long launches, bad, hung;
	int reinit; /* FAKEAPP_REINIT=1: each thread calls cuInit before each launch */
};

static void *stress_thread(void *arg)
{
	struct stress *s = arg;
	char hex[80];
	long n = 0, bad = 0, hung = 0;

	while (!(n % 64 == 0 && exists(s->stop))) {
		struct fakecuda_launch rec;
		int ok = 0;
		if (s->reinit)
			p_init(0); /* as libraries do: CUDA is initialised once, whoever calls it */
		launch(&rec);
		n++;
		hung += rec.hung;
		hex_text(rec.ran_tpcs, hex, sizeof(hex));
		for (int i = 0; i < s->n_allowed; i++)
			ok |= !strcmp(hex, s->allowed[i]);
		if (!ok && bad++ < 5)
			fprintf(stderr, "fakeapp: launch ran on unexpected TPC mask %s\n", hex);
	}
	__atomic_fetch_add(&s->launches, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bad, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->hung, hung, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Loops (STATE.parent) until file go appears, then starts a child as how says
 * (see the top of this file) that loops on STATE.child; its PID goes to
 * STATE.childpid. The parent loops on until stop.
 */
static int spawn_on(const char *self, const char *go, const char *stop, const char *state,
		    const char *how)
{
	char path[4096], child_state[4096], pidtext[32];
	char *child_argv[] = {(char *)self, "loop", (char *)stop, child_state, NULL};
	extern char **environ;
	pid_t child = -1;
	int status = 0, rc;

	snprintf(path, sizeof(path), "%s.parent", state);
	snprintf(child_state, sizeof(child_state), "%s.child", state);
	if (loop_until(stop, go, path))
		return 1;
	fflush(stdout);
	if (!strcmp(how, "exec")) {
		execv("/proc/self/exe", child_argv);
		perror("exec");
		return 2;
	} else if (!strcmp(how, "fork")) {
		child = fork();
		if (child == 0) {
			stamp_apart();
			exit(loop(stop, child_state));
		}
	} else if (!strcmp(how, "fork-exec")) {
		child = fork();
		if (child == 0) {
			execv("/proc/self/exe", child_argv);
			_exit(127);
		}
	} else if (!strcmp(how, "vfork")) {
		child = vfork();
		if (child == 0) {
			execv("/proc/self/exe", child_argv);
			_exit(127);
		}
	} else if (!strcmp(how, "posix_spawn")) {
		if (posix_spawn(&child, "/proc/self/exe", NULL, NULL, child_argv, environ))
			child = -1;
	} else if (!strcmp(how, "sh")) {
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		char *sh_argv[] = {"sh", "-c", "\"$0\" fork \"$1\" \"$2\"; true", exe, (char *)stop,
				   child_state, NULL};
		if (n <= 0)
			return 2;
		exe[n] = '\0';
		if (posix_spawn(&child, "/bin/sh", NULL, NULL, sh_argv, environ))
			child = -1;
	} else {
		fprintf(stderr, "fakeapp: no way to start a child called %s\n", how);
		return 2;
	}
	if (child < 0) {
		perror("fakeapp: starting a child");
		return 2;
	}
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)child);
	snprintf(path, sizeof(path), "%s.childpid", state);
	write_state(path, pidtext);
	snprintf(path, sizeof(path), "%s.parent", state);
	rc = loop(stop, path);
	waitpid(child, &status, 0);
	return rc || !WIFEXITED(status) || WEXITSTATUS(status);
}

/* "threads N COUNT STOP": N threads launch COUNT kernels each; then it
 * prints "launched=N*COUNT" and waits for file STOP (for -l's counter). */
static long per_thread;

static void *count_thread(void *arg)
{
	struct fakecuda_launch rec;

	(void)arg;
	for (long i = 0; i < per_thread; i++)
		launch(&rec);
	return NULL;
}

static int threads(int n, long count, const char *stop)
{
	pthread_t tid[64];
	struct timespec pause = {0, 2000000};

	if (n < 1 || n > 64 || count < 0)
		return 2;
	per_thread = count;
	for (int i = 0; i < n; i++)
		pthread_create(&tid[i], NULL, count_thread, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	printf("launched=%ld\n", n * count);
	fflush(stdout);
	while (!exists(stop))
		nanosleep(&pause, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int sms = 0;
	long dev = 0; /* FAKEAPP_DEVICE's */

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "setuid") && argc >= 4) {
		/* A program that drops privileges after the shim has set up. */
		uid_t uid = (uid_t)arg_number("UID", argv[2], 10, 0, 4294967294);
		if (setgroups(0, NULL) || setgid((gid_t)uid) || setuid(uid)) {
			perror("fakeapp: setuid");
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	load();
	if (p_init(0)) {
		fprintf(stderr, "fakeapp: cuInit failed\n");
		return 2;
	}
	p_attr(&sms, 16, 0);
	if (getenv("FAKEAPP_DEVICE")) {
		dev = arg_number("FAKEAPP_DEVICE", getenv("FAKEAPP_DEVICE"), 10, 0, 63);
		if (use_device((int)dev)) {
			fprintf(stderr, "fakeapp: cannot use device %ld\n", dev);
			return 2;
		}
	}
	if (!strcmp(argv[1], "uuids")) {
		int n = 0;
		p_count(&n);
		for (int d = 0; d < n; d++) {
			unsigned char u[16];
			p_uuid(u, d);
			printf("%d GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
			       d, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			       u[12], u[13], u[14], u[15]);
		}
		return 0;
	}
	if (!strcmp(argv[1], "cluster") && argc == 3) {
		NVT_LAUNCH_ATTRIBUTE attr = {.id = NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
		NVT_LAUNCH_CONFIG cfg = {0};
		struct fakecuda_launch rec;
		unsigned n = (unsigned)arg_number("N", argv[2], 10, 1, 65536);
		int rc;
		attr.value.cluster_dim[0] = n;
		attr.value.cluster_dim[1] = attr.value.cluster_dim[2] = 1;
		cfg.grid[0] = 8 * n;
		cfg.grid[1] = cfg.grid[2] = cfg.block[0] = cfg.block[1] = cfg.block[2] = 1;
		cfg.attrs = &attr;
		cfg.num_attrs = 1;
		rc = p_launch_ex(&cfg, (void *)1, NULL, NULL);
		if (p_last(&rec) == 0)
			print_launch(&rec);
		return rc ? 1 : 0;
	}
	if (!strcmp(argv[1], "graph") || !strcmp(argv[1], "graph-once"))
		return graph_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sms") || !strcmp(argv[1], "sms-on") || !strcmp(argv[1], "coop") ||
	    !strcmp(argv[1], "clusters") ||
	    !strcmp(argv[1], "coop-on"))
		return sms_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "rm-ioctl") && argc == 3) {
		struct fakecuda_launch rec;
		if (launch(&rec))
			return 2;
		return rm_ioctl_main(argv[2]);
	}
	if (!strcmp(argv[1], "info")) {
		printf("sms=%d\n", sms);
		return 0;
	}
	if (!strcmp(argv[1], "launch") && argc >= 3) {
		struct fakecuda_launch rec;
		long n = arg_number("N", argv[2], 10, 1, 1000000000);
		int rc = 0;
		if (argc >= 4)
			p_version((uint8_t)arg_number("VERSION", argv[3], 0, 0, 255));
		if (all_devices()) {
			char text[1200] = "";
			long hung = 0;
			for (long i = 0; i < n; i++)
				rc |= launch_round(&rec, text, sizeof(text), &hung);
			printf("tpcs=%s hung=%ld\n", text, hung);
			return rc ? 1 : 0;
		}
		for (long i = 0; i < n; i++)
			rc |= launch(&rec);
		print_launch(&rec);
		return rc ? 1 : 0;
	}
	if ((!strcmp(argv[1], "batches") || !strcmp(argv[1], "batches-ex")) && argc == 4)
		return batches(arg_number("N", argv[2], 10, 1, 1000000000), arg_number("REPS", argv[3], 10, 1, 1000),
			       !strcmp(argv[1], "batches-ex"));
	if (!strcmp(argv[1], "loop") && argc == 4)
		return loop(argv[2], argv[3]);
	if (!strcmp(argv[1], "forge-high") && argc == 4) {
		struct fakecuda_launch rec;
		launch(&rec); /* the shim has its segment mapped by now */
		if (forge_high()) {
			fprintf(stderr, "fakeapp: no control segment mapped\n");
			return 2;
		}
		return loop(argv[2], argv[3]);
	}
	if (!strcmp(argv[1], "stress") && argc >= 5) {
		struct stress s = {argv[3], argv + 4, argc - 4, 0, 0, 0, 0};
		const char *reinit = getenv("FAKEAPP_REINIT");
		s.reinit = reinit && !strcmp(reinit, "1");
		int threads = (int)arg_number("THREADS", argv[2], 10, 1, 64);
		pthread_t tid[64];
		for (int i = 0; i < threads; i++)
			pthread_create(&tid[i], NULL, stress_thread, &s);
		for (int i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		printf("launches=%ld bad=%ld hung=%ld\n", s.launches, s.bad, s.hung);
		return s.bad || s.hung ? 1 : 0;
	}
	if (!strcmp(argv[1], "threads") && argc == 5)
		return threads((int)arg_number("N", argv[2], 10, 1, 64), arg_number("COUNT", argv[3], 10, 0, 1000000000),
			       argv[4]);
	if (!strcmp(argv[1], "fork") && argc == 4) {
		char path[4096], pidtext[32];
		struct fakecuda_launch rec;
		pid_t child;
		int status = 0, rc;
		launch(&rec);
		fflush(stdout);
		child = fork();
		if (child == 0) {
			stamp_apart();
			snprintf(path, sizeof(path), "%s.child", argv[3]);
			exit(loop(argv[2], path));
		}
		snprintf(pidtext, sizeof(pidtext), "%ld", (long)child);
		snprintf(path, sizeof(path), "%s.childpid", argv[3]);
		write_state(path, pidtext);
		snprintf(path, sizeof(path), "%s.parent", argv[3]);
		rc = loop(argv[2], path);
		waitpid(child, &status, 0);
		return rc || !WIFEXITED(status) || WEXITSTATUS(status);
	}
	if (!strcmp(argv[1], "reset") && argc == 4) {
		struct fakecuda_launch rec;
		launch(&rec);
		if (p_reset((int)dev))
			return 1;
		return loop(argv[2], argv[3]);
	}
	if (!strcmp(argv[1], "reopen") && argc == 4) {
		struct fakecuda_launch rec;
		launch(&rec);
		if (rm_reopen_other()) {
			fprintf(stderr, "fakeapp: reopen: no driver descriptor (FAKECUDA_RM=1)\n");
			return 2;
		}
		return loop(argv[2], argv[3]);
	}
	if ((!strcmp(argv[1], "fork-on") && argc == 5) || (!strcmp(argv[1], "spawn-on") && argc == 6))
		return spawn_on(argv[0], argv[2], argv[3], argv[4], argc == 6 ? argv[5] : "fork");
	if (!strcmp(argv[1], "launch-at") && argc == 2) {
		struct fakecuda_launch rec;
		struct timespec at;
		char list[1200];
		int rc;
		clock_gettime(CLOCK_MONOTONIC, &at);
		rc = launch(&rec);
		tpcs_text(rec.ran_tpcs, list, sizeof(list));
		printf("at=%lld tpcs=%s\n", (long long)at.tv_sec * 1000000000LL + at.tv_nsec, list);
		return rc || rec.hung ? 1 : 0;
	}
	if (!strcmp(argv[1], "launch-wait") && argc == 4) {
		struct fakecuda_launch rec;
		struct timespec pause = {0, 5000000};
		long n = arg_number("N", argv[2], 10, 0, 1000000000);
		int rc = 0;
		for (long i = 0; i < n; i++)
			rc |= launch(&rec);
		if (n > 0)
			print_launch(&rec);
		while (!exists(argv[3]))
			nanosleep(&pause, NULL);
		return rc ? 1 : 0;
	}
	if (!strcmp(argv[1], "exec") && argc == 4) {
		struct fakecuda_launch rec;
		launch(&rec);
		execl("/proc/self/exe", argv[0], "loop", argv[2], argv[3], (char *)NULL);
		perror("exec");
		return 2;
	}
	fprintf(stderr, "fakeapp: bad arguments\n");
	return 2;
}
