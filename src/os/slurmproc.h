/*
 * slurmproc.h - the Slurm job step a process runs in, told from /proc: used
 * by `nvtaskset -l` (its JOBSTEP column) and by the Slurm plugin (to find the
 * partition a job already holds on the node). Needs no Slurm library.
 *
 * Side effects: reads /proc. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SLURMPROC_H
#define NVT_SLURMPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A job step: job 1234, step "0", "batch", "extern", "interactive" (or "0+1", a
 * heterogeneous step's component). */
struct nvt_slurm_step {
	uint32_t job;
	char step[24];
};
#define NVT_SLURM_STEP_TEXT_MAX 40 /* "4294967295." + step + NUL */

/*
 * Parses the process title slurmstepd gives itself, "slurmstepd: [JOB.STEP]"
 * (len bytes of /proc/PID/cmdline; what follows the ']' is ignored). Pure.
 * Returns 0, or -1 if title is not one.
 */
int nvt_slurmproc_title_parse(const char *title, size_t len, struct nvt_slurm_step *out);

/*
 * Parses a job id and a step id as Slurm's task environment gives them
 * (SLURM_JOB_ID, SLURM_STEP_ID; step NULL: a batch script's, "batch"). Pure.
 * Returns 0, or -1 if they are malformed.
 */
int nvt_slurmproc_env_parse(const char *job, const char *step, struct nvt_slurm_step *out);

/* Writes "JOB.STEP" to buf (at least NVT_SLURM_STEP_TEXT_MAX bytes). */
void nvt_slurmproc_step_format(const struct nvt_slurm_step *s, char *buf, size_t len);

/* Returns 0 and fills out if pid itself is a slurmstepd, else -1. */
int nvt_slurmproc_stepd(pid_t pid, struct nvt_slurm_step *out);

/*
 * Finds the step pid runs in: the nearest slurmstepd among pid and its
 * ancestors (titles are public), else SLURM_JOB_ID and SLURM_STEP_ID in its
 * environment (readable by its user and root: a task whose parent has gone).
 * Returns 0, or -1 if it runs in none that can be told.
 */
int nvt_slurmproc_step_of(pid_t pid, struct nvt_slurm_step *out);
/*
 * The same for a caller that has read pid's command line already (each read waits for the
 * process's memory map's lock): title, len bytes of it as /proc/PID/cmdline gives them (NULL:
 * it could not be read), tells whether pid is a slurmstepd; only its ancestors' are read.
 */
int nvt_slurmproc_step_titled(pid_t pid, const char *title, size_t len, struct nvt_slurm_step *out);

#endif /* NVT_SLURMPROC_H */
