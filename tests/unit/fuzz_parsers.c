/*
 * fuzz_parsers.c - fuzz target for every parser of user, environment, file
 * and control-daemon text: TPC masks, TPC lists, topology and cache records,
 * NVTASKSET_SM_COUNT's words,
 * --profile documents and --plan bounds,
 * MPS logs and answers, /proc/PID/stat lines and process identities, JSON
 * texts, CDI device names, the OCI runtime's state and config.json, uid maps
 * and cgroups, the exporter's [ADDR:]PORT and the metrics' label values. Whatever a parser accepts must format and parse back to the
 * same value.
 *
 * Built as a libFuzzer target (clang -fsanitize=fuzzer), or with
 * -DFUZZ_STANDALONE as a program with its own seeded mutator that runs for
 * $FUZZ_SECONDS (default 3) under AddressSanitizer, for CI with gcc alone;
 * given files, the standalone program runs each once (the inputs of
 * tests/unit/fuzz-regressions/, which fuzzers once failed on).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gpu/driverinfo.h"
#include "core/cdi.h"
#include "core/json.h"
#include "core/promtext.h"
#include "core/listen.h"
#include "core/gpusel.h"
#include "core/membw.h"
#include "core/memlimit.h"
#include "core/mpslog.h"
#include "core/profile.h"
#include "core/prio.h"
#include "core/yield.h"
#include "core/ptree.h"
#include "core/smcount.h"
#include "core/queuerec.h"
#include "core/topo.h"
#include "core/tpcset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void fuzz_containers(const char *text, size_t size);
static void fuzz_memory(const char *text);

static void fail(const char *what, const char *input)
{
	fprintf(stderr, "fuzz: %s for input \"%s\"\n", what, input);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[4096], again[NVT_TOPO_TEXT_MAX];
	struct nvt_tpcset set, back;
	struct nvt_topology topo, topo_back;
	static const unsigned limits[] = {0, 1, 8, 64, 66, 255, NVT_MAX_TPCS};

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct nvt_parse_error err;
		int rc = nvt_parse_mask(text, limits[i], &set);
		if (rc < 0 || rc > 2)
			fail("mask parser returned an unknown code", text);
		if (nvt_parse_mask_why(text, limits[i], &back, &err) != rc ||
		    (rc == NVT_PARSE_OK) != (err.problem == NVT_PARSE_NOTHING))
			fail("mask parser's reason disagrees with its code", text);
		if (rc == NVT_PARSE_OK) {
			if (nvt_set_highest(&set) >= (int)limits[i])
				fail("mask parser accepted a TPC beyond its limit", text);
			if (nvt_format_mask(&set, again, sizeof(again)) < 0 ||
			    nvt_parse_mask(again, NVT_MAX_TPCS, &back) != NVT_PARSE_OK ||
			    !nvt_set_equal(&set, &back))
				fail("mask did not survive a round trip", text);
		}
		rc = nvt_parse_list(text, limits[i], &set);
		if (rc < 0 || rc > 2)
			fail("list parser returned an unknown code", text);
		if (nvt_parse_list_why(text, limits[i], &back, &err) != rc ||
		    (rc == NVT_PARSE_OK) != (err.problem == NVT_PARSE_NOTHING) ||
		    (err.problem == NVT_PARSE_ZERO_STEP && err.word + err.word_len > strlen(text)) ||
		    (err.problem == NVT_PARSE_MALFORMED &&
		     (err.word + err.word_len > strlen(text) || err.at > strlen(text))))
			fail("list parser's reason disagrees with its code", text);
		/* A tidied list parses, and is not the text. */
		if (!nvt_list_tidied(text, limits[i], again, sizeof(again)) &&
		    (nvt_parse_list(again, limits[i], &back) != NVT_PARSE_OK || !strcmp(again, text)))
			fail("a tidied list does not parse", text);
		if (rc == NVT_PARSE_OK) {
			if (nvt_set_highest(&set) >= (int)limits[i] || nvt_set_count(&set) == 0)
				fail("list parser accepted an empty or out-of-range list", text);
			if (nvt_format_list(&set, again, sizeof(again)) < 0 ||
			    nvt_parse_list(again, NVT_MAX_TPCS, &back) != NVT_PARSE_OK ||
			    !nvt_set_equal(&set, &back))
				fail("list did not survive a round trip", text);
		}
	}
	{
		/* --plan's readers of profile documents and bounds. */
		static struct nvt_profile_size sizes[8];
		struct nvt_bound bound;
		double v;
		int n = nvt_profile_parse_json(text, "sizes", sizes, 8);
		if (n > 8)
			fail("profile reader read past its room", text);
		for (int i = 0; i < n; i++)
			if (!sizes[i].tpcs || sizes[i].tpcs > 4096)
				fail("profile reader accepted a size of no TPCs", text);
		if (n > 0 && nvt_profile_needed(sizes, (size_t)n, &(struct nvt_bound){NVT_BOUND_SLOWDOWN, 0.05}) >= n)
			fail("profile pick out of range", text);
		if (nvt_bound_parse(text, &bound) == 0 && !(bound.value >= 0))
			fail("bound parser accepted a negative bound", text);
		if (nvt_first_number(text, &v) == 0 && v != v)
			fail("number reader returned NaN", text);
	}
	{
		struct nvt_mps_fault fault;
		struct nvt_cache_key key = {"GPU-1", 13000, 8, "580.1"}, fast = {"GPU-1", 0, 0, "580.1"};
		long servers[4];
		int counts[4];
		if (nvt_mpslog_last_fault(text, &fault) && (fault.n_torn < 0 || fault.n_torn > NVT_MPS_MAX_PIDS))
			fail("fault parser overflowed", text);
		if (nvt_mpslog_parse_ps(text, servers, counts, 4) > (int)size)
			fail("more servers than bytes", text);
		char uuid[48], model[64], version[32];
		if (nvt_parse_gpu_information(text, uuid, sizeof(uuid), model, sizeof(model)) == 0 &&
		    (strncmp(uuid, "GPU-", 4) || strlen(uuid) >= sizeof(uuid)))
			fail("accepted a bad UUID", text);
		if (nvt_parse_nvrm_version(text, version, sizeof(version)) == 0 && !strchr(version, '.'))
			fail("accepted a version without a dot", text);
		if (nvt_cache_parse(text, &key, &topo, NULL) == NVT_CACHE_OK && nvt_topo_validate(&topo))
			fail("cache parser accepted an invalid topology", text);
		if (nvt_cache_parse(text, &fast, &topo, NULL) == NVT_CACHE_OK && nvt_topo_validate(&topo))
			fail("cache parser accepted an invalid topology", text);
	}
	{
		/* The memory halves' record: what it accepts is in range and survives a round trip. */
		struct nvt_membw m, back;
		char again[NVT_MEMBW_TEXT_MAX];
		if (nvt_membw_parse(text, "GPU-1", 8, 4, &m) == 0) {
			for (unsigned g = 0; g < NVT_MAX_GPCS; g++)
				if (m.half[g] < -1 || m.half[g] > 1 || (g >= m.n_gpcs && m.half[g] != -1))
					fail("halves parser accepted a half out of range", text);
			if (m.n_gpcs != 4 || nvt_membw_format("GPU-1", 8, &m, again, sizeof(again)) < 0 ||
			    nvt_membw_parse(again, "GPU-1", 8, 4, &back) != 0 ||
			    memcmp(m.half, back.half, sizeof(m.half)))
				fail("halves record did not survive a round trip", text);
		}
	}
	{
		static struct nvt_slot_view parts[NVT_MAX_GPUS], parts_back[NVT_MAX_GPUS];
		static char record[NVT_PARTENV_TEXT_MAX];
		struct nvt_gpu_id ids[2] = {{"GPU-7c40aaaa-0000-1111-2222-333344445555", "a"},
					    {"GPU-7c41aaaa-0000-1111-2222-333344445555", "b"}};
		int idx[2], n = nvt_gpusel_env_parse(text, parts, NVT_MAX_GPUS);
		if (n > 0) {
			for (int g = 0; g < n; g++)
				if (nvt_topo_validate(&parts[g].topo) || nvt_uuid_is_zero(parts[g].uuid))
					fail("partition record parser accepted an invalid GPU", text);
			if (nvt_gpusel_env_format(parts, n, record, sizeof(record)) < 0 ||
			    nvt_gpusel_env_parse(record, parts_back, NVT_MAX_GPUS) != n)
				fail("partition record did not survive a round trip", text);
		}
		n = nvt_visible_gpus(text, ids, 2, 0, idx);
		if (n > 2 || (n == 2 && idx[0] == idx[1]))
			fail("visible-devices parser named a GPU twice", text);
		if (nvt_gpusel_resolve(text, ids, 2) >= 2)
			fail("resolved a GPU that does not exist", text);
	}
	{
		struct nvt_proc_id id, id_back;
		struct nvt_stat st;
		if (nvt_stat_parse(text, &st) == 0 && (st.pid < 0 || st.ppid < 0))
			fail("stat parser gave a negative PID", text);
		if (nvt_ptree_id_parse(text, &id) == 0 &&
		    (id.pid <= 0 || nvt_ptree_id_format(&id, again, sizeof(again)) ||
		     nvt_ptree_id_parse(again, &id_back) || id_back.pidns != id.pidns ||
		     id_back.pid != id.pid || id_back.start_time != id.start_time))
			fail("process identity did not survive a round trip", text);
	}
	{
		/* A priority's text: what it formats parses back to the same. */
		struct nvt_slot_prio p = {0}, back = {0};
		char again[NVT_PRIO_ENV_TEXT_MAX];
		if (nvt_prio_env_parse(text, &p) == 0 &&
		    (nvt_prio_env_format(&p, again, sizeof(again)) < 0 || nvt_prio_env_parse(again, &back) ||
		     back.prio != p.prio || back.flags != p.flags || back.guard != p.guard ||
		     back.yield != p.yield || back.bound_us != p.bound_us || back.ahead_us != p.ahead_us ||
		     back.duty_pct != p.duty_pct))
			abort();
		memset(&p, 0, sizeof(p));
		if (nvt_yield_parse(text, &p, NULL, 0) == 0 &&
		    nvt_yield_format(&p, ',', again, sizeof(again)) < 0)
			abort();
	}
	{
		/* NVTASKSET_SM_COUNT: a mode it accepts names itself back. */
		int mode = -1, back = -1;
		if (nvt_sm_count_parse(text, &mode) == 0 &&
		    (*text && (nvt_sm_count_parse(nvt_sm_count_name(mode), &back) || back != mode ||
			       strcmp(nvt_sm_count_name(mode), text))))
			abort();
	}
	if (nvt_topo_parse(text, &topo) == 0) {
		if (nvt_topo_validate(&topo))
			fail("topology parser accepted an invalid topology", text);
		if (nvt_topo_format(&topo, again, sizeof(again)) < 0 ||
		    nvt_topo_parse(again, &topo_back) || memcmp(&topo, &topo_back, sizeof(topo)))
			fail("topology did not survive a round trip", text);
	}
	{
		/* [ADDR:]PORT: what it accepts names an address of its family and prints back. */
		struct nvt_listen at, back;
		char again[96];
		if (nvt_listen_parse(text, &at, NULL, 0) == 0) {
			snprintf(again, sizeof(again), "%s:%u", at.host, (unsigned)at.port);
			if ((at.family != AF_INET && at.family != AF_INET6) || nvt_listen_parse(again, &back, NULL, 0) ||
			    memcmp(&at, &back, sizeof(at)))
				fail("[ADDR:]PORT did not survive a round trip", text);
		}
	}
	{
		/* Any bytes as a label value and a help text: one line each, valid UTF-8, no quote
		 * left bare. */
		struct nvt_outbuf b = {0};
		struct nvt_prom_label l = {"v", text};
		if (nvt_prom_family(&b, "f", "gauge", text) == 0 && nvt_prom_sample(&b, "f", &l, 1, 1) == 0) {
			size_t lines = 0, k;
			for (size_t i = 0; i < b.len; i += k) {
				k = nvt_utf8_len(b.text + i, b.len - i);
				if (!k)
					fail("metrics text that is not UTF-8", text);
				lines += b.text[i] == '\n';
			}
			if (lines != 3)
				fail("a label value or help text broke the line", text);
		}
		nvt_outbuf_free(&b);
	}
	fuzz_containers(text, size);
	{
		/* A queued start's record: one that parses is written back the same. */
		static struct nvt_queuerec rec;
		static char again_rec[NVT_QUEUED_MAX + 1];
		int n;
		if (nvt_queuerec_parse(text, size, &rec) == 0 &&
		    ((n = nvt_queuerec_format(&rec, again_rec, sizeof(again_rec))) != (int)size ||
		     memcmp(again_rec, text, size)) &&
		    (n < 0 || nvt_queuerec_parse(again_rec, (size_t)n, &rec)))
			fail("a queued start's record did not survive a round trip", text);
	}
	fuzz_memory(text);
	return 0;
}

