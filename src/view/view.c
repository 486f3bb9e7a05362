/*
 * view.c - reading a view (view.h): every task's slots, the GPUs, the
 * agents and the MPS daemon, changing nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view.h"
#include "viewint.h"
#include "alloc/queue.h"
#include "core/grow.h"
#include "core/prio.h"
#include "core/ptree.h"
#include "core/segment.h"
#include "core/text.h"
#include "core/topo.h"
#include "core/tpcset.h"
#include "gpu/topocache.h"
#include "mps/mps.h"
#include "os/clock.h"
#include "os/proc.h"
#include "prio/agent.h"
#include "seg/segfile.h"

/* Users' names, looked up once a view: a thousand tasks have a few users. */
struct names {
	uid_t uid[64];
	char name[64][64];
	int named[64];
	int n;
};

/* The name of uid into out (its digits when the password database does not know it). Returns 1
 * for a name, 0 for digits. */
static int user_name(struct names *names, uid_t uid, char *out, size_t len)
{
	struct passwd pw, *found = NULL;
	char buf[1024];
	int i, named;

	for (i = 0; i < names->n; i++)
		if (names->uid[i] == uid) {
			snprintf(out, len, "%s", names->name[i]);
			return names->named[i];
		}
	named = !getpwuid_r(uid, &pw, buf, sizeof(buf), &found) && found;
	if (named)
		snprintf(out, len, "%s", found->pw_name);
	else
		snprintf(out, len, "%lu", (unsigned long)uid);
	if (names->n < 64) {
		names->uid[names->n] = uid;
		names->named[names->n] = named;
		snprintf(names->name[names->n++], sizeof(names->name[0]), "%s", out);
	}
	return named;
}

/* The index of the view's GPU with this UUID, added (with the slot's map, if it has one) when
 * the machine's list lacks it; -1 when the view has no room for another. */
static int gpu_of(struct nvt_view *v, const uint8_t uuid[16], const struct nvt_topology *topo,
		  uid_t seg_owner, uid_t task_uid)
{
	enum nvt_map_from from = nvt_map_from_task(seg_owner, task_uid, geteuid());
	struct nvt_view_gpu *g;
	int i;

	for (i = 0; i < v->n_gpus; i++)
		if (!memcmp(v->gpus[i].uuid, uuid, 16))
			break;
	if (i == v->n_gpus) {
		if (v->n_gpus == NVT_MACHINE_GPUS)
			return -1;
		g = &v->gpus[v->n_gpus++];
		memset(g, 0, sizeof(*g));
		g->index = -1;
		memcpy(g->uuid, uuid, 16);
		nvt_uuid_format(uuid, g->uuid_text);
	}
	g = &v->gpus[i];
	/* A map a task runs with is the one calibration found (the start copied it); one that is
	 * no map (its user may write anything in her segment: 2^32 - 1 GPCs, say) is not taken,
	 * and a valid one only from a task of root's or the viewer's, until a better source gives
	 * one (enum nvt_map_from: her segment may hold a valid but false map, which must not
	 * decide other users' view). */
	if (from != NVT_MAP_NONE && (int)from > g->map_from && nvt_topo_validate(topo) == 0) {
		g->topo = *topo;
		g->map_known = 1;
		g->map_from = from;
	}
	return i;
}

/* Appends a slot for task (index) from the segment's slot view and status. Returns 0 or -1. */
static int add_slot(struct nvt_view *v, size_t *cap, size_t task, const struct nvt_slot_view *view,
		    const struct nvt_slot_status *st)
{
	struct nvt_view_slot *s, *slots = nvt_grow(v->slots, v->n_slots, cap, sizeof(*slots), 256);
	int gpu;

	if (!slots)
		return -1;
	v->slots = slots;
	gpu = gpu_of(v, view->uuid, &view->topo, v->tasks[task].seg_owner, v->tasks[task].uid);
	if (gpu < 0) {
		v->gpus_past++; /* past the most GPUs a machine has: not shown */
		return 0;
	}
	s = &v->slots[v->n_slots++];
	memset(s, 0, sizeof(*s));
	s->task = task;
	s->gpu = gpu;
	s->partitioned = view->state == NVT_SLOT_SET;
	s->claim = !!(view->flags & NVT_SLOTF_CLAIM);
	s->applied = st->applied == view->seq;
	s->refused = view->seq && st->rejected == view->seq;
	s->prio = view->prio;
	s->yield = st->yield;
	s->act = st->act;
	s->launches = st->launches;
	s->graph_stale = st->graph_stale;
	s->mem_used = st->mem_used;
	s->mem_limit = view->mem_limit;
	s->mem_refused = st->mem_refused;
	s->current = view->tpcs;
	/* A shim's launches that borrow run on its own TPCs and those it borrows (nvtaskset.h). */
	if (view->prio.prio != NVT_PRIO_NONE && st->yield.state == NVT_YS_BORROWING)
		nvt_set_or(&s->current, &s->current, &st->yield.borrowed);
	if (view->prio.prio != NVT_PRIO_NONE)
		nvt_prio_own_of(view, &s->own);
	else
		s->own = view->tpcs;
	nvt_set_andnot(&s->borrowed, &s->current, &s->own);
	return 0;
}

