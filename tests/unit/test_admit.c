/*
 * test_admit.c - whether a container given one of nvtaskset's CDI devices
 * may start (src/task/admit.c): on uid_map and config.json buffers, each
 * answer of enum nvt_admit_rc and what it names.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/tpcset.h"
#include "task/admit.h"
#include "task/task.h"
#include "task/container.h"

#define STR(s) s, strlen(s)
#define IDENTITY "         0          0 4294967295\n"
#define ROOTLESS "         0       1000          1\n         1     100000      65536\n"

static char config[8192];

/* config.json with env (a JSON array's items, "" for none) and a createRuntime hook of arg
 * (NULL: none). */
static size_t config_of(const char *env, const char *hook_arg)
{
	int n = snprintf(config, sizeof(config), "{\"process\":{\"env\":[%s]},\"hooks\":{\"createRuntime\":[%s%s%s]}}",
			 env, hook_arg ? "{\"path\":\"/x\",\"args\":[\"nvtaskset\",\"--cdi-hook\",\"" : "",
			 hook_arg ? hook_arg : "", hook_arg ? "\"]}" : "");
	return (size_t)n;
}

static void test_users(void)
{
	struct nvt_admit_why w;
	int rootless = -1;
	const char *mapped = "         0     100000      65536\n";

	/* Rootful, no user namespace of its own: admitted. */
	CHECK(nvt_admit_users(STR(IDENTITY), NULL, 0, 1000, &rootless, &w) == NVT_ADMIT_OK && !rootless);
	CHECK(nvt_admit_users(STR(IDENTITY), STR(IDENTITY), 0, &rootless, &w) == NVT_ADMIT_OK);
	/* A namespace that maps its root to 100000: refused, saying both uids. */
	CHECK(nvt_admit_users(STR(IDENTITY), STR(mapped), 0, &rootless, &w) == NVT_ADMIT_MAPPED &&
	      w.uid == 0 && w.outside == 100000);
	CHECK(nvt_admit_users(STR(IDENTITY), STR(mapped), 70000, &rootless, &w) == NVT_ADMIT_UNMAPPED &&
	      w.uid == 70000);
	/* Rootless, keep-id (the container's 1000 is the hook's 0, which is 1000 outside). */
	CHECK(nvt_admit_users(STR(ROOTLESS), STR("         0          1       1000\n      1000          0          1\n"),
			      1000, &rootless, &w) == NVT_ADMIT_OK && rootless);
	/* Rootless in the hook's own namespace: its uid 0 is 1000 outside. */
	CHECK(nvt_admit_users(STR(ROOTLESS), NULL, 0, 0, &rootless, &w) == NVT_ADMIT_MAPPED &&
	      w.outside == 1000 && rootless);
	CHECK(nvt_admit_users(STR(ROOTLESS), NULL, 0, 200000, &rootless, &w) == NVT_ADMIT_UNMAPPED);
	/* A malformed map maps nothing. */
	CHECK(nvt_admit_users(STR(IDENTITY), STR("0 x 1\n"), 0, &rootless, &w) == NVT_ADMIT_UNMAPPED);
}

/* The container's NVTASKSET_PRIORITY as the device priority=NAME gives it. */
static const char *prio_value(uint8_t prio)
{
	static struct nvt_task_env env;
	struct nvt_cdi_device pd = {.cls = NVT_CDI_PRIORITY, .gpu = -1, .prio = prio};
	char why[256];

	CHECK(nvt_task_cdi_device_env(&pd, NULL, 0, &env, why, sizeof(why)) == 0);
	return env.priority;
}

static int config_check(const char *device, const char *env, const char *hook, struct nvt_admit_why *w,
			int *has_prio)
{
	struct nvt_cdi_device d;
	struct nvt_slot_prio prio = {0};
	size_t len = config_of(env, hook);

	CHECK(nvt_cdi_device_parse(strchr(device, '/') + 1, &d) == 0);
	return nvt_admit_config(config, len, device, &d, &prio, has_prio, w);
}

