/*
 * tpcset.h - sets of logical TPCs: parsing and formatting of masks and lists.
 * Pure code: no I/O, no allocation, no global state.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TPCSET_H
#define NVT_TPCSET_H

#include <stddef.h>
#include "nvtaskset.h"

/* Return codes of the parsers, as util-linux's cpulist_parse. */
enum nvt_parse_rc {
	NVT_PARSE_OK = 0,
	NVT_PARSE_SYNTAX = 1, /* malformed text */
	NVT_PARSE_RANGE = 2,  /* a value is >= the limit given */
};

void nvt_set_clear(struct nvt_tpcset *set);
/* Sets every TPC below count (count <= NVT_MAX_TPCS). */
void nvt_set_fill(struct nvt_tpcset *set, unsigned count);
void nvt_set_add(struct nvt_tpcset *set, unsigned tpc);
/* Returns 1 if tpc is in set, else 0. */
int nvt_set_has(const struct nvt_tpcset *set, unsigned tpc);
/* Returns the number of TPCs in set. */
unsigned nvt_set_count(const struct nvt_tpcset *set);
/* Returns the highest TPC in set, or -1 if set is empty. */
int nvt_set_highest(const struct nvt_tpcset *set);
/* Returns 1 if the two sets hold the same TPCs. */
int nvt_set_equal(const struct nvt_tpcset *a, const struct nvt_tpcset *b);
/* out = a & b; out = a | b; out = a & ~b (out may alias a or b). */
void nvt_set_and(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b);
void nvt_set_or(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b);
void nvt_set_andnot(struct nvt_tpcset *out, const struct nvt_tpcset *a, const struct nvt_tpcset *b);

/*
 * Parses a hexadecimal TPC mask ("0xff", "ff,ffffffff"). Every set bit must be
 * below limit (<= NVT_MAX_TPCS). Returns an enum nvt_parse_rc; out is
 * written only on NVT_PARSE_OK.
 */
int nvt_parse_mask(const char *text, unsigned limit, struct nvt_tpcset *out);

/*
 * Parses a list "0-15,32,40-47:2" of values below limit (<= NVT_MAX_TPCS),
 * or "all": every value below limit (NVT_PARSE_RANGE if limit is 0).
 * Returns an enum nvt_parse_rc; out is written only on NVT_PARSE_OK.
 */
int nvt_parse_list(const char *text, unsigned limit, struct nvt_tpcset *out);

/* What a parser found wrong (nvt_parse_mask_why, nvt_parse_list_why), for a message. */
struct nvt_parse_error {
	enum nvt_parse_problem {
		NVT_PARSE_NOTHING = 0, /* it parsed */
		NVT_PARSE_EMPTY,       /* the text is empty */
		NVT_PARSE_MALFORMED,   /* not a mask, or not numbers and ranges */
		NVT_PARSE_DOWN,        /* a range goes down: first > last */
		NVT_PARSE_ZERO_STEP,   /* a range's step after ':' is 0; word, word_len */
		NVT_PARSE_TOO_HIGH,    /* a value is >= the limit: highest */
	} problem;
	unsigned long first, last;  /* NVT_PARSE_DOWN: the range */
	size_t word, word_len;      /* NVT_PARSE_ZERO_STEP and NVT_PARSE_MALFORMED of a list: the
				     * item of the list at fault (offset, length; 0 long: empty) */
	size_t at;                  /* NVT_PARSE_MALFORMED of a list: the offset of the first
				     * character that does not fit (the text's length: it ended) */
	long highest;               /* NVT_PARSE_TOO_HIGH: the highest value (a mask: bit) the
				     * text names (a list's at most 99999); -1 if none ("all") */
	size_t top, top_len;        /* NVT_PARSE_TOO_HIGH of a list: its largest number as
				     * written, without leading zeros (offset and length in the
				     * text; a step after ':' names no TPC); top_len 0: none */
};

/* nvt_parse_mask and nvt_parse_list, and what is wrong in *err (not NULL) when they fail. */
int nvt_parse_mask_why(const char *text, unsigned limit, struct nvt_tpcset *out,
		       struct nvt_parse_error *err);
int nvt_parse_list_why(const char *text, unsigned limit, struct nvt_tpcset *out,
		       struct nvt_parse_error *err);

/*
 * A list that does not parse as written, tidied of the slips a person makes: spaces dropped
 * ("1-3, 6"), ".." read as a range's "-" ("1..3"), empty items dropped ("1-3,,6", "1-3,").
 * Writes the tidied text to out (len) and returns 0 if it differs from text and parses with
 * limit; else -1.
 */
int nvt_list_tidied(const char *text, unsigned limit, char *out, size_t len);

/*
 * Formats set as lowercase hex without a prefix ("0" for the empty set), or
 * as a compact list ("0-7,9", "" for the empty set). Returns the length
 * written (excluding the NUL), or -1 if len is too small.
 */
int nvt_format_mask(const struct nvt_tpcset *set, char *buf, size_t len);
int nvt_format_list(const struct nvt_tpcset *set, char *buf, size_t len);

/*
 * Where MASK may be left out before COMMAND (a start with --priority and neither -c nor -g):
 * returns 1 if word is the MASK, 0 if it is COMMAND. It is the MASK only when written as no
 * command is named: "0x" or "0X" and anything after it (a mask that does not parse is then
 * reported as a MASK), or decimal digits and commas only. A word that merely reads as hex
 * ("cc", "dd", "add", "face", "0ad") is a command.
 */
int nvt_mask_spelled_out(const char *word);

/* Buffer sizes large enough for any set. */
#define NVT_MASK_TEXT_MAX (NVT_MAX_TPCS / 4 + 1)
#define NVT_LIST_TEXT_MAX (NVT_MAX_TPCS * 4 + 1)

#endif /* NVT_TPCSET_H */
