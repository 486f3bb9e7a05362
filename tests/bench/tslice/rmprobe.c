// rmprobe.c - probe (not product code): an LD_PRELOAD library that follows the channel groups
// (TSGs, class 0xa06c) and channels libcuda allocates through the RM's ioctls, logs every
// control libcuda issues on them, and applies timeslice and scheduling controls to them.
//
// Env:
//   RMP_LOG=PREFIX      log to PREFIX.PID (one file per process: MPS servers too)
//   RMP_TS=US           the timeslice to give this process's TSGs
//   RMP_WHEN=LIST       when: alloc (at the TSG's allocation), sched (after every successful
//                       GPFIFO_SCHEDULE/BIND on a TSG or channel of ours), rewrite (libcuda's
//                       own SET_TIMESLICE on our TSGs carries RMP_TS instead), late:MS (a
//                       thread sets it MS ms after the first TSG)
//   RMP_MON=1           a thread reads GET_TIMESLICE back every 0.5 s for 10 s, logs changes
//   RMP_GATE=FILE       a thread polls the first 8 bytes of FILE (mmap): non-zero = a higher
//                       task's request is open: disable scheduling of our TSGs; zero: enable
//   RMP_GATE_MODE=M     sched (GPFIFO_SCHEDULE off/on), preempt (and PREEMPT after off)
//   RMP_POLL_US=US      the gate's poll interval (default 20)
//   RMP_GATE_RESET=1    after giving the GPU back, set the timeslice again
//   RMP_LINGER_US=US    the gate gives the GPU back only after the flag has been zero this long
//                       (a service's next step comes soon after its last one ended)
//   RMP_CILP=N          libcuda's GR_SET_CTXSW_PREEMPTION_MODE carries compute preemption mode N
//                       (0 wait for idle, 1 CTA, 2 instruction level: libcuda's own) instead
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ESC_FREE 0x29
#define ESC_CONTROL 0x2A
#define ESC_ALLOC 0x2B
#define CLS_TSG 0xa06cu
#define SET_TS 0xa06c0103u
#define GET_TS 0xa06c0104u
#define TSG_SCHED 0xa06c0101u
#define TSG_BIND 0xa06c0102u
#define TSG_PREEMPT 0xa06c0105u
#define CH_SCHED 0xa06f0103u
#define CH_BIND 0xa06f0104u
#define SET_PMODE 0x20801210u /* NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE, 32 bytes */

struct os54 { uint32_t client, object, cmd, flags; uint64_t params; uint32_t size, status; };
struct obj { int fd; uint32_t client, handle, parent, cls; };

static int (*real_ioctl)(int, unsigned long, void *);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct obj objs[512];
static int nobj;
static FILE *logf;
static uint64_t t_start;
static uint64_t ts_us;
static int cilp_mode = -1;
static int when_alloc, when_sched, when_rewrite, late_ms = -1;
static __thread int inside;
static atomic_int ntsg_seen;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void logx(const char *fmt, ...)
{
	if (!logf)
		return;
	va_list ap;
	va_start(ap, fmt);
	flockfile(logf);
	fprintf(logf, "%10.3f ms tid=%ld ", (double)(now_ns() - t_start) / 1e6, (long)syscall(SYS_gettid));
	vfprintf(logf, fmt, ap);
	fputc('\n', logf);
	funlockfile(logf);
	fflush(logf);
	va_end(ap);
}

static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	if (!real_ioctl)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	return real_ioctl(fd, req, arg);
}

static uint32_t ctrl(int fd, uint32_t client, uint32_t obj, uint32_t cmd, void *p, uint32_t size)
{
	struct os54 c = { client, obj, cmd, 0, (uint64_t)(uintptr_t)p, size, 0 };
	int rc = raw_ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 'F', ESC_CONTROL, sizeof c), &c);
	return rc ? 0xffffffffu : c.status;
}

static struct obj *find(uint32_t client, uint32_t handle)
{
	for (int i = 0; i < nobj; i++)
		if (objs[i].client == client && objs[i].handle == handle)
			return &objs[i];
	return NULL;
}

// The TSG an object of ours belongs to: itself, or a channel's parent.
static struct obj *tsg_of(uint32_t client, uint32_t handle)
{
	struct obj *o = find(client, handle);
	if (!o)
		return NULL;
	if (o->cls == CLS_TSG)
		return o;
	return find(client, o->parent);
}

