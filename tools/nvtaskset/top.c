/*
 * top.c - nvtaskset top: what runs where, live, in the manner of top and
 * nvtop. Each GPU's TPCs as a map lettered by the partition that holds them
 * (lower-case letters: borrowed TPCs, by the borrower's letter), and a row per
 * task and GPU: its PID, user, Slurm job or container, priority and state,
 * TPCs, launches and waits per second. Keys sort, pick a GPU, select a task
 * and give it a TPC list or a priority (by running nvtaskset -p: its code,
 * checks and rights), and quit; -b prints frames for scripts. Reads what -l
 * reads (src/view) each frame, and changes nothing by itself. Plain ANSI escapes (no curses: a frame is built whole,
 * topframe.c, and written at once, which a test in tmux reads back). This
 * file: the terminal, the keys, the options and the loop.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hint.h"
#include "core/text.h"
#include "top.h"
#include "os/clock.h"
#include "os/child.h"

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
	sa.sa_flags = SA_RESTART; /* (poll still returns early, and the loop looks at the flags) */
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

/* ---- Keys ------------------------------------------------------------------------ */

/* What ended a wait for keys. */
enum wait_end { TIME_UP, QUIT, REDRAW };

/* How long a change (nvtaskset -p) may take before top gives up on it and ends it. */
#define CHANGE_TIMEOUT_MS 30000

/* Runs in the child: nvtaskset -p with the words typed (argv), this program again. */
static void exec_change(void *ctx, int out_fd)
{
	(void)out_fd;
	execv("/proc/self/exe", ctx);
	_exit(127);
}

/*
 * Gives the selected task what was typed (p: a TPC list, P: a priority) through nvtaskset -p
 * itself: this program run again (the same code, checks and messages as the command line's,
 * and the owner's rights: changing a task is for its user and root), its output shown as the
 * note (its last line, terminal escapes neutralised).
 */
static void apply_typed(void)
{
	char pid[24], out[2048] = "", *last, *argv[8];
	struct nvt_child c = {0};
	uint64_t start;
	int argc = 0, late, rc;

	/* Its task ended since the last frame, and its PID may be another's now: nothing changed. */
	if (nvt_proc_start_time((pid_t)top.selected, &start) || start != top.selected_start) {
		snprintf(top.note, sizeof(top.note), "pid %ld ended: nothing changed", top.selected);
		return;
	}
	snprintf(pid, sizeof(pid), "%ld", top.selected);
	argv[argc++] = "nvtaskset";
	argv[argc++] = "-p";
	argv[argc++] = top.prompt == 'p' ? "-c" : "--priority";
	argv[argc++] = top.input;
	argv[argc++] = pid;
	argv[argc] = NULL;
	/* Its output and its errors in one pipe; killed (SIGKILL: a change that outlived its time
	 * may ignore SIGTERM) after CHANGE_TIMEOUT_MS. A -p killed at any point leaves every
	 * segment whole, as the fault suite's kills of the command show. */
	c.fn = exec_change;
	c.ctx = argv;
	c.output = out;
	c.output_len = sizeof(out);
	c.flags = NVT_CHILD_STDOUT | NVT_CHILD_STDERR_OUT;
	c.timeout_ms = CHANGE_TIMEOUT_MS;
	rc = nvt_child_run(&c);
	if (rc == NVT_CHILD_ESYS) {
		snprintf(top.note, sizeof(top.note), "cannot run nvtaskset -p: %s", strerror(errno));
		return;
	}
	late = rc == NVT_CHILD_TIMEOUT;
	/* What it warned of or why it refused (its first line of standard error, which comes
	 * before what it buffered for standard output), else its last line: the new list or
	 * priority. */
	while (*out && out[strlen(out) - 1] == '\n')
		out[strlen(out) - 1] = '\0';
	last = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
	for (char *line = out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, "nvtaskset: ", 11)) {
			last = line + 11;
			last[strcspn(last, "\n")] = '\0';
			break;
		}
	terminal_text(late ? "nvtaskset -p took too long: ended" : last, top.note, sizeof(top.note));
}

