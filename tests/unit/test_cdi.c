/*
 * test_cdi.c - the JSON reader (src/core/json.c, jsonnames.c) and the CDI names, the OCI
 * runtime's state and configuration, uid maps and cgroups (src/core/cdi.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/cdi.h"
#include "core/json.h"
#include "core/jsonnames.h"
#include "core/prio.h"

/* A literal and its length. */
#define STR(s) s, strlen(s)

static int valid(const char *text)
{
	return nvt_json_check(text, strlen(text)) == 0;
}

static void test_json_check(void)
{
	static const char *const good[] = {
		"{}", " [ ] ", "0", "-0.5e+3", "\"a\\u00e9\\n\"", "{\"a\":[1,{\"b\":null}],\"c\":true}",
		"[\"\\ud83d\\ude00\"]", "false",
	};
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"a\nb\"", "tru",
		"[1] 2", "{a:1}", "\"\\u12\"", "1e", "[", "\"", "{\"a\":1 \"b\":2}",
	};
	char deep[200];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(valid(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!valid(bad[i]));
	/* Nesting is bounded: 64 levels pass, 65 do not. */
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	CHECK(valid(deep));
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	deep[130] = '\0';
	CHECK(!valid(deep));
	/* A NUL inside the length is no white space. */
	CHECK(nvt_json_check("{}\0x", 4) != 0);
}

static void test_json_find(void)
{
	const char *t = "{\"pid\": 42, \"a\":{\"b\":[\"x\",\"y\\\"z\", 7]}, \"pid\":43, \"big\":1e3,"
			"\"s\":\"\\u00e9\\ud83d\\ude00\", \"lone\":\"\\ud800\", \"nul\":\"a\\u0000\"}";
	size_t n = strlen(t), root = nvt_json_root(t, n);
	static const char *const path[] = {"a", "b"};
	char buf[32];
	uint64_t v;
	long at, e;

	CHECK(nvt_json_check(t, n) == 0);
	/* The last of repeated names, as Go's and Python's readers take it. */
	at = nvt_json_member(t, n, root, "pid");
	CHECK(at >= 0 && nvt_json_uint(t, n, (size_t)at, 100, &v) == 0 && v == 43);
	CHECK(nvt_json_uint(t, n, (size_t)at, 42, &v) == -1);
	CHECK(nvt_json_member(t, n, root, "nope") == -1);
	at = nvt_json_member(t, n, root, "big");
	CHECK(nvt_json_uint(t, n, (size_t)at, 10000, &v) == -1);
	at = nvt_json_path(t, n, root, path, 2);
	CHECK(nvt_json_type(t, n, (size_t)at) == NVT_JSON_ARRAY);
	e = nvt_json_first(t, n, (size_t)at);
	CHECK(nvt_json_string(t, n, (size_t)e, buf, sizeof(buf)) == 1 && !strcmp(buf, "x"));
	e = nvt_json_next(t, n, (size_t)e);
	CHECK(nvt_json_string(t, n, (size_t)e, buf, sizeof(buf)) == 3 && !strcmp(buf, "y\"z"));
	CHECK(nvt_json_string(t, n, (size_t)e, buf, 3) == -1); /* does not fit */
	e = nvt_json_next(t, n, (size_t)e);
	CHECK(nvt_json_type(t, n, (size_t)e) == NVT_JSON_NUMBER);
	CHECK(nvt_json_next(t, n, (size_t)e) == -1);
	CHECK(nvt_json_string(t, n, (size_t)e, buf, sizeof(buf)) == -1); /* no string */
	at = nvt_json_member(t, n, root, "s");
	CHECK(nvt_json_string(t, n, (size_t)at, buf, sizeof(buf)) == 6 &&
	      !strcmp(buf, "\xc3\xa9\xf0\x9f\x98\x80"));
	at = nvt_json_member(t, n, root, "lone");
	CHECK(nvt_json_string(t, n, (size_t)at, buf, sizeof(buf)) == -1);
	at = nvt_json_member(t, n, root, "nul");
	CHECK(nvt_json_string(t, n, (size_t)at, buf, sizeof(buf)) == -1);
	/* The head of a string: what fits, never half a character; a NUL within it fails. */
	CHECK(nvt_json_string_head(t, n, (size_t)at, buf, 2) == 1 && !strcmp(buf, "a"));
	CHECK(nvt_json_string_head(t, n, (size_t)at, buf, sizeof(buf)) == -1);
	at = nvt_json_member(t, n, root, "s");
	CHECK(nvt_json_string_head(t, n, (size_t)at, buf, 4) == 2 && !strcmp(buf, "\xc3\xa9"));
	CHECK(nvt_json_string_head(t, n, (size_t)at, buf, sizeof(buf)) == 6);
	CHECK(nvt_json_string_head(t, n, (size_t)nvt_json_member(t, n, root, "big"), buf, 4) == -1);
	/* Offsets past the text, or into another type, find nothing. */
	CHECK(nvt_json_member(t, n, n + 5, "pid") == -1);
	CHECK(nvt_json_first(t, n, root) == -1);
	CHECK(nvt_json_first("[]", 2, 0) == -1);
}

