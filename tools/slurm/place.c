/*
 * place.c - a Slurm job step's TPCs on its node, claimed and held.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "place.h"
#include "request.h"
#include "reserve.h"
#include "tpcset.h"
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DRIVER_TIMEOUT_MS 60000
/* Other claimers overlapping ours: nvt_claim gives up after this, and we try again. */
#define CLAIM_TIMEOUT_MS 2000
#define RETRY_MS 100

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The TPCs of GPU uuid that live tasks hold, every user's, other than ours. */
static void held_tpcs(const char *base, const uint8_t uuid[16], struct nvt_tpcset *held)
{
	pid_t *pids;
	int n = nvt_seg_tasks(base, 0, &pids);

	nvt_set_clear(held);
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view view;
		int g;
		if (pids[i] == getpid() || nvt_seg_open(base, pids[i], 0, &h))
			continue;
		g = nvt_seg_find_slot(&h, uuid);
		if (g >= 0 && nvt_seg_read(&h, g, &view, NULL) == 0 && view.state == NVT_SLOT_SET)
			nvt_set_or(held, held, &view.tpcs);
		nvt_seg_close(&h);
	}
	if (n >= 0)
		free(pids);
}

/*
 * Whether pid is a slurmstepd as this one is: its executable is ours. Any
 * process can give itself the title "slurmstepd: [JOB.STEP]".
 */
static int same_program(pid_t pid)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
	return stat("/proc/self/exe", &mine) == 0 && stat(path, &theirs) == 0 &&
	       mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/*
 * The partition job already holds on this node: a confirmed one in the
 * segment of another of its steps' slurmstepd, which runs as root (its
 * segment is in root's run directory) and is the program we are. Returns 0
 * and fills view and from, or -1 if there is none.
 */
static int job_partition(const char *base, uint32_t job, struct nvt_slot_view *view,
			 struct nvt_slurm_step *from)
{
	pid_t *pids;
	int n = nvt_seg_tasks(base, 0, &pids), found = -1;

	for (int i = 0; i < n && found < 0; i++) {
		struct nvt_seg_handle h;
		if (pids[i] == getpid() || nvt_slurm_stepd(pids[i], from) || from->job != job ||
		    nvt_seg_open(base, pids[i], 0, &h))
			continue;
		if (h.owner != 0 || h.task_uid != 0 || !same_program(pids[i])) {
			nvt_seg_close(&h);
			continue; /* a title anybody can take */
		}
		for (int g = 0; g < NVT_MAX_GPUS && found < 0; g++)
			if (nvt_seg_read(&h, g, view, NULL) == 0 && view->state == NVT_SLOT_SET &&
			    !(view->flags & NVT_SLOTF_CLAIM) && !nvt_uuid_is_zero(view->uuid))
				found = 0;
		nvt_seg_close(&h);
	}
	if (n >= 0)
		free(pids);
	return found;
}

static int gpu_of(const struct nvt_gpus *gpus, const uint8_t uuid[16])
{
	uint8_t each[16];

	for (int g = 0; g < gpus->n; g++)
		if (nvt_uuid_parse(gpus->id[g].uuid, each) == 0 && !memcmp(each, uuid, 16))
			return g;
	return -1;
}

/* What the step asks, in words: "16 TPCs", "2 whole GPCs". */
static void asked(const struct nvt_place_req *req, unsigned count, char *buf, size_t len)
{
	if (req->gpcs)
		snprintf(buf, len, "%u whole GPC%s", req->gpcs, req->gpcs == 1 ? "" : "s");
	else
		snprintf(buf, len, "%u TPC%s", count, count == 1 ? "" : "s");
}

/* Runs the step inside the partition view that another step of its job holds. */
static int share(const struct nvt_place_req *req, unsigned count, const struct nvt_slot_view *view,
		 struct nvt_place *out, char *why, size_t len)
{
	unsigned have = nvt_set_count(&view->tpcs);
	char from[NVT_SLURM_STEP_TEXT_MAX];
	struct nvt_tpcset sub = view->tpcs;

