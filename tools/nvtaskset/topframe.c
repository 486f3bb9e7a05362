/*
 * topframe.c - a frame of nvtaskset top (top.h): the header, each GPU's map,
 * the table of tasks and the footer, built whole in a buffer from a view, cut
 * to the terminal's width and height (in batch, whole and without escapes).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "core/tpcset.h"
#include "core/memlimit.h"
#include "top.h"

const char *const top_sort_names[SORT_KEYS] = {"launches", "waits", "tpcs", "pid",
					       "user",     "prio",  "gpu"};
struct top top = {.delay_ms = DELAY_DEFAULT_MS, .pick = -1};

/* ---- A line of the frame, cut to the terminal's width --------------------- */

struct line {
	struct nvt_outbuf *out;
	int shown; /* visible columns so far */
};

/* Appends visible text (one column a byte: terminal_text made it so), cut at the width. */
static void put(struct line *l, const char *text)
{
	size_t n = strlen(text);

	if (top.width && l->shown + (int)n > top.width)
		n = l->shown < top.width ? (size_t)(top.width - l->shown) : 0;
	nvt_outbuf_put(l->out, text, n);
	l->shown += (int)n;
}

static void putf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct line *l, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	put(l, text);
}

/* An SGR attribute ("1", "7", "30;43"), only on a terminal. */
static void attr(struct line *l, const char *sgr)
{
	if (top.colour)
		nvt_outbuf_printf(l->out, "\033[%sm", sgr);
}

static void end_line(struct line *l)
{
	if (top.colour)
		nvt_outbuf_printf(l->out, "\033[0m\033[K");
	nvt_outbuf_put(l->out, "\n", 1);
	l->shown = 0;
}

/* The colours of holder h's cells: six backgrounds, black or white text. */
static const char *const holder_sgr[] = {"30;42", "30;43", "97;44", "97;45", "30;46", "97;41"};
#define HOLDER_COLOURS (int)(sizeof(holder_sgr) / sizeof(holder_sgr[0]))

/* ---- The header and the maps -------------------------------------------------- */

static void header(struct nvt_outbuf *out)
{
	const struct nvt_view *v = top.now;
	struct line l = {out, 0};
	char when[16], agents[200] = "", unreadable[40] = "", user[sizeof(v->agents[0].user)];
	time_t now = time(NULL);
	size_t used = 0;

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	/* The agents that run, and those a task needs that do not (none: nothing to say). */
	for (int i = 0; i < v->n_agents && used < sizeof(agents) - 40; i++) {
		enum nvt_view_agent_state state = nvt_view_agent_state(v, i);
		terminal_text(v->agents[i].user, user, sizeof(user));
		if (state != NVT_VIEW_AGENT_IDLE)
			used += (size_t)snprintf(agents + used, sizeof(agents) - used, "%s%s's %s",
						 used ? ", " : "", user,
						 state == NVT_VIEW_AGENT_RUNS ? "runs" :
						 "needed, not running");
	}
	if (v->unreadable)
		snprintf(unreadable, sizeof(unreadable), " (%d unreadable)", v->unreadable);
	attr(&l, "1");
	putf(&l, "nvtaskset top - %s", when);
	attr(&l, "0");
	putf(&l, "  tasks: %zu%s  agents: %s  MPS: ", v->n_tasks, unreadable,
	     agents[0] ? agents : "none");
	if (v->mps_pid)
		putf(&l, "pid %ld", (long)v->mps_pid);
	else
		put(&l, v->mps_pipe_dir[0] ? "not running" : "?");
	end_line(&l);
}

/* The cell of TPC t on a map: the holder's letter, then what is odd about it: a lower-case
 * letter for the borrower, '!' where partitions overlap. */
static void map_cell(struct line *l, const struct nvt_view_map *m, unsigned t, int wide)
{
	int h = m->owner[t], b = m->borrower[t];
	char text[4] = {nvt_view_symbol(h), ' ', ' ', 0};

	if (b != NVT_VIEW_FREE) {
		char s = nvt_view_symbol(b);
		text[wide ? 1 : 0] = (char)(s >= 'A' && s <= 'Z' ? s + 32 : s);
	} else if (m->holders[t] > 1) {
		text[wide ? 1 : 0] = '!';
	}
	text[wide ? 2 : 1] = '\0';
	if (h >= 0)
		attr(l, holder_sgr[h % HOLDER_COLOURS]);
	else
		attr(l, "2");
	put(l, text);
	attr(l, "0");
	if (wide)
		put(l, " ");
}