static void test_config(void)
{
	struct nvt_admit_why w;
	char env[2048], low[NVT_PRIO_ENV_TEXT_MAX];
	int has = -1;

	snprintf(low, sizeof(low), "%s", prio_value(NVT_PRIO_LOW));
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\"", NULL, &w, &has) == NVT_ADMIT_OK && !has);
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_RUNDIR=/tmp\"", NULL, &w, &has) == NVT_ADMIT_RUNDIR);
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_RUNDIR=/run/nvtaskset\"", NULL, &w,
			   &has) == NVT_ADMIT_OK);
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_MPS_SERVER=low\"", NULL, &w, &has) == NVT_ADMIT_MPS_SERVER);
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=gpc=0-1\"", NULL, &w, &has) == NVT_ADMIT_OTHER_PARTITION &&
	      !strcmp(w.device, "v/gpc=0-1"));
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=bogus\"", NULL, &w, &has) == NVT_ADMIT_OTHER_PARTITION &&
	      !strcmp(w.device, "v/?"));
	/* No NVTASKSET_CDI at all (the device's environment not applied; no process): said so. */
	CHECK(config_check("v/tpcs=4", "\"PATH=/bin\"", NULL, &w, &has) == NVT_ADMIT_NO_CDI_ENV);
	{
		struct nvt_cdi_device d;
		struct nvt_slot_prio prio = {0};
		static const char bare[] = "{\"hooks\":{}}";
		CHECK(nvt_cdi_device_parse("gpc=0-1", &d) == 0);
		CHECK(nvt_admit_config(bare, sizeof(bare) - 1, "v/gpc=0-1", &d, &prio, &has, &w) ==
		      NVT_ADMIT_NO_CDI_ENV);
	}
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=nonsense\"", NULL, &w, &has) ==
		      NVT_ADMIT_PRIO_MALFORMED &&
	      !strcmp(w.value, "nonsense"));
	/* A priority device alone: its value, its hook. */
	snprintf(env, sizeof(env), "\"NVTASKSET_PRIORITY=%s\"", low);
	CHECK(config_check("v/priority=low", env, "v/priority=low", &w, &has) == NVT_ADMIT_OK && has);
	CHECK(config_check("v/priority=high", env, NULL, &w, &has) == NVT_ADMIT_OTHER_PRIORITY &&
	      w.prio == NVT_PRIO_LOW && !strcmp(w.device, "v/priority=low"));
	/* (a value no device gives: named by its value) */
	CHECK(config_check("v/priority=high", "\"NVTASKSET_PRIORITY=low,guard=4\"", NULL, &w, &has) ==
		      NVT_ADMIT_OTHER_PRIORITY &&
	      !w.device[0] && !strcmp(w.value, "low,guard=4"));
	/* Beside a partition device: that one's hook makes the segment; the partition device's hook
	 * needs the priority device among config.json's hooks. */
	snprintf(env, sizeof(env), "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=%s\"", low);
	CHECK(config_check("v/priority=low", env, "v/priority=low", &w, &has) == NVT_ADMIT_BESIDE);
	CHECK(config_check("v/tpcs=4", env, "v/priority=low", &w, &has) == NVT_ADMIT_OK && has);
	CHECK(config_check("v/tpcs=4", env, NULL, &w, &has) == NVT_ADMIT_PRIO_NO_HOOK &&
	      !strcmp(w.device, "v/priority=low") && w.prio == NVT_PRIO_LOW);
	/* A memory device beside a priority device: the priority's hook makes the segment (on
	 * every GPU, where a memory device of one GPU would make it on that GPU alone). */
	snprintf(env, sizeof(env), "\"NVTASKSET_PRIORITY=%s\"", low);
	CHECK(config_check("v/mem=1:16G", env, "v/priority=low", &w, &has) == NVT_ADMIT_BESIDE && has);
	CHECK(config_check("v/mem=16G", env, "v/priority=low", &w, &has) == NVT_ADMIT_BESIDE);
	CHECK(config_check("v/priority=low", env, "v/priority=low", &w, &has) == NVT_ADMIT_OK);
	CHECK(config_check("v/mem=1:16G", "", NULL, &w, &has) == NVT_ADMIT_OK && !has);
	/* A value of the container's own (-e): not the device's. */
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=low,yield=borrow\"",
			   "v/priority=low", &w, &has) == NVT_ADMIT_PRIO_NOT_ITS &&
	      !strcmp(w.value, "low,yield=borrow") && !strcmp(w.expected, low) &&
	      !strcmp(w.device, "v/priority=low"));
	/* The device's value first (the one read), another after it: set twice. */
	snprintf(env, sizeof(env), "\"NVTASKSET_PRIORITY=%s\",\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=high\"",
		 low);
	CHECK(config_check("v/tpcs=4", env, "v/priority=low", &w, &has) == NVT_ADMIT_PRIO_TWICE);
	/* Malformed: the variable named. */
	CHECK(config_check("v/tpcs=4", "7", NULL, &w, &has) == NVT_ADMIT_MALFORMED && w.name);
	/* Time-sliced: priority=low-slice's value; low and low-slice are two priorities. */
	CHECK(config_check("v/priority=low-slice", "\"NVTASKSET_PRIORITY=low,yield=slice\"",
			   "v/priority=low-slice", &w, &has) == NVT_ADMIT_OK && has);
	CHECK(config_check("v/priority=low", "\"NVTASKSET_PRIORITY=low,yield=slice\"", "v/priority=low",
			   &w, &has) == NVT_ADMIT_OTHER_PRIORITY && !strcmp(w.value, "low,yield=slice") &&
	      !strcmp(w.device, "v/priority=low-slice"));
	snprintf(env, sizeof(env), "\"NVTASKSET_PRIORITY=%s\"", low);
	CHECK(config_check("v/priority=low-slice", env, "v/priority=low-slice", &w, &has) ==
	      NVT_ADMIT_OTHER_PRIORITY);
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=low,yield=slice\"",
			   "v/priority=low", &w, &has) == NVT_ADMIT_PRIO_NO_HOOK &&
	      !strcmp(w.device, "v/priority=low-slice"));
	CHECK(config_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=low,yield=slice\"",
			   "v/priority=low-slice", &w, &has) == NVT_ADMIT_OK && has);
}

