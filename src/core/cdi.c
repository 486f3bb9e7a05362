/*
 * cdi.c - CDI device names, and what a hook reads from the OCI runtime (see
 * cdi.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cdi.h"
#include "json.h"
#include "jsonnames.h"
#include "nvtaskset.h"
#include "prio.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[NVT_CDI_CLASSES] = {"gpc", "tpcs", "priority", "mem"};
/* After a priority's level: time-sliced (CDI names have no ',' or '+' for yield=slice). */
#define CDI_SLICE "-slice"

const char *nvt_cdi_class_name(int cls)
{
	return cls >= 0 && cls < NVT_CDI_CLASSES ? class_names[cls] : NULL;
}

int nvt_cdi_name_format(const struct nvt_cdi_device *d, char *buf, size_t len)
{
	char gpu[16] = "";
	int n;

	if (d->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "%d:", d->gpu);
	switch (d->cls) {
	case NVT_CDI_GPC:
		n = d->first == d->last ? snprintf(buf, len, "%s%u", gpu, d->first)
					: snprintf(buf, len, "%s%u-%u", gpu, d->first, d->last);
		break;
	case NVT_CDI_TPCS: n = snprintf(buf, len, "%s%u", gpu, d->count); break;
	case NVT_CDI_PRIORITY:
		n = snprintf(buf, len, "%s%s", nvt_prio_name(d->prio), d->slice ? CDI_SLICE : "");
		break;
	case NVT_CDI_MEM: n = snprintf(buf, len, "%s%uG", gpu, d->mem_gib); break;
	default: return -1;
	}
	return n >= 0 && (size_t)n < len ? n : -1;
}

int nvt_cdi_device_format(const struct nvt_cdi_device *d, char *buf, size_t len)
{
	const char *cls = nvt_cdi_class_name(d->cls);
	int n = cls ? snprintf(buf, len, "%s=", cls) : -1, name;

	if (n < 0 || (size_t)n >= len)
		return -1;
	name = nvt_cdi_name_format(d, buf + n, len - (size_t)n);
	return name < 0 ? -1 : n + name;
}

/* A number without leading zeros from 0 to max at p: its end, or NULL. */
static const char *plain_number(const char *p, uint64_t max, unsigned *out)
{
	uint64_t v;
	const char *end = nvt_decimal(p, max, &v);

	if (!end || (p[0] == '0' && end - p > 1))
		return NULL;
	*out = (unsigned)v;
	return end;
}

int nvt_cdi_device_parse(const char *text, struct nvt_cdi_device *out)
{
	struct nvt_cdi_device d = {.gpu = -1};
	const char *eq = strchr(text, '='), *p, *colon;
	char again[NVT_CDI_DEVICE_TEXT_MAX];
	unsigned gpu;

	if (!eq)
		return -1;
	for (d.cls = 0; d.cls < NVT_CDI_CLASSES; d.cls++)
		if (strlen(class_names[d.cls]) == (size_t)(eq - text) &&
		    !strncmp(text, class_names[d.cls], (size_t)(eq - text)))
			break;
	if (d.cls == NVT_CDI_CLASSES)
		return -1;
	p = eq + 1;
	colon = strchr(p, ':');
	if (colon && d.cls != NVT_CDI_PRIORITY) {
		if (plain_number(p, NVT_CDI_GPU_MAX - 1, &gpu) != colon)
			return -1;
		d.gpu = (int)gpu;
		p = colon + 1;
	}
	if (d.cls == NVT_CDI_PRIORITY) {
		char level[NVT_CDI_DEVICE_TEXT_MAX];
		size_t n = strlen(p);
		if (n >= sizeof(level))
			return -1;
		memcpy(level, p, n + 1);
		d.slice = n > strlen(CDI_SLICE) && !strcmp(level + n - strlen(CDI_SLICE), CDI_SLICE);
		if (d.slice)
			level[n - strlen(CDI_SLICE)] = '\0';
		if (nvt_prio_parse(level, &d.prio) || d.prio == NVT_PRIO_NONE)
			return -1;
	} else if (d.cls == NVT_CDI_MEM) {
		p = plain_number(p, NVT_CDI_MEM_GIB_MAX, &d.mem_gib);
		if (!p || strcmp(p, "G") || d.mem_gib == 0)
			return -1;
	} else if (d.cls == NVT_CDI_TPCS) {
		p = plain_number(p, NVT_MAX_TPCS, &d.count);
		if (!p || *p || d.count == 0)
			return -1;
	} else {
		p = plain_number(p, NVT_MAX_GPCS - 1, &d.first);
		d.last = d.first;
		if (p && *p == '-')
			p = plain_number(p + 1, NVT_MAX_GPCS - 1, &d.last);
		if (!p || *p || d.last < d.first)
			return -1;
	}
	/* One spelling per device: the one the spec's names use. */
	if (nvt_cdi_device_format(&d, again, sizeof(again)) < 0 || strcmp(again, text))
		return -1;
	*out = d;
	return 0;
}

