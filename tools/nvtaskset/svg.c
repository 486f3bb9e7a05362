/*
 * svg.c - nvtaskset -l --svg FILE: the partition map as a picture. Each GPU's
 * GPCs are rows of TPCs, each TPC filled with the colour and letter of the
 * partition that holds it (tasks of one partition, a launcher and its
 * workers, share a letter), hatched in the borrower's colour where a lower
 * task borrows it, outlined in red where partitions overlap; a legend says
 * who each letter is (PID, user, priority, state, TPCs, command). Reads what
 * -l reads (src/view) and changes nothing; the SVG is built whole in memory
 * and written once. Text from tasks (commands, users) is escaped for XML.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/tpcset.h"
#include "core/memlimit.h"
#include "view/view.h"

#define CELL 30       /* a TPC's square, px */
#define GAP 4
#define LEFT 84       /* the GPC labels' column */
#define MARGIN 16
#define LINE 18       /* a line of text */
#define COMMAND_MAX 60

/* Tableau's 10 colours and two more: told apart by most eyes, colour-blind ones too. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
				      "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d4a6c8"};
#define N_COLOURS (int)(sizeof(palette) / sizeof(palette[0]))
/* Text that reads on each colour: white on the dark ones. */
static const char *const ink[] = {"#fff", "#000", "#fff", "#000", "#fff", "#000",
				  "#fff", "#000", "#fff", "#000", "#000", "#000"};

/* The TPCs of one row of the map: a GPC's, or 8 at a time where GPCs are unknown. */
static int row_tpcs(const struct nvt_view_gpu *g, unsigned row, unsigned *tpcs)
{
	int n = 0;

	for (unsigned t = 0; t < g->topo.n_tpcs; t++)
		if (g->topo.n_gpcs ? g->topo.gpc[t] == row : t / 8 == row)
			tpcs[n++] = t;
	return n;
}

static unsigned n_rows(const struct nvt_view_gpu *g)
{
	return g->topo.n_gpcs ? g->topo.n_gpcs : (g->topo.n_tpcs + 7) / 8;
}

/* The widest row of any GPU, in TPCs. */
static int widest_row(const struct nvt_view *v)
{
	unsigned tpcs[NVT_MAX_TPCS];
	int widest = 8;

	for (int i = 0; i < v->n_gpus; i++)
		for (unsigned r = 0; v->gpus[i].map_known && r < n_rows(&v->gpus[i]); r++) {
			int n = row_tpcs(&v->gpus[i], r, tpcs);
			widest = n > widest ? n : widest;
		}
	return widest;
}

/* The right end of the widest line of text written, about. */
static int text_right;

/* One line of text at x, y in a font of size px (a character about 0.6 px wide, 0.68 in
 * bold: DejaVu Sans as Chromium draws it); text escaped. */
static void text_at(struct nvt_outbuf *b, int x, int y, int px, const char *attrs, const char *text)
{
	int right = x + (int)strlen(text) * px * (strstr(attrs, "bold") ? 68 : 60) / 100;

	text_right = right > text_right ? right : text_right;
	nvt_outbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"%d\"%s>", x, y, px, attrs);
	nvt_outbuf_xml(b, text);
	nvt_outbuf_printf(b, "</text>\n");
}

/* One TPC's square at x, y. */
static void cell(struct nvt_outbuf *b, const struct nvt_view_map *map, unsigned t, int x, int y)
{
	int h = map->owner[t], lent = map->borrower[t];
	char label[8];

	nvt_outbuf_printf(b, "<g class=\"tpc\" data-tpc=\"%u\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
			     "height=\"%d\" rx=\"3\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"/>",
			  t, x, y, CELL, CELL, h >= 0 ? palette[h % N_COLOURS] : "#eeeeee",
			  map->holders[t] > 1 ? "#d00000" : "#555555", map->holders[t] > 1 ? 3 : 1);
	if (lent != NVT_VIEW_FREE)
		nvt_outbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
				     "fill=\"url(#lent%d)\"/>",
				  x, y, CELL, CELL, lent >= 0 ? lent % N_COLOURS : N_COLOURS);
	nvt_outbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"8\" fill=\"%s\">%u</text>", x + 2,
			  y + 9, h >= 0 ? ink[h % N_COLOURS] : "#777", t);
	snprintf(label, sizeof(label), "%c%s", nvt_view_symbol(h), map->holders[t] > 1 ? "!" : "");
	if (h != NVT_VIEW_FREE)
		nvt_outbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\" "
				     "text-anchor=\"middle\" fill=\"%s\">%s</text>",
				  x + CELL / 2, y + CELL - 8, ink[h % N_COLOURS], label);
	if (lent != NVT_VIEW_FREE) {
		char small = nvt_view_symbol(lent);
		nvt_outbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" font-weight=\"bold\" "
				     "text-anchor=\"end\" fill=\"#000\">%c</text>",
				  x + CELL - 2, y + CELL - 2, small >= 'A' && small <= 'Z' ? small + 32 : small);
	}
	nvt_outbuf_printf(b, "</g>\n");
}

