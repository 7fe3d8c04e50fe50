/*
 * spec_int.h - private to spec/: the pieces of the query-format engine that its files share.
 */
#ifndef KILN_SPEC_INT_H
#define KILN_SPEC_INT_H

#include "util/util.h"

#include "spec/spec.h"

/* Output formats (:NAME) of a tag placeholder. */
enum spec_qf_fmt {
	SPEC_QF_FMT_STRING = 0,
	SPEC_QF_FMT_ARMOR,
	SPEC_QF_FMT_ARRAYSIZE,
	SPEC_QF_FMT_BASE64,
	SPEC_QF_FMT_DATE,
	SPEC_QF_FMT_DAY,
	SPEC_QF_FMT_DEPFLAGS,
	SPEC_QF_FMT_DEPTYPE,
	SPEC_QF_FMT_EXPAND,
	SPEC_QF_FMT_FFLAGS,
	SPEC_QF_FMT_FSTATE,
	SPEC_QF_FMT_FSTATUS,
	SPEC_QF_FMT_HASHALGO,
	SPEC_QF_FMT_HEX,
	SPEC_QF_FMT_HUMANIEC,
	SPEC_QF_FMT_HUMANSI,
	SPEC_QF_FMT_JSON,
	SPEC_QF_FMT_OCTAL,
	SPEC_QF_FMT_PERMS,
	SPEC_QF_FMT_PGPSIG,
	SPEC_QF_FMT_SHESCAPE,
	SPEC_QF_FMT_TAGNAME,
	SPEC_QF_FMT_TAGNUM,
	SPEC_QF_FMT_TRIGGERTYPE,
	SPEC_QF_FMT_VFLAGS,
	SPEC_QF_FMT_XML,
};

/* Parse a format name ("date", "perms", ...); false when unknown. */
bool spec_qf_fmt_lookup(const char *name, size_t len, enum spec_qf_fmt *out);

/* State of one render: the source, a scratch arena for computed values and a small cache
 * so that extension tags are computed once per render, not once per array element. */
#define SPEC_QF_CACHE 96

struct spec_qf_cache_ent {
	uint32_t tag;
	bool present;
	struct spec_qf_value v; /* data borrowed from the source or from arena */
};

struct spec_qf_render {
	const struct spec_qf_source *src; /* borrowed */
	struct kiln_arena arena;          /* owned: computed values */
	struct spec_qf_cache_ent cache[SPEC_QF_CACHE];
	size_t ncache;
	struct kiln_err *err; /* borrowed */
};

/* Fetch a tag: stored in the source, or computed (extension tags and the LONG* / RPMFORMAT
 * fallbacks). False when absent; KILN_ENOMEM surfaces through the arena's sticky error. */
bool spec_qf_get(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v);
/* The raw stored tag, no extension, no fallback. */
bool spec_qf_get_raw(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v);

/* Element i of a numeric value as an unsigned 64-bit number. */
uint64_t spec_qf_value_num(const struct spec_qf_value *v, uint32_t i);
/* Element i of a string-class value. */
const char *spec_qf_value_str(const struct spec_qf_value *v, uint32_t i);

/* Format element elem of v (tag is the placeholder's tag) with fmt, appending to out. */
kiln_rc spec_qf_fmt_apply(struct spec_qf_render *r, enum spec_qf_fmt fmt, uint32_t tag,
                          const struct spec_qf_value *v, uint32_t elem, struct kiln_buf *out);

/* Base64 with rpm's line breaks (64 columns, every line ends in "\n") when wrap is true. */
void spec_qf_base64(const void *data, size_t len, bool wrap, struct kiln_buf *out);

#endif
