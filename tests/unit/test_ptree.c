/* Unit tests: /proc/PID/stat lines, /proc/PID/status lines, process identities and process
 * trees. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/grow.h"
#include "core/ptree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_stat_parse(void)
{
	struct nvt_stat st;

	CHECK(nvt_stat_parse("4242 (python3) S 4200 4242 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
			     "98765 1000 100 18446744073709551615\n",
			     &st) == 0);
	CHECK(st.pid == 4242 && st.state == 'S' && st.ppid == 4200 && st.start_time == 98765);
	/* A command name with spaces and ") (" in it: fields go on after the last ')'. */
	CHECK(nvt_stat_parse("7 (a) b (c) d) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", &st) == 0);
	CHECK(st.pid == 7 && st.state == 'Z' && st.ppid == 1 && st.start_time == 5);
	/* Outside the reader's PID namespace the parent reads 0. */
	CHECK(nvt_stat_parse("1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 0 0", &st) == 0);
	CHECK(st.ppid == 0 && st.start_time == 12);
	CHECK(nvt_stat_parse("", &st) == -1);
	CHECK(nvt_stat_parse("12 python S 1 2", &st) == -1);
	CHECK(nvt_stat_parse("12 (x) S 1 2 3", &st) == -1);                  /* cut short */
	CHECK(nvt_stat_parse("12 (x) S -1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
	CHECK(nvt_stat_parse("12 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x 0", &st) == -1);
	CHECK(nvt_stat_parse("99999999999 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
}

/* Feeds text's lines to nvt_status_line (as os/proc.c's read does, until it says stop) for
 * the lines want names. Returns nvt_status_verdict's answer. */
static int status_of(const char *text, unsigned want, struct nvt_status *s)
{
	char buf[2048], *line = buf, *nl;

	memset(s, 0, sizeof(*s));
	s->want = want;
	snprintf(buf, sizeof(buf), "%s", text);
	for (; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (nvt_status_line(line, 0, s))
			break;
	}
	return nvt_status_verdict(s);
}

static void test_status_lines(void)
{
	const unsigned both = NVT_STATUS_UID | NVT_STATUS_NSPID;
	struct nvt_status s;

	CHECK(status_of("Name:\tpython3\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\n"
			"Uid:\t1000\t1001\t1002\t1003\nGroups:\t10 20\nNStgid:\t4242\t7\n"
			"NSpid:\t4242\t7\nThreads:\t1\n", both | NVT_STATUS_TGID, &s) == 0);
	CHECK(s.uid[0] == 1000 && s.uid[1] == 1001 && s.uid[3] == 1003 && s.tgid == 4242);
	CHECK(s.nspid_fields == 2 && s.nspid == 7);
	/* A kernel before 4.1 has no NSpid: the process's own PID namespace is /proc's. */
	CHECK(status_of("Tgid:\t9\nUid:\t0\t0\t0\t0\n", both, &s) == 0 && s.nspid_fields == 0);
	/*
	 * Read while its parent reaped it (what Linux 6.18 printed, measured: core/ptree.c):
	 * gone, as a read after the reap says (ESRCH), never a malformed file (EINVAL, which
	 * failed a start's claim: "cannot list the tasks in ...: Invalid argument").
	 */
	CHECK(status_of("Name:\tmemapp\nState:\tX (dead)\nTgid:\t6637\nNgid:\t0\nPid:\t6637\n"
			"PPid:\t0\nTracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\nGid:\t0\t0\t0\t0\n"
			"FDSize:\t0\nNStgid:\t0\nNSpid:\t0\nNSpgid:\t0\nNSsid:\t0\n", both, &s) == ESRCH);
	CHECK(status_of("Tgid:\t0\nUid:\t0\t0\t0\t0\nNSpid:\t0\n", NVT_STATUS_TGID, &s) == ESRCH);
	/* One namespace's PID read, the next 0: reaped between the two. */
	CHECK(status_of("Uid:\t0\t0\t0\t0\nNSpid:\t4242\t0\n", both, &s) == ESRCH);
	/* Malformed, or missing, stays an error. */
	CHECK(status_of("Uid:\t0\t0\t0\nNSpid:\t1\n", both, &s) == EINVAL);
	CHECK(status_of("Uid:\t0\t0\t0\t0\nNSpid:\t-3\n", both, &s) == EINVAL);
	CHECK(status_of("Uid:\t0\t0\t0\t0\nNSpid:\t\n", both, &s) == EINVAL);
	CHECK(status_of("Uid:\t0\t0\t0\t0\nNSpid:\t12x\n", both, &s) == EINVAL);
	CHECK(status_of("Name:\tx\nNSpid:\t12\n", both, &s) == EINVAL);
	CHECK(status_of("Tgid:\t-1\n", NVT_STATUS_TGID, &s) == EINVAL);
	CHECK(status_of("", NVT_STATUS_TGID, &s) == EINVAL);
	memset(&s, 0, sizeof(s));
	s.want = NVT_STATUS_NSPID;
	CHECK(nvt_status_line("NSpid:\t4242", 1, &s) == 1 && nvt_status_verdict(&s) == EINVAL);
}

/* A stat line said 'Z' or 'X': what the status read after it says (lines as Linux 6.18 prints). */
static void test_exited(void)
{
	const unsigned both = NVT_STATUS_STATE | NVT_STATUS_THREADS;
	struct nvt_status s;

	/* Main called pthread_exit; another thread lives (or calls exec, waits for the leader). */
	CHECK(status_of("Name:\tapp\nUmask:\t0022\nState:\tZ (zombie)\nTgid:\t77\nThreads:\t2\n",
			both, &s) == 0);
	CHECK(s.state == 'Z' && s.threads == 2 && nvt_exited_verdict(&s) == NVT_EXITED_LIVES);
	CHECK(status_of("State:\tX (dead)\nThreads:\t3\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_LIVES);
	/* A zombie whose threads have all ended; one released while read (no threads counted). */
	CHECK(status_of("State:\tZ (zombie)\nThreads:\t1\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_GONE);
	/* Taken as it was released: a zombie reaped, or the leader an exec replaced. */
	CHECK(status_of("State:\tX (dead)\nThreads:\t0\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_RELEASED);
	CHECK(status_of("State:\tX (dead)\nThreads:\t1\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_RELEASED);
	/* The exec ended between the stat read and this one: the PID's task is the new image. */
	CHECK(status_of("State:\tR (running)\nThreads:\t1\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_REPLACED);
	CHECK(status_of("State:\tS (sleeping)\nThreads:\t0\n", both, &s) == 0);
	CHECK(nvt_exited_verdict(&s) == NVT_EXITED_RELEASED);
	/* Malformed, or missing. */
	CHECK(status_of("State:\t\nThreads:\t2\n", both, &s) == EINVAL);
	CHECK(status_of("State:\tZ (zombie)\nThreads:\t-2\n", both, &s) == EINVAL);
	CHECK(status_of("State:\tZ (zombie)\nThreads:\tx\n", both, &s) == EINVAL);
	CHECK(status_of("State:\tZ (zombie)\n", both, &s) == EINVAL);
}

/* One process's reads, scripted: the i-th stat read says stat[i], the i-th status read status[i]
 * (past the last given, the last again); fail_at: the stat read that fails with ENOENT (0: none);
 * step: added to the start time at each stat read (a PID that changes hands at every read). */
struct script {
	struct nvt_stat stat[4];
	struct nvt_status status[4];
	int n_stat, n_status, n_between, fail_at;
	uint64_t step;
};

static int script_stat(void *arg, struct nvt_stat *st)
{
	struct script *sc = arg;
	int i = sc->n_stat < 4 ? sc->n_stat : 3;

	if (++sc->n_stat == sc->fail_at) {
		errno = ENOENT;
		return -1;
	}
	for (; i > 0 && !sc->stat[i].pid; i--)
		;
	*st = sc->stat[i];
	st->start_time += sc->step * (uint64_t)sc->n_stat;
	return 0;
}

static int script_status(void *arg, struct nvt_status *s)
{
	struct script *sc = arg;
	int i = sc->n_status < 4 ? sc->n_status : 3;
	unsigned want = s->want;

	sc->n_status++;
	for (; i > 0 && !sc->status[i].want; i--)
		;
	*s = sc->status[i];
	s->want = want;
	return 0;
}

static void script_between(void *arg)
{
	((struct script *)arg)->n_between++;
}

/* A stat that says 'Z' or 'X', and the status read after it: alive, gone, or no answer. */
static void test_stat_settle(void)
{
	const struct nvt_stat zombie = {77, 'Z', 1, 500}, sleeping = {77, 'S', 1, 500};
	const struct nvt_status lives = {.state = 'Z', .threads = 2, .want = 1},
				gone = {.state = 'Z', .threads = 1, .want = 1},
				replaced = {.state = 'R', .threads = 1, .want = 1},
				released = {.state = 'X', .threads = 0, .want = 1};
	struct script sc = {.stat = {sleeping}, .status = {lives}};
	struct nvt_proc_reads r = {script_stat, script_status, NULL, &sc};
	struct nvt_stat st;

	/* Most processes: one stat read, no status. */
	CHECK(nvt_stat_settle(&r, &st) == 0 && st.state == 'S' && sc.n_stat == 1 && sc.n_status == 0);
	/* A leader whose threads live: alive, its 'Z' kept. */
	sc = (struct script){.stat = {zombie}, .status = {lives}};
	CHECK(nvt_stat_settle(&r, &st) == 0 && st.state == 'Z' && st.start_time == 500 && sc.n_stat == 1);
	/* A zombie: gone, after one round. */
	sc = (struct script){.stat = {zombie}, .status = {gone}};
	errno = 0;
	CHECK(nvt_stat_settle(&r, &st) == -1 && errno == ESRCH && sc.n_stat == 1 && sc.n_status == 1);
	/* Replaced (a thread's exec ended between the reads) twice, then read as it runs. */
	sc = (struct script){.stat = {zombie, zombie, sleeping}, .status = {replaced}};
	CHECK(nvt_stat_settle(&r, &st) == 0 && st.state == 'S' && sc.n_stat == 3 && sc.n_status == 2);
	/* Replaced every round: no answer (EAGAIN), after NVT_STAT_ROUNDS rounds; never alive (0)
	 * nor gone (ESRCH, which callers read as ended). */
	sc = (struct script){.stat = {zombie}, .status = {replaced}};
	errno = 0;
	CHECK(nvt_stat_settle(&r, &st) == -1 && errno == EAGAIN);
	CHECK(sc.n_stat == NVT_STAT_ROUNDS && sc.n_status == NVT_STAT_ROUNDS);
	/* Replaced, then released at the last round: the task read ended. */
	sc = (struct script){.stat = {zombie}, .status = {replaced, replaced, released}};
	errno = 0;
	CHECK(nvt_stat_settle(&r, &st) == -1 && errno == ESRCH && sc.n_stat == NVT_STAT_ROUNDS);
	/* Released every round; a read that fails says its own errno. */
	sc = (struct script){.stat = {zombie}, .status = {released}};
	errno = 0;
	CHECK(nvt_stat_settle(&r, &st) == -1 && errno == ESRCH && sc.n_stat == NVT_STAT_ROUNDS);
	sc = (struct script){.stat = {zombie}, .status = {replaced}, .fail_at = 2};
	errno = 0;
	CHECK(nvt_stat_settle(&r, &st) == -1 && errno == ENOENT && sc.n_stat == 2);
}

/* A status taken only between two stats of one process: never one process's users with
 * another's start time. */
static void test_status_settle(void)
{
	const struct nvt_stat first = {77, 'S', 1, 500}, second = {77, 'R', 1, 900},
			      zombie = {77, 'Z', 1, 500};
	const struct nvt_status of_first = {.uid = {1000, 1000, 1000, 1000}, .want = 1},
				of_second = {.uid = {0, 0, 0, 0}, .want = 1},
				replaced = {.state = 'R', .threads = 1, .want = 1};
	struct script sc = {.stat = {first}, .status = {of_first}};
	struct nvt_proc_reads r = {script_stat, script_status, script_between, &sc};
	struct nvt_status s = {.want = NVT_STATUS_UID};
	struct nvt_stat st;

	/* One process throughout: stat, status, what else is read, stat. */
	CHECK(nvt_status_settle(&r, &s, &st) == 0 && s.uid[1] == 1000 && st.start_time == 500);
	CHECK(sc.n_stat == 2 && sc.n_status == 1 && sc.n_between == 1 && s.want == NVT_STATUS_UID);
	/* The PID taken by another process (start 900) after the first stat: the status read may
	 * be either's, so all is read again; the second round's is the new process's alone. */
	sc = (struct script){.stat = {first, second}, .status = {of_first, of_second}};
	memset(&s, 0, sizeof(s));
	s.want = NVT_STATUS_UID;
	CHECK(nvt_status_settle(&r, &s, &st) == 0 && s.uid[1] == 0 && st.start_time == 900);
	CHECK(sc.n_stat == 4 && sc.n_status == 2 && s.want == NVT_STATUS_UID);
	/* Another process at every stat: no answer after NVT_STATUS_ROUNDS rounds. */
	sc = (struct script){.stat = {first}, .status = {of_first}, .step = 100};
	errno = 0;
	CHECK(nvt_status_settle(&r, &s, &st) == -1 && errno == EAGAIN);
	CHECK(sc.n_status == NVT_STATUS_ROUNDS);
	/* A stat with no answer (replaced at every round) is none here either. */
	sc = (struct script){.stat = {zombie}, .status = {replaced}};
	errno = 0;
	CHECK(nvt_status_settle(&r, &s, &st) == -1 && errno == EAGAIN && sc.n_stat == NVT_STAT_ROUNDS);
	/* A process gone at the later stat. */
	sc = (struct script){.stat = {first}, .status = {of_first}, .fail_at = 2};
	errno = 0;
	CHECK(nvt_status_settle(&r, &s, &st) == -1 && errno == ENOENT && sc.n_between == 1);
}

static void test_proc_id(void)
{
	struct nvt_proc_id id = {4026531836u, 4242, 18446744073709551615ull}, back;
	char text[NVT_PROC_ID_TEXT_MAX];

	CHECK(nvt_ptree_id_format(&id, text, sizeof(text)) == 0);
	CHECK_STR(text, "4026531836.4242.18446744073709551615");
	CHECK(nvt_ptree_id_parse(text, &back) == 0);
	CHECK(back.pidns == id.pidns && back.pid == id.pid && back.start_time == id.start_time);
	CHECK(nvt_ptree_id_format(&id, text, 10) == -1);
	CHECK(nvt_ptree_id_parse("1.2", &back) == -1);
	CHECK(nvt_ptree_id_parse("1.2.3.", &back) == -1);
	CHECK(nvt_ptree_id_parse("1.0.3", &back) == -1); /* no process has PID 0 */
	CHECK(nvt_ptree_id_parse("1.-2.3", &back) == -1);
	CHECK(nvt_ptree_id_parse("1.2.18446744073709551616", &back) == -1);
	CHECK(nvt_ptree_id_parse("", &back) == -1);
}

/*
 * The tree used below (tasks marked *):
 *   1 - 10* - 11 - 12* - 13*
 *     |     \ 14*
 *     \ 20 - 21*     30* (parent 0: outside the namespace)
 */
static struct nvt_proc_link links[] = {
	{13, 12}, {1, 0}, {10, 1}, {11, 10}, {12, 11}, {14, 10}, {20, 1}, {21, 20}, {30, 0},
};
#define N_LINKS (sizeof(links) / sizeof(links[0]))

static void test_links(void)
{
	pid_t tasks[] = {10, 12, 13, 14, 21, 30}, up[6], top[6];

	nvt_links_sort(links, N_LINKS);
	CHECK(links[0].pid == 1 && links[N_LINKS - 1].pid == 30);
	CHECK(nvt_links_parent(links, N_LINKS, 12) == 11);
	CHECK(nvt_links_parent(links, N_LINKS, 99) == 0);
	CHECK(nvt_links_descends(links, N_LINKS, 13, 10) == 1); /* through 11, not a task */
	CHECK(nvt_links_descends(links, N_LINKS, 14, 10) == 1);
	CHECK(nvt_links_descends(links, N_LINKS, 21, 10) == 0);
	CHECK(nvt_links_descends(links, N_LINKS, 10, 10) == 0);
	CHECK(nvt_links_descends(links, N_LINKS, 10, 13) == 0);
	CHECK(nvt_links_descends(links, N_LINKS, 30, 1) == 0);
	nvt_links_nearest(links, N_LINKS, tasks, 6, up);
	CHECK(up[0] == 0 && up[1] == 10 && up[2] == 12 && up[3] == 10 && up[4] == 0 && up[5] == 0);
	/* Each task's top: 13 under 12 under 10 (through 11, not a task); 21 and 30 their own. */
	nvt_links_tops(links, N_LINKS, tasks, 6, up, top);
	CHECK(top[0] == 10 && top[1] == 10 && top[2] == 10 && top[3] == 10 && top[4] == 21 && top[5] == 30);
}

static void test_loop(void)
{
	/* A stale snapshot: 5 -> 6 -> 5. Bounded, and nothing claims a loop descends. */
	struct nvt_proc_link loop[] = {{5, 6}, {6, 5}, {7, 6}};
	pid_t set[] = {5, 6, 7}, up[3], top[3], pid[] = {5, 6, 7};
	size_t order[3];
	int depth[3];

	CHECK(nvt_links_descends(loop, 3, 7, 99) == 0);
	CHECK(nvt_links_descends(loop, 3, 7, 5) == 1);
	nvt_links_nearest(loop, 3, set, 3, up);
	CHECK(up[0] == 6 && up[1] == 5 && up[2] == 6);
	/* Bounded in a loop too: a top of the set, whichever. */
	nvt_links_tops(loop, 3, set, 3, up, top);
	CHECK(top[0] >= 5 && top[0] <= 6 && top[2] >= 5 && top[2] <= 6);
	CHECK(nvt_tree_order(pid, up, 3, order, depth) == 0);
	/* Every node once; 5 taken as the root of its loop. */
	CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
	CHECK(depth[0] == 0 && depth[1] == 1 && depth[2] == 2);
}

static void test_order(void)
{
	/* Given out of order: the parents' PIDs, as nvt_links_nearest finds them. */
	pid_t pid[] = {21, 13, 12, 30, 10, 14, 40}, up[] = {0, 12, 10, 0, 0, 10, 99};
	size_t order[7];
	int depth[7];
	pid_t shown[7];

	CHECK(nvt_tree_order(pid, up, 7, order, depth) == 0);
	for (int k = 0; k < 7; k++)
		shown[k] = pid[order[k]];
	/* Roots by PID (40's parent is not shown: a root), each subtree whole. */
	CHECK(shown[0] == 10 && shown[1] == 12 && shown[2] == 13 && shown[3] == 14);
	CHECK(shown[4] == 21 && shown[5] == 30 && shown[6] == 40);
	CHECK(depth[4] == 0 && depth[2] == 1 && depth[1] == 2 && depth[5] == 1 && depth[0] == 0);
	CHECK(depth[6] == 0);
	CHECK(nvt_tree_order(pid, up, 0, order, depth) == 0);
}

static void test_deep(void)
{
	/* A chain of 5000 nodes given leaf first: no recursion, depths in order. */
	enum { N = 5000 };
	pid_t *pid = malloc(N * sizeof(*pid)), *up = malloc(N * sizeof(*up));
	size_t *order = malloc(N * sizeof(*order));
	int *depth = malloc(N * sizeof(*depth)), ok = 1;

	for (int i = 0; i < N; i++) {
		pid[i] = N - i;
		up[i] = N - i - 1;
	}
	CHECK(nvt_tree_order(pid, up, N, order, depth) == 0);
	for (int k = 0; k < N; k++)
		ok &= pid[order[k]] == k + 1 && depth[order[k]] == k;
	CHECK(ok);
	free(pid), free(up), free(order), free(depth);
}

/* The growing array the scans of processes and segments fill. */
static void test_grow(void)
{
	size_t cap = 0, n;
	int *v = NULL, *grown;

	for (n = 0; n < 100; n++) {
		grown = nvt_grow(v, n, &cap, sizeof(*v), 4);
		CHECK(grown != NULL);
		if (!grown)
			break;
		v = grown;
		v[n] = (int)n;
		CHECK(cap > n && (cap == 4 || cap % 4 == 0));
	}
	CHECK(cap == 128);
	CHECK(nvt_grow(v, 99, &cap, sizeof(*v), 4) == v); /* room left: the same array */
	for (n = 0; n < 100 && v[n] == (int)n; n++)
		;
	CHECK(n == 100);
	/* A size that cannot fit leaves the array as it was. */
	n = cap;
	CHECK(nvt_grow(v, cap, &cap, (size_t)-1 / 2, 4) == NULL && cap == n);
	free(v);
}

int main(void)
{
	test_grow();
	test_stat_parse();
	test_status_lines();
	test_exited();
	test_stat_settle();
	test_status_settle();
	test_proc_id();
	test_links();
	test_loop();
	test_order();
	test_deep();
	return CHECK_DONE();
}
