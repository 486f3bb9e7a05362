/*
 * test_task.c - the environment a task starts with (nvt_task_env_build),
 * which the command's start and the Slurm plugin both set.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "task/task.h"
#include "core/tpcset.h"

/* The value env gives name, or NULL; *overwrite its flag. */
static const char *value_of(const struct nvt_task_env *env, const char *name, int *overwrite)
{
	for (int i = 0; i < env->n; i++)
		if (!strcmp(env->vars[i].name, name)) {
			if (overwrite)
				*overwrite = env->vars[i].overwrite;
			return env->vars[i].value;
		}
	return NULL;
}

int main(void)
{
	static struct nvt_task_env env;
	struct nvt_slot_view part;
	struct nvt_task_env_in in = {0};
	char why[256];
	int ow = -1;

	memset(&part, 0, sizeof(part));
	part.state = NVT_SLOT_SET;
	memset(part.uuid, 0x11, sizeof(part.uuid));
	nvt_topo_identity(&part.topo, 66);
	nvt_set_fill(&part.tpcs, 4);
	in.parts = &part;
	in.n_parts = 1;
	in.shim = "/usr/lib/nvtaskset/libnvtaskset.so";

	/* The least: partition, shim, CUDA's own channels, no MPS. */
	CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
	CHECK(value_of(&env, NVT_ENV_PARTITION, &ow) && ow == 1);
	CHECK_STR(value_of(&env, "LD_PRELOAD", NULL), in.shim);
	CHECK(!value_of(&env, "CUDA_DEVICE_MAX_CONNECTIONS", NULL));
	CHECK_STR(value_of(&env, "CUDA_MPS_PIPE_DIRECTORY", NULL), "/dev/null");
	CHECK(!value_of(&env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", NULL));
	CHECK(!value_of(&env, "CUDA_VISIBLE_DEVICES", NULL));
	CHECK(!value_of(&env, NVT_ENV_RUNDIR, NULL));
	/* No memory limit: one an outer task's environment gave is unset. */
	ow = -1;
	CHECK(!value_of(&env, NVT_ENV_MEM, &ow) && ow == 1);

	/* A memory limit, in bytes; GPUs of different limits give none (one record for all). */
	{
		struct nvt_slot_view two[2] = {part, part};
		part.mem_limit = 64ull << 20;
		CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
		CHECK_STR(value_of(&env, NVT_ENV_MEM, NULL), "67108864");
		two[0].mem_limit = two[1].mem_limit = 8ull << 30;
		memset(two[1].uuid, 0x22, sizeof(two[1].uuid));
		in.parts = two;
		in.n_parts = 2;
		CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
		CHECK_STR(value_of(&env, NVT_ENV_MEM, NULL), "8589934592");
		two[1].mem_limit = 4ull << 30;
		CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
		CHECK(!value_of(&env, NVT_ENV_MEM, NULL));
		in.parts = &part;
		in.n_parts = 1;
		part.mem_limit = 0;
	}

	/* The shim is appended once, as a whole word of LD_PRELOAD. */
	in.old_preload = "/a/libx.so";
	CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
	CHECK_STR(value_of(&env, "LD_PRELOAD", NULL), "/a/libx.so:/usr/lib/nvtaskset/libnvtaskset.so");
	in.old_preload = "/a/libx.so /usr/lib/nvtaskset/libnvtaskset.so";
	CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
	CHECK_STR(value_of(&env, "LD_PRELOAD", NULL), in.old_preload);
	in.old_preload = "/usr/lib/nvtaskset/libnvtaskset.so.old";
	CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
	CHECK_STR(value_of(&env, "LD_PRELOAD", NULL),
		  "/usr/lib/nvtaskset/libnvtaskset.so.old:/usr/lib/nvtaskset/libnvtaskset.so");

	/* Every setting given. */
	in.old_preload = "";
	in.pipe_dir = "/run/mps";
	in.channels = 4;
	in.sm_limit_percent = 25;
	in.visible = "GPU-x";
	in.rundir = "/tmp/run";
	in.sm_count = "follow";
	CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == 0);
	CHECK_STR(value_of(&env, "LD_PRELOAD", NULL), in.shim);
	CHECK_STR(value_of(&env, "CUDA_DEVICE_MAX_CONNECTIONS", &ow), "4");
	CHECK(ow == 0); /* never over the task's own */
	CHECK_STR(value_of(&env, "CUDA_MPS_PIPE_DIRECTORY", NULL), "/run/mps");
	CHECK_STR(value_of(&env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", NULL), "25");
	CHECK_STR(value_of(&env, "CUDA_VISIBLE_DEVICES", NULL), "GPU-x");
	CHECK_STR(value_of(&env, NVT_ENV_RUNDIR, NULL), "/tmp/run");
	CHECK_STR(value_of(&env, NVT_ENV_SM_COUNT, &ow), "follow");
	CHECK(ow == 1); /* the option wins over the environment */
	CHECK(env.n <= NVT_TASK_ENV_MAX);

	/* An LD_PRELOAD too long to add to says so. */
	{
		char *big = malloc(NVT_TASK_ENV_PRELOAD_MAX);
		memset(big, 'x', NVT_TASK_ENV_PRELOAD_MAX - 10);
		big[NVT_TASK_ENV_PRELOAD_MAX - 10] = '\0';
		in.old_preload = big;
		CHECK(nvt_task_env_build(&in, &env, why, sizeof(why)) == -1);
		CHECK(strstr(why, "LD_PRELOAD is too long") != NULL);
		free(big);
	}
	return CHECK_DONE();
}
