/*
 * prioapp.h - what prioapp.c and prioappwait.c share: the fake driver's calls they make, and a
 * serve request's wait (prioappwait.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PRIOAPP_H
#define NVT_PRIOAPP_H

#include "fakecuda.h"

int cuInit(unsigned);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuDevicePrimaryCtxReset_v2(int);
int cuDevicePrimaryCtxRelease_v2(int);
int cuDevicePrimaryCtxRelease(int);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		   void *, void **, void **);
int cuStreamSynchronize(void *);
int cuCtxSynchronize(void);
int cuLaunchHostFunc(void *, void (*)(void *), void *);
int cuLaunchHostFunc_ptsz(void *, void (*)(void *), void *);
int cuStreamAddCallback(void *, void (*)(void *, int, void *), void *, unsigned);
int cuEventCreate(void **, unsigned);
int cuEventRecord(void *, void *);
int cuEventRecord_ptsz(void *, void *);
int cuEventRecordWithFlags(void *, void *, unsigned);
int cuEventQuery(void *);
int cuStreamQuery(void *);
int cuCtxGetCurrent(void **);
int cuGraphCreate(CUgraph *, unsigned);
int cuGraphAddKernelNode_v2(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const NVT_KERNEL_NODE_PARAMS *);
int cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
int cuGraphLaunch(CUgraphExec, CUstream);
int cuMemAlloc_v2(unsigned long long *, size_t);
int cuMemAllocManaged(unsigned long long *, size_t, unsigned);
int cuCtxCreate_v2(void **, unsigned, int);
int cuCtxDestroy_v2(void *);
int cuCtxDestroy(void *);

int cuMemAllocHost_v2(void **, size_t);
int cuMemcpyHtoD_v2(unsigned long long, const void *, size_t);
int cuMemcpyDtoHAsync_v2(void *, unsigned long long, size_t, void *);
int cuMemcpyDtoHAsync_v2_ptsz(void *, unsigned long long, size_t, void *);
int cuMemcpyAsync(unsigned long long, unsigned long long, size_t, void *);
int fakecuda_in_flight(const void *stream);
int fakecuda_last_launch(struct fakecuda_launch *out);
uint64_t fakecuda_done_at(const void *stream);

/* The host busy elsewhere for us microseconds (a sleep). */
void pause_us(long us);
/* A serve request's wait: a cuStreamSynchronize, or (PRIOAPP_HOSTFN) a host function, or
 * (PRIOAPP_POLL) a polled event or stream; 0, or 1 if a call failed. */
int serve_wait(void);
/* A polled wait in PRIOAPP_POLL's form: 0, or 1 if a call failed. */
int poll_wait(const char *form);

#endif /* NVT_PRIOAPP_H */
