/*
 * prio.c - nvtaskset's priorities (docs/priorities.md): --priority, --guard
 * and --no-lend at a start and with -p, the agent (--agent, and starting
 * the caller's agent when a priority is given).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/prio.h"
#include "core/yield.h"
#include "os/clock.h"
#include "prio/agent.h"
#include "seg/segwatch.h"

/* Reads an unsigned option value from min to max; exits on a bad one. */
unsigned prio_number(const char *what, const char *text, unsigned min, unsigned max)
{
	char msg[160];
	unsigned long v;

	if (number_arg(text, min, max, &v)) {
		snprintf(msg, sizeof(msg), "%s takes a number from %u to %u", what, min, max);
		bad_usage(msg);
	}
	return (unsigned)v;
}

/* An agent setting: the option's value if given, else the environment's, else the default.
 * A bad value in the environment ends the command with what is wrong (exit 1). */
static unsigned setting(unsigned given, const char *env, unsigned min, unsigned max, unsigned def)
{
	const char *text = getenv(env);
	unsigned long v;
	char *end;

	if (given)
		return given;
	if (!text || !*text)
		return def;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max)
		errx(EXIT_FAILURE, "%s takes a number from %u to %u, not '%.40s' (a setting of the "
		     "priority agent; unset it for the default, %u)", env, min, max, text, def);
	return (unsigned)v;
}

/* The agent's settings: options, else the environment, else the defaults. */
static void agent_settings(const struct options *o, struct nvt_agent_opts *a)
{
	a->poll_us = setting(o->poll_us, NVT_ENV_AGENT_POLL_US, 50, 1000000, NVT_AGENT_POLL_US);
	a->hold_ms = setting(o->hold_ms, NVT_ENV_AGENT_HOLD_MS, 1, 3600000, NVT_AGENT_HOLD_MS);
	a->default_guard = setting(o->guard, NVT_ENV_AGENT_GUARD, 1, NVT_MAX_TPCS, NVT_AGENT_GUARD);
}

void prio_check_settings(const struct options *o)
{
	struct nvt_slot_prio p;

	prio_given(o, &p);
	if (o->prio_given)
		prio_check_settings_words(&p);
}

void prio_check_settings_words(const struct nvt_slot_prio *p)
{
	struct options none;
	struct nvt_agent_opts a;

	if (!nvt_prio_needs_agent(p->prio, p->yield))
		return; /* no agent needed */
	memset(&none, 0, sizeof(none));
	agent_settings(&none, &a);
}

void prio_check_guard(const struct options *o, const struct nvt_slot_view *parts, int n)
{
	for (int i = 0; i < n; i++)
		if (!nvt_prio_guard_fits(o->guard, &parts[i].topo))
			cli_errx("--guard %u is more TPCs than GPU %d has: it has %u (give --guard 1 "
				 "to %u)", o->guard, gpu_index_of(parts[i].uuid),
				 (unsigned)parts[i].topo.n_tpcs, (unsigned)parts[i].topo.n_tpcs);
}

void prio_given(const struct options *o, struct nvt_slot_prio *given)
{
	nvt_prio_given(o->prio, o->no_lend, o->guard, o->yield_given ? &o->yield : NULL, o->mask_left_out,
		       given);
}

void prio_carry(const struct options *o, struct nvt_slot_view *want, const struct nvt_slot_view *old)
{
	struct nvt_slot_prio given;

	prio_given(o, &given);
	if (!o->yield_given && old)
		nvt_prio_keep_slice(&given, &old->prio); /* (tree.c's -a -p) */
	nvt_prio_carry(want, old, o->prio_given ? &given : NULL);
}

int prio_plan(const struct options *o, const struct nvt_seg_handle *h, struct nvt_slot_view *parts,
	      char *why, size_t len)
{
	int n = 0;

	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_view *v = &parts[n];
		if (nvt_seg_read(h, g, v, NULL)) {
			snprintf(why, len, "a writer died while changing it; set a new partition to repair it");
			return -1;
		}
		if (nvt_uuid_is_zero(v->uuid))
			continue;
		/* Its own partition, not what an agent made of it now. */
		if (v->prio.prio != NVT_PRIO_NONE || o->prio != NVT_PRIO_NONE) {
			struct nvt_tpcset own;
			nvt_prio_own_of(v, &own);
			if (!nvt_set_count(&own)) {
				snprintf(why, len, "its GPU's TPCs are not known: give a MASK too");
				return -1;
			}
			v->tpcs = own;
			v->state = NVT_SLOT_SET;
		}
		n++;
	}
	if (!n)
		snprintf(why, len, "it has no partition to give a priority to yet: give a MASK too");
	return n ? n : -1;
}

