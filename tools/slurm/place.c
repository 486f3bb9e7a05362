/*
 * place.c - a Slurm job step's TPCs on its node, claimed and held.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "place.h"
#include "request.h"
#include "alloc/reserve.h"
#include "core/tpcset.h"
#include "core/topo.h"
#include "core/claim.h"
#include "os/proc.h"
#include "os/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Other claimers overlapping ours: nvt_reserve_claim gives up after this, and we try again. */
#define CLAIM_TIMEOUT_MS 2000
#define RETRY_MS 100
/* Holders of the job's partition that let go as we join them, before we claim. */
#define SHARE_TRIES 4
/* share(): the holder let go (alongside enum nvt_place_rc). */
#define PLACE_GONE 2


/*
 * Whether pid is a slurmstepd as this one is: its executable is ours. Any
 * process can give itself the title "slurmstepd: [JOB.STEP]".
 */
static int same_program(pid_t pid)
{
	return nvt_proc_shares(pid, "exe") == 1;
}

/* A partition that another step of the job holds, and who holds it. */
struct holder {
	pid_t pid;
	uint64_t start_time;          /* of the holder, from its segment's header */
	struct nvt_slot_view view;
	struct nvt_slurm_step step;
};

/*
 * The partition job already holds on this node: a confirmed one in the
 * segment of another of its steps' slurmstepd, which runs as root (its
 * segment is in root's run directory) and is the program we are. Returns 0
 * and fills out, or -1 if there is none.
 */
static int job_partition(const char *base, uint32_t job, struct holder *out)
{
	pid_t *pids;
	int n = nvt_seg_tasks(base, 0, &pids), found = -1;

	for (int i = 0; i < n && found < 0; i++) {
		struct nvt_seg_handle h;
		if (pids[i] == getpid() || nvt_seg_open(base, pids[i], 0, &h))
			continue;
		/* Root's segments only, before the process's title is read: the title is in its
		 * memory, read under its memory map's lock, which a user's process can keep held
		 * for good (a fault on a FUSE file she never answers), stalling every step launch
		 * on the node. */
		if (h.owner != 0 || h.task_uid != 0 || nvt_slurmproc_stepd(pids[i], &out->step) ||
		    out->step.job != job || !same_program(pids[i])) {
			nvt_seg_close(&h);
			continue; /* a title anybody can take */
		}
		for (int g = 0; g < NVT_MAX_GPUS && found < 0; g++)
			if (nvt_seg_read(&h, g, &out->view, NULL) == 0 &&
			    out->view.state == NVT_SLOT_SET && !(out->view.flags & NVT_SLOTF_CLAIM) &&
			    !nvt_uuid_is_zero(out->view.uuid))
				found = 0;
		out->pid = pids[i];
		out->start_time = h.head.start_time;
		nvt_seg_close(&h);
	}
	if (n >= 0)
		free(pids);
	return found;
}

/* Whether the holder still holds every TPC of part, on part's GPU. */
static int still_holds(const char *base, const struct holder *holder,
		       const struct nvt_slot_view *part)
{
	struct nvt_seg_handle h;
	struct nvt_slot_view view;
	struct nvt_tpcset outside;
	int g, holds = 0;

	if (nvt_seg_open(base, holder->pid, 0, &h))
		return 0;
	g = nvt_seg_find_slot(&h, part->uuid);
	if (h.head.start_time == holder->start_time && g >= 0 &&
	    nvt_seg_read(&h, g, &view, NULL) == 0 && view.state == NVT_SLOT_SET &&
	    !(view.flags & NVT_SLOTF_CLAIM)) {
		nvt_set_andnot(&outside, &part->tpcs, &view.tpcs);
		holds = !nvt_set_count(&outside);
	}
	nvt_seg_close(&h);
	return holds;
}

/* The most TPCs the step may hold: what Slurm granted. */
static unsigned max_tpcs(const struct nvt_place_req *req)
{
	return req->granted > NVT_MAX_TPCS ? NVT_MAX_TPCS : (unsigned)req->granted;
}

/* What the step asks, in words: "16 TPCs", "2 whole GPCs of at most 18 TPCs". */
static void asked(const struct nvt_place_req *req, unsigned count, char *buf, size_t len)
{
	if (req->gpcs)
		snprintf(buf, len, "%u whole GPC%s of at most %u TPCs", req->gpcs,
			 req->gpcs == 1 ? "" : "s", max_tpcs(req));
	else
		snprintf(buf, len, "%u TPC%s", count, count == 1 ? "" : "s");
}

/*
 * Runs the step inside the partition that another step of its job holds.
 * Returns NVT_PLACE_OK, NVT_PLACE_ERROR, or PLACE_GONE when the holder
 * gave it back meanwhile (then the step claims TPCs of its own).
 */
