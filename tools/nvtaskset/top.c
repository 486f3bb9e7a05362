/*
 * top.c - nvtaskset top: what runs where, live, in the manner of top and
 * nvtop. Each GPU's TPCs as a map lettered by the partition that holds them
 * (lower-case letters: borrowed TPCs, by the borrower's letter), and a row per
 * task and GPU: its PID, user, Slurm job or container, priority and state,
 * TPCs, launches and waits per second. Keys sort, pick a GPU and quit; -b
 * prints frames for scripts. Reads what -l reads (src/view) each frame and
 * changes nothing. Plain ANSI: a frame is built whole and written at once.
 * Over 500 lines on purpose: the frame's parts and the terminal's handling
 * share its private state.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/text.h"
#include "core/tpcset.h"
#include "view/view.h"

#define DELAY_DEFAULT_MS 2000
#define DELAY_MIN_MS 100
#define DELAY_MAX_MS 86400000

/* The sort keys, as -o and the s key name them. */
enum sort_key { BY_LAUNCHES, BY_WAITS, BY_TPCS, BY_PID, BY_USER, BY_PRIO, BY_GPU, SORT_KEYS };
static const char *const sort_names[SORT_KEYS] = {"launches", "waits", "tpcs", "pid",
						  "user",     "prio",  "gpu"};

/* One row of the table: a task's slot (or a task without one). */
struct row {
	size_t task;
	long slot;    /* -1: the task has no slot */
	double lps;   /* launches per second, -1: not known yet */
	double wps;   /* waits per second */
	int holder;   /* its partition's holder on its GPU's map, -1 none */
};

static struct top {
	int batch;
	long frames;       /* -n: frames to show, 0: until q */
	int delay_ms;
	int pick;          /* the GPU shown (its nvtaskset number), -1: all */
	enum sort_key sort;
	int reverse;
	int help;          /* show the keys' help */
	int colour;
	int width, height; /* the terminal's; 0: no limit (batch) */
	char note[120];    /* a line for the last key's answer */
	const struct nvt_view *now, *prev;
	struct nvt_view_map *maps; /* one per GPU of now */
} top = {.delay_ms = DELAY_DEFAULT_MS, .pick = -1};

/* ---- The terminal ---------------------------------------------------------- */

static struct termios saved_tty;
static int tty_changed;
static volatile sig_atomic_t resized, ended;

static void tty_restore(void)
{
	static const char leave[] = "\033[0m\033[?25h\033[?1049l";

	if (!tty_changed)
		return;
	tty_changed = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	if (write(STDOUT_FILENO, leave, sizeof(leave) - 1) < 0)
		return; /* (the terminal went away: nothing to restore on it) */
}

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		resized = 1;
	else
		ended = sig;
}

/* Raw keys, no echo, the alternate screen, no cursor; restored at exit and on a signal. */
static void tty_setup(void)
{
	static const char enter[] = "\033[?1049h\033[?25l";
	struct sigaction sa;
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &saved_tty))
		cli_err("top: cannot read the terminal's settings");
	raw = saved_tty;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(tty_restore);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		cli_err("top: cannot set the terminal");
	tty_changed = 1;
	if (write(STDOUT_FILENO, enter, sizeof(enter) - 1) < 0)
		cli_err("top: cannot write to the terminal");
}

static void tty_size(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col || !ws.ws_row)
		top.width = 80, top.height = 24;
	else
		top.width = ws.ws_col, top.height = ws.ws_row;
}

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
	char when[16], agents[200] = "", unreadable[40] = "";
	time_t now = time(NULL);
	size_t used = 0;

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	for (int i = 0; i < v->n_agents && used < sizeof(agents) - 40; i++)
		used += (size_t)snprintf(agents + used, sizeof(agents) - used, "%s%s's %s", i ? ", " : "",
					 v->agents[i].user, v->agents[i].pid ? "runs" : "stopped");
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
	if (g->model[0])
		putf(&l, "  %s", g->model);
	end_line(&l);
	if (!g->map_known) {
		put(&l, "  TPC map not known (no task on it, no calibration cached)");
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
static int gpu_numbered(int index)
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
	putf(&l, "%-2s %7s %-9s %-3s %-12s %-6s %-9s %4s %4s %9s %7s  %-*s", "ID", "PID", "USER", "GPU",
	     "JOB/CONT", "PRIO", "STATE", "TPCS", "BRW", "LAUNCH/s", "WAIT/s",
	     top.width > 90 ? top.width - 90 : 7, "COMMAND");
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
	putf(&l, " %7ld %-9.9s %-3s %-12.12s %-6s %-9.9s %4s %4u %9s %7s  %s", (long)t->pid, user, gpu,
	     job, s && s->prio.prio ? nvt_view_prio_word(s) : "-", s ? nvt_view_state_word(s) : "-",
	     tpcs, s ? nvt_set_count(&s->borrowed) : 0, lps, wps, cmd);
	end_line(&l);
}

