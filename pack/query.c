/*
 * query.c - what `rpm -qp` prints for a package: a query format, then optionally the file
 * list (-l) or rpm's --dump lines.
 */
#include "util/util.h"

#include "pack/pack.h"
#include "pack/pack_int.h"

#include <sys/stat.h>
#include <time.h>

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
	return e && rpmtag_type_is_string(e->type) && e->count == n ? pack_entry_str(e, i) : "";
}

static uint64_t num_at(const struct pack_entry *e, uint32_t i, uint32_t n)
{
	return e && rpmtag_type_is_number(e->type) && e->count == n ? pack_entry_num(e, i) : 0;
}

/* One --dump line: path size mtime digest mode owner group isconfig isdoc rdev symlink. A
 * file without a digest shows zeros of the algorithm's length, as rpm does. */
static void dump_file(const struct pack_header *h, const struct pack_file_list *fl, uint32_t i,
                      struct kiln_buf *out)
{
	uint32_t n = fl->n;
	const char *d = str_at(pack_header_get(h, RPMTAG_FILEDIGESTS), i, n);
	const char *l = str_at(pack_header_get(h, RPMTAG_FILELINKTOS), i, n);
	uint64_t flags = num_at(pack_header_get(h, RPMTAG_FILEFLAGS), i, n), algo = 1;
	size_t zlen, k;

	pack_header_get_number(h, RPMTAG_FILEDIGESTALGO, &algo);
	zlen = digest_hexlen(algo);
	kiln_buf_addf(out, "%s %" PRIu64 " %" PRIu64 " ", fl->names[i], fl->sizes[i],
	              num_at(pack_header_get(h, RPMTAG_FILEMTIMES), i, n));
	if (*d)
		kiln_buf_addstr(out, d);
	for (k = 0; !*d && k < zlen; k++)
		kiln_buf_addch(out, '0');
	kiln_buf_addf(out, " 0%" PRIo64 " %s %s %d %d %" PRIu64 " %s\n",
	              num_at(pack_header_get(h, RPMTAG_FILEMODES), i, n),
	              str_at(pack_header_get(h, RPMTAG_FILEUSERNAME), i, n),
	              str_at(pack_header_get(h, RPMTAG_FILEGROUPNAME), i, n),
	              (flags & RPMTAG_FILE_CONFIG) ? 1 : 0, (flags & RPMTAG_FILE_DOC) ? 1 : 0,
	              num_at(pack_header_get(h, RPMTAG_FILERDEVS), i, n), *l ? l : "X");
}

/* rpm -qlv's line: perms, links (a directory counts one more), owner and group (8
 * columns each), size or "major, minor", a date like ls's (the year when older than about 6
 * months or in the future), the name (and a symlink's target). perms_nlink holds the
 * engine's "[%{FILEMODES:perms} %{FILENLINKS}\n]" line of this file. */
