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

/* The priority levels that may have a daemon of their own (time-sliced tasks'). */
static const uint8_t mps_levels[] = {NVT_PRIO_LOW, NVT_PRIO_NORMAL, NVT_PRIO_HIGH};

/* The daemons of priority levels that run: said as text, or into levels (JSON, NULL: text).
 * Returns how many run. */
static int status_levels(struct json_object *levels)
{
	struct nvt_mps mps;
	char why[1024];
	pid_t pid;
	int n = 0;

	for (size_t i = 0; i < sizeof(mps_levels); i++) {
		const char *name = nvt_prio_name(mps_levels[i]);
		if (nvt_mps_setup_level(&mps, name, "", "", why, sizeof(why)) || !(pid = nvt_mps_daemon(&mps)))
			continue;
		n++;
		if (levels) {
			struct json_object *level = jsonout_object();
			jsonout_add_text(level, "priority", name);
			jsonout_add_int(level, "pid", pid);
			jsonout_add_text(level, "pipe_directory", mps.pipe_dir);
			jsonout_append(levels, level);
		} else {
			printf("MPS control daemon of priority %s: running (pid %ld), pipe directory %s\n",
			       name, (long)pid, mps.pipe_dir);
		}
	}
	return n;
}

/* --mps status --json: the daemon (pid, 0: not running); what it answered (server NULL: it was
 * not asked or did not answer); the last fatal GPU error its log shows (fault NULL: none); the
 * levels' daemons that run. Returns how many of those run. */
static int print_status_json(const struct nvt_mps *mps, pid_t pid, const pid_t *server,
			     int clients, int limit, const struct nvt_mps_fault *fault)
{
	struct json_object *doc = jsonout_document(), *levels = jsonout_array();
	int n_levels;

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
	n_levels = status_levels(levels);
	jsonout_add(doc, "levels", levels);
	jsonout_print(stdout, doc);
	return n_levels;
}

/* Says what runs: the daemon, its server, its last fault, the levels' daemons. Returns whether
 * any daemon of the caller's runs. */
static int mps_status(const struct options *o, struct nvt_mps *mps, pid_t pid)
{
	static char log[65536];
	struct nvt_mps_fault fault;
	pid_t server = 0;
	int connections = nvt_mpslog_client_channels(getenv(NVT_ENV_CUDA_CONNECTIONS), 0);
	int clients = 0, limit = nvt_mpslog_client_limit(connections);
	int asked = pid && nvt_mps_clients(mps, geteuid(), &server, &clients, NVT_MPS_TIMEOUT_MS) == 0;
	int faulted = nvt_mps_read_log(mps, log, sizeof(log)) == 0 && nvt_mpslog_last_fault(log, &fault);

	if (o->json)
		return print_status_json(mps, pid, asked ? &server : NULL, clients, limit,
					 faulted ? &fault : NULL) > 0 || pid;
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
	return status_levels(NULL) > 0 || pid;
}

/* A daemon --mps stop stops: a priority level's (level its name), or the plain one (level ""). */
struct daemon {
	struct nvt_mps mps;
	const char *level;
	pid_t pid;
};

/* The daemons that run into d: each priority level's, then the plain one (plain; NULL: its
 * directory refused). Returns how many. */
static int running_daemons(const struct nvt_mps *plain, struct daemon *d)
{
	char why[1024];
	int n = 0;

	for (size_t i = 0; i < sizeof(mps_levels); i++) {
		d[n].level = nvt_prio_name(mps_levels[i]);
		if (nvt_mps_setup_level(&d[n].mps, d[n].level, "", "", why, sizeof(why)) == 0 &&
		    (d[n].pid = nvt_mps_daemon(&d[n].mps)))
			n++;
	}
	if (!plain)
		return n;
	d[n] = (struct daemon){*plain, "", nvt_mps_daemon(plain)};
	return d[n].pid ? n + 1 : n;
}

/* "the MPS control daemon (pid N)", or "... of priority LEVEL (pid N)", into buf. */
static void daemon_name(const struct daemon *d, char *buf, size_t len)
{
	snprintf(buf, len, "the MPS control daemon%s%s (pid %ld)", d->level[0] ? " of priority " : "",
		 d->level, (long)d->pid);
}

/* The clients c (n listed, stored up to max) as a list: "pid 4242 (python train.py), pid 4250
 * (app)", their commands as the terminal may show them; past what it stores, how many more. */
#define CLIENTS_NAMED 3 /* a refusal names this many clients, then says how many more */
#define COMMAND_SHOWN 80 /* bytes of a client's command shown (a 1 KiB line holds 3) */

static void client_list(const struct nvt_mps_client *c, int n, int max, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && i < max && used < len; i++) {
		char command[COMMAND_SHOWN + 1];
		terminal_text(c[i].command[0] ? c[i].command : "?", command, sizeof(command));
		if (c[i].pid > 0)
			used += (size_t)snprintf(buf + used, len - used, "%spid %ld (%s)", i ? ", " : "",
						 c[i].pid, command);
		else
			used += (size_t)snprintf(buf + used, len - used, "%sa row it lists as \"%s\"",
						 i ? ", " : "", command);
	}
	if (n > max && used < len)
		snprintf(buf + used, len - used, " and %d more", n - max);
}

