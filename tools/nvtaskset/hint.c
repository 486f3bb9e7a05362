/*
 * hint.c - what the command says of a command line it refuses, beyond what is wrong: an option
 * written after MASK or PID (taskset's rule ends options there), with the command line that
 * does it, checked by the command's own parser in a child before it is suggested; PID and
 * MASK given the other way round; the option or word of a list that a mistyped one was meant
 * as ("did you mean"), a sub-command's word too; and getopt's refusals in the command's own
 * words, which name the sub-command an option given without it goes with.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hint.h"
#include "core/text.h"
#include "task/task.h"

static struct hint_parser parser;
/* The short options of parser.short_options that take no value, as one word ("acgplhV"). */
static char short_flags[64];

void hint_setup(const struct hint_parser *p)
{
	size_t n = 0;

	parser = *p;
	for (const char *c = p->short_options; *c && n + 1 < sizeof(short_flags); c++)
		if (*c != '+' && *c != ':' && c[1] != ':')
			short_flags[n++] = *c;
	short_flags[n] = '\0';
}

/* 1 if word is one of our options (as written before MASK); *arg: it takes the next word. */
static int our_option(const char *word, int *arg)
{
	const char *takes;
	size_t n;

	*arg = 0;
	if (word[0] != '-' || !word[1])
		return 0;
	if (word[1] == '-') {
		const struct option *named = NULL;
		int matches = 0;
		/* Its name, or as getopt_long takes it, an abbreviation of one name alone (--dry). */
		n = strcspn(word + 2, "=");
		for (const struct option *l = parser.options; n && l->name; l++) {
			if (strncmp(l->name, word + 2, n))
				continue;
			named = l;
			if (strlen(l->name) == n) {
				matches = 1;
				break;
			}
			matches++;
		}
		if (matches != 1)
			return 0;
		*arg = named->has_arg == required_argument && !word[2 + n];
		return 1;
	}
	/* One that takes a value (-n COUNT): the rest of the word, or the next one. */
	if (word[1] != ':' && word[1] != '+' && (takes = strchr(parser.short_options, word[1])) &&
	    takes[1] == ':') {
		*arg = !word[2];
		return 1;
	}
	return strspn(word + 1, short_flags) == strlen(word + 1);
}

/* Appends word to buf (len), quoted for a shell where it needs it. */
void hint_append_word(char *buf, size_t len, const char *word)
{
	size_t used = strlen(buf);
	int plain = *word && strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789_-./=:,+@%") == strlen(word);

	if (used < len)
		snprintf(buf + used, len - used, plain ? "%s%s" : "%s'%s'", used ? " " : "", word);
}

int hint_checking_only;

/*
 * Why the command line argv (argc words) is refused, into why (len), or 0 if it parses: a
 * child parses it (a usage error ends a process), its messages caught in a pipe; the command
 * never suggests a line its own parser refuses.
 */
int hint_suggestion_refused(int argc, char **argv, char *why, size_t len)
{
	int fds[2], status = 0;
	ssize_t got;
	size_t used = 0;
	pid_t pid;

	snprintf(why, len, "it does not parse either");
	fflush(NULL); /* (the child's exit must not write the parent's buffers again) */
	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
			_exit(125);
		hint_checking_only = 1;
		exit(parser.parse(argc, argv));
	}
	close(fds[1]);
	while (pid > 0 && used + 1 < len && (got = read(fds[0], why + used, len - 1 - used)) != 0)
		if (got > 0)
			used += (size_t)got;
		else if (errno != EINTR)
			break;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* The first line of the child's message, without its "nvtaskset: ". */
	if (used) {
		why[used] = '\0';
		why[strcspn(why, "\n")] = '\0';
		if (!strncmp(why, "nvtaskset: ", 11))
			memmove(why, why + 11, strlen(why + 11) + 1);
	}
	return 1;
}

/* 1 if word is -c or -g (alone or among short options), which say how MASK reads. */
static int says_how_mask_reads(const char *word)
{
	return !strcmp(word, "--tpc-list") || !strcmp(word, "--gpc-list") ||
	       (word[0] == '-' && word[1] != '-' && word[strcspn(word, "cg")]);
}

