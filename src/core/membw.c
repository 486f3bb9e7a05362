/*
 * membw.c - a GPU's memory halves from bandwidth probes, and their cache
 * record. See membw.h. Pure code.
 *
 * SPDX-License-Identifier: MIT
 */
#include "membw.h"
#include "tpcset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMBW_HEADER "nvtaskset-memory 1"

double nvt_membw_cost(const struct nvt_membw_probe *p, unsigned g)
{
	return p->hog[g] > 0 ? (p->base - p->beside[g]) / p->hog[g] : 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A judged GPC and its cost, for sorting. */
struct judged {
	double cost;
	unsigned gpc;
};

static int by_cost(const void *a, const void *b)
{
	const struct judged *x = a, *y = b;
	return x->cost < y->cost ? -1 : x->cost > y->cost;
}

unsigned nvt_membw_split(const struct nvt_membw_probe *p, unsigned n_gpcs, int8_t in_ref_half[])
{
	struct judged j[NVT_MAX_GPCS];
	double hogs[NVT_MAX_GPCS], noise[NVT_MAX_GPCS], floor_, gap = 0, second = 0;
	unsigned n = 0, n_hogs = 0, at = 0;

	for (unsigned g = 0; g < n_gpcs && g < NVT_MAX_GPCS; g++) {
		in_ref_half[g] = NVT_HALF_UNKNOWN;
		if (g != p->ref && p->hog[g] > 0)
			hogs[n_hogs++] = p->hog[g];
	}
	if (p->ref >= n_gpcs || n_gpcs > NVT_MAX_GPCS || n_hogs < 2 || !(p->base > 0))
		return 0;
	floor_ = median_of(hogs, n_hogs) / 4;
	for (unsigned g = 0; g < n_gpcs; g++)
		if (g != p->ref && p->hog[g] >= floor_ && p->hog[g] > 0) {
			noise[n] = p->spread[g] / p->hog[g];
			j[n++] = (struct judged){nvt_membw_cost(p, g), g};
		}
	if (n < 2)
		return 0;
	qsort(j, n, sizeof(j[0]), by_cost);
	for (unsigned i = 0; i + 1 < n; i++) {
		double d = j[i + 1].cost - j[i].cost;
		if (d > gap) {
			second = gap;
			gap = d;
			at = i;
		} else if (d > second) {
			second = d;
		}
	}
	/* Two groups, not a smear: the gap stands out from the noise of the
	 * repetitions and from every other gap. */
	if (gap < 3 * median_of(noise, n) || gap < 2 * second || gap <= 0)
		return 0;
	for (unsigned i = 0; i < n; i++)
		in_ref_half[j[i].gpc] = (int8_t)(i > at);
	in_ref_half[p->ref] = 1;
	return n + 1;
}

int nvt_membw_combine(const struct nvt_membw_probe *first, const struct nvt_membw_probe *second,
		      unsigned n_gpcs, struct nvt_membw *out, char *why, size_t len)
{
	int8_t a[NVT_MAX_GPCS], b[NVT_MAX_GPCS];
	unsigned disagree = 0, lowest = n_gpcs;

	memset(out, 0, sizeof(*out));
	out->n_gpcs = n_gpcs < NVT_MAX_GPCS ? n_gpcs : NVT_MAX_GPCS;
	memset(out->half, NVT_HALF_UNKNOWN, sizeof(out->half));
	if (!nvt_membw_split(first, out->n_gpcs, a)) {
		snprintf(why, len, "beside GPC %u, no neighbour cost clearly more than another",
			 first->ref);
		return -1;
	}
	if (second->ref >= out->n_gpcs || a[second->ref] != 0 ||
	    !nvt_membw_split(second, out->n_gpcs, b)) {
		snprintf(why, len, "beside GPC %u, no neighbour cost clearly more than another",
			 second->ref);
		return -1;
	}
	for (unsigned g = 0; g < out->n_gpcs; g++) {
		if (a[g] == NVT_HALF_UNKNOWN || b[g] == NVT_HALF_UNKNOWN)
			continue;
		if (a[g] != 1 - b[g]) {
			disagree++;
			continue;
		}
		out->half[g] = a[g];
		if (lowest == n_gpcs)
			lowest = g;
	}
	if (disagree > 1 || lowest == n_gpcs) {
		memset(out->half, NVT_HALF_UNKNOWN, sizeof(out->half));
		snprintf(why, len, "the probes beside GPCs %u and %u disagree on %u GPCs",
			 first->ref, second->ref, disagree);
		return -1;
	}
	/* Half 0 holds the lowest-numbered GPC judged. */
	if (out->half[lowest] == 1)
		for (unsigned g = 0; g < out->n_gpcs; g++)
			if (out->half[g] != NVT_HALF_UNKNOWN)
				out->half[g] = (int8_t)(1 - out->half[g]);
	snprintf(why, len, "%u of %u GPCs placed; the probes disagreed on %u", nvt_membw_known(out),
		 out->n_gpcs, disagree);
	return 0;
}

unsigned nvt_membw_known(const struct nvt_membw *m)
{
	unsigned n = 0;
	for (unsigned g = 0; g < m->n_gpcs && g < NVT_MAX_GPCS; g++)
		n += m->half[g] == 0 || m->half[g] == 1;
	return n;
}

unsigned nvt_membw_half_tpcs(const struct nvt_topology *topo, const struct nvt_membw *m, int h,
			     struct nvt_tpcset *out)
{
	nvt_set_clear(out);
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		if (topo->gpc[t] < m->n_gpcs && topo->gpc[t] < topo->n_gpcs &&
		    m->half[topo->gpc[t]] == h)
			nvt_set_add(out, t);
	return nvt_set_count(out);
}

int nvt_membw_half_of(const struct nvt_topology *topo, const struct nvt_membw *m,
		      const struct nvt_tpcset *tpcs)
{
	int seen[2] = {0, 0};

	if (!nvt_set_count(tpcs) || !topo->n_gpcs)
		return NVT_HALF_UNKNOWN;
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++) {
		if (!nvt_set_has(tpcs, t))
			continue;
		if (t >= topo->n_tpcs || topo->gpc[t] >= m->n_gpcs ||
		    (m->half[topo->gpc[t]] != 0 && m->half[topo->gpc[t]] != 1))
			return NVT_HALF_UNKNOWN;
		seen[m->half[topo->gpc[t]]] = 1;
	}
	return seen[0] && seen[1] ? 2 : seen[1];
}

