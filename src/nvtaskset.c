/*
 * nvtaskset - run a command on, or move a running task to, a set of GPU TPCs.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "gpu.h"
#include "mps.h"
#include "mpslog.h"
#include "nvtaskset.h"
#include "segfile.h"
#include "segment.h"
#include "topo.h"
#include "tpcset.h"

#define GPU_QUERY_TIMEOUT_S 60
#define SEG_LOCK_TIMEOUT_MS 2000
#define MPS_TIMEOUT_MS 10000
#define EXIT_MPS_NOT_RUNNING 3
#define MAX_TASKS 4096

struct options {
	int pid_mode;
	int list_mode;
	int tpc_list; /* -c: MASK is a TPC list */
	int gpc_list; /* -g: MASK is a GPC list */
	int json;
	int no_mps;
	const char *mps_action;
	int gpu;        /* --gpu: the GPU whose TPCs MASK names (-1: not given) */
	unsigned count; /* -n: pick this many TPCs (0: not given) */
	enum nvt_strategy strategy;
	int exclude_running;
	int calibrate;
	int topology;
};

static void __attribute__((noreturn)) usage(FILE *out)
{
	fputs("Usage:\n"
	      " nvtaskset [options] MASK COMMAND [ARG...]\n"
	      " nvtaskset [options] -p [MASK] PID\n"
	      " nvtaskset [options] -n COUNT COMMAND [ARG...]\n"
	      " nvtaskset [options] -l\n"
	      " nvtaskset --topology | --calibrate [--gpu N]\n"
	      " nvtaskset --mps status|start|stop\n"
	      "\n"
	      "Run a CUDA program on a set of GPU TPCs (thread processing clusters, two SMs\n"
	      "each), or show or change the TPCs of a running task.\n"
	      "\n"
	      "Options:\n"
	      " -c, --tpc-list        MASK is a list of TPCs, e.g. 0-15,32,40-47:2\n"
	      " -g, --gpc-list        MASK is a list of GPCs (see --topology)\n"
	      " -n, --tpcs COUNT      pick COUNT TPCs instead of taking a MASK\n"
	      "     --strategy S      how -n picks: packed (whole GPCs first, the\n"
	      "                       default) or spread (evenly over GPCs)\n"
	      "     --exclude-running with -n, avoid TPCs of other nvtaskset tasks\n"
	      "     --gpu N           the GPU whose TPCs MASK names (default 0)\n"
	      " -p, --pid             operate on the running task PID\n"
	      " -l, --list            list the tasks under nvtaskset that you may see\n"
	      "     --json            print what -p and -l report as JSON\n"
	      "     --no-mps          run COMMAND outside MPS (no co-running)\n"
	      "     --mps ACTION      status, start or stop the MPS control daemon\n"
	      "     --topology        show the GPUs' GPCs, TPCs, SMs and mask bits\n"
	      "     --calibrate       measure the GPUs' TPC maps again and cache them\n"
	      " -h, --help            display this help\n"
	      " -V, --version         display version\n"
	      "\n"
	      "MASK is hexadecimal: bit t selects TPC t, e.g. ff is TPCs 0-7. TPC t holds\n"
	      "SMs 2t and 2t+1. Without --no-mps, nvtaskset starts the MPS control daemon\n"
	      "when none runs, so that tasks on disjoint TPCs run side by side. Each GPU's\n"
	      "TPC map is measured once (under a second on an H100) and cached.\n"
	      "\n"
	      "Exit status: 0 on success, 1 on error, 3 when --mps status finds no daemon,\n"
	      "126 if COMMAND cannot be executed, 127 if it is not found.\n"
	      "\n"
	      "See nvtaskset(1).\n",
	      out);
	exit(out == stderr ? EXIT_FAILURE : EXIT_SUCCESS);
}

static void __attribute__((noreturn)) bad_usage(const char *what)
{
	warnx("%s", what);
	fprintf(stderr, "Try 'nvtaskset --help' for more information.\n");
	exit(EXIT_FAILURE);
}

/* ---- Output helpers ------------------------------------------------------ */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Fills list and mask texts of set. */
static void describe(const struct nvt_tpcset *set, char *list, char *mask)
{
	nvt_format_list(set, list, NVT_LIST_TEXT_MAX);
	nvt_format_mask(set, mask, NVT_MASK_TEXT_MAX);
}

/* ---- Partitions from the command line ------------------------------------ */

