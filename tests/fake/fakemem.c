/*
 * fakemem.c - the fake driver's GPU memory: each device holds
 * FAKECUDA_MEM_MB (default 80 GiB), and every call that takes or frees it
 * counts there, with the real driver's return codes (cuda.h's documentation):
 * CUDA_ERROR_OUT_OF_MEMORY for more than the device has free, _INVALID_VALUE
 * for a size of 0, a pointer or handle it did not give, dimensions beyond the
 * maximum. Each call fires its driver-API callbacks on entry and return, and
 * uses the arguments as the entry callbacks left them (docs/hardware-facts.md,
 * section 7), as the real driver does.
 * Over 500 lines on purpose: every call that takes or frees GPU memory beside
 * the one table they count in (as the shim's shimmem.c), so that no path
 * counts apart from the others.
 *
 * Managed memory is not taken from a device until used (it may exceed the
 * GPU's memory), up to the GPU's virtual address space (FAKE_VA, 2^47 bytes):
 * past it, CUDA_ERROR_OUT_OF_MEMORY. Allocations are real, untouched pages
 * (MAP_NORESERVE) below FAKE_REAL, so that the probes can use theirs; above
 * it, addresses only. IPC handles carry (exporter pid, address, bytes); a
 * process other than the exporter opens one without taking memory of its own;
 * shareable handles (cuMemExportToShareableHandle) are file descriptors.
 *
 * Each allocation lives in the context that was current when it was made, and
 * cuCtxDestroy, the primary context's reset or its last release frees it with
 * that context; those of cuMemCreate, cuMemAllocAsync and cuMemAllocFromPoolAsync
 * live in none, and outlive them (cuda.h, and measured for the destruction and the reset on an
 * H100, driver 580.159.04, by
 * tests/gpu/memdriver.sh: docs/bench/mem-driver-2026-11-25). How much a device
 * has free is the device's, whichever context asks.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakeint.h"

#define GIB (1024ull * 1024 * 1024)
#define FAKE_VA ((uint64_t)1 << 47)
#define FAKE_REAL (64ull << 20)   /* allocations up to this size get real pages */
#define GRANULARITY (2ull << 20)  /* cuMemCreate's (cuMemGetAllocationGranularity) */
#define MAX_ALLOCS 4096
#define PITCH_ALIGN 512

enum kind { A_PTR = 1, A_MANAGED, A_HANDLE, A_ARRAY, A_IPC, A_STREAM_ORDERED, A_MIPMAP, A_IMPORT };
/* Allocations no context holds: cuda.h's cuCtxDestroy "will not destroy memory allocations by
 * cuMemCreate(), cuMemAllocAsync() and cuMemAllocFromPoolAsync()". */
#define FREE_KINDS (1u << A_HANDLE | 1u << A_STREAM_ORDERED | 1u << A_IMPORT)
/* Allocations that take none of the device's memory. */
#define NO_MEMORY_KINDS (1u << A_MANAGED | 1u << A_IPC | 1u << A_IMPORT)
/* Handles: numbers, not addresses. */
#define HANDLE_KINDS (1u << A_HANDLE | 1u << A_ARRAY | 1u << A_MIPMAP | 1u << A_IMPORT)
#define HANDLE_TYPE_POSIX_FD 1 /* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */

static struct {
	pthread_mutex_t lock;
	uint64_t used[8];      /* bytes taken on each device */
	uint64_t next_address; /* addresses without pages */
	uint64_t next_handle;
	int kept; /* allocations only an open shareable descriptor keeps */
	struct {
		uint64_t key;
		uint64_t bytes;  /* as asked */
		uint64_t took;   /* of the device's memory, as the driver rounds it (driver_takes) */
		int dev, kind;
		const void *ctx; /* the context it lives in, freed with it; NULL: none (FREE_KINDS) */
		void *pages;     /* real pages (munmap at free), or NULL */
		unsigned handle_types; /* A_HANDLE: the shareable handles cuMemCreate was asked for */
		int refs;        /* A_HANDLE: its handle, this process's imports and mappings of it */
		int handle_refs; /* A_HANDLE: its handle's references (cuMemRetainAllocationHandle adds one) */
		int released;    /* A_HANDLE: its handle released, an import or descriptor keeps it */
		dev_t share_dev; /* A_HANDLE: its shareable descriptors' file (0: never exported) */
		ino_t share_ino;
		uint64_t of;     /* A_IMPORT: the A_HANDLE it imported (0: another process's) */
	} a[MAX_ALLOCS];
} mem = {PTHREAD_MUTEX_INITIALIZER, {0}, 0x7e0000000000ull, 0x1000, 0, {{0}}};

uint64_t fake_mem_total(int dev)
{
	const char *mb = getenv("FAKECUDA_MEM_MB");
	(void)dev;
	return mb && *mb ? strtoull(mb, NULL, 10) << 20 : 80 * GIB;
}

static void reclaim(void);

/* The bytes the real driver takes for an allocation of bytes of kind (H200, driver 580,
 * docs/bench/gpuchecks-2026-11-29, runs G40 and G44): cuMemAlloc's and a pitched allocation's
 * (its pitch times its rows) 512-byte multiples up to 1 MiB and 2 MiB multiples past it, a
 * pool's 512-byte multiples at any size; the rest as asked. */
static uint64_t driver_takes(uint64_t bytes, int kind)
{
	uint64_t unit = kind == A_PTR ? (bytes > (1ull << 20) ? 2ull << 20 : 512)
				      : kind == A_STREAM_ORDERED ? 512 : 1;

	return bytes > UINT64_MAX - (unit - 1) ? UINT64_MAX : (bytes + unit - 1) / unit * unit;
}

/* Takes bytes of device dev's memory for a new allocation of kind; its key to
 * *key. Returns a CUresult. Called under mem.lock. */
