/*
 * shimchan.h - this process's channel groups (shimchan.c): followed through the
 * kernel module's RM ioctls, and given a timeslice.
 * Private to the shim; state layer (no policy: shimpreempt.c decides).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMCHAN_H
#define NVT_SHIMCHAN_H

#include <stdint.h>

/* What shimchan did on one GPU (by UUID): for the slot's publication. */
struct shim_chan_gpu_stats {
	uint32_t groups;       /* channel groups of this process on it now */
	uint32_t timeslice_us; /* what they were given (the driver's record, read back); 0: none */
	uint32_t status;       /* the last refusal's status (not NVRM_OK, nor a group gone); 0: none */
};

/*
 * From now on, follows the channel groups this process allocates: those of
 * GPU uuid run at timeslice_us (0: the driver's own), set at their
 * allocation, after every schedule or bind of them or their channels, and in
 * place of libcuda's own SET_TIMESLICE. Groups already followed are set now.
 * uuid NULL: the default, for the groups of every GPU given no timeslice of
 * its own (those whose GPU is not known, its subdevice not saying, among them).
 * Returns the groups set now, or -1 if a control on one failed (a group the
 * driver knows no more is forgotten, and neither counted nor a failure).
 */
int shim_chan_timeslice(const uint8_t uuid[16], uint32_t timeslice_us);
void shim_chan_stats(const uint8_t uuid[16], struct shim_chan_gpu_stats *out);
/*
 * From now on, follows this process's channel groups, and calls fn (once per
 * GPU, from whatever thread allocated the group) when the first group of a
 * GPU appears: uuid all zero if its GPU is not known. fn runs under shimchan's
 * lock: it may note the GPU, not call shimchan.
 */
void shim_chan_on_new_gpu(void (*fn)(const uint8_t uuid[16]));
/* In a forked child: the parent's RM objects are not this process's. */
void shim_chan_after_fork(void);

#endif /* NVT_SHIMCHAN_H */