/* Seconds to wait for the driver: $NVTASKSET_DRIVER_TIMEOUT (1-3600) or 60. */
static int driver_timeout_ms(void)
{
	const char *text = getenv("NVTASKSET_DRIVER_TIMEOUT");
	char *end;
	long v;

	if (!text || !*text)
		return GPU_QUERY_TIMEOUT_S * 1000;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < 1 || v > 3600)
		errx(EXIT_FAILURE, "NVTASKSET_DRIVER_TIMEOUT must be 1-3600 seconds, not '%s'", text);
	return (int)v * 1000;
}

/* Loads (or measures) GPU gpu's topology, or exits with the reason. */
static struct nvt_gpu_topology load_gpu(int gpu, int force)
{
	struct nvt_gpu_topology g;
	char why[512];

	if (nvt_gpu_topology(gpu, force, driver_timeout_ms(), stderr, &g, why, sizeof(why)))
		errx(EXIT_FAILURE, "%s", why);
	if (g.note[0])
		warnx("%s", g.note);
	return g;
}

static struct nvt_topology gpu_topology(const struct options *o)
{
	struct nvt_gpu_topology g = load_gpu(o->gpu < 0 ? 0 : o->gpu, 0);

	/* The shim cannot tell which GPU a launch is for: one map for all. */
	if (g.info.device_count > 1)
		warnx("warning: the task sees %d GPUs; its partition follows GPU %d's TPC map on "
		      "every GPU it uses, which on GPUs with other maps selects other TPCs or none "
		      "(a hang). Give it one GPU with CUDA_VISIBLE_DEVICES",
		      g.info.device_count, g.ordinal);
	return g.topo;
}

/* The TPCs that other visible nvtaskset tasks hold (for --exclude-running). */
static void running_tpcs(pid_t except, struct nvt_tpcset *held)
{
	static pid_t pids[MAX_TASKS];
	int n = nvt_seg_scan(nvt_rundir(), pids, MAX_TASKS);

	nvt_set_clear(held);
	for (int i = 0; i < n && i < MAX_TASKS; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view view;
		if (pids[i] == except || nvt_seg_open(nvt_rundir(), pids[i], 0, &h))
			continue;
		if (nvt_slot_read(&h.seg->gpu[0], &view, 1000) == 0 && view.state == NVT_SLOT_SET)
			nvt_set_or(held, held, &view.tpcs);
		nvt_seg_close(&h);
	}
}

/*
 * Turns MASK (hex, -c list or -g list) into a TPC set for topo, or exits
 * with a one-line reason.
 */
static struct nvt_tpcset parse_partition(const struct options *o, const char *text,
					 const struct nvt_topology *topo, pid_t self)
{
	struct nvt_tpcset set, gpcs;
	const char *what = o->gpc_list ? "GPC list" : o->tpc_list ? "TPC list" : "TPC mask";
	int rc, top;

	if (o->count) {
		struct nvt_tpcset available, held;
		nvt_topo_all(topo, &available);
		if (o->exclude_running) {
			running_tpcs(self, &held);
			nvt_set_andnot(&available, &available, &held);
		}
		if (o->count > topo->n_tpcs)
			errx(EXIT_FAILURE, "cannot pick %u TPCs: this GPU has %u", o->count,
			     topo->n_tpcs);
		if (nvt_topo_pick(topo, &available, o->count, o->strategy, &set))
			errx(EXIT_FAILURE, "cannot pick %u TPCs: only %u are free of other tasks",
			     o->count, nvt_set_count(&available));
		return set;
	}
	if (o->gpc_list)
		rc = nvt_parse_list(text, NVT_MAX_GPCS, &gpcs);
	else if (o->tpc_list)
		rc = nvt_parse_list(text, NVT_MAX_TPCS, &set);
	else
		rc = nvt_parse_mask(text, NVT_MAX_TPCS, &set);
	if (rc == NVT_PARSE_SYNTAX)
		errx(EXIT_FAILURE, "failed to parse %s '%s'", what, text);
	if (rc == NVT_PARSE_RANGE)
		errx(EXIT_FAILURE, "%s '%s' names a %s beyond %d", what, text,
		     o->gpc_list ? "GPC" : "TPC", (o->gpc_list ? NVT_MAX_GPCS : NVT_MAX_TPCS) - 1);
	if (o->gpc_list) {
		if (!topo->n_gpcs)
			errx(EXIT_FAILURE,
			     "the GPC layout of this GPU is unknown (it is measured with thread-block "
			     "clusters, which need compute capability 9.0); give TPCs with -c or a "
			     "mask instead");
		top = nvt_set_highest(&gpcs);
		if (top >= (int)topo->n_gpcs)
			errx(EXIT_FAILURE, "GPC %d does not exist: this GPU has %u GPCs (0-%u)", top,
			     topo->n_gpcs, topo->n_gpcs - 1);
		nvt_topo_gpc_tpcs(topo, &gpcs, &set);
	}
	top = nvt_set_highest(&set);
	if (top < 0)
		errx(EXIT_FAILURE, "empty partition: %s '%s' selects no TPC", what, text);
	if (top >= (int)topo->n_tpcs)
		errx(EXIT_FAILURE, "TPC %d does not exist: this GPU has %u TPCs (0-%u)", top,
		     topo->n_tpcs, topo->n_tpcs - 1);
	return set;
}

