/*
 * conns.c - which of a server's connections to close (conns.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>
#include <sys/socket.h>

#include "conns.h"

void nvt_conns_init(struct nvt_conns *t, int max, int per_address, uint64_t deadline)
{
	memset(t, 0, sizeof(*t));
	t->max = max < NVT_CONNS_SLOTS ? max : NVT_CONNS_SLOTS - 1;
	t->per_address = per_address;
	t->deadline = deadline;
}

int nvt_conns_room(uint64_t fd_limit, int want, int kept)
{
	if (fd_limit >= (uint64_t)want + (uint64_t)kept)
		return want;
	return fd_limit >= (uint64_t)kept + NVT_CONNS_MIN ? (int)(fd_limit - (uint64_t)kept) : NVT_CONNS_MIN;
}

/* The part of a peer's address that names its host, into *key (*len bytes): an IPv4 address, or
 * an IPv4-mapped IPv6 one's (::ffff:a.b.c.d); an IPv6 address's /64, which a host is given whole
 * and may take any address of (counted by each address, a host with a /64 could fill the table);
 * a link-local one's (fe80::/10) whole, as every host of the link shares its /64; another
 * family's 16 bytes. Returns the key's family: AF_INET for either IPv4 form. */
static int host_of(int family, const uint8_t addr[16], const uint8_t **key, size_t *len)
{
	static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (family == AF_INET || (family == AF_INET6 && !memcmp(addr, v4_mapped, 12))) {
		*key = family == AF_INET ? addr : addr + 12;
		*len = 4;
		return AF_INET;
	}
	*key = addr;
	*len = family == AF_INET6 && !(addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80) ? 8 : 16;
	return family;
}

/* Whether connection c's peer and family/addr are one host (host_of). */
static int same_address(const struct nvt_conn *c, int family, const uint8_t addr[16])
{
	const uint8_t *its, *theirs;
	size_t its_len, their_len;

	return host_of(c->family, c->addr, &its, &its_len) == host_of(family, addr, &theirs, &their_len) &&
	       its_len == their_len && !memcmp(its, theirs, its_len);
}

/* The live connection to close first for room (of family/addr unless family is -1): the one
 * whose head, or answer, began longest ago (a client that trickles its head or does not read
 * its answer holds no room by it: a scrape's head and answer take milliseconds); NULL if
 * none. */
static struct nvt_conn *oldest_live(struct nvt_conns *t, int family, const uint8_t addr[16])
{
	struct nvt_conn *old = NULL;

	for (int i = 0; i < t->n; i++) {
		struct nvt_conn *c = &t->v[i];
		if (c->closing || (family != -1 && !same_address(c, family, addr)))
			continue;
		if (!old || c->head_since < old->head_since)
			old = c;
	}
	return old;
}

int nvt_conns_live(const struct nvt_conns *t)
{
	int live = 0;

	for (int i = 0; i < t->n; i++)
		live += !t->v[i].closing;
	return live;
}

int nvt_conns_shared_address(int family, const uint8_t addr[16])
{
	static const uint8_t v6_loopback[16] = {[15] = 1};
	static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};

	static const uint8_t v4_loopback[4] = {127, 0, 0, 1};

	if (family == AF_INET)
		return !memcmp(addr, v4_loopback, 4);
	return family == AF_INET6 && (!memcmp(addr, v6_loopback, 16) ||
				      (!memcmp(addr, v4_mapped, 12) && !memcmp(addr + 12, v4_loopback, 4)));
}

/* How many live connections of family/addr t holds. */
static int from_address(const struct nvt_conns *t, int family, const uint8_t addr[16])
{
	int n = 0;

	for (int i = 0; i < t->n; i++)
		n += !t->v[i].closing && same_address(&t->v[i], family, addr);
	return n;
}

/* The connection to close so that one more (more: 1) or none (0) from family/addr fits in t:
 * marked closing, its fd; -1 if none need close; -2 if there is none it could close. */
static int make_room(struct nvt_conns *t, int family, const uint8_t addr[16], int more)
{
	struct nvt_conn *close_first = NULL;

	if (from_address(t, family, addr) + more > t->per_address && !nvt_conns_shared_address(family, addr))
		close_first = oldest_live(t, family, addr);
	else if (nvt_conns_live(t) + more > t->max)
		close_first = oldest_live(t, -1, addr);
	else
		return -1;
	if (!close_first)
		return -2;
	close_first->closing = 1;
	return close_first->fd;
}

int nvt_conns_admit(struct nvt_conns *t, int family, const uint8_t addr[16])
{
	return make_room(t, family, addr, 1);
}

int nvt_conns_over(struct nvt_conns *t, int family, const uint8_t addr[16])
{
	int fd = make_room(t, family, addr, 0);

	return fd >= 0 ? fd : -1;
}

int nvt_conns_add(struct nvt_conns *t, int fd, int family, const uint8_t addr[16], uint64_t now)
{
	struct nvt_conn *c;

	if (t->n == NVT_CONNS_SLOTS)
		return -1;
	c = &t->v[t->n++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->family = family;
	memcpy(c->addr, addr, family == AF_INET ? 4 : 16);
	c->head_since = now;
	return 0;
}

void nvt_conns_remove(struct nvt_conns *t, int fd)
{
	for (int i = 0; i < t->n; i++)
		if (t->v[i].fd == fd) {
			t->v[i] = t->v[--t->n];
			return;
		}
}

void nvt_conns_answering(struct nvt_conns *t, int fd, int answering, uint64_t now)
{
	for (int i = 0; i < t->n; i++)
		if (t->v[i].fd == fd) {
			t->v[i].answering = answering;
			t->v[i].head_since = now; /* (its answer's start, or the next head's) */
			t->v[i].text = 0;         /* (none yet, or no longer) */
			return;
		}
}

void nvt_conns_sends(struct nvt_conns *t, int fd, uint64_t text)
{
	for (int i = 0; i < t->n; i++)
		if (t->v[i].fd == fd) {
			t->v[i].text = text;
			return;
		}
}

int nvt_conns_stale(struct nvt_conns *t, uint64_t oldest)
{
	for (int i = 0; i < t->n; i++) {
		struct nvt_conn *c = &t->v[i];
		if (!c->closing && c->text && c->text < oldest) {
			c->closing = 1;
			return c->fd;
		}
	}
	return -1;
}

int nvt_conns_expired(struct nvt_conns *t, uint64_t now)
{
	for (int i = 0; i < t->n; i++) {
		struct nvt_conn *c = &t->v[i];
		if (!c->closing && !c->answering && now - c->head_since > t->deadline) {
			c->closing = 1;
			return c->fd;
		}
	}
	return -1;
}