int nvt_cdi_vendor_valid(const char *vendor)
{
	size_t n = strlen(vendor);

	if (n < 1 || n >= NVT_CDI_VENDOR_MAX || !isalpha((unsigned char)vendor[0]) ||
	    !isalnum((unsigned char)vendor[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)vendor[i]) && !strchr("-_.", vendor[i]))
			return 0;
	return 1;
}

int nvt_cdi_shared_pipe(const char *level_pipe, const char *level, char *out, size_t size)
{
	size_t n = strlen(level_pipe), m = strlen(level);

	if (!m || n < m + 2 || level_pipe[n - m - 1] != '-' || strcmp(level_pipe + n - m, level) ||
	    n - m - 1 >= size)
		return -1;
	memcpy(out, level_pipe, n - m - 1);
	out[n - m - 1] = '\0';
	return 0;
}

/* ---- The OCI runtime's state and the container's configuration ------------ */

int nvt_oci_state_parse(const char *text, size_t text_len, struct nvt_oci_state *out,
			char *why, size_t len)
{
	size_t root = nvt_json_root(text, text_len);
	long pid = nvt_json_member(text, text_len, root, "pid");
	long bundle = nvt_json_member(text, text_len, root, "bundle");
	long id = nvt_json_member(text, text_len, root, "id");
	uint64_t v = 0;

	memset(out, 0, sizeof(*out));
	if (nvt_json_check(text, text_len) || nvt_json_type(text, text_len, root) != NVT_JSON_OBJECT)
		return nvt_why(why, len, "the runtime's state is not a JSON object");
	if (pid >= 0 && nvt_json_uint(text, text_len, (size_t)pid, 0x3fffffff, &v))
		return nvt_why(why, len, "the runtime's state has a malformed pid");
	out->pid = (long)v;
	if (bundle < 0 ||
	    nvt_json_string(text, text_len, (size_t)bundle, out->bundle, sizeof(out->bundle)) < 1 ||
	    out->bundle[0] != '/')
		return nvt_why(why, len, "the runtime's state names no bundle directory (an absolute path)");
	if (id >= 0 && nvt_json_string(text, text_len, (size_t)id, out->id, sizeof(out->id)) < 0)
		return nvt_why(why, len, "the runtime's state has a malformed id");
	return 0;
}

/*
 * Every member name the readers below follow in config.json. Refusing a
 * config that names one of them twice, or in another case, rather than
 * taking the last as runc takes a repeated name, keeps the hook agreeing with
 * every runtime: runc merges a repeated object member by member into the one
 * before it (a first "process" keeps its "env" under a second one that has
 * none) and takes "Process", or "process" with U+017F for an s, for "process", while crun's parser
 * reads names as they are spelled.
 */
static const char *const config_names[] = {"process", "user", "uid", "gid", "env",
					   "hooks", "createRuntime", "args", "root", "path"};

int nvt_oci_config_check(const char *text, size_t text_len, char *why, size_t len)
{
	if (nvt_json_check(text, text_len) || nvt_json_type(text, text_len, nvt_json_root(text, text_len)) != NVT_JSON_OBJECT)
		return nvt_why(why, len, "the container's config.json is not a JSON object");
	if (nvt_json_names_distinct(text, text_len, config_names, sizeof(config_names) / sizeof(config_names[0])))
		return nvt_why(why, len,
			       "the container's config.json names a member twice in one object, or one the "
			       "hook reads (process, env, hooks, root, ...) in another case: runtimes differ "
			       "in which value they take, so the hook cannot know what the container runs");
	return 0;
}