/* ---- -p: read or change a running task ----------------------------------- */

static const char *seg_error(int rc, const struct nvt_seg_handle *h, char *buf, size_t len)
{
	switch (rc) {
	case NVT_SEG_ENOPROC: return "No such process";
	case NVT_SEG_ENOTASK: return "not running under nvtaskset";
	case NVT_SEG_EPERM: return "Permission denied";
	case NVT_SEG_EVERSION:
		snprintf(buf, len,
			 "its control segment has version %u; this nvtaskset understands version %u",
			 h->found_version, NVT_SEG_VERSION);
		return buf;
	case NVT_SEG_ECORRUPT: return "its control segment is corrupt";
	case NVT_SEG_EBUSY: return "another nvtaskset is changing it right now";
	default: return strerror(errno);
	}
}

static pid_t parse_pid(const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v <= 0 || v > INT_MAX)
		errx(EXIT_FAILURE, "invalid PID argument: '%s'", text);
	return (pid_t)v;
}

static void print_partition(const struct options *o, pid_t pid, const char *which,
			    const struct nvt_slot_view *view)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	if (view->state != NVT_SLOT_SET) {
		printf("pid %ld's %s TPC %s: all (not partitioned)\n", (long)pid, which,
		       o->tpc_list || o->gpc_list ? "list" : "mask");
		return;
	}
	describe(&view->tpcs, list, mask);
	if (o->tpc_list || o->gpc_list)
		printf("pid %ld's %s TPC list: %s\n", (long)pid, which, list);
	else
		printf("pid %ld's %s TPC mask: %s\n", (long)pid, which, mask);
}

static void json_partition(const char *key, const struct nvt_slot_view *view)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	printf("\"%s\":{\"partitioned\":%s", key, view->state == NVT_SLOT_SET ? "true" : "false");
	if (view->state == NVT_SLOT_SET) {
		describe(&view->tpcs, list, mask);
		printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list, mask,
		       nvt_set_count(&view->tpcs));
	}
	putchar('}');
}

/* Reads slot 0; returns 0, or -1 if a writer died half-way through it. */
static int read_slot(struct nvt_seg_handle *h, struct nvt_slot_view *view)
{
	return nvt_slot_read(&h->seg->gpu[0], view, 1000);
}

