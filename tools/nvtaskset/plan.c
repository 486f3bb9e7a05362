/*
 * plan.c - nvtaskset --plan FILE: do these tasks fit on one GPU, and on
 * which partitions? Each task names the JSON its `nvtaskset --profile
 * --json` printed, and a bound (a slowdown, or a deadline in the curve's
 * unit); its size is the fewest TPCs that meet the bound (beside the hog,
 * when the profile measured that: the conservative curve), and partitions
 * are picked whole GPCs first, higher priorities first.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "profile.h"
#include "core/claim.h"
#include "core/prio.h"

#define PLAN_MAX_TASKS 64
#define PLAN_FILE_MAX (1 << 20)

struct plan_task {
	char name[64];
	char profile[512];
	char bound_text[64];
	struct nvt_bound bound;
	uint8_t priority; /* enum nvt_prio: NVT_PRIO_LOW, _NORMAL (the default) or _HIGH */
	int beside_hog; /* the size came from the curve beside the hog */
	unsigned needs;
	struct nvt_tpcset tpcs;
	int placed;
};

/* Reads the whole of path (at most PLAN_FILE_MAX bytes) into a new string. */
static char *slurp(const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(PLAN_FILE_MAX + 1);
	if (!buf)
		cli_err("out of memory");
	n = fread(buf, 1, PLAN_FILE_MAX + 1, f);
	fclose(f);
	if (n > PLAN_FILE_MAX) {
		snprintf(why, len, "%s is larger than %d bytes", path, PLAN_FILE_MAX);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* One line "NAME PROFILE.json BOUND [PRIORITY]"; 0 = a task, 1 = blank, -1 = bad. */
static int parse_line(char *line, struct plan_task *t, char *why, size_t len)
{
	char *field[5];
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (char *save = NULL, *f = strtok_r(line, " \t", &save); f; f = strtok_r(NULL, " \t", &save)) {
		if (n == 5)
			break;
		field[n++] = f;
	}
	if (!n)
		return 1;
	if (n < 3 || n > 4) {
		snprintf(why, len, "a task is 'NAME PROFILE.json BOUND [PRIORITY]'");
		return -1;
	}
	memset(t, 0, sizeof(*t));
	if (strlen(field[0]) >= sizeof(t->name) || strlen(field[1]) >= sizeof(t->profile) ||
	    strlen(field[2]) >= sizeof(t->bound_text)) {
		snprintf(why, len, "a field is too long");
		return -1;
	}
	strcpy(t->name, field[0]);
	strcpy(t->profile, field[1]);
	strcpy(t->bound_text, field[2]);
	if (nvt_bound_parse(field[2], &t->bound)) {
		snprintf(why, len, "bound '%s' is not slowdown=PCT%% or deadline=VALUE", field[2]);
		return -1;
	}
	t->priority = NVT_PRIO_NORMAL;
	if (n == 4 && nvt_prio_parse(field[3], &t->priority)) {
		snprintf(why, len, "priority '%s' is not high, normal or low", field[3]);
		return -1;
	}
	return 0;
}

/* The TPCs task t needs, from its profile. */
static int size_task(struct plan_task *t, unsigned gpu_tpcs, char *why, size_t len)
{
	static struct nvt_profile_size alone[64], hog[64];
	char *text = slurp(t->profile, why, len);
	int n_alone, n_hog, pick;

	if (!text)
		return -1;
	n_alone = nvt_profile_parse_json(text, "sizes", alone, 64);
	n_hog = nvt_profile_parse_json(text, "beside_hog", hog, 64);
	free(text);
	if (n_alone <= 0) {
		snprintf(why, len, "%s is not the JSON of nvtaskset --profile --json", t->profile);
		return -1;
	}
	if (n_hog > 0 && t->bound.kind == NVT_BOUND_SLOWDOWN) {
		/* Beside the hog, against the best alone: the neighbour's cost counts. */
		double best = 0;
		for (int i = 0; i < n_alone; i++)
			if (alone[i].n && (best == 0 || alone[i].median < best))
				best = alone[i].median;
		struct nvt_bound deadline = {NVT_BOUND_DEADLINE, best * (1 + t->bound.value)};
		for (int i = 0; i < n_hog; i++)
			hog[i].max = hog[i].median; /* the slowdown bounds medians */
		pick = nvt_profile_needed(hog, (size_t)n_hog, &deadline);
		if (pick >= 0) {
			t->needs = hog[pick].tpcs;
			t->beside_hog = 1;
		}
	} else if (n_hog > 0) {
		pick = nvt_profile_needed(hog, (size_t)n_hog, &t->bound);
		if (pick >= 0) {
			t->needs = hog[pick].tpcs;
			t->beside_hog = 1;
		}
	}
	if (!t->needs) {
		pick = nvt_profile_needed(alone, (size_t)n_alone, &t->bound);
		if (pick < 0) {
			snprintf(why, len, "no size of %s meets %s", t->profile, t->bound_text);
			return -1;
		}
		t->needs = alone[pick].tpcs;
	}
	if (t->needs > gpu_tpcs) {
		snprintf(why, len, "it needs %u TPCs and the GPU has %u", t->needs, gpu_tpcs);
		return -1;
	}
	return 0;
}

static int by_priority(const void *a, const void *b)
{
	const struct plan_task *x = a, *y = b;
	if (x->priority != y->priority)
		return (int)y->priority - (int)x->priority;
	return (int)y->needs - (int)x->needs;
}

/* --plan --json: whether the tasks (t, n) fit, with how many TPCs spare, and where each goes. */
static void print_plan_json(const struct nvt_gpu_topology *gpu, const struct plan_task *t, int n,
			    int fits, unsigned spare)
{
	char list[NVT_LIST_TEXT_MAX];
	struct json_object *doc = jsonout_document(), *tasks = jsonout_array();

	jsonout_add_int(doc, "gpu", gpu->index);
	jsonout_add_uint(doc, "gpu_tpcs", gpu->topo.n_tpcs);
	jsonout_add_bool(doc, "fits", fits);
	jsonout_add_uint(doc, "spare_tpcs", spare);
	jsonout_add(doc, "tasks", tasks);
	for (int i = 0; i < n; i++) {
		struct json_object *task = jsonout_object();
		jsonout_append(tasks, task);
		jsonout_add_text(task, "name", t[i].name);
		jsonout_add_text(task, "priority", nvt_prio_name(t[i].priority));
		jsonout_add_uint(task, "needs", t[i].needs);
		jsonout_add_bool(task, "beside_hog", t[i].beside_hog);
		if (t[i].placed)
			nvt_format_list(&t[i].tpcs, list, sizeof(list));
		jsonout_add_text(task, "tpcs", t[i].placed ? list : NULL);
	}
	jsonout_print(stdout, doc);
}

static void print_plan(const struct nvt_gpu_topology *gpu, struct plan_task *t, int n, int fits,
		       unsigned spare, int json)
{
	char list[NVT_LIST_TEXT_MAX];
	int starred = 0;

	if (json) {
		print_plan_json(gpu, t, n, fits, spare);
		return;
	}
	printf("GPU %d (%u TPCs): %s", gpu->index, gpu->topo.n_tpcs,
	       fits ? "the tasks fit" : "the tasks do NOT fit");
	if (fits)
		printf(", %u TPCs spare", spare);
	printf("\n%-16s %-8s %6s  %s\n", "TASK", "PRIO", "NEEDS", "PARTITION (-c)");
	for (int i = 0; i < n; i++) {
		if (t[i].placed)
			nvt_format_list(&t[i].tpcs, list, sizeof(list));
		printf("%-16s %-8s %6u%s %s\n", t[i].name, nvt_prio_name(t[i].priority), t[i].needs,
		       t[i].beside_hog ? "*" : " ", t[i].placed ? list : "(no room)");
		starred |= t[i].beside_hog;
	}
	if (starred) /* the footnote of a star shown */
		printf("* sized by its curve beside a bandwidth hog\n");
}

int nvt_cmd_plan(int argc, char **argv)
{
	static struct plan_task tasks[PLAN_MAX_TASKS], task;
	static const struct option longopts[] = {
		{"gpu", required_argument, NULL, 'G'}, {"json", no_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
	};
	const char *gpu_arg = "0";
	int json = 0, c, n = 0, fits = 1, lineno = 0;
	char why[600], *text, *next, *line;
	struct nvt_gpu_topology gpu;
	struct nvt_tpcset free_tpcs;

	optind = 1;
	usage_names("nvtaskset --plan");
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'G')
			gpu_arg = optarg;
		else if (c == 'J')
			json = 1;
		else if (c == 'h') {
			printf("Usage: nvtaskset --plan [--gpu GPU] [--json] FILE\n\n"
			       "Say whether the tasks of FILE fit on one GPU, and on which partitions.\n"
			       "Each line of FILE: NAME PROFILE.json BOUND [PRIORITY], where PROFILE.json\n"
			       "is what `nvtaskset --profile --json` printed for the task, BOUND is\n"
			       "slowdown=PCT%% or deadline=VALUE (in the profile's unit), PRIORITY high,\n"
			       "normal (default) or low. See nvtaskset(1), PROFILING.\n");
			return EXIT_SUCCESS;
		} else {
			hint_sub_usage("--plan takes [--gpu GPU] [--json] FILE", argc, argv, longopts);
		}
	}
	set_json_errors(json);
	if (argc - optind != 1)
		bad_usage("--plan takes one FILE");
	text = slurp(argv[optind], why, sizeof(why));
	if (!text)
		cli_errx("--plan: %s", why);
	gpu = load_gpu(resolve_gpu(gpu_arg), 0);
	/* Line by line, blank ones counted (the numbers in messages are the editor's). */
	for (next = text; (line = strsep(&next, "\n"));) {
		int rc;
		lineno++;
		rc = parse_line(line, &task, why, sizeof(why));
		if (rc < 0)
			cli_errx("--plan: %s, line %d: %s", argv[optind], lineno, why);
		if (rc)
			continue; /* a blank line or a comment: no task */
		if (n == PLAN_MAX_TASKS)
			cli_errx("--plan: %s has more than %d tasks", argv[optind], PLAN_MAX_TASKS);
		if (size_task(&task, gpu.topo.n_tpcs, why, sizeof(why)))
			cli_errx("--plan: task %s: %s", task.name, why);
		tasks[n++] = task;
	}
	free(text);
	if (!n)
		cli_errx("--plan: %s names no task", argv[optind]);
	qsort(tasks, (size_t)n, sizeof(tasks[0]), by_priority);
	nvt_topo_all(&gpu.topo, &free_tpcs);
	for (int i = 0; i < n; i++) {
		struct nvt_pick want = {.count = tasks[i].needs, .strategy = NVT_PACKED};
		if (nvt_pick_tpcs(&gpu.topo, &want, &free_tpcs, &tasks[i].tpcs)) {
			fits = 0;
			continue;
		}
		tasks[i].placed = 1;
		nvt_set_andnot(&free_tpcs, &free_tpcs, &tasks[i].tpcs);
	}
	print_plan(&gpu, tasks, n, fits, nvt_set_count(&free_tpcs), json);
	return fits ? EXIT_SUCCESS : EXIT_FAILURE;
}
