/* apitrace.c - LD_PRELOAD probe: counts the driver API calls a process makes (CUPTI's driver API
 * callback domain), and logs the calls of one stretch (APITRACE_SKIP calls in, APITRACE_N calls,
 * with their entry times in us and their durations) to APITRACE_OUT.PID at exit. */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXID 2048
#define LOGN 4000
static unsigned long counts[MAXID];
static const char *names[MAXID];
static struct { int id; double t, dur; unsigned long tid; } lg[LOGN];
static unsigned long seen, skip, n_log;
static __thread double entered[MAXID];
static CUpti_SubscriberHandle sub;

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void CUPTIAPI cb(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *c = data;
	(void)u;
	if (d != CUPTI_CB_DOMAIN_DRIVER_API || id >= MAXID)
		return;
	if (c->callbackSite == CUPTI_API_ENTER) {
		entered[id] = now_us();
		return;
	}
	__atomic_add_fetch(&counts[id], 1, __ATOMIC_RELAXED);
	names[id] = c->functionName;
	unsigned long k = __atomic_fetch_add(&seen, 1, __ATOMIC_RELAXED);
	if (k >= skip && k - skip < LOGN) {
		unsigned long i = k - skip;
		lg[i].id = (int)id;
		lg[i].t = entered[id];
		lg[i].dur = now_us() - entered[id];
		lg[i].tid = (unsigned long)gettid();
		__atomic_add_fetch(&n_log, 1, __ATOMIC_RELAXED);
	}
}

__attribute__((constructor)) static void start(void)
{
	skip = getenv("APITRACE_SKIP") ? strtoul(getenv("APITRACE_SKIP"), NULL, 10) : 20000;
	if (cuptiSubscribe(&sub, cb, NULL) || cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API))
		fprintf(stderr, "apitrace: cannot subscribe\n");
}

__attribute__((destructor)) static void stop(void)
{
	char path[256];
	const char *o = getenv("APITRACE_OUT");
	FILE *f;
	if (!o || !seen)
		return;
	snprintf(path, sizeof(path), "%s.%d", o, (int)getpid());
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "# %lu calls\n", seen);
	for (int i = 0; i < MAXID; i++)
		if (counts[i])
			fprintf(f, "count %s %lu\n", names[i] ? names[i] : "?", counts[i]);
	for (unsigned long i = 0; i < n_log && i < LOGN; i++)
		fprintf(f, "call %.1f %.1f %lu %s\n", lg[i].t, lg[i].dur, lg[i].tid,
			names[lg[i].id] ? names[lg[i].id] : "?");
	fclose(f);
}
