/*
 * main.c - nvtaskset: run a command on, or move a running task to, a set of
 * GPU TPCs. Options and dispatch; each sub-command has a file of its own.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <getopt.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/membw.h"
#include "core/yield.h"
#include "core/mpslog.h"
#include "core/prio.h"
#include "profile.h"

/*
 * Exported (the Makefile links with --export-dynamic-symbol=NVT_CLI_MARKER):
 * a shim inherited from a partitioned shell finds it and stays passive.
 */
__attribute__((visibility("default"), used)) const char nvtaskset_cli[] =
	"nvtaskset " NVT_VERSION_STRING;

/* --help: one string, over 80 lines only by its text. */
static void __attribute__((noreturn)) usage(FILE *out)
{
	fputs("Usage:\n"
	      " nvtaskset [options] MASK COMMAND [ARG...]\n"
	      " nvtaskset [options] -n COUNT COMMAND [ARG...]\n"
	      " nvtaskset [options] -p [MASK] PID\n"
	      " nvtaskset [options] -p -n COUNT PID\n"
	      " nvtaskset [options] --gpu GPU=MASK [--gpu GPU=MASK...] COMMAND [ARG...]\n"
	      " nvtaskset [options] -l\n"
	      " nvtaskset --topology | --calibrate [--gpu GPU]\n"
	      " nvtaskset --mps status|start|stop\n"
	      " nvtaskset --profile [options] COMMAND [ARG...]\n"
	      " nvtaskset --plan [--gpu GPU] [--json] FILE\n"
	      " nvtaskset --agent [--hold MS] [--poll US] [--guard N]\n"
	      "\n"
	      "Run a CUDA program on a set of GPU TPCs (thread processing clusters, two SMs\n"
	      "each), or show or change the TPCs of a running task.\n"
	      "\n"
	      "Options:\n"
	      " -c, --tpc-list        MASK is a list of TPCs, e.g. 0-15,32,40-47:2, or all\n"
	      " -g, --gpc-list        MASK is a list of GPCs (see --topology), or all\n"
	      " -n, --tpcs COUNT      pick COUNT TPCs instead of taking a MASK\n"
	      "     --strategy S      how -n picks: packed (whole GPCs first, the\n"
	      "                       default), spread (evenly over GPCs) or clusters\n"
	      "                       (blocks of 8 TPCs of a GPC; the default with\n"
	      "                       --sm-limit)\n"
	      "     --exclude-running with -n, take only TPCs that no other nvtaskset\n"
	      "                       task holds, every user's (race-free)\n"
	      "     --memory-half H   with -n, pick in memory half H of the GPU (0 or 1,\n"
	      "                       as --topology shows them), or auto: in the half\n"
	      "                       where other tasks hold fewest TPCs (a neighbour\n"
	      "                       in a memory-bound task's half slows it more);\n"
	      "                       --calibrate measures the halves\n"
	      "     --dry-run         print the partition (or -n's pick) a start would\n"
	      "                       give, and start nothing (COMMAND may be left out)\n"
	      "     --gpu GPU[=MASK]  apply MASK only to GPU (a number as nvidia-smi shows\n"
	      "                       it, or a UUID); GPU=MASK gives that GPU its own\n"
	      "                       MASK (repeat for each GPU, and give no other MASK)\n"
	      " -p, --pid             show or change the TPCs of the running task PID\n"
	      "                       (as a list with -c or -g, else as a mask)\n"
	      " -a, --all-tasks       with -p, also every task that descends from PID\n"
	      " -l, --list            list the tasks under nvtaskset, every user's, as a\n"
	      "                       tree: PID, parent, user, GPUs, kernels launched, TPCs\n"
	      "     --launched        with -l, leave out tasks that launched no kernel\n"
	      "     --json            print what -p, -l, --topology, --mps status,\n"
	      "                       --dry-run and -n's pick report as JSON\n"
	      "     --no-mps          run COMMAND outside MPS (no co-running)\n"
	      "     --sm-limit        also limit COMMAND's MPS share to its partition's, so\n"
	      "                       that it sees (and sizes work for) only its SMs; a\n"
	      "                       later -p cannot give it more than that share; give\n"
	      "                       it whole GPCs (not with --strategy spread)\n"
	      "     --channels N|default  COMMAND's channels (CUDA_DEVICE_MAX_CONNECTIONS,\n"
	      "                       1-32); default: CUDA's own count, which starts as\n"
	      "                       fast as a plain process. 8 keeps an MPS client's\n"
	      "                       streams off 2 shared channels, which serialised\n"
	      "                       them in earlier studies (not on an H100 with\n"
	      "                       driver 580), and costs ~115 ms a start in MPS.\n"
	      "                       A CUDA_DEVICE_MAX_CONNECTIONS already set stays\n"
	      "     --priority LEVEL  high, normal or low: a task yields to tasks of higher\n"
	      "                       priority on its GPU (--yield); with -p: none ends\n"
	      "                       it. At a start, MASK may be left out (all TPCs)\n"
	      "     --yield WORDS     with --priority, how the task yields (default\n"
	      "                       gate,bound,ahead,client): gate (its launches wait\n"
	      "                       while a higher task runs a request), bound[=US]\n"
	      "                       (at most US us of its work in flight beside one,\n"
	      "                       default 1000), ahead[=US] (wait from shortly before\n"
	      "                       a periodic one's request is due), client (MPS\n"
	      "                       client priority below normal), guard (the agent\n"
	      "                       keeps it to --guard TPCs while a higher task\n"
	      "                       launches, and lends it idle ones' TPCs), duty=PCT\n"
	      "                       (wait only for tasks busy at most PCT% of the\n"
	      "                       time, default 50), none\n"
	      "     --guard N         with --priority, the TPCs the task keeps while\n"
	      "                       guarded (implies --yield guard; with --agent: the\n"
	      "                       default for tasks without one, 8)\n"
	      "     --no-lend         with --priority, lend this task's TPCs to nobody\n"
	      "                       while it is idle\n"
	      "     --agent           run the priority agent in the foreground (one per\n"
	      "                       user; root's manages every user's tasks)\n"
	      "     --hold MS         with --agent, a task that launched within MS ms is\n"
	      "                       active (default 5)\n"
	      "     --poll US         with --agent, look at the tasks every US us\n"
	      "                       (default 500)\n"
	      "     --idle-exit S     with --agent, end after S s without a managed task\n"
	      "     --across-users    with root's --agent, let every user's priorities count\n"
	      "                       against every other user's tasks (else only root's\n"
	      "                       and the user's own do)\n"
	      "     --mps ACTION      status, start or stop the MPS control daemon\n"
	      "     --topology        show the GPUs' GPCs, TPCs, SMs and mask bits\n"
	      "     --calibrate       measure the GPUs' TPC maps and memory halves again\n"
	      "                       and cache them\n"
	      " -h, --help            display this help\n"
	      " -V, --version         display version\n"
	      "\n"
	      "MASK is hexadecimal: bit t selects TPC t, e.g. ff is TPCs 0-7. TPC t holds\n"
	      "SMs 2t and 2t+1. MASK applies to every GPU the task uses, each through its\n"
	      "own TPC map. Without --no-mps, nvtaskset starts the MPS control daemon\n"
	      "when none runs, so that tasks on disjoint TPCs run side by side. Each GPU's\n"
	      "TPC map is measured once (under a second on an H100) and cached.\n"
	      "\n"
	      "Examples:\n"
	      " nvtaskset -n 33 --exclude-running ./detector &   two tasks, each on 33\n"
	      " nvtaskset -n 33 --exclude-running ./planner &    TPCs the other does not hold\n"
	      " nvtaskset -g 0-3 ./task          run on GPCs 0-3 (--topology lists them)\n"
	      " nvtaskset -c 0-15 ./task         run on TPCs 0-15\n"
	      " nvtaskset -p 4242                show task 4242's TPCs\n"
	      " nvtaskset -p -c 0-15 4242        move it to TPCs 0-15\n"
	      " nvtaskset -a -p -c 0-15 4242     move it and every task below it\n"
	      " nvtaskset -l                     list the tasks and their TPCs\n"
	      "Options go before MASK (or PID): what follows MASK is COMMAND.\n"
	      "\n"
	      "--profile and --plan are sub-commands with options of their own: see\n"
	      "nvtaskset --profile --help and nvtaskset --plan --help.\n"
	      "\n"
	      "Exit status: 0 on success, 1 on error, 3 when --mps status finds no daemon,\n"
	      "126 if COMMAND cannot be executed, 127 if it is not found.\n"
	      "\n"
	      "See nvtaskset(1).\n",
	      out);
	exit(out == stderr ? EXIT_FAILURE : EXIT_SUCCESS);
}

