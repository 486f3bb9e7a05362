/*
 * profile.c - nvtaskset --profile: runs a command on partitions of several
 * sizes, in fresh processes and interleaved rounds, and reports its time (or
 * a number it prints) against the TPC count, and the smallest size within a
 * slowdown bound. Each run is this very command started as
 * `nvtaskset [--no-mps] [--mem BYTES] --gpu G -c LIST COMMAND...`, so it meets
 * exactly what a user's start meets (MPS, the shim, the channels, a GPU
 * memory limit).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hint.h"
#include "core/memlimit.h"
#include "core/profile.h"
#include "os/child.h"
#include "profile.h"
#include "os/clock.h"

#define MAX_SIZES 64
#define OUT_KEEP 65536 /* the tail of a run's output that is kept */

struct profile_opts {
	unsigned rounds;
	double timeout_s;
	double slowdown;
	const char *metric; /* regular expression, or NULL: wall-clock ms */
	regex_t metric_re;
	int higher_is_better;
	enum nvt_strategy strategy;
	const char *gpu;
	int no_mps;
	int json;
	int hog;
	const char *plot;
	const char *sizes_text;
	const char *mem_text;  /* --mem SIZE, or NULL */
	char mem_bytes[24];    /* its bytes on the GPU, as each run's --mem */
	uint64_t mem_limit;    /* the same, 0 without --mem */
	char **command;
};

/* One run's result. */
struct run_result {
	int ok;
	double value;
	char why[200];
};


static void __attribute__((noreturn)) profile_usage(FILE *out)
{
	fputs("Usage:\n"
	      " nvtaskset --profile [options] COMMAND [ARG...]\n"
	      "\n"
	      "Run COMMAND again and again on partitions of several sizes (fresh processes,\n"
	      "interleaved rounds) and report its time against the TPC count, and the\n"
	      "smallest partition within a slowdown of the best.\n"
	      "\n"
	      "Options:\n"
	      "     --sizes LIST      TPC counts to try, e.g. 8-64:8,66, at most 64 (default:\n"
	      "                       eight sizes from an eighth of the GPU to all of it)\n"
	      "     --rounds N        runs of each size (default 3, at most 64)\n"
	      "     --timeout S       seconds a run may take before it is killed (default 300)\n"
	      "     --slowdown PCT    the bound the pick must meet, in percent (default 5)\n"
	      "     --metric REGEX    take the value from COMMAND's output: the last match of\n"
	      "                       REGEX (extended), its first group if it has one, read\n"
	      "                       as a number (default: the run's wall-clock time in ms)\n"
	      "     --higher-is-better  the metric is a rate (e.g. images/s), not a time\n"
	      "     --strategy S      how each size's TPCs are picked: packed (default),\n"
	      "                       spread or clusters (as -n)\n"
	      "     --gpu GPU         the GPU to profile on (default 0)\n"
	      "     --mem SIZE        run each step under a GPU memory limit of SIZE (as a\n"
	      "                       start's --mem: K, M, G, T or 50% of the GPU)\n"
	      "     --beside-hog      also run each size beside a memory-bandwidth hog on\n"
	      "                       every other TPC of the GPU, and report the slowdown\n"
	      "     --no-mps          run outside MPS\n"
	      "     --json            print every measurement as JSON\n"
	      "     --plot FILE       write the curve as an SVG image to FILE\n"
	      " -h, --help            display this help\n"
	      "\n"
	      "Example:\n"
	      "  nvtaskset --profile --sizes 4-66:4 --metric 'step ([0-9.]+) ms' python3 train.py\n"
	      "\n"
	      "See nvtaskset(1), PROFILING.\n",
	      out);
	exit(out == stderr ? EXIT_FAILURE : EXIT_SUCCESS);
}

static double parse_number(const char *text, const char *what, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !(v >= lo && v <= hi)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "--profile: %s takes a number from %g to %g, not '%s'", what,
			 lo, hi, text);
		bad_usage(msg);
	}
	return v;
}

enum { O_SIZES = 256, O_ROUNDS, O_TIMEOUT, O_SLOW, O_METRIC, O_HIGHER, O_STRATEGY, O_GPU,
       O_HOG, O_NOMPS, O_JSON, O_PLOT, O_MEM };
