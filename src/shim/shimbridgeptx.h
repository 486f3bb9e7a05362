/*
 * shimbridgeptx.h - the bridge's kernels (shimbridge.c) as PTX the driver
 * compiles, and the record nvt_bridge writes as it ends: one header, so that
 * tests/gpu/bridgeword.c runs the kernels the shim runs.
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
enum trace_reason { TR_RELEASED = 1, TR_LINGER = 2, TR_CAP = 3 };
/* The kernel's stores (bridge_ptx) name these offsets. */
_Static_assert(sizeof(struct trace_rec) == 64 && offsetof(struct trace_rec, reason) == 4 &&
		       offsetof(struct trace_rec, start) == 8 && offsetof(struct trace_rec, saw_ret) == 16 &&
		       offsetof(struct trace_rec, saw_rel) == 24 && offsetof(struct trace_rec, end) == 32 &&
		       offsetof(struct trace_rec, last) == 40,
	       "struct trace_rec is the layout nvt_bridge writes");

/* The kernels (PTX, compiled by the driver: sm_70 and later have nanosleep). */
static const char bridge_ptx[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	/* w: the words (struct bslot); released at w[1] >= seq, it runs until margin after the
	 * release, after a replay was last seen being queued (w[3]) or waiting for the host's
	 * next call (w[5], at most late after it was seen set since it was last seen clear), or
	 * after this step's replay was queued (w[4] >= seq); with replay, not before that
	 * replay; at most span after the release; trace (0: none): where it writes its record
	 * as it ends (struct trace_rec). */
	".visible .entry nvt_bridge(.param .u64 w, .param .u32 seq, .param .u64 cap,\n"
	"                           .param .u64 linger, .param .u64 margin, .param .u64 span,\n"
	"                           .param .u32 replay, .param .u64 trace, .param .u64 late)\n"
	"{\n"
	"  .reg .pred %p<4>;\n"
	"  .reg .b32 %r<10>;\n"
	"  .reg .b64 %rd<18>;\n"
	"  ld.param.u64 %rd1, [w];\n"
	"  ld.param.u32 %r1, [seq];\n"
	"  ld.param.u64 %rd2, [cap];\n"
	"  ld.param.u64 %rd3, [linger];\n"
	"  ld.param.u64 %rd4, [margin];\n"
	"  ld.param.u64 %rd12, [trace];\n"
	"  ld.param.u64 %rd15, [span];\n"
	"  ld.param.u32 %r8, [replay];\n"
	"  ld.param.u64 %rd17, [late];\n"
	"  cvta.to.global.u64 %rd1, %rd1;\n"
	"  mov.u64 %rd5, %globaltimer;\n"
	"  mov.u64 %rd6, 0;\n"
	"  mov.u64 %rd7, 0;\n"
	"  mov.u64 %rd14, 0;\n"
	"  mov.u64 %rd16, 0;\n"
	"  mov.u32 %r6, 3;\n"
	"LOOP:\n"
	"  mov.u64 %rd8, %globaltimer;\n"
	"  sub.u64 %rd9, %rd8, %rd5;\n"
	"  setp.gt.u64 %p1, %rd9, %rd2;\n"
	"  @%p1 bra DONE;\n"
	"  setp.ne.u64 %p2, %rd7, 0;\n"
	"  @%p2 bra RELEASED;\n"
	"  ld.volatile.global.u32 %r2, [%rd1+4];\n"
	"  sub.s32 %r3, %r2, %r1;\n"
	"  setp.lt.s32 %p1, %r3, 0;\n"
	"  @%p1 bra WAITING;\n"
	"  mov.u64 %rd7, %rd8;\n"
	"  mov.u64 %rd14, %rd8;\n"
	"  mov.u32 %r7, 0;\n"
	"RELEASED:\n"
	"  mov.u32 %r6, 1;\n"
	"  ld.volatile.global.u32 %r3, [%rd1+12];\n"
	"  setp.ne.u32 %p2, %r3, 0;\n"
	"  @%p2 mov.u64 %rd14, %rd8;\n"
	"  ld.volatile.global.u32 %r3, [%rd1+20];\n"
	"  setp.eq.u32 %p2, %r3, 0;\n"
	"  @%p2 mov.u64 %rd16, 0;\n"
	"  @%p2 bra ONTIME;\n"
	"  setp.eq.u64 %p3, %rd16, 0;\n"
	"  @%p3 mov.u64 %rd16, %rd8;\n"
	"  sub.u64 %rd10, %rd8, %rd16;\n"
	"  setp.lt.u64 %p3, %rd10, %rd17;\n"
	"  @%p3 mov.u64 %rd14, %rd8;\n"
	"ONTIME:\n"
	"  setp.ne.u32 %p2, %r7, 0;\n"
	"  @%p2 bra HELD;\n"
	"  ld.volatile.global.u32 %r2, [%rd1+16];\n"
	"  sub.s32 %r3, %r2, %r1;\n"
	"  setp.ge.s32 %p2, %r3, 0;\n"
	"  @%p2 mov.u32 %r7, 1;\n"
	"  @%p2 mov.u64 %rd14, %rd8;\n"
	"  @%p2 bra HELD;\n"
	"  setp.eq.u32 %p2, %r8, 0;\n"
	"  @%p2 bra HELD;\n"
	"  sub.u64 %rd10, %rd8, %rd7;\n"
	"  setp.lt.u64 %p3, %rd10, %rd15;\n"
	"  @%p3 bra SLEEP;\n"
	"HELD:\n"
	"  sub.u64 %rd10, %rd8, %rd14;\n"
	"  setp.ge.u64 %p3, %rd10, %rd4;\n"
	"  @%p3 bra DONE;\n"
	"  sub.u64 %rd10, %rd8, %rd7;\n"
	"  setp.ge.u64 %p3, %rd10, %rd15;\n"
	"  @%p3 bra DONE;\n"
	"  bra.uni SLEEP;\n"
	"WAITING:\n"
	"  ld.volatile.global.u32 %r4, [%rd1];\n"
	"  sub.s32 %r5, %r4, %r1;\n"
	"  setp.lt.s32 %p1, %r5, 0;\n"
	"  @%p1 bra SLEEP;\n"
	"  setp.eq.u64 %p2, %rd6, 0;\n"
	"  @%p2 mov.u64 %rd6, %rd8;\n"
	"  sub.u64 %rd11, %rd8, %rd6;\n"
	"  setp.ge.u64 %p3, %rd11, %rd3;\n"
	"  @%p3 mov.u32 %r6, 2;\n"
	"  @%p3 bra DONE;\n"
	"SLEEP:\n"
	"  nanosleep.u32 500;\n"
	"  bra.uni LOOP;\n"
	"DONE:\n"
	"  setp.eq.u64 %p1, %rd12, 0;\n"
	"  @%p1 bra END;\n"
	"  cvta.to.global.u64 %rd12, %rd12;\n"
	"  mov.u64 %rd13, %globaltimer;\n"
	"  st.global.u64 [%rd12+8], %rd5;\n"
	"  st.global.u64 [%rd12+16], %rd6;\n"
	"  st.global.u64 [%rd12+24], %rd7;\n"
	"  st.global.u64 [%rd12+32], %rd13;\n"
	"  st.global.u64 [%rd12+40], %rd14;\n"
	"  st.global.u32 [%rd12+4], %r6;\n"
	"  membar.sys;\n"
	"  st.global.u32 [%rd12], %r1;\n"
	"  membar.sys;\n"
	"END:\n"
	"  ret;\n"
	"}\n"
	".visible .entry nvt_bridge_nop()\n"
	"{\n"
	"  ret;\n"
	"}\n"
	/* A copy of n bytes from src (this GPU's memory) to dst (host memory the GPU maps), by
	 * the threads of one block, then a fence: the host reads it after a wait. */
	".visible .entry nvt_copy(.param .u64 dst, .param .u64 src, .param .u64 n,\n"
	"                         .param .u64 stamp)\n"
	"{\n"
	"  .reg .pred %p<2>;\n"
	"  .reg .b32 %r<4>;\n"
	"  .reg .b64 %rd<10>;\n"
	"  ld.param.u64 %rd1, [dst];\n"
	"  ld.param.u64 %rd2, [src];\n"
	"  ld.param.u64 %rd3, [n];\n"
	"  ld.param.u64 %rd8, [stamp];\n"
	"  cvta.to.global.u64 %rd1, %rd1;\n"
	"  cvta.to.global.u64 %rd2, %rd2;\n"
	"  mov.u32 %r1, %tid.x;\n"
	/* stamp (0: none): the thread 0 writes when the copy began there (trace). */
	"  setp.ne.u64 %p1, %rd8, 0;\n"
	"  setp.eq.and.u32 %p1, %r1, 0, %p1;\n"
	"  @!%p1 bra STAMPED;\n"
	"  cvta.to.global.u64 %rd8, %rd8;\n"
	"  mov.u64 %rd9, %globaltimer;\n"
	"  st.global.u64 [%rd8], %rd9;\n"
	"STAMPED:\n"
	"  cvt.u64.u32 %rd4, %r1;\n"
	"  mov.u32 %r2, %ntid.x;\n"
	"  cvt.u64.u32 %rd5, %r2;\n"
	"COPY:\n"
	"  setp.ge.u64 %p1, %rd4, %rd3;\n"
	"  @%p1 bra COPIED;\n"
	"  add.u64 %rd6, %rd2, %rd4;\n"
	"  ld.global.u8 %r3, [%rd6];\n"
	"  add.u64 %rd7, %rd1, %rd4;\n"
	"  st.global.u8 [%rd7], %r3;\n"
	"  add.u64 %rd4, %rd4, %rd5;\n"
	"  bra.uni COPY;\n"
	"COPIED:\n"
	"  membar.sys;\n"
	"  ret;\n"
	"}\n";

#endif /* NVT_SHIMBRIDGEPTX_H */
