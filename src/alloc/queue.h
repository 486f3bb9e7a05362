/*
 * queue.h - starts queued with --wait (queue.c): the record a waiting start keeps in its
 * user's run directory while it waits (its format: src/nvtaskset.h, NVT_QUEUED_MAGIC;
 * core/queuerec.h writes and reads it), and every user's, read for -l and -p. A waiting
 * start holds no segment and claims nothing (reserve.h): its record is all that says it
 * waits. Side effects: files. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_QUEUE_H
#define NVT_QUEUE_H

#include <stddef.h>
#include <sys/types.h>

#include "core/queuerec.h"

/*
 * Writes r as the caller's record, its PID, start time and PID namespace filled in (the
 * caller gives the rest), into its run directory under base (made if missing): whole under
 * a name of its own, then renamed into place. First removes the records there that starts
 * killed while they waited left (of processes gone, or whose PID another process has now),
 * judging at most NVT_QUEUE_JUDGED of them. Until nvt_queue_leave, SIGINT, SIGTERM and SIGHUP
 * (each that the process does not ignore) remove the record, then end the process as they
 * would have. One record a process. Returns 0, or -1 with why (no record, no handler).
 */
#define NVT_QUEUE_JUDGED 64
int nvt_queue_enter(const char *base, struct nvt_queuerec *r, char *why, size_t len);

/* Removes the caller's record (nvt_queue_enter's; nothing without one) and gives SIGINT,
 * SIGTERM and SIGHUP back what they did before. */
void nvt_queue_leave(void);

/* A queued start found. */
struct nvt_queued {
	struct nvt_queuerec rec;
	uid_t uid; /* its run directory's user */
};

/*
 * Every user's queued starts under base (not containers' run directories), ascending by
 * PID, into *out (malloc'd; the caller frees it): each a record that passes every check of
 * src/nvtaskset.h (its run directory's user's regular file of one link, at most
 * NVT_QUEUED_MAX bytes, opened with O_NOFOLLOW | O_NONBLOCK; its text whole; its PID a live
 * process of this PID namespace, of that start time, running as that user). At most
 * NVT_QUEUE_READ records of a run directory are read. Changes nothing. Returns the count,
 * or -1 with errno set (base cannot be read, out of memory).
 */
#define NVT_QUEUE_READ 64
int nvt_queue_list(const char *base, struct nvt_queued **out);

/* The queued start of process pid, as nvt_queue_list finds it, into *out. Returns 1, or 0:
 * none. */
int nvt_queue_find(const char *base, pid_t pid, struct nvt_queued *out);

#endif /* NVT_QUEUE_H */
