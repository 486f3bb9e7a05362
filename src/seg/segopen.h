/*
 * segopen.h - the CLI's side of other processes' segments (segopen.c):
 * opening, reading, the handle a writer locks and writes through
 * (segwrite.h), and the names the last listing gave by header. Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGOPEN_H
#define NVT_SEGOPEN_H

#include "segfile.h"

/* An open control segment of another process. */
struct nvt_seg_handle {
	int fd;
	pid_t pid;          /* as the caller's /proc numbers it */
	uid_t owner;        /* the user whose run directory holds it */
	char container[NVT_CONTAINER_ID_MAX + 1]; /* that run directory is under
				* base/containers/ID/run; "": under base */
	uid_t task_uid;     /* the task's effective uid now */
	int writable;
	int lock_fd;        /* the run directory's lock file (writable handles); else -1 */
	int lock_errno;     /* why lock_fd could not be opened */
	int locked;         /* we hold the segment's writer's lock */
	struct nvt_segment *seg; /* mapped by nvt_seg_lock, for the writer */
	struct nvt_segment head; /* the header as opened */
	dev_t dev;
	ino_t ino;
	uint32_t found_version;  /* with NVT_SEG_EVERSION */
	int sys_errno;           /* with NVT_SEG_ESYS: why (errno is set too; nvt_seg_errno_kept) */
};

/* Of the system errors met while looking (kept, 0: none yet, then e), the one an open answers:
 * the first that is not a late answer (ETIMEDOUT: a maps read that did not end in time) wins
 * over late ones, whatever came first. A late answer alone lets a claim count every file that
 * names the task as held (alloc/placement.c); any other error (EMFILE, say) may hide a
 * partition and must fail it. */
int nvt_seg_errno_kept(int kept, int e);



/*
 * Opens pid's segment for reading (anyone may) or for writing (its user or
 * root). Looks in the run directories of the task's effective, real and saved
 * uids and of root, checks each directory and file (type before any read:
 * never opens a FIFO blocking) and that the segment names this very process
 * (PID namespace, PID and start time). A process of a namespace below the
 * caller's that none holds is looked for in the run directories of the
 * containers recorded with its PID namespace (segcontainer.c), by the same rule.
 * Returns enum nvt_seg_err.
 */
int nvt_seg_open(const char *base, pid_t pid, int writable, struct nvt_seg_handle *h);
/*
 * For a reader that could not tell which file pid uses (nvt_seg_open gave
 * NVT_SEG_ESYS with ETIMEDOUT: the process's maps, read to tell its segment
 * from a rival's, came late): calls each, with h open for reading (closed
 * when each returns), for every file in the run directories of the task's
 * uids and root's, under base and the containers of its PID namespace, whose
 * header names it (its PID namespace, PID and start time: the header alone
 * decides): the file named for its PID namespace, or where that is not ours
 * to read, each file the last listing (nvt_seg_tasks) gave it by header. A
 * caller that must not count a partition as free counts each. each returns
 * 0, or -1 with errno set to end the walk. Returns 0, or -1 with errno set
 * (each's; the containers, a run directory or a file could not be read for
 * another reason than its not being there or not ours to read: EMFILE, say;
 * or the process could not be read, though it is not gone).
 */
int nvt_seg_each_named(const char *base, pid_t pid, int (*each)(const struct nvt_seg_handle *h, void *arg),
		       void *arg);
/* How long nvt_seg_open, to write, waits for a segment that is being made in
 * the run directory of the task's user (after an exec to that user, its shim
 * is copying the one from before the exec) before it looks further. A shim
 * fills one in microseconds; the task's user can plant one that stays empty,
 * which delays root's change to a task of that user's by this much. */
#define NVT_SEG_MAKING_WAIT_MS 500
/*
 * 1 if h is a segment the task had before an exec to another user, and that
 * user's run directory now holds the task's own segment, with its header: a
 * write to h that the task's shim may have copied before it (a shim writes
 * the header before it copies). The writer should write the task's own
 * segment too (open it again). 0 otherwise. A shim copies only root's
 * segment (a setuid program takes nothing from its caller): a write to a
 * caller's segment in the instant of a setuid exec, before the new shim has
 * made its file, is lost all the same.
 */
int nvt_seg_superseded(const char *base, const struct nvt_seg_handle *h);
/* Copies slot gpu (see nvt_seg_pread_slot). Returns enum nvt_seg_read_rc. */
int nvt_seg_read(const struct nvt_seg_handle *h, int gpu, struct nvt_slot_view *view,
		 struct nvt_slot_status *status);
/* Copies the GPU slot gpu is for (written once, read without the sequence
 * lock: see nvt_slot_uuid). Returns 0 or -1. */
int nvt_seg_slot_gpu(const struct nvt_seg_handle *h, int gpu, uint8_t uuid[16]);
/*
 * Copies slot gpu if it holds a GPU: a free one is passed over by its GPU
 * field alone (one small read: 16 slots of a thousand segments left odd by
 * their user cost -l twice its time when each free one took every try).
 * Returns 0, or -1 for a free slot, one unread, or one a writer died inside
 * (-p tells).
 */
int nvt_seg_read_used(const struct nvt_seg_handle *h, int gpu, struct nvt_slot_view *view,
		      struct nvt_slot_status *status);
/* The slot that holds uuid, or -1; the first free slot, or -1. */
int nvt_seg_find_slot(const struct nvt_seg_handle *h, const uint8_t uuid[16]);
int nvt_seg_free_slot_of(const struct nvt_seg_handle *h);
void nvt_seg_close(struct nvt_seg_handle *h);
/* Opens the run directory that holds h's segment (under base, or its container's). Returns
 * its fd, or -1 with errno set. */
int nvt_seg_handle_dir(const char *base, const struct nvt_seg_handle *h);

/*
 * Removes the calling process's own segment file from its user's run
 * directory under base, if there is one: a shim made it before this process
 * exec'd (a partitioned shell's forked child). The nvtaskset command is no
 * task: it runs without a segment until it makes the one its COMMAND adopts
 * (nvt_reserve_prepare, nvt_reserve_claim), so COMMAND never gets the shell's partition.
 * Removes only a regular file of the caller's. Returns 0 (none is left), or
 * -1 with errno set.
 */
int nvt_seg_discard_own(const char *base);

/*
 * The file of uid's run directory that the last listing of this process
 * (nvt_seg_tasks, nvt_seg_list) gave process pid by its header, its PID
 * namespace not being the caller's to read, into name. Processes that a
 * header cannot tell apart (containers' first processes started in one clock
 * tick) get one such file each this way, as the listing counted them, where a
 * search by header alone would give them one file. Returns 0, or -1 if none.
 */
int nvt_seg_listed_name(pid_t pid, uid_t uid, char *name, size_t len);
/* A file a listing gave a process by its header. */
struct nvt_seg_listed {
	pid_t pid;
	uid_t uid;
	char name[64];
};
/* Keeps v (n, malloc'd; taken over) as what the last listing gave by header, in place of the
 * one before (segscan.c calls it; segopen.c keeps it). */
void nvt_seg_listed_keep(struct nvt_seg_listed *v, size_t n);

#endif /* NVT_SEGOPEN_H */
