/*
 * shimmem.c - GPU memory per task (docs/usage.md, "GPU memory"): what the
 * process holds on each GPU, counted from every call that takes or frees it,
 * held to the limit in its slot (mem_limit), published in the slot
 * (mem_used) and told to the program as its GPU's memory.
 *
 * One way in for every caller: the driver-API callbacks (domain 6) of the
 * calls, which fire inside the driver whichever way a program reached the
 * call (linked, dlsym, the entry points cuGetProcAddress hands out to cudart
 * and PyTorch: docs/hardware-facts.md, section 7), for the preloaded shim
 * and the drop-in wrapper alike. An argument changed on entry is the one the
 * call uses (measured, section 7): an allocation past the limit has its size
 * made larger than any GPU holds (POISON_BYTES), so the driver itself fails
 * it with CUDA_ERROR_OUT_OF_MEMORY, as on a full GPU, and nothing is taken.
 *
 * What is counted, by the size asked as the driver rounds it, measured (a pitched allocation
 * by its pitch; cuMemAlloc's and cuMemAllocManaged's: nvt_memlimit_alloc_rounded; the
 * stream-ordered calls': nvt_memlimit_pool_rounded):
 *  - cuMemAlloc, cuMemAllocPitch; cuMemAllocManaged (it may live on the GPU
 *    whole: a limit that let it pass would bound nothing);
 *  - cuMemAllocAsync and cuMemAllocFromPoolAsync, freed by cuMemFreeAsync
 *    (what a pool keeps cached after a free is not counted: the pool took it
 *    under the limit, and only the pool reuses it), on the GPU that holds
 *    them: the pool's device, or the device of the stream's context;
 *  - cuMemCreate (the virtual memory API: PyTorch's expandable segments,
 *    NCCL), freed once its last cuMemRelease (cuMemRetainAllocationHandle adds
 *    one) and its last mapping's cuMemUnmap are both past (cuda.h's cuMemRelease;
 *    on an H200 a handle released while mapped kept its memory until the unmap:
 *    docs/bench/gpuchecks-2026-11-29). The mappings are followed in a table of
 *    their own (core/memmap.h); what cannot be followed stays counted;
 *  - arrays and mipmapped arrays, by their dimensions (a refused one fails
 *    with the driver's answer to dimensions beyond any GPU's);
 *  - frees by cuCtxDestroy, cuDevicePrimaryCtxReset and the last
 *    cuDevicePrimaryCtxRelease: what the context held (not cuMemCreate's
 *    memory or a pool's allocations, which live in none).
 * Not counted: cuIpcOpenMemHandle and cuMemImportFromShareableHandle, whose
 * memory is the exporter's, counted where it was allocated; pinned host memory.
 *
 * The count lives in the slot's mem_used itself (atomic adds; a fresh
 * program and a forked child start at 0); a reservation is one
 * compare-and-swap against the limit, taken on entry and given back on a
 * failed return, so threads allocating at once never pass it together. Each
 * allocation is remembered (key, bytes, slot, context) in a table under a
 * mutex, for its free: the allocation calls only, never the launch path.
 *
 * Over 500 lines on purpose: every call that takes or frees GPU memory has
 * its callback here beside the one table they count in, so that no path
 * counts apart from the others.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "core/memlimit.h"
#include "core/memmap.h"
#include "core/segment.h"
#include "shimdriver.h"
#include "shimmem.h"
#include "shimslot.h"
#include "shimstate.h"

/* More than any GPU holds, a multiple of every allocation granularity: the
 * driver answers CUDA_ERROR_OUT_OF_MEMORY. */
#define POISON_BYTES ((size_t)1 << 52)
/* Array dimensions past every GPU's maximum (2D 131072 x 65536, 3D 16384^3 on Hopper). */
#define POISON_DIM ((size_t)1 << 40)
#define FIRST_CREATED 64 /* contexts of cuCtxCreate the table holds before it grows */
#define PENDING 4      /* nested calls on one thread */
#define MAX_POOLS 64   /* pools remembered at once (the rest count on the current context's GPU) */
/* A handle's references past counting: it stays counted for the process's life, never given
 * back before its memory (4 billion retains; a count that wrapped would give it back early). */
#define REFS_STUCK UINT32_MAX

enum kind { K_PTR = 1, K_HANDLE = 2, K_ARRAY = 3 };

/* One allocation the process holds. */
struct alloc {
	uint64_t key; /* its pointer, handle or array; 0: an empty entry */
	uint64_t bytes;
	const void *ctx;
	uint8_t kind;
	uint8_t slot;
	uint32_t refs; /* cuMemCreate's handle: its references (REFS_STUCK: past counting) */
	uint32_t maps; /* ... and its mappings (REFS_STUCK: past counting, or one not remembered) */
};

/* A call between its entry and its return, on this thread. */
struct pending {
	int cbid;
	int slot;          /* -1: nothing counted */
	uint64_t bytes;    /* reserved on entry */
	const void *ctx;
	int refused;
	struct alloc freed; /* a free: the allocation taken out on entry (key 0: none) */
};

static struct {
	int on;
	pthread_mutex_t lock; /* the table */
	struct alloc *table;
	size_t cap, n;        /* cap a power of two, or 0 */
	const void **created; /* contexts cuCtxCreate made that live (NULL: a place free) */
	unsigned n_created, cap_created;
	int created_lost;     /* one not remembered (no memory): a primary context's end frees none */
	struct {
		const void *pool; /* NULL: an empty entry */
		int dev;          /* the device that holds its allocations */
	} pools[MAX_POOLS];
	struct nvt_memmap maps; /* cuMemMap's mappings that live, by address */
} mem = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct pending pend[PENDING] __attribute__((tls_model("initial-exec")));
static __thread int depth __attribute__((tls_model("initial-exec")));
static __thread NVT_ARRAY3D_DESCRIPTOR poisoned_desc __attribute__((tls_model("initial-exec")));

