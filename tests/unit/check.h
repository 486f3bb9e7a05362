/*
 * check.h - a tiny assertion harness for nvtaskset's unit tests.
 * Each CHECK counts; a failing one prints where and why. A part that cannot
 * run here says so with CHECK_SKIP(why), counted apart from the checks (as
 * the kernel's kselftest counts SKIP apart from PASS). main() ends with
 * CHECK_DONE(), which prints a summary line and returns 1 on failure, 77 (the
 * runner's skip, tests/run-tests.sh) when parts skipped and no check ran,
 * else 0. A part that a run may not be able to run is best a test of its own
 * (the program run with the part's name), so that the runner counts its skip.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CHECK_H
#define NVT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_count, check_failed, check_skipped;
static const char *check_skip_why; /* the last part's that skipped */

#define CHECK_SKIP(why)                                                                 \
	do {                                                                            \
		check_skipped++;                                                        \
		check_skip_why = (why);                                                 \
		printf("SKIPPED: %s: %s\n", __FILE__, check_skip_why);                  \
	} while (0)

#define CHECK(cond)                                                                     \
	do {                                                                            \
		check_count++;                                                          \
		if (!(cond)) {                                                          \
			check_failed++;                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                       \
	} while (0)

#define CHECK_STR(got, want)                                                            \
	do {                                                                            \
		const char *g_ = (got), *w_ = (want);                                   \
		check_count++;                                                          \
		if (strcmp(g_, w_)) {                                                   \
			check_failed++;                                                 \
			fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, \
				g_, w_);                                                \
		}                                                                       \
	} while (0)

/* The summary; when only skips, the runner's last line says why (tests/run-tests.sh's skip). */
static inline int check_done(const char *file)
{
	printf("%s: %d checks, %d failed, %d parts skipped\n", file, check_count, check_failed,
	       check_skipped);
	if (check_failed)
		return 1;
	if (check_skipped && !check_count) {
		printf("SKIPPED: %s\n", check_skip_why);
		return 77;
	}
	return 0;
}

#define CHECK_DONE() check_done(__FILE__)

#endif
