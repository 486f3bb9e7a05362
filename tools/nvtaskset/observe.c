/*
 * observe.c - what the viewers share (nvtaskset top, --metrics, -l --svg):
 * the view of every task, read with the machine's GPUs (src/view); and what a start queued
 * with --wait waits for, in -l's and -p's words.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "cli.h"
#include "view/view.h"
#include "core/queuerec.h"

void observe_view(struct nvt_view *v)
{
	char why[512];

	if (nvt_view_read(nvt_rundir(), machine_gpus_if_listed(), v, why, sizeof(why))) {
		nvt_view_free(v);
		cli_errx("%s", why);
	}
}

void queued_what(const struct nvt_queuerec *r, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < r->n_gpus && used < len; i++) {
		int index = gpu_index_of(r->gpu[i].uuid);
		char gpu[16] = "?";
		if (index >= 0)
			snprintf(gpu, sizeof(gpu), "%d", index);
		used += (size_t)snprintf(buf + used, len - used, "%s%u TPC%s on GPU %s",
					 i ? (i + 1 == r->n_gpus ? " and " : ", ") : "", r->gpu[i].count,
					 r->gpu[i].count == 1 ? "" : "s", gpu);
	}
	if (used < len)
		snprintf(buf + used, len - used, r->timeout_s ? " (--wait=%u)" : " (--wait)",
			 r->timeout_s);
}
