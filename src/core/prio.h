/*
 * prio.h - the rules of priorities on top of partitions (docs/priorities.md):
 * from each managed task's own partition, priority, guard, lending and
 * activity on one GPU, the partition and mode each task gets now; and the
 * text forms of priorities. Pure code: no I/O, no allocation, no globals.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PRIO_H
#define NVT_PRIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "nvtaskset.h"
#include "core/segment.h"

/* One managed task on one GPU, as nvt_prio_decide sees it. */
struct nvt_prio_task {
	/* In: */
	struct nvt_tpcset own; /* its user's partition; never empty */
	uint8_t prio;          /* enum nvt_prio; NVT_PRIO_NONE: left as it is */
	uint8_t flags;         /* NVT_PRIOF_* */
	uint32_t guard;        /* TPCs while guarded; 0: the default */
	uint32_t yield;        /* NVT_YIELD_*: only a task with NVT_YIELD_GUARD is guarded or borrows */
	int active;            /* it launched within the activity window */
	/* Out: */
	struct nvt_tpcset tpcs; /* what it runs on now */
	uint8_t mode;           /* enum nvt_prio_mode */
	int lent;               /* a lower task borrows its TPCs */
};

/*
 * Decides tasks t[0..n-1], all on one GPU of topology topo:
 * - guarded, when a task of higher priority is active: at most guard TPCs
 *   (default_guard when 0; 0 too: no cap) of own less the active higher
 *   tasks' own partitions, none in their GPCs while own has TPCs in others,
 *   packed into as few GPCs as possible, GPCs that no higher task holds
 *   first; when the higher tasks hold all of own, one TPC of own
 *   (NVT_MODE_SQUEEZED). Never empty.
 * - borrowing, when no higher task is active: own and the own partitions of
 *   the idle higher tasks that lend (no NVT_PRIOF_NO_LEND); they are then
 *   NVT_MODE_LENDING.
 * - own otherwise (also a guard that leaves own whole).
 * A task of NVT_PRIO_NONE gets its own partition and NVT_MODE_OWN, and neither
 * guards nor lends. A task without NVT_YIELD_GUARD keeps its own partition (its
 * shim yields in other ways), and guards and lends as its priority says.
 */
void nvt_prio_decide(const struct nvt_topology *topo, unsigned default_guard,
		     struct nvt_prio_task *t, int n);

/*
 * Picks at most budget TPCs of avail into out (none when budget is 0 or avail
 * is empty): whole GPCs first, as few GPCs as possible, and GPCs with no TPC
 * of avoid before the others; TPCs whose GPC topo does not know come last.
 * Returns how many it picked.
 */
unsigned nvt_prio_pack(const struct nvt_topology *topo, const struct nvt_tpcset *avail,
		       const struct nvt_tpcset *avoid, unsigned budget, struct nvt_tpcset *out);

/*
 * A slot's own partition: view->prio.own if not empty; else its TPCs if it is
 * partitioned; else every working TPC of its topology (empty if unknown).
 */
void nvt_prio_own_of(const struct nvt_slot_view *view, struct nvt_tpcset *own);

/*
 * -p --priority without --yield on a time-sliced task: given (what the options give) keeps
 * old's yield words and values where old is time-sliced, since -p cannot make a task
 * time-sliced again once slice is taken away (its shim follows channel groups only from its
 * start); --yield client takes it away on purpose.
 */
void nvt_prio_keep_slice(struct nvt_slot_prio *given, const struct nvt_slot_prio *old);
/*
 * -p --priority LEVEL without --yield on a running task, whose start set its shim up as start
 * says (prio NVT_PRIO_NONE: started without a priority) and whose priority now is now: given
 * (what the options give, nvt_prio_given) gets the words that take effect on it. A task with a
 * priority keeps its words and values (a time-sliced task stays time-sliced; a guarded one
 * guarded, unless made high; a --guard given adds its guard): -p writes none that its start
 * did not set up but client, and start read as none may be a start whose environment was
 * overwritten.
 * Otherwise given keeps its words less those the task would not take up (nvt_yield_not_taken),
 * and a level below high left with none yields through the agent's guard (NVT_YIELD_GUARD),
 * the one way every task takes up. Returns the words dropped (0: none).
 */
