/*
 * test_slurm.c - the Slurm plugin's pure code (tools/slurm/request.c), its
 * checks of paths only root can change (os/rootpath.c: the full
 * set as root, in a directory of its own under /tmp) and the job step told
 * from a process title (src/os/slurmproc.c).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "request.h"
#include "os/rootpath.h"
#include "os/slurmproc.h"

static void test_counts(void)
{
	unsigned v = 0;

	CHECK(nvt_slurm_count_parse("16", 256, &v) == 0 && v == 16);
	CHECK(nvt_slurm_count_parse("256", 256, &v) == 0 && v == 256);
	CHECK(nvt_slurm_count_parse("1", 256, &v) == 0 && v == 1);
	CHECK(nvt_slurm_count_parse("257", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("0", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("-4", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("+4", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse(" 4", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("4 ", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("4x", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("0x10", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("", 256, &v) == -1);
	CHECK(nvt_slurm_count_parse(NULL, 256, &v) == -1);
	CHECK(nvt_slurm_count_parse("99999999999999999999", 256, &v) == -1);
}

static void test_path_args(void)
{
	char buf[16], why[200];

	CHECK(nvt_slurm_path_arg("rundir=/run/x", "rundir=", buf, sizeof(buf), why, sizeof(why)) == 1 &&
	      !strcmp(buf, "/run/x"));
	CHECK(nvt_slurm_path_arg("shim=/x", "rundir=", buf, sizeof(buf), why, sizeof(why)) == 0);
	CHECK(nvt_slurm_path_arg("rundir=run", "rundir=", buf, sizeof(buf), why, sizeof(why)) == -1);
	CHECK(strstr(why, "rundir= takes an absolute path, not 'run'") != NULL);
	/* As long as the buffer allows, and one byte more: said so, not "unknown argument". */
	CHECK(nvt_slurm_path_arg("rundir=/23456789abcde", "rundir=", buf, sizeof(buf), why,
				 sizeof(why)) == 1);
	CHECK(nvt_slurm_path_arg("rundir=/23456789abcdefg", "rundir=", buf, sizeof(buf), why,
				 sizeof(why)) == -1);
	CHECK(strstr(why, "rundir= takes a path of at most 15 bytes (it has 16)") != NULL);
}

