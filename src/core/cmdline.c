/*
 * cmdline.c - the grammar of nvtaskset's words after its options (cmdline.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cmdline.h"
#include "tpcset.h"

int nvt_cmdline_start(const struct nvt_words_form *f, int n, char *const *words,
		      struct nvt_words *out)
{
	int positional = !f->mask_in_options;

	int spelled = n >= 1 && nvt_mask_spelled_out(words[0]);

	/* (--dry-run: no word at all, or a lone word written as a MASK, is MASK left out or MASK) */
	out->mask_left_out = f->prio && positional && !f->mask_as_list &&
			     (n == 0 ? f->dry_run : n == 1 ? !(f->dry_run && spelled) : !spelled);
	out->mask = positional && !out->mask_left_out ? 0 : -1;
	out->command = out->mask + 1;
	out->sets = 1;
	if (out->mask == 0 && n == 0)
		return NVT_WORDS_NOTHING;
	if (out->command >= n && !f->dry_run)
		return NVT_WORDS_NO_COMMAND;
	return NVT_WORDS_OK;
}

int nvt_cmdline_pid(const struct nvt_words_form *f, int n, struct nvt_words *out)
{
	out->mask_left_out = 0;
	out->mask = n == 2 ? 0 : -1;
	out->command = n - 1;
	out->sets = n == 2 || f->mask_in_options;
	if (n < 1)
		return NVT_WORDS_NO_PID;
	if (n > (f->mask_in_options ? 1 : 2))
		return NVT_WORDS_TOO_MANY;
	if (n == 1 && f->gpus_no_mask && !f->mask_in_options)
		return NVT_WORDS_GPU_NEEDS_MASK;
	return NVT_WORDS_OK;
}
