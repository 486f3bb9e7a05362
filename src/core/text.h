/*
 * text.h - small text helpers, each the one of its kind: the writer of a
 * failure's reason into a caller's buffer (the functions that fail "with the
 * reason in why", HACKING.md's "Conventions", end with return nvt_why(why,
 * len, "...", ...)), the strict reader of a decimal number, the value of
 * a hex digit, and the word of a list nearest a mistyped one. Pure.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TEXT_H
#define NVT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Formats the reason into why (len bytes, cut to fit). Returns -1. */
int nvt_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Reads the decimal digits at p (one at least; no sign, no space) as a
 * number no larger than max. Returns the end of the digits, with the number
 * in *out, or NULL (no digit at p, or larger than max).
 */
const char *nvt_decimal(const char *p, uint64_t max, uint64_t *out);
/* As nvt_decimal, reading no further than end (a text that need not end in a NUL). */
const char *nvt_decimal_in(const char *p, const char *end, uint64_t max, uint64_t *out);

/* Returns the value of hexadecimal digit c (either case), or -1. */
int nvt_hex_digit(char c);

/*
 * The word of words (n; NULL ones passed over) that word (its first len bytes) is a slip of:
 * the nearest by edit distance (an insertion, a deletion, a change or two letters swapped
 * count one each), at most 1 for a word of up to 4 letters, 2 for up to 8, 3 beyond, and
 * nearer than any other word (a tie is no answer). Returns its index, or -1 (none near, or
 * word is one of words: no slip).
 */
int nvt_nearest_word(const char *word, size_t len, const char *const *words, size_t n);

#endif /* NVT_TEXT_H */
