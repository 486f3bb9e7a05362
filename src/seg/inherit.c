/*
 * inherit.c - where a new task's partitions come from: this very process's
 * segment from before an exec to another user, or its nearest ancestor's.
 * See inherit.h, and nvtaskset.h for the rule.
 *
 * Runs once, in the shim's set-up (single-threaded, under pthread_once):
 * the segment copy is static rather than 10 kB of a stack we do not own.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "core/gpusel.h"
#include "inherit.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Reads the segment called name in dirfd, the run directory of uid, if the
 * one rule (nvt_seg_trust, every check) trusts it as the segment process id
 * uses: a regular file of uid's and a whole segment, made by uid, that
 * names id (and by the maps of maps_pid, id's PID as our /proc numbers it;
 * 0: by its header), opened to readers. Returns enum
 * nvt_inherit_rc; with torn_ok, slots a dead writer left half-written are
 * left out instead of making it UNUSABLE, and refused ones are kept.
 *
 * Takes no lock: anyone may open a segment, so anyone could hold a lock on
 * it. A writer inside a slot is seen by the slot's sequence lock; a segment
 * its maker is still filling, by its mode (docs/design.md, "Published"):
 * one that others may not read yet, which we cannot open if it is not ours.
 */
static int read_trusted(int dirfd, uid_t uid, const char *name, const struct nvt_proc_id *id,
			pid_t maps_pid, int torn_ok, struct nvt_inherited *out)
{
	static struct nvt_segment copy;
	static struct nvt_seg_trust t; /* ~10 kB: set-up is single-threaded */
	int fd, rc = NVT_INHERIT_NONE;

	memset(out, 0, sizeof(*out));
	if (dirfd < 0)
		return NVT_INHERIT_NONE;
	/* A leftover of an earlier process with this PID, or a file that the
	 * process does not use (its maps, those of maps_pid, decide where we
	 * may read them; 0: the header decides). base NULL: read the maps
	 * (few ancestors have a file). */
	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.oflags = O_RDONLY;
	t.who.proc_pid = maps_pid;
	t.who.id = *id;
	switch (nvt_seg_trust(dirfd, name, &t)) {
	case NVT_TRUST_OK:
		break;
	case NVT_TRUST_DENIED: /* mode 0600: not ours to read, so not filled in yet */
	case NVT_TRUST_MAKING:
		return NVT_INHERIT_UNUSABLE;
	default:
		return NVT_INHERIT_NONE;
	}
	fd = t.fd;
	if (nvt_seg_pread_whole(fd, &copy))
		goto done;
	/* Not open to readers yet: its shim is filling it right now. */
	if ((t.st.st_mode & 0777) != NVT_SEG_MODE) {
		rc = NVT_INHERIT_UNUSABLE;
		goto done;
	}
	rc = NVT_INHERIT_FOUND;
	out->from = id->pid;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_view *view = &out->view[out->n];
		struct nvt_slot_status status;
		int torn;

		/* A slot's GPU is written once and never changes (nvt_slot_uuid):
		 * the copy names it even without the sequence lock. */
		if (nvt_uuid_is_zero(copy.gpu[g].uuid))
			continue;
		torn = nvt_seg_pread_slot(fd, g, view, &status) != 0;
		if (torn && torn_ok)
			continue;
		if (torn || (!torn_ok && view->seq && status.rejected == view->seq)) {
			rc = NVT_INHERIT_UNUSABLE;
			break;
		}
		view->flags = 0; /* a copy is no claim of its own (NVT_SLOTF_CLAIM) */
		out->slot[out->n++] = g;
	}
done:
	close(fd);
	return rc;
}

int nvt_inherit_same_pid(const char *base, const struct nvt_seg_own *own, struct nvt_inherited *out)
{
	struct nvt_proc_id id = {own->pidns, own->pid, own->seg->start_time};
	int dirfd, rc;

	memset(out, 0, sizeof(*out));
	if (geteuid() == 0)
		return NVT_INHERIT_NONE; /* root's directory is our own */
	dirfd = nvt_userdir_open(base, 0);
	/* Our own maps hold the segment we just made, not this one: the
	 * header decides (root's directory: nobody else writes there). */
	rc = read_trusted(dirfd, 0, own->name, &id, 0, 1, out);
	if (dirfd >= 0)
		close(dirfd);
	return rc == NVT_INHERIT_FOUND && out->n ? rc : NVT_INHERIT_NONE;
}

