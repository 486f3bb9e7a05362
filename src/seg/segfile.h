/*
 * segfile.h - control segment files, their run directories, and the /proc
 * facts that validate them. Side effects: files, mmap, /proc. Returns codes;
 * never prints.
 *
 * segfile.c holds the names, checks and reads both sides share and the
 * writers' lock files; segtrust.c the one rule for trusting another
 * process's segment file; segown.c the calling process's own segment (the
 * shim's, and the one the CLI makes for its COMMAND); segopen.c the CLI's
 * side (opening, reading and writing other processes' segments); segscan.c
 * listing tasks.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGFILE_H
#define NVT_SEGFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include "nvtaskset.h"
#include "core/ptree.h"
#include "core/segment.h"
#include "os/proc.h"

enum nvt_seg_err {
	NVT_SEG_OK = 0,
	NVT_SEG_ENOPROC = -1,  /* no such process */
	NVT_SEG_ENOTASK = -2,  /* the process has no (current) control segment */
	NVT_SEG_EPERM = -3,    /* caller is neither the segment's user nor root */
	NVT_SEG_EVERSION = -4, /* segment of another version (see found_version) */
	NVT_SEG_ECORRUPT = -5, /* not a well-formed control segment */
	NVT_SEG_EBUSY = -6,    /* another writer holds the segment */
	NVT_SEG_ESYS = -7,     /* a system call failed; errno says why */
	NVT_SEG_EMAKING = -8,  /* its segment is not filled in yet (a shim making it, or one that died) */
	NVT_SEG_ELEASED = -9,  /* its user holds a lease on its segment: it cannot be opened now */
};


/* Containers' run directories (segctr.c, below): base/containers/ID/run. */
#define NVT_CONTAINERS_DIR "containers"
#define NVT_CONTAINER_PIDNS "pidns"
#define NVT_CONTAINER_RUN "run"
/* The longest container id taken (podman's and Docker's are 64). */
#define NVT_CONTAINER_ID_MAX 128

/* Returns the directory of run directories: $NVTASKSET_RUNDIR if it is an
 * absolute path (secure_getenv: not in a setuid program), else the default. */
const char *nvt_rundir(void);

/* Writes <base>/nvtaskset-<uid>. Returns 0, or -1 if it does not fit. */
int nvt_userdir_path(char *buf, size_t len, const char *base, uid_t uid);
/* Writes nvtaskset.<pidns>.<ns_pid>. Returns 0, or -1 if it does not fit. */
int nvt_seg_name(char *buf, size_t len, uint64_t pidns, pid_t ns_pid);
/* Parses a segment file name. Returns 0, or -1 if name is not one. */
int nvt_seg_name_parse(const char *name, uint64_t *pidns, pid_t *ns_pid);
/* Parses a run directory name "nvtaskset-<uid>". Returns 0, or -1. */
int nvt_userdir_name_parse(const char *name, uid_t *uid);

/*
 * Checks an open run directory: a directory of uid's that nobody else may
 * write in. Returns 0, or -1 with the reason in why.
 */
int nvt_userdir_check(int dirfd, uid_t uid, char *why, size_t len);

/* Opens uid's run directory under base (read-only) if it passes the check
 * above. Returns its fd, or -1 with errno set (ENOENT when it fails the check, or is no
 * directory: a file or link in its place). */
int nvt_userdir_open(const char *base, uid_t uid);
/*
 * Opens the caller's own run directory under base (its path into dir), making
 * it if need be; root's recovers from another user who made it first (the
 * squatter's entry renamed aside). Returns its fd, or -1 with the reason in why.
 */
int nvt_userdir_own(const char *base, char *dir, size_t dir_len, char *why, size_t len);

/*
 * Opens the writers' lock file (NVT_LOCK_NAME) of uid's run directory dirfd
 * for writing, if it is a regular file of uid's that nobody else may open
 * (mode NVT_LOCK_MODE or less). The caller, uid or root, makes it if it
 * is missing (root gives it to uid); uid also replaces one that fails the
 * check. Returns its fd, or -1 with errno set.
 */