/*
 * Before daemon d stops: the tasks it serves. NVIDIA's daemon, told to quit, takes no new
 * client and waits until its clients end (quit -t: until its grace ends, then it stops their
 * servers), so a stop with clients is refused unless forced, naming them; forced, they are
 * named in a warning. A daemon that does not say is asked all the same: a plain quit ends no
 * client.
 */
static void check_clients(struct daemon *d, int force)
{
	struct nvt_mps_client c[NVT_MPS_MAX_PIDS];
	char name[128], list[8192];
	int n = nvt_mps_client_list(&d->mps, c, NVT_MPS_MAX_PIDS, NVT_MPS_TIMEOUT_MS);

	daemon_name(d, name, sizeof(name));
	if (n < 0 && !force)
		cli_errx("%s did not say which tasks it serves (its \"ps\"); told to quit, it would wait "
			 "for any it serves: stop it with --mps stop --force if none runs", name);
	if (n <= 0)
		return;
	/* The refusal's line holds the first few (its message is cut at 1 KiB); the warning all */
	client_list(c, n, force ? NVT_MPS_MAX_PIDS : CLIENTS_NAMED, list, sizeof(list));
	if (!force)
		cli_errx("%s serves %d running task%s: %s. Told to quit, it would take no new task and "
			 "wait until they end: end them first, or stop it all the same with --mps stop "
			 "--force (their MPS server stops after %d s, and their CUDA calls fail from then on)",
			 name, n, n == 1 ? "" : "s", list, NVT_MPS_QUIT_GRACE_S);
	warnx("warning: %s serves %d running task%s: %s; --force: their MPS server stops after %d s, "
	      "and their CUDA calls fail from then on",
	      name, n, n == 1 ? "" : "s", list, NVT_MPS_QUIT_GRACE_S);
}

/* Ends the command: daemon d may not be stopped, or did not stop (why). */
static void stop_failed(const struct daemon *d, const char *why)
{
	if (!d->level[0])
		cli_errx("cannot stop MPS: %s", why);
	cli_errx("cannot stop the MPS control daemon of priority %s: %s", d->level, why);
}

/* --mps stop: every daemon that runs (the priority levels' too), once each may be stopped and
 * none serves a task (unless force). Nothing is stopped when one is refused. plain NULL: its
 * directory was refused (refusal): the levels' are stopped, the refusal said as a warning; with
 * none of theirs running, it ends the command. */
static int mps_stop(const struct nvt_mps *plain, const char *refusal, int force)
{
	struct daemon d[sizeof(mps_levels) + 1];
	char why[1024], name[128];
	int n = running_daemons(plain, d);

	if (!plain && !n)
		cli_errx("%s", refusal);
	if (!plain)
		warnx("warning: %s; stopping the priority levels' daemons", refusal);
	if (!n)
		printf("MPS control daemon not running\n");
	for (int i = 0; i < n; i++)
		if (nvt_mps_may_stop(&d[i].mps, why, sizeof(why)))
			stop_failed(&d[i], why);
	for (int i = 0; i < n; i++)
		check_clients(&d[i], force);
	for (int i = 0; i < n; i++) {
		daemon_name(&d[i], name, sizeof(name));
		if (nvt_mps_stop(&d[i].mps, force ? NVT_MPS_QUIT_GRACE_S : -1, NVT_MPS_TIMEOUT_MS, why,
				 sizeof(why)))
			stop_failed(&d[i], why);
		printf("stopped %s\n", name + strlen("the "));
	}
	return EXIT_SUCCESS;
}

int nvt_cmd_mps(const struct options *o)
{
	struct nvt_mps mps;
	char why[1024], aside[PATH_MAX] = "";
	pid_t pid;
	int rc;

	/* (a start of root's takes its default pipe directory back from another user's entry) */
	if (!strcmp(o->mps_action, "start"))
		rc = nvt_mps_setup_taking(&mps, NULL, "", "", aside, sizeof(aside), why, sizeof(why));
	else
		rc = nvt_mps_setup(&mps, why, sizeof(why));
	mps_aside_said(&mps, aside);
	if (rc && !strcmp(o->mps_action, "stop"))
		return mps_stop(NULL, why, o->mps_force);
	if (rc)
		cli_errx("%s", why);
	pid = nvt_mps_daemon(&mps);
	if (!strcmp(o->mps_action, "status"))
		return mps_status(o, &mps, pid) ? EXIT_SUCCESS : EXIT_MPS_NOT_RUNNING;
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
	if (!strcmp(o->mps_action, "stop"))
		return mps_stop(&mps, NULL, o->mps_force);
	hint_bad_word("--mps takes status, start or stop", o->mps_action);
}

