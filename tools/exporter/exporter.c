/*
 * exporter.c - nvtaskset-exporter [ADDR:]PORT: serves the metrics of
 * nvtaskset --metrics on http://ADDR:PORT/metrics for Prometheus, through
 * GNU libmicrohttpd. A program of its own, installed beside the shim and run
 * by `nvtaskset --exporter`, so that the command itself links no HTTP library.
 *
 * Read-only: GET and HEAD of /metrics, and of / (a landing page that links
 * /metrics, as node_exporter's), nothing else (404, 405); a scrape
 * reads the tasks (src/view) and changes nothing. Scrapes within FRESH_MS of
 * a read share its text, one copy in memory, so that many scrapers at once
 * cost one read: a view of 1000 tasks takes ~0.2 s to read on a 2-core VM,
 * and 100 scrapes at once each reading their own took 12.9 s and 9 s of CPU
 * (docs/observability.md); answers send the texts of the last TEXTS_KEPT
 * reads at most (one that sends an older one is closed), so that answers
 * their clients do not read keep few texts in memory. libmicrohttpd is
 * event-driven: a slow or silent
 * client holds a socket, never a thread; a request's headers are bounded by
 * CONNECTION_MEMORY bytes. So that no client holds the exporter
 * (src/core/conns.h decides, this file closes): a request's head must come
 * whole within HEAD_DEADLINE_S of its accept (or of the end of the response
 * before it), however its bytes trickle; a new connection from an address
 * holding PER_ADDRESS connections closes that address's oldest one, and one
 * that finds CONNECTIONS_MAX closes the oldest of all: the one whose head or
 * answer began longest ago (an answer its client does not read holds no
 * room). A connection is closed by
 * shutdown(2) of its socket, under conns.lock, which libmicrohttpd's
 * MHD_CONNECTION_NOTIFY_CLOSED takes before the socket is closed (its number
 * cannot be another's meanwhile).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <microhttpd.h>

#include "core/conns.h"
#include "core/promtext.h"
#include "core/listen.h"
#include "core/text.h"
#include "gpu/gpus.h"
#include "seg/segfile.h"
#include "view/view.h"
#include "os/child.h"
#include "os/clock.h"

#define CONNECTIONS_MAX 256
#define PER_ADDRESS 16
#define HEAD_DEADLINE_S 5
#define HEAD_TICK_MS 250 /* how often the deadlines are looked at */
#define CONNECTION_TIMEOUT_S 10 /* silence on a connection between requests, libmicrohttpd's */
/* libmicrohttpd's own limit, split among its threads: above what conns.c keeps (any one thread
 * may accept them all, and closing ones linger until it reaps them), never reached first. */
#define MHD_CONNECTIONS (THREADS * (CONNECTIONS_MAX + 64))
#define CONNECTION_MEMORY (32 * 1024)
/* Descriptors kept for what is no connection: the listening socket, the threads' (10 in all at
 * rest, measured), the files a view reads at once (a segment, /proc's, the pipe of the child
 * that reads command lines: view/viewproc.c), closing connections. */
#define FDS_KEPT 32
#define THREADS 4
/* How old a read may be for a scrape to share it: below Prometheus' shortest usual interval. */
#define FRESH_MS 500
/* The texts of reads that answers may send at once: an answer that sends an older one is closed
 * (conns.c), so that clients that do not read their answers keep at most these in memory. (Each
 * answer sent FRESH_MS after the last read was one of its own, so 256 unread ones kept 256
 * texts: megabytes each for a node of a thousand tasks.) A scrape's answer takes milliseconds. */
#define TEXTS_KEPT 4

/* A metrics text, shared by the responses that send it and the latest slot: freed with the
 * last reference. */
struct text {
	unsigned refs;   /* under latest.lock */
	uint64_t number; /* 1 up, in the order reads made them */
	size_t len;
	char bytes[];
};

/* The latest metrics, and the lock that lets one view be read at a time. */
static struct {
	pthread_mutex_t lock;
	const struct nvt_gpus *gpus; /* NULL: none listed (the tasks' slots name theirs) */
	struct text *text;           /* the latest metrics; NULL: none, or the read failed */
	uint64_t began_ns;           /* when the read that made them began; 0: none yet */
	uint64_t made;               /* texts made: the latest one's number */
	char why[300];               /* why the latest read failed ("" if it did not) */
} latest = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Drops a reference to t (under latest.lock). */
static void text_put_locked(struct text *t)
{
	if (t && !--t->refs)
		free(t);
}