/* A key while words are typed (top.prompt): Enter applies them, Esc cancels. */
static void typed_key(int c)
{
	size_t len = strlen(top.input);

	if (c == '\r' || c == '\n') {
		if (len)
			apply_typed();
		top.prompt = 0;
	} else if (c == 27) {
		top.prompt = 0;
		snprintf(top.note, sizeof(top.note), "cancelled");
	} else if ((c == 127 || c == 8) && len) {
		top.input[len - 1] = '\0';
	} else if (c > ' ' && c < 127 && len + 1 < sizeof(top.input)) {
		top.input[len] = (char)c;
		top.input[len + 1] = '\0';
	}
}

/* Acts on key c. Returns what the frame does next. */
static enum wait_end key(int c)
{
	if (top.prompt) {
		typed_key(c);
		return REDRAW;
	}
	top.note[0] = '\0';
	if (c == 'p' || c == 'P') {
		if (!top.selected)
			snprintf(top.note, sizeof(top.note), "no task to change");
		top.prompt = top.selected ? c : 0;
		top.input[0] = '\0';
		return REDRAW;
	}
	if (c == 'j' || c == 'k') {
		top.move += c == 'j' ? 1 : -1;
		return REDRAW;
	}
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
		int i = top.pick >= 0 ? top_gpu_numbered(top.pick) + 1 : 0;
		while (i < top.now->n_gpus && top.now->gpus[i].index < 0)
			i++;
		top.pick = i < top.now->n_gpus ? top.now->gpus[i].index : -1;
	} else if (c >= '0' && c <= '9') {
		if (top_gpu_numbered(c - '0') >= 0)
			top.pick = c - '0';
		else
			snprintf(top.note, sizeof(top.note), "no GPU %c", c);
	}
	return REDRAW;
}

/* Waits until the monotonic time due (ms) for keys. Returns what ended the wait. */
static enum wait_end wait_keys(uint64_t due)
{
	struct pollfd p = {STDIN_FILENO, POLLIN, 0};
	enum wait_end end = TIME_UP;
	char keys[16];
	uint64_t now = (uint64_t)nvt_clock_ms();
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
		enum wait_end e;
		/* The up and down arrows (ESC [ A, ESC [ B) move the selection, as k and j. */
		if (keys[i] == 27 && i + 2 < n && keys[i + 1] == '[' &&
		    (keys[i + 2] == 'A' || keys[i + 2] == 'B')) {
			keys[i + 2] = keys[i + 2] == 'A' ? 'k' : 'j';
			i += 2;
		}
		e = key((unsigned char)keys[i]);
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
	"launches and waits per second, command. Reads what -l reads; changes only what\n"
	"the keys p and P give the selected task, through nvtaskset -p.\n"
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
	"a all GPUs, space refresh now, h keys; up and down (or k, j) select a task,\n"
	"p gives it a TPC list, P a priority (as nvtaskset -p does). See\n"
	"docs/observability.md.\n";

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
	int c, i, help = 0;

	usage_names("nvtaskset top");
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
			for (i = 0; i < SORT_KEYS && strcmp(optarg, top_sort_names[i]); i++)
				;
			if (i == SORT_KEYS)
				bad_usage("top: -o takes launches, waits, tpcs, pid, user, prio or gpu");
			top.sort = (enum sort_key)i;
		} else if (c == 'G')
			top.pick = resolve_gpu(optarg);
		else if (c == 'h')
			help = 1; /* once every option is known: an unknown one beside it is an error */
		else
			hint_sub_usage("top takes [-b] [-n N] [-d SECS] [-o FIELD] [--gpu GPU]", argc, argv,
				       longopts);
	}
	if (help) {
		fputs(top_help, stdout);
		exit(EXIT_SUCCESS);
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
		uint64_t due = (uint64_t)nvt_clock_ms() + (uint64_t)top.delay_ms;
		struct row *more;
		nvt_view_free(v);
		observe_view(v);
		nvt_view_read_trees(v); /* (unread, one user's tasks on the same TPCs are one holder) */
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
			top_frame(&out, rows);
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
