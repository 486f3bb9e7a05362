/*
 * memapp.c - a program that takes and frees GPU memory by every path the
 * shim follows, for tests/e2e/mem.sh. It opens libcuda.so.1 as the CUDA
 * runtime does and takes each entry point from cuGetProcAddress_v2 (as
 * cudart and PyTorch do), or with MEMAPP_VIA=dlsym from the library's own
 * handle. Each word of its command line is one step, run in order; each step
 * prints one line, "STEP rc=N" and what it found:
 *
 *   alloc:B managed:B async:B pool:B create:B   take B bytes (K, M, G suffixes); async on the
 *               stream of the last stream step (NULL before one), pool from the pool of the
 *               last of the pool steps below (before one, a pool made on device 0)
 *   asyncptsz:B poolptsz:B                      take B bytes by the calls' _ptsz forms
 *               (cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
 *   pitch:W:H  array:W:H  array3d:W:H:D         W x H (x D) of 4-byte float elements
 *   mipmap:W:H:LEVELS  mipmap:W:H:D:LEVELS      a mipmapped array of such elements (2D, 3D)
 *   layered:W:H:LAYERS:LEVELS                   a layered one (H 0: layers of 1D arrays)
 *   cubemap:W:LEVELS                            a cubemap one (6 faces of W x W)
 *   free:N      free the N-th allocation taken (0 the first), by its own call
 *   freeptsz:N  free it by cuMemFreeAsync_ptsz
 *   ctx[:V]     create a context on device 0 (cuCtxCreate_vV, V 2, 3 or 4; 2 unless said):
 *               it becomes current, and what the steps after it take lives in it
 *   ctxdestroy  destroy the newest context ctx created (the one before it is current again)
 *   ctxdestroy1 the same by the call's old name (cuGetProcAddress at CUDA 3.2, or the export;
 *               rc=-2: neither gives it)
 *   current:D   retain device D's primary context and make it current
 *   stream      make a stream (cuStreamCreate) in the current context
 *   mkpool:D    make a pool on device D (cuMemPoolCreate, its location device D)
 *   defpool:D   take device D's default pool (cuDeviceGetDefaultMemPool)
 *   devpool:D   take device D's current pool (cuDeviceGetMemPool)
 *   locdefpool:D  locpool:D  the same by CUDA 13.0's cuMemGetDefaultMemPool, cuMemGetMemPool
 *               (location device D, pinned; rc=-2: the driver lacks it)
 *   pooldestroy destroy the pool of the last mkpool (cuMemPoolDestroy)
 *   info        "info rc=0 free=F total=T" (cuMemGetInfo)
 *   total       "total rc=0 bytes=T" (cuDeviceTotalMem of device 0)
 *   reset       cuDevicePrimaryCtxReset of device 0
 *   release     cuDevicePrimaryCtxRelease of device 0 (retained once at the start: the first
 *               release is the last, and destroys the context)
 *   release1    the same by the call's old name (cuGetProcAddress at CUDA 10.0, or the export)
 *   retain      cuDevicePrimaryCtxRetain of device 0, made current: "retain rc=N"
 *   vmap        reserve an address range for the last create:B and map it there
 *               (cuMemAddressReserve, cuMemMap): "vmap rc=N"
 *   vmapall     reserve one range for every create:B so far and map each there, end to end in
 *               their order, a cuMemMap each: "vmapall rc=N" (the range is vmap's after it)
 *   vretain:N   N times cuMemRetainAllocationHandle of that address: "vretain rc=R done=D"
 *   vrelease:N  N times cuMemRelease of the handle vmap mapped: "vrelease rc=R done=D"
 *   vunmap[:B]  cuMemUnmap of vmap's range, one call (of its first B bytes alone with B), then
 *               cuMemAddressFree of the range where the whole was unmapped: "vunmap rc=N"
 *   vfree       cuMemAddressFree of vmap's range alone: "vfree rc=N"
 *   export:FILE write the last allocation's IPC handle to FILE
 *   import:FILE open the IPC handle in FILE (cuIpcOpenMemHandle)
 *   shexport:FILE  export the last allocation (a create:B, made with POSIX file descriptors
 *               among its handle types) to a file descriptor, and write "PID FD" to FILE
 *   shimport:FILE  import the descriptor FILE names (pidfd_getfd's copy, or /proc/PID/fd/FD) by
 *               cuMemImportFromShareableHandle; the handle is an allocation free:N releases
 *   fill        cuMemAlloc 1 MiB at a time until it fails: "fill rc=R got=BYTES"
 *   churn:N:B   N times cuMemAlloc of B bytes then its cuMemFree: "churn rc=R pairs=DONE"
 *               (tests/bench/allocpath.py counts the shim's instructions a pair)
 *   wait:FILE   write "ready" to FILE.ready, then wait until FILE exists
 *   fork:FILE   fork a child that takes nothing and waits as wait:FILE does,
 *               then ends: "fork rc=0 pid=CHILD"
 *   exec        run this program again (the same process, what it holds left
 *               behind as at its death) with the words after it as its steps
 *
 * Exit status: 0, or 2 when the driver cannot be used.
 *
 * Over 500 lines on purpose: one program with a word for every call that
 * takes, frees or places GPU memory, so that a test strings any of them
 * together in one process, as a program does.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"

typedef struct {
	char reserved[64];
} ipc_handle;

#define CALLS(X)                                                                   \
	X(cuInit, (unsigned))                                                      \
	X(cuDevicePrimaryCtxRetain, (void **, int))                                \
	X(cuCtxSetCurrent, (void *))                                               \
	X(cuMemAlloc, (CUdeviceptr *, size_t))                                     \
	X(cuMemAllocPitch, (CUdeviceptr *, size_t *, size_t, size_t, unsigned))    \
	X(cuMemFree, (CUdeviceptr))                                                \
	X(cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned))                    \
	X(cuMemAllocAsync, (CUdeviceptr *, size_t, void *))                        \
	X(cuMemFreeAsync, (CUdeviceptr, void *))                                   \
	X(cuMemPoolCreate, (void **, const void *))                                \
	X(cuMemPoolDestroy, (void *))                                              \
	X(cuDeviceGetDefaultMemPool, (void **, int))                               \
	X(cuDeviceGetMemPool, (void **, int))                                      \
	X(cuStreamCreate, (void **, unsigned))                                     \
	X(cuMemAllocFromPoolAsync, (CUdeviceptr *, size_t, void *, void *))        \
	X(cuMemCreate, (uint64_t *, size_t, const NVT_MEM_ALLOC_PROP *, unsigned long long)) \
	X(cuMemRelease, (uint64_t))                                                \
	X(cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long)) \
	X(cuMemAddressFree, (CUdeviceptr, size_t))                                 \
	X(cuMemMap, (CUdeviceptr, size_t, size_t, uint64_t, unsigned long long))   \
	X(cuMemUnmap, (CUdeviceptr, size_t))                                       \
	X(cuMemRetainAllocationHandle, (uint64_t *, void *))                       \
	X(cuArrayCreate, (void **, const NVT_ARRAY_DESCRIPTOR *))                  \
	X(cuArray3DCreate, (void **, const NVT_ARRAY3D_DESCRIPTOR *))              \
	X(cuArrayDestroy, (void *))                                                \
	X(cuMipmappedArrayCreate, (void **, const NVT_ARRAY3D_DESCRIPTOR *, unsigned)) \
	X(cuMipmappedArrayDestroy, (void *))                                       \
	X(cuCtxDestroy, (void *))                                                  \
	X(cuMemExportToShareableHandle, (void *, uint64_t, int, unsigned long long)) \
	X(cuMemImportFromShareableHandle, (uint64_t *, void *, int))               \
	X(cuIpcGetMemHandle, (ipc_handle *, CUdeviceptr))                          \
	X(cuIpcOpenMemHandle, (CUdeviceptr *, ipc_handle, unsigned))               \
	X(cuMemGetInfo, (size_t *, size_t *))                                      \
	X(cuDeviceTotalMem, (size_t *, int))                                       \
	X(cuDevicePrimaryCtxReset, (int))                                          \
	X(cuDevicePrimaryCtxRelease, (int))

#define TYPEDEF(name, params) typedef CUresult name##_ft params;
CALLS(TYPEDEF)
#define POINTER(name, params) static name##_ft *p_##name;
CALLS(POINTER)

/* The _ptsz forms, and cuCtxCreate's three (what cuGetProcAddress gives for "cuCtxCreate" at
 * CUDA 4.0, 11.4 and 12.5). */