/* libmicrohttpd's: a response is done with its text. */
static void text_done(void *arg)
{
	pthread_mutex_lock(&latest.lock);
	text_put_locked(arg);
	pthread_mutex_unlock(&latest.lock);
}

/* The connections, and which to close (src/core/conns.c). */
static struct {
	pthread_mutex_t lock;
	struct nvt_conns table;
} conns = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("nvtaskset: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void mhd_log(void *arg, const char *fmt, va_list ap)
{
	(void)arg;
	fputs("nvtaskset: exporter: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* Reads the metrics now into latest (under latest.lock, which every scrape waits on). A read
 * of a task's memory (its command line, environment or maps, under its memory map's lock)
 * waits for as long as the task's user holds that lock, until the reader is killed (on
 * current kernels; on some older ones not even then): the view makes such reads in children
 * that it kills and leaves when they stall (view/viewproc.c; the maps through the reader main
 * chose, seg/segfile.h), so a view's read never waits long on a task. */
static void read_metrics_locked(void)
{
	struct nvt_outbuf out = {0};
	struct nvt_view v;

	latest.began_ns = nvt_clock_ns();
	latest.why[0] = '\0';
	text_put_locked(latest.text);
	latest.text = NULL;
	if (nvt_view_read(nvt_rundir(), latest.gpus, &v, latest.why, sizeof(latest.why)) == 0) {
		if (nvt_view_metrics(&v, &out) == 0 && (latest.text = malloc(sizeof(*latest.text) + out.len)))
			*latest.text = (struct text){.refs = 1, .number = ++latest.made, .len = out.len};
		if (latest.text)
			memcpy(latest.text->bytes, out.text, out.len);
		else
			snprintf(latest.why, sizeof(latest.why), "out of memory");
	}
	nvt_view_free(&v);
	nvt_outbuf_free(&out);
}

/* The metrics, read within FRESH_MS (now, if need be), as a response; the number of the text
 * it sends into *number (0: none, an error's). */
static struct MHD_Response *metrics(unsigned *status, uint64_t *number)
{
	struct MHD_Response *r = NULL;
	struct text *t;

	pthread_mutex_lock(&latest.lock);
	if (!latest.began_ns || nvt_clock_ns() - latest.began_ns > FRESH_MS * 1000000ull)
		read_metrics_locked();
	t = latest.text;
	*number = t ? t->number : 0;
	if (t) {
		*status = MHD_HTTP_OK;
		t->refs++;
		r = MHD_create_response_from_buffer_with_free_callback_cls(t->len, t->bytes, text_done, t);
		if (!r)
			text_put_locked(t);
	} else {
		char text[400];
		int n = snprintf(text, sizeof(text), "nvtaskset: %s\n", latest.why);
		*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		latest.began_ns = 0; /* (a failure is not kept: the next scrape reads again) */
		r = MHD_create_response_from_buffer((size_t)n, text, MHD_RESPMEM_MUST_COPY);
	}
	pthread_mutex_unlock(&latest.lock);
	if (r && *status == MHD_HTTP_OK)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, NVT_PROM_CONTENT_TYPE);
	return r;
}

/* The socket of connection c, or -1. */
static int socket_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return info ? (int)info->connect_fd : -1;
}

/* The family and address of sa into family, addr; -1 if it is neither IPv4 nor IPv6. */
static int address_of(const struct sockaddr *sa, int *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	*family = sa ? sa->sa_family : AF_UNSPEC;
	if (*family == AF_INET)
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (*family == AF_INET6)
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	return *family == AF_INET || *family == AF_INET6 ? 0 : -1;
}

/* libmicrohttpd's, before it accepts a connection from sa: room made (conns.c), or refused. */
static enum MHD_Result admit(void *arg, const struct sockaddr *sa, socklen_t len)
{
	uint8_t addr[16];
	int family, fd;

	(void)arg, (void)len;
	if (address_of(sa, &family, addr))
		return MHD_NO;
	pthread_mutex_lock(&conns.lock);
	fd = nvt_conns_admit(&conns.table, family, addr);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&conns.lock);
	return fd == -2 ? MHD_NO : MHD_YES;
}

/* libmicrohttpd's: a connection started or closed (before its socket is closed). */
static void connection_event(void *arg, struct MHD_Connection *c, void **socket_context,
			     enum MHD_ConnectionNotificationCode what)
{
	const union MHD_ConnectionInfo *peer = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	int fd = socket_of(c), family, over;
	uint8_t addr[16];