static int share(const struct nvt_place_req *req, unsigned count, const struct holder *holder,
		 struct nvt_place *out, char *why, size_t len)
{
	const struct nvt_slot_view *view = &holder->view;
	unsigned have = nvt_set_count(&view->tpcs);
	/* Whole GPCs of the job's TPCs, or count of them. */
	struct nvt_pick want = {.count = req->gpcs ? have : count, .gpcs = req->gpcs,
				.strategy = NVT_PACKED};
	char from[NVT_SLURM_STEP_TEXT_MAX];
	struct nvt_tpcset sub = view->tpcs;

	out->from = holder->step;
	nvt_slurmproc_step_format(&out->from, from, sizeof(from));
	if (req->gpcs) {
		if (nvt_pick_tpcs(&view->topo, &want, &view->tpcs, &sub)) {
			snprintf(why, len, "job %lu holds %u TPCs on this node (step %s), which are not "
				 "%u whole GPCs", (unsigned long)req->job, have, from, req->gpcs);
			return NVT_PLACE_ERROR;
		}
	} else if (count > have) {
		snprintf(why, len, "job %lu holds %u TPCs on this node (step %s); this step asks %u",
			 (unsigned long)req->job, have, from, count);
		return NVT_PLACE_ERROR;
	} else if (count < have && nvt_pick_tpcs(&view->topo, &want, &view->tpcs, &sub)) {
		snprintf(why, len, "cannot pick %u of job %lu's TPCs", count, (unsigned long)req->job);
		return NVT_PLACE_ERROR;
	}
	out->part = *view;
	out->part.tpcs = sub;
	out->part.flags = 0;
	/* Held by this step too: the job's TPCs stay set aside while it runs. */
	if (nvt_reserve_prepare(req->base, &out->part, 1, &out->own, why, len))
		return NVT_PLACE_ERROR;
	out->holding = 1;
	/*
	 * No claim protocol here: these TPCs are the job's already. That holds
	 * only while the holder keeps them, so look again now that ours are
	 * published. A claimer whose last scan came before our segment was
	 * there saw the holder's (a segment, once removed, never comes back),
	 * and one whose scan came after sees ours: neither took these TPCs. If
	 * the holder has let go, another task may have: give ours back.
	 */
	if (!still_holds(req->base, holder, &out->part)) {
		nvt_place_release(out);
		return PLACE_GONE;
	}
	out->shared = 1;
	return NVT_PLACE_OK;
}

/* One try on one GPU. Returns an enum nvt_reserve_rc. */
static int try_gpu(const struct nvt_place_req *req, unsigned count,
		   const struct nvt_gpu_topology *g, const uint8_t uuid[16], struct nvt_place *out,
		   char *why, size_t len)
{
	struct nvt_claim_gpu c;

	memset(&c, 0, sizeof(c));
	memcpy(c.uuid, uuid, 16);
	c.topo = g->topo;
	c.strategy = NVT_PACKED;
	if (req->gpcs) {
		/* Whole GPCs that hold no more TPCs than Slurm granted. */
		c.gpcs = req->gpcs;
		c.count = max_tpcs(req);
	} else {
		c.count = count;
	}
	return nvt_reserve_claim(req->base, &c, 1, CLAIM_TIMEOUT_MS, &out->part, &out->own, NULL, why, len);
}

/* Claims TPCs on one of the candidate GPUs, waiting up to req->wait_ms for them. */
static int claim(const struct nvt_place_req *req, unsigned count, const struct nvt_gpus *gpus,
		 const int *idx, int n, struct nvt_place *out, char *why, size_t len)
{
	static struct nvt_gpu_topology topos[NVT_MACHINE_GPUS];
	double deadline = nvt_clock_s() + req->wait_ms / 1000.0;
	char what[64], last[512] = "";
	/* What try_gpu claims: whole GPCs of at most what Slurm granted, or count TPCs. */
	struct nvt_pick want = {.count = req->gpcs ? max_tpcs(req) : count, .gpcs = req->gpcs,
				.strategy = NVT_PACKED};
	int fits = 0;

	asked(req, count, what, sizeof(what));
	for (int i = 0; i < n; i++) {
		struct nvt_tpcset all, unused;
		char err[512];
		if (nvt_gpu_topology(gpus, idx[i], 0, NVT_DRIVER_TIMEOUT_S * 1000, NULL, &topos[i], err,
				     sizeof(err))) {
			snprintf(why, len, "%s", err);
			return NVT_PLACE_ERROR;
		}
		nvt_topo_all(&topos[i].topo, &all);
		fits |= nvt_pick_tpcs(&topos[i].topo, &want, &all, &unused) == 0;
	}
	if (!fits && req->gpcs && !topos[0].topo.n_gpcs) {
		snprintf(why, len, "--gpu-gpcs needs GPU %d's GPC layout, which its calibration could "
			 "not measure (thread-block clusters need compute capability 9.0): ask with "
			 "--gpu-tpcs", idx[0]);
		return NVT_PLACE_ERROR;
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
			const uint8_t *uuid = gpus->id[idx[i]].uuid_bytes;
			int rc;
			if (nvt_uuid_is_zero(uuid))
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
		if (nvt_clock_s() >= deadline)
			break;
		usleep(RETRY_MS * 1000);
	}
	if (req->gpcs)
		snprintf(why, len, "no GPU of this node had %s free for job %lu within %.0f s (%s): "
			 "Slurm counts TPCs, not GPCs, and the free TPCs are not that many whole "
			 "GPCs; see nvtaskset -l", what, (unsigned long)req->job,
			 req->wait_ms / 1000.0, last);
	else
		snprintf(why, len, "no GPU of this node had %s free for job %lu within %.0f s, though "
			 "Slurm granted them (%s); are tasks outside Slurm holding TPCs? See "
			 "nvtaskset -l", what, (unsigned long)req->job, req->wait_ms / 1000.0, last);
	return NVT_PLACE_ERROR;
}

