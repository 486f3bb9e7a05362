/*
 * promtext.c - Prometheus' text exposition format (promtext.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

static int name_char(char c, int first, int colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
	       (!first && c >= '0' && c <= '9');
}

static int name_of(const char *name, int colon)
{
	if (!name || !*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, p == name, colon))
			return 0;
	return 1;
}

int nvt_prom_name_ok(const char *name)
{
	return name_of(name, 1);
}

int nvt_prom_label_ok(const char *name)
{
	return name_of(name, 0) && strncmp(name, "__", 2) != 0;
}

/* Appends s escaped: backslash and newline, and with quote also the double quote; bytes that
 * are not UTF-8 as U+FFFD; and what a terminal would act on (nvt_utf8_shown: other controls,
 * C1, text-direction overrides) as '?', as -l and top show it: root's --metrics in a terminal
 * and a curl of the exporter print other users' command names. */
static int escaped(struct nvt_outbuf *b, const char *s, int quote)
{
	size_t n = strlen(s);

	while (n) {
		int shown;
		size_t k = nvt_utf8_shown(s, n, &shown);
		int rc;
		if (!nvt_utf8_len(s, n))
			rc = nvt_outbuf_put(b, "\xef\xbf\xbd", 3);
		else if (*s == '\\')
			rc = nvt_outbuf_put(b, "\\\\", 2);
		else if (*s == '\n')
			rc = nvt_outbuf_put(b, "\\n", 2);
		else if (*s == '"' && quote)
			rc = nvt_outbuf_put(b, "\\\"", 2);
		else if (!shown)
			rc = nvt_outbuf_put(b, "?", 1);
		else
			rc = nvt_outbuf_put(b, s, k);
		if (rc)
			return -1;
		s += k;
		n -= k;
	}
	return 0;
}

int nvt_prom_family(struct nvt_outbuf *b, const char *name, const char *type, const char *help)
{
	if (!nvt_prom_name_ok(name) ||
	    (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "untyped")))
		return -1;
	if (nvt_outbuf_printf(b, "# HELP %s ", name) || escaped(b, help, 0))
		return -1;
	return nvt_outbuf_printf(b, "\n# TYPE %s %s\n", name, type);
}

int nvt_prom_value(struct nvt_outbuf *b, double v)
{
	char text[40];

	if (isnan(v))
		return nvt_outbuf_printf(b, "NaN");
	if (isinf(v))
		return nvt_outbuf_printf(b, v > 0 ? "+Inf" : "-Inf");
	/* Up to 2^53 every integer is exact (no libm: the command links none). */
	if (v >= -9007199254740992.0 && v <= 9007199254740992.0 && v == (double)(int64_t)v)
		return nvt_outbuf_printf(b, "%lld", (long long)v);
	/* The shortest of 15 to 17 digits that reads back as v. */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	return nvt_outbuf_printf(b, "%s", text);
}

int nvt_prom_sample(struct nvt_outbuf *b, const char *name, const struct nvt_prom_label *labels,
		    int n, double value)
{
	if (!nvt_prom_name_ok(name) || nvt_outbuf_printf(b, "%s", name))
		return -1;
	for (int i = 0; i < n; i++) {
		if (!nvt_prom_label_ok(labels[i].name) ||
		    nvt_outbuf_printf(b, "%s%s=\"", i ? "," : "{", labels[i].name) ||
		    escaped(b, labels[i].value ? labels[i].value : "", 1) || nvt_outbuf_put(b, "\"", 1))
			return -1;
	}
	if (nvt_outbuf_printf(b, "%s ", n ? "}" : "") || nvt_prom_value(b, value))
		return -1;
	return nvt_outbuf_put(b, "\n", 1);
}