	(void)arg, (void)socket_context;
	if (fd < 0)
		return;
	pthread_mutex_lock(&conns.lock);
	if (what == MHD_CONNECTION_NOTIFY_CLOSED)
		nvt_conns_remove(&conns.table, fd);
	else if (!peer || address_of(peer->client_addr, &family, addr) ||
		 nvt_conns_add(&conns.table, fd, family, addr, nvt_clock_ns()))
		shutdown(fd, SHUT_RDWR); /* (no room to follow it: not kept) */
	else /* (others admitted beside it, by other threads, counted now) */
		while ((over = nvt_conns_over(&conns.table, family, addr)) >= 0)
			shutdown(over, SHUT_RDWR);
	pthread_mutex_unlock(&conns.lock);
}

/* libmicrohttpd's: a request was answered (or ended): the next head's time begins. */
static void request_done(void *arg, struct MHD_Connection *c, void **request,
			 enum MHD_RequestTerminationCode why)
{
	int fd = socket_of(c);

	(void)arg, (void)request, (void)why;
	pthread_mutex_lock(&conns.lock);
	nvt_conns_answering(&conns.table, fd, 0, nvt_clock_ns());
	pthread_mutex_unlock(&conns.lock);
}

/* Closes the connections whose heads are past their deadline. */
static void close_late_heads(void)
{
	int fd;

	pthread_mutex_lock(&conns.lock);
	while ((fd = nvt_conns_expired(&conns.table, nvt_clock_ns())) >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&conns.lock);
}

/* Connection c's answer sends text number: the answers that send texts TEXTS_KEPT or more
 * reads older are closed, their texts freed with them. */
static void sends_text(struct MHD_Connection *c, uint64_t number)
{
	int fd;

	pthread_mutex_lock(&conns.lock);
	nvt_conns_sends(&conns.table, socket_of(c), number);
	while (number > TEXTS_KEPT && (fd = nvt_conns_stale(&conns.table, number - TEXTS_KEPT + 1)) >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&conns.lock);
}

static enum MHD_Result answer(void *arg, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **request)
{
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char landing[] =
		"<html>\n<head><title>nvtaskset exporter</title></head>\n<body>\n"
		"<h1>nvtaskset exporter</h1>\n<p>nvtaskset " NVT_VERSION_STRING
		": which tasks run on which TPCs of this machine's GPUs.</p>\n"
		"<p><a href=\"/metrics\">Metrics</a></p>\n</body>\n</html>\n";
	static const char not_allowed[] = "method not allowed: the exporter takes GET and HEAD\n";
	struct MHD_Response *r;
	unsigned status;
	uint64_t number;
	enum MHD_Result rc;

	(void)arg, (void)version, (void)upload, (void)upload_len, (void)request;
	/* (its head is whole: its answer's time begins) */
	pthread_mutex_lock(&conns.lock);
	nvt_conns_answering(&conns.table, socket_of(c), 1, nvt_clock_ns());
	pthread_mutex_unlock(&conns.lock);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		r = MHD_create_response_from_buffer(sizeof(not_allowed) - 1, (void *)not_allowed,
						    MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	} else if (!strcmp(url, "/")) {
		status = MHD_HTTP_OK;
		r = MHD_create_response_from_buffer(sizeof(landing) - 1, (void *)landing,
						    MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
						"text/html; charset=utf-8");
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		r = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						    MHD_RESPMEM_PERSISTENT);
	} else {
		r = metrics(&status, &number);
		if (r && number)
			sends_text(c, number);
	}
	if (!r)
		return MHD_NO; /* out of memory: the connection is closed */
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* libmicrohttpd's unescaping of a request's path and its query's words, which would pass on a
 * NUL decoded from %00 and so end the path there (/metrics%00.html read as /metrics): such a
 * text is given as \x7f, which is no path of the exporter's. Returns its length. */
static size_t unescape(void *arg, struct MHD_Connection *c, char *text)
{
	size_t n = MHD_http_unescape(text);

	(void)arg, (void)c;
	if (strlen(text) == n)
		return n;
	text[0] = 0x7f;
	text[1] = '\0';
	return 1;
}

