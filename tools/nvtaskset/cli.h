/*
 * cli.h - the top of the command (tools/nvtaskset/): its options, the
 * sub-commands main.c dispatches to, and the steps they share (-p's for -a,
 * priorities for a start and -p, the process tree for -a and -l). Includes
 * the layers below: output.h, machine.h, partition.h. Only the command
 * includes it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_H
#define NVT_CLI_H

#include <getopt.h>
#include <stdio.h>
#include <sys/types.h>

#include "gpu/gpus.h"
#include "nvtaskset.h"
#include "core/ptree.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/tpcset.h"
#include "core/claim.h"
#include "output.h"
#include "machine.h"
#include "partition.h"

#define EXIT_MPS_NOT_RUNNING 3
/* How often -a -p MASK looks for tasks started during the change, at most. */
#define ALL_TASKS_ROUNDS 8

struct nvt_view;
struct nvt_mps;

struct options {
	int pid_mode;
	int list_mode;
	struct part_args part; /* MASK's form, --gpu, -n and its pick (partition.h) */
	struct mem_args mem;   /* --mem (partition.h) */
	int json;
	int no_mps;
	const char *mps_action;
	int calibrate;
	int topology;
	int sm_limit; /* --sm-limit: MPS's active thread percentage matches the partition */
	int dry_run;  /* --dry-run: say what a start would give, start nothing */
	int all_tasks; /* -a: -p acts on the task and its descendants */
	int launched_only; /* --launched: -l leaves out tasks that launched no kernel */
	int mps_force;     /* --force: --mps stop stops a daemon that serves tasks */
	int channels; /* --channels: a count or NVT_CHANNELS_CUDA; 0: not given */
	int sm_count_given; /* --sm-count */
	int sm_count;       /* its enum nvt_sm_count_mode */
	/* Priorities (prio.c, docs/priorities.md) */
	int prio_given;    /* --priority */
	int mask_left_out; /* a start with --priority and no MASK: every TPC (main.c's run_start) */
	uint8_t prio;      /* enum nvt_prio (--priority none: NVT_PRIO_NONE) */
	unsigned guard;    /* --guard: TPCs while guarded (with --agent: the default); 0: none given */
	int no_lend;       /* --no-lend */
	int yield_option;  /* --yield */
	int yield_given;   /* --yield, other than default alone (which is as if left out) */
	struct nvt_slot_prio yield; /* --yield's words and values (yield, bound_us, ahead_us, duty_pct) */
	int agent;         /* --agent */
	int across_users;  /* --across-users: root's agent compares users' priorities */
	unsigned hold_ms, poll_us, idle_exit_s; /* --hold, --poll, --idle-exit (0: not given) */
	int wait_given;    /* --wait[=TIMEOUT]: a claim that finds the GPU full waits */
	unsigned wait_s;   /* its TIMEOUT in seconds; 0: none */
	/* What runs where (docs/observability.md) */
	const char *svg_file;  /* -l --svg FILE: the partition map as a picture */
	int metrics;           /* --metrics */
	const char *exporter;  /* --exporter [ADDR:]PORT */
	int info; /* --help, --help-all or --version: the first given (its option's value); 0: none */
};

/* ---- The sub-commands (one file each) ---- */
/* run.c: mask_text MASK ("": the options give it), argv COMMAND and its arguments */
int nvt_cmd_run(const struct options *o, const char *mask_text, char **argv);
int nvt_cmd_pid(const struct options *o, pid_t pid, const char *mask_text); /* pid.c */
int nvt_cmd_list(const struct options *o);                         /* list.c */
int nvt_cmd_mps(const struct options *o);                          /* mpsctl.c */
int nvt_cmd_topology(const struct options *o);                     /* topology.c */
int nvt_cmd_agent(const struct options *o);                        /* prio.c */
int nvt_cmd_cdi(int argc, char **argv);      /* cdi.c: --cdi, with options of its own */
extern const struct option nvt_cdi_options[]; /* cdi.c: --cdi's options */
int nvt_cmd_cdi_hook(int argc, char **argv); /* cdihook.c: --cdi-hook, run by the runtime */
int nvt_cmd_top(int argc, char **argv);      /* top.c: nvtaskset top, with options of its own */
int nvt_cmd_svg(const struct options *o);    /* svg.c: -l --svg FILE */
int nvt_cmd_metrics(const struct options *o); /* metrics.c: --metrics */
int nvt_cmd_exporter(const struct options *o); /* metrics.c: --exporter, the exporter's start */
/*
 * run.c: makes sure an MPS control daemon the task may join runs, starting one
 * (and saying so, with how to stop it) if none does; channels as --channels
 * (0: not given). Returns its pipe directory, or NULL where the task runs
 * without MPS (its default directories another user's: warned,
 * nvt_mps_squatted_default); exits on failure.
 */
const char *ensure_mps(int channels, const struct nvt_slot_view *parts, int n);
/* The same, returning the daemon (its started: whether this call started it; valid until the
 * next call), for a caller that stops it again (--cdi --with-mps, when it fails); it never
 * goes without MPS (it exits instead). */
