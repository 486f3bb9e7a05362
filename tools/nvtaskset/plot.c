/*
 * plot.c - --profile's curve as an SVG image: text in the reader's own fonts,
 * axes with their ticks and labels, a legend; written with fprintf, nothing
 * to encode.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "profile.h"

#define W 720
#define H 440
#define LEFT 70
#define RIGHT 20
#define TOP 40
#define BOTTOM 50

#define BLUE "#1f77b4"  /* alone */
#define RED "#d62728"   /* beside the bandwidth hog */
#define GREEN "#2ca02c" /* the pick */

struct axes {
	double x_max, y_max;
};

static double px_x(const struct axes *a, double x)
{
	return LEFT + x / a->x_max * (W - LEFT - RIGHT);
}

static double px_y(const struct axes *a, double y)
{
	return H - BOTTOM - y / a->y_max * (H - TOP - BOTTOM);
}

/* Writes s as XML text: controls and bytes that are not UTF-8 become '?'. */
static void xml_text(FILE *f, const char *s)
{
	char shown[256];

	terminal_text(s, shown, sizeof(shown));
	for (const char *p = shown; *p; p++)
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*p, f);
		}
}

/* One curve: the medians joined, each size's min-max as a bar, a dot at the median. */
static void series(FILE *f, const struct axes *a, const struct nvt_profile_size *s, unsigned n,
		   const char *colour, const char *name)
{
	fprintf(f, "<g class=\"%s\" stroke=\"%s\" fill=\"%s\">\n<polyline fill=\"none\" "
		"stroke-width=\"2\" points=\"", name, colour, colour);
	for (unsigned i = 0, first = 1; i < n; i++)
		if (s[i].n) {
			fprintf(f, "%s%.1f,%.1f", first ? "" : " ", px_x(a, s[i].tpcs),
				px_y(a, s[i].median));
			first = 0;
		}
	fputs("\"/>\n", f);
	for (unsigned i = 0; i < n; i++) {
		double x = px_x(a, s[i].tpcs), lo = px_y(a, s[i].min), hi = px_y(a, s[i].max);
		if (!s[i].n)
			continue;
		fprintf(f, "<path d=\"M%.1f,%.1fV%.1fM%.1f,%.1fh6M%.1f,%.1fh6\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n",
			x, lo, hi, x - 3, lo, x - 3, hi, x, px_y(a, s[i].median));
	}
	fputs("</g>\n", f);
}

/* The axes, their grid, ticks and labels. */
static void frame(FILE *f, const struct axes *a, const struct nvt_profile_size *s, unsigned n,
		  const char *unit)
{
	fprintf(f, "<g stroke=\"#000\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
		LEFT, TOP, LEFT, H - BOTTOM, LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM);
	for (int k = 1; k <= 4; k++) {
		double v = a->y_max * k / 4, y = px_y(a, v);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c8c8c8\" "
			"stroke-dasharray=\"4 4\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
			"dominant-baseline=\"middle\">%.3g</text>\n",
			LEFT + 1, y, W - RIGHT, y, LEFT - 6, y, v);
	}
	for (unsigned i = 0; i < n; i++) {
		double x = px_x(a, s[i].tpcs);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%u</text>\n",
			x, H - BOTTOM, x, H - BOTTOM + 4, x, H - BOTTOM + 18, s[i].tpcs);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">TPCs</text>\n",
		(LEFT + W - RIGHT) / 2, H - 12);
	fprintf(f, "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">",
		(TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2);
	xml_text(f, unit);
	fputs("</text>\n", f);
}

/* The legend, top right: what each colour is. */
static void legend(FILE *f, int hog, int pick)
{
	const char *names[3] = {"alone (median, min-max)", "beside the bandwidth hog", "the pick"};
	const char *colours[3] = {BLUE, RED, GREEN};
	int y = 18;

	for (int i = 0; i < 3; i++) {
		if ((i == 1 && !hog) || (i == 2 && !pick))
			continue;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"%s/><text x=\"%d\" y=\"%d\" dominant-baseline=\"middle\">"
			"%s</text>\n",
			W - 230, y, W - 206, y, colours[i], i == 2 ? " stroke-dasharray=\"6 3\"" : "",
			W - 200, y, names[i]);
		y += 16;
	}
}

void profile_plot(const char *path, const struct nvt_profile_size *sizes,
		  const struct nvt_profile_size *hog, unsigned n, int pick, const char *unit)
{
	struct axes a = {0, 0};
	FILE *f = fopen(path, "w");

	if (!f)
		cli_err("cannot write the plot to %s", path);
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
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		"font-size=\"13\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		W, H, W, H);
	frame(f, &a, sizes, n, unit);
	if (pick >= 0)
		fprintf(f, "<line class=\"pick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>\n",
			px_x(&a, sizes[pick].tpcs), TOP, px_x(&a, sizes[pick].tpcs), H - BOTTOM, GREEN);
	if (hog)
		series(f, &a, hog, n, RED, "beside-hog");
	series(f, &a, sizes, n, BLUE, "alone");
	legend(f, hog != NULL, pick >= 0);
	fputs("</svg>\n", f);
	if (ferror(f) | fclose(f))
		cli_err("cannot write the plot to %s", path);
}