/*
 * Every priority a container can carry (each level, time-sliced or not: what
 * nvt_prio_env_parse takes) names a device of the spec's (--cdi makes each):
 * that device's value is admitted by its own hook and by a partition device's
 * beside it, never answered NVT_ADMIT_PRIO_NO_DEVICE, which is left for a
 * priority no device can be named or given for.
 */
static void test_every_priority_has_device(void)
{
	for (uint8_t p = NVT_PRIO_LOW; p <= NVT_PRIO_HIGH; p++)
		for (int slice = 0; slice <= 1; slice++) {
			static struct nvt_task_env given;
			struct nvt_cdi_device pd = {.cls = NVT_CDI_PRIORITY, .gpu = -1, .prio = p, .slice = slice};
			struct nvt_admit_why w;
			char name[NVT_CDI_DEVICE_TEXT_MAX], device[NVT_CDI_DEVICE_TEXT_MAX + 2], env[512], why[256];
			int has = -1, alone, beside;

			CHECK(nvt_cdi_device_format(&pd, name, sizeof(name)) > 0);
			snprintf(device, sizeof(device), "v/%s", name);
			CHECK(nvt_task_cdi_device_env(&pd, NULL, 0, &given, why, sizeof(why)) == 0);
			snprintf(env, sizeof(env), "\"NVTASKSET_PRIORITY=%s\"", given.priority);
			alone = config_check(device, env, device, &w, &has);
			CHECK(alone == NVT_ADMIT_OK && has == 1 && w.prio == p);
			snprintf(env, sizeof(env), "\"NVTASKSET_CDI=tpcs=4\",\"NVTASKSET_PRIORITY=%s\"", given.priority);
			beside = config_check("v/tpcs=4", env, device, &w, &has);
			CHECK(beside == NVT_ADMIT_OK && has == 1 && !strcmp(w.device, device));
			if (alone || beside)
				fprintf(stderr, "%s (%s): answered %d alone, %d beside a partition device\n",
					device, given.priority, alone, beside);
		}
}

/* A time-sliced device's MPS: the level's pipe directory beside the spec's, which the
 * container's variable must be. */
