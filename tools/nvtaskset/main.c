/*
 * main.c - nvtaskset: run a command on, or move a running task to, a set of
 * GPU TPCs. Options, the words after them, and dispatch from one table of every
 * way the command is used (cmds[]); each sub-command has a file of its own, and
 * the hints for a command line refused (hint.c) check what they suggest with
 * this file's parser.
 *
 * Over 500 lines on purpose: the options, their checks against each other and
 * the dispatch are one parser, which a hint's child runs whole.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/membw.h"
#include "core/yield.h"
#include "core/smcount.h"
#include "core/mpslog.h"
#include "core/prio.h"
#include "core/cmdline.h"
#include "os/child.h"
#include "profile.h"
#include "hint.h"

/*
 * Exported (the Makefile links with --export-dynamic-symbol=NVT_CLI_MARKER):
 * a shim inherited from a partitioned shell finds it and stays passive.
 */
__attribute__((visibility("default"), used)) const char nvtaskset_cli[] =
	"nvtaskset " NVT_VERSION_STRING;

enum {
	OPT_JSON = 256,
	OPT_NO_MPS,
	OPT_MPS,
	OPT_STRATEGY,
	OPT_EXCLUDE,
	OPT_GPU,
	OPT_CALIBRATE,
	OPT_TOPOLOGY,
	OPT_SM_LIMIT,
	OPT_DRY_RUN,
	OPT_LAUNCHED,
	OPT_FORCE,
	OPT_CHANNELS,
	OPT_SM_COUNT,
	OPT_PRIORITY,
	OPT_GUARD,
	OPT_NO_LEND,
	OPT_YIELD,
	OPT_AGENT,
	OPT_HOLD,
	OPT_POLL,
	OPT_IDLE_EXIT,
	OPT_ACROSS_USERS,
	OPT_MEMORY_HALF,
	OPT_SVG,
	OPT_METRICS,
	OPT_EXPORTER,
	OPT_HELP_ALL,
	OPT_WAIT,
	OPT_MEM,
	OPT_MEM_EXCLUSIVE
};
/* "+": options end at the first word that is not one (MASK), as taskset's. */
#define SHORT_OPTIONS "+acgpln:hV"
static const struct option long_options[] = {
	{"tpc-list", no_argument, NULL, 'c'}, {"gpc-list", no_argument, NULL, 'g'},
	{"pid", no_argument, NULL, 'p'},      {"list", no_argument, NULL, 'l'},
	{"json", no_argument, NULL, OPT_JSON}, {"no-mps", no_argument, NULL, OPT_NO_MPS},
	{"mps", required_argument, NULL, OPT_MPS}, {"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},  {"tpcs", required_argument, NULL, 'n'},
	{"strategy", required_argument, NULL, OPT_STRATEGY},
	{"exclude-running", no_argument, NULL, OPT_EXCLUDE},
	{"wait", optional_argument, NULL, OPT_WAIT},
	{"memory-half", required_argument, NULL, OPT_MEMORY_HALF},
	{"gpu", required_argument, NULL, OPT_GPU},
	{"calibrate", no_argument, NULL, OPT_CALIBRATE},
	{"topology", no_argument, NULL, OPT_TOPOLOGY},
	{"sm-limit", no_argument, NULL, OPT_SM_LIMIT},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"all-tasks", no_argument, NULL, 'a'},
	{"launched", no_argument, NULL, OPT_LAUNCHED},
	{"force", no_argument, NULL, OPT_FORCE},
	{"channels", required_argument, NULL, OPT_CHANNELS},
	{"sm-count", required_argument, NULL, OPT_SM_COUNT},
	{"priority", required_argument, NULL, OPT_PRIORITY},
	{"guard", required_argument, NULL, OPT_GUARD},
	{"no-lend", no_argument, NULL, OPT_NO_LEND},
	{"yield", required_argument, NULL, OPT_YIELD},
	{"agent", no_argument, NULL, OPT_AGENT},
	{"hold", required_argument, NULL, OPT_HOLD},
	{"poll", required_argument, NULL, OPT_POLL},
	{"idle-exit", required_argument, NULL, OPT_IDLE_EXIT},
	{"across-users", no_argument, NULL, OPT_ACROSS_USERS},
	{"svg", required_argument, NULL, OPT_SVG},
	{"metrics", no_argument, NULL, OPT_METRICS},
	{"exporter", required_argument, NULL, OPT_EXPORTER},
	{"help-all", no_argument, NULL, OPT_HELP_ALL},
	{"mem", required_argument, NULL, OPT_MEM},
	{"mem-exclusive", no_argument, NULL, OPT_MEM_EXCLUSIVE}, {NULL, 0, NULL, 0},
};

