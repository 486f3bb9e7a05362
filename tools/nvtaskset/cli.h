/*
 * cli.h - what the nvtaskset command's files share: its options, and the
 * helpers that turn command-line partitions and control segments into
 * messages. Only the command (tools/nvtaskset/) includes it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_H
#define NVT_CLI_H

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

#define GPU_QUERY_TIMEOUT_S 60
#define SEG_LOCK_TIMEOUT_MS 2000
#define CLAIM_TIMEOUT_S 10 /* default of NVTASKSET_CLAIM_TIMEOUT */
#define MPS_TIMEOUT_MS 10000
#define MPS_QUERY_TIMEOUT_MS 10000
#define EXIT_MPS_NOT_RUNNING 3
/* The "version" of what -p, -a, -l and --dry-run (and -n's pick) print as JSON
 * (docs/json.md, which lists what each version changed). */
#define NVT_JSON_VERSION 2
/* How often -a -p MASK looks for tasks started during the change, at most. */
#define ALL_TASKS_ROUNDS 8

struct options {
	int pid_mode;
	int list_mode;
	int tpc_list; /* -c: MASK is a TPC list */
	int gpc_list; /* -g: MASK is a GPC list */
	int json;
	int no_mps;
	const char *mps_action;
	/* --gpu GPU or --gpu GPU=MASK, in order given */
	int n_gpus;
	struct gpu_arg {
		const char *gpu;  /* index or UUID as the user wrote it */
		const char *mask; /* the GPU's own MASK, or NULL */
	} gpus[NVT_MAX_GPUS];
	int gpu_masks; /* the --gpu options carry masks (GPU=MASK) */
	unsigned count; /* -n: pick this many TPCs (0: not given) */
	enum nvt_strategy strategy;
	int exclude_running;
	int memory_half_given; /* --memory-half */
	int memory_half;       /* 0, 1, or NVT_HALF_UNKNOWN: auto */
	int calibrate;
	int topology;
	int sm_limit; /* --sm-limit: MPS's active thread percentage matches the partition */
	int dry_run;  /* --dry-run: say what a start would give, start nothing */
	int all_tasks; /* -a: -p acts on the task and its descendants */
	int launched_only; /* --launched: -l leaves out tasks that launched no kernel */
	int channels; /* --channels: a count or NVT_CHANNELS_CUDA; 0: not given */
	/* Priorities (prio.c, docs/priorities.md) */
	int prio_given;    /* --priority */
	uint8_t prio;      /* enum nvt_prio (--priority none: NVT_PRIO_NONE) */
	unsigned guard;    /* --guard: TPCs while guarded (with --agent: the default); 0: none given */
	int no_lend;       /* --no-lend */
	int yield_given;   /* --yield */
	struct nvt_slot_prio yield; /* --yield's words and values (yield, bound_us, ahead_us, duty_pct) */
	int agent;         /* --agent */
	int across_users;  /* --across-users: root's agent compares users' priorities */
	unsigned hold_ms, poll_us, idle_exit_s; /* --hold, --poll, --idle-exit (0: not given) */
};

/* ---- The sub-commands (one file each) ---- */
int nvt_cmd_run(const struct options *o, char **argv);             /* run.c */
int nvt_cmd_pid(const struct options *o, int argc, char **argv);   /* pid.c */
int nvt_cmd_list(const struct options *o);                         /* list.c */
int nvt_cmd_mps(const struct options *o);                          /* mpsctl.c */
int nvt_cmd_topology(const struct options *o);                     /* topology.c */
int nvt_cmd_agent(const struct options *o);                        /* prio.c */

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
/* Sets (or, without a priority, unsets) NVT_ENV_PRIORITY for a COMMAND started,
 * and MPS's client priority for one that yields so (NVT_YIELD_CLIENT). */
void prio_start_env(const struct options *o);
/* Starts the caller's priority agent, detached, unless it or root's runs, if
 * the priority given needs one (--yield guard). Never waits for it. */
void prio_autostart(const struct options *o);

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
};
/* Reads the tasks (removing leftovers if tidy) and /proc. Returns 0 or -1 with errno set. */
int task_tree_read(struct task_tree *t, int tidy);
void task_tree_free(struct task_tree *t);
/* -a: -p for the task root and each task that descends from it. */
int nvt_cmd_all_tasks(const struct options *o, pid_t root, const char *mask_text);

/* ---- output.c: errors and JSON fields (docs/json.md) ---- */
/* With --json, errors are also printed as JSON objects on stdout (from now on). */
void set_json_errors(int on);
/* errx(3) and err(3) for the command: "nvtaskset: MESSAGE" on stderr and,
 * with --json, {"version":N,"error":"MESSAGE"} on stdout; exit 1. */
