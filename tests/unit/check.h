/*
 * check.h - a tiny assertion harness for nvtaskset's unit tests.
 * Each CHECK counts; a failing one prints where and why. main() ends with
 * CHECK_DONE(), which prints a summary line and returns non-zero on failure.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CHECK_H
#define NVT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_count, check_failed;

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

#define CHECK_DONE()                                                                    \
	(printf("%s: %d checks, %d failed\n", __FILE__, check_count, check_failed),     \
	 check_failed ? 1 : 0)

#endif
