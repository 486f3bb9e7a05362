/*
 * shim.c - the library every partitioned CUDA process loads (LD_PRELOAD, or
 * the drop-in libcuda.so.1 wrapper). It registers the driver's launch
 * callback before the program can launch anything and rewrites each kernel's
 * TPC disable mask from the process's control segment.
 *
 * Each GPU has its own slot in the segment, found by the GPU's UUID. The
 * launch path takes no lock, makes no system call and allocates nothing: it
 * finds the launching context in a small table, compares its slot's sequence
 * number with that of the masks it computed last and, when they match,
 * copies at most 36 bytes into the TMD. Only the first launch in a context
 * asks the driver which GPU it is for, and only the first launch after a
 * change translates the new partition.
 *
 * A mask is written only in the TMD layout that calibration verified on the
 * GPU (the topology's tmd_layout) and only into a TMD whose version byte is
 * that layout's; any other launch runs untouched, with one warning.
 *
 * The shim never ends or breaks its host: anything unexpected is reported
 * once on stderr and the program runs unpartitioned. But it fails closed
 * where it can: once a GPU's partition is known, a slot it cannot read (a
 * writer stopped inside it) or a fork in the middle of a change leaves
 * launches on the last partition known, never on all TPCs.
 *
 * It reads its environment with secure_getenv: in a setuid program the
 * environment belongs to the caller, so there the defaults apply.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "gpusel.h"
#include "nvtaskset.h"
#include "segfile.h"
#include "segment.h"
#include "tmd.h"
#include "topo.h"
#include "tpcset.h"

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

/* Masks ready for the launch path, and the slot sequence they belong to. */
struct hw_masks {
	uint64_t seg_seq;
	uint32_t state;  /* enum nvt_slot_state; SET: disable enables a working TPC */
	uint32_t layout; /* enum nvt_tmd_layout calibration verified; NONE: never write */
	uint32_t disable[NVT_TMD_MASK_WORDS];
	/* Clusters: the most SMs the partition has in one GPC (UINT32_MAX: GPCs
	 * unknown), and the partition grown to the whole GPCs it touches. */
	uint32_t cluster_room;
	uint32_t gpc_room;
	uint32_t gpc_disable[NVT_TMD_MASK_WORDS];
};
#define MASK_WORDS (sizeof(struct hw_masks) / 8)
union mask_words {
	struct hw_masks m;
	uint64_t w[MASK_WORDS];
};

/* Two buffers: the updater fills the one readers do not use, then flips. */
struct mask_buffer {
	uint64_t seq; /* odd while being written */
	struct hw_masks masks;
};

enum warn_kind {
	WARN_TMD_UNVERIFIED = 1 << 0,
	WARN_TMD_MISMATCH = 1 << 1,
	WARN_PARAMS = 1 << 2,
	WARN_REJECTED = 1 << 3,
	WARN_NO_DEVICE = 1 << 4,
	WARN_CONTEXTS = 1 << 5,
	WARN_CLUSTER = 1 << 6,
};

/* The partition behind published masks, which a forked child copies. */
#define VIEW_WORDS (sizeof(struct nvt_slot_view) / 8)
_Static_assert(sizeof(struct nvt_slot_view) % 8 == 0, "a slot view is whole words");
union view_words {
	struct nvt_slot_view v;
	uint64_t w[VIEW_WORDS];
};
struct view_buffer {
	uint64_t seq;
	union view_words view;
};

/* Stale segments the shim looks at when a task starts (nvt_seg_sweep). */
#define SWEEP_MAX 4096

/* The masks of one GPU slot: the updater fills the buffer readers do not use. */
struct slot_masks {
	struct mask_buffer buf[2];
	unsigned current; /* index of the buffer readers use */
	int updating;     /* try-lock of the single updater */
	/* What launches fall back on: never "unpartitioned" once a partition is known. */
	struct hw_masks initial;          /* the partition the task (or child) started with */
	struct nvt_slot_view initial_view;
	struct view_buffer known[2];      /* the partition of the published masks */
	unsigned known_current;
};

/*
 * Contexts seen so far and the slot of each one's GPU (-1: none, as of
 * segment generation gen). Entries are only appended: a reader scans
 * [0, n_ctx) and trusts an entry once its ctx is published.
 */
#define MAX_CONTEXTS 64
struct ctx_entry {
	const void *ctx; /* published last (release) */
	int slot;
	uint64_t gen;
};

