/*
 * output.c - what -p and -l print besides their text lines: errors (on
 * stderr, and with --json as a JSON object on stdout) and the JSON fields
 * of a GPU slot. docs/json.md describes every field.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int json_errors;
/* -a's {"version":N,"tasks":[ is printed and not closed yet. */
static int tasks_open;

void set_json_errors(int on)
{
	json_errors = on;
}

void json_tasks_begin(void)
{
	printf("{\"version\":%d,\"tasks\":[", NVT_JSON_VERSION);
	tasks_open = 1;
}

void json_tasks_end(const char *error)
{
	if (!tasks_open)
		return;
	tasks_open = 0;
	if (error) {
		printf("],\"error\":");
		json_string(error);
		printf("}\n");
	} else {
		printf("]}\n");
	}
}

void json_error(pid_t pid, const char *message)
{
	if (pid > 0)
		printf("{\"pid\":%ld,\"error\":", (long)pid);
	else
		printf("{\"version\":%d,\"error\":", NVT_JSON_VERSION);
	json_string(message);
	putchar('}');
}

void json_error_if_asked(const char *message)
{
	if (!json_errors)
		return;
	/* An error in the middle of -a's document ends it, well-formed. */
	if (tasks_open) {
		json_tasks_end(message);
		return;
	}
	json_error(0, message);
	putchar('\n');
}

/* Prints message as the command's last word, and exits 1. */
static void __attribute__((noreturn)) fail(const char *message)
{
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, message);
	json_error_if_asked(message);
	exit(EXIT_FAILURE);
}

void cli_errx(const char *fmt, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	fail(message);
}

void cli_err(const char *fmt, ...)
{
	char message[1024];
	int saved = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	n = strlen(message);
	snprintf(message + n, sizeof(message) - n, ": %s", strerror(saved));
	fail(message);
}

void json_gpu_start(FILE *out, const uint8_t uuid[16])
{
	char text[NVT_UUID_TEXT_MAX];
	int index = gpu_index_of(uuid);

	nvt_uuid_format(uuid, text);
	if (index >= 0)
		fprintf(out, "{\"gpu\":%d,\"uuid\":\"%s\"", index, text);
	else
		fprintf(out, "{\"gpu\":null,\"uuid\":\"%s\"", text);
}

void json_partition_fields(FILE *out, uint32_t state, const struct nvt_tpcset *tpcs)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	if (state != NVT_SLOT_SET) {
		fprintf(out, "\"partitioned\":false,\"tpcs\":null,\"tpc_mask\":null,"
			"\"tpc_count\":null,\"tpc_ids\":null");
		return;
	}
	describe(tpcs, list, mask);
	fprintf(out, "\"partitioned\":true,\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u,"
		"\"tpc_ids\":", list, mask, nvt_set_count(tpcs));
	json_tpc_array(out, tpcs);
}
