/*
 * why.h - the one writer of a failure's reason into a caller's buffer: the
 * functions that fail "with the reason in why" (HACKING.md, "Conventions")
 * end with return nvt_why(why, len, "...", ...).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_WHY_H
#define NVT_WHY_H

#include <stddef.h>

/* Formats the reason into why (len bytes, cut to fit). Returns -1. */
int nvt_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* NVT_WHY_H */
