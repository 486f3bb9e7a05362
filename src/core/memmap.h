/*
 * memmap.h - the virtual memory API's mappings a process holds (cuMemMap,
 * cuMemUnmap), for the GPU memory limit (docs/usage.md "GPU memory"): which
 * handle each mapped range maps, so that a cuMemCreate allocation stays counted
 * while a mapping keeps it (cuda.h's cuMemRelease: its memory is freed "when
 * all outstanding mappings to the memory are unmapped and when all outstanding
 * references to the handle ... are also released"; on an H200 a handle released
 * while mapped kept its memory until cuMemUnmap: docs/bench/gpuchecks-2026-11-29).
 * Pure: no system call, no global; the table allocates as it grows (never on
 * the launch path).
 *
 * Terms: a mapping is one successful cuMemMap(va, size, offset, handle): the
 * range [va, va + size) and the handle it maps. cuMemUnmap(va, size) ends
 * whole mappings only ("cuMemUnmap cannot unmap a sub-range of an address
 * range mapped by cuMemCreate / cuMemMap"), and one call may end several that
 * lie end to end (NVIDIA's vectorAddMMAP sample maps a range in stripes and
 * unmaps it in one call). Each mapping remembered has a serial number, in the
 * order they were added, so that an unmap ends only mappings made before it
 * began.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MEMMAP_H
#define NVT_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

struct nvt_memmap_entry {
	uint64_t va;     /* its start; 0: an empty entry */
	uint64_t size;
	uint64_t handle; /* what it maps */
	uint64_t serial; /* when it was added (nvt_memmap_serial) */
};

/* The mappings: a table keyed by va (zeroed: empty). */
struct nvt_memmap {
	struct nvt_memmap_entry *slot;
	size_t cap, n;        /* cap a power of two, or 0 */
	uint64_t next_serial; /* the serial of the next mapping added */
};

/* The table's first size, and the fill past which it doubles (3/4). */
#define NVT_MEMMAP_FIRST 256

/*
 * Remembers the mapping (va, size, handle) (va and size not 0). A mapping
 * remembered at va already has ended (the driver maps no address twice): it is
 * replaced, and its handle goes to *ended (0: none was). Returns 0, or -1 (m
 * as it was, *ended 0) when there is no memory to grow the table.
 */
int nvt_memmap_add(struct nvt_memmap *m, uint64_t va, uint64_t size, uint64_t handle,
		   uint64_t *ended);

/* The serial the next mapping added gets: what an unmap notes when it begins. */
uint64_t nvt_memmap_serial(const struct nvt_memmap *m);

/*
 * One mapping an unmap of [*va, end) ends: the one that starts at *va, if it
 * ends by end and was added before serial before. It is forgotten, its handle
 * goes to *handle and *va moves to its end. Returns 1, or 0 when there is no
 * such mapping (none starts at *va, one that passes end, which no unmap ends
 * in part, or one made since the unmap began): the walk stops there.
 */
int nvt_memmap_take(struct nvt_memmap *m, uint64_t *va, uint64_t end, uint64_t before,
		    uint64_t *handle);

/* Forgets every mapping and frees the table (a forked child holds none). */
void nvt_memmap_clear(struct nvt_memmap *m);

#endif /* NVT_MEMMAP_H */
