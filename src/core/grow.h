/*
 * grow.h - the one growing array: room for one more element, doubling.
 * Pure (it allocates, as ptree does, never on the launch path).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_GROW_H
#define NVT_GROW_H

#include <stddef.h>

/*
 * Room for one more element in an array v of n elements of size bytes with
 * room for *cap: v itself while n < *cap, else v grown to first elements,
 * then to twice as many, with *cap raised. Returns NULL when out of memory
 * (or the size would not fit): v is then as it was, still the caller's to free.
 */
void *nvt_grow(void *v, size_t n, size_t *cap, size_t size, size_t first);

#endif /* NVT_GROW_H */
