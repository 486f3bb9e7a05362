/*
 * top.h - private to nvtaskset top's two files (top.c: the terminal, keys,
 * options and the loop; topframe.c: a frame, drawn from a view). Only they
 * include it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_TOP_H
#define NVT_CLI_TOP_H

#include <stddef.h>

#include "core/outbuf.h"
#include "view/view.h"

#define DELAY_DEFAULT_MS 2000
#define DELAY_MIN_MS 100
#define DELAY_MAX_MS 86400000

/* The sort keys, as -o and the s key name them (top_sort_names). */
enum sort_key { BY_LAUNCHES, BY_WAITS, BY_TPCS, BY_PID, BY_USER, BY_PRIO, BY_GPU, SORT_KEYS };
extern const char *const top_sort_names[SORT_KEYS];

/* One row of the table: a task's slot (or a task without one). */
struct row {
	size_t task;
	long slot;    /* -1: the task has no slot */
	double lps;   /* launches per second, -1: not known yet */
	double wps;   /* waits per second */
	int holder;   /* its partition's holder on its GPU's map, -1 none */
};

/* What top shows and how: its options, the keys' choices, the views it draws. */
struct top {
	int batch;
	long frames;       /* -n: frames to show, 0: until q */
	int delay_ms;
	int pick;          /* the GPU shown (its nvtaskset number), -1: all */
	enum sort_key sort;
	int reverse;
	int help;          /* show the keys' help */
	int colour;
	int width, height; /* the terminal's; 0: no limit (batch) */
	char note[120];    /* a line for the last key's answer */
	/* The selected task (keys p and P act on it): its PID, 0 for the first row; move: rows
	 * to move it by at the next frame (up and down arrows, k and j). */
	long selected;
	uint64_t selected_start; /* its start time: a PID taken again is another task */
	int move;
	int prompt;        /* 0, or the key whose words are being typed ('p': MASK, 'P': LEVEL) */
	char input[64];    /* what was typed */
	const struct nvt_view *now, *prev;
	struct nvt_view_map *maps; /* one per GPU of now */
};
extern struct top top;

/* The whole frame of top.now into out: header, maps, table (cut to the terminal's height),
 * footer; rows has room for the view's slots and tasks. */
void top_frame(struct nvt_outbuf *out, struct row *rows);
/* The view's GPU with nvtaskset's number index, or -1. */
int top_gpu_numbered(int index);

#endif /* NVT_CLI_TOP_H */