static void set_ts(struct obj *t, const char *why)
{
	uint64_t v = ts_us, g = 0;
	uint64_t a = now_ns();
	uint32_t s = ctrl(t->fd, t->client, t->handle, SET_TS, &v, 8);
	uint64_t b = now_ns();
	uint32_t s2 = ctrl(t->fd, t->client, t->handle, GET_TS, &g, 8);
	logx("set-ts why=%s tsg=%#x ts=%llu status=%#x took_us=%.1f get=%llu(st %#x)", why, t->handle,
	     (unsigned long long)ts_us, s, (double)(b - a) / 1e3, (unsigned long long)g, s2);
}

static int interesting_cmd(uint32_t cmd)
{
	uint32_t cls = cmd >> 16;
	return cls == 0xa06c || cls == 0xa06f || cls == 0xc86f || cls == 0x9067 ||
	       (cmd & 0xffffff00u) == 0x20801200u || (cmd & 0xffffff00u) == 0x20801100u;
}

static void on_control(int fd, struct os54 *c, uint64_t took)
{
	struct obj *o = find(c->client, c->object);
	if (!o && !interesting_cmd(c->cmd))
		return;
	uint32_t w[4] = { 0 };
	if (c->params && c->size)
		memcpy(w, (void *)(uintptr_t)c->params, c->size < 16 ? c->size : 16);
	logx("ctrl cmd=%#x obj=%#x cls=%#x size=%u status=%#x took_us=%.1f p=%08x %08x %08x %08x", c->cmd,
	     c->object, o ? o->cls : 0, c->size, c->status, (double)took / 1e3, w[0], w[1], w[2], w[3]);
	if (!ts_us || c->status || !when_sched)
		return;
	if (c->cmd == TSG_SCHED || c->cmd == TSG_BIND || c->cmd == CH_SCHED || c->cmd == CH_BIND) {
		struct obj *t = tsg_of(c->client, c->object);
		if (t)
			set_ts(t, "after-sched");
	}
	(void)fd;
}

