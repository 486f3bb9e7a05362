/*
 * test_cmdline.c - which of the words after nvtaskset's options are MASK,
 * COMMAND and PID (src/core/cmdline.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "core/cmdline.h"

/* A start's words, as nvt_cmdline_start reads them: rc, MASK's index, COMMAND's, left out. */
static void start(const struct nvt_words_form *f, int n, char *const *words, int rc, int mask,
		  int command, int left_out)
{
	struct nvt_words at;

	CHECK(nvt_cmdline_start(f, n, words, &at) == rc);
	CHECK(at.mask == mask);
	CHECK(at.command == command);
	CHECK(at.mask_left_out == left_out);
}

static void test_start(void)
{
	struct nvt_words_form plain = {0}, count = {.mask_in_options = 1};
	struct nvt_words_form prio = {.prio = 1}, prio_list = {.prio = 1, .mask_as_list = 1};
	struct nvt_words_form dry = {.dry_run = 1}, count_dry = {.mask_in_options = 1, .dry_run = 1};
	char *mask_cmd[] = {"0xff", "app", "x"}, *cc[] = {"cc", "-o", "x"}, *digits[] = {"0,3", "app"};
	char *hex_upper[] = {"0XFF", "app"}, *bad_hex[] = {"0xzz", "app"}, *alone[] = {"0xff"};

	/* taskset's order: MASK COMMAND ARG... */
	start(&plain, 3, mask_cmd, NVT_WORDS_OK, 0, 1, 0);
	start(&plain, 1, mask_cmd, NVT_WORDS_NO_COMMAND, 0, 1, 0);
	start(&plain, 0, mask_cmd, NVT_WORDS_NOTHING, 0, 1, 0);
	start(&dry, 1, mask_cmd, NVT_WORDS_OK, 0, 1, 0); /* --dry-run: MASK alone */
	start(&dry, 0, mask_cmd, NVT_WORDS_NOTHING, 0, 1, 0);
	/* -n COUNT, --gpu GPU=MASK: the first word is COMMAND. */
	start(&count, 3, cc, NVT_WORDS_OK, -1, 0, 0);
	start(&count, 0, cc, NVT_WORDS_NO_COMMAND, -1, 0, 0);
	start(&count_dry, 0, cc, NVT_WORDS_OK, -1, 0, 0);
	/* --priority: MASK may be left out; a word is MASK only if written as one. */
	start(&prio, 3, cc, NVT_WORDS_OK, -1, 0, 1);       /* "cc" reads as hex: a command */
	start(&prio, 3, mask_cmd, NVT_WORDS_OK, 0, 1, 0);  /* 0x: a MASK */
	start(&prio, 2, hex_upper, NVT_WORDS_OK, 0, 1, 0);
	start(&prio, 2, digits, NVT_WORDS_OK, 0, 1, 0);    /* digits and commas: a MASK */
	start(&prio, 2, bad_hex, NVT_WORDS_OK, 0, 1, 0);   /* a MASK, which then does not parse */
	start(&prio, 1, alone, NVT_WORDS_OK, -1, 0, 1);    /* a lone word is COMMAND */
	start(&prio, 0, alone, NVT_WORDS_NOTHING, 0, 1, 0);
	/* --priority --dry-run: nothing after the options leaves MASK out; a lone word written as a
	 * MASK is MASK, another is COMMAND. */
	{
		struct nvt_words_form prio_dry = {.prio = 1, .dry_run = 1};
		start(&prio_dry, 0, alone, NVT_WORDS_OK, -1, 0, 1);
		start(&prio_dry, 1, alone, NVT_WORDS_OK, 0, 1, 0);
		start(&prio_dry, 1, cc, NVT_WORDS_OK, -1, 0, 1);
		start(&prio_dry, 3, cc, NVT_WORDS_OK, -1, 0, 1);
	}
	/* With -c or -g, MASK is always there. */
	start(&prio_list, 3, cc, NVT_WORDS_OK, 0, 1, 0);
	start(&prio_list, 1, cc, NVT_WORDS_NO_COMMAND, 0, 1, 0);
}

static void pid(const struct nvt_words_form *f, int n, int rc, int mask, int at_pid, int sets)
{
	struct nvt_words at;

	CHECK(nvt_cmdline_pid(f, n, &at) == rc);
	if (rc == NVT_WORDS_OK) {
		CHECK(at.mask == mask);
		CHECK(at.command == at_pid);
		CHECK(at.sets == sets);
	}
}

static void test_pid(void)
{
	struct nvt_words_form plain = {0}, count = {.mask_in_options = 1}, gpus = {.gpus_no_mask = 1};

	pid(&plain, 1, NVT_WORDS_OK, -1, 0, 0); /* -p PID: shows */
	pid(&plain, 2, NVT_WORDS_OK, 0, 1, 1);  /* -p MASK PID */
	pid(&plain, 0, NVT_WORDS_NO_PID, 0, 0, 0);
	pid(&plain, 3, NVT_WORDS_TOO_MANY, 0, 0, 0);
	pid(&count, 1, NVT_WORDS_OK, -1, 0, 1); /* -p -n COUNT PID: sets */
	pid(&count, 2, NVT_WORDS_TOO_MANY, 0, 0, 0);
	pid(&gpus, 1, NVT_WORDS_GPU_NEEDS_MASK, 0, 0, 0);
	pid(&gpus, 2, NVT_WORDS_OK, 0, 1, 1);
}

int main(void)
{
	test_start();
	test_pid();
	return CHECK_DONE();
}