const struct option nvt_profile_options[] = {
	{"sizes", required_argument, NULL, O_SIZES},
	{"rounds", required_argument, NULL, O_ROUNDS},
	{"timeout", required_argument, NULL, O_TIMEOUT},
	{"slowdown", required_argument, NULL, O_SLOW},
	{"metric", required_argument, NULL, O_METRIC},
	{"higher-is-better", no_argument, NULL, O_HIGHER},
	{"strategy", required_argument, NULL, O_STRATEGY},
	{"gpu", required_argument, NULL, O_GPU},
	{"beside-hog", no_argument, NULL, O_HOG},
	{"no-mps", no_argument, NULL, O_NOMPS},
	{"json", no_argument, NULL, O_JSON},
	{"plot", required_argument, NULL, O_PLOT},
	{"mem", required_argument, NULL, O_MEM},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void parse_profile_options(int argc, char **argv, struct profile_opts *p)
{
	int c, help = 0;

	*p = (struct profile_opts){.rounds = 3, .timeout_s = 300, .slowdown = 0.05,
				   .strategy = NVT_PACKED, .gpu = "0"};
	usage_names("nvtaskset --profile");
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", nvt_profile_options, NULL)) != -1) {
		switch (c) {
		case O_SIZES: p->sizes_text = optarg; break;
		case O_ROUNDS:
			p->rounds = (unsigned)parse_number(optarg, "--rounds", 1, NVT_PROFILE_MAX_ROUNDS);
			if (p->rounds != parse_number(optarg, "--rounds", 1, NVT_PROFILE_MAX_ROUNDS))
				bad_usage("--profile: --rounds takes a whole number");
			break;
		case O_TIMEOUT: p->timeout_s = parse_number(optarg, "--timeout", 0.1, 86400); break;
		case O_SLOW: p->slowdown = parse_number(optarg, "--slowdown", 0, 1000) / 100; break;
		case O_METRIC:
			p->metric = optarg;
			if (regcomp(&p->metric_re, optarg, REG_EXTENDED))
				bad_usage("--profile: --metric is not a valid extended regular expression");
			break;
		case O_HIGHER: p->higher_is_better = 1; break;
		case O_STRATEGY:
			if (nvt_strategy_parse(optarg, &p->strategy))
				hint_bad_word("--strategy takes packed, spread or clusters", optarg);
			break;
		case O_GPU: p->gpu = optarg; break;
		case O_HOG: p->hog = 1; break;
		case O_NOMPS: p->no_mps = 1; break;
		case O_JSON: p->json = 1; break;
		case O_PLOT: p->plot = optarg; break;
		case O_MEM: p->mem_text = optarg; break;
		case 'h': help = 1; break; /* once every option is known, as with taskset */
		default: {
			const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
			const char *near = !optopt && !strncmp(word, "--", 2) ?
				hint_near_option(word + 2, strcspn(word + 2, "="), nvt_profile_options, NULL, 0) :
				NULL;
			if (near)
				fprintf(stderr, "nvtaskset --profile: did you mean '--%s'?\n", near);
			fprintf(stderr, "Try 'nvtaskset --profile --help' for more information.\n");
			exit(EXIT_FAILURE);
		}
		}
	}
	if (help)
		profile_usage(stdout);
	if (p->higher_is_better && !p->metric)
		bad_usage("--profile: --higher-is-better goes with --metric (wall-clock time is "
			  "lower-is-better)");
	if (optind >= argc)
		bad_usage("--profile: no command given");
	if (argv[optind][0] == '-')
		fprintf(stderr, "nvtaskset: note: profiling the command '%s'; options of --profile "
			"go before COMMAND\n", argv[optind]);
	p->command = argv + optind;
}

