/*
 * mpslog.c - MPS log and control-answer parsing. Line formats as written by
 * MPS 13.0 (seen on an H100, driver 580, 2026-11-21):
 *   [2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.
 *   [2026-11-21 20:01:59.353 Server  2483] Client {PID: 2534, Context ID: 1} on device 0 to be torn down
 *
 * SPDX-License-Identifier: MIT
 */
#include "mpslog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FATAL "encountered a fatal GPU error"
#define TORN "to be torn down"

/* Reads the number after "{PID: " in line; returns it or -1. */
static long pid_in(const char *line, const char *end)
{
	const char *p = strstr(line, "{PID: ");
	char *stop;
	long v;

	if (!p || p >= end)
		return -1;
	v = strtol(p + 6, &stop, 10);
	return (stop == p + 6 || v <= 0) ? -1 : v;
}

/* Fills when and server from a "[date time.ms Server  pid]" prefix. */
static int prefix(const char *line, struct nvt_mps_fault *f)
{
	char date[16], time_[16];
	long server;

	if (sscanf(line, "[%15s %15[0-9:.] Server %ld]", date, time_, &server) != 3)
		return -1;
	char *dot = strchr(time_, '.');
	if (dot)
		*dot = '\0';
	snprintf(f->when, sizeof(f->when), "%s %s", date, time_);
	f->server = server;
	return 0;
}

int nvt_mpslog_last_fault(const char *log, struct nvt_mps_fault *out)
{
	const char *last = NULL, *p;
	struct nvt_mps_fault f;

	for (p = log; (p = strstr(p, FATAL)); p++)
		last = p;
	if (!last)
		return 0;
	memset(&f, 0, sizeof(f));
	/* Back to the start of that line. */
	while (last > log && last[-1] != '\n')
		last--;
	if (prefix(last, &f))
		return 0;
	f.client = pid_in(last, strchr(last, '\n') ? strchr(last, '\n') : last + strlen(last));
	for (p = strchr(last, '\n'); p && *++p;) {
		const char *end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) > strlen(TORN) && strstr(p, TORN) && strstr(p, TORN) < end) {
			long pid = pid_in(p, end);
			int seen = 0;
			for (int i = 0; i < f.n_torn; i++)
				seen |= f.torn[i] == pid;
			if (pid > 0 && !seen && f.n_torn < NVT_MPS_MAX_PIDS)
				f.torn[f.n_torn++] = pid;
		}
		p = *end ? end : NULL;
	}
	*out = f;
	return 1;
}

int nvt_mpslog_parse_ps(const char *answer, long *servers, int *counts, int max)
{
	const char *line = answer;
	int n = 0;

	while (*line == '\n' || *line == ' ')
		line++;
	/* With the daemon up and no server, "ps" answers this (H100, driver 580:
	 * HARDWARE-FACTS.md section 11): no server, so no clients. */
	if (!strncmp(line, "Server not found", 16))
		return 0;
	/* With a server whose clients have all gone, "ps" answers nothing at all
	 * (H100, driver 580, 2026-11-22): every start under MPS warned that it
	 * could not count the clients, and the 15-client check was skipped. */
	if (*line == '\0')
		return 0;
	if (strncmp(line, "PID", 3))
		return -1;
	for (line = strchr(line, '\n'); line && *++line; line = strchr(line, '\n')) {
		long pid, id, server;
		int i;

		if (*line == '\n')
			continue;
		if (sscanf(line, "%ld %ld %ld", &pid, &id, &server) != 3 || pid <= 0 || server <= 0)
			return -1;
		for (i = 0; i < n && i < max; i++)
			if (servers[i] == server)
				break;
		if (i < n) {
			counts[i]++;
		} else if (n < max) {
			servers[n] = server;
			counts[n++] = 1;
		}
		if (!strchr(line, '\n'))
			break;
	}
	return n;
}

/* The first row of a "ps" answer (after its header), NULL for none (no server, no clients);
 * *bad set when answer is no "ps" answer. */
