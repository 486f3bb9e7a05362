/*
 * test_gpus.c - NVTASKSET_DRIVER_TIMEOUT's one parse (nvt_gpus_timeout_ms),
 * which the command, the exporter and the Slurm plugin's default share.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "gpu/gpus.h"

int main(void)
{
	CHECK(nvt_gpus_timeout_ms(NULL) == NVT_DRIVER_TIMEOUT_S * 1000);
	CHECK(nvt_gpus_timeout_ms("") == NVT_DRIVER_TIMEOUT_S * 1000);
	CHECK(nvt_gpus_timeout_ms("1") == 1000);
	CHECK(nvt_gpus_timeout_ms("3600") == 3600000);
	CHECK(nvt_gpus_timeout_ms("+5") == 5000);
	CHECK(nvt_gpus_timeout_ms("0") == -1);
	CHECK(nvt_gpus_timeout_ms("3601") == -1);
	CHECK(nvt_gpus_timeout_ms("-5") == -1);
	CHECK(nvt_gpus_timeout_ms("5s") == -1);
	CHECK(nvt_gpus_timeout_ms(" 5") == -1);
	CHECK(nvt_gpus_timeout_ms("++5") == -1);
	CHECK(nvt_gpus_timeout_ms("99999999999999999999") == -1);
	return CHECK_DONE();
}
