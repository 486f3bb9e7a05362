/*
 * shimsetup.c - the shim's set-up: the control segment, the partitions from
 * the environment, the driver's launch callback, forks and exit. The launch
 * path itself is in shim.c (see its comment for the whole design). The top
 * of the shim's layers (shimstate.h): it calls every other file.
 *
 * Over 500 lines on purpose: the set-up's steps run once, in this order, on
 * state private to it (start marks, the fork handlers).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "core/gpusel.h"
#include "seg/inherit.h"
#include "os/clock.h"
#include "nvtaskset.h"
#include "core/ptree.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "core/prio.h"
#include "core/memlimit.h"
#include "core/tmd.h"
#include "core/topo.h"
#include "core/tpcset.h"
#include "shim.h"
#include "shimbridge.h"
#include "shimdriver.h"
#include "shimgraph.h"
#include "shimhostfn.h"
#include "shimmem.h"
#include "shimpreempt.h"
#include "shimslot.h"
#include "shimsmctrl.h"
#include "shimsmctrlmaps.h"
#include "shimsmcount.h"
#include "shimstate.h"
#include "shimyield.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The first shim instance in a process that this symbol resolves to does
 * the work; a second copy (preload plus wrapper) stays passive. Our own
 * address must come from the hidden name: the exported one is interposable
 * and resolves to the first copy in every copy.
 */
#define INSTANCE_TEXT "nvtaskset " NVT_VERSION_STRING
static const char instance_marker[sizeof(INSTANCE_TEXT)] = INSTANCE_TEXT;
extern const char nvtaskset_shim_instance[sizeof(INSTANCE_TEXT)]
	__attribute__((alias("instance_marker"))) EXPORT;

/* Segments the shim judges when a task starts (nvt_seg_sweep): at most 11
 * system calls each and 9 more a removal (segown.h), whatever the number of
 * the user's tasks. Leftovers (children that ended with _exit) go over a few
 * starts, or at the next -l. */
#define SWEEP_MAX 32
/* The process an MPS control daemon starts as its server. */
#define MPS_SERVER_NAME "nvidia-cuda-mps-server"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- What set-up takes (NVT_ENV_START_DEBUG) ------------------------------ */

/*
 * Each part's wall time, said in one line at the end of set-up when
 * NVT_ENV_START_DEBUG asks (the start-up benchmark reads it:
 * tests/bench/startup.py). A part ends at the next mark; the clock
 * (os/clock.h) is the vDSO's, no system call.
 */
enum start_part {
	SP_ENV, SP_SEGMENT, SP_INHERIT, SP_SWEEP, SP_MASKS, SP_DRIVER, SP_CALLBACK, SP_GRAPHS,
	SP_SMCTRL, SP_SMS, SP_YIELD, SP_PARTS
};
static const char *const start_part_names[SP_PARTS] = {
	"environment", "segment", "inherit", "sweep", "masks", "driver", "callback",
	"graphs", "smctrl", "sms", "yield"};
static struct {
	int on;
	uint64_t begin_ns, last_ns; /* nvt_clock_ns */
	double ms[SP_PARTS];
} setup_time;

static double ms_between(uint64_t a_ns, uint64_t b_ns)
{
	return (double)(b_ns - a_ns) / 1e6;
}

/* The time since the last mark goes to part. */
static void start_mark(enum start_part part)
{
	uint64_t now_ns;

	if (!setup_time.on)
		return;
	now_ns = nvt_clock_ns();
	setup_time.ms[part] += ms_between(setup_time.last_ns, now_ns);
	setup_time.last_ns = now_ns;
}

static void start_report(void)
{
	char line[400];
	int n;

	if (!setup_time.on)
		return;
	n = snprintf(line, sizeof(line), "start-up of pid %ld: %.3f ms in all (", (long)getpid(),
		     ms_between(setup_time.begin_ns, setup_time.last_ns));
	for (int p = 0; p < SP_PARTS && n > 0 && n < (int)sizeof(line); p++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %.3f", p ? ", " : "",
			      start_part_names[p], setup_time.ms[p]);
	shim_note("%s ms)", line);
}

/* The signals a service is normally stopped with (systemctl stop, scancel,
 * docker stop: SIGTERM; a terminal that closes: SIGHUP; Ctrl-C: SIGINT). */
