/*
 * jsonnames.h - whether a JSON text names its members as one reader only
 * could read them: no object names a member twice, nor a member that a
 * reader looks for in another spelling. For texts that another program
 * reads too (the CDI hook's config.json, which the OCI runtime runs), so
 * that both read the same values. Pure, on a text that nvt_json_check
 * accepted (json.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_JSONNAMES_H
#define NVT_JSONNAMES_H

#include <stddef.h>

/*
 * 0 if text (len bytes) is JSON in which no object names two members that
 * Go's encoding/json could take for one field of a struct (names compared
 * with ASCII letters in either case, and U+0131, U+017F and U+212A as i, s
 * and k, as Go folds them), nor a member whose name is one of the n keys
 * (ASCII) so compared but spelled otherwise; else -1 (also where the text is
 * no JSON, a name holds a NUL or a lone surrogate, or memory runs out).
 */
int nvt_json_names_distinct(const char *text, size_t len, const char *const *keys, size_t n);

#endif /* NVT_JSONNAMES_H */