static cuMemAllocAsync_ft *p_alloc_async_ptsz;
static cuMemFreeAsync_ft *p_free_async_ptsz;
static cuMemAllocFromPoolAsync_ft *p_alloc_pool_ptsz;
static CUresult (*p_ctx_create_v2)(void **, unsigned, int);
static CUresult (*p_ctx_create_v3)(void **, void *, int, unsigned, int);
static CUresult (*p_ctx_create_v4)(void **, void *, unsigned, int);
static CUresult (*p_release_v1)(int); /* cuDevicePrimaryCtxRelease by its old name */
static CUresult (*p_destroy_v1)(void *); /* cuCtxDestroy by its old name (NULL: none) */
/* CUDA 13.0's cuMemGetDefaultMemPool and cuMemGetMemPool (NULL: a driver without them). */
static CUresult (*p_location_pool[2])(void **, const NVT_MEM_LOCATION *, int);

/* The contexts ctx created, newest last. */
static void *contexts[128];
static int n_contexts;

#define HANDLE_TYPE_POSIX_FD 1 /* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */

/* The stream async:B and pool:B use, and the pool pool:B takes from (NULL: one made at the first
 * pool:B, on device 0). */
static void *the_stream, *the_pool;

/* Makes a pool on device dev (CUmemPoolProps: allocType 1, pinned; location type 1, a device,
 * and its id), into the_pool. Returns the CUresult. */