static const int stop_signals[] = {SIGTERM, SIGHUP, SIGINT};

/* ---- Set-up ------------------------------------------------------------- */

static int env_flag(const char *name)
{
	const char *v = secure_getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

/*
 * A segment only this process sees, when none can be shared: static, so that
 * getting one cannot fail (its pages cost nothing until used). A forked
 * child whose parent used it has a copy of its own already.
 */
static struct nvt_segment *private_segment(void)
{
	static struct nvt_segment private_seg;
	uint64_t start = 0;

	nvt_proc_start_time(getpid(), &start);
	nvt_segment_init(&private_seg, (int32_t)getpid(), (uint32_t)geteuid(), start);
	return &private_seg;
}

/* 1 if name is set in the environment, and not empty. */
static int env_set(const char *name)
{
	const char *text = secure_getenv(name);

	return text && *text;
}

/*
 * A CDI priority device's yield=auto (nvt_prio_resolve): partitioned in a container given a
 * partition device (NVT_ENV_CDI) or where the environment gives a partition, else on the whole
 * GPU. The device's spec cannot set what the ways resolved need, as a start does
 * (nvt_task_env_self): MPS's client priority, or a high time-sliced task's one connection for
 * its bridge. Set here, in the constructor, before CUDA reads them, unless set already.
 */
static void resolve_auto(struct nvt_slot_prio *prio)
{
	if (!(prio->flags & NVT_PRIOF_AUTO))
		return;
	nvt_prio_resolve(prio, env_set(NVT_ENV_CDI) || env_set(NVT_ENV_PARTITION));
	if (prio->prio < NVT_PRIO_HIGH && (prio->yield & NVT_YIELD_CLIENT))
		setenv(NVT_ENV_MPS_CLIENT_PRIORITY, "1", 0);
	if (nvt_bridge_on(nvt_bridge_wanted(prio->prio, prio->yield, "1", secure_getenv(NVT_ENV_BRIDGE))))
		setenv(NVT_ENV_CUDA_CONNECTIONS, "1", 0);
}

/*
 * The priority the environment gives this task (NVT_ENV_PRIORITY, read once, resolved;
 * a malformed one is said once and ignored). Returns 0, or -1 if none.
 */
static int env_prio(struct nvt_slot_prio *out)
{
	static int done, have;
	static struct nvt_slot_prio prio;
	const char *text;

	if (!done) {
		done = 1;
		text = secure_getenv(NVT_ENV_PRIORITY);
		if (text && *text && nvt_prio_env_parse(text, &prio))
			shim_warn("ignoring malformed %s=\"%.64s\"; running without a priority",
				  NVT_ENV_PRIORITY, text);
		else
			have = text && *text;
		if (have)
			resolve_auto(&prio);
	}
	if (have)
		*out = prio;
	return have ? 0 : -1;
}

/*
 * The initial partitions the CLI put in the environment, one per GPU, into
 * parts (NVT_MAX_GPUS). Returns how many (0: none, or a malformed record).
 */
static int environment_partitions(struct nvt_slot_view *parts)
{
	const char *text = secure_getenv(NVT_ENV_PARTITION);
	struct nvt_mem_env mem = {0};
	struct nvt_slot_prio prio;
	/* (read first, in the constructor: a yield=auto sets CUDA's variables, resolve_auto) */
	int n, has_prio = env_prio(&prio) == 0;

	if (!text || !*text)
		return 0;
	n = nvt_gpusel_env_parse(text, parts, NVT_MAX_GPUS);
	if (n < 0) {
		shim_warn("ignoring malformed %s=\"%.64s...\"; running unpartitioned", NVT_ENV_PARTITION,
		     text);
		return 0;
	}
	/* Its GPU memory limit, if it has one (docs/usage.md, "GPU memory"): on each GPU, or on
	 * the one its UUID names (a CDI device of one GPU). */
	text = secure_getenv(NVT_ENV_MEM);
	if (text && *text && nvt_memlimit_env_read(text, &mem))
		shim_warn("ignoring malformed %s=\"%.64s\"; running without a GPU memory limit",
			  NVT_ENV_MEM, text);
	for (int i = 0; i < n; i++)
		parts[i].mem_limit = nvt_memlimit_env_on(&mem, parts[i].uuid);
	/* Its priority, if it has one (docs/priorities.md): own = the partition given. */
	if (has_prio) {
		for (int i = 0; i < n; i++) {
			parts[i].prio = prio;
			nvt_prio_own_of(&parts[i], &parts[i].prio.own); /* all TPCs when "all" */
		}
	}
	return n;
}

/*
 * Single-threaded (set-up, or a forked child): the masks slot g's launches
 * start from, and the fallback when nothing better can be read. A view that
 * gives no usable masks (the parent refused it, say) falls back on the last
 * partition launches used, then on fallback (NULL: none); only then on
 * "unpartitioned". The first launch still reads the slot, and only then
 * reports the partition applied.
 */
static void start_masks(int g, const struct nvt_slot_view *view, const struct nvt_slot_view *fallback)
{
	struct slot_masks *sm = &shim.masks[g];
	struct hw_masks none, m;
	struct nvt_slot_view last;

	memset(&none, 0, sizeof(none));
	shim_smctrl_topology(g, &view->topo);
	if (shim_compute(&none, view, &m) &&
	    (shim_recall(sm, &last) || shim_compute(&none, &last, &m)) &&
	    (!fallback || shim_compute(&none, fallback, &m)))
		m = none;
	m.seg_seq = UINT64_MAX;
	sm->initial = m;
	sm->initial_view = *view;
	memset(sm->buf, 0, sizeof(sm->buf));
	memset(sm->known, 0, sizeof(sm->known));
	sm->current = sm->known_current = 0;
	sm->updating = 0;
	shim_publish(sm, &m);
	shim_remember(sm, view);
}

/* Finds the driver's callback table and subscribes on_launch. */
static void register_callback(void)
{
	static const CUuuid table_id = NVT_CB_TABLE_UUID;
	const void *const *table = NULL;
	nvt_cb_subscribe_fn subscribe;
	nvt_cb_enable_fn enable;
	struct nvt_slot_prio prio;
	uint32_t handle = 0;
	char why[256];
	int rc;

	if (shim_driver_load(why, sizeof(why))) {
		shim_warn("cannot load the CUDA driver (%s); running unpartitioned", why);
		return;
	}
	start_mark(SP_DRIVER);
	if (!shim_cu.get_export_table) {
		shim_warn("the CUDA driver has no cuGetExportTable; running unpartitioned");
		return;
	}
	rc = shim_cu.get_export_table((const void **)&table, &table_id);
	if (rc || !table || !table[NVT_CB_TABLE_SUBSCRIBE] || !table[NVT_CB_TABLE_ENABLE]) {
		shim_warn("the CUDA driver offers no launch callback table (error %d); running "
		     "unpartitioned",
		     rc);
		return;
	}
	subscribe = (nvt_cb_subscribe_fn)table[NVT_CB_TABLE_SUBSCRIBE];
	enable = (nvt_cb_enable_fn)table[NVT_CB_TABLE_ENABLE];
	rc = subscribe(&handle, shim_on_launch, NULL);
	if (rc) {
		shim_warn("the CUDA driver refused the launch callback (error %d); running unpartitioned",
		     rc);
		return;
	}
	rc = enable(1, handle, NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH);
	if (rc) {
		shim_warn("the CUDA driver refused to enable the launch callback (error %d); running "
		     "unpartitioned",
		     rc);
		return;
	}
	shim.active = 1;
	start_mark(SP_CALLBACK);
	shim_graph_setup(enable, handle);
	start_mark(SP_GRAPHS);
	shim_smctrl_setup(enable, handle);
	start_mark(SP_SMCTRL);
	shim_smcount_setup(enable, handle);
	shim_mem_setup(enable, handle);
	start_mark(SP_SMS);
	if (env_prio(&prio) == 0)
		shim_yield_setup(enable, handle, prio.prio, prio.yield);
	shim_hostfn_setup(enable, handle);
	start_mark(SP_YIELD);
}

/*
 * In a forked child: a segment of its own, holding the parent's partitions.
 * Made holding the writer's lock, so no CLI writes beside it; and made before
 * the parent's partitions are read, so that a CLI changing a tree (-a), which
 * looks for new tasks after its writes, finds this child if it read the
 * parent's partition before the change (as a spawned child does, see init).
 * If none can be made, a private one: the child never launches on, nor
 * counts its launches in, the segment of its parent's that it inherited
 * mapped.
 */
static void after_fork_in_child(void)
{
	static struct nvt_slot_view views[NVT_MAX_GPUS];
	struct nvt_segment *parent = shim.seg, *child = NULL;
	struct nvt_seg_new fresh = {-1, -1, 0, 0};
	int used[NVT_MAX_GPUS];
	char why[256];

	shim_smctrl_after_fork();
	shim_smctrl_maps_after_fork();
	shim_yield_after_fork();
	shim_hostfn_after_fork();
	shim_preempt_after_fork();
	if (shim.seg_shared) {
		if (nvt_seg_create(shim.base, &shim.own, &fresh, why, sizeof(why)) >= 0) {
			child = shim.own.seg;
			shim.seg_pid = getpid();
		} else {
			shim_warn("cannot create a control segment in %s (%s); this forked child's "
				  "partition cannot be read or changed while it runs",
				  shim.own.dir, why);
			child = private_segment();
			shim.seg_shared = 0;
		}
	}
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		nvt_slot_uuid(&parent->gpu[g], uuid);
		used[g] = !nvt_uuid_is_zero(uuid);
		if (!used[g] || nvt_slot_read(&parent->gpu[g], &views[g], 100) == 0)
			continue;
		/* Forked while a writer was inside the parent's slot (or stopped
		 * there): carry on with the partition launches used, never none. */
		if (shim_recall(&shim.masks[g], &views[g]))
			views[g] = shim.masks[g].initial_view;
		memcpy(views[g].uuid, uuid, sizeof(uuid));
	}
	if (child) {
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			if (used[g])
				nvt_slot_write(&child->gpu[g], &views[g]);
		nvt_seg_unlock(&fresh);
		shim.seg = child;
		munmap(parent, sizeof(*parent)); /* the parent's file, mapped shared */
	} /* else: the parent's was private, and fork() made this child a copy of it */
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		if (used[g]) {
			start_masks(g, &views[g], NULL);
			shim_yield_slot_ready(g);
		} else {
			memset(&shim.masks[g], 0, sizeof(shim.masks[g]));
		}
	}
	shim_mem_after_fork();
}

