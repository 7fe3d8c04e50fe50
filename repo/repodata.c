/*
 * repodata.c - repository metadata (what createrepo_c writes, written by kiln): every .rpm
 * below a directory read with pack/, repodata/repomd.xml and primary, filelists and other
 * XML compressed with gzip or zstd, sha256 checksums, sizes, open sizes, and a revision and
 * timestamps taken from the newest package's build time, so the same packages give the same
 * bytes wherever and whenever they are indexed. A signing key adds repomd.xml.asc.
 *
 * Generations: each run writes a fresh directory under .repodata-gens/ (named by the
 * repomd.xml digest, so an unchanged set is a no-op) and swaps the repodata symlink to it
 * with rename(2): a reader (or a crash) sees the old generation or the new one, never a
 * mix of repomd.xml, its signature and its data files. The newest `keep` generations stay
 * for clients that read an older repomd.xml just before the swap (the scheduler serves
 * their files from there).
 *
 * Packages are read and described on `workers` threads (one package each at a time);
 * the three files are compressed on three threads.
 */
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "pack/pack.h"
#include "sign/sign.h"
#include "repo/repo.h"
#include "repo/repo_int.h"

#define REPODATA_MAX_PACKAGES 1000000
#define REPODATA_MAX_DEPTH 8
#define REPODATA_CHANGELOG_LIMIT 10 /* createrepo_c's default --changelog-limit */
#define REPODATA_GENS_DIR ".repodata-gens"
#define RD_BUF_MAX ((size_t)1 << 30) /* one package's XML, one repomd.xml */

/* One package: where it is and its three XML fragments. */
/* What says that the file at a path is still the one a cached description came from. */
struct rd_key {
	uint64_t size, ino, dev;
	int64_t mtime_ns, ctime_ns;
};

struct rd_pkg {
	char *rel; /* owned: path relative to the repository directory */
	struct rd_key key;
	bool cached; /* xml and buildtime came from the previous generation's cache */
	struct kiln_buf xml[3];
	int64_t buildtime;
	kiln_rc rc;
	struct kiln_err err;
};

struct rd_run {
	const char *dir;
	const char *const *only; /* repo_metadata_opts.only */
	size_t nonly;
	struct rd_pkg *pkgs;
	size_t n, cap;
	pthread_mutex_t lock;
	size_t next; /* the next package to describe (under lock) */
};

/* ---------------------------------------------------------------------------------------- */
/* XML text */

/* Append s escaped for XML text (attr: also for a double-quoted attribute). Control
 * characters XML 1.0 cannot carry are dropped; a byte that is not valid UTF-8 is taken as
 * Latin-1 (what createrepo_c does with such headers). */
static void xml_esc(struct kiln_buf *b, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		unsigned c = *p, need, k;

		if (c == '<')
			kiln_buf_addstr(b, "&lt;");
		else if (c == '>')
			kiln_buf_addstr(b, "&gt;");
		else if (c == '&')
			kiln_buf_addstr(b, "&amp;");
		else if (c == '"' && attr)
			kiln_buf_addstr(b, "&quot;");
		else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			;
		else if (c < 0x80)
			kiln_buf_addch(b, (char)c);
		else {
			need = c >= 0xf0 && c < 0xf5   ? 3
			       : c >= 0xe0             ? 2
			       : c >= 0xc2 && c < 0xe0 ? 1
			                               : 0;
			for (k = 1; need && k <= need; k++)
				if ((p[k] & 0xc0) != 0x80)
					need = 0;
			if (need) {
				kiln_buf_add(b, p, need + 1);
				p += need + 1;
				continue;
			}
			kiln_buf_addch(b, (char)(0xc0 | (c >> 6)));
			kiln_buf_addch(b, (char)(0x80 | (c & 0x3f)));
		}
		p++;
	}
}

static void xml_elem(struct kiln_buf *b, const char *indent, const char *name, const char *text)
{
	kiln_buf_addf(b, "%s<%s>", indent, name);
	xml_esc(b, text, false);
	kiln_buf_addf(b, "</%s>\n", name);
}

/* ---------------------------------------------------------------------------------------- */
/* Header access */

static const char *hstr(const struct pack_header *h, uint32_t tag)
{
	const char *s = pack_header_get_string(h, tag);

	return s ? s : "";
}

static uint64_t hnum(const struct pack_header *h, uint32_t tag, uint64_t dflt)
{
	uint64_t v;

	return pack_header_get_number(h, tag, &v) ? v : dflt;
}

static uint32_t ent_count(const struct pack_entry *e)
{
	return e ? e->count : 0;
}

static const char *ent_str(const struct pack_entry *e, uint32_t i)
{
	if (!e || i >= e->count || !rpmtag_type_is_string(e->type))
		return "";
	return ((const char *const *)e->data)[i];
}

static uint64_t ent_num(const struct pack_entry *e, uint32_t i)
{
	if (!e || i >= e->count)
		return 0;
	switch (e->type) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
		return ((const uint8_t *)e->data)[i];
	case RPMTAG_TYPE_INT16:
		return ((const uint16_t *)e->data)[i];
	case RPMTAG_TYPE_INT32:
		return ((const uint32_t *)e->data)[i];
	case RPMTAG_TYPE_INT64:
		return ((const uint64_t *)e->data)[i];
	default:
		return 0;
	}
}

/* "E:V-R" into its parts (epoch "0" when absent; rel NULL when there is no '-'). */
static void evr_split(const char *evr, struct kiln_buf *tmp, const char **e, const char **v,
                      const char **r)
{
	const char *colon = strchr(evr, ':'), *dash;
	char *s;

	kiln_buf_reset(tmp);
	kiln_buf_addstr(tmp, evr);
	kiln_buf_addch(tmp, '\0');
	if (tmp->err) {
		*e = "0", *v = "", *r = NULL;
		return;
	}
	s = tmp->ptr;
	*e = "0";
	if (colon) {
		size_t el = (size_t)(colon - evr), k;

		for (k = 0; k < el && s[k] >= '0' && s[k] <= '9'; k++)
			;
		if (k == el && el) {
			s[el] = '\0';
			*e = s;
			s += el + 1;
		}
	}
	dash = strrchr(s, '-');
	*r = NULL;
	if (dash) {
		*(char *)dash = '\0';
		*r = dash + 1;
	}
	*v = s;
}

static const char *const flag_names[16] = {
    [RPMTAG_DEP_LESS] = "LT",
    [RPMTAG_DEP_GREATER] = "GT",
    [RPMTAG_DEP_EQUAL] = "EQ",
    [RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL] = "LE",
    [RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL] = "GE",
};

/* A file createrepo_c lists in primary.xml too (what dnf resolves file requires with). */
static bool path_primary(const char *p)
{
	return !strncmp(p, "/etc/", 5) || strstr(p, "bin/") || !strcmp(p, "/usr/lib/sendmail");
}

struct rd_files {
	uint32_t n;
	char **paths;   /* arena */
	uint32_t *kind; /* 0 file, 1 dir, 2 ghost */
};