static int pool_create(int dev)
{
	int props[22] = {1, 0, 1, dev}; /* 88 bytes */

	return p_cuMemPoolCreate(&the_pool, props);
}

/* The last create:B's handle and size, and where vmap mapped it (0: nowhere). */
static uint64_t vm_handle, vm_size;
static CUdeviceptr vm_at;

/* What each allocation was taken by, to free it by its own call. */
static struct {
	char kind[16];
	uint64_t key;
	uint64_t bytes; /* a create:B's B */
} taken[256];
static int n_taken;

static void load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	const char *via = getenv("MEMAPP_VIA");
	nvt_cuGetProcAddress_v2_fn get = lib ? (nvt_cuGetProcAddress_v2_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
	int by_dlsym = via && !strcmp(via, "dlsym");

	if (!get) {
		fprintf(stderr, "memapp: no libcuda.so.1 with cuGetProcAddress_v2\n");
		exit(2);
	}
	/* The names as cuda.h spells them: cuGetProcAddress finds their versions. */
#define LOAD(name, params)                                                                    \
	if (by_dlsym) {                                                                       \
		p_##name = (name##_ft *)dlsym(lib, #name "_v2");                              \
		if (!p_##name)                                                                \
			p_##name = (name##_ft *)dlsym(lib, #name);                            \
	} else if (get(#name, (void **)&p_##name, 13000, 0, NULL)) {                          \
		p_##name = NULL;                                                              \
	}                                                                                     \
	if (!p_##name) {                                                                      \
		fprintf(stderr, "memapp: no %s\n", #name);                                    \
		exit(2);                                                                      \
	}
	CALLS(LOAD)
	/* The entry point cuGetProcAddress gives for name (version, flags), or the export. */
#define FIND(ptr, name, version, flags, exported)                                             \
	if (by_dlsym) {                                                                       \
		*(void **)&(ptr) = dlsym(lib, exported);                                      \
	} else if (get(name, (void **)&(ptr), version, flags, NULL)) {                        \
		(ptr) = NULL;                                                                 \
	}                                                                                     \
	if (!(ptr)) {                                                                         \
		fprintf(stderr, "memapp: no %s\n", exported);                                 \
		exit(2);                                                                      \
	}
	FIND(p_alloc_async_ptsz, "cuMemAllocAsync", 13000, NVT_GET_PROC_ADDRESS_PER_THREAD,
	     "cuMemAllocAsync_ptsz")
	FIND(p_free_async_ptsz, "cuMemFreeAsync", 13000, NVT_GET_PROC_ADDRESS_PER_THREAD,
	     "cuMemFreeAsync_ptsz")
	FIND(p_alloc_pool_ptsz, "cuMemAllocFromPoolAsync", 13000, NVT_GET_PROC_ADDRESS_PER_THREAD,
	     "cuMemAllocFromPoolAsync_ptsz")
	FIND(p_ctx_create_v2, "cuCtxCreate", 4000, 0, "cuCtxCreate_v2")
	FIND(p_ctx_create_v3, "cuCtxCreate", 11040, 0, "cuCtxCreate_v3")
	FIND(p_ctx_create_v4, "cuCtxCreate", 12050, 0, "cuCtxCreate_v4")
	FIND(p_release_v1, "cuDevicePrimaryCtxRelease", 10000, 0, "cuDevicePrimaryCtxRelease")
	if (by_dlsym)
		*(void **)&p_destroy_v1 = dlsym(lib, "cuCtxDestroy");
	else if (get("cuCtxDestroy", (void **)&p_destroy_v1, 3020, 0, NULL))
		p_destroy_v1 = NULL;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "cuMemGetMemPool" : "cuMemGetDefaultMemPool";
		if (by_dlsym)
			*(void **)&p_location_pool[i] = dlsym(lib, name);
		else if (get(name, (void **)&p_location_pool[i], 13000, 0, NULL))
			p_location_pool[i] = NULL;
	}
}

static uint64_t size_of(const char *text)
{
	char *end;
	uint64_t n = strtoull(text, &end, 10);

	switch (*end) {
	case 'K': return n << 10;
	case 'M': return n << 20;
	case 'G': return n << 30;
	default: return n;
	}
}

static void remember(const char *kind, uint64_t key, uint64_t bytes)
{
	if (n_taken < 256) {
		snprintf(taken[n_taken].kind, sizeof(taken[n_taken].kind), "%s", kind);
		taken[n_taken].bytes = bytes;
		taken[n_taken++].key = key;
	}
}

/* Takes memory as step word says (kind:args). Returns the CUresult. */
static int take(const char *kind, const char *args)
{
	CUdeviceptr p = 0;
	int rc;

	if (!strcmp(kind, "alloc"))
		rc = p_cuMemAlloc(&p, size_of(args));
	else if (!strcmp(kind, "managed"))
		rc = p_cuMemAllocManaged(&p, size_of(args), 1);
	else if (!strcmp(kind, "async"))
		rc = p_cuMemAllocAsync(&p, size_of(args), the_stream);
	else if (!strcmp(kind, "asyncptsz"))
		rc = p_alloc_async_ptsz(&p, size_of(args), the_stream);
	else if (!strcmp(kind, "pool") || !strcmp(kind, "poolptsz")) {
		if (!the_pool && (rc = pool_create(0)))
			return rc;
		rc = (kind[4] ? p_alloc_pool_ptsz : p_cuMemAllocFromPoolAsync)(&p, size_of(args), the_pool,
									    the_stream);
	} else if (!strcmp(kind, "mipmap") || !strcmp(kind, "layered") || !strcmp(kind, "cubemap")) {
		NVT_ARRAY3D_DESCRIPTOR d = {0, 0, 0, 0x20, 1, kind[0] == 'l' ? NVT_ARRAY3D_LAYERED : 0};
		size_t n[4] = {0};
		unsigned levels;
		void *a = NULL;
		int got = sscanf(args, "%zu:%zu:%zu:%zu", &n[0], &n[1], &n[2], &n[3]);
		d.width = n[0];
		d.height = n[1];
		d.depth = got == 4 ? n[2] : 0;
		levels = (unsigned)n[got == 4 ? 3 : 2];
		if (kind[0] == 'c') {
			d.flags = NVT_ARRAY3D_CUBEMAP;
			d.height = d.width;
			d.depth = 6;
			levels = (unsigned)n[1];
		}
		rc = p_cuMipmappedArrayCreate(&a, &d, levels);
		p = (uint64_t)(uintptr_t)a;
	} else if (!strcmp(kind, "create")) {
		NVT_MEM_ALLOC_PROP prop = {.type = 1, .handle_types = HANDLE_TYPE_POSIX_FD,
					   .location_type = NVT_MEM_LOCATION_DEVICE};
		uint64_t h = 0;
		rc = p_cuMemCreate(&h, size_of(args), &prop, 0);
		p = h;
		if (rc == 0)
			vm_handle = h, vm_size = size_of(args);
	} else if (!strcmp(kind, "pitch")) {
		size_t pitch = 0, w = 0, h = 0;
		sscanf(args, "%zu:%zu", &w, &h);
		rc = p_cuMemAllocPitch(&p, &pitch, w, h, 4);
	} else if (!strcmp(kind, "array")) {
		NVT_ARRAY_DESCRIPTOR d = {0, 0, 0x20, 1};
		void *a = NULL;
		sscanf(args, "%zu:%zu", &d.width, &d.height);
		rc = p_cuArrayCreate(&a, &d);
		p = (uint64_t)(uintptr_t)a;
	} else if (!strcmp(kind, "array3d")) {
		NVT_ARRAY3D_DESCRIPTOR d = {0, 0, 0, 0x20, 1, 0};
		void *a = NULL;
		sscanf(args, "%zu:%zu:%zu", &d.width, &d.height, &d.depth);
		rc = p_cuArray3DCreate(&a, &d);
		p = (uint64_t)(uintptr_t)a;
	} else {
		return -1; /* no such step */
	}
	if (rc == 0)
		remember(kind, p, size_of(args));
	return rc;
}

static int give(int n)
{
	const char *k;
	uint64_t key;

	if (n < 0 || n >= n_taken)
		return -1;
	k = taken[n].kind;
	key = taken[n].key;
	if (!strcmp(k, "create") || !strcmp(k, "shimport"))
		return p_cuMemRelease(key);
	if (!strncmp(k, "array", 5))
		return p_cuArrayDestroy((void *)(uintptr_t)key);
	if (!strcmp(k, "mipmap") || !strcmp(k, "layered") || !strcmp(k, "cubemap"))
		return p_cuMipmappedArrayDestroy((void *)(uintptr_t)key);
	if (!strncmp(k, "async", 5) || !strncmp(k, "pool", 4))
		return p_cuMemFreeAsync(key, NULL);
	return p_cuMemFree(key);
}

/* Creates a context by cuCtxCreate's form version (2, 3 or 4). Returns the CUresult. */
static int ctx_create(long version)
{
	void *ctx = NULL;
	int rc;

	if (n_contexts >= (int)(sizeof(contexts) / sizeof(contexts[0])))
		return -1;
	if (version == 2)
		rc = p_ctx_create_v2(&ctx, 0, 0);
	else if (version == 3)
		rc = p_ctx_create_v3(&ctx, NULL, 0, 0, 0);
	else if (version == 4)
		rc = p_ctx_create_v4(&ctx, NULL, 0, 0);
	else
		return -1;
	if (rc == 0)
		contexts[n_contexts++] = ctx;
	return rc;
}

/* Exports the last allocation to a file descriptor, and writes "PID FD" to file. */
static int share_export(const char *file)
{
	int fd = -1, rc;
	FILE *f;

	if (!n_taken)
		return -1;
	if ((rc = p_cuMemExportToShareableHandle(&fd, taken[n_taken - 1].key, HANDLE_TYPE_POSIX_FD, 0)))
		return rc;
	if (!(f = fopen(file, "w")))
		return -1;
	fprintf(f, "%ld %d\n", (long)getpid(), fd);
	return fclose(f) ? -1 : 0;
}

/* A copy of process pid's descriptor fd: pidfd_getfd's (the same open file, as the driver needs:
 * its answer to a descriptor opened again is 999), or where that is refused (a kernel before
 * 5.6, ptrace rules) the file opened again through /proc (the fake's memfd is the same file). */
static int copy_fd(long pid, int fd)
{
	char path[64];
	long pidfd = syscall(SYS_pidfd_open, (pid_t)pid, 0), own = -1;

	if (pidfd >= 0) {
		own = syscall(SYS_pidfd_getfd, (int)pidfd, fd, 0);
		close((int)pidfd);
	}
	if (own >= 0)
		return (int)own;
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", pid, fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Imports the descriptor file names ("PID FD"), copied from that process. */
static int share_import(const char *file)
{
	long pid = 0;
	int fd = -1, own, rc;
	uint64_t h = 0;
	FILE *f = fopen(file, "r");

	if (!f || fscanf(f, "%ld %d", &pid, &fd) != 2) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	if ((own = copy_fd(pid, fd)) < 0)
		return -1;
	rc = p_cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)own, HANDLE_TYPE_POSIX_FD);
	close(own);
	if (rc == 0)
		remember("shimport", h, 0);
	return rc;
}

static void wait_for(const char *file)
{
	char ready[512];
	FILE *f;
	struct timespec ms = {0, 1000000};

	snprintf(ready, sizeof(ready), "%s.ready", file);
	if ((f = fopen(ready, "w"))) {
		fputs("ready\n", f);
		fclose(f);
	}
	/* The test makes FILE; it ends this program if it never does. */
	while (access(file, F_OK))
		nanosleep(&ms, NULL);
}

/* vmapall: one range reserved for every create:B so far, each mapped there end to end (the range
 * is vm_at, vm_size after it). Returns the first CUresult that is not 0, or 0. */
static int map_all(void)
{
	uint64_t span = 0, at = 0;
	int rc;

	for (int i = 0; i < n_taken; i++)
		if (!strcmp(taken[i].kind, "create"))
			span += taken[i].bytes;
	if (!span || (rc = p_cuMemAddressReserve(&vm_at, span, 0, 0, 0)))
		return -1;
	vm_size = span;
	for (int i = 0; i < n_taken; i++)
		if (!strcmp(taken[i].kind, "create")) {
			if ((rc = p_cuMemMap(vm_at + at, taken[i].bytes, 0, taken[i].key, 0)))
				return rc;
			at += taken[i].bytes;
		}
	return 0;
}

/* Runs step word (args after its colon, or NULL) if it is one of the virtual memory API's.
 * Returns 1 if it was. */
static int vm_step(const char *word, const char *args)
{
	long n = args ? strtol(args, NULL, 10) : 0, done = 0;
	uint64_t h;
	int rc = 0;

	if (!strcmp(word, "vmap")) {
		rc = vm_handle ? p_cuMemAddressReserve(&vm_at, vm_size, 0, 0, 0) : -1;
		if (rc == 0 && (rc = p_cuMemMap(vm_at, vm_size, 0, vm_handle, 0)))
			vm_at = 0;
		printf("vmap rc=%d\n", rc);
	} else if (!strcmp(word, "vmapall")) {
		printf("vmapall rc=%d\n", map_all());
	} else if (!strcmp(word, "vretain")) {
		while (done < n && !(rc = p_cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)vm_at)))
			done++;
		printf("vretain rc=%d done=%ld\n", rc, done);
	} else if (!strcmp(word, "vrelease")) {
		while (done < n && !(rc = p_cuMemRelease(vm_handle)))
			done++;
		printf("vrelease rc=%d done=%ld\n", rc, done);
	} else if (!strcmp(word, "vunmap")) {
		uint64_t part = args ? size_of(args) : vm_size;
		rc = p_cuMemUnmap(vm_at, part);
		printf("vunmap rc=%d\n", rc || part != vm_size ? rc : p_cuMemAddressFree(vm_at, vm_size));
	} else if (!strcmp(word, "vfree")) {
		printf("vfree rc=%d\n", p_cuMemAddressFree(vm_at, vm_size));
	} else {
		return 0;
	}
	return 1;
}