/* A GPU's title line: its number, model, and what is free. */
static void gpu_title(struct line *l, const struct nvt_view_gpu *g, const struct nvt_view_map *m)
{
	struct nvt_tpcset left;

	nvt_set_andnot(&left, &g->working, &g->held);
	attr(l, "1");
	if (g->index >= 0)
		putf(l, "GPU %d", g->index);
	else
		putf(l, "GPU %.13s", g->uuid_text);
	attr(l, "0");
	if (g->map_known)
		putf(l, "  %u TPCs, %u free, %u borrowed", nvt_set_count(&g->working),
		     nvt_set_count(&left), nvt_set_count(&g->borrowed));
	if (m->n_everywhere)
		putf(l, ", %d on every TPC", m->n_everywhere);
}

/* Every GPU on one line each: its TPCs GPC by GPC, one character a TPC. */
static void compact_maps(struct nvt_outbuf *out)
{
	for (int i = 0; i < top.now->n_gpus; i++) {
		const struct nvt_view_gpu *g = &top.now->gpus[i];
		struct line l = {out, 0};
		gpu_title(&l, g, &top.maps[i]);
		end_line(&l);
		put(&l, "  ");
		for (unsigned gpc = 0; g->map_known && gpc < (g->topo.n_gpcs ? g->topo.n_gpcs : 1); gpc++) {
			put(&l, gpc ? "|" : "[");
			for (unsigned t = 0; t < g->topo.n_tpcs; t++)
				if (!g->topo.n_gpcs || g->topo.gpc[t] == gpc)
					map_cell(&l, &top.maps[i], t, 0);
		}
		put(&l, g->map_known ? "]" : "(TPC map not known)");
		end_line(&l);
	}
}

/* One GPU in full: a line per GPC, a cell of two characters a TPC. */
static void full_map(struct nvt_outbuf *out, int i)
{
	const struct nvt_view_gpu *g = &top.now->gpus[i];
	struct line l = {out, 0};

	gpu_title(&l, g, &top.maps[i]);
	if (g->model[0]) {
		char model[sizeof(g->model)];
		terminal_text(g->model, model, sizeof(model));
		putf(&l, "  %s", model);
	}
	end_line(&l);
	if (!g->map_known) {
		put(&l, "  " NVT_VIEW_MAP_UNKNOWN);
		end_line(&l);
	}
	for (unsigned gpc = 0; g->map_known && gpc < (g->topo.n_gpcs ? g->topo.n_gpcs : 1); gpc++) {
		putf(&l, "  GPC %-3u ", gpc);
		for (unsigned t = 0; t < g->topo.n_tpcs; t++)
			if (!g->topo.n_gpcs || g->topo.gpc[t] == gpc)
				map_cell(&l, &top.maps[i], t, 1);
		end_line(&l);
	}
}

/* The lines full_map draws for the view's GPU i. */
static int full_lines(int i)
{
	const struct nvt_view_gpu *g = &top.now->gpus[i];

	return 1 + (!g->map_known ? 1 : g->topo.n_gpcs ? (int)g->topo.n_gpcs : 1);
}

/* The view's GPU with nvtaskset's number index, or -1. */
int top_gpu_numbered(int index)
{
	for (int i = 0; i < top.now->n_gpus; i++)
		if (top.now->gpus[i].index == index)
			return i;
	return -1;
}

/* ---- The table ------------------------------------------------------------------- */

static int cmp_double(double a, double b)
{
	return a < b ? -1 : a > b;
}

/* Rows in the order of the sort key (ties by PID), the largest first for counts. */
static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	const struct nvt_view *v = top.now;
	const struct nvt_view_slot *sa = a->slot >= 0 ? &v->slots[a->slot] : NULL;
	const struct nvt_view_slot *sb = b->slot >= 0 ? &v->slots[b->slot] : NULL;
	int c = 0;

	switch (top.sort) {
	case BY_LAUNCHES: c = -cmp_double(a->lps, b->lps); break;
	case BY_WAITS: c = -cmp_double(a->wps, b->wps); break;
	case BY_TPCS:
		c = -cmp_double(sa ? (double)nvt_set_count(&sa->current) : -1,
				sb ? (double)nvt_set_count(&sb->current) : -1);
		break;
	case BY_USER: c = strcmp(v->tasks[a->task].user, v->tasks[b->task].user); break;
	case BY_PRIO: c = -cmp_double(sa ? sa->prio.prio : -1, sb ? sb->prio.prio : -1); break;
	case BY_GPU: c = cmp_double(sa ? sa->gpu : 1e9, sb ? sb->gpu : 1e9); break;
	case BY_PID:
	case SORT_KEYS: break;
	}
	if (!c)
		c = cmp_double(v->tasks[a->task].pid, v->tasks[b->task].pid);
	if (!c)
		c = cmp_double(sa ? sa->gpu : -1, sb ? sb->gpu : -1);
	return top.reverse ? -c : c;
}