/* The machine's GPUs, listed once (NULL where they cannot be: the tasks' slots name theirs). */
static const struct nvt_gpus *list_gpus(int timeout_ms)
{
	static struct nvt_gpus gpus;
	char why[512];

	if (nvt_gpus_list(timeout_ms, &gpus, why, sizeof(why)) == 0)
		return &gpus;
	say("exporter: the GPUs cannot be listed (%s): the metrics name the GPUs the tasks use", why);
	return NULL;
}

/*
 * How many connections the table holds: its soft descriptor limit raised as far as
 * libmicrohttpd's table needs (to the hard limit at most), then CONNECTIONS_MAX, or fewer
 * where the limit leaves less (nvt_conns_room): each new connection finds a descriptor, and
 * the oldest without a whole request is closed for it.
 */
static int connections_room(void)
{
	struct rlimit lim;
	rlim_t want = (rlim_t)MHD_CONNECTIONS + FDS_KEPT;

	if (getrlimit(RLIMIT_NOFILE, &lim))
		return CONNECTIONS_MAX;
	if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
		struct rlimit raised = lim;
		raised.rlim_cur = lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want ? lim.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			lim = raised;
	}
	return nvt_conns_room(lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)lim.rlim_cur,
			      CONNECTIONS_MAX, FDS_KEPT);
}

static struct MHD_Daemon *start(const struct nvt_listen *at)
{
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
	const struct sockaddr *sa = (const struct sockaddr *)&in4;

	memset(&in4, 0, sizeof(in4));
	memset(&in6, 0, sizeof(in6));
	if (at->family == AF_INET6) {
		in6.sin6_family = AF_INET6;
		in6.sin6_port = htons(at->port);
		memcpy(&in6.sin6_addr, at->addr, 16);
		sa = (const struct sockaddr *)&in6;
	} else {
		in4.sin_family = AF_INET;
		in4.sin_port = htons(at->port);
		memcpy(&in4.sin_addr, at->addr, 4);
	}
	nvt_conns_init(&conns.table, connections_room(), PER_ADDRESS, HEAD_DEADLINE_S * 1000000000ull);
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
					(at->family == AF_INET6 ? MHD_USE_IPv6 : 0),
				at->port, admit, NULL, answer, NULL,
				/* (the logger first: options before it would log in MHD's words) */
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned)THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)MHD_CONNECTIONS,
				MHD_OPTION_NOTIFY_CONNECTION, connection_event, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
				MHD_OPTION_END);
}

int main(int argc, char **argv)
{
	struct nvt_listen at;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	char why[300];
	sigset_t stop;
	int timeout_ms, sig;

	if (argc != 2 || nvt_listen_parse(argv[1], &at, why, sizeof(why))) {
		say("exporter: %s", argc != 2 ? "usage: nvtaskset-exporter [ADDR:]PORT (nvtaskset --exporter runs it)" : why);
		return EXIT_FAILURE;
	}
	/* A task's maps, read to tell its segment from a rival file, are read in a child that a
	 * stall does not hold (seg/segfile.h): a scrape waits on the view a stall would hold. */
	nvt_seg_maps_reader(nvt_proc_maps_bounded);
	timeout_ms = nvt_gpus_timeout_ms(getenv(NVT_ENV_DRIVER_TIMEOUT));
	if (timeout_ms < 0) {
		say("%s must be 1-3600 seconds, not '%s'", NVT_ENV_DRIVER_TIMEOUT,
		    getenv(NVT_ENV_DRIVER_TIMEOUT));
		return EXIT_FAILURE;
	}
	/* The signals that end it are taken by sigwait below, in no thread of libmicrohttpd's. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	latest.gpus = list_gpus(timeout_ms);
	d = start(&at);
	if (!d) {
		say("exporter: cannot listen on %s:%u: %s", at.host, (unsigned)at.port,
		    errno ? strerror(errno) : "libmicrohttpd refused");
		return EXIT_FAILURE;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	say("serving the metrics on http://%s:%u/metrics", at.host,
	    info && info->port ? (unsigned)info->port : (unsigned)at.port);
	/* Until a signal ends it, a look at the heads' deadlines every HEAD_TICK. */
	while ((sig = sigtimedwait(&stop, NULL, &(struct timespec){0, HEAD_TICK_MS * 1000000L})) < 0)
		close_late_heads();
	MHD_stop_daemon(d);
	pthread_mutex_lock(&latest.lock);
	text_put_locked(latest.text);
	pthread_mutex_unlock(&latest.lock);
	return EXIT_SUCCESS;
}
