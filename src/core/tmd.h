/*
 * tmd.h - writing the TPC disable mask into a kernel's Task Metadata
 * Descriptor (TMD, a.k.a. QMD). Pure code on byte buffers.
 *
 * Which layout a GPU's TMDs have is decided from its compute capability
 * (nvt_tmd_layouts_for_cc) and confirmed by the version byte that layout
 * implies; it is written only where calibration verified it (see calibrate.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TMD_H
#define NVT_TMD_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"

/* Words of the widest mask (V04_01 and V05_00: 256 bits). The writers touch
 * nothing past byte 351 (V04_01's upper mask); Hopper and Blackwell TMDs have
 * 384 bytes, older ones 256, of which V01 touches bytes 72-91 only. */
#define NVT_TMD_MASK_WORDS 8

/* Returns the layout's name ("V05_00"; "none" for NVT_TMD_NONE), or NULL. */
const char *nvt_tmd_layout_name(unsigned layout);

/* Returns the layout named by the len bytes at name, or -1. */
int nvt_tmd_layout_from_name(const char *name, size_t len);

/* Returns the layout's mask width in bits (64, 128 or 256; 0 for none). */
unsigned nvt_tmd_layout_bits(unsigned layout);

/* Returns the offset of the version byte the layout implies (72 or 58; 0 for none). */
unsigned nvt_tmd_version_offset(unsigned layout);

/* Returns 1 if tmd's version byte, where the layout puts it, is one of the
 * layout's versions, else 0. Reads that one byte only. */
int nvt_tmd_is(unsigned layout, const void *tmd);

/*
 * Fills layouts (room for max) with the layouts a GPU of compute capability
 * major.minor may use, the most likely first. Returns how many (0: none known).
 */
unsigned nvt_tmd_layouts_for_cc(unsigned major, unsigned minor, unsigned *layouts, unsigned max);

/*
 * Writes disable (set bit = TPC slot disabled; bit b is bit b%32 of word
 * b/32; the layout's width of it) into tmd and sets the bit that makes the
 * hardware honour it, if the layout has one. Touches nothing else. Returns 0,
 * or -1 without touching tmd if its version byte is not the layout's.
 */
int nvt_tmd_write(unsigned layout, void *tmd, const uint32_t disable[NVT_TMD_MASK_WORDS]);


/*
 * Returns how many CTAs one thread-block cluster of tmd's launch has (the
 * product of its GPC_CGA dimensions), or 1 if the launch has no clusters or
 * the layout does not describe them. A cluster runs inside one GPC. The
 * caller has checked the version byte (nvt_tmd_is).
 */
unsigned nvt_tmd_cluster_size(unsigned layout, const void *tmd);

#endif /* NVT_TMD_H */