static kiln_rc files_get(const struct pack_header *h, struct kiln_arena *a, struct rd_files *f,
                         struct kiln_err *err)
{
	const struct pack_entry *bn = pack_header_get(h, RPMTAG_BASENAMES);
	const struct pack_entry *dn = pack_header_get(h, RPMTAG_DIRNAMES);
	const struct pack_entry *di = pack_header_get(h, RPMTAG_DIRINDEXES);
	const struct pack_entry *modes = pack_header_get(h, RPMTAG_FILEMODES);
	const struct pack_entry *flags = pack_header_get(h, RPMTAG_FILEFLAGS);
	const struct pack_entry *old = pack_header_get(h, RPMTAG_OLDFILENAMES);
	uint32_t i, n = bn ? bn->count : ent_count(old);

	f->n = 0;
	if (!n)
		return KILN_OK;
	if (bn && (!di || di->count != n || !dn))
		return kiln_err_set(err, KILN_EFORMAT, "BASENAMES without matching DIRINDEXES");
	f->paths = kiln_arena_array(a, n, sizeof(*f->paths));
	f->kind = kiln_arena_array(a, n, sizeof(*f->kind));
	if (!f->paths || !f->kind)
		return kiln_err_set(err, KILN_ENOMEM, "file list");
	for (i = 0; i < n; i++) {
		uint64_t d = bn ? ent_num(di, i) : 0;
		uint64_t m = ent_count(modes) == n ? ent_num(modes, i) : 0;
		uint64_t fl = ent_count(flags) == n ? ent_num(flags, i) : 0;

		if (bn && d >= dn->count)
			return kiln_err_set(err, KILN_EFORMAT, "DIRINDEXES[%u] out of range", i);
		f->paths[i] =
		    bn ? kiln_arena_printf(a, "%s%s", ent_str(dn, (uint32_t)d), ent_str(bn, i))
		       : kiln_arena_strdup(a, ent_str(old, i));
		if (!f->paths[i])
			return kiln_err_set(err, KILN_ENOMEM, "file list");
		f->kind[i] = (m & 0170000) == 0040000 ? 1 : (fl & RPMTAG_FILE_GHOST) ? 2 : 0;
	}
	f->n = n;
	return KILN_OK;
}

static void file_line(struct kiln_buf *b, const char *path, uint32_t kind, const char *indent)
{
	static const char *const kinds[3] = {"", " type=\"dir\"", " type=\"ghost\""};

	kiln_buf_addf(b, "%s<file%s>", indent, kinds[kind]);
	xml_esc(b, path, false);
	kiln_buf_addstr(b, "</file>\n");
}

