/*
 * rpmtag_int.h - private to rpmtag/: the pieces of the query-format engine that its files share.
 */
#ifndef KILN_RPMTAG_INT_H
#define KILN_RPMTAG_INT_H

#include "util/util.h"

#include "rpmtag/rpmtag.h"

/* Output formats (:NAME) of a tag placeholder. */
enum rpmtag_qf_fmt {
	RPMTAG_QF_FMT_STRING = 0,
	RPMTAG_QF_FMT_ARMOR,
	RPMTAG_QF_FMT_ARRAYSIZE,
	RPMTAG_QF_FMT_BASE64,
	RPMTAG_QF_FMT_DATE,
	RPMTAG_QF_FMT_DAY,
	RPMTAG_QF_FMT_DEPFLAGS,
	RPMTAG_QF_FMT_DEPTYPE,
	RPMTAG_QF_FMT_EXPAND,
	RPMTAG_QF_FMT_FFLAGS,
	RPMTAG_QF_FMT_FSTATE,
	RPMTAG_QF_FMT_FSTATUS,
	RPMTAG_QF_FMT_HASHALGO,
	RPMTAG_QF_FMT_HEX,
	RPMTAG_QF_FMT_HUMANIEC,
	RPMTAG_QF_FMT_HUMANSI,
	RPMTAG_QF_FMT_JSON,
	RPMTAG_QF_FMT_OCTAL,
	RPMTAG_QF_FMT_PERMS,
	RPMTAG_QF_FMT_PGPSIG,
	RPMTAG_QF_FMT_SHESCAPE,
	RPMTAG_QF_FMT_TAGNAME,
	RPMTAG_QF_FMT_TAGNUM,
	RPMTAG_QF_FMT_TRIGGERTYPE,
	RPMTAG_QF_FMT_VFLAGS,
	RPMTAG_QF_FMT_XML,
};

/* Parse a format name ("date", "perms", ...); false when unknown. */
bool rpmtag_qf_fmt_lookup(const char *name, size_t len, enum rpmtag_qf_fmt *out);

/* State of one render: the source, a scratch arena for computed values and a small cache
 * so that extension tags are computed once per render, not once per array element. */
#define RPMTAG_QF_CACHE 96

struct rpmtag_qf_cache_ent {
	uint32_t tag;
	bool present;
	struct rpmtag_qf_value v; /* data borrowed from the source or from arena */
};

struct rpmtag_qf_render {
	const struct rpmtag_qf_source *src; /* borrowed */
	struct kiln_arena arena;            /* owned: computed values */
	struct rpmtag_qf_cache_ent cache[RPMTAG_QF_CACHE];
	size_t ncache;
	struct kiln_err *err; /* borrowed */
};

/* Fetch a tag: stored in the source, or computed (extension tags and the LONG* / RPMFORMAT
 * fallbacks). False when absent; KILN_ENOMEM surfaces through the arena's sticky error. */
bool rpmtag_qf_get(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v);
/* The raw stored tag, no extension, no fallback. */
bool rpmtag_qf_get_raw(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v);

/* Element i of a numeric value as an unsigned 64-bit number. */
uint64_t rpmtag_qf_value_num(const struct rpmtag_qf_value *v, uint32_t i);
/* Element i of a string-class value. */
const char *rpmtag_qf_value_str(const struct rpmtag_qf_value *v, uint32_t i);

/* Format element elem of v (tag is the placeholder's tag) with fmt, appending to out. */
kiln_rc rpmtag_qf_fmt_apply(struct rpmtag_qf_render *r, enum rpmtag_qf_fmt fmt, uint32_t tag,
                            const struct rpmtag_qf_value *v, uint32_t elem, struct kiln_buf *out);

/* Base64 with rpm's line breaks (64 columns, every line ends in "\n") when wrap is true. */
void rpmtag_qf_base64(const void *data, size_t len, bool wrap, struct kiln_buf *out);

#endif