static void swap_words(char **pair)
{
	char *first = pair[0];

	pair[0] = pair[1], pair[1] = first;
}

/*
 * Taskset's rule holds: options end at MASK (or -p's MASK or PID), and what
 * follows MASK is COMMAND. A COMMAND or PID that is one of our options was
 * meant as one: say so, with the command line that does it (exits 1): the
 * options put before (and, for -p, MASK before PID where only that parses),
 * or, where no such line parses, why.
 * first: argv's index of the first word after the options; word: the index
 * of the word to check; taken_as: what it is taken as.
 */
void hint_misplaced(const struct options *o, char **argv, int argc, int first, int word,
			    const char *taken_as)
{
	char line[1024] = "", what[64], why[300], moved[argc];
	char *cand[argc + 1];
	int arg, opt = 0, n = 0, rest, refused, mask_reads = 0, swapped = 0;

	/* Our options from word on: the run of them there (what follows is COMMAND's), or with
	 * -p every one (no COMMAND follows a PID). */
	memset(moved, 0, sizeof(moved));
	for (int i = word; i < argc; i += 1 + arg) {
		if (!our_option(argv[i], &arg)) {
			if (!o->pid_mode)
				break;
			continue; /* (arg is 0) */
		}
		/* --json meant for -p or --dry-run: its error as JSON too. */
		if (!strcmp(argv[i], "--json") && (o->pid_mode || o->dry_run) && !hint_checking_only)
			set_json_errors(1);
		mask_reads |= says_how_mask_reads(argv[i]);
		for (int k = i; k <= i + arg && k < argc; k++)
			moved[k] = 1;
		opt = 1;
	}
	if (!opt)
		return;
	if (hint_checking_only) /* a suggestion that needs one of its own is none */
		bad_usage("an option after MASK or PID");
	cand[n++] = argv[0];
	for (int i = word; i < argc; i++)
		if (moved[i])
			cand[n++] = argv[i];
	for (int i = 1; i < first; i++)
		cand[n++] = argv[i];
	rest = n;
	for (int i = first; i < argc; i++)
		if (!moved[i])
			cand[n++] = argv[i];
	cand[n] = NULL;
	/* -p PID -c MASK was meant as -p -c MASK PID: an option that says how MASK reads comes
	 * before it; the other order is tried where the first does not parse. */
	if (o->pid_mode && n - rest == 2 && mask_reads)
		swap_words(cand + rest);
	refused = hint_suggestion_refused(n, cand, why, sizeof(why));
	if (refused && o->pid_mode && n - rest == 2) {
		char other_why[300];
		swap_words(cand + rest);
		refused = hint_suggestion_refused(n, cand, other_why, sizeof(other_why));
	}
	/* COMMAND MASK-option MASK (nvtaskset demo -c 0-3) was meant as the options, MASK, then
	 * COMMAND: the other order, where the first does not parse. */
	if (refused && !o->pid_mode && n - rest >= 2) {
		char other_why[300];
		swap_words(cand + rest);
		swapped = !hint_suggestion_refused(n, cand, other_why, sizeof(other_why));
		refused = !swapped;
	}
	if (!refused) {
		hint_append_word(line, sizeof(line), "nvtaskset");
		for (int i = 1; i < n; i++)
			hint_append_word(line, sizeof(line), cand[i]);
	}
	terminal_text(argv[word], what, sizeof(what));
	{
		char message[1500], shown[1100];
		terminal_text(refused ? why : line, shown, sizeof(shown));
		snprintf(message, sizeof(message),
			 "'%s' after '%s' is taken as %s (options end at the first word that "
			 "is not one, as taskset's do); %s%s",
			 what, argv[word - 1], taken_as,
			 refused ? "put before, it would be refused too: " :
			 swapped ? "options and MASK go before COMMAND: " :
				   "to give it as an option, put it before: ", shown);
		bad_usage(message);
	}
}


