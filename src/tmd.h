/*
 * tmd.h - writing the TPC disable mask into a kernel's Task Metadata
 * Descriptor (TMD, a.k.a. QMD). Pure code on byte buffers.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TMD_H
#define NVT_TMD_H

#include <stdint.h>

/* Offset of the TMD version byte (major << 4 | minor: 0x40 is V04_00). */
#define NVT_TMD_VERSION_OFFSET 72
/* Bytes of a TMD the writer may touch: through the V04 mask's last word. */
#define NVT_TMD_MIN_BYTES 320

enum nvt_tmd_kind {
	NVT_TMD_TOO_OLD,  /* before V01_06: no mask field */
	NVT_TMD_V1,       /* V01_06 .. V03_00: 64-bit mask, bit t = TPC t */
	NVT_TMD_V4,       /* V04_00 (Hopper): 128-bit mask of physical TPC slots */
	NVT_TMD_UNKNOWN,  /* a layout never verified: never write it */
};

/* Returns the kind of a TMD from its version byte. */
enum nvt_tmd_kind nvt_tmd_classify(uint8_t version);

/* Returns the version byte of tmd. */
uint8_t nvt_tmd_version(const void *tmd);

/* Writes a 64-bit disable mask (set bit = TPC disabled) into a V1-kind TMD. */
void nvt_tmd_write_v1(void *tmd, uint64_t disable);
/* Reads it back. */
uint64_t nvt_tmd_read_v1(const void *tmd);

/*
 * Writes a 128-bit disable mask (four little-endian words, bits 0-127) into a
 * V04 TMD and sets the bit that makes the hardware honour it.
 */
void nvt_tmd_write_v4(void *tmd, const uint32_t disable[4]);
/* Reads the mask back; returns 1 if the enable bit is set, else 0. */
int nvt_tmd_read_v4(const void *tmd, uint32_t disable[4]);

#endif /* NVT_TMD_H */
