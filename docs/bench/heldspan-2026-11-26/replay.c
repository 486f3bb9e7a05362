/*
 * replay.c - the held-steps learner (src/core/bridge.c) replayed on measured steps: REL and HELD
 * are files of later steps' times in us, one a line, from a never-held and an always-held run
 * (bench-prio's PRIO_STEP_TRACE); the learner takes each bridge's way and is given that way's
 * next step, as the shim gives it; five passes from different offsets. Prints the steps' mean,
 * p50, p90, p99 and the share held. Built against one version of bridge.c (replay.sh).
 *
 *   replay REL HELD
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/yield.h"
static int rd(const char *p, unsigned *v) { FILE *f = fopen(p, "r"); int n = 0; while (n < 100000 && fscanf(f, "%u", &v[n]) == 1) n++; fclose(f); return n; }
static int cmp(const void *a, const void *b) { unsigned x = *(const unsigned *)a, y = *(const unsigned *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	static unsigned rel[100000], held[100000], got[100000];
	int nr = rd(argv[1], rel), nh = rd(argv[2], held), n = nr < nh ? nr : nh, reps = 5;
	double sum = 0; int nheld = 0, k = 0;
	for (int rep = 0; rep < reps; rep++) {
		struct nvt_bridge_hold h; memset(&h, 0, sizeof(h));
		int pon = 0, pway = 0; unsigned long long pns = 0; int learn;
		int off = rep * 997;
		for (int i = 0; i < n; i++) {
			int way = nvt_bridge_hold_next(&h, NVT_BRIDGE_HOLD_LEARN, &learn);
			if (pon) nvt_bridge_hold_learn(&h, pway, pns);
			unsigned t = way ? held[(i + off) % n] : rel[(i + off) % n];
			pon = learn; pway = way; pns = (unsigned long long)t * 1000;
			sum += t; nheld += way; if (k < 100000) got[k++] = t;
		}
	}
	qsort(got, k, sizeof(got[0]), cmp);
	printf("mean %.0f p50 %u p90 %u p99 %u held %.2f\n", sum / (n * reps), got[k / 2], got[k * 9 / 10], got[k * 99 / 100], (double)nheld / (n * reps));
	return 0;
}
