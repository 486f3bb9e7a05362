/*
 * ptree.c - process trees from /proc/PID/stat lines and (PID, parent)
 * pairs. See ptree.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ptree.h"
#include "text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nvt_stat_parse(const char *text, struct nvt_stat *out)
{
	const char *p, *close;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	p = nvt_decimal(text, INT32_MAX, &v);
	if (!p || p[0] != ' ' || p[1] != '(')
		return -1;
	out->pid = (pid_t)v;
	/* The command name may hold ") ": the fields go on after the last ')'. */
	close = strrchr(p, ')');
	if (!close || close[1] != ' ' || !close[2] || close[3] != ' ')
		return -1;
	out->state = close[2];
	p = nvt_decimal(close + 4, INT32_MAX, &v);
	if (!p || *p != ' ')
		return -1;
	out->ppid = (pid_t)v;
	/* Fields 5 to 21 come before the start time. */
	for (int field = 4; field < 21; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	p = nvt_decimal(p + 1, UINT64_MAX, &v);
	if (!p || (*p != ' ' && *p != '\n' && *p))
		return -1;
	out->start_time = v;
	return 0;
}

/*
 * A status whose process was reaped while it was read: the kernel prints it
 * from the task it took when the read began, and a task that its parent's
 * wait has detached from its PIDs reads 0 for each (fs/proc/array.c's
 * task_state, through task_pid_nr_ns). Measured on Linux 6.18 (20,000
 * children, each read in a loop while its parent reaps it: 469 such reads):
 * "State: X (dead)", "PPid: 0", "NStgid: 0", "NSpid: 0", and Tgid 0 where
 * the wait came before that line. No live task has PID 0 in any namespace:
 * such a line says the task read is gone. Its PID may live on: the leader
 * that another thread's exec replaces is released so, that thread taking its
 * PID (measured: 55 of 2000 such execs, each read in a loop).
 */

/* Counts the fields of an NSpid value and keeps the last. Returns 0, or -1 if malformed. */
static int nspid_parse(const char *p, struct nvt_status *s)
{
	char *end;

	for (;; p = end) {
		long v;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return s->nspid_fields ? 0 : -1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0)
			return -1;
		s->released |= v == 0;
		s->nspid = v;
		s->nspid_fields++;
	}
}

int nvt_status_line(const char *line, int cut, struct nvt_status *s)
{
	unsigned which = !strncmp(line, "Uid:", 4)       ? NVT_STATUS_UID
			 : !strncmp(line, "Tgid:", 5)    ? NVT_STATUS_TGID
			 : !strncmp(line, "NSpid:", 6)   ? NVT_STATUS_NSPID
			 : !strncmp(line, "State:", 6)   ? NVT_STATUS_STATE
			 : !strncmp(line, "Threads:", 8) ? NVT_STATUS_THREADS
							 : 0;

	if (!(which & s->want))
		return 0;
	s->seen |= which;
	if (cut) {
		s->malformed = 1;
	} else if (which == NVT_STATUS_UID) {
		s->malformed |= sscanf(line + 4, "%lu %lu %lu %lu", &s->uid[0], &s->uid[1], &s->uid[2],
				       &s->uid[3]) != 4;
	} else if (which == NVT_STATUS_TGID) {
		s->malformed |= sscanf(line + 5, "%ld", &s->tgid) != 1 || s->tgid < 0;
		s->released |= !s->malformed && s->tgid == 0;
	} else if (which == NVT_STATUS_STATE) {
		s->malformed |= sscanf(line + 6, " %c", &s->state) != 1;
	} else if (which == NVT_STATUS_THREADS) {
		s->malformed |= sscanf(line + 8, "%ld", &s->threads) != 1 || s->threads < 0;
	} else {
		s->malformed |= nspid_parse(line + 6, s) != 0;
	}
	/* stop: wrong, gone, or all found */
	return s->malformed || s->released || s->seen == s->want;
}

int nvt_status_verdict(const struct nvt_status *s)
{
	if (s->released)
		return ESRCH;
	if (s->malformed || (s->seen | NVT_STATUS_NSPID) != (s->want | NVT_STATUS_NSPID))
		return EINVAL;
	return 0;
}