int nvt_lock_open(int dirfd, uid_t uid);
/*
 * Takes (type F_WRLCK) or releases (F_UNLCK) the writer's lock of segment
 * pidns.pid on the lock file fd, without waiting. Returns 0, or -1 with errno
 * set (EAGAIN: another writer holds it).
 */
int nvt_lock_byte(int fd, uint64_t pidns, pid_t pid, short type);
/*
 * Takes the writer's lock of segment pidns.pid on the lock file fd, waiting
 * at most NVT_SEG_CREATE_WAIT_MS while another writer holds it: a segment's
 * maker then goes on without it (nvt_seg_create). Returns 0, or -1 with
 * errno set (EAGAIN: still held).
 */
int nvt_lock_byte_wait(int fd, uint64_t pidns, pid_t pid);

/*
 * Copies slot gpu of the segment open as fd by pread, as a sequence-lock
 * reader: never maps the file, so its owner cannot make the caller fault.
 * Returns enum nvt_seg_read_rc: NVT_SEG_UNSETTLED if each of
 * NVT_SEG_READ_TRIES tries met a writer (one that died mid-write, or a
 * segment its user leaves so), with view the last copy, state NVT_SLOT_SET
 * and every TPC that a copy held where one held any (what allocation counts
 * as held by its owner); NVT_SEG_SHORT if the file is shorter than a segment.
 */
enum nvt_seg_read_rc {
	NVT_SEG_READ_OK = 0,
	NVT_SEG_UNSETTLED = -1, /* every read met a writer: view is what a copy showed */
	NVT_SEG_SHORT = -2,     /* the file is shorter than a segment: view says nothing */
};
#define NVT_SEG_READ_TRIES 8
int nvt_seg_pread_slot(int fd, int gpu, struct nvt_slot_view *view, struct nvt_slot_status *status);
/* 1 if fd (a regular file of its run directory's user, st its fstat) is a
 * segment still being made: mode NVT_SEG_NEW_MODE, and no header yet
 * (nvtaskset.h, "Making a segment"). */
int nvt_seg_being_made(int fd, const struct stat *st);
/* Reads and checks the header of the segment open as fd. Returns enum
 * nvt_segment_check, or NVT_SEG_BAD_SIZE if it cannot be read. */
int nvt_seg_pread_header(int fd, struct nvt_segment *head);
/*
 * A moment's look, by one pread and no sequence lock, for what a reader may
 * take from any moment (which slots name a GPU or hold a priority, their
 * sequence numbers and launch counts; a slot's GPU, written once): the
 * whole segment open as fd into copy (unchecked), or slot gpu as it is into
 * slot. This file alone knows where a slot lies (nvt_seg_pread_slot reads
 * one sequence-locked). Return 0, or -1 if the file is shorter (or gpu is
 * no slot).
 */
int nvt_seg_pread_whole(int fd, struct nvt_segment *copy);
int nvt_seg_pread_slot_raw(int fd, int gpu, struct nvt_gpu_slot *slot);

/* Who a segment should name (nvt_seg_is_its). */
struct nvt_seg_who {
	pid_t proc_pid;          /* as the caller's /proc numbers it (its maps); 0: none */
	struct nvt_proc_id id;   /* PID namespace (0: not known), PID in it, start time */
	int any_start;           /* the start time is not known (/proc hides it) */
	/* Where another run directory may hold a rival file of the same name:
	 * under base, those of uid[] and root's. NULL: any may (read maps). */
	const char *base;
	uid_t uid[4];            /* the process's real, effective, saved, fs uids */
};

/*
 * The one identity check, "is this file the segment process who uses?", for
 * a valid segment named name (open, st its fstat, head its header): 1 if its
 * header names the process (PID namespace, PID, start time) and the file's
 * owner, and, where the caller may read the process's /proc/PID/maps (its
 * user and root) and the process maps any segment file, the file is one it
 * maps (dev:inode, or that name in its owner's run directory). A header is
 * public: another user can forge one, for a process that became her, in
 * her own run directory; what the process maps cannot be forged. Where maps
 * cannot be read or show no segment (between an exec and its shim's start),
 * the header decides. So does it, without reading maps, where who->base is
 * set and no run directory of who->uid[] or root's but the file's own holds
 * a file of that name: no rival, nothing to tell apart. Returns 1 or 0.
 */
