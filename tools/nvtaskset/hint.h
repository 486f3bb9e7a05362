/*
 * hint.h - the command's hints for a command line it refuses (hint.c): an option after MASK
 * or PID, with the command line that does it, checked by the command's own parser.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_HINT_H
#define NVT_CLI_HINT_H

#include <getopt.h>
#include <stddef.h>

#include "cli.h"

/* What the hints know of the command (main.c gives it, hint_setup). */
struct hint_parser {
	const struct option *options; /* its long options */
	const char *short_flags;      /* its short options that take no value, as one word */
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

#endif
