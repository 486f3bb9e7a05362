/*
 * queuerec.h - the record of a start queued with --wait (its format: src/nvtaskset.h,
 * NVT_QUEUED_MAGIC): written from a struct, read back strictly (queuerec.c). Pure.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_QUEUEREC_H
#define NVT_QUEUEREC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvtaskset.h"

/* What a queued start waits for on one GPU. */
struct nvt_queuerec_gpu {
	uint8_t uuid[16];
	unsigned count; /* TPCs, 1 .. NVT_MAX_TPCS */
};

/* A queued start, as its record says. */
struct nvt_queuerec {
	pid_t pid;          /* as its PID namespace numbers it */
	uint64_t start;     /* field 22 of /proc/PID/stat */
	uint64_t pidns;     /* its PID namespace's inode */
	uint64_t since_ms;  /* CLOCK_MONOTONIC when it began to wait */
	unsigned timeout_s; /* --wait=TIMEOUT; 0: none */
	int n_gpus;         /* 1 .. NVT_MAX_GPUS */
	struct nvt_queuerec_gpu gpu[NVT_MAX_GPUS];
	char command[NVT_QUEUED_COMMAND_MAX]; /* its COMMAND's words joined by spaces (raw bytes) */
};

/*
 * The words of argv (up to a NULL) joined by spaces into buf (len), cut to fit, as a record
 * holds a command.
 */
void nvt_queuerec_command(char *const *argv, char *buf, size_t len);

/* Writes r's record into buf (len bytes, NUL-terminated). Returns its length (without the NUL),
 * or -1 when r is no record (no GPU, a count of 0, a PID of 0) or it does not fit. */
int nvt_queuerec_format(const struct nvt_queuerec *r, char *buf, size_t len);

/*
 * Reads the record text (n bytes, which need not end in a NUL) into r: every line in its
 * order, every number in its range (a PID of 31 bits, a count of 1 to NVT_MAX_TPCS), no
 * NUL, at most NVT_QUEUED_MAX bytes. Returns 0, or -1 (r then says nothing).
 */
int nvt_queuerec_parse(const char *text, size_t n, struct nvt_queuerec *r);

/* Writes the name of the record of process pid of PID namespace pidns (NVT_QUEUED_PREFIX
 * PIDNS.PID), with NVT_QUEUED_NEW after it when new. Returns 0, or -1 if it does not fit. */
int nvt_queuerec_name(char *buf, size_t len, uint64_t pidns, pid_t pid, int new);
/* Parses a record's name (that form, digits without a leading zero). Returns 0 for a record's,
 * 1 for one being made (NVT_QUEUED_NEW), -1 for neither. */
int nvt_queuerec_name_parse(const char *name, uint64_t *pidns, pid_t *pid);

#endif /* NVT_QUEUEREC_H */
