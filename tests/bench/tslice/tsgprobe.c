// tsgprobe.c - probe: LD_PRELOAD library that sees the channel groups (TSGs, class 0xa06c)
// libcuda allocates through the RM's ioctl and applies channel-group controls to them.
// Env: TSGP_TS_US (timeslice to set), TSGP_LEVEL (interleave 0-2), TSGP_RT (1: realtime),
// TSGP_LOG (1: log to stderr).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>

struct tsg { int fd; uint32_t client, tsg; };
static struct tsg tsgs[64];
static int ntsg;

struct os54 { uint32_t client, object, cmd, flags; uint64_t params; uint32_t size, status; };
static int (*real_ioctl)(int, unsigned long, void *);

static uint32_t ctrl(int fd, uint32_t client, uint32_t obj, uint32_t cmd, void *p, uint32_t size)
{
	struct os54 c = { client, obj, cmd, 0, (uint64_t)(uintptr_t)p, size, 0 };
	int rc = real_ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 'F', 0x2A, sizeof c), &c);
	return rc ? 0xffffffffu : c.status;
}

static void act(int fd, uint32_t client, uint32_t parent, uint32_t tsg, void *aparams, uint32_t psize)
{
	const char *ts = getenv("TSGP_TS_US"), *lv = getenv("TSGP_LEVEL"), *rt = getenv("TSGP_RT");
	int log = getenv("TSGP_LOG") != NULL;
	uint64_t get0 = 0, get1 = 0; uint32_t s0, s1 = 0, s2 = 0, s3 = 0, s4;
	uint32_t eng = psize >= 4 && aparams ? *(uint32_t *)aparams : 0xffffffff;
	s0 = ctrl(fd, client, tsg, 0xa06c0104, &get0, 8);
	if (ts) { uint64_t v = strtoull(ts, NULL, 10); s1 = ctrl(fd, client, tsg, 0xa06c0103, &v, 8); }
	if (lv) { uint32_t v = strtoul(lv, NULL, 10); s2 = ctrl(fd, client, tsg, 0xa06c0107, &v, 4); }
	if (rt) { uint8_t v = 1; s3 = ctrl(fd, client, tsg, 0xa06c0110, &v, 1); }
	s4 = ctrl(fd, client, tsg, 0xa06c0104, &get1, 8);
	if (ntsg < 64) { tsgs[ntsg].fd = fd; tsgs[ntsg].client = client; tsgs[ntsg].tsg = tsg; ntsg++; }
	if (log)
		fprintf(stderr, "tsgprobe pid=%d uid=%d fd=%d client=%#x parent=%#x tsg=%#x engtype=%#x psize=%u "
			"get0=%llu(st %#x) set=%#x level=%#x rt=%#x get1=%llu(st %#x)\n", getpid(), getuid(), fd,
			client, parent, tsg, eng, psize, (unsigned long long)get0, s0, s1, s2, s3,
			(unsigned long long)get1, s4);
}

static void *later(void *arg)
{
	(void)arg;
	const char *d = getenv("TSGP_DELAY_MS"), *ts = getenv("TSGP_TS_US");
	struct timespec t = { 0, 0 };
	long ms = strtol(d, NULL, 10);
	t.tv_sec = ms / 1000; t.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&t, NULL);
	for (int i = 0; i < ntsg; i++) {
		uint64_t v = strtoull(ts, NULL, 10), g = 0;
		uint32_t s = ctrl(tsgs[i].fd, tsgs[i].client, tsgs[i].tsg, 0xa06c0103, &v, 8);
		uint32_t s2 = ctrl(tsgs[i].fd, tsgs[i].client, tsgs[i].tsg, 0xa06c0104, &g, 8);
		fprintf(stderr, "tsgprobe later pid=%d tsg=%#x set=%#x get=%llu(st %#x)\n", getpid(), tsgs[i].tsg, s,
			(unsigned long long)g, s2);
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	pthread_t th;
	if (getenv("TSGP_DELAY_MS") && getenv("TSGP_TS_US")) {
		pthread_create(&th, NULL, later, NULL);
		pthread_detach(th);
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap; va_start(ap, req); void *arg = va_arg(ap, void *); va_end(ap);
	if (!real_ioctl) real_ioctl = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	int rc = real_ioctl(fd, req, arg);
	if (rc == 0 && _IOC_TYPE(req) == 'F' && _IOC_NR(req) == 0x2B && arg) {
		uint32_t *p = arg; unsigned size = _IOC_SIZE(req);
		uint32_t status = size >= 48 ? p[10] : p[7];
		uint64_t ap64; memcpy(&ap64, p + 4, 8);
		uint32_t psize = size >= 48 ? p[8] : p[6];
		if (p[3] == 0xa06c && status == 0) act(fd, p[0], p[1], p[2], (void *)(uintptr_t)ap64, psize);
	}
	return rc;
}
