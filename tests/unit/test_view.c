/*
 * test_view.c - what a view says (src/view/viewcalc.c, viewmetrics.c), on
 * views made by hand: a GPU's map (holders by partition, borrowed TPCs,
 * overlaps), the state words (any state a shim publishes, by its name), the
 * rates between two views (a reused PID is another task), a task's slots one a
 * GPU, and the metrics (families once, labels escaped, every state of the
 * table, each series once).
 *
 * Over 500 lines on purpose: one fixture serves every part of the view, whose cases share it
 * (a split would repeat the view made by hand).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "check.h"
#include "core/promtext.h"
#include "core/tpcset.h"
#include "core/yield.h"
#include "view/view.h"

#define MAX 80

/* A view of one GPU of 16 TPCs in 2 GPCs, with room for MAX tasks of one slot each. */
struct fixture {
	struct nvt_view v;
	struct nvt_view_task tasks[MAX];
	struct nvt_view_slot slots[MAX];
};

static void view_init(struct fixture *f)
{
	struct nvt_view_gpu *g = &f->v.gpus[0];

	memset(f, 0, sizeof(*f));
	f->v.tasks = f->tasks;
	f->v.slots = f->slots;
	f->v.n_gpus = 1;
	g->index = 0;
	snprintf(g->uuid_text, sizeof(g->uuid_text), "GPU-00010203-0405-0607-0809-0a0b0c0d0e84");
	g->uuid[15] = 0x84;
	snprintf(g->model, sizeof(g->model), "Fake \"H100\"");
	g->map_known = 1;
	g->topo.n_tpcs = 16;
	g->topo.n_gpcs = 2;
	for (unsigned t = 0; t < 16; t++)
		g->topo.gpc[t] = (uint8_t)(t / 8);
	f->v.taken_ns = 1000000000ull;
}

/* Adds task pid (ascending) with one slot: own TPCs list, current TPCs now ("" = own). */
static struct nvt_view_slot *add(struct fixture *f, pid_t pid, const char *user, const char *own,
				 const char *now, uint8_t prio)
{
	struct nvt_view_task *t = &f->tasks[f->v.n_tasks];
	struct nvt_view_slot *s = &f->slots[f->v.n_slots];

	t->pid = pid;
	t->start_time = 42;
	t->uid = 1000;
	snprintf(t->user, sizeof(t->user), "%s", user);
	snprintf(t->program, sizeof(t->program), "app");
	snprintf(t->command, sizeof(t->command), "./app --x");
	t->first_slot = f->v.n_slots;
	t->n_slots = 1;
	s->task = f->v.n_tasks++;
	s->gpu = 0;
	s->partitioned = own != NULL;
	if (own) {
		CHECK(nvt_parse_list(own, NVT_MAX_TPCS, &s->own) == NVT_PARSE_OK);
		s->current = s->own;
		if (*now)
			CHECK(nvt_parse_list(now, NVT_MAX_TPCS, &s->current) == NVT_PARSE_OK);
		nvt_set_andnot(&s->borrowed, &s->current, &s->own);
	}
	s->prio.prio = prio;
	f->v.n_slots++;
	return s;
}

