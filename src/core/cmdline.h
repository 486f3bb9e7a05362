/*
 * cmdline.h - the grammar of nvtaskset's words after its options, as
 * taskset's: a start is [MASK] COMMAND [ARG...], -p is [MASK] PID. Which of
 * the words is MASK, which COMMAND or PID, and when MASK is left out. The
 * command parses its options with getopt and asks these; pure code.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CMDLINE_H
#define NVT_CMDLINE_H

/* What the options say of the words after them. */
struct nvt_words_form {
	int mask_in_options; /* -n COUNT, or --gpu GPU=MASK: no MASK among the words */
	int mask_as_list;    /* -c or -g: MASK is written as a list */
	int gpus_no_mask;    /* --gpu GPU (without =MASK) */
	int prio;            /* --priority or --mem: a start's MASK may be left out */
	int dry_run;         /* --dry-run: a start needs no COMMAND */
};

/* Where the words are (indices into the words after the options). */
struct nvt_words {
	int mask;          /* MASK, or -1: the options give it, or it is left out */
	int mask_left_out; /* a start with --priority and no MASK: every TPC */
	int command;       /* a start's COMMAND (n: none, with --dry-run), or -p's PID */
	int sets;          /* -p: it sets partitions (MASK, or -n or --gpu GPU=MASK), not shows them */
};

enum nvt_words_rc {
	NVT_WORDS_OK = 0,
	NVT_WORDS_NO_COMMAND = -1,     /* a start: "no command given" */
	NVT_WORDS_NOTHING = -2,        /* a start: "no mask and no command given" */
	NVT_WORDS_NO_PID = -3,         /* -p: "no PID given" */
	NVT_WORDS_TOO_MANY = -4,       /* -p: "too many arguments" */
	NVT_WORDS_GPU_NEEDS_MASK = -5, /* -p --gpu GPU alone: "--gpu GPU with -p needs a MASK" */
};

/*
 * A start's n words (words[0..n-1]) into *out. MASK comes first unless the
 * options give it, COMMAND after it. With --priority and neither -c nor -g,
 * MASK may be left out: the task's own partition is then the whole GPU (or
 * what the environment gives), as without nvtaskset. The first word is then
 * MASK only when it is not alone and is written as no command is named
 * (nvt_mask_spelled_out: "cc -o x x.c" is a command); with --dry-run, which
 * needs no COMMAND, a lone word written so is MASK, and no word at all leaves
 * MASK out. Returns enum nvt_words_rc (*out set in every case).
 */
int nvt_cmdline_start(const struct nvt_words_form *f, int n, char *const *words,
		      struct nvt_words *out);

/*
 * -p's n words into *out: [MASK] PID, PID last; MASK only where the options do
 * not give it. Without MASK or a mask in the options, -p shows the task's
 * partitions (out->sets 0). Returns enum nvt_words_rc.
 */
int nvt_cmdline_pid(const struct nvt_words_form *f, int n, struct nvt_words *out);

#endif /* NVT_CMDLINE_H */