/* What the view's arrays have room for. */
struct caps {
	size_t tasks, slots, unread;
};

/* Counts task pid as unreadable (rc, from nvt_seg_open with h), and says why in v->unread.
 * Returns 0, or -1 when out of memory. */
static int unread(struct nvt_view *v, struct caps *cap, pid_t pid, int rc,
		  const struct nvt_seg_handle *h)
{
	struct nvt_view_unread *u;
	int saved = errno;

	u = nvt_grow(v->unread, v->n_unread, &cap->unread, sizeof(*u), 8);
	if (!u)
		return -1;
	v->unread = u;
	v->unread[v->n_unread++] = (struct nvt_view_unread){pid, rc, saved, h->found_version};
	v->unreadable++;
	return 0;
}

/* Reads task pid into the view. Returns 0 (read, or left out: gone, hidden, unreadable), or -1
 * when out of memory. */
static int read_task(const char *base, struct nvt_view *v, struct caps *cap, struct names *names,
		     pid_t pid)
{
	struct nvt_seg_handle h;
	struct nvt_view_task *t, *tasks;
	int rc = nvt_seg_open(base, pid, 0, &h);

	if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK || rc == NVT_SEG_EPERM)
		return 0; /* gone meanwhile, or hidden by its user */
	if (rc)
		return unread(v, cap, pid, rc, &h);
	tasks = nvt_grow(v->tasks, v->n_tasks, &cap->tasks, sizeof(*tasks), 64);
	if (!tasks) {
		nvt_seg_close(&h);
		return -1;
	}
	v->tasks = tasks;
	t = &v->tasks[v->n_tasks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->uid = h.task_uid;
	t->seg_owner = h.owner;
	t->start_time = h.head.start_time;
	t->first_slot = v->n_slots;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_status st;
		struct nvt_slot_view view;
		if (nvt_seg_read_used(&h, g, &view, &st))
			continue;
		if (add_slot(v, &cap->slots, v->n_tasks, &view, &st)) {
			nvt_seg_close(&h);
			return -1;
		}
	}
	nvt_seg_close(&h);
	t->n_slots = (int)(v->n_slots - t->first_slot);
	t->user_named = user_name(names, t->uid, t->user, sizeof(t->user));
	/* (Its command and Slurm job, read from its memory, come later: nvt_view_read_commands.) */
	if (nvt_proc_container(pid, t->container, sizeof(t->container)))
		t->container[0] = '\0';
	v->n_tasks++;
	return 0;
}

/* The map from the cache (read only: never calibrated; root's records and the viewer's own,
 * nvt_cache_find's trust) for each GPU, over any task's slot's: the kernel module's, or where
 * its version cannot be read (make try's fake GPU, a container without /proc/driver/nvidia),
 * the last one measured for the GPU (--topology's). A GPU the cache has none for keeps its
 * slot's. One look a GPU a read (the directories found once a read): about 4 system calls
 * each (open, fstat, read, close of its record; 32 of the 201 of `nvtaskset --metrics` on 8
 * fake GPUs and no task, strace -f). Not kept between reads (top's frames, the exporter's
 * scrapes): a kept map is right only while no record that ranks above it has changed, and
 * one written in place or made trusted by chmod changes no directory, so telling that takes
 * about the calls that the look takes. */