int nvt_seg_is_its(const struct nvt_segment *head, const char *name, const struct stat *st,
		   const struct nvt_seg_who *who);
/* Who p is, for nvt_seg_is_its; pidns: its namespace (p's own if 0). */
struct nvt_seg_who nvt_seg_who_of(const char *base, const struct nvt_proc *p, uint64_t pidns);

/* ---- Trusting another process's segment file (segtrust.c) ---------------- */

/*
 * The rule, every check of which applies unless a caller's flag says
 * otherwise: the file is opened O_NOFOLLOW | O_NONBLOCK (never through a
 * link, never blocking on a FIFO); it is a regular file of the run
 * directory's user that nobody else may write; it is filled in (not one its
 * shim is still making); it is one whole segment of this layout, whose header
 * names that user; and it is the segment of the process: its header names
 * the process's PID namespace, PID and start time, and where the process's
 * maps can be read and tell anything apart, the process maps this file
 * (nvt_seg_is_its).
 *
 * NVT_TRUST_HEADER_DECIDES drops the maps check: the header alone says which
 * process the file is for. A caller may drop it where the file's owner is
 * trusted as far as the file can mislead it: the shim's look at higher tasks
 * reads its own user's and root's files only (a forged header there misleads
 * a task of the forger's own, or is root's), and reading each higher task's
 * maps at every look would cost it ~100 KB of text each; a process adopting
 * its own segment after an exec maps none yet.
 *
 * NVT_TRUST_BY_NAME takes the process from the file's name (PID namespace and
 * PID) instead of the caller: it must be alive in the caller's /proc, in the
 * caller's PID namespace (own_pidns) or one below it, where /proc shows it
 * (a walk of /proc); a file of a namespace out of sight, or of a process
 * that is gone, or whose PID another process has now (the start time), is
 * NVT_TRUST_NO_PROC. The process found is in proc.
 *
 * NVT_TRUST_RUNS_AS_OWNER (with BY_NAME) adds a check: the process runs as
 * the file's owner now (its effective uid), in any PID namespace. A task of
 * root's that became a user by setuid() keeps using root's segment, and can
 * still write it through its mapping: what it says there is that user's,
 * not root's (priorities).
 *
 * NVT_TRUST_LOOK is the shim's look at higher tasks (docs/priorities.md): a
 * higher task is a live process of the looking task's own user or root's,
 * found by its file's name, that runs as its file's owner, its header
 * trusted without the maps.
 */
#define NVT_TRUST_HEADER_DECIDES 0x1u
#define NVT_TRUST_BY_NAME 0x2u
#define NVT_TRUST_RUNS_AS_OWNER 0x4u
#define NVT_TRUST_LOOK (NVT_TRUST_HEADER_DECIDES | NVT_TRUST_BY_NAME | NVT_TRUST_RUNS_AS_OWNER)

/* What to trust (the caller's part) and what was found (nvt_seg_trust's). */
struct nvt_seg_trust {
	uid_t owner;             /* the run directory's user: the file must be theirs */
	unsigned flags;          /* NVT_TRUST_* */
	int oflags;              /* O_RDONLY or O_RDWR */
	struct nvt_seg_who who;  /* the process (not with NVT_TRUST_BY_NAME) */
	const char *base;        /* with NVT_TRUST_BY_NAME: for nvt_seg_who's base */
	uint64_t own_pidns;      /* with NVT_TRUST_BY_NAME: the caller's PID namespace where
				  * /proc numbers PIDs as it does; 0: look for every process */
	/* Called once the file is a whole segment of owner's, before its
	 * process is looked for (a walk of /proc for another namespace's):
	 * 0 turns it down (NVT_TRUST_UNWANTED). NULL: every one is wanted. */
	int (*wanted)(int fd, const struct nvt_segment *head, void *arg);
	void *arg;
	/* Found: */
	int fd;                  /* open (the caller closes it) if trusted, else -1 */
	struct stat st;
	struct nvt_segment head; /* the header (slots not read) */
	struct nvt_proc proc;    /* with NVT_TRUST_BY_NAME: the process */
};