static int take(int dev, uint64_t bytes, int kind, uint64_t *key)
{
	int free_entry = -1;
	void *pages = NULL;
	uint64_t took;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (bytes == 0)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	reclaim();
	took = driver_takes(bytes, kind);
	if (kind == A_MANAGED ? bytes > FAKE_VA
			      : !(NO_MEMORY_KINDS & (1u << kind)) && took > fake_mem_total(dev) - mem.used[dev])
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < MAX_ALLOCS && free_entry < 0; i++)
		if (!mem.a[i].key)
			free_entry = i;
	if (free_entry < 0)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	if (HANDLE_KINDS & (1u << kind)) {
		*key = mem.next_handle++;
	} else if (bytes <= FAKE_REAL &&
		   (pages = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) != MAP_FAILED) {
		*key = (uint64_t)(uintptr_t)pages;
	} else {
		pages = NULL;
		*key = mem.next_address;
		mem.next_address += (bytes + GRANULARITY - 1) / GRANULARITY * GRANULARITY;
	}
	mem.a[free_entry].key = *key;
	mem.a[free_entry].bytes = bytes;
	mem.a[free_entry].took = took;
	mem.a[free_entry].dev = dev;
	mem.a[free_entry].kind = kind;
	mem.a[free_entry].ctx = FREE_KINDS & (1u << kind) ? NULL : fake_current_context();
	mem.a[free_entry].pages = pages;
	mem.a[free_entry].refs = 1;
	mem.a[free_entry].handle_refs = 1;
	if (!(NO_MEMORY_KINDS & (1u << kind)))
		mem.used[dev] += took;
	return 0;
}

/* The live entry of key among kinds (a released handle is not), or NULL. Under mem.lock. */
static int entry_of(uint64_t key, unsigned kinds)
{
	for (int i = 0; key && i < MAX_ALLOCS; i++)
		if (mem.a[i].key == key && (kinds & (1u << mem.a[i].kind)) && !mem.a[i].released)
			return i;
	return -1;
}

/* Entry i is freed: its memory given back. Under mem.lock. */
static void free_entry(int i)
{
	if (!(NO_MEMORY_KINDS & (1u << mem.a[i].kind)))
		mem.used[mem.a[i].dev] -= mem.a[i].took;
	if (mem.a[i].pages)
		munmap(mem.a[i].pages, mem.a[i].bytes);
	memset(&mem.a[i], 0, sizeof(mem.a[i]));
}

/* A descriptor of this process open on cuMemCreate's allocation i's shareable file, or -1. */
static int shared_fd(int i)
{
	DIR *dir;
	struct dirent *e;
	struct stat st;
	int found = -1;

	if (!mem.a[i].share_ino || !(dir = opendir("/proc/self/fd")))
		return -1;
	while (found < 0 && (e = readdir(dir))) {
		int fd = (int)strtol(e->d_name, NULL, 10);
		if (e->d_name[0] != '.' && fd != dirfd(dir) && !fstat(fd, &st) &&
		    st.st_dev == mem.a[i].share_dev && st.st_ino == mem.a[i].share_ino)
			found = fd;
	}
	closedir(dir);
	return found;
}

/* One reference of cuMemCreate's allocation i is gone; the last frees it, unless a shareable
 * descriptor of it is still open (measured on an H100, driver 580.159.04: exported, its handle
 * and every import released, it stays until the descriptor is closed). Under mem.lock. */
static void unref(int i)
{
	if (--mem.a[i].refs > 0)
		return;
	if (shared_fd(i) < 0)
		free_entry(i);
	else
		mem.kept++;
}

/* Frees what only descriptors since closed kept: checked where memory is taken or asked about. */
static void reclaim(void)
{
	for (int i = 0; mem.kept && i < MAX_ALLOCS; i++)
		if (mem.a[i].key && mem.a[i].kind == A_HANDLE && mem.a[i].refs <= 0 && shared_fd(i) < 0) {
			free_entry(i);
			mem.kept--;
		}
}

/* Frees the allocation of key (of one of the kinds, a bitmask of 1 << kind): cuMemCreate's once
 * its handle (as often as it was retained), every import of it in this process and every
 * mapping of it are released. Under mem.lock. */
static int give(uint64_t key, unsigned kinds)
{
	int i = entry_of(key, kinds);
	uint64_t of;

	if (i < 0)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (mem.a[i].kind == A_HANDLE) {
		if (--mem.a[i].handle_refs > 0)
			return 0;
		mem.a[i].released = 1;
		unref(i);
	} else if (mem.a[i].kind == A_IMPORT && mem.a[i].of) {
		of = mem.a[i].of;
		free_entry(i);
		for (i = 0; i < MAX_ALLOCS; i++)
			if (mem.a[i].key == of && mem.a[i].kind == A_HANDLE)
				unref(i);
	} else {
		free_entry(i);
	}
	return 0;
}

/* A call's model between its callbacks: entry, the model (under the lock), return. */
#define CALL(cbid, args, model)                                                   \
	do {                                                                      \
		CUresult rc_ = NVT_CUDA_ERROR_UNKNOWN;                            \
		fake_api_callbacks(cbid, NVT_CB_API_SITE_ENTER, &rc_, &(args));   \
		pthread_mutex_lock(&mem.lock);                                    \
		rc_ = (model);                                                    \
		pthread_mutex_unlock(&mem.lock);                                  \
		fake_api_callbacks(cbid, NVT_CB_API_SITE_EXIT, &rc_, &(args));    \
		return rc_;                                                       \
	} while (0)

static int alloc_ptr(NVT_MEM_ALLOC_ARGS *a, int kind)
{
	uint64_t key;
	int rc;

	if (!a->dptr)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((rc = take(fake_device(), a->bytes, kind, &key)) == 0)
		*a->dptr = key;
	return rc;
}

API int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	NVT_MEM_ALLOC_ARGS a = {dptr, bytes};
	CALL(NVT_CBID_cuMemAlloc_v2, a, alloc_ptr(&a, A_PTR));
}

API int cuMemFree_v2(CUdeviceptr dptr)
{
	NVT_MEM_FREE_ARGS a = {dptr};
	CALL(NVT_CBID_cuMemFree_v2, a, give(a.dptr, 1u << A_PTR | 1u << A_MANAGED | 1u << A_STREAM_ORDERED));
}

static int alloc_pitch(NVT_MEM_ALLOC_PITCH_ARGS *a)
{
	uint64_t key, pitch;
	int rc;

	if (!a->dptr || !a->pitch || !a->width || !a->height ||
	    (a->element != 4 && a->element != 8 && a->element != 16))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pitch = (a->width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
	if (a->height > UINT64_MAX / pitch)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = take(fake_device(), pitch * a->height, A_PTR, &key)) == 0) {
		*a->dptr = key;
		*a->pitch = pitch;
	}
	return rc;
}

