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
#include <unistd.h>

#include "gpu.h"
#include "mps.h"
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
};

static void __attribute__((noreturn)) usage(FILE *out)
{
	fputs("Usage:\n"
	      " nvtaskset [options] MASK COMMAND [ARG...]\n"
	      " nvtaskset [options] -p [MASK] PID\n"
	      " nvtaskset [options] -l\n"
	      " nvtaskset --mps status|start|stop\n"
	      "\n"
	      "Run a CUDA program on a set of GPU TPCs (thread processing clusters, two SMs\n"
	      "each), or show or change the TPCs of a running task.\n"
	      "\n"
	      "Options:\n"
	      " -c, --tpc-list        MASK is a list of TPCs, e.g. 0-15,32,40-47:2\n"
	      " -g, --gpc-list        MASK is a list of GPCs\n"
	      " -p, --pid             operate on the running task PID\n"
	      " -l, --list            list the tasks under nvtaskset that you may see\n"
	      "     --json            print what -p and -l report as JSON\n"
	      "     --no-mps          run COMMAND outside MPS (no co-running)\n"
	      "     --mps ACTION      status, start or stop the MPS control daemon\n"
	      " -h, --help            display this help\n"
	      " -V, --version         display version\n"
	      "\n"
	      "MASK is hexadecimal: bit t selects TPC t, e.g. ff is TPCs 0-7. TPC t holds\n"
	      "SMs 2t and 2t+1. Without --no-mps, nvtaskset starts the MPS control daemon\n"
	      "when none runs, so that tasks on disjoint TPCs run side by side.\n"
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

static struct nvt_topology gpu_topology(void)
{
	struct nvt_gpu_info info;
	struct nvt_topology topo;

	if (nvt_gpu_query(0, driver_timeout_ms(), &info))
		errx(EXIT_FAILURE, "cannot query the GPU: %s", info.error);
	/* Until calibration lands, TPC t is assumed to be mask bit t. */
	nvt_topo_identity(&topo, (unsigned)info.sms / 2);
	return topo;
}

/*
 * Turns MASK (hex, -c list or -g list) into a TPC set for topo, or exits
 * with a one-line reason.
 */
static struct nvt_tpcset parse_partition(const struct options *o, const char *text,
					 const struct nvt_topology *topo)
{
	struct nvt_tpcset set, gpcs;
	const char *what = o->gpc_list ? "GPC list" : o->tpc_list ? "TPC list" : "TPC mask";
	int rc, top;

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
			     "the GPC layout of this GPU is unknown (this version does not measure "
			     "it yet); give TPCs with -c or a mask instead");
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
	const char *mask_text = argc == 2 ? argv[0] : NULL;
	pid_t pid = parse_pid(argv[argc - 1]);
	struct nvt_seg_handle h;
	struct nvt_slot_view old, now;
	struct nvt_topology topo;
	struct nvt_tpcset set;
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
	if (readable && old.state == NVT_SLOT_SET && nvt_topo_validate(&old.topo) == 0)
		topo = old.topo; /* what the task already uses: no driver call */
	else
		topo = gpu_topology();
	set = parse_partition(o, mask_text, &topo);
	rc = nvt_seg_lock(&h, SEG_LOCK_TIMEOUT_MS);
	if (rc)
		errx(EXIT_FAILURE, "failed to set pid %ld's partition: %s", (long)pid,
		     seg_error(rc, &h, why, sizeof(why)));
	/* Under the lock no live writer is inside: a failed read is a dead one's. */
	readable = read_slot(&h, &old) == 0;
	nvt_slot_write(&h.seg->gpu[0], NVT_SLOT_SET, &set, &topo);
	read_slot(&h, &now);
	nvt_seg_close(&h);
	if (o->json) {
		printf("{\"pid\":%ld,", (long)pid);
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

static int do_list(const struct options *o)
{
	static pid_t pids[MAX_TASKS];
	const char *rundir = nvt_rundir();
	int n = nvt_seg_scan(rundir, pids, MAX_TASKS), shown = 0;

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

static int do_mps(const struct options *o)
{
	struct nvt_mps mps;
	pid_t pid;

	nvt_mps_setup(&mps);
	pid = nvt_mps_daemon(&mps);
	if (!strcmp(o->mps_action, "status")) {
		if (o->json) {
			printf("{\"running\":%s,\"pid\":%ld,\"pipe_directory\":", pid ? "true" : "false",
			       (long)pid);
			json_string(mps.pipe_dir);
			printf(",\"log_directory\":");
			json_string(mps.log_dir);
			printf(",\"control\":");
			json_string(mps.control);
			printf("}\n");
		} else if (pid) {
			printf("MPS control daemon: running (pid %ld), pipe directory %s, log directory "
			       "%s\n",
			       (long)pid, mps.pipe_dir, mps.log_dir);
		} else {
			printf("MPS control daemon: not running (pipe directory %s)\n", mps.pipe_dir);
		}
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

	nvt_mps_setup(&mps);
	if (nvt_mps_daemon(&mps))
		return;
	if (nvt_mps_start(&mps, MPS_TIMEOUT_MS))
		errx(EXIT_FAILURE, "cannot start MPS: %s; run with --no-mps to run without it",
		     mps.error);
	warnx("started the MPS control daemon (pipe directory %s); stop it with 'nvtaskset --mps "
	      "stop'",
	      mps.pipe_dir);
}

static int do_run(const struct options *o, char **argv)
{
	struct nvt_topology topo = gpu_topology();
	struct nvt_tpcset set = parse_partition(o, argv[0], &topo);
	char list[NVT_LIST_TEXT_MAX], topo_text[NVT_TOPO_TEXT_MAX], shim[PATH_MAX];

	find_shim(shim, sizeof(shim));
	if (nvt_format_list(&set, list, sizeof(list)) < 0 ||
	    nvt_topo_format(&topo, topo_text, sizeof(topo_text)) < 0)
		errx(EXIT_FAILURE, "internal error: cannot format the partition");
	if (o->no_mps)
		setenv("CUDA_MPS_PIPE_DIRECTORY", "/dev/null", 1); /* never connect */
	else
		ensure_mps();
	/* MPS clients get 2 channels unless told otherwise (paper 000, Pitfall 4). */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 0);
	setenv(NVT_ENV_TPCS, list, 1);
	setenv(NVT_ENV_TOPOLOGY, topo_text, 1);
	env_append("LD_PRELOAD", shim);
	execvp(argv[1], argv + 1);
	warn("failed to execute %s", argv[1]);
	return errno == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_NO_MPS, OPT_MPS };
	static const struct option longopts[] = {
		{"tpc-list", no_argument, NULL, 'c'}, {"gpc-list", no_argument, NULL, 'g'},
		{"pid", no_argument, NULL, 'p'},      {"list", no_argument, NULL, 'l'},
		{"json", no_argument, NULL, OPT_JSON}, {"no-mps", no_argument, NULL, OPT_NO_MPS},
		{"mps", required_argument, NULL, OPT_MPS}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},  {NULL, 0, NULL, 0},
	};
	struct options o = {0};
	int c;

	while ((c = getopt_long(argc, argv, "+cgplhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o.tpc_list = 1; break;
		case 'g': o.gpc_list = 1; break;
		case 'p': o.pid_mode = 1; break;
		case 'l': o.list_mode = 1; break;
		case OPT_JSON: o.json = 1; break;
		case OPT_NO_MPS: o.no_mps = 1; break;
		case OPT_MPS: o.mps_action = optarg; break;
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
	if (o.tpc_list && o.gpc_list)
		bad_usage("-c and -g exclude each other");
	if (o.pid_mode + o.list_mode + (o.mps_action != NULL) > 1)
		bad_usage("-p, -l and --mps exclude each other");
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
		if (argc < 1 || argc > 2)
			bad_usage(argc ? "too many arguments" : "no PID given");
		return do_pid(&o, argc, argv);
	}
	if (argc < 2)
		bad_usage(argc ? "no command given" : "no mask and no command given");
	return do_run(&o, argv);
}