enum nvt_seg_trust_rc {
	NVT_TRUST_OK = 0,
	NVT_TRUST_NONE = -1,        /* no such file, or no segment of the directory's user's: a
				     * link, not a regular file, another owner's, writable by others */
	NVT_TRUST_DENIED = -2,      /* not ours to open (EACCES: being made, or not ours to write) */
	NVT_TRUST_LEASED = -3,      /* its user holds a lease on it: it cannot be opened now */
	NVT_TRUST_ESYS = -4,        /* a system call failed, errno says why: no answer */
	NVT_TRUST_MAKING = -5,      /* its maker has not filled it in yet */
	NVT_TRUST_VERSION = -6,     /* a segment of another layout (head.version) */
	NVT_TRUST_CORRUPT = -7,     /* not one whole, well-formed segment of owner's */
	NVT_TRUST_NOT_ITS = -8,     /* a segment that the process does not use: an earlier
				     * process's of its PID, or forged */
	NVT_TRUST_NO_PROC = -9,     /* BY_NAME: no live process it names is in sight */
	NVT_TRUST_NOT_OWNERS = -10, /* RUNS_AS_OWNER: the process runs as another user now */
	NVT_TRUST_UNWANTED = -11,   /* the caller's wanted() turned it down */
};

/*
 * Opens the file name of run directory dirfd (t->owner's) and checks it by
 * the rule above, less what t->flags drop. Returns enum nvt_seg_trust_rc:
 * NVT_TRUST_OK with t->fd open and t->st, t->head (and t->proc) filled in.
 */
int nvt_seg_trust(int dirfd, const char *name, struct nvt_seg_trust *t);

/* ---- The calling process's own segment (segown.c) ------------------------ */

struct nvt_seg_own {
	struct nvt_segment *seg; /* mapped shared */
	char dir[256];           /* its run directory */
	char name[64];
	pid_t pid;
	uint64_t pidns;
	dev_t dev;               /* identity of the file, to remove only ours */
	ino_t ino;
	/* /proc/self/stat as nvt_seg_create read it (once): our PID and our
	 * parent's as /proc numbers them; 0 if it could not be read. */
	pid_t proc_pid;
	pid_t proc_ppid;
};

/* A segment being made (see "Published" in docs/design.md). */
struct nvt_seg_new {
	int fd;      /* the file, until it is open to readers; else -1 */
	int lock_fd; /* the run directory's lock file while we hold the lock; else -1 */
	uint64_t pidns;
	pid_t pid;
};

enum nvt_seg_create_rc {
	NVT_SEG_CREATED = 0, /* new and empty, not yet open to readers, locked: see fresh */
	NVT_SEG_ADOPTED = 1, /* this process exec'd: its segment, partitions kept */
};

/*
 * Makes the calling process's segment in its user's run directory under
 * base, or adopts the one it had before an exec. A stale file of that name is
 * removed and made anew, never truncated (it may still be mapped). A new one
 * is made holding the writer's lock (waiting for it at most
 * NVT_SEG_CREATE_WAIT_MS, then without it) and with mode NVT_SEG_NEW_MODE:
 * fill it, then nvt_seg_unlock(fresh). Returns enum nvt_seg_create_rc (fresh
 * is only used with NVT_SEG_CREATED), or -1 with own->dir set and the reason
 * in why.
 */
int nvt_seg_create(const char *base, struct nvt_seg_own *own, struct nvt_seg_new *fresh, char *why,
		   size_t len);
/* The longest nvt_seg_create waits for a writer's lock that someone else holds. */
#define NVT_SEG_CREATE_WAIT_MS 100
/* Opens a new segment to readers (mode NVT_SEG_MODE), keeping the lock. */
void nvt_seg_publish(struct nvt_seg_new *fresh);
/* Publishes a new segment if need be, and lets its writer's lock go. */
void nvt_seg_unlock(struct nvt_seg_new *fresh);
/*
 * Gives the GPUs of views (n) that own's segment has no slot for a slot each
 * (nvt_segment_add_gpus), holding the segment's writer's lock as any writer
 * does: a program nvtaskset did not start adds the GPUs it sets libsmctrl
 * masks on. Returns how many it added, or -1 with errno set (EBUSY: another
 * writer held the lock for NVT_SEG_CREATE_WAIT_MS).
 */
