/* The logical TPC -> V04 mask bit map measured on the project's H100
 * (docs/hardware-facts.md, section 3) and its GPCs (section 4, in order of each
 * GPC's lowest TPC). SPDX-License-Identifier: MIT */
#ifndef H100_FIXTURE_H
#define H100_FIXTURE_H
#include <stdint.h>
static const uint8_t h100_bits[66] = {
	0,  9,  18, 27, 36, 45, 54, 63, 1,  10, 19, 28, 37, 46, 55, 64, 2,  11, 20, 29, 38, 47,
	56, 65, 3,  12, 21, 30, 39, 48, 57, 66, 13, 22, 31, 40, 49, 58, 67, 14, 23, 32, 41, 50,
	59, 68, 15, 24, 33, 42, 51, 60, 69, 16, 25, 34, 43, 52, 61, 70, 62, 71, 75, 78, 81, 83,
};
/* SM IDs stripe over GPCs: TPCs 0-31 over all 8 (GPC 0 then has its 4),
 * 32-59 over GPCs 1-7, 60-61 over GPCs 6-7 (9 TPCs each); TPCs 62-65 share
 * a cluster with no other TPC and form "GPCs" 8-11. Matches every group of
 * --topology in docs/gpu/2026-11-21/check-gpu.log. */
static inline uint8_t h100_gpc(unsigned t)
{
	if (t < 32)
		return (uint8_t)(t % 8);
	if (t < 60)
		return (uint8_t)(1 + (t - 32) % 7);
	return (uint8_t)(t < 62 ? 6 + (t - 60) : 8 + (t - 62));
}
#endif
