/*
 * fuzz_header.c - the rpm package/header reader: lead, signature header, main header, and
 * what queries do with a header that parsed. A header that parses must re-encode to bytes
 * that parse to the same entries.
 */
#include "util/util.h"

#include "pack/pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reencode(const struct pack_header *h, uint32_t region, unsigned flags)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_GIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_header r;
	size_t i;

	pack_header_init(&r);
	if (pack_header_write(h, region, &b, &err))
		goto out;
	if (pack_header_from_mem(&r, b.ptr, b.len, region, flags, 0, NULL, &err))
		KILN_BUG("re-encoded header does not parse: %s", err.msg);
	if (r.n != h->n)
		KILN_BUG("re-encoded header has %zu entries, not %zu", r.n, h->n);
	for (i = 0; i < h->n; i++) {
		if (r.entries[i].tag != h->entries[i].tag ||
		    r.entries[i].count != h->entries[i].count)
			KILN_BUG("entry %zu changed on re-encoding", i);
	}
out:
	pack_header_release(&r);
	kiln_buf_release(&b);
}

static void query(const struct pack_package *p)
{
	static const char *const fmts[] = {"info",     "xml",     "json",
	                                   "requires", "scripts", "triggers"};
	struct pack_query_opts o = {.list = true, .verbose = true, .now = 1704067200};
	struct kiln_buf out = KILN_BUF_INIT(64 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(fmts); i++) {
		o.qf = rpmtag_qf_alias(fmts[i]);
		o.dump = i % 2;
		o.only = i == 2 ? RPMTAG_FILE_CONFIG | RPMTAG_FILE_DOC : 0;
		o.skip = i == 4 ? RPMTAG_FILE_GHOST : 0;
		if (pack_query(p, &o, &out, &err))
			kiln_err_clear(&err);
		kiln_buf_reset(&out);
		kiln_err_clear(&err);
	}
	kiln_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	struct pack_header h;

	if (!pack_package_from_mem(&p, data, size, &err)) {
		reencode(&p.sig, PACK_SIGTAG_HEADERSIGNATURES, PACK_HDR_F_SIG);
		reencode(&p.hdr, RPMTAG_HEADERIMMUTABLE, PACK_HDR_F_TYPECHECK);
		query(&p);
	}
	pack_package_release(&p);
	/* The bare header parser too, on the same bytes. */
	pack_header_init(&h);
	kiln_err_clear(&err);
	if (!pack_header_from_mem(&h, data, size, RPMTAG_HEADERIMMUTABLE, 0, 0, NULL, &err))
		reencode(&h, RPMTAG_HEADERIMMUTABLE, 0);
	pack_header_release(&h);
	return 0;
}
