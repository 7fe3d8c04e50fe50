/*
 * query.c - what `rpm -qp` prints for a package: a query format, then optionally the file
 * list (-l) or rpm's --dump lines.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

/* rpm 4.18's default query output (%{nvr}%{archsuffix}, so a source package shows .src). */
#define DEFAULT_QF "%{NVR}%{ARCHSUFFIX}\\n"

/* Hex length of a digest algorithm by rpm's number (rpm-reference.md section 2.6). */
static size_t digest_hexlen(uint64_t algo)
{
	switch (algo) {
	case 2:
		return 40;
	case 8:
	case 12:
		return 64;
	case 9:
		return 96;
	case 10:
	case 14:
		return 128;
	case 11:
		return 56;
	default:
		return 32;
	}
}

static const char *str_at(const struct pack_entry *e, uint32_t i, uint32_t n)
{
	return e && spec_type_is_string(e->type) && e->count == n ? pack_entry_str(e, i) : "";
}

static uint64_t num_at(const struct pack_entry *e, uint32_t i, uint32_t n)
{
	return e && spec_type_is_number(e->type) && e->count == n ? pack_entry_num(e, i) : 0;
}

/* One --dump line per file: path size mtime digest mode owner group isconfig isdoc rdev
 * symlink. A file without a digest shows zeros of the algorithm's length, as rpm does. */
static void dump_files(const struct pack_header *h, struct pack_file_list *fl, struct kiln_buf *out)
{
	const struct pack_entry *dg = pack_header_get(h, SPEC_TAG_FILEDIGESTS);
	const struct pack_entry *lk = pack_header_get(h, SPEC_TAG_FILELINKTOS);
	const struct pack_entry *us = pack_header_get(h, SPEC_TAG_FILEUSERNAME);
	const struct pack_entry *gr = pack_header_get(h, SPEC_TAG_FILEGROUPNAME);
	const struct pack_entry *mt = pack_header_get(h, SPEC_TAG_FILEMTIMES);
	const struct pack_entry *md = pack_header_get(h, SPEC_TAG_FILEMODES);
	const struct pack_entry *fg = pack_header_get(h, SPEC_TAG_FILEFLAGS);
	const struct pack_entry *rd = pack_header_get(h, SPEC_TAG_FILERDEVS);
	uint64_t algo = 1;
	size_t zlen;
	uint32_t i, n = fl->n;

	pack_header_get_number(h, SPEC_TAG_FILEDIGESTALGO, &algo);
	zlen = digest_hexlen(algo);
	for (i = 0; i < n; i++) {
		const char *d = str_at(dg, i, n), *l = str_at(lk, i, n);
		uint64_t flags = num_at(fg, i, n);
		size_t k;

		kiln_buf_addf(out, "%s %" PRIu64 " %" PRIu64 " ", fl->names[i], fl->sizes[i],
		              num_at(mt, i, n));
		if (*d)
			kiln_buf_addstr(out, d);
		for (k = 0; !*d && k < zlen; k++)
			kiln_buf_addch(out, '0');
		kiln_buf_addf(out, " 0%" PRIo64 " %s %s %d %d %" PRIu64 " %s\n", num_at(md, i, n),
		              str_at(us, i, n), str_at(gr, i, n),
		              (flags & SPEC_FILE_CONFIG) ? 1 : 0, (flags & SPEC_FILE_DOC) ? 1 : 0,
		              num_at(rd, i, n), *l ? l : "X");
	}
}

kiln_rc pack_query(const struct pack_package *p, const struct pack_query_opts *o,
                   struct kiln_buf *out, struct kiln_err *err)
{
	struct pack_file_list fl;
	struct pack_qf_view view;
	struct spec_qf_source src;
	const char *qf = o->qf;
	uint32_t i;
	kiln_rc rc = pack_qf_view_init(&view, p, err);

	if (rc)
		return rc;
	src = pack_qf_view_source(&view, o->verbose ? SPEC_QF_F_VERBOSE : 0);
	if (!qf && !o->list && !o->dump)
		qf = DEFAULT_QF;
	if (qf)
		rc = spec_qf_format(qf, &src, out, err);
	pack_qf_view_release(&view);
	if (rc || (!o->list && !o->dump))
		return rc;
	rc = pack_file_list_init(&fl, &p->hdr, err);
	if (rc)
		return rc;
	if (!fl.n)
		kiln_buf_addstr(out, "(contains no files)\n");
	else if (o->dump)
		dump_files(&p->hdr, &fl, out);
	for (i = 0; !o->dump && i < fl.n; i++)
		kiln_buf_addf(out, "%s\n", fl.names[i]);
	pack_file_list_release(&fl);
	return kiln_buf_finish(out, err);
}
