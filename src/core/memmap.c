/*
 * memmap.c - the virtual memory API's mappings a process holds (memmap.h):
 * a table keyed by each mapping's start, linear probing without tombstones.
 *
 * SPDX-License-Identifier: MIT
 */
#include "memmap.h"

#include <stdlib.h>

/* Where va's entry starts looking, in a table of cap entries (a power of two). */
static size_t home_of(uint64_t va, size_t cap)
{
	uint64_t x = va * 0x9e3779b97f4a7c15ull; /* (addresses are aligned: mix the high bits down) */

	return (size_t)(x ^ x >> 29) & (cap - 1);
}

/* The entry of va, or NULL. */
static struct nvt_memmap_entry *entry_of(const struct nvt_memmap *m, uint64_t va)
{
	for (size_t k = 0, i = m->cap ? home_of(va, m->cap) : 0; k < m->cap;
	     k++, i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i].va)
			return NULL;
		if (m->slot[i].va == va)
			return &m->slot[i];
	}
	return NULL;
}

static void place(struct nvt_memmap_entry *slot, size_t cap, const struct nvt_memmap_entry *e)
{
	size_t i = home_of(e->va, cap);

	while (slot[i].va)
		i = (i + 1) & (cap - 1);
	slot[i] = *e;
}

/* Room for one more entry. Returns 0, or -1 without memory (m as it was). */
static int make_room(struct nvt_memmap *m)
{
	struct nvt_memmap_entry *slot;
	size_t cap;

	if ((m->n + 1) * 4 <= m->cap * 3)
		return 0;
	cap = m->cap ? m->cap * 2 : NVT_MEMMAP_FIRST;
	if (cap < m->cap || !(slot = calloc(cap, sizeof(*slot))))
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].va)
			place(slot, cap, &m->slot[i]);
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
	return 0;
}

int nvt_memmap_add(struct nvt_memmap *m, uint64_t va, uint64_t size, uint64_t handle,
		   uint64_t *ended)
{
	struct nvt_memmap_entry e = {va, size, handle, m->next_serial}, *old = entry_of(m, va);

	*ended = 0;
	if (old) {
		*ended = old->handle;
		*old = e;
	} else {
		if (make_room(m))
			return -1;
		place(m->slot, m->cap, &e);
		m->n++;
	}
	m->next_serial++;
	return 0;
}

uint64_t nvt_memmap_serial(const struct nvt_memmap *m)
{
	return m->next_serial;
}

/* Removes entry e, moving back the entries after it that its place let pass. */
static void erase(struct nvt_memmap *m, struct nvt_memmap_entry *e)
{
	size_t hole = (size_t)(e - m->slot), i = hole;

	m->slot[hole].va = 0;
	m->n--;
	for (;;) {
		i = (i + 1) & (m->cap - 1);
		if (!m->slot[i].va)
			return;
		size_t home = home_of(m->slot[i].va, m->cap);
		/* Entry i may move to the hole if its home is not in (hole, i]. */
		if (((i - home) & (m->cap - 1)) >= ((i - hole) & (m->cap - 1))) {
			m->slot[hole] = m->slot[i];
			m->slot[i].va = 0;
			hole = i;
		}
	}
}

int nvt_memmap_take(struct nvt_memmap *m, uint64_t *va, uint64_t end, uint64_t before,
		    uint64_t *handle)
{
	struct nvt_memmap_entry *e = *va < end ? entry_of(m, *va) : NULL;

	if (!e || e->size > end - *va || e->serial >= before)
		return 0;
	*handle = e->handle;
	*va += e->size;
	erase(m, e);
	return 1;
}

void nvt_memmap_clear(struct nvt_memmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
