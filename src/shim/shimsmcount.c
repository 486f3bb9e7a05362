/*
 * shimsmcount.c - the SM count a partitioned program is told, and cooperative
 * launches its partition cannot hold (docs/usage.md, "The SM count a
 * program sees"; the rules are src/core/smcount.h's).
 *
 * Libraries size their grids by the SM count CUDA reports: cuBLAS's and
 * CUTLASS's persistent GEMMs launch one CTA per SM, Triton's persistent
 * kernels as many programs as SMs. Told the whole GPU's 132 SMs on a
 * partition of 108, a GEMM leaves 24 CTAs waiting for a second turn
 * (docs/hardware-facts.md, 12). So the shim answers, where a program asks
 * for CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, its partition's count, as
 * MPS's active thread percentage does for its clients. It answers in two
 * ways, which agree:
 *  - The driver-API callback of cuDeviceGetAttribute (id 9), on return: it
 *    rewrites the value the call wrote, whichever way the program reached
 *    the call (linked, dlsym, the entry point cuGetProcAddress handed out:
 *    cudart fetches every driver call so, and cudaGetDeviceProperties and
 *    cudaDeviceGetAttribute call it). This is what serves the LD_PRELOAD
 *    form, where cudart's dlsym on the driver's own handle never finds the
 *    shim's symbols.
 *  - The exports cuDeviceGetAttribute, cuGetProcAddress and
 *    cuGetProcAddress_v2: in the drop-in wrapper (libcuda.so.1 itself, so
 *    cudart's dlsym finds them first) and for programs linked against
 *    libcuda (the preloaded shim comes first in their lookups), the
 *    entry point handed out for cuDeviceGetAttribute is the shim's. These
 *    do not depend on the driver reporting the call.
 * The count: NVT_ENV_SM_COUNT "partition" (the default) tells the
 * partition's count at a program's first query of a GPU, and the same at
 * every later one (a live -p leaves it: libraries cache it, and one that
 * sized a buffer by the first count must not meet a grid sized by a
 * larger one); "follow" tells the partition of the moment; "gpu" tells the
 * driver's count; "fit" keeps, as "partition" does, the largest count up to
 * the partition's for which a grid of clusters of 2-16 SMs sized by it runs
 * in one wave on the partition's GPCs (src/core/smcount.h). A priority task
 * is told its own partition (what it has when not yielding). MPS's
 * percentage, where lower, stays.
 *
 * Clusters: libraries also size persistent grids and pick kernels by what
 * cuOccupancyMaxActiveClusters answers (cuBLAS asks for every cluster size
 * when it starts), and the driver answers for the whole GPU. On that call's
 * return (its driver-API callback, every mode but gpu) the shim tells the
 * clusters the partition of the moment holds on the calling context's GPU
 * (nvt_cluster_count_told), as MPS's share answers for its own SMs.
 *
 * Cooperative launches: every block of a cooperative grid must be resident
 * at once, and a grid sized for more SMs than the partition has would wait
 * forever at its first grid-wide barrier (after a -p that shrank the
 * partition, or with NVT_ENV_SM_COUNT=gpu). The shim follows
 * cuLaunchCooperativeKernel[_ptsz] and cuLaunchKernelEx[_ptsz] (the
 * latter's cooperative attribute) through their entry callbacks, which note
 * the grid and the blocks an SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor)
 * in thread-local words for the launch callback that follows on the same
 * thread (docs/hardware-facts.md, 14); a grid the launch's TPCs cannot hold
 * runs on every TPC of the GPU instead, with one warning.
 *
 * The launch path reads one thread-local word; the answers take no lock
 * (tables of words, first writer wins) and ask the driver which GPU an
 * ordinal is once per ordinal.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "core/prio.h"
#include "core/segment.h"
#include "core/smcount.h"
#include "core/tpcset.h"
#include "shimdriver.h"
#include "shimslot.h"
#include "shimsmcount.h"
#include "shimstate.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_ORDINALS 64 /* CUDA devices whose answer is remembered */

_Static_assert(offsetof(NVT_LAUNCH_CONFIG, attrs) == 40, "CUlaunchConfig");
_Static_assert(offsetof(NVT_LAUNCH_CONFIG, num_attrs) == 48, "CUlaunchConfig");
_Static_assert(sizeof(NVT_LAUNCH_ATTRIBUTE) == 72, "CUlaunchAttribute");
_Static_assert(offsetof(NVT_LAUNCH_KERNEL_EX_ARGS, f) == 8, "cuLaunchKernelEx_params");

static struct {
	int on;   /* this copy answers: it is in charge and the mode is not gpu */
	int mode; /* enum nvt_sm_count_mode */
	int told[MAX_ORDINALS];        /* "partition", "fit": the count told, -1 the driver's; 0 none yet */
} sc;