static void test_mps(void)
{
	struct nvt_admit_why w;
	char target[256];
	size_t len;

	len = config_of("\"CUDA_MPS_PIPE_DIRECTORY=/tmp/mps\"", NULL);
	CHECK(nvt_admit_mps(config, len, "/tmp/mps-low", "low", target, sizeof(target), &w) ==
		      NVT_ADMIT_OK &&
	      !strcmp(target, "/tmp/mps"));
	CHECK(nvt_admit_mps(config, len, "/tmp/mps-low", "high", target, sizeof(target), &w) ==
		      NVT_ADMIT_LEVEL_PIPE &&
	      !strcmp(w.value, "/tmp/mps-low"));
	len = config_of("\"CUDA_MPS_PIPE_DIRECTORY=/run/nvtaskset\",\"CUDA_MPS_PIPE_DIRECTORY=/tmp/mps\"", NULL);
	CHECK(nvt_admit_mps(config, len, "/tmp/mps-low", "low", target, sizeof(target), &w) ==
		      NVT_ADMIT_MPS_PIPE &&
	      !strcmp(w.value, "/tmp/mps"));
	len = config_of("\"CUDA_MPS_PIPE_DIRECTORY=/tmp/mps\"", NULL);
	CHECK(nvt_admit_mps(config, len, "/tmp/mps-low", "low", target, 4, &w) == NVT_ADMIT_LEVEL_PIPE);
	len = config_of("7", NULL);
	CHECK(nvt_admit_mps(config, len, "/tmp/mps-low", "low", target, sizeof(target), &w) ==
		      NVT_ADMIT_MALFORMED);
}

static void test_partition(void)
{
	static struct nvt_slot_view part, parts[NVT_MAX_GPUS];
	struct nvt_admit_why w;
	struct nvt_cdi_device gpc, tpcs;
	char given[NVT_PARTENV_TEXT_MAX], env[NVT_PARTENV_TEXT_MAX + 64];
	size_t len;
	int n = -1;

	memset(&part, 0, sizeof(part));
	part.state = NVT_SLOT_SET;
	memset(part.uuid, 0x11, sizeof(part.uuid));
	nvt_topo_identity(&part.topo, 66);
	nvt_set_fill(&part.tpcs, 8);
	CHECK(nvt_gpusel_env_format(&part, 1, given, sizeof(given)) > 0);
	CHECK(nvt_cdi_device_parse("gpc=0-1", &gpc) == 0 && nvt_cdi_device_parse("tpcs=4", &tpcs) == 0);
	snprintf(env, sizeof(env), "\"NVTASKSET_PARTITION=%s\"", given);
	len = config_of(env, NULL);
	CHECK(nvt_admit_partition(config, len, &gpc, given, parts, &n, &w) == NVT_ADMIT_OK && n == 1 &&
	      nvt_set_count(&parts[0].tpcs) == 8);
	CHECK(nvt_admit_partition(config, len, &tpcs, given, parts, &n, &w) == NVT_ADMIT_PARTITION &&
	      !strcmp(w.value, "set"));
	CHECK(nvt_admit_partition(config, len, &gpc, NULL, parts, &n, &w) == NVT_ADMIT_NO_GPU);
	CHECK(nvt_admit_partition(config, len, &gpc, "nonsense", parts, &n, &w) == NVT_ADMIT_NO_GPU);
	len = config_of("", NULL);
	CHECK(nvt_admit_partition(config, len, &gpc, given, parts, &n, &w) == NVT_ADMIT_PARTITION &&
	      !strcmp(w.value, "not set"));
	CHECK(nvt_admit_partition(config, len, &tpcs, given, parts, &n, &w) == NVT_ADMIT_OK);
	snprintf(env, sizeof(env), "\"NVTASKSET_PARTITION=%s\",\"NVTASKSET_PARTITION=x\"", given);
	len = config_of(env, NULL);
	CHECK(nvt_admit_partition(config, len, &gpc, given, parts, &n, &w) == NVT_ADMIT_PARTITION &&
	      !strcmp(w.value, "not its device's"));
	len = config_of("7", NULL);
	CHECK(nvt_admit_partition(config, len, &tpcs, given, parts, &n, &w) == NVT_ADMIT_MALFORMED &&
	      !strcmp(w.name, "NVTASKSET_PARTITION"));
}