static void *late_thread(void *arg)
{
	(void)arg;
	inside = 1;
	struct timespec t = { late_ms / 1000, (late_ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nobj; i++)
		if (objs[i].cls == CLS_TSG)
			set_ts(&objs[i], "late");
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *mon_thread(void *arg)
{
	(void)arg;
	inside = 1;
	uint64_t last[512] = { 0 };
	for (int k = 0; k < 20; k++) {
		struct timespec t = { 0, 500000000L };
		nanosleep(&t, NULL);
		pthread_mutex_lock(&mu);
		for (int i = 0; i < nobj; i++) {
			if (objs[i].cls != CLS_TSG)
				continue;
			uint64_t g = 0;
			uint32_t s = ctrl(objs[i].fd, objs[i].client, objs[i].handle, GET_TS, &g, 8);
			if (g != last[i] || k == 19)
				logx("mon tsg=%#x get=%llu(st %#x)", objs[i].handle, (unsigned long long)g, s);
			last[i] = g;
		}
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

// The gate: latencies of the controls, in us.
static double lat_off[100000], lat_on[100000];
static int n_off, n_on;
static uint32_t bad_status;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void gate_report(void)
{
	static double s[100000];
	for (int k = 0; k < 2; k++) {
		double *v = k ? lat_on : lat_off;
		int n = k ? n_on : n_off;
		if (!n) {
			logx("gate %s n=0", k ? "on" : "off");
			continue;
		}
		memcpy(s, v, sizeof(double) * (size_t)n);
		qsort(s, (size_t)n, sizeof(double), cmp_d);
		logx("gate %s n=%d p50_us=%.1f p99_us=%.1f max_us=%.1f bad_status=%#x", k ? "on" : "off", n,
		     s[n / 2], s[n * 99 / 100], s[n - 1], bad_status);
	}
}

static int gate_apply(int off, int preempt)
{
	int n = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nobj; i++) {
		if (objs[i].cls != CLS_TSG)
			continue;
		/* libcuda 580 issues it with 3 bytes (bEnable, bSkipSubmit, one more); 2 gave 0x1f */
		uint8_t p[3] = { (uint8_t)!off, 0, 0 };
		uint32_t s = ctrl(objs[i].fd, objs[i].client, objs[i].handle, TSG_SCHED, p, 3);
		if (s && !bad_status) {
			bad_status = s;
			logx("gate sched(%d) tsg=%#x status=%#x", !off, objs[i].handle, s);
		}
		if (!off && ts_us && getenv("RMP_GATE_RESET")) {
			uint64_t v = ts_us;
			uint32_t s2 = ctrl(objs[i].fd, objs[i].client, objs[i].handle, SET_TS, &v, 8);
			if (s2 && !bad_status)
				bad_status = s2;
		}
		if (off && preempt) {
			struct { uint8_t wait, manual; uint8_t pad[2]; uint32_t timeout; } pp = { 0, 0, { 0 }, 0 };
			s = ctrl(objs[i].fd, objs[i].client, objs[i].handle, TSG_PREEMPT, &pp, sizeof pp);
			if (s && !bad_status) {
				bad_status = s;
				logx("gate preempt tsg=%#x status=%#x", objs[i].handle, s);
			}
		}
		n++;
	}
	pthread_mutex_unlock(&mu);
	return n;
}

static void *gate_thread(void *arg)
{
	const char *path = arg;
	inside = 1;
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		logx("gate: cannot open %s", path);
		return NULL;
	}
	volatile uint64_t *flag = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (flag == MAP_FAILED) {
		logx("gate: cannot map %s", path);
		return NULL;
	}
	const char *m = getenv("RMP_GATE_MODE");
	int preempt = m && !strcmp(m, "preempt");
	const char *pu = getenv("RMP_POLL_US");
	long poll = pu ? strtol(pu, NULL, 10) : 20;
	const char *lg = getenv("RMP_LINGER_US");
	uint64_t linger = lg ? strtoull(lg, NULL, 10) * 1000 : 0, closed_at = 0;
	int off = 0;
	uint64_t last_report = now_ns();
	logx("gate: polling %s every %ld us mode %s", path, poll, m ? m : "sched");
	for (;;) {
		int open_now = *flag != 0;
		if (open_now)
			closed_at = 0;
		else if (off && !closed_at)
			closed_at = now_ns();
		if (!open_now && off && now_ns() - closed_at < linger)
			open_now = 1; /* lingers: the next step may come */
		if (open_now != off) {
			uint64_t a = now_ns();
			int n = gate_apply(open_now, preempt);
			double us = (double)(now_ns() - a) / 1e3;
			if (getenv("RMP_GATE_LOG")) /* absolute CLOCK_MONOTONIC ns: a timeline lines them up */
				logx("gate-x hold=%d from_ns=%llu to_ns=%llu groups=%d", open_now,
				     (unsigned long long)a, (unsigned long long)now_ns(), n);
			if (n) {
				if (open_now && n_off < 100000)
					lat_off[n_off++] = us;
				if (!open_now && n_on < 100000)
					lat_on[n_on++] = us;
			}
			off = open_now;
		}
		if (now_ns() - last_report > 2000000000ull) {
			gate_report();
			last_report = now_ns();
		}
		struct timespec t = { 0, poll * 1000 };
		nanosleep(&t, NULL);
	}
	return NULL;
}

static void on_alloc(int fd, uint32_t *p, unsigned size)
{
	uint32_t status = size >= 48 ? p[10] : p[7];
	if (status)
		return;
	uint32_t cls = p[3];
	if (cls != CLS_TSG && cls != 0xc86fu && cls != 0xa06fu && cls != 0xc76fu && cls != 0xc56fu)
		return;
	pthread_mutex_lock(&mu);
	if (nobj < 512)
		objs[nobj++] = (struct obj){ fd, p[0], p[2], p[1], cls };
	pthread_mutex_unlock(&mu);
	logx("alloc cls=%#x client=%#x parent=%#x handle=%#x", cls, p[0], p[1], p[2]);
	if (cls == CLS_TSG) {
		int first = atomic_fetch_add(&ntsg_seen, 1) == 0;
		struct obj t = { fd, p[0], p[2], p[1], cls };
		if (ts_us && when_alloc)
			set_ts(&t, "alloc");
		if (first && late_ms >= 0) {
			pthread_t th;
			pthread_create(&th, NULL, late_thread, NULL);
			pthread_detach(th);
		}
	}
}

static void on_free(uint32_t *p)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nobj; i++)
		if (objs[i].client == p[0] && objs[i].handle == p[2]) {
			logx("free cls=%#x handle=%#x", objs[i].cls, objs[i].handle);
			objs[i] = objs[--nobj];
			break;
		}
	pthread_mutex_unlock(&mu);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) != 'F' || inside || !arg)
		return raw_ioctl(fd, req, arg);
	unsigned nr = _IOC_NR(req);
	if (nr == ESC_CONTROL) {
		struct os54 *c = arg;
		struct os54 mine;
		uint64_t v;
		int rewrote = 0;
		uint32_t pm[8];
		if (cilp_mode >= 0 && c->cmd == SET_PMODE && c->size == sizeof pm) {
			memcpy(pm, (void *)(uintptr_t)c->params, sizeof pm);
			logx("rewrite libcuda SET_CTXSW_PREEMPTION_MODE flags=%u ch=%#x gfxp=%u cilp %u -> %d",
			     pm[0], pm[1], pm[2], pm[3], cilp_mode);
			pm[3] = (uint32_t)cilp_mode;
			mine = *c;
			mine.params = (uint64_t)(uintptr_t)pm;
			rewrote = 1;
		}
		if (ts_us && when_rewrite && c->cmd == SET_TS && c->size == 8) {
			pthread_mutex_lock(&mu);
			struct obj *o = find(c->client, c->object);
			pthread_mutex_unlock(&mu);
			if (o) {
				memcpy(&v, (void *)(uintptr_t)c->params, 8);
				logx("rewrite libcuda SET_TIMESLICE tsg=%#x %llu -> %llu", c->object,
				     (unsigned long long)v, (unsigned long long)ts_us);
				mine = *c;
				v = ts_us;
				mine.params = (uint64_t)(uintptr_t)&v;
				rewrote = 1;
			}
		}
		uint64_t a = now_ns();
		int rc = raw_ioctl(fd, req, rewrote ? (void *)&mine : arg);
		uint64_t took = now_ns() - a;
		if (rewrote)
			c->status = mine.status;
		if (rewrote && c->cmd == SET_PMODE)
			logx("SET_CTXSW_PREEMPTION_MODE rc=%d status=%#x", rc, c->status);
		if (rc == 0) {
			inside = 1;
			pthread_mutex_lock(&mu);
			on_control(fd, c, took);
			pthread_mutex_unlock(&mu);
			inside = 0;
		}
		return rc;
	}
	int rc = raw_ioctl(fd, req, arg);
	if (rc == 0 && nr == ESC_ALLOC) {
		inside = 1;
		on_alloc(fd, arg, _IOC_SIZE(req));
		inside = 0;
	} else if (rc == 0 && nr == ESC_FREE) {
		on_free(arg);
	}
	return rc;
}