int nvt_oci_config_user(const char *text, size_t text_len, uint32_t *uid, uint32_t *gid,
			char *why, size_t len)
{
	static const char *const user_path[] = {"process", "user"};
	size_t root = nvt_json_root(text, text_len);
	long user, u, g;
	uint64_t v;

	*uid = *gid = 0;
	if (nvt_json_check(text, text_len) || nvt_json_type(text, text_len, root) != NVT_JSON_OBJECT)
		return nvt_why(why, len, "the container's config.json is not a JSON object");
	user = nvt_json_path(text, text_len, root, user_path, 2);
	if (user < 0)
		return 0;
	u = nvt_json_member(text, text_len, (size_t)user, "uid");
	g = nvt_json_member(text, text_len, (size_t)user, "gid");
	if (u >= 0) {
		if (nvt_json_uint(text, text_len, (size_t)u, UINT32_MAX - 1, &v))
			return nvt_why(why, len, "the container's config.json has a malformed uid");
		*uid = (uint32_t)v;
	}
	if (g >= 0) {
		if (nvt_json_uint(text, text_len, (size_t)g, UINT32_MAX - 1, &v))
			return nvt_why(why, len, "the container's config.json has a malformed gid");
		*gid = (uint32_t)v;
	}
	return 0;
}

/*
 * Calls each(value, n, arg) for every variable name=value of process.env in
 * its order until each returns non-zero. Returns that value, 0 at the end (1
 * if there is no process.env), or -1 if the configuration is malformed or a
 * variable that may be name's is too long to read.
 */
static int env_each(const char *text, size_t len, const char *name,
		    int (*each)(const char *value, size_t n, void *arg), void *arg)
{
	static const char *const env_path[] = {"process", "env"};
	size_t n = strlen(name);
	long env;

	if (nvt_json_check(text, len))
		return -1;
	env = nvt_json_path(text, len, nvt_json_root(text, len), env_path, 2);
	if (env < 0)
		return 1;
	if (nvt_json_type(text, len, (size_t)env) != NVT_JSON_ARRAY)
		return -1;
	for (long e = nvt_json_first(text, len, (size_t)env); e >= 0;
	     e = nvt_json_next(text, len, (size_t)e)) {
		char var[8192];
		long got = nvt_json_string(text, len, (size_t)e, var, sizeof(var));
		int rc;
		if (got < 0) {
			/* Another variable too long for var (or undecodable) is no matter;
			 * ours must fit: one that begins "NAME=" is refused, never unset. */
			if (nvt_json_type(text, len, (size_t)e) != NVT_JSON_STRING)
				return -1;
			if (n + 2 > sizeof(var) || nvt_json_string_head(text, len, (size_t)e, var, n + 2) < 0 ||
			    (!strncmp(var, name, n) && var[n] == '='))
				return -1;
			continue;
		}
		if ((size_t)got > n && !strncmp(var, name, n) && var[n] == '=' &&
		    (rc = each(var + n + 1, (size_t)got - n - 1, arg)))
			return rc;
	}
	return 0;
}

/* Where nvt_oci_config_env puts the first value. */
struct env_value {
	char *buf;
	size_t size;
};

static int env_first(const char *value, size_t n, void *arg)
{
	struct env_value *v = arg;

	if (n >= v->size)
		return -1;
	memcpy(v->buf, value, n + 1);
	return 2;
}

int nvt_oci_config_env(const char *text, size_t len, const char *name, char *buf, size_t size)
{
	struct env_value v = {buf, size};
	int rc = env_each(text, len, name, env_first, &v);

	return rc == 2 ? 0 : rc == 0 ? 1 : rc;
}

static int env_not(const char *value, size_t n, void *arg)
{
	const char *want = arg;

	return !want || strlen(want) != n || memcmp(value, want, n) ? 2 : 0;
}

int nvt_oci_config_env_other(const char *text, size_t len, const char *name, const char *value)
{
	int rc = env_each(text, len, name, env_not, (void *)value);

	return rc == 2 ? 1 : rc == 1 ? 0 : rc;
}

int nvt_oci_config_has_hook(const char *text, size_t len, const char *stage, const char *arg)
{
	const char *const path[] = {"hooks", stage};
	char word[NVT_CDI_VENDOR_MAX + NVT_CDI_DEVICE_TEXT_MAX + 8];
	long hooks;

	if (nvt_json_check(text, len))
		return -1;
	hooks = nvt_json_path(text, len, nvt_json_root(text, len), path, 2);
	if (hooks < 0 || nvt_json_type(text, len, (size_t)hooks) != NVT_JSON_ARRAY)
		return 0;
	for (long h = nvt_json_first(text, len, (size_t)hooks); h >= 0;
	     h = nvt_json_next(text, len, (size_t)h)) {
		long args = nvt_json_member(text, len, (size_t)h, "args");
		if (args < 0 || nvt_json_type(text, len, (size_t)args) != NVT_JSON_ARRAY)
			continue;
		for (long a = nvt_json_first(text, len, (size_t)args); a >= 0;
		     a = nvt_json_next(text, len, (size_t)a))
			if (nvt_json_string(text, len, (size_t)a, word, sizeof(word)) >= 0 &&
			    !strcmp(word, arg))
				return 1;
	}
	return 0;
}