API int cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			   unsigned element)
{
	NVT_MEM_ALLOC_PITCH_ARGS a = {dptr, pitch, width, height, element};
	CALL(NVT_CBID_cuMemAllocPitch_v2, a, alloc_pitch(&a));
}

API int cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
	struct { CUdeviceptr *dptr; size_t bytes; unsigned flags; } a = {dptr, bytes, flags};
	CALL(NVT_CBID_cuMemAllocManaged, a,
	     (flags != 1 && flags != 2) ? NVT_CUDA_ERROR_INVALID_VALUE
					: alloc_ptr((NVT_MEM_ALLOC_ARGS *)&a, A_MANAGED));
}

/* Stream-ordered: the fake's pools release at once (release threshold 0). The _ptsz forms are
 * what cuGetProcAddress hands out for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (cudart
 * built with per-thread default streams): the same calls, callbacks of their own.
 * cuMemAllocAsync takes from the current pool of the stream's device (cuda.h: "the current
 * mempool of the provided stream's device"), which need not be the current context's;
 * cuMemAllocFromPoolAsync from the pool's device, which need not be the stream's. */
typedef NVT_MEM_ALLOC_ASYNC_ARGS async_args;
typedef struct { CUdeviceptr dptr; CUstream stream; } free_async_args;
typedef NVT_MEM_POOL_ALLOC_ARGS pool_args;

/* Bytes on dev for *dptr, as a stream-ordered allocation; dev -1, a stream or pool the driver
 * does not know, answers unknown. Under mem.lock. */
static int alloc_on(CUdeviceptr *dptr, size_t bytes, int dev, int unknown)
{
	uint64_t key;
	int rc;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (dev < 0)
		return unknown;
	if ((rc = take(dev, bytes, A_STREAM_ORDERED, &key)) == 0)
		*dptr = key;
	return rc;
}

API int cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	async_args a = {dptr, bytes, stream};
	CALL(NVT_CBID_cuMemAllocAsync, a, alloc_on(a.dptr, a.bytes, fake_stream_device(a.stream),
						   NVT_CUDA_ERROR_INVALID_HANDLE));
}

API int cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	async_args a = {dptr, bytes, stream};
	CALL(NVT_CBID_cuMemAllocAsync_ptsz, a, alloc_on(a.dptr, a.bytes, fake_stream_device(a.stream),
						   NVT_CUDA_ERROR_INVALID_HANDLE));
}

API int cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	free_async_args a = {dptr, stream};
	CALL(NVT_CBID_cuMemFreeAsync, a, give(a.dptr, 1u << A_STREAM_ORDERED | 1u << A_PTR));
}

API int cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
	free_async_args a = {dptr, stream};
	CALL(NVT_CBID_cuMemFreeAsync_ptsz, a, give(a.dptr, 1u << A_STREAM_ORDERED | 1u << A_PTR));
}

/* Pools: each device's default pool (DEFAULT_POOL + the device: cuDeviceGetDefaultMemPool, and
 * cuDeviceGetMemPool, as no call here sets another current; CUDA 13.0's cuMemGetDefaultMemPool
 * and cuMemGetMemPool of a device's location), and those cuMemPoolCreate made
 * (MADE_POOL + 1, + 2, ...: a destroyed one's handle is not given again), each on the device of
 * its props' location (CUmemPoolProps: allocType 1, pinned; location type 1, a device; else
 * CUDA_ERROR_INVALID_VALUE, as the driver answers a pool it cannot make). A destroyed pool's
 * allocations live on until freed (cuMemPoolDestroy: "released automatically once there are no
 * more outstanding allocations"). */
#define DEFAULT_POOL 0x8000
#define MADE_POOL 0x9000
#define MAX_POOLS 256
static struct {
	int dev;
	int live;
} pools[MAX_POOLS + 1];
static int n_pools;

/* The device of pool, or -1 for a handle no live pool has. Under mem.lock. */
static int pool_device(const void *pool)
{
	uintptr_t p = (uintptr_t)pool;

	if (p >= DEFAULT_POOL && p < DEFAULT_POOL + (uintptr_t)fake_devices())
		return (int)(p - DEFAULT_POOL);
	if (p > MADE_POOL && p <= MADE_POOL + (uintptr_t)n_pools && pools[p - MADE_POOL].live)
		return pools[p - MADE_POOL].dev;
	return -1;
}

static int pool_create(NVT_MEM_POOL_CREATE_ARGS *a)
{
	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->pool || !a->props || a->props->alloc_type != 1 ||
	    a->props->location_type != NVT_MEM_LOCATION_DEVICE || a->props->location_id < 0 ||
	    a->props->location_id >= fake_devices())
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (n_pools == MAX_POOLS)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	n_pools++;
	pools[n_pools].dev = a->props->location_id;
	pools[n_pools].live = 1;
	*a->pool = (void *)(uintptr_t)(MADE_POOL + n_pools);
	return 0;
}

API int cuMemPoolCreate(void **pool, const void *props)
{
	NVT_MEM_POOL_CREATE_ARGS a = {pool, props};
	CALL(NVT_CBID_cuMemPoolCreate, a, pool_create(&a));
}

/* A default pool cannot be destroyed (CUDA_ERROR_INVALID_VALUE, as the driver answers). */
static int pool_destroy(const void *pool)
{
	uintptr_t p = (uintptr_t)pool;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (p <= MADE_POOL || p > MADE_POOL + (uintptr_t)n_pools || !pools[p - MADE_POOL].live)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pools[p - MADE_POOL].live = 0;
	return 0;
}

API int cuMemPoolDestroy(void *pool)
{
	NVT_HANDLE_ARGS a = {pool};
	CALL(NVT_CBID_cuMemPoolDestroy, a, pool_destroy(a.handle));
}

static int device_pool(NVT_DEVICE_POOL_ARGS *a)
{
	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->pool)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (a->dev < 0 || a->dev >= fake_devices())
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	*a->pool = (void *)(uintptr_t)(DEFAULT_POOL + a->dev);
	return 0;
}