/* Set while the shim asks the driver for itself (its cache keys, libsmctrl's
 * TPC count): those answers are the driver's own. */
static __thread int asking __attribute__((tls_model("initial-exec")));

__thread struct shim_coop shim_coop __attribute__((tls_model("initial-exec")));

/* ---- The count ------------------------------------------------------------- */

/* The slot of CUDA device dev's GPU, or -1 (the driver's answers are its own while asked). */
static int device_slot(CUdevice dev)
{
	int g;

	asking++;
	g = shim_device_slot(dev);
	asking--;
	return g;
}

/* Slot g's view and partition (a priority task's own) into *view and *own;
 * -1 where it has none. */
static int own_partition(int g, struct nvt_slot_view *view, struct nvt_tpcset *own)
{
	/* A writer inside the slot: the partition launches use now. */
	if (nvt_slot_read(&shim.seg->gpu[g], view, 100) && shim_recall(&shim.masks[g], view))
		return -1;
	if (view->state != NVT_SLOT_SET && !nvt_set_count(&view->prio.own))
		return -1;
	nvt_prio_own_of(view, own);
	return 0;
}

/* The SMs of slot g's partition, or with "fit" the count nvt_sm_count_fit
 * gives for it; 0 for none. */
static unsigned partition_sms(int g)
{
	struct nvt_slot_view view;
	struct nvt_tpcset own;

	if (own_partition(g, &view, &own))
		return 0;
	return sc.mode == NVT_SM_COUNT_FIT ? nvt_sm_count_fit(&view.topo, &own)
					   : nvt_topo_sms(&view.topo, &own);
}

/* What a program that asked how many clusters of a launch fit at once, on
 * its current context's GPU, is told, the driver having answered driver:
 * its partition's clusters (nvt_cluster_count_told), as MPS's share answers
 * for its SMs. Followed at each query, as the partition of the moment. */
static int clusters_told(const NVT_LAUNCH_CONFIG *config, int driver)
{
	struct nvt_slot_view view;
	struct nvt_tpcset own;
	unsigned cluster = 0;
	CUdevice dev = -1;
	int g;

	if (!__atomic_load_n(&sc.on, __ATOMIC_ACQUIRE) || asking || !shim.seg || !config || !shim_cu.ctx_device)
		return driver;
	for (unsigned i = 0; i < config->num_attrs && config->attrs && i < 64; i++)
		if (config->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			const unsigned *d = config->attrs[i].value.cluster_dim;
			uint64_t n = (uint64_t)d[0] * d[1] * d[2];
			cluster = n <= 1024 ? (unsigned)n : 0;
		}
	asking++;
	g = shim_cu.ctx_device(&dev) ? -1 : 0;
	asking--;
	if (g || !cluster || (g = device_slot(dev)) < 0 || own_partition(g, &view, &own))
		return driver;
	return nvt_cluster_count_told(&view.topo, &own, cluster, driver);
}

/* What a program that asked for device dev's SM count is told, the driver
 * having answered sms. */
