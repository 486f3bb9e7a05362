/*
 * shim.c - the library every partitioned CUDA process loads (LD_PRELOAD, or
 * the drop-in libcuda.so.1 wrapper). It registers the driver's launch
 * callback before the program can launch anything and rewrites each kernel's
 * TPC disable mask from the process's control segment.
 *
 * The launch path takes no lock, makes no system call and allocates nothing:
 * it compares the segment's sequence number with that of the masks it
 * computed last and, when they match, copies 24 bytes into the TMD. Only the
 * first launch after a change translates the new partition.
 *
 * The shim never ends or breaks its host: anything unexpected is reported
 * once on stderr and the program runs unpartitioned. But it fails closed
 * where it can: once a partition is known, a slot it cannot read (a writer
 * stopped inside it) or a fork in the middle of a change leaves launches on
 * the last partition known, never on all TPCs.
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
	uint32_t state; /* enum nvt_slot_state */
	uint32_t v4_ok; /* v4 holds a mask that enables a working TPC */
	uint32_t v1_ok;
	uint32_t reserved;
	uint32_t v4[4];
	uint64_t v1;
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

/* The same for the partition behind the masks, which a forked child copies. */
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

enum warn_kind {
	WARN_TMD_OLD = 1 << 0,
	WARN_TMD_UNKNOWN = 1 << 1,
	WARN_PARAMS = 1 << 2,
	WARN_REJECTED = 1 << 3,
};

static struct {
	int quiet;
	int active; /* callback registered */
	int seg_shared; /* seg is a file other processes can see */
	pid_t seg_pid;  /* the process whose file seg is: never trust the file for it */
	char base[256]; /* the directory of run directories */
	struct nvt_seg_own own;
	struct nvt_segment *seg;
	struct nvt_gpu_slot *slot; /* slot 0: applies to every GPU in version 2 */
	struct mask_buffer buf[2];
	unsigned current;  /* index of the buffer readers use */
	int updating;      /* try-lock of the single updater */
	unsigned warned;   /* enum warn_kind bits */
	/* What launches fall back on: never "unpartitioned" once a partition is known. */
	struct hw_masks initial;          /* the partition the task (or child) started with */
	struct nvt_slot_view initial_view;
	struct view_buffer known[2];      /* the partition of the published masks */
	unsigned known_current;
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

static int read_current(struct hw_masks *out)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned i = __atomic_load_n(&shim.current, __ATOMIC_ACQUIRE);
		const struct mask_buffer *b = &shim.buf[i & 1];
		union mask_words copy;
		uint64_t seen;

		if (nvt_seq_read(&b->seq, (const uint64_t *)&b->masks, copy.w, MASK_WORDS, &seen) == 0) {
			*out = copy.m;
			return 0;
		}
	}
	return -1;
}

/* Only the holder of shim.updating (or a single-threaded caller) may publish. */
static void publish(const struct hw_masks *m)
{
	unsigned next = (__atomic_load_n(&shim.current, __ATOMIC_RELAXED) + 1) & 1;
	struct mask_buffer *b = &shim.buf[next];
	union mask_words src = {.m = *m};

	nvt_seq_write(&b->seq, (uint64_t *)&b->masks, src.w, MASK_WORDS);
	__atomic_store_n(&shim.current, next, __ATOMIC_RELEASE);
}

/* Records the partition behind the masks just published (same rule as publish). */
static void remember(const struct nvt_slot_view *view)
{
	unsigned next = (__atomic_load_n(&shim.known_current, __ATOMIC_RELAXED) + 1) & 1;
	struct view_buffer *b = &shim.known[next];
	union view_words src = {.v = *view};

	nvt_seq_write(&b->seq, b->view.w, src.w, VIEW_WORDS);
	__atomic_store_n(&shim.known_current, next, __ATOMIC_RELEASE);
}

/* In a forked child: the last partition remembered. A fork in the middle of
 * remember() leaves that buffer odd; the other one holds the one before.
 * Returns 0, or -1 if none was ever remembered. */