/* The driver calls that tell a context's GPU (slow path only). */
typedef CUresult (*ctx_get_device_fn)(CUdevice *dev);

static struct {
	int quiet;
	int active; /* callback registered */
	int seg_shared; /* seg is a file other processes can see */
	pid_t seg_pid;  /* the process whose file seg is: never trust the file for it */
	char base[256]; /* the directory of run directories */
	struct nvt_seg_own own;
	struct nvt_segment *seg;
	struct slot_masks masks[NVT_MAX_GPUS];
	struct ctx_entry ctx[MAX_CONTEXTS];
	unsigned n_ctx;
	ctx_get_device_fn ctx_get_device;
	nvt_cuDeviceGetUuid_fn device_get_uuid;
	unsigned warned;   /* enum warn_kind bits */
	uint64_t warned_gpus; /* GPUs (by device ordinal < 64) already warned about */
} shim;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- Warnings ----------------------------------------------------------- */

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, saved = errno;

	if (shim.quiet)
		return;
	n = snprintf(line, sizeof(line), "nvtaskset: warning: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
	errno = saved;
}

/* Returns 1 the first time it is called for kind, else 0. */
static int first_time(enum warn_kind kind)
{
	return !(__atomic_fetch_or(&shim.warned, (unsigned)kind, __ATOMIC_RELAXED) & (unsigned)kind);
}

/* ---- Mask buffers ------------------------------------------------------- */

static int read_current(const struct slot_masks *sm, struct hw_masks *out)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned i = __atomic_load_n(&sm->current, __ATOMIC_ACQUIRE);
		const struct mask_buffer *b = &sm->buf[i & 1];
		union mask_words copy;
		uint64_t seen;

		if (nvt_seq_read(&b->seq, (const uint64_t *)&b->masks, copy.w, MASK_WORDS, &seen) == 0) {
			*out = copy.m;
			return 0;
		}
	}
	return -1;
}

/* Only the holder of sm->updating (or a single-threaded caller) may publish. */
static void publish(struct slot_masks *sm, const struct hw_masks *m)
{
	unsigned next = (__atomic_load_n(&sm->current, __ATOMIC_RELAXED) + 1) & 1;
	struct mask_buffer *b = &sm->buf[next];
	union mask_words src = {.m = *m};

	nvt_seq_write(&b->seq, (uint64_t *)&b->masks, src.w, MASK_WORDS);
	__atomic_store_n(&sm->current, next, __ATOMIC_RELEASE);
}

/* Records the partition behind the masks just published (same rule as publish). */
static void remember(struct slot_masks *sm, const struct nvt_slot_view *view)
{
	unsigned next = (__atomic_load_n(&sm->known_current, __ATOMIC_RELAXED) + 1) & 1;
	struct view_buffer *b = &sm->known[next];
	union view_words src = {.v = *view};

	nvt_seq_write(&b->seq, b->view.w, src.w, VIEW_WORDS);
	__atomic_store_n(&sm->known_current, next, __ATOMIC_RELEASE);
}

/* In a forked child: the last partition remembered. A fork in the middle of
 * remember() leaves that buffer odd; the other one holds the one before.
 * Returns 0, or -1 if none was ever remembered. */
static int recall(const struct slot_masks *sm, struct nvt_slot_view *out)
{
	unsigned current = __atomic_load_n(&sm->known_current, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < 2; i++) {
		const struct view_buffer *b = &sm->known[(current + i) & 1];
		union view_words copy;
		uint64_t seen;
		if (nvt_seq_read(&b->seq, b->view.w, copy.w, VIEW_WORDS, &seen) == 0 && seen) {
			*out = copy.v;
			return 0;
		}
	}
	return -1;
}

/*
 * Derives the masks for a slot snapshot. A partition that enables no working
 * TPC, or comes with a malformed topology, keeps the previous masks: such a
 * launch would never complete (docs/hardware-facts.md, section 5).
 */
static int compute(const struct hw_masks *prev, const struct nvt_slot_view *view,
		   struct hw_masks *out)
{
	uint32_t disable[NVT_TMD_MASK_WORDS];
	struct nvt_tpcset gpcs;

