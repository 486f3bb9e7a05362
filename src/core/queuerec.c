/*
 * queuerec.c - the record of a start queued with --wait, written and read (queuerec.h; the
 * format: src/nvtaskset.h). Pure: plain buffers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "queuerec.h"
#include "gpusel.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

void nvt_queuerec_command(char *const *argv, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = 0; argv[i] && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n < len - used ? (size_t)n : len - used - 1;
	}
}

int nvt_queuerec_format(const struct nvt_queuerec *r, char *buf, size_t len)
{
	size_t used;
	int n;

	if (r->pid <= 0 || r->n_gpus < 1 || r->n_gpus > NVT_MAX_GPUS)
		return -1;
	n = snprintf(buf, len, "%s\npid %ld\nstart %llu\npidns %llu\nsince %llu\ntimeout %u\n",
		     NVT_QUEUED_MAGIC, (long)r->pid, (unsigned long long)r->start,
		     (unsigned long long)r->pidns, (unsigned long long)r->since_ms, r->timeout_s);
	if (n < 0 || (size_t)n >= len)
		return -1;
	used = (size_t)n;
	for (int i = 0; i < r->n_gpus; i++) {
		char uuid[NVT_UUID_TEXT_MAX];
		if (!r->gpu[i].count || r->gpu[i].count > NVT_MAX_TPCS)
			return -1;
		nvt_uuid_format(r->gpu[i].uuid, uuid);
		n = snprintf(buf + used, len - used, "gpu %s %u\n", uuid, r->gpu[i].count);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	n = snprintf(buf + used, len - used, "command %.*s\n", NVT_QUEUED_COMMAND_MAX - 1, r->command);
	if (n < 0 || (size_t)n >= len - used || used + (size_t)n > NVT_QUEUED_MAX)
		return -1;
	return (int)(used + (size_t)n);
}

/* Reads "KEY NUMBER\n" at *p (before end), the number at most max, into *out. Returns 0 with
 * *p past the line, or -1. */
static int number_line(const char **p, const char *end, const char *key, uint64_t max,
		       uint64_t *out)
{
	size_t k = strlen(key);
	const char *at;

	if ((size_t)(end - *p) <= k || memcmp(*p, key, k) || (*p)[k] != ' ')
		return -1;
	at = nvt_decimal_in(*p + k + 1, end, max, out);
	if (!at || at == end || *at != '\n')
		return -1;
	*p = at + 1;
	return 0;
}

/* Reads "gpu GPU-UUID COUNT\n" at *p (before end) into g. Returns 0 with *p past it, or -1. */
static int gpu_line(const char **p, const char *end, struct nvt_queuerec_gpu *g)
{
	char uuid[NVT_UUID_TEXT_MAX];
	const char *at = *p + 4;
	uint64_t count;

	if (end - *p < 4 || memcmp(*p, "gpu ", 4) || end - at < NVT_UUID_TEXT_MAX ||
	    at[NVT_UUID_TEXT_MAX - 1] != ' ')
		return -1;
	memcpy(uuid, at, NVT_UUID_TEXT_MAX - 1);
	uuid[NVT_UUID_TEXT_MAX - 1] = '\0';
	if (nvt_uuid_parse(uuid, g->uuid))
		return -1;
	at = nvt_decimal_in(at + NVT_UUID_TEXT_MAX, end, NVT_MAX_TPCS, &count);
	if (!at || at == end || *at != '\n' || !count)
		return -1;
	g->count = (unsigned)count;
	*p = at + 1;
	return 0;
}

int nvt_queuerec_parse(const char *text, size_t n, struct nvt_queuerec *r)
{
	const char *p = text, *end = text + n;
	size_t magic = strlen(NVT_QUEUED_MAGIC), words;
	uint64_t pid, timeout;

	memset(r, 0, sizeof(*r));
	if (n > NVT_QUEUED_MAX || memchr(text, '\0', n) || n <= magic ||
	    memcmp(p, NVT_QUEUED_MAGIC, magic) || p[magic] != '\n')
		return -1;
	p += magic + 1;
	if (number_line(&p, end, "pid", INT32_MAX, &pid) || !pid ||
	    number_line(&p, end, "start", UINT64_MAX, &r->start) ||
	    number_line(&p, end, "pidns", UINT64_MAX, &r->pidns) ||
	    number_line(&p, end, "since", UINT64_MAX, &r->since_ms) ||
	    number_line(&p, end, "timeout", UINT32_MAX, &timeout))
		goto bad;
	r->pid = (pid_t)pid;
	r->timeout_s = (unsigned)timeout;
	while (end - p >= 4 && !memcmp(p, "gpu ", 4)) {
		if (r->n_gpus == NVT_MAX_GPUS || gpu_line(&p, end, &r->gpu[r->n_gpus]))
			goto bad;
		r->n_gpus++;
	}
	/* The command: the rest, which ends in the newline its writer put after it. */
	if (!r->n_gpus || end - p < 9 || memcmp(p, "command ", 8) || end[-1] != '\n')
		goto bad;
	words = (size_t)(end - 1 - (p + 8));
	if (words >= sizeof(r->command))
		goto bad;
	memcpy(r->command, p + 8, words);
	r->command[words] = '\0';
	return 0;
bad:
	memset(r, 0, sizeof(*r));
	return -1;
}

int nvt_queuerec_name(char *buf, size_t len, uint64_t pidns, pid_t pid, int new)
{
	int n = snprintf(buf, len, NVT_QUEUED_PREFIX "%llu.%ld%s", (unsigned long long)pidns,
			 (long)pid, new ? NVT_QUEUED_NEW : "");

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int nvt_queuerec_name_parse(const char *name, uint64_t *pidns, pid_t *pid)
{
	size_t prefix = strlen(NVT_QUEUED_PREFIX);
	uint64_t ns, number;
	const char *p;

	if (strncmp(name, NVT_QUEUED_PREFIX, prefix) || name[prefix] == '0')
		return -1;
	p = nvt_decimal(name + prefix, UINT64_MAX, &ns);
	if (!p || *p != '.' || p[1] == '0' || !(p = nvt_decimal(p + 1, INT32_MAX, &number)) ||
	    !number)
		return -1;
	if (*p && strcmp(p, NVT_QUEUED_NEW))
		return -1;
	*pidns = ns;
	*pid = (pid_t)number;
	return *p ? 1 : 0;
}