__attribute__((constructor)) static void start(void)
{
	real_ioctl = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	t_start = now_ns();
	const char *l = getenv("RMP_LOG");
	if (l) {
		char path[512];
		snprintf(path, sizeof path, "%s.%d", l, getpid());
		logf = fopen(path, "w");
	}
	const char *ts = getenv("RMP_TS");
	if (ts)
		ts_us = strtoull(ts, NULL, 10);
	const char *cm = getenv("RMP_CILP");
	if (cm && *cm)
		cilp_mode = (int)strtol(cm, NULL, 10);
	const char *w = getenv("RMP_WHEN");
	if (w) {
		when_alloc = strstr(w, "alloc") != NULL;
		when_sched = strstr(w, "sched") != NULL;
		when_rewrite = strstr(w, "rewrite") != NULL;
		const char *lt = strstr(w, "late:");
		if (lt)
			late_ms = (int)strtol(lt + 5, NULL, 10);
	}
	char exe[256] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0)
		exe[n] = 0;
	logx("start pid=%d uid=%d exe=%s ts=%llu when=%s", getpid(), getuid(), exe, (unsigned long long)ts_us,
	     w ? w : "");
	pthread_t th;
	if (getenv("RMP_MON")) {
		pthread_create(&th, NULL, mon_thread, NULL);
		pthread_detach(th);
	}
	const char *g = getenv("RMP_GATE");
	if (g) {
		pthread_create(&th, NULL, gate_thread, (void *)g);
		pthread_detach(th);
	}
}

__attribute__((destructor)) static void stop(void)
{
	if (getenv("RMP_GATE"))
		gate_report();
	logx("exit");
}