/* Walks every value of the JSON text at offset at (depth levels at most). */
static void walk_json(const char *text, size_t size, long at, int depth)
{
	char buf[64];
	uint64_t v;
	int n = 0;

	if (at < 0 || depth > NVT_JSON_DEPTH)
		return;
	switch (nvt_json_type(text, size, (size_t)at)) {
	case NVT_JSON_ARRAY:
		for (long e = nvt_json_first(text, size, (size_t)at); e >= 0 && n < 64;
		     e = nvt_json_next(text, size, (size_t)e), n++)
			walk_json(text, size, e, depth + 1);
		break;
	case NVT_JSON_OBJECT:
		walk_json(text, size, nvt_json_member(text, size, (size_t)at, "pid"), depth + 1);
		walk_json(text, size, nvt_json_member(text, size, (size_t)at, "env"), depth + 1);
		break;
	case NVT_JSON_STRING:
		if (nvt_json_string(text, size, (size_t)at, buf, sizeof(buf)) >= (long)sizeof(buf))
			fail("JSON string longer than its buffer", text);
		/* Its head agrees with the whole where the whole fits in 8 bytes. */
		n = (int)nvt_json_string(text, size, (size_t)at, buf, 8);
		if (n >= 0 && (nvt_json_string_head(text, size, (size_t)at, buf + 16, 8) != n ||
			       memcmp(buf, buf + 16, (size_t)n + 1)))
			fail("JSON string's head differs from the string", text);
		break;
	case NVT_JSON_NUMBER: nvt_json_uint(text, size, (size_t)at, 1000, &v); break;
	default: break;
	}
}

