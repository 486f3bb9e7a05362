/*
 * smctrlapp.c - a program written for libsmctrl (include/libsmctrl.h), linked
 * against nvtaskset's libsmctrl.so and the fake libcuda.so.1. Each step
 * prints one line: "NAME tpcs=LIST" (the logical TPCs the fake chip ran its
 * launch on), or "NAME rc=N ..." for the queries.
 *
 *   smctrlapp all          every step (tests/e2e/smctrl.sh says what each expects)
 *   smctrlapp global LIST  a global mask enabling LIST, one launch
 *   smctrlapp launches N   a stream and a global mask; N launches on that stream,
 *                          each after a next mask; prints the last one
 *   smctrlapp fork         a global mask enabling TPCs 0-3; fork while another
 *                          thread sets masks; the child (under the partition
 *                          nvtaskset copies for it) sets a stream mask and
 *                          launches: "child global tpcs=L" "child stream tpcs=L"
 *   smctrlapp loop STOP STATE  a stream mask enabling TPCs 0-15, launches on
 *                          that stream until file STOP exists, writing the TPCs
 *                          of the latest to STATE when they change
 *   smctrlapp cluster LIST N  a global mask enabling LIST, one launch of
 *                          thread-block clusters of N, then a stream mask
 *                          enabling LIST and one more on that stream:
 *                          "cluster tpcs=L" "cluster-stream tpcs=L"
 *   smctrlapp gpcs         the GPC queries only ("gpc_info ..." lines), no launch
 *   smctrlapp destroyed N  N times: a stream, a stream mask enabling TPCs 0-3, one
 *                          launch on it, the stream destroyed; then a new stream
 *                          (the driver may give it a destroyed one's handle): one
 *                          launch without a mask ("unmasked tpcs=L"), and one after a
 *                          mask enabling TPCs 4-7 ("masked tpcs=L")
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakecuda.h"
#include "libsmctrl.h"
#include "core/tpcset.h"

int cuInit(unsigned flags);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuStreamCreate(void **stream, unsigned flags);
int cuStreamDestroy_v2(void *stream);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned shmem, void *stream, void **params, void **extra);
int cuLaunchKernelEx(const NVT_LAUNCH_CONFIG *cfg, void *f, void **params, void **extra);

static int kernel; /* any address is a function to the fake */

/* The logical TPCs of this thread's last launch, as a list ("-": it hung). */
static const char *ran(int rc)
{
	static char text[NVT_LIST_TEXT_MAX];
	struct fakecuda_launch rec;
	struct nvt_tpcset set;

	if (rc || fakecuda_last_launch(&rec) || rec.hung)
		return rc == NVT_CUDA_ERROR_LAUNCH_TIMEOUT ? "HANG" : "-";
	memset(&set, 0, sizeof(set));
	memcpy(set.w, rec.ran_tpcs, sizeof(rec.ran_tpcs));
	nvt_format_list(&set, text, sizeof(text));
	return text;
}

