/*
 * prog.c - a program written for libsmctrl, README's example: its kernels
 * run on TPCs 0-3 of the TPCs it may use (within its nvtaskset partition,
 * if it has one).
 *
 *   cc -o prog docs/examples/prog.c $(pkg-config --cflags --libs libsmctrl) -lcuda
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <libsmctrl.h>

int main(void)
{
	uint32_t tpcs = 0;
	int rc;

	/* A set bit disables its TPC: every kernel launched from here on runs on TPCs 0-3. */
	libsmctrl_set_global_mask(~0xfull);
	rc = libsmctrl_get_tpc_info_cuda(&tpcs, 0);
	if (rc) {
		fprintf(stderr, "prog: libsmctrl_get_tpc_info_cuda: error %d\n", rc);
		return 1;
	}
	printf("GPU 0 has %u TPCs; this program's kernels run on TPCs 0-3\n", tpcs);
	return 0;
}