/* --mem's SIZE against GPUs of several sizes (none known among them), and NVTASKSET_MEM. */
static void fuzz_memory(const char *text)
{
	static const uint64_t gpus[] = {0, 80ull << 30, 1ull << 20, UINT64_MAX};
	char why[256], shown[NVT_MEM_TEXT_MAX], digits[32], digits_gpu[NVT_MEM_ENV_TEXT_MAX];
	struct nvt_mem_env env;
	uint64_t bytes, back;

	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		if (nvt_memlimit_parse(text, gpus[i], &bytes, why, sizeof(why)))
			continue;
		if (bytes < NVT_MEM_LIMIT_MIN || (gpus[i] && bytes > gpus[i]))
			fail("--mem's SIZE accepted a limit out of its range", text);
		/* What is shown reads back as no more than the limit (shown rounded down). */
		nvt_memlimit_format(bytes, shown, sizeof(shown));
		if (!nvt_memlimit_parse(shown, 0, &back, why, sizeof(why)) && back > bytes)
			fail("a limit as shown reads back above itself", text);
	}
	if (nvt_memlimit_env_parse(text, &bytes) == 0) {
		snprintf(digits, sizeof(digits), "%llu", (unsigned long long)bytes);
		if (strcmp(digits, text) || bytes < NVT_MEM_LIMIT_MIN || bytes > NVT_MEM_LIMIT_MAX)
			fail("NVTASKSET_MEM's reader accepted other than its digits in range", text);
	}
	if (nvt_memlimit_env_read(text, &env) == 0) {
		/* One spelling: what it read writes back as the text. */
		if (nvt_memlimit_env_write(&env, digits_gpu, sizeof(digits_gpu)) < 0 ||
		    strcmp(digits_gpu, text))
			fail("NVTASKSET_MEM's reader accepted a text it does not write", text);
	}
}