API int cuDeviceGetDefaultMemPool(void **pool, int dev)
{
	NVT_DEVICE_POOL_ARGS a = {pool, dev};
	CALL(NVT_CBID_cuDeviceGetDefaultMemPool, a, device_pool(&a));
}

API int cuDeviceGetMemPool(void **pool, int dev)
{
	NVT_DEVICE_POOL_ARGS a = {pool, dev};
	CALL(NVT_CBID_cuDeviceGetMemPool, a, device_pool(&a));
}

/* CUDA 13.0's forms, by location and allocation type: a device's pinned pool as above; the host's
 * pools and managed ones are not modelled (CUDA_ERROR_NOT_SUPPORTED). */
static int location_pool(NVT_LOCATION_POOL_ARGS *a)
{
	NVT_DEVICE_POOL_ARGS d = {a->pool, a->location ? a->location->id : -1};

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->pool || !a->location || (a->alloc_type != 1 && a->alloc_type != 2))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (a->location->type != NVT_MEM_LOCATION_DEVICE || a->alloc_type != 1)
		return NVT_CUDA_ERROR_NOT_SUPPORTED;
	return device_pool(&d);
}

API int cuMemGetDefaultMemPool(void **pool, const NVT_MEM_LOCATION *location, int type)
{
	NVT_LOCATION_POOL_ARGS a = {pool, location, type};
	CALL(NVT_CBID_cuMemGetDefaultMemPool, a, location_pool(&a));
}

API int cuMemGetMemPool(void **pool, const NVT_MEM_LOCATION *location, int type)
{
	NVT_LOCATION_POOL_ARGS a = {pool, location, type};
	CALL(NVT_CBID_cuMemGetMemPool, a, location_pool(&a));
}

API int cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, void *pool, CUstream stream)
{
	pool_args a = {dptr, bytes, pool, stream};
	CALL(NVT_CBID_cuMemAllocFromPoolAsync, a, alloc_on(a.dptr, a.bytes, pool_device(a.pool),
								 NVT_CUDA_ERROR_INVALID_VALUE));
}

API int cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, void *pool, CUstream stream)
{
	pool_args a = {dptr, bytes, pool, stream};
	CALL(NVT_CBID_cuMemAllocFromPoolAsync_ptsz, a, alloc_on(a.dptr, a.bytes, pool_device(a.pool),
								 NVT_CUDA_ERROR_INVALID_VALUE));
}

static int create(NVT_MEM_CREATE_ARGS *a)
{
	uint64_t key;
	int rc;

	if (!a->handle || !a->prop || a->prop->location_type != NVT_MEM_LOCATION_DEVICE ||
	    a->prop->location_id < 0 || a->size % GRANULARITY)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((rc = take(a->prop->location_id, a->size, A_HANDLE, &key)) == 0) {
		mem.a[entry_of(key, 1u << A_HANDLE)].handle_types = (unsigned)a->prop->handle_types;
		*a->handle = key;
	}
	return rc;
}

API int cuMemCreate(uint64_t *handle, size_t size, const NVT_MEM_ALLOC_PROP *prop,
		    unsigned long long flags)
{
	NVT_MEM_CREATE_ARGS a = {handle, size, prop, flags};
	CALL(NVT_CBID_cuMemCreate, a, create(&a));
}

API int cuMemRelease(uint64_t handle)
{
	NVT_MEM_RELEASE_ARGS a = {handle};
	CALL(NVT_CBID_cuMemRelease, a, give(a.handle, 1u << A_HANDLE | 1u << A_IMPORT));
}

/* The virtual memory API's mappings (cuMemAddressReserve, cuMemMap, cuMemUnmap, cuMemAddressFree):
 * a mapping holds a reference to its allocation (cuda.h's cuMemRelease: "freed when all
 * outstanding mappings to the memory are unmapped and when all outstanding references to the
 * handle ... are also released"; on an H200 a handle released while mapped kept its memory until
 * cuMemUnmap: docs/bench/gpuchecks-2026-11-29), and a retain through it gives the handle it maps,
 * one more release to give. cuMemMap refuses a range that overlaps a mapping; cuMemUnmap ends
 * whole mappings only, one or several in its range ("cuMemUnmap cannot unmap a sub-range of an
 * address range mapped by cuMemCreate / cuMemMap"), and refuses a range that cuts one or holds
 * none. cuMemAddressFree ends no mapping and refuses a range that still holds one (an H200
 * answered CUDA_ERROR_INVALID_VALUE and kept the memory: docs/bench/gpuchecks-2026-11-29, runs
 * G44 and G45). A reservation is an address range only (not checked by cuMemMap). cuMemMap and cuMemUnmap fire
 * their callbacks (the shim follows them, as the retain). */
#define MAX_MAPS 64
static struct {
	uint64_t va, size, handle; /* handle 0: an empty entry */
} maps[MAX_MAPS];

/* cuMemCreate's allocation of handle, released or not (a mapping may keep it), or -1. */
static int mapped_entry(uint64_t handle)
{
	for (int i = 0; handle && i < MAX_ALLOCS; i++)
		if (mem.a[i].key == handle && mem.a[i].kind == A_HANDLE)
			return i;
	return -1;
}

API int cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			    unsigned long long flags)
{
	(void)alignment, (void)addr, (void)flags;
	if (!ptr || !size || size % GRANULARITY)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mem.lock);
	*ptr = mem.next_address;
	mem.next_address += size;
	pthread_mutex_unlock(&mem.lock);
	return 0;
}

/* Whether mapping m and [ptr, ptr + size) share an address. */
static int overlaps(int m, uint64_t ptr, uint64_t size)
{
	return maps[m].handle && maps[m].va < ptr + size && ptr < maps[m].va + maps[m].size;
}

API int cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	int mapped = 0;

	if (!ptr || !size)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mem.lock);
	for (int m = 0; m < MAX_MAPS && !mapped; m++)
		mapped = overlaps(m, ptr, size);
	pthread_mutex_unlock(&mem.lock);
	return mapped ? NVT_CUDA_ERROR_INVALID_VALUE : 0;
}