/*
 * Fills a new segment (its lock held, or private) as nvtaskset.h says: this
 * very process's partitions from before an exec to another user; else its
 * nearest ancestor's; else the environment's (env, n_env). The environment
 * wins outright in the process nvtaskset gave it to (NVTASKSET_PARTITION_FOR
 * names it), and no ancestor above that one is looked at.
 */
static void fill_new_segment(int created, const struct nvt_slot_view *env, int n_env)
{
	static struct nvt_inherited from;
	const char *text = secure_getenv(NVT_ENV_PARTITION_FOR);
	struct nvt_proc_id marked, *stop = NULL;
	int rc = NVT_INHERIT_NONE;

	if (created)
		rc = nvt_inherit_same_pid(shim.base, &shim.own, &from);
	if (rc != NVT_INHERIT_FOUND) {
		if (text && nvt_ptree_id_parse(text, &marked) == 0)
			stop = &marked;
		if (!(stop && stop->pidns == shim.own.pidns && stop->pid == shim.own.pid &&
		      stop->start_time == shim.seg->start_time))
			rc = nvt_inherit_ancestor(shim.base, &shim.own, stop, &from);
	}
	if (rc == NVT_INHERIT_FOUND) {
		for (int i = 0; i < from.n; i++)
			nvt_slot_write(&shim.seg->gpu[from.slot[i]], &from.view[i]);
		return;
	}
	for (int g = 0; g < n_env; g++)
		nvt_slot_write(&shim.seg->gpu[g], &env[g]);
}