/* JSON, CDI names, the OCI runtime's texts, uid maps and cgroups. */
static void fuzz_containers(const char *text, size_t size)
{
	struct nvt_cdi_device d;
	struct nvt_oci_state state;
	char again[NVT_CDI_DEVICE_TEXT_MAX], why[128], id[NVT_CONTAINER_ID_TEXT], value[256];
	uint32_t uid, gid, out;

	if (nvt_cdi_device_parse(text, &d) == 0 &&
	    (nvt_cdi_device_format(&d, again, sizeof(again)) < 0 || strcmp(again, text)))
		fail("CDI device name did not survive a round trip", text);
	/* The readers never read past the text, valid or not. */
	walk_json(text, size, (long)nvt_json_root(text, size), 0);
	if (nvt_json_check(text, size) == 0)
		walk_json(text, size, (long)nvt_json_root(text, size), 0);
	if (nvt_oci_state_parse(text, size, &state, why, sizeof(why)) == 0 &&
	    (state.bundle[0] != '/' || state.pid < 0))
		fail("OCI state parser accepted no bundle or a negative pid", text);
	/* A config.json accepted is JSON whose top names no member twice, in any case. */
	if (nvt_oci_config_check(text, size, why, sizeof(why)) == 0 &&
	    (nvt_json_check(text, size) ||
	     (nvt_json_member(text, size, nvt_json_root(text, size), "A") >= 0 &&
	      nvt_json_member(text, size, nvt_json_root(text, size), "a") >= 0)))
		fail("a config.json accepted that is no JSON or names A and a", text);
	nvt_oci_config_user(text, size, &uid, &gid, why, sizeof(why));
	nvt_oci_config_env(text, size, "A", value, sizeof(value));
	if (nvt_oci_config_env_other(text, size, "A", NULL) == 0 &&
	    nvt_oci_config_env(text, size, "A", value, sizeof(value)) == 0)
		fail("a variable found is not there for nvt_oci_config_env_other", text);
	nvt_oci_config_has_hook(text, size, "createRuntime", "A");
	nvt_uid_map_outside(text, size, 1000, &out);
	nvt_uid_map_is_identity(text, size);
	if (nvt_cgroup_container(text, size, id, sizeof(id)) == 0 &&
	    (strlen(id) != 12 || strspn(id, "0123456789abcdef") != 12))
		fail("cgroup parser gave a container id that is not 12 hexadecimal digits", text);
}