static void test_map(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_map *m = malloc(sizeof(*m));
	struct nvt_view_slot *low, *high;

	view_init(f);
	add(f, 100, "alice", "0-3", "", NVT_PRIO_NONE);
	add(f, 101, "alice", "0-3", "", NVT_PRIO_NONE); /* a worker on its launcher's partition */
	high = add(f, 150, "root", "4-7", "", NVT_PRIO_HIGH);
	low = add(f, 200, "bob", "8-11", "4-5,8-11", NVT_PRIO_LOW);
	low->yield.state = NVT_YS_BORROWING;
	add(f, 300, "carol", NULL, "", NVT_PRIO_NONE); /* on every TPC */
	add(f, 400, "dave", "11-12", "", NVT_PRIO_NONE); /* overlaps bob's TPC 11 */
	nvt_view_settle(&f->v);
	nvt_view_map(&f->v, 0, m);
	/* Holders are partitions, lettered by their lowest TPC: the worker is its launcher's. */
	CHECK(m->n_parts == 4);
	CHECK(nvt_view_holder(&f->v, m, 0) == 0 && nvt_view_holder(&f->v, m, 1) == 0);
	CHECK(nvt_view_holder(&f->v, m, 2) == 1 && nvt_view_holder(&f->v, m, 3) == 2);
	CHECK(nvt_view_holder(&f->v, m, 4) == -1); /* not partitioned */
	CHECK(nvt_view_holder(&f->v, m, 5) == 3);
	CHECK(m->n_everywhere == 1);
	CHECK(nvt_view_symbol(m->owner[0]) == 'A' && nvt_view_symbol(m->owner[4]) == 'B');
	CHECK(nvt_view_symbol(m->owner[8]) == 'C' && nvt_view_symbol(m->owner[12]) == 'D');
	CHECK(nvt_view_symbol(m->owner[13]) == '.' && m->owner[15] == NVT_VIEW_FREE);
	CHECK(m->holders[0] == 1 && m->holders[11] == 2 && m->holders[12] == 1); /* the overlap */
	/* Borrowed: TPCs 4-5 by bob's partition (C); nobody borrows the rest. */
	CHECK(m->borrower[4] == 2 && m->borrower[5] == 2 && m->borrower[6] == NVT_VIEW_FREE);
	CHECK(nvt_view_symbol(NVT_VIEW_SHARED) == '*' && nvt_view_symbol(30) == '#');
	/* The GPU's totals; the idle high task lends. */
	CHECK(nvt_set_count(&f->v.gpus[0].working) == 16);
	CHECK(nvt_set_count(&f->v.gpus[0].held) == 13);
	CHECK(nvt_set_count(&f->v.gpus[0].borrowed) == 2);
	CHECK(f->v.gpus[0].tasks == 6);
	/* Another user's task on alice's very TPCs is a holder of its own: an overlap. */
	f->tasks[add(f, 500, "mallory", "0-3", "", NVT_PRIO_NONE)->task].seg_owner = 1001;
	nvt_view_settle(&f->v);
	nvt_view_map(&f->v, 0, m);
	CHECK(m->n_parts == 5 && nvt_view_holder(&f->v, m, 6) == 1);
	CHECK(nvt_view_holder(&f->v, m, 1) == 0 && m->holders[0] == 2 && m->holders[3] == 2);
	CHECK(nvt_view_symbol(m->owner[0]) == 'A' && nvt_view_symbol(m->owner[4]) == 'C');
	CHECK(high->lending == 1);
	CHECK_STR(nvt_view_state_word(high), "lending");
	CHECK_STR(nvt_view_state_word(low), "borrowing");
	CHECK_STR(nvt_view_state_word(&f->slots[0]), "-");
	CHECK_STR(nvt_view_prio_word(low), "low");
	CHECK_STR(nvt_view_prio_word(&f->slots[0]), "");
	free(f);
	free(m);
}

/* With the process trees read: one user's unrelated task on a partition's very TPCs is a
 * holder of its own (an overlap, as -l's Overlap line says); a worker of the same tree, and a
 * task whose priority shares by design, are the partition's. */
static void test_map_trees(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_map *m = malloc(sizeof(*m));
	pid_t tree[MAX] = {100, 100, 102, 103, 104};

	view_init(f);
	add(f, 100, "alice", "0-3", "", NVT_PRIO_NONE);
	add(f, 101, "alice", "0-3", "", NVT_PRIO_NONE); /* its worker (one tree) */
	add(f, 102, "alice", "0-3", "", NVT_PRIO_NONE); /* started on its own: -n picked the same */
	add(f, 103, "alice", "8-11", "", NVT_PRIO_HIGH);
	add(f, 104, "alice", "8-11", "", NVT_PRIO_LOW); /* a lower priority shares by design */
	nvt_view_settle(&f->v);
	nvt_view_map(&f->v, 0, m); /* trees not read: one user's equal TPCs are one holder */
	CHECK(m->n_parts == 2 && nvt_view_holder(&f->v, m, 2) == 0 && m->holders[0] == 1);
	f->v.tree = tree;
	nvt_view_map(&f->v, 0, m);
	CHECK(m->n_parts == 3);
	CHECK(nvt_view_holder(&f->v, m, 0) == 0 && nvt_view_holder(&f->v, m, 1) == 0);
	CHECK(nvt_view_holder(&f->v, m, 2) == 1 && m->holders[0] == 2 && m->holders[3] == 2);
	CHECK(nvt_view_holder(&f->v, m, 3) == 2 && nvt_view_holder(&f->v, m, 4) == 2);
	CHECK(m->holders[8] == 1);
	f->v.tree = NULL;
	free(f);
	free(m);
}

