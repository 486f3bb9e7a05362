/*
 * test_gpusel.c - UUIDs, GPU arguments, CUDA_VISIBLE_DEVICES and the
 * per-GPU partition record, on plain buffers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "core/gpusel.h"
#include "core/topo.h"
#include "core/tpcset.h"

static const struct nvt_gpu_id node[3] = {
	{.uuid = "GPU-7c40aaaa-0000-1111-2222-333344445555", .model = "NVIDIA H100 80GB HBM3"},
	{.uuid = "GPU-7c41bbbb-0000-1111-2222-333344445555", .model = "NVIDIA H100 80GB HBM3"},
	{.uuid = "GPU-9d00cccc-0000-1111-2222-333344445555", .model = "NVIDIA H100 80GB HBM3"},
};

static void test_uuid(void)
{
	uint8_t u[16], zero[16] = {0};
	char text[NVT_UUID_TEXT_MAX];

	CHECK(nvt_uuid_parse(node[0].uuid, u) == 0);
	CHECK(u[0] == 0x7c && u[1] == 0x40 && u[15] == 0x55);
	nvt_uuid_format(u, text);
	CHECK_STR(text, node[0].uuid);
	CHECK(nvt_uuid_parse("GPU-7C40AAAA-0000-1111-2222-333344445555", u) == 0 && u[2] == 0xaa);
	CHECK(nvt_uuid_parse("GPU-7c40aaaa-0000-1111-2222-33334444555", u) == -1);   /* short */
	CHECK(nvt_uuid_parse("GPU-7c40aaaa-0000-1111-2222-3333444455556", u) == -1); /* long */
	CHECK(nvt_uuid_parse("GPU-7c40aaaa00000-1111-2222-333344445555", u) == -1);  /* dash */
	CHECK(nvt_uuid_parse("MIG-7c40aaaa-0000-1111-2222-333344445555", u) == -1);
	CHECK(nvt_uuid_parse("GPU-7c40aaag-0000-1111-2222-333344445555", u) == -1);
	CHECK(nvt_uuid_parse("", u) == -1);
	CHECK(nvt_uuid_is_zero(zero) && !nvt_uuid_is_zero(u));
}

static void test_resolve(void)
{
	CHECK(nvt_gpusel_resolve("0", node, 3) == 0);
	CHECK(nvt_gpusel_resolve("2", node, 3) == 2);
	CHECK(nvt_gpusel_resolve("3", node, 3) == NVT_GPU_NONE);
	CHECK(nvt_gpusel_resolve("-1", node, 3) == NVT_GPU_NONE);
	CHECK(nvt_gpusel_resolve("", node, 3) == NVT_GPU_NONE);
	CHECK(nvt_gpusel_resolve(node[1].uuid, node, 3) == 1);
	CHECK(nvt_gpusel_resolve("GPU-9D00", node, 3) == 2);
	CHECK(nvt_gpusel_resolve("GPU-9", node, 3) == 2); /* any unique prefix, as CUDA's */
	CHECK(nvt_gpusel_resolve("GPU-7c4", node, 3) == NVT_GPU_AMBIGUOUS); /* 7c40 and 7c41 */
	CHECK(nvt_gpusel_resolve("GPU-", node, 3) == NVT_GPU_NONE); /* no character of the UUID */
	CHECK(nvt_gpusel_resolve("gpu-7C40", node, 3) == 0);
	CHECK(nvt_gpusel_resolve("GPU-7c40", node, 3) == 0);
	CHECK(nvt_gpusel_resolve("GPU-7c4a", node, 3) == NVT_GPU_NONE);
	{
		struct nvt_gpu_id twins[2] = {node[0], node[0]};
		twins[1].uuid[40] = '6';
		CHECK(nvt_gpusel_resolve("GPU-7c40aaaa", twins, 2) == NVT_GPU_AMBIGUOUS);
	}
}