/* The sizes to try: the user's list, or eight steps up to the whole GPU. */
static unsigned profile_sizes(const struct profile_opts *p, unsigned n_tpcs, unsigned *sizes)
{
	struct nvt_tpcset set;
	unsigned n = 0;

	if (p->sizes_text) {
		int rc = nvt_parse_list(p->sizes_text, n_tpcs + 1, &set);
		if (rc == NVT_PARSE_RANGE) {
			char msg[160];
			snprintf(msg, sizeof(msg), "--profile: --sizes names more TPCs than the GPU has "
				 "(%u)", n_tpcs);
			bad_usage(msg);
		}
		if (rc || nvt_set_has(&set, 0))
			bad_usage("--profile: --sizes takes a list of TPC counts from 1 up, e.g. "
				  "8-64:8,66");
		if (nvt_set_count(&set) > MAX_SIZES) {
			char msg[160];
			snprintf(msg, sizeof(msg), "--profile: --sizes names %u sizes; it takes at most %d "
				 "(e.g. 2-66:2)", nvt_set_count(&set), MAX_SIZES);
			bad_usage(msg);
		}
	} else {
		nvt_set_clear(&set);
		for (unsigned i = 1; i <= 8; i++)
			nvt_set_add(&set, (n_tpcs * i + 7) / 8);
	}
	for (unsigned t = 1; t <= n_tpcs && n < MAX_SIZES; t++)
		if (nvt_set_has(&set, t))
			sizes[n++] = t;
	return n;
}

/* The metric's value in out: the last match, its first group if any. */
static int metric_value(const struct profile_opts *p, const char *out, double *value)
{
	regmatch_t m[2];
	const char *at = out, *found = NULL;
	size_t found_len = 0;

	while (*at && !regexec(&p->metric_re, at, 2, m, at == out ? 0 : REG_NOTBOL)) {
		int g = m[1].rm_so >= 0 ? 1 : 0;
		found = at + m[g].rm_so;
		found_len = (size_t)(m[g].rm_eo - m[g].rm_so);
		at += m[0].rm_eo > m[0].rm_so ? m[0].rm_eo : m[0].rm_so + 1;
		if (at > out + strlen(out))
			break;
	}
	if (!found) 
		return -1;
	char text[128];
	if (found_len >= sizeof(text))
		found_len = sizeof(text) - 1;
	memcpy(text, found, found_len);
	text[found_len] = '\0';
	return nvt_first_number(text, value);
}

/* argv for one run: nvtaskset [--no-mps] [--mem BYTES] --gpu G -c LIST COMMAND... */
static char **run_argv(const struct profile_opts *p, const char *list, char **command, char *self)
{
	size_t n = 0, k = 0;
	char **argv;

	while (command[n])
		n++;
	argv = calloc(n + 10, sizeof(*argv));
	if (!argv)
		cli_err("out of memory");
	argv[k++] = self;
	if (p->no_mps)
		argv[k++] = "--no-mps";
	if (p->mem_limit && command == p->command) { /* (the hog, a neighbour, has none) */
		argv[k++] = "--mem";
		argv[k++] = (char *)p->mem_bytes;
	}
	argv[k++] = "--gpu";
	argv[k++] = (char *)p->gpu;
	argv[k++] = "-c";
	argv[k++] = (char *)list;
	memcpy(argv + k, command, (n + 1) * sizeof(*argv));
	return argv;
}

/* In the child: nvtaskset itself, on argv. */
static void exec_self(void *ctx, int out_fd)
{
	(void)out_fd;
	execv("/proc/self/exe", ctx);
	_exit(127);
}

/* Runs COMMAND once on list; its wall-clock time or metric in r. */
static void run_once(const struct profile_opts *p, const char *list, struct run_result *r)
{
	static char out[OUT_KEEP];
	char **argv = run_argv(p, list, p->command, "nvtaskset");
	/* In a process group of its own, output and errors kept (their tail),
	 * ended whole on timeout and once it ends. */
	struct nvt_child c = {.fn = exec_self, .ctx = argv, .output = out, .output_len = sizeof(out),
			      .flags = NVT_CHILD_GROUP | NVT_CHILD_REAP | NVT_CHILD_STDOUT |
				       NVT_CHILD_STDERR_OUT | NVT_CHILD_TAIL,
			      .timeout_ms = (int)(p->timeout_s * 1000)};
	double t0 = nvt_clock_s(), t1;
	size_t len;
	int rc, status;

	memset(r, 0, sizeof(*r));
	rc = nvt_child_run(&c);
	t1 = nvt_clock_s();
	free(argv);
	if (rc == NVT_CHILD_ESYS)
		cli_err("cannot start a run");
	if (rc == NVT_CHILD_TIMEOUT) {
		snprintf(r->why, sizeof(r->why), "timed out after %g s", p->timeout_s);
		return;
	}
	len = c.got;
	status = c.status;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		const char *last = out + len;
		while (last > out && (last[-1] == '\n'))
			last--;
		while (last > out && last[-1] != '\n')
			last--;
		snprintf(r->why, sizeof(r->why), "%s %d: %.120s",
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), last);
		r->why[strcspn(r->why, "\n")] = '\0';
		return;
	}
	if (!p->metric) {
		r->value = (t1 - t0) * 1000;
		r->ok = 1;
	} else if (metric_value(p, out, &r->value) == 0) {
		r->ok = 1;
	} else {
		snprintf(r->why, sizeof(r->why), "its output has no match of --metric");
	}
}

