/*
 * fakeapp.h - what fakeapp.c shares with fakeappgraph.c (its graph modes),
 * fakeappsms.c and fakeappioctl.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKEAPP_H
#define FAKEAPP_H

#include <stddef.h>
#include <stdint.h>

#ifdef USE_DLOPEN
/* The handle of libcuda.so.1, as the program dlopen()ed it. */
extern void *fakeapp_lib;
#endif

/* Writes the TPC list of w as nvtaskset prints lists ("0-3,8"). */
void tpcs_text(const uint64_t w[4], char *buf, size_t len);
/* Writes text and a newline to path atomically (a temporary file, renamed). */
void write_state(const char *path, const char *text);
/* TEXT, WHAT's number in BASE, from MIN to MAX; else says so and exits with 2. */
long arg_number(const char *what, const char *text, int base, long min, long max);
/* path exists. */
int exists(const char *path);
/* Appends "NS TEXT" to $FAKEAPP_STAMP, if set (NS: CLOCK_MONOTONIC). */
void stamp(const char *text);

/* fakeapp graph NODES STOP OUT [OPTION...] and graph-once NODES [OPTION...]:
 * returns the exit status. */
int graph_main(int argc, char **argv);
/* fakeapp sms, sms-on, coop, coop-on (fakeappsms.c): argv[0] is the mode;
 * returns the exit status. */
int sms_main(int argc, char **argv);
/* fakeapp rm-ioctl FORM (fakeappioctl.c), after a launch: returns the exit status. */
int rm_ioctl_main(const char *form);
/* fakeapp reopen (fakeappioctl.c): closes the driver's descriptor and opens /dev/null on its
 * number. Returns 0, or -1 (no descriptor of the driver's, or the number not taken again). */
int rm_reopen_other(void);

#endif /* FAKEAPP_H */