/* ---- User namespaces and cgroups ------------------------------------------- */

/* Reads a line "A B C" of three numbers below 2^32 from p (up to end): its
 * end (past the newline), or NULL. */
static const char *map_line(const char *p, const char *end, uint64_t v[3])
{
	for (int i = 0; i < 3; i++) {
		char num[16];
		size_t k = 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (p < end && isdigit((unsigned char)*p) && k + 1 < sizeof(num))
			num[k++] = *p++;
		num[k] = '\0';
		if (!k || nvt_decimal(num, UINT32_MAX, &v[i]) != num + k)
			return NULL;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p != '\n')
		return NULL;
	return p < end ? p + 1 : p;
}

int nvt_uid_map_outside(const char *text, size_t len, uint32_t id, uint32_t *out)
{
	const char *p = text, *end = text + len;
	uint64_t v[3];

	while (p < end) {
		p = map_line(p, end, v);
		if (!p)
			return -1;
		if (id >= v[0] && (uint64_t)id - v[0] < v[2] && v[1] + (id - v[0]) <= UINT32_MAX) {
			*out = (uint32_t)(v[1] + (id - v[0]));
			return 0;
		}
	}
	return -1;
}

int nvt_uid_map_is_identity(const char *text, size_t len)
{
	uint64_t v[3];
	const char *p = map_line(text, text + len, v);

	return p && p == text + len && v[0] == 0 && v[1] == 0 && v[2] == UINT32_MAX;
}

/* 1 if name (n bytes) is a container's cgroup: its id's start in *id. */
static int container_component(const char *name, size_t n, const char **id)
{
	static const char *const prefixes[] = {"libpod-", "docker-", "cri-containerd-", "crio-", ""};

	if (n > 6 && !memcmp(name + n - 6, ".scope", 6))
		n -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = strlen(prefixes[i]), hex = 0;
		if (n != k + 64 || memcmp(name, prefixes[i], k))
			continue;
		while (hex < 64 && isxdigit((unsigned char)name[k + hex]) &&
		       !isupper((unsigned char)name[k + hex]))
			hex++;
		if (hex == 64) {
			*id = name + k;
			return 1;
		}
	}
	return 0;
}

int nvt_cgroup_container(const char *text, size_t len, char *id, size_t size)
{
	const char *p = text, *end = text + len, *found = NULL;
	size_t found_depth = 0;

	if (size < NVT_CONTAINER_ID_TEXT)
		return -1;
	while (p < end) {
		const char *line_end = memchr(p, '\n', (size_t)(end - p)), *path;
		size_t depth = 0;
		if (!line_end)
			line_end = end;
		/* "HIERARCHY:CONTROLLERS:PATH" */
		path = memchr(p, ':', (size_t)(line_end - p));
		path = path ? memchr(path + 1, ':', (size_t)(line_end - path - 1)) : NULL;
		for (const char *c = path ? path + 1 : line_end; c < line_end;) {
			const char *slash = memchr(c, '/', (size_t)(line_end - c)), *cid;
			size_t n = (size_t)((slash ? slash : line_end) - c);
			depth++;
			if (n && container_component(c, n, &cid) && depth >= found_depth) {
				found = cid;
				found_depth = depth;
			}
			c = slash ? slash + 1 : line_end;
		}
		p = line_end < end ? line_end + 1 : end;
	}
	if (!found)
		return -1;
	memcpy(id, found, NVT_CONTAINER_ID_TEXT - 1);
	id[NVT_CONTAINER_ID_TEXT - 1] = '\0';
	return 0;
}

int nvt_oci_config_root(const char *text, size_t len, const char *bundle, char *buf, size_t size)
{
	static const char *const root_path[] = {"root", "path"};
	char path[NVT_OCI_PATH_MAX];
	long at;
	int n;

	if (nvt_json_check(text, len))
		return -1;
	at = nvt_json_path(text, len, nvt_json_root(text, len), root_path, 2);
	if (at < 0 || nvt_json_string(text, len, (size_t)at, path, sizeof(path)) < 1)
		return -1;
	n = path[0] == '/' ? snprintf(buf, size, "%s", path) : snprintf(buf, size, "%s/%s", bundle, path);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}
