/*
 * listen.h - where a server of nvtaskset's listens, as the user writes it:
 * [ADDR:]PORT (the exporter's --exporter). Pure: no name is looked up (a
 * host name would make what is exposed depend on DNS); "localhost" is the
 * loopback address.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_LISTEN_H
#define NVT_LISTEN_H

#include <stddef.h>
#include <stdint.h>

/* The address when ADDR is left out: loopback only, so that nothing is exposed unasked. */
#define NVT_LISTEN_DEFAULT_ADDR "127.0.0.1"

struct nvt_listen {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* in network order: 4 bytes for AF_INET */
	uint16_t port;    /* 0: any free port (the server says which) */
	char host[64];    /* the address as text, IPv6 in brackets: "127.0.0.1", "[::1]" */
};

/*
 * Parses text: PORT (decimal, 0-65535) alone, or ADDR:PORT with ADDR an IPv4
 * address, an IPv6 address in brackets ("[::1]:9433"), or localhost; PORT
 * alone listens on NVT_LISTEN_DEFAULT_ADDR. Returns 0, or -1 with the reason
 * in why.
 */
int nvt_listen_parse(const char *text, struct nvt_listen *out, char *why, size_t len);

#endif /* NVT_LISTEN_H */