static const char *launch(void *stream)
{
	return ran(cuLaunchKernel(&kernel, 264, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
}

/* A disable mask that enables the TPCs of list. */
static uint128_t all_but(const char *list)
{
	struct nvt_tpcset set;
	uint128_t on;

	if (nvt_parse_list(list, 128, &set)) {
		fprintf(stderr, "smctrlapp: bad list %s\n", list);
		exit(2);
	}
	on = ((uint128_t)set.w[1] << 64) | set.w[0];
	return ~on;
}

/* libsmctrl_get_gpc_info_ext()'s answer: "gpc_info_ext rc=N gpcs=G HIGH,LOW..." */
static void gpc_info_ext(void)
{
	uint32_t gpcs = 0;
	uint128_t *m128;
	int rc = libsmctrl_get_gpc_info_ext(&gpcs, &m128, 0);

	printf("gpc_info_ext rc=%d gpcs=%u", rc, gpcs);
	for (uint32_t i = 0; rc == 0 && i < gpcs; i++)
		printf(" %llx,%llx", (unsigned long long)(m128[i] >> 64), (unsigned long long)m128[i]);
	printf("\n");
}

/* libsmctrl_get_gpc_info()'s answer: "gpc_info rc=N gpcs=G MASK..." */
static void gpc_info(void)
{
	uint32_t gpcs = 0;
	uint64_t *m64;
	int rc = libsmctrl_get_gpc_info(&gpcs, &m64, 0);

	printf("gpc_info rc=%d gpcs=%u", rc, gpcs);
	for (uint32_t i = 0; rc == 0 && i < gpcs; i++)
		printf(" %llx", (unsigned long long)m64[i]);
	printf("\n");
}

static void queries(void)
{
	uint32_t n = 0, gpcs = 0;
	uint64_t *m64;
	uint128_t *m128;
	int rc;

	rc = libsmctrl_get_tpc_info_cuda(&n, 0);
	printf("tpc_info_cuda rc=%d tpcs=%u\n", rc, n);
	rc = libsmctrl_get_tpc_info(&n, 0);
	printf("tpc_info rc=%d tpcs=%u\n", rc, n);
	gpc_info_ext();
	gpc_info();
	printf("bad tpc_info_cuda(NULL) rc=%d\n", libsmctrl_get_tpc_info_cuda(NULL, 0));
	printf("bad tpc_info_cuda(dev 7) rc=%d\n", libsmctrl_get_tpc_info_cuda(&n, 7));
	printf("bad gpc_info(NULL) rc=%d\n", libsmctrl_get_gpc_info(NULL, &m64, 0));
	printf("bad gpc_info_ext(dev -1) rc=%d\n", libsmctrl_get_gpc_info_ext(&gpcs, &m128, -1));
}

static void all(void)
{
	NVT_LAUNCH_CONFIG cfg = {.grid = {264, 1, 1}, .block = {128, 1, 1}};
	NVT_LAUNCH_ATTRIBUTE attr = {.id = NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, .value.cluster_dim = {2, 1, 1}};
	void *s, *s2;

	if (cuStreamCreate(&s, 0) || cuStreamCreate(&s2, 0))
		exit(2);
	queries();
	printf("baseline tpcs=%s\n", launch(s));
	libsmctrl_set_global_mask(~0xfull);
	printf("global64-0-3 tpcs=%s\n", launch(s));
	libsmctrl_set_global_mask_ext(all_but("60-65"));
	printf("global-60-65 tpcs=%s\n", launch(s));
	libsmctrl_set_next_mask_ext(all_but("5"));
	printf("next-5 tpcs=%s\n", launch(s));
	printf("after-next tpcs=%s\n", launch(s));
	libsmctrl_set_next_mask(~(1ull << 40));
	printf("next64-40 tpcs=%s\n", launch(s));
	libsmctrl_set_next_mask(0);
	printf("next-0 tpcs=%s\n", launch(s));
	libsmctrl_set_stream_mask_ext(s2, all_but("62-65"));
	printf("stream-62-65 tpcs=%s\n", launch(s2));
	libsmctrl_set_stream_mask(s2, ~0xf0ull);
	printf("stream64-4-7 tpcs=%s\n", launch(s2));
	printf("other-stream tpcs=%s\n", launch(s));
	cfg.stream = s2;
	printf("stream-ex tpcs=%s\n", ran(cuLaunchKernelEx(&cfg, &kernel, NULL, NULL)));
	libsmctrl_set_next_mask_ext(all_but("7"));
	printf("next-over-stream tpcs=%s\n", launch(s2));
	libsmctrl_set_stream_mask_ext(NULL, all_but("9"));
	printf("null-stream tpcs=%s\n", launch(NULL));
	printf("legacy-stream tpcs=%s\n", launch((void *)1));
	printf("per-thread-null tpcs=%s\n",
	       ran(cuLaunchKernel_ptsz(&kernel, 264, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL)));
	libsmctrl_set_stream_mask_ext((void *)2, all_but("11"));
	printf("per-thread-stream tpcs=%s\n",
	       ran(cuLaunchKernel_ptsz(&kernel, 264, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL)));
	libsmctrl_set_stream_mask_ext(s2, 0);
	printf("stream-cleared tpcs=%s\n", launch(s2));
	libsmctrl_set_global_mask_ext(~(uint128_t)0);
	printf("global-none tpcs=%s\n", launch(s));
	libsmctrl_set_global_mask(~0ull);
	printf("global64-none tpcs=%s\n", launch(s));
	libsmctrl_set_global_mask_ext(all_but("100-127"));
	printf("global-absent-tpcs tpcs=%s\n", launch(s));
	libsmctrl_set_global_mask_ext(all_but("0-3"));
	cfg.stream = s;
	cfg.attrs = &attr;
	cfg.num_attrs = 1;
	printf("cluster tpcs=%s\n", ran(cuLaunchKernelEx(&cfg, &kernel, NULL, NULL)));
	libsmctrl_set_global_mask(0);
	printf("global-cleared tpcs=%s\n", launch(s));
	cuStreamDestroy_v2(s);
	cuStreamDestroy_v2(s2);
}

/* Sets masks until told to stop: a fork may come while it holds a lock. */
static int stop_setting;
static void *keep_setting(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_setting, __ATOMIC_RELAXED)) {
		libsmctrl_set_stream_mask_ext((void *)3, all_but("1"));
		libsmctrl_set_global_mask_ext(all_but("0-3"));
	}
	return NULL;
}