/* --gpu GPU or GPU=MASK into o. */
static void gpu_option(struct options *o, char *arg)
{
	char *eq = strchr(arg, '=');

	if (o->part.n_gpus == NVT_MAX_GPUS)
		bad_usage("too many --gpu options");
	if (eq == arg || (eq && !eq[1]) || !*arg)
		bad_usage("--gpu takes GPU or GPU=MASK (GPU: a number or a UUID)");
	if (o->part.n_gpus && !!eq != o->part.gpu_masks)
		bad_usage("give every --gpu a mask (GPU=MASK) or none");
	o->part.gpu_masks = !!eq;
	if (eq)
		*eq = '\0';
	o->part.gpus[o->part.n_gpus].gpu = arg;
	o->part.gpus[o->part.n_gpus++].mask = eq ? eq + 1 : NULL;
}

/* --mem SIZE or GPU=SIZE into o (SIZE is read against each GPU's memory later). */
static void mem_option(struct options *o, char *arg)
{
	char *eq = strchr(arg, '=');

	if (o->mem.n == NVT_MAX_GPUS)
		bad_usage("too many --mem options");
	if (!*arg || eq == arg || (eq && !eq[1]))
		bad_usage("--mem takes SIZE or GPU=SIZE (SIZE: bytes with K, M, G or T, or a share "
			  "of the GPU such as 50%)");
	if (eq)
		*eq = '\0';
	o->mem.arg[o->mem.n].gpu = eq ? arg : NULL;
	o->mem.arg[o->mem.n++].size = eq ? eq + 1 : arg;
}

/* -n COUNT and --strategy S into o. */
static void count_option(struct options *o, int c, const char *arg)
{
	unsigned long v;

	if (c == 'n') {
		if (number_arg(arg, 1, NVT_MAX_TPCS, &v))
			bad_usage("-n takes a TPC count from 1 to 256");
		o->part.count = (unsigned)v;
	} else if (nvt_strategy_parse(arg, &o->part.strategy)) {
		hint_bad_word("--strategy takes packed, spread or clusters", arg);
	}
}

/* --wait[=TIMEOUT] into o: TIMEOUT seconds, 1 to a year; none: no end. */
static void wait_option(struct options *o, const char *arg)
{
	unsigned long v = 0;

	if (arg && number_arg(arg, 1, 366ul * 86400, &v))
		bad_usage("--wait=TIMEOUT takes seconds from 1 to 31622400 (--wait alone waits with "
			  "no end)");
	o->wait_given = 1;
	o->wait_s = (unsigned)v;
}

/* Reads the options into o; *strategy_given: --strategy was. Returns optind.
 * (over 80 lines: a case for each option, as getopt_long's table lists them) */