/*
 * Measured on Linux 6.18: a child whose main thread called pthread_exit while another thread
 * lives reads 'Z' in stat and status, Threads 2; a zombie whose threads have all ended reads
 * 'Z', Threads 1. Of 1000 children whose second thread calls exec, 698 stat reads said 'Z':
 * the status read just after said 'Z' with Threads 2 (53), or a live state with Threads 1 (645:
 * the exec had ended). /proc/PID/task listed no thread but the leader in 648 of those 698: not
 * a sign to go by. A read that takes the task as it is released (a reaped zombie, or the
 * leader that the exec replaces: fs/exec.c's de_thread sets it 'X', then releases it) says
 * 'X', and Threads 0 once its signal handlers are gone (fs/proc/array.c); only the next read
 * tells which.
 */
enum nvt_exited nvt_exited_verdict(const struct nvt_status *s)
{
	if (s->threads > 1)
		return NVT_EXITED_LIVES;
	if (s->state == 'X' || s->threads == 0)
		return NVT_EXITED_RELEASED;
	return s->state == 'Z' ? NVT_EXITED_GONE : NVT_EXITED_REPLACED;
}

int nvt_stat_settle(const struct nvt_proc_reads *r, struct nvt_stat *st)
{
	enum nvt_exited verdict = NVT_EXITED_RELEASED;

	for (int round = 0; round < NVT_STAT_ROUNDS; round++) {
		struct nvt_status s = {.want = NVT_STATUS_STATE | NVT_STATUS_THREADS};

		if (r->stat(r->arg, st))
			return -1;
		if (st->state != 'Z' && st->state != 'X')
			return 0;
		if (r->status(r->arg, &s))
			return -1;
		verdict = nvt_exited_verdict(&s);
		if (verdict == NVT_EXITED_LIVES)
			return 0;
		if (verdict == NVT_EXITED_GONE)
			break;
	}
	errno = verdict == NVT_EXITED_REPLACED ? EAGAIN : ESRCH;
	return -1;
}

int nvt_status_settle(const struct nvt_proc_reads *r, struct nvt_status *s, struct nvt_stat *st)
{
	unsigned want = s->want;
	struct nvt_stat before;

	for (int round = 0; round < NVT_STATUS_ROUNDS; round++) {
		memset(s, 0, sizeof(*s));
		s->want = want;
		if (nvt_stat_settle(r, &before) || r->status(r->arg, s))
			return -1;
		if (r->between)
			r->between(r->arg);
		if (nvt_stat_settle(r, st))
			return -1;
		if (before.pid == st->pid && before.start_time == st->start_time)
			return 0;
	}
	errno = EAGAIN;
	return -1;
}

int nvt_ptree_id_format(const struct nvt_proc_id *id, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%" PRIu64 ".%ld.%" PRIu64, id->pidns, (long)id->pid,
			 id->start_time);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int nvt_ptree_id_parse(const char *text, struct nvt_proc_id *out)
{
	uint64_t ns, pid, start;
	const char *p = nvt_decimal(text, UINT64_MAX, &ns);

	if (!p || *p != '.' || !(p = nvt_decimal(p + 1, INT32_MAX, &pid)) || *p != '.' ||
	    !(p = nvt_decimal(p + 1, UINT64_MAX, &start)) || *p || pid == 0)
		return -1;
	out->pidns = ns;
	out->pid = (pid_t)pid;
	out->start_time = start;
	return 0;
}

/* ---- Trees ------------------------------------------------------------------- */

static int by_link_pid(const void *a, const void *b)
{
	pid_t x = ((const struct nvt_proc_link *)a)->pid, y = ((const struct nvt_proc_link *)b)->pid;
	return (x > y) - (x < y);
}

void nvt_links_sort(struct nvt_proc_link *links, size_t n)
{
	if (n)
		qsort(links, n, sizeof(*links), by_link_pid);
}

pid_t nvt_links_parent(const struct nvt_proc_link *links, size_t n, pid_t pid)
{
	struct nvt_proc_link key = {pid, 0};
	const struct nvt_proc_link *hit;

	if (!n)
		return 0;
	hit = bsearch(&key, links, n, sizeof(*links), by_link_pid);
	return hit ? hit->ppid : 0;
}

int nvt_links_descends(const struct nvt_proc_link *links, size_t n, pid_t pid, pid_t root)
{
	pid_t at = pid;

	if (root <= 0 || pid == root)
		return 0;
	for (int depth = 0; depth < NVT_TREE_MAX_DEPTH; depth++) {
		at = nvt_links_parent(links, n, at);
		if (at <= 0)
			return 0;
		if (at == root)
			return 1;
	}
	return 0;
}