void bad_usage(const char *what)
{
	warnx("%s", what);
	fprintf(stderr, "Try 'nvtaskset --help' for more information.\n");
	json_error_if_asked(what);
	exit(EXIT_FAILURE);
}

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
	OPT_CHANNELS,
	OPT_PRIORITY,
	OPT_GUARD,
	OPT_NO_LEND,
	OPT_YIELD,
	OPT_AGENT,
	OPT_HOLD,
	OPT_POLL,
	OPT_IDLE_EXIT,
	OPT_ACROSS_USERS,
	OPT_MEMORY_HALF
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
	{"memory-half", required_argument, NULL, OPT_MEMORY_HALF},
	{"gpu", required_argument, NULL, OPT_GPU},
	{"calibrate", no_argument, NULL, OPT_CALIBRATE},
	{"topology", no_argument, NULL, OPT_TOPOLOGY},
	{"sm-limit", no_argument, NULL, OPT_SM_LIMIT},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"all-tasks", no_argument, NULL, 'a'},
	{"launched", no_argument, NULL, OPT_LAUNCHED},
	{"channels", required_argument, NULL, OPT_CHANNELS},
	{"priority", required_argument, NULL, OPT_PRIORITY},
	{"guard", required_argument, NULL, OPT_GUARD},
	{"no-lend", no_argument, NULL, OPT_NO_LEND},
	{"yield", required_argument, NULL, OPT_YIELD},
	{"agent", no_argument, NULL, OPT_AGENT},
	{"hold", required_argument, NULL, OPT_HOLD},
	{"poll", required_argument, NULL, OPT_POLL},
	{"idle-exit", required_argument, NULL, OPT_IDLE_EXIT},
	{"across-users", no_argument, NULL, OPT_ACROSS_USERS}, {NULL, 0, NULL, 0},
};