#ifdef FUZZ_STANDALONE
#include <time.h>

static const char *const seeds[] = {
	"GPU-7c40aaaa-0000-1111-2222-333344445555 0-3 nvtaskset-topology 1 tpcs=4 gpcs=0 flags=0 "
	"map=0,1,2,3",
	"1,GPU-7c41,0", "GPU-7c40aaaa-0000-1111-2222-333344445555",
	"4242 (py (x) y) S 4200 4242 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100\n",
	"4026531836.4242.98765",
	"f", "0xff", "ff,ffffffff", "3,00000000,00000000", "0", "0-15,32,40-47:2", "5", "0-65:65",
	"9,1,1,0-2", "1-5:0", "99999999999",
	"nvtaskset-topology 1 tpcs=4 gpcs=0 flags=0 map=0,1,2,3",
	"nvtaskset-topology 1 tpcs=2 gpcs=2 flags=1 map=0,9 gpc=1,0",
	"nvtaskset-topology 1 tpcs=3 gpcs=2 flags=1 map=75,78,81 gpc=0,1,1\n",
	"nvtaskset-topology 2 tpcs=3 gpcs=2 flags=1 tmd=V05_00 cc=12.0 map=0,12,95 gpc=0,1,1\n",
	"nvtaskset-topology 2 tpcs=2 gpcs=0 flags=0 tmd=none cc=0.0 map=1,0",
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2503, Context: 1} encountered a fatal GPU error.\n"
	"[2026-11-21 20:01:59.353 Server  2483] Client {PID: 2534, Context ID: 1} on device 0 to be torn down\n",
	"PID ID SERVER DEVICE NAMESPACE COMMAND\n2503 2 2483 GPU-f 4026531836 loop\n",
	"Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-7c406bb6-0fa7-9001\n",
	"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu\n",
	"nvtaskset-cache 1 uuid=GPU-1 driver=13000 sms=8 nvrm=580.1\nnvtaskset-topology 1 tpcs=4 gpcs=0 flags=0 map=0,1,2,3\nchecksum=0000000000000000\n",
	"nvtaskset-cache 2 uuid=GPU-1 driver=13000 sms=4 nvrm=580.1\nnvtaskset-topology 2 tpcs=2 gpcs=0 flags=1 tmd=V04_01 cc=10.0 map=0,1\nchecksum=0000000000000000\n",
	"nvtaskset-cache 1 uuid=GPU-1 driver=13000 sms=8 nvrm=580.1",
	"Server not found\n",
	"nvtaskset-memory 1 uuid=GPU-1 sms=8 gpcs=4 halves=0,1,-,1\nchecksum=bd8a416d8bedbf02\n",
	"gpc=1:0-3", "tpcs=16", "priority=high", "mem=16G",
	"16G", "1.5g", "12.5%", "100%", "512KiB", "67108864", "1125899906842624",
	"{\"ociVersion\":\"1.0.2\",\"id\":\"c\",\"status\":\"creating\",\"pid\":9356,\"bundle\":\"/b\"}",
	"{\"process\":{\"user\":{\"uid\":1000,\"gid\":1},\"env\":[\"A=\\u00e9\\ud83d\\ude00\",\"B=1\"]},"
	"\"x\":[1.5e3,-0,true,false,null,[[{}]]]}",
	"         0       1000          1\n         1     100000      65536\n",
	"9433", "127.0.0.1:9433", "[::1]:0", "localhost:80", "a\"b\\c\nd\xff",
	"0::/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n",
};
static const char alphabet[] = "0123456789abcdefxX,-: =\n\tgpcmaptsflVnoe_.{}[]\"\\u/";

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