	*out = *prev;
	out->seg_seq = view->seq;
	if (view->state == NVT_SLOT_UNSET) {
		out->state = NVT_SLOT_UNSET;
		return 0;
	}
	if (view->state != NVT_SLOT_SET || nvt_topo_validate(&view->topo))
		return -1;
	if (!nvt_topo_disable(&view->topo, &view->tpcs, disable))
		return -1;
	out->state = NVT_SLOT_SET;
	out->layout = view->topo.tmd_layout;
	memcpy(out->disable, disable, sizeof(disable));
	/* A cluster must fit in one GPC: launches whose clusters the partition
	 * cannot hold would wait for SMs forever (seen on an H100: cuBLAS's
	 * clusters of 4 on 1 or 2 lone TPCs). Prepare where they may run. */
	out->cluster_room = nvt_topo_cluster_room(&view->topo, &view->tpcs, &gpcs);
	if (!out->cluster_room)
		out->cluster_room = UINT32_MAX;
	out->gpc_room = nvt_topo_cluster_room(&view->topo, &gpcs, NULL);
	if (!nvt_topo_disable(&view->topo, &gpcs, out->gpc_disable))
		out->gpc_room = 0;
	return 0;
}

/* Slow path: slot g changed since its masks were computed. */
static void refresh(int g, struct hw_masks *m)
{
	struct nvt_gpu_slot *slot = &shim.seg->gpu[g];
	struct slot_masks *sm = &shim.masks[g];
	struct nvt_slot_view view;
	struct hw_masks next;
	int mine = !__atomic_exchange_n(&sm->updating, 1, __ATOMIC_ACQUIRE), ok;

	/* m holds the current masks (possibly stale): they are the fallback. */
	if (nvt_slot_read(slot, &view, 4)) {
		/* A writer is inside, or died there: keep launching on what we had. */
		if (mine)
			__atomic_store_n(&sm->updating, 0, __ATOMIC_RELEASE);
		return;
	}
	ok = compute(m, &view, &next) == 0;
	if (!ok) {
		nvt_slot_set_rejected(slot, view.seq);
		if (first_time(WARN_REJECTED))
			warn("pid %ld: refused a partition that enables no working TPC (or is "
			     "malformed); launches keep the previous partition",
			     (long)getpid());
	}
	if (mine) {
		publish(sm, &next);
		if (ok) {
			remember(sm, &view);
			/* Every launch from now on uses it: only now is it applied. */
			nvt_slot_set_applied(slot, view.seq);
		}
		__atomic_store_n(&sm->updating, 0, __ATOMIC_RELEASE);
	}
	*m = next;
}

/* Returns the masks for slot g's current partition. */
static void current_masks(int g, struct hw_masks *m)
{
	uint64_t seq = nvt_slot_seq(&shim.seg->gpu[g]);

	if (read_current(&shim.masks[g], m)) {
		/* Two updates raced this read: start from the partition the task
		 * started with (never from "untouched") and refresh. */
		*m = shim.masks[g].initial;
	}
	if (m->seg_seq == seq || (seq & 1))
		return; /* up to date, or a writer is inside: use what we have */
	refresh(g, m);
}

/* ---- Which GPU a launch is for ------------------------------------------ */

/*
 * Slow path, once per context (and again for a context without a slot after
 * a writer gave a GPU a new slot): asks the driver for the context's device
 * and UUID, and finds the slot that holds it. The callback runs on the
 * launching thread with its context current, where cuCtxGetDevice answers
 * for that context (measured on two H200s, driver 580: docs/hardware-facts.md).
 */
static int lookup_slot(const void *ctx, uint64_t gen)
{
	CUdevice dev = -1;
	CUuuid uuid;
	int g = -1;
	unsigned i;

	if (!shim.ctx_get_device || !shim.device_get_uuid || shim.ctx_get_device(&dev) ||
	    shim.device_get_uuid(&uuid, dev)) {
		if (first_time(WARN_NO_DEVICE))
			warn("cannot ask the CUDA driver which GPU a launch is for; launches whose "
			     "GPU is unknown run unpartitioned");
		return -1;
	}
	g = nvt_seg_find_gpu(shim.seg, (const uint8_t *)uuid.bytes);
	/* Slots fill from the first: with none in use the task is simply not
	 * partitioned (the wrapper without nvtaskset), and nothing is amiss. */
	if (g < 0 && nvt_seg_free_slot(shim.seg) != 0 && dev >= 0 && dev < 64 &&
	    !(__atomic_fetch_or(&shim.warned_gpus, 1ull << dev, __ATOMIC_RELAXED) & (1ull << dev))) {
		char text[NVT_UUID_TEXT_MAX];
		nvt_uuid_format((const uint8_t *)uuid.bytes, text);
		warn("pid %ld: no partition for GPU %s (CUDA device %d): its launches run "
		     "unpartitioned",
		     (long)getpid(), text, dev);
	}
	i = __atomic_fetch_add(&shim.n_ctx, 0, __ATOMIC_RELAXED);
	if (!ctx) {
		/* Not seen with the real driver: answer, but remember nothing. */
	} else if (i < MAX_CONTEXTS) {
		/* Claim an entry; another thread may add the same context: harmless. */
		i = __atomic_fetch_add(&shim.n_ctx, 1, __ATOMIC_ACQ_REL);
		if (i < MAX_CONTEXTS) {
			shim.ctx[i].slot = g;
			shim.ctx[i].gen = gen;
			__atomic_store_n(&shim.ctx[i].ctx, ctx, __ATOMIC_RELEASE);
		}
	} else if (first_time(WARN_CONTEXTS)) {
		warn("more than %d CUDA contexts: later ones find their GPU slowly", MAX_CONTEXTS);
	}
	return g;
}