static int map(CUdeviceptr ptr, size_t size, size_t offset, uint64_t handle)
{
	int i = entry_of(handle, 1u << A_HANDLE), m;

	if (!ptr || i < 0 || !size || offset + size > mem.a[i].bytes)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	for (m = 0; m < MAX_MAPS; m++)
		if (overlaps(m, ptr, size))
			return NVT_CUDA_ERROR_INVALID_VALUE;
	for (m = 0; m < MAX_MAPS && maps[m].handle; m++)
		continue;
	if (m == MAX_MAPS)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	maps[m].va = ptr, maps[m].size = size, maps[m].handle = handle;
	mem.a[i].refs++;
	return 0;
}

API int cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, uint64_t handle, unsigned long long flags)
{
	NVT_MEM_MAP_ARGS a = {ptr, size, offset, handle, flags};
	CALL(NVT_CBID_cuMemMap, a, a.flags ? NVT_CUDA_ERROR_INVALID_VALUE : map(a.ptr, a.size, a.offset, a.handle));
}

/* Whether mapping m lies inside [ptr, ptr + size). */
static int inside(int m, uint64_t ptr, uint64_t size)
{
	return maps[m].va >= ptr && maps[m].va + maps[m].size <= ptr + size;
}

static int unmap(CUdeviceptr ptr, size_t size)
{
	int found = 0;

	if (!ptr || !size)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	for (int m = 0; m < MAX_MAPS; m++) {
		if (overlaps(m, ptr, size) && !inside(m, ptr, size))
			return NVT_CUDA_ERROR_INVALID_VALUE; /* a sub-range of a mapping */
		found |= overlaps(m, ptr, size);
	}
	for (int m = 0; m < MAX_MAPS; m++) {
		int i;
		if (!overlaps(m, ptr, size))
			continue;
		if ((i = mapped_entry(maps[m].handle)) >= 0)
			unref(i);
		maps[m].handle = 0;
	}
	return found ? 0 : NVT_CUDA_ERROR_INVALID_VALUE;
}

API int cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	NVT_MEM_UNMAP_ARGS a = {ptr, size};
	CALL(NVT_CBID_cuMemUnmap, a, unmap(a.ptr, a.size));
}

/* The handle that maps addr, one reference more; a handle released while mapped is given again. */
static int retain(NVT_MEM_RETAIN_ARGS *a)
{
	uint64_t at = (uint64_t)(uintptr_t)a->addr;
	int i;

	for (int m = 0; a->handle && m < MAX_MAPS; m++) {
		if (!maps[m].handle || at < maps[m].va || at >= maps[m].va + maps[m].size ||
		    (i = mapped_entry(maps[m].handle)) < 0)
			continue;
		if (mem.a[i].released) {
			mem.a[i].released = 0;
			mem.a[i].handle_refs = 1;
			mem.a[i].refs++;
		} else {
			mem.a[i].handle_refs++;
		}
		*a->handle = maps[m].handle;
		return 0;
	}
	return NVT_CUDA_ERROR_INVALID_VALUE;
}

API int cuMemRetainAllocationHandle(uint64_t *handle, void *addr)
{
	NVT_MEM_RETAIN_ARGS a = {handle, addr};
	CALL(NVT_CBID_cuMemRetainAllocationHandle, a, retain(&a));
}

/* Shareable handles, POSIX file descriptors alone: an export needs the type among those
 * cuMemCreate was asked for (else 1), and gives a new descriptor each time, close-on-exec; an
 * import gives a new handle each time, in the exporting process too, and the allocation lives
 * until its handle, every import and every descriptor are gone (cuMemRelease: "all outstanding
 * references to the handle (including it's shareable counterparts)"); an import in another
 * process takes none of its memory, as an IPC handle's opening does not (tests/gpu/memdriver.sh
 * measured the import's cost and the exporter's release on an H100, driver 580.159.04:
 * docs/bench/mem-driver-2026-11-25). A descriptor here is a memfd holding the words
 * (SHARE_MAGIC, exporter pid, handle, bytes); the descriptors of one allocation are one file, so
 * that an open one is found. */
#define SHARE_MAGIC 0x66616b6573686172ull
static int share_export(int *fd, uint64_t handle, int type, unsigned long long flags)
{
	int i = entry_of(handle, 1u << A_HANDLE), open_fd;
	uint64_t words[4];
	struct stat st;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!fd || i < 0 || flags || type != HANDLE_TYPE_POSIX_FD ||
	    !(mem.a[i].handle_types & HANDLE_TYPE_POSIX_FD))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((open_fd = shared_fd(i)) >= 0)
		return (*fd = fcntl(open_fd, F_DUPFD_CLOEXEC, 0)) < 0 ? NVT_CUDA_ERROR_OUT_OF_MEMORY : 0;
	words[0] = SHARE_MAGIC;
	words[1] = (uint64_t)getpid();
	words[2] = handle;
	words[3] = mem.a[i].bytes;
	if ((*fd = memfd_create("fakecuda-shareable", MFD_CLOEXEC)) < 0)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	if (write(*fd, words, sizeof(words)) != (ssize_t)sizeof(words) || fstat(*fd, &st)) {
		close(*fd);
		*fd = -1;
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	}
	mem.a[i].share_dev = st.st_dev;
	mem.a[i].share_ino = st.st_ino;
	return 0;
}

API int cuMemExportToShareableHandle(void *shareable, uint64_t handle, int type,
				     unsigned long long flags)
{
	int rc;

	pthread_mutex_lock(&mem.lock);
	rc = share_export(shareable, handle, type, flags);
	pthread_mutex_unlock(&mem.lock);
	return rc;
}

/* The answers: 999 for a descriptor it cannot read (closed, a pipe; on an H100 the driver
 * answered 999 to an exported descriptor opened again through /proc, which is not the same open
 * file), 1 for one that is not an exported allocation's (the driver's for these two is not
 * measured here). */
