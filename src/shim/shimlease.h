/*
 * shimlease.h - TPCs a dead agent lent go back (shimlease.c). Private to the
 * shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMLEASE_H
#define NVT_SHIMLEASE_H

/* After a synchronisation (never on the launch path; rate-limited): gives a
 * borrowing slot its own partition back when no agent runs. */
void shim_lease_check(void);

#endif /* NVT_SHIMLEASE_H */
