/*
 * filelist.c - %files applied to a buildroot: the package file lists pack_write() takes.
 *
 * The order of work follows rpmbuild's processPackageFiles(): read the -f lists, walk the
 * entries (globs, recursion, %dir, %ghost, %dev, attributes), then the special %doc and
 * %license directories, then sort, merge duplicates, drop %exclude'd files, classify and
 * fill struct pack_file. Paths are resolved with openat2(RESOLVE_BENEATH) from a
 * descriptor of the buildroot, so nothing outside it is ever packaged or read.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <magic.h>
#include "worker/libmagic_int.h"
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"

/* Filled on first use (see worker/libmagic_int.h). */
static struct worker_libmagic_fns worker_libmagic;
static struct util_dl worker_libmagic_dl =
    UTIL_DL_INIT(WORKER_LIBMAGIC_SONAME, worker_libmagic_syms, worker_libmagic);

#define FL_EXCLUDE (1u << 16) /* internal: %exclude (rpm's RPMFILE_EXCLUDE) */
#define FL_MAX_DEPTH 256      /* directory recursion (paths are bounded too) */

/* One file as addFile() records it. Strings live in the list's arena. */
struct rec {
	const char *cpio; /* in-package path */
	const char *disk; /* host path with symlinked parents resolved */
	const char *drel; /* disk relative to the buildroot ("/usr/bin/x") */
	const char *link; /* symlink target, or NULL */
	struct stat st;
	uint32_t mode;
	const char *user, *group;
	uint32_t flags; /* SPEC_FILE_* | FL_EXCLUDE */
	uint32_t verify;
	const char *lang, *caps;
	unsigned wattr, wverify; /* rpm's precedence of duplicates (explicit > default) */
	size_t order;
};

/* The entry being applied (rpm's fl->cur and fl->def). */
struct cur {
	const struct spec_files_entry *e;
	int isdir; /* 1: %dir, -1: a trailing slash, 0: neither */
	const char *lang;
};

struct fl {
	const struct worker_filelist_opts *o;
	struct spec *spec;
	struct spec_package *pkg;
	struct worker_filelist *out;
	struct kiln_err *err;
	int rootfd;
	char *realroot; /* owned (heap): realpath of the buildroot */
	size_t realrootlen;
	struct rec *recs; /* owned (heap) */
	size_t nrecs, caprecs;
	struct worker_strv docdirs; /* in the arena */
	struct cur cur;
	uint32_t now;
	bool failed;
	kiln_rc fatal; /* ENOMEM / EIO: stop */
};

/* ---------------------------------------------------------------------------------------- */
/* Messages */

static const char *entry_file(const struct fl *fl, const struct spec_files_entry *e)
{
	return e && e->file ? e->file : fl->spec->path;
}

/* A per-file error: the first one is returned, later ones are logged, collection goes on
 * (rpmbuild reports them all). */
static void fl_fail(struct fl *fl, kiln_rc rc, const char *fmt, ...) KILN_PRINTF(3, 4);

static void fl_fail(struct fl *fl, kiln_rc rc, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	const struct spec_files_entry *e = fl->cur.e;
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	if (!fl->failed && !fl->err->code) {
		kiln_err_set(fl->err, rc, "%s", msg);
		kiln_err_locate(fl->err, entry_file(fl, e), e ? e->line : 0, 0);
	} else {
		macro_diag(fl->o->macros, KILN_LOG_ERROR, "%s", msg);
	}
	fl->failed = true;
}

static void fl_warn(struct fl *fl, const char *fmt, ...) KILN_PRINTF(2, 3);

static void fl_warn(struct fl *fl, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	macro_diag(fl->o->macros, KILN_LOG_WARN, "%s", msg);
}

/* A fatal error (no memory, I/O on the buildroot): collection stops. */
static kiln_rc fl_fatal(struct fl *fl, kiln_rc rc, struct kiln_err *from)
{
	if (!fl->fatal)
		fl->fatal = rc;
	kiln_err_merge(fl->err, from);
	return rc;
}

static kiln_rc fl_nomem(struct fl *fl)
{
	fl->fatal = KILN_ENOMEM;
	return kiln_err_set(fl->err, KILN_ENOMEM, "out of memory");
}

/* Macro value as a number, with a default when undefined or empty (rpmExpandNumeric). */
static long macro_num(struct macro_ctx *m, const char *name, long dflt)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	char expr[128];
	char *v = NULL;
	long r = dflt;

	snprintf(expr, sizeof(expr), "%%{?%s}", name);
	if (!macro_expand_str(m, expr, &v, &ignored) && *v) {
		if (*v == 'y' || *v == 'Y')
			r = 1;
		else if (*v == 'n' || *v == 'N')
			r = 0;
		else
			r = strtol(v, NULL, 10);
	}
	free(v);
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* String lists, paths */

static kiln_rc strv_add(struct worker_strv *sv, struct kiln_arena *a, const char *s,
                        struct kiln_err *err)
{
	if (!kiln_arena_strv_add(a, &sv->v, &sv->n, &sv->cap, s))
		return kiln_arena_finish(a, err);
	return KILN_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool worker_path_clean(const char *path, bool keep_slash, struct kiln_buf *out)
{
	const char *p = path;
	size_t len = strlen(path);
	bool slash = len > 1 && path[len - 1] == '/';

	kiln_buf_reset(out);
	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *last;

			if (!out->len)
				return false;
			last = strrchr(out->ptr, '/');
			kiln_buf_truncate(out, (size_t)(last - out->ptr));
		} else if (!(n == 1 && p[0] == '.')) {
			kiln_buf_addch(out, '/');
			kiln_buf_add(out, p, n);
		}
		p += n;
	}
	if (!out->len)
		kiln_buf_addch(out, '/');
	else if (slash && keep_slash)
		kiln_buf_addch(out, '/');
	return !out->err;
}

static bool has_illegal_char(const char *s, unsigned char *c)
{
	for (; *s; s++) {
		unsigned char u = (unsigned char)*s;

		if (u < 0x20 || u == 0x7f) {
			*c = u;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Globs: brace expansion, then a component-wise walk beneath a directory descriptor. */

/* The "}" closing the "{" at p, with the position of its first top-level comma. */
static const char *brace_close(const char *p, const char **comma)
{
	int depth = 0;

	*comma = NULL;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}') {
			if (--depth == 0)
				return p;
		} else if (*p == ',' && depth == 1 && !*comma) {
			*comma = p;
		}
	}
	return NULL;
}

static const char *brace_open(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '{')
			return p;
	}
	return NULL;
}

static kiln_rc braces_rec(const char *pat, int depth, struct kiln_arena *a, struct worker_strv *out,
                          struct kiln_err *err)
{
	const char *open = brace_open(pat);
	const char *comma, *close, *alt;
	kiln_rc rc = KILN_OK;

	if (depth > KILN_LIMIT_MACRO_DEPTH)
		return kiln_err_set(err, KILN_ELIMIT, "glob braces nest too deep: %s", pat);
	close = open ? brace_close(open, &comma) : NULL;
	if (!close) {
		char *s = kiln_arena_strdup(a, pat);

		return s ? strv_add(out, a, s, err) : kiln_arena_finish(a, err);
	}
	for (alt = open + 1; !rc && alt <= close;) {
		const char *end = alt;
		int d = 0;
		char *s;

		for (; end < close && !(*end == ',' && d == 0); end++) {
			if (*end == '\\' && end + 1 < close)
				end++;
			else if (*end == '{')
				d++;
			else if (*end == '}')
				d--;
		}
		s = kiln_arena_printf(a, "%.*s%.*s%s", (int)(open - pat), pat, (int)(end - alt),
		                      alt, close + 1);
		rc = s ? braces_rec(s, depth + 1, a, out, err) : kiln_arena_finish(a, err);
		alt = end + 1;
	}
	return rc;
}

kiln_rc worker_glob_braces(const char *pat, struct kiln_arena *a, struct worker_strv *out,
                           struct kiln_err *err)
{
	return braces_rec(pat, 0, a, out, err);
}

static bool comp_is_magic(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		else if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	}
	return false;
}