/* Returns the slot of the GPU that ctx launches on, or -1 if it has none. */
static int slot_of(const void *ctx)
{
	unsigned n = __atomic_load_n(&shim.n_ctx, __ATOMIC_ACQUIRE);
	uint64_t gen = nvt_seg_gen(shim.seg);

	/* An entry being added reads NULL until published: never match it. */
	if (!ctx)
		return lookup_slot(NULL, gen);

	if (n > MAX_CONTEXTS)
		n = MAX_CONTEXTS;
	/* Newest first: a context looked up again supersedes its older entry. */
	for (unsigned i = n; i-- > 0;) {
		const struct ctx_entry *e = &shim.ctx[i];
		if (__atomic_load_n(&e->ctx, __ATOMIC_ACQUIRE) != ctx)
			continue;
		if (e->slot >= 0 || e->gen == gen)
			return e->slot;
		break; /* no slot then, but a GPU was given one since: look again */
	}
	return lookup_slot(ctx, gen);
}

/* ---- The launch callback ------------------------------------------------ */

/*
 * A launch whose clusters (cluster CTAs, one GPC each) the partition cannot
 * hold would never run: rather than hang, run it on the whole GPCs the
 * partition touches, or, if even those are too small, on every TPC.
 */
static void place_cluster_launch(const struct hw_masks *m, void *tmd, unsigned cluster)
{
	int whole_gpcs = cluster <= m->gpc_room;

	if (whole_gpcs)
		nvt_tmd_write(m->layout, tmd, m->gpc_disable);
	if (first_time(WARN_CLUSTER))
		warn("pid %ld: a kernel launched thread-block clusters of %u blocks, which must share "
		     "one GPC, but this task's partition has at most %u SMs in any GPC; such "
		     "kernels run on %s instead of waiting forever. Give the task whole GPCs (-g) "
		     "to keep them inside its partition",
		     (long)getpid(), cluster, m->cluster_room,
		     whole_gpcs ? "the whole GPCs its partition touches" : "every TPC of the GPU");
}

static void on_launch(void *user, int domain, int cbid, const void *params)
{
	const uint32_t *size = params;
	void *tmd;
	struct hw_masks m;
	unsigned cluster;
	int g;

	(void)user;
	if (domain != NVT_CB_DOMAIN_LAUNCH || cbid != NVT_CB_ID_LAUNCH)
		return;
	if (!params || *size < NVT_CB_PARAMS_MIN_SIZE ||
	    !(tmd = ((void *const *)params)[NVT_CB_PARAMS_TMD_WORD])) {
		if (first_time(WARN_PARAMS))
			warn("unexpected launch callback parameters (size %u); launches run "
			     "unpartitioned",
			     params ? *size : 0);
		return;
	}
	g = slot_of(((void *const *)params)[NVT_CB_PARAMS_CTX_WORD]);
	if (g < 0)
		return;
	current_masks(g, &m);
	if (m.state != NVT_SLOT_SET)
		return;
	if (m.layout == NVT_TMD_NONE) {
		if (first_time(WARN_TMD_UNVERIFIED))
			warn("no TMD layout was verified by calibration on this GPU, so launches run "
			     "unpartitioned (nvtaskset --calibrate tells why)");
		return;
	}
	if (nvt_tmd_is(m.layout, tmd) && (cluster = nvt_tmd_cluster_size(m.layout, tmd)) > m.cluster_room) {
		place_cluster_launch(&m, tmd, cluster);
		return;
	}
	if (nvt_tmd_write(m.layout, tmd, m.disable) && first_time(WARN_TMD_MISMATCH))
		warn("a launch's TMD has version 0x%02x at byte %u, not the %s layout that "
		     "calibration verified on this GPU; such launches run unpartitioned",
		     ((const uint8_t *)tmd)[nvt_tmd_version_offset(m.layout)],
		     nvt_tmd_version_offset(m.layout), nvt_tmd_layout_name(m.layout));
}