/* The version inside a "libc.so.6(GLIBC_2.34)(64bit)" requirement into out ("" when none). */
static void libc_version(const char *name, char *out, size_t size)
{
	const char *p = strstr(name, "(GLIBC_"), *e;
	size_t n;

	out[0] = '\0';
	if (!p)
		return;
	p += 7;
	e = strchr(p, ')');
	n = e ? (size_t)(e - p) : strlen(p);
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* Is libc requirement a newer than b (by its GLIBC_ version)? */
static bool libc_newer(const char *a, const char *b)
{
	char va[64], vb[64];

	libc_version(a, va, sizeof(va));
	libc_version(b, vb, sizeof(vb));
	return macro_vercmp(va, vb) > 0;
}

/* Has name already been required with the same flags, version and pre (the previous
 * requirement of that name, as createrepo_c compares)? */
struct req_seen {
	const char *name, *ver;
	uint64_t flags;
	bool pre;
};

static void deps_xml(struct kiln_buf *b, const struct pack_header *h, const char *elem,
                     uint32_t ntag, uint32_t vtag, uint32_t ftag, bool requires,
                     const struct rd_files *files, struct kiln_buf *tmp)
{
	const struct pack_entry *ne = pack_header_get(h, ntag);
	const struct pack_entry *ve = pack_header_get(h, vtag);
	const struct pack_entry *fe = pack_header_get(h, ftag);
	const struct pack_entry *pn = pack_header_get(h, RPMTAG_PROVIDENAME);
	const struct pack_entry *pv = pack_header_get(h, RPMTAG_PROVIDEVERSION);
	const struct pack_entry *pf = pack_header_get(h, RPMTAG_PROVIDEFLAGS);
	struct req_seen *seen = NULL;
	uint32_t i, j, n = ent_count(ne), nseen = 0;
	bool opened = false;
	uint32_t libc = UINT32_MAX; /* the one libc.so.6 requirement kept: the newest */
	uint32_t end = n;

	if (requires && n)
		seen = kiln_calloc(n, sizeof(*seen));
	if (ent_count(pv) != ent_count(pn) || ent_count(pf) != ent_count(pn))
		pv = NULL;
	for (i = 0; i <= end; i++) {
		const char *name = i < n ? ent_str(ne, i) : NULL;
		const char *ver;
		uint64_t fl;
		bool pre;
		const char *e, *v, *r, *fname;

		/* createrepo_c lists libc.so.6 once, its newest version, after the others. */
		if (!name && libc == UINT32_MAX)
			break;
		if (!name) {
			i = libc;
			name = ent_str(ne, i);
			end = i; /* the last pass */
		} else if (requires && !strncmp(name, "libc.so.6", 9)) {
			if (libc == UINT32_MAX || libc_newer(name, ent_str(ne, libc)))
				libc = i;
			continue;
		}
		ver = ent_count(ve) == n ? ent_str(ve, i) : "";
		fl = ent_count(fe) == n ? ent_num(fe, i) : 0;
		pre = requires &&
		      (fl & (RPMTAG_DEP_PREREQ | RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_POST));
		fname = flag_names[fl & 0xe];

		if (requires) {
			bool skip = !strncmp(name, "rpmlib(", 7);

			/* What the package provides itself (same name, comparison and version). */
			for (j = 0; !skip && pv && j < ent_count(pn); j++)
				skip = !strcmp(ent_str(pn, j), name) &&
				       !strcmp(ent_str(pv, j), ver) &&
				       (ent_num(pf, j) & 0xe) == (fl & 0xe);
			/* A requirement on one of the package's own primary files. */
			for (j = 0; !skip && *name == '/' && path_primary(name) && j < files->n;
			     j++)
				skip = !strcmp(files->paths[j], name);
			for (j = nseen; !skip && seen && j-- > 0;) {
				if (strcmp(seen[j].name, name))
					continue;
				skip = seen[j].flags == (fl & 0xe) && !strcmp(seen[j].ver, ver) &&
				       seen[j].pre == pre;
				break;
			}
			if (skip)
				continue;
			if (seen)
				seen[nseen++] = (struct req_seen){name, ver, fl & 0xe, pre};
		}
		if (!opened)
			kiln_buf_addf(b, "    <rpm:%s>\n", elem);
		opened = true;
		kiln_buf_addstr(b, "      <rpm:entry name=\"");
		xml_esc(b, name, true);
		kiln_buf_addch(b, '"');
		if (fname && *ver) {
			evr_split(ver, tmp, &e, &v, &r);
			kiln_buf_addf(b, " flags=\"%s\" epoch=\"", fname);
			xml_esc(b, e, true);
			kiln_buf_addstr(b, "\" ver=\"");
			xml_esc(b, v, true);
			kiln_buf_addch(b, '"');
			if (r) {
				kiln_buf_addstr(b, " rel=\"");
				xml_esc(b, r, true);
				kiln_buf_addch(b, '"');
			}
		}
		if (pre)
			kiln_buf_addstr(b, " pre=\"1\"");
		kiln_buf_addstr(b, "/>\n");
	}
	if (opened)
		kiln_buf_addf(b, "    </rpm:%s>\n", elem);
	free(seen);
}

/* ---------------------------------------------------------------------------------------- */
/* One package */

static void version_xml(struct kiln_buf *b, const struct pack_header *h, const char *indent)
{
	kiln_buf_addf(b, "%s<version epoch=\"%" PRIu64 "\" ver=\"", indent,
	              hnum(h, RPMTAG_EPOCH, 0));
	xml_esc(b, hstr(h, RPMTAG_VERSION), true);
	kiln_buf_addstr(b, "\" rel=\"");
	xml_esc(b, hstr(h, RPMTAG_RELEASE), true);
	kiln_buf_addstr(b, "\"/>\n");
}

static void pkgid_xml(struct kiln_buf *b, const struct pack_header *h, const char *sha,
                      const char *arch)
{
	kiln_buf_addf(b, "<package pkgid=\"%s\" name=\"", sha);
	xml_esc(b, hstr(h, RPMTAG_NAME), true);
	kiln_buf_addstr(b, "\" arch=\"");
	xml_esc(b, arch, true);
	kiln_buf_addstr(b, "\">\n");
	version_xml(b, h, "  ");
}

static void primary_xml(struct kiln_buf *b, const struct pack_package *p, const char *sha,
                        const char *rel, uint64_t fsize, const char *arch, const struct rd_files *f,
                        struct kiln_buf *tmp)
{
	const struct pack_header *h = &p->hdr;
	uint64_t bt = hnum(h, RPMTAG_BUILDTIME, 0), archive, v;
	uint32_t i;

	if (!pack_header_get_number(&p->sig, PACK_SIGTAG_LONGARCHIVESIZE, &archive) &&
	    !pack_header_get_number(&p->sig, PACK_SIGTAG_PAYLOADSIZE, &archive))
		archive = hnum(h, RPMTAG_PAYLOADSIZE, hnum(h, RPMTAG_ARCHIVESIZE, 0));
	kiln_buf_addstr(b, "<package type=\"rpm\">\n");
	xml_elem(b, "  ", "name", hstr(h, RPMTAG_NAME));
	xml_elem(b, "  ", "arch", arch);
	version_xml(b, h, "  ");
	kiln_buf_addf(b, "  <checksum type=\"sha256\" pkgid=\"YES\">%s</checksum>\n", sha);
	xml_elem(b, "  ", "summary", hstr(h, RPMTAG_SUMMARY));
	xml_elem(b, "  ", "description", hstr(h, RPMTAG_DESCRIPTION));
	xml_elem(b, "  ", "packager", hstr(h, RPMTAG_PACKAGER));
	xml_elem(b, "  ", "url", hstr(h, RPMTAG_URL));
	/* The file time is the build time: a copy's mtime must not change the metadata. */
	kiln_buf_addf(b, "  <time file=\"%" PRIu64 "\" build=\"%" PRIu64 "\"/>\n", bt, bt);
	v = hnum(h, RPMTAG_LONGSIZE, hnum(h, RPMTAG_SIZE, 0));
	kiln_buf_addf(b,
	              "  <size package=\"%" PRIu64 "\" installed=\"%" PRIu64 "\" archive=\"%" PRIu64
	              "\"/>\n",
	              fsize, v, archive);
	kiln_buf_addstr(b, "  <location href=\"");
	xml_esc(b, rel, true);
	kiln_buf_addstr(b, "\"/>\n  <format>\n");
	xml_elem(b, "    ", "rpm:license", hstr(h, RPMTAG_LICENSE));
	xml_elem(b, "    ", "rpm:vendor", hstr(h, RPMTAG_VENDOR));
	xml_elem(b, "    ", "rpm:group", hstr(h, RPMTAG_GROUP));
	xml_elem(b, "    ", "rpm:buildhost", hstr(h, RPMTAG_BUILDHOST));
	xml_elem(b, "    ", "rpm:sourcerpm", hstr(h, RPMTAG_SOURCERPM));
	kiln_buf_addf(b, "    <rpm:header-range start=\"%" PRIu64 "\" end=\"%" PRIu64 "\"/>\n",
	              p->hdr_off, p->payload_off);
	deps_xml(b, h, "provides", RPMTAG_PROVIDENAME, RPMTAG_PROVIDEVERSION, RPMTAG_PROVIDEFLAGS,
	         false, f, tmp);
	deps_xml(b, h, "requires", RPMTAG_REQUIRENAME, RPMTAG_REQUIREVERSION, RPMTAG_REQUIREFLAGS,
	         true, f, tmp);
	deps_xml(b, h, "conflicts", RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTVERSION,
	         RPMTAG_CONFLICTFLAGS, false, f, tmp);
	deps_xml(b, h, "obsoletes", RPMTAG_OBSOLETENAME, RPMTAG_OBSOLETEVERSION,
	         RPMTAG_OBSOLETEFLAGS, false, f, tmp);
	deps_xml(b, h, "suggests", RPMTAG_SUGGESTNAME, RPMTAG_SUGGESTVERSION, RPMTAG_SUGGESTFLAGS,
	         false, f, tmp);
	deps_xml(b, h, "enhances", RPMTAG_ENHANCENAME, RPMTAG_ENHANCEVERSION, RPMTAG_ENHANCEFLAGS,
	         false, f, tmp);
	deps_xml(b, h, "recommends", RPMTAG_RECOMMENDNAME, RPMTAG_RECOMMENDVERSION,
	         RPMTAG_RECOMMENDFLAGS, false, f, tmp);
	deps_xml(b, h, "supplements", RPMTAG_SUPPLEMENTNAME, RPMTAG_SUPPLEMENTVERSION,
	         RPMTAG_SUPPLEMENTFLAGS, false, f, tmp);
	for (i = 0; i < f->n; i++)
		if (path_primary(f->paths[i]))
			file_line(b, f->paths[i], f->kind[i], "    ");
	kiln_buf_addstr(b, "  </format>\n</package>\n");
}

static void other_xml(struct kiln_buf *b, const struct pack_header *h, const char *sha,
                      const char *arch)
{
	const struct pack_entry *t = pack_header_get(h, RPMTAG_CHANGELOGTIME);
	const struct pack_entry *nm = pack_header_get(h, RPMTAG_CHANGELOGNAME);
	const struct pack_entry *tx = pack_header_get(h, RPMTAG_CHANGELOGTEXT);
	uint32_t n = ent_count(t), i;

	pkgid_xml(b, h, sha, arch);
	if (ent_count(nm) != n || ent_count(tx) != n)
		n = 0;
	/* rpm keeps the newest entry first; the metadata lists the newest ten, oldest first. */
	if (n > REPODATA_CHANGELOG_LIMIT)
		n = REPODATA_CHANGELOG_LIMIT;
	for (i = n; i-- > 0;) {
		kiln_buf_addstr(b, "  <changelog author=\"");
		xml_esc(b, ent_str(nm, i), true);
		kiln_buf_addf(b, "\" date=\"%" PRIu64 "\">", ent_num(t, i));
		xml_esc(b, ent_str(tx, i), false);
		kiln_buf_addstr(b, "</changelog>\n");
	}
	kiln_buf_addstr(b, "</package>\n");
}

/* fb: the thread's file buffer, kept from one package to the next (no map and unmap per
 * package: with several threads each munmap is a TLB shootdown). */
static kiln_rc pkg_describe(const char *dir, struct rd_pkg *pk, struct kiln_buf *fb,
                            struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(RD_BUF_MAX);
	struct kiln_arena a = KILN_ARENA_INIT(RD_BUF_MAX);
	struct pack_package p = {0};
	struct rd_files f = {0};
	unsigned char md[UTIL_DIGEST_MAX];
	char sha[65];
	const char *arch;
	void *map;
	size_t got = 0;
	struct stat st;
	int fd = -1;
	kiln_rc rc;
	uint32_t i;

	kiln_buf_addf(&path, "%s/%s", dir, pk->rel);
	if ((rc = kiln_buf_finish(&path, err)))
		goto out;
	fd = open(path.ptr, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open %s", path.ptr);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < PACK_LEAD_SIZE) {
		rc = kiln_err_set(err, KILN_EFORMAT, "%s: not a package", path.ptr);
		goto out;
	}
	kiln_buf_reset(fb);
	if (!kiln_buf_grow(fb, (size_t)st.st_size + 1)) {
		rc = kiln_buf_finish(fb, err);
		goto out;
	}
	if ((rc = util_read_full(fd, fb->ptr, (size_t)st.st_size, &got, err)))
		goto out;
	if (got != (size_t)st.st_size) {
		rc = kiln_err_set(err, KILN_EIO, "%s changed while it was read", path.ptr);
		goto out;
	}
	map = fb->ptr;
	if ((rc = util_digest_mem(UTIL_DIGEST_SHA256, map, (size_t)st.st_size, md, err)))
		goto out;
	util_hex_encode(md, 32, sha);
	if ((rc = pack_package_from_mem(&p, map, (size_t)st.st_size, err))) {
		kiln_err_wrap(err, "%s", pk->rel);
		goto out;
	}
	if ((rc = files_get(&p.hdr, &a, &f, err))) {
		kiln_err_wrap(err, "%s", pk->rel);
		goto out;
	}
	arch = p.source ? "src" : hstr(&p.hdr, RPMTAG_ARCH);
	pk->buildtime = (int64_t)hnum(&p.hdr, RPMTAG_BUILDTIME, 0);
	primary_xml(&pk->xml[0], &p, sha, pk->rel, (uint64_t)st.st_size, arch, &f, &tmp);
	pkgid_xml(&pk->xml[1], &p.hdr, sha, arch);
	for (i = 0; i < f.n; i++)
		file_line(&pk->xml[1], f.paths[i], f.kind[i], "  ");
	kiln_buf_addstr(&pk->xml[1], "</package>\n");
	other_xml(&pk->xml[2], &p.hdr, sha, arch);
	for (i = 0; i < 3 && !rc; i++)
		rc = kiln_buf_finish(&pk->xml[i], err);
out:
	util_close(fd);
	pack_package_release(&p);
	kiln_arena_release(&a);
	kiln_buf_release(&tmp);
	kiln_buf_release(&path);
	return rc;
}

static void *describe_thread(void *arg)
{
	struct rd_run *r = arg;
	struct kiln_buf fb = KILN_BUF_INIT(KILN_LIMIT_SOURCE_FILE);

	for (;;) {
		size_t i;

		pthread_mutex_lock(&r->lock);
		i = r->next++;
		pthread_mutex_unlock(&r->lock);
		if (i >= r->n)
			break;
		if (!r->pkgs[i].cached)
			r->pkgs[i].rc = pkg_describe(r->dir, &r->pkgs[i], &fb, &r->pkgs[i].err);
	}
	kiln_buf_release(&fb);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Finding packages */

static kiln_rc scan_add(struct rd_run *r, const char *rel, const struct stat *st,
                        struct kiln_err *err)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct rd_pkg *np;

		if (r->n >= REPODATA_MAX_PACKAGES)
			return kiln_err_set(err, KILN_ELIMIT, "%s: more than %d packages", r->dir,
			                    REPODATA_MAX_PACKAGES);
		np = kiln_reallocarray(r->pkgs, cap, sizeof(*np));
		if (!np)
			return kiln_err_set(err, KILN_ENOMEM, "package list");
		r->pkgs = np;
		r->cap = cap;
	}
	memset(&r->pkgs[r->n], 0, sizeof(r->pkgs[r->n]));
	r->pkgs[r->n].rel = kiln_strdup(rel);
	if (!r->pkgs[r->n].rel)
		return kiln_err_set(err, KILN_ENOMEM, "package list");
	r->pkgs[r->n].err = (struct kiln_err)KILN_ERR_INIT;
	r->pkgs[r->n].key =
	    (struct rd_key){(uint64_t)st->st_size, (uint64_t)st->st_ino, (uint64_t)st->st_dev,
	                    st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec,
	                    st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec};
	for (int k = 0; k < 3; k++)
		kiln_buf_init(&r->pkgs[r->n].xml[k], RD_BUF_MAX);
	r->n++;
	return KILN_OK;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is rel one of the packages asked for (all of them without a list)? */
static bool scan_wanted(const struct rd_run *r, const char *rel)
{
	return !r->only || bsearch(&rel, r->only, r->nonly, sizeof(*r->only), str_cmp);
}

/* Every regular *.rpm below rel (not in repodata or dot directories). */
static kiln_rc scan_dir(struct rd_run *r, const char *rel, int depth, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH), sub = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *de;
	kiln_rc rc = KILN_OK;
	DIR *d;

	if (depth > REPODATA_MAX_DEPTH)
		return KILN_OK;
	kiln_buf_addf(&p, "%s%s%s", r->dir, *rel ? "/" : "", rel);
	if ((rc = kiln_buf_finish(&p, err)))
		goto out;
	d = opendir(p.ptr);
	if (!d) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot read directory %s", p.ptr);
		goto out;
	}
	while (!rc && (de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.' || (!*rel && !strcmp(de->d_name, "repodata")))
			continue;
		kiln_buf_reset(&sub);
		kiln_buf_addf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		if ((rc = kiln_buf_finish(&sub, err)))
			break;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = scan_dir(r, sub.ptr, depth + 1, err);
		else if (S_ISREG(st.st_mode) && kiln_str_ends(kiln_str_from(de->d_name), ".rpm") &&
		         scan_wanted(r, sub.ptr))
			rc = scan_add(r, sub.ptr, &st, err);
	}
	closedir(d);
out:
	kiln_buf_release(&sub);
	kiln_buf_release(&p);
	return rc;
}