	nvt_slurm_step_format(&out->from, from, sizeof(from));
	if (req->gpcs) {
		if (nvt_slurm_pick_gpcs(&view->topo, &view->tpcs, req->gpcs, have, &sub) < 0) {
			snprintf(why, len, "job %lu holds %u TPCs on this node (step %s), which are not "
				 "%u whole GPCs", (unsigned long)req->job, have, from, req->gpcs);
			return NVT_PLACE_ERROR;
		}
	} else if (count > have) {
		snprintf(why, len, "job %lu holds %u TPCs on this node (step %s); this step asks %u",
			 (unsigned long)req->job, have, from, count);
		return NVT_PLACE_ERROR;
	} else if (count < have && nvt_topo_pick(&view->topo, &view->tpcs, count, NVT_PACKED, &sub)) {
		snprintf(why, len, "cannot pick %u of job %lu's TPCs", count, (unsigned long)req->job);
		return NVT_PLACE_ERROR;
	}
	out->part = *view;
	out->part.tpcs = sub;
	out->part.flags = 0;
	/* Held by this step too: the job's TPCs stay set aside while it runs. */
	if (nvt_seg_prepare(req->base, &out->part, 1, &out->own, why, len))
		return NVT_PLACE_ERROR;
	out->holding = 1;
	out->shared = 1;
	return NVT_PLACE_OK;
}

/* One try on one GPU. Returns an enum nvt_reserve_rc, or NVT_RESERVE_FULL when
 * the GPU has no whole free GPCs to give. */
static int try_gpu(const struct nvt_place_req *req, unsigned count,
		   const struct nvt_gpu_topology *g, const uint8_t uuid[16], struct nvt_place *out,
		   char *why, size_t len)
{
	struct nvt_claim_gpu c;

	memset(&c, 0, sizeof(c));
	memcpy(c.uuid, uuid, 16);
	c.topo = g->topo;
	c.count = count;
	c.strategy = NVT_PACKED;
	if (req->gpcs) {
		struct nvt_tpcset free_tpcs, held, pick;
		int n;
		nvt_topo_all(&g->topo, &free_tpcs);
		held_tpcs(req->base, uuid, &held);
		nvt_set_andnot(&free_tpcs, &free_tpcs, &held);
		n = nvt_slurm_pick_gpcs(&g->topo, &free_tpcs, req->gpcs, (unsigned)req->granted, &pick);
		if (n < 0) {
			snprintf(why, len, "GPU %d has no %u whole free GPCs of at most %ld TPCs", g->index,
				 req->gpcs, req->granted);
			return NVT_RESERVE_FULL;
		}
		/* Packed takes whole GPCs that add up to the count: these, or as good. */
		c.count = (unsigned)n;
	}
	return nvt_claim(req->base, &c, 1, CLAIM_TIMEOUT_MS, &out->part, &out->own, why, len);
}