static void test_device_names(void)
{
	static const char *const good[] = {"gpc=0", "gpc=0-3", "gpc=1:0-11", "tpcs=16", "tpcs=15:256",
					   "priority=high", "priority=low", "priority=normal",
					   "priority=low-slice", "priority=normal-slice", "priority=high-slice",
					   "mem=1G", "mem=4096G", "mem=1:16G", "mem=63:4096G"};
	static const char *const bad[] = {"gpc=3-1", "gpc=03", "gpc=0-0", "gpc=", "gpc=64", "tpcs=0",
					  "tpcs=257", "tpcs=01", "tpcs=1:", "priority=none", "prio=high",
					  "priority=1:high", "tpcs=64:1", "gpc=0-3,5", "gpc", "=1",
					  "tpcs=16 ", "priority=slice", "priority=-slice", "priority=low-",
					  "priority=low-slice-slice", "priority=Low-slice", "priority=low-Slice",
					  "priority=low,slice", "priority=1:low-slice", "priority=none-slice",
					  "priority=lowslice", "priority=low-slic", "mem=0G", "mem=16", "mem=16g",
					  "mem=16M", "mem=01:16G", "mem=64:16G", "mem=1:", "mem=:16G", "mem=1:0G", "mem=016G", "mem=4097G", "mem=16GG", "mem=G"};
	struct nvt_cdi_device d;
	char buf[NVT_CDI_DEVICE_TEXT_MAX];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(nvt_cdi_device_parse(good[i], &d) == 0);
		CHECK(nvt_cdi_device_format(&d, buf, sizeof(buf)) > 0 && !strcmp(buf, good[i]));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(nvt_cdi_device_parse(bad[i], &d) == -1);
	CHECK(nvt_cdi_device_parse("gpc=1:2-5", &d) == 0 && d.cls == NVT_CDI_GPC && d.gpu == 1 &&
	      d.first == 2 && d.last == 5);
	CHECK(nvt_cdi_device_parse("tpcs=16", &d) == 0 && d.cls == NVT_CDI_TPCS && d.gpu == -1 &&
	      d.count == 16);
	CHECK(nvt_cdi_device_parse("priority=high-slice", &d) == 0 && d.prio == NVT_PRIO_HIGH &&
	      d.slice == 1);
	CHECK(nvt_cdi_device_parse("priority=low", &d) == 0 && d.prio == NVT_PRIO_LOW && d.slice == 0);
	CHECK(nvt_cdi_device_parse("mem=16G", &d) == 0 && d.cls == NVT_CDI_MEM && d.gpu == -1 &&
	      d.mem_gib == 16);
	CHECK(nvt_cdi_device_parse("mem=1:16G", &d) == 0 && d.cls == NVT_CDI_MEM && d.gpu == 1 &&
	      d.mem_gib == 16);
	CHECK(nvt_cdi_device_format(&d, buf, 5) == -1);
	CHECK(nvt_cdi_shared_pipe("/tmp/nvidia-mps-low", "low", buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, "/tmp/nvidia-mps"));
	CHECK(nvt_cdi_shared_pipe("/a-b-high", "high", buf, sizeof(buf)) == 0 && !strcmp(buf, "/a-b"));
	CHECK(nvt_cdi_shared_pipe("/tmp/nvidia-mps-low", "high", buf, sizeof(buf)) == -1);
	CHECK(nvt_cdi_shared_pipe("/tmp/nvidia-mpslow", "low", buf, sizeof(buf)) == -1);
	CHECK(nvt_cdi_shared_pipe("-low", "low", buf, sizeof(buf)) == -1);
	CHECK(nvt_cdi_shared_pipe("/x-low", "", buf, sizeof(buf)) == -1);
	CHECK(nvt_cdi_shared_pipe("/tmp/nvidia-mps-low", "low", buf, 15) == -1);
	CHECK(nvt_cdi_shared_pipe("/tmp/nvidia-mps-low", "low", buf, 16) == 0);
	CHECK(nvt_cdi_vendor_valid("nvtaskset") && nvt_cdi_vendor_valid("nvtaskset-test.x_1"));
	CHECK(!nvt_cdi_vendor_valid("1abc") && !nvt_cdi_vendor_valid("a/b") &&
	      !nvt_cdi_vendor_valid("abc-") && !nvt_cdi_vendor_valid("") && nvt_cdi_vendor_valid("a"));
}