uint32_t nvt_prio_for_running(struct nvt_slot_prio *given, const struct nvt_slot_prio *start,
			      const struct nvt_slot_prio *now);
/*
 * What a writer (a start, -p) gives a slot: want's priority part, from old
 * (the slot's part before, NULL: none) unless given (NULL: keep it) names one;
 * its mode own and its own partition want's TPCs (all when unpartitioned).
 */
void nvt_prio_carry(struct nvt_slot_view *want, const struct nvt_slot_view *old,
		    const struct nvt_slot_prio *given);

/*
 * Whether a task of priority prio (enum nvt_prio) that yields in the ways yield
 * (NVT_YIELD_*) is the priority agent's: it has a priority and yields by the
 * agent's guard (NVT_YIELD_GUARD), the one way that needs an agent; the agent
 * guards it or lends it TPCs, and a start or -p that gives it starts one.
 */
int nvt_prio_needs_agent(unsigned prio, uint32_t yield);

/*
 * 1 if slots of priorities a and b may hold the same TPCs by design: both have
 * a priority, and at different levels (the lower yields) or both time-sliced
 * (--yield slice: the GPU switches between them); 0 otherwise.
 */
int nvt_prio_may_share(const struct nvt_slot_prio *a, const struct nvt_slot_prio *b);
/*
 * The TPCs two tasks' partitions on one GPU share against the design, into
 * both: a_tpcs and b_tpcs are their partitions (state NVT_SLOT_SET), a and b
 * their priorities. A task with a priority counts by its own partition (what
 * an agent lends or guards now is no user's doing); none where they may share
 * (nvt_prio_may_share). Returns how many. The warning of a start or -p whose
 * MASK shares a live task's TPCs uses it; -l's Overlap line counts the same
 * (nvt_prio_may_share, and the view's own TPCs).
 */
unsigned nvt_prio_clash(const struct nvt_tpcset *a_tpcs, const struct nvt_slot_prio *a,
			const struct nvt_tpcset *b_tpcs, const struct nvt_slot_prio *b,
			struct nvt_tpcset *both);
/*
 * A guard is the agent's way: a priority given a guard (p->guard, --guard N or
 * guard=N in NVT_ENV_PRIORITY's text) yields by the agent's guard too, whatever
 * its other words. Adds NVT_YIELD_GUARD to p->yield where p->guard is set.
 */
void nvt_prio_imply_guard(struct nvt_slot_prio *p);
/*
 * 1 if a guard of guard TPCs (--guard N; 0: none given) can be kept on a GPU of topology topo:
 * none given, the GPU's TPCs not known, or at most its TPCs. A larger one caps nothing that
 * the GPU's own count would not (a slip, such as another GPU's count), so the command refuses
 * it.
 */
int nvt_prio_guard_fits(uint32_t guard, const struct nvt_topology *topo);

/* "high", "normal", "low" (case as given) into *prio. Returns 0, or -1. */
int nvt_prio_parse(const char *text, uint8_t *prio);
/* What --priority takes: those, or "none" (NVT_PRIO_NONE: -p takes a task's priority
 * away). Returns 0, or -1. */
int nvt_prio_parse_given(const char *text, uint8_t *prio);
/* "high", "normal", "low", or "-" for NVT_PRIO_NONE and unknown values (-l's column). */
const char *nvt_prio_name(unsigned prio);
/* The same in words (what -p says): "none" for NVT_PRIO_NONE. */
const char *nvt_prio_word(unsigned prio);

