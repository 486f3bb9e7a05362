/*
 * output.h - the bottom of the command (tools/nvtaskset/), above its JSON
 * writer (jsonout.h): its messages and
 * usage errors, and the text it prints (JSON errors and -a's document, text
 * safe for a terminal, TPC sets). Calls nothing of the command above it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_OUTPUT_H
#define NVT_CLI_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/tpcset.h"
#include "seg/segfile.h"
#include "jsonout.h"

/* ---- Messages ---- */
/* With --json, errors are also printed as JSON objects on stdout (from now on). */
void set_json_errors(int on);
/* errx(3) and err(3) for the command: "nvtaskset: MESSAGE" on stderr and,
 * with --json, {"version":N,"error":"MESSAGE"} on stdout; exit 1. */
void cli_errx(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void cli_err(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Prints "nvtaskset: WHAT" and the --help hint; exits 1. */
void bad_usage(const char *what) __attribute__((noreturn));
/* --help and --help-all (help.c) on out; exit 0 for stdout, 1 for stderr. */
void usage(FILE *out) __attribute__((noreturn));
void usage_all(FILE *out) __attribute__((noreturn));
/* The command whose --help a usage error names (bad_usage): "nvtaskset" unless a sub-command
 * with a --help of its own says so ("nvtaskset top"). */
void usage_names(const char *command);
/*
 * The one reader of the command's numbers (options, PIDs, the environment's
 * seconds): decimal digits (nvt_decimal: no space, no sign but a leading
 * '+') from min to max. Returns 0 with *out, or -1.
 */
int number_arg(const char *text, unsigned long min, unsigned long max, unsigned long *out);
/* A PID given on the command line, or exits with a message. */
pid_t pid_arg(const char *text);
/* Words for an enum nvt_seg_err. */
const char *seg_error(int rc, const struct nvt_seg_handle *h, char *buf, size_t len);
/* seg_error for task pid: a change refused (NVT_SEG_EPERM) also says whose task it is and
 * who may change it. */
const char *seg_error_pid(int rc, const struct nvt_seg_handle *h, pid_t pid, char *buf, size_t len);

/* ---- JSON (docs/json.md; written by jsonout.h) ---- */
/* With --json asked for (set_json_errors), prints {"version":N,"error":MESSAGE} and a newline. */
void json_error_if_asked(const char *message);
/*
 * -a's document: json_tasks_begin starts {"version":N,"tasks":[...]},
 * json_tasks_add appends a task's object (json_tasks_add_error: one that
 * could not be shown or changed, {"pid":PID,"error":MESSAGE}), and
 * json_tasks_end prints it, with "error":MESSAGE at the top level unless error
 * is NULL. An error that ends the command (cli_errx) in between prints it so
 * too: every failure leaves a well-formed document with an "error".
 */
void json_tasks_begin(void);
void json_tasks_add(struct json_object *task);
void json_tasks_add_error(pid_t pid, const char *message);
void json_tasks_end(const char *error);

/* ---- Text ---- */
/* Copies s into out (len bytes) for a terminal: what nvt_utf8_shown hides
 * (controls, C1 controls, text-direction overrides, bytes that are not
 * UTF-8) becomes '?'. */
void terminal_text(const char *s, char *out, size_t len);
/* Fills list and mask texts of set. */
void describe(const struct nvt_tpcset *set, char *list, char *mask);
/* The tasks that hold TPCs a claim wanted (n of them, the first stored of them in h), as a
 * list: "pid 4242 (python train.py): 60, pid 4250 (app): 4 and 2 more tasks", the first
 * HOLDERS_NAMED named by their command lines as the terminal may show them. */
#define HOLDERS_NAMED 3
struct nvt_holder;
void holders_text(const struct nvt_holder *h, int n, int stored, char *buf, size_t len);

#endif /* NVT_CLI_OUTPUT_H */