static int parse_options(int argc, char **argv, struct options *o, int *strategy_given)
{
	int c;

	opterr = 0; /* hint_option_error says what is wrong, in our words */
	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, long_options, NULL)) != -1) {
		switch (c) {
		case 'a': o->all_tasks = 1; break;
		case OPT_LAUNCHED: o->launched_only = 1; break;
		case OPT_FORCE: o->mps_force = 1; break;
		case 'c': o->part.tpc_list = 1; break;
		case 'g': o->part.gpc_list = 1; break;
		case 'p': o->pid_mode = 1; break;
		case 'l': o->list_mode = 1; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_NO_MPS: o->no_mps = 1; break;
		case OPT_MPS: o->mps_action = optarg; break;
		case 'n': count_option(o, c, optarg); break;
		case OPT_STRATEGY:
			count_option(o, c, optarg);
			*strategy_given = 1;
			break;
		case OPT_EXCLUDE: o->part.exclude_running = 1; break;
		case OPT_WAIT: wait_option(o, optarg); break;
		case OPT_MEMORY_HALF:
			o->part.memory_half_given = 1;
			if (!strcmp(optarg, "auto"))
				o->part.memory_half = NVT_HALF_UNKNOWN;
			else if (!strcmp(optarg, "0") || !strcmp(optarg, "1"))
				o->part.memory_half = optarg[0] - '0';
			else
				bad_usage("--memory-half takes 0, 1 or auto");
			break;
		case OPT_GPU: gpu_option(o, optarg); break;
		case OPT_MEM: mem_option(o, optarg); break;
		case OPT_MEM_EXCLUSIVE: o->mem.exclusive = 1; break;
		case OPT_CALIBRATE: o->calibrate = 1; break;
		case OPT_TOPOLOGY: o->topology = 1; break;
		case OPT_SM_LIMIT: o->sm_limit = 1; break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case OPT_CHANNELS:
			if (nvt_channels_parse(optarg, &o->channels))
				bad_usage("--channels takes a count of channels from 1 to 32, or default");
			break;
		case OPT_SM_COUNT:
			if (!*optarg || nvt_sm_count_parse(optarg, &o->sm_count))
				hint_bad_word("--sm-count takes partition, follow, gpu or fit", optarg);
			o->sm_count_given = 1;
			break;
		case OPT_PRIORITY:
			o->prio_given = 1;
			if (nvt_prio_parse_given(optarg, &o->prio))
				hint_bad_word("--priority takes high, normal, low or none", optarg);
			break;
		case OPT_GUARD: o->guard = prio_number("--guard", optarg, 1, NVT_MAX_TPCS); break;
		case OPT_NO_LEND: o->no_lend = 1; break;
		case OPT_YIELD: {
			char why[200], message[300];
			o->yield_option = 1;
			if (nvt_yield_parse(optarg, &o->yield, why, sizeof(why))) {
				snprintf(message, sizeof(message), "--yield '%s': %s", optarg, why);
				bad_usage(message);
			}
			/* --yield default: what leaving --yield out does */
			o->yield_given = !nvt_prio_yield_default_alone(&o->yield);
			break;
		}
		case OPT_AGENT: o->agent = 1; break;
		case OPT_HOLD: o->hold_ms = prio_number("--hold", optarg, 1, 3600000); break;
		case OPT_POLL: o->poll_us = prio_number("--poll", optarg, 50, 1000000); break;
		case OPT_IDLE_EXIT: o->idle_exit_s = prio_number("--idle-exit", optarg, 1, 86400); break;
		case OPT_ACROSS_USERS: o->across_users = 1; break;
		case OPT_SVG: o->svg_file = optarg; break;
		case OPT_METRICS: o->metrics = 1; break;
		case OPT_EXPORTER: o->exporter = optarg; break;
		case 'h':
		case OPT_HELP_ALL:
		case 'V':
			o->info = o->info ? o->info : c;
			break;
		default: hint_option_error(argc, argv);
		}
	}
	return optind;
}

/* Refuses priority options where they do not belong (docs/priorities.md). */
static void check_prio_options(const struct options *o)
{
	if (o->agent && (o->pid_mode || o->list_mode || o->mps_action || o->calibrate || o->topology ||
			 o->dry_run || o->prio_given || o->no_lend || o->part.n_gpus || o->part.count ||
			 o->part.tpc_list || o->part.gpc_list || o->sm_limit || o->no_mps || o->json))
		bad_usage("--agent takes only --guard, --hold, --poll, --idle-exit and --across-users");
	if ((o->hold_ms || o->poll_us || o->idle_exit_s || o->across_users) && !o->agent)
		bad_usage("--hold, --poll, --idle-exit and --across-users go with --agent");
	if ((o->guard || o->no_lend) && !o->prio_given && !o->agent)
		bad_usage("--guard and --no-lend go with --priority");
	if (o->yield_option && (!o->prio_given || o->prio == NVT_PRIO_NONE))
		bad_usage("--yield goes with --priority high, normal or low");
	if (o->prio_given && o->prio == NVT_PRIO_NONE && !o->pid_mode)
		bad_usage("--priority none goes with -p (a task started without --priority has none)");
	if (o->prio_given && (o->list_mode || o->mps_action || o->calibrate || o->topology))
		bad_usage("--priority goes with starting a command or with -p");
	if (o->prio_given && o->prio == NVT_PRIO_NONE && (o->guard || o->no_lend))
		bad_usage("--priority none takes no --guard or --no-lend");
	if (o->prio_given && o->all_tasks)
		bad_usage("--priority goes with -p for one task (not -a)");
	/* Before anything starts or changes: the agent the priority needs would not run. */
	prio_check_settings(o);
}