/* ---- Set-up ------------------------------------------------------------- */

static int env_flag(const char *name)
{
	const char *v = secure_getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

/* A segment only this process sees, when none can be shared. */
static struct nvt_segment *private_segment(void)
{
	void *p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t start = 0;

	if (p == MAP_FAILED)
		return NULL;
	nvt_proc_start_time(getpid(), &start);
	nvt_seg_init(p, (int32_t)getpid(), (uint32_t)geteuid(), start);
	return p;
}

/*
 * The initial partitions the CLI put in the environment, one per GPU, into
 * parts (NVT_MAX_GPUS). Returns how many (0: none, or a malformed record).
 */
static int environment_partitions(struct nvt_slot_view *parts)
{
	const char *text = secure_getenv(NVT_ENV_PARTITION);
	int n;

	if (!text || !*text)
		return 0;
	n = nvt_partenv_parse(text, parts, NVT_MAX_GPUS);
	if (n < 0) {
		warn("ignoring malformed %s=\"%.64s...\"; running unpartitioned", NVT_ENV_PARTITION,
		     text);
		return 0;
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
	if (compute(&none, view, &m) &&
	    (recall(sm, &last) || compute(&none, &last, &m)) &&
	    (!fallback || compute(&none, fallback, &m)))
		m = none;
	m.seg_seq = UINT64_MAX;
	sm->initial = m;
	sm->initial_view = *view;
	memset(sm->buf, 0, sizeof(sm->buf));
	memset(sm->known, 0, sizeof(sm->known));
	sm->current = sm->known_current = 0;
	sm->updating = 0;
	publish(sm, &m);
	remember(sm, view);
}

/* Finds the driver's callback table and subscribes on_launch. */
static void register_callback(void)
{
	static const CUuuid table_id = NVT_CB_TABLE_UUID;
	const void *const *table = NULL;
	nvt_cuGetExportTable_fn get_table;
	nvt_cb_subscribe_fn subscribe;
	nvt_cb_enable_fn enable;
	uint32_t handle = 0;
	void *lib;
	int rc;

	/* The wrapper depends on the real driver, and a program linked against
	 * libcuda has it loaded already: both are found after us. Otherwise load
	 * it now, as the program would later. */
	lib = RTLD_NEXT;
	get_table = (nvt_cuGetExportTable_fn)dlsym(lib, "cuGetExportTable");
	if (!get_table) {
		lib = dlopen("libcuda.so.1", RTLD_LAZY);
		if (!lib) {
			warn("cannot load the CUDA driver (%s); running unpartitioned", dlerror());
			return;
		}
		get_table = (nvt_cuGetExportTable_fn)dlsym(lib, "cuGetExportTable");
	}
	shim.ctx_get_device = (ctx_get_device_fn)dlsym(lib, "cuCtxGetDevice");
	shim.device_get_uuid = (nvt_cuDeviceGetUuid_fn)dlsym(lib, "cuDeviceGetUuid");
	if (!get_table) {
		warn("the CUDA driver has no cuGetExportTable; running unpartitioned");
		return;
	}
	rc = get_table((const void **)&table, &table_id);
	if (rc || !table || !table[NVT_CB_TABLE_SUBSCRIBE] || !table[NVT_CB_TABLE_ENABLE]) {
		warn("the CUDA driver offers no launch callback table (error %d); running "
		     "unpartitioned",
		     rc);
		return;
	}
	subscribe = (nvt_cb_subscribe_fn)table[NVT_CB_TABLE_SUBSCRIBE];
	enable = (nvt_cb_enable_fn)table[NVT_CB_TABLE_ENABLE];
	rc = subscribe(&handle, on_launch, NULL);
	if (rc) {
		warn("the CUDA driver refused the launch callback (error %d); running unpartitioned",
		     rc);
		return;
	}
	rc = enable(1, handle, NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH);
	if (rc) {
		warn("the CUDA driver refused to enable the launch callback (error %d); running "
		     "unpartitioned",
		     rc);
		return;
	}
	shim.active = 1;
}

/*
 * In a forked child: a segment of its own, holding the parent's partitions.
 * Made under the new file's lock, so no CLI writes beside it.
 */
static void after_fork_in_child(void)
{
	static struct nvt_slot_view views[NVT_MAX_GPUS];
	struct nvt_segment *parent = shim.seg, *child = NULL;
	int used[NVT_MAX_GPUS], lock_fd = -1;
	char why[256];

	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		nvt_slot_uuid(&parent->gpu[g], uuid);
		used[g] = !nvt_uuid_is_zero(uuid);
		if (!used[g] || nvt_slot_read(&parent->gpu[g], &views[g], 100) == 0)
			continue;
		/* Forked while a writer was inside the parent's slot (or stopped
		 * there): carry on with the partition launches used, never none. */
		if (recall(&shim.masks[g], &views[g]))
			views[g] = shim.masks[g].initial_view;
		memcpy(views[g].uuid, uuid, sizeof(uuid));
	}
	if (shim.seg_shared) {
		if (nvt_seg_create(shim.base, &shim.own, &lock_fd, why, sizeof(why)) >= 0) {
			child = shim.own.seg;
			shim.seg_pid = getpid();
		} else {
			child = private_segment();
			if (child)
				shim.seg_shared = 0;
		}
	}
	if (child) {
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			if (used[g])
				nvt_slot_write(&child->gpu[g], &views[g]);
		nvt_seg_unlock(lock_fd);
		shim.seg = child;
		munmap(parent, sizeof(*parent));
	} /* else: keep reading the parent's (a private copy already): better than none */
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		if (used[g])
			start_masks(g, &views[g], NULL);
		else
			memset(&shim.masks[g], 0, sizeof(shim.masks[g]));
	}
}

