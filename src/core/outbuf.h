/*
 * outbuf.h - the one growing text buffer that the viewers' outputs are built
 * in (the metrics' text, top's frames, the partition map's SVG), written
 * whole once made: what a reader gets is never half a document. Text from
 * processes and users (command lines, user names) goes in through the
 * escaping writers, which also turn bytes that are not UTF-8 into U+FFFD,
 * so that the output is well-formed by construction. Pure (it allocates,
 * never on the launch path).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_OUTBUF_H
#define NVT_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialise; text is NUL-terminated whenever it is not NULL. */
struct nvt_outbuf {
	char *text;
	size_t len; /* bytes written, without the NUL */
	size_t cap;
	int failed; /* out of memory once: the text stops there (every writer returns -1 after) */
};

/* Appends n bytes of s. Returns 0, or -1 when out of memory (failed set). */
int nvt_outbuf_put(struct nvt_outbuf *b, const char *s, size_t n);
/* Appends printf's text. Returns 0 or -1 (failed set). */
int nvt_outbuf_printf(struct nvt_outbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Appends s as XML character data or an attribute's value: & < > " '
 * escaped, what nvt_utf8_shown hides as a space (a control, tab and newline
 * included; a text-direction override) and U+FFFE and U+FFFF (no XML
 * characters) as a space, and a byte that does not begin a whole UTF-8
 * sequence as U+FFFD. Returns 0 or
 * -1 (failed set).
 */
int nvt_outbuf_xml(struct nvt_outbuf *b, const char *s);
/* Empties b, keeping its memory. */
void nvt_outbuf_reset(struct nvt_outbuf *b);
/* Frees b's memory; b is empty again. */
void nvt_outbuf_free(struct nvt_outbuf *b);

/*
 * The length (1-4) of the UTF-8 sequence that begins s (at most n bytes
 * there): a shortest form, no surrogate, at most U+10FFFF; 0 if s does not
 * begin one (a stray continuation byte, a sequence cut short, an overlong
 * form).
 */
size_t nvt_utf8_len(const char *s, size_t n);
/* As nvt_utf8_len, and stores the sequence's code point in *cp. */
size_t nvt_utf8_decode(const char *s, size_t n, uint32_t *cp);
/*
 * The one rule for text from tasks and users in every output (-l, top, JSON,
 * the SVG, the metrics): whether the character at s (at most n bytes there)
 * may go out as it is, in *shown: 0 for a control (C0, DEL, C1), a
 * text-direction override or isolate (U+202A-202E, U+2066-2069), and a byte
 * that does not begin a whole UTF-8 sequence; 1 for the rest. Returns the
 * length to step over (1 for a byte that is not UTF-8; 0 only where n is 0).
 */
size_t nvt_utf8_shown(const char *s, size_t n, int *shown);

#endif /* NVT_OUTBUF_H */