bool worker_glob_is_magic(const char *pat)
{
	const char *open, *comma;

	if (strpbrk(pat, "*?["))
		return true;
	for (open = brace_open(pat); open; open = brace_open(open + 1)) {
		if (brace_close(open, &comma) && comma)
			return true;
	}
	return false;
}

static void unescape(const char *s, size_t n, struct kiln_buf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		kiln_buf_addch(out, s[i]);
	}
}

struct gwalk {
	int rootfd;
	struct kiln_arena *a;
	struct worker_strv *out;
	bool only_dir;
	struct kiln_err *err;
};

static bool is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

static kiln_rc gwalk_rec(struct gwalk *g, struct kiln_buf *prefix, const char *rest);

/* The component [c, c+n) holds glob characters: match it against the directory's names. */
static kiln_rc gwalk_magic(struct gwalk *g, struct kiln_buf *prefix, const char *c, size_t n)
{
	char pat[NAME_MAX * 4 + 1];
	const char *rest = c[n] ? c + n + 1 : NULL;
	struct kiln_err e2 = KILN_ERR_INIT;
	struct dirent *de;
	size_t keep = prefix->len;
	kiln_rc rc = KILN_OK;
	DIR *d;
	int fd;

	if (n >= sizeof(pat))
		return KILN_OK; /* no name can match */
	memcpy(pat, c, n);
	pat[n] = '\0';
	if (util_path_open_in_root(g->rootfd, prefix->len ? prefix->ptr + 1 : ".",
	                           O_RDONLY | O_DIRECTORY, 0, 0, &fd, &e2))
		return e2.code == KILN_EPRIV ? (kiln_err_merge(g->err, &e2), KILN_EPRIV) : KILN_OK;
	d = fdopendir(fd);
	if (!d) {
		util_close(fd);
		return KILN_OK;
	}
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fnmatch(pat, de->d_name, FNM_PERIOD))
			continue;
		if ((rest || g->only_dir) && !is_dir_at(dirfd(d), de->d_name))
			continue;
		kiln_buf_addch(prefix, '/');
		kiln_buf_addstr(prefix, de->d_name);
		rc = gwalk_rec(g, prefix, rest);
		kiln_buf_truncate(prefix, keep);
	}
	closedir(d);
	return rc;
}

/* prefix: the absolute path matched so far ("" for "/"); rest: what is left, or NULL. */
static kiln_rc gwalk_rec(struct gwalk *g, struct kiln_buf *prefix, const char *rest)
{
	size_t keep = prefix->len;
	struct stat st;
	kiln_rc rc;
	size_t n;

	if (prefix->err)
		return kiln_err_set(g->err, KILN_ENOMEM, "out of memory");
	while (rest && *rest == '/')
		rest++;
	if (!rest || !*rest) {
		char *s;

		if (!prefix->len)
			return KILN_OK;
		if (fstatat(g->rootfd, prefix->ptr + 1, &st, AT_SYMLINK_NOFOLLOW))
			return KILN_OK;
		s = kiln_arena_printf(g->a, "%s%s", prefix->ptr, g->only_dir ? "/" : "");
		return s ? strv_add(g->out, g->a, s, g->err) : kiln_arena_finish(g->a, g->err);
	}
	n = strcspn(rest, "/");
	if (comp_is_magic(rest, n))
		return gwalk_magic(g, prefix, rest, n);
	kiln_buf_addch(prefix, '/');
	unescape(rest, n, prefix);
	rc = gwalk_rec(g, prefix, rest[n] ? rest + n + 1 : NULL);
	kiln_buf_truncate(prefix, keep);
	return rc;
}

kiln_rc worker_glob_in_root(int rootfd, const char *pat, struct kiln_arena *a,
                            struct worker_strv *out, struct kiln_err *err)
{
	struct worker_strv alts = {0};
	struct kiln_buf prefix = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	size_t first = out->n, i;
	kiln_rc rc = worker_glob_braces(pat, a, &alts, err);
	struct gwalk g = {.rootfd = rootfd, .a = a, .out = out, .err = err};

	for (i = 0; !rc && i < alts.n; i++) {
		size_t len = strlen(alts.v[i]);

		g.only_dir = len > 1 && alts.v[i][len - 1] == '/';
		kiln_buf_reset(&prefix);
		rc = gwalk_rec(&g, &prefix, alts.v[i]);
	}
	kiln_buf_release(&prefix);
	if (!rc && out->n - first > KILN_LIMIT_PACKAGE_FILES)
		rc = kiln_err_set(err, KILN_ELIMIT, "%s: more than %d matches", pat,
		                  (int)KILN_LIMIT_PACKAGE_FILES);
	if (!rc && out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Classification: libmagic descriptions (FILECLASS, v6 MIME types) and ELF colours. */

/* rpm 4.20's token table (build/rpmfc.c rpmfcTokens): a description containing one of these
 * is kept in the class dictionary, any other one is stored as "". rpm 4.18 also kept
 * "symbolic link to ..." (Debian's rpmbuild does); 4.20's table no longer lists it. */
static const char *const class_tokens[] = {
    "directory",
    "ELF 32-bit",
    "ELF 64-bit",
    "troff or preprocessor input",
    "GNU Info",
    "perl ",
    "Perl5 module source text",
    "python ",
    "libtool library ",
    "pkgconfig ",
    "Objective caml ",
    "Mono/.Net assembly",
    "current ar archive",
    "Zip archive data",
    "tar archive",
    "cpio archive",
    "RPM v3",
    "RPM v4",
    " image",
    " font",
    " Font",
    " commands",
    " script",
    "empty",
    "HTML",
    "SGML",
    "XML",
    " source",
    "GLS_BINARY_LSB_FIRST",
    " DB ",
    " text",
};

bool worker_fileclass_kept(const char *desc)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(class_tokens); i++) {
		if (strstr(desc, class_tokens[i]))
			return true;
	}
	return false;
}

/* Extensions rpm does not ask libmagic about (rpmfc.c skipped_extensions; .html, .png and
 * .svg since rpm 4.19). */
static const struct {
	const char *ext, *desc, *mime;
} skipped_ext[] = {
    {".pm", "Perl5 module source text", "text/plain"},
    {".c", "C Code", "text/x-c"},
    {".h", "C Header", "text/x-c"},
    {".la", "libtool library file", "text/plain"},
    {".pc", "pkgconfig file", "text/plain"},
    {".html", "HTML document", "text/html"},
    {".png", "PNG image data", "image/png"},
    {".svg", "SVG Scalable Vector Graphics image", "image/svg+xml"},
};

uint32_t worker_elf_color_fd(int fd)
{
	unsigned char h[64];
	size_t got = 0;
	unsigned machine;
	size_t need;

	if (util_read_full(fd, h, sizeof(h), &got, NULL) || got < 20)
		return 0;
	if (memcmp(h, "\177ELF", 4) || (h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
		return 0;
	need = h[4] == 1 ? 52 : 64;
	if (got < need)
		return 0;
	machine = h[5] == 1 ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[18] << 8 | h[19]);
	if (machine == 247) /* EM_BPF: rpm leaves BPF objects uncoloured */
		return 0;
	return h[4];
}

/* libmagic cookies for one list: a description cookie for v4's FILECLASS or a MIME cookie
 * for v6, never both (each load is a parse of the whole magic database). */
struct magic_pair {
	magic_t ms, mime;
};

static kiln_rc magic_pair_open(struct magic_pair *m, int rpmformat, struct kiln_err *err)
{
	int flags = MAGIC_CHECK | MAGIC_COMPRESS | MAGIC_NO_CHECK_TOKENS | MAGIC_ERROR;
	magic_t *c = rpmformat == 6 ? &m->mime : &m->ms;
	kiln_rc rc = util_dl_ready(&worker_libmagic_dl, err);

	if (rc)
		return rc;
	*c = magic_open(rpmformat == 6 ? flags | MAGIC_MIME_TYPE : flags);
	if (!*c)
		return kiln_err_set(err, KILN_ENOMEM, "magic_open failed");
	if (magic_load(*c, NULL))
		return kiln_err_set(err, KILN_EIO, "magic_load failed: %s",
		                    magic_error(*c) ? magic_error(*c) : "unknown error");
	return KILN_OK;
}

static void magic_pair_close(struct magic_pair *m)
{
	if (m->ms)
		magic_close(m->ms);
	if (m->mime)
		magic_close(m->mime);
}

static const char *type_desc(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR:
		return "character special";
	case S_IFBLK:
		return "block special";
	case S_IFIFO:
		return "fifo (named pipe)";
	case S_IFSOCK:
		return "socket";
	case S_IFDIR:
		return "directory";
	default:
		return NULL;
	}
}