void hint_bad_word(const char *message, const char *given)
{
	char list[256], out[400], *save = NULL, *word;
	const char *words[12], *takes = strstr(message, " takes ");
	size_t n = 0;
	int near;

	if (!takes || !given)
		bad_usage(message);
	snprintf(list, sizeof(list), "%s", takes + 7);
	/* "a, b or c": the words between commas and " or ". */
	for (char *or = strstr(list, " or "); or; or = strstr(or, " or "))
		memcpy(or, ",,,", 3);
	for (word = strtok_r(list, ", ", &save); word && n < 12; word = strtok_r(NULL, ", ", &save))
		words[n++] = word;
	near = nvt_nearest_word(given, strlen(given), words, n);
	if (near < 0)
		bad_usage(message);
	snprintf(out, sizeof(out), "%s (did you mean '%s'?)", message, words[near]);
	bad_usage(out);
}

const char *hint_near_option(const char *name, size_t len, const struct option *options,
			     const char *const *extra, size_t n)
{
	const char *names[128];
	size_t count = 0;
	int near;

	for (const struct option *l = options; l && l->name && count < 100; l++)
		names[count++] = l->name;
	for (size_t i = 0; i < n && count < 128; i++)
		names[count++] = extra[i] + strspn(extra[i], "-");
	near = nvt_nearest_word(name, len, names, count);
	return near < 0 ? NULL : names[near];
}

void hint_sub_usage(const char *message, int argc, char **argv, const struct option *options)
{
	const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "", *near = NULL;
	size_t len = strcspn(word, "=");
	char out[400];

	if (!optopt && !strncmp(word, "--", 2) && len > 2)
		near = hint_near_option(word + 2, len - 2, options, NULL, 0);
	if (!near)
		bad_usage(message);
	snprintf(out, sizeof(out), "%s (did you mean '--%s'?)", message, near);
	bad_usage(out);
}

void hint_swapped_pid(int argc, char **argv, int first)
{
	char *cand[argc + 1], line[1024] = "", shown[1100], what[64], why[300];
	unsigned long v;
	int n = 0;

	if (hint_checking_only || argc - first != 2 || !number_arg(argv[first + 1], 1, INT_MAX, &v) ||
	    number_arg(argv[first], 1, INT_MAX, &v))
		return;
	for (int i = 0; i < first; i++)
		cand[n++] = argv[i];
	cand[n++] = argv[first + 1];
	cand[n++] = argv[first];
	cand[n] = NULL;
	if (hint_suggestion_refused(n, cand, why, sizeof(why)))
		return;
	hint_append_word(line, sizeof(line), "nvtaskset");
	for (int i = 1; i < n; i++)
		hint_append_word(line, sizeof(line), cand[i]);
	terminal_text(line, shown, sizeof(shown));
	terminal_text(argv[first + 1], what, sizeof(what));
	cli_errx("invalid PID argument: '%s' (PID comes last, after MASK: %s)", what, shown);
}

void hint_two_pids(const struct options *o, int argc, char **argv, int first)
{
	struct nvt_seg_handle h;
	char mask[64], pid[64];
	unsigned long v;

	if (hint_checking_only || argc - first != 2 || o->part.tpc_list || o->part.gpc_list ||
	    number_arg(argv[first], 1, INT_MAX, &v) || strspn(argv[first], "0123456789") !=
	    strlen(argv[first]) || nvt_task_open(nvt_rundir(), (pid_t)v, 0, &h) != NVT_SEG_OK)
		return;
	nvt_seg_close(&h);
	terminal_text(argv[first], mask, sizeof(mask));
	terminal_text(argv[first + 1], pid, sizeof(pid)); /* (any word: PID is read later) */
	cli_errx("'%s' is the PID of a running task, and -p takes one PID: to give pid %s the TPC "
		 "mask %s (hexadecimal), write it 0x%s", mask, pid, mask, mask);
}

void hint_first_word(const char *word)
{
	const char *words[parser.n_words + 1];
	char message[200], shown[64];
	int near;

	for (size_t i = 0; i < parser.n_words; i++)
		words[i] = parser.words[i].word[0] == '-' ? NULL : parser.words[i].word;
	near = nvt_nearest_word(word, strlen(word), words, parser.n_words);
	if (near < 0)
		return;
	terminal_text(word, shown, sizeof(shown));
	snprintf(message, sizeof(message), "'%s' is not a MASK (did you mean 'nvtaskset %s'?)", shown,
		 words[near]);
	bad_usage(message);
}