static int do_pid(const struct options *o, int argc, char **argv)
{
	const char *mask_text = argc == 2 ? argv[0] : o->count ? "" : NULL;
	pid_t pid = parse_pid(argv[argc - 1]);
	struct nvt_seg_handle h;
	struct nvt_slot_view old, now;
	struct nvt_topology topo;
	struct nvt_tpcset set;
	struct timespec written;
	char why[160];
	int rc, readable;

	rc = nvt_seg_open(nvt_rundir(), pid, mask_text != NULL, &h);
	if (rc)
		errx(EXIT_FAILURE, "failed to %s pid %ld's partition: %s",
		     mask_text ? "set" : "get", (long)pid, seg_error(rc, &h, why, sizeof(why)));
	readable = read_slot(&h, &old) == 0;
	if (!mask_text) {
		if (!readable)
			errx(EXIT_FAILURE,
			     "failed to get pid %ld's partition: a writer died while changing it; "
			     "set a new partition to repair it",
			     (long)pid);
		if (o->json) {
			printf("{\"pid\":%ld,", (long)pid);
			json_partition("current", &old);
			printf(",\"applied\":%s}\n",
			       nvt_slot_applied(&h.seg->gpu[0]) == old.seq ? "true" : "false");
		} else {
			print_partition(o, pid, "current", &old);
		}
		if (old.seq && nvt_slot_rejected(&h.seg->gpu[0]) == old.seq)
			warnx("pid %ld refused this partition (it enables no working TPC) and runs "
			      "on its previous one",
			      (long)pid);
		nvt_seg_close(&h);
		return EXIT_SUCCESS;
	}
	if (readable && old.state == NVT_SLOT_SET && nvt_topo_validate(&old.topo) == 0 &&
	    o->gpu < 0)
		topo = old.topo; /* what the task already uses: no driver call */
	else
		topo = gpu_topology(o);
	set = parse_partition(o, mask_text, &topo, pid);
	rc = nvt_seg_lock(&h, SEG_LOCK_TIMEOUT_MS);
	if (rc)
		errx(EXIT_FAILURE, "failed to set pid %ld's partition: %s", (long)pid,
		     seg_error(rc, &h, why, sizeof(why)));
	/* Under the lock no live writer is inside: a failed read is a dead one's. */
	readable = read_slot(&h, &old) == 0;
	nvt_slot_write(&h.seg->gpu[0], NVT_SLOT_SET, &set, &topo);
	clock_gettime(CLOCK_MONOTONIC, &written);
	read_slot(&h, &now);
	nvt_seg_close(&h);
	if (o->json) {
		/* When the change was made, for measuring how soon launches follow. */
		printf("{\"pid\":%ld,\"written_monotonic_ns\":%lld,", (long)pid,
		       (long long)written.tv_sec * 1000000000LL + written.tv_nsec);
		if (readable) {
			json_partition("previous", &old);
			putchar(',');
		}
		json_partition("current", &now);
		printf("}\n");
	} else {
		if (readable)
			print_partition(o, pid, "current", &old);
		print_partition(o, pid, "new", &now);
	}
	return EXIT_SUCCESS;
}

/* ---- -l: list tasks ------------------------------------------------------ */

static void read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i + 1 < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = buf[i] ? '?' : '\0';
}

/* Width left for COMMAND in -l's table: the terminal's, or no limit. */
static int command_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 60)
		return 0;
	return ws.ws_col - 45; /* PID, USER and TPCS take 45 columns */
}

static int do_list(const struct options *o)
{
	static pid_t pids[MAX_TASKS];
	const char *rundir = nvt_rundir();
	int n = nvt_seg_scan(rundir, pids, MAX_TASKS), shown = 0, width = command_width();

	if (n < 0)
		err(EXIT_FAILURE, "cannot read %s", rundir);
	if (n > MAX_TASKS)
		n = MAX_TASKS;
	if (o->json)
		printf("{\"tasks\":[");
	else
		printf("%7s  %-10s  %-20s  %s\n", "PID", "USER", "TPCS", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view view;
		char cmd[512], list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX], path[256], why[160];
		struct passwd *pw;
		int rc = nvt_seg_open(rundir, pids[i], 0, &h);

		if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK) {
			/* Left behind by a task that died: tidy up what we may. */
			if (!nvt_seg_path(path, sizeof(path), rundir, pids[i]))
				unlink(path);
			continue;
		}
		if (rc == NVT_SEG_EPERM)
			continue; /* another user's task */
		if (rc) {
			warnx("pid %ld: %s", (long)pids[i], seg_error(rc, &h, why, sizeof(why)));
			continue;
		}
		if (nvt_slot_read(&h.seg->gpu[0], &view, 1000)) {
			nvt_seg_close(&h);
			continue;
		}
		read_cmdline(pids[i], cmd, sizeof(cmd));
		pw = getpwuid(h.owner);
		if (view.state == NVT_SLOT_SET) {
			describe(&view.tpcs, list, mask);
		} else {
			snprintf(list, sizeof(list), "all");
			mask[0] = '\0';
		}
		if (o->json) {
			printf("%s{\"pid\":%ld,\"uid\":%lu,\"user\":", shown ? "," : "",
			       (long)pids[i], (unsigned long)h.owner);
			json_string(pw ? pw->pw_name : "");
			printf(",\"command\":");
			json_string(cmd);
			printf(",\"partitioned\":%s", view.state == NVT_SLOT_SET ? "true" : "false");
			if (view.state == NVT_SLOT_SET)
				printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list,
				       mask, nvt_set_count(&view.tpcs));
			putchar('}');
		} else {
			char user[16];
			if (pw)
				snprintf(user, sizeof(user), "%s", pw->pw_name);
			else
				snprintf(user, sizeof(user), "%lu", (unsigned long)h.owner);
			/* In a terminal, keep rows on one line; piped output stays whole. */
			if (width && (int)strlen(cmd) > width)
				snprintf(cmd + width - 3, 4, "...");
			if (width && strlen(list) > 20) {
				char count[16];
				int n_keep = 20 - snprintf(count, sizeof(count), "...(%u)",
							   nvt_set_count(&view.tpcs));
				snprintf(list + n_keep, sizeof(list) - (size_t)n_keep, "%s", count);
			}
			printf("%7ld  %-10s  %-20s  %s\n", (long)pids[i], user, list, cmd);
		}
		shown++;
		nvt_seg_close(&h);
	}
	if (o->json)
		printf("]}\n");
	return EXIT_SUCCESS;
}