/* The hog (nvtaskset-hog, beside the shim) on list, in the background: stop it
 * with nvt_child_stop. */
static void start_hog(const struct profile_opts *p, const char *list, const char *uuid,
		      struct nvt_child *hog)
{
	static char hog_path[PATH_MAX];
	char *hog_cmd[] = {hog_path, (char *)uuid, NULL};
	char **argv;

	if (!hog_path[0] && find_lib_file("nvtaskset-hog", hog_path, sizeof(hog_path)))
		cli_errx("--profile: cannot find nvtaskset-hog in %s", hog_path);
	argv = run_argv(p, list, hog_cmd, "nvtaskset");
	memset(hog, 0, sizeof(*hog));
	hog->fn = exec_self;
	hog->ctx = argv;
	hog->flags = NVT_CHILD_GROUP; /* output to /dev/null */
	hog->timeout_ms = INT32_MAX;
	if (nvt_child_start(hog) != NVT_CHILD_OK)
		cli_err("cannot start nvtaskset-hog");
	free(argv); /* the child has its copy */
	usleep(200000); /* let it start streaming before the run */
}

struct profile_run {
	struct profile_opts *p;
	struct nvt_gpu_topology gpu;
	unsigned n_sizes;
	struct nvt_profile_size sizes[MAX_SIZES];
	struct nvt_profile_size hog[MAX_SIZES]; /* beside the hog, with --beside-hog */
	char lists[MAX_SIZES][NVT_LIST_TEXT_MAX];
	char rest[MAX_SIZES][NVT_LIST_TEXT_MAX];
	int pick, hog_pick;
	char uuid[48];
};

static void record(struct nvt_profile_size *s, const struct run_result *r, FILE *log,
		   const char *what)
{
	if (r->ok && s->n < NVT_PROFILE_MAX_ROUNDS)
		s->value[s->n++] = r->value;
	else if (!r->ok) {
		s->failed++;
		fprintf(log, "nvtaskset: --profile: a run on %u TPCs%s failed: %s\n", s->tpcs, what,
			r->why);
	}
}

static void measure(struct profile_run *pr)
{
	const struct profile_opts *p = pr->p;
	FILE *log = stderr;
	struct run_result r;

	/* One run first, not counted: MPS's start, calibration, caches. */
	run_once(p, pr->lists[pr->n_sizes - 1], &r);
	for (unsigned round = 0; round < p->rounds; round++) {
		for (unsigned k = 0; k < pr->n_sizes; k++) {
			unsigned i = (k + round) % pr->n_sizes; /* a new order each round */
			run_once(p, pr->lists[i], &r);
			record(&pr->sizes[i], &r, log, "");
			if (p->hog && pr->rest[i][0]) {
				struct nvt_child hog;
				start_hog(p, pr->rest[i], pr->uuid, &hog);
				run_once(p, pr->lists[i], &r);
				nvt_child_stop(&hog);
				record(&pr->hog[i], &r, log, " beside the hog");
			}
		}
		if (!p->json)
			fprintf(log, "nvtaskset: --profile: round %u of %u done\n", round + 1, p->rounds);
	}
}

/* --mem SIZE on the profiled GPU: said wrong before any run, as a start says it. */
static void profile_mem(struct profile_run *pr)
{
	struct profile_opts *p = pr->p;
	uint8_t uuid[16];
	char why[512], bad[400];
	uint64_t total = 0;

	if (!nvt_uuid_parse(pr->uuid, uuid))
		total = gpu_memory(uuid, why, sizeof(why));
	if (nvt_memlimit_parse(p->mem_text, total, &p->mem_limit, bad, sizeof(bad)))
		cli_errx("--profile: --mem on GPU %d (%s): %s", pr->gpu.index, pr->uuid, bad);
	snprintf(p->mem_bytes, sizeof(p->mem_bytes), "%llu", (unsigned long long)p->mem_limit);
}