static void test_states(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_slot *s;

	view_init(f);
	s = add(f, 100, "alice", "0-3", "", NVT_PRIO_LOW);
	CHECK_STR(nvt_view_state_word(s), "own"); /* no higher task on its GPU */
	s->yield.state = NVT_YS_GATED;
	CHECK_STR(nvt_view_state_word(s), "gated");
	CHECK(nvt_view_waiting(s));
	s->yield.state = NVT_YS_RUNNING;
	CHECK(!nvt_view_waiting(s));
	/* Every state the shim's table names shows by its name: a state added to the table shows
	 * without a change here. */
	for (unsigned st = 1; st < NVT_YS_STATES; st++) {
		s->yield.state = st;
		CHECK_STR(nvt_view_state_word(s), nvt_yield_state_name(st));
	}
	/* The agent's mode where it moved the task. */
	s->yield.state = NVT_YS_NONE;
	s->prio.mode = NVT_MODE_GUARDED;
	CHECK_STR(nvt_view_state_word(s), "guarded");
	free(f);
}

static void test_rates(void)
{
	struct fixture *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	double lps, wps;

	view_init(a);
	view_init(b);
	add(a, 100, "alice", "0-3", "", NVT_PRIO_LOW)->launches = 100;
	a->slots[0].yield.holds = 10;
	add(a, 200, "bob", "4-7", "", NVT_PRIO_NONE)->launches = 5;
	b->v.taken_ns = a->v.taken_ns + 2000000000ull; /* 2 s later */
	add(b, 100, "alice", "0-3", "", NVT_PRIO_LOW)->launches = 300;
	b->slots[0].yield.holds = 20;
	add(b, 200, "bob", "4-7", "", NVT_PRIO_NONE)->launches = 7;
	b->tasks[1].start_time = 43; /* PID 200 is another process now */
	add(b, 300, "carol", "8-9", "", NVT_PRIO_NONE)->launches = 9;
	nvt_view_rates(&a->v, &b->v, 0, &lps, &wps);
	CHECK(lps == 100 && wps == 5);
	nvt_view_rates(&a->v, &b->v, 1, &lps, &wps);
	CHECK(lps == -1 && wps == -1);
	nvt_view_rates(&a->v, &b->v, 2, &lps, &wps); /* new since, no clock of start times */
	CHECK(lps == -1);
	nvt_view_rates(NULL, &b->v, 0, &lps, &wps);
	CHECK(lps == -1);
	/* Since the task started, where no view before has it: 8 s after boot, at 100 ticks a
	 * second, carol's task (started at tick 500) launched 9 in 3 s. */
	b->v.boot_ns = 8000000000ull;
	b->v.ticks_per_s = 100;
	b->tasks[2].start_time = 500;
	nvt_view_rates(&a->v, &b->v, 2, &lps, &wps);
	CHECK(lps == 3 && wps == 0);
	/* The first view (procps' first frame): alice's since tick 42, 300 in 7.58 s. */
	nvt_view_rates(NULL, &b->v, 0, &lps, &wps);
	CHECK(lps > 39.57 && lps < 39.58 && wps > 2.63 && wps < 2.64);
	/* A task seen before keeps the rate since then; one started after the clock: none. */
	nvt_view_rates(&a->v, &b->v, 0, &lps, &wps);
	CHECK(lps == 100 && wps == 5);
	b->tasks[2].start_time = 900;
	nvt_view_rates(&a->v, &b->v, 2, &lps, &wps);
	CHECK(lps == -1 && wps == -1);
	b->slots[0].launches = 50; /* a counter that went back (never: a new process) */
	nvt_view_rates(&a->v, &b->v, 0, &lps, &wps);
	CHECK(lps == 0);
	CHECK(nvt_view_task_of(&b->v, 300) == &b->tasks[2] && nvt_view_task_of(&b->v, 301) == NULL);
	free(a);
	free(b);
}