/* 1 if word is one of our options (as written before MASK); *arg: it takes the next word. */
static int our_option(const char *word, int *arg)
{
	size_t n;

	*arg = 0;
	if (word[0] != '-' || !word[1])
		return 0;
	if (word[1] == '-') {
		n = strcspn(word + 2, "=");
		for (const struct option *l = long_options; l->name; l++)
			if (n && strlen(l->name) == n && !strncmp(l->name, word + 2, n)) {
				*arg = l->has_arg == required_argument && !word[2 + n];
				return 1;
			}
		return 0;
	}
	if (word[1] == 'n') {
		*arg = !word[2];
		return 1;
	}
	return strspn(word + 1, "acgplhV") == strlen(word + 1);
}

/* Appends word to buf (len), quoted for a shell where it needs it. */
static void append_word(char *buf, size_t len, const char *word)
{
	size_t used = strlen(buf);
	int plain = *word && strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789_-./=:,+@%") == strlen(word);

	if (used < len)
		snprintf(buf + used, len - used, plain ? "%s%s" : "%s'%s'", used ? " " : "", word);
}

/*
 * Taskset's rule holds: options end at MASK (or -p's MASK or PID), and what
 * follows MASK is COMMAND. A COMMAND or PID that is one of our options was
 * meant as one: say so, with the command line that does it (exits 1).
 * first: argv's index of the first word after the options; word: the index
 * of the word to check; taken_as: what it is taken as.
 */