void prio_autostart(const struct options *o)
{
	struct nvt_slot_prio p;

	prio_given(o, &p);
	if (o->prio_given)
		prio_autostart_words(&p);
}

/* The detached agent's process, after the command's child forked it: it tells the command its
 * pid on report (a pipe's end, closed with the others) and becomes the agent. Never returns. */
static void autostart_exec(const char *base, int report)
{
	char *argv[] = {"nvtaskset", "--agent", "--idle-exit", NULL, NULL};
	char idle[16];
	pid_t me = getpid();
	int null, log;

	if (write(report, &me, sizeof(me)) != (ssize_t)sizeof(me))
		_exit(127);
	if (chdir("/")) /* holds no directory of the caller's busy */
		_exit(127);
	snprintf(idle, sizeof(idle), "%d", NVT_AGENT_IDLE_EXIT_S);
	argv[3] = idle;
	/* What it says (its errors: it runs quiet) goes to its log, which -l shows
	 * when it does not run; never to the command's output, which it would hold. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	log = nvt_agent_log_open(base);
	if (null >= 0)
		dup2(null, 0);
	if (log >= 0 || null >= 0) {
		dup2(log >= 0 ? log : null, 1);
		dup2(log >= 0 ? log : null, 2);
	}
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	setenv(NVT_ENV_QUIET, "1", 1);
	unsetenv(NVT_ENV_LD_PRELOAD);
	execv("/proc/self/exe", argv);
	_exit(127);
}

/*
 * Waits until the agent the command started (pid agent) runs as the agent, its pid file renamed
 * into base's run directory (a watch's event; polled where no watch can be made), up to
 * AGENT_START_WAIT_MS. Returns AGENT_RUNS (or the bound passed), AGENT_OTHER where another
 * agent runs instead (ours found its lock and went: nothing to say), or AGENT_GONE where ours
 * ended without running as the agent.
 */
#define AGENT_START_WAIT_MS 5000
enum { AGENT_RUNS, AGENT_OTHER, AGENT_GONE };
static int agent_says_so(const char *base, pid_t agent)
{
	uint64_t end = (uint64_t)nvt_clock_ms() + AGENT_START_WAIT_MS;
	struct nvt_seg_watch watch;
	int rc = AGENT_RUNS, gone = 0;

	nvt_seg_watch_open(base, &watch); /* before the look: no rename between them is lost */
	for (;;) {
		pid_t running = 0;
		uint64_t now = (uint64_t)nvt_clock_ms();
		if (nvt_agent_running(base, geteuid(), &running) && running != agent)
			rc = AGENT_OTHER;
		/* Ours gone: the agent that took the lock from it may not have written its pid file
		 * yet, so the wait goes on for it; at the bound, ours ended alone. */
		gone = gone || (running != agent && kill(agent, 0) && errno == ESRCH);
		if (rc != AGENT_RUNS || running == agent)
			break;
		if (now >= end) {
			rc = gone ? AGENT_GONE : AGENT_RUNS;
			break;
		}
		/* Without a watch (no inotify instance left) a wait is a sleep: look every 10 ms. */
		nvt_seg_watch_wait(&watch, watch.fd < 0 && end - now > 10 ? 10 : (int)(end - now));
	}
	nvt_seg_watch_close(&watch);
	return rc;
}

void prio_autostart_words(const struct nvt_slot_prio *p)
{
	const char *base = nvt_rundir();
	pid_t pid, agent = 0;
	int status, report[2];
	ssize_t got;

	/* Only the guard is the agent's: every other way a task yields is its shim's. */
	if (!nvt_prio_needs_agent(p->prio, p->yield))
		return;
	if (nvt_agent_running(base, 0, &agent) || nvt_agent_running(base, geteuid(), &agent))
		return;
	if (pipe2(report, O_CLOEXEC)) {
		warn("warning: cannot start the priority agent");
		return;
	}
	/* Detached: a grandchild in a session of its own, which the command
	 * never waits for; its lock makes it the only one (a second exits). */
	pid = fork();
	if (pid < 0) {
		warn("warning: cannot start the priority agent");
		close(report[0]);
		close(report[1]);
		return;
	}
	if (pid == 0) {
		close(report[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		autostart_exec(base, report[1]);
	}
	close(report[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Its pid, or nothing where it was not forked (the pipe's end closed unwritten). */
	while ((got = read(report[0], &agent, sizeof(agent))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (got != (ssize_t)sizeof(agent)) {
		warnx("warning: cannot start the priority agent");
		return;
	}
	switch (agent_says_so(base, agent)) {
	case AGENT_OTHER:
		return;
	case AGENT_GONE:
		warnx("warning: the priority agent started (pid %ld) ended at once; 'nvtaskset -l' "
		      "shows its log",
		      (long)agent);
		return;
	}
	warnx("started the priority agent (pid %ld), which ends %d s after the last task it "
	      "manages; see it with 'nvtaskset -l', stop it with 'kill %ld'",
	      (long)agent, NVT_AGENT_IDLE_EXIT_S, (long)agent);
}

/* ---- nvtaskset --agent ----------------------------------------------------- */

static volatile sig_atomic_t stop_agent;

static void on_stop(int sig)
{
	(void)sig;
	stop_agent = 1;
}

/* A line of the agent's log, stamped with the wall-clock time people read: UTC, ISO 8601,
 * to the microsecond (2026-11-23T14:28:16.123456Z). */
static void print_event(void *arg, const char *text)
{
	struct timespec ts;
	struct tm utc;
	char when[32];

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!gmtime_r(&ts.tv_sec, &utc) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &utc))
		snprintf(when, sizeof(when), "%lld", (long long)ts.tv_sec);
	fprintf(stderr, "nvtaskset agent: %s.%06ldZ %s\n", when, ts.tv_nsec / 1000, text);
}

int nvt_cmd_agent(const struct options *o)
{
	struct nvt_agent_opts a = {0};
	struct rlimit files;
	struct sigaction sa;
	const char *quiet = getenv(NVT_ENV_QUIET);
	char why[600];
	pid_t other;
	int fd, rc;

	a.base = nvt_rundir();
	agent_settings(o, &a);
	a.idle_exit_s = o->idle_exit_s;
	a.across_users = o->across_users;
	if (o->across_users && geteuid() != 0)
		cli_errx("--across-users is for root's agent: a user's manages only her own tasks");
	a.stop = &stop_agent;
	if (!(quiet && *quiet && strcmp(quiet, "0")))
		a.event = print_event;
	a.warn = print_event; /* what it cannot do: said quiet or not (a started agent's log) */
	rc = nvt_agent_lock(a.base, &fd, why, sizeof(why));
	if (rc < 0)
		cli_errx("cannot take the priority agent's lock in %s: %s", a.base, why);
	if (rc > 0) {
		/* With --idle-exit (as a command starts it), that is what was wanted. */
		if (o->idle_exit_s)
			return EXIT_SUCCESS;
		if (nvt_agent_running(a.base, geteuid(), &other))
			warnx("your priority agent runs already (pid %ld)", (long)other);
		else
			warnx("your priority agent runs already");
		return EXIT_FAILURE;
	}
	/* A descriptor a task followed (its segment; a lock file while it writes one). */
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (a.event) {
		char text[160];
		snprintf(text, sizeof(text), "pid %ld, user %lu: poll %u us, hold %u ms, guard %u TPCs%s",
			 (long)getpid(), (unsigned long)geteuid(), a.poll_us, a.hold_ms, a.default_guard,
			 a.across_users ? ", across users" : "");
		a.event(NULL, text);
	}
	rc = nvt_agent_run(&a);
	nvt_agent_unlock(a.base, fd);
	if (rc == NVT_AGENT_ERROR)
		cli_err("priority agent");
	if (a.event)
		a.event(NULL, rc == NVT_AGENT_IDLE ? "no managed task: ending"
			      : rc == NVT_AGENT_STOPPED_LEFT
				      ? "stopped; the slots named above keep the partition it gave them"
				      : "stopped; every task it changed has its own partition back");
	return EXIT_SUCCESS;
}
