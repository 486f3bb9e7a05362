/*
 * listen.c - [ADDR:]PORT (listen.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "listen.h"
#include "text.h"

/* PORT: decimal digits, 0-65535. Returns 0, or -1 with why. */
static int parse_port(const char *text, uint16_t *port, char *why, size_t len)
{
	uint64_t v;
	const char *end = nvt_decimal(text, 65535, &v);

	if (!end || *end)
		return nvt_why(why, len, "'%.40s' is no port: give a number from 0 to 65535", text);
	*port = (uint16_t)v;
	return 0;
}

int nvt_listen_parse(const char *text, struct nvt_listen *out, char *why, size_t len)
{
	char host[64];
	const char *colon, *port;
	size_t host_len;
	int bracketed = text && text[0] == '[';

	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return nvt_why(why, len, "no port given: give [ADDR:]PORT, e.g. 9433 or 127.0.0.1:9433");
	if (bracketed) {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return nvt_why(why, len, "'%.60s': write an IPv6 address as [ADDR]:PORT", text);
		host_len = (size_t)(close - text - 1);
		colon = close + 1;
		text++;
	} else {
		colon = strrchr(text, ':');
		host_len = colon ? (size_t)(colon - text) : 0;
		if (colon && memchr(text, ':', host_len))
			return nvt_why(why, len, "'%.60s': write an IPv6 address in brackets, [ADDR]:PORT",
				       text);
	}
	port = colon ? colon + 1 : text;
	if (parse_port(port, &out->port, why, len))
		return -1;
	if (host_len >= sizeof(host) - 2)
		return nvt_why(why, len, "the address is too long");
	memcpy(host, colon ? text : NVT_LISTEN_DEFAULT_ADDR,
	       colon ? host_len : sizeof(NVT_LISTEN_DEFAULT_ADDR) - 1);
	host[colon ? host_len : sizeof(NVT_LISTEN_DEFAULT_ADDR) - 1] = '\0';
	if (colon && !host_len)
		return nvt_why(why, len, "no address before ':' (leave ':' out for %s)",
			       NVT_LISTEN_DEFAULT_ADDR);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "%s", NVT_LISTEN_DEFAULT_ADDR);
	if (!bracketed && inet_pton(AF_INET, host, out->addr) == 1) {
		out->family = AF_INET;
		snprintf(out->host, sizeof(out->host), "%s", host);
	} else if (bracketed && inet_pton(AF_INET6, host, out->addr) == 1) {
		out->family = AF_INET6;
		snprintf(out->host, sizeof(out->host), "[%s]", host);
	} else {
		return nvt_why(why, len,
			       "'%.60s' is no IP address: give one (127.0.0.1, [::1], 0.0.0.0 for every "
			       "interface) or localhost; names are not looked up",
			       host);
	}
	return 0;
}
