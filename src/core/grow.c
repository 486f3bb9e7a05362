/*
 * grow.c - the one growing array (grow.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

void *nvt_grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t more = *cap ? *cap * 2 : first;

	if (n < *cap)
		return v;
	if (!size || more <= *cap || more > SIZE_MAX / size)
		return NULL;
	v = realloc(v, more * size);
	if (v)
		*cap = more;
	return v;
}
