/*
 * api_int.h - what api/'s files share: raw JSON documents (jansson objects behind void *).
 */
#ifndef KILN_API_INT_H
#define KILN_API_INT_H

#include "api/api.h"

/* Parse with the size and depth limits of api_json_decode(); *out is a json_t * the caller
 * releases with api_json_unload(). */
KILN_MUST_CHECK kiln_rc api_json_load(const void *data, size_t len, void **out,
                                      struct kiln_err *err);
void api_json_unload(void *doc);

#endif