/* A variable too long to read: another's is passed over, ours is refused, never unset. */
static void test_oci_env_long(void)
{
	static char config[20000];
	char buf[64];
	int n;

	n = snprintf(config, sizeof(config), "{\"process\":{\"env\":[\"LONG=%09000d\",\"NVTASKSET_CDI=tpcs=4\"]}}", 0);
	CHECK(n > 9000 && nvt_oci_config_env(config, (size_t)n, "NVTASKSET_CDI", buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, "tpcs=4"));
	n = snprintf(config, sizeof(config), "{\"process\":{\"env\":[\"NVTASKSET_CDI=%09000d\"]}}", 0);
	CHECK(n > 9000 && nvt_oci_config_env(config, (size_t)n, "NVTASKSET_CDI", buf, sizeof(buf)) == -1);
	/* Escaped: the name is read through the escapes. */
	n = snprintf(config, sizeof(config), "{\"process\":{\"env\":[\"\\u004eVTASKSET_CDI=%09000d\"]}}", 0);
	CHECK(n > 9000 && nvt_oci_config_env(config, (size_t)n, "NVTASKSET_CDI", buf, sizeof(buf)) == -1);
	n = snprintf(config, sizeof(config), "{\"process\":{\"env\":[\"NVTASKSET_CDIX=%09000d\"]}}", 0);
	CHECK(n > 9000 && nvt_oci_config_env(config, (size_t)n, "NVTASKSET_CDI", buf, sizeof(buf)) == 1);
}

static void test_oci(void)
{
	const char *state = "{\"ociVersion\":\"1.0.2-dev\",\"id\":\"265a\",\"status\":\"creating\","
			    "\"pid\":9356,\"bundle\":\"/var/lib/x/userdata\",\"annotations\":{}}";
	const char *stopped = "{\"id\":\"x\",\"status\":\"stopped\",\"bundle\":\"/b\"}";
	const char *config = "{\"process\":{\"user\":{\"uid\":1000,\"gid\":100},\"env\":[\"PATH=/bin\","
			     "\"NVTASKSET_CDI=tpcs=16\",\"A=\",\"NVTASKSET_CDI=gpc=0\"]}}";
	struct nvt_oci_state s;
	char why[128], buf[64];
	uint32_t uid, gid;

	CHECK(nvt_oci_state_parse(state, strlen(state), &s, why, sizeof(why)) == 0);
	CHECK(s.pid == 9356 && !strcmp(s.bundle, "/var/lib/x/userdata") && !strcmp(s.id, "265a"));
	CHECK(nvt_oci_state_parse(stopped, strlen(stopped), &s, why, sizeof(why)) == 0 && s.pid == 0);
	CHECK(nvt_oci_state_parse(STR("{\"pid\":-1,\"bundle\":\"/b\"}"), &s, why, sizeof(why)) == -1);
	CHECK(nvt_oci_state_parse(STR("{\"pid\":1,\"bundle\":\"b\"}"), &s, why, sizeof(why)) == -1);
	CHECK(nvt_oci_state_parse(STR("[]"), &s, why, sizeof(why)) == -1);
	CHECK(nvt_oci_config_user(config, strlen(config), &uid, &gid, why, sizeof(why)) == 0 &&
	      uid == 1000 && gid == 100);
	CHECK(nvt_oci_config_user(STR("{}"), &uid, &gid, why, sizeof(why)) == 0 && uid == 0);
	CHECK(nvt_oci_config_user(STR("{\"process\":{\"user\":{\"uid\":-3}}}"), &uid, &gid, why,
				  sizeof(why)) == -1);
	/* The first of repeated variables, as getenv finds it. */
	CHECK(nvt_oci_config_env(config, strlen(config), "NVTASKSET_CDI", buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, "tpcs=16"));
	CHECK(nvt_oci_config_env(config, strlen(config), "A", buf, sizeof(buf)) == 0 && !buf[0]);
	CHECK(nvt_oci_config_env(config, strlen(config), "NVTASKSET", buf, sizeof(buf)) == 1);
	CHECK(nvt_oci_config_env(config, strlen(config), "PATH", buf, 4) == -1);
	CHECK(nvt_oci_config_env(STR("{\"process\":{\"env\":7}}"), "A", buf, sizeof(buf)) == -1);
	/* Any of repeated variables that is not the one wanted: a runtime may hand any over. */
	CHECK(nvt_oci_config_env_other(config, strlen(config), "NVTASKSET_CDI", "tpcs=16") == 1);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "NVTASKSET_CDI", "gpc=0") == 1);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "PATH", "/bin") == 0);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "PATH", "/bi") == 1);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "A", "") == 0);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "A", NULL) == 1);
	CHECK(nvt_oci_config_env_other(config, strlen(config), "NVTASKSET", NULL) == 0);
	CHECK(nvt_oci_config_env_other(STR("{}"), "A", NULL) == 0);
	CHECK(nvt_oci_config_env_other(STR("{\"process\":{\"env\":7}}"), "A", NULL) == -1);
	test_oci_env_long();
	/* The hooks the runtime was given: an argument of a createRuntime hook, not of another stage. */
	{
		const char *h = "{\"hooks\":{\"createRuntime\":[{\"path\":\"/x\",\"args\":[\"nvtaskset\","
				"\"--cdi-hook\",\"v/tpcs=4\"]},{\"path\":\"/y\"},{\"path\":\"/x\",\"args\":[\"nvtaskset\","
				"\"--cdi-hook\",\"v/priority=high\"]}],\"poststop\":[{\"path\":\"/x\",\"args\":"
				"[\"v/priority=low\"]}]}}";
		CHECK(nvt_oci_config_has_hook(h, strlen(h), "createRuntime", "v/priority=high") == 1);
		CHECK(nvt_oci_config_has_hook(h, strlen(h), "createRuntime", "v/priority=low") == 0);
		CHECK(nvt_oci_config_has_hook(h, strlen(h), "createRuntime", "v/priority=hig") == 0);
		CHECK(nvt_oci_config_has_hook(h, strlen(h), "poststop", "v/priority=low") == 1);
		CHECK(nvt_oci_config_has_hook(STR("{}"), "createRuntime", "v/priority=high") == 0);
		CHECK(nvt_oci_config_has_hook(STR("{\"hooks\":{\"createRuntime\":7}}"), "createRuntime", "x") == 0);
		CHECK(nvt_oci_config_has_hook(STR("{\"hooks\":"), "createRuntime", "x") == -1);
	}
}