int nvt_membw_auto_half(const struct nvt_topology *topo, const struct nvt_membw *m,
			const struct nvt_tpcset *avail, const struct nvt_tpcset *others,
			unsigned need)
{
	unsigned free_[2], held[2];
	int best = NVT_HALF_UNKNOWN;

	for (int h = 0; h < 2; h++) {
		struct nvt_tpcset half, in;
		nvt_membw_half_tpcs(topo, m, h, &half);
		nvt_set_and(&in, &half, avail);
		free_[h] = nvt_set_count(&in);
		nvt_set_and(&in, &half, others);
		held[h] = nvt_set_count(&in);
		if (free_[h] < need || !need)
			continue;
		if (best == NVT_HALF_UNKNOWN || held[h] < held[best] ||
		    (held[h] == held[best] && free_[h] > free_[best]))
			best = h;
	}
	return best;
}

int nvt_membw_format(const char *uuid, unsigned sms, const struct nvt_membw *m, char *buf,
		     size_t len)
{
	size_t pos;
	int n;

	if (!uuid || strncmp(uuid, "GPU-", 4) || strlen(uuid) > 47 || !m->n_gpcs ||
	    m->n_gpcs > NVT_MAX_GPCS || strspn(uuid, "GPU-0123456789abcdefABCDEF") != strlen(uuid))
		return -1;
	n = snprintf(buf, len, MEMBW_HEADER " uuid=%s sms=%u gpcs=%u halves=", uuid, sms, m->n_gpcs);
	if (n < 0 || (size_t)n >= len)
		return -1;
	pos = (size_t)n;
	for (unsigned g = 0; g < m->n_gpcs; g++) {
		int h = m->half[g];
		n = snprintf(buf + pos, len - pos, "%s%c", g ? "," : "",
			     h == 0 ? '0' : h == 1 ? '1' : '-');
		if (n < 0 || (size_t)n >= len - pos)
			return -1;
		pos += (size_t)n;
	}
	if (pos + 1 >= len)
		return -1;
	buf[pos++] = '\n';
	n = snprintf(buf + pos, len - pos, "checksum=%016llx\n",
		     (unsigned long long)nvt_text_checksum(buf, pos));
	if (n < 0 || (size_t)n >= len - pos)
		return -1;
	return (int)(pos + (size_t)n);
}

