/*
 * jsonout.h - the one writer of the command's JSON (every --json, docs/json.md):
 * documents built as json-c objects, members in the order they are added, and
 * printed whole, compact, on one line. Text from tasks and users goes in
 * neutralised (jsonout_text); numbers printed with a format keep its text.
 * The bottom of the command: calls nothing of it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_JSONOUT_H
#define NVT_CLI_JSONOUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "core/tpcset.h"

/* The "version" of what -p, -a, -l, --dry-run (and -n's pick), --topology, --mps status and
 * --profile print as JSON (docs/json.md, which lists what each version changed). */
#define NVT_JSON_VERSION 2

/*
 * Every function below that makes or adds a value ends the command (exit 1,
 * "out of memory" on stderr) when json-c cannot: a document is whole or not
 * printed. A value of NULL given to an adder is JSON's null.
 */
/* {} */
struct json_object *jsonout_object(void);
/* {"version":NVT_JSON_VERSION}: a document's top object, its members added after. */
struct json_object *jsonout_document(void);
/* [] */
struct json_object *jsonout_array(void);
/* Adds "key":value to obj (value NULL: null), after the members it has. */
void jsonout_add(struct json_object *obj, const char *key, struct json_object *value);
/* Appends value (NULL: null) to array. */
void jsonout_append(struct json_object *array, struct json_object *value);

/* Values. */
struct json_object *jsonout_int(int64_t v);
struct json_object *jsonout_uint(uint64_t v);
struct json_object *jsonout_bool(int v);
/* v printed as printf's fmt prints it ("%.3f"); null when v is not finite (JSON has no NaN). */
struct json_object *jsonout_number(const char *fmt, double v);
/*
 * s as a JSON string, neutralised first: a byte that does not begin a whole
 * UTF-8 sequence becomes U+FFFD, so that the document is UTF-8 whatever a
 * task's command line or a user's name holds; what nvt_utf8_shown hides
 * (controls, C1, text-direction overrides) is printed escaped (jsonout_print).
 * NULL for s: null.
 */
struct json_object *jsonout_text(const char *s);

/* The same, added to obj as "key". */
void jsonout_add_int(struct json_object *obj, const char *key, int64_t v);
void jsonout_add_uint(struct json_object *obj, const char *key, uint64_t v);
void jsonout_add_bool(struct json_object *obj, const char *key, int v);
void jsonout_add_number(struct json_object *obj, const char *key, const char *fmt, double v);
void jsonout_add_text(struct json_object *obj, const char *key, const char *s);
/* "key":pid, or null when pid is not above 0 (unknown). */
void jsonout_add_pid(struct json_object *obj, const char *key, pid_t pid);
/* "key":v, or null when v is 0 (none: a limit, a timeslice). */
void jsonout_add_uint_or_null(struct json_object *obj, const char *key, uint64_t v);
/*
 * The partition object's members (docs/json.md): "partitioned", "tpcs" (the
 * list), "tpc_mask", "tpc_count", "tpc_ids" (the TPCs, ascending); nulls but
 * "partitioned":false when not partitioned.
 */
void jsonout_add_partition(struct json_object *obj, int partitioned, const struct nvt_tpcset *tpcs);

/*
 * Prints obj on out as one line (and a newline), compact, and frees it:
 * json-c escapes quotes, backslashes and C0 controls; the other characters a
 * terminal acts on (DEL, C1 controls, text-direction overrides and isolates,
 * which json-c writes as they are) are written as \uXXXX escapes, the same
 * string to a JSON reader.
 */
void jsonout_print(FILE *out, struct json_object *obj);

#endif /* NVT_CLI_JSONOUT_H */