static const char *skipped_match(const char *path, bool mime)
{
	size_t len = strlen(path), i;

	for (i = 0; i < KILN_ARRAY_SIZE(skipped_ext); i++) {
		size_t el = strlen(skipped_ext[i].ext);

		if (len > el && !strcmp(path + len - el, skipped_ext[i].ext))
			return mime ? skipped_ext[i].mime : skipped_ext[i].desc;
	}
	return NULL;
}

/* libmagic on a disk path; "" for a missing file (an immaterial %ghost), fallback when
 * libmagic gives up, as rpm does. */
static const char *magic_ask(magic_t m, const char *path, const char *fallback)
{
	const char *r;

	errno = 0;
	r = magic_file(m, path);
	if (!r)
		return errno == ENOENT ? "" : fallback;
	return r;
}

/* FILECLASS or MIME type and FILECOLORS of one file; disk is where it is in the buildroot. */
static kiln_rc classify(const struct magic_pair *m, const char *disk, struct pack_file *f,
                        struct kiln_arena *a, struct kiln_err *err)
{
	const char *desc = type_desc(f->mode);
	const char *mime = skipped_match(disk, true);

	/* libmagic is most of the cost of packaging many small files: ask only for what the
	 * package format stores (FILECLASS in v4, MIME types in v6). */
	bool want_desc = m->ms != NULL, want_mime = m->mime != NULL;