static void list_verbose(const struct pack_header *h, const struct pack_file_list *fl, uint32_t i,
                         const char *perms_nlink, int64_t now, struct kiln_buf *out)
{
	uint32_t n = fl->n, mode = (uint32_t)num_at(pack_header_get(h, RPMTAG_FILEMODES), i, n);
	uint64_t rdev = num_at(pack_header_get(h, RPMTAG_FILERDEVS), i, n);
	time_t when = (time_t)num_at(pack_header_get(h, RPMTAG_FILEMTIMES), i, n);
	const char *sp = strchr(perms_nlink, ' ');
	long nlink = sp ? strtol(sp + 1, NULL, 10) : 1;
	bool old = now > (int64_t)when + 6L * 30 * 24 * 3600 || now < (int64_t)when - 3600;
	char size[32], date[64] = "";
	struct tm tm;

	if (S_ISDIR(mode))
		nlink++;
	if (S_ISCHR(mode) || S_ISBLK(mode))
		snprintf(size, sizeof(size), "%3u, %3u", (unsigned)(rdev >> 8) & 0xff,
		         (unsigned)rdev & 0xff);
	else
		snprintf(size, sizeof(size), "%20" PRIu64, S_ISDIR(mode) ? 0 : fl->sizes[i]);
	if (!localtime_r(&when, &tm))
		memset(&tm, 0, sizeof(tm));
	else if (old && !strftime(date, sizeof(date), "%b %e  %Y", &tm))
		date[0] = '\0';
	else if (!old && !strftime(date, sizeof(date), "%b %e %H:%M", &tm))
		date[0] = '\0';
	kiln_buf_addf(out, "%.*s %4ld %-8.8s %-8.8s %10s %s %s", sp ? (int)(sp - perms_nlink) : 0,
	              perms_nlink, nlink, str_at(pack_header_get(h, RPMTAG_FILEUSERNAME), i, n),
	              str_at(pack_header_get(h, RPMTAG_FILEGROUPNAME), i, n), size, date,
	              fl->names[i]);
	if (S_ISLNK(mode))
		kiln_buf_addf(out, " -> %s", str_at(pack_header_get(h, RPMTAG_FILELINKTOS), i, n));
	kiln_buf_addch(out, '\n');
}

/* Whether file i is listed under -c/-d/-L/--noghost. */
static bool listed(const struct pack_header *h, const struct pack_query_opts *o, uint32_t i,
                   uint32_t n)
{
	uint64_t flags = num_at(pack_header_get(h, RPMTAG_FILEFLAGS), i, n);

	/* rpm -qp -c -d lists the files that are either. */
	return (!o->only || (flags & o->only)) && !(flags & o->skip);
}

/* The file part of the output: names, rpm -qlv lines or --dump lines. */
static kiln_rc list_files(const struct pack_package *p, const struct pack_query_opts *o,
                          const struct rpmtag_qf_source *src, struct kiln_buf *out,
                          struct kiln_err *err)
{
	struct kiln_buf cols = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	struct pack_file_list fl;
	const char *line;
	uint32_t i;
	kiln_rc rc = pack_file_list_init(&fl, &p->hdr, err);

	if (rc)
		return rc;
	if (!fl.n)
		kiln_buf_addstr(out, "(contains no files)\n");
	if (fl.n && !o->dump && o->verbose)
		rc = rpmtag_qf_format("[%{FILEMODES:perms} %{FILENLINKS}\\n]", src, &cols, err);
	line = cols.ptr;
	for (i = 0; !rc && i < fl.n; i++) {
		const char *next = line ? strchr(line, '\n') : NULL;

		if (!listed(&p->hdr, o, i, fl.n))
			;
		else if (o->dump)
			dump_file(&p->hdr, &fl, i, out);
		else if (o->verbose)
			list_verbose(&p->hdr, &fl, i, line ? line : "", o->now, out);
		else
			kiln_buf_addf(out, "%s\n", fl.names[i]);
		line = next ? next + 1 : NULL;
	}
	kiln_buf_release(&cols);
	pack_file_list_release(&fl);
	return rc ? rc : kiln_buf_finish(out, err);
}

kiln_rc pack_query(const struct pack_package *p, const struct pack_query_opts *o,
                   struct kiln_buf *out, struct kiln_err *err)
{
	struct pack_qf_view view;
	struct rpmtag_qf_source src;
	struct pack_query_opts lo = *o;
	const char *qf = o->qf;
	kiln_rc rc = pack_qf_view_init(&view, p, err);

	if (rc)
		return rc;
	src = pack_qf_view_source(&view, o->verbose ? RPMTAG_QF_F_VERBOSE : 0);
	if (!qf && !o->list && !o->dump)
		qf = DEFAULT_QF;
	if (qf)
		rc = rpmtag_qf_format(qf, &src, out, err);
	if (!lo.now)
		lo.now = util_clock_wall();
	if (!rc && (o->list || o->dump))
		rc = list_files(p, &lo, &src, out, err);
	pack_qf_view_release(&view);
	return rc;
}
