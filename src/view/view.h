/*
 * view.h - what runs where, read at one moment, for the viewers: nvtaskset
 * top, --metrics and the exporter, -l --svg. A view holds every task's
 * partition slots (what -l reads), the machine's GPUs with their TPC maps,
 * the priority agents and the MPS control daemon; from it come each GPU's map
 * (who holds which TPC, who borrows it), the state words, and, between two
 * views, the rates of launches and waits. Reading a view changes nothing:
 * no file is written, tidied or locked, no task is touched, no GPU code runs
 * (a GPU's map comes from the calibration cache or a slot of a task of
 * root's or the reader's own, never from calibrating: nvt_map_from).
 *
 * Terms: a task's *own* TPCs are its partition (a task with a priority: the
 * one its user gave it); its *current* TPCs are what its launches use now,
 * which for a task that borrows are its own and those it borrows; *borrowed*
 * are the current ones that are not its own. A GPU's *free* TPCs are those
 * no task holds, own or borrowed, claims counted (what a claim would keep
 * clear of).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_VIEW_H
#define NVT_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/cdi.h"
#include "core/outbuf.h"
#include "core/queuerec.h"
#include "gpu/gpus.h"
#include "os/slurmproc.h"

/* A task's partition slot on one GPU. */
struct nvt_view_slot {
	size_t task;                /* its task: an index into the view's tasks */
	int gpu;                    /* its GPU: an index into the view's gpus */
	int partitioned;            /* state NVT_SLOT_SET (else every TPC of the GPU) */
	int claim;                  /* a pick not confirmed yet (NVT_SLOTF_CLAIM) */
	int applied;                /* a launch has used the partition since it was set */
	int refused;                /* the task refused it (it enables no working TPC) */
	struct nvt_tpcset current;  /* what its launches use (every TPC when not partitioned) */
	struct nvt_tpcset own;      /* its own TPCs */
	struct nvt_tpcset borrowed; /* current but not own */
	int lending;                /* idle, and a lower task of the GPU borrows its TPCs */
	struct nvt_slot_prio prio;
	struct nvt_slot_yield yield;
	struct nvt_slot_activity act;
	uint64_t launches;          /* kernels launched on this GPU */
	uint64_t graph_stale;
	uint64_t mem_used;          /* GPU memory its shim counts it holding (bytes) */
	uint64_t mem_limit;         /* the most it may hold (--mem); 0: no limit */
	uint64_t mem_refused;       /* allocations refused for the limit */
};

struct nvt_view_task {
	pid_t pid;                  /* as this machine's /proc numbers it */
	uint64_t start_time;        /* field 22 of /proc/PID/stat: tells a reused PID */
	uid_t uid;                  /* its effective user */
	uid_t seg_owner;            /* the user whose run directory holds its segment */
	char user[64];              /* that user's name, or the uid in digits */
	int user_named;             /* user is a name (the password database knows the uid) */
	char command[512];          /* its command line, words joined by spaces (raw bytes) */
	size_t command_first;       /* the length of command's first word (the program as run) */
	char program[64];           /* the last part of its first word (raw bytes) */
	char container[NVT_CONTAINER_ID_TEXT]; /* the container it runs in, "" for none */
	char slurm_job[16];         /* its Slurm job's id, "" outside Slurm */
	char slurm_step[24];        /* and step ("0", "batch") */
	size_t first_slot;          /* its slots: slots[first_slot .. first_slot + n_slots - 1] */
	int n_slots;
};

/* What the viewers say of a GPU whose map they do not know (nvt_map_from: another user's
 * task's map is not taken). */
#define NVT_VIEW_MAP_UNKNOWN "TPC map not known (no calibration cached, no task of root's or yours on it)"