/* Mutates buf (len bytes, capacity cap) in place; returns the new length. */
static size_t mutate(char *buf, size_t len, size_t cap)
{
	int edits = 1 + (int)(next_random() % 4);
	for (int e = 0; e < edits; e++) {
		size_t at = len ? next_random() % (len + 1) : 0;
		switch (next_random() % 5) {
		case 0: /* replace */
			if (at < len)
				buf[at] = alphabet[next_random() % (sizeof(alphabet) - 1)];
			break;
		case 1: /* insert */
			if (len + 1 < cap) {
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = alphabet[next_random() % (sizeof(alphabet) - 1)];
				len++;
			}
			break;
		case 2: /* delete */
			if (at < len) {
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
			}
			break;
		case 3: /* random byte */
			if (at < len)
				buf[at] = (char)(next_random() & 0xff);
			break;
		default: /* duplicate a run */
			if (len && len * 2 < cap) {
				memcpy(buf + len, buf, len);
				len *= 2;
			}
		}
	}
	return len;
}

/* Runs one input file; returns 0, or 1 if it cannot be read. */
static int run_file(const char *path)
{
	static uint8_t data[4096];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		return 1;
	}
	n = fread(data, 1, sizeof(data), f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("FUZZ_SECONDS");
	double seconds = env ? atof(env) : 3.0;
	time_t end = time(NULL) + (time_t)(seconds + 0.5);
	long runs = 0;
	char buf[2048];

	if (argc > 1) {
		int failed = 0;
		for (int i = 1; i < argc; i++)
			failed |= run_file(argv[i]);
		if (!failed)
			printf("fuzz: %d inputs, no failure\n", argc - 1);
		return failed;
	}

	while (time(NULL) < end) {
		for (int i = 0; i < 1000; i++, runs++) {
			const char *seed = seeds[next_random() % (sizeof(seeds) / sizeof(seeds[0]))];
			size_t len = strlen(seed);
			memcpy(buf, seed, len);
			len = mutate(buf, len, sizeof(buf));
			LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		}
	}
	printf("fuzz: %ld inputs, no failure\n", runs);
	return 0;
}
#endif