static void footer(struct nvt_outbuf *out)
{
	struct line l = {out, 0};

	attr(&l, "7");
	if (top.help)
		putf(&l, "q quit  s sort (%s)  r reverse  0-9 GPU N  g next GPU  a all GPUs  space "
			 "refresh  h keys", sort_names[top.sort]);
	else if (top.pick >= 0)
		putf(&l, "%s%ssort: %s%s  GPU: %d  every %.1f s  h: keys", top.note,
		     top.note[0] ? "  " : "", sort_names[top.sort], top.reverse ? " (reversed)" : "",
		     top.pick, top.delay_ms / 1000.0);
	else
		putf(&l, "%s%ssort: %s%s  GPU: all  every %.1f s  h: keys", top.note,
		     top.note[0] ? "  " : "", sort_names[top.sort], top.reverse ? " (reversed)" : "",
		     top.delay_ms / 1000.0);
	attr(&l, "0");
	/* The last line ends without a newline, so that the screen does not scroll. */
	if (top.colour)
		nvt_outbuf_printf(out, "\033[K");
}

/* ---- A frame --------------------------------------------------------------------- */

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
static void frame(struct nvt_outbuf *out, struct row *rows)
{
	int shown = top.pick >= 0 ? gpu_numbered(top.pick) : -1;
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

/* ---- Keys ------------------------------------------------------------------------ */

/* What ended a wait for keys. */
enum wait_end { TIME_UP, QUIT, REDRAW };

/* Acts on key c. Returns what the frame does next. */
static enum wait_end key(int c)
{
	top.note[0] = '\0';
	if (c == 'q' || c == 'Q')
		return QUIT;
	if (c == ' ')
		return TIME_UP; /* a new view now */
	if (c == 's')
		top.sort = (enum sort_key)((top.sort + 1) % SORT_KEYS);
	else if (c == 'r')
		top.reverse = !top.reverse;
	else if (c == 'h' || c == '?')
		top.help = !top.help;
	else if (c == 'a')
		top.pick = -1;
	else if (c == 'g') {
		int i = top.pick >= 0 ? gpu_numbered(top.pick) + 1 : 0;
		while (i < top.now->n_gpus && top.now->gpus[i].index < 0)
			i++;
		top.pick = i < top.now->n_gpus ? top.now->gpus[i].index : -1;
	} else if (c >= '0' && c <= '9') {
		if (gpu_numbered(c - '0') >= 0)
			top.pick = c - '0';
		else
			snprintf(top.note, sizeof(top.note), "no GPU %c", c);
	}
	return REDRAW;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits until the monotonic time due (ms) for keys. Returns what ended the wait. */
static enum wait_end wait_keys(uint64_t due)
{
	struct pollfd p = {STDIN_FILENO, POLLIN, 0};
	enum wait_end end = TIME_UP;
	char keys[16];
	uint64_t now = now_ms();
	int ms = due > now ? (int)(due - now) : 0;
	ssize_t n;

	if (top.batch) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		return TIME_UP;
	}
	if (poll(&p, 1, ms) <= 0)
		return ended ? QUIT : resized ? REDRAW : TIME_UP;
	n = read(STDIN_FILENO, keys, sizeof(keys));
	if (n == 0)
		return QUIT; /* the terminal is gone */
	for (ssize_t i = 0; i < n && end != QUIT; i++) {
		enum wait_end e = key((unsigned char)keys[i]);
		end = e == QUIT || end == TIME_UP ? e : end;
	}
	return ended ? QUIT : end;
}

/* ---- Options and the loop ----------------------------------------------------- */

static const char top_help[] =
	"Usage: nvtaskset top [-b] [-n N] [-d SECS] [-o FIELD] [--gpu GPU]\n"
	"\n"
	"What runs where, live: each GPU's TPCs lettered by the partition that holds\n"
	"them (a lower-case letter: a TPC borrowed, by the borrower's letter; '!': held\n"
	"by partitions that overlap; '.': free), and a row per task and GPU: ID (its\n"
	"letter), PID, user, Slurm job or container, priority, state (gated, ahead and\n"
	"bound wait for a higher task; running, borrowing, ...), TPCs, borrowed TPCs,\n"
	"launches and waits per second, command. Reads what -l reads; changes nothing.\n"
	"\n"
	"Options:\n"
	" -b, --batch       print frames one after another, for scripts (no keys)\n"
	" -n, --frames N    end after N frames\n"
	" -d, --delay SECS  between frames (default 2; at least 0.1)\n"
	" -o, --sort FIELD  sort by launches (default), waits, tpcs, pid, user, prio, gpu\n"
	"     --gpu GPU     show GPU (a number or UUID) only\n"
	" -h, --help        display this help\n"
	"\n"
	"Keys: q quit, s next sort field, r reverse, 0-9 show GPU N, g next GPU,\n"
	"a all GPUs, space refresh now, h keys. See docs/observability.md.\n";

/* -d's seconds, "2" or "0.5", in ms; exits on a bad value. */
static int delay_arg(const char *text)
{
	uint64_t whole, frac = 0;
	const char *p = nvt_decimal(text, 86400, &whole), *dot = p;
	uint64_t ms;

	if (p && *p == '.') {
		const char *end = nvt_decimal(p + 1, 999999999, &frac);
		if (!end || *end || end - (p + 1) > 3)
			p = NULL;
		else
			for (long digits = end - (p + 1); digits < 3; digits++)
				frac *= 10;
		dot = end;
	}
	ms = p ? whole * 1000 + frac : 0;
	if (!p || *dot || ms < DELAY_MIN_MS || ms > DELAY_MAX_MS)
		bad_usage("top: -d takes seconds from 0.1 to 86400, e.g. 2 or 0.5");
	return (int)ms;
}

static void top_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"batch", no_argument, NULL, 'b'},	    {"frames", required_argument, NULL, 'n'},
		{"delay", required_argument, NULL, 'd'}, {"sort", required_argument, NULL, 'o'},
		{"gpu", required_argument, NULL, 'G'},   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long frames;
	int c, i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+bn:d:o:h", longopts, NULL)) != -1) {
		if (c == 'b')
			top.batch = 1;
		else if (c == 'n') {
			if (number_arg(optarg, 1, 1000000000, &frames))
				bad_usage("top: -n takes a count of frames from 1");
			top.frames = (long)frames;
		} else if (c == 'd')
			top.delay_ms = delay_arg(optarg);
		else if (c == 'o') {
			for (i = 0; i < SORT_KEYS && strcmp(optarg, sort_names[i]); i++)
				;
			if (i == SORT_KEYS)
				bad_usage("top: -o takes launches, waits, tpcs, pid, user, prio or gpu");
			top.sort = (enum sort_key)i;
		} else if (c == 'G')
			top.pick = resolve_gpu(optarg);
		else if (c == 'h') {
			fputs(top_help, stdout);
			exit(EXIT_SUCCESS);
		} else
			bad_usage("top takes [-b] [-n N] [-d SECS] [-o FIELD] [--gpu GPU]");
	}
	if (optind < argc)
		bad_usage("top takes no further arguments");
}

