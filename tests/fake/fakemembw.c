/*
 * fakemembw.c - the fake driver's model of nvtaskset's bandwidth probe
 * (PTX entry nvt_membw, src/gpu/bwprobe.c): a launch "streams" for its dur
 * parameter and adds to *count the 16-byte words it would copy. Launches
 * since the last synchronize run side by side, and each earlier one costs a
 * later one a share of its own bandwidth. By default that share is 0.035
 * whatever the GPCs, as the H100 measured it (0.03-0.07, no two groups:
 * docs/memory-halves.md): no halves to find. FAKECUDA_MEMBW=halves models a
 * GPU whose memory has two halves (0.25 within a half, 0.12 across), which
 * no GPU here has shown, to test the code that uses them; =noisy: the
 * halves under +-15% noise (none to trust); =noptx: the probe's module does
 * not load (fakeprobe.c).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ACTIVE 8

static int membw_module, membw_function;
static struct {
	double gbps;
	int half;
} active[MAX_ACTIVE];
static int n_active;
static unsigned launches;

INTERNAL void *fake_membw_module(void)
{
	return &membw_module;
}

INTERNAL int fake_membw_function(void *module, const char *name, void **fn)
{
	if (module != &membw_module || strcmp(name, "nvt_membw"))
		return NVT_CUDA_ERROR_NOT_FOUND;
	*fn = &membw_function;
	return 0;
}

INTERNAL int fake_is_membw(const void *f)
{
	return f == &membw_function;
}

INTERNAL void fake_membw_sync(void)
{
	n_active = 0;
}

/* The memory half of device dev's GPC g: on the H100 chips GPCs 1, 2, 3
 * and 7 (and lone TPCs 10, 11) in half 1; elsewhere the upper half of the
 * GPC numbers. */
static int half_of(int dev, int g)
{
	if (fake_tpcs(dev) == 66 && fake_gpcs(dev) == 12)
		return g == 1 || g == 2 || g == 3 || g == 7 || g >= 10;
	return g >= fake_gpcs(dev) / 2;
}

INTERNAL void fake_run_membw(int dev, const struct fakecuda_launch *rec, void **params)
{
	const char *mode = getenv("FAKECUDA_MEMBW");
	int noisy = mode && !strcmp(mode, "noisy");
	int flat = !noisy && !(mode && !strcmp(mode, "halves"));
	uint64_t dur = *(uint64_t *)params[3];
	uint64_t *count = (uint64_t *)(uintptr_t)*(uint64_t *)params[4];
	double alone = 0, gbps, cost = 0, wiggle;
	int half = -1, tpcs = 0;
	unsigned n = __atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED);

	for (int t = 0; t < fake_tpcs(dev); t++)
		if ((rec->ran_tpcs[t / 64] >> (t % 64)) & 1) {
			tpcs++;
			if (half < 0)
				half = half_of(dev, fake_gpc_of(dev, t));
		}
	/* About 125 GB/s of copying per TPC, up to the HBM's 3.3 TB/s. */
	alone = tpcs * 125.0 < 3300 ? tpcs * 125.0 : 3300;
	for (int i = 0; i < n_active; i++)
		cost += active[i].gbps * (flat ? 0.035 : active[i].half == half ? 0.25 : 0.12);
	gbps = alone - cost > alone / 10 ? alone - cost : alone / 10;
	/* Deterministic noise: +-0.3%, or +-15% when noisy. */
	wiggle = (double)((n * 2654435761u) % 1000) / 1000.0 - 0.5;
	gbps *= 1 + wiggle * (noisy ? 0.3 : 0.006);
	if (n_active < MAX_ACTIVE) {
		active[n_active].gbps = gbps;
		active[n_active++].half = half;
	}
	*count += (uint64_t)(gbps * (double)dur / 32.0);
}