int nvt_inherit_ancestor(const char *base, const struct nvt_seg_own *own,
			 const struct nvt_proc_id *stop, struct nvt_inherited *out)
{
	uid_t me = geteuid();
	int mine = -1, roots = -1, rc = NVT_INHERIT_NONE;
	struct nvt_stat st;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	/* PIDs and parents are read in /proc: only where it numbers them as our
	 * PID namespace does (segment names use those numbers). nvt_seg_create
	 * read /proc/self/stat for us. */
	if (!own->proc_pid || own->proc_pid != own->pid || !own->pidns)
		return NVT_INHERIT_NONE;
	mine = nvt_userdir_open(base, me);
	roots = me == 0 ? -1 : nvt_userdir_open(base, 0);
	if (mine < 0 && roots < 0)
		return NVT_INHERIT_NONE; /* no directory we trust: no segment either */
	/* A parent of 0 is outside our PID namespace (or there is none). A
	 * process so started in a container (podman exec, kubectl exec) joined
	 * it: its first process, PID 1 there, is the nearest it has. */
	pid = own->proc_ppid;
	if (pid == 0 && own->pid != 1)
		pid = 1;
	for (int depth = 0; depth < NVT_INHERIT_MAX_DEPTH && pid > 0 && rc == NVT_INHERIT_NONE;
	     depth++) {
		struct nvt_proc_id id;
		struct stat file;
		char name[64];
		uid_t euid;
		int in_mine, in_roots;

		/* Gone meanwhile, or a zombie: the chain is being handed on. */
		if (nvt_proc_stat(pid, &st))
			break;
		id.pidns = own->pidns;
		id.pid = pid;
		id.start_time = st.start_time;
		if (nvt_seg_name(name, sizeof(name), own->pidns, pid))
			break;
		/* Whose the process is matters only where a file has its name: most
		 * ancestors (shells, init) have none, and their status is not read. */
		in_mine = mine >= 0 && fstatat(mine, name, &file, AT_SYMLINK_NOFOLLOW) == 0;
		in_roots = roots >= 0 && fstatat(roots, name, &file, AT_SYMLINK_NOFOLLOW) == 0;
		if ((in_mine || in_roots) && nvt_proc_euid(pid, &euid))
			break;
		/*
		 * Only segments whose user may change ours anyway: ours and root's.
		 * Another user's would let her choose the partition of a process she
		 * may not move (a setuid program she starts, say): her processes are
		 * passed over. A process of ours keeps its segment in our directory,
		 * or in root's if it was root's when its shim started (it called
		 * setuid() since); root's one there may also be a leftover from
		 * before an exec to us, older than the one in ours, so ours first.
		 * A process of root's has its segment in root's directory.
		 */
		if (in_mine && euid == me)
			rc = read_trusted(mine, me, name, &id, pid, 0, out);
		if (rc == NVT_INHERIT_NONE && in_roots && me != 0 && (euid == me || euid == 0))
			rc = read_trusted(roots, 0, name, &id, pid, 0, out);
		/* The process nvtaskset gave the environment's partition to: what
		 * lies above it is older than that command line. */
		if (stop && stop->pidns == id.pidns && stop->pid == id.pid &&
		    stop->start_time == id.start_time)
			break;
		if (pid == 1)
			break; /* init, or a container's first process: nothing above */
		/* An ancestor whose parent is outside (a shell podman exec started, whose
		 * own segment could not be made: its run directory another user's) joined
		 * the namespace as the process itself may have: PID 1 is next. */
		pid = st.ppid ? st.ppid : 1;
	}
	if (mine >= 0)
		close(mine);
	if (roots >= 0)
		close(roots);
	return rc;
}