static void cached_maps(struct nvt_view *v, const struct nvt_gpus *machine)
{
	char dirs[2][256];
	int n_dirs = -1;

	for (int i = 0; i < v->n_gpus && machine; i++) {
		struct nvt_view_gpu *g = &v->gpus[i];
		struct nvt_cache_key key;
		struct nvt_topology topo;
		memset(&key, 0, sizeof(key));
		memset(&topo, 0, sizeof(topo));
		snprintf(key.uuid, sizeof(key.uuid), "%s", g->uuid_text);
		snprintf(key.nvrm, sizeof(key.nvrm), "%s", machine->nvrm);
		if (!strcmp(machine->nvrm, "-"))
			key.driver_version = NVT_CACHE_ANY_DRIVER;
		if (n_dirs < 0)
			n_dirs = nvt_cache_dirs(dirs);
		if (nvt_cache_find(dirs, n_dirs, &key, &topo, NULL, NULL, 0) == 0 && topo.n_tpcs &&
		    topo.n_tpcs <= NVT_MAX_TPCS) {
			g->topo = topo;
			g->map_known = 1;
			g->map_from = NVT_MAP_CACHE;
		}
	}
}

/* The tasks running agent a says it cannot follow or change (none where they cannot be read). */
static void read_notes(const char *base, struct nvt_view_agent *a)
{
	struct nvt_agent_note *v = malloc(NVT_AGENT_MAX_NOTES * sizeof(*v)), *fit;
	int n = v ? nvt_agent_status_read(base, a->uid, v, NVT_AGENT_MAX_NOTES) : 0;

	if (n <= 0) {
		free(v);
		return;
	}
	fit = realloc(v, (size_t)n * sizeof(*v));
	if (fit)
		v = fit;
	a->notes = v;
	a->n_notes = n;
}

/* Root's agent, and those of the users of tasks with a priority: each one's notes, or its
 * log's last line where none runs. */
static void read_agents(const char *base, struct nvt_view *v, struct names *names)
{
	v->n_agents = 0;
	for (size_t k = 0; k <= v->n_tasks && v->n_agents < NVT_VIEW_AGENTS; k++) {
		uid_t uid = k ? v->tasks[k - 1].uid : 0;
		int managed = !k, wanted = 0;
		struct nvt_view_agent *a = NULL;
		for (int i = 0; k && i < v->tasks[k - 1].n_slots; i++) {
			const struct nvt_slot_prio *p =
				&v->slots[v->tasks[k - 1].first_slot + (size_t)i].prio;
			managed |= p->prio != NVT_PRIO_NONE;
			wanted |= nvt_prio_needs_agent(p->prio, p->yield);
		}
		for (int i = 0; i < v->n_agents; i++)
			if (v->agents[i].uid == uid)
				a = &v->agents[i];
		if (a) {
			a->wanted |= wanted;
			continue;
		}
		if (!managed)
			continue;
		a = &v->agents[v->n_agents++];
		a->uid = uid;
		a->wanted = wanted;
		user_name(names, uid, a->user, sizeof(a->user));
		if (!nvt_agent_running(base, uid, &a->pid))
			a->pid = 0;
		if (a->pid)
			read_notes(base, a);
		else if (!nvt_agent_log_last(base, uid, a->log_last, sizeof(a->log_last)))
			a->log_last[0] = 0;
	}
}

/* The MPS daemon a task of the reader's would join (its pipe directory), and whether it runs;
 * and each priority level's that runs, or whose pipe directory is there (a daemon was started
 * there): the daemons its tasks time-sliced at that level would join. */
static void read_mps(struct nvt_view *v)
{
	struct nvt_mps mps;
	struct stat st;
	char why[256];

	memset(&mps, 0, sizeof(mps));
	if (nvt_mps_setup(&mps, why, sizeof(why)) == 0) {
		snprintf(v->mps_pipe_dir, sizeof(v->mps_pipe_dir), "%s", mps.pipe_dir);
		v->mps_pid = nvt_mps_daemon(&mps);
	}
	for (unsigned prio = NVT_PRIO_LOW; prio <= NVT_PRIO_HIGH; prio++) {
		struct nvt_view_mps_level *l = &v->mps_levels[v->n_mps_levels];
		if (v->n_mps_levels == NVT_VIEW_MPS_LEVELS ||
		    nvt_mps_setup_level(&mps, nvt_prio_name(prio), "", "", why, sizeof(why)))
			continue;
		l->pid = nvt_mps_daemon(&mps);
		if (!l->pid && (stat(mps.pipe_dir, &st) || !S_ISDIR(st.st_mode)))
			continue;
		l->prio = (uint8_t)prio;
		snprintf(l->pipe_dir, sizeof(l->pipe_dir), "%s", mps.pipe_dir);
		v->n_mps_levels++;
	}
}

