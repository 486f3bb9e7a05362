/*
 * driverinfo.h - reading what the NVIDIA kernel module says in
 * /proc/driver/nvidia about its GPUs and itself. Pure code on text.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_DRIVERINFO_H
#define NVT_DRIVERINFO_H

#include <stddef.h>

/*
 * From a gpus/<bus>/information file, extracts the "GPU UUID" and the
 * "Model". Returns 0, or -1 if the UUID is missing or malformed.
 */
int nvt_parse_gpu_information(const char *text, char *uuid, size_t uuid_len, char *model,
			      size_t model_len);

/* From the version file, extracts the kernel module version ("580.159.04"). Returns 0 or -1. */
int nvt_parse_nvrm_version(const char *text, char *out, size_t len);

#endif /* NVT_DRIVERINFO_H */
