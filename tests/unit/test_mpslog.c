/* Unit tests: MPS log and control-answer parsing. SPDX-License-Identifier: MIT */
#include "check.h"
#include "mpslog.h"

/* Lines as MPS 13.0 wrote them on an H100 (tests/gpu/explore-mps.sh, 2026-11-21). */
static const char server_log[] =
	"[2026-11-21 20:01:59.013 Server  2483] Status of client {PID: 2534, Context ID: 1} is ACTIVE\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.\n"
	"[2026-11-21 20:01:59.353 Server  2483] Server is handling a fatal GPU error.\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context ID: 1} on device 0 to be torn down\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2534, Context ID: 1} on device 0 to be torn down\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2502, Context ID: 1} on device 0 to be torn down\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2504, Context ID: 1} on device 0 to be torn down\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context ID: 1} on the error-trigging process 2503 to be torn down\n"
	"[2026-11-21 20:01:59.390 Server  2483] Client {PID: 2503, Context ID: 1} exiting. Number of active client contexts is 0.\n";

int main(void)
{
	struct nvt_mps_fault f;
	long pids[4];
	char two[2 * sizeof(server_log)];

	CHECK(nvt_mps_last_fault(server_log, &f) == 1);
	CHECK_STR(f.when, "2026-11-21 20:01:59");
	CHECK(f.server == 2483 && f.client == 2503);
	CHECK(f.n_torn == 4);
	CHECK(f.torn[0] == 2503 && f.torn[1] == 2534 && f.torn[2] == 2502 && f.torn[3] == 2504);
	/* The last of two faults counts. */
	snprintf(two, sizeof(two), "%s%s", server_log, server_log);
	memcpy(strstr(two + sizeof(server_log), "PID: 2503, Context: 1"), "PID: 9999", 9);
	CHECK(nvt_mps_last_fault(two, &f) == 1 && f.client == 9999);
	CHECK(nvt_mps_last_fault("", &f) == 0);
	CHECK(nvt_mps_last_fault("no faults here\n", &f) == 0);
	CHECK(nvt_mps_last_fault("garbage encountered a fatal GPU error.", &f) == 0);

	CHECK(nvt_mps_parse_pids("2483\n", pids, 4) == 1 && pids[0] == 2483);
	CHECK(nvt_mps_parse_pids("1\n2\n3\n4\n5\n6\n", pids, 4) == 6 && pids[3] == 4);
	CHECK(nvt_mps_parse_pids("", pids, 4) == 0);
	CHECK(nvt_mps_parse_pids("\n\n", pids, 4) == 0);
	CHECK(nvt_mps_parse_pids("12 x\n", pids, 4) == -1);
	CHECK(nvt_mps_parse_pids("-5\n", pids, 4) == -1);
	CHECK(nvt_mps_parse_pids("Cannot find MPS control daemon\n", pids, 4) == -1);

	CHECK(nvt_mps_client_limit(8) == 15); /* paper 000, section 5.3 */
	CHECK(nvt_mps_client_limit(2) == 48);
	CHECK(nvt_mps_client_limit(4) == 30);
	CHECK(nvt_mps_client_limit(0) == 48);
	return CHECK_DONE();
}