static void init(void)
{
	const void *first = dlsym(RTLD_DEFAULT, "nvtaskset_shim_instance");
	static struct nvt_slot_view env[NVT_MAX_GPUS], start;
	int n_env, rc, lock_fd = -1;
	char why[256];

	shim.quiet = env_flag(NVT_ENV_QUIET);
	if (first && first != (const void *)instance_marker)
		return; /* another copy of the shim is in charge */
	/* The nvtaskset command itself (nested in a partitioned shell): no
	 * segment, no callback, no fork handler. It removes the segment this PID
	 * had before its exec, and the COMMAND it execs starts afresh. */
	if (dlsym(RTLD_DEFAULT, NVT_CLI_MARKER))
		return;
	n_env = environment_partitions(env);
	snprintf(shim.base, sizeof(shim.base), "%s", nvt_rundir());
	rc = nvt_seg_create(shim.base, &shim.own, &lock_fd, why, sizeof(why));
	if (rc >= 0) {
		shim.seg = shim.own.seg;
		shim.seg_shared = 1;
		shim.seg_pid = getpid();
	} else {
		warn("cannot create a control segment in %s (%s); this task's partition cannot "
		     "be read or changed while it runs",
		     shim.own.dir, why);
		shim.seg = private_segment();
		if (!shim.seg)
			return;
	}
	if (rc == NVT_SEG_ADOPTED) {
		/* A new program in this process: nothing has launched on it yet. */
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			nvt_slot_set_applied(&shim.seg->gpu[g], 0);
	} else if (!(rc == NVT_SEG_CREATED && nvt_seg_inherit(shim.base, &shim.own))) {
		for (int g = 0; g < n_env; g++)
			nvt_slot_write(&shim.seg->gpu[g], &env[g]);
	}
	nvt_seg_unlock(lock_fd);
	/* Children that ended with _exit left their files: a start tidies up. */
	if (rc == NVT_SEG_CREATED)
		nvt_seg_sweep(&shim.own, SWEEP_MAX);
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
	if (pthread_atfork(NULL, NULL, after_fork_in_child))
		warn("cannot watch fork(): children share their parent's control segment");
	register_callback();
}

__attribute__((constructor)) static void shim_load(void)
{
	pthread_once(&init_once, init);
}

__attribute__((destructor)) static void shim_unload(void)
{
	/* Remove the file but keep the mapping: other threads may still launch. */
	if (shim.seg_shared && shim.seg_pid == getpid())
		nvt_seg_remove(&shim.own);
}