/* Two GPUs, as the host numbers them, and their UUIDs' text. */
static struct nvt_slot_view mem_gpus[2];
static char mem_uuid[2][NVT_UUID_TEXT_MAX];
/* What the last memory_check read. */
static struct nvt_mem_env mem_got;

/* nvt_admit_memory for the hook of device (VENDOR/CLASS=NAME) on the two GPUs (or the one it
 * names), config.json with env and a createRuntime hook of hook (NULL: none). */
static int memory_check(const char *device, const char *env, const char *hook, uint64_t *limit,
			struct nvt_admit_why *w)
{
	struct nvt_cdi_device d;
	size_t len = config_of(env, hook);
	int rc;

	CHECK(nvt_cdi_device_parse(strchr(device, '/') + 1, &d) == 0);
	memset(&mem_got, 0x5a, sizeof(mem_got));
	rc = nvt_admit_memory(config, len, device, &d, d.gpu >= 0 ? &mem_gpus[d.gpu] : mem_gpus,
			      d.gpu >= 0 ? 1 : 2, &mem_got, w);
	*limit = mem_got.bytes;
	return rc;
}

/* A container's GPU memory limit: a memory device's variable (decimal bytes of whole GiB), with
 * that device's hook, once; anything else is refused with what it names. */
static void test_memory(void)
{
	struct nvt_admit_why w;
	char env[512];
	uint64_t limit;

	/* None: no limit, for any device. */
	CHECK(memory_check("v/tpcs=4", "\"NVTASKSET_CDI=tpcs=4\"", NULL, &limit, &w) == NVT_ADMIT_OK &&
	      limit == 0);
	CHECK(memory_check("v/priority=low", "", NULL, &limit, &w) == NVT_ADMIT_OK && limit == 0);
	/* The memory device's own hook: its value is the limit. */
	CHECK(memory_check("v/mem=16G", "\"NVTASKSET_MEM=17179869184\"", "v/mem=16G", &limit, &w) ==
		      NVT_ADMIT_OK &&
	      limit == 16ull << 30 && !strcmp(w.device, "v/mem=16G"));
	/* ... and it needs not see itself among the hooks (its hook is the one running). */
	CHECK(memory_check("v/mem=16G", "\"NVTASKSET_MEM=17179869184\"", NULL, &limit, &w) ==
		      NVT_ADMIT_OK &&
	      limit == 16ull << 30);
	/* The largest device (NVT_CDI_MEM_GIB_MAX GiB), and one past it. */
	snprintf(env, sizeof(env), "\"NVTASKSET_MEM=%llu\"", (unsigned long long)NVT_CDI_MEM_GIB_MAX << 30);
	CHECK(memory_check("v/tpcs=4", env, "v/mem=4096G", &limit, &w) == NVT_ADMIT_OK &&
	      limit == (uint64_t)NVT_CDI_MEM_GIB_MAX << 30);
	snprintf(env, sizeof(env), "\"NVTASKSET_MEM=%llu\"",
		 (unsigned long long)(NVT_CDI_MEM_GIB_MAX + 1) << 30);
	CHECK(memory_check("v/tpcs=4", env, "v/mem=4097G", &limit, &w) == NVT_ADMIT_MEM_NO_DEVICE &&
	      limit == 0);
	/* Beside a partition or priority device: the memory device's hook must be in config.json
	 * (a container's -e cannot add one), named in the answer. */
	CHECK(memory_check("v/gpc=0-1", "\"NVTASKSET_CDI=gpc=0-1\",\"NVTASKSET_MEM=1073741824\"",
			   "v/mem=1G", &limit, &w) == NVT_ADMIT_OK &&
	      limit == 1ull << 30);
	CHECK(memory_check("v/gpc=0-1", "\"NVTASKSET_CDI=gpc=0-1\",\"NVTASKSET_MEM=1073741824\"", NULL,
			   &limit, &w) == NVT_ADMIT_MEM_NO_HOOK &&
	      limit == 0 && !strcmp(w.device, "v/mem=1G") && !strcmp(w.value, "1073741824"));
	CHECK(memory_check("v/priority=high", "\"NVTASKSET_MEM=1073741824\"", "v/mem=2G", &limit, &w) ==
	      NVT_ADMIT_MEM_NO_HOOK);
	CHECK(memory_check("v/priority=high", "\"NVTASKSET_MEM=1073741824\"", "v/mem=1G", &limit, &w) ==
		      NVT_ADMIT_OK &&
	      limit == 1ull << 30);
	/* Another memory device's value to a memory device's hook: two limits. */
	CHECK(memory_check("v/mem=1G", "\"NVTASKSET_MEM=2147483648\"", "v/mem=2G", &limit, &w) ==
		      NVT_ADMIT_OTHER_MEM &&
	      limit == 0 && !strcmp(w.value, "2147483648"));
	/* What no device writes: a size in words, a share of the GPU, a part of a GiB, below
	 * the smallest limit, zero, a sign, a leading zero, more digits than 64 bits hold. */
	static const char *const not_devices[] = {
		"16G", "50%", "1610612736", "1048575", "0", "-1073741824", "+1073741824",
		"01073741824", "99999999999999999999999", "1073741824 ", "",
	};
	for (size_t i = 0; i < sizeof(not_devices) / sizeof(not_devices[0]); i++) {
		snprintf(env, sizeof(env), "\"NVTASKSET_MEM=%s\"", not_devices[i]);
		CHECK(memory_check("v/tpcs=4", env, "v/mem=1G", &limit, &w) == NVT_ADMIT_MEM_NO_DEVICE &&
		      limit == 0 && !strcmp(w.value, not_devices[i]));
	}
	/* Set twice (the device's and the container's own): refused, whichever comes first. */
	CHECK(memory_check("v/mem=1G", "\"NVTASKSET_MEM=1073741824\",\"NVTASKSET_MEM=3221225472\"",
			   "v/mem=1G", &limit, &w) == NVT_ADMIT_MEM_TWICE &&
	      limit == 0);
	CHECK(memory_check("v/tpcs=4", "\"NVTASKSET_MEM=1073741824\",\"NVTASKSET_MEM=3221225472\"",
			   "v/mem=1G", &limit, &w) == NVT_ADMIT_MEM_TWICE);
	/* The same value twice is one limit. */
	CHECK(memory_check("v/tpcs=4", "\"NVTASKSET_MEM=1073741824\",\"NVTASKSET_MEM=1073741824\"",
			   "v/mem=1G", &limit, &w) == NVT_ADMIT_OK &&
	      limit == 1ull << 30);
	/* Malformed: the variable named, no limit. */
	CHECK(memory_check("v/tpcs=4", "7", NULL, &limit, &w) == NVT_ADMIT_MALFORMED && limit == 0 &&
	      !strcmp(w.name, "NVTASKSET_MEM"));
	CHECK(!mem_got.one_gpu);
}

