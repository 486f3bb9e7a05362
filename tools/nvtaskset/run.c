/*
 * run.c - nvtaskset MASK COMMAND: start a command in a partition.
 * Over 500 lines on purpose: a start's steps (the COMMAND looked for, the partitions, MPS,
 * the claim and --wait's queue, the environment) share its options and exit with their own
 * messages, in the order nvt_cmd_run takes them.
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

#include "cli.h"
#include "task/task.h"
#include "mps/mps.h"
#include "core/mpslog.h"
#include "core/smcount.h"
#include "core/memlimit.h"
#include "alloc/reserve.h"
#include "alloc/queue.h"
#include "seg/segwatch.h"
#include "os/clock.h"
#include "os/progpath.h"

/*
 * Finds the preload shim: $NVTASKSET_SHIM; else LIBDIR as seen from our own
 * directory (an install, staged in DESTDIR or moved as a whole); else the
 * build tree's lib/nvtaskset beside bin/ (the tests); else LIBDIR itself.
 */
static void find_shim(char *buf, size_t len)
{
	const char *env = getenv(NVT_ENV_SHIM);

	if (env && *env) {
		if (env[0] != '/' || access(env, R_OK))
			cli_errx("%s=%s is not a readable absolute path", NVT_ENV_SHIM, env);
		snprintf(buf, len, "%s", env);
		return;
	}
	if (find_lib_file("libnvtaskset.so", buf, len))
		cli_errx("cannot find the nvtaskset shim in %s", buf);
}

/*
 * A refusal, why, of the daemon's directories (starting: of its start): exits with it, but
 * where may_go_without and the directories are the defaults another user made first
 * (nvt_mps_squatted_default), which says it as a warning and returns NULL: no MPS.
 */
static const struct nvt_mps *refused(const struct nvt_mps *mps, int may_go_without, int starting,
				     const char *why)
{
	if (!may_go_without || !nvt_mps_squatted_default(mps))
		cli_errx("%s%s; run with --no-mps to run without %s", starting ? "cannot start MPS: " : "",
			 why, starting ? "it" : "MPS");
	warnx("warning: %s; running without MPS, as --no-mps does", why);
	return NULL;
}

void mps_aside_said(const struct nvt_mps *mps, const char *aside)
{
	if (aside[0])
		warnx("warning: uid %lu made the MPS pipe directory %s before root's daemon: renamed "
		      "aside as %s",
		      (unsigned long)mps->aside_uid, mps->pipe_dir, aside);
}

/*
 * Makes sure an MPS control daemon the task may join runs: the shared one, or
 * that of the priority level it is time-sliced at (parts, n: its partitions;
 * NULL: the shared one); returns it (its pipe directory says where; started:
 * whether this call started it), valid until the next call. may_go_without: a
 * task's start, which beside default directories another user made first runs
 * without MPS (returns NULL) rather than fail.
 */
static const struct nvt_mps *mps_daemon(int channels, const struct nvt_slot_view *parts, int n,
					int may_go_without)
{
	static struct nvt_mps mps;
	pid_t server;
	int connections = nvt_mpslog_client_channels(getenv(NVT_ENV_CUDA_CONNECTIONS), channels);
	int clients, limit = nvt_mpslog_client_limit(connections), level, rc;
	char why[1024], server_env[NVT_PRIO_ENV_TEXT_MAX] = "", shim[PATH_MAX] = "",
		aside[PATH_MAX];

	level = parts ? nvt_prio_mps_level(parts, n, server_env, sizeof(server_env)) : NVT_PRIO_NONE;
	if (level < 0)
		cli_errx("internal error: cannot name the MPS server of the task's priority");
	if (level != NVT_PRIO_NONE)
		find_shim(shim, sizeof(shim));
	rc = nvt_mps_setup_taking(&mps, level != NVT_PRIO_NONE ? nvt_prio_name((unsigned)level) : NULL,
				  server_env, shim, aside, sizeof(aside), why, sizeof(why));
	mps_aside_said(&mps, aside);
	if (rc)
		return refused(&mps, may_go_without, 0, why);
	/* The directory chosen may be this user's own: CUDA must look there too. */
	if (nvt_mps_daemon(&mps)) {
		/* A client past the server's channels fails in CUDA with a misleading
		 * "out of memory" (seen on an H100 with the 16th client): say why now. */
		if (nvt_mps_clients(&mps, geteuid(), &server, &clients, NVT_MPS_TIMEOUT_MS))
			warnx("cannot ask the MPS control daemon how many clients it serves");
		else if (server && clients >= limit)
			cli_errx("the MPS server (pid %ld) already has %d clients, the most it takes "
				 "with %d channels each; this task would fail to start CUDA. Stop a task, "
				 "or run this one with --no-mps",
				 (long)server, clients, connections);
		return &mps;
	}
	/* (Its directories are checked again: another user may have made them meanwhile.) */
	if (nvt_mps_start(&mps, NVT_MPS_TIMEOUT_MS, why, sizeof(why)))
		return refused(&mps, may_go_without, 1, why);
	if (mps.started && mps.level[0]) /* else another nvtaskset started it meanwhile */
		warnx("started the MPS control daemon of priority %s (pipe directory %s); stop it "
		      "with 'nvtaskset --mps stop'",
		      mps.level, mps.pipe_dir);
	else if (mps.started)
		warnx("started the MPS control daemon (pipe directory %s); stop it with "
		      "'nvtaskset --mps stop'",
		      mps.pipe_dir);
	return &mps;
}

