/*
 * observe.c - what the viewers share (nvtaskset top, --metrics, -l --svg):
 * the view of every task, read with the machine's GPUs (src/view).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli.h"
#include "view/view.h"

void observe_view(struct nvt_view *v)
{
	char why[512];

	if (nvt_view_read(nvt_rundir(), machine_gpus_if_listed(), v, why, sizeof(why))) {
		nvt_view_free(v);
		cli_errx("%s", why);
	}
}
