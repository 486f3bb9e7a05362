/*
 * profile.h - the statistics of `nvtaskset --profile`: a program's time at
 * several partition sizes, and the smallest size within a slowdown bound.
 * Pure code: no I/O, no allocation, no global state.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROFILE_H
#define NVT_PROFILE_H

#include <stddef.h>

/* Runs of one size: the values measured (ms, or the program's own number). */
#define NVT_PROFILE_MAX_ROUNDS 64
struct nvt_profile_size {
	unsigned tpcs;       /* partition size */
	unsigned n;          /* values measured (failed runs are not values) */
	unsigned failed;     /* runs that failed, timed out or printed no value */
	double value[NVT_PROFILE_MAX_ROUNDS];
	/* Filled by nvt_profile_summarise: */
	double median, min, max;
	double ratio;        /* median / the best median (>= 1; 0 when n is 0) */
};

/*
 * Fills median, min, max of each size with values, and ratio to the best
 * median: the lowest, or the highest when higher_is_better (then ratio is
 * best / median, so that > 1 is always worse). Returns the index of the
 * best size, or -1 if no size has a value.
 */
int nvt_profile_summarise(struct nvt_profile_size *sizes, size_t n, int higher_is_better);

/*
 * The index of the smallest size (fewest TPCs) whose ratio is at most
 * 1 + slowdown (0.05: within 5% of the best), or -1 if none has a value.
 * A size with failed runs is never chosen.
 */
int nvt_profile_pick(const struct nvt_profile_size *sizes, size_t n, double slowdown);

/* Median of values (n > 0); sorts values in place. */
double nvt_median(double *values, size_t n);

/*
 * Parses the first number (decimal, optional sign, fraction and exponent:
 * "12", "-3.5", "1.2e3") at or after text. Returns 0 and sets *out, or -1
 * if there is none or it is not finite.
 */
int nvt_first_number(const char *text, double *out);

/*
 * Reads the curve that `nvtaskset --profile --json` printed: the array named
 * key ("sizes", or "beside_hog") of the top-level object, each element's
 * "tpcs", "median", "max" and "failed" (into tpcs, median, max, failed; n is
 * set to 1 where a median is given). Returns how many sizes were read (at
 * most max), or -1 if text is not such a document. Pure: text is any
 * NUL-terminated string.
 */
int nvt_profile_parse_json(const char *text, const char *key, struct nvt_profile_size *sizes,
			   size_t max);

/* What a task of a plan must meet. */
struct nvt_bound {
	enum { NVT_BOUND_SLOWDOWN, NVT_BOUND_DEADLINE } kind;
	double value; /* slowdown as a fraction (0.05), or the deadline in the curve's unit */
};

/*
 * The fewest TPCs of a measured curve that meet bound: a slowdown bounds a
 * size's median against the best median; a deadline bounds its max (the
 * worst run). Returns the index, or -1 if no size meets it.
 */
int nvt_profile_needed(const struct nvt_profile_size *sizes, size_t n, const struct nvt_bound *bound);

/* Parses "slowdown=5%" or "deadline=12.5" (a trailing "ms" is allowed).
 * Returns 0, or -1 if malformed. */
int nvt_bound_parse(const char *text, struct nvt_bound *out);

#endif /* NVT_PROFILE_H */