/* Which agents the viewers show: those that run, and those a task needs that do not. */
static void test_agents(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_outbuf b = {0};

	view_init(f);
	f->v.agents[0] = (struct nvt_view_agent){.uid = 0, .user = "root"};
	f->v.agents[1] = (struct nvt_view_agent){.uid = 1000, .user = "alice"};
	f->v.n_agents = 2;
	/* Nothing runs, nothing is needed: no agent is shown, no series. */
	CHECK(nvt_view_agent_state(&f->v, 0) == NVT_VIEW_AGENT_IDLE);
	CHECK(nvt_view_agent_state(&f->v, 1) == NVT_VIEW_AGENT_IDLE);
	CHECK(nvt_view_metrics(&f->v, &b) == 0);
	CHECK(strstr(b.text, "# TYPE nvtaskset_agent_up gauge") != NULL);
	CHECK(strstr(b.text, "nvtaskset_agent_up{") == NULL);
	nvt_outbuf_free(&b);
	/* Alice's task needs one: missing, 0. */
	f->v.agents[1].wanted = 1;
	CHECK(nvt_view_agent_state(&f->v, 1) == NVT_VIEW_AGENT_MISSING);
	CHECK(nvt_view_agent_state(&f->v, 0) == NVT_VIEW_AGENT_IDLE);
	CHECK(nvt_view_metrics(&f->v, &b) == 0);
	CHECK(strstr(b.text, "nvtaskset_agent_up{uid=\"1000\",user=\"alice\"} 0\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_agent_up{uid=\"0\"") == NULL);
	nvt_outbuf_free(&b);
	/* Root's agent follows her tasks: nothing missing, root's shown as running. */
	f->v.agents[0].pid = 77;
	CHECK(nvt_view_agent_state(&f->v, 1) == NVT_VIEW_AGENT_IDLE);
	CHECK(nvt_view_agent_state(&f->v, 0) == NVT_VIEW_AGENT_RUNS);
	/* Her own runs: shown, wanted or not. */
	f->v.agents[0].pid = 0;
	f->v.agents[1].pid = 88;
	CHECK(nvt_view_agent_state(&f->v, 1) == NVT_VIEW_AGENT_RUNS);
	f->v.agents[1].wanted = 0;
	CHECK(nvt_view_agent_state(&f->v, 1) == NVT_VIEW_AGENT_RUNS);
	/* Root's own task that needs one, and no agent: root's is missing. */
	f->v.agents[1].pid = 0;
	f->v.agents[0].wanted = 1;
	CHECK(nvt_view_agent_state(&f->v, 0) == NVT_VIEW_AGENT_MISSING);
	free(f);
}

/* The number of lines of text that begin with prefix. */
static int lines_with(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/* 1 if no two samples of text name one series (the same name and labels), else 0. */
static int series_once(const char *text)
{
	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		size_t len = (size_t)(strchr(p, '\n') - p);
		while (len && p[len] != ' ') /* (a sample's line ends " VALUE") */
			len--;
		for (const char *q = strchr(p, '\n') + 1; *p != '#' && *q; q = strchr(q, '\n') + 1)
			if (!strncmp(p, q, len) && q[len] == ' ') {
				fprintf(stderr, "twice: %.*s\n", (int)len, p);
				return 0;
			}
	}
	return 1;
}