/* ---- --mps --------------------------------------------------------------- */

#define MPS_QUERY_TIMEOUT_MS 10000

/* Channels each new MPS client asks for: $CUDA_DEVICE_MAX_CONNECTIONS, else 8. */
static int client_connections(void)
{
	const char *text = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	char *end;
	long v;

	if (!text || !*text)
		return 8;
	v = strtol(text, &end, 10);
	return (*end || v < 1 || v > 128) ? 8 : (int)v;
}

static void mps_status(const struct options *o, struct nvt_mps *mps, pid_t pid)
{
	static char log[65536];
	struct nvt_mps_fault fault;
	pid_t server = 0;
	int clients = 0, limit = nvt_mps_client_limit(client_connections());
	int asked = pid && nvt_mps_clients(mps, geteuid(), &server, &clients, MPS_QUERY_TIMEOUT_MS) == 0;
	int faulted = nvt_mps_read_log(mps, log, sizeof(log)) == 0 && nvt_mps_last_fault(log, &fault);

	if (o->json) {
		printf("{\"running\":%s,\"pid\":%ld,\"pipe_directory\":", pid ? "true" : "false",
		       (long)pid);
		json_string(mps->pipe_dir);
		printf(",\"log_directory\":");
		json_string(mps->log_dir);
		printf(",\"control\":");
		json_string(mps->control);
		if (asked)
			printf(",\"server\":%ld,\"clients\":%d,\"client_limit\":%d", (long)server,
			       clients, limit);
		if (faulted) {
			printf(",\"last_fault\":{\"time\":\"%s\",\"server\":%ld,\"blamed_client\":%ld,"
			       "\"torn_down\":[",
			       fault.when, fault.server, fault.client);
			for (int i = 0; i < fault.n_torn; i++)
				printf(i ? ",%ld" : "%ld", fault.torn[i]);
			printf("]}");
		}
		printf("}\n");
		return;
	}
	if (pid)
		printf("MPS control daemon: running (pid %ld), pipe directory %s, log directory %s\n",
		       (long)pid, mps->pipe_dir, mps->log_dir);
	else
		printf("MPS control daemon: not running (pipe directory %s)\n", mps->pipe_dir);
	if (asked && server)
		printf("MPS server: pid %ld, %d client%s (it takes at most %d with %d channels each)\n",
		       (long)server, clients, clients == 1 ? "" : "s", limit, client_connections());
	else if (asked)
		printf("MPS server: no clients of yours\n");
	if (faulted) {
		printf("last fatal GPU error: %s, in server %ld, blamed on client %ld; the server tore "
		       "down %d client%s:",
		       fault.when, fault.server, fault.client, fault.n_torn, fault.n_torn == 1 ? "" : "s");
		for (int i = 0; i < fault.n_torn; i++)
			printf(" %ld", fault.torn[i]);
		printf("\n  (MPS does not isolate clients from each other's faults: paper 000, "
		       "Pitfall 2. See %s/server.log.)\n",
		       mps->log_dir);
	}
}

static int do_mps(const struct options *o)
{
	struct nvt_mps mps;
	pid_t pid;

	nvt_mps_setup(&mps);
	pid = nvt_mps_daemon(&mps);
	if (!strcmp(o->mps_action, "status")) {
		mps_status(o, &mps, pid);
		return pid ? EXIT_SUCCESS : EXIT_MPS_NOT_RUNNING;
	}
	if (!strcmp(o->mps_action, "start")) {
		if (pid) {
			printf("MPS control daemon already running (pid %ld)\n", (long)pid);
			return EXIT_SUCCESS;
		}
		if (nvt_mps_start(&mps, MPS_TIMEOUT_MS))
			errx(EXIT_FAILURE, "cannot start MPS: %s", mps.error);
		printf("started MPS control daemon (pid %ld), pipe directory %s\n",
		       (long)nvt_mps_daemon(&mps), mps.pipe_dir);
		return EXIT_SUCCESS;
	}
	if (!strcmp(o->mps_action, "stop")) {
		if (!pid) {
			printf("MPS control daemon not running\n");
			return EXIT_SUCCESS;
		}
		if (nvt_mps_stop(&mps, MPS_TIMEOUT_MS))
			errx(EXIT_FAILURE, "cannot stop MPS: %s", mps.error);
		printf("stopped MPS control daemon (pid %ld)\n", (long)pid);
		return EXIT_SUCCESS;
	}
	bad_usage("--mps takes status, start or stop");
}