void cli_errx(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void cli_err(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* With --json asked for (set_json_errors), prints {"version":N,"error":MESSAGE} and a newline. */
void json_error_if_asked(const char *message);
/*
 * -a's document: json_tasks_begin prints {"version":N,"tasks":[ and
 * json_tasks_end closes it, with "error":MESSAGE at the top level unless error
 * is NULL. An error that ends the command (cli_errx) in between closes it so
 * too: every failure leaves a well-formed document with an "error".
 */
void json_tasks_begin(void);
void json_tasks_end(const char *error);
/* Prints {"pid":PID,"error":MESSAGE}, or {"version":N,"error":MESSAGE} for pid 0. */
void json_error(pid_t pid, const char *message);
/* Starts a GPU's JSON object on out: {"gpu":N,"uuid":"..." (gpu null when not on this
 * machine's list). */
void json_gpu_start(FILE *out, const uint8_t uuid[16]);
/* Prints "partitioned","tpcs","tpc_mask","tpc_count","tpc_ids" of a partition on out (nulls
 * when state is not NVT_SLOT_SET): the partition object of docs/json.md. */
void json_partition_fields(FILE *out, uint32_t state, const struct nvt_tpcset *tpcs);

/* ---- run.c ---- */
/*
 * Finds file name of nvtaskset's library directory (LIBDIR as seen from the
 * command's directory, the build tree's lib/nvtaskset, LIBDIR): 0 and its
 * path in buf, or -1 and the places looked at in buf.
 */
int find_lib_file(const char *name, char *buf, size_t len);

/* ---- main.c ---- */
/* Prints "nvtaskset: WHAT" and the --help hint; exits 1. */
void bad_usage(const char *what) __attribute__((noreturn));

/* ---- common.c: shared by the sub-commands ---- */
/* Prints s as a JSON string: valid UTF-8 whatever s holds (bytes that are
 * not UTF-8 become U+FFFD), controls escaped. */
void json_string(const char *s);
/* Prints set as a JSON array of TPC numbers, to out. */
void json_tpc_array(FILE *out, const struct nvt_tpcset *set);
/* Copies s into out (len bytes) for a terminal: controls, C1 controls,
 * text-direction overrides and bytes that are not UTF-8 become '?'. */
void terminal_text(const char *s, char *out, size_t len);
/* Fills list and mask texts of set. */
void describe(const struct nvt_tpcset *set, char *list, char *mask);
/* Milliseconds -n --exclude-running waits for other claimers' overlapping claims:
 * $NVTASKSET_CLAIM_TIMEOUT seconds (1-3600; unset or empty: 10); exits on a bad value. */
int claim_timeout_ms(void);
/* Milliseconds to wait for the driver ($NVTASKSET_DRIVER_TIMEOUT); exits on a bad value. */
int driver_timeout_ms(void);
/* The machine's GPUs (listed once), or exits. */
const struct nvt_gpus *machine_gpus(void);
/* The number of the GPU a --gpu argument names, or exits with the reason. */
int resolve_gpu(const char *arg);
/* Loads (or measures) GPU index's topology. Returns 0, or -1 or NVT_GPU_HIDDEN with why. */
int load_topology(int index, int force, struct nvt_gpu_topology *out, char *why, size_t len);
/* The same, or exits with the reason. */
struct nvt_gpu_topology load_gpu(int index, int force);
/*
 * Turns MASK (hex, -c list, -g list or -n) into the TPC set *set for the GPU
 * with topology topo and uuid (called gpu_name in messages); -n
 * --exclude-running leaves out what the tasks but self hold. Returns 0, or -1
 * with a one-line reason in why.
 */
int parse_partition(const struct options *o, const char *text, const struct nvt_topology *topo,
		    const uint8_t uuid[16], const char *gpu_name, pid_t self, struct nvt_tpcset *set,
		    char *why, size_t len);
/*
 * Where -n --memory-half picks on the GPU uuid (topology topo): near gets the
 * TPCs of the half asked for (NVT_NEAR_ONLY), or of the half where the
 * tasks but self hold fewest TPCs among those with o->count TPCs of avail
 * (auto: NVT_NEAR_PREFER; mode NVT_NEAR_NONE when neither has, with a
 * warning). Without --memory-half, mode NVT_NEAR_NONE. Returns 0, or -1 with
 * the reason in why (the halves were not measured, or the half is too small).
 */
int memory_near(const struct options *o, const uint8_t uuid[16], const struct nvt_topology *topo,
		pid_t self, const struct nvt_tpcset *avail, struct nvt_near *near, char *why,
		size_t len);
/* memory_near for -n --exclude-running's claims on part's GPU: avail is what
 * the tasks but self leave free, and a half asked for is not refused for want
 * of room here (the claim protocol decides, and says so). */
int near_of(const struct options *o, const struct nvt_slot_view *part, pid_t self,
	    struct nvt_near *near, char *why, size_t len);
/*
 * The partitions a task gets (run) or is given (-p): for each GPU of the
 * task, its UUID, topology and, for the GPUs MASK or --gpu names, the TPC
 * set. task_gpus lists the task's GPUs (n_task, nvtaskset's numbers);
 * topos, where not NULL, gives topologies already known (n_task entries,
 * n_tpcs 0 where unknown). Returns how many entries out holds, or -1 with
 * the reason in why (bad input for this task's GPUs); exits only if the
 * machine's GPUs cannot be listed or a --gpu names none of them.
 */
int build_partitions(const struct options *o, const char *mask, const int *task_gpus, int n_task,
		     const struct nvt_topology *topos, pid_t self, struct nvt_slot_view *out,
		     char *why, size_t len);
/*
 * The MPS active thread percentage that lets a task see no more SMs than the
 * largest share of its GPUs that parts give it (ceil(100 * TPCs / all)).
 */
int sm_limit_percent(const struct nvt_slot_view *parts, int n);
/* nvtaskset's number of the GPU with this UUID, or -1. */
int gpu_index_of(const uint8_t uuid[16]);
/* "this GPU" when the task has one GPU, else "GPU N". */
void gpu_name(int index, int n_task, char *buf, size_t len);
/* Words for an enum nvt_seg_err. */
const char *seg_error(int rc, const struct nvt_seg_handle *h, char *buf, size_t len);
/*
 * Sets NVT_ENV_PARTITION_FOR to this process (the COMMAND it is about to
 * exec), so that the COMMAND's shim takes NVT_ENV_PARTITION rather than a
 * partitioned ancestor's; unsets it if this process cannot be named.
 */
void mark_partition_owner(void);
/*
 * Channels each new MPS client asks for: $CUDA_DEVICE_MAX_CONNECTIONS, else
 * what channels (--channels; 0: not given, nvtaskset's default) leaves it.
 */
int client_connections(int channels);

#endif /* NVT_CLI_H */
