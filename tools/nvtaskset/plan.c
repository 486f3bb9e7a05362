/*
 * plan.c - nvtaskset --plan FILE: do these tasks fit on one GPU, and on
 * which partitions? Each task names the JSON its `nvtaskset --profile
 * --json` printed, and a bound (a slowdown, or a deadline in the curve's
 * unit); its size is the fewest TPCs that meet the bound (beside the hog,
 * when the profile measured that: the conservative curve), and partitions
 * are picked whole GPCs first, higher priorities first. A task's GPU memory
 * limit (mem=SIZE on its line, else the one its profile ran under) is
 * placed with its partition: the limits given must fit in the GPU's memory,
 * as --mem-exclusive holds them.
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
#include "partition.h"
#include "core/claim.h"
#include "core/json.h"
#include "core/memlimit.h"
#include "core/prio.h"
#include "core/text.h"

#define PLAN_MAX_TASKS 64
#define PLAN_FILE_MAX (1 << 20)

struct plan_task {
	char name[64];
	char profile[512];
	char bound_text[64];
	struct nvt_bound bound;
	uint8_t priority; /* enum nvt_prio: NVT_PRIO_LOW, _NORMAL (the default) or _HIGH */
	char mem_text[32]; /* mem=SIZE's SIZE, or "" */
	uint64_t mem_limit; /* its GPU memory limit, bytes; 0: none */
	int beside_hog; /* the size came from the curve beside the hog */
	unsigned needs;
	struct nvt_tpcset tpcs;
	int placed;
	int no_memory; /* its TPCs fit, its memory limit did not */
};

