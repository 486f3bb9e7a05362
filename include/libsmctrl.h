/*
 * libsmctrl.h - libsmctrl's programming interface (J. Bakita and J. H.
 * Anderson, "Hardware Compute Partitioning on NVIDIA GPUs", RTAS 2023), as
 * nvtaskset provides it: the same function names and signatures, so that a
 * program written for libsmctrl builds and links against nvtaskset's
 * libsmctrl.so unchanged (-I PREFIX/include -L LIBDIR -lsmctrl, LIBDIR being
 * PREFIX/lib/nvtaskset). It calls into nvtaskset's shim, which the library
 * loads if nvtaskset did not. docs/libsmctrl.md and libsmctrl(3) say more.
 *
 * Masks: a set bit disables a TPC, as in libsmctrl. Bits name LOGICAL TPCs:
 * TPC t holds SMs 2t and 2t+1 (%smid / 2, as every NVIDIA tool numbers
 * them), on every GPU; nvtaskset's calibration translates them to the GPU's
 * TMD mask bits. (libsmctrl writes bit t to the TMD as it is, which on
 * Hopper names a physical TPC slot: other TPCs, or none.)
 *
 * - A mask of 0 means "no mask" at that level. A 64-bit mask other than 0
 *   also disables TPCs 64 and up, an _ext (128-bit) mask TPCs 128 and up
 *   (libsmctrl's rule); the _ext forms name every TPC of an H100 (66).
 * - A launch uses the calling thread's next mask if one is set (and clears
 *   it), else its stream's mask, else the global mask.
 * - The mask applies WITHIN the partition nvtaskset gives the task, as
 *   sched_setaffinity() applies within a cpuset: a kernel runs on the TPCs
 *   both enable, and `nvtaskset -p` still moves the whole task. A mask that
 *   enables no TPC of the partition is ignored for that launch, which runs
 *   on the whole partition (one warning on stderr): never on no TPC, which
 *   would hang. Without a partition, masks apply within the whole GPU.
 * - Masks need the GPU's calibration, which the task has when it runs under
 *   nvtaskset (`nvtaskset -c all PROGRAM` gives it every TPC); otherwise
 *   launches run without them (one warning).
 * - Launches of thread-block clusters ignore the program's masks (a cluster
 *   must fit in one GPC); they run on the task's partition (one warning).
 * - Streams: found from the launch calls' own arguments, not CUstream's
 *   layout, so any CUDA version works. NULL and cudaStreamLegacy name the
 *   legacy default stream, cudaStreamPerThread the per-thread default
 *   streams (all threads' alike). A graph captured from a stream keeps the
 *   mask that stream had at the end of the capture, for all its kernels.
 * - Not async-signal-safe. The setters may be called from any thread.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LIBSMCTRL_H
#define LIBSMCTRL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned __int128 uint128_t;

/* ---- Partitioning ------------------------------------------------------- */

/* Sets the mask of every launch that has no stream or next mask, CUDA's own
 * kernels included. */
extern void libsmctrl_set_global_mask(uint64_t mask);
extern void libsmctrl_set_global_mask_ext(uint128_t mask);

/* Sets the mask of the launches into stream (a cudaStream_t or CUstream;
 * NULL: the legacy default stream); overrides the global mask. */
extern void libsmctrl_set_stream_mask(void *stream, uint64_t mask);
extern void libsmctrl_set_stream_mask_ext(void *stream, uint128_t mask);

/* Sets the mask of the calling thread's next launch; overrides the stream's
 * and the global mask. */
extern void libsmctrl_set_next_mask(uint64_t mask);
extern void libsmctrl_set_next_mask_ext(uint128_t mask);

/* ---- Information ------------------------------------------------------- */

/*
 * Sets *num_enabled_gpcs to the GPU's GPC count and *tpcs_for_gpc to an
 * array (owned by the library, valid until the next call for dev) whose
 * entry g has bit t set for each TPC t of GPC g, as nvtaskset's calibration
 * found them (its GPC numbers: `nvtaskset --topology`). dev is a CUDA
 * device ordinal (libsmctrl's is nvdebug's, PCI bus order: the same with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID). Returns 0, EINVAL (bad argument or
 * device), ENOENT (no calibration of this GPU in the task: not run under
 * nvtaskset), ENODATA (GPCs unknown: before Hopper), EIO (the driver
 * failed), or, for the 64-bit form, ERANGE (a GPC holds a TPC above 63).
 */
extern int libsmctrl_get_gpc_info(uint32_t *num_enabled_gpcs, uint64_t **tpcs_for_gpc, int dev);
extern int libsmctrl_get_gpc_info_ext(uint32_t *num_enabled_gpcs, uint128_t **tpcs_for_gpc, int dev);

/*
 * Sets *num_tpcs to the GPU's TPC count: the calibrated one, or without
 * calibration its SM count / 2. dev is a CUDA device ordinal for both.
 * Returns 0, EINVAL, EIO, or ENOTSUP (a GPU older than Volta).
 */
extern int libsmctrl_get_tpc_info(uint32_t *num_tpcs, int dev);
extern int libsmctrl_get_tpc_info_cuda(uint32_t *num_tpcs, int cuda_dev);

#ifdef __cplusplus
}
#endif

#endif /* LIBSMCTRL_H */
