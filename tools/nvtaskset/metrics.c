/*
 * metrics.c - nvtaskset --metrics: the tasks' metrics in Prometheus' text
 * format, for node_exporter's textfile collector; and nvtaskset --exporter
 * [ADDR:]PORT, which runs the exporter (a program of its own beside the shim,
 * tools/nvtaskset/exporter.c) serving the same on /metrics. Both read what
 * -l reads and change nothing (docs/observability.md).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "core/listen.h"
#include "os/sysutil.h"
#include "view/view.h"

int nvt_cmd_metrics(const struct options *o)
{
	struct nvt_outbuf text = {0};
	struct nvt_view v;

	(void)o;
	observe_view(&v);
	if (nvt_view_metrics(&v, &text))
		cli_errx("out of memory");
	nvt_view_free(&v);
	/* The whole text, built before anything is printed: a failure prints nothing (the
	 * textfile recipe of docs/observability.md keeps the last good file). Written by write(2)
	 * and closed here, not through stdio, whose flush at exit no longer knows why an
	 * earlier write of a long text failed: a write or close that fails says why (a reader
	 * that went away, EPIPE, is none, as at exit). */
	fflush(stdout);
	if (nvt_write_all(STDOUT_FILENO, text.text, text.len) || close(STDOUT_FILENO)) {
		int saved = errno;
		nvt_outbuf_free(&text);
		if (saved == EPIPE)
			return EXIT_SUCCESS;
		errno = saved;
		cli_err("write error");
	}
	nvt_outbuf_free(&text);
	return EXIT_SUCCESS;
}

int nvt_cmd_exporter(const struct options *o)
{
	struct nvt_listen at;
	char why[300], path[4096];

	if (nvt_listen_parse(o->exporter, &at, why, sizeof(why))) {
		char message[400];
		snprintf(message, sizeof(message), "--exporter: %s", why);
		bad_usage(message);
	}
	if (find_lib_file("nvtaskset-exporter", path, sizeof(path)))
		cli_errx("--exporter: this nvtaskset was built without its exporter (it needs "
			 "libmicrohttpd: Debian's libmicrohttpd-dev, then make), looked in %s; "
			 "--metrics prints the same metrics for node_exporter's textfile collector "
			 "(docs/observability.md)", path);
	fflush(NULL);
	execl(path, "nvtaskset-exporter", o->exporter, (char *)NULL);
	cli_err("--exporter: cannot run %s", path);
}