/*
 * In a container started with a CDI device that claims TPCs (nvtaskset/tpcs=N),
 * whose hook gave them to the container's first process: a process that is
 * not its descendant (one that podman exec started) found no partition, and
 * says so rather than run on every TPC unnoticed (docs/containers.md).
 */
static void warn_unclaimed_in_container(void)
{
	const char *device = secure_getenv(NVT_ENV_CDI);

	if (!device || strncmp(device, "tpcs=", 5))
		return;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		nvt_slot_uuid(&shim.seg->gpu[g], uuid);
		if (!nvt_uuid_is_zero(uuid))
			return;
	}
	shim_warn("this process has no partition: its container's %.32s device gave TPCs to the "
		  "container's first process and the processes it starts, and this one (started by "
		  "podman exec, say) is none of them; it runs on every TPC. Start it from the "
		  "container's first process, or move it: nvtaskset -p on the host",
		  device);
}

/*
 * A stop signal whose action was the default one: removes this process's
 * segment (async-signal-safe: open, fstatat, unlinkat, close), then ends the
 * process by the signal's default action, as it would have ended without
 * the shim (its exit status says the signal).
 */
static void on_stop_signal(int sig)
{
	struct sigaction dfl;
	sigset_t set;
	int saved = errno;

	if (shim.seg_shared && shim.seg_pid == getpid())
		nvt_seg_remove(&shim.own);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	errno = saved; /* (not reached: the default action ends the process) */
}