const struct nvt_mps *ensure_mps_daemon(int channels, const struct nvt_slot_view *parts, int n);
/* Says that the set-up of mps renamed another user's entry aside as aside (nvt_mps_setup_taking),
 * if it did (aside not ""). */
void mps_aside_said(const struct nvt_mps *mps, const char *aside);

/* ---- prio.c: priorities ---- */
/* An option's number from min to max; exits (bad usage) otherwise. */
unsigned prio_number(const char *what, const char *text, unsigned min, unsigned max);
/*
 * Sets the priority part of want, a partition a writer gives a task: old's
 * (the slot it replaces, or NULL) or the options', with own = its TPCs.
 */
void prio_carry(const struct options *o, struct nvt_slot_view *want, const struct nvt_slot_view *old);
/* -p --priority without a MASK: the task's slots with their own partitions, into
 * parts. Returns how many, or -1 with the reason in why. */
int prio_plan(const struct options *o, const struct nvt_seg_handle *h, struct nvt_slot_view *parts,
	      char *why, size_t len);
/* The priority that --priority, --guard, --no-lend and --yield give (o->prio_given). */
void prio_given(const struct options *o, struct nvt_slot_prio *given);
/* Starts the caller's priority agent, detached, unless it or root's runs, if
 * the priority given needs one (--yield guard). Never waits for it. */
void prio_autostart(const struct options *o);
/* The same for the words a task was given (p). */
void prio_autostart_words(const struct nvt_slot_prio *p);
/* Ends the command (exit 1, saying why) if the priority given needs an agent and the
 * environment holds a bad agent setting (NVTASKSET_POLL_US, _HOLD_MS, _GUARD): an
 * agent started with it would not run. */
void prio_check_settings(const struct options *o);
/* The same for the words a task is given (p). */
void prio_check_settings_words(const struct nvt_slot_prio *p);
/* Ends the command (exit 1, saying the GPU's count) if --guard N is more TPCs than a GPU of
 * parts (n of them) has (nvt_prio_guard_fits). */
void prio_check_guard(const struct options *o, const struct nvt_slot_view *parts, int n);

/* ---- observe.c: what top, --metrics and -l --svg share ---- */
/* Reads the view of every task now (src/view), with the machine's GPUs where they can be
 * listed; exits on failure. The caller frees it (nvt_view_free). */
void observe_view(struct nvt_view *v);
/* What a start queued with --wait (record r) waits for, into buf: "4 TPCs on GPU 0
 * (--wait=60)", "2 TPCs on GPU 0 and 2 TPCs on GPU 1 (--wait)" ("GPU ?": not on this machine's
 * list). */
struct nvt_queuerec;
void queued_what(const struct nvt_queuerec *r, char *buf, size_t len);

/* ---- pid.c: the steps of -p for one task, which -a repeats for each ---- */
/*
 * Prints the partitions of the task open as h: a line per GPU, or (--json)
 * its JSON object, with "version" when top (the whole document). Returns 0,
 * or -1 with the reason in why.
 */
int pid_show(const struct options *o, const struct nvt_seg_handle *h, int top, char *why, size_t len);
/*
 * The partitions -p MASK gives the task open as h, for each of its GPUs
 * (those it has slots for, else the machine's), into parts. Returns how
 * many, or -1 with the reason in why (bad input for this task's GPUs).
 */
int pid_plan(const struct options *o, const char *mask_text, const struct nvt_seg_handle *h,
	     struct nvt_slot_view *parts, char *why, size_t len);
/*
 * Writes parts (n_parts; those of state NVT_SLOT_SET) into the task open for
 * writing as h (nvt_task_set_partition), closes h, and prints the old and new partitions (lines, or
 * the JSON object as pid_show). Sets *changed (unless NULL) if a partition
 * written differs from the one the task had. Returns 0, or -1 with the
 * reason in why.
 */
int pid_apply(const struct options *o, struct nvt_seg_handle *h, const struct nvt_slot_view *parts,
	      int n_parts, int top, int *changed, char *why, size_t len);

/* ---- tree.c: process trees, for -a and -l ---- */
/* The tasks under nvtaskset and every process's parent, read at one time. */
struct task_tree {
	pid_t *tasks;               /* ascending, as nvt_seg_tasks lists them */
	int n_tasks;
	struct nvt_proc_link *links; /* every process of /proc, sorted by PID */
	size_t n_links;
	struct nvt_seg_skipped skipped; /* what the listing passed over */
};
/* Reads the tasks (removing leftovers if tidy) and /proc. Returns 0 or -1 with errno set. */
int task_tree_read(struct task_tree *t, int tidy);
/* Warns of each entry the listing passed over (-l). */
void task_tree_warn_skipped(const struct task_tree *t);
/* Root's -l: names each container's directory that outlived its container, with its size. */
void task_tree_warn_leftovers(void);
void task_tree_free(struct task_tree *t);
/* -a: -p for the task root and each task that descends from it. */
int nvt_cmd_all_tasks(const struct options *o, pid_t root, const char *mask_text);

#endif /* NVT_CLI_H */