const struct nvt_mps *ensure_mps_daemon(int channels, const struct nvt_slot_view *parts, int n)
{
	return mps_daemon(channels, parts, n, 0);
}

const char *ensure_mps(int channels, const struct nvt_slot_view *parts, int n)
{
	const struct nvt_mps *mps = mps_daemon(channels, parts, n, 1);

	return mps ? mps->pipe_dir : NULL;
}

/*
 * Channels: --channels (0: not given) never overrides the user's
 * own CUDA_DEVICE_MAX_CONNECTIONS (nvt_task_env_build sets it). Each
 * channel costs start-up time; fewer channels than streams serialise
 * kernels (the nvtaskset paper, MPS Pitfall 4; docs/bench/startup-2026-11-23/).
 */
static void check_channels(int channels)
{
	const char *user = getenv(NVT_ENV_CUDA_CONNECTIONS);
	char value[16];

	if (channels && nvt_channels_env(channels, value, sizeof(value)) && user &&
	    strcmp(user, value))
		cli_errx("--channels sets CUDA_DEVICE_MAX_CONNECTIONS, which is set "
			 "already (%s)", user);
}

/*
 * Says which partitions the task gets: to out, as lines or (--json) one JSON
 * object whose GPU objects carry the partition object's fields (docs/json.md).
 * what is "picked" (-n) or "partition".
 */
static void report(const struct options *o, FILE *out, const char *what,
		   const struct nvt_slot_view *parts, int n)
{
	char uuid[NVT_UUID_TEXT_MAX], list[NVT_LIST_TEXT_MAX];

	if (o->json) {
		struct json_object *doc = jsonout_document(), *gpus = jsonout_array();
		jsonout_add(doc, what, gpus);
		for (int i = 0; i < n; i++) {
			struct json_object *gpu = json_gpu_object(parts[i].uuid);
			jsonout_append(gpus, gpu);
			jsonout_add_partition(gpu, parts[i].state == NVT_SLOT_SET, &parts[i].tpcs);
			jsonout_add_uint_or_null(gpu, "memory_limit_bytes", parts[i].mem_limit);
		}
		jsonout_print(out, doc);
		return;
	}
	for (int i = 0; i < n; i++) {
		int index = gpu_index_of(parts[i].uuid);
		char number[16] = "?", limit[NVT_MEM_TEXT_MAX], mem[NVT_MEM_TEXT_MAX + 32] = "";
		nvt_uuid_format(parts[i].uuid, uuid);
		if (parts[i].mem_limit)
			snprintf(mem, sizeof(mem), ", GPU memory at most %s",
				 nvt_memlimit_format(parts[i].mem_limit, limit, sizeof(limit)));
		if (parts[i].state == NVT_SLOT_SET)
			nvt_format_list(&parts[i].tpcs, list, sizeof(list));
		else
			snprintf(list, sizeof(list), "all");
		if (index >= 0)
			snprintf(number, sizeof(number), "%d", index);
		fprintf(out, "%sGPU %s (%s): TPCs %s%s\n", out == stderr ? "nvtaskset: " : "", number,
			uuid, list, mem);
	}
}

