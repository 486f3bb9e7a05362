/*
 * common.c - helpers the sub-commands share: partitions from the command line, messages.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- Output helpers ------------------------------------------------------ */

/*
 * Decodes the UTF-8 character at s (n bytes left). Returns its length and
 * stores its code point, or returns 0 if s does not start a well-formed one
 * (overlong forms, surrogates and code points past U+10FFFF are not).
 */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

void json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	putchar('"');
	while (n) {
		uint32_t cp;
		size_t len = utf8_char(p, n, &cp);

		if (!len) {
			fputs("\\ufffd", stdout); /* not UTF-8: the replacement character */
			p++, n--;
			continue;
		}
		if (cp == '"' || cp == '\\')
			printf("\\%c", (int)cp);
		else if (cp < 0x20 || cp == 0x7f)
			printf("\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, len, stdout);
		p += len, n -= len;
	}
	putchar('"');
}

void terminal_text(const char *s, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), at = 0;

	while (n && at + 1 < len) {
		uint32_t cp;
		size_t c = utf8_char(p, n, &cp);
		/* Controls (C0, DEL, C1), text-direction overrides, and bytes that
		 * are not UTF-8 (an 8-bit terminal reads 0x9b as CSI): '?'. */
		int shown = c && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) &&
			    !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);

		if (!c)
			c = 1;
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

/* Fills list and mask texts of set. */
void describe(const struct nvt_tpcset *set, char *list, char *mask)
{
	nvt_format_list(set, list, NVT_LIST_TEXT_MAX);
	nvt_format_mask(set, mask, NVT_MASK_TEXT_MAX);
}

/* ---- Partitions from the command line ------------------------------------ */

/* Seconds to wait for the driver: $NVTASKSET_DRIVER_TIMEOUT (1-3600) or 60. */
int driver_timeout_ms(void)
{
	const char *text = getenv("NVTASKSET_DRIVER_TIMEOUT");
	char *end;
	long v;

	if (!text || !*text)
		return GPU_QUERY_TIMEOUT_S * 1000;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < 1 || v > 3600)
		errx(EXIT_FAILURE, "NVTASKSET_DRIVER_TIMEOUT must be 1-3600 seconds, not '%s'", text);
	return (int)v * 1000;
}

/* Loads (or measures) GPU gpu's topology, or exits with the reason. */
struct nvt_gpu_topology load_gpu(int gpu, int force)
{
	struct nvt_gpu_topology g;
	char why[512];

	if (nvt_gpu_topology(gpu, force, driver_timeout_ms(), stderr, &g, why, sizeof(why)))
		errx(EXIT_FAILURE, "%s", why);
	if (g.note[0])
		warnx("%s", g.note);
	return g;
}

struct nvt_topology gpu_topology(const struct options *o)
{
	struct nvt_gpu_topology g = load_gpu(o->gpu < 0 ? 0 : o->gpu, 0);

	/* The shim cannot tell which GPU a launch is for: one map for all. */
	if (g.info.device_count > 1)
		warnx("warning: the task sees %d GPUs; its partition follows GPU %d's TPC map on "
		      "every GPU it uses, which on GPUs with other maps selects other TPCs or none "
		      "(a hang). Give it one GPU with CUDA_VISIBLE_DEVICES",
		      g.info.device_count, g.ordinal);
	return g.topo;
}

/* The TPCs that the other nvtaskset tasks hold, every user's (for --exclude-running). */
static void running_tpcs(pid_t except, struct nvt_tpcset *held)
{
	pid_t *pids;
	int n = nvt_seg_tasks(nvt_rundir(), 1, &pids);

	nvt_set_clear(held);
	if (n < 0)
		err(EXIT_FAILURE, "cannot list the tasks in %s", nvt_rundir());
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view view;
		if (pids[i] == except || nvt_seg_open(nvt_rundir(), pids[i], 0, &h))
			continue;
		if (nvt_seg_read(&h, 0, &view, NULL, NULL) == 0 && view.state == NVT_SLOT_SET)
			nvt_set_or(held, held, &view.tpcs);
		nvt_seg_close(&h);
	}
	free(pids);
}

/*
 * Turns MASK (hex, -c list or -g list) into a TPC set for topo, or exits
 * with a one-line reason.
 */
struct nvt_tpcset parse_partition(const struct options *o, const char *text,
					 const struct nvt_topology *topo, pid_t self)
{
	struct nvt_tpcset set, gpcs;
	const char *what = o->gpc_list ? "GPC list" : o->tpc_list ? "TPC list" : "TPC mask";
	int rc, top;

	if (o->count) {
		struct nvt_tpcset available, held;
		nvt_topo_all(topo, &available);
		if (o->exclude_running) {
			running_tpcs(self, &held);
			nvt_set_andnot(&available, &available, &held);
		}
		if (o->count > topo->n_tpcs)
			errx(EXIT_FAILURE, "cannot pick %u TPCs: this GPU has %u", o->count,
			     topo->n_tpcs);
		if (nvt_topo_pick(topo, &available, o->count, o->strategy, &set))
			errx(EXIT_FAILURE, "cannot pick %u TPCs: only %u are free of other tasks",
			     o->count, nvt_set_count(&available));
		return set;
	}
	if (o->gpc_list)
		rc = nvt_parse_list(text, NVT_MAX_GPCS, &gpcs);
	else if (o->tpc_list)
		rc = nvt_parse_list(text, NVT_MAX_TPCS, &set);
	else
		rc = nvt_parse_mask(text, NVT_MAX_TPCS, &set);
	if (rc == NVT_PARSE_SYNTAX)
		errx(EXIT_FAILURE, "failed to parse %s '%s'", what, text);
	if (rc == NVT_PARSE_RANGE)
		errx(EXIT_FAILURE, "%s '%s' names a %s beyond %d", what, text,
		     o->gpc_list ? "GPC" : "TPC", (o->gpc_list ? NVT_MAX_GPCS : NVT_MAX_TPCS) - 1);
	if (o->gpc_list) {
		if (!topo->n_gpcs)
			errx(EXIT_FAILURE,
			     "the GPC layout of this GPU is unknown (it is measured with thread-block "
			     "clusters, which need compute capability 9.0); give TPCs with -c or a "
			     "mask instead");
		top = nvt_set_highest(&gpcs);
		if (top >= (int)topo->n_gpcs)
			errx(EXIT_FAILURE, "GPC %d does not exist: this GPU has %u GPCs (0-%u)", top,
			     topo->n_gpcs, topo->n_gpcs - 1);
		nvt_topo_gpc_tpcs(topo, &gpcs, &set);
	}
	top = nvt_set_highest(&set);
	if (top < 0)
		errx(EXIT_FAILURE, "empty partition: %s '%s' selects no TPC", what, text);
	if (top >= (int)topo->n_tpcs)
		errx(EXIT_FAILURE, "TPC %d does not exist: this GPU has %u TPCs (0-%u)", top,
		     topo->n_tpcs, topo->n_tpcs - 1);
	return set;
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
	default: return strerror(errno);
	}
}

int client_connections(void)
{
	const char *text = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	char *end;
	long v;

	if (!text || !*text)
		return 8;
	v = strtol(text, &end, 10);
	return (*end || v < 1 || v > 128) ? 8 : (int)v;
}