static void test_gres(void)
{
	/* gres_detail_str, as slurm_load_job() gives it (Slurm 22.05, measured). */
	CHECK(nvt_slurm_gres_count("tpc(CNT:40)", "tpc") == 40);
	CHECK(nvt_slurm_gres_count("gpu:a100:2(IDX:0,2),tpc(CNT:16)", "tpc") == 16);
	CHECK(nvt_slurm_gres_count("gpu:2(IDX:0-1)", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("gpu:2(IDX:0-1)", "gpu") == 2);
	CHECK(nvt_slurm_gres_count("tpcx(CNT:4)", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("tpc(CNT:)", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("tpc(CNT:4", "tpc") == -1);
	/* An opened parenthesis that never closes is no item (it counted one). */
	CHECK(nvt_slurm_gres_count("tpc(", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("tpc:2(IDX:0-1", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("gres:tpc:2(", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("tpc:2(IDX:0-1)", "tpc") == 2);
	/* A sum past a long's range is malformed (it overflowed: UBSan). */
	CHECK(nvt_slurm_gres_count("gres:tpc:999999999999999999,gres:tpc:999999999999999999,"
				   "gres:tpc:999999999999999999,gres:tpc:999999999999999999,"
				   "gres:tpc:999999999999999999,gres:tpc:999999999999999999,"
				   "gres:tpc:999999999999999999,gres:tpc:999999999999999999,"
				   "gres:tpc:999999999999999999,gres:tpc:999999999999999999",
				   "tpc") == -1);
	/* tres_per_node */
	CHECK(nvt_slurm_gres_count("gres:tpc:16", "tpc") == 16);
	CHECK(nvt_slurm_gres_count("gres/tpc=16", "tpc") == 16);
	CHECK(nvt_slurm_gres_count("gres:gpu:1,gres:tpc:8", "tpc") == 8);
	CHECK(nvt_slurm_gres_count("gres:tpc:big:8,gres:tpc:small:4", "tpc") == 12);
	CHECK(nvt_slurm_gres_count("gres:tpc", "tpc") == 1);
	CHECK(nvt_slurm_gres_count("gres:tpc:big", "tpc") == 1);
	CHECK(nvt_slurm_gres_count("gres:tpc:", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("gres:tpc:big:x", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("gres/tpc=x", "tpc") == -1);
	CHECK(nvt_slurm_gres_count("", "tpc") == -1);
	CHECK(nvt_slurm_gres_count(NULL, "tpc") == -1);
}

static void test_gres_index(void)
{
	uint64_t m = 99;

	/* gres_detail_str: the GPUs of one node, by Slurm's index. */
	CHECK(nvt_slurm_gres_index("gpu:2(IDX:0-1),tpc(CNT:16)", "gpu", &m) == 1 && m == 3);
	CHECK(nvt_slurm_gres_index("gpu:a100:2(IDX:0,2)", "gpu", &m) == 1 && m == 5);
	CHECK(nvt_slurm_gres_index("gpu:a100:1(IDX:1),gpu:v100:1(IDX:3),tpc(CNT:4)", "gpu", &m) == 1 &&
	      m == 10);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:63)", "gpu", &m) == 1 && m == 1ull << 63);
	/* Without device files: there, with no indices. */
	CHECK(nvt_slurm_gres_index("gpu(CNT:2),tpc(CNT:4)", "gpu", &m) == 0 && m == 0);
	CHECK(nvt_slurm_gres_index("gpu:2(IDX:N/A)", "gpu", &m) == 0 && m == 0);
	/* Not there; another GRES whose name starts alike. */
	CHECK(nvt_slurm_gres_index("tpc(CNT:16)", "gpu", &m) == -1 && m == 0);
	CHECK(nvt_slurm_gres_index("gpux:1(IDX:0)", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index(NULL, "gpu", &m) == -1);
	/* Malformed. */
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:64)", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:1-0)", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:)", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:0,)", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:0", "gpu", &m) == -1);
	CHECK(nvt_slurm_gres_index("gpu:1(IDX:a)", "gpu", &m) == -1);
	/* SLURM_STEP_GPUS */
	CHECK(nvt_slurm_index_list("0,2-3", &m) == 0 && m == 13);
	CHECK(nvt_slurm_index_list("1", &m) == 0 && m == 2);
	CHECK(nvt_slurm_index_list("", &m) == -1);
	CHECK(nvt_slurm_index_list("0,,1", &m) == -1);
	CHECK(nvt_slurm_index_list("-1", &m) == -1);
	CHECK(nvt_slurm_index_list("GPU-1234", &m) == -1);
	CHECK(nvt_slurm_index_list(NULL, &m) == -1);
}

/* nvt_root_dir's verdict on path (mode: make what is missing); the reason in why. */
static int root_dir(const char *path, mode_t mode, char *why)
{
	char real[PATH_MAX];
	return nvt_root_dir(path, mode, real, sizeof(real), why, 512);
}

static int root_exec(const char *path, char *why)
{
	char real[PATH_MAX];
	return nvt_root_exec(path, real, sizeof(real), why, 512);
}

static void test_root_paths(void)
{
	char why[512], real[PATH_MAX], path[PATH_MAX], dir[] = "/tmp/nvtaskset-rootpath.XXXXXX";
	struct stat st;
	mode_t mask;

	/* Anyone can check the system's own paths. */
	CHECK(nvt_root_dir("/", 0, real, sizeof(real), why, sizeof(why)) == 0);
	CHECK_STR(real, "/");
	CHECK(root_dir("/tmp", 0, why) == -1); /* sticky, but the end must be root's alone */
	CHECK(strstr(why, "every user may write in /tmp") != NULL);
	CHECK(root_dir("tmp", 0, why) == -1);
	CHECK(root_exec("/bin/sh", why) == 0);
	CHECK(nvt_root_exec("/bin/sh", real, sizeof(real), why, sizeof(why)) == 0);
	CHECK(realpath("/bin/sh", path) && !strcmp(real, path)); /* no link left */
	CHECK(root_exec("/etc/passwd", why) == -1 && strstr(why, "not executable"));
	CHECK(root_exec("/usr/bin", why) == -1 && strstr(why, "not a regular file"));
	CHECK(root_dir("/etc/passwd", 0, why) == -1 && strstr(why, "not a directory"));
	CHECK(root_dir("/nonexistent-nvtaskset", 0, why) == -1);
	if (geteuid() != 0)
		return; /* what follows makes files of root's and of another user's */
	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0755) == 0);
	/* Made with the mode asked, whatever the umask; found again. */
	mask = umask(077);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK(nvt_root_dir(path, 0755, real, sizeof(real), why, sizeof(why)) == 0);
	umask(mask);
	CHECK_STR(real, path);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755 && st.st_uid == 0);
	CHECK(root_dir(path, 0, why) == 0);
	/* Through a link of root's, and "..": the path without them. */
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK(symlink("a/./b/..", path) == 0);
	snprintf(path, sizeof(path), "%s/link/b", dir);
	CHECK(nvt_root_dir(path, 0, real, sizeof(real), why, sizeof(why)) == 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK_STR(real, path);
	/* Another user's directory, above or at the end; one a group may write. */
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK(chown(path, 65534, 65534) == 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK(root_dir(path, 0, why) == -1 && strstr(why, "/a belongs to uid 65534, not root"));
	CHECK(root_dir(path, 0755, why) == -1);
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK(chown(path, 0, 65534) == 0 && chmod(path, 0775) == 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK(root_dir(path, 0, why) == -1 && strstr(why, "group 65534 may write in"));
	/* A sticky directory every user may write in (as /tmp) on the way, not at the end. */
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK(chmod(path, 01777) == 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK(root_dir(path, 0, why) == 0);
	CHECK(chmod(path, 0777) == 0);
	CHECK(root_dir(path, 0, why) == -1 && strstr(why, "every user may write in"));
	/* A link another user owns is not followed. */
	snprintf(path, sizeof(path), "%s/userlink", dir);
	CHECK(symlink("a", path) == 0 && lchown(path, 65534, 65534) == 0);
	snprintf(path, sizeof(path), "%s/userlink/b", dir);
	CHECK(root_dir(path, 0, why) == -1 && strstr(why, "symbolic link of uid 65534"));
	/* A program: root's, not writable by others. */
	snprintf(path, sizeof(path), "%s/prog", dir);
	CHECK(fclose(fopen(path, "w")) == 0 && chmod(path, 0755) == 0);
	CHECK(root_exec(path, why) == 0);
	CHECK(chmod(path, 0757) == 0);
	CHECK(root_exec(path, why) == -1 && strstr(why, "every user may write in"));
	CHECK(chmod(path, 0755) == 0 && chown(path, 65534, 0) == 0);
	CHECK(root_exec(path, why) == -1 && strstr(why, "belongs to uid 65534"));
	/* A mount point (--cdi's run directory): root's, of any mode, on a path of root's; a
	 * directory of another user's, a file, or a path through her link is not. */
	snprintf(path, sizeof(path), "%s/mnt", dir);
	CHECK(mkdir(path, 01777) == 0 && chmod(path, 01777) == 0);
	CHECK(nvt_root_mount_point(path, real, sizeof(real), why, sizeof(why)) == 0);
	CHECK_STR(real, path);
	CHECK(root_dir(path, 0, why) == -1); /* as a directory of root's alone it is not */
	CHECK(chown(path, 65534, 0) == 0);
	CHECK(nvt_root_mount_point(path, real, sizeof(real), why, sizeof(why)) == -1 &&
	      strstr(why, "/mnt belongs to uid 65534, not root"));
	snprintf(path, sizeof(path), "%s/prog", dir);
	CHECK(chown(path, 0, 0) == 0);
	CHECK(nvt_root_mount_point(path, real, sizeof(real), why, sizeof(why)) == -1 &&
	      strstr(why, "not a directory"));
	snprintf(path, sizeof(path), "%s/userlink", dir);
	CHECK(nvt_root_mount_point(path, real, sizeof(real), why, sizeof(why)) == -1 &&
	      strstr(why, "symbolic link of uid 65534"));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
}

static void test_titles(void)
{
	static const char batch[] = "slurmstepd: [5.batch]";
	static const char padded[] = "slurmstepd: [6.0]\0\0\0";
	struct nvt_slurm_step s;
	char text[NVT_SLURM_STEP_TEXT_MAX];

	CHECK(nvt_slurmproc_title_parse(batch, sizeof(batch), &s) == 0);
	CHECK(s.job == 5);
	CHECK_STR(s.step, "batch");
	CHECK(nvt_slurmproc_title_parse(padded, sizeof(padded) - 1, &s) == 0);
	CHECK(s.job == 6);
	CHECK_STR(s.step, "0");
	nvt_slurmproc_step_format(&s, text, sizeof(text));
	CHECK_STR(text, "6.0");
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [4294967295.extern]", 31, &s) == 0);
	CHECK(s.job == 4294967295u);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [4294967296.0]", 26, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.0+1]", 19, &s) == 0);
	CHECK_STR(s.step, "0+1");
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.0", 16, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [.0]", 16, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [0.0]", 17, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.]", 16, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.a b]", 19, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.aaaaaaaaaaaaaaaaaaaaaaaaaaaa]", 44, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("/usr/sbin/slurmstepd", 20, &s) == -1);
	CHECK(nvt_slurmproc_title_parse("slurmstepd: [7.0]", 5, &s) == -1);
	/* The environment of a task (SLURM_JOB_ID, SLURM_STEP_ID). */
	CHECK(nvt_slurmproc_env_parse("12", "3", &s) == 0 && s.job == 12);
	CHECK_STR(s.step, "3");
	CHECK(nvt_slurmproc_env_parse("12", NULL, &s) == 0);
	CHECK_STR(s.step, "batch");
	CHECK(nvt_slurmproc_env_parse("12x", "3", &s) == -1);
	CHECK(nvt_slurmproc_env_parse("", "3", &s) == -1);
	CHECK(nvt_slurmproc_env_parse("12", "", &s) == -1);
	CHECK(nvt_slurmproc_env_parse(NULL, "3", &s) == -1);
	/* This process runs in no step (the suite clears SLURM_* first). */
	CHECK(nvt_slurmproc_stepd(1, &s) == -1);
}

int main(void)
{
	test_counts();
	test_path_args();
	test_gres();
	test_gres_index();
	test_root_paths();
	test_titles();
	return CHECK_DONE();
}
