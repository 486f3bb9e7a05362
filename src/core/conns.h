/*
 * conns.h - which of a server's connections to close, so that no client
 * holds it (the exporter's table, tools/nvtaskset/exporter.c): each
 * connection's peer address, since when its request's head has been coming
 * (its accept, or the end of its last response) or its answer going, and
 * whether a whole request of it is being answered. A head has a deadline from
 * that moment that bytes do not extend; a new connection from an address that
 * holds per_address (an address: an IPv6 peer's /64, which a host may take any
 * address of, or a link-local one whole; an IPv4 one's, mapped into IPv6 or
 * not) closes that address's oldest connection (but from
 * 127.0.0.1 and ::1, which every local client shares: a local scraper and
 * its neighbours are one address there), and one that finds max held closes
 * the oldest of all. The oldest is the one whose head, or answer, began
 * longest ago: a client that trickles its head or does not read its answer
 * holds no room by it, and a scrape's take milliseconds. Nor memory: each
 * answer's text is noted by its number, and those that send an old one are
 * closed (nvt_conns_stale). Pure: the caller closes what it is told, and says
 * when a connection is gone.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CONNS_H
#define NVT_CONNS_H

#include <stdint.h>

/* Room for max live connections and those told to close and not yet gone. */
#define NVT_CONNS_SLOTS 1024

struct nvt_conn {
	int fd;
	int family;          /* AF_INET or AF_INET6 (an IPv4-mapped one counts with its AF_INET form;
			      * another family never with another's) */
	uint8_t addr[16];    /* the peer's address, network order (4 bytes for AF_INET) */
	uint64_t head_since; /* ns: when its head began coming (answering: its answer began) */
	int answering;       /* a whole request of it is being answered */
	uint64_t text;       /* the text its answer sends (the caller's number); 0: none */
	int closing;         /* told to close: no longer counted */
};

struct nvt_conns {
	int max, per_address;
	uint64_t deadline; /* ns a head may take */
	int n;             /* slots used (closing ones too) */
	struct nvt_conn v[NVT_CONNS_SLOTS];
};

/* 1 if family/addr is 127.0.0.1 or ::1 (or ::ffff:127.0.0.1), which the per-address limit
 * leaves alone, else 0. */
int nvt_conns_shared_address(int family, const uint8_t addr[16]);
/* An empty table: at most max live connections (< NVT_CONNS_SLOTS), per_address from one
 * address, heads of deadline ns. */
void nvt_conns_init(struct nvt_conns *t, int max, int per_address, uint64_t deadline);

/* The fewest live connections nvt_conns_room gives a table. */
#define NVT_CONNS_MIN 4
/* How many live connections a table may hold where a process may open fd_limit descriptors
 * and kept of them are for others (its listening socket, its threads', the files it reads):
 * want, or fewer (at least NVT_CONNS_MIN), so that a new connection always finds a descriptor
 * to be accepted with, and the oldest is closed for it (a table above the limit left new
 * connections, a scrape's among them, unaccepted). */
int nvt_conns_room(uint64_t fd_limit, int want, int kept);

/*
 * A connection from family/addr is about to be accepted. Returns the fd of
 * the connection to close first (marked closing: the one whose head or
 * answer began longest ago, of addr where addr holds per_address, else of
 * all where the table holds max), -1 if none need close, or -2 to refuse it
 * (none it could close).
 */
int nvt_conns_admit(struct nvt_conns *t, int family, const uint8_t addr[16]);
/* Notes connection fd from family/addr, its head coming since now. Returns 0, or -1 (no room:
 * close it). */
int nvt_conns_add(struct nvt_conns *t, int fd, int family, const uint8_t addr[16], uint64_t now);
/*
 * After nvt_conns_add of a connection from family/addr: the fd of one to
 * close (marked closing) if the table holds more than per_address from addr or
 * more than max, else -1. Connections admitted at once (by several threads,
 * each before the others' were added) fit no limit until each is added; the
 * caller asks again until -1.
 */
int nvt_conns_over(struct nvt_conns *t, int family, const uint8_t addr[16]);
/* Connection fd is gone. */
void nvt_conns_remove(struct nvt_conns *t, int fd);
/* Connection fd's request is whole and being answered since now (answering 1), or its response
 * is done (0: the next head's time begins now). */
void nvt_conns_answering(struct nvt_conns *t, int fd, int answering, uint64_t now);
/* Connection fd's answer sends text number text (the caller numbers its texts from 1 up, as it
 * makes them): until its answer is done (nvt_conns_answering), or another is noted. */
void nvt_conns_sends(struct nvt_conns *t, int fd, uint64_t text);
/* A connection whose answer sends a text numbered below oldest: its fd, marked closing; -1 if
 * none. (So that answers their clients read slowly, or not at all, keep few texts.) */
int nvt_conns_stale(struct nvt_conns *t, uint64_t oldest);
/* A connection whose head is past its deadline at now: its fd, marked closing; -1 if none. */
int nvt_conns_expired(struct nvt_conns *t, uint64_t now);
/* Live connections (those not closing). */
int nvt_conns_live(const struct nvt_conns *t);

#endif /* NVT_CONNS_H */