static int fork_child(void)
{
	pthread_t t;
	void *s;
	int status;

	libsmctrl_set_global_mask_ext(all_but("0-3"));
	if (pthread_create(&t, NULL, keep_setting, NULL))
		return 2;
	for (int i = 0; i < 50; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* A setter's lock held at the fork would hang this. */
			if (cuStreamCreate(&s, 0))
				_exit(2);
			libsmctrl_set_stream_mask_ext(s, all_but("8-9"));
			if (i == 49) {
				printf("child global tpcs=%s\n", launch(NULL));
				printf("child stream tpcs=%s\n", launch(s));
				fflush(stdout);
			}
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 2;
	}
	__atomic_store_n(&stop_setting, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	void *ctx;

	if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "smctrlapp: no fake device\n");
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "all")) {
		all();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return fork_child();
	if (argc == 3 && !strcmp(argv[1], "global")) {
		libsmctrl_set_global_mask_ext(all_but(argv[2]));
		printf("global tpcs=%s\n", launch(NULL));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "cluster")) {
		NVT_LAUNCH_ATTRIBUTE attr = {.id = NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
		NVT_LAUNCH_CONFIG cfg = {.grid = {264, 1, 1}, .block = {128, 1, 1}, .attrs = &attr, .num_attrs = 1};
		void *s;
		attr.value.cluster_dim[0] = (unsigned)strtoul(argv[3], NULL, 10);
		attr.value.cluster_dim[1] = attr.value.cluster_dim[2] = 1;
		cfg.grid[0] = 16 * attr.value.cluster_dim[0];
		if (cuStreamCreate(&s, 0))
			return 2;
		libsmctrl_set_global_mask_ext(all_but(argv[2]));
		printf("cluster tpcs=%s\n", ran(cuLaunchKernelEx(&cfg, &kernel, NULL, NULL)));
		libsmctrl_set_global_mask(0);
		libsmctrl_set_stream_mask_ext(s, all_but(argv[2]));
		cfg.stream = s;
		printf("cluster-stream tpcs=%s\n", ran(cuLaunchKernelEx(&cfg, &kernel, NULL, NULL)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "destroyed")) {
		long n = strtol(argv[2], NULL, 10);
		void *s;
		for (long i = 0; i < n; i++) {
			if (cuStreamCreate(&s, 0))
				return 2;
			libsmctrl_set_stream_mask_ext(s, all_but("0-3"));
			launch(s);
			cuStreamDestroy_v2(s);
		}
		if (cuStreamCreate(&s, 0))
			return 2;
		printf("unmasked tpcs=%s\n", launch(s));
		libsmctrl_set_stream_mask_ext(s, all_but("4-7"));
		printf("masked tpcs=%s\n", launch(s));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "gpcs")) {
		gpc_info_ext();
		gpc_info();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "launches")) {
		long n = strtol(argv[2], NULL, 10);
		const char *last = "-";
		void *s;
		if (cuStreamCreate(&s, 0))
			return 2;
		libsmctrl_set_global_mask_ext(all_but("0-31"));
		libsmctrl_set_stream_mask_ext(s, all_but("0-15"));
		for (long i = 0; i < n; i++) {
			libsmctrl_set_next_mask_ext(all_but("4-7"));
			last = launch(s);
		}
		printf("launches tpcs=%s\n", last);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "loop")) {
		char last[NVT_LIST_TEXT_MAX] = "", tmp[4096];
		void *s;
		if (cuStreamCreate(&s, 0))
			return 2;
		libsmctrl_set_stream_mask_ext(s, all_but("0-15"));
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
		while (access(argv[2], F_OK) != 0) {
			const char *now = launch(s);
			if (strcmp(now, last)) {
				FILE *f = fopen(tmp, "w");
				if (!f)
					return 2;
				fprintf(f, "%s\n", now);
				fclose(f);
				rename(tmp, argv[3]);
				snprintf(last, sizeof(last), "%s", now);
			}
			usleep(2000);
		}
		return 0;
	}
	fprintf(stderr, "usage: smctrlapp all | global LIST | launches N | fork | loop STOP STATE | "
			"cluster LIST N | gpcs\n");
	return 2;
}