	if (!desc)
		desc = skipped_match(disk, false);
	if (!strncmp(f->path, "/dev/", 5) && !type_desc(f->mode))
		desc = "";
	else if (!desc)
		desc = want_desc ? magic_ask(m->ms, disk, "data") : "";
	if (!mime)
		mime = want_mime ? magic_ask(m->mime, disk, "application/octet-stream") : "";
	f->fclass = worker_fileclass_kept(desc) ? kiln_arena_strdup(a, desc) : "";
	f->mime = kiln_arena_strdup(a, mime);
	if (S_ISREG(f->mode) && (f->mode & 0111)) {
		int fd = open(disk, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

		if (fd >= 0) {
			f->color = worker_elf_color_fd(fd);
			util_close(fd);
		}
	}
	return kiln_arena_finish(a, err);
}

kiln_rc worker_filelist_classify(struct worker_filelist *l, int rpmformat, struct kiln_err *err)
{
	struct magic_pair m = {NULL, NULL};
	kiln_rc rc = KILN_OK;
	size_t i;

	if (l->classified || !l->n)
		return KILN_OK;
	rc = magic_pair_open(&m, rpmformat, err);
	for (i = 0; !rc && i < l->n; i++)
		rc = classify(&m, l->disk[i], &l->files[i], &l->arena, err);
	magic_pair_close(&m);
	l->classified = !rc;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Records (addFile) */

static const char *arena_str(struct fl *fl, const char *s)
{
	const char *r = kiln_arena_strdup(&fl->out->arena, s);

	if (!r)
		fl_nomem(fl);
	return r;
}

static const char *owner_name(struct fl *fl, const struct stat *st, bool group)
{
	char buf[32];

	if (!fl->o->owner_from_disk)
		return "root";
	if (group) {
		struct group *g = getgrgid(st->st_gid);

		if (g)
			return arena_str(fl, g->gr_name);
		snprintf(buf, sizeof(buf), "%u", (unsigned)st->st_gid);
	} else {
		struct passwd *p = getpwuid(st->st_uid);

		if (p)
			return arena_str(fl, p->pw_name);
		snprintf(buf, sizeof(buf), "%u", (unsigned)st->st_uid);
	}
	return arena_str(fl, buf);
}

/* rpm's mode rules: an explicit %attr mode wins (not for symlinks), else %defattr's
 * dirmode for directories and mode for other non-symlinks. */
static uint32_t rec_mode(struct fl *fl, const struct spec_files_entry *e, uint32_t mode,
                         const char *disk)
{
	uint32_t type = mode & S_IFMT;

	if (e->attr.set & SPEC_ATTR_MODE) {
		if (S_ISLNK(mode))
			fl_warn(fl, "Explicit %%attr() mode not applicable to symlink: %s", disk);
		else
			return type | e->attr.mode;
	} else if (S_ISDIR(mode)) {
		if (e->defattr.set & SPEC_ATTR_DIRMODE)
			return type | e->defattr.dirmode;
	} else if (!S_ISLNK(mode) && (e->defattr.set & SPEC_ATTR_MODE)) {
		return type | e->defattr.mode;
	}
	return mode;
}

static kiln_rc claim(struct fl *fl, const char *drel)
{
	struct worker_filelist *out = fl->out;

	if (out->nclaimed == out->capclaimed) {
		size_t cap = out->capclaimed ? out->capclaimed * 2 : 64;
		const char **v = kiln_reallocarray(out->claimed, cap, sizeof(*v));

		if (!v)
			return fl_nomem(fl);
		out->claimed = v;
		out->capclaimed = cap;
	}
	out->claimed[out->nclaimed++] = drel;
	return KILN_OK;
}

static struct rec *rec_push(struct fl *fl)
{
	struct rec *r;

	if (fl->nrecs == fl->caprecs) {
		size_t cap = fl->caprecs ? fl->caprecs * 2 : 64;
		struct rec *v;

		if (cap > KILN_LIMIT_PACKAGE_FILES * 2) {
			kiln_err_set(fl->err, KILN_ELIMIT, "more than %d files",
			             (int)KILN_LIMIT_PACKAGE_FILES);
			fl->fatal = KILN_ELIMIT;
			return NULL;
		}
		v = kiln_reallocarray(fl->recs, cap, sizeof(*v));
		if (!v) {
			fl_nomem(fl);
			return NULL;
		}
		fl->recs = v;
		fl->caprecs = cap;
	}
	r = &fl->recs[fl->nrecs];
	memset(r, 0, sizeof(*r));
	r->order = fl->nrecs++;
	return r;
}

static void rec_attrs(struct fl *fl, struct rec *r, const struct spec_files_entry *e)
{
	if (e->attr.set & SPEC_ATTR_USER)
		r->user = e->attr.user;
	else if (e->defattr.set & SPEC_ATTR_USER)
		r->user = e->defattr.user;
	else
		r->user = owner_name(fl, &r->st, false);
	if (e->attr.set & SPEC_ATTR_GROUP)
		r->group = e->attr.group;
	else if (e->defattr.set & SPEC_ATTR_GROUP)
		r->group = e->defattr.group;
	else
		r->group = owner_name(fl, &r->st, true);
	r->flags = (e->fileflags & 0xffff) | ((e->flags & SPEC_ENTRY_EXCLUDE) ? FL_EXCLUDE : 0);
	r->verify = e->verifyflags;
	r->lang = fl->cur.lang;
	r->caps = e->caps ? e->caps : "";
	r->wattr = (e->attr.given ? 2u : 0u) | (e->defattr.given ? 1u : 0u);
	r->wverify = ((e->flags & SPEC_ENTRY_VERIFY) ? 2u : 0u) |
	             ((e->flags & SPEC_ENTRY_DEFVERIFY) ? 1u : 0u);
}

/* The symlink's target, with rpm's checks. dfd/name: where it is. */
static const char *rec_link(struct fl *fl, int dfd, const char *name, const char *cpio)
{
	char buf[KILN_LIMIT_PATH];
	ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
	size_t brl = strlen(fl->o->buildroot);

	if (n < 0) {
		fl_fail(fl, KILN_EIO, "reading symlink %s%s failed: %s", fl->o->buildroot, cpio,
		        strerror(errno));
		return "";
	}
	buf[n] = '\0';
	if (buf[0] == '/')
		fl_warn(fl, "absolute symlink: %s -> %s", cpio, buf);
	if (buf[0] == '/' && brl > 1 && !strncmp(buf, fl->o->buildroot, brl))
		fl_fail(fl, KILN_EINVAL, "Symlink points to BuildRoot: %s -> %s", cpio, buf);
	return arena_str(fl, buf);
}

/* Record one file. dfd/name locate it (for readlink); disk/drel are its host and
 * buildroot-relative paths. */
static kiln_rc rec_add(struct fl *fl, const char *cpio, const char *disk, const char *drel,
                       const struct stat *st, int dfd, const char *name)
{
	const struct spec_files_entry *e = fl->cur.e;
	struct rec *r = rec_push(fl);

	if (!r)
		return fl->fatal;
	r->st = *st;
	r->cpio = arena_str(fl, cpio);
	r->disk = arena_str(fl, disk);
	r->drel = arena_str(fl, drel);
	if (!r->cpio || !r->disk || !r->drel)
		return fl->fatal;
	r->mode = rec_mode(fl, e, (uint32_t)st->st_mode, disk);
	rec_attrs(fl, r, e);
	if (S_ISLNK(st->st_mode) && dfd >= 0)
		r->link = rec_link(fl, dfd, name, cpio);
	if (S_ISREG(r->mode) || S_ISLNK(r->mode))
		return claim(fl, r->drel);
	return fl->fatal;
}

/* ---------------------------------------------------------------------------------------- */
/* Directory recursion (rpm's recurseDir: the directory itself, then everything below) */

static kiln_rc walk_dir(struct fl *fl, int dfd, struct kiln_buf *cpio, struct kiln_buf *disk,
                        size_t brl, int depth);

static kiln_rc walk_entry(struct fl *fl, int dfd, const char *name, struct kiln_buf *cpio,
                          struct kiln_buf *disk, size_t brl, int depth)
{
	size_t kc = cpio->len, kd = disk->len;
	struct stat st;
	kiln_rc rc = KILN_OK;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		fl_fail(fl, KILN_EIO, "Can't read content of file: %s/%s", disk->ptr, name);
		return KILN_OK;
	}
	if (cpio->len > 1)
		kiln_buf_addch(cpio, '/');
	kiln_buf_addstr(cpio, name);
	kiln_buf_addch(disk, '/');
	kiln_buf_addstr(disk, name);
	if (cpio->err || disk->err || cpio->len >= KILN_LIMIT_PATH)
		rc = kiln_err_set(fl->err, KILN_ELIMIT, "path too long: %s", disk->ptr);
	if (!rc)
		rc = rec_add(fl, cpio->ptr, disk->ptr, disk->ptr + brl, &st, dfd, name);
	if (!rc && S_ISDIR(st.st_mode)) {
		int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (sub < 0)
			fl_fail(fl, KILN_EIO, "Can't read content of file: %s", disk->ptr);
		else
			rc = walk_dir(fl, sub, cpio, disk, brl, depth + 1);
	}
	kiln_buf_truncate(cpio, kc);
	kiln_buf_truncate(disk, kd);
	return rc;
}

/* Takes dfd. */
static kiln_rc walk_dir(struct fl *fl, int dfd, struct kiln_buf *cpio, struct kiln_buf *disk,
                        size_t brl, int depth)
{
	struct dirent *de;
	kiln_rc rc = KILN_OK;
	DIR *d;

	if (depth > FL_MAX_DEPTH) {
		util_close(dfd);
		return kiln_err_set(fl->err, KILN_ELIMIT, "%s: directories nest deeper than %d",
		                    disk->ptr, FL_MAX_DEPTH);
	}
	d = fdopendir(dfd);
	if (!d) {
		util_close(dfd);
		return fl_nomem(fl);
	}
	while (!rc && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = walk_entry(fl, dirfd(d), de->d_name, cpio, disk, brl, depth);
	}
	closedir(d);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* addFile for a path from the manifest */

/* A stat for a %dev entry or a %ghost that does not exist (rpm's fakeStat). */
static void fake_stat(struct fl *fl, struct stat *st)
{
	const struct spec_files_entry *e = fl->cur.e;
	uint32_t perm = (e->attr.set & SPEC_ATTR_MODE) ? (e->attr.mode & 0777) : 0;

	memset(st, 0, sizeof(*st));
	if (e->flags & SPEC_ENTRY_DEV) {
		st->st_rdev = ((e->dev_major & 0xff) << 8) | (e->dev_minor & 0xff);
		st->st_dev = st->st_rdev;
		st->st_mode = (e->dev_type == 'b' ? S_IFBLK : S_IFCHR) | perm;
	} else {
		st->st_mode = (fl->cur.isdir ? S_IFDIR : S_IFREG) | perm;
	}
	st->st_mtime = (time_t)fl->now;
	st->st_nlink = 1;
}

/* Where cpio lives: its parent opened beneath the root (symlinks inside the buildroot are
 * followed, as lstat() of a path does, escaping ones refused) and its real host path. */
struct located {
	int pfd;
	const char *base;
	char disk[KILN_LIMIT_PATH * 2];
	bool escapes;
};

static bool locate(struct fl *fl, const char *cpio, struct located *l)
{
	struct kiln_err e2 = KILN_ERR_INIT;
	char parent[KILN_LIMIT_PATH];
	char proc[64], real[KILN_LIMIT_PATH];
	const char *slash = strrchr(cpio, '/');
	size_t plen = (size_t)(slash - cpio);
	ssize_t n;

	l->pfd = -1;
	l->escapes = false;
	l->base = slash + 1;
	if (plen >= sizeof(parent))
		return false;
	memcpy(parent, cpio, plen);
	parent[plen] = '\0';
	if (util_path_open_in_root(fl->rootfd, plen ? parent + 1 : ".", O_PATH | O_DIRECTORY, 0, 0,
	                           &l->pfd, &e2)) {
		l->escapes = e2.code == KILN_EPRIV;
		return false;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", l->pfd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n < 0 || (size_t)n < fl->realrootlen) {
		util_close(l->pfd);
		l->pfd = -1;
		return false;
	}
	real[n] = '\0';
	snprintf(l->disk, sizeof(l->disk), "%s/%s", strcmp(real, "/") ? real : "", l->base);
	return true;
}

static void not_found(struct fl *fl, const char *diskmsg)
{
	const struct spec_files_entry *e = fl->cur.e;
	const char *what = fl->cur.isdir ? "Directory not found" : "File not found";
	bool ignore = (e->flags & SPEC_ENTRY_EXCLUDE) != 0;

	if ((e->fileflags & SPEC_FILE_DOC) &&
	    !macro_num(fl->o->macros, "_missing_doc_files_terminate_build", 0))
		ignore = true;
	if (ignore)
		fl_warn(fl, "%s: %s", what, diskmsg);
	else
		fl_fail(fl, KILN_ENOTFOUND, "%s: %s", what, diskmsg);
}

static kiln_rc add_existing(struct fl *fl, const char *cpio, const char *diskmsg, struct located *l,
                            const struct stat *st)
{
	struct kiln_buf cb = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct kiln_buf db = KILN_BUF_INIT(KILN_LIMIT_PATH * 4);
	const char *drel = l->disk + fl->realrootlen;
	kiln_rc rc;
	int sub;

	if (fl->cur.isdir && !S_ISDIR(st->st_mode)) {
		fl_fail(fl, KILN_EINVAL, "Not a directory: %s", diskmsg);
		return KILN_OK;
	}
	if (!*drel)
		drel = "/";
	rc = rec_add(fl, cpio, l->disk, drel, st, l->pfd, l->base);
	if (rc || fl->cur.isdir == 1 || !S_ISDIR(st->st_mode))
		return rc;
	sub = *l->base ? openat(l->pfd, l->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
	               : openat(fl->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sub < 0) {
		fl_fail(fl, KILN_EIO, "Can't read content of file: %s", diskmsg);
		return KILN_OK;
	}
	kiln_buf_addstr(&cb, cpio);
	kiln_buf_addstr(&db, strcmp(l->disk, "/") ? l->disk : "");
	if (cb.len > 1 && cb.ptr[cb.len - 1] == '/')
		kiln_buf_truncate(&cb, cb.len - 1);
	rc = walk_dir(fl, sub, &cb, &db, fl->realrootlen, 0);
	kiln_buf_release(&cb);
	kiln_buf_release(&db);
	return rc;
}

/* rpm's addFile() for a manifest path (normalised, absolute, in-package). */
static kiln_rc add_path(struct fl *fl, const char *cpio)
{
	const struct spec_files_entry *e = fl->cur.e;
	char diskmsg[KILN_LIMIT_PATH * 2];
	struct located l;
	struct stat st;
	unsigned char bad;
	kiln_rc rc = KILN_OK;

	snprintf(diskmsg, sizeof(diskmsg), "%s%s", fl->o->buildroot, strcmp(cpio, "/") ? cpio : "");
	if (has_illegal_char(cpio, &bad)) {
		fl_fail(fl, KILN_EINVAL, "Illegal character (0x%x) in filename: %s", bad, diskmsg);
		return KILN_OK;
	}
	if (e->flags & SPEC_ENTRY_DEV) {
		fake_stat(fl, &st);
		return rec_add(fl, cpio, diskmsg, cpio, &st, -1, NULL);
	}
	if (!strcmp(cpio, "/")) {
		l.pfd = openat(fl->rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		l.base = "";
		snprintf(l.disk, sizeof(l.disk), "%s", fl->realroot);
		rc = fstat(fl->rootfd, &st) ? KILN_EIO : KILN_OK;
	} else if (!locate(fl, cpio, &l)) {
		rc = KILN_ENOTFOUND;
	} else if (fstatat(l.pfd, l.base, &st, AT_SYMLINK_NOFOLLOW)) {
		rc = KILN_ENOTFOUND;
	}
	if (!rc)
		rc = add_existing(fl, cpio, diskmsg, &l, &st);
	else if (l.escapes)
		fl_fail(fl, KILN_EPRIV, "Path is outside buildroot: %s (a symlink leaves it)",
		        diskmsg);
	else if (e->fileflags & SPEC_FILE_GHOST) {
		fake_stat(fl, &st);
		rc = rec_add(fl, cpio, diskmsg, cpio, &st, -1, NULL);
	} else {
		not_found(fl, diskmsg);
		rc = KILN_OK;
	}
	util_close(l.pfd);
	return fl->fatal ? fl->fatal : (rc == KILN_ENOTFOUND ? KILN_OK : rc);
}

/* rpm's processBinaryFile(): clean the name, glob it unless %dev, add each match. */
static kiln_rc add_binary(struct fl *fl, const char *path, const char *glob, bool do_glob)
{
	struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct worker_strv matches = {0};
	struct kiln_err e2 = KILN_ERR_INIT;
	size_t len = strlen(path), i;
	kiln_rc rc = KILN_OK;

	if (len > 1 && path[len - 1] == '/' && !fl->cur.isdir)
		fl->cur.isdir = -1;
	if (fl->cur.e->flags & SPEC_ENTRY_DEV)
		do_glob = false;
	if (do_glob && worker_glob_is_magic(glob)) {
		if (!worker_path_clean(glob, true, &clean))
			goto outside;
		rc = worker_glob_in_root(fl->rootfd, clean.ptr, &fl->out->arena, &matches, &e2);
		if (rc == KILN_EPRIV) {
			fl_fail(fl, KILN_EPRIV, "Path is outside buildroot: %s%s (%s)",
			        fl->o->buildroot, path, e2.msg);
			rc = KILN_OK;
			goto out;
		}
		if (rc) {
			rc = fl_fatal(fl, rc, &e2);
			goto out;
		}
	}
	if (!matches.n) {
		if (!worker_path_clean(path, false, &clean))
			goto outside;
		rc = add_path(fl, clean.ptr);
	}
	for (i = 0; !rc && i < matches.n; i++) {
		if (!worker_path_clean(matches.v[i], false, &clean))
			goto outside;
		rc = add_path(fl, clean.ptr);
	}
	goto out;
outside:
	if (clean.err)
		rc = fl_nomem(fl);
	else
		fl_fail(fl, KILN_EPRIV, "Path is outside buildroot: %s%s", fl->o->buildroot, path);
out:
	kiln_buf_release(&clean);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* %lang: locales split at blanks and commas, checked, sorted, de-duplicated, joined "|" */

static const char *lang_join(struct fl *fl, const char *text)
{
	const char *v[64] = {0};
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *p = text, *r;
	size_t n = 0, i;

	while (p && *p && n < KILN_ARRAY_SIZE(v)) {
		size_t len;

		p += strspn(p, " \t,");
		len = strcspn(p, " \t,");
		if (!len)
			break;
		if (len >= 32 || (len == 1 && *p != 'C')) {
			fl_fail(fl, KILN_ESYNTAX, "Unusual locale length: \"%.*s\" in %%lang(%s)",
			        (int)len, p, text);
			return NULL;
		}
		v[n] = kiln_arena_strndup(&fl->out->arena, p, len);
		if (!v[n])
			return fl_nomem(fl), NULL;
		for (i = 0; i < n && strcmp(v[i], v[n]); i++)
			;
		if (i < n)
			fl_warn(fl, "Duplicate locale %s in %%lang(%s)", v[n], text);
		else
			n++;
		p += len;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++) {
		if (i)
			kiln_buf_addch(&out, '|');
		kiln_buf_addstr(&out, v[i]);
	}
	r = out.err ? NULL : arena_str(fl, out.ptr);
	kiln_buf_release(&out);
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Entries (rpm's addPackageFileList) */

struct special {
	const struct spec_files_entry **e; /* heap */
	const char **path;                 /* heap: the glob form of each file */
	size_t n, cap;
};

static kiln_rc special_add(struct fl *fl, struct special *sd, const struct spec_files_entry *e,
                           const char *glob)
{
	if (sd->n == sd->cap) {
		size_t cap = sd->cap ? sd->cap * 2 : 8;
		const struct spec_files_entry **ev = kiln_reallocarray(sd->e, cap, sizeof(*ev));
		const char **pv;

		if (!ev)
			return fl_nomem(fl);
		sd->e = ev;
		pv = kiln_reallocarray(sd->path, cap, sizeof(*pv));
		if (!pv)
			return fl_nomem(fl);
		sd->path = pv;
		sd->cap = cap;
	}
	sd->e[sd->n] = e;
	sd->path[sd->n++] = glob;
	return KILN_OK;
}

static bool cur_set(struct fl *fl, const struct spec_files_entry *e)
{
	fl->cur.e = e;
	fl->cur.isdir = (e->flags & SPEC_ENTRY_DIR) ? 1 : 0;
	fl->cur.lang = lang_join(fl, e->lang);
	return fl->cur.lang != NULL;
}

/* A relative %doc or %license entry: queued for its special directory. */
static kiln_rc entry_special(struct fl *fl, const struct spec_files_entry *e, struct special *doc,
                             struct special *lic)
{
	uint32_t other = e->fileflags & ~(uint32_t)(SPEC_FILE_DOC | SPEC_FILE_LICENSE);
	bool isdoc = (e->fileflags & SPEC_FILE_DOC) != 0;
	bool mixed = other ||
	             (e->flags & (SPEC_ENTRY_DIR | SPEC_ENTRY_DOCDIR | SPEC_ENTRY_EXCLUDE)) ||
	             (isdoc && (e->fileflags & SPEC_FILE_LICENSE));
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < e->npaths; i++) {
		if (mixed || e->paths[i][0] == '/')
			fl_fail(fl, KILN_ESYNTAX, "Can't mix special %s with other forms: %s",
			        isdoc ? "%doc" : "%license", e->paths[i]);
		else
			rc = special_add(fl, isdoc ? doc : lic, e, e->globs[i]);
	}
	return rc;
}

static kiln_rc entry_apply(struct fl *fl, const struct spec_files_entry *e, struct special *doc,
                           struct special *lic)
{
	size_t i;

	if (!cur_set(fl, e))
		return fl->fatal;
	if (e->error) {
		fl_fail(fl, KILN_ESYNTAX, "%s", e->error);
		return KILN_OK;
	}
	if (e->flags & SPEC_ENTRY_SPECIAL)
		return entry_special(fl, e, doc, lic);
	for (i = 1; i < e->npaths; i++)
		fl_fail(fl, KILN_ESYNTAX, "More than one file on a line: %s", e->paths[i]);
	if (!e->npaths)
		return KILN_OK;
	if (e->flags & SPEC_ENTRY_DOCDIR)
		return strv_add(&fl->docdirs, &fl->out->arena, e->paths[0], fl->err);
	return add_binary(fl, e->paths[0], e->globs[0], true);
}

/* ---------------------------------------------------------------------------------------- */
/* Special %doc / %license directories: copy from the build directory, then add */

/* mkdir -p rel beneath rootfd, never following a symlink; returns the directory's fd. */
static kiln_rc mkdir_in_root(struct fl *fl, const char *rel, int *out)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	int fd = openat(fl->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	while (fd >= 0 && *p) {
		size_t n;
		int next;
		bool made;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n >= sizeof(comp) || (n <= 2 && !strncmp(p, "..", n))) {
			util_close(fd);
			return kiln_err_set(fl->err, KILN_EPRIV, "bad directory name in %s", rel);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		made = mkdirat(fd, comp, 0755) == 0;
		if (!made && errno != EEXIST) {
			util_close(fd);
			return kiln_err_sys(fl->err, KILN_EIO, "cannot create %s%s",
			                    fl->o->buildroot, rel);
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* 0755 whatever kiln's umask is: rpm makes doc directories with `mkdir -p` in a
		 * build shell whose umask is 022 (found by --verify-reproducible's umask). */
		if (made && next >= 0 && fchmod(next, 0755)) {
			util_close(next);
			next = -1;
		}
		util_close(fd);
		fd = next;
		p += n;
	}
	if (fd < 0)
		return kiln_err_sys(fl->err, KILN_EPRIV,
		                    "cannot open %s%s without following symlinks", fl->o->buildroot,
		                    rel);
	*out = fd;
	return KILN_OK;
}

static void copy_times(int dfd, const char *name, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};

	(void)utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

static void copy_owner(int dfd, const char *name, const struct stat *st)
{
	/* cp -p keeps the owner when it can; as a user it cannot, which is fine. */
	(void)!fchownat(dfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW);
}

static kiln_rc copy_reg(int sfd, int dfd, const char *name, const struct stat *st,
                        struct kiln_err *err)
{
	char buf[64 * 1024];
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = -1;
	kiln_rc rc = KILN_OK;

	if (in < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open %s", name);
	/* Like cp, write over an existing file in place; never through a symlink. */
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0 && errno == ELOOP && !unlinkat(dfd, name, 0))
		out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", name);
	while (!rc) {
		size_t got = 0;

		rc = util_read_full(in, buf, sizeof(buf), &got, err);
		if (rc || !got)
			break;
		rc = util_write_all(out, buf, got, err);
	}
	if (!rc && fchmod(out, st->st_mode & 07777))
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod %s", name);
	util_close(in);
	util_close(out);
	return rc;
}

static kiln_rc copy_tree(int sfd, int dfd, const char *name, int depth, struct kiln_err *err);

static kiln_rc copy_dir(int sfd, int dfd, const char *name, const struct stat *st, int depth,
                        struct kiln_err *err)
{
	int s = -1, d = -1;
	DIR *dir = NULL;
	struct dirent *de;
	kiln_rc rc = KILN_OK;

	if (depth > FL_MAX_DEPTH)
		return kiln_err_set(err, KILN_ELIMIT, "%s: nested too deep", name);
	if (mkdirat(dfd, name, 0700) && errno != EEXIST)
		return kiln_err_sys(err, KILN_EIO, "cannot create %s", name);
	s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dir = s >= 0 ? fdopendir(s) : NULL;
	if (!dir || d < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open %s", name);
		if (!dir)
			util_close(s);
	}
	while (!rc && (de = readdir(dir))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = copy_tree(dirfd(dir), d, de->d_name, depth + 1, err);
	}
	if (!rc && fchmod(d, st->st_mode & 07777))
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod %s", name);
	if (dir)
		closedir(dir);
	util_close(d);
	return rc;
}

/* cp -pr of one name from sfd into dfd, never following a symlink (a symlink is copied as
 * one), keeping modes and times. */
static kiln_rc copy_tree(int sfd, int dfd, const char *name, int depth, struct kiln_err *err)
{
	char target[KILN_LIMIT_PATH];
	struct stat st;
	kiln_rc rc = KILN_OK;
	ssize_t n;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return kiln_err_sys(err, KILN_ENOTFOUND, "cannot stat %s", name);
	if (S_ISREG(st.st_mode)) {
		rc = copy_reg(sfd, dfd, name, &st, err);
	} else if (S_ISDIR(st.st_mode)) {
		rc = copy_dir(sfd, dfd, name, &st, depth, err);
	} else if (S_ISLNK(st.st_mode)) {
		n = readlinkat(sfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "cannot read link %s", name);
		target[n] = '\0';
		(void)unlinkat(dfd, name, 0);
		if (symlinkat(target, dfd, name))
			rc = kiln_err_sys(err, KILN_EIO, "cannot create link %s", name);
	} else {
		return kiln_err_set(err, KILN_EUNSUPP, "%s: not a file, directory or symlink",
		                    name);
	}
	if (!rc) {
		copy_owner(dfd, name, &st);
		copy_times(dfd, name, &st);
	}
	return rc;
}

/* The special directory's in-package path: %{_docdir}/FMT or %{_licensedir}/FMT, FMT being
 * %_docdir_fmt rendered over the package's tags (rpm: %{NAME}-%{VERSION} when unset). */
static const char *special_dirname(struct fl *fl, bool doc)
{
	struct spec_qf_source src;
	struct kiln_buf fmt = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct kiln_err e2 = KILN_ERR_INIT;
	const char *r = NULL;
	char *m = NULL;

	if (macro_expand_str(fl->o->macros, "%{?_docdir_fmt}", &m, &e2) ||
	    spec_qf_source_make(fl->spec, fl->pkg->tags, &src, &e2))
		goto out;
	if (*m && spec_qf_format(m, &src, &fmt, &e2)) {
		fl_warn(fl, "illegal _docdir_fmt %s: %s", m, e2.msg);
		kiln_buf_reset(&fmt);
	}
	if (!*m || !fmt.len)
		(void)!spec_qf_format("%{NAME}-%{VERSION}", &src, &fmt, &e2);
	free(m);
	m = NULL;
	kiln_buf_addstr(&path, doc ? "%{_docdir}/" : "%{_licensedir}/");
	kiln_buf_add(&path, fmt.ptr, fmt.len);
	if (kiln_buf_finish(&path, &e2) || macro_expand_str(fl->o->macros, path.ptr, &m, &e2))
		goto out;
	kiln_buf_reset(&path);
	if (worker_path_clean(m, false, &path))
		r = arena_str(fl, path.ptr);
out:
	if (!r && !fl->fatal)
		fl_fail(fl, e2.code ? e2.code : KILN_EPRIV, "%s: cannot make the %s directory: %s",
		        fl->pkg->name, doc ? "%doc" : "%license", e2.msg);
	free(m);
	kiln_buf_release(&fmt);
	kiln_buf_release(&path);
	return r;
}

/* Copy the matches of one special entry's glob into the directory (failures are ignored,
 * like rpm's "cp -pr ... ||:"; the missing file is reported when it is added). */
static kiln_rc special_copy(struct fl *fl, int bfd, int dfd, const char *glob,
                            struct worker_strv *names)
{
	struct worker_strv m = {0};
	struct kiln_err e2 = KILN_ERR_INIT;
	struct kiln_buf abs = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	size_t i;
	kiln_rc rc = KILN_OK;

	kiln_buf_addch(&abs, '/');
	kiln_buf_addstr(&abs, glob);
	if (worker_glob_is_magic(glob) &&
	    worker_glob_in_root(bfd, abs.ptr, &fl->out->arena, &m, &e2) == KILN_ENOMEM)
		rc = fl_nomem(fl);
	if (!rc && !m.n) {
		kiln_buf_reset(&abs);
		unescape(glob, strlen(glob), &abs);
		rc = strv_add(&m, &fl->out->arena, arena_str(fl, abs.ptr), fl->err);
	}
	for (i = 0; !rc && i < m.n; i++) {
		const char *base = util_path_basename(m.v[i]);
		struct kiln_buf rel = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
		int sfd = -1;

		util_path_dirname(m.v[i][0] == '/' ? m.v[i] + 1 : m.v[i], &rel);
		e2 = (struct kiln_err)KILN_ERR_INIT;
		if (!util_path_open_in_root(bfd, rel.ptr, O_RDONLY | O_DIRECTORY, 0, 0, &sfd, &e2))
			(void)copy_tree(sfd, dfd, base, 0, &e2);
		util_close(sfd);
		kiln_buf_release(&rel);
		rc = strv_add(names, &fl->out->arena, base, fl->err);
	}
	kiln_buf_release(&abs);
	return rc;
}

static kiln_rc special_dir(struct fl *fl, struct special *sd, bool doc)
{
	const char *dirname = special_dirname(fl, doc);
	int bfd = -1, dfd = -1;
	size_t i, j;
	kiln_rc rc;

	if (!dirname)
		return fl->fatal;
	bfd = open(fl->o->builddir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return kiln_err_sys(fl->err, KILN_EIO, "cannot open the build directory %s",
		                    fl->o->builddir);
	rc = mkdir_in_root(fl, dirname + 1, &dfd);
	for (i = 0; !rc && i < sd->n; i++) {
		struct worker_strv names = {0};

		rc = special_copy(fl, bfd, dfd, sd->path[i], &names);
		if (rc || !cur_set(fl, sd->e[i]))
			break;
		for (j = 0; !rc && j < names.n; j++) {
			char *p = kiln_arena_printf(&fl->out->arena, "%s/%s", dirname, names.v[j]);

			rc = p ? add_binary(fl, p, p, false) : fl_nomem(fl);
		}
	}
	util_close(bfd);
	util_close(dfd);
	if (rc || !cur_set(fl, sd->e[0]))
		return rc ? rc : fl->fatal;
	fl->cur.isdir = 1;
	return add_binary(fl, dirname, dirname, true);
}

/* ---------------------------------------------------------------------------------------- */
/* Finishing: sort, merge duplicates, drop excludes, fill pack_file (genCpioListAndHeader) */

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = strcmp(x->cpio, y->cpio);

	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

/* Merge r into next (the later entry for the same path), as rpm does. */
static void merge_dup(struct fl *fl, const struct rec *r, struct rec *next, bool fatal)
{
	next->flags |= r->flags;
	if (!(next->flags & FL_EXCLUDE)) {
		if (fatal)
			fl_fail(fl, KILN_EEXIST, "File listed twice: %s", r->cpio);
		else
			fl_warn(fl, "File listed twice: %s", r->cpio);
	}
	if (next->wattr < r->wattr) {
		next->mode = r->mode;
		next->user = r->user;
		next->group = r->group;
	}
	if (next->wverify < r->wverify)
		next->verify = r->verify;
}

static bool is_docfile(const struct fl *fl, const char *path)
{
	size_t k = strlen(path), i;

	for (i = 0; i < fl->docdirs.n; i++) {
		size_t l = strlen(fl->docdirs.v[i]);

		if (l && l < k && !strncmp(path, fl->docdirs.v[i], l) && path[l] == '/')
			return true;
	}
	return false;
}

static kiln_rc docdirs_init(struct fl *fl)
{
	char *v = NULL, *p, *q;
	kiln_rc rc = macro_expand_str(fl->o->macros, "%{?__docdir_path}", &v, fl->err);

	for (p = v; !rc && p && *p; p = q) {
		q = p + strcspn(p, ":");
		if (*q)
			*q++ = '\0';
		if (*p)
			rc = strv_add(&fl->docdirs, &fl->out->arena, arena_str(fl, p), fl->err);
	}
	free(v);
	return rc ? fl_fatal(fl, rc, NULL) : KILN_OK;
}

static void remove_postfixes(struct fl *fl, struct rec *r)
{
	size_t i;

	for (i = 0; i < fl->pkg->nremove_postfixes; i++) {
		const char *pf = fl->pkg->remove_postfixes[i];
		size_t len = strlen(pf), plen = strlen(r->cpio);
		char *c;

		if (len > plen || strcmp(r->cpio + plen - len, pf))
			continue;
		c = kiln_arena_strndup(&fl->out->arena, r->cpio, plen - len);
		if (!c) {
			fl_nomem(fl);
			return;
		}
		if (plen > len && c[plen - len - 1] == '/')
			c[plen - len - 1] = '\0';
		r->cpio = c;
	}
}

static uint32_t rec_hardlink(const struct fl *fl, size_t i)
{
	const struct rec *r = &fl->recs[i];
	size_t j;

	if (!S_ISREG(r->mode) || r->st.st_nlink < 2 || (r->flags & (SPEC_FILE_GHOST | FL_EXCLUDE)))
		return 0;
	for (j = 0; j < fl->nrecs; j++) {
		const struct rec *o = &fl->recs[j];

		if (S_ISREG(o->mode) && !(o->flags & (SPEC_FILE_GHOST | FL_EXCLUDE)) && o->cpio &&
		    o->st.st_ino == r->st.st_ino && o->st.st_dev == r->st.st_dev)
			return (uint32_t)j + 1;
	}
	return 0;
}

static kiln_rc rec_to_file(struct fl *fl, size_t i, struct pack_file *f)
{
	struct rec *r = &fl->recs[i];
	uint32_t mtime = (uint32_t)r->st.st_mtime;

	if (fl->o->clamp_mtime && mtime > fl->o->clamp_to)
		mtime = fl->o->clamp_to;
	if (is_docfile(fl, r->cpio))
		r->flags |= SPEC_FILE_DOC;
	if (S_ISDIR(r->mode))
		r->flags &= ~(uint32_t)(SPEC_FILE_CONFIG | SPEC_FILE_DOC | SPEC_FILE_LICENSE);
	if (r->flags & SPEC_FILE_GHOST)
		r->verify &= ~(uint32_t)(SPEC_VERIFY_FILEDIGEST | SPEC_VERIFY_FILESIZE |
		                         SPEC_VERIFY_LINKTO | SPEC_VERIFY_MTIME);
	memset(f, 0, sizeof(*f));
	f->path = r->cpio;
	f->src = S_ISREG(r->mode) && !(r->flags & SPEC_FILE_GHOST) ? r->disk : NULL;
	f->mode = r->mode;
	f->user = r->user;
	f->group = r->group;
	f->mtime = mtime;
	f->flags = r->flags & 0xffff;
	f->verify = r->verify;
	f->lang = r->lang;
	f->caps = *r->caps ? r->caps : NULL;
	f->link = r->link;
	f->rdev = (uint32_t)r->st.st_rdev;
	f->size = S_ISDIR(r->mode) ? 0 : (uint64_t)r->st.st_size;
	f->hardlink = rec_hardlink(fl, i);
	fl->out->disk[fl->out->n] = r->disk;
	return KILN_OK;
}

static kiln_rc finish(struct fl *fl)
{
	bool dup_fatal = macro_num(fl->o->macros, "_duplicate_files_terminate_build", 0) > 0;
	struct worker_filelist *out = fl->out;
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; i < fl->nrecs; i++)
		remove_postfixes(fl, &fl->recs[i]);
	if (fl->nrecs)
		qsort(fl->recs, fl->nrecs, sizeof(*fl->recs), cmp_rec);
	for (i = 0; i + 1 < fl->nrecs; i++) {
		if (!strcmp(fl->recs[i].cpio, fl->recs[i + 1].cpio)) {
			merge_dup(fl, &fl->recs[i], &fl->recs[i + 1], dup_fatal);
			fl->recs[i].flags |= FL_EXCLUDE;
			fl->recs[i].cpio = NULL; /* merged away */
		}
	}
	out->files = kiln_arena_array(&out->arena, fl->nrecs ? fl->nrecs : 1, sizeof(*out->files));
	out->disk = kiln_arena_array(&out->arena, fl->nrecs ? fl->nrecs : 1, sizeof(*out->disk));
	if (!out->files || !out->disk)
		return fl_nomem(fl);
	out->cap = fl->nrecs;
	for (i = 0; !rc && i < fl->nrecs; i++) {
		if (fl->recs[i].cpio && !(fl->recs[i].flags & FL_EXCLUDE)) {
			rc = rec_to_file(fl, i, &out->files[out->n]);
			out->n++;
		}
	}
	if (!rc && !fl->o->defer_classify)
		rc = worker_filelist_classify(out, fl->o->rpmformat, fl->err);
	return rc;
}

static void claimed_sort(struct worker_filelist *out)
{
	size_t i, j = 0;

	if (out->nclaimed)
		qsort(out->claimed, out->nclaimed, sizeof(*out->claimed), cmp_str);
	for (i = 0; i < out->nclaimed; i++) {
		if (!j || strcmp(out->claimed[j - 1], out->claimed[i]))
			out->claimed[j++] = out->claimed[i];
	}
	out->nclaimed = j;
}

/* ---------------------------------------------------------------------------------------- */
/* %files -f lists */

/* name is a path inside the sandbox's top directory. */
static bool sandbox_path(const struct worker_filelist_opts *o, const char *name)
{
	size_t n = o->sandbox_top && o->topdir ? strlen(o->sandbox_top) : 0;

	return n && !strncmp(name, o->sandbox_top, n) && name[n] == '/';
}

static kiln_rc read_lists(struct fl *fl)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < fl->pkg->nfile_lists; i++) {
		const char *name = fl->pkg->file_lists[i];

		kiln_buf_reset(&text);
		kiln_buf_reset(&path);
		if (name[0] != '/')
			kiln_buf_addf(&path, "%s/", fl->o->builddir);
		else if (sandbox_path(fl->o, name)) {
			kiln_buf_addstr(&path, fl->o->topdir);
			name += strlen(fl->o->sandbox_top);
		}
		kiln_buf_addstr(&path, name);
		rc = kiln_buf_finish(&path, fl->err);
		if (!rc && util_read_file(path.ptr, KILN_LIMIT_TEXT_FILE, &text, fl->err)) {
			kiln_err_clear(fl->err);
			rc = kiln_err_sys(fl->err, KILN_ENOTFOUND, "Could not open %%files file %s",
			                  path.ptr);
		}
		if (!rc)
			rc = spec_files_add_text(fl->spec, fl->pkg, path.ptr, text.ptr, text.len,
			                         fl->err);
	}
	kiln_buf_release(&text);
	kiln_buf_release(&path);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The collector */

static kiln_rc fl_open(struct fl *fl)
{
	char *real;

	fl->rootfd = open(fl->o->buildroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fl->rootfd < 0)
		return kiln_err_sys(fl->err, KILN_ENOTFOUND, "cannot open the buildroot %s",
		                    fl->o->buildroot);
	real = realpath(fl->o->buildroot, NULL);
	if (!real)
		return kiln_err_sys(fl->err, KILN_EIO, "cannot resolve the buildroot %s",
		                    fl->o->buildroot);
	fl->realroot = real;
	fl->realrootlen = strcmp(real, "/") ? strlen(real) : 0;
	fl->now = fl->o->now ? fl->o->now : (uint32_t)util_clock_wall();
	return docdirs_init(fl);
}

static kiln_rc walk_entries(struct fl *fl)
{
	struct special doc = {0}, lic = {0};
	kiln_rc rc = KILN_OK;
	size_t i;

	/* The -f lists add entries, so the array may move: index it afresh each time. */
	for (i = 0; !rc && i < fl->pkg->nfiles; i++)
		rc = entry_apply(fl, &fl->pkg->files[i], &doc, &lic);
	if (!rc && doc.n)
		rc = special_dir(fl, &doc, true);
	if (!rc && lic.n)
		rc = special_dir(fl, &lic, false);
	free(doc.e);
	free(doc.path);
	free(lic.e);
	free(lic.path);
	return rc;
}

kiln_rc worker_filelist_collect(struct worker_filelist *out, struct spec *spec,
                                struct spec_package *pkg, const struct worker_filelist_opts *o,
                                struct kiln_err *err)
{
	struct fl fl;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	kiln_arena_init(&out->arena, KILN_LIMIT_ARENA);
	memset(&fl, 0, sizeof(fl));
	fl.o = o;
	fl.spec = spec;
	fl.pkg = pkg;
	fl.out = out;
	fl.err = err;
	rc = read_lists(&fl);
	if (!rc)
		rc = fl_open(&fl);
	if (!rc)
		rc = walk_entries(&fl);
	if (!rc && !fl.failed)
		rc = finish(&fl);
	if (!rc)
		claimed_sort(out);
	if (!rc && fl.failed)
		rc = err->code ? err->code : KILN_EBUILD;
	util_close(fl.rootfd);
	free(fl.realroot);
	free(fl.recs);
	return rc;
}

void worker_filelist_release(struct worker_filelist *fl)
{
	if (!fl)
		return;
	free(fl->claimed);
	kiln_arena_release(&fl->arena);
	memset(fl, 0, sizeof(*fl));
}

/* ---------------------------------------------------------------------------------------- */
/* Unpackaged files */

struct unpk {
	const struct worker_filelist *const *lists;
	size_t n;
	struct kiln_buf *report;
	size_t found;
	struct kiln_err *err;
};

static bool is_claimed(const struct unpk *u, const char *path)
{
	size_t i;

	for (i = 0; i < u->n; i++) {
		const struct worker_filelist *l = u->lists[i];

		if (l->nclaimed &&
		    bsearch(&path, l->claimed, l->nclaimed, sizeof(*l->claimed), cmp_str))
			return true;
	}
	return false;
}

static kiln_rc unpk_walk(struct unpk *u, int dfd, struct kiln_buf *path, int depth)
{
	struct worker_strv names = {0};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct dirent *de;
	kiln_rc rc = KILN_OK;
	size_t keep = path->len, i;
	DIR *d = fdopendir(dfd);

	if (!d) {
		util_close(dfd);
		return kiln_err_sys(u->err, KILN_EIO, "cannot read %s", path->ptr);
	}
	while (!rc && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = strv_add(&names, &a, kiln_arena_strdup(&a, de->d_name), u->err);
	}
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	for (i = 0; !rc && i < names.n; i++) {
		struct stat st;

		kiln_buf_addch(path, '/');
		kiln_buf_addstr(path, names.v[i]);
		if (depth > FL_MAX_DEPTH || path->err)
			rc = kiln_err_set(u->err, KILN_ELIMIT, "%s: too deep", path->ptr);
		else if (fstatat(dirfd(d), names.v[i], &st, AT_SYMLINK_NOFOLLOW))
			rc = kiln_err_sys(u->err, KILN_EIO, "cannot stat %s", path->ptr);
		else if (S_ISDIR(st.st_mode))
			rc = unpk_walk(u,
			               openat(dirfd(d), names.v[i],
			                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
			               path, depth + 1);
		else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
		         !is_claimed(u, path->ptr)) {
			kiln_buf_addf(u->report, "   %s\n", path->ptr);
			u->found++;
		}
		kiln_buf_truncate(path, keep);
	}
	closedir(d);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc worker_filelist_check_unpackaged(const char *buildroot,
                                         const struct worker_filelist *const *lists, size_t n,
                                         struct macro_ctx *macros, struct kiln_buf *report,
                                         struct kiln_err *err)
{
	struct kiln_buf own = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct unpk u = {.lists = lists, .n = n, .report = report ? report : &own, .err = err};
	size_t start = u.report->len;
	char *chk = NULL;
	kiln_rc rc = KILN_OK;
	int fd;

	if (macro_is_defined(macros, "__check_files") &&
	    !macro_expand_str(macros, "%{__check_files}", &chk, NULL) && !*chk) {
		free(chk);
		return KILN_OK;
	}
	free(chk);
	fd = open(buildroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		rc = kiln_err_sys(err, KILN_ENOTFOUND, "cannot open the buildroot %s", buildroot);
	kiln_buf_addstr(u.report, "Installed (but unpackaged) file(s) found:\n");
	if (!rc)
		rc = unpk_walk(&u, fd, &path, 0);
	if (!rc && u.found && macro_num(macros, "_unpackaged_files_terminate_build", 1))
		rc = kiln_err_set(err, KILN_EBUILD, "%s", u.report->ptr + start);
	else if (!rc && u.found)
		macro_diag(macros, KILN_LOG_WARN, "%s", u.report->ptr + start);
	if (!u.found || rc == KILN_EIO || rc == KILN_ENOTFOUND)
		kiln_buf_truncate(u.report, start);
	kiln_buf_release(&own);
	kiln_buf_release(&path);
	return rc;
}