/*
 * config.json with a name twice in one object, or a name the hook reads spelled otherwise:
 * refused. runc (Go's encoding/json) merges a repeated object into the one before it and
 * matches names in any case (and U+0131, U+017F, U+212A as i, s, k), so it would run what
 * the hook did not read: here the first "process"'s variable, which the hook, reading the
 * last, never sees.
 */
static void test_oci_names(void)
{
	static const char *const refused[] = {
		"{\"process\":{\"env\":[\"NVTASKSET_MPS_SERVER=low\"]},\"process\":{\"args\":[\"sh\"]}}",
		"{\"process\":{\"args\":[\"sh\"]},\"Process\":{\"env\":[\"A=1\"]}}",
		"{\"PROCESS\":{\"env\":[\"A=1\"]}}",
		"{\"process\":{\"Env\":[\"A=1\"]}}",
		"{\"proce\\u017fs\":{\"env\":[\"A=1\"]}}",
		"{\"process\":{\"env\":[]},\"proce\xc5\xbfs\":{\"env\":[\"A=1\"]}}",
		"{\"hoo\xe2\x84\xaas\":{}}",
		"{\"process\":{\"user\":{\"u\xc4\xb1" "d\":0}}}",
		"{\"root\":{\"path\":\"a\",\"path\":\"b\"}}",
		"{\"hooks\":{\"createRuntime\":[{\"path\":\"/x\",\"args\":[],\"args\":[\"y\"]}]}}",
		"{\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\",\"type\":\"user\"}]}}",
		"{\"annotations\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}}",
		"{\"a\":{\"x\\ud800\":1}}",
		"{\"process\":",
	};
	const char *ok = "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},"
			 "\"args\":[\"sh\"],\"env\":[\"PATH=/bin\",\"PATH=/usr/bin\"]},\"root\":{\"path\":"
			 "\"rootfs\"},\"annotations\":{\"a\":\"1\",\"b\":\"2\",\"B\u00e9\":\"3\"},\"linux\":"
			 "{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"user\"}]}}";
	char why[256], buf[64];

	/* What the hook reads of the first: no variable (the last "process" has none). */
	CHECK(nvt_oci_config_env(refused[0], strlen(refused[0]), "NVTASKSET_MPS_SERVER", buf,
				 sizeof(buf)) == 1);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int rc;
		why[0] = '\0';
		rc = nvt_oci_config_check(refused[i], strlen(refused[i]), why, sizeof(why));
		if (rc != -1)
			fprintf(stderr, "accepted: %s\n", refused[i]);
		CHECK(rc == -1 && why[0] != '\0');
	}
	CHECK(nvt_oci_config_check(ok, strlen(ok), why, sizeof(why)) == 0);
	CHECK(nvt_oci_config_check(STR("{}"), why, sizeof(why)) == 0);
	CHECK(nvt_oci_config_check(STR("[]"), why, sizeof(why)) == -1);
	/* Any object's names, at any depth; one name in two objects is no clash. */
	CHECK(nvt_json_names_distinct(STR("[{\"a\":1},{\"a\":{\"b\":[],\"B\":0}}]"), NULL, 0) == -1);
	CHECK(nvt_json_names_distinct(STR("[{\"a\":1},{\"a\":{\"b\":[],\"c\":0}}]"), NULL, 0) == 0);
	CHECK(nvt_json_names_distinct(STR("{\"a\":1,\"\\u0061\":2}"), NULL, 0) == -1);
	CHECK(nvt_json_names_distinct(STR("{\"\xc3\xa9\":1,\"\xc3\x89\":2}"), NULL, 0) == 0);
	CHECK(nvt_json_names_distinct(STR("{\"a\":1,\"b\":2} x"), NULL, 0) == -1);
}

