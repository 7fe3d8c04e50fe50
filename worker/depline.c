/*
 * depline.c - generator output read the way rpmbuild reads it, for worker/autodeps.c
 * (autodeps_int.h): each line goes through spec/'s dependency grammar (spec_deps_scan, rpm's
 * parseRCPOT with RPMSENSE_FIND_REQUIRES/_PROVIDES), and complaints get the wording rpm
 * gives automatic dependencies, which relate to no spec line: "FILE: MESSAGE: REST".
 */
#include "util/util.h"

#include "spec/spec.h"
#include "macro/macro.h"
#include "worker/autodeps_int.h"

/* The callbacks' ctx is worker_depline_parse()'s p, passed by address to keep it const. */

static kiln_rc line_item(void *ctx, const struct spec_deps_item *it, struct kiln_err *err)
{
	const struct worker_depline *p = *(const struct worker_depline **)ctx;
	uint32_t flags = p->provides ? RPMTAG_DEP_FIND_PROVIDES : RPMTAG_DEP_FIND_REQUIRES;

	return p->fn(p->data, it->name, it->evr ? it->evr : "", flags | it->sense, err);
}

/* rpm quotes the rest of the line from the item (rpmCharCheck without a spec: the
 * version). Warnings, and a bad version format unless terminate_bad_version, go to the
 * macro context's diagnostics. Every error is KILN_ESYNTAX, nesting too deep included:
 * autodeps reports all malformed generator output alike. */
static kiln_rc line_note(void *ctx, const struct spec_deps_note *n, struct kiln_err *err)
{
	const struct worker_depline *p = *(const struct worker_depline **)ctx;

	if (n->kind == SPEC_DEPS_NOTE_WARNING ||
	    (n->kind == SPEC_DEPS_NOTE_BAD_VERSION && !p->terminate_bad_version)) {
		macro_diag(p->macros, KILN_LOG_WARN, "%s: %s: %.*s", p->what, n->msg,
		           (int)n->quote_len, n->quote);
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_ESYNTAX, "%s: %s: %.*s", p->what, n->msg, (int)n->quote_len,
	                    n->quote);
}

kiln_rc worker_depline_parse(const struct worker_depline *p, const char *text, size_t len,
                             struct kiln_err *err)
{
	static const struct spec_deps_scan_ops ops = {line_item, line_note};
	unsigned flags = p->provides ? 0 : SPEC_DEPS_SCAN_RICH;
	const char *end = text + len;
	kiln_rc rc = KILN_OK;

	while (text < end && !rc) {
		const char *e = text;

		/* rpm reads the output as C strings: a NUL ends a line too */
		while (e < end && *e != '\n' && *e != '\r' && *e)
			e++;
		rc = spec_deps_scan(text, (size_t)(e - text), flags, &ops, &p, err);
		text = e < end ? e + 1 : e;
	}
	return rc;
}