/* Claims TPCs on one of the candidate GPUs, waiting up to req->wait_ms for them. */
static int claim(const struct nvt_place_req *req, unsigned count, const struct nvt_gpus *gpus,
		 const int *idx, int n, struct nvt_place *out, char *why, size_t len)
{
	static struct nvt_gpu_topology topos[NVT_GPUS_MAX];
	double deadline = now_s() + req->wait_ms / 1000.0;
	char what[64], last[512] = "";
	int fits = 0;

	asked(req, count, what, sizeof(what));
	for (int i = 0; i < n; i++) {
		char err[512];
		if (nvt_gpu_topology(gpus, idx[i], 0, DRIVER_TIMEOUT_MS, NULL, &topos[i], err,
				     sizeof(err))) {
			snprintf(why, len, "%s", err);
			return NVT_PLACE_ERROR;
		}
		fits |= req->gpcs ? req->gpcs <= topos[i].topo.n_gpcs : count <= topos[i].topo.n_tpcs;
	}
	if (!fits) {
		/* Slurm counts TPCs per node; a step's partition lies on one GPU. */
		snprintf(why, len, "job %lu asks %s, more than any GPU of this node has (GPU %d: %u TPCs, "
			 "%u GPCs)", (unsigned long)req->job, what, idx[0], topos[0].topo.n_tpcs,
			 topos[0].topo.n_gpcs);
		return NVT_PLACE_ERROR;
	}
	for (;;) {
		for (int i = 0; i < n; i++) {
			uint8_t uuid[16];
			int rc;
			if (nvt_uuid_parse(gpus->id[idx[i]].uuid, uuid))
				continue;
			rc = try_gpu(req, count, &topos[i], uuid, out, last, sizeof(last));
			if (rc == NVT_RESERVE_OK) {
				out->holding = 1;
				return NVT_PLACE_OK;
			}
			if (rc == NVT_RESERVE_ERROR) {
				snprintf(why, len, "%s", last);
				return NVT_PLACE_ERROR;
			}
		}
		/* Slurm granted them: the holder is a step that is ending. */
		if (now_s() >= deadline)
			break;
		usleep(RETRY_MS * 1000);
	}
	snprintf(why, len, "no GPU of this node had %s free for job %lu within %.0f s, though Slurm "
		 "granted them (%s); are tasks outside Slurm holding TPCs? See nvtaskset -l",
		 what, (unsigned long)req->job, req->wait_ms / 1000.0, last);
	return NVT_PLACE_ERROR;
}

int nvt_place_step(const struct nvt_place_req *req, struct nvt_place *out, char *why, size_t len)
{
	static struct nvt_gpus gpus;
	struct nvt_slot_view view;
	int idx[NVT_GPUS_MAX], n = -1, rc;
	unsigned count;
	double start = now_s();

	memset(out, 0, sizeof(*out));
	out->gpu = -1;
	if (!req->tpcs && !req->gpcs && req->granted <= 0)
		return NVT_PLACE_NONE;
	if (req->granted <= 0) {
		snprintf(why, len, "job %lu holds no tpc GRES on this node, so Slurm set no TPCs aside "
			 "for it: ask with --gres=tpc:N, or let CliFilterPlugins=cli_filter/lua with "
			 "nvtaskset's cli_filter.lua turn --gpu-tpcs into that (see nvtaskset(1), SLURM)",
			 (unsigned long)req->job);
		return NVT_PLACE_ERROR;
	}
	if (req->tpcs > req->granted) {
		snprintf(why, len, "--gpu-tpcs=%u asks more than the %ld TPCs Slurm granted job %lu on "
			 "this node", req->tpcs, req->granted, (unsigned long)req->job);
		return NVT_PLACE_ERROR;
	}
	count = req->tpcs ? req->tpcs : req->gpcs ? 0 : (unsigned)req->granted;
	if (nvt_gpus_list(DRIVER_TIMEOUT_MS, &gpus, why, len))
		return NVT_PLACE_ERROR;
	out->n_gpus = gpus.n;
	if (req->visible && *req->visible)
		n = nvt_visible_gpus(req->visible, gpus.id, gpus.n, req->pci_order, idx);
	if (n < 0)
		for (n = 0; n < gpus.n; n++)
			idx[n] = n;
	if (n == 0) {
		snprintf(why, len, "the step can use no GPU (CUDA_VISIBLE_DEVICES=%s)", req->visible);
		return NVT_PLACE_ERROR;
	}
	if (job_partition(req->base, req->job, &view, &out->from) == 0)
		rc = share(req, count, &view, out, why, len);
	else
		rc = claim(req, count, &gpus, idx, n, out, why, len);
	if (rc != NVT_PLACE_OK)
		return rc;
	out->gpu = gpu_of(&gpus, out->part.uuid);
	nvt_uuid_format(out->part.uuid, out->uuid);
	out->seconds = now_s() - start;
	return NVT_PLACE_OK;
}

void nvt_place_release(struct nvt_place *p)
{
	if (!p->holding)
		return;
	nvt_seg_remove(&p->own);
	if (p->own.seg)
		munmap(p->own.seg, sizeof(*p->own.seg));
	p->own.seg = NULL;
	p->holding = 0;
}
