/*
 * profile.h - what --profile's files share (profile.c measures,
 * profreport.c prints, plot.c draws). Only tools/nvtaskset/ includes it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_PROFILE_H
#define NVT_CLI_PROFILE_H

#include "cli.h"
#include "core/profile.h"

struct profile_report_opts {
	int json;
	double slowdown;
	unsigned rounds;
	int higher_is_better;
	char **command;
	enum nvt_strategy strategy;
	int no_mps;
	uint64_t mem_limit; /* the runs' GPU memory limit (--mem), bytes; 0: none */
};

/* Prints the curve as a table (or JSON): sizes alone, hog (NULL: not
 * measured) beside the bandwidth hog; lists[i] the TPCs of size i. */
void profile_report(const struct nvt_gpu_topology *gpu, const char *const *metric,
		    const struct nvt_profile_size *sizes, const struct nvt_profile_size *hog,
		    const char (*lists)[NVT_LIST_TEXT_MAX], unsigned n, int pick, int hog_pick,
		    const struct profile_report_opts *o);

/* Writes the curve (median and min-max of each size; hog's in a second
 * colour; the pick) as an SVG image to path (plot.c); exits with the reason
 * on failure. */
void profile_plot(const char *path, const struct nvt_profile_size *sizes,
		  const struct nvt_profile_size *hog, unsigned n, int pick, const char *unit);

/* nvt_cmd_profile: --profile's whole sub-command (argv[0] is "nvtaskset --profile"). */
int nvt_cmd_profile(int argc, char **argv);
/* Its options (main.c names the sub-command of one given without it). */
extern const struct option nvt_profile_options[];
/* nvt_cmd_plan: --plan FILE (plan.c; argv[0] is "--plan"). */
int nvt_cmd_plan(int argc, char **argv);

#endif
