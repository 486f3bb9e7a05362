/*
 * shimsmctrlapi.h - the functions the shim exports (shimsmctrlapi.c) for
 * libsmctrl.so (src/shim/libsmctrl.c), one per libsmctrl function of
 * include/libsmctrl.h, with its semantics. Under their own prefix: a preloaded shim never takes
 * the place of another libsmctrl a program may link.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSMCTRLAPI_H
#define NVT_SHIMSMCTRLAPI_H

#include <stdint.h>
#include "libsmctrl.h"

#define NVT_SMCTRL_EXPORT __attribute__((visibility("default")))

NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_global_mask(uint64_t mask);
NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_global_mask_ext(uint128_t mask);
NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_stream_mask(void *stream, uint64_t mask);
NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_stream_mask_ext(void *stream, uint128_t mask);
NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_next_mask(uint64_t mask);
NVT_SMCTRL_EXPORT void nvtaskset_smctrl_set_next_mask_ext(uint128_t mask);
NVT_SMCTRL_EXPORT int nvtaskset_smctrl_get_gpc_info(uint32_t *num_enabled_gpcs,
						     uint64_t **tpcs_for_gpc, int dev);
NVT_SMCTRL_EXPORT int nvtaskset_smctrl_get_gpc_info_ext(uint32_t *num_enabled_gpcs,
							 uint128_t **tpcs_for_gpc, int dev);
NVT_SMCTRL_EXPORT int nvtaskset_smctrl_get_tpc_info(uint32_t *num_tpcs, int dev);
NVT_SMCTRL_EXPORT int nvtaskset_smctrl_get_tpc_info_cuda(uint32_t *num_tpcs, int cuda_dev);

#endif /* NVT_SHIMSMCTRLAPI_H */
