/*
 * pid.c - nvtaskset -p: show or change the partition of a running task.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static pid_t parse_pid(const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v <= 0 || v > INT_MAX)
		errx(EXIT_FAILURE, "invalid PID argument: '%s'", text);
	return (pid_t)v;
}

static void print_partition(const struct options *o, pid_t pid, const char *which,
			    const struct nvt_slot_view *view)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	if (view->state != NVT_SLOT_SET) {
		printf("pid %ld's %s TPC %s: all (not partitioned)\n", (long)pid, which,
		       o->tpc_list || o->gpc_list ? "list" : "mask");
		return;
	}
	describe(&view->tpcs, list, mask);
	if (o->tpc_list || o->gpc_list)
		printf("pid %ld's %s TPC list: %s\n", (long)pid, which, list);
	else
		printf("pid %ld's %s TPC mask: %s\n", (long)pid, which, mask);
}

static void json_partition(const char *key, const struct nvt_slot_view *view)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	printf("\"%s\":{\"partitioned\":%s", key, view->state == NVT_SLOT_SET ? "true" : "false");
	if (view->state == NVT_SLOT_SET) {
		describe(&view->tpcs, list, mask);
		printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list, mask,
		       nvt_set_count(&view->tpcs));
	}
	putchar('}');
}

/* Reads slot 0; returns 0, or -1 if a writer died half-way through it (or
 * the file shrank). */
static int read_slot(struct nvt_seg_handle *h, struct nvt_slot_view *view, uint64_t *applied,
		     uint64_t *rejected)
{
	return nvt_seg_read(h, 0, view, applied, rejected) ? -1 : 0;
}

int nvt_cmd_pid(const struct options *o, int argc, char **argv)
{
	const char *mask_text = argc == 2 ? argv[0] : o->count ? "" : NULL;
	pid_t pid = parse_pid(argv[argc - 1]);
	struct nvt_seg_handle h;
	struct nvt_slot_view old, now;
	struct nvt_topology topo;
	struct nvt_tpcset set;
	struct timespec written;
	uint64_t applied = 0, rejected = 0;
	char why[160];
	int rc, readable;

	rc = nvt_seg_open(nvt_rundir(), pid, mask_text != NULL, &h);
	if (rc)
		errx(EXIT_FAILURE, "failed to %s pid %ld's partition: %s",
		     mask_text ? "set" : "get", (long)pid, seg_error(rc, &h, why, sizeof(why)));
	readable = read_slot(&h, &old, &applied, &rejected) == 0;
	if (!mask_text) {
		if (!readable)
			errx(EXIT_FAILURE,
			     "failed to get pid %ld's partition: a writer died while changing it; "
			     "set a new partition to repair it",
			     (long)pid);
		if (o->json) {
			printf("{\"pid\":%ld,", (long)pid);
			json_partition("current", &old);
			printf(",\"applied\":%s}\n", applied == old.seq ? "true" : "false");
		} else {
			print_partition(o, pid, "current", &old);
		}
		if (old.seq && rejected == old.seq)
			warnx("pid %ld refused this partition (it enables no working TPC) and runs "
			      "on its previous one",
			      (long)pid);
		else if (old.state == NVT_SLOT_SET && applied != old.seq)
			warnx("pid %ld has not applied this partition yet: it has launched no kernel "
			      "since, or its program runs without the nvtaskset shim",
			      (long)pid);
		nvt_seg_close(&h);
		return EXIT_SUCCESS;
	}
	if (readable && old.state == NVT_SLOT_SET && nvt_topo_validate(&old.topo) == 0 &&
	    o->gpu < 0)
		topo = old.topo; /* what the task already uses: no driver call */
	else
		topo = gpu_topology(o);
	set = parse_partition(o, mask_text, &topo, pid);
	rc = nvt_seg_lock(&h, SEG_LOCK_TIMEOUT_MS);
	if (rc)
		errx(EXIT_FAILURE, "failed to set pid %ld's partition: %s", (long)pid,
		     seg_error(rc, &h, why, sizeof(why)));
	/* Under the lock no live writer is inside: a failed read is a dead one's. */
	readable = read_slot(&h, &old, NULL, NULL) == 0;
	rc = nvt_seg_write(&h, 0, NVT_SLOT_SET, &set, &topo);
	clock_gettime(CLOCK_MONOTONIC, &written);
	if (rc == NVT_SEG_OK && read_slot(&h, &now, NULL, NULL))
		rc = NVT_SEG_ECORRUPT;
	nvt_seg_close(&h);
	if (rc)
		errx(EXIT_FAILURE, "failed to set pid %ld's partition: %s", (long)pid,
		     seg_error(rc, &h, why, sizeof(why)));
	if (o->json) {
		/* When the change was made, for measuring how soon launches follow. */
		printf("{\"pid\":%ld,\"written_monotonic_ns\":%lld,", (long)pid,
		       (long long)written.tv_sec * 1000000000LL + written.tv_nsec);
		if (readable) {
			json_partition("previous", &old);
			putchar(',');
		}
		json_partition("current", &now);
		printf("}\n");
	} else {
		if (readable)
			print_partition(o, pid, "current", &old);
		print_partition(o, pid, "new", &now);
	}
	return EXIT_SUCCESS;
}