static int share_import(uint64_t *handle, void *os_handle, int type)
{
	uint64_t words[4], key;
	ssize_t got;
	int of = -1, rc;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!handle || type != HANDLE_TYPE_POSIX_FD)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((got = pread((int)(intptr_t)os_handle, words, sizeof(words), 0)) < 0)
		return NVT_CUDA_ERROR_UNKNOWN;
	if (got != (ssize_t)sizeof(words) || words[0] != SHARE_MAGIC)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (words[1] == (uint64_t)getpid()) {
		/* Its own: a handle released before may live on through the descriptor. */
		for (int i = 0; of < 0 && i < MAX_ALLOCS; i++)
			if (mem.a[i].key == words[2] && mem.a[i].kind == A_HANDLE)
				of = i;
		if (of < 0)
			return NVT_CUDA_ERROR_INVALID_VALUE;
	}
	if ((rc = take(fake_device(), words[3], A_IMPORT, &key)))
		return rc;
	if (of >= 0) {
		if (mem.a[of].refs++ <= 0)
			mem.kept--;
		mem.a[entry_of(key, 1u << A_IMPORT)].of = words[2];
	}
	*handle = key;
	return 0;
}

API int cuMemImportFromShareableHandle(uint64_t *handle, void *os_handle, int type)
{
	struct { uint64_t *handle; void *os_handle; int type; } a = {handle, os_handle, type};
	CALL(NVT_CBID_cuMemImportFromShareableHandle, a, share_import(a.handle, a.os_handle, a.type));
}

/* Arrays: at most 131072 x 65536 (2D) and 16384^3 (3D), as on Hopper. */
static int array(NVT_ARRAY_CREATE_ARGS *a, int three_d)
{
	const NVT_ARRAY3D_DESCRIPTOR *d3 = a->desc;
	const NVT_ARRAY_DESCRIPTOR *d2 = a->desc;
	size_t w, h, d;
	unsigned ch;
	uint64_t key;
	int rc;

	if (!a->handle || !a->desc)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	w = three_d ? d3->width : d2->width;
	h = three_d ? d3->height : d2->height;
	d = three_d ? d3->depth : 1;
	ch = three_d ? d3->channels : d2->channels;
	if (!w || (ch != 1 && ch != 2 && ch != 4) || w > (three_d ? 16384u : 131072u) ||
	    h > (three_d ? 16384u : 65536u) || d > 16384)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((rc = take(fake_device(), (uint64_t)w * (h ? h : 1) * (d ? d : 1) * ch * 4, A_ARRAY,
		       &key)) == 0)
		*a->handle = (void *)(uintptr_t)key;
	return rc;
}

API int cuArrayCreate_v2(void **handle, const NVT_ARRAY_DESCRIPTOR *desc)
{
	NVT_ARRAY_CREATE_ARGS a = {handle, desc, 0};
	CALL(NVT_CBID_cuArrayCreate_v2, a, array(&a, 0));
}

API int cuArray3DCreate_v2(void **handle, const NVT_ARRAY3D_DESCRIPTOR *desc)
{
	NVT_ARRAY_CREATE_ARGS a = {handle, desc, 0};
	CALL(NVT_CBID_cuArray3DCreate_v2, a, array(&a, 1));
}

API int cuArrayDestroy(void *handle)
{
	NVT_HANDLE_ARGS a = {handle};
	CALL(NVT_CBID_cuArrayDestroy, a, give((uint64_t)(uintptr_t)a.handle, 1u << A_ARRAY));
}

/* Bytes of one channel of an element of format (cuda.h's CUarray_format: 8-, 16- and 32-bit
 * integers, half, float; 4 for any other). */
static uint64_t format_bytes(int format)
{
	switch (format) {
	case 0x01: case 0x08: return 1;
	case 0x02: case 0x09: case 0x10: return 2;
	default: return 4;
	}
}

/* An extent of a mipmap's level: halved level times, at least 1 (0, an extent the array does not
 * have, counts as 1). */
static uint64_t level_extent(size_t extent, unsigned level)
{
	return extent >> level ? extent >> level : 1;
}

/* Mipmapped arrays (cuda.h's cuMipmappedArrayCreate): a 3D descriptor whose height and depth are 0
 * for 1D, whose depth is 0 for 2D, or with CUDA_ARRAY3D_LAYERED whose depth counts layers. The
 * level count is clamped to [1, 1 + floor(log2(max(width, height, depth)))]; level i has each
 * extent halved i times (at least 1), its layers all, and takes what its elements take by their
 * format, as the driver takes them (measured on an H100, driver 580.159.04: 8192 x 8192 floats
 * take 256 MiB with one level, 320 with two, 342 with all; 2048 layers of 16384 float4 take 4 GiB
 * with one level, 8 GiB with all, each row 8 rows' memory, as the fake takes a layered array's
 * level at least 8 rows high (not a cubemap's); a half takes half a float's). A cubemap (CUDA_ARRAY3D_CUBEMAP: width and height equal, its depth 6
 * faces, or 6 a layer layered) keeps its faces at every level, as layers (384 and 514 MiB for
 * 4096 x 4096 floats with 1 and 13 levels, H200). At most 32768 x 32768 (1D and 2D, layered with up to 2048 layers, cubemaps) and
 * 16384^3 (3D), as the H100 answers; a width of 0, 3 channels or more than the most: 1. */
static int mipmap(NVT_ARRAY_CREATE_ARGS *a)
{
	const NVT_ARRAY3D_DESCRIPTOR *d = a->desc;
	uint64_t bytes = 0, key;
	size_t widest;
	unsigned levels, most = 1;
	int layered, cube, rc;

	if (!a->handle || !d)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	layered = d->flags & NVT_ARRAY3D_LAYERED;
	cube = d->flags & NVT_ARRAY3D_CUBEMAP;
	if (!d->width || (d->channels != 1 && d->channels != 2 && d->channels != 4) ||
	    (layered ? !d->depth || d->depth > 2048 : !d->height && d->depth) ||
	    (cube && (d->width != d->height || d->depth % 6 || (!layered && d->depth != 6))) ||
	    d->width > 32768 || d->height > 32768 ||
	    (!layered && !cube && d->depth && (d->width > 16384 || d->height > 16384 || d->depth > 16384)))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	widest = d->width > d->height ? d->width : d->height;
	if (!layered && !cube && d->depth > widest)
		widest = d->depth;
	while (widest >> most)
		most++;
	levels = a->levels < 1 ? 1 : a->levels > most ? most : a->levels;
	for (unsigned i = 0; i < levels; i++) {
		uint64_t rows = level_extent(d->height, i);
		if (layered && !cube && rows < 8)
			rows = 8;
		bytes += level_extent(d->width, i) * rows *
			 (layered || cube ? d->depth : level_extent(d->depth, i));
	}
	if ((rc = take(fake_device(), bytes * d->channels * format_bytes(d->format), A_MIPMAP, &key)) == 0)
		*a->handle = (void *)(uintptr_t)key;
	return rc;
}