int nvt_seg_own_add_gpus(const struct nvt_seg_own *own, const struct nvt_slot_view *views, int n);
/* Removes own's file if it is still ours (the mapping stays). */
void nvt_seg_remove(const struct nvt_seg_own *own);
/*
 * Removes, from own's run directory, segments of processes of the caller's
 * PID namespace that are gone or whose PID was reused: children that ended
 * with _exit ran no destructor. Judges at most max_judged of them, from a
 * place in the directory picked at random each time (so that repeated calls
 * visit every one), at most 9 system calls each; reading the directory's
 * names costs a few more.
 */
void nvt_seg_sweep(const struct nvt_seg_own *own, int max_judged);

/* ---- Another process's segment, made before its program runs (segfor.c) -- */

enum nvt_seg_make_for_rc {
	NVT_SEG_MADE = 0,         /* made, for the program pid execs to adopt */
	NVT_SEG_MADE_ALREADY = 1, /* a segment that names pid was there: left as it is */
};
/*
 * Makes the control segment of process pid (as the caller's /proc numbers
 * it; a container's first process, which the runtime holds before its
 * exec): in uid's run directory under base (made uid's where missing, as
 * its shim would), owned by uid and gid, its header naming pid (PID
 * namespace, PID there, start time), slots 0 .. n-1 holding views (each
 * with its uuid), under the writer's lock. The program pid execs as uid
 * adopts it. A file of that name that a process gone left is replaced.
 * Root's, or uid's own. Returns enum nvt_seg_make_for_rc, or -1 with the
 * reason in why.
 */
int nvt_seg_make_for(const char *base, pid_t pid, uid_t uid, gid_t gid,
		     const struct nvt_slot_view *views, int n, char *why, size_t len);

/* ---- The CLI's side (segopen.c) ------------------------------------------ */

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
	int sys_errno;           /* with NVT_SEG_ESYS: why (errno is set too) */
};



/*
 * Opens pid's segment for reading (anyone may) or for writing (its user or
 * root). Looks in the run directories of the task's effective, real and saved
 * uids and of root, checks each directory and file (type before any read:
 * never opens a FIFO blocking) and that the segment names this very process
 * (PID namespace, PID and start time). A process of a namespace below the
 * caller's that none holds is looked for in the run directories of the
 * containers recorded with its PID namespace (segctr.c), by the same rule.
 * Returns enum nvt_seg_err.
 */
int nvt_seg_open(const char *base, pid_t pid, int writable, struct nvt_seg_handle *h);
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
/* Takes the writer's lock (see nvtaskset.h), waiting at most timeout_ms, then
 * maps the segment and checks it again. Returns enum nvt_seg_err. */
int nvt_seg_lock(struct nvt_seg_handle *h, int timeout_ms);
/* Writes view (its GPU and partition) into slot gpu (after nvt_seg_lock);
 * new_gpu: the slot was free, so tell the shim (slots_gen). A file its owner
 * shrinks meanwhile gives NVT_SEG_ECORRUPT, not a crash. Returns enum nvt_seg_err. */
int nvt_seg_write(struct nvt_seg_handle *h, int gpu, const struct nvt_slot_view *view, int new_gpu);
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

/* ---- Containers' run directories (segctr.c) ------------------------------ */

/*
 * A container given a CDI device by root's runtime keeps its tasks'
 * segments in a directory of its own, base/containers/ID/run (ID: the OCI
 * container id), which the device's hook makes and binds at the container's
 * /run/nvtaskset: the container sees nothing else of base. Beside it,
 * base/containers/ID/pidns (root's, out of the container's reach) holds the
 * inode of the container's PID namespace: a segment under run/ is trusted
 * only for a process of that namespace (its file named for it, and the
 * process in it where the reader may see its namespace: root always), so
 * nothing a container writes there names a process outside it.
 * base/containers and each ID directory are root's, written by nobody else:
 * anything else there is passed over (a user may make base/containers first
 * in the shared directory: the hook renames hers aside).
 */
/* The most containers a listing reads (only root makes them). */
#define NVT_CONTAINERS_MAX 4096