/*
 * --wait: how long a waiting claim waits for an event before it looks again. A task that
 * ends removes its segment (an event); one killed leaves it, and -p moves a task through
 * its mapping, which no event tells.
 */
#define WAIT_LOOK_MS 1000

/* 1 if the claim req (n GPUs) fits on every GPU now, its TPCs and (--mem-exclusive) its
 * memory limit, from one look (changing nothing: a look makes no event that would wake
 * another waiting claim). */
static int room_now(const struct options *o, const struct nvt_claim_gpu *req, int n)
{
	struct part_args look = o->part;
	struct nvt_tpcset set;
	char why[512];

	look.exclude_running = 1;
	for (int i = 0; i < n; i++)
		if (req[i].count && parse_partition(&look, "", &req[i].topo, req[i].uuid, "the GPU",
						    NULL, &set, why, sizeof(why)))
			return 0;
	return !o->mem.exclusive ||
	       nvt_reserve_mem_look(nvt_rundir(), req, n, why, sizeof(why)) == NVT_RESERVE_OK;
}

/*
 * --wait: waits until a look finds room for the claim req (a task left, or moved), or ends the
 * command once o->wait_s seconds have passed since since_ms (0: no end). Each look follows
 * an event of the run directories or WAIT_LOOK_MS without one: never a busy loop, and the
 * claim that follows was looked for. why and holders: what the last claim said and found.
 */
static void wait_for_room(const struct options *o, const struct nvt_claim_gpu *req, int n,
			  uint64_t since_ms, const char *why, const struct nvt_reserve_holders *holders)
{
	uint64_t end = since_ms + (uint64_t)o->wait_s * 1000u;
	struct nvt_seg_watch watch;

	/* One watch for every look: a task that leaves while a look reads wakes the next wait.
	 * (Without one, a wait is a sleep of WAIT_LOOK_MS.) */
	nvt_seg_watch_open(nvt_rundir(), &watch);
	for (int looked = 0; !looked || !room_now(o, req, n); looked = 1) {
		uint64_t now = (uint64_t)nvt_clock_ms();
		int wait_ms = WAIT_LOOK_MS;
		if (o->wait_s && now >= end) {
			char held[512] = "";
			nvt_seg_watch_close(&watch);
			nvt_queue_leave();
			/* Who held the TPCs at the last claim, as a refusal without --wait says. */
			if (holders->n > 0)
				holders_text(holders->task, holders->n, NVT_RESERVE_HOLDERS_MAX, held,
					     sizeof(held));
			cli_errx("gave up waiting after %u s (--wait=%u): %s%s%s", o->wait_s, o->wait_s,
				 why, *held ? ", the others held by " : "", held);
		}
		if (o->wait_s && end - now < WAIT_LOOK_MS)
			wait_ms = (int)(end - now);
		nvt_seg_watch_wait(&watch, wait_ms);
	}
	nvt_seg_watch_close(&watch);
}

/* What a claim of -n (o) asks on each GPU of parts (n) into req, but where to pick (near). */
static void claim_requests(const struct options *o, const struct nvt_slot_view *parts, int n,
			   struct nvt_claim_gpu *req)
{
	char why[512];

	for (int i = 0; i < n; i++) {
		memset(&req[i], 0, sizeof(req[i]));
		memcpy(req[i].uuid, parts[i].uuid, sizeof(req[i].uuid));
		req[i].topo = parts[i].topo;
		req[i].count = parts[i].state == NVT_SLOT_SET ? o->part.count : 0;
		req[i].strategy = o->part.strategy;
		req[i].prio = parts[i].prio;
		req[i].mem_limit = parts[i].mem_limit;
		req[i].mem_exclusive = o->mem.exclusive;
		if (o->mem.exclusive && !(req[i].gpu_mem = gpu_memory(parts[i].uuid, why, sizeof(why))))
			cli_errx("--mem-exclusive: the GPU's memory is not known: %s", why);
	}
}

/* --dry-run of a claim with --mem-exclusive: the refusal a start would give now (one look:
 * the TPCs -n picks were looked for by build_partitions). Exits with it. */