/* What the plan's GPU has left, and what it has. */
struct plan_gpu {
	const struct nvt_gpu_topology *gpu;
	uint64_t memory;       /* its memory, bytes (0: not known) */
	uint64_t memory_given; /* the limits placed on it */
	int limited;           /* a task has a limit */
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

/* One line "NAME PROFILE.json BOUND [PRIORITY] [mem=SIZE]"; 0 = a task, 1 = blank, -1 = bad. */
static int parse_line(char *line, struct plan_task *t, char *why, size_t len)
{
	char *field[6];
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (char *save = NULL, *f = strtok_r(line, " \t", &save); f; f = strtok_r(NULL, " \t", &save)) {
		if (n == 6)
			break;
		field[n++] = f;
	}
	if (!n)
		return 1;
	memset(t, 0, sizeof(*t));
	/* mem=SIZE last, after the priority or in its place */
	if (n >= 4 && !strncmp(field[n - 1], "mem=", 4)) {
		if (strlen(field[n - 1] + 4) >= sizeof(t->mem_text) || !field[n - 1][4]) {
			snprintf(why, len, "'%s' is no memory size", field[n - 1]);
			return -1;
		}
		strcpy(t->mem_text, field[n - 1] + 4);
		n--;
	}
	if (n < 3 || n > 4) {
		snprintf(why, len, "a task is 'NAME PROFILE.json BOUND [PRIORITY] [mem=SIZE]'");
		return -1;
	}
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

/* The GPU memory limit the profile's runs had (its "memory_limit_bytes"), or 0. */
static uint64_t profiled_limit(const char *text)
{
	size_t len = strlen(text);
	long at = nvt_json_member(text, len, nvt_json_root(text, len), "memory_limit_bytes");
	uint64_t bytes = 0;

	if (at < 0 || nvt_json_uint(text, len, (size_t)at, NVT_MEM_LIMIT_MAX, &bytes))
		return 0;
	return bytes;
}

/* The TPCs task t needs, from its profile; its memory limit, from its line or its profile. */
static int size_task(struct plan_task *t, unsigned gpu_tpcs, uint64_t gpu_mem, char *why,
		     size_t len)
{
	static struct nvt_profile_size alone[64], hog[64];
	char *text = slurp(t->profile, why, len), bad[400];
	int n_alone, n_hog, pick;

	if (!text)
		return -1;
	n_alone = nvt_profile_parse_json(text, "sizes", alone, 64);
	n_hog = nvt_profile_parse_json(text, "beside_hog", hog, 64);
	t->mem_limit = profiled_limit(text);
	free(text);
	if (t->mem_text[0] && nvt_memlimit_parse(t->mem_text, gpu_mem, &t->mem_limit, bad, sizeof(bad)))
		return nvt_why(why, len, "mem=%s: %s", t->mem_text, bad);
	if (gpu_mem && t->mem_limit > gpu_mem) {
		char want[NVT_MEM_TEXT_MAX], has[NVT_MEM_TEXT_MAX];
		return nvt_why(why, len, "its profile ran under a GPU memory limit of %s, more than "
			       "the GPU has (%s): give it mem=SIZE",
			       nvt_memlimit_format(t->mem_limit, want, sizeof(want)),
			       nvt_memlimit_format(gpu_mem, has, sizeof(has)));
	}
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

/* The GPU's line: "GPU 0 (66 TPCs): the tasks fit, 8 TPCs spare[, 16G of its 80G memory spare]". */
static void print_head(const struct plan_gpu *pg, int fits, unsigned spare)
{
	char left[NVT_MEM_TEXT_MAX], has[NVT_MEM_TEXT_MAX];

	printf("GPU %d (%u TPCs): %s", pg->gpu->index, pg->gpu->topo.n_tpcs,
	       fits ? "the tasks fit" : "the tasks do NOT fit");
	if (fits)
		printf(", %u TPCs spare", spare);
	if (fits && pg->limited && pg->memory)
		printf(", %s of its %s memory spare",
		       nvt_memlimit_format(pg->memory - pg->memory_given, left, sizeof(left)),
		       nvt_memlimit_format(pg->memory, has, sizeof(has)));
	putchar('\n');
}

/* --plan --json: whether the tasks (t, n) fit, with how many TPCs spare, and where each goes. */
static void print_plan_json(const struct plan_gpu *pg, const struct plan_task *t, int n, int fits,
			    unsigned spare)
{
	const struct nvt_gpu_topology *gpu = pg->gpu;
	char list[NVT_LIST_TEXT_MAX];
	struct json_object *doc = jsonout_document(), *tasks = jsonout_array();

	jsonout_add_int(doc, "gpu", gpu->index);
	jsonout_add_uint(doc, "gpu_tpcs", gpu->topo.n_tpcs);
	jsonout_add_bool(doc, "fits", fits);
	jsonout_add_uint(doc, "spare_tpcs", spare);
	jsonout_add_uint_or_null(doc, "gpu_memory_bytes", pg->memory);
	jsonout_add_uint_or_null(doc, "memory_given_bytes", pg->memory_given);
	jsonout_add(doc, "tasks", tasks);
	for (int i = 0; i < n; i++) {
		struct json_object *task = jsonout_object();
		jsonout_append(tasks, task);
		jsonout_add_text(task, "name", t[i].name);
		jsonout_add_text(task, "priority", nvt_prio_name(t[i].priority));
		jsonout_add_uint(task, "needs", t[i].needs);
		jsonout_add_bool(task, "beside_hog", t[i].beside_hog);
		jsonout_add_uint_or_null(task, "memory_limit_bytes", t[i].mem_limit);
		if (t[i].placed)
			nvt_format_list(&t[i].tpcs, list, sizeof(list));
		jsonout_add_text(task, "tpcs", t[i].placed ? list : NULL);
	}
	jsonout_print(stdout, doc);
}

static void print_plan(const struct plan_gpu *pg, struct plan_task *t, int n, int fits,
		       unsigned spare, int json)
{
	char list[NVT_LIST_TEXT_MAX], mem[NVT_MEM_TEXT_MAX];
	int starred = 0;

	if (json) {
		print_plan_json(pg, t, n, fits, spare);
		return;
	}
	print_head(pg, fits, spare);
	printf("%-16s %-8s %6s  %s%s\n", "TASK", "PRIO", "NEEDS", pg->limited ? "MEM     " : "",
	       "PARTITION (-c)");
	for (int i = 0; i < n; i++) {
		if (t[i].placed)
			nvt_format_list(&t[i].tpcs, list, sizeof(list));
		printf("%-16s %-8s %6u%s ", t[i].name, nvt_prio_name(t[i].priority), t[i].needs,
		       t[i].beside_hog ? "*" : " ");
		if (pg->limited)
			printf("%-7s ", t[i].mem_limit ? nvt_memlimit_format(t[i].mem_limit, mem,
									       sizeof(mem)) : "-");
		printf("%s\n", t[i].placed ? list : t[i].no_memory ? "(no memory)" : "(no room)");
		starred |= t[i].beside_hog;
	}
	if (starred) /* the footnote of a star shown */
		printf("* sized by its curve beside a bandwidth hog\n");
}

/* Places tasks (n, in order) whole GPCs first, each where its TPCs and its memory limit
 * still fit; free_tpcs gets what is left. Returns 1 if every task was placed. */
static int place(struct plan_gpu *pg, struct plan_task *tasks, int n, struct nvt_tpcset *free_tpcs)
{
	int fits = 1;

	nvt_topo_all(&pg->gpu->topo, free_tpcs);
	for (int i = 0; i < n; i++) {
		struct nvt_pick want = {.count = tasks[i].needs, .strategy = NVT_PACKED};
		if (nvt_pick_tpcs(&pg->gpu->topo, &want, free_tpcs, &tasks[i].tpcs)) {
			fits = 0;
			continue;
		}
		/* Its limit beside those placed before it (a task without one counts nothing). */
		if (tasks[i].mem_limit && pg->memory &&
		    !nvt_memlimit_has_room(pg->memory, pg->memory_given, tasks[i].mem_limit)) {
			tasks[i].no_memory = 1;
			fits = 0;
			continue;
		}
		pg->memory_given += tasks[i].mem_limit;
		tasks[i].placed = 1;
		nvt_set_andnot(free_tpcs, free_tpcs, &tasks[i].tpcs);
	}
	return fits;
}

/* GPU index's memory in bytes, 0 where it is not known (limits are then not summed). */
static uint64_t plan_gpu_memory(int index)
{
	uint8_t uuid[16];
	char why[512];

	if (nvt_uuid_parse(machine_gpus()->id[index].uuid, uuid))
		return 0;
	return gpu_memory(uuid, why, sizeof(why));
}

int nvt_cmd_plan(int argc, char **argv)
{
	static struct plan_task tasks[PLAN_MAX_TASKS], task;
	static const struct option longopts[] = {
		{"gpu", required_argument, NULL, 'G'}, {"json", no_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
	};
	const char *gpu_arg = "0";
	int json = 0, c, n = 0, fits, lineno = 0, help = 0;
	char why[600], *text, *next, *line;
	struct nvt_gpu_topology gpu;
	struct plan_gpu pg = {.gpu = &gpu};
	struct nvt_tpcset free_tpcs;

	optind = 1;
	usage_names("nvtaskset --plan");
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'G')
			gpu_arg = optarg;
		else if (c == 'J')
			json = 1;
		else if (c == 'h')
			help = 1; /* once every option is known: an unknown one beside it is an error */
		else
			hint_sub_usage("--plan takes [--gpu GPU] [--json] FILE", argc, argv, longopts);
	}
	if (help) {
		printf("Usage: nvtaskset --plan [--gpu GPU] [--json] FILE\n\n"
		       "Say whether the tasks of FILE fit on one GPU, and on which partitions.\n"
		       "Each line of FILE: NAME PROFILE.json BOUND [PRIORITY] [mem=SIZE], where\n"
		       "PROFILE.json is what `nvtaskset --profile --json` printed for the task,\n"
		       "BOUND is slowdown=PCT%% or deadline=VALUE (in the profile's unit),\n"
		       "PRIORITY high, normal (default) or low, SIZE its GPU memory limit (as\n"
		       "--mem's; default: the one its profile ran under), which must fit beside\n"
		       "the others' in the GPU's memory. See nvtaskset(1), PROFILING.\n");
		return EXIT_SUCCESS;
	}
	set_json_errors(json);
	if (argc - optind != 1)
		bad_usage("--plan takes one FILE");
	text = slurp(argv[optind], why, sizeof(why));
	if (!text)
		cli_errx("--plan: %s", why);
	gpu = load_gpu(resolve_gpu(gpu_arg), 0);
	pg.memory = plan_gpu_memory(gpu.index);
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
		if (size_task(&task, gpu.topo.n_tpcs, pg.memory, why, sizeof(why)))
			cli_errx("--plan: task %s: %s", task.name, why);
		pg.limited |= task.mem_limit != 0;
		tasks[n++] = task;
	}
	free(text);
	if (!n)
		cli_errx("--plan: %s names no task", argv[optind]);
	qsort(tasks, (size_t)n, sizeof(tasks[0]), by_priority);
	fits = place(&pg, tasks, n, &free_tpcs);
	print_plan(&pg, tasks, n, fits, nvt_set_count(&free_tpcs), json);
	return fits ? EXIT_SUCCESS : EXIT_FAILURE;
}
