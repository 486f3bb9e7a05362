/*
 * viewint.h - the view's internals, private to src/view: the reads of its tasks' processes'
 * memory (viewproc.c), which nvt_view_read (view.c) makes once it has read every task.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_VIEWINT_H
#define NVT_VIEWINT_H

#include "view.h"

/*
 * Fills in each task's command, command_first, program, slurm_job and slurm_step, read
 * where a read that stalls cannot stall the view (viewproc.c says how). A task whose read
 * stalled, or was not made, has its program from /proc/PID/comm, no command and no Slurm job.
 */
void nvt_view_read_commands(struct nvt_view *v);

#endif /* NVT_VIEWINT_H */
