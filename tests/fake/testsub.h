/*
 * testsub.h - the functions of the test subscriber (testsub.c), which test
 * programs find with dlsym when it is LD_PRELOADed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef TESTSUB_H
#define TESTSUB_H

#include <stdint.h>

/* The driver-API callbacks since the last testsub_last: the last call's id
 * and, per site (0 entry, 1 return), what its block held. */
struct testsub_api {
	int calls, cbid;
	uint32_t size[2];       /* word 0's low half */
	uint64_t id[2];         /* word 10 */
	int result[2];          /* what word 5 pointed at */
	const void *result_at[2], *args_at[2];
	uint64_t args[2][4];    /* the arguments struct's first words (launch, upload: 2; instantiate with flags: 3) */
	uint64_t block[2][13];  /* the whole block */
};

/* The TPCs (bit t = TPC t) later launch callbacks enable. */
void testsub_set_mask(uint64_t tpcs);
/* Launch callbacks so far. */
unsigned testsub_launches(void);
/* Writes a mask of tpcs into every TMD seen so far (only those still alive:
 * a graph's, while its exec lives); returns how many. */
int testsub_rewrite(uint64_t tpcs);
/* Enables (on) or disables a (domain, callback id); returns the table's result. */
int testsub_enable(int domain, int cbid, int on);
/* On entry to cuGraphLaunch, an exec argument from becomes to (NULL: never). */
void testsub_swap(void *from, void *to);
int testsub_swapped(void);
/* On entry to cuGraphLaunch, call cuGraphUpload on its exec. */
void testsub_nested(int on);
/* Driver-API callbacks (entry and return) of an id so far. */
unsigned testsub_count(int cbid);
/* Fills out with the last call's record, then forgets it. */
void testsub_last(struct testsub_api *out);

typedef void (*testsub_set_mask_fn)(uint64_t);
typedef unsigned (*testsub_launches_fn)(void);
typedef int (*testsub_rewrite_fn)(uint64_t);
typedef int (*testsub_enable_fn)(int, int, int);
typedef void (*testsub_swap_fn)(void *, void *);
typedef int (*testsub_swapped_fn)(void);
typedef void (*testsub_nested_fn)(int);
typedef unsigned (*testsub_count_fn)(int);
typedef void (*testsub_last_fn)(struct testsub_api *);

#endif /* TESTSUB_H */