/* ---- --topology and --calibrate ------------------------------------------- */

static int gpu_count(void)
{
	struct nvt_gpu_info info;
	if (nvt_gpu_query(0, driver_timeout_ms(), &info))
		errx(EXIT_FAILURE, "cannot query the GPU: %s", info.error);
	return info.device_count;
}

/* Appends the SMs of TPCs in set to buf as a list. */
static void sm_list(const struct nvt_tpcset *tpcs, char *buf, size_t len)
{
	struct nvt_tpcset sms;
	nvt_set_clear(&sms);
	for (unsigned t = 0; t < NVT_MAX_TPCS / 2; t++)
		if (nvt_set_has(tpcs, t)) {
			nvt_set_add(&sms, 2 * t);
			nvt_set_add(&sms, 2 * t + 1);
		}
	nvt_format_list(&sms, buf, len);
}

static void print_topology(const struct options *o, const struct nvt_gpu_topology *g, int first)
{
	const struct nvt_topology *t = &g->topo;
	char list[NVT_LIST_TEXT_MAX], sms[NVT_LIST_TEXT_MAX];
	unsigned n_groups = t->n_gpcs ? t->n_gpcs : 1;

	if (o->json) {
		printf("%s{\"gpu\":%d,\"name\":", first ? "" : ",", g->ordinal);
		json_string(g->info.name);
		printf(",\"uuid\":\"%s\",\"sms\":%d,\"tpcs\":%u,\"gpcs_known\":%s,\"cache\":",
		       g->key.uuid, g->info.sms, t->n_tpcs, t->n_gpcs ? "true" : "false");
		json_string(g->cache_path);
		printf(",\"gpcs\":[");
	} else {
		printf("GPU %d: %s (%s)\n  %u TPCs, %d SMs, %u GPCs%s; %s\n", g->ordinal, g->info.name,
		       g->key.uuid, t->n_tpcs, g->info.sms, t->n_gpcs,
		       t->n_gpcs ? "" : " (unknown: needs thread-block clusters)",
		       g->from_cache ? "calibration read from the cache" : "calibrated now");
		printf("  %-4s %-27s %-22s %s\n", "GPC", "TPCs", "mask bits", "SMs");
	}
	for (unsigned gpc = 0; gpc < n_groups; gpc++) {
		struct nvt_tpcset tpcs, bits;
		nvt_set_clear(&tpcs);
		nvt_set_clear(&bits);
		for (unsigned tpc = 0; tpc < t->n_tpcs; tpc++)
			if (!t->n_gpcs || t->gpc[tpc] == gpc) {
				nvt_set_add(&tpcs, tpc);
				nvt_set_add(&bits, t->hw_bit[tpc]);
			}
		nvt_format_list(&tpcs, list, sizeof(list));
		sm_list(&tpcs, sms, sizeof(sms));
		if (o->json) {
			char bit_list[NVT_LIST_TEXT_MAX];
			nvt_format_list(&bits, bit_list, sizeof(bit_list));
			printf("%s{\"gpc\":%d,\"tpcs\":\"%s\",\"sms\":\"%s\",\"mask_bits\":\"%s\","
			       "\"own_cluster_domain\":%s}",
			       gpc ? "," : "", t->n_gpcs ? (int)gpc : -1, list, sms, bit_list,
			       nvt_set_count(&tpcs) == 1 && t->n_gpcs ? "true" : "false");
		} else {
			char bit_list[NVT_LIST_TEXT_MAX], name[8];
			nvt_format_list(&bits, bit_list, sizeof(bit_list));
			snprintf(name, sizeof(name), t->n_gpcs ? "%u" : "-", gpc);
			printf("  %-4s %-27s %-22s %s%s\n", name, list, bit_list, sms,
			       nvt_set_count(&tpcs) == 1 && t->n_gpcs
				       ? "  (shares no cluster with another TPC)"
				       : "");
		}
	}
	if (o->json)
		printf("]}");
}