int nvt_membw_parse(const char *text, const char *uuid, unsigned sms, unsigned n_gpcs,
		    struct nvt_membw *out)
{
	char got_uuid[48], tail;
	unsigned got_sms, got_gpcs;
	const char *nl, *p;
	unsigned long long sum;
	int used = 0;
	struct nvt_membw m;

	if (!text || strncmp(text, MEMBW_HEADER " uuid=", strlen(MEMBW_HEADER) + 6))
		return -1;
	nl = strchr(text, '\n');
	if (!nl || sscanf(nl + 1, "checksum=%16llx%c%n", &sum, &tail, &used) != 2 || tail != '\n' ||
	    nl[1 + used] != '\0' || strlen(nl + 1) != 26 ||
	    sum != nvt_text_checksum(text, (size_t)(nl + 1 - text)))
		return -1;
	used = 0;
	if (sscanf(text + strlen(MEMBW_HEADER), " uuid=%47[A-Fa-f0-9GPU-] sms=%u gpcs=%u halves=%n",
		   got_uuid, &got_sms, &got_gpcs, &used) != 3 ||
	    !used || got_gpcs == 0 || got_gpcs > NVT_MAX_GPCS)
		return -1;
	memset(&m, 0, sizeof(m));
	m.n_gpcs = got_gpcs;
	memset(m.half, NVT_HALF_UNKNOWN, sizeof(m.half));
	p = text + strlen(MEMBW_HEADER) + used;
	for (unsigned g = 0; g < got_gpcs; g++) {
		if (g && *p++ != ',')
			return -1;
		if (*p != '0' && *p != '1' && *p != '-')
			return -1;
		m.half[g] = (int8_t)(*p == '-' ? NVT_HALF_UNKNOWN : *p - '0');
		p++;
	}
	if (p != nl)
		return -1;
	/* Only the form nvt_membw_format writes: no signs, spaces or leading zeros. */
	{
		char again[NVT_MEMBW_TEXT_MAX];
		if (nvt_membw_format(got_uuid, got_sms, &m, again, sizeof(again)) < 0 || strcmp(again, text))
			return -1;
	}
	if (strcmp(got_uuid, uuid) || got_sms != sms || got_gpcs != n_gpcs)
		return 1;
	*out = m;
	return 0;
}

void nvt_membw_gpcs_text(const struct nvt_membw *m, int h, char *buf, size_t len)
{
	struct nvt_tpcset gpcs;

	nvt_set_clear(&gpcs);
	for (unsigned g = 0; g < m->n_gpcs && g < NVT_MAX_GPCS; g++)
		if (m->half[g] == h)
			nvt_set_add(&gpcs, g);
	if (len)
		buf[0] = '\0';
	if (nvt_set_count(&gpcs) && nvt_format_list(&gpcs, buf, len) < 0 && len)
		buf[0] = '\0';
}