/*
 * The GPUs the step may use, in the order to try them: those Slurm lets it
 * use (req->gpus, else all), in the order of req->visible when that names
 * some. Fills idx and returns how many, or -1 with why.
 */
static int candidates(const struct nvt_place_req *req, const struct nvt_gpus *gpus, int *idx,
		      char *why, size_t len)
{
	int order[NVT_MACHINE_GPUS], n = -1, kept = 0;

	for (int b = gpus->n; b < 64; b++)
		if (req->gpus >> b & 1) {
			snprintf(why, len, "Slurm gave job %lu GPU index %d, which this node lacks (it "
				 "has %d GPUs; gres.conf must list them all, in PCI bus order)",
				 (unsigned long)req->job, b, gpus->n);
			return -1;
		}
	if (req->visible && *req->visible)
		n = nvt_visible_gpus(req->visible, gpus->id, gpus->n, req->pci_order, order);
	if (n < 0)
		for (n = 0; n < gpus->n; n++)
			order[n] = n;
	for (int i = 0; i < n; i++)
		if (!req->gpus || (req->gpus >> order[i] & 1))
			idx[kept++] = order[i];
	if (!kept) {
		if (req->gpus)
			snprintf(why, len, "CUDA_VISIBLE_DEVICES=%s names none of the GPUs Slurm gave "
				 "the step", req->visible ? req->visible : "");
		else
			snprintf(why, len, "the step can use no GPU (CUDA_VISIBLE_DEVICES=%s)",
				 req->visible ? req->visible : "");
		return -1;
	}
	return kept;
}

int nvt_place_step(const struct nvt_place_req *req, struct nvt_place *out, char *why, size_t len)
{
	static struct nvt_gpus gpus;
	struct holder holder;
	int idx[NVT_MACHINE_GPUS], n, rc = PLACE_GONE;
	unsigned count;
	double start = nvt_clock_s();

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
	if (nvt_gpus_list(NVT_DRIVER_TIMEOUT_S * 1000, &gpus, why, len))
		return NVT_PLACE_ERROR;
	out->n_gpus = gpus.n;
	n = candidates(req, &gpus, idx, why, len);
	if (n < 0)
		return NVT_PLACE_ERROR;
	/* A holder that lets go while we join it sends us on to the next, or to a claim. */
	for (int tries = 0; rc == PLACE_GONE && tries < SHARE_TRIES; tries++) {
		if (job_partition(req->base, req->job, &holder))
			break;
		rc = share(req, count, &holder, out, why, len);
	}
	if (rc == PLACE_GONE)
		rc = claim(req, count, &gpus, idx, n, out, why, len);
	if (rc != NVT_PLACE_OK)
		return rc;
	out->gpu = nvt_gpus_find(&gpus, out->part.uuid);
	nvt_uuid_format(out->part.uuid, out->uuid);
	out->seconds = nvt_clock_s() - start;
	return NVT_PLACE_OK;
}

int nvt_place_limit_memory(struct nvt_place *p, uint64_t limit, char *why, size_t len)
{
	if (!p->holding) {
		snprintf(why, len, "the step holds no partition to give a memory limit to");
		return -1;
	}
	if (p->part.mem_limit == limit)
		return 0;
	p->part.mem_limit = limit;
	/* The only writer of this process's own segment: nvt_reserve_* put the pick in slot 0. */
	nvt_slot_write(&p->own.seg->gpu[0], &p->part);
	return 0;
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