/* Runs one step of the command line. */
static void step(char *word)
{
	char *args = strchr(word, ':');
	size_t free_bytes = 0, total = 0;
	int rc;

	if (args)
		*args++ = '\0';
	if (vm_step(word, args)) {
		/* (said there) */
	} else if (!strcmp(word, "free")) {
		printf("free rc=%d\n", give(atoi(args)));
	} else if (!strcmp(word, "freeptsz")) {
		long n = args ? strtol(args, NULL, 10) : -1;
		rc = n >= 0 && n < n_taken ? p_free_async_ptsz(taken[n].key, NULL) : -1;
		printf("freeptsz rc=%d\n", rc);
	} else if (!strcmp(word, "ctx")) {
		printf("ctx rc=%d\n", ctx_create(args ? strtol(args, NULL, 10) : 2));
	} else if (!strcmp(word, "ctxdestroy")) {
		rc = n_contexts ? p_cuCtxDestroy(contexts[n_contexts - 1]) : -1;
		if (rc == 0)
			n_contexts--;
		printf("ctxdestroy rc=%d\n", rc);
	} else if (!strcmp(word, "ctxdestroy1")) {
		rc = !p_destroy_v1 ? -2 : n_contexts ? p_destroy_v1(contexts[n_contexts - 1]) : -1;
		if (rc == 0)
			n_contexts--;
		printf("ctxdestroy1 rc=%d\n", rc);
	} else if (!strcmp(word, "shexport")) {
		printf("shexport rc=%d\n", share_export(args));
	} else if (!strcmp(word, "shimport")) {
		printf("shimport rc=%d\n", share_import(args));
	} else if (!strcmp(word, "info")) {
		rc = p_cuMemGetInfo(&free_bytes, &total);
		printf("info rc=%d free=%zu total=%zu\n", rc, free_bytes, total);
	} else if (!strcmp(word, "total")) {
		rc = p_cuDeviceTotalMem(&total, 0);
		printf("total rc=%d bytes=%zu\n", rc, total);
	} else if (!strcmp(word, "reset")) {
		printf("reset rc=%d\n", p_cuDevicePrimaryCtxReset(0));
		n_taken = 0;
	} else if (!strcmp(word, "release")) {
		printf("release rc=%d\n", p_cuDevicePrimaryCtxRelease(0));
	} else if (!strcmp(word, "release1")) {
		printf("release1 rc=%d\n", p_release_v1(0));
	} else if (!strcmp(word, "retain")) {
		void *ctx = NULL;
		rc = p_cuDevicePrimaryCtxRetain(&ctx, 0);
		if (!rc)
			rc = p_cuCtxSetCurrent(ctx);
		printf("retain rc=%d\n", rc);
	} else if (!strcmp(word, "current")) {
		void *ctx = NULL;
		rc = p_cuDevicePrimaryCtxRetain(&ctx, (int)(args ? strtol(args, NULL, 10) : 0));
		if (!rc)
			rc = p_cuCtxSetCurrent(ctx);
		printf("current rc=%d\n", rc);
	} else if (!strcmp(word, "stream")) {
		printf("stream rc=%d\n", p_cuStreamCreate(&the_stream, 0));
	} else if (!strcmp(word, "mkpool")) {
		printf("mkpool rc=%d\n", pool_create((int)(args ? strtol(args, NULL, 10) : 0)));
	} else if (!strcmp(word, "defpool")) {
		printf("defpool rc=%d\n", p_cuDeviceGetDefaultMemPool(&the_pool, (int)(args ? strtol(args, NULL, 10) : 0)));
	} else if (!strcmp(word, "devpool")) {
		printf("devpool rc=%d\n", p_cuDeviceGetMemPool(&the_pool, (int)(args ? strtol(args, NULL, 10) : 0)));
	} else if (!strcmp(word, "locdefpool") || !strcmp(word, "locpool")) {
		NVT_MEM_LOCATION at = {NVT_MEM_LOCATION_DEVICE, (int)(args ? strtol(args, NULL, 10) : 0)};
		int which = word[3] != 'd';
		rc = p_location_pool[which] ? p_location_pool[which](&the_pool, &at, 1) : -2;
		printf("%s rc=%d\n", word, rc);
	} else if (!strcmp(word, "pooldestroy")) {
		printf("pooldestroy rc=%d\n", the_pool ? p_cuMemPoolDestroy(the_pool) : -1);
	} else if (!strcmp(word, "export")) {
		ipc_handle h;
		FILE *f;
		rc = n_taken ? p_cuIpcGetMemHandle(&h, taken[n_taken - 1].key) : -1;
		if (rc == 0 && (f = fopen(args, "w"))) {
			fwrite(&h, sizeof(h), 1, f);
			fclose(f);
		}
		printf("export rc=%d\n", rc);
	} else if (!strcmp(word, "import")) {
		ipc_handle h;
		CUdeviceptr p = 0;
		FILE *f = fopen(args, "r");
		rc = f && fread(&h, sizeof(h), 1, f) == 1 ? p_cuIpcOpenMemHandle(&p, h, 1) : -1;
		if (f)
			fclose(f);
		printf("import rc=%d\n", rc);
	} else if (!strcmp(word, "fill")) {
		CUdeviceptr p;
		uint64_t got = 0;
		while ((rc = p_cuMemAlloc(&p, 1 << 20)) == 0)
			got += 1 << 20;
		printf("fill rc=%d got=%llu\n", rc, (unsigned long long)got);
	} else if (!strcmp(word, "churn")) {
		char *bytes = args ? strchr(args, ':') : NULL;
		long pairs = args ? strtol(args, NULL, 10) : 0, done = 0;
		uint64_t size = bytes ? size_of(bytes + 1) : 0;
		CUdeviceptr p;
		rc = 0;
		while (done < pairs && !(rc = p_cuMemAlloc(&p, size)) && !(rc = p_cuMemFree(p)))
			done++;
		printf("churn rc=%d pairs=%ld\n", rc, done);
	} else if (!strcmp(word, "wait")) {
		wait_for(args);
		printf("wait rc=0\n");
	} else if (!strcmp(word, "fork")) {
		pid_t child = fork();
		if (child == 0) {
			wait_for(args);
			_exit(0);
		}
		printf("fork rc=%d pid=%ld\n", child > 0 ? 0 : -1, (long)child);
	} else {
		printf("%s rc=%d\n", word, take(word, args ? args : "0"));
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	void *ctx;

	load();
	if (p_cuInit(0) || p_cuDevicePrimaryCtxRetain(&ctx, 0) || p_cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "memapp: cannot start CUDA\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "exec")) {
			argv[i] = argv[0];
			execv("/proc/self/exe", argv + i);
			printf("exec rc=-1\n");
			return 2;
		}
		step(argv[i]);
	}
	return 0;
}
