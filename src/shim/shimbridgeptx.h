/*
 * shimbridgeptx.h - the bridge's kernels (shimbridge.c) as PTX the driver
 * compiles, and the record nvt_bridge writes as it ends: a file of their own,
 * so that tests/gpu/bridgeword.c runs the kernels the shim runs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMBRIDGEPTX_H
#define NVT_SHIMBRIDGEPTX_H

#include <stddef.h>
#include <stdint.h>

/* What nvt_bridge writes where its trace argument points, as it ends. */
struct trace_rec {
	uint32_t seq, reason;        /* written last; reason: enum trace_reason */
	uint64_t start, saw_ret, saw_rel, end; /* %globaltimer (ns); saw_*: 0 if never */
	uint64_t last;               /* from when its margin ran (saw_rel, or a replay seen later) */
	uint64_t pad[2];
};
/* TR_NEXT: released and ended at once, the next bridge queued behind it (w[7]). */
enum trace_reason { TR_RELEASED = 1, TR_LINGER = 2, TR_CAP = 3, TR_NEXT = 4 };
/* The kernel's stores (nvt_bridge_ptx) name these offsets. */
_Static_assert(sizeof(struct trace_rec) == 64 && offsetof(struct trace_rec, reason) == 4 &&
		       offsetof(struct trace_rec, start) == 8 && offsetof(struct trace_rec, saw_ret) == 16 &&
		       offsetof(struct trace_rec, saw_rel) == 24 && offsetof(struct trace_rec, end) == 32 &&
		       offsetof(struct trace_rec, last) == 40,
	       "struct trace_rec is the layout nvt_bridge writes");

/* The kernels nvt_bridge, nvt_bridge_nop and nvt_copy (PTX, compiled by the driver: sm_70 and
 * later have nanosleep); their arguments and words: shimbridgeptx.c. */
extern const char nvt_bridge_ptx[];

#endif /* NVT_SHIMBRIDGEPTX_H */