/* What a holder's legend line says: its tasks, user, priority, state, TPCs, command. */
static void holder_text(const struct nvt_view *v, const struct nvt_view_map *map, int h, char *buf,
			size_t len)
{
	const struct nvt_view_slot *s = &v->slots[map->part[h]];
	const struct nvt_view_task *t = &v->tasks[s->task];
	char tasks[48] = "", prio[48] = "no priority", borrows[32] = "";
	unsigned borrowed = 0;
	int more = -1;

	for (size_t k = 0; k < v->n_slots; k++)
		if (nvt_view_holder(v, map, k) == h) {
			more++;
			borrowed += nvt_set_count(&v->slots[k].borrowed);
		}
	if (more > 0)
		snprintf(tasks, sizeof(tasks), " and %d more", more);
	if (s->prio.prio)
		snprintf(prio, sizeof(prio), "%s, %s", nvt_view_prio_word(s), nvt_view_state_word(s));
	if (borrowed)
		snprintf(borrows, sizeof(borrows), ", borrows %u", borrowed);
	snprintf(buf, len, "%c \xc2\xb7 pid %ld%s \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %u TPCs%s \xc2\xb7 %.*s%s",
		 nvt_view_symbol(h),
		 (long)t->pid, tasks, t->user, prio, nvt_set_count(&s->own), borrows, COMMAND_MAX,
		 t->command[0] ? t->command : t->program, strlen(t->command) > COMMAND_MAX ? "..." : "");
}

/* A line per task that holds GPU memory on the GPU or has a limit there: what it holds of
 * what it may hold ("memory 1.2G/4G"), from y on. Returns the y below them. */
static int memory_lines(struct nvt_outbuf *b, const struct nvt_view *v, int gpu, int y)
{
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_slot *slot = &v->slots[s];
		const struct nvt_view_task *t = &v->tasks[slot->task];
		char line[300], mem[NVT_MEM_USAGE_TEXT_MAX];
		if (slot->gpu != gpu || (!slot->mem_used && !slot->mem_limit))
			continue;
		nvt_memlimit_usage(slot->mem_used, slot->mem_limit, mem, sizeof(mem));
		snprintf(line, sizeof(line), "pid %ld \xc2\xb7 %s \xc2\xb7 GPU memory %s%s", (long)t->pid,
			 t->user, mem, slot->mem_refused ? ", allocations refused" : "");
		text_at(b, MARGIN + 22, y += LINE + 2, 12, " class=\"memory\"", line);
	}
	return y;
}

/* One GPU's panel from y on. Returns the y below it. */
static int gpu_panel(struct nvt_outbuf *b, const struct nvt_view *v, int gpu, int y)
{
	const struct nvt_view_gpu *g = &v->gpus[gpu];
	struct nvt_view_map *map = malloc(sizeof(*map));
	struct nvt_tpcset left, held;
	char line[800];
	unsigned tpcs[NVT_MAX_TPCS];

	if (!map)
		cli_errx("out of memory");
	nvt_view_map(v, gpu, map);
	if (g->index >= 0)
		snprintf(line, sizeof(line), "GPU %d: %s (%s)", g->index, g->model[0] ? g->model : "?",
			 g->uuid_text);
	else
		snprintf(line, sizeof(line), "GPU %s (not on this machine's list)", g->uuid_text);
	text_at(b, MARGIN, y += LINE, 15, " font-weight=\"bold\"", line);
	nvt_set_andnot(&left, &g->working, &g->held);
	nvt_set_and(&held, &g->working, &g->held);
	if (g->map_known)
		snprintf(line, sizeof(line), "%u TPCs: %u held, %u free, %u borrowed; %d task%s on every TPC",
			 nvt_set_count(&g->working), nvt_set_count(&held), nvt_set_count(&left),
			 nvt_set_count(&g->borrowed), map->n_everywhere, map->n_everywhere == 1 ? "" : "s");
	else
		snprintf(line, sizeof(line), "%s", NVT_VIEW_MAP_UNKNOWN);
	text_at(b, MARGIN, y += LINE, 12, "", line);
	y += 6;
	for (unsigned r = 0; g->map_known && r < n_rows(g); r++) {
		int n = row_tpcs(g, r, tpcs);
		snprintf(line, sizeof(line), g->topo.n_gpcs ? "GPC %u" : "TPCs %u-", r);
		text_at(b, MARGIN, y + CELL / 2 + 5, 12, "", line);
		for (int i = 0; i < n; i++)
			cell(b, map, tpcs[i], MARGIN + LEFT + i * (CELL + GAP), y);
		y += CELL + GAP;
	}
	for (int h = 0; h < map->n_parts; h++) {
		holder_text(v, map, h, line, sizeof(line));
		y += LINE + 2;
		nvt_outbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" "
				     "stroke=\"#555\"/>\n", MARGIN, y - 12, palette[h % N_COLOURS]);
		text_at(b, MARGIN + 22, y, 12, " class=\"legend\"", line);
	}
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_task *t = &v->tasks[v->slots[s].task];
		if (v->slots[s].gpu != gpu || v->slots[s].partitioned)
			continue;
		snprintf(line, sizeof(line), "on every TPC \xc2\xb7 pid %ld \xc2\xb7 %s \xc2\xb7 %.*s", (long)t->pid, t->user,
			 COMMAND_MAX, t->command[0] ? t->command : t->program);
		text_at(b, MARGIN + 22, y += LINE + 2, 12, " class=\"legend\"", line);
	}
	y = memory_lines(b, v, gpu, y);
	free(map);
	return y + 2 * LINE;
}