static void dry_mem_look(const struct options *o, const struct nvt_slot_view *parts, int n)
{
	static struct nvt_claim_gpu req[NVT_MAX_GPUS];
	char why[512];
	int rc;

	claim_requests(o, parts, n, req);
	rc = nvt_reserve_mem_look(nvt_rundir(), req, n, why, sizeof(why));
	if (rc == NVT_RESERVE_ERROR)
		cli_errx("cannot reserve TPCs for the task: %s", why);
	if (rc)
		cli_errx("%s", why);
}

/* --wait: says in this process's record (alloc/queue.h) that it waits, since since_ms, for
 * the claim req (n GPUs) to run argv, for -l and -p to tell; warns where it cannot. */
static void queue_start(const struct options *o, const struct nvt_claim_gpu *req, int n,
			uint64_t since_ms, char **argv)
{
	static struct nvt_queuerec rec;
	char why[512];

	memset(&rec, 0, sizeof(rec));
	rec.since_ms = since_ms;
	rec.timeout_s = o->wait_s;
	for (int i = 0; i < n; i++)
		if (req[i].count) {
			memcpy(rec.gpu[rec.n_gpus].uuid, req[i].uuid, sizeof(rec.gpu[0].uuid));
			rec.gpu[rec.n_gpus++].count = req[i].count;
		}
	nvt_queuerec_command(argv, rec.command, sizeof(rec.command));
	if (nvt_queue_enter(nvt_rundir(), &rec, why, sizeof(why)))
		warnx("warning: -l will not show this start while it waits: %s", why);
}

/*
 * Picks o->part.count TPCs on each GPU of parts that -n partitions, clear of every
 * live task's, and holds them in this process's control segment (own), which
 * COMMAND (argv) adopts. parts gets the picks. With --wait, a GPU too full waits for
 * room, in the queue that -l shows. Exits on failure.
 */
static void claim(const struct options *o, struct nvt_slot_view *parts, int n, int timeout_ms,
		  char **argv, struct nvt_seg_own *own)
{
	static struct nvt_claim_gpu req[NVT_MAX_GPUS];
	struct nvt_reserve_holders holders;
	uint64_t since_ms = 0;
	char why[512], held[512];
	int rc;

	claim_requests(o, parts, n, req);
	for (int i = 0; i < n; i++)
		if (req[i].count && near_of(&o->part, &parts[i], NULL, &req[i].near, why, sizeof(why)))
			cli_errx("%s", why);
	while ((rc = nvt_reserve_claim(nvt_rundir(), req, n, timeout_ms, parts, own, &holders, why,
				       sizeof(why))) == NVT_RESERVE_FULL &&
	       o->wait_given) {
		if (!since_ms) {
			since_ms = (uint64_t)nvt_clock_ms();
			if (o->wait_s)
				warnx("%s; waiting up to %u s for a task to free them (--wait=%u)", why,
				      o->wait_s, o->wait_s);
			else
				warnx("%s; waiting for a task to free them (--wait)", why);
			queue_start(o, req, n, since_ms, argv);
		}
		wait_for_room(o, req, n, since_ms, why, &holders);
	}
	nvt_queue_leave();
	if (since_ms && rc == NVT_RESERVE_OK)
		warnx("the TPCs are free after %.0f s of waiting", ((uint64_t)nvt_clock_ms() - since_ms) / 1000.0);
	if (rc == NVT_RESERVE_ERROR)
		cli_errx("cannot reserve TPCs for the task: %s", why);
	/* Short of TPCs: who holds them, and that a start can wait for them; short of memory
	 * (--mem-exclusive), that it can wait too (room_now looks at both). */
	if (rc == NVT_RESERVE_FULL && holders.n > 0) {
		holders_text(holders.task, holders.n, NVT_RESERVE_HOLDERS_MAX, held, sizeof(held));
		cli_errx("%s, the others held by %s; --wait waits until they free enough", why, held);
	}
	if (rc == NVT_RESERVE_FULL)
		cli_errx("%s; --wait waits until other tasks free enough", why);
	if (rc)
		cli_errx("%s", why);
}