/*
 * For each stop signal whose action is the default one (to end the process
 * without running its exit handlers, which leaves the segment behind): a
 * handler that removes the segment, then ends it by that default action.
 * One the program ignores, handles, or sets later is left to it: a program
 * that sets its own handler after ours replaces ours (and removes the
 * segment when it exits normally); one that blocks a signal to take it by
 * sigwait or signalfd never runs ours. Children inherit it with the
 * segment they make at fork (shim.own), and an exec resets it. A Python
 * interpreter gets none (below).
 */
static void watch_stop_signals(void)
{
	struct sigaction now, ours;

	/* Not in a Python interpreter: its signal module takes a handler it did
	 * not set for "not Python's" (signal.getsignal() gives None), and code
	 * that saves a handler and sets it back (signal.signal(sig, old)) fails
	 * on that. Its own handlers end it normally, which removes the segment. */
	if (dlsym(RTLD_DEFAULT, "Py_Initialize"))
		return;
	memset(&ours, 0, sizeof(ours));
	ours.sa_handler = on_stop_signal;
	ours.sa_flags = SA_RESTART | SA_ONSTACK;
	sigemptyset(&ours.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (sigaction(stop_signals[i], NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
		    now.sa_handler == SIG_DFL)
			sigaction(stop_signals[i], &ours, NULL);
}

/*
 * The MPS server of a control daemon nvtaskset started for a priority level
 * (NVT_ENV_MPS_SERVER, docs/priorities.md "Preemption"): a segment of its
 * own, for its GPUs' slots, which say the level (so -l shows it, and it finds
 * the higher tasks as a task would), no partition and no launch callback (its
 * clients' shims do theirs), and its channel groups, where its clients' work
 * runs, given the level's timeslice and holds.
 */
static void mps_server_init(const char *level)
{
	struct nvt_seg_new fresh = {-1, -1, 0, 0};
	struct nvt_slot_prio prio;
	char why[256];

	memset(&prio, 0, sizeof(prio));
	if (nvt_prio_env_parse(level, &prio) || prio.prio == NVT_PRIO_NONE) {
		shim_warn("ignoring malformed %s=\"%.64s\"; this MPS server's clients are not "
			  "time-sliced", NVT_ENV_MPS_SERVER, level);
		return;
	}
	snprintf(shim.base, sizeof(shim.base), "%s", nvt_rundir());
	if (nvt_seg_create(shim.base, &shim.own, &fresh, why, sizeof(why)) < 0) {
		shim_warn("cannot create a control segment in %s (%s); this MPS server's clients are "
			  "not time-sliced", shim.own.dir, why);
		return;
	}
	shim.seg = shim.own.seg;
	shim.seg_shared = 1;
	shim.seg_pid = getpid();
	nvt_seg_unlock(&fresh);
	watch_stop_signals();
	shim_preempt_server(&prio);
}

/*
 * 1 if this process is an MPS control daemon of a priority level or its
 * server: the server does the level's work (mps_server_init), the daemon
 * itself (and anything else it starts) stays passive.
 */
static int mps_level_process(void)
{
	const char *level = secure_getenv(NVT_ENV_MPS_SERVER);

	if (!level || !*level)
		return 0;
	if (!strcmp(program_invocation_short_name, MPS_SERVER_NAME))
		mps_server_init(level);
	return 1;
}

static void init(void)
{
	const void *first = dlsym(RTLD_DEFAULT, "nvtaskset_shim_instance");
	static struct nvt_slot_view env[NVT_MAX_GPUS], start;
	struct nvt_seg_new fresh = {-1, -1, 0, 0};
	int n_env, rc;
	char why[256];

	shim.quiet = env_flag(NVT_ENV_QUIET);
	if ((setup_time.on = env_flag(NVT_ENV_START_DEBUG))) {
		setup_time.begin_ns = nvt_clock_ns();
		setup_time.last_ns = setup_time.begin_ns;
	}
	if (first && first != (const void *)instance_marker) {
		shim_driver_passive(first); /* another copy of the shim is in charge */
		return;
	}
	/* The nvtaskset command itself (nested in a partitioned shell): no
	 * segment, no callback, no fork handler. It removes the segment this PID
	 * had before its exec, and the COMMAND it execs starts afresh. */
	if (dlsym(RTLD_DEFAULT, NVT_CLI_MARKER) || mps_level_process())
		return;
	n_env = environment_partitions(env);
	snprintf(shim.base, sizeof(shim.base), "%s", nvt_rundir());
	start_mark(SP_ENV);
	rc = nvt_seg_create(shim.base, &shim.own, &fresh, why, sizeof(why));
	if (rc >= 0) {
		shim.seg = shim.own.seg;
		shim.seg_shared = 1;
		shim.seg_pid = getpid();
	} else {
		shim_warn("cannot create a control segment in %s (%s); this task's partition cannot "
			  "be read or changed while it runs", shim.own.dir, why);
		shim.seg = private_segment();
	}
	start_mark(SP_SEGMENT);
	if (rc == NVT_SEG_ADOPTED) {
		/* A new program in this process: nothing has launched on it yet. */
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			nvt_slot_set_applied(&shim.seg->gpu[g], 0);
	} else {
		fill_new_segment(rc == NVT_SEG_CREATED, env, n_env);
	}
	nvt_seg_unlock(&fresh); /* open to readers now, filled */
	if (rc != NVT_SEG_ADOPTED && n_env == 0)
		warn_unclaimed_in_container();
	start_mark(SP_INHERIT);
	/* Children that ended with _exit left their files: a start tidies up. */
	if (rc == NVT_SEG_CREATED)
		nvt_seg_sweep(&shim.own, SWEEP_MAX);
	start_mark(SP_SWEEP);
	/* Launches start from each slot, or from the environment if a writer
	 * stopped inside it: never from "unpartitioned". */
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		const struct nvt_slot_view *mine = NULL;
		uint8_t uuid[16];
		nvt_slot_uuid(&shim.seg->gpu[g], uuid);
		if (nvt_uuid_is_zero(uuid))
			continue;
		/* The environment's partition of this slot's GPU, if it names it. */
		for (int e = 0; e < n_env && !mine; e++)
			if (!memcmp(env[e].uuid, uuid, sizeof(uuid)))
				mine = &env[e];
		if (nvt_slot_read(&shim.seg->gpu[g], &start, 100)) {
			if (!mine)
				continue;
			start = *mine;
		}
		start_masks(g, &start, mine);
	}
	if (pthread_atfork(shim_smctrl_before_fork, shim_smctrl_after_fork_in_parent, after_fork_in_child))
		shim_warn("cannot watch fork(): children share their parent's control segment");
	if (shim.seg_shared)
		watch_stop_signals();
	start_mark(SP_MASKS);
	shim_preempt_setup();
	register_callback();
	start_report();
}

__attribute__((constructor)) static void shim_load(void)
{
	pthread_once(&init_once, init);
}

__attribute__((destructor)) static void shim_unload(void)
{
	shim_smctrl_report();
	shim_bridge_report();
	/* Remove the file but keep the mapping: other threads may still launch. */
	if (shim.seg_shared && shim.seg_pid == getpid())
		nvt_seg_remove(&shim.own);
}
