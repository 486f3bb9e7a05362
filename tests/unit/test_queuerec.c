/* Unit tests: the record of a start queued with --wait (core/queuerec.c). SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/queuerec.h"

#include <stdlib.h>

/* A record as a start of `nvtaskset -n 4 --exclude-running --wait=60 app -x` writes it. */
static const char good[] = "nvtaskset-queued 1\npid 4321\nstart 987654\npidns 4026531836\n"
			   "since 123456\ntimeout 60\n"
			   "gpu GPU-11111111-2222-3333-4444-555555555555 4\n"
			   "command app -x\n";

/* good with the first occurrence of from replaced by to, parsed. Returns nvt_queuerec_parse's. */
static int parse_changed(const char *from, const char *to)
{
	char text[NVT_QUEUED_MAX * 2];
	const char *at = strstr(good, from);
	struct nvt_queuerec r;

	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
	return nvt_queuerec_parse(text, strlen(text), &r);
}

int main(void)
{
	struct nvt_queuerec r, back;
	char text[NVT_QUEUED_MAX + 1], *long_words;
	char *argv[] = {"app", "-x", "a b", NULL};
	uint64_t ns;
	pid_t pid;
	int n;

	CHECK(nvt_queuerec_parse(good, strlen(good), &r) == 0);
	CHECK(r.pid == 4321 && r.start == 987654 && r.pidns == 4026531836u && r.since_ms == 123456);
	CHECK(r.timeout_s == 60 && r.n_gpus == 1 && r.gpu[0].count == 4);
	CHECK_STR(r.command, "app -x");
	/* Written back, the same text. */
	n = nvt_queuerec_format(&r, text, sizeof(text));
	CHECK(n == (int)strlen(good));
	CHECK_STR(text, good);
	/* Two GPUs, an empty command, a command with a newline (raw bytes to the file's end). */
	r.gpu[1] = r.gpu[0];
	r.gpu[1].count = 2;
	r.n_gpus = 2;
	snprintf(r.command, sizeof(r.command), "a\nb");
	n = nvt_queuerec_format(&r, text, sizeof(text));
	CHECK(n > 0 && nvt_queuerec_parse(text, (size_t)n, &back) == 0);
	CHECK(back.n_gpus == 2 && back.gpu[1].count == 2);
	CHECK_STR(back.command, "a\nb");
	r.command[0] = '\0';
	n = nvt_queuerec_format(&r, text, sizeof(text));
	CHECK(n > 0 && nvt_queuerec_parse(text, (size_t)n, &back) == 0 && !back.command[0]);
	/* No record: no GPU, a count of 0, PID 0; nor into a buffer too small. */
	r.n_gpus = 0;
	CHECK(nvt_queuerec_format(&r, text, sizeof(text)) == -1);
	r.n_gpus = 1;
	r.gpu[0].count = 0;
	CHECK(nvt_queuerec_format(&r, text, sizeof(text)) == -1);
	r.gpu[0].count = 1;
	r.pid = 0;
	CHECK(nvt_queuerec_format(&r, text, sizeof(text)) == -1);
	r.pid = 1;
	CHECK(nvt_queuerec_format(&r, text, 20) == -1);

	/* Refused: each line out of place, out of range or malformed. */
	CHECK(parse_changed("nvtaskset-queued 1", "nvtaskset-queued 2") == -1);
	CHECK(parse_changed("pid 4321", "pid 0") == -1);
	CHECK(parse_changed("pid 4321", "pid 2147483648") == -1);
	CHECK(parse_changed("pid 4321", "pid -1") == -1);
	CHECK(parse_changed("pid 4321", "pid 4321 ") == -1);
	CHECK(parse_changed("start 987654\npidns", "pidns") == -1);
	CHECK(parse_changed("start 987654", "start 18446744073709551616") == -1);
	CHECK(parse_changed("timeout 60", "timeout 4294967296") == -1);
	CHECK(parse_changed(" 4\n", " 0\n") == -1);
	CHECK(parse_changed(" 4\n", " 257\n") == -1);
	CHECK(parse_changed("GPU-1111", "GPU-x111") == -1);
	CHECK(parse_changed("gpu GPU-11111111-2222-3333-4444-555555555555 4\n", "") == -1);
	CHECK(parse_changed("command app -x\n", "command app -x") == -1);
	CHECK(parse_changed("command", "cmd") == -1);
	CHECK(nvt_queuerec_parse(good, strlen(good) - 1, &r) == -1);
	CHECK(nvt_queuerec_parse("", 0, &r) == -1);
	/* A NUL inside; more GPUs than NVT_MAX_GPUS; a command past NVT_QUEUED_COMMAND_MAX. */
	memcpy(text, good, sizeof(good));
	text[30] = '\0';
	CHECK(nvt_queuerec_parse(text, strlen(good), &r) == -1);
	{
		char many[NVT_QUEUED_MAX + 1] = "";
		size_t used = (size_t)snprintf(many, sizeof(many), "%.*s", (int)(strstr(good, "gpu ") - good), good);
		for (int i = 0; i <= NVT_MAX_GPUS; i++)
			used += (size_t)snprintf(many + used, sizeof(many) - used,
						 "gpu GPU-11111111-2222-3333-4444-555555555555 4\n");
		snprintf(many + used, sizeof(many) - used, "command x\n");
		CHECK(nvt_queuerec_parse(many, strlen(many), &r) == -1);
	}
	long_words = malloc(NVT_QUEUED_COMMAND_MAX + 2);
	CHECK(long_words != NULL);
	if (long_words) {
		memset(long_words, 'x', NVT_QUEUED_COMMAND_MAX);
		long_words[NVT_QUEUED_COMMAND_MAX] = '\n';
		long_words[NVT_QUEUED_COMMAND_MAX + 1] = '\0';
		CHECK(parse_changed("app -x\n", long_words) == -1);
		free(long_words);
	}

	/* The command's words, joined; cut to fit. */
	nvt_queuerec_command(argv, text, sizeof(text));
	CHECK_STR(text, "app -x a b");
	nvt_queuerec_command(argv, text, 6);
	CHECK_STR(text, "app -");

	/* Names. */
	CHECK(nvt_queuerec_name(text, sizeof(text), 4026531836u, 77, 0) == 0);
	CHECK_STR(text, "queued.4026531836.77");
	CHECK(nvt_queuerec_name_parse(text, &ns, &pid) == 0 && ns == 4026531836u && pid == 77);
	CHECK(nvt_queuerec_name(text, sizeof(text), 5, 77, 1) == 0);
	CHECK_STR(text, "queued.5.77.new");
	CHECK(nvt_queuerec_name_parse(text, &ns, &pid) == 1 && ns == 5 && pid == 77);
	CHECK(nvt_queuerec_name(text, 8, 5, 77, 0) == -1);
	CHECK(nvt_queuerec_name_parse("queued.5.077", &ns, &pid) == -1);
	CHECK(nvt_queuerec_name_parse("queued.5.0", &ns, &pid) == -1);
	CHECK(nvt_queuerec_name_parse("queued.5.77.old", &ns, &pid) == -1);
	CHECK(nvt_queuerec_name_parse("queued.5", &ns, &pid) == -1);
	CHECK(nvt_queuerec_name_parse("nvtaskset.5.77", &ns, &pid) == -1);
	return CHECK_DONE();
}