static int told(CUdevice dev, int sms)
{
	int t, seen = 0, keep = sc.mode == NVT_SM_COUNT_PARTITION || sc.mode == NVT_SM_COUNT_FIT;

	if (!__atomic_load_n(&sc.on, __ATOMIC_ACQUIRE) || asking || !shim.seg || dev < 0)
		return sms;
	if (keep && dev < MAX_ORDINALS &&
	    (seen = __atomic_load_n(&sc.told[dev], __ATOMIC_ACQUIRE)))
		return seen > 0 ? seen : sms;
	t = device_slot(dev);
	t = nvt_sm_count_told(sms, t >= 0 ? partition_sms(t) : 0);
	/* The first answer is the one kept; a thread that lost the race tells the winner's. */
	if (keep && dev < MAX_ORDINALS &&
	    !__atomic_compare_exchange_n(&sc.told[dev], &seen, t != sms ? t : -1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return seen > 0 ? seen : sms;
	return t;
}

CUresult shim_smcount_driver_attribute(int *value, int attribute, CUdevice dev)
{
	nvt_cuDeviceGetAttribute_fn fn =
		(nvt_cuDeviceGetAttribute_fn)shim_driver_own(SHIM_OWN_ATTRIBUTE);
	CUresult rc;

	if (!fn)
		return NVT_CUDA_ERROR_UNKNOWN;
	asking++;
	rc = fn(value, attribute, dev);
	asking--;
	return rc;
}

/* ---- The exports -------------------------------------------------------------- */

static CUresult hook_attribute(int *value, int attribute, CUdevice dev)
{
	nvt_cuDeviceGetAttribute_fn fn =
		(nvt_cuDeviceGetAttribute_fn)shim_driver_own(SHIM_OWN_ATTRIBUTE);
	CUresult rc;

	if (!fn)
		return NVT_CUDA_ERROR_UNKNOWN;
	rc = fn(value, attribute, dev);
	if (rc == 0 && value && attribute == NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
		*value = told(dev, *value);
	return rc;
}

static CUresult hook_get_proc(const char *symbol, void **pfn, int version, uint64_t flags);
static CUresult hook_get_proc_v2(const char *symbol, void **pfn, int version, uint64_t flags,
				 int *status);

/* The entry point to hand out for symbol, the driver having handed out given. */
static void *handed_out(const char *symbol, void *given, int version)
{
	if (sc.mode == NVT_SM_COUNT_GPU)
		return given;
	if (given == shim_driver_own(SHIM_OWN_ATTRIBUTE) ||
	    !strcmp(symbol, "cuDeviceGetAttribute"))
		return (void *)hook_attribute;
	if (given == shim_driver_own(SHIM_OWN_GET_PROC))
		return (void *)hook_get_proc;
	if (given == shim_driver_own(SHIM_OWN_GET_PROC_V2))
		return (void *)hook_get_proc_v2;
	if (!strcmp(symbol, "cuGetProcAddress"))
		return version >= 12000 ? (void *)hook_get_proc_v2 : (void *)hook_get_proc;
	return given;
}

static CUresult hook_get_proc_v2(const char *symbol, void **pfn, int version, uint64_t flags,
				 int *status)
{
	nvt_cuGetProcAddress_v2_fn fn =
		(nvt_cuGetProcAddress_v2_fn)shim_driver_own(SHIM_OWN_GET_PROC_V2);
	CUresult rc;

	if (!fn)
		return NVT_CUDA_ERROR_UNKNOWN;
	rc = fn(symbol, pfn, version, flags, status);
	if (rc == 0 && symbol && pfn && *pfn)
		*pfn = handed_out(symbol, *pfn, version);
	return rc;
}

static CUresult hook_get_proc(const char *symbol, void **pfn, int version, uint64_t flags)
{
	nvt_cuGetProcAddress_fn fn = (nvt_cuGetProcAddress_fn)shim_driver_own(SHIM_OWN_GET_PROC);
	CUresult rc;

	if (!fn)
		return NVT_CUDA_ERROR_UNKNOWN;
	rc = fn(symbol, pfn, version, flags);
	if (rc == 0 && symbol && pfn && *pfn)
		*pfn = handed_out(symbol, *pfn, version);
	return rc;
}

/* The driver's names, for the program (shim.map exports them). */
extern __typeof(hook_attribute) cuDeviceGetAttribute __attribute__((alias("hook_attribute"))) EXPORT;
extern __typeof(hook_get_proc) cuGetProcAddress __attribute__((alias("hook_get_proc"))) EXPORT;
extern __typeof(hook_get_proc_v2) cuGetProcAddress_v2 __attribute__((alias("hook_get_proc_v2"))) EXPORT;

/* ---- Cooperative launches ------------------------------------------------------------ */

/* The blocks of threads threads and shmem bytes of shared memory an SM
 * holds of f at once; 0 if the driver cannot say. This thread's last answer
 * is kept (a program launches the same kernel again and again). */
static unsigned blocks_per_sm(void *f, unsigned threads, unsigned shmem)
{
	static __thread struct {
		void *f;
		unsigned threads, shmem, per_sm;
	} last;
	int n = 0;

	if (last.f == f && last.threads == threads && last.shmem == shmem && f)
		return last.per_sm;
	asking++;
	if (!shim_cu.occupancy || shim_cu.occupancy(&n, f, (int)threads, shmem) || n < 0)
		n = 0;
	asking--;
	last.f = f;
	last.threads = threads;
	last.shmem = shmem;
	last.per_sm = (unsigned)n;
	return (unsigned)n;
}

/* On entry to a launch call: notes a cooperative one's grid for the launch callback. */
static void cooperative_entry(int cbid, const void *args)
{
	const unsigned *grid, *block;
	unsigned shmem;
	void *f;

	shim_coop.blocks = 0;
	if (cbid == NVT_CBID_cuLaunchCooperativeKernel || cbid == NVT_CBID_cuLaunchCooperativeKernel_ptsz) {
		const NVT_LAUNCH_KERNEL_ARGS *a = args;
		f = a->f;
		grid = a->grid;
		block = a->block;
		shmem = a->shared_mem;
	} else {
		const NVT_LAUNCH_KERNEL_EX_ARGS *a = args;
		const NVT_LAUNCH_CONFIG *c = a->config;
		int coop = 0;
		for (unsigned i = 0; c && c->attrs && i < c->num_attrs; i++)
			if (c->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative)
				coop = 1;
		if (!coop)
			return;
		f = a->f;
		grid = c->grid;
		block = c->block;
		shmem = c->shared_mem;
	}
	shim_coop.per_sm = blocks_per_sm(f, block[0] * block[1] * block[2], shmem);
	shim_coop.blocks = (uint64_t)grid[0] * grid[1] * grid[2];
}

static int cooperative_call(int cbid)
{
	return cbid == NVT_CBID_cuLaunchCooperativeKernel || cbid == NVT_CBID_cuLaunchCooperativeKernel_ptsz ||
	       cbid == NVT_CBID_cuLaunchKernelEx || cbid == NVT_CBID_cuLaunchKernelEx_ptsz;
}

int shim_smcount_coop_spills(const struct hw_masks *m)
{
	unsigned sms = nvt_disable_sms(m->disable);

	if (nvt_coop_fits(shim_coop.blocks, shim_coop.per_sm, sms))
		return 0;
	if (shim_first_time(WARN_COOP))
		shim_warn("pid %ld: a cooperative kernel launched %llu blocks that must all run at once "
			  "(%u fit on an SM), more than the %u SMs of this task's partition hold; such "
			  "launches run on every TPC of the GPU instead of waiting forever. Size "
			  "cooperative grids by the SM count CUDA reports (see %s in nvtaskset(1))",
			  (long)getpid(), (unsigned long long)shim_coop.blocks,
			  shim_coop.per_sm ? shim_coop.per_sm : 1, sms, NVT_ENV_SM_COUNT);
	return 1;
}

/* ---- Callbacks and set-up ------------------------------------------------------------- */

void shim_smcount_api(int cbid, const void *data)
{
	struct shim_api_call call;

	if (cbid != NVT_CBID_cuDeviceGetAttribute && cbid != NVT_CBID_cuOccupancyMaxActiveClusters &&
	    !cooperative_call(cbid))
		return;
	if (shim_api_call(cbid, data, &call)) {
		if (shim_first_time(WARN_SMS_API))
			shim_warn("unexpected driver-API callback data (call %d): programs that ask the "
				  "driver through its own handle are told the GPU's SM count, and cooperative "
				  "grids are not checked against the partition",
				  cbid);
		return;
	}
	if (cbid == NVT_CBID_cuDeviceGetAttribute) {
		const NVT_DEVICE_ATTRIBUTE_ARGS *a = (const void *)call.args;
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0 && a->value &&
		    a->attribute == NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
			*a->value = told(a->dev, *a->value);
		return;
	}
	if (cbid == NVT_CBID_cuOccupancyMaxActiveClusters) {
		const NVT_MAX_CLUSTERS_ARGS *a = (const void *)call.args;
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0 && a->clusters)
			*a->clusters = clusters_told(a->config, *a->clusters);
		return;
	}
	if (call.site == NVT_CB_API_SITE_ENTER)
		cooperative_entry(cbid, call.args);
	else
		shim_coop.blocks = 0;
}

void shim_smcount_setup(nvt_cb_enable_fn enable, uint32_t handle)
{
	static const int coop_ids[] = {
		NVT_CBID_cuLaunchCooperativeKernel, NVT_CBID_cuLaunchCooperativeKernel_ptsz,
		NVT_CBID_cuLaunchKernelEx, NVT_CBID_cuLaunchKernelEx_ptsz,
	};
	const char *text = secure_getenv(NVT_ENV_SM_COUNT);

	if (nvt_sm_count_parse(text, &sc.mode)) {
		shim_warn("ignoring malformed %s=\"%.64s\" (partition, follow, gpu or fit); programs are told "
			  "their partition's SM count",
			  NVT_ENV_SM_COUNT, text);
		sc.mode = NVT_SM_COUNT_PARTITION;
	}
	/* Without these callbacks cooperative launches run as any other: a driver
	 * that refuses them is one where they were never measured. */
	for (size_t i = 0; i < sizeof(coop_ids) / sizeof(coop_ids[0]); i++)
		enable(1, handle, NVT_CB_DOMAIN_API, coop_ids[i]);
	if (sc.mode == NVT_SM_COUNT_GPU)
		return;
	/* A driver that does not report the query: the exports still answer
	 * where a program reaches them (the wrapper, programs linked to libcuda). */
	enable(1, handle, NVT_CB_DOMAIN_API, NVT_CBID_cuDeviceGetAttribute);
	enable(1, handle, NVT_CB_DOMAIN_API, NVT_CBID_cuOccupancyMaxActiveClusters);
	__atomic_store_n(&sc.on, 1, __ATOMIC_RELEASE);
}