static int pkg_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rd_pkg *)a)->rel, ((const struct rd_pkg *)b)->rel);
}

/* ---------------------------------------------------------------------------------------- */
/* The description cache */

/* Each generation keeps, beside its metadata, every package's three fragments and the key
 * of the file they were read from (a dot file: not named by repomd.xml, never served). The
 * next write takes a package's fragments from there when the file at its path has the same
 * size, mtime, ctime, inode and device: what createrepo_c --update trusts (size, mtime),
 * plus what changes when the publisher links another blob at the same path. Anything
 * unreadable in it only costs reading the packages again. */
#define RD_CACHE_NAME ".kiln-describe-cache"
#define RD_CACHE_MAGIC "kiln-repodata-cache 1\n"
#define RD_CACHE_MAX ((size_t)1 << 30)

static int rel_cmp(const void *key, const void *pkg)
{
	return strcmp(key, ((const struct rd_pkg *)pkg)->rel);
}

/* One record's head: "REL_LEN SIZE INO DEV MTIME CTIME BUILDTIME LEN0 LEN1 LEN2\n". */
static bool cache_head(const char **p, const char *end, int64_t v[10])
{
	int i;

	for (i = 0; i < 10; i++) {
		const char *t = *p;

		while (t < end && *t != ' ' && *t != '\n')
			t++;
		if (t == end || t == *p || (i < 9) != (*t == ' ') ||
		    util_parse_i64(*p, (size_t)(t - *p), 10, INT64_MIN, INT64_MAX, &v[i], NULL))
			return false;
		*p = t + 1;
	}
	return true;
}

