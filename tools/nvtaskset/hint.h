/*
 * hint.h - the command's hints for a command line it refuses (hint.c): an option after MASK
 * or PID, with the command line that does it, checked by the command's own parser; PID and
 * MASK the other way round; the option or word a mistyped one was meant as; getopt's
 * refusals in the command's words.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_HINT_H
#define NVT_CLI_HINT_H

#include <getopt.h>
#include <stddef.h>

#include "cli.h"

/* A first word with a parser of its own (nvtaskset top ..., --cdi ...): main.c's table. */
struct hint_word {
	const char *word;
	const struct option *options; /* its long options, which the command's parser refuses
					 (hint_option_error names the word); NULL: none */
};

/* What the hints know of the command (main.c gives it, hint_setup). */
struct hint_parser {
	const struct option *options; /* its long options */
	const char *short_options;    /* its short options, getopt_long's string ("+acgpln:hV") */
	const struct hint_word *words; /* its first words (n_words) */
	size_t n_words;
	/* Its parser of a whole command line: returns its mode's exit status, or ends the
	 * process with a usage error (with hint_checking_only set, nothing runs). */
	int (*parse)(int argc, char **argv);
};
void hint_setup(const struct hint_parser *p);

/* Set in the child that checks a suggested command line (hint_suggestion_refused): the
 * command line is checked as a start or -p would check it, and nothing runs. */
extern int hint_checking_only;

/* Appends word to buf (len), quoted for a shell where it needs it. */
void hint_append_word(char *buf, size_t len, const char *word);
/*
 * Why the command line argv (argc words) is refused, into why (len), or 0 if it parses: a
 * child parses it (a usage error ends a process), its messages caught in a pipe; the command
 * never suggests a line its own parser refuses.
 */
int hint_suggestion_refused(int argc, char **argv, char *why, size_t len);
/*
 * Taskset's rule holds: options end at MASK (or -p's MASK or PID), and what follows MASK is
 * COMMAND. A COMMAND or PID that is one of our options was meant as one: says so, with the
 * command line that does it (exits 1). first: argv's index of the first word after the
 * options; word: the index of the word to check; taken_as: what it is taken as.
 */
void hint_misplaced(const struct options *o, char **argv, int argc, int first, int word,
		    const char *taken_as);

/*
 * "did you mean": the word of the usage error message's list ("--strategy takes packed,
 * spread or clusters") that given is a slip of (nvt_nearest_word), appended to message;
 * then the usage error (exits 1).
 */
void hint_bad_word(const char *message, const char *given) __attribute__((noreturn));
/* The long option of options (or one of extra, n words with their dashes) that the long
 * option name (len bytes, without its dashes) is a slip of, or NULL. */
const char *hint_near_option(const char *name, size_t len, const struct option *options,
			     const char *const *extra, size_t n);
/* A sub-command's usage error for the option getopt_long refused in argv (optind after it),
 * with "did you mean '--NAME'?" where a long option is a slip of one of options. */
void hint_sub_usage(const char *message, int argc, char **argv, const struct option *options)
	__attribute__((noreturn));

/*
 * -p PID MASK, meant as -p MASK PID: where the command line argv (argc words) has two words
 * from first on, PID first, and the line with them swapped parses, the usage error names
 * that line (exits 1); else returns.
 */
void hint_swapped_pid(int argc, char **argv, int first);
/* -p MASK PID where MASK is written in decimal digits (no -c, -g) and is a running task's PID:
 * taken for two PIDs (-p takes one), it would give the second task the digits as a hex mask.
 * Ends the command saying how to write such a mask (0x...). */
void hint_two_pids(const struct options *o, int argc, char **argv, int first);
/* A MASK that does not parse and is a slip of a first word (nvtaskset tpo): the usage error
 * names the word (exits 1); else returns. */
void hint_first_word(const char *word);
/*
 * The usage error for the option getopt_long refused in argv (optind after it; opterr off,
 * as getopt's own message names the program's path): getopt's words, with "did you mean"
 * where a long option is a slip of one of ours or of a first word's; for an option of a
 * first word given without it, the command line with the word (nvtaskset --cdi-dir X:
 * nvtaskset --cdi --cdi-dir X).
 */
void hint_option_error(int argc, char **argv) __attribute__((noreturn));

#endif
