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
 * process other than the exporter opens one without taking memory of its own.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakeint.h"

#define GIB (1024ull * 1024 * 1024)
#define FAKE_VA ((uint64_t)1 << 47)
#define FAKE_REAL (64ull << 20)   /* allocations up to this size get real pages */
#define GRANULARITY (2ull << 20)  /* cuMemCreate's (cuMemGetAllocationGranularity) */
#define MAX_ALLOCS 4096
#define PITCH_ALIGN 512

enum kind { A_PTR = 1, A_MANAGED, A_HANDLE, A_ARRAY, A_IPC };

static struct {
	pthread_mutex_t lock;
	uint64_t used[8];      /* bytes taken on each device */
	uint64_t next_address; /* addresses without pages */
	uint64_t next_handle;
	struct {
		uint64_t key;
		uint64_t bytes;
		int dev, kind;
		void *pages; /* real pages (munmap at free), or NULL */
	} a[MAX_ALLOCS];
} mem = {PTHREAD_MUTEX_INITIALIZER, {0}, 0x7e0000000000ull, 0x1000, {{0}}};

uint64_t fake_mem_total(int dev)
{
	const char *mb = getenv("FAKECUDA_MEM_MB");
	(void)dev;
	return mb && *mb ? strtoull(mb, NULL, 10) << 20 : 80 * GIB;
}

/* Takes bytes of device dev's memory for a new allocation of kind; its key to
 * *key. Returns a CUresult. Called under mem.lock. */
static int take(int dev, uint64_t bytes, int kind, uint64_t *key)
{
	int free_entry = -1;
	void *pages = NULL;

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (bytes == 0)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (kind == A_MANAGED ? bytes > FAKE_VA : bytes > fake_mem_total(dev) - mem.used[dev])
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < MAX_ALLOCS && free_entry < 0; i++)
		if (!mem.a[i].key)
			free_entry = i;
	if (free_entry < 0)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	if (kind == A_HANDLE || kind == A_ARRAY) {
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
	mem.a[free_entry].dev = dev;
	mem.a[free_entry].kind = kind;
	mem.a[free_entry].pages = pages;
	if (kind != A_MANAGED && kind != A_IPC)
		mem.used[dev] += bytes;
	return 0;
}

/* Frees the allocation of key (of one of the kinds, a bitmask of 1 << kind). Under mem.lock. */
static int give(uint64_t key, unsigned kinds)
{
	for (int i = 0; key && i < MAX_ALLOCS; i++) {
		if (mem.a[i].key != key || !(kinds & (1u << mem.a[i].kind)))
			continue;
		if (mem.a[i].kind != A_MANAGED && mem.a[i].kind != A_IPC)
			mem.used[mem.a[i].dev] -= mem.a[i].bytes;
		if (mem.a[i].pages)
			munmap(mem.a[i].pages, mem.a[i].bytes);
		memset(&mem.a[i], 0, sizeof(mem.a[i]));
		return 0;
	}
	return NVT_CUDA_ERROR_INVALID_VALUE;
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
	CALL(NVT_CBID_cuMemFree_v2, a, give(a.dptr, 1u << A_PTR | 1u << A_MANAGED));
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

/* Stream-ordered: the fake's pools release at once (release threshold 0). */
API int cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	struct { CUdeviceptr *dptr; size_t bytes; CUstream stream; } a = {dptr, bytes, stream};
	CALL(NVT_CBID_cuMemAllocAsync, a, alloc_ptr((NVT_MEM_ALLOC_ARGS *)&a, A_PTR));
}

API int cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	struct { CUdeviceptr *dptr; size_t bytes; CUstream stream; } a = {dptr, bytes, stream};
	CALL(NVT_CBID_cuMemAllocAsync_ptsz, a, alloc_ptr((NVT_MEM_ALLOC_ARGS *)&a, A_PTR));
}

API int cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	struct { CUdeviceptr dptr; CUstream stream; } a = {dptr, stream};
	CALL(NVT_CBID_cuMemFreeAsync, a, give(a.dptr, 1u << A_PTR));
}

/* A pool of the current device: any handle cuMemPoolCreate gave. */
static int pools;
API int cuMemPoolCreate(void **pool, const void *props)
{
	if (!pool || !props)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*pool = (void *)(uintptr_t)(0x9000 + ++pools);
	return 0;
}

API int cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, void *pool, CUstream stream)
{
	struct { CUdeviceptr *dptr; size_t bytes; void *pool; CUstream stream; } a = {dptr, bytes, pool, stream};
	uintptr_t p = (uintptr_t)pool;
	CALL(NVT_CBID_cuMemAllocFromPoolAsync, a,
	     (p <= 0x9000 || p > 0x9000 + (uintptr_t)pools) ? NVT_CUDA_ERROR_INVALID_VALUE
							 : alloc_ptr((NVT_MEM_ALLOC_ARGS *)&a, A_PTR));
}

static int create(NVT_MEM_CREATE_ARGS *a)
{
	uint64_t key;
	int rc;

	if (!a->handle || !a->prop || a->prop->location_type != NVT_MEM_LOCATION_DEVICE ||
	    a->prop->location_id < 0 || a->size % GRANULARITY)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((rc = take(a->prop->location_id, a->size, A_HANDLE, &key)) == 0)
		*a->handle = key;
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
	CALL(NVT_CBID_cuMemRelease, a, give(a.handle, 1u << A_HANDLE));
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

/* The primary context's reset frees everything on its device: the memory the shim counts, and
 * the context's RM objects, as the real driver frees them (the device object, and with it its
 * subdevice, channel groups and channels); the next use makes a new context. */
static int reset(int dev)
{
	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake_devices())
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (mem.a[i].key && mem.a[i].dev == dev)
			give(mem.a[i].key, 1u << mem.a[i].kind);
	fake_rm_context_reset(dev);
	return 0;
}

API int cuDevicePrimaryCtxReset_v2(int dev)
{
	NVT_DEVICE_ARGS a = {dev};
	CALL(NVT_CBID_cuDevicePrimaryCtxReset_v2, a, reset(a.dev));
}

static int info(NVT_MEM_GET_INFO_ARGS *a)
{
	int dev = fake_device();

	if (!fake_ready())
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->free_bytes || !a->total)
		return NVT_CUDA_ERROR_INVALID_VALUE;
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
