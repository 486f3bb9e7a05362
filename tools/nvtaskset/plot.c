/*
 * plot.c - --profile's curve as a PNG image, with no library: an RGB
 * canvas, a 3x5 pixel font for the axis labels, and a PNG writer whose
 * deflate stream uses fixed Huffman codes and matches of one pixel or one
 * scanline back (a plot of 950 KB of pixels takes ~20 KB).
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define W 720
#define H 440
#define LEFT 70
#define RIGHT 20
#define TOP 30
#define BOTTOM 50

struct canvas {
	uint8_t px[H][W][3];
};

static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0}, grey[3] = {200, 200, 200},
		     blue[3] = {31, 119, 180}, red[3] = {214, 39, 40}, green[3] = {44, 160, 44};

static void dot(struct canvas *c, int x, int y, const uint8_t *rgb)
{
	if (x >= 0 && x < W && y >= 0 && y < H)
		memcpy(c->px[y][x], rgb, 3);
}

static void line(struct canvas *c, int x0, int y0, int x1, int y1, const uint8_t *rgb, int dash)
{
	int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
	int e = dx + dy, step = 0;

	for (;;) {
		if (!dash || (step++ / dash) % 2 == 0)
			dot(c, x0, y0, rgb);
		if (x0 == x1 && y0 == y1)
			return;
		int e2 = 2 * e;
		if (e2 >= dy) {
			e += dy;
			x0 += sx;
		}
		if (e2 <= dx) {
			e += dx;
			y0 += sy;
		}
	}
}

static void square(struct canvas *c, int x, int y, int r, const uint8_t *rgb)
{
	for (int j = -r; j <= r; j++)
		for (int i = -r; i <= r; i++)
			dot(c, x + i, y + j, rgb);
}

/* 3x5 glyphs, rows top to bottom, 3 bits each (4 = left column). */
static const struct {
	char ch;
	uint8_t rows[5];
} font[] = {
	{'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}},
	{'3', {7, 1, 7, 1, 7}}, {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}},
	{'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 2, 2}}, {'8', {7, 5, 7, 5, 7}},
	{'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
	{'e', {0, 7, 7, 4, 7}}, {'+', {0, 2, 7, 2, 0}}, {'T', {7, 2, 2, 2, 2}},
	{'P', {7, 5, 7, 4, 4}}, {'C', {7, 4, 4, 4, 7}}, {'S', {7, 4, 7, 1, 7}},
	{'m', {0, 7, 7, 5, 5}}, {'s', {0, 7, 6, 1, 7}}, {'v', {0, 5, 5, 5, 2}},
	{'a', {0, 6, 1, 7, 7}}, {'l', {6, 2, 2, 2, 7}}, {'u', {0, 5, 5, 5, 7}},
	{'x', {0, 5, 2, 2, 5}}, {'h', {4, 4, 7, 5, 5}}, {'o', {0, 7, 5, 5, 7}},
	{'g', {0, 7, 7, 1, 7}}, {'n', {0, 6, 5, 5, 5}}, {'i', {2, 0, 2, 2, 2}},
	{'k', {4, 5, 6, 5, 5}}, {'c', {0, 7, 4, 4, 7}}, {'p', {0, 7, 5, 7, 4}},
	{'d', {1, 1, 7, 5, 7}}, {'t', {2, 7, 2, 2, 3}}, {'r', {0, 7, 4, 4, 4}},
};

static void text(struct canvas *c, int x, int y, const char *s, int scale, const uint8_t *rgb)
{
	for (; *s; s++, x += 4 * scale) {
		for (size_t g = 0; g < sizeof(font) / sizeof(font[0]); g++) {
			if (font[g].ch != *s)
				continue;
			for (int r = 0; r < 5; r++)
				for (int b = 0; b < 3; b++)
					if (font[g].rows[r] & (4 >> b))
						for (int j = 0; j < scale; j++)
							for (int i = 0; i < scale; i++)
								dot(c, x + b * scale + i,
								    y + r * scale + j, rgb);
		}
	}
}

/* ---- PNG ---------------------------------------------------------------- */

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int chunk(FILE *f, const char *type, const uint8_t *data, uint32_t len)
{
	uint8_t head[8], tail[4];
	uint32_t crc;

	put32(head, len);
	memcpy(head + 4, type, 4);
	crc = crc_update(0, head + 4, 4);
	crc = crc_update(crc, data, len);
	put32(tail, crc);
	return fwrite(head, 1, 8, f) == 8 && (!len || fwrite(data, 1, len, f) == len) &&
	       fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

/* ---- Deflate: one block of fixed Huffman codes (RFC 1951, 3.2.6) -------- */

struct bits {
	uint8_t *buf;
	size_t len, cap;
	uint32_t acc;
	int n;
};

static int put_bits(struct bits *b, uint32_t v, int n)
{
	b->acc |= v << b->n;
	b->n += n;
	while (b->n >= 8) {
		if (b->len == b->cap)
			return -1;
		b->buf[b->len++] = (uint8_t)b->acc;
		b->acc >>= 8;
		b->n -= 8;
	}
	return 0;
}

/* A Huffman code is sent from its most significant bit. */
static int put_code(struct bits *b, uint32_t code, int n)
{
	uint32_t rev = 0;
	for (int i = 0; i < n; i++)
		rev |= ((code >> i) & 1u) << (n - 1 - i);
	return put_bits(b, rev, n);
}

static int put_symbol(struct bits *b, unsigned sym)
{
	if (sym < 144)
		return put_code(b, 0x30 + sym, 8);
	if (sym < 256)
		return put_code(b, 0x190 + sym - 144, 9);
	if (sym < 280)
		return put_code(b, sym - 256, 7);
	return put_code(b, 0xc0 + sym - 280, 8);
}

static const uint16_t len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
				      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
				      3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
				       257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
				       8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
				       7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static int put_match(struct bits *b, unsigned len, unsigned dist)
{
	int l = 28, d = 29;

	while (len_base[l] > len)
		l--;
	while (dist_base[d] > dist)
		d--;
	return put_symbol(b, 257 + (unsigned)l) || put_bits(b, len - len_base[l], len_extra[l]) ||
	       put_code(b, (uint32_t)d, 5) || put_bits(b, dist - dist_base[d], dist_extra[d]);
}

/*
 * The zlib stream of the scanlines: matches at the distance of one pixel
 * (runs of a colour) or one scanline (what the row above holds), which is
 * most of a plot.
 */
static uint8_t *zlib_deflate(const uint8_t *raw, size_t n, size_t stride, size_t *out_len)
{
	struct bits b = {malloc(n + n / 8 + 64), 0, n + n / 8 + 64, 0, 0};
	const size_t dists[2] = {3, stride};
	uint32_t a = 1, s2 = 0;

	if (!b.buf)
		return NULL;
	b.buf[b.len++] = 0x78;
	b.buf[b.len++] = 0x01;
	if (put_bits(&b, 1, 1) || put_bits(&b, 1, 2)) /* last block, fixed codes */
		goto fail;
	for (size_t i = 0; i < n;) {
		size_t best = 0, best_d = 0;
		for (int k = 0; k < 2; k++) {
			size_t d = dists[k], m = 0;
			if (d > i || d > 32768)
				continue;
			while (m < 258 && i + m < n && raw[i + m] == raw[i + m - d])
				m++;
			if (m > best) {
				best = m;
				best_d = d;
			}
		}
		if (best >= 3) {
			if (put_match(&b, (unsigned)best, (unsigned)best_d))
				goto fail;
			i += best;
		} else if (put_symbol(&b, raw[i++])) {
			goto fail;
		}
	}
	if (put_symbol(&b, 256) || put_bits(&b, 0, 7) || b.len + 4 > b.cap)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		a = (a + raw[i]) % 65521;
		s2 = (s2 + a) % 65521;
	}
	put32(b.buf + b.len, (s2 << 16) | a);
	*out_len = b.len + 4;
	return b.buf;
fail:
	free(b.buf);
	return NULL;
}

static int write_png(const char *path, const struct canvas *c)
{
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	size_t raw_len = (size_t)H * (1 + W * 3), z_len = 0;
	uint8_t ihdr[13], *raw = malloc(raw_len), *z;
	FILE *f;
	int rc = -1;

	if (!raw)
		return -1;
	for (int y = 0; y < H; y++) {
		raw[(size_t)y * (1 + W * 3)] = 0; /* filter: none */
		memcpy(raw + (size_t)y * (1 + W * 3) + 1, c->px[y], W * 3);
	}
	z = zlib_deflate(raw, raw_len, 1 + W * 3, &z_len);
	free(raw);
	if (!z)
		return -1;
	put32(ihdr, W);
	put32(ihdr + 4, H);
	ihdr[8] = 8;  /* bits per sample */
	ihdr[9] = 2;  /* RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	f = fopen(path, "wb");
	if (f) {
		rc = fwrite(sig, 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) &&
		     !chunk(f, "IDAT", z, (uint32_t)z_len) && !chunk(f, "IEND", NULL, 0) ? 0 : -1;
		if (fclose(f))
			rc = -1;
	}
	free(z);
	return rc;
}

/* ---- The curve ------------------------------------------------------------ */

struct axes {
	double x_max, y_max;
};

static int px_x(const struct axes *a, double x)
{
	return LEFT + (int)(x / a->x_max * (W - LEFT - RIGHT) + 0.5);
}

static int px_y(const struct axes *a, double y)
{
	return H - BOTTOM - (int)(y / a->y_max * (H - TOP - BOTTOM) + 0.5);
}

static void series(struct canvas *c, const struct axes *a, const struct nvt_profile_size *s,
		   unsigned n, const uint8_t *rgb)
{
	int px = -1, py = -1;

	for (unsigned i = 0; i < n; i++) {
		if (!s[i].n)
			continue;
		int x = px_x(a, s[i].tpcs), y = px_y(a, s[i].median);
		line(c, x, px_y(a, s[i].min), x, px_y(a, s[i].max), rgb, 0);
		line(c, x - 3, px_y(a, s[i].min), x + 3, px_y(a, s[i].min), rgb, 0);
		line(c, x - 3, px_y(a, s[i].max), x + 3, px_y(a, s[i].max), rgb, 0);
		square(c, x, y, 2, rgb);
		if (px >= 0)
			line(c, px, py, x, y, rgb, 0);
		px = x;
		py = y;
	}
}

static void frame(struct canvas *c, const struct axes *a, const struct nvt_profile_size *s,
		  unsigned n, const char *unit)
{
	char label[32];

	line(c, LEFT, TOP, LEFT, H - BOTTOM, black, 0);
	line(c, LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM, black, 0);
	for (int k = 1; k <= 4; k++) {
		double v = a->y_max * k / 4;
		int y = px_y(a, v);
		line(c, LEFT + 1, y, W - RIGHT, y, grey, 4);
		snprintf(label, sizeof(label), "%.3g", v);
		text(c, LEFT - 6 - 8 * (int)strlen(label), y - 5, label, 2, black);
	}
	for (unsigned i = 0; i < n; i++) {
		int x = px_x(a, s[i].tpcs);
		line(c, x, H - BOTTOM, x, H - BOTTOM + 4, black, 0);
		snprintf(label, sizeof(label), "%u", s[i].tpcs);
		text(c, x - 4 * (int)strlen(label), H - BOTTOM + 8, label, 2, black);
	}
	text(c, (W - 4 * 2 * 4) / 2, H - 18, "TPCs", 2, black);
	text(c, 8, 8, unit, 2, black);
}

void profile_plot(const char *path, const struct nvt_profile_size *sizes,
		  const struct nvt_profile_size *hog, unsigned n, int pick, const char *unit)
{
	static struct canvas c;
	struct axes a = {0, 0};

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			memcpy(c.px[y][x], white, 3);
	for (unsigned i = 0; i < n; i++) {
		if (sizes[i].tpcs > a.x_max)
			a.x_max = sizes[i].tpcs;
		if (sizes[i].n && sizes[i].max > a.y_max)
			a.y_max = sizes[i].max;
		if (hog && hog[i].n && hog[i].max > a.y_max)
			a.y_max = hog[i].max;
	}
	if (a.x_max <= 0)
		a.x_max = 1;
	a.y_max = a.y_max > 0 ? a.y_max * 1.1 : 1;
	frame(&c, &a, sizes, n, unit);
	if (pick >= 0)
		line(&c, px_x(&a, sizes[pick].tpcs), TOP, px_x(&a, sizes[pick].tpcs), H - BOTTOM,
		     green, 3);
	if (hog)
		series(&c, &a, hog, n, red);
	series(&c, &a, sizes, n, blue);
	if (write_png(path, &c))
		cli_err("cannot write the plot to %s", path);
}
