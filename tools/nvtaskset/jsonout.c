/*
 * jsonout.c - the one writer of the command's JSON, on json-c: objects built
 * member by member, printed whole (jsonout.h). docs/json.md describes the
 * documents.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "core/outbuf.h"

/* Compact, as the documents always were: no spaces, and '/' as it is (paths). */
#define JSONOUT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* json-c could not make or add a value: nothing to print a document with. */
static void __attribute__((noreturn)) no_memory(void)
{
	errx(EXIT_FAILURE, "out of memory");
}

/* v, or the end of the command when json-c returned NULL for it. */
static struct json_object *made(struct json_object *v)
{
	if (!v)
		no_memory();
	return v;
}

struct json_object *jsonout_object(void)
{
	return made(json_object_new_object());
}

struct json_object *jsonout_document(void)
{
	struct json_object *doc = jsonout_object();

	jsonout_add_int(doc, "version", NVT_JSON_VERSION);
	return doc;
}

struct json_object *jsonout_array(void)
{
	return made(json_object_new_array());
}

void jsonout_add(struct json_object *obj, const char *key, struct json_object *value)
{
	/* json-c keeps the members in the order they are added; a failed add leaves value ours. */
	if (json_object_object_add(obj, key, value)) {
		json_object_put(value);
		no_memory();
	}
}

void jsonout_append(struct json_object *array, struct json_object *value)
{
	if (json_object_array_add(array, value)) {
		json_object_put(value);
		no_memory();
	}
}

struct json_object *jsonout_int(int64_t v)
{
	return made(json_object_new_int64(v));
}

struct json_object *jsonout_uint(uint64_t v)
{
	return made(json_object_new_uint64(v));
}

struct json_object *jsonout_bool(int v)
{
	return made(json_object_new_boolean(v != 0));
}

struct json_object *jsonout_number(const char *fmt, double v)
{
	char text[64];

	if (!isfinite(v))
		return NULL;
	snprintf(text, sizeof(text), fmt, v);
	return made(json_object_new_double_s(v, text));
}

struct json_object *jsonout_text(const char *s)
{
	size_t n, at = 0;
	char *clean;
	struct json_object *v;

	if (!s)
		return NULL;
	n = strlen(s);
	/* At most 3 bytes (U+FFFD) for each byte. */
	clean = malloc(3 * n + 1);
	if (!clean)
		no_memory();
	while (n) {
		size_t k = nvt_utf8_len(s, n);
		if (k) {
			memcpy(clean + at, s, k);
			at += k;
		} else {
			memcpy(clean + at, "\xef\xbf\xbd", 3); /* not UTF-8: U+FFFD */
			at += 3;
			k = 1;
		}
		s += k, n -= k;
	}
	v = json_object_new_string_len(clean, (int)at);
	free(clean);
	return made(v);
}

void jsonout_add_int(struct json_object *obj, const char *key, int64_t v)
{
	jsonout_add(obj, key, jsonout_int(v));
}

void jsonout_add_uint(struct json_object *obj, const char *key, uint64_t v)
{
	jsonout_add(obj, key, jsonout_uint(v));
}

void jsonout_add_bool(struct json_object *obj, const char *key, int v)
{
	jsonout_add(obj, key, jsonout_bool(v));
}

void jsonout_add_number(struct json_object *obj, const char *key, const char *fmt, double v)
{
	jsonout_add(obj, key, jsonout_number(fmt, v));
}

void jsonout_add_text(struct json_object *obj, const char *key, const char *s)
{
	jsonout_add(obj, key, jsonout_text(s));
}

void jsonout_add_pid(struct json_object *obj, const char *key, pid_t pid)
{
	jsonout_add(obj, key, pid > 0 ? jsonout_int(pid) : NULL);
}

void jsonout_add_uint_or_null(struct json_object *obj, const char *key, uint64_t v)
{
	jsonout_add(obj, key, v ? jsonout_uint(v) : NULL);
}

void jsonout_add_partition(struct json_object *obj, int partitioned, const struct nvt_tpcset *tpcs)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
	struct json_object *ids;

	jsonout_add_bool(obj, "partitioned", partitioned);
	if (!partitioned) {
		jsonout_add(obj, "tpcs", NULL);
		jsonout_add(obj, "tpc_mask", NULL);
		jsonout_add(obj, "tpc_count", NULL);
		jsonout_add(obj, "tpc_ids", NULL);
		return;
	}
	nvt_format_list(tpcs, list, sizeof(list));
	nvt_format_mask(tpcs, mask, sizeof(mask));
	jsonout_add_text(obj, "tpcs", list);
	jsonout_add_text(obj, "tpc_mask", mask);
	jsonout_add_uint(obj, "tpc_count", nvt_set_count(tpcs));
	ids = jsonout_array();
	jsonout_add(obj, "tpc_ids", ids);
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
		if (nvt_set_has(tpcs, t))
			jsonout_append(ids, jsonout_uint(t));
}

void jsonout_print(FILE *out, struct json_object *obj)
{
	const char *text = json_object_to_json_string_ext(obj, JSONOUT_FLAGS);
	size_t n;

	if (!text)
		no_memory();
	/* json-c's text is UTF-8 (every string went in through jsonout_text: no other file makes
	 * one, layers.py check-json) whose characters outside strings are ASCII and none of
	 * these: what a terminal would act on can only stand inside a string, where its escape
	 * is the same character. */
	n = strlen(text);
	while (n) {
		const char *run = text;
		uint32_t cp = 0xfffd;
		int shown = 1;
		size_t k = 0;
		while (n && (k = nvt_utf8_shown(text, n, &shown)) && (shown || !nvt_utf8_len(text, n)))
			text += k, n -= k;
		fwrite(run, 1, (size_t)(text - run), out);
		if (!n)
			break;
		nvt_utf8_decode(text, n, &cp);
		fprintf(out, "\\u%04x", (unsigned)cp);
		text += k, n -= k;
	}
	fputc('\n', out);
	json_object_put(obj);
}