size_t repo_rdcache_parse(const char *text, size_t len,
                          bool (*fn)(void *arg, const struct repo_rdcache_rec *r), void *arg)
{
	const size_t ml = strlen(RD_CACHE_MAGIC);
	const char *p = text + ml, *end = text + len;
	size_t n = 0;
	int64_t v[10];

	if (len < ml || memcmp(text, RD_CACHE_MAGIC, ml))
		return 0;
	while (p < end && cache_head(&p, end, v)) {
		struct repo_rdcache_rec r;
		uint64_t left = (uint64_t)(end - p), need = 0;
		int k;

		/* Every length is checked before it is added: none may pass what is left. */
		for (k = 0; k < 4; k++) {
			int64_t l = k ? v[6 + k] : v[0];

			if (l < 0 || (uint64_t)l > left - need)
				return n;
			need += (uint64_t)l;
		}
		if (v[0] == 0 || v[0] >= (int64_t)KILN_LIMIT_PATH)
			return n;
		r.rel = p;
		r.rel_len = (size_t)v[0];
		r.size = (uint64_t)v[1];
		r.ino = (uint64_t)v[2];
		r.dev = (uint64_t)v[3];
		r.mtime_ns = v[4];
		r.ctime_ns = v[5];
		r.buildtime = v[6];
		p += r.rel_len;
		for (k = 0; k < 3; k++) {
			r.xml[k] = p;
			r.xml_len[k] = (size_t)v[7 + k];
			p += r.xml_len[k];
		}
		n++;
		if (!fn(arg, &r))
			break;
	}
	return n;
}

/* A cached description for the package at r->rel, when its file is still the same. */
static bool cache_take(void *arg, const struct repo_rdcache_rec *c)
{
	struct rd_run *r = arg;
	char rel[KILN_LIMIT_PATH];
	struct rd_pkg *pk;

	memcpy(rel, c->rel, c->rel_len);
	rel[c->rel_len] = '\0';
	pk = bsearch(rel, r->pkgs, r->n, sizeof(*r->pkgs), rel_cmp);
	if (!pk || pk->cached || pk->key.size != c->size || pk->key.ino != c->ino ||
	    pk->key.dev != c->dev || pk->key.mtime_ns != c->mtime_ns ||
	    pk->key.ctime_ns != c->ctime_ns)
		return true;
	for (int k = 0; k < 3; k++)
		kiln_buf_add(&pk->xml[k], c->xml[k], c->xml_len[k]);
	pk->buildtime = c->buildtime;
	pk->cached = !pk->xml[0].err && !pk->xml[1].err && !pk->xml[2].err;
	for (int k = 0; k < 3 && !pk->cached; k++)
		kiln_buf_reset(&pk->xml[k]);
	return true;
}

static void cache_load(struct rd_run *r)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), text = KILN_BUF_INIT(RD_CACHE_MAX);

	kiln_buf_addf(&path, "%s/repodata/" RD_CACHE_NAME, r->dir);
	if (!path.err && r->n && !util_read_file(path.ptr, RD_CACHE_MAX, &text, NULL))
		(void)repo_rdcache_parse(text.ptr, text.len, cache_take, r);
	kiln_buf_release(&text);
	kiln_buf_release(&path);
}

/* gen/RD_CACHE_NAME for every package of this generation; a failure only costs the next
 * write its reuse. */
static void cache_write(const struct rd_run *r, const char *gen)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), out = KILN_BUF_INIT(RD_CACHE_MAX);
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	kiln_buf_addf(&path, "%s/" RD_CACHE_NAME, gen);
	kiln_buf_addstr(&out, RD_CACHE_MAGIC);
	for (i = 0; i < r->n && !out.err; i++) {
		const struct rd_pkg *pk = &r->pkgs[i];

		kiln_buf_addf(&out,
		              "%zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64
		              " %" PRId64 " %zu %zu %zu\n",
		              strlen(pk->rel), pk->key.size, pk->key.ino, pk->key.dev,
		              pk->key.mtime_ns, pk->key.ctime_ns, pk->buildtime, pk->xml[0].len,
		              pk->xml[1].len, pk->xml[2].len);
		kiln_buf_addstr(&out, pk->rel);
		for (int k = 0; k < 3; k++)
			kiln_buf_add(&out, pk->xml[k].ptr, pk->xml[k].len);
	}
	if (path.err || out.err || util_write_atomic_nosync(path.ptr, out.ptr, out.len, 0644, &err))
		kiln_log(KILN_LOG_DEBUG, "repodata: no description cache in %s: %s", gen,
		         err.msg[0] ? err.msg : "too large");
	kiln_buf_release(&out);
	kiln_buf_release(&path);
}

/* ---------------------------------------------------------------------------------------- */
/* Writing the files */

static const char *const kinds[3] = {"primary", "filelists", "other"};

struct rd_file {
	struct rd_run *run;
	int kind;
	const char *gen; /* the new generation's directory */
	const struct repo_metadata_opts *o;
	char sha[65], open_sha[65];
	uint64_t size, open_size;
	char *name; /* owned: "<sha>-primary.xml.gz" */
	kiln_rc rc;
	struct kiln_err err;
};