/*
 * What --priority LEVEL, --no-lend, --guard N (0: none) and --yield give, into *given:
 * yield's words and values (NULL: nvt_prio_default_yield's; with NVT_PRIOF_AUTO, --yield's
 * "default", those too), level, NVT_PRIOF_NO_LEND if
 * no_lend, guard (which implies NVT_YIELD_GUARD: nvt_prio_imply_guard); mode own and no
 * own partition yet (nvt_prio_carry gives one). whole_gpu: the task was given no partition.
 */
void nvt_prio_given(uint8_t level, int no_lend, uint32_t guard, const struct nvt_slot_prio *yield,
		    int whole_gpu, struct nvt_slot_prio *given);
/* 1 if yield (of nvt_yield_parse) is --yield default alone: as if --yield were left out. */
int nvt_prio_yield_default_alone(const struct nvt_slot_prio *yield);
/*
 * The yield words of a task started with a priority and no --yield: a task given no partition
 * (whole_gpu) and no guard is time-sliced (NVT_YIELD_SLICE: its level's context, the GPU's
 * scheduler between levels), the form that gave a service the whole GPU at every request shape
 * measured (docs/priorities.md, "Which one?"); a partitioned task keeps its partition and runs
 * at MPS client priority (NVT_YIELD_DEFAULT), never worse than static partitions.
 */
uint32_t nvt_prio_default_yield(uint8_t level, int whole_gpu, uint32_t guard);
/*
 * A priority whose ways of yielding are the default by partition (NVT_PRIOF_AUTO: yield=auto in
 * NVT_ENV_PRIORITY's text, a CDI priority device's, the same device alone in a container or
 * beside a partition device): given those ways, as a start's (nvt_prio_default_yield),
 * partitioned or on the whole GPU, and NVT_PRIOF_AUTO taken away. Any other left as it is.
 */
void nvt_prio_resolve(struct nvt_slot_prio *prio, int partitioned);
/* "own", "guarded", "borrowing", "lending", "squeezed", or "?". */
const char *nvt_prio_mode_name(unsigned mode);

/*
 * The user whose priority a task's priority is, from the user of its segment
 * (seg_uid, the run directory's) and the process's real and effective uids: the
 * segment's user, except that a task in root's segment that runs as another user
 * (a program root started that dropped to a user: it can still write root's
 * segment through its mapping) is that user's, never root's. Never more than
 * either.
 */
uid_t nvt_prio_owner(uid_t seg_uid, uid_t real_uid, uid_t effective_uid);

/*
 * The text of NVT_ENV_PRIORITY: "LEVEL[,guard=N][,no-lend][,yield=W+W...]
 * [,bound=US][,ahead=US][,duty=PCT]", N from 1 to NVT_MAX_TPCS, W the words
 * of --yield (core/yield.h; without yield=, the default ones; with guard=N,
 * guard too: nvt_prio_imply_guard), or yield=auto (NVT_PRIOF_AUTO, the default ones until
 * nvt_prio_resolve, which every reader of the variable calls). Parses text
 * into *prio (its own partition untouched; mode NVT_MODE_OWN). Returns 0, or
 * -1 if malformed.
 */
int nvt_prio_env_parse(const char *text, struct nvt_slot_prio *prio);
/* Formats prio (prio->prio != NVT_PRIO_NONE). Returns the length, or -1 if len is too small. */
int nvt_prio_env_format(const struct nvt_slot_prio *prio, char *buf, size_t len);
#define NVT_PRIO_ENV_TEXT_MAX 160

/*
 * The priority level whose own MPS server a task with these partitions'
 * priorities joins (docs/priorities.md, "Preemption"): a task time-sliced
 * (NVT_YIELD_SLICE) must not share a context with other levels' tasks. Its
 * level, if every one of its n GPUs gives it the same one with slice; else
 * NVT_PRIO_NONE: the shared server. server: the text (NVT_ENV_PRIORITY's) the
 * level's server is started with, its level and slice value (NULL, 0: not
 * wanted). Returns the level, or -1 if server is too small.
 */
int nvt_prio_mps_level(const struct nvt_slot_view *parts, int n, char *server, size_t len);

#endif /* NVT_PRIO_H */