/* --sm-limit: MPS's active thread percentage for parts, with a warning where it leaves SMs idle. */
static int sm_limit(const struct nvt_slot_view *parts, int n)
{
	if (nvt_sm_limit_leaves_idle(parts, n))
		warnx("warning: --sm-limit on a partition that takes part of several GPCs: "
		      "MPS's limit may leave some of its SMs idle (on an H100, TPCs 0-7, one in "
		      "each of 8 GPCs, ran on 4 of their 16 SMs); whole GPCs (-g, or -n) keep "
		      "them all");
	return nvt_sm_limit_percent(parts, n);
}

/* Sets (or unsets) what nvt_task_env_build and nvt_task_env_self chose. */
static void apply_env(const struct nvt_task_env *e)
{
	for (int i = 0; i < e->n; i++)
		if (e->vars[i].value)
			setenv(e->vars[i].name, e->vars[i].value, e->vars[i].overwrite);
		else
			unsetenv(e->vars[i].name);
}

/*
 * Says that COMMAND cannot run (errno err), with what the command line was likely meant to
 * say where COMMAND reads as a MASK; returns the exit status, as taskset's: 127 where there
 * is no such program, else 126.
 */
static int exec_failed(const struct options *o, const char *command, int err)
{
	struct nvt_tpcset set;
	char shown[PATH_MAX];
	int as_mask = nvt_parse_list(command, NVT_MAX_TPCS, &set) == NVT_PARSE_OK ||
		      nvt_parse_mask(command, NVT_MAX_TPCS, &set) == NVT_PARSE_OK;

	char message[2 * PATH_MAX + 256];

	terminal_text(command, shown, sizeof(shown));
	if (err == ENOENT && o->mask_left_out && nvt_parse_mask(command, NVT_MAX_TPCS, &set) == 0)
		snprintf(message, sizeof(message), "failed to execute %s: %s (with %s and no -c or "
			 "-g, a MASK is written with 0x: 0x%s)", shown, strerror(err),
			 o->prio_given ? "--priority" : "--mem", shown);
	else if (err == ENOENT && as_mask && (o->part.count || o->part.gpu_masks))
		snprintf(message, sizeof(message), "failed to execute %s: %s ('%s' is taken as "
			 "COMMAND: %s, and no MASK follows the options%s)", shown, strerror(err), shown,
			 o->part.count ? "-n picks the TPCs" : "--gpu GPU=MASK gives each GPU's MASK",
			 o->part.count ? "" : "; another GPU's is given as --gpu N=MASK");
	else
		snprintf(message, sizeof(message), "failed to execute %s: %s", shown, strerror(err));
	warnx("%s", message);
	if (o->dry_run)
		json_error_if_asked(message); /* (--dry-run --json: the answer on standard output) */
	return err == ENOENT ? 127 : 126;
}

/* A start, in order (over 80 lines: the steps share the partitions and the
 * environment being built, and each may exit with its own message). */