static void test_visible(void)
{
	struct nvt_gpu_id mixed[3] = {node[0], node[1], node[2]};
	int idx[8];

	CHECK(nvt_visible_gpus("1", node, 3, 0, idx) == 1 && idx[0] == 1);
	CHECK(nvt_visible_gpus("2,0", node, 3, 0, idx) == 2 && idx[0] == 2 && idx[1] == 0);
	CHECK(nvt_visible_gpus(" 2 , 0 ", node, 3, 0, idx) == 2 && idx[1] == 0);
	/* CUDA stops at the first invalid or repeated entry. */
	CHECK(nvt_visible_gpus("0,7,1", node, 3, 0, idx) == 1 && idx[0] == 0);
	CHECK(nvt_visible_gpus("1,1,2", node, 3, 0, idx) == 1);
	CHECK(nvt_visible_gpus("x", node, 3, 0, idx) == 0);
	CHECK(nvt_visible_gpus("", node, 3, 0, idx) == 0);
	CHECK(nvt_visible_gpus("GPU-9d00,1", node, 3, 0, idx) == 2 && idx[0] == 2 && idx[1] == 1);
	CHECK(nvt_visible_gpus("MIG-1234", node, 3, 0, idx) == -1);
	/* Mixed models: CUDA's default order is not PCI order, unless asked. */
	snprintf(mixed[1].model, sizeof(mixed[1].model), "NVIDIA H200");
	CHECK(nvt_visible_gpus("1", mixed, 3, 0, idx) == -1);
	CHECK(nvt_visible_gpus("1", mixed, 3, 1, idx) == 1 && idx[0] == 1);
	CHECK(nvt_visible_gpus("GPU-9d00", mixed, 3, 0, idx) == 1 && idx[0] == 2);
}

static void test_partenv(void)
{
	struct nvt_slot_view in[2], out[NVT_MAX_GPUS];
	static char text[NVT_PARTENV_TEXT_MAX];
	int n;

	memset(in, 0, sizeof(in));
	nvt_uuid_parse(node[0].uuid, in[0].uuid);
	nvt_uuid_parse(node[2].uuid, in[1].uuid);
	nvt_topo_identity(&in[0].topo, 66);
	nvt_topo_identity(&in[1].topo, 54);
	in[1].topo.hw_bit[3] = 90;
	in[0].state = NVT_SLOT_SET;
	nvt_parse_list("0-3,40", NVT_MAX_TPCS, &in[0].tpcs);
	in[1].state = NVT_SLOT_UNSET;
	n = nvt_gpusel_env_format(in, 2, text, sizeof(text));
	CHECK(n > 0 && (size_t)n == strlen(text));
	CHECK(strncmp(text, "GPU-7c40aaaa-0000-1111-2222-333344445555 0-3,40 nvtaskset-topology ", 67) == 0);
	CHECK(strstr(text, ";GPU-9d00cccc-0000-1111-2222-333344445555 all nvtaskset-topology") != NULL);
	CHECK(nvt_gpusel_env_parse(text, out, NVT_MAX_GPUS) == 2);
	CHECK(!memcmp(out[0].uuid, in[0].uuid, 16) && !memcmp(out[1].uuid, in[1].uuid, 16));
	CHECK(out[0].state == NVT_SLOT_SET && nvt_set_equal(&out[0].tpcs, &in[0].tpcs));
	CHECK(out[1].state == NVT_SLOT_UNSET && out[1].topo.hw_bit[3] == 90 && out[1].topo.n_tpcs == 54);
	/* Too small a buffer is refused, not cut. */
	CHECK(nvt_gpusel_env_format(in, 2, text, 60) == -1);
	CHECK(nvt_gpusel_env_parse(text, out, 1) == -1); /* more GPUs than room */
	/* Malformed records. */
	CHECK(nvt_gpusel_env_parse("", out, 4) == -1);
	CHECK(nvt_gpusel_env_parse(NULL, out, 4) == -1);
	nvt_gpusel_env_format(in, 1, text, sizeof(text));
	{
		char bad[NVT_PARTENV_TEXT_MAX + 64];
		const char *topo = strstr(text, "nvtaskset-topology");
		snprintf(bad, sizeof(bad), "%s;%s", text, text); /* a GPU named twice */
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "%s;", text);
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "GPU-00000000-0000-0000-0000-000000000000 1 %s", topo);
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "%s 70-80 %s", node[0].uuid, topo); /* no TPC it has */
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "%s 1 %.40s", node[0].uuid, topo);
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "%s 1-x %s", node[0].uuid, topo);
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == -1);
		snprintf(bad, sizeof(bad), "%s 60-70 %s", node[0].uuid, topo); /* partly there */
		CHECK(nvt_gpusel_env_parse(bad, out, 4) == 1);
	}
}

int main(void)
{
	test_uuid();
	test_resolve();
	test_visible();
	test_partenv();
	return CHECK_DONE();
}