static void check_misplaced(const struct options *o, char **argv, int argc, int first, int word,
			    const char *taken_as)
{
	char line[1024] = "", what[64];
	int end = word, arg, opt = 0;

	while (end < argc && our_option(argv[end], &arg)) {
		/* --json meant for -p or --dry-run: its error as JSON too. */
		if (!strcmp(argv[end], "--json") && (o->pid_mode || o->dry_run))
			set_json_errors(1);
		end += 1 + arg, opt = 1;
	}
	if (!opt)
		return;
	end = end > argc ? argc : end;
	append_word(line, sizeof(line), "nvtaskset");
	for (int i = word; i < end; i++)
		append_word(line, sizeof(line), argv[i]);
	for (int i = 1; i < first; i++)
		append_word(line, sizeof(line), argv[i]);
	for (int i = first; i < argc; i++)
		if (i < word || i >= end)
			append_word(line, sizeof(line), argv[i]);
	terminal_text(argv[word], what, sizeof(what));
	{
		char message[1400], shown[1100];
		terminal_text(line, shown, sizeof(shown));
		snprintf(message, sizeof(message),
			 "'%s' after '%s' is taken as %s (options end at the first word that "
			 "is not one, as taskset's do); to give it as an option, put it "
			 "before: %s",
			 what, argv[word - 1], taken_as, shown);
		bad_usage(message);
	}
}

/* --gpu GPU or GPU=MASK into o. */
static void gpu_option(struct options *o, char *arg)
{
	char *eq = strchr(arg, '=');

	if (o->n_gpus == NVT_MAX_GPUS)
		bad_usage("too many --gpu options");
	if (eq == arg || (eq && !eq[1]) || !*arg)
		bad_usage("--gpu takes GPU or GPU=MASK (GPU: a number or a UUID)");
	if (o->n_gpus && !!eq != o->gpu_masks)
		bad_usage("give every --gpu a mask (GPU=MASK) or none");
	o->gpu_masks = !!eq;
	if (eq)
		*eq = '\0';
	o->gpus[o->n_gpus].gpu = arg;
	o->gpus[o->n_gpus++].mask = eq ? eq + 1 : NULL;
}

/* -n COUNT and --strategy S into o. */
static void count_option(struct options *o, int c, const char *arg)
{
	char *end;
	long v;

	if (c == 'n') {
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || *end || end == arg || v < 1 || v > NVT_MAX_TPCS)
			bad_usage("-n takes a TPC count from 1 to 256");
		o->count = (unsigned)v;
	} else if (nvt_strategy_parse(arg, &o->strategy)) {
		bad_usage("--strategy takes packed, spread or clusters");
	}
}

/* Reads the options into o; *strategy_given: --strategy was. Returns optind. */
static int parse_options(int argc, char **argv, struct options *o, int *strategy_given)
{
	int c;

	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, long_options, NULL)) != -1) {
		switch (c) {
		case 'a': o->all_tasks = 1; break;
		case OPT_LAUNCHED: o->launched_only = 1; break;
		case 'c': o->tpc_list = 1; break;
		case 'g': o->gpc_list = 1; break;
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
		case OPT_EXCLUDE: o->exclude_running = 1; break;
		case OPT_MEMORY_HALF:
			o->memory_half_given = 1;
			if (!strcmp(optarg, "auto"))
				o->memory_half = NVT_HALF_UNKNOWN;
			else if (!strcmp(optarg, "0") || !strcmp(optarg, "1"))
				o->memory_half = optarg[0] - '0';
			else
				bad_usage("--memory-half takes 0, 1 or auto");
			break;
		case OPT_GPU: gpu_option(o, optarg); break;
		case OPT_CALIBRATE: o->calibrate = 1; break;
		case OPT_TOPOLOGY: o->topology = 1; break;
		case OPT_SM_LIMIT: o->sm_limit = 1; break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case OPT_CHANNELS:
			if (nvt_channels_parse(optarg, &o->channels))
				bad_usage("--channels takes a count of channels from 1 to 32, or default");
			break;
		case OPT_PRIORITY:
			o->prio_given = 1;
			if (!strcmp(optarg, "none"))
				o->prio = NVT_PRIO_NONE;
			else if (nvt_prio_parse(optarg, &o->prio))
				bad_usage("--priority takes high, normal, low or none");
			break;
		case OPT_GUARD: o->guard = prio_number("--guard", optarg, 1, NVT_MAX_TPCS); break;
		case OPT_NO_LEND: o->no_lend = 1; break;
		case OPT_YIELD: {
			const char *why;
			char message[200];
			o->yield_given = 1;
			if (nvt_yield_parse(optarg, &o->yield, &why)) {
				snprintf(message, sizeof(message), "--yield '%s': %s", optarg, why);
				bad_usage(message);
			}
			break;
		}
		case OPT_AGENT: o->agent = 1; break;
		case OPT_HOLD: o->hold_ms = prio_number("--hold", optarg, 1, 3600000); break;
		case OPT_POLL: o->poll_us = prio_number("--poll", optarg, 50, 1000000); break;
		case OPT_IDLE_EXIT: o->idle_exit_s = prio_number("--idle-exit", optarg, 1, 86400); break;
		case OPT_ACROSS_USERS: o->across_users = 1; break;
		case 'h': usage(stdout);
		case 'V':
			printf("nvtaskset " NVT_VERSION_STRING "\n");
			exit(EXIT_SUCCESS);
		default:
			fprintf(stderr, "Try 'nvtaskset --help' for more information.\n");
			exit(EXIT_FAILURE);
		}
	}
	return optind;
}