/* Refuses what does not go with the viewers' options (docs/observability.md). */
static void check_view_options(const struct options *o)
{
	int others = o->pid_mode || o->list_mode || o->mps_action || o->calibrate || o->topology ||
		     o->agent || o->dry_run || o->prio_given || o->part.tpc_list || o->part.gpc_list ||
		     o->part.count || o->part.n_gpus || o->no_mps || o->sm_limit || o->json ||
		     o->channels || o->sm_count_given || o->all_tasks || o->launched_only;

	if (o->metrics + (o->exporter != NULL) > 1)
		bad_usage("--metrics and --exporter exclude each other");
	if ((o->metrics || o->exporter) && (others || o->svg_file))
		bad_usage("--metrics and --exporter take no other option");
	if (o->svg_file && (!o->list_mode || o->json || o->launched_only))
		bad_usage("--svg goes with -l, and draws every task (no --json, no --launched)");
}

/* Refuses options that exclude each other or go with another mode. */
static void check_options(struct options *o, int strategy_given)
{
	const char *viewer = o->list_mode ? "-l" : o->mps_action ? "--mps" :
			     o->calibrate || o->topology ? "--topology and --calibrate" : NULL;

	if (o->part.tpc_list + o->part.gpc_list + (o->part.count > 0) > 1)
		bad_usage("-c, -g and -n exclude each other");
	if (o->pid_mode + o->list_mode + (o->mps_action != NULL) + (o->calibrate || o->topology) > 1)
		bad_usage("-p, -l, --mps and --topology/--calibrate exclude each other");
	/* What only a start or -p uses would be taken and ignored. */
	if (viewer && (o->part.tpc_list || o->part.gpc_list || o->part.count || o->no_mps)) {
		char message[200];
		snprintf(message, sizeof(message),
			 "%s take%s no -c, -g, -n or --no-mps: they go with starting a command, "
			 "and -c, -g and -n with -p too%s",
			 viewer, o->list_mode || o->mps_action ? "s" : "",
			 o->list_mode ? " (-l shows every task's TPCs as lists)" : "");
		bad_usage(message);
	}
	if (o->no_mps && o->pid_mode)
		bad_usage("--no-mps goes with starting a command: a running task keeps the MPS "
			  "server it started with");
	/* What prints no JSON would take --json and ignore it (a start takes it: its standard error
	 * then carries JSON documents only, its text warnings left out). */
	if (o->json && o->mps_action && strcmp(o->mps_action, "status"))
		bad_usage("--json goes with --mps status: --mps start and stop print no JSON");
	if ((strategy_given || o->part.exclude_running || o->part.memory_half_given) && !o->part.count)
		bad_usage("--strategy, --exclude-running and --memory-half go with -n");
	if (o->wait_given && (!o->part.count || !o->part.exclude_running || o->pid_mode || viewer ||
			      o->dry_run))
		bad_usage("--wait goes with starting a command with -n N --exclude-running");
	if (o->part.gpu_masks && o->part.count)
		bad_usage("-n picks TPCs itself: give --gpu GPU without a mask");
	if (o->sm_limit && nvt_sm_limit_strategy(strategy_given, &o->part.strategy) && o->part.count)
		bad_usage("--sm-limit cannot go with --strategy spread: MPS's limit on top of a "
			  "partition that takes a few TPCs of every GPC leaves most of them idle "
			  "(on an H100, 4 of 16 SMs)");
	if (o->sm_limit && o->no_mps)
		bad_usage("--sm-limit works through MPS: it cannot go with --no-mps");
	if (o->sm_limit && (o->pid_mode || viewer))
		bad_usage("--sm-limit goes with starting a command");
	if (o->channels && (o->pid_mode || viewer))
		bad_usage("--channels goes with starting a command");
	if (o->sm_count_given && (o->pid_mode || viewer))
		bad_usage("--sm-count goes with starting a command: a running program keeps what it was told");
	if (o->dry_run && (o->pid_mode || viewer))
		bad_usage("--dry-run goes with starting a command");
	if (o->mem.n && viewer)
		bad_usage("--mem goes with starting a command or with -p");
	if (o->mem.exclusive && (!o->mem.n || !o->part.count || !o->part.exclude_running))
		bad_usage("--mem-exclusive goes with --mem and -n COUNT --exclude-running: the claim "
			  "it checks");
	if ((o->list_mode || o->mps_action) && o->part.n_gpus)
		bad_usage("-l and --mps take no --gpu");
	if (o->all_tasks && !o->pid_mode)
		bad_usage("-a goes with -p");
	if (o->launched_only && !o->list_mode)
		bad_usage("--launched goes with -l");
	if (o->mps_force && !(o->mps_action && !strcmp(o->mps_action, "stop")))
		bad_usage("--force goes with --mps stop");
	check_prio_options(o);
	check_view_options(o);
}