static void test_uid_maps(void)
{
	const char *rootless = "         0       1000          1\n         1     100000      65536\n";
	const char *init = "         0          0 4294967295\n";
	uint32_t out;

	CHECK(nvt_uid_map_outside(rootless, strlen(rootless), 0, &out) == 0 && out == 1000);
	CHECK(nvt_uid_map_outside(rootless, strlen(rootless), 1000, &out) == 0 && out == 100999);
	CHECK(nvt_uid_map_outside(rootless, strlen(rootless), 65537, &out) == -1);
	CHECK(nvt_uid_map_outside(init, strlen(init), 4242, &out) == 0 && out == 4242);
	CHECK(nvt_uid_map_is_identity(init, strlen(init)));
	CHECK(!nvt_uid_map_is_identity(rootless, strlen(rootless)));
	CHECK(nvt_uid_map_outside(STR("0 x 1\n"), 0, &out) == -1);
	CHECK(nvt_uid_map_outside("", 0, 0, &out) == -1);
}

static void test_cgroups(void)
{
	const char *podman = "9:name=systemd:/libpod_parent/libpod-aed54eaa39f761e7ce0faf8373fbde8208d7"
			     "056f55a892ddf598cd02640ce190\n0::/libpod_parent/libpod-aed54eaa39f761e7"
			     "ce0faf8373fbde8208d7056f55a892ddf598cd02640ce190\n";
	const char *scope = "0::/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcd"
			    "ef0123456789abcdef.scope/container\n";
	const char *k8s = "0::/kubepods/besteffort/pod1234/fedcba9876543210fedcba9876543210fedcba98"
			  "76543210fedcba9876543210\n";
	const char *conmon = "0::/machine.slice/libpod-conmon-0123456789abcdef0123456789abcdef0123456"
			     "789abcdef0123456789abcdef.scope\n";
	char id[NVT_CONTAINER_ID_TEXT];

	CHECK(nvt_cgroup_container(podman, strlen(podman), id, sizeof(id)) == 0 &&
	      !strcmp(id, "aed54eaa39f7"));
	CHECK(nvt_cgroup_container(scope, strlen(scope), id, sizeof(id)) == 0 &&
	      !strcmp(id, "0123456789ab"));
	CHECK(nvt_cgroup_container(k8s, strlen(k8s), id, sizeof(id)) == 0 && !strcmp(id, "fedcba987654"));
	CHECK(nvt_cgroup_container(conmon, strlen(conmon), id, sizeof(id)) == -1);
	CHECK(nvt_cgroup_container(STR("0::/user.slice/session-3.scope\n"), id, sizeof(id)) == -1);
	CHECK(nvt_cgroup_container(podman, strlen(podman), id, 5) == -1);
}

int main(void)
{
	test_json_check();
	test_json_find();
	test_device_names();
	test_oci();
	test_oci_names();
	test_uid_maps();
	test_cgroups();
	return CHECK_DONE();
}