struct nvt_seg_ctr {
	char id[NVT_CONTAINER_ID_MAX + 1];
	uint64_t pidns; /* its PID namespace's inode */
};
/* 1 if id is a container id to make a directory for: 1 to NVT_CONTAINER_ID_MAX of
 * [A-Za-z0-9_.-], not starting with '.'. */
int nvt_seg_ctr_id_valid(const char *id);
/* Writes base/containers/ID/run. Returns 0, or -1 if it does not fit. */
int nvt_seg_ctr_base(char *buf, size_t len, const char *base, const char *id);
/* Opens uid's run directory (nvt_userdir_open) under container id's run directory, or under
 * base itself where id is "". Returns its fd, or -1 with errno set. */
int nvt_seg_ctr_userdir_open(const char *base, const char *id, uid_t uid);
/*
 * Reads the containers of base into *out (malloc'd; the caller frees it):
 * each ID directory of base/containers that is root's and written by nobody
 * else, whose pidns file is root's too. Entries that fail the check are
 * counted in *bad (and, the first, named in bad_name: "containers" itself, or
 * its entry). Returns how many, 0 where base has no containers directory, or
 * -1 with errno set.
 */
int nvt_seg_ctr_list(const char *base, struct nvt_seg_ctr **out, int *bad, char *bad_name,
			size_t bad_len);
/*
 * Makes c's directory under base (root's, for a CDI hook): base/containers
 * (a squatter's entry renamed aside), containers/ID (0755), its pidns file,
 * and run (mode 1777: any user of the container makes her run directory
 * there). One there already must record c->pidns. Returns 0, or -1 with the
 * reason in why.
 */
int nvt_seg_ctr_make(const char *base, const struct nvt_seg_ctr *c, char *why, size_t len);
/*
 * Removes container id's directory under base, and what its tasks left in
 * it, whatever its depth: without recursion, never through a link nor into a
 * mount point (what it holds stays), relative to directory fds. Returns 0, or
 * -1 with errno set (ENOENT: none).
 */
int nvt_seg_ctr_remove(const char *base, const char *id);

/* ---- Listing tasks (segscan.c) ------------------------------------------- */

/*
 * Lists the tasks with a segment in any user's run directory under base:
 * their PIDs as the caller's /proc numbers them (a container's tasks by their
 * host PIDs), ascending, in *pids (malloc'd; the caller frees it). With tidy,
 * removes the files of processes that are gone, or that a newer segment of the
 * same process replaced, from the run directories the caller may write (its
 * own; all for root). Returns the count, or -1 with errno set.
 */
int nvt_seg_tasks(const char *base, int tidy, pid_t **pids);

/*
 * What a listing passes over, and why (enum nvt_seg_skip_kind): an entry of
 * the directory of run directories named like a run directory (nvtaskset-UID)
 * that is not one to read, and a run directory crowded with names of other
 * PID namespaces' processes. Anyone may make such an entry in the shared
 * directory: it never fails a listing, nor hides another user's tasks (a run
 * directory holds its own user's segments only).
 */
enum nvt_seg_skip_kind {
	NVT_SKIP_LINK,       /* a symbolic link (owner: its owner) */
	NVT_SKIP_NOT_DIR,    /* a file of another type (mode: its type) */
	NVT_SKIP_OWNER,      /* a directory of another user's (owner), not uid's */
	NVT_SKIP_WRITABLE,   /* a directory others may write in (mode) */
	NVT_SKIP_UNREADABLE, /* uid's, but the caller may not read it or look into it (mode) */
	NVT_SKIP_CROWDED,    /* count files named for PIDs of namespaces the caller may not
			      * read, past the processes of those PIDs in sight, were not read */
	NVT_SKIP_CONTAINER,  /* base/containers (container ""), or a container's directory
			      * in it: not root's, or written by others (uid: none) */
	NVT_SKIP_FOREIGN,    /* count files of a container's run directory named for
			      * processes of another PID namespace than the container's */
	NVT_SKIP_CLOSED,     /* a container's run directory the caller may not look into
			      * (its root may chmod it; mode: its mode, uid: none) */
};
struct nvt_seg_skip {
	char container[NVT_CONTAINER_ID_MAX + 1]; /* under base/containers/ID/run; "": base */
	uid_t uid;   /* the run directory's name's */
	int kind;    /* enum nvt_seg_skip_kind */
	uid_t owner; /* the entry's */
	mode_t mode; /* the entry's (type and permissions) */
	int count;   /* NVT_SKIP_CROWDED: files not read */
};
#define NVT_SEG_SKIPPED_KEPT 16
struct nvt_seg_skipped {
	int n; /* entries passed over, all told (v holds the first NVT_SEG_SKIPPED_KEPT) */
	struct nvt_seg_skip v[NVT_SEG_SKIPPED_KEPT];
};
/* nvt_seg_tasks, and what it passed over into *skipped (NULL: not asked). */
int nvt_seg_tasks_skipped(const char *base, int tidy, pid_t **pids, struct nvt_seg_skipped *skipped);

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