API int cuMipmappedArrayCreate(void **handle, const NVT_ARRAY3D_DESCRIPTOR *desc, unsigned levels)
{
	NVT_ARRAY_CREATE_ARGS a = {handle, desc, levels};
	CALL(NVT_CBID_cuMipmappedArrayCreate, a, mipmap(&a));
}

API int cuMipmappedArrayDestroy(void *handle)
{
	NVT_HANDLE_ARGS a = {handle};
	CALL(NVT_CBID_cuMipmappedArrayDestroy, a, give((uint64_t)(uintptr_t)a.handle, 1u << A_MIPMAP));
}

/* IPC: a handle is (exporter pid, address, bytes) in its first 24 bytes. */
API int cuIpcGetMemHandle(void *handle, CUdeviceptr dptr)
{
	uint64_t words[8] = {(uint64_t)getpid(), dptr, 0};
	int rc = NVT_CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&mem.lock);
	for (int i = 0; handle && i < MAX_ALLOCS; i++)
		if (mem.a[i].key == dptr && mem.a[i].kind == A_PTR) {
			words[2] = mem.a[i].bytes;
			memcpy(handle, words, sizeof(words));
			rc = 0;
		}
	pthread_mutex_unlock(&mem.lock);
	return rc;
}

static int ipc_open(CUdeviceptr *dptr, const uint64_t *words)
{
	uint64_t key;
	int rc;

	/* The exporter itself cannot open its own handle (the real driver says so too). */
	if (!dptr || words[0] == (uint64_t)getpid() || !words[2])
		return words[0] == (uint64_t)getpid() ? NVT_CUDA_ERROR_INVALID_CONTEXT
						      : NVT_CUDA_ERROR_INVALID_VALUE;
	if ((rc = take(fake_device(), words[2], A_IPC, &key)) == 0)
		*dptr = key;
	return rc;
}

typedef struct {
	char reserved[64];
} ipc_handle; /* CUipcMemHandle */

API int cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, ipc_handle handle, unsigned flags)
{
	struct { CUdeviceptr *dptr; char handle[64]; unsigned flags; } a;
	uint64_t words[8];

	a.dptr = dptr;
	memcpy(a.handle, handle.reserved, 64);
	a.flags = flags;
	memcpy(words, a.handle, sizeof(words));
	CALL(NVT_CBID_cuIpcOpenMemHandle_v2, a, ipc_open(a.dptr, words));
}

API int cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	NVT_MEM_FREE_ARGS a = {dptr};
	CALL(NVT_CBID_cuIpcCloseMemHandle, a, give(a.dptr, 1u << A_IPC));
}

/* The primary context's reset frees what that context holds, as cuCtxDestroy frees a created
 * one's (neither frees cuMemCreate's, cuMemAllocAsync's or cuMemAllocFromPoolAsync's memory:
 * measured on an H100, driver 580.159.04), and the context's RM objects, as the real driver frees
 * them (the device object, and with it its subdevice, channel groups and channels); the next use
 * makes a new context. */
static void primary_gone(int dev)
{
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (mem.a[i].key && mem.a[i].ctx == fake_primary_context(dev))
			give(mem.a[i].key, 1u << mem.a[i].kind);
	fake_rm_context_reset(dev);
	fake_primary_destroyed(dev);
}

static int reset(int dev)
{
	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake_devices())
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	primary_gone(dev);
	return 0;
}

/* The last release destroys the primary context as its reset does (cuda.h; what it frees measured
 * on an H100: tests/gpu/memdriver.sh). */
static int release(int dev)
{
	int last, rc = fake_primary_release(dev, &last);

	if (!rc && last)
		primary_gone(dev);
	return rc;
}

/* cuCtxDestroy: "Destroys and cleans up all resources associated with the context" (cuda.h), but
 * for FREE_KINDS. */
INTERNAL void fake_mem_context_destroyed(const void *ctx)
{
	pthread_mutex_lock(&mem.lock);
	for (int i = 0; ctx && i < MAX_ALLOCS; i++)
		if (mem.a[i].key && mem.a[i].ctx == ctx)
			give(mem.a[i].key, 1u << mem.a[i].kind);
	pthread_mutex_unlock(&mem.lock);
}

API int cuDevicePrimaryCtxReset_v2(int dev)
{
	NVT_DEVICE_ARGS a = {dev};
	CALL(NVT_CBID_cuDevicePrimaryCtxReset_v2, a, reset(a.dev));
}

API int cuDevicePrimaryCtxRelease_v2(int dev)
{
	NVT_DEVICE_ARGS a = {dev};
	CALL(NVT_CBID_cuDevicePrimaryCtxRelease_v2, a, release(a.dev));
}

/* The old names, exported as the driver does: the same calls under ids of their own. */
API int cuDevicePrimaryCtxRelease(int dev)
{
	NVT_DEVICE_ARGS a = {dev};
	CALL(NVT_CBID_cuDevicePrimaryCtxRelease, a, release(a.dev));
}

API int cuDevicePrimaryCtxReset(int dev)
{
	NVT_DEVICE_ARGS a = {dev};
	CALL(NVT_CBID_cuDevicePrimaryCtxReset, a, reset(a.dev));
}

static int info(NVT_MEM_GET_INFO_ARGS *a)
{
	int dev = fake_device();

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->free_bytes || !a->total)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	reclaim();
	*a->total = fake_mem_total(dev);
	*a->free_bytes = fake_mem_total(dev) - mem.used[dev];
	return 0;
}

API int cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	NVT_MEM_GET_INFO_ARGS a = {free_bytes, total};
	CALL(NVT_CBID_cuMemGetInfo_v2, a, info(&a));
}

static int total_mem(NVT_DEVICE_TOTAL_MEM_ARGS *a)
{
	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->bytes)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*a->bytes = fake_mem_total(a->dev);
	return 0;
}

