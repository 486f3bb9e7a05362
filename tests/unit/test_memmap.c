/*
 * test_memmap.c - the virtual memory API's mappings a process holds
 * (src/core/memmap.h): what an unmap ends, and what it leaves.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "core/memmap.h"

#define MIB (1024ull * 1024)
#define BASE 0x7e0000000000ull

/* Ends what an unmap of [va, va + size) begun at serial before ends: the handles, in order, into
 * got (at most max); returns how many, and where the walk stopped into *stop. */
static int unmapped(struct nvt_memmap *m, uint64_t va, uint64_t size, uint64_t before,
		    uint64_t *got, int max, uint64_t *stop)
{
	int n = 0;
	uint64_t h, end = va + size > va ? va + size : UINT64_MAX;

	while (n < max && nvt_memmap_take(m, &va, end, before, &h))
		got[n++] = h;
	*stop = va;
	return n;
}

/* One mapping, ended by an unmap of its whole range; an address no mapping starts at ends none. */
static void one(void)
{
	struct nvt_memmap m = {0};
	uint64_t got[4], stop, ended = 7;

	CHECK(nvt_memmap_add(&m, BASE, 2 * MIB, 11, &ended) == 0);
	CHECK(ended == 0);
	CHECK(unmapped(&m, BASE + 2 * MIB, 2 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 0);
	CHECK(unmapped(&m, BASE, 2 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 1);
	CHECK(got[0] == 11 && stop == BASE + 2 * MIB);
	CHECK(m.n == 0);
	/* Gone: a second unmap ends nothing. */
	CHECK(unmapped(&m, BASE, 2 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 0);
	nvt_memmap_clear(&m);
}

/* One unmap over mappings that lie end to end ends each (NVIDIA's vectorAddMMAP unmaps its
 * stripes so); one that cuts a mapping ends none of it, nor what lies past it. */
static void end_to_end(void)
{
	struct nvt_memmap m = {0};
	uint64_t got[4], stop, ended;

	CHECK(nvt_memmap_add(&m, BASE, 2 * MIB, 1, &ended) == 0);
	CHECK(nvt_memmap_add(&m, BASE + 2 * MIB, 4 * MIB, 2, &ended) == 0);
	CHECK(nvt_memmap_add(&m, BASE + 6 * MIB, 2 * MIB, 3, &ended) == 0);
	/* Up to the middle of the second: the first ends, the second is cut and stays. */
	CHECK(unmapped(&m, BASE, 4 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 1);
	CHECK(got[0] == 1 && stop == BASE + 2 * MIB);
	CHECK(unmapped(&m, BASE + 2 * MIB, 6 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 2);
	CHECK(got[0] == 2 && got[1] == 3 && stop == BASE + 8 * MIB);
	CHECK(m.n == 0);
	nvt_memmap_clear(&m);
}

/* A mapping made after the unmap began is not one it ended; a mapping at an address one was
 * remembered at replaces it, which the driver has ended. */
static void since_and_replaced(void)
{
	struct nvt_memmap m = {0};
	uint64_t got[4], stop, ended, begun;

	CHECK(nvt_memmap_add(&m, BASE, 2 * MIB, 1, &ended) == 0);
	begun = nvt_memmap_serial(&m);
	CHECK(nvt_memmap_add(&m, BASE, 2 * MIB, 2, &ended) == 0);
	CHECK(ended == 1);
	CHECK(m.n == 1);
	CHECK(unmapped(&m, BASE, 2 * MIB, begun, got, 4, &stop) == 0);
	CHECK(unmapped(&m, BASE, 2 * MIB, nvt_memmap_serial(&m), got, 4, &stop) == 1);
	CHECK(got[0] == 2);
	nvt_memmap_clear(&m);
}

/* Many mappings: the table grows, and each is found and ended after the others are gone (the
 * entries that moved back into a removed one's place are found too). */
static void many(void)
{
	struct nvt_memmap m = {0};
	uint64_t got[1], stop, ended;
	int ok = 1, n = 5000;

	for (int i = 0; i < n; i++)
		ok &= nvt_memmap_add(&m, BASE + (uint64_t)i * 2 * MIB, 2 * MIB, (uint64_t)i + 1, &ended) == 0;
	CHECK(ok);
	CHECK(m.n == (size_t)n && m.cap >= (size_t)n * 4 / 3);
	/* Every other one, then the rest. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = pass; i < n; i += 2)
			ok &= unmapped(&m, BASE + (uint64_t)i * 2 * MIB, 2 * MIB, nvt_memmap_serial(&m),
				       got, 1, &stop) == 1 && got[0] == (uint64_t)i + 1;
	CHECK(ok);
	CHECK(m.n == 0);
	nvt_memmap_clear(&m);
	CHECK(m.cap == 0 && !m.slot);
}

/* A range to the top of the address space: no sum wraps (an unmap's size past it ends at the top). */
static void at_the_top(void)
{
	struct nvt_memmap m = {0};
	uint64_t got[2], stop, ended, top = 0 - 4 * MIB;

	CHECK(nvt_memmap_add(&m, top, 2 * MIB, 9, &ended) == 0);
	CHECK(unmapped(&m, top, MIB, nvt_memmap_serial(&m), got, 2, &stop) == 0);
	CHECK(unmapped(&m, top, UINT64_MAX, nvt_memmap_serial(&m), got, 2, &stop) == 1);
	CHECK(got[0] == 9 && stop == top + 2 * MIB);
	nvt_memmap_clear(&m);
}

int main(void)
{
	one();
	end_to_end();
	since_and_replaced();
	many();
	at_the_top();
	return CHECK_DONE();
}