int nvt_view_read(const char *base, const struct nvt_gpus *machine, struct nvt_view *v, char *why,
		  size_t len)
{
	struct names names = {.n = 0};
	struct caps cap = {0, 0, 0};
	struct timespec boot;
	pid_t *pids = NULL;
	int n;

	memset(v, 0, sizeof(*v));
	v->taken_ns = nvt_clock_ns();
	/* The clock and unit of /proc's start times, for rates since a task's start. */
	if (clock_gettime(CLOCK_BOOTTIME, &boot) == 0)
		v->boot_ns = (uint64_t)boot.tv_sec * 1000000000u + (uint64_t)boot.tv_nsec;
	v->ticks_per_s = sysconf(_SC_CLK_TCK);
	for (int i = 0; machine && i < machine->n && i < NVT_MACHINE_GPUS; i++) {
		struct nvt_view_gpu *g = &v->gpus[v->n_gpus++];
		g->index = i;
		memcpy(g->uuid, machine->id[i].uuid_bytes, 16);
		snprintf(g->uuid_text, sizeof(g->uuid_text), "%s", machine->id[i].uuid);
		snprintf(g->model, sizeof(g->model), "%s", machine->id[i].model);
	}
	/* No tidying: a viewer changes nothing (-l removes leftovers; the viewers leave them). */
	n = nvt_seg_tasks(base, 0, &pids);
	if (n < 0)
		return nvt_why(why, len, "cannot read the run directories under %s: %s", base,
			       strerror(errno));
	for (int i = 0; i < n; i++)
		if (read_task(base, v, &cap, &names, pids[i])) {
			free(pids);
			return nvt_why(why, len, "out of memory");
		}
	free(pids);
	nvt_view_read_commands(v);
	cached_maps(v, machine);
	nvt_view_settle(v);
	read_agents(base, v, &names);
	read_mps(v);
	return 0;
}

void nvt_view_free(struct nvt_view *v)
{
	for (int i = 0; i < v->n_agents; i++) {
		free(v->agents[i].notes);
		v->agents[i].notes = NULL;
		v->agents[i].n_notes = 0;
	}
	v->n_agents = 0;
	free(v->tasks);
	free(v->slots);
	free(v->unread);
	free(v->tree);
	free(v->queued);
	v->tree = NULL;
	v->queued = NULL;
	v->n_queued = 0;
	v->tasks = NULL;
	v->slots = NULL;
	v->unread = NULL;
	v->n_unread = 0;
	v->n_tasks = v->n_slots = 0;
}

int nvt_view_read_trees(struct nvt_view *v)
{
	struct nvt_proc_link *links = NULL;
	pid_t *pids = malloc((v->n_tasks + 1) * sizeof(*pids)), *up = malloc((v->n_tasks + 1) * sizeof(*up));
	pid_t *tree = malloc((v->n_tasks + 1) * sizeof(*tree));
	int n = pids && up && tree ? nvt_proc_links(&links) : -1;

	if (n >= 0) {
		for (size_t k = 0; k < v->n_tasks; k++)
			pids[k] = v->tasks[k].pid; /* (ascending, as the view's tasks) */
		nvt_links_tops(links, (size_t)n, pids, v->n_tasks, up, tree);
		free(v->tree);
		v->tree = tree;
		tree = NULL;
	}
	free(links);
	free(pids);
	free(up);
	free(tree);
	return n >= 0 ? 0 : -1;
}

int nvt_view_read_queued(const char *base, struct nvt_view *v)
{
	struct names names = {.n = 0};
	struct nvt_queued *found;
	int n = nvt_queue_list(base, &found);
	uint64_t now_ms = (v->taken_ns ? v->taken_ns : nvt_clock_ns()) / 1000000u;

	free(v->queued);
	v->queued = NULL;
	v->n_queued = 0;
	if (n < 0)
		return -1;
	v->queued = calloc((size_t)n + 1, sizeof(*v->queued));
	if (!v->queued) {
		free(found);
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct nvt_view_queued *q = &v->queued[i];
		q->rec = found[i].rec;
		q->uid = found[i].uid;
		q->user_named = user_name(&names, q->uid, q->user, sizeof(q->user));
		q->waited_s = now_ms > q->rec.since_ms ? (now_ms - q->rec.since_ms) / 1000u : 0;
	}
	v->n_queued = (size_t)n;
	free(found);
	return 0;
}
