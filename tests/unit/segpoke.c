/*
 * segpoke.c - test helper that writes into a task's control segment the way
 * a buggy or hostile writer could, bypassing every check of the CLI.
 *
 *   segpoke PID empty      a partition with no TPC at all
 *   segpoke PID badtopo    a partition with a malformed topology
 *   segpoke PID gpcs N     slot 0's topology says the GPU has N GPCs (its user may write
 *                          any number there: 4294967295, say), its partition as it was
 *   segpoke PID onegpc     slot 0's topology says every TPC is in GPC 0 of 1: a valid map, but
 *                          false (a user's own segment may say it), its partition as it was
 *   segpoke PID version N  set the segment's version field
 *   segpoke PID garbage    overwrite the header magic
 *   segpoke PID halfwrite [LIST]  leave the slot's sequence odd (a writer that
 *                          died); with LIST, after it wrote TPCs LIST and nothing
 *                          more (a torn slot: new TPCs, the rest as it was)
 *   segpoke PID allodd     leave every slot's sequence odd, as a user may leave
 *                          her own segments (unsettled slots)
 *   segpoke PID twice LIST slot 1 names slot 0's GPU too (its user may write so; the shim
 *                          writes one slot a GPU), with TPCs LIST, as it was else
 *   segpoke PID gpus N     every slot names a made-up GPU of its own (UUID ee N SLOT 0...),
 *                          TPCs 0-3 of slot 0's map: sixteen GPUs no machine has, which its
 *                          user may write (N tells several segments' apart)
 *   segpoke PID claim      flag the partition NVT_SLOTF_CLAIM: a pick not confirmed
 *                          yet, as a claimer stopped (or killed) mid-way leaves it
 *   segpoke PID hold       take the segment's writer's lock as nvtaskset -p does,
 *                          print "held", and keep it until killed or PID ends (a
 *                          test that failed before killing it leaves nothing behind:
 *                          the suite ends the test's tasks)
 *   segpoke PID making     make the segment look as one its shim is still making
 *                          (mode 0600, no header: the magic turned over)
 *   segpoke PID made       undo "making" (the magic back, mode 0644)
 *   segpoke PID show FILE  print slot 0's TPC list ("none" unset) of the segment FILE
 *                          (one from before an exec to another user, say)
 *   segpoke odd PID...     allodd for each PID's segment; prints how many segments it reached
 *   segpoke even PID...    every odd slot sequence of each PID's segment made even (settled:
 *                          the slot reads as it was, its sequence 1 further on); prints how
 *                          many segments it reached
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seg/segfile.h"
#include "os/proc.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/gpusel.h"
#include "core/tpcset.h"

/* Writes the path pid's segment has (whether or not it exists). Returns 0 or -1. */
static int seg_path(char *buf, size_t len, const char *base, pid_t pid)
{
	char dir[256], name[64];
	struct nvt_proc p;
	int n;

	if (nvt_proc_info(pid, &p) || !p.pidns || nvt_userdir_path(dir, sizeof(dir), base, p.uid[1]) ||
	    nvt_seg_name(name, sizeof(name), p.pidns, p.ns_pid))
		return -1;
	n = snprintf(buf, len, "%s/%s", dir, name);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* segpoke odd|even PID...: returns 0, or 2 for a word that is not a PID; prints the count of
 * segments reached. */
static int seqs_all(int odd, int n, char **pids)
{
	int changed = 0;

	for (int i = 0; i < n; i++) {
		struct nvt_segment *seg;
		char path[256];
		int fd;
		char *end;
		long pid = strtol(pids[i], &end, 10);
		if (*end || end == pids[i] || pid <= 0 || pid > INT32_MAX)
			return 2;
		if (seg_path(path, sizeof(path), nvt_rundir(), (pid_t)pid) ||
		    (fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK)) < 0)
			continue;
		seg = mmap(NULL, sizeof(*seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (seg == MAP_FAILED)
			continue;
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			if (odd)
				__atomic_fetch_or(&seg->gpu[g].seq, 1, __ATOMIC_SEQ_CST);
			else if (__atomic_load_n(&seg->gpu[g].seq, __ATOMIC_SEQ_CST) & 1)
				__atomic_fetch_add(&seg->gpu[g].seq, 1, __ATOMIC_SEQ_CST);
		munmap(seg, sizeof(*seg));
		changed++;
	}
	printf("%d\n", changed);
	return 0;
}

int main(int argc, char **argv)
{
	struct nvt_segment *seg;
	struct nvt_slot_view view;
	char path[256];
	int fd;

	if (argc >= 2 && (!strcmp(argv[1], "odd") || !strcmp(argv[1], "even")))
		return seqs_all(argv[1][0] == 'o', argc - 2, argv + 2);
	if (argc < 3 || seg_path(path, sizeof(path), nvt_rundir(), (pid_t)atoi(argv[1])))
		return 2;
	if (!strcmp(argv[2], "hold")) {
		struct nvt_seg_handle h;
		int rc = nvt_seg_open(nvt_rundir(), (pid_t)atoi(argv[1]), 1, &h);
		if (rc == NVT_SEG_OK)
			rc = nvt_seg_lock(&h, 2000);
		if (rc != NVT_SEG_OK) {
			fprintf(stderr, "segpoke: cannot take the writer's lock: error %d\n", rc);
			return 1;
		}
		printf("held\n");
		fflush(stdout);
		while (kill((pid_t)atoi(argv[1]), 0) == 0 || errno == EPERM) {
			struct timespec tick = {0, 100000000};
			nanosleep(&tick, NULL);
		}
		return 0;
	}
	if (!strcmp(argv[2], "show") && argc == 4) {
		char list[NVT_LIST_MAX_CHARS + 1];
		fd = open(argv[3], O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0 || nvt_seg_pread_slot(fd, 0, &view, NULL))
			return 1;
		if (view.state != NVT_SLOT_SET)
			snprintf(list, sizeof(list), "none");
		else if (nvt_format_list(&view.tpcs, list, sizeof(list)) < 0)
			return 1;
		printf("%s\n", list);
		return 0;
	}
	fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	seg = mmap(NULL, sizeof(*seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (seg == MAP_FAILED)
		return 1;
	if (!strcmp(argv[2], "allodd")) {
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			__atomic_fetch_or(&seg->gpu[g].seq, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	/* Keep slot 0's GPU; change what it says. */
	if (nvt_slot_read(&seg->gpu[0], &view, 100))
		return 1;
	if (!strcmp(argv[2], "twice") && argc == 4) {
		if (nvt_parse_list(argv[3], NVT_MAX_TPCS, &view.tpcs))
			return 2;
		nvt_slot_write(&seg->gpu[1], &view);
		return 0;
	}
	if (!strcmp(argv[2], "gpus") && argc == 4) {
		view.state = NVT_SLOT_SET;
		nvt_set_clear(&view.tpcs);
		nvt_set_fill(&view.tpcs, 4);
		for (int g = 0; g < NVT_MAX_GPUS; g++) {
			memset(view.uuid, 0, sizeof(view.uuid));
			view.uuid[0] = 0xee;
			view.uuid[1] = (uint8_t)atoi(argv[3]);
			view.uuid[2] = (uint8_t)g;
			nvt_slot_write(&seg->gpu[g], &view);
		}
		return 0;
	}
	if (!strcmp(argv[2], "claim")) {
		view.flags |= NVT_SLOTF_CLAIM;
		nvt_slot_write(&seg->gpu[0], &view);
		return 0;
	}
	if (!strcmp(argv[2], "onegpc")) {
		view.topo.n_gpcs = 1;
		memset(view.topo.gpc, 0, sizeof(view.topo.gpc));
		nvt_slot_write(&seg->gpu[0], &view);
		return 0;
	}
	if (!strcmp(argv[2], "gpcs") && argc == 4) {
		view.topo.n_gpcs = (uint32_t)strtoul(argv[3], NULL, 10);
		nvt_slot_write(&seg->gpu[0], &view);
		return 0;
	}
	view.state = NVT_SLOT_SET;
	nvt_set_clear(&view.tpcs);
	nvt_topo_identity(&view.topo, 66);
	if (!strcmp(argv[2], "empty")) {
		nvt_slot_write(&seg->gpu[0], &view);
	} else if (!strcmp(argv[2], "badtopo")) {
		nvt_set_fill(&view.tpcs, 4);
		view.topo.hw_bit[1] = view.topo.hw_bit[0];
		nvt_slot_write(&seg->gpu[0], &view);
	} else if (!strcmp(argv[2], "version") && argc == 4) {
		/* "current": this build's NVT_SEG_VERSION (puts a segment back). */
		seg->version = !strcmp(argv[3], "current") ? NVT_SEG_VERSION : (uint32_t)atoi(argv[3]);
	} else if (!strcmp(argv[2], "making")) {
		/* Its mode first, as a shim's new file has before its header. */
		if (seg->magic != NVT_SEG_MAGIC || fchmod(fd, NVT_SEG_NEW_MODE))
			return 1;
		seg->magic = ~seg->magic;
	} else if (!strcmp(argv[2], "made")) {
		/* Its header first, then its mode, as a shim publishes one. */
		if (seg->magic != ~NVT_SEG_MAGIC)
			return 1;
		seg->magic = NVT_SEG_MAGIC;
		if (fchmod(fd, NVT_SEG_MODE))
			return 1;
	} else if (!strcmp(argv[2], "garbage")) {
		memset(seg, 0x5a, 16);
	} else if (!strcmp(argv[2], "halfwrite")) {
		__atomic_fetch_or(&seg->gpu[0].seq, 1, __ATOMIC_SEQ_CST);
		if (argc == 4 && nvt_parse_list(argv[3], NVT_MAX_TPCS, &seg->gpu[0].tpcs))
			return 2;
	} else {
		return 2;
	}
	munmap(seg, sizeof(*seg));
	close(fd);
	return 0;
}
