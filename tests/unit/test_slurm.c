/*
 * test_slurm.c - the Slurm plugin's pure code (tools/slurm/request.c) and
 * the job step told from a process title (src/slurmproc.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "check.h"
#include "request.h"
#include "slurmproc.h"

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

static void test_titles(void)
{
	static const char batch[] = "slurmstepd: [5.batch]";
	static const char padded[] = "slurmstepd: [6.0]\0\0\0";
	struct nvt_slurm_step s;
	char text[NVT_SLURM_STEP_TEXT_MAX];

	CHECK(nvt_slurm_title_parse(batch, sizeof(batch), &s) == 0);
	CHECK(s.job == 5);
	CHECK_STR(s.step, "batch");
	CHECK(nvt_slurm_title_parse(padded, sizeof(padded) - 1, &s) == 0);
	CHECK(s.job == 6);
	CHECK_STR(s.step, "0");
	nvt_slurm_step_format(&s, text, sizeof(text));
	CHECK_STR(text, "6.0");
	CHECK(nvt_slurm_title_parse("slurmstepd: [4294967295.extern]", 31, &s) == 0);
	CHECK(s.job == 4294967295u);
	CHECK(nvt_slurm_title_parse("slurmstepd: [4294967296.0]", 26, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.0+1]", 19, &s) == 0);
	CHECK_STR(s.step, "0+1");
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.0", 16, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [.0]", 16, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [0.0]", 17, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.]", 16, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.a b]", 19, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.aaaaaaaaaaaaaaaaaaaaaaaaaaaa]", 44, &s) == -1);
	CHECK(nvt_slurm_title_parse("/usr/sbin/slurmstepd", 20, &s) == -1);
	CHECK(nvt_slurm_title_parse("slurmstepd: [7.0]", 5, &s) == -1);
	/* The environment of a task (SLURM_JOB_ID, SLURM_STEP_ID). */
	CHECK(nvt_slurm_env_parse("12", "3", &s) == 0 && s.job == 12);
	CHECK_STR(s.step, "3");
	CHECK(nvt_slurm_env_parse("12", NULL, &s) == 0);
	CHECK_STR(s.step, "batch");
	CHECK(nvt_slurm_env_parse("12x", "3", &s) == -1);
	CHECK(nvt_slurm_env_parse("", "3", &s) == -1);
	CHECK(nvt_slurm_env_parse("12", "", &s) == -1);
	CHECK(nvt_slurm_env_parse(NULL, "3", &s) == -1);
	/* This process runs in no step (the suite clears SLURM_* first). */
	CHECK(nvt_slurm_stepd(1, &s) == -1);
}

int main(void)
{
	test_counts();
	test_gres();
	test_gres_index();
	test_titles();
	return CHECK_DONE();
}