struct nvt_view_gpu {
	int index;                  /* nvtaskset's number (nvidia-smi's); -1: not on the list */
	uint8_t uuid[16];
	char uuid_text[48];
	char model[96];             /* "" when not known */
	int map_known;              /* topo holds its TPC map (from a task's slot, or the cache) */
	int map_from;               /* whose map: enum nvt_map_from (core/topo.h); of the slots
				     * of one rank, the lowest PID's task's */
	struct nvt_topology topo;
	struct nvt_tpcset working;  /* its working TPCs (map_known) */
	struct nvt_tpcset held;     /* TPCs some task holds, own or borrowed, claims too */
	struct nvt_tpcset borrowed; /* TPCs some task borrows */
	int tasks;                  /* tasks with a slot on it */
};

/* The priority agent of a user: root's always, and those of users of tasks with a priority. */
struct nvt_agent_note;
struct nvt_view_agent {
	uid_t uid;
	char user[64];
	pid_t pid;  /* 0: none runs */
	int wanted; /* a task of the user needs an agent (nvt_prio_needs_agent: --yield guard) */
	struct nvt_agent_note *notes; /* while it runs: the tasks it says it cannot follow */
	int n_notes;
	char log_last[512]; /* while none runs: the last line of its log ("": none) */
};
#define NVT_VIEW_AGENTS 64

/* A priority level's own MPS daemon (docs/priorities.md, "Preemption": tasks time-sliced at
 * that level join it), the reader's: shown where it runs or its pipe directory is there. */
struct nvt_view_mps_level {
	uint8_t prio;               /* NVT_PRIO_LOW .. NVT_PRIO_HIGH */
	char pipe_dir[256];
	pid_t pid;                  /* 0: none runs (a daemon started there stopped or died) */
};
#define NVT_VIEW_MPS_LEVELS 3

/* A task whose segment could not be read: why (enum nvt_seg_err, errno for NVT_SEG_ERROR). */
struct nvt_view_unread {
	pid_t pid;
	int seg_err;
	int sys_errno;
	uint32_t found_version; /* NVT_SEG_EVERSION: the segment's */
};

/* A start queued with --wait (alloc/queue.h): it holds no segment while it waits. */
struct nvt_view_queued {
	struct nvt_queuerec rec;    /* what its record says: PID, GPUs and counts, COMMAND */
	uid_t uid;                  /* its user (its run directory's) */
	char user[64];              /* that user's name, or the uid in digits */
	int user_named;             /* user is a name */
	uint64_t waited_s;          /* seconds it has waited when the view was read */
};

struct nvt_view {
	uint64_t taken_ns;          /* CLOCK_MONOTONIC when it was read */
	uint64_t boot_ns;           /* CLOCK_BOOTTIME then: the clock of a task's start_time */
	long ticks_per_s;           /* the unit of a task's start_time (sysconf(_SC_CLK_TCK)) */
	struct nvt_view_task *tasks; /* ascending by PID */
	size_t n_tasks;
	struct nvt_view_slot *slots; /* by task, each task's in slot order */
	size_t n_slots;
	struct nvt_view_gpu gpus[NVT_MACHINE_GPUS]; /* the machine's in its order, then others */
	int n_gpus;
	size_t gpus_past;           /* slots left out: their GPUs past the table (a user's segments
				     * may name any number of GPUs; the machine's come first) */
	struct nvt_view_agent agents[NVT_VIEW_AGENTS];
	int n_agents;
	char mps_pipe_dir[256];     /* the MPS daemon the reader's tasks would join; "" unknown */
	pid_t mps_pid;              /* 0: none runs */
	struct nvt_view_mps_level mps_levels[NVT_VIEW_MPS_LEVELS]; /* by level, lowest first */
	int n_mps_levels;
	int unreadable;             /* segments left out: corrupt, another version, or errors */
	struct nvt_view_unread *unread; /* each of them, ascending by PID */
	size_t n_unread;
	pid_t *tree;                /* tree[k]: the top of task k's process tree among the tasks
				     * (nvt_view_read_trees); NULL: not read */
	struct nvt_view_queued *queued; /* the starts queued with --wait, ascending by PID
					 * (nvt_view_read_queued); NULL: none, or not read */
	size_t n_queued;
};