API int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	NVT_DEVICE_TOTAL_MEM_ARGS a = {bytes, dev};
	CALL(NVT_CBID_cuDeviceTotalMem_v2, a, total_mem(&a));
}

/* ---- Pinned host memory, and what a pointer is ---------------------------------------------- */

#define MAX_HOST 256

/* Host memory the GPU maps (cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister): the fake
 * GPU's addresses are the host's. */
static struct {
	uintptr_t start;
	size_t bytes;
	int ours; /* allocated here (freed by cuMemFreeHost) */
} host[MAX_HOST];

static int host_add(void *p, size_t bytes, int ours)
{
	pthread_mutex_lock(&mem.lock);
	for (int i = 0; i < MAX_HOST; i++) {
		if (host[i].start == (uintptr_t)p && host[i].bytes) {
			pthread_mutex_unlock(&mem.lock);
			return NVT_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
		}
	}
	for (int i = 0; i < MAX_HOST; i++)
		if (!host[i].bytes) {
			host[i].start = (uintptr_t)p;
			host[i].bytes = bytes;
			host[i].ours = ours;
			pthread_mutex_unlock(&mem.lock);
			return 0;
		}
	pthread_mutex_unlock(&mem.lock);
	return NVT_CUDA_ERROR_OUT_OF_MEMORY;
}

/* Forgets the range that starts at p (ours: one allocated here). Returns 0, or -1. */
static int host_remove(void *p, int ours)
{
	int rc = -1;

	pthread_mutex_lock(&mem.lock);
	for (int i = 0; i < MAX_HOST; i++)
		if (host[i].bytes && host[i].start == (uintptr_t)p && host[i].ours == ours) {
			host[i].bytes = 0;
			rc = 0;
		}
	pthread_mutex_unlock(&mem.lock);
	return rc;
}

/* FAKECUDA_GLOBAL_CAPTURE=1: another thread of the program captures a graph in the global mode
 * all along; a registration from a thread whose own mode is global then fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900, and on the real driver that capture ends:
 * docs/hardware-facts.md). */
API int cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
	if (!p || !bytes || (flags & ~7u))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (getenv("FAKECUDA_GLOBAL_CAPTURE") && fake_capture_mode() == 0)
		return 900;
	return host_add(p, bytes, 0);
}

API int cuMemHostUnregister(void *p)
{
	return host_remove(p, 0) ? NVT_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : 0;
}

API int cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
	void *p;
	int rc;

	if (!pp || !bytes || (flags & ~15u))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (!(p = calloc(1, bytes)))
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = host_add(p, bytes, 1))) {
		free(p);
		return rc;
	}
	*pp = p;
	return 0;
}

API int cuMemAllocHost_v2(void **pp, size_t bytes)
{
	return cuMemHostAlloc(pp, bytes, 0);
}

API int cuMemFreeHost(void *p)
{
	if (host_remove(p, 1))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	free(p);
	return 0;
}

/* CUpointer_attribute's CONTEXT (1), MEMORY_TYPE (2: CUmemorytype), DEVICE_POINTER (3),
 * IS_MANAGED (8), DEVICE_ORDINAL (9), RANGE_START_ADDR (11), RANGE_SIZE (12) and ACCESS_FLAGS
 * (16: read and write) of the GPU's allocations with an address and of pinned host memory;
 * other memory is unknown to the driver (CUDA_ERROR_INVALID_VALUE, as for pageable memory). */
API int cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr)
{
	unsigned type = 0, managed = 0;
	int dev = -1;
	uint64_t start = 0, bytes = 0;
	const void *ctx = NULL;

	if (!data)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mem.lock);
	for (int i = 0; i < MAX_ALLOCS && !type; i++)
		if (mem.a[i].key && !(HANDLE_KINDS & (1u << mem.a[i].kind)) && ptr >= mem.a[i].key &&
		    ptr - mem.a[i].key < mem.a[i].bytes) {
			type = 2;
			dev = mem.a[i].dev;
			managed = mem.a[i].kind == A_MANAGED;
			start = mem.a[i].key;
			bytes = mem.a[i].bytes;
			ctx = mem.a[i].ctx;
		}
	for (int i = 0; i < MAX_HOST && !type; i++)
		if (host[i].bytes && ptr >= host[i].start && ptr - host[i].start < host[i].bytes) {
			type = 1;
			start = host[i].start;
			bytes = host[i].bytes;
		}
	pthread_mutex_unlock(&mem.lock);
	if (!type)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case 1: *(const void **)data = ctx; return 0;
	case 2: *(unsigned *)data = type; return 0;
	case 3: *(CUdeviceptr *)data = ptr; return 0;
	case 8: *(unsigned *)data = managed; return 0;
	case 9: *(int *)data = type == 2 ? dev : 0; return 0;
	case 11: *(CUdeviceptr *)data = start; return 0;
	case 12: *(size_t *)data = bytes; return 0;
	case 16: *(int *)data = 3; return 0;
	default: return NVT_CUDA_ERROR_INVALID_VALUE;
	}
}

/* Each attribute as cuPointerGetAttribute says it; a pointer unknown to the driver gets 0 in
 * each (CUDA_SUCCESS), an attribute not modelled fails the call. Built without it
 * (FAKECUDA_NO_POINTER_ATTRIBUTES): a driver older than the call. */
#ifndef FAKECUDA_NO_POINTER_ATTRIBUTES
API int cuPointerGetAttributes(unsigned n, int *attributes, void **data, CUdeviceptr ptr)
{
	if (!attributes || !data)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		int rc = cuPointerGetAttribute(data[i], attributes[i], ptr);
		if (rc == NVT_CUDA_ERROR_INVALID_VALUE && data[i]) {
			unsigned char zero[8] = {0};
			if (cuPointerGetAttribute(zero, 2, ptr) == 0)
				return rc; /* known memory, an attribute not modelled */
			memset(data[i], 0, attributes[i] == 2 || attributes[i] == 8 || attributes[i] == 9 ||
							   attributes[i] == 16
						   ? 4
						   : 8);
		} else if (rc) {
			return rc;
		}
	}
	return 0;
}
#endif