/* The hatching of borrowed TPCs, one pattern per colour (and a grey one for several borrowers). */
static void patterns(struct nvt_outbuf *b)
{
	nvt_outbuf_printf(b, "<defs>\n");
	for (int c = 0; c <= N_COLOURS; c++)
		nvt_outbuf_printf(b, "<pattern id=\"lent%d\" width=\"7\" height=\"7\" "
				     "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
				     "<line x1=\"1.5\" y1=\"0\" x2=\"1.5\" y2=\"7\" stroke=\"%s\" "
				     "stroke-width=\"3\"/></pattern>\n",
				  c, c < N_COLOURS ? palette[c] : "#333");
	nvt_outbuf_printf(b, "</defs>\n");
}

/* The panels of the GPUs listed or used, from y on. Returns the y below them. */
static int panels(struct nvt_outbuf *b, const struct nvt_view *v, int y)
{
	for (int i = 0; i < v->n_gpus; i++)
		if (v->gpus[i].tasks || v->gpus[i].index >= 0)
			y = gpu_panel(b, v, i, y);
	return y;
}

int nvt_cmd_svg(const struct options *o)
{
	struct nvt_outbuf body = {0}, out = {0};
	struct nvt_view v;
	char title[200], host[64] = "?", when[40];
	int width, height;
	time_t now = time(NULL);
	FILE *f;

	observe_view(&v);
	nvt_view_read_trees(&v); /* (unread, one user's tasks on the same TPCs are one holder) */
	gethostname(host, sizeof(host) - 1);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	snprintf(title, sizeof(title), "nvtaskset: what runs where on %s, %s (%zu task%s)", host, when,
		 v.n_tasks, v.n_tasks == 1 ? "" : "s");
	text_at(&body, MARGIN, MARGIN + 8, 17, " font-weight=\"bold\"", title);
	height = panels(&body, &v, MARGIN + 16);
	if (!v.n_gpus)
		text_at(&body, MARGIN, height += LINE, 12, "", "No GPU is listed and no task holds TPCs.");
	width = MARGIN * 2 + LEFT + widest_row(&v) * (CELL + GAP);
	width = width > text_right + MARGIN ? width : text_right + MARGIN;
	nvt_outbuf_printf(&out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
				"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
				"font-size=\"12\">\n<title>",
			  width, height, width, height);
	nvt_outbuf_xml(&out, title);
	nvt_outbuf_printf(&out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
	patterns(&out);
	nvt_outbuf_put(&out, body.text ? body.text : "", body.len);
	nvt_outbuf_printf(&out, "</svg>\n");
	nvt_view_free(&v);
	if (out.failed || body.failed)
		cli_errx("out of memory");
	f = strcmp(o->svg_file, "-") ? fopen(o->svg_file, "we") : stdout;
	if (!f)
		cli_err("cannot write %s", o->svg_file);
	if (fwrite(out.text, 1, out.len, f) != out.len || (f != stdout && fclose(f)))
		cli_err("cannot write %s", o->svg_file);
	nvt_outbuf_free(&out);
	nvt_outbuf_free(&body);
	return EXIT_SUCCESS;
}