static void test_metrics(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_outbuf b = {0};
	struct nvt_view_slot *s;
	char want[400];

	view_init(f);
	s = add(f, 100, "o\"brien", "0-3", "", NVT_PRIO_LOW);
	s->launches = 12345;
	s->yield.holds = 7;
	s->yield.held_ns = 1500000000ull;
	s->yield.state = NVT_YS_STATES - 1; /* the table's last state, whatever it is */
	s->mem_used = 48ull << 20;
	s->mem_limit = 64ull << 20;
	s->mem_refused = 3;
	s = add(f, 200, "bob", NULL, "", NVT_PRIO_NONE);
	s->launches = 1;
	s->mem_used = 4096;
	f->v.agents[0] = (struct nvt_view_agent){.uid = 0, .user = "root", .pid = 77};
	f->v.n_agents = 1;
	snprintf(f->v.mps_pipe_dir, sizeof(f->v.mps_pipe_dir), "/tmp/nvidia-mps");
	f->v.mps_levels[0] = (struct nvt_view_mps_level){.prio = NVT_PRIO_LOW, .pid = 88,
							 .pipe_dir = "/tmp/nvidia-mps-low"};
	f->v.mps_levels[1] = (struct nvt_view_mps_level){.prio = NVT_PRIO_HIGH,
							 .pipe_dir = "/tmp/nvidia-mps-high"};
	f->v.n_mps_levels = 2;
	nvt_view_settle(&f->v);
	CHECK(nvt_view_metrics(&f->v, &b) == 0);
	/* Each family once, before its samples. */
	CHECK(lines_with(b.text, "# TYPE nvtaskset_task_launches_total counter") == 1);
	CHECK(lines_with(b.text, "# TYPE nvtaskset_task_tpcs gauge") == 1);
	CHECK(lines_with(b.text, "nvtaskset_task_tpcs{") == 2);
	/* The user's quote escaped; a task on every TPC counts the GPU's 16. */
	CHECK(strstr(b.text, "pid=\"100\",user=\"o\\\"brien\",command=\"app\"") != NULL);
	CHECK(strstr(b.text, "nvtaskset_task_tpcs{gpu=\"0\",UUID=\"GPU-00010203-0405-0607-0809-"
			     "0a0b0c0d0e84\",pid=\"200\",user=\"bob\",command=\"app\",container=\"\","
			     "slurm_job=\"\",priority=\"\"} 16\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_gpu_info{gpu=\"0\",UUID=\"GPU-00010203-0405-0607-0809-"
			     "0a0b0c0d0e84\",model_name=\"Fake \\\"H100\\\"\"} 1\n") != NULL);
	CHECK(strstr(b.text, "priority=\"low\"} 12345\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_task_wait_seconds_total{") != NULL);
	CHECK(strstr(b.text, "priority=\"low\"} 1.5\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_task_sms{") != NULL);
	/* Waits only for a task with a priority. */
	CHECK(lines_with(b.text, "nvtaskset_task_waits_total{") == 1);
	/* The state: the one the shim publishes is 1, by its table's name; the others 0. */
	snprintf(want, sizeof(want), "priority=\"low\",state=\"%s\"} 1\n",
		 nvt_yield_state_name(NVT_YS_STATES - 1));
	CHECK(strstr(b.text, want) != NULL);
	CHECK(lines_with(b.text, "nvtaskset_task_state{") >= NVT_YS_STATES - 1);
	CHECK(strstr(b.text, "state=\"gated\"} 0\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_gpu_free_tpcs{gpu=\"0\",UUID=\"GPU-00010203-0405-0607-0809-"
			     "0a0b0c0d0e84\"} 12\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_agent_up{uid=\"0\",user=\"root\"} 1\n") != NULL);
	/* The shared daemon's series, priority empty (to Prometheus no label), and each level's. */
	CHECK(strstr(b.text, "nvtaskset_mps_daemon_up{pipe_directory=\"/tmp/nvidia-mps\",priority=\"\"} 0\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_mps_daemon_up{pipe_directory=\"/tmp/nvidia-mps-low\",priority=\"low\"} 1\n") != NULL);
	CHECK(strstr(b.text, "nvtaskset_mps_daemon_up{pipe_directory=\"/tmp/nvidia-mps-high\",priority=\"high\"} 0\n") != NULL);
	CHECK(lines_with(b.text, "nvtaskset_mps_daemon_up{") == 3);
	CHECK(strstr(b.text, "nvtaskset_tasks 2\n") != NULL);
	CHECK(strstr(b.text, "# TYPE nvtaskset_build_info gauge\nnvtaskset_build_info{version=\"" NVT_VERSION_STRING "\"} 1\n") != NULL);
	/* Memory: what each task holds; the limit and refusals only where there is a limit. */
	CHECK(lines_with(b.text, "# TYPE nvtaskset_task_memory_bytes gauge") == 1);
	CHECK(lines_with(b.text, "nvtaskset_task_memory_bytes{") == 2);
	CHECK(strstr(b.text, "slurm_job=\"\",priority=\"\"} 4096\n") != NULL);
	CHECK(lines_with(b.text, "nvtaskset_task_memory_limit_bytes{") == 1);
	CHECK(strstr(b.text, "priority=\"low\"} 67108864\n") != NULL);
	CHECK(strstr(b.text, "priority=\"low\"} 50331648\n") != NULL);
	CHECK(lines_with(b.text, "# TYPE nvtaskset_task_memory_refused_total counter") == 1);
	CHECK(lines_with(b.text, "nvtaskset_task_memory_refused_total{") == 1);
	CHECK(series_once(b.text));
	nvt_outbuf_free(&b);
	free(f);
}

/* A task's user may write two slots of one GPU into her segment (the shim never does): its
 * metrics name each series once (the first slot's), for a second series of the same labels is
 * one that Prometheus' client libraries refuse (node_exporter's textfile collector: "was
 * collected before with the same name and label values"). */