/* ---- The words after the options: -p's and a start's ------------------------ */

/* The command line after the options: the words from first on (n of them). */
struct words {
	int argc, first, n;
	char **argv;
};

/* 1 if text parses as MASK (as a list with -c or -g). */
static int mask_parses(const struct options *o, const char *text)
{
	struct nvt_tpcset set;
	int rc = o->part.tpc_list || o->part.gpc_list ? nvt_parse_list(text, NVT_MAX_TPCS, &set) :
							 nvt_parse_mask(text, NVT_MAX_TPCS, &set);

	return rc == NVT_PARSE_OK;
}

/* In a check only (hint_checking_only): MASK's syntax; the GPU's TPCs are checked where it is
 * used. */
static void check_mask_syntax(const struct options *o, const char *text)
{
	if (!mask_parses(o, text))
		bad_usage("MASK does not parse");
}

/* What the options say of the words after them (core/cmdline.h). */
static struct nvt_words_form words_form(const struct options *o)
{
	struct nvt_words_form f = {
		.mask_in_options = o->part.count || o->part.gpu_masks,
		.mask_as_list = o->part.tpc_list || o->part.gpc_list,
		.gpus_no_mask = o->part.n_gpus && !o->part.gpu_masks,
		.prio = o->prio_given || o->mem.n,
		.dry_run = o->dry_run,
	};
	return f;
}

/* The usage error for a rc of nvt_cmdline_start or nvt_cmdline_pid (none for NVT_WORDS_OK). */
static void words_usage(int rc)
{
	static const char *const what[] = {
		[-NVT_WORDS_NO_COMMAND] = "no command given",
		[-NVT_WORDS_NOTHING] = "no mask and no command given",
		[-NVT_WORDS_NO_PID] = "no PID given",
		[-NVT_WORDS_TOO_MANY] = "too many arguments",
		[-NVT_WORDS_GPU_NEEDS_MASK] = "--gpu GPU with -p needs a MASK",
	};

	if (rc < 0 && -rc < (int)(sizeof(what) / sizeof(what[0])))
		bad_usage(what[-rc]);
}

/* -p [MASK] PID, and with -a its tree. */
static int run_pid(const struct options *o, const struct words *w)
{
	struct nvt_words_form form = words_form(o);
	struct nvt_words at;
	const char *mask_text;
	pid_t pid;

	for (int i = w->first + 1; i < w->argc; i++)
		hint_misplaced(o, w->argv, w->argc, w->first, i, i == w->first + 1 ? "PID" : "an argument");
	words_usage(nvt_cmdline_pid(&form, w->n, &at));
	/* NULL: -p shows; "": the options give the partition. */
	mask_text = at.mask >= 0 ? w->argv[w->first + at.mask] : at.sets ? "" : NULL;
	hint_swapped_pid(w->argc, w->argv, w->first);
	hint_two_pids(o, w->argc, w->argv, w->first);
	pid = pid_arg(w->argv[w->first + at.command]);
	if (o->part.count && o->part.exclude_running)
		claim_timeout_ms(); /* a bad value says so before anything changes */
	if (hint_checking_only) {
		if (mask_text && *mask_text)
			check_mask_syntax(o, mask_text);
		return 0;
	}
	if (o->all_tasks)
		return nvt_cmd_all_tasks(o, pid, mask_text);
	return nvt_cmd_pid(o, pid, mask_text);
}