/*
 * Reads the view of every task under base (every user's run directory; no
 * file is tidied), the GPUs of machine (NULL: only those the tasks' slots
 * name), the agents and the MPS daemons. A task that ends meanwhile, or that
 * its user hides, is left out; one whose segment cannot be read is counted in
 * unreadable. Returns 0, or -1 with the reason in why (the run directories
 * cannot be listed, out of memory); the caller frees v (nvt_view_free) either
 * way.
 */
int nvt_view_read(const char *base, const struct nvt_gpus *machine, struct nvt_view *v, char *why,
		  size_t len);
void nvt_view_free(struct nvt_view *v);
/*
 * Reads which of v's tasks descend from which (/proc), into v->tree, so that the map tells a
 * launcher and its workers (one holder) from unrelated tasks on the same TPCs (an overlap).
 * Returns 0, or -1 (/proc cannot be read, out of memory: v->tree stays NULL, and the map takes
 * one user's tasks on the same TPCs as one holder).
 */
int nvt_view_read_trees(struct nvt_view *v);
/*
 * Reads the starts queued with --wait under base (every user's run directory, each record
 * checked as alloc/queue.h says), into v->queued. Returns 0, or -1 with errno set (the run
 * directories cannot be read, out of memory: v->queued stays NULL).
 */
int nvt_view_read_queued(const char *base, struct nvt_view *v);

/* ---- What a view says (viewcalc.c; pure) ---- */

/*
 * Works out what a view's slots and GPUs imply, once its slots are read (and
 * its GPUs' maps known): each task's slots, one a GPU (the first a segment
 * names it in: a user may write two of one GPU into hers), which every viewer
 * shows; each GPU's working, held and borrowed TPCs and its count of tasks,
 * and which idle tasks lend (nvt_view_read calls it).
 */
void nvt_view_settle(struct nvt_view *v);

/* The task with this PID, or NULL. */
const struct nvt_view_task *nvt_view_task_of(const struct nvt_view *v, pid_t pid);
/*
 * What the slot's task does now, as a word: without a priority "-"; with one,
 * the state its shim publishes (nvt_yield_state_name: "running", "gated",
 * "borrowing", ...; any state a newer shim adds by its name) while its agent
 * leaves it its own TPCs, else the agent's mode ("guarded", "squeezed",
 * "borrowing"), or "lending" (idle, and a lower task borrows its TPCs); "own"
 * for a task with no higher task on its GPU.
 */
const char *nvt_view_state_word(const struct nvt_view_slot *s);
/* 1 if the state word means the task's launches wait for a higher task now. */
int nvt_view_waiting(const struct nvt_view_slot *s);
/* The slot's priority as a word: "high", "normal", "low", or "" for none. */
const char *nvt_view_prio_word(const struct nvt_view_slot *s);

/*
 * What the viewers say of agent i of a view. An agent is wanted while a task
 * of its user needs one (a priority that yields by the agent's guard); root's
 * agent, which follows every user's tasks, stands in for a user's. An agent
 * that runs is shown (RUNS); one that is wanted while neither it nor root's
 * runs is MISSING, the one state to alert on; any other is not shown (IDLE):
 * a node where no task needs an agent has nothing missing.
 */
enum nvt_view_agent_state {
	NVT_VIEW_AGENT_IDLE = 0,
	NVT_VIEW_AGENT_RUNS,
	NVT_VIEW_AGENT_MISSING,
};
enum nvt_view_agent_state nvt_view_agent_state(const struct nvt_view *v, int i);

/*
 * Launches and waits per second of slot s of now, since the same task's slot
 * on the same GPU in prev (same PID and start time); where prev has none (the
 * first view, prev NULL, or a task new since), since the task started, as
 * procps' top shows a task's first %CPU (its counters count from its start);
 * -1 each where neither is known (no time passed, no start time).
 */
void nvt_view_rates(const struct nvt_view *prev, const struct nvt_view *now, size_t s,
		    double *launches_per_s, double *waits_per_s);

