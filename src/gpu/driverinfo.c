/*
 * driverinfo.c - /proc/driver/nvidia text. Formats as on driver 580:
 *   information: "Model: \t\t NVIDIA H100 80GB HBM3" ... "GPU UUID: \t GPU-7c40...-...-..."
 *   version:     "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>"
 *
 * SPDX-License-Identifier: MIT
 */
#include "driverinfo.h"

#include <stdio.h>
#include <string.h>

/* Copies the value of "key:" on a line of text (trimmed) to out. Returns 0 or -1. */
static int field(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p, *end;
		size_t n;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		p = line + klen + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		n = (size_t)(end - p);
		if (n == 0 || n >= len)
			return -1;
		memcpy(out, p, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

int nvt_parse_gpu_information(const char *text, char *uuid, size_t uuid_len, char *model,
			      size_t model_len)
{
	if (field(text, "GPU UUID", uuid, uuid_len) || strncmp(uuid, "GPU-", 4))
		return -1;
	for (const char *c = uuid; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F') ||
		      *c == '-' || (c - uuid < 3)))
			return -1;
	if (field(text, "Model", model, model_len))
		snprintf(model, model_len, "NVIDIA GPU");
	return 0;
}

int nvt_parse_nvrm_version(const char *text, char *out, size_t len)
{
	const char *line = strstr(text, "NVRM version:"), *end;

	if (!line)
		return -1;
	end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	/* The first word of digits and dots, with at least one dot. */
	for (const char *p = line; p < end; p++) {
		size_t n = 0;
		int dots = 0;

		if (p > line && p[-1] != ' ' && p[-1] != '\t')
			continue;
		while (p + n < end && ((p[n] >= '0' && p[n] <= '9') || p[n] == '.')) {
			dots += p[n] == '.';
			n++;
		}
		if (n && dots && (p + n == end || p[n] == ' ' || p[n] == '\t') && n < len &&
		    p[0] != '.') {
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
	}
	return -1;
}
