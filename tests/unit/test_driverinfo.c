/* Unit tests: /proc/driver/nvidia parsing. SPDX-License-Identifier: MIT */
#include "check.h"
#include "gpu/driverinfo.h"

int main(void)
{
	char uuid[48], model[64], v[32];

	CHECK(nvt_parse_gpu_information("Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 35\n"
					"GPU UUID: \t GPU-7c406bb6-0fa7-9001-7759-9042422b15f5\n",
					uuid, sizeof(uuid), model, sizeof(model)) == 0);
	CHECK_STR(uuid, "GPU-7c406bb6-0fa7-9001-7759-9042422b15f5");
	CHECK_STR(model, "NVIDIA H100 80GB HBM3");
	CHECK(nvt_parse_gpu_information("Model: x\n", uuid, sizeof(uuid), model, sizeof(model)) == -1);
	CHECK(nvt_parse_gpu_information("GPU UUID: nonsense\n", uuid, sizeof(uuid), model,
					sizeof(model)) == -1);
	CHECK(nvt_parse_gpu_information("GPU UUID: GPU-12;rm\n", uuid, sizeof(uuid), model,
					sizeof(model)) == -1);
	CHECK(nvt_parse_gpu_information("GPU UUID: GPU-0123456789abcdef0123456789abcdef0123456789abcdef\n",
					uuid, sizeof(uuid), model, sizeof(model)) == -1);
	CHECK(nvt_parse_gpu_information("GPU UUID: GPU-12ab\n", uuid, sizeof(uuid), model,
					sizeof(model)) == 0 && !strcmp(model, "NVIDIA GPU"));

	CHECK(nvt_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  "
				     "Thu Oct 30 2026\nGCC version:  gcc 12.2\n",
				     v, sizeof(v)) == 0);
	CHECK_STR(v, "580.159.04");
	CHECK(nvt_parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
				     "570.86.15  Release Build\n",
				     v, sizeof(v)) == 0);
	CHECK_STR(v, "570.86.15");
	CHECK(nvt_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n", v, sizeof(v)) == -1);
	CHECK(nvt_parse_nvrm_version("", v, sizeof(v)) == -1);
	CHECK(nvt_parse_nvrm_version("NVRM version: 1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16\n", v, 8) == -1);
	return CHECK_DONE();
}
