/*
 * shimdriver.c - the shim's table of CUDA driver entry points
 * (shimdriver.h): each one's name written once, beside the field it fills.
 * Set-up and slow paths only; the launch path reads filled entries.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "core/text.h"
#include "shimdriver.h"

struct shim_driver shim_cu;

#define ENTRY(field, name) {offsetof(struct shim_driver, field), name}

/* Every entry of shim_cu but get_export_table (export_table_in). */
static const struct {
	size_t at;        /* the field's offset in struct shim_driver */
	const char *name; /* the driver's name of the entry point */
} entries[] = {
	ENTRY(init, "cuInit"),
	ENTRY(version, "cuDriverGetVersion"),
	ENTRY(device_count, "cuDeviceGetCount"),
	ENTRY(device_get, "cuDeviceGet"),
	ENTRY(device_uuid, "cuDeviceGetUuid"),
	ENTRY(ctx_device, "cuCtxGetDevice"),
	ENTRY(primary_state, "cuDevicePrimaryCtxGetState"),
	ENTRY(ctx_id, "cuCtxGetId"),
	ENTRY(ctx_current, "cuCtxGetCurrent"),
	ENTRY(ctx_set_current, "cuCtxSetCurrent"),
	ENTRY(event_create, "cuEventCreate"),
	ENTRY(event_record, "cuEventRecord"),
	ENTRY(event_query, "cuEventQuery"),
	ENTRY(module_load, "cuModuleLoadData"),
	ENTRY(module_function, "cuModuleGetFunction"),
	ENTRY(stream_create, "cuStreamCreate"),
	ENTRY(launch_kernel, "cuLaunchKernel"),
	ENTRY(host_register, "cuMemHostRegister_v2"),
	ENTRY(host_device_ptr, "cuMemHostGetDevicePointer_v2"),
	ENTRY(capture_mode, "cuThreadExchangeStreamCaptureMode"),
	ENTRY(stream_capturing, "cuStreamIsCapturing"),
	ENTRY(stream_device, "cuStreamGetDevice"),
	ENTRY(pointer_attribute, "cuPointerGetAttribute"),
	ENTRY(pointer_attributes, "cuPointerGetAttributes"),
	ENTRY(occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
	ENTRY(graph_clone, "cuGraphClone"),
	ENTRY(graph_destroy, "cuGraphDestroy"),
	ENTRY(graph_nodes, "cuGraphGetNodes"),
	ENTRY(graph_node_type, "cuGraphNodeGetType"),
	ENTRY(graph_kernel_get, "cuGraphKernelNodeGetParams_v2"),
	ENTRY(graph_child, "cuGraphChildGraphNodeGetGraph"),
	ENTRY(graph_exec_update, "cuGraphExecUpdate_v2"),
	ENTRY(graph_node_set[SHIM_SET_KERNEL], "cuGraphKernelNodeSetParams"),
	ENTRY(graph_node_set[SHIM_SET_KERNEL_V2], "cuGraphKernelNodeSetParams_v2"),
	ENTRY(graph_node_set[SHIM_SET_MEMCPY], "cuGraphMemcpyNodeSetParams"),
	ENTRY(graph_node_set[SHIM_SET_MEMSET], "cuGraphMemsetNodeSetParams"),
	ENTRY(graph_node_set[SHIM_SET_HOST], "cuGraphHostNodeSetParams"),
	ENTRY(graph_node_set[SHIM_SET_EVENT_RECORD], "cuGraphEventRecordNodeSetEvent"),
	ENTRY(graph_node_set[SHIM_SET_EVENT_WAIT], "cuGraphEventWaitNodeSetEvent"),
	ENTRY(graph_node_set[SHIM_SET_NODE], "cuGraphNodeSetParams"),
};
_Static_assert(sizeof(entries) / sizeof(entries[0]) + 1 ==
		       sizeof(struct shim_driver) / sizeof(void (*)(void)),
	       "every entry point of struct shim_driver has its name");

static const char *const own_names[SHIM_OWNS] = {
	[SHIM_OWN_ATTRIBUTE] = "cuDeviceGetAttribute",
	[SHIM_OWN_GET_PROC] = "cuGetProcAddress",
	[SHIM_OWN_GET_PROC_V2] = "cuGetProcAddress_v2",
};

static struct {
	void *lib;       /* what set-up found the driver by (RTLD_NEXT, or its own handle) */
	void *driver;    /* the handle of the library that defines cuGetExportTable */
	void *in_charge; /* in a copy not in charge: the handle of the copy in charge */
	void *own[SHIM_OWNS];
} found;

/* cuGetExportTable as lib finds it: also how the driver's own library is known. */
static nvt_cuGetExportTable_fn export_table_in(void *lib)
{
	return (nvt_cuGetExportTable_fn)dlsym(lib, "cuGetExportTable");
}

int shim_driver_load(char *why, size_t len)
{
	/* The wrapper depends on the real driver, and a program linked against
	 * libcuda has it loaded already: both are found after us. Otherwise load
	 * it now, as the program would later. */
	void *lib = RTLD_NEXT;
	nvt_cuGetExportTable_fn get_table = export_table_in(lib);

	if (!get_table) {
		lib = dlopen("libcuda.so.1", RTLD_LAZY);
		if (!lib)
			return nvt_why(why, len, "%s", dlerror());
		get_table = export_table_in(lib);
	}
	shim_cu.get_export_table = get_table;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = dlsym(lib, entries[i].name);
		memcpy((char *)&shim_cu + entries[i].at, &fn, sizeof(fn));
	}
	__atomic_store_n(&found.lib, lib, __ATOMIC_RELEASE);
	return 0;
}

/* The handle of the library that defines cuGetExportTable, or NULL. */
static void *driver_handle(void)
{
	void *h = __atomic_load_n(&found.driver, __ATOMIC_ACQUIRE), *lib, *fn;
	Dl_info info;

	if (h)
		return h;
	lib = __atomic_load_n(&found.lib, __ATOMIC_ACQUIRE);
	fn = (void *)export_table_in(lib ? lib : RTLD_NEXT);
	if (!fn || !dladdr(fn, &info) || !info.dli_fname ||
	    !(h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
		return NULL;
	__atomic_store_n(&found.driver, h, __ATOMIC_RELEASE);
	return h;
}

void *shim_driver_own(enum shim_own which)
{
	void *fn = __atomic_load_n(&found.own[which], __ATOMIC_ACQUIRE), *h;

	if (!fn) {
		h = __atomic_load_n(&found.in_charge, __ATOMIC_ACQUIRE);
		if (!h)
			h = driver_handle();
		fn = h ? dlsym(h, own_names[which]) : NULL;
		if (fn)
			__atomic_store_n(&found.own[which], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

void shim_driver_passive(const void *in_charge)
{
	Dl_info info;
	void *lib;

	/* The exports of the copy in charge, found through its own handle (a
	 * handle's dlsym searches that library first). */
	if (dladdr(in_charge, &info) && info.dli_fname &&
	    (lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
		__atomic_store_n(&found.in_charge, lib, __ATOMIC_RELEASE);
}
