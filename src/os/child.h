/*
 * child.h - the one way nvtaskset runs a child process: a function of ours
 * (which may exec a program) in a forked child, with its input, its output
 * and a time limit after which it (and, if asked, its process group) is
 * killed. Side effects; returns codes, never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CHILD_H
#define NVT_CHILD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum nvt_child_rc {
	NVT_CHILD_OK = 0,
	NVT_CHILD_TIMEOUT = -1, /* killed after timeout_ms */
	NVT_CHILD_FAILED = -2,  /* crashed or exited without a whole result */
	NVT_CHILD_ESYS = -3,    /* pipe or fork failed; errno says why */
};

/* How the child's standard streams are set (nvt_child.flags). */
#define NVT_CHILD_STDIO 1u   /* stdin, stdout and stderr stay the caller's */
#define NVT_CHILD_STDOUT 2u  /* stdout is the output pipe (else /dev/null) */
#define NVT_CHILD_STDERR 4u  /* stderr stays the caller's (else /dev/null) */
#define NVT_CHILD_GROUP 8u   /* a process group of its own, killed whole on timeout
			      * and by nvt_child_stop */
#define NVT_CHILD_REAP 64u   /* with GROUP: also kill what is left of the group once it
			      * ends (not for a daemon's start: the daemon stays in it) */
#define NVT_CHILD_STDERR_OUT 16u /* stderr is the output pipe too */
#define NVT_CHILD_TAIL 32u   /* keep the last output_len - 1 bytes of output, not the first */

/* Input written to the child's stdin at most: it goes into the pipe before the
 * fork, so writing it never blocks and never raises SIGPIPE. */
#define NVT_CHILD_INPUT_MAX 4096

struct nvt_child {
	/* Runs in the child with the output pipe's write end; it execs, or
	 * returns and the child exits 0. */
	void (*fn)(void *ctx, int out_fd);
	void *ctx;
	const char *input;   /* the child's stdin, then end of file; NULL: /dev/null (or the caller's) */
	char *output;        /* what the child writes to out_fd, up to output_len bytes; may be NULL */
	size_t output_len;
	unsigned flags;      /* NVT_CHILD_* */
	int timeout_ms;
	size_t got;          /* out: bytes of output */
	int status;          /* out: the wait status, if it ended */
	pid_t pid;           /* out: the child, while it runs (nvt_child_start) */
	int out_fd, pid_fd;  /* the output pipe and a pidfd (-1: none), while it runs */
	long deadline_ms;    /* when it is killed (CLOCK_MONOTONIC) */
};

/*
 * Runs c->fn in a child and collects its output until it exits (output a
 * process it started still writes afterwards is not waited for). Returns
 * NVT_CHILD_OK once it has ended (c->status says how), NVT_CHILD_TIMEOUT, or
 * NVT_CHILD_ESYS with errno set.
 */
int nvt_child_run(struct nvt_child *c);

/* nvt_child_run in two halves, for a child that runs while the caller does
 * something else: starts it (NVT_CHILD_OK, or NVT_CHILD_ESYS with errno set),
 * then waits for it and its output until c->timeout_ms after its start. */
int nvt_child_start(struct nvt_child *c);
int nvt_child_wait(struct nvt_child *c);

/* Kills a started child (its group with NVT_CHILD_GROUP) and reaps it. */
void nvt_child_stop(struct nvt_child *c);

/*
 * Runs fn(ctx, result) in a forked child and copies the result_size bytes
 * it leaves in result back to the caller's result. The child is killed if it
 * takes longer than timeout_ms. Returns enum nvt_child_rc; result is zeroed
 * unless NVT_CHILD_OK.
 */
int nvt_child_call(void (*fn)(void *ctx, void *result), void *ctx, void *result,
		   size_t result_size, int timeout_ms);

/*
 * Calls that may block in the kernel for long, each in turn in a forked child: a read of
 * another process's memory (its /proc/PID/cmdline or environ) waits for that process's memory
 * map's lock, which its user can keep held for good (one of her threads faulting on a FUSE
 * file of hers that she never answers, another asking to map: every reader then queues);
 * such a wait ends at SIGKILL on current kernels, not on every kernel. nvt_child_batch calls
 * fn(ctx, i, result) for i = 0 .. n - 1 in order, each result (result_size bytes) written
 * into memory the child shares with the caller. A call has stalled when it has not returned
 * stall_ms after the call before it (or after its child's start) while its child is not
 * runnable (a child the machine is too busy to run is waited for, up to NVT_CHILD_BUSY_TIMES
 * times stall_ms), or when budget_ms (0: no bound) after the batch's start have passed: its
 * child is killed and left, not waited for, and (a stall) a new child goes on from the next
 * call. After max_stalls calls (at least 1) have stalled, or once the budget is spent, the
 * calls left are not made, nor any while NVT_CHILD_LEFT_MAX children left by earlier batches
 * are alive (a bound on the processes that stalled calls keep). A child holds no descriptor of the caller's (no socket, no pipe
 * that a reader waits on to end) but the one it reports on, with stdin, stdout and stderr on
 * /dev/null.
 */
#define NVT_CHILD_LEFT_MAX 8
#define NVT_CHILD_BUSY_TIMES 10

struct nvt_child_batch {
	void (*fn)(void *ctx, size_t i, void *result); /* runs in a child */
	void *ctx;
	size_t n;
	size_t result_size;
	void *results;        /* n results of result_size bytes; a call's, if it returned */
	int stall_ms;
	int max_stalls;
	int budget_ms;        /* the whole batch's time at most (0: no bound) */
	unsigned char *done;  /* out: n flags, 1 for each call that returned */
	pid_t *left;          /* out: n PIDs, the child left at each call that stalled, else 0 */
	unsigned char *stalled; /* out (or NULL): n flags, 1 for each call that stalled or ran
				 * past the budget, whether its child is left or ended at once */
};

/* Makes b's calls. Returns how many returned, or -1 with errno set, no call made (EAGAIN:
 * NVT_CHILD_LEFT_MAX children are left alive; a mapping or a pipe could not be made). */
int nvt_child_batch(struct nvt_child_batch *b);

/* 1 while pid, a child nvt_child_batch left, is alive; 0 once it has ended (it is reaped then),
 * or for a PID it did not leave. */
int nvt_child_left_alive(pid_t pid);

/* os/proc.h's nvt_proc_env made in a child killed after timeout_ms (the environment is the process's
 * memory, read under its memory map's lock, which its user can keep held: a read of it may
 * wait until the reader is killed, and on some kernels past that). The child is
 * nvt_child_batch's: killed, it is left, not waited for (reaped by a later batch, or never,
 * where its wait does not end); one that returned is reaped. buf is at most
 * NVT_PROC_ENV_BOUNDED_MAX bytes long; returns -1 as well where the read did not end in time,
 * or no child could be run (NVT_CHILD_LEFT_MAX left alive). */
#define NVT_PROC_ENV_BOUNDED_MAX 256
int nvt_proc_env_bounded(pid_t pid, const char *name, char *buf, size_t len, int timeout_ms);

/* pid's command line, its words joined by spaces, read as nvt_proc_env_bounded reads its
 * environment (a child killed after timeout_ms, and left), at most NVT_PROC_COMMAND_BOUNDED_MAX
 * bytes of it; where that read fails or stalls, its name as /proc/PID/comm gives it (the
 * kernel's copy, which reading never waits for). Returns 0, or -1 where neither is known (it
 * is gone). */
#define NVT_PROC_COMMAND_BOUNDED_MAX 256
int nvt_proc_command_bounded(pid_t pid, char *buf, size_t len, int timeout_ms);

/*
 * os/proc.h's nvt_proc_maps made in a child (nvt_child_batch's: each runs there), which is
 * killed and left where the read stalls (NVT_PROC_MAPS_STALL_MS without progress while it
 * sleeps, NVT_PROC_MAPS_BUDGET_MS at most): the maps are read under the process's memory
 * map's lock, which its user can keep held. Returns as nvt_proc_maps, or NVT_PROC_MAPS_LATE
 * where the read did not end in time, or no child could be run; a process whose read
 * stalled (told by its PID and start time) is not read again for NVT_PROC_MAPS_BACKOFF_S,
 * each read of it NVT_PROC_MAPS_LATE at once. -1 at once for a process that is gone.
 * seg/segfile.h's nvt_seg_maps_reader takes it.
 */
#define NVT_PROC_MAPS_STALL_MS 200
#define NVT_PROC_MAPS_BUDGET_MS 1000
#define NVT_PROC_MAPS_BACKOFF_S 60
int nvt_proc_maps_bounded(pid_t pid, int (*each)(const char *line, void *arg), void *arg);

/*
 * The processes whose reads stalled lately, told by PID and start time, for a
 * reader that does not read them again for backoff_s (a table of
 * NVT_STALLED_MAX: a full one forgets its oldest stall). Thread-safe.
 */
#define NVT_STALLED_MAX 64
struct nvt_stalled {
	pthread_mutex_t lock;
	struct {
		pid_t pid;
		uint64_t start_time;
		int64_t at_ms; /* CLOCK_MONOTONIC */
	} proc[NVT_STALLED_MAX];
	int n;
	int backoff_s;
};
#define NVT_STALLED_INIT(seconds) {.lock = PTHREAD_MUTEX_INITIALIZER, .backoff_s = (seconds)}
/* 1 if a read of pid (of start_time) stalled within m's last backoff_s; with remember, one
 * has just stalled: noted. */
int nvt_stalled_seen(struct nvt_stalled *m, pid_t pid, uint64_t start_time, int remember);

#endif /* NVT_CHILD_H */
