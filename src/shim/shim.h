/*
 * shim.h - the hub of the shim (shim.c): the driver's callback, which
 * set-up registers. Private to the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIM_H
#define NVT_SHIM_H

/* The callback of every (domain, id) the shim enabled: a kernel launch (its
 * TMD gets the partition's mask) or a driver- or runtime-API call. */
void shim_on_launch(void *user, int domain, int cbid, const void *params);

#endif /* NVT_SHIM_H */