static void head_tail(int kind, size_t n, bool tail, struct kiln_buf *b)
{
	static const char *const heads[3] = {
	    ("<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
	     "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\""),
	    "<filelists xmlns=\"http://linux.duke.edu/metadata/filelists\"",
	    "<otherdata xmlns=\"http://linux.duke.edu/metadata/other\""};
	static const char *const tails[3] = {"</metadata>", "</filelists>", "</otherdata>"};

	kiln_buf_reset(b);
	if (tail)
		kiln_buf_addstr(b, tails[kind]);
	else
		kiln_buf_addf(b,
		              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n%s packages=\"%zu\">\n",
		              heads[kind], n);
}

/* Compress one file into gen/tmp-KIND, then rename it to its content-addressed name. */
static kiln_rc file_write(struct rd_file *f, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), fin = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf ht = KILN_BUF_INIT(RD_BUF_MAX);
	struct pack_compfile *cf = NULL;
	struct pack_compress comp;
	struct util_digest d = {0};
	unsigned char md[UTIL_DIGEST_MAX];
	const char *ext = f->o->zstd ? "zst" : "gz";
	struct stat st;
	kiln_rc rc;
	size_t i;
	int fd = -1;

	kiln_buf_addf(&path, "%s/tmp-%s", f->gen, kinds[f->kind]);
	if ((rc = kiln_buf_finish(&path, err)) ||
	    (rc = pack_compress_parse(f->o->zstd ? "w10.zstdio" : "w6.gzdio", &comp, err)) ||
	    (rc = util_digest_init(&d, UTIL_DIGEST_SHA256, err)))
		goto out;
	fd = open(path.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", path.ptr);
		goto out;
	}
	if ((rc = pack_compfile_open(&comp, fd, &cf, err)))
		goto out;
	f->open_size = 0;
	for (i = 0; !rc && i <= f->run->n + 1; i++) {
		const struct kiln_buf *b = &ht;

		if (i == 0 || i == f->run->n + 1)
			head_tail(f->kind, f->run->n, i != 0, &ht);
		else
			b = &f->run->pkgs[i - 1].xml[f->kind];
		util_digest_update(&d, b->ptr, b->len);
		f->open_size += b->len;
		rc = pack_compfile_write(cf, b->ptr, b->len, err);
	}
	if (rc || (rc = pack_compfile_finish(cf, err)) || (rc = util_digest_final(&d, md, err)))
		goto out;
	util_hex_encode(md, 32, f->open_sha);
	if (fsync(fd) < 0 || fstat(fd, &st) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot write %s", path.ptr);
		goto out;
	}
	f->size = (uint64_t)st.st_size;
	if ((rc = util_digest_file_hex(UTIL_DIGEST_SHA256, path.ptr, f->sha, err)))
		goto out;
	kiln_buf_addf(&fin, "%s-%s.xml.%s", f->sha, kinds[f->kind], ext);
	if ((rc = kiln_buf_finish(&fin, err)))
		goto out;
	f->name = kiln_strdup(fin.ptr);
	kiln_buf_reset(&fin);
	kiln_buf_addf(&fin, "%s/%s", f->gen, f->name);
	if ((rc = kiln_buf_finish(&fin, err)))
		goto out;
	if (rename(path.ptr, fin.ptr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename %s", path.ptr);
out:
	pack_compfile_free(cf);
	util_close(fd);
	util_digest_release(&d);
	kiln_buf_release(&ht);
	kiln_buf_release(&fin);
	kiln_buf_release(&path);
	return rc;
}

static void *file_thread(void *arg)
{
	struct rd_file *f = arg;

	f->rc = file_write(f, &f->err);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Groups: a comps file copied in as createrepo_c -g does */

#define RD_GROUPS_MAX ((size_t)64 << 20)

/* The comps file twice: "<sha>-NAME" as given (type group) and compressed like the other
 * files (group_gz or group_zst, its open checksum the first one's). */
struct rd_groups {
	const char *ext;        /* "gz" or "zst" */
	char sha[65], zsha[65]; /* zsha: of the compressed file */
	uint64_t size, zsize;
	char *name, *zname; /* owned: file names inside the generation */
};

static void groups_release(struct rd_groups *g)
{
	free(g->name);
	free(g->zname);
}

static bool groups_name_ok(const char *name)
{
	size_t i;

	if (!name[0] || name[0] == '.')
		return false;
	for (i = 0; name[i]; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._+-", name[i]))
			return false;
	return true;
}

/* Write data to gen through comp (NULL: as it is) and name the file "<sha256>-SUFFIX" by
 * its own digest, as the other files are named; its sha256, size and name (owned). */
static kiln_rc groups_file_write(const char *gen, const char *suffix, const struct kiln_buf *data,
                                 const struct pack_compress *comp, char sha[65], uint64_t *size,
                                 char **name, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), fin = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct pack_compfile *cf = NULL;
	struct stat st;
	kiln_rc rc;
	int fd = -1;

	kiln_buf_addf(&path, "%s/tmp-%s", gen, suffix);
	if ((rc = kiln_buf_finish(&path, err)))
		goto out;
	fd = open(path.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", path.ptr);
		goto out;
	}
	if (comp) {
		if ((rc = pack_compfile_open(comp, fd, &cf, err)) ||
		    (rc = pack_compfile_write(cf, data->ptr, data->len, err)) ||
		    (rc = pack_compfile_finish(cf, err)))
			goto out;
	} else if ((rc = util_write_all(fd, data->ptr, data->len, err))) {
		goto out;
	}
	if (fsync(fd) < 0 || fstat(fd, &st) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot write %s", path.ptr);
		goto out;
	}
	*size = (uint64_t)st.st_size;
	if ((rc = util_digest_file_hex(UTIL_DIGEST_SHA256, path.ptr, sha, err)))
		goto out;
	kiln_buf_addf(&fin, "%s/%s-%s", gen, sha, suffix);
	if ((rc = kiln_buf_finish(&fin, err)))
		goto out;
	if (rename(path.ptr, fin.ptr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename %s", path.ptr);
		goto out;
	}
	*name = kiln_strdup(fin.ptr + strlen(gen) + 1);
out:
	pack_compfile_free(cf);
	util_close(fd);
	kiln_buf_release(&fin);
	kiln_buf_release(&path);
	return rc;
}

/* Copy o->groups into gen as "<sha>-BASENAME" and "<sha>-BASENAME.gz" (or .zst). */
static kiln_rc groups_write(const char *gen, const struct repo_metadata_opts *o,
                            struct rd_groups *g, struct kiln_err *err)
{
	struct kiln_buf data = KILN_BUF_INIT(RD_GROUPS_MAX),
	                zsuffix = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *base = util_path_basename(o->groups);
	struct pack_compress comp;
	kiln_rc rc;

	g->ext = o->zstd ? "zst" : "gz";
	if (!groups_name_ok(base)) {
		rc = kiln_err_set(
		    err, KILN_EINVAL,
		    "groups file '%s': the name may hold only letters, digits and ._+-", o->groups);
		goto out;
	}
	if ((rc = util_read_file(o->groups, RD_GROUPS_MAX, &data, err)))
		goto out;
	/* Not parsed (createrepo_c copies it too), but a file that is no comps at all is a
	 * mistake dnf would only report much later. */
	if (!memmem(data.ptr, data.len, "<comps", 6)) {
		rc = kiln_err_set(err, KILN_ESYNTAX, "groups file '%s': no <comps> element",
		                  o->groups);
		goto out;
	}
	kiln_buf_addf(&zsuffix, "%s.%s", base, g->ext);
	if ((rc = kiln_buf_finish(&zsuffix, err)) ||
	    (rc = pack_compress_parse(o->zstd ? "w10.zstdio" : "w6.gzdio", &comp, err)) ||
	    (rc = groups_file_write(gen, base, &data, NULL, g->sha, &g->size, &g->name, err)))
		goto out;
	rc = groups_file_write(gen, zsuffix.ptr, &data, &comp, g->zsha, &g->zsize, &g->zname, err);
out:
	kiln_buf_release(&zsuffix);
	kiln_buf_release(&data);
	return rc;
}

static void repomd_groups_xml(struct kiln_buf *b, int64_t rev, const struct rd_groups *g)
{
	kiln_buf_addf(b,
	              "  <data type=\"group\">\n"
	              "    <checksum type=\"sha256\">%s</checksum>\n"
	              "    <location href=\"repodata/%s\"/>\n"
	              "    <timestamp>%" PRId64 "</timestamp>\n"
	              "    <size>%" PRIu64 "</size>\n"
	              "  </data>\n",
	              g->sha, g->name, rev, g->size);
	kiln_buf_addf(b,
	              "  <data type=\"group_%s\">\n"
	              "    <checksum type=\"sha256\">%s</checksum>\n"
	              "    <open-checksum type=\"sha256\">%s</open-checksum>\n"
	              "    <location href=\"repodata/%s\"/>\n"
	              "    <timestamp>%" PRId64 "</timestamp>\n"
	              "    <size>%" PRIu64 "</size>\n"
	              "    <open-size>%" PRIu64 "</open-size>\n"
	              "  </data>\n",
	              g->ext, g->zsha, g->sha, g->zname, rev, g->zsize, g->size);
}

static void repomd_xml(struct kiln_buf *b, int64_t rev, const struct rd_file *files,
                       const struct rd_groups *groups)
{
	int k;

	kiln_buf_addf(b,
	              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	              "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
	              "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n"
	              "  <revision>%" PRId64 "</revision>\n",
	              rev);
	for (k = 0; k < 3; k++) {
		const struct rd_file *f = &files[k];

		kiln_buf_addf(b,
		              "  <data type=\"%s\">\n"
		              "    <checksum type=\"sha256\">%s</checksum>\n"
		              "    <open-checksum type=\"sha256\">%s</open-checksum>\n"
		              "    <location href=\"repodata/%s\"/>\n"
		              "    <timestamp>%" PRId64 "</timestamp>\n"
		              "    <size>%" PRIu64 "</size>\n"
		              "    <open-size>%" PRIu64 "</open-size>\n"
		              "  </data>\n",
		              kinds[k], f->sha, f->open_sha, f->name, rev, f->size, f->open_size);
	}
	if (groups)
		repomd_groups_xml(b, rev, groups);
	kiln_buf_addstr(b, "</repomd>\n");
}

/* ---------------------------------------------------------------------------------------- */
/* Generations */

struct gen_ent {
	char name[128];
	int64_t mtime_ns;
};

static int gen_cmp(const void *a, const void *b)
{
	const struct gen_ent *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns > y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Remove unfinished generations and all but the newest keep (and current). */
static void gens_prune(const char *gens, const char *current, unsigned keep)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	struct gen_ent *v = NULL;
	size_t n = 0, cap = 0, i, kept = 0;
	struct dirent *de;
	DIR *d = opendir(gens);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			struct gen_ent *nv = kiln_reallocarray(v, cap ? cap * 2 : 16, sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		memcpy(v[n].name, de->d_name, strlen(de->d_name) + 1);
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), gen_cmp);
	for (i = 0; i < n; i++) {
		bool tmp = !strncmp(v[i].name, "tmp-", 4);

		if (!tmp && !strcmp(v[i].name, current))
			continue;
		if (!tmp && kept + 1 < keep) {
			kept++;
			continue;
		}
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", gens, v[i].name);
		if (!p.err && util_rm_rf(p.ptr, &err))
			kiln_err_clear(&err);
	}
	free(v);
	kiln_buf_release(&p);
}

static kiln_rc fsync_dir(const char *path, struct kiln_err *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0) {
		util_close(fd);
		return kiln_err_sys(err, KILN_EIO, "cannot sync %s", path);
	}
	util_close(fd);
	return KILN_OK;
}

/* Point dir/repodata at gens/name with one rename; a repodata directory left by another
 * tool (createrepo_c) becomes a generation first. */
static kiln_rc repodata_swap(const char *dir, const char *name, struct kiln_err *err)
{
	struct kiln_buf link = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf target = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct stat st;
	kiln_rc rc;

	kiln_buf_addf(&link, "%s/repodata", dir);
	kiln_buf_addf(&tmp, "%s/.repodata.tmp-%d", dir, (int)getpid());
	kiln_buf_addf(&target, REPODATA_GENS_DIR "/%s", name);
	if ((rc = kiln_buf_finish(&link, err)) || (rc = kiln_buf_finish(&tmp, err)) ||
	    (rc = kiln_buf_finish(&target, err)))
		goto out;
	if (lstat(link.ptr, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct kiln_buf old = KILN_BUF_INIT(KILN_LIMIT_PATH);

		kiln_buf_addf(&old, "%s/" REPODATA_GENS_DIR "/old-%" PRId64, dir,
		              (int64_t)st.st_mtim.tv_sec);
		rc = kiln_buf_finish(&old, err);
		if (!rc && rename(link.ptr, old.ptr) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot move %s aside", link.ptr);
		kiln_buf_release(&old);
		if (rc)
			goto out;
	}
	(void)unlink(tmp.ptr);
	if (symlink(target.ptr, tmp.ptr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", tmp.ptr);
		goto out;
	}
	if (rename(tmp.ptr, link.ptr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot replace %s", link.ptr);
		(void)unlink(tmp.ptr);
		goto out;
	}
	rc = fsync_dir(dir, err);
out:
	kiln_buf_release(&target);
	kiln_buf_release(&tmp);
	kiln_buf_release(&link);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

void repo_metadata_opts_init(struct repo_metadata_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->keep = 3;
	o->revision = -1;
}

static kiln_rc describe_all(struct rd_run *r, unsigned workers, struct kiln_err *err)
{
	pthread_t th[64];
	unsigned nth = 0, i;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!workers)
		workers = cpus > 0 ? (unsigned)cpus : 1;
	if (workers > 64)
		workers = 64;
	if (workers > r->n)
		workers = r->n ? (unsigned)r->n : 1;
	for (i = 1; i < workers; i++)
		if (!pthread_create(&th[nth], NULL, describe_thread, r))
			nth++;
	describe_thread(r);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < r->n; i++) {
		if (r->pkgs[i].rc) {
			kiln_err_merge(err, &r->pkgs[i].err);
			return r->pkgs[i].rc;
		}
	}
	return KILN_OK;
}

/* Write the generation's files into gen (which exists), the repomd.xml last. */
static kiln_rc gen_write(struct rd_run *r, const char *gen, const struct repo_metadata_opts *o,
                         struct repo_metadata_result *res, struct kiln_err *err)
{
	struct rd_file files[3];
	struct rd_groups groups = {0};
	struct kiln_buf md = KILN_BUF_INIT(RD_BUF_MAX), sig = KILN_BUF_INIT(RD_BUF_MAX),
	                arm = KILN_BUF_INIT(RD_BUF_MAX);
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	pthread_t th[3];
	bool started[3] = {false, false, false};
	int64_t rev = 0;
	kiln_rc rc = KILN_OK;
	size_t i;
	int k;

	for (i = 0; i < r->n; i++)
		if (r->pkgs[i].buildtime > rev)
			rev = r->pkgs[i].buildtime;
	if (o->revision >= 0)
		rev = o->revision;
	for (k = 0; k < 3; k++) {
		files[k] = (struct rd_file){.run = r, .kind = k, .gen = gen, .o = o};
		files[k].err = (struct kiln_err)KILN_ERR_INIT;
		started[k] = k > 0 && !pthread_create(&th[k], NULL, file_thread, &files[k]);
	}
	for (k = 0; k < 3; k++) {
		if (!started[k])
			file_thread(&files[k]);
		else
			pthread_join(th[k], NULL);
	}
	for (k = 0; k < 3 && !rc; k++)
		if ((rc = files[k].rc))
			kiln_err_merge(err, &files[k].err);
	if (rc)
		goto out;
	if (o->groups && (rc = groups_write(gen, o, &groups, err)))
		goto out;
	repomd_xml(&md, rev, files, o->groups ? &groups : NULL);
	if ((rc = kiln_buf_finish(&md, err)))
		goto out;
	if (o->key) {
		struct sign_opts so = {0};
		struct sign_key_info ki;

		/* The revision time, but never before the key existed (a valid signature). */
		sign_key_info_get(o->key, &ki);
		so.time = rev > ki.created ? rev : ki.created;
		if ((rc = sign_data(o->key, md.ptr, md.len, &so, &sig, err)))
			goto out;
		sign_armor_encode(SIGN_ARMOR_SIGNATURE, sig.ptr, sig.len, &arm);
		kiln_buf_addf(&p, "%s/repomd.xml.asc", gen);
		if ((rc = kiln_buf_finish(&arm, err)) || (rc = kiln_buf_finish(&p, err)) ||
		    (rc = util_write_atomic(p.ptr, arm.ptr, arm.len, 0644, err)))
			goto out;
		/* The public key beside it, where zypper (libzypp) looks for it. */
		kiln_buf_reset(&arm);
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/repomd.xml.key", gen);
		if ((rc = sign_key_export(o->key, SIGN_EXPORT_ARMOR, &arm, err)) ||
		    (rc = kiln_buf_finish(&p, err)) ||
		    (rc = util_write_atomic(p.ptr, arm.ptr, arm.len, 0644, err)))
			goto out;
	}
	kiln_buf_reset(&p);
	kiln_buf_addf(&p, "%s/repomd.xml", gen);
	if ((rc = kiln_buf_finish(&p, err)) ||
	    (rc = util_write_atomic(p.ptr, md.ptr, md.len, 0644, err)))
		goto out;
	res->revision = rev;
	res->npackages = r->n;
	rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, md.ptr, md.len, res->repomd_sha256, err);
out:
	for (k = 0; k < 3; k++)
		free(files[k].name);
	groups_release(&groups);
	kiln_buf_release(&p);
	kiln_buf_release(&arm);
	kiln_buf_release(&sig);
	kiln_buf_release(&md);
	return rc;
}

kiln_rc repo_metadata_write(const char *dir, const struct repo_metadata_opts *o,
                            struct repo_metadata_result *res, struct kiln_err *err)
{
	struct rd_run r = {.dir = dir, .only = o->only, .nonly = o->nonly};
	struct kiln_buf gens = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf fin = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char name[33];
	kiln_rc rc;
	size_t i;
	int k;

	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&r.lock, NULL);
	if ((rc = scan_dir(&r, "", 0, err)))
		goto out;
	if (r.n)
		qsort(r.pkgs, r.n, sizeof(*r.pkgs), pkg_cmp);
	kiln_buf_addf(&gens, "%s/" REPODATA_GENS_DIR, dir);
	kiln_buf_addf(&tmp, "%s/tmp-%d-%" PRId64, gens.ptr, (int)getpid(), util_clock_mono_ns());
	if ((rc = kiln_buf_finish(&gens, err)) || (rc = kiln_buf_finish(&tmp, err)) ||
	    (rc = util_mkdir_p(tmp.ptr, 0755, err)))
		goto out;
	cache_load(&r);
	if (kiln_log_enabled(KILN_LOG_DEBUG)) {
		size_t hits = 0;

		for (i = 0; i < r.n; i++)
			hits += r.pkgs[i].cached;
		kiln_debug("repodata: %s: %zu packages, %zu from the description cache", dir, r.n,
		           hits);
	}
	if ((rc = describe_all(&r, o->workers, err)) ||
	    (rc = gen_write(&r, tmp.ptr, o, res, err))) {
		struct kiln_err e2 = KILN_ERR_INIT;

		if (util_rm_rf(tmp.ptr, &e2))
			kiln_err_clear(&e2);
		goto out;
	}
	cache_write(&r, tmp.ptr);
	memcpy(name, res->repomd_sha256, 32);
	name[32] = '\0';
	kiln_buf_addf(&fin, "%s/%s", gens.ptr, name);
	if ((rc = kiln_buf_finish(&fin, err)) || (rc = fsync_dir(tmp.ptr, err)))
		goto out;
	if (util_is_dir(fin.ptr)) {
		/* The same metadata as a kept generation: use that one. */
		struct kiln_err e2 = KILN_ERR_INIT;

		if (util_rm_rf(tmp.ptr, &e2))
			kiln_err_clear(&e2);
		(void)utimensat(AT_FDCWD, fin.ptr, NULL, 0);
	} else if (rename(tmp.ptr, fin.ptr) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename %s", tmp.ptr);
		goto out;
	}
	if ((rc = fsync_dir(gens.ptr, err)) || (rc = repodata_swap(dir, name, err)))
		goto out;
	gens_prune(gens.ptr, name, o->keep ? o->keep : 1);
out:
	for (i = 0; i < r.n; i++) {
		free(r.pkgs[i].rel);
		for (k = 0; k < 3; k++)
			kiln_buf_release(&r.pkgs[i].xml[k]);
	}
	free(r.pkgs);
	pthread_mutex_destroy(&r.lock);
	kiln_buf_release(&fin);
	kiln_buf_release(&tmp);
	kiln_buf_release(&gens);
	return rc;
}