static void test_metrics_one_series_a_gpu(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_outbuf b = {0};
	struct nvt_view_slot *s;

	view_init(f);
	s = add(f, 100, "mallory", "0-3", "", NVT_PRIO_LOW);
	s->launches = 1;
	/* A second slot of task 100, on the same GPU, that says other things. */
	f->slots[1] = *s;
	f->slots[1].launches = 2;
	CHECK(nvt_parse_list("4-7", NVT_MAX_TPCS, &f->slots[1].own) == NVT_PARSE_OK);
	f->slots[1].current = f->slots[1].own;
	f->tasks[0].n_slots = 2;
	f->v.n_slots = 2;
	s = add(f, 200, "bob", NULL, "", NVT_PRIO_NONE);
	s->launches = 5;
	nvt_view_settle(&f->v);
	CHECK(nvt_view_metrics(&f->v, &b) == 0);
	CHECK(lines_with(b.text, "nvtaskset_task_tpcs{") == 2);
	CHECK(lines_with(b.text, "nvtaskset_task_launches_total{") == 2);
	CHECK(strstr(b.text, "pid=\"100\",user=\"mallory\",command=\"app\",container=\"\","
			     "slurm_job=\"\",priority=\"low\"} 1\n") != NULL);
	CHECK(lines_with(b.text, "nvtaskset_task_state{") > 0);
	CHECK(series_once(b.text));
	nvt_outbuf_free(&b);
	free(f);
}

/* A task's segment that names one GPU in two slots is one row on that GPU for every viewer:
 * settling keeps its first slot there (and its slot on another GPU), the tasks after it
 * keeping theirs. */
static void test_settle_one_slot_a_gpu(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_slot *s;

	view_init(f);
	f->v.n_gpus = 2;
	f->v.gpus[1] = f->v.gpus[0];
	f->v.gpus[1].index = 1;
	s = add(f, 100, "mallory", "0-3", "", NVT_PRIO_NONE);
	f->slots[1] = *s; /* GPU 0 again, other TPCs */
	CHECK(nvt_parse_list("4-7", NVT_MAX_TPCS, &f->slots[1].own) == NVT_PARSE_OK);
	f->slots[1].current = f->slots[1].own;
	f->slots[2] = *s; /* GPU 1 */
	f->slots[2].gpu = 1;
	f->slots[3] = f->slots[1]; /* GPU 0 a third time */
	f->tasks[0].n_slots = 4;
	f->v.n_slots = 4;
	add(f, 200, "bob", "8-11", "", NVT_PRIO_NONE);
	nvt_view_settle(&f->v);
	CHECK(f->v.n_slots == 3);
	CHECK(f->tasks[0].first_slot == 0 && f->tasks[0].n_slots == 2);
	CHECK(f->slots[0].gpu == 0 && nvt_set_count(&f->slots[0].own) == 4);
	CHECK(nvt_set_has(&f->slots[0].own, 0));
	CHECK(f->slots[1].gpu == 1);
	CHECK(f->tasks[1].first_slot == 2 && f->tasks[1].n_slots == 1);
	CHECK(f->slots[2].task == 1 && nvt_set_has(&f->slots[2].own, 8));
	/* GPU 0's held TPCs and tasks: the first slot's and bob's, not the dropped ones' 4-7. */
	CHECK(f->v.gpus[0].tasks == 2 && f->v.gpus[1].tasks == 1);
	CHECK(!nvt_set_has(&f->v.gpus[0].held, 4) && nvt_set_has(&f->v.gpus[0].held, 3));
	free(f);
}

/* Overlaps: each pair from both its slots, every task a slot overlaps (three and more), tasks of
 * one tree and of different priorities left alone, tasks left out by the caller, and slots of
 * another GPU kept apart. */
