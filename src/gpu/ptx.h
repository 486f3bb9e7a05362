/*
 * ptx.h - PTX text that nvtaskset's own kernels share (the bandwidth probe,
 * bwprobe.c, and nvtaskset-hog): JIT-compiled by the driver, no toolkit.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PTX_H
#define NVT_PTX_H

/* %rd4 = this thread's index in the grid, %rd5 = the grid's threads, for a
 * grid-stride loop (uses %r1-%r6). */
#define NVT_PTX_GRID_STRIDE               \
	"  mov.u32 %r1, %ctaid.x;\n"      \
	"  mov.u32 %r2, %ntid.x;\n"       \
	"  mov.u32 %r3, %tid.x;\n"        \
	"  mad.lo.u32 %r4, %r1, %r2, %r3;\n" \
	"  mov.u32 %r5, %nctaid.x;\n"     \
	"  mul.lo.u32 %r6, %r5, %r2;\n"   \
	"  cvt.u64.u32 %rd4, %r4;\n"      \
	"  cvt.u64.u32 %rd5, %r6;\n"

#endif /* NVT_PTX_H */
