/*
 * mpslog.h - reading what the MPS server's log says about faults, and the
 * answers of its control daemon. Pure code on text.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MPSLOG_H
#define NVT_MPSLOG_H

#include <stddef.h>

#define NVT_MPS_MAX_PIDS 64

/* The last fatal GPU error the MPS server logged. */
struct nvt_mps_fault {
	char when[32];   /* "2026-11-21 20:01:59" */
	long server;     /* server PID */
	long client;     /* the client the server blamed (MPS may blame the wrong one) */
	int n_torn;      /* clients the server tore down because of it */
	long torn[NVT_MPS_MAX_PIDS];
};

/*
 * Finds the last "encountered a fatal GPU error" in server.log text and the
 * clients torn down after it. Returns 1 and fills out if there is one, else 0.
 */
int nvt_mpslog_last_fault(const char *log, struct nvt_mps_fault *out);

/*
 * Parses the control daemon's "ps" answer (a header line, then one line per
 * client: PID ID SERVER DEVICE NAMESPACE COMMAND) into the distinct servers
 * and their client counts. Returns the number of servers (at most max are
 * stored; 0 for "Server not found"), or -1 if the answer is not such a table.
 */
int nvt_mpslog_parse_ps(const char *answer, long *servers, int *counts, int max);

/*
 * An answer of the control daemon's read into len bytes (NUL included): one that filled them
 * may have been cut inside its last row, which would read as another client (a PID cut short):
 * that row is dropped, the answer ending at its last newline. Returns 1 if it dropped one.
 */
int nvt_mpslog_whole_rows(char *answer, size_t len);

/* A client of an MPS server, as the control daemon's "ps" lists it. */
struct nvt_mps_client {
	long pid;
	long server;
	char command[256]; /* its COMMAND column (raw bytes, cut to fit), "" for none */
};
/*
 * Parses the control daemon's "ps" answer (nvt_mpslog_parse_ps) into its clients, in its
 * order (at most max are stored). A row that does not read as a client counts as one of PID 0,
 * the row its command. Returns how many it lists (0 for "Server not found" or an empty
 * answer), or -1 if the answer is not such a table.
 */
int nvt_mpslog_parse_clients(const char *answer, struct nvt_mps_client *out, int max);

/*
 * The most clients one MPS server takes when each asks for `connections`
 * channels: a server's channel group holds 128 channels, 8 of them its own,
 * and MPS serves at most 48 clients ([ECRTS25] section 5.3; docs/hardware-facts.md,
 * section 6). 15 for 8, as measured on an H100.
 */
int nvt_mpslog_client_limit(int connections);

/*
 * Channels: CUDA_DEVICE_MAX_CONNECTIONS, the hardware queues a CUDA context
 * spreads its streams over. Paper 000 (MPS Pitfall 4) saw an MPS client's 2
 * channels serialise 4 streams and set 8. On an H100 (driver 580, CUDA 13.0,
 * 2026-11-23) no count from 1 to 8 serialised anything (paper's Fig. 8 with
 * up to 16 streams, PyTorch with 8), but 8 made a small program start 1.72x
 * slower in MPS (162 -> 279 ms) and 1.19x without (223 -> 267 ms)
 * (docs/bench/startup-2026-11-23/). So a task keeps CUDA's own
 * count (NVT_CHANNELS_CUDA) unless told (nvtaskset --channels, the Slurm
 * plugin's channels=).
 */
#define NVT_CHANNELS_CUDA (-1)
#define NVT_CHANNELS_MAX 32
#define NVT_CHANNELS_DEFAULT NVT_CHANNELS_CUDA
#define NVT_MPS_CLIENT_CHANNELS 2 /* CUDA's own count in an MPS client */

/* Parses "default" (NVT_CHANNELS_CUDA) or 1-NVT_CHANNELS_MAX. Returns 0, or -1. */
int nvt_channels_parse(const char *text, int *channels);
/*
 * The CUDA_DEVICE_MAX_CONNECTIONS a task gets for channels (a count, or
 * NVT_CHANNELS_CUDA): writes it to buf and returns 1, or returns 0 when the
 * variable is to be left as it is.
 */
int nvt_channels_env(int channels, char *buf, size_t len);
/*
 * The channels each MPS client of a start asks for, which bounds how many
 * clients a server takes (nvt_mpslog_client_limit): what the environment's
 * CUDA_DEVICE_MAX_CONNECTIONS (env_text, NULL or "" when unset) sets, else
 * the start's channels (a count; 0: not given, NVT_CHANNELS_DEFAULT), else
 * CUDA's own count in an MPS client.
 */
int nvt_mpslog_client_channels(const char *env_text, int channels);

#endif /* NVT_MPSLOG_H */