/* MASK COMMAND, -n COUNT COMMAND, --gpu GPU=MASK COMMAND: a start. */
static int run_start(const struct options *given, const struct words *given_words)
{
	struct options start = *given;
	struct words words = *given_words;
	struct options *o = &start;
	struct words *w = &words;
	struct nvt_words_form form = words_form(o);
	struct nvt_words at;
	int rc = nvt_cmdline_start(&form, w->n, w->argv + w->first, &at);
	int positional = !form.mask_in_options;
	char why[512];

	/* MASK left out (--priority): every TPC, as -c all. */
	if (at.mask_left_out) {
		static char all[] = "all";
		w->argv[--w->first] = all; /* argv[first - 1] is an option's word: ours to reuse */
		o->part.tpc_list = 1;
		o->mask_left_out = 1;
		w->n++;
	}
	/* A MASK that does not parse may be a slip of a first word (-c and -g say a list was
	 * meant: its parser says what is wrong). */
	if (positional && w->n >= 1 && !o->part.tpc_list && !o->part.gpc_list &&
	    !mask_parses(o, w->argv[w->first]))
		hint_first_word(w->argv[w->first]);
	/* After MASK (given unless -n or --gpu GPU=MASK), COMMAND. */
	if (positional && w->n > 1)
		hint_misplaced(o, w->argv, w->argc, w->first, w->first + 1, "COMMAND");
	/* MASK's syntax before COMMAND is looked for (taskset: "failed to parse mask"): a
	 * first word that is no MASK (nvtaskset demo 1) was meant as COMMAND, MASK forgotten. */
	if (positional && w->n >= 1 && !hint_checking_only &&
	    start_mask_syntax(&o->part, w->argv[w->first], why, sizeof(why)))
		cli_errx("%s", why);
	words_usage(rc);
	if (hint_checking_only) {
		if (positional)
			check_mask_syntax(o, w->argv[w->first]);
		return 0;
	}
	return nvt_cmd_run(o, positional ? w->argv[w->first] : "", w->argv + w->first + positional);
}

/* ---- Every way the command is used ------------------------------------------ */

static int is_agent(const struct options *o) { return o->agent; }
static int is_list(const struct options *o) { return o->list_mode && !o->svg_file; }
static int is_svg(const struct options *o) { return o->list_mode && o->svg_file; }
static int is_mps(const struct options *o) { return o->mps_action != NULL; }
static int is_topology(const struct options *o) { return o->topology; }
static int is_calibrate(const struct options *o) { return o->calibrate; }
static int is_metrics(const struct options *o) { return o->metrics; }
static int is_exporter(const struct options *o) { return o->exporter != NULL; }
static int is_pid(const struct options *o) { return o->pid_mode; }

/*
 * One entry for each way the command is used (bpftool's cmds[]): a first word with a parser
 * of its own (nvtaskset top ..., --cdi ...), which main runs on the rest of the line; or a
 * mode that the options select once they are read and checked (check_options lets one be
 * selected, or --topology with --calibrate, which run alike). The man page and --help-all
 * name every word (tests/e2e/usage.sh's usage_every_command_runs reads the table).
 */
struct cmd {
	const char *word; /* the first word, or the option that selects the mode (a start: MASK) */
	/* A first word's: parses and runs its line (argv[0]: "nvtaskset WORD", as getopt's
	 * messages name it); options: its long options, which ours are not (hint.h) */
	int (*main)(int argc, char **argv);
	const struct option *options;
	/* A mode's: 1 if the options select it (NULL: the start, where none does); its run, of
	 * the options alone (takes: the subject of its refusal of any word after them), or of
	 * the options and the words after them (run_words). */
	int (*selected)(const struct options *o);
	int (*run)(const struct options *o);
	const char *takes;
	int (*run_words)(const struct options *o, const struct words *w);
};