static int recall(struct nvt_slot_view *out)
{
	unsigned current = __atomic_load_n(&shim.known_current, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < 2; i++) {
		const struct view_buffer *b = &shim.known[(current + i) & 1];
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
 * launch would never complete (HARDWARE-FACTS.md section 5).
 */
static int compute(const struct hw_masks *prev, const struct nvt_slot_view *view,
		   struct hw_masks *out)
{
	uint32_t v4[4];
	uint64_t v1;
	unsigned n4, n1;

	*out = *prev;
	out->seg_seq = view->seq;
	if (view->state == NVT_SLOT_UNSET) {
		out->state = NVT_SLOT_UNSET;
		return 0;
	}
	if (view->state != NVT_SLOT_SET || nvt_topo_validate(&view->topo))
		return -1;
	n4 = nvt_topo_disable_v4(&view->topo, &view->tpcs, v4);
	n1 = nvt_topo_disable_v1(&view->topo, &view->tpcs, &v1);
	if (!n4 && !n1)
		return -1;
	out->state = NVT_SLOT_SET;
	if (n4) {
		memcpy(out->v4, v4, sizeof(v4));
		out->v4_ok = 1;
	}
	if (n1) {
		out->v1 = v1;
		out->v1_ok = 1;
	}
	return 0;
}

/* Slow path: the slot changed since the masks were computed. */
static void refresh(struct hw_masks *m)
{
	struct nvt_slot_view view;
	struct hw_masks next;
	int mine = !__atomic_exchange_n(&shim.updating, 1, __ATOMIC_ACQUIRE), ok;

	/* m holds the current masks (possibly stale): they are the fallback. */
	if (nvt_slot_read(shim.slot, &view, 4)) {
		/* A writer is inside, or died there: keep launching on what we had. */
		if (mine)
			__atomic_store_n(&shim.updating, 0, __ATOMIC_RELEASE);
		return;
	}
	ok = compute(m, &view, &next) == 0;
	if (!ok) {
		nvt_slot_set_rejected(shim.slot, view.seq);
		if (first_time(WARN_REJECTED))
			warn("pid %ld: refused a partition that enables no working TPC (or is "
			     "malformed); launches keep the previous partition",
			     (long)getpid());
	}
	if (mine) {
		publish(&next);
		if (ok) {
			remember(&view);
			/* Every launch from now on uses it: only now is it applied. */
			nvt_slot_set_applied(shim.slot, view.seq);
		}
		__atomic_store_n(&shim.updating, 0, __ATOMIC_RELEASE);
	}
	*m = next;
}

/* Returns the masks for the slot's current partition. */
static void current_masks(struct hw_masks *m)
{
	uint64_t seq = nvt_slot_seq(shim.slot);

	if (read_current(m)) {
		/* Two updates raced this read: start from the partition the task
		 * started with (never from "untouched") and refresh. */
		*m = shim.initial;
	}
	if (m->seg_seq == seq || (seq & 1))
		return; /* up to date, or a writer is inside: use what we have */
	refresh(m);
}

/* ---- The launch callback ------------------------------------------------ */

static void on_launch(void *user, int domain, int cbid, const void *params)
{
	const uint32_t *size = params;
	void *tmd;
	struct hw_masks m;

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
	current_masks(&m);
	if (m.state != NVT_SLOT_SET)
		return;
	switch (nvt_tmd_classify(nvt_tmd_version(tmd))) {
	case NVT_TMD_V4:
		if (m.v4_ok)
			nvt_tmd_write_v4(tmd, m.v4);
		return;
	case NVT_TMD_V1:
		if (m.v1_ok)
			nvt_tmd_write_v1(tmd, m.v1);
		return;
	case NVT_TMD_TOO_OLD:
		if (first_time(WARN_TMD_OLD))
			warn("this GPU's TMD (version 0x%02x) has no TPC mask; launches run "
			     "unpartitioned",
			     nvt_tmd_version(tmd));
		return;
	case NVT_TMD_UNKNOWN:
		if (first_time(WARN_TMD_UNKNOWN))
			warn("unknown TMD version 0x%02x: its mask layout is unverified, so "
			     "launches run unpartitioned",
			     nvt_tmd_version(tmd));
		return;
	}
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

/* The initial partition the CLI put in the environment; state UNSET if none. */
static void environment_partition(struct nvt_slot_view *view)
{
	const char *tpcs_text = secure_getenv(NVT_ENV_TPCS);
	const char *topo_text = secure_getenv(NVT_ENV_TOPOLOGY);
	uint32_t v4[4];
	uint64_t v1;

	memset(view, 0, sizeof(*view));
	if (!tpcs_text || !*tpcs_text)
		return;
	if (nvt_parse_list(tpcs_text, NVT_MAX_TPCS, &view->tpcs) != NVT_PARSE_OK) {
		warn("ignoring malformed %s=\"%.64s\"; running unpartitioned", NVT_ENV_TPCS,
		     tpcs_text);
		return;
	}
	if (!topo_text || nvt_topo_parse(topo_text, &view->topo)) {
		warn("%s is %s; running unpartitioned", NVT_ENV_TOPOLOGY,
		     topo_text ? "malformed" : "missing");
		return;
	}
	if (!nvt_topo_disable_v4(&view->topo, &view->tpcs, v4) &&
	    !nvt_topo_disable_v1(&view->topo, &view->tpcs, &v1)) {
		warn("%s=\"%.64s\" enables no TPC this GPU has; running unpartitioned", NVT_ENV_TPCS,
		     tpcs_text);
		return;
	}
	view->state = NVT_SLOT_SET;
}

/*
 * Single-threaded (set-up, or a forked child): the masks launches start from,
 * and the fallback when nothing better can be read. The first launch still
 * reads the slot, and only then reports the partition applied.
 */
static void start_masks(const struct nvt_slot_view *view)
{
	struct hw_masks none, m;

	memset(&none, 0, sizeof(none));
	if (compute(&none, view, &m))
		m = none;
	m.seg_seq = UINT64_MAX;
	shim.initial = m;
	shim.initial_view = *view;
	memset(shim.buf, 0, sizeof(shim.buf));
	memset(shim.known, 0, sizeof(shim.known));
	shim.current = shim.known_current = 0;
	publish(&m);
	remember(view);
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
	get_table = (nvt_cuGetExportTable_fn)dlsym(RTLD_NEXT, "cuGetExportTable");
	if (!get_table) {
		lib = dlopen("libcuda.so.1", RTLD_LAZY);
		if (!lib) {
			warn("cannot load the CUDA driver (%s); running unpartitioned", dlerror());
			return;
		}
		get_table = (nvt_cuGetExportTable_fn)dlsym(lib, "cuGetExportTable");
	}
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
	struct nvt_segment *parent = shim.seg, *child = NULL;
	struct nvt_slot_view views[NVT_MAX_GPUS];
	int readable[NVT_MAX_GPUS], lock_fd = -1;
	char why[256];

	shim.updating = 0;
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		readable[g] = nvt_slot_read(&parent->gpu[g], &views[g], 100) == 0;
	/* Forked while a writer was inside the parent's slot (or stopped
	 * there): carry on with the partition launches used, never with none. */
	if (!readable[0]) {
		if (recall(&views[0]))
			views[0] = shim.initial_view;
		readable[0] = 1;
	}
	if (!shim.seg_shared) {
		start_masks(&views[0]); /* the parent's private segment is ours by copy */
		return;
	}
	if (nvt_seg_create(shim.base, &shim.own, &lock_fd, why, sizeof(why)) >= 0) {
		child = shim.own.seg;
		shim.seg_pid = getpid();
	} else {
		child = private_segment();
		if (!child) {
			start_masks(&views[0]); /* keep reading the parent's: better than none */
			return;
		}
		shim.seg_shared = 0;
	}
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (readable[g] && views[g].state != NVT_SLOT_UNSET)
			nvt_slot_write(&child->gpu[g], views[g].state, &views[g].tpcs, &views[g].topo);
	nvt_seg_unlock(lock_fd);
	shim.seg = child;
	shim.slot = &child->gpu[0];
	munmap(parent, sizeof(*parent));
	start_masks(&views[0]);
}

static void init(void)
{
	const void *first = dlsym(RTLD_DEFAULT, "nvtaskset_shim_instance");
	struct nvt_slot_view env_view, start;
	char why[256];
	int rc, lock_fd = -1;

	shim.quiet = env_flag(NVT_ENV_QUIET);
	if (first && first != (const void *)instance_marker)
		return; /* another copy of the shim is in charge */
	environment_partition(&env_view);
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
	shim.slot = &shim.seg->gpu[0];
	if (rc == NVT_SEG_ADOPTED) {
		/* A new program in this process: nothing has launched on it yet. */
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			nvt_slot_set_applied(&shim.seg->gpu[g], 0);
	} else if (!(rc == NVT_SEG_CREATED && nvt_seg_inherit(shim.base, &shim.own)) &&
		   env_view.state == NVT_SLOT_SET) {
		nvt_slot_write(shim.slot, NVT_SLOT_SET, &env_view.tpcs, &env_view.topo);
	}
	nvt_seg_unlock(lock_fd);
	/* Children that ended with _exit left their files: a start tidies up. */
	if (rc == NVT_SEG_CREATED)
		nvt_seg_sweep(&shim.own, SWEEP_MAX);
	/* Launches start from the slot, or from the environment if a writer
	 * stopped inside the slot: never from "unpartitioned". */
	if (nvt_slot_read(shim.slot, &start, 100))
		start = env_view;
	start_masks(&start);
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