int nvt_cmd_run(const struct options *o, const char *mask_text, char **argv)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	static struct nvt_task_env env, self_env;
	struct nvt_slot_prio given;
	/* -n --exclude-running picks race-free (nvt_reserve_claim), not from one look. */
	int claiming = o->part.count && o->part.exclude_running && !o->dry_run;
	struct part_args pick = o->part;
	int task[NVT_MACHINE_GPUS], n_task, n, made, exec_errno, timeout_ms = 0;
	struct nvt_task_env_in in = {0};
	struct nvt_seg_own own;
	char shim[PATH_MAX], why[512], program[PATH_MAX];

	/* A COMMAND that cannot run starts nothing: no calibration, MPS daemon, agent or
	 * segment (what execvp would run is looked for first); --dry-run says so the same way. */
	if ((!o->dry_run || argv[0]) && nvt_progpath_find(argv[0], program, sizeof(program)))
		return exec_failed(o, argv[0], errno);
	/* A bad value says so before anything is started (MPS), or what a
	 * start would do is told (--dry-run). */
	if (o->part.count && o->part.exclude_running)
		timeout_ms = claim_timeout_ms();
	n_task = nvt_gpus_visible(machine_gpus(), task);
	if (n_task == 0)
		cli_errx("the task can use no GPU (CUDA_VISIBLE_DEVICES=%s)",
			 getenv(NVT_ENV_CUDA_VISIBLE) ? getenv(NVT_ENV_CUDA_VISIBLE) : "");
	if (claiming)
		pick.exclude_running = 0; /* the GPUs and their topologies; claim() picks */
	n = build_partitions(&pick, mask_text, task, n_task, NULL, NULL, parts, why,
			     sizeof(why));
	if (n < 0)
		cli_errx("%s", why);
	if (n == 0)
		cli_errx("no GPU that the task can use could be partitioned");
	prio_check_guard(o, parts, n); /* (--dry-run says so too) */
	for (int i = 0; i < n; i++) {
		/* --mem with MASK left out: every TPC, unpartitioned, holding none for
		 * -n --exclude-running (a priority's own partition is every TPC). */
		if (o->mask_left_out && !o->prio_given)
			parts[i].state = NVT_SLOT_UNSET;
		prio_carry(o, &parts[i], NULL);
	}
	if (mem_limits(&o->mem, parts, n, why, sizeof(why)))
		cli_errx("%s", why);
	if (o->dry_run) {
		if (o->mem.exclusive)
			dry_mem_look(o, parts, n);
		report(o, stdout, o->part.count ? "picked" : "partition", parts, n);
		return EXIT_SUCCESS;
	}
	/* The caller's agent, if none runs, to manage the task (detached). */
	prio_autostart(o);
	find_shim(shim, sizeof(shim));
	check_channels(o->channels);
	in.channels = o->channels;
	/* NULL: never connect. --sm-limit works through MPS: it never goes without. */
	if (!o->no_mps) {
		const struct nvt_mps *mps = mps_daemon(o->channels, parts, n, !o->sm_limit);
		in.pipe_dir = mps ? mps->pipe_dir : NULL;
	}
	if (o->sm_limit && getenv(NVT_ENV_MPS_THREAD_PERCENTAGE))
		cli_errx("--sm-limit sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, which is set "
			 "already (%s)", getenv(NVT_ENV_MPS_THREAD_PERCENTAGE));
	/* The task's segment, made last: COMMAND adopts it (same PID), so the
	 * partition given here is the one it gets, also inside another task's.
	 * Without one (an unusable run directory) its shim says why. */
	if (claiming) {
		claim(o, parts, n, timeout_ms, argv, &own);
		made = 1;
	} else {
		/* A MASK may take a live task's TPCs: say so now (not under --json, whose
		 * documents are what standard error carries: -l --json's "overlaps" says it).
		 * -n's pick is said below, after what it took. A MASK left out (--priority: the
		 * whole GPU, time-sliced or beside the others by its level) names no TPC of
		 * anyone's. */
		if (!o->part.count && !o->json && !o->mask_left_out)
			warn_shared_tpcs(getpid(), parts, n, "");
		made = nvt_reserve_prepare(nvt_rundir(), parts, n, &own, why, sizeof(why)) == 0;
	}
	/* Say what -n chose: a person, or a scheduler's log, should know. Without
	 * --exclude-running it picks as if no task ran (two starts of -n 8 take the same TPCs):
	 * say whose it shares, as for a MASK. */
	if (o->part.count)
		report(o, stderr, "picked", parts, n);
	if (o->part.count && !claiming && !o->json)
		warn_shared_tpcs(getpid(), parts, n, "");
	/* Libraries size their grids by the SM count the device reports: let
	 * MPS report (and allow) the partition's share. */
	in.sm_limit_percent = o->sm_limit ? sm_limit(parts, n) : 0;
	in.sm_count = o->sm_count_given ? nvt_sm_count_name(o->sm_count) : NULL;
	in.parts = parts;
	in.n_parts = n;
	in.shim = shim;
	in.old_preload = getenv(NVT_ENV_LD_PRELOAD);
	/* Children, and programs that do not adopt the segment, start from this. */
	if (nvt_task_env_build(&in, &env, why, sizeof(why))) {
		if (made)
			nvt_seg_remove(&own);
		cli_errx("%s", why);
	}
	prio_given(o, &given);
	if (nvt_task_env_self(o->prio_given ? &given : NULL, &self_env, why, sizeof(why))) {
		if (made)
			nvt_seg_remove(&own);
		cli_errx("%s", why);
	}
	apply_env(&env);
	apply_env(&self_env);
	execvp(argv[0], argv);
	exec_errno = errno;
	/* No task runs: leave no segment that names this process. */
	if (made)
		nvt_seg_remove(&own);
	return exec_failed(o, argv[0], exec_errno);
}