static int do_topology(const struct options *o)
{
	int first = o->gpu < 0 ? 0 : o->gpu, last = o->gpu < 0 ? gpu_count() - 1 : o->gpu;

	if (o->json)
		printf("{\"gpus\":[");
	for (int gpu = first; gpu <= last; gpu++) {
		struct nvt_gpu_topology g = load_gpu(gpu, o->calibrate);
		if (o->calibrate && !o->json && !o->topology) {
			printf("GPU %d: %s (%s): %u TPCs, %u GPCs, calibrated in %.2f s%s%s\n", gpu,
			       g.info.name, g.key.uuid, g.topo.n_tpcs, g.topo.n_gpcs, g.seconds,
			       g.cache_path[0] ? "; saved in " : "", g.cache_path);
			continue;
		}
		print_topology(o, &g, gpu == first);
	}
	if (o->json)
		printf("]}\n");
	return EXIT_SUCCESS;
}

/* ---- Starting a task ----------------------------------------------------- */

/* Finds the preload shim: $NVTASKSET_SHIM, else ../lib/nvtaskset/ beside our binary. */
static void find_shim(char *buf, size_t len)
{
	const char *env = getenv(NVT_ENV_SHIM);
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (env[0] != '/' || access(env, R_OK))
			errx(EXIT_FAILURE, "%s=%s is not a readable absolute path", NVT_ENV_SHIM, env);
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		err(EXIT_FAILURE, "cannot find my own executable");
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(buf, len, "%s/../lib/nvtaskset/libnvtaskset.so", self) >= (int)len)
		errx(EXIT_FAILURE, "path of the nvtaskset shim too long");
	/* Canonical, so that a shim already in LD_PRELOAD is recognised. */
	if (!realpath(buf, self) || access(self, R_OK))
		errx(EXIT_FAILURE, "cannot find the nvtaskset shim at %s", buf);
	snprintf(buf, len, "%s", self);
}

/* Appends value to the colon-separated variable name unless already there. */
static void env_append(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *joined;

	if (old && *old) {
		size_t n = strlen(value);
		for (const char *p = old; (p = strstr(p, value)); p++)
			if ((p == old || p[-1] == ':' || p[-1] == ' ') &&
			    (p[n] == '\0' || p[n] == ':' || p[n] == ' '))
				return;
		if (asprintf(&joined, "%s:%s", old, value) < 0)
			err(EXIT_FAILURE, "out of memory");
		setenv(name, joined, 1);
		free(joined);
	} else {
		setenv(name, value, 1);
	}
}

static void ensure_mps(void)
{
	struct nvt_mps mps;
	pid_t server;
	int clients, limit = nvt_mps_client_limit(client_connections());

	nvt_mps_setup(&mps);
	if (nvt_mps_daemon(&mps)) {
		/* A client past the server's channels fails in CUDA with a misleading
		 * "out of memory" (seen on an H100 with the 16th client): say why now. */
		if (nvt_mps_clients(&mps, geteuid(), &server, &clients, MPS_QUERY_TIMEOUT_MS))
			warnx("cannot ask the MPS control daemon how many clients it serves");
		else if (server && clients >= limit)
			errx(EXIT_FAILURE,
			     "the MPS server (pid %ld) already has %d clients, the most it takes with %d "
			     "channels each (paper 000, section 5.3); this task would fail to start CUDA. "
			     "Stop a task, or run this one with --no-mps",
			     (long)server, clients, client_connections());
		return;
	}
	if (nvt_mps_start(&mps, MPS_TIMEOUT_MS))
		errx(EXIT_FAILURE, "cannot start MPS: %s; run with --no-mps to run without it",
		     mps.error);
	warnx("started the MPS control daemon (pipe directory %s); stop it with 'nvtaskset --mps "
	      "stop'",
	      mps.pipe_dir);
}

