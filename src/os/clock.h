/*
 * clock.h - the one monotonic clock of nvtaskset's code (CLOCK_MONOTONIC, read
 * through the vDSO: no system call, so the shim's launch path may read it too),
 * in the units its callers count in.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_OS_CLOCK_H
#define NVT_OS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t nvt_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Milliseconds of CLOCK_MONOTONIC. */
static inline int64_t nvt_clock_ms(void)
{
	return (int64_t)(nvt_clock_ns() / 1000000u);
}

/* Seconds of CLOCK_MONOTONIC. */
static inline double nvt_clock_s(void)
{
	return (double)nvt_clock_ns() / 1e9;
}

#endif /* NVT_OS_CLOCK_H */