static int by_pid_value(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

void nvt_links_nearest(const struct nvt_proc_link *links, size_t n, const pid_t *set, size_t n_set,
		       pid_t *up)
{
	for (size_t i = 0; i < n_set; i++) {
		pid_t at = set[i];
		up[i] = 0;
		for (int depth = 0; depth < NVT_TREE_MAX_DEPTH; depth++) {
			at = nvt_links_parent(links, n, at);
			if (at <= 0 || at == set[i])
				break;
			if (bsearch(&at, set, n_set, sizeof(*set), by_pid_value)) {
				up[i] = at;
				break;
			}
		}
	}
}

void nvt_links_tops(const struct nvt_proc_link *links, size_t n, const pid_t *set, size_t n_set,
		    pid_t *up, pid_t *tops)
{
	nvt_links_nearest(links, n, set, n_set, up);
	for (size_t i = 0; i < n_set; i++) {
		size_t k = i;
		/* (n_set hops at most: a chain of PIDs that loops ends there) */
		for (size_t hops = 0; hops < n_set && up[k] > 0; hops++) {
			const pid_t *at = bsearch(&up[k], set, n_set, sizeof(*set), by_pid_value);
			if (!at)
				break;
			k = (size_t)(at - set);
		}
		tops[i] = set[k];
	}
}

/* A node of nvt_tree_order by PID. */
struct keyed {
	pid_t pid;
	size_t node;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->node > y->node) - (x->node < y->node);
}

/* The node whose PID is want, in keys (n, sorted by PID), or -1. */
static long node_of(const struct keyed *keys, size_t n, pid_t want)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid].pid < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && keys[lo].pid == want ? (long)keys[lo].node : -1;
}

int nvt_tree_order(const pid_t *pid, const pid_t *up, size_t n, size_t *order, int *depth)
{
	const size_t none = (size_t)-1;
	size_t *first, *next, *last, *stack, n_out = 0;
	struct keyed *keys;
	long *parent;
	char *seen;

	if (!n)
		return 0;
	keys = malloc(n * sizeof(*keys));
	first = malloc(n * sizeof(*first));
	next = malloc(n * sizeof(*next));
	last = malloc(n * sizeof(*last));
	stack = malloc(n * sizeof(*stack));
	parent = malloc(n * sizeof(*parent));
	seen = calloc(n, 1);
	if (!keys || !first || !next || !last || !stack || !parent || !seen) {
		free(keys), free(first), free(next), free(last), free(stack), free(parent), free(seen);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		keys[i].pid = pid[i];
		keys[i].node = i;
		first[i] = next[i] = last[i] = none;
	}
	qsort(keys, n, sizeof(*keys), by_key);
	/* Children lists, each in PID order: nodes are appended in PID order. */
	for (size_t k = 0; k < n; k++) {
		size_t i = keys[k].node;
		parent[i] = up[i] > 0 && up[i] != pid[i] ? node_of(keys, n, up[i]) : -1;
		if (parent[i] < 0)
			continue;
		if (first[parent[i]] == none)
			first[parent[i]] = i;
		else
			next[last[parent[i]]] = i;
		last[parent[i]] = i;
	}
	/* Depth first from each root in PID order; then from whatever a loop of
	 * parents kept out of reach, as if it were a root. A node is pushed once:
	 * when it is seen (as a root, or as a child of a node taken off the stack). */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < n; k++) {
			size_t root = keys[k].node, top = 0;
			if (seen[root] || (pass == 0 && parent[root] >= 0))
				continue;
			seen[root] = 1;
			depth[root] = 0;
			stack[top++] = root;
			while (top) {
				size_t v = stack[--top], count = 0;
				order[n_out++] = v;
				for (size_t c = first[v]; c != none; c = next[c])
					count += !seen[c];
				/* Pushed last first, so that the lowest PID comes out first. */
				top += count;
				for (size_t c = first[v], at = top; c != none; c = next[c]) {
					if (seen[c])
						continue;
					seen[c] = 1;
					depth[c] = depth[v] + 1;
					stack[--at] = c;
				}
			}
		}
	}
	free(keys), free(first), free(next), free(last), free(stack), free(parent), free(seen);
	return 0;
}