/* A file named like a segment in a run directory, as a listing found it. */
struct nvt_seg_entry {
	pid_t pid;             /* the live process it names, as the caller's /proc numbers it */
	uid_t uid;             /* whose run directory */
	char container[NVT_CONTAINER_ID_MAX + 1]; /* under base/containers/ID/run; "": base */
	dev_t dev;
	ino_t ino;
	struct timespec ctime; /* its status's last change (any write but through a mapping) */
	char name[64];
	int ambiguous;         /* its header fits several processes that the caller cannot tell
				* apart (containers' first processes started in one clock tick):
				* pid is one of them; never removed as another's */
};
/*
 * Lists the files named like a segment of a live process in the run directory
 * of user only, or of every user (only == (uid_t)-1), without opening them:
 * a directory read and an fstatat a file (their PIDs resolved as nvt_seg_tasks
 * does). Which file a task uses, and whether it is a segment at all, is the
 * caller's to find out (nvt_seg_entry_open, nvt_seg_open). Ascending by PID,
 * malloc'd in *out (the caller frees it). Returns the count, or -1 with errno set.
 */
int nvt_seg_list(const char *base, uid_t only, struct nvt_seg_entry **out);
/* Opens the run directory that holds e's file (nvt_userdir_open under base, or under its
 * container's). Returns its fd, or -1 with errno set. */
int nvt_seg_entry_dir(const char *base, const struct nvt_seg_entry *e);
/*
 * Opens e's file for reading (O_NOFOLLOW, O_NONBLOCK) if it is still the one
 * listed: a regular file of e->uid's, same device and inode. Returns its fd, or
 * -1 with errno set (ESTALE: another file by now; EWOULDBLOCK: its user holds a
 * lease on it; EMFILE, ...).
 */
int nvt_seg_entry_open(const char *base, const struct nvt_seg_entry *e);

/* ---- Waiting for a task to leave (segwatch.c) ---- */

/*
 * A watch on the run directories under base (each user's, and base for one
 * that comes): it wakes when a segment file goes (a task that ends removes
 * its own; -l tidies a dead task's) or comes by a rename, or a run directory
 * comes. A task killed leaves its file, and -p moves a task through its
 * mapping: no event says so, so a caller looks again after a bounded time
 * too. Open it before the look whose answer it waits to change, so that no
 * change between the two is lost.
 */
#define NVT_SEG_WATCH_DIRS 4096 /* run directories watched at most (the bounded look finds others) */
struct nvt_seg_watch {
	int fd;           /* the inotify descriptor; -1: none (a wait is a sleep) */
	int base_wd;      /* base's watch */
	int n_dirs;       /* run directories watched */
	const char *base; /* the caller's, kept while the watch is */
};
/* Returns 0, or -1 with errno set (w->fd is -1: a wait sleeps its time out). */
int nvt_seg_watch_open(const char *base, struct nvt_seg_watch *w);
/* Waits up to timeout_ms for a change (a run directory that comes is watched from then on).
 * Returns 1 (changed), 0 (none, or a signal), or -1 with errno set. */
int nvt_seg_watch_wait(struct nvt_seg_watch *w, int timeout_ms);
void nvt_seg_watch_close(struct nvt_seg_watch *w);

#endif /* NVT_SEGFILE_H */