/* The rows to show: every slot on the GPU shown (or on any), and with all GPUs the tasks
 * without a slot. Returns how many; rows has room for the view's slots and tasks. */
static size_t make_rows(struct row *rows, int shown)
{
	const struct nvt_view *v = top.now;
	size_t n = 0;

	for (size_t k = 0; k < v->n_tasks; k++) {
		const struct nvt_view_task *t = &v->tasks[k];
		if (!t->n_slots && shown < 0)
			rows[n++] = (struct row){k, -1, -1, -1, -1};
		for (int i = 0; i < t->n_slots; i++) {
			size_t s = t->first_slot + (size_t)i;
			struct row *r = &rows[n];
			if (shown >= 0 && v->slots[s].gpu != shown)
				continue;
			*r = (struct row){k, (long)s, -1, -1, -1};
			nvt_view_rates(top.prev, v, s, &r->lps, &r->wps);
			r->holder = nvt_view_holder(v, &top.maps[v->slots[s].gpu], s);
			n++;
		}
	}
	qsort(rows, n, sizeof(*rows), cmp_rows);
	return n;
}

static void table_header(struct nvt_outbuf *out)
{
	struct line l = {out, 0};

	attr(&l, "7");
	putf(&l, "%-2s %7s %-9s %-3s %-12s %-6s %-9s %4s %4s %9s %7s %11s  %-*s", "ID", "PID", "USER",
	     "GPU", "JOB/CONT", "PRIO", "STATE", "TPCS", "BRW", "LAUNCH/s", "WAIT/s", "MEM",
	     top.width > 102 ? top.width - 102 : 7, "COMMAND");
	end_line(&l);
}

/* A rate as the table shows it: "-" before a second view. */
static void rate_text(double rate, char *buf, size_t len)
{
	if (rate < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, rate >= 1000 ? "%.0f" : "%.1f", rate);
}

static void table_row(struct nvt_outbuf *out, const struct row *r)
{
	const struct nvt_view *v = top.now;
	const struct nvt_view_task *t = &v->tasks[r->task];
	const struct nvt_view_slot *s = r->slot >= 0 ? &v->slots[r->slot] : NULL;
	char user[64], job[40], cmd[sizeof(t->command)], lps[24], wps[24], tpcs[16], gpu[16];
	char mem[NVT_MEM_USAGE_TEXT_MAX];
	struct line l = {out, 0};

	terminal_text(t->user, user, sizeof(user));
	if (t->slurm_job[0])
		snprintf(job, sizeof(job), "%s.%s", t->slurm_job, t->slurm_step);
	else
		snprintf(job, sizeof(job), "%s", t->container[0] ? t->container : "-");
	terminal_text(t->command[0] ? t->command : t->program, cmd, sizeof(cmd));
	rate_text(r->lps, lps, sizeof(lps));
	rate_text(s && s->prio.prio ? r->wps : -1, wps, sizeof(wps));
	snprintf(tpcs, sizeof(tpcs), "-");
	snprintf(gpu, sizeof(gpu), "-");
	nvt_memlimit_usage(s ? s->mem_used : 0, s ? s->mem_limit : 0, mem, sizeof(mem));
	if (s) {
		const struct nvt_view_gpu *g = &v->gpus[s->gpu];
		snprintf(tpcs, sizeof(tpcs), "%u",
			 s->partitioned ? nvt_set_count(&s->current) : nvt_set_count(&g->working));
		if (!s->partitioned && !g->map_known)
			snprintf(tpcs, sizeof(tpcs), "all");
		if (g->index >= 0)
			snprintf(gpu, sizeof(gpu), "%d", g->index);
		else
			snprintf(gpu, sizeof(gpu), "?");
	}
	if (r->holder >= 0)
		attr(&l, holder_sgr[r->holder % HOLDER_COLOURS]);
	putf(&l, "%-2c", r->holder >= 0 ? nvt_view_symbol(r->holder) : s && !s->partitioned ? '*' : '-');
	attr(&l, "0");
	/* The selected task's row, on a terminal: in reverse video, as htop's. */
	if (top.height && t->pid == top.selected)
		attr(&l, "7");
	putf(&l, " %7ld %-9.9s %-3s %-12.12s %-6s %-9.9s %4s %4u %9s %7s %11s  %s", (long)t->pid, user,
	     gpu, job, s && s->prio.prio ? nvt_view_prio_word(s) : "-",
	     s ? nvt_view_state_word(s) : "-", tpcs, s ? nvt_set_count(&s->borrowed) : 0, lps, wps,
	     mem, cmd);
	end_line(&l);
}

