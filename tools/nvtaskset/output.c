/*
 * output.c - what -p and -l print besides their text lines: errors (on
 * stderr, and with --json as a JSON document on stdout, through jsonout.c),
 * and -a's document, made task by task. docs/json.md describes every field.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "core/outbuf.h"
#include "core/text.h"
#include "os/proc.h"
#include "os/child.h"
#include "alloc/placement.h"

static int json_errors;
/* -a's document, {"version":N,"tasks":[...]}, while it is made (NULL before and after). */
static struct json_object *tasks_doc, *tasks_list;

void set_json_errors(int on)
{
	json_errors = on;
}

void json_tasks_begin(void)
{
	tasks_doc = jsonout_document();
	tasks_list = jsonout_array();
	jsonout_add(tasks_doc, "tasks", tasks_list);
}

void json_tasks_add(struct json_object *task)
{
	jsonout_append(tasks_list, task);
}

void json_tasks_add_error(pid_t pid, const char *message)
{
	struct json_object *task = jsonout_object();

	jsonout_add_int(task, "pid", pid);
	jsonout_add_text(task, "error", message);
	json_tasks_add(task);
}

void json_tasks_end(const char *error)
{
	struct json_object *doc = tasks_doc;

	if (!doc)
		return;
	tasks_doc = tasks_list = NULL;
	if (error)
		jsonout_add_text(doc, "error", error);
	jsonout_print(stdout, doc);
}

void json_error_if_asked(const char *message)
{
	struct json_object *doc;

	if (!json_errors)
		return;
	/* An error in the middle of -a's document ends it, with what it holds. */
	if (tasks_doc) {
		json_tasks_end(message);
		return;
	}
	doc = jsonout_document();
	jsonout_add_text(doc, "error", message);
	jsonout_print(stdout, doc);
}

/* Prints message as the command's last word, and exits 1. On the terminal, what a message
 * quotes of a user's words or a task's (a MASK, a PID argument, a list) is shown, its
 * controls and text-direction overrides as '?' (the JSON error escapes them). */
static void __attribute__((noreturn)) fail(const char *message)
{
	char shown[1024];

	terminal_text(message, shown, sizeof(shown));
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, shown);
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

static const char *usage_command = "nvtaskset";

void usage_names(const char *command)
{
	usage_command = command;
}

void bad_usage(const char *what)
{
	char shown[1400];

	terminal_text(what, shown, sizeof(shown)); /* (as fail's) */
	warnx("%s", shown);
	fprintf(stderr, "Try '%s --help' for more information.\n", usage_command);
	json_error_if_asked(what);
	exit(EXIT_FAILURE);
}

void terminal_text(const char *s, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), at = 0;

	while (n && at + 1 < len) {
		int shown;
		/* What nvt_utf8_shown hides (controls, C1, text-direction overrides, bytes that
		 * are not UTF-8): '?'. */
		size_t c = nvt_utf8_shown((const char *)p, n, &shown);

		if (shown && at + c < len) {
			memcpy(out + at, p, c);
			at += c;
		} else if (!shown) {
			out[at++] = '?';
		} else {
			break;
		}
		p += c, n -= c;
	}
	out[at] = '\0';
}

/* How long a holder's command line may take to read (os/child.h: its user can stall it), and
 * the bytes of it shown (three fit an error's line). */
#define HOLDER_READ_MS 500
#define HOLDER_COMMAND_SHOWN 80

void holders_text(const struct nvt_holder *h, int n, int stored, char *buf, size_t len)
{
	size_t used = 0;
	int named = 0;

	buf[0] = '\0';
	for (; named < n && named < stored && named < HOLDERS_NAMED && used < len; named++) {
		char command[NVT_PROC_COMMAND_BOUNDED_MAX], shown[HOLDER_COMMAND_SHOWN + 1];
		if (nvt_proc_command_bounded(h[named].pid, command, sizeof(command), HOLDER_READ_MS))
			snprintf(command, sizeof(command), "?"); /* gone since */
		terminal_text(command, shown, sizeof(shown));
		used += (size_t)snprintf(buf + used, len - used, "%spid %ld (%s): %u", named ? ", " : "",
					 (long)h[named].pid, shown, h[named].tpcs);
	}
	if (n > named && used < len)
		snprintf(buf + used, len - used, " and %d more task%s", n - named,
			 n - named == 1 ? "" : "s");
}

/* Fills list and mask texts of set. */
void describe(const struct nvt_tpcset *set, char *list, char *mask)
{
	nvt_format_list(set, list, NVT_LIST_TEXT_MAX);
	nvt_format_mask(set, mask, NVT_MASK_TEXT_MAX);
}


const char *seg_error(int rc, const struct nvt_seg_handle *h, char *buf, size_t len)
{
	switch (rc) {
	case NVT_SEG_ENOPROC: return "No such process";
	case NVT_SEG_ENOTASK: return "not running under nvtaskset";
	case NVT_SEG_EPERM: return "Permission denied";
	case NVT_SEG_EVERSION:
		snprintf(buf, len,
			 "its control segment has version %u; this nvtaskset understands version %u",
			 h->found_version, NVT_SEG_VERSION);
		return buf;
	case NVT_SEG_ECORRUPT: return "its control segment is corrupt";
	case NVT_SEG_EBUSY: return "another nvtaskset is changing it right now";
	case NVT_SEG_EMAKING: return "its control segment is not filled in yet";
	case NVT_SEG_ELEASED:
		return "its user holds a lease on its control segment: it cannot be read now (its TPCs "
		       "are not counted by -n --exclude-running)";
	case NVT_SEG_ESYS:
		if (errno == ETIMEDOUT)
			return "which of its control segments it uses could not be told in time (its "
			       "memory map, which tells, could not be read: its user can hold the map's lock)";
		return strerror(errno);
	default: return strerror(errno);
	}
}

const char *seg_error_pid(int rc, const struct nvt_seg_handle *h, pid_t pid, char *buf, size_t len)
{
	uid_t uid;
	const struct passwd *pw;

	if (rc != NVT_SEG_EPERM)
		return seg_error(rc, h, buf, len);
	if (nvt_proc_euid(pid, &uid)) {
		snprintf(buf, len, "Permission denied (only the task's user and root may change it)");
		return buf;
	}
	pw = getpwuid(uid);
	snprintf(buf, len, "Permission denied: it is the task of uid %lu%s%s%s; only that user and root "
		 "may change it", (unsigned long)uid, pw ? " (" : "", pw ? pw->pw_name : "", pw ? ")" : "");
	return buf;
}

int number_arg(const char *text, unsigned long min, unsigned long max, unsigned long *out)
{
	uint64_t v;
	/* A '+' as strtoul takes it: NVTASKSET_CLAIM_TIMEOUT=+5 has always worked. */
	const char *end = nvt_decimal(text + (text[0] == '+'), max, &v);

	if (!end || *end || v < min)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

pid_t pid_arg(const char *text)
{
	unsigned long v;

	if (number_arg(text, 1, INT_MAX, &v))
		cli_errx("invalid PID argument: '%s'", text);
	return (pid_t)v;
}