static const char *first_ps_row(const char *answer, int *bad)
{
	const char *line = answer;

	*bad = 0;
	while (*line == '\n' || *line == ' ')
		line++;
	/* "Server not found", or nothing at all: no clients (nvt_mpslog_parse_ps says when). */
	if (!strncmp(line, "Server not found", 16) || *line == '\0')
		return NULL;
	if (strncmp(line, "PID", 3)) {
		*bad = 1;
		return NULL;
	}
	line = strchr(line, '\n');
	return line ? line + 1 : NULL;
}

/* Reads row (PID ID SERVER DEVICE NAMESPACE COMMAND, up to its newline) into c. Returns 0, or
 * -1 when it is no such row. */
static int read_ps_row(const char *row, struct nvt_mps_client *c)
{
	long id;
	int at = -1;
	const char *end;
	size_t n;

	if (sscanf(row, "%ld %ld %ld %*s %*s %n", &c->pid, &id, &c->server, &at) < 3 || c->pid <= 0 ||
	    c->server <= 0)
		return -1;
	c->command[0] = '\0';
	if (at < 0 || memchr(row, '\n', (size_t)at)) /* no COMMAND (or fewer columns) on its line */
		return 0;
	end = strchr(row + at, '\n');
	n = end ? (size_t)(end - (row + at)) : strlen(row + at);
	while (n && (row[at + n - 1] == ' ' || row[at + n - 1] == '\r'))
		n--; /* the daemon pads its columns */
	n = n < sizeof(c->command) - 1 ? n : sizeof(c->command) - 1;
	memcpy(c->command, row + at, n);
	c->command[n] = '\0';
	return 0;
}

/* A row of the answer that does not read as a client (a client's command may hold a newline,
 * and any user names her program): counted as a client of unknown PID (0), the row its
 * command, so that a stop is refused for it rather than taking it for none. */
static void unread_row(const char *row, struct nvt_mps_client *c)
{
	const char *end = strchr(row, '\n');
	size_t n = end ? (size_t)(end - row) : strlen(row);

	c->pid = 0;
	c->server = 0;
	n = n < sizeof(c->command) - 1 ? n : sizeof(c->command) - 1;
	memcpy(c->command, row, n);
	c->command[n] = '\0';
}

int nvt_mpslog_whole_rows(char *answer, size_t len)
{
	size_t n = strnlen(answer, len);

	if (len == 0 || n < len - 1 || (n > 0 && answer[n - 1] == '\n'))
		return 0;
	while (n > 0 && answer[n - 1] != '\n')
		n--;
	answer[n] = '\0';
	return 1;
}

int nvt_mpslog_parse_clients(const char *answer, struct nvt_mps_client *out, int max)
{
	int bad, n = 0;
	const char *line = first_ps_row(answer, &bad);

	for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		struct nvt_mps_client c;
		if (*line == '\n')
			continue;
		if (read_ps_row(line, &c))
			unread_row(line, &c);
		if (n < max)
			out[n] = c;
		n++;
	}
	return bad ? -1 : n;
}

int nvt_mpslog_client_limit(int connections)
{
	int limit;

	if (connections < 1)
		connections = 1;
	limit = (128 - 8) / connections;
	return limit > 48 ? 48 : limit;
}

int nvt_channels_parse(const char *text, int *channels)
{
	char *end;
	long v;

	if (!strcmp(text, "default")) {
		*channels = NVT_CHANNELS_CUDA;
		return 0;
	}
	if (*text < '0' || *text > '9')
		return -1;
	v = strtol(text, &end, 10);
	if (*end || v < 1 || v > NVT_CHANNELS_MAX)
		return -1;
	*channels = (int)v;
	return 0;
}

int nvt_mpslog_client_channels(const char *env_text, int channels)
{
	int set;

	if (env_text && *env_text && nvt_channels_parse(env_text, &set) == 0 && set > 0)
		return set;
	if (!channels)
		channels = NVT_CHANNELS_DEFAULT;
	return channels > 0 ? channels : NVT_MPS_CLIENT_CHANNELS;
}

int nvt_channels_env(int channels, char *buf, size_t len)
{
	if (channels < 1 || channels > NVT_CHANNELS_MAX)
		return 0;
	return snprintf(buf, len, "%d", channels) < (int)len;
}