/* ---- The count --------------------------------------------------------------- */

/* Takes bytes of slot g's limit. Returns 0, or -1 (nothing taken) past it. */
static int reserve(int g, uint64_t bytes)
{
	struct nvt_gpu_slot *slot = &shim.seg->gpu[g];
	uint64_t limit = nvt_slot_mem_limit(slot);
	uint64_t used = __atomic_load_n(&slot->mem_used, __ATOMIC_RELAXED);

	do {
		if (!nvt_memlimit_fits(limit, used, bytes)) {
			__atomic_fetch_add(&slot->mem_refused, 1, __ATOMIC_RELAXED);
			return -1;
		}
	} while (!__atomic_compare_exchange_n(&slot->mem_used, &used, used + bytes, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 0;
}

static void give_back(int g, uint64_t bytes)
{
	uint64_t *used = &shim.seg->gpu[g].mem_used;
	uint64_t now = __atomic_load_n(used, __ATOMIC_RELAXED);

	/* Never below 0, whatever a driver reports. */
	while (!__atomic_compare_exchange_n(used, &now, now > bytes ? now - bytes : 0, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* ---- The table of allocations (under mem.lock) -------------------------------- */

static size_t home_of(uint64_t key, uint8_t kind, size_t cap)
{
	return (size_t)shim_ptr_hash((const void *)(uintptr_t)(key ^ ((uint64_t)kind << 58))) &
	       (cap - 1);
}

static struct alloc *find(uint64_t key, uint8_t kind)
{
	for (size_t k = 0, i = mem.cap ? home_of(key, kind, mem.cap) : 0; k < mem.cap;
	     k++, i = (i + 1) & (mem.cap - 1)) {
		if (!mem.table[i].key)
			return NULL;
		if (mem.table[i].key == key && mem.table[i].kind == kind)
			return &mem.table[i];
	}
	return NULL;
}

static void place(struct alloc *table, size_t cap, const struct alloc *a)
{
	size_t i = home_of(a->key, a->kind, cap);

	while (table[i].key)
		i = (i + 1) & (cap - 1);
	table[i] = *a;
}

/* Remembers a. Returns 0, or -1 when there is no memory for it. */
static int insert(const struct alloc *a)
{
	if ((mem.n + 1) * 4 > mem.cap * 3) {
		size_t cap = mem.cap ? mem.cap * 2 : 1024;
		struct alloc *table = calloc(cap, sizeof(*table));
		if (!table)
			return -1;
		for (size_t i = 0; i < mem.cap; i++)
			if (mem.table[i].key)
				place(table, cap, &mem.table[i]);
		free(mem.table);
		mem.table = table;
		mem.cap = cap;
	}
	place(mem.table, mem.cap, a);
	mem.n++;
	return 0;
}

/* Removes entry e, moving back the entries after it that its place let
 * pass (linear probing without tombstones). */
static void erase(struct alloc *e)
{
	size_t hole = (size_t)(e - mem.table), i = hole;

	mem.table[hole].key = 0;
	mem.n--;
	for (;;) {
		i = (i + 1) & (mem.cap - 1);
		if (!mem.table[i].key)
			return;
		size_t home = home_of(mem.table[i].key, mem.table[i].kind, mem.cap);
		/* Entry i may move to the hole if its home is not in (hole, i]. */
		if (((i - home) & (mem.cap - 1)) >= ((i - hole) & (mem.cap - 1))) {
			mem.table[hole] = mem.table[i];
			mem.table[i].key = 0;
			hole = i;
		}
	}
}

/* Takes out the allocation (key, kind), into *out. Returns 0, or -1 if unknown. */
static int take_out(uint64_t key, uint8_t kind, struct alloc *out)
{
	struct alloc *e;
	int rc = -1;

	pthread_mutex_lock(&mem.lock);
	/* (a handle released already, that a mapping keeps, is the driver's to refuse) */
	if (key && (e = find(key, kind)) && (kind != K_HANDLE || e->refs)) {
		*out = *e;
		if (kind == K_HANDLE && (e->refs > 1 || e->maps)) {
			if (e->refs != REFS_STUCK)
				e->refs--; /* a retained or mapped handle: not freed yet */
			out->bytes = 0;
		} else {
			erase(e);
		}
		rc = 0;
	}
	pthread_mutex_unlock(&mem.lock);
	return rc;
}

static void put_back(const struct alloc *a)
{
	struct alloc *e;

	pthread_mutex_lock(&mem.lock);
	if (a->bytes == 0 && (e = find(a->key, a->kind))) {
		if (e->refs != REFS_STUCK)
			e->refs++;
	}
	else if (insert(a) && shim_first_time(WARN_MEM))
		shim_warn("pid %ld: out of memory to follow GPU allocations; their frees are not "
			  "counted", (long)getpid());
	pthread_mutex_unlock(&mem.lock);
}

/* Whether what call cbid makes lives in no context: cuMemCreate's memory and the stream-ordered
 * allocations of a pool (cuda.h; on an H100 each outlived the primary context's reset:
 * docs/bench/mem-driver-2026-11-25). */
static int lives_in_no_context(int cbid)
{
	switch (cbid) {
	case NVT_CBID_cuMemCreate:
	case NVT_CBID_cuMemAllocAsync: case NVT_CBID_cuMemAllocAsync_ptsz:
	case NVT_CBID_cuMemAllocFromPoolAsync: case NVT_CBID_cuMemAllocFromPoolAsync_ptsz:
		return 1;
	default:
		return 0;
	}
}

/* Frees what a context held: every allocation of ctx, or (primary, on slot
 * g) of every context on g that cuCtxCreate did not make; never what lives in
 * no context (ctx NULL). A primary context's end frees nothing once a created
 * context could not be remembered: the count keeps what may be that one's. */
static void free_context(const void *ctx, int primary_slot)
{
	pthread_mutex_lock(&mem.lock);
	/* A created context destroyed is one no more: a primary context may come back at its
	 * address (a primary context's handle survives its last release). */
	for (unsigned c = 0; ctx && c < mem.n_created; c++)
		if (mem.created[c] == ctx)
			mem.created[c] = NULL;
	for (size_t i = 0; i < mem.cap && !(primary_slot >= 0 && mem.created_lost); i++) {
		struct alloc *e = &mem.table[i];
		int created = 0;
		if (!e->key || !e->ctx)
			continue;
		for (unsigned c = 0; primary_slot >= 0 && e->slot == primary_slot && c < mem.n_created; c++)
			created |= mem.created[c] == e->ctx;
		if (primary_slot >= 0 ? e->slot != primary_slot || created : e->ctx != ctx)
			continue;
		give_back(e->slot, e->bytes);
		erase(e);
		i--; /* an entry may have moved into i */
	}
	pthread_mutex_unlock(&mem.lock);
}

/* ---- Which GPU -------------------------------------------------------------------- */

/* The slot of the calling thread's current context, and the context; -1 without. */
static int current_slot(const void **ctx_out)
{
	CUcontext ctx = NULL;

	if (!shim_cu.ctx_current || shim_cu.ctx_current(&ctx) || !ctx)
		return -1;
	*ctx_out = ctx;
	return shim_slot_of(ctx);
}

/* Remembers pool as one of device dev, in its own entry or an empty one; dev -1 forgets it (a
 * pool destroyed, or one not on a device). Past MAX_POOLS live at once, a pool is not
 * remembered. */
static void remember_pool(const void *pool, int dev)
{
	int at = -1;

	if (!pool)
		return;
	pthread_mutex_lock(&mem.lock);
	for (int i = 0; i < MAX_POOLS && at < 0; i++)
		if (mem.pools[i].pool == pool)
			at = i;
	for (int i = 0; i < MAX_POOLS && at < 0 && dev >= 0; i++)
		if (!mem.pools[i].pool)
			at = i;
	if (at >= 0) {
		mem.pools[at].pool = dev >= 0 ? pool : NULL;
		mem.pools[at].dev = dev;
	}
	pthread_mutex_unlock(&mem.lock);
}

/* The device of a pool remembered, or -1. */
static int pool_device(const void *pool)
{
	int dev = -1;

	pthread_mutex_lock(&mem.lock);
	for (int i = 0; pool && i < MAX_POOLS && dev < 0; i++)
		if (mem.pools[i].pool == pool)
			dev = mem.pools[i].dev;
	pthread_mutex_unlock(&mem.lock);
	return dev;
}

/* A call that hands out or destroys a pool (cbid, arguments a), on its successful return. */
static void pool_call(int cbid, void *a)
{
	switch (cbid) {
	case NVT_CBID_cuMemPoolCreate: {
		NVT_MEM_POOL_CREATE_ARGS *c = a;
		if (c->pool && c->props)
			remember_pool(*c->pool, c->props->location_type == NVT_MEM_LOCATION_DEVICE
							? c->props->location_id : -1);
		break;
	}
	case NVT_CBID_cuMemPoolDestroy:
		remember_pool(((NVT_HANDLE_ARGS *)a)->handle, -1);
		break;
	case NVT_CBID_cuMemGetDefaultMemPool: case NVT_CBID_cuMemGetMemPool: {
		NVT_LOCATION_POOL_ARGS *l = a;
		if (l->pool && l->location)
			remember_pool(*l->pool, l->location->type == NVT_MEM_LOCATION_DEVICE
							? l->location->id : -1);
		break;
	}
	default: { /* cuDeviceGetDefaultMemPool, cuDeviceGetMemPool */
		NVT_DEVICE_POOL_ARGS *d = a;
		if (d->pool)
			remember_pool(*d->pool, d->dev);
		break;
	}
	}
}

/* The device of stream s (cuStreamGetDevice), or -1. Not asked of a stream that captures a graph
 * (on an H200 the question ended a PyTorch capture's allocation inside it: the allocation is the
 * graph's, and counts on the current GPU), and asked with this thread's capture relaxed, so that
 * another thread's capture in the global mode is not disturbed (as the bridge's calls,
 * shimbridge.c). */
static int stream_device(CUstream s)
{
	int status = 1, mode = NVT_CU_STREAM_CAPTURE_MODE_RELAXED, relaxed;
	CUdevice dev = -1;

	if (!shim_cu.stream_device || !shim_cu.stream_capturing || shim_cu.stream_capturing(s, &status) ||
	    status)
		return -1;
	relaxed = shim_cu.capture_mode && shim_cu.capture_mode(&mode) == 0;
	if (shim_cu.stream_device(s, &dev))
		dev = -1;
	if (relaxed)
		shim_cu.capture_mode(&mode);
	return dev;
}

/* The slot of the GPU that holds a stream-ordered allocation (call cbid, arguments a), and for
 * one counted on the current context's GPU that context into *ctx; -1 without.
 * cuMemAllocFromPoolAsync takes from the pool's device, which may be other than the stream's and
 * the current context's; cuMemAllocAsync from the current pool of the stream's device (cuda.h),
 * which cuStreamGetDevice answers (CUDA 12.8; NULL, the legacy and the per-thread stream are the
 * current context's). The device is asked, not the stream's context (cuStreamGetCtx): the slot
 * of a context is found by cuCtxGetDevice, which answers for the current context only. A pool the
 * shim does not know (one not on a device, one past MAX_POOLS at once; an imported pool makes
 * no allocations), and a stream with a driver older than cuStreamGetDevice, count on the current
 * context's GPU, as the other allocation calls do (docs/limitations.md). */
static int stream_ordered_slot(int cbid, void *a, const void **ctx)
{
	CUdevice dev = -1;

	if (cbid == NVT_CBID_cuMemAllocFromPoolAsync || cbid == NVT_CBID_cuMemAllocFromPoolAsync_ptsz) {
		if ((dev = pool_device(((NVT_MEM_POOL_ALLOC_ARGS *)a)->pool)) >= 0)
			return shim_device_slot(dev);
	} else {
		CUstream s = ((NVT_MEM_ALLOC_ASYNC_ARGS *)a)->stream;
		if (s && s != NVT_CU_STREAM_LEGACY && s != NVT_CU_STREAM_PER_THREAD &&
		    (dev = stream_device(s)) >= 0)
			return shim_device_slot(dev);
	}
	return current_slot(ctx);
}

/* ---- What each call takes ------------------------------------------------------------- */

/* Bytes of one element of an array format's channel (cuda.h's CUarray_format). */
static uint64_t format_bytes(int format)
{
	switch (format) {
	case 0x01: case 0x08: return 1;                 /* 8-bit integers */
	case 0x02: case 0x09: case 0x10: return 2;      /* 16-bit integers, half */
	default: return 4;                              /* 32-bit, and every other format */
	}
}

/* An extent of a mipmap's level: halved level times, at least 1 (0, an extent the array does not
 * have, counts as 1). */
static uint64_t level_extent(uint64_t extent, unsigned level)
{
	return extent >> level ? extent >> level : 1;
}

/* Bytes of an array of w x h x d (0 counts as 1) with levels mipmap levels (1: none), or
 * UINT64_MAX past any size. Level i has each extent halved i times (at least 1), but d where it
 * counts layers or a cubemap's faces (d_kept), which every level has all of, as the driver's levels
 * are (tests/fake/fakemem.c's mipmap() takes the same): 4096 x 4096 floats take 64, 80 and 86 MiB
 * with 1, 2 and 13 levels on an H100 (docs/bench/mem-driver-2026-11-25), and on an H200 2048
 * layers of 16384 floats 1024 and 2052 MiB with 1 and 15, a 4096 x 4096 cubemap 384 and 514 with
 * 1 and 13: a chain that halves one extent (1D, 1D layered, a height of 1) takes up to twice its
 * first level, one that halves two four thirds. A layered array's level (not a cubemap's) is
 * counted at least 8 rows high, as the driver lays out a 1D layer's row (those 2048 layers of
 * one row take 1024 MiB for 128 of floats on an H200, 4 GiB for 512 of float4 on an H100);
 * d_kept is the descriptor's flags for the layers and faces. The count is clamped as cuda.h says
 * the driver clamps it, to 1 + floor(log2) of the widest of w, h and d (d taken even where it is
 * kept: a narrower clamp of the driver's only counts more here). */
static uint64_t array_bytes(size_t w, size_t h, size_t d, int format, unsigned channels,
			    unsigned levels, int d_kept)
{
	uint64_t element = format_bytes(format) * (channels ? channels : 1);
	size_t widest = w > h ? (w > d ? w : d) : (h > d ? h : d);
	uint64_t rows_least = (d_kept & NVT_ARRAY3D_LAYERED) && !(d_kept & NVT_ARRAY3D_CUBEMAP) ? 8 : 1;
	unsigned most = 1;
	unsigned __int128 b = 0;

	if (w > (size_t)1 << 31 || h > (size_t)1 << 31 || d > (size_t)1 << 31)
		return UINT64_MAX; /* (past every GPU's array; and the sums below stay in 128 bits) */
	while (widest >> most)
		most++;
	levels = levels < 1 ? 1 : levels > most ? most : levels;
	for (unsigned i = 0; i < levels && b <= UINT64_MAX; i++)
		b += (unsigned __int128)level_extent(w, i) *
		     (level_extent(h, i) > rows_least ? level_extent(h, i) : rows_least) *
		     level_extent(d, d_kept ? 0 : i) * element;
	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

/* The GPU memory call cbid asks for, from its arguments a, into p (slot -1: none). */
static void asked(int cbid, void *a, struct pending *p)
{
	p->slot = -1;
	switch (cbid) {
	case NVT_CBID_cuMemAlloc_v2:
		p->bytes = nvt_memlimit_alloc_rounded(((NVT_MEM_ALLOC_ARGS *)a)->bytes);
		break;
	case NVT_CBID_cuMemAllocManaged:
		p->bytes = nvt_memlimit_alloc_rounded(((NVT_MEM_ALLOC_ARGS *)a)->bytes);
		break;
	case NVT_CBID_cuMemAllocAsync: case NVT_CBID_cuMemAllocAsync_ptsz:
	case NVT_CBID_cuMemAllocFromPoolAsync: case NVT_CBID_cuMemAllocFromPoolAsync_ptsz:
		p->bytes = nvt_memlimit_pool_rounded(((NVT_MEM_ALLOC_ARGS *)a)->bytes);
		p->slot = stream_ordered_slot(cbid, a, &p->ctx);
		return;
	case NVT_CBID_cuMemAllocPitch_v2: {
		NVT_MEM_ALLOC_PITCH_ARGS *pa = a;
		/* The pitch is known on return: the most it can take now, what it took then. */
		p->bytes = nvt_memlimit_alloc_rounded(nvt_memlimit_pitched(pa->width, pa->height));
		break;
	}
	case NVT_CBID_cuMemCreate: {
		NVT_MEM_CREATE_ARGS *c = a;
		p->bytes = c->size;
		if (c->prop && c->prop->location_type == NVT_MEM_LOCATION_DEVICE) {
			p->ctx = NULL;
			p->slot = shim_device_slot(c->prop->location_id);
		}
		return;
	}
	case NVT_CBID_cuArrayCreate_v2: {
		const NVT_ARRAY_DESCRIPTOR *d = ((NVT_ARRAY_CREATE_ARGS *)a)->desc;
		if (!d)
			return;
		p->bytes = array_bytes(d->width, d->height, 1, d->format, d->channels, 1, 0);
		break;
	}
	case NVT_CBID_cuArray3DCreate_v2: case NVT_CBID_cuMipmappedArrayCreate: {
		NVT_ARRAY_CREATE_ARGS *c = a;
		const NVT_ARRAY3D_DESCRIPTOR *d = c->desc;
		if (!d)
			return;
		p->bytes = array_bytes(d->width, d->height, d->depth, d->format, d->channels,
				       cbid == NVT_CBID_cuMipmappedArrayCreate ? c->levels : 1,
				       d->flags & (NVT_ARRAY3D_LAYERED | NVT_ARRAY3D_CUBEMAP));
		break;
	}
	default:
		return;
	}
	p->slot = current_slot(&p->ctx);
}

/* Makes call cbid (arguments a) fail as on a full GPU: a size no GPU holds. */
static void poison(int cbid, void *a)
{
	switch (cbid) {
	case NVT_CBID_cuMemAllocPitch_v2: {
		NVT_MEM_ALLOC_PITCH_ARGS *pa = a;
		pa->height = POISON_BYTES / (pa->width ? pa->width : 1) + 1;
		break;
	}
	case NVT_CBID_cuMemCreate: ((NVT_MEM_CREATE_ARGS *)a)->size = POISON_BYTES; break;
	case NVT_CBID_cuArrayCreate_v2:
		memcpy(&poisoned_desc, ((NVT_ARRAY_CREATE_ARGS *)a)->desc, sizeof(NVT_ARRAY_DESCRIPTOR));
		poisoned_desc.width = poisoned_desc.height = POISON_DIM;
		((NVT_ARRAY_CREATE_ARGS *)a)->desc = &poisoned_desc;
		break;
	case NVT_CBID_cuArray3DCreate_v2: case NVT_CBID_cuMipmappedArrayCreate:
		poisoned_desc = *(const NVT_ARRAY3D_DESCRIPTOR *)((NVT_ARRAY_CREATE_ARGS *)a)->desc;
		poisoned_desc.width = poisoned_desc.height = poisoned_desc.depth = POISON_DIM;
		((NVT_ARRAY_CREATE_ARGS *)a)->desc = &poisoned_desc;
		break;
	default: ((NVT_MEM_ALLOC_ARGS *)a)->bytes = POISON_BYTES; break;
	}
}

/* The key of what call cbid (arguments a) made, on its successful return; 0: none. */
static uint64_t made(int cbid, void *a, uint8_t *kind)
{
	*kind = K_PTR;
	switch (cbid) {
	case NVT_CBID_cuMemAllocPitch_v2:
		return ((NVT_MEM_ALLOC_PITCH_ARGS *)a)->dptr ? *((NVT_MEM_ALLOC_PITCH_ARGS *)a)->dptr : 0;
	case NVT_CBID_cuMemCreate:
		*kind = K_HANDLE;
		return ((NVT_MEM_CREATE_ARGS *)a)->handle ? *((NVT_MEM_CREATE_ARGS *)a)->handle : 0;
	case NVT_CBID_cuArrayCreate_v2: case NVT_CBID_cuArray3DCreate_v2:
	case NVT_CBID_cuMipmappedArrayCreate:
		*kind = K_ARRAY;
		return ((NVT_ARRAY_CREATE_ARGS *)a)->handle
			       ? (uint64_t)(uintptr_t) * ((NVT_ARRAY_CREATE_ARGS *)a)->handle
			       : 0;
	default:
		return ((NVT_MEM_ALLOC_ARGS *)a)->dptr ? *((NVT_MEM_ALLOC_ARGS *)a)->dptr : 0;
	}
}

/* The allocation a free call (cbid, arguments a) gives back: its key and kind; 0: none. */
static uint64_t freed_key(int cbid, void *a, uint8_t *kind)
{
	switch (cbid) {
	case NVT_CBID_cuMemFree_v2: case NVT_CBID_cuMemFreeAsync: case NVT_CBID_cuMemFreeAsync_ptsz:
		*kind = K_PTR;
		return ((NVT_MEM_FREE_ARGS *)a)->dptr;
	case NVT_CBID_cuMemRelease:
		*kind = K_HANDLE;
		return ((NVT_MEM_RELEASE_ARGS *)a)->handle;
	case NVT_CBID_cuArrayDestroy: case NVT_CBID_cuMipmappedArrayDestroy:
		*kind = K_ARRAY;
		return (uint64_t)(uintptr_t)((NVT_HANDLE_ARGS *)a)->handle;
	default:
		return 0;
	}
}

/* ---- Entry and return ---------------------------------------------------------------- */

static void on_entry(int cbid, void *a)
{
	struct pending *p;
	uint8_t kind;
	uint64_t key;

	if (depth >= PENDING)
		return;
	p = &pend[depth++];
	memset(p, 0, sizeof(*p));
	p->cbid = cbid;
	p->slot = -1;
	if ((key = freed_key(cbid, a, &kind))) {
		/* Out of the table before the driver can hand the address out again. */
		if (take_out(key, kind, &p->freed))
			p->freed.key = 0;
		return;
	}
	asked(cbid, a, p);
	if (p->slot < 0)
		return;
	if (reserve(p->slot, p->bytes)) {
		p->refused = 1;
		p->slot = -1;
		poison(cbid, a);
	}
}

/* What a successful allocation's return records. */
static void allocated(int cbid, void *a, struct pending *p)
{
	struct alloc e = {.bytes = p->bytes, .ctx = p->ctx, .slot = (uint8_t)p->slot, .refs = 1};

	e.key = made(cbid, a, &e.kind);
	if (lives_in_no_context(cbid))
		e.ctx = NULL;
	if (!e.key) {
		give_back(p->slot, p->bytes);
		return;
	}
	if (cbid == NVT_CBID_cuMemAllocPitch_v2) {
		/* What the pitch took, in place of the bound reserved for it (a pitch
		 * past the bound, which libcuda does not give, is counted all the same). */
		NVT_MEM_ALLOC_PITCH_ARGS *pa = a;
		uint64_t took = pa->pitch ? nvt_memlimit_alloc_rounded((uint64_t)*pa->pitch * pa->height)
					  : p->bytes;
		if (took > p->bytes)
			__atomic_fetch_add(&shim.seg->gpu[p->slot].mem_used, took - p->bytes,
					   __ATOMIC_RELAXED);
		else
			give_back(p->slot, p->bytes - took);
		e.bytes = took;
	}
	put_back(&e);
}

static void on_return(int cbid, void *a, int result)
{
	struct pending *p;

	if (!depth || pend[depth - 1].cbid != cbid)
		return; /* its entry was not followed (too deep) */
	p = &pend[--depth];
	if (p->freed.key) {
		if (result == 0)
			give_back(p->freed.slot, p->freed.bytes);
		else
			put_back(&p->freed); /* not freed: still held */
		return;
	}
	if (p->refused) {
		if (result == 0 && shim_first_time(WARN_MEM))
			shim_warn("pid %ld: the driver took an allocation made larger than any GPU; "
				  "GPU memory limits may not hold with this driver", (long)getpid());
		return;
	}
	if (p->slot < 0)
		return;
	if (result == 0)
		allocated(cbid, a, p);
	else
		give_back(p->slot, p->bytes);
}

/* A handle retained again (cuMemRetainAllocationHandle), freed by one more release. */
static void retained(const NVT_MEM_RETAIN_ARGS *a)
{
	struct alloc *e;

	pthread_mutex_lock(&mem.lock);
	if (a->handle && (e = find(*a->handle, K_HANDLE)) && e->refs != REFS_STUCK)
		e->refs++;
	pthread_mutex_unlock(&mem.lock);
}

/* ---- The virtual memory API's mappings (cuMemMap, cuMemUnmap) ---------------------------- */

/* One mapping of handle entry e is gone: with its handle released too, its memory is given
 * back. Under mem.lock. */
static void mapping_gone(struct alloc *e)
{
	if (e->maps && e->maps != REFS_STUCK)
		e->maps--;
	if (!e->maps && !e->refs) {
		give_back(e->slot, e->bytes);
		erase(e);
	}
}

/* cuMemMap's entry: the handle counts one mapping more before the driver maps it, so that a
 * release on another thread meanwhile does not give its memory back (p->slot >= 0: counted). */
static void map_begins(const NVT_MEM_MAP_ARGS *a)
{
	struct pending *p;
	struct alloc *e;

	if (depth >= PENDING)
		return;
	p = &pend[depth++];
	memset(p, 0, sizeof(*p));
	p->cbid = NVT_CBID_cuMemMap;
	p->slot = -1;
	pthread_mutex_lock(&mem.lock);
	if (a->handle && (e = find(a->handle, K_HANDLE))) {
		if (e->maps != REFS_STUCK)
			e->maps++;
		p->slot = e->slot;
	}
	pthread_mutex_unlock(&mem.lock);
}

/* cuMemMap's return: a mapping made is remembered (every one, counted or not, so that an unmap
 * of mappings end to end finds each); one refused is no mapping. A mapping that cannot be
 * remembered (no memory) keeps its handle counted for the process's life. */
static void map_made(const NVT_MEM_MAP_ARGS *a, int result)
{
	struct pending *p;
	struct alloc *e;
	uint64_t ended = 0;
	int lost = 0;

	if (!depth || pend[depth - 1].cbid != NVT_CBID_cuMemMap)
		return; /* its entry was not followed (too deep) */
	p = &pend[--depth];
	pthread_mutex_lock(&mem.lock);
	e = p->slot >= 0 ? find(a->handle, K_HANDLE) : NULL;
	if (result == 0 && a->ptr && a->size) {
		if (nvt_memmap_add(&mem.maps, a->ptr, a->size, a->handle, &ended)) {
			lost = 1;
			if (e)
				e->maps = REFS_STUCK;
		} else if (ended && (e = find(ended, K_HANDLE))) {
			mapping_gone(e); /* the driver maps no address twice: that mapping had ended */
		}
	} else if (result && e) {
		mapping_gone(e);
	}
	pthread_mutex_unlock(&mem.lock);
	if (lost && shim_first_time(WARN_MEM))
		shim_warn("pid %ld: out of memory to follow GPU mappings; the memory they map stays "
			  "counted", (long)getpid());
}

/* cuMemUnmap's entry: the serial of the next mapping, so that its return ends none made since. */
static void unmap_begins(void)
{
	struct pending *p;

	if (depth >= PENDING)
		return;
	p = &pend[depth++];
	memset(p, 0, sizeof(*p));
	p->cbid = NVT_CBID_cuMemUnmap;
	p->slot = -1;
	pthread_mutex_lock(&mem.lock);
	p->bytes = nvt_memmap_serial(&mem.maps);
	pthread_mutex_unlock(&mem.lock);
}

/* cuMemUnmap's return: the mappings that lie end to end from its address within its range end
 * (cuda.h: whole mappings only). Where they do not (a range past what is remembered), the walk
 * stops and the mappings beyond stay counted. */
static void unmap_done(const NVT_MEM_UNMAP_ARGS *a, int result)
{
	struct pending *p;
	struct alloc *e;
	uint64_t at = a->ptr, end = a->size > UINT64_MAX - a->ptr ? UINT64_MAX : a->ptr + a->size, h;

	if (!depth || pend[depth - 1].cbid != NVT_CBID_cuMemUnmap)
		return;
	p = &pend[--depth];
	if (result)
		return;
	pthread_mutex_lock(&mem.lock);
	while (nvt_memmap_take(&mem.maps, &at, end, p->bytes, &h))
		if ((e = find(h, K_HANDLE)))
			mapping_gone(e);
	pthread_mutex_unlock(&mem.lock);
}

/* cuMemGetInfo's and cuDeviceTotalMem's answers, on return: the task's limit. */
static void tell(int cbid, void *a)
{
	const void *ctx;
	uint64_t free_bytes, total;
	int g;

	if (cbid == NVT_CBID_cuMemGetInfo_v2) {
		NVT_MEM_GET_INFO_ARGS *m = a;
		if (!m->free_bytes || !m->total || (g = current_slot(&ctx)) < 0)
			return;
		free_bytes = *m->free_bytes;
		total = *m->total;
		nvt_memlimit_told(nvt_slot_mem_limit(&shim.seg->gpu[g]),
				  __atomic_load_n(&shim.seg->gpu[g].mem_used, __ATOMIC_RELAXED),
				  &free_bytes, &total);
		*m->free_bytes = (size_t)free_bytes;
		*m->total = (size_t)total;
	} else {
		NVT_DEVICE_TOTAL_MEM_ARGS *t = a;
		if (!t->bytes || (g = shim_device_slot(t->dev)) < 0)
			return;
		total = *t->bytes;
		nvt_memlimit_told(nvt_slot_mem_limit(&shim.seg->gpu[g]), 0, NULL, &total);
		*t->bytes = (size_t)total;
	}
}

/* ---- The callbacks ---------------------------------------------------------------------- */

/* The ids followed (shim_mem_setup enables them). */
static const int ids[] = {
	NVT_CBID_cuMemAlloc_v2, NVT_CBID_cuMemAllocPitch_v2, NVT_CBID_cuMemFree_v2,
	NVT_CBID_cuMemAllocManaged, NVT_CBID_cuMemAllocAsync, NVT_CBID_cuMemAllocAsync_ptsz,
	NVT_CBID_cuMemFreeAsync, NVT_CBID_cuMemFreeAsync_ptsz, NVT_CBID_cuMemAllocFromPoolAsync,
	NVT_CBID_cuMemAllocFromPoolAsync_ptsz, NVT_CBID_cuMemCreate, NVT_CBID_cuMemRelease,
	NVT_CBID_cuMemRetainAllocationHandle, NVT_CBID_cuMemMap, NVT_CBID_cuMemUnmap,
	NVT_CBID_cuArrayCreate_v2, NVT_CBID_cuArray3DCreate_v2,
	NVT_CBID_cuArrayDestroy, NVT_CBID_cuMipmappedArrayCreate, NVT_CBID_cuMipmappedArrayDestroy,
	NVT_CBID_cuCtxCreate_v2, NVT_CBID_cuCtxCreate_v3, NVT_CBID_cuCtxCreate_v4,
	NVT_CBID_cuCtxDestroy_v2, NVT_CBID_cuDevicePrimaryCtxReset_v2, NVT_CBID_cuDevicePrimaryCtxRelease_v2,
	NVT_CBID_cuDevicePrimaryCtxReset, NVT_CBID_cuDevicePrimaryCtxRelease, NVT_CBID_cuCtxDestroy,
	NVT_CBID_cuMemGetInfo_v2, NVT_CBID_cuDeviceTotalMem_v2,
};
/* ... and the calls that hand out pools, where the driver has them (cuMemGetDefaultMemPool and
 * cuMemGetMemPool since CUDA 13.0): without one, its pools count on the current GPU. */
static const int pool_ids[] = {
	NVT_CBID_cuMemPoolCreate, NVT_CBID_cuMemPoolDestroy, NVT_CBID_cuDeviceGetDefaultMemPool,
	NVT_CBID_cuDeviceGetMemPool, NVT_CBID_cuMemGetDefaultMemPool, NVT_CBID_cuMemGetMemPool,
};

uint64_t shim_mem_ids[SHIM_MEM_ID_WORDS];

/* Remembers ctx as one cuCtxCreate made, in the place of one destroyed where there is one, else
 * in a table grown for it: every created context that lives is remembered, however many live at
 * once or a program makes in its life. With no memory to grow it, ctx is not, and a primary
 * context's end frees nothing after (free_context): a count kept too long, never the driver's
 * memory of a created context given back. */
static void remember_created(const void *ctx)
{
	unsigned c, cap;
	const void **grown;
	int lost = 0;

	pthread_mutex_lock(&mem.lock);
	for (c = 0; c < mem.n_created && mem.created[c]; c++)
		continue;
	cap = c ? c * 2 : FIRST_CREATED;
	if (c == mem.cap_created && cap > c && (grown = realloc(mem.created, cap * sizeof(*grown)))) {
		mem.created = grown;
		mem.cap_created = cap;
	}
	if (c < mem.cap_created) {
		mem.created[c] = ctx;
		if (c == mem.n_created)
			mem.n_created++;
	} else {
		lost = mem.created_lost = 1;
	}
	pthread_mutex_unlock(&mem.lock);
	if (lost && shim_first_time(WARN_MEM))
		shim_warn("pid %ld: out of memory to follow GPU contexts; a primary context's reset "
			  "frees none of the memory counted", (long)getpid());
}

/* A context's life: made (remembered), destroyed, reset or released the last time (what it held
 * is freed). */
static void context_call(int cbid, void *a, int result)
{
	if (result)
		return;
	if (cbid == NVT_CBID_cuCtxDestroy_v2 || cbid == NVT_CBID_cuCtxDestroy) {
		free_context(((NVT_HANDLE_ARGS *)a)->handle, -1);
	} else if (cbid == NVT_CBID_cuDevicePrimaryCtxReset_v2 || cbid == NVT_CBID_cuDevicePrimaryCtxReset) {
		int g = shim_device_slot(((NVT_DEVICE_ARGS *)a)->dev);
		if (g >= 0)
			free_context(NULL, g);
	} else if (cbid == NVT_CBID_cuDevicePrimaryCtxRelease_v2 || cbid == NVT_CBID_cuDevicePrimaryCtxRelease) {
		int g = shim_primary_gone(((NVT_DEVICE_ARGS *)a)->dev);
		if (g >= 0)
			free_context(NULL, g);
	} else if (((NVT_CTX_CREATE_ARGS *)a)->ctx) {
		remember_created(*((NVT_CTX_CREATE_ARGS *)a)->ctx);
	}
}

void shim_mem_api(int cbid, const void *data)
{
	struct shim_api_call call;

	if (!__atomic_load_n(&mem.on, __ATOMIC_ACQUIRE) || !shim.seg)
		return;
	if (shim_api_call(cbid, data, &call)) {
		if (shim_first_time(WARN_MEM))
			shim_warn("unexpected driver-API callback data (call %d): GPU memory is not "
				  "counted, and memory limits do not hold", cbid);
		return;
	}
	switch (cbid) {
	case NVT_CBID_cuMemGetInfo_v2: case NVT_CBID_cuDeviceTotalMem_v2:
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0)
			tell(cbid, (void *)call.args);
		return;
	case NVT_CBID_cuCtxCreate_v2: case NVT_CBID_cuCtxCreate_v3: case NVT_CBID_cuCtxCreate_v4:
	case NVT_CBID_cuCtxDestroy_v2: case NVT_CBID_cuDevicePrimaryCtxReset_v2:
	case NVT_CBID_cuDevicePrimaryCtxRelease_v2: case NVT_CBID_cuDevicePrimaryCtxReset:
	case NVT_CBID_cuDevicePrimaryCtxRelease: case NVT_CBID_cuCtxDestroy:
		if (call.site == NVT_CB_API_SITE_EXIT)
			context_call(cbid, (void *)call.args, call.result);
		return;
	case NVT_CBID_cuMemRetainAllocationHandle:
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0)
			retained((const NVT_MEM_RETAIN_ARGS *)call.args);
		return;
	case NVT_CBID_cuMemMap:
		if (call.site == NVT_CB_API_SITE_ENTER)
			map_begins((const NVT_MEM_MAP_ARGS *)call.args);
		else
			map_made((const NVT_MEM_MAP_ARGS *)call.args, call.result);
		return;
	case NVT_CBID_cuMemUnmap:
		if (call.site == NVT_CB_API_SITE_ENTER)
			unmap_begins();
		else
			unmap_done((const NVT_MEM_UNMAP_ARGS *)call.args, call.result);
		return;
	case NVT_CBID_cuMemPoolCreate: case NVT_CBID_cuMemPoolDestroy:
	case NVT_CBID_cuDeviceGetDefaultMemPool: case NVT_CBID_cuDeviceGetMemPool:
	case NVT_CBID_cuMemGetDefaultMemPool: case NVT_CBID_cuMemGetMemPool:
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0)
			pool_call(cbid, (void *)call.args);
		return;
	default:
		if (call.site == NVT_CB_API_SITE_ENTER)
			on_entry(cbid, (void *)call.args);
		else
			on_return(cbid, (void *)call.args, call.result);
	}
}

/* A fresh count: a new program, or a forked child, holds no GPU memory. */
static void count_afresh(void)
{
	for (int g = 0; shim.seg && g < NVT_MAX_GPUS; g++) {
		__atomic_store_n(&shim.seg->gpu[g].mem_used, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&shim.seg->gpu[g].mem_refused, 0, __ATOMIC_RELAXED);
	}
}

void shim_mem_after_fork(void)
{
	/* The parent's allocations are not the child's (CUDA does not follow a fork). Its tables
	 * are dropped, not freed: a thread of the parent may have been between a table's free and
	 * the store of its new one when the fork came (no lock is held across a fork), and freeing
	 * what the child's copy points at could free a block twice and end the child. What the
	 * child so keeps is the parent's tables' size, once. */
	pthread_mutex_init(&mem.lock, NULL);
	mem.table = NULL;
	mem.cap = mem.n = 0;
	mem.created = NULL;
	mem.n_created = mem.cap_created = 0;
	mem.created_lost = 0;
	memset(mem.pools, 0, sizeof(mem.pools));
	memset(&mem.maps, 0, sizeof(mem.maps));
	depth = 0;
	count_afresh();
}

void shim_mem_setup(nvt_cb_enable_fn enable, uint32_t handle)
{
	int refused = 0;

	count_afresh();
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (enable(1, handle, NVT_CB_DOMAIN_API, ids[i]))
			refused++;
		else
			shim_mem_ids[ids[i] / 64] |= 1ull << (ids[i] % 64);
	}
	if (refused)
		shim_warn("the CUDA driver refused %d of the GPU memory calls' callbacks: GPU memory "
			  "limits may not hold",
			  refused);
	for (size_t i = 0; i < sizeof(pool_ids) / sizeof(pool_ids[0]); i++)
		if (!enable(1, handle, NVT_CB_DOMAIN_API, pool_ids[i]))
			shim_mem_ids[pool_ids[i] / 64] |= 1ull << (pool_ids[i] % 64);
	__atomic_store_n(&mem.on, 1, __ATOMIC_RELEASE);
}
