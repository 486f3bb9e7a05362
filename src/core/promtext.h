/*
 * promtext.h - Prometheus' text exposition format (version 0.0.4), written
 * through one writer so that what nvtaskset --metrics prints and the
 * exporter serves is well-formed by construction: each family's HELP and
 * TYPE once, before its samples; label values escaped (backslash, double
 * quote, newline), valid UTF-8, and what a terminal acts on as '?'
 * (nvt_utf8_shown); names checked against the format's grammar. Pure.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROMTEXT_H
#define NVT_PROMTEXT_H

#include "outbuf.h"

/* The content type of the text format, as an HTTP response names it. */
#define NVT_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct nvt_prom_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]*, not beginning with "__" (reserved) */
	const char *value; /* any bytes: escaped, made valid UTF-8, controls as '?' */
};

/* 1 if name is a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), else 0. */
int nvt_prom_name_ok(const char *name);
/* 1 if name is a label name that a user may give, else 0. */
int nvt_prom_label_ok(const char *name);

/*
 * Starts the family name: "# HELP name HELP" (help escaped: backslash,
 * newline; controls as '?') and "# TYPE name TYPE", type one of counter, gauge, untyped.
 * Returns 0, or -1 (a bad name or type; out of memory).
 */
int nvt_prom_family(struct nvt_outbuf *b, const char *name, const char *type, const char *help);

/*
 * Writes a sample of name with labels (n of them) and value: integers
 * exactly (up to 2^53), others in the shortest form that reads back the
 * same, NaN, +Inf, -Inf. Returns 0, or -1 (a bad metric or label name; out
 * of memory).
 */
int nvt_prom_sample(struct nvt_outbuf *b, const char *name, const struct nvt_prom_label *labels,
		    int n, double value);

/* Appends v as the format writes a value (above). Returns 0 or -1. */
int nvt_prom_value(struct nvt_outbuf *b, double v);

#endif /* NVT_PROMTEXT_H */
