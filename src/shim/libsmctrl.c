/*
 * libsmctrl.c - libsmctrl.so: libsmctrl's function names (include/libsmctrl.h)
 * for programs written for it, each forwarding to the shim's implementation
 * (shimsmctrlapi.c). The library depends on libnvtaskset.so beside it
 * (RUNPATH $ORIGIN), so linking it loads the shim. Under nvtaskset the shim
 * is preloaded too, and the dynamic linker binds these calls to the first
 * copy in the process, which is the copy in charge (shimsetup.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

#include "libsmctrl.h"
#include "shimsmctrlapi.h"

void libsmctrl_set_global_mask(uint64_t mask)
{
	nvtaskset_smctrl_set_global_mask(mask);
}

void libsmctrl_set_global_mask_ext(uint128_t mask)
{
	nvtaskset_smctrl_set_global_mask_ext(mask);
}

void libsmctrl_set_stream_mask(void *stream, uint64_t mask)
{
	nvtaskset_smctrl_set_stream_mask(stream, mask);
}

void libsmctrl_set_stream_mask_ext(void *stream, uint128_t mask)
{
	nvtaskset_smctrl_set_stream_mask_ext(stream, mask);
}

void libsmctrl_set_next_mask(uint64_t mask)
{
	nvtaskset_smctrl_set_next_mask(mask);
}

void libsmctrl_set_next_mask_ext(uint128_t mask)
{
	nvtaskset_smctrl_set_next_mask_ext(mask);
}

int libsmctrl_get_gpc_info(uint32_t *num_enabled_gpcs, uint64_t **tpcs_for_gpc, int dev)
{
	return nvtaskset_smctrl_get_gpc_info(num_enabled_gpcs, tpcs_for_gpc, dev);
}

int libsmctrl_get_gpc_info_ext(uint32_t *num_enabled_gpcs, uint128_t **tpcs_for_gpc, int dev)
{
	return nvtaskset_smctrl_get_gpc_info_ext(num_enabled_gpcs, tpcs_for_gpc, dev);
}

int libsmctrl_get_tpc_info(uint32_t *num_tpcs, int dev)
{
	return nvtaskset_smctrl_get_tpc_info(num_tpcs, dev);
}

int libsmctrl_get_tpc_info_cuda(uint32_t *num_tpcs, int cuda_dev)
{
	return nvtaskset_smctrl_get_tpc_info_cuda(num_tpcs, cuda_dev);
}