/*
 * A GPU's map: who holds each TPC (docs/observability.md draws it). Tasks of
 * one partition (a launcher and the workers that copied it, say) are one
 * holder: a holder is a partition, its letter A-Z in order of its lowest
 * TPC ('#' past Z).
 */
#define NVT_VIEW_FREE (-1)    /* no task holds it */
#define NVT_VIEW_SHARED (-2)  /* borrowed by several */
#define NVT_VIEW_SYMBOLS 26
#define NVT_VIEW_PARTS 512    /* holders a map tells apart; the others are '#' */
struct nvt_view_map {
	int gpu;                        /* the view's gpus[] index */
	int32_t owner[NVT_MAX_TPCS];    /* the holder of TPC t (its first, by letter), or FREE */
	uint16_t holders[NVT_MAX_TPCS]; /* how many holders hold TPC t: over 1, an overlap */
	int32_t borrower[NVT_MAX_TPCS]; /* the holder whose task borrows TPC t, FREE, or SHARED */
	int32_t part[NVT_VIEW_PARTS];   /* each holder's first slot (its partition), by lowest TPC */
	int n_parts;
	int n_everywhere;               /* slots on every TPC (not partitioned) */
};
/*
 * Fills map for the view's GPU gpu: its holders (the partitions of its slots, own TPCs: one
 * holder for the slots on the same TPCs of one user's run directory, the segments' owner, and
 * of one process tree (v->tree, where read) or priorities that share by design
 * (nvt_prio_may_share); so another user's task, or an unrelated one of the same user's, on the
 * very same TPCs is a second holder, shown as an overlap), each TPC's first holder and how many
 * hold it, and who borrows it.
 */
void nvt_view_map(const struct nvt_view *v, int gpu, struct nvt_view_map *map);
/* The holder of slot s (its partition) on map, or -1 (not partitioned, or past NVT_VIEW_PARTS). */
int nvt_view_holder(const struct nvt_view *v, const struct nvt_view_map *map, size_t s);
/* The letter of holder h: 'A' + h, '#' past Z; '.' for NVT_VIEW_FREE, '*' for NVT_VIEW_SHARED. */
char nvt_view_symbol(int32_t h);

/*
 * A slot whose partition shares TPCs against the design with other tasks' on its GPU: -l names
 * them. A pair is seen from both its slots. One record a slot, whatever the count of the others
 * (a thousand tasks on the same TPCs of eight GPUs take eight thousand records, not millions).
 */
#define NVT_VIEW_OVERLAP_NAMED 64 /* the other slots a record names; past that, counted */
struct nvt_view_overlap {
	size_t slot;            /* a slot of the view */
	struct nvt_tpcset both; /* the TPCs it shares with any of the others */
	size_t n_others;        /* how many other slots' own TPCs meet its own */
	size_t others[NVT_VIEW_OVERLAP_NAMED]; /* the first of them (so the lowest PIDs), ascending */
};
/*
 * Every overlap of the view's slots into *out (the caller frees it), their count in *n: two
 * partitioned slots of one GPU whose own TPCs meet (a task without a priority: its partition),
 * of tasks of different trees that may not share by design (nvt_prio_may_share: different
 * priorities, time-sliced tasks). tree[k] is the top of the tree of the view's task k: tasks of
 * one tree (a launcher and its workers) start on one partition by design; 0 leaves task k out.
 * In the order of slot (so by the tasks' PIDs). Returns 0, or -1 when out of memory.
 */
int nvt_view_overlaps(const struct nvt_view *v, const pid_t *tree, struct nvt_view_overlap **out,
		      size_t *n);

/* ---- The metrics (viewmetrics.c) ---- */

/*
 * Appends v's metrics to b in Prometheus' text format (docs/observability.md
 * lists them). Returns 0, or -1 when out of memory.
 */
int nvt_view_metrics(const struct nvt_view *v, struct nvt_outbuf *b);

#endif /* NVT_VIEW_H */