static void footer(struct nvt_outbuf *out)
{
	struct line l = {out, 0};

	attr(&l, "7");
	if (top.prompt) {
		char typed[sizeof(top.input)];
		terminal_text(top.input, typed, sizeof(typed));
		putf(&l, "%s for pid %ld (Enter sets it, Esc cancels): %s_",
		     top.prompt == 'p' ? "TPC list" : "priority (high, normal, low, none)",
		     top.selected, typed);
	} else if (top.help)
		putf(&l, "q quit  s sort (%s)  r reverse  0-9 GPU N  g next GPU  a all GPUs  space "
			 "refresh  up/down select  p TPCs  P priority  h keys", top_sort_names[top.sort]);
	else if (top.pick >= 0)
		putf(&l, "%s%ssort: %s%s  GPU: %d  every %.1f s  h: keys", top.note,
		     top.note[0] ? "  " : "", top_sort_names[top.sort], top.reverse ? " (reversed)" : "",
		     top.pick, top.delay_ms / 1000.0);
	else
		putf(&l, "%s%ssort: %s%s  GPU: all  every %.1f s  h: keys", top.note,
		     top.note[0] ? "  " : "", top_sort_names[top.sort], top.reverse ? " (reversed)" : "",
		     top.delay_ms / 1000.0);
	attr(&l, "0");
	/* The last line ends without a newline, so that the screen does not scroll. */
	if (top.colour)
		nvt_outbuf_printf(out, "\033[K");
}

/* ---- A frame --------------------------------------------------------------------- */

/* The selected row: the one of top.selected's task, moved by top.move, kept in the table. */
static void select_row(const struct row *rows, size_t n)
{
	long at = -1;

	for (size_t i = 0; i < n; i++)
		if (top.now->tasks[rows[i].task].pid == top.selected) {
			at = (long)i;
			break;
		}
	/* The task whose words are being typed is gone (ended, or its PID another task's now):
	 * the words are given to no other task (the next row's, another user's maybe). */
	if (top.prompt &&
	    (at < 0 || top.now->tasks[rows[at].task].start_time != top.selected_start)) {
		snprintf(top.note, sizeof(top.note), "pid %ld ended: nothing changed", top.selected);
		top.prompt = 0;
		top.input[0] = '\0';
	}
	if (!n) {
		top.selected = 0;
		return;
	}
	at = at < 0 ? 0 : at;
	at += top.move;
	at = at < 0 ? 0 : at >= (long)n ? (long)n - 1 : at;
	top.move = 0;
	top.selected = top.now->tasks[rows[at].task].pid;
	top.selected_start = top.now->tasks[rows[at].task].start_time;
}

/* Cuts out after its first lines lines (a terminal's frame must not scroll). */
static void cut_lines(struct nvt_outbuf *out, size_t lines)
{
	for (size_t i = 0, seen = 0; i < out->len; i++)
		if (out->text[i] == '\n' && ++seen == lines) {
			out->len = i + 1;
			out->text[out->len] = '\0';
			return;
		}
}

/* The whole frame into out: header, maps, table (cut to the terminal's height), footer. */
void top_frame(struct nvt_outbuf *out, struct row *rows)
{
	int shown = top.pick >= 0 ? top_gpu_numbered(top.pick) : -1;
	size_t n, room, before = 0;

	for (int i = 0; i < top.now->n_gpus; i++)
		nvt_view_map(top.now, i, &top.maps[i]);
	if (top.colour)
		nvt_outbuf_printf(out, "\033[H");
	header(out);
	if (shown < 0 && top.now->n_gpus == 1)
		shown = 0;
	/* A GPU in full where a few rows still fit below it; else every GPU on a line. */
	if (shown >= 0 && (!top.height || full_lines(shown) + 8 <= top.height))
		full_map(out, shown);
	else
		compact_maps(out);
	if (top.pick < 0 && top.now->n_gpus == 1)
		shown = -1; /* (the rows of every GPU: tasks without a slot too) */
	nvt_outbuf_put(out, top.colour ? "\033[K\n" : "\n", top.colour ? 4 : 1);
	table_header(out);
	n = make_rows(rows, shown);
	select_row(rows, n);
	for (size_t i = 0; i < out->len; i++)
		before += out->text[i] == '\n';
	/* On a terminal: the rows that fit above the footer and the line that counts the rest. */
	room = top.height ? (size_t)(top.height > (int)before + 2 ? top.height - (int)before - 2 : 0) : n;
	for (size_t i = 0; i < n && i < room; i++)
		table_row(out, &rows[i]);
	if (!top.height)
		return;
	if (n > room) {
		struct line l = {out, 0};
		putf(&l, "... %zu more (s sorts, 0-9 picks a GPU)", n - room);
		end_line(&l);
	}
	cut_lines(out, (size_t)(top.height > 1 ? top.height - 1 : 1));
	nvt_outbuf_printf(out, "\033[J");
	footer(out);
}

