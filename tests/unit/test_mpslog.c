/* Unit tests: MPS log and control-answer parsing. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/mpslog.h"

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
	char two[2 * sizeof(server_log)];

	CHECK(nvt_mpslog_last_fault(server_log, &f) == 1);
	CHECK_STR(f.when, "2026-11-21 20:01:59");
	CHECK(f.server == 2483 && f.client == 2503);
	CHECK(f.n_torn == 4);
	CHECK(f.torn[0] == 2503 && f.torn[1] == 2534 && f.torn[2] == 2502 && f.torn[3] == 2504);
	/* The last of two faults counts. */
	snprintf(two, sizeof(two), "%s%s", server_log, server_log);
	memcpy(strstr(two + sizeof(server_log), "PID: 2503, Context: 1"), "PID: 9999", 9);
	CHECK(nvt_mpslog_last_fault(two, &f) == 1 && f.client == 9999);
	CHECK(nvt_mpslog_last_fault("", &f) == 0);
	CHECK(nvt_mpslog_last_fault("no faults here\n", &f) == 0);
	CHECK(nvt_mpslog_last_fault("garbage encountered a fatal GPU error.", &f) == 0);


	{
		long servers[4];
		int counts[4];
		const char *ps = "PID       ID        SERVER         DEVICE                    NAMESPACE      COMMAND        \n"
				 "2503      2         2483           GPU-f20a73ef-5409-375b    4026531836     build/gpu/loop \n"
				 "2504      3         2483           GPU-f20a73ef-5409-375b    4026531836     build/gpu/loop \n"
				 "2600      1         2590           GPU-f20a73ef-5409-375b    4026531836     other \n";
		CHECK(nvt_mpslog_parse_ps(ps, servers, counts, 4) == 2);
		CHECK(servers[0] == 2483 && counts[0] == 2 && servers[1] == 2590 && counts[1] == 1);
		CHECK(nvt_mpslog_parse_ps("PID  ID  SERVER DEVICE NAMESPACE COMMAND\n", servers, counts, 4) == 0);
		/* A server without clients: "ps" answers nothing. */
		CHECK(nvt_mpslog_parse_ps("", servers, counts, 4) == 0);
		CHECK(nvt_mpslog_parse_ps("\n", servers, counts, 4) == 0);
		CHECK(nvt_mpslog_parse_ps("garbage\n", servers, counts, 4) == -1);
		CHECK(nvt_mpslog_parse_ps("PID\nnot a row\n", servers, counts, 4) == -1);
		CHECK(nvt_mpslog_parse_ps("PID\n1 2 3\n", servers, counts, 4) == 1 && servers[0] == 3);
		/* Its clients, for --mps stop: each with its server and COMMAND, padding cut. */
		struct nvt_mps_client c[2];
		CHECK(nvt_mpslog_parse_clients(ps, c, 2) == 3);
		CHECK(c[0].pid == 2503 && c[0].server == 2483 && c[1].pid == 2504);
		CHECK_STR(c[0].command, "build/gpu/loop");
		CHECK(nvt_mpslog_parse_clients("PID ID SERVER DEVICE NAMESPACE COMMAND\n"
					       "7 1 9 GPU-x 1 python train.py --lr 3\n8 1 9 GPU-x 1\n"
					       "10 1 9 GPU-x 1 app\n", c, 2) == 3);
		CHECK_STR(c[0].command, "python train.py --lr 3");
		CHECK(c[1].pid == 8 && c[1].command[0] == '\0'); /* no COMMAND: not the next row's */
		CHECK(nvt_mpslog_parse_clients("Server not found\n", c, 2) == 0);
		CHECK(nvt_mpslog_parse_clients("", c, 2) == 0);
		CHECK(nvt_mpslog_parse_clients("garbage\n", c, 2) == -1);
		/* A row that is not a client's (a command holding a newline): one of PID 0 */
		CHECK(nvt_mpslog_parse_clients("PID\nnot a row\n", c, 2) == 1 && c[0].pid == 0 &&
		      !strcmp(c[0].command, "not a row"));
	}
	{
		/* An answer that filled its buffer ends at its last whole row: a row cut short
		 * ("250" of "2504 ...") is no client of PID 250. */
		char full[] = "PID ID SERVER\n2503 2 2483\n2504 3 2483";
		char whole[] = "PID ID SERVER\n2503 2 2483\n";
		char shorter[64] = "PID ID SERVER\n25";
		char one[] = "2503 2 24";
		struct nvt_mps_client c[4];
		CHECK(nvt_mpslog_whole_rows(full, sizeof(full)) == 1);
		CHECK_STR(full, "PID ID SERVER\n2503 2 2483\n");
		CHECK(nvt_mpslog_parse_clients(full, c, 4) == 1 && c[0].pid == 2503);
		CHECK(nvt_mpslog_whole_rows(whole, sizeof(whole)) == 0);
		CHECK_STR(whole, "PID ID SERVER\n2503 2 2483\n");
		CHECK(nvt_mpslog_whole_rows(shorter, sizeof(shorter)) == 0); /* not full: whole */
		CHECK_STR(shorter, "PID ID SERVER\n25");
		CHECK(nvt_mpslog_whole_rows(one, sizeof(one)) == 1 && one[0] == '\0');
	}
	CHECK(nvt_mpslog_client_limit(8) == 15); /* docs/hardware-facts.md, section 6 */
	CHECK(nvt_mpslog_client_limit(2) == 48);
	CHECK(nvt_mpslog_client_limit(4) == 30);
	CHECK(nvt_mpslog_client_limit(0) == 48);
	{
		/* Channels: --channels and the Slurm plugin's channels=. */
		int ch = 0;
		char buf[16];
		CHECK(nvt_channels_parse("default", &ch) == 0 && ch == NVT_CHANNELS_CUDA);
		CHECK(nvt_channels_parse("8", &ch) == 0 && ch == 8);
		CHECK(nvt_channels_parse("1", &ch) == 0 && ch == 1);
		CHECK(nvt_channels_parse("32", &ch) == 0 && ch == 32);
		CHECK(nvt_channels_parse("0", &ch) == -1 && ch == 32);
		CHECK(nvt_channels_parse("33", &ch) == -1);
		CHECK(nvt_channels_parse("-1", &ch) == -1);
		CHECK(nvt_channels_parse(" 8", &ch) == -1);
		CHECK(nvt_channels_parse("8 ", &ch) == -1);
		CHECK(nvt_channels_parse("", &ch) == -1);
		CHECK(nvt_channels_parse("99999999999999999999", &ch) == -1);
		CHECK(nvt_channels_parse("Default", &ch) == -1);
		CHECK(nvt_channels_env(8, buf, sizeof(buf)) == 1 && !strcmp(buf, "8"));
		CHECK(nvt_channels_env(NVT_CHANNELS_CUDA, buf, sizeof(buf)) == 0);
		CHECK(nvt_channels_env(0, buf, sizeof(buf)) == 0);
		CHECK(nvt_channels_env(33, buf, sizeof(buf)) == 0);
		CHECK(nvt_channels_env(16, buf, 2) == 0);
		/* The measured choice: a task keeps CUDA's own count unless told. */
		CHECK(nvt_channels_env(NVT_CHANNELS_DEFAULT, buf, sizeof(buf)) == 0);
		/* The channels an MPS client asks for: the environment's, else the start's,
		 * else CUDA's own count in an MPS client. */
		CHECK(nvt_mpslog_client_channels(NULL, 0) == NVT_MPS_CLIENT_CHANNELS);
		CHECK(nvt_mpslog_client_channels("", 8) == 8);
		CHECK(nvt_mpslog_client_channels(NULL, NVT_CHANNELS_CUDA) == NVT_MPS_CLIENT_CHANNELS);
		CHECK(nvt_mpslog_client_channels("4", 8) == 4);
		CHECK(nvt_mpslog_client_channels("default", 8) == 8); /* not a count */
		CHECK(nvt_mpslog_client_channels("x", 0) == NVT_MPS_CLIENT_CHANNELS);
		CHECK(nvt_mpslog_client_channels("33", 0) == NVT_MPS_CLIENT_CHANNELS);
	}
	return CHECK_DONE();
}