static int do_run(const struct options *o, char **argv)
{
	struct nvt_topology topo = gpu_topology(o);
	struct nvt_tpcset set = parse_partition(o, o->count ? "" : argv[0], &topo, 0);
	char list[NVT_LIST_TEXT_MAX], topo_text[NVT_TOPO_TEXT_MAX], shim[PATH_MAX];

	find_shim(shim, sizeof(shim));
	if (nvt_format_list(&set, list, sizeof(list)) < 0 ||
	    nvt_topo_format(&topo, topo_text, sizeof(topo_text)) < 0)
		errx(EXIT_FAILURE, "internal error: cannot format the partition");
	/* MPS clients get 2 channels unless told otherwise (paper 000, Pitfall 4). */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 0);
	if (o->no_mps)
		setenv("CUDA_MPS_PIPE_DIRECTORY", "/dev/null", 1); /* never connect */
	else
		ensure_mps();
	setenv(NVT_ENV_TPCS, list, 1);
	setenv(NVT_ENV_TOPOLOGY, topo_text, 1);
	env_append("LD_PRELOAD", shim);
	if (!o->count)
		argv++;
	execvp(argv[0], argv);
	warn("failed to execute %s", argv[0]);
	return errno == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
	enum {
		OPT_JSON = 256,
		OPT_NO_MPS,
		OPT_MPS,
		OPT_STRATEGY,
		OPT_EXCLUDE,
		OPT_GPU,
		OPT_CALIBRATE,
		OPT_TOPOLOGY
	};
	static const struct option longopts[] = {
		{"tpc-list", no_argument, NULL, 'c'}, {"gpc-list", no_argument, NULL, 'g'},
		{"pid", no_argument, NULL, 'p'},      {"list", no_argument, NULL, 'l'},
		{"json", no_argument, NULL, OPT_JSON}, {"no-mps", no_argument, NULL, OPT_NO_MPS},
		{"mps", required_argument, NULL, OPT_MPS}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},  {"tpcs", required_argument, NULL, 'n'},
		{"strategy", required_argument, NULL, OPT_STRATEGY},
		{"exclude-running", no_argument, NULL, OPT_EXCLUDE},
		{"gpu", required_argument, NULL, OPT_GPU},
		{"calibrate", no_argument, NULL, OPT_CALIBRATE},
		{"topology", no_argument, NULL, OPT_TOPOLOGY}, {NULL, 0, NULL, 0},
	};
	struct options o = {.gpu = -1, .strategy = NVT_PACKED};
	int c;
	char *end;
	long v;

	while ((c = getopt_long(argc, argv, "+cgpln:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o.tpc_list = 1; break;
		case 'g': o.gpc_list = 1; break;
		case 'p': o.pid_mode = 1; break;
		case 'l': o.list_mode = 1; break;
		case OPT_JSON: o.json = 1; break;
		case OPT_NO_MPS: o.no_mps = 1; break;
		case OPT_MPS: o.mps_action = optarg; break;
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > NVT_MAX_TPCS)
				bad_usage("-n takes a TPC count from 1 to 256");
			o.count = (unsigned)v;
			break;
		case OPT_STRATEGY:
			if (!strcmp(optarg, "packed"))
				o.strategy = NVT_PACKED;
			else if (!strcmp(optarg, "spread"))
				o.strategy = NVT_SPREAD;
			else
				bad_usage("--strategy takes packed or spread");
			break;
		case OPT_EXCLUDE: o.exclude_running = 1; break;
		case OPT_GPU:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 63)
				bad_usage("--gpu takes a GPU number from 0 to 63");
			o.gpu = (int)v;
			break;
		case OPT_CALIBRATE: o.calibrate = 1; break;
		case OPT_TOPOLOGY: o.topology = 1; break;
		case 'h': usage(stdout);
		case 'V':
			printf("nvtaskset " NVT_VERSION_STRING "\n");
			return EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try 'nvtaskset --help' for more information.\n");
			return EXIT_FAILURE;
		}
	}
	argc -= optind;
	argv += optind;
	if (o.tpc_list + o.gpc_list + (o.count > 0) > 1)
		bad_usage("-c, -g and -n exclude each other");
	if (o.pid_mode + o.list_mode + (o.mps_action != NULL) + (o.calibrate || o.topology) > 1)
		bad_usage("-p, -l, --mps and --topology/--calibrate exclude each other");
	if ((o.strategy != NVT_PACKED || o.exclude_running) && !o.count)
		bad_usage("--strategy and --exclude-running go with -n");
	if (o.calibrate || o.topology) {
		if (argc)
			bad_usage("--topology and --calibrate take no further arguments");
		return do_topology(&o);
	}
	if (o.mps_action) {
		if (argc)
			bad_usage("--mps takes no further arguments");
		return do_mps(&o);
	}
	if (o.list_mode) {
		if (argc)
			bad_usage("-l takes no further arguments");
		return do_list(&o);
	}
	if (o.pid_mode) {
		if (argc < 1 || argc > (o.count ? 1 : 2))
			bad_usage(argc ? "too many arguments" : "no PID given");
		return do_pid(&o, argc, argv);
	}
	if (o.count && argc < 1)
		bad_usage("no command given");
	if (!o.count && argc < 2)
		bad_usage(argc ? "no command given" : "no mask and no command given");
	return do_run(&o, argv);
}