/* The long options of options whose names begin with name (len bytes): exactly (1 or 0), or
 * (exact 0) as an abbreviation of theirs. */
static int options_named(const struct option *options, const char *name, size_t len, int exact)
{
	int n = 0;

	for (const struct option *l = options; l->name; l++)
		n += exact ? strlen(l->name) == len && !strncmp(l->name, name, len) :
			     !strncmp(l->name, name, len);
	return n;
}

/* Appends "; did you mean '--NAME'?" to message (len) where the long option word (its first
 * len bytes, with its dashes) is a slip of one of ours or of a first word that is an option
 * (--profile). */
static void near_option(const char *word, size_t len, char *message, size_t size)
{
	const char *words[parser.n_words + 1], *near;
	size_t n = 0, used = strlen(message);
	char shown[100];

	if (strncmp(word, "--", 2) || len <= 2)
		return;
	for (size_t i = 0; i < parser.n_words; i++)
		if (!strncmp(parser.words[i].word, "--", 2))
			words[n++] = parser.words[i].word;
	near = hint_near_option(word + 2, len - 2, parser.options, words, n);
	if (!near)
		return;
	terminal_text(near, shown, sizeof(shown));
	snprintf(message + used, size - used, "; did you mean '--%s'?", shown);
}

/* For the long option word (len bytes before any "="), shown as what, that is none of ours:
 * where a first word takes it (--cdi-dir), the usage error with the command line that puts
 * that word first (exits 1); else returns. */
static void option_of_first_word(int argc, char **argv, const char *word, size_t len,
				 const char *what)
{
	char message[1400], line[1024] = "", shown[1100];

	for (size_t i = 0; i < parser.n_words; i++) {
		if (!parser.words[i].options ||
		    !options_named(parser.words[i].options, word + 2, len - 2, 1))
			continue;
		hint_append_word(line, sizeof(line), "nvtaskset");
		hint_append_word(line, sizeof(line), parser.words[i].word);
		for (int k = 1; k < argc; k++)
			hint_append_word(line, sizeof(line), argv[k]);
		terminal_text(line, shown, sizeof(shown));
		snprintf(message, sizeof(message), "option '%s' goes with %s: %s", what,
			 parser.words[i].word, shown);
		bad_usage(message);
	}
}

void hint_option_error(int argc, char **argv)
{
	const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	const char *short_options = parser.short_options + (parser.short_options[0] == '+');
	size_t len = strcspn(word, "=");
	char message[1400], what[100];
	int long_form = !strncmp(word, "--", 2);

	terminal_text(long_form ? word : "", what, sizeof(what));
	what[strcspn(what, "=")] = '\0';
	/* (optopt: the character of a short option, or a long option's value, which is one of
	 * the short options' or 256 or more) */
	if (optopt && !strchr(short_options, optopt) && optopt < 256) {
		snprintf(message, sizeof(message), "invalid option -- '%c'", optopt);
	} else if (optopt && !long_form) {
		snprintf(message, sizeof(message), "option requires an argument -- '%c'", optopt);
	} else if (optopt) {
		snprintf(message, sizeof(message), "option '%s' %s", what,
			 word[len] ? "doesn't allow an argument" : "requires an argument");
	} else if (long_form && options_named(parser.options, word + 2, len - 2, 0) > 1) {
		int used = snprintf(message, sizeof(message), "option '%s' is ambiguous; possibilities:",
				    what);
		for (const struct option *l = parser.options; l->name; l++)
			if (!strncmp(l->name, word + 2, len - 2) && used > 0 &&
			    (size_t)used < sizeof(message))
				used += snprintf(message + used, sizeof(message) - (size_t)used,
						 " '--%s'", l->name);
	} else {
		snprintf(message, sizeof(message), "unrecognized option '%s'", what);
		if (long_form)
			option_of_first_word(argc, argv, word, len, what);
		near_option(word, len, message, sizeof(message));
	}
	bad_usage(message);
}
