/*
 * jsonnames.c - whether a JSON text's objects name their members distinctly
 * (see jsonnames.h). One walk over the text, each object's names sorted
 * once: linear in the text but for the sorting, so a config.json of many
 * members costs no more than its reading.
 *
 * SPDX-License-Identifier: MIT
 */
#include "jsonnames.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

#define NONE ((size_t)-1)

static size_t skip_ws(const char *t, size_t len, size_t at)
{
	while (at < len && (t[at] == ' ' || t[at] == '\t' || t[at] == '\n' || t[at] == '\r'))
		at++;
	return at;
}

/* The end of the value at at (nvt_json_end), or NONE. */
static size_t end_of(const char *t, size_t len, size_t at)
{
	long end = at < len ? nvt_json_end(t, len, at) : -1;

	return end < 0 ? NONE : (size_t)end;
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * The name whose string is at at, decoded, and after its NUL the same folded
 * as Go folds a name to match it with a field: ASCII letters in lower case;
 * U+0131, U+017F and U+212A, which Go's unicode.ToUpper (or older Go's
 * folding) takes for I, S and K, as i, s and k. In a new buffer; NULL if it
 * cannot be decoded or memory runs out. Neither is longer than the string's
 * text.
 */
static char *folded_name(const char *t, size_t len, size_t at)
{
	static const char *const others[] = {"\xc4\xb1", "\xc5\xbf", "\xe2\x84\xaa"};
	static const char as[] = "isk";
	size_t end = end_of(t, len, at);
	char *name, *fold;

	if (end == NONE || !(name = malloc(2 * (end - at))))
		return NULL;
	if (nvt_json_string(t, len, at, name, end - at) < 0) {
		free(name);
		return NULL;
	}
	fold = name + strlen(name) + 1;
	for (const char *p = name; *p; fold++) {
		size_t i = 0;
		while (i < 3 && strncmp(p, others[i], strlen(others[i])))
			i++;
		if (i < 3) {
			*fold = as[i];
			p += strlen(others[i]);
		} else {
			*fold = ascii_lower(*p++);
		}
	}
	*fold = '\0';
	return name;
}

/* A name's folded form (folded_name's second string). */
static const char *fold_of(const char *name)
{
	return name + strlen(name) + 1;
}

static int by_fold(const void *a, const void *b)
{
	return strcmp(fold_of(*(char *const *)a), fold_of(*(char *const *)b));
}

/* 1 if a folded name is key (ASCII) in lower case. */
static int folds_as(const char *fold, const char *key)
{
	while (*fold && *fold == ascii_lower(*key))
		fold++, key++;
	return !*fold && !*key;
}

/* -1 if two of the n names (folded_name's, sorted by_fold) fold alike, or one folds as
 * one of the keys but is spelled otherwise; else 0. */
static int names_clash(char *const *names, size_t n, const char *const *keys, size_t n_keys)
{
	for (size_t i = 1; i < n; i++)
		if (!by_fold(&names[i - 1], &names[i]))
			return -1;
	for (size_t k = 0; k < n_keys; k++)
		for (size_t i = 0; i < n; i++)
			if (folds_as(fold_of(names[i]), keys[k]) && strcmp(names[i], keys[k]))
				return -1;
	return 0;
}

static size_t distinct_in(const char *t, size_t len, size_t at, const char *const *keys,
			  size_t n_keys);

/* distinct_in for the object at at: each member's value, then the names. */
static size_t distinct_members(const char *t, size_t len, size_t at, const char *const *keys,
			       size_t n_keys)
{
	char **names = NULL, **more;
	size_t n = 0, cap = 0, end = NONE;

	at = skip_ws(t, len, at + 1);
	if (at < len && t[at] == '}')
		end = at + 1;
	while (end == NONE && at < len && t[at] == '"') {
		if (n == cap) {
			more = realloc(names, (cap ? 2 * cap : 16) * sizeof(*names));
			if (!more)
				break;
			names = more;
			cap = cap ? 2 * cap : 16;
		}
		if (!(names[n] = folded_name(t, len, at)))
			break;
		n++;
		at = skip_ws(t, len, end_of(t, len, at));
		if (at >= len || t[at] != ':')
			break;
		at = skip_ws(t, len, distinct_in(t, len, skip_ws(t, len, at + 1), keys, n_keys));
		if (at < len && t[at] == '}')
			end = at + 1;
		else if (at < len && t[at] == ',')
			at = skip_ws(t, len, at + 1);
		else
			break;
	}
	if (end != NONE && n > 1)
		qsort(names, n, sizeof(*names), by_fold);
	if (end != NONE && names_clash(names, n, keys, n_keys))
		end = NONE;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return end;
}

/* The end of the value at at if no object in it has names that clash (names_clash), else NONE. */
static size_t distinct_in(const char *t, size_t len, size_t at, const char *const *keys,
			  size_t n_keys)
{
	if (at >= len)
		return NONE;
	if (t[at] == '{')
		return distinct_members(t, len, at, keys, n_keys);
	if (t[at] != '[')
		return end_of(t, len, at);
	at = skip_ws(t, len, at + 1);
	if (at < len && t[at] == ']')
		return at + 1;
	for (;;) {
		at = skip_ws(t, len, distinct_in(t, len, at, keys, n_keys));
		if (at >= len)
			return NONE;
		if (t[at] == ']')
			return at + 1;
		if (t[at] != ',')
			return NONE;
		at = skip_ws(t, len, at + 1);
	}
}

int nvt_json_names_distinct(const char *text, size_t len, const char *const *keys, size_t n)
{
	if (nvt_json_check(text, len))
		return -1;
	return distinct_in(text, len, nvt_json_root(text, len), keys, n) == NONE ? -1 : 0;
}