int nvt_cmd_top(int argc, char **argv)
{
	struct nvt_view views[2];
	struct nvt_outbuf out = {0};
	struct row *rows = NULL;
	enum wait_end end = TIME_UP;
	long shown = 0;
	int which = 0;

	top_options(argc, argv);
	if (!top.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		cli_errx("top: standard input and output must be a terminal (give -b to print frames "
			 "for a script or a file)");
	top.maps = malloc(NVT_MACHINE_GPUS * sizeof(*top.maps));
	if (!top.maps)
		cli_errx("out of memory");
	if (!top.batch) {
		top.colour = 1;
		tty_setup();
	}
	memset(views, 0, sizeof(views));
	while (end != QUIT) {
		struct nvt_view *v = &views[which];
		uint64_t due = now_ms() + (uint64_t)top.delay_ms;
		struct row *more;
		nvt_view_free(v);
		observe_view(v);
		top.prev = top.now;
		top.now = v;
		which = !which;
		more = realloc(rows, (v->n_slots + v->n_tasks + 1) * sizeof(*rows));
		if (!more)
			cli_errx("out of memory");
		rows = more;
		/* A key or a resize draws the same view again, until the time is up. */
		do {
			resized = 0;
			if (!top.batch)
				tty_size();
			nvt_outbuf_reset(&out);
			frame(&out, rows);
			if (top.batch)
				nvt_outbuf_put(&out, "\n", 1);
			if (out.failed)
				cli_errx("out of memory");
			if (fwrite(out.text, 1, out.len, stdout) != out.len || fflush(stdout))
				cli_err("top: write error");
			if (top.frames && ++shown >= top.frames)
				end = QUIT;
			else
				end = wait_keys(due);
		} while (end == REDRAW);
	}
	tty_restore();
	nvt_view_free(&views[0]);
	nvt_view_free(&views[1]);
	nvt_outbuf_free(&out);
	free(rows);
	free(top.maps);
	/* q and Ctrl-C end it well; a signal from elsewhere (SIGTERM, SIGHUP) says so. */
	return ended && ended != SIGINT ? 128 + ended : EXIT_SUCCESS;
}
