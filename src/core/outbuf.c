/*
 * outbuf.c - the growing text buffer and its escaping writers (outbuf.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"

/* Room for n more bytes and a NUL. Returns 0 or -1 (failed set). */
static int reserve(struct nvt_outbuf *b, size_t n)
{
	size_t want;
	char *text;

	if (b->failed)
		return -1;
	if (n < b->cap - b->len && b->text)
		return 0;
	want = b->cap ? b->cap : 4096;
	while (want - b->len <= n) {
		if (want > SIZE_MAX / 2) {
			b->failed = 1;
			return -1;
		}
		want *= 2;
	}
	text = realloc(b->text, want);
	if (!text) {
		b->failed = 1;
		return -1;
	}
	b->text = text;
	b->cap = want;
	return 0;
}

int nvt_outbuf_put(struct nvt_outbuf *b, const char *s, size_t n)
{
	if (reserve(b, n))
		return -1;
	memcpy(b->text + b->len, s, n);
	b->len += n;
	b->text[b->len] = '\0';
	return 0;
}

int nvt_outbuf_printf(struct nvt_outbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (reserve(b, 0))
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->text[b->len] = '\0';
		b->failed = 1;
		return -1;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (reserve(b, (size_t)n))
			return -1;
		va_start(ap, fmt);
		vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
	return 0;
}

size_t nvt_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t want;
	uint32_t c;

	if (!n)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		want = 2, c = u[0] & 0x1fu;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		want = 3, c = u[0] & 0x0fu;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		want = 4, c = u[0] & 0x07u;
	else
		return 0; /* a continuation byte, C0/C1 (overlong two-byte forms), or past U+10FFFF */
	if (n < want)
		return 0;
	for (size_t i = 1; i < want; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[i] & 0x3fu);
	}
	if ((want == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (want == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return want;
}

size_t nvt_utf8_len(const char *s, size_t n)
{
	uint32_t cp;

	return nvt_utf8_decode(s, n, &cp);
}

size_t nvt_utf8_shown(const char *s, size_t n, int *shown)
{
	uint32_t cp = 0;
	size_t k = nvt_utf8_decode(s, n, &cp);

	/* Controls (C0, DEL, C1: an 8-bit terminal reads byte 0x9b, and some UTF-8 terminals
	 * U+009B, as CSI), text-direction overrides and isolates, and bytes that are not
	 * UTF-8. */
	*shown = k && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) &&
		 !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
	return k ? k : (n ? 1 : 0);
}

int nvt_outbuf_xml(struct nvt_outbuf *b, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		uint32_t cp = 0;
		int shown, utf8 = nvt_utf8_decode(s, n, &cp) != 0;
		size_t k = nvt_utf8_shown(s, n, &shown);
		const char *put = NULL;
		unsigned char c = (unsigned char)*s;
		if (!utf8)
			put = "\xef\xbf\xbd"; /* U+FFFD */
		else if (c == '&')
			put = "&amp;";
		else if (c == '<')
			put = "&lt;";
		else if (c == '>')
			put = "&gt;";
		else if (c == '"')
			put = "&quot;";
		else if (c == '\'')
			put = "&apos;";
		else if (!shown || cp == 0xfffe || cp == 0xffff)
			put = " "; /* XML 1.0 has no place for most controls, nor U+FFFE, U+FFFF */
		if (put ? nvt_outbuf_put(b, put, strlen(put)) : nvt_outbuf_put(b, s, k))
			return -1;
		s += k;
		n -= k;
	}
	return reserve(b, 0);
}

void nvt_outbuf_reset(struct nvt_outbuf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->text)
		b->text[0] = '\0';
}

void nvt_outbuf_free(struct nvt_outbuf *b)
{
	free(b->text);
	b->text = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}