/* A limit on one GPU (mem=1:16G: GPU-UUID=BYTES of the host's GPU 1): the device of that GPU,
 * beside a partition device that uses it, and nothing else. */
static void test_memory_one_gpu(void)
{
	struct nvt_admit_why w;
	char env[512], twice[1024];
	uint64_t limit;

	for (int g = 0; g < 2; g++) {
		mem_gpus[g].uuid[0] = (uint8_t)(0xa0 + g);
		mem_gpus[g].uuid[15] = 7;
		nvt_uuid_format(mem_gpus[g].uuid, mem_uuid[g]);
	}
	snprintf(env, sizeof(env), "\"NVTASKSET_MEM=%s=17179869184\"", mem_uuid[1]);
	/* Its own hook: the limit on GPU 1 alone. */
	CHECK(memory_check("v/mem=1:16G", env, NULL, &limit, &w) == NVT_ADMIT_OK &&
	      limit == 16ull << 30 && mem_got.one_gpu && !memcmp(mem_got.uuid, mem_gpus[1].uuid, 16) &&
	      !strcmp(w.device, "v/mem=1:16G"));
	CHECK(nvt_memlimit_env_on(&mem_got, mem_gpus[0].uuid) == 0);
	/* Beside a partition device of every GPU, or of GPU 1: its device's hook named by the
	 * host's number of the GPU. */
	CHECK(memory_check("v/tpcs=4", env, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_OK &&
	      limit == 16ull << 30 && mem_got.one_gpu);
	CHECK(memory_check("v/gpc=1:0-3", env, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_OK &&
	      limit == 16ull << 30);
	CHECK(memory_check("v/priority=high", env, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_OK);
	/* Without that hook (another GPU's, the whole form's, none): the container's own. */
	CHECK(memory_check("v/tpcs=4", env, "v/mem=0:16G", &limit, &w) == NVT_ADMIT_MEM_NO_HOOK &&
	      limit == 0 && !strcmp(w.device, "v/mem=1:16G"));
	CHECK(memory_check("v/tpcs=4", env, "v/mem=16G", &limit, &w) == NVT_ADMIT_MEM_NO_HOOK);
	CHECK(memory_check("v/tpcs=4", env, NULL, &limit, &w) == NVT_ADMIT_MEM_NO_HOOK);
	/* A partition device of GPU 0 alone: its segment has no GPU 1 to hold the limit. */
	CHECK(memory_check("v/gpc=0:0-3", env, "v/mem=1:16G", &limit, &w) ==
		      NVT_ADMIT_MEM_OTHER_GPU &&
	      limit == 0 && strstr(w.value, mem_uuid[1]));
	/* The device of another GPU, another size, or of each GPU, given GPU 1's value: two. */
	CHECK(memory_check("v/mem=0:16G", env, NULL, &limit, &w) == NVT_ADMIT_OTHER_MEM && limit == 0);
	CHECK(memory_check("v/mem=1:8G", env, NULL, &limit, &w) == NVT_ADMIT_OTHER_MEM);
	CHECK(memory_check("v/mem=16G", env, NULL, &limit, &w) == NVT_ADMIT_OTHER_MEM);
	CHECK(memory_check("v/mem=1:16G", "\"NVTASKSET_MEM=17179869184\"", NULL, &limit, &w) ==
	      NVT_ADMIT_OTHER_MEM);
	/* A GPU the host does not have, and a UUID not as nvtaskset writes it. */
	CHECK(memory_check("v/tpcs=4",
			   "\"NVTASKSET_MEM=GPU-00000000-0000-0000-0000-000000000000=17179869184\"",
			   "v/mem=1:16G", &limit, &w) == NVT_ADMIT_MEM_OTHER_GPU);
	snprintf(env, sizeof(env), "\"NVTASKSET_MEM=%s=17179869184\"", mem_uuid[1]);
	env[19] = 'A'; /* (GPU-a1... as GPU-A1...) */
	CHECK(memory_check("v/tpcs=4", env, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_MEM_NO_DEVICE);
	/* Forged beside the device: GPU 0's value too, either first. */
	snprintf(twice, sizeof(twice), "\"NVTASKSET_MEM=%s=17179869184\",\"NVTASKSET_MEM=%s=17179869184\"",
		 mem_uuid[1], mem_uuid[0]);
	CHECK(memory_check("v/tpcs=4", twice, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_MEM_TWICE &&
	      limit == 0);
	CHECK(memory_check("v/mem=1:16G", twice, NULL, &limit, &w) == NVT_ADMIT_MEM_TWICE);
	snprintf(twice, sizeof(twice), "\"NVTASKSET_MEM=%s=17179869184\",\"NVTASKSET_MEM=%s=17179869184\"",
		 mem_uuid[0], mem_uuid[1]);
	CHECK(memory_check("v/tpcs=4", twice, "v/mem=1:16G", &limit, &w) == NVT_ADMIT_MEM_NO_HOOK);
	CHECK(memory_check("v/mem=1:16G", twice, NULL, &limit, &w) == NVT_ADMIT_OTHER_MEM);
}

int main(void)
{
	test_users();
	test_config();
	test_every_priority_has_device();
	test_partition();
	test_mps();
	test_memory();
	test_memory_one_gpu();
	return CHECK_DONE();
}
