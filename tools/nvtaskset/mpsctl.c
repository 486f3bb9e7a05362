/*
 * mpsctl.c - nvtaskset --mps: status, start and stop of the MPS control daemon.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mps/mps.h"
#include "core/mpslog.h"
#include "core/prio.h"
#include "cli.h"
#include "hint.h"

/* --mps status --json: the daemon (pid, 0: not running); what it answered (server NULL: it was
 * not asked or did not answer); the last fatal GPU error its log shows (fault NULL: none). */
static void print_status_json(const struct nvt_mps *mps, pid_t pid, const pid_t *server,
			      int clients, int limit, const struct nvt_mps_fault *fault)
{
	struct json_object *doc = jsonout_document();

	jsonout_add_bool(doc, "running", pid != 0);
	jsonout_add_int(doc, "pid", pid);
	jsonout_add_text(doc, "pipe_directory", mps->pipe_dir);
	jsonout_add_text(doc, "log_directory", mps->log_dir);
	jsonout_add_text(doc, "control", mps->control);
	if (server) {
		jsonout_add_int(doc, "server", *server);
		jsonout_add_int(doc, "clients", clients);
		jsonout_add_int(doc, "client_limit", limit);
	}
	if (fault) {
		struct json_object *last = jsonout_object(), *torn = jsonout_array();
		jsonout_add(doc, "last_fault", last);
		/* The time comes from the log, as written: neutralised as any text. */
		jsonout_add_text(last, "time", fault->when);
		jsonout_add_int(last, "server", fault->server);
		jsonout_add_int(last, "blamed_client", fault->client);
		jsonout_add(last, "torn_down", torn);
		for (int i = 0; i < fault->n_torn; i++)
			jsonout_append(torn, jsonout_int(fault->torn[i]));
	}
	jsonout_print(stdout, doc);
}

static void mps_status(const struct options *o, struct nvt_mps *mps, pid_t pid)
{
	static char log[65536];
	struct nvt_mps_fault fault;
	pid_t server = 0;
	int connections = nvt_mpslog_client_channels(getenv(NVT_ENV_CUDA_CONNECTIONS), 0);
	int clients = 0, limit = nvt_mpslog_client_limit(connections);
	int asked = pid && nvt_mps_clients(mps, geteuid(), &server, &clients, NVT_MPS_TIMEOUT_MS) == 0;
	int faulted = nvt_mps_read_log(mps, log, sizeof(log)) == 0 && nvt_mpslog_last_fault(log, &fault);

	if (o->json) {
		print_status_json(mps, pid, asked ? &server : NULL, clients, limit,
				  faulted ? &fault : NULL);
		return;
	}
	if (pid)
		printf("MPS control daemon: running (pid %ld), pipe directory %s, log directory %s\n",
		       (long)pid, mps->pipe_dir, mps->log_dir);
	else
		printf("MPS control daemon: not running (pipe directory %s)\n", mps->pipe_dir);
	if (asked && server)
		printf("MPS server: pid %ld, %d client%s (it takes at most %d with %d channels each)\n",
		       (long)server, clients, clients == 1 ? "" : "s", limit, connections);
	else if (asked)
		printf("MPS server: no clients of yours\n");
	if (faulted) {
		printf("last fatal GPU error: %s, in server %ld, blamed on client %ld; the server tore "
		       "down %d client%s:",
		       fault.when, fault.server, fault.client, fault.n_torn, fault.n_torn == 1 ? "" : "s");
		for (int i = 0; i < fault.n_torn; i++)
			printf(" %ld", fault.torn[i]);
		printf("\n  (MPS does not isolate its clients from each other's faults: a fatal "
		       "error in one ends them all. See %s/server.log.)\n",
		       mps->log_dir);
	}
}

/* The priority levels that may have a daemon of their own (time-sliced tasks'). */
static const uint8_t mps_levels[] = {NVT_PRIO_LOW, NVT_PRIO_NORMAL, NVT_PRIO_HIGH};

/* Stops the daemons of priority levels that run. Returns how many it stopped. */
static int stop_levels(void)
{
	struct nvt_mps mps;
	char why[1024];
	int stopped = 0;
	pid_t pid;

	for (size_t i = 0; i < sizeof(mps_levels); i++) {
		const char *name = nvt_prio_name(mps_levels[i]);
		if (nvt_mps_setup_level(&mps, name, "", "", why, sizeof(why)) || !(pid = nvt_mps_daemon(&mps)))
			continue;
		if (nvt_mps_stop(&mps, NVT_MPS_TIMEOUT_MS, why, sizeof(why)))
			cli_errx("cannot stop the MPS control daemon of priority %s: %s", name, why);
		printf("stopped MPS control daemon of priority %s (pid %ld)\n", name, (long)pid);
		stopped++;
	}
	return stopped;
}

/* Says which daemons of priority levels run (text; nothing where none does). */
static void status_levels(void)
{
	struct nvt_mps mps;
	char why[1024];
	pid_t pid;

	for (size_t i = 0; i < sizeof(mps_levels); i++) {
		const char *name = nvt_prio_name(mps_levels[i]);
		if (nvt_mps_setup_level(&mps, name, "", "", why, sizeof(why)) == 0 &&
		    (pid = nvt_mps_daemon(&mps)))
			printf("MPS control daemon of priority %s: running (pid %ld), pipe directory %s\n",
			       name, (long)pid, mps.pipe_dir);
	}
}

int nvt_cmd_mps(const struct options *o)
{
	struct nvt_mps mps;
	char why[1024];
	pid_t pid;

	if (nvt_mps_setup(&mps, why, sizeof(why)))
		cli_errx("%s", why);
	pid = nvt_mps_daemon(&mps);
	if (!strcmp(o->mps_action, "status")) {
		mps_status(o, &mps, pid);
		if (!o->json)
			status_levels();
		return pid ? EXIT_SUCCESS : EXIT_MPS_NOT_RUNNING;
	}
	if (!strcmp(o->mps_action, "start")) {
		if (pid) {
			printf("MPS control daemon already running (pid %ld)\n", (long)pid);
			return EXIT_SUCCESS;
		}
		if (nvt_mps_start(&mps, NVT_MPS_TIMEOUT_MS, why, sizeof(why)))
			cli_errx("cannot start MPS: %s", why);
		if (!mps.started) { /* another nvtaskset started it meanwhile */
			printf("MPS control daemon already running (pid %ld)\n",
			       (long)nvt_mps_daemon(&mps));
			return EXIT_SUCCESS;
		}
		printf("started MPS control daemon (pid %ld), pipe directory %s\n",
		       (long)nvt_mps_daemon(&mps), mps.pipe_dir);
		return EXIT_SUCCESS;
	}
	if (!strcmp(o->mps_action, "stop")) {
		int levels = stop_levels();
		if (!pid) {
			if (!levels)
				printf("MPS control daemon not running\n");
			return EXIT_SUCCESS;
		}
		if (nvt_mps_stop(&mps, NVT_MPS_TIMEOUT_MS, why, sizeof(why)))
			cli_errx("cannot stop MPS: %s", why);
		printf("stopped MPS control daemon (pid %ld)\n", (long)pid);
		return EXIT_SUCCESS;
	}
	hint_bad_word("--mps takes status, start or stop", o->mps_action);
}