static void prepare(struct profile_run *pr)
{
	struct profile_opts *p = pr->p;
	unsigned sizes[MAX_SIZES];
	struct nvt_tpcset all;
	int index = resolve_gpu(p->gpu);

	pr->gpu = load_gpu(index, 0);
	nvt_gpu_read_halves(&pr->gpu);
	snprintf(pr->uuid, sizeof(pr->uuid), "%s", machine_gpus()->id[index].uuid);
	if (p->mem_text)
		profile_mem(pr);
	nvt_topo_all(&pr->gpu.topo, &all);
	pr->n_sizes = profile_sizes(p, pr->gpu.topo.n_tpcs, sizes);
	if (!pr->n_sizes)
		bad_usage("--profile: no size to try");
	for (unsigned i = 0; i < pr->n_sizes; i++) {
		/* The pick of -n, --plan and Slurm, on the whole GPU. */
		struct nvt_pick want = {.count = sizes[i], .strategy = p->strategy};
		struct nvt_tpcset set, rest;
		if (nvt_pick_tpcs(&pr->gpu.topo, &want, &all, &set))
			cli_errx("--profile: cannot pick %u TPCs on GPU %d", sizes[i], index);
		nvt_set_andnot(&rest, &all, &set);
		nvt_format_list(&set, pr->lists[i], sizeof(pr->lists[i]));
		nvt_format_list(&rest, pr->rest[i], sizeof(pr->rest[i]));
		pr->sizes[i] = (struct nvt_profile_size){.tpcs = sizes[i]};
		pr->hog[i] = (struct nvt_profile_size){.tpcs = sizes[i]};
	}
}

int nvt_cmd_profile(int argc, char **argv)
{
	static struct profile_run pr;
	struct profile_opts p;

	parse_profile_options(argc, argv, &p);
	set_json_errors(p.json);
	pr.p = &p;
	prepare(&pr);
	/* The daemon the runs join, started (and said so) as a start does; none (said so):
	 * they run without MPS. */
	if (!p.no_mps && !ensure_mps(0, NULL, 0))
		p.no_mps = 1;
	measure(&pr);
	nvt_profile_summarise(pr.sizes, pr.n_sizes, p.higher_is_better);
	pr.pick = nvt_profile_pick(pr.sizes, pr.n_sizes, p.slowdown);
	pr.hog_pick = -1;
	if (p.hog) {
		/* Beside the hog, against the best alone: what the neighbour costs. */
		int best = -1;
		for (unsigned i = 0; i < pr.n_sizes; i++)
			if (pr.sizes[i].n && (best < 0 || pr.sizes[i].ratio < pr.sizes[best].ratio))
				best = (int)i;
		nvt_profile_summarise(pr.hog, pr.n_sizes, p.higher_is_better);
		for (unsigned i = 0; best >= 0 && i < pr.n_sizes; i++)
			if (pr.hog[i].n)
				pr.hog[i].ratio = p.higher_is_better ? pr.sizes[best].median / pr.hog[i].median
								     : pr.hog[i].median / pr.sizes[best].median;
		pr.hog_pick = nvt_profile_pick(pr.hog, pr.n_sizes, p.slowdown);
	}
	profile_report(&pr.gpu, &p.metric, pr.sizes, p.hog ? pr.hog : NULL, pr.lists, pr.n_sizes,
		       pr.pick, pr.hog_pick, &(struct profile_report_opts){
				.json = p.json, .slowdown = p.slowdown, .rounds = p.rounds,
				.higher_is_better = p.higher_is_better, .command = p.command,
				.strategy = p.strategy, .no_mps = p.no_mps, .mem_limit = p.mem_limit});
	if (p.plot)
		profile_plot(p.plot, pr.sizes, p.hog ? pr.hog : NULL, pr.n_sizes, pr.pick,
			     p.metric ? "value" : "ms");
	if (p.metric)
		regfree(&p.metric_re);
	return pr.pick >= 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