/* Refuses priority options where they do not belong (docs/priorities.md). */
static void check_prio_options(const struct options *o)
{
	if (o->agent && (o->pid_mode || o->list_mode || o->mps_action || o->calibrate || o->topology ||
			 o->dry_run || o->prio_given || o->no_lend || o->n_gpus || o->count ||
			 o->tpc_list || o->gpc_list || o->sm_limit || o->no_mps))
		bad_usage("--agent takes only --guard, --hold, --poll, --idle-exit and --across-users");
	if ((o->hold_ms || o->poll_us || o->idle_exit_s || o->across_users) && !o->agent)
		bad_usage("--hold, --poll, --idle-exit and --across-users go with --agent");
	if ((o->guard || o->no_lend) && !o->prio_given && !o->agent)
		bad_usage("--guard and --no-lend go with --priority");
	if (o->yield_given && (!o->prio_given || o->prio == NVT_PRIO_NONE))
		bad_usage("--yield goes with --priority high, normal or low");
	if (o->prio_given && o->prio == NVT_PRIO_NONE && !o->pid_mode)
		bad_usage("--priority none goes with -p (a task started without --priority has none)");
	if (o->prio_given && (o->list_mode || o->mps_action || o->calibrate || o->topology))
		bad_usage("--priority goes with starting a command or with -p");
	if (o->prio_given && o->prio == NVT_PRIO_NONE && (o->guard || o->no_lend))
		bad_usage("--priority none takes no --guard or --no-lend");
	if (o->prio_given && o->all_tasks)
		bad_usage("--priority goes with -p for one task (not -a)");
}

/* Refuses options that exclude each other or go with another mode. */
static void check_options(struct options *o, int strategy_given)
{
	const char *viewer = o->list_mode ? "-l" : o->mps_action ? "--mps" :
			     o->calibrate || o->topology ? "--topology and --calibrate" : NULL;

	if (o->tpc_list + o->gpc_list + (o->count > 0) > 1)
		bad_usage("-c, -g and -n exclude each other");
	if (o->pid_mode + o->list_mode + (o->mps_action != NULL) + (o->calibrate || o->topology) > 1)
		bad_usage("-p, -l, --mps and --topology/--calibrate exclude each other");
	/* What only a start or -p uses would be taken and ignored. */
	if (viewer && (o->tpc_list || o->gpc_list || o->count || o->no_mps)) {
		char message[200];
		snprintf(message, sizeof(message),
			 "%s take%s no -c, -g, -n or --no-mps: they go with starting a command "
			 "or with -p%s",
			 viewer, o->list_mode || o->mps_action ? "s" : "",
			 o->list_mode ? " (-l shows every task's TPCs as lists)" : "");
		bad_usage(message);
	}
	if ((strategy_given || o->exclude_running || o->memory_half_given) && !o->count)
		bad_usage("--strategy, --exclude-running and --memory-half go with -n");
	if (o->gpu_masks && o->count)
		bad_usage("-n picks TPCs itself: give --gpu GPU without a mask");
	if (o->sm_limit && o->strategy == NVT_SPREAD && o->count)
		bad_usage("--sm-limit cannot go with --strategy spread: MPS's limit on top of a "
			  "partition that takes a few TPCs of every GPC leaves most of them idle "
			  "(on an H100, 4 of 16 SMs)");
	/* MPS's share holds floor(SMs / k) clusters of k SMs; packed picks of
	 * whole GPCs of 18 SMs hold fewer, and libraries size persistent grids
	 * for MPS's count (docs/bench/clusters-2026-11-22/). */
	if (o->sm_limit && !strategy_given)
		o->strategy = NVT_CLUSTERS;
	if (o->sm_limit && o->no_mps)
		bad_usage("--sm-limit works through MPS: it cannot go with --no-mps");
	if (o->sm_limit && (o->pid_mode || viewer))
		bad_usage("--sm-limit goes with starting a command");
	if (o->channels && (o->pid_mode || viewer))
		bad_usage("--channels goes with starting a command");
	if (o->dry_run && (o->pid_mode || viewer))
		bad_usage("--dry-run goes with starting a command");
	if ((o->list_mode || o->mps_action) && o->n_gpus)
		bad_usage("-l and --mps take no --gpu");
	if (o->all_tasks && !o->pid_mode)
		bad_usage("-a goes with -p");
	if (o->launched_only && !o->list_mode)
		bad_usage("--launched goes with -l");
	check_prio_options(o);
}