/* The first words, then the modes in the order they are tried, the start last. */
static const struct cmd cmds[] = {
	{.word = "top", .main = nvt_cmd_top},
	{.word = "--profile", .main = nvt_cmd_profile, .options = nvt_profile_options},
	{.word = "--plan", .main = nvt_cmd_plan},
	{.word = "--cdi", .main = nvt_cmd_cdi, .options = nvt_cdi_options},
	{.word = "--cdi-hook", .main = nvt_cmd_cdi_hook},
	{.word = "--agent", .selected = is_agent, .run = nvt_cmd_agent, .takes = "--agent takes"},
	{.word = "-l", .selected = is_list, .run = nvt_cmd_list, .takes = "-l takes"},
	{.word = "--svg", .selected = is_svg, .run = nvt_cmd_svg, .takes = "-l takes"},
	{.word = "--mps", .selected = is_mps, .run = nvt_cmd_mps, .takes = "--mps takes"},
	{.word = "--topology", .selected = is_topology, .run = nvt_cmd_topology,
	 .takes = "--topology and --calibrate take"},
	{.word = "--calibrate", .selected = is_calibrate, .run = nvt_cmd_topology,
	 .takes = "--topology and --calibrate take"},
	{.word = "--metrics", .selected = is_metrics, .run = nvt_cmd_metrics, .takes = "--metrics takes"},
	{.word = "--exporter", .selected = is_exporter, .run = nvt_cmd_exporter,
	 .takes = "--exporter takes"},
	{.word = "-p", .selected = is_pid, .run_words = run_pid},
	{.word = "MASK", .run_words = run_start},
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* Runs the mode the options o select, with the words w after them. */
static int run_mode(const struct options *o, const struct words *w)
{
	const struct cmd *c = cmds;
	char message[96];

	while (c->main || (c->selected && !c->selected(o)))
		c++;
	if (c->run_words)
		return c->run_words(o, w);
	if (w->n) {
		snprintf(message, sizeof(message), "%s no further arguments", c->takes);
		bad_usage(message);
	}
	return hint_checking_only ? 0 : c->run(o);
}

/* --help, --help-all or --version (o->info): prints it, before the other options' checks (what
 * they would select does not run). A word after the options is refused, as each mode that
 * takes none refuses one (-l, --topology): it was meant for something. */
static int run_info(const struct options *o, const struct words *w)
{
	const char *name = o->info == 'h' ? "--help" : o->info == 'V' ? "--version" : "--help-all";
	char message[96];

	if (w->n) {
		snprintf(message, sizeof(message), "%s takes no further arguments", name);
		bad_usage(message);
	}
	if (hint_checking_only)
		return 0;
	if (o->info == 'h')
		usage(stdout);
	if (o->info == OPT_HELP_ALL)
		usage_all(stdout);
	printf("nvtaskset " NVT_VERSION_STRING "\n");
	return EXIT_SUCCESS;
}

/* The command line after a first word: options, their checks, and the mode they select. */
static int parse_command_line(int argc, char **argv)
{
	struct options o = {.part.strategy = NVT_PACKED};
	struct words w = {.argc = argc, .argv = argv};
	int strategy_given = 0;

	optind = 0; /* (glibc: from the start again, in a check of a suggestion too) */
	w.first = parse_options(argc, argv, &o, &strategy_given);
	w.n = argc - w.first;
	if (o.info)
		return run_info(&o, &w);
	/* What prints its JSON on stdout prints its errors there too (a start's
	 * stdout is its COMMAND's). */
	if (!hint_checking_only)
		set_json_errors(o.json && (o.pid_mode || o.list_mode || o.dry_run));
	check_options(&o, strategy_given);
	return run_mode(&o, &w);
}

/*
 * At exit, as taskset's: what could not be written to standard output (a
 * full disk, --help >/dev/full) is an error, exit 1; a reader that went away
 * (EPIPE, as of | head) is not.
 */
static void check_stdout(void)
{
	errno = 0;
	if ((fflush(stdout) == 0 && !ferror(stdout)) || errno == EPIPE)
		return;
	if (errno)
		warn("write error");
	else
		warnx("write error");
	_exit(EXIT_FAILURE);
}


int main(int argc, char **argv)
{
	static struct hint_word first_words[N_CMDS];
	struct hint_parser hints = {long_options, SHORT_OPTIONS, first_words, 0, parse_command_line};

	atexit(check_stdout);
	/* A task's maps, read to tell its segment from a rival file (-l, -p, top, the agent,
	 * claims), are read in a child that a stall does not hold (seg/segfile.h). */
	nvt_seg_maps_reader(nvt_proc_maps_bounded);
	for (size_t i = 0; i < N_CMDS; i++)
		if (cmds[i].main)
			first_words[hints.n_words++] = (struct hint_word){cmds[i].word, cmds[i].options};
	hint_setup(&hints);
	for (size_t i = 0; argc > 1 && i < N_CMDS; i++)
		if (cmds[i].main && !strcmp(argv[1], cmds[i].word)) {
			/* Its argv[0], which getopt's messages name: "nvtaskset --cdi". */
			static char name[32];
			snprintf(name, sizeof(name), "nvtaskset %s", cmds[i].word);
			argv[1] = name;
			return cmds[i].main(argc - 1, argv + 1);
		}
	/* A partitioned shell's forked child had a segment before it exec'd us:
	 * the command is no task, and what it starts must not adopt that one. */
	if (nvt_seg_discard_own(nvt_rundir()))
		warn("cannot remove this process's control segment; a COMMAND started "
		     "may keep the partition of the shell it was started from");
	return parse_command_line(argc, argv);
}