static void test_overlaps(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_overlap *o;
	/* The top of each task's tree; 0 leaves a task out. */
	const pid_t tree[MAX] = {100, 100, 200, 300, 400, 450, 500, 600, 0};
	size_t n;
	char list[NVT_LIST_TEXT_MAX];

	view_init(f);
	f->v.n_gpus = 2;
	f->v.gpus[1] = f->v.gpus[0];
	f->v.gpus[1].index = 1;
	add(f, 100, "alice", "0-3", "", NVT_PRIO_NONE);
	add(f, 101, "alice", "0-3", "", NVT_PRIO_NONE); /* its worker: one tree */
	add(f, 200, "bob", "2-5", "", NVT_PRIO_NONE);
	add(f, 300, "carol", "3-8", "", NVT_PRIO_NONE);
	add(f, 400, "dave", "9-15", "", NVT_PRIO_HIGH); /* shares with 450 by design */
	add(f, 450, "dora", "9-15", "", NVT_PRIO_LOW);
	add(f, 500, "erin", "3", "", NVT_PRIO_NONE)->gpu = 1; /* another GPU's TPC 3 */
	add(f, 600, "fred", "3", "", NVT_PRIO_NONE)->gpu = 1;
	add(f, 700, "gina", "0", "", NVT_PRIO_NONE); /* left out (--launched) */
	CHECK(nvt_view_overlaps(&f->v, tree, &o, &n) == 0);
	CHECK(n == 6);
	/* Slot 0 (pid 100): 200 and 300, on 2-3 of its own; its worker (slot 1) the same. */
	CHECK(o[0].slot == 0 && o[0].n_others == 2 && o[0].others[0] == 2 && o[0].others[1] == 3);
	nvt_format_list(&o[0].both, list, sizeof(list));
	CHECK_STR(list, "2-3");
	CHECK(o[1].slot == 1 && o[1].n_others == 2 && o[1].others[0] == 2 && o[1].others[1] == 3);
	/* Slot 2 (pid 200): both of tree 100 (on 2-3), then 300 (on 3-5), ascending. */
	CHECK(o[2].slot == 2 && o[2].n_others == 3 && o[2].others[0] == 0 && o[2].others[1] == 1 &&
	      o[2].others[2] == 3);
	nvt_format_list(&o[2].both, list, sizeof(list));
	CHECK_STR(list, "2-5");
	CHECK(o[3].slot == 3 && o[3].n_others == 3 && o[3].others[0] == 0 && o[3].others[2] == 2);
	nvt_format_list(&o[3].both, list, sizeof(list));
	CHECK_STR(list, "3-5");
	/* GPU 1's pair, with each other alone. */
	CHECK(o[4].slot == 6 && o[4].n_others == 1 && o[4].others[0] == 7);
	CHECK(o[5].slot == 7 && o[5].n_others == 1 && o[5].others[0] == 6);
	free(o);
	/* Two tasks of one priority on the same TPCs overlap. */
	f->slots[5].prio.prio = NVT_PRIO_HIGH;
	CHECK(nvt_view_overlaps(&f->v, tree, &o, &n) == 0);
	CHECK(n == 8 && o[4].slot == 4 && o[4].others[0] == 5 && o[5].slot == 5 && o[5].others[0] == 4);
	nvt_format_list(&o[4].both, list, sizeof(list));
	CHECK_STR(list, "9-15");
	free(o);
	free(f);
}

/* Many tasks on the same TPCs: one record a slot, naming the first NVT_VIEW_OVERLAP_NAMED others
 * and counting them all. */
static void test_overlaps_many(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct nvt_view_overlap *o;
	pid_t tree[MAX];
	size_t n;

	view_init(f);
	for (int k = 0; k < MAX; k++) {
		add(f, 1000 + k, "alice", k % 2 ? "0-1" : "1-2", "", NVT_PRIO_NONE);
		tree[k] = 1000 + k;
	}
	CHECK(nvt_view_overlaps(&f->v, tree, &o, &n) == 0);
	CHECK(n == MAX);
	CHECK(o[0].slot == 0 && o[0].n_others == MAX - 1 && o[0].others[0] == 1 &&
	      o[0].others[NVT_VIEW_OVERLAP_NAMED - 1] == NVT_VIEW_OVERLAP_NAMED);
	CHECK(o[MAX - 1].slot == MAX - 1 && o[MAX - 1].n_others == MAX - 1 && o[MAX - 1].others[0] == 0 &&
	      o[MAX - 1].others[NVT_VIEW_OVERLAP_NAMED - 1] == NVT_VIEW_OVERLAP_NAMED - 1);
	CHECK(nvt_set_count(&o[0].both) == 2 && nvt_set_has(&o[0].both, 1) && nvt_set_has(&o[0].both, 2));
	free(o);
	free(f);
}

int main(void)
{
	test_map();
	test_map_trees();
	test_states();
	test_rates();
	test_metrics();
	test_metrics_one_series_a_gpu();
	test_settle_one_slot_a_gpu();
	test_agents();
	test_overlaps();
	test_overlaps_many();
	return CHECK_DONE();
}