int main(int argc, char **argv)
{
	struct options o = {.strategy = NVT_PACKED};
	int strategy_given = 0, first, n;

	/* --profile and --plan are sub-commands with options of their own (profile.c). */
	if (argc > 1 && !strcmp(argv[1], "--profile"))
		return nvt_cmd_profile(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--plan"))
		return nvt_cmd_plan(argc - 1, argv + 1);
	/* A partitioned shell's forked child had a segment before it exec'd us:
	 * the command is no task, and what it starts must not adopt that one. */
	if (nvt_seg_discard_own(nvt_rundir()))
		warn("cannot remove this process's control segment; a COMMAND started "
		     "may keep the partition of the shell it was started from");
	first = parse_options(argc, argv, &o, &strategy_given);
	n = argc - first;
	/* What prints its JSON on stdout prints its errors there too (a start's
	 * stdout is its COMMAND's). */
	set_json_errors(o.json && (o.pid_mode || o.list_mode || o.dry_run));
	check_options(&o, strategy_given);
	if (o.agent) {
		if (n)
			bad_usage("--agent takes no further arguments");
		return nvt_cmd_agent(&o);
	}
	if (o.calibrate || o.topology || o.mps_action || o.list_mode) {
		if (n)
			bad_usage(o.list_mode ? "-l takes no further arguments" :
				  o.mps_action ? "--mps takes no further arguments" :
				  "--topology and --calibrate take no further arguments");
		return o.list_mode ? nvt_cmd_list(&o) : o.mps_action ? nvt_cmd_mps(&o) :
		       nvt_cmd_topology(&o);
	}
	if (o.pid_mode) {
		for (int i = first + 1; i < argc; i++)
			check_misplaced(&o, argv, argc, first, i, i == first + 1 ? "PID" : "an argument");
		if (n < 1 || n > (o.count || o.gpu_masks ? 1 : 2))
			bad_usage(n ? "too many arguments" : "no PID given");
		if (n == 1 && o.n_gpus && !o.gpu_masks && !o.count)
			bad_usage("--gpu GPU with -p needs a MASK");
		return nvt_cmd_pid(&o, n, argv + first);
	}
	/* With a priority, MASK may be left out: the task's own partition is then
	 * the whole GPU (or what the environment gives), as without nvtaskset. A
	 * first word that is no mask is the COMMAND. */
	if (o.prio_given && !o.count && !o.gpu_masks && !o.tpc_list && !o.gpc_list && n >= 1) {
		struct nvt_tpcset probe;
		if (n == 1 || nvt_parse_mask(argv[first], NVT_MAX_TPCS, &probe) != 0) {
			static char all[] = "all";
			argv[--first] = all; /* argv[first - 1] is an option's word: ours to reuse */
			o.tpc_list = 1;
			n++;
		}
	}
	/* After MASK (given unless -n or --gpu GPU=MASK), COMMAND. */
	if (!o.count && !o.gpu_masks && n > 1)
		check_misplaced(&o, argv, argc, first, first + 1, "COMMAND");
	if ((o.count || o.gpu_masks) && n < 1 && !o.dry_run)
		bad_usage("no command given");
	if (!o.count && !o.gpu_masks && n < (o.dry_run ? 1 : 2))
		bad_usage(n ? "no command given" : "no mask and no command given");
	return nvt_cmd_run(&o, argv + first);
}
