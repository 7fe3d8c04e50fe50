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
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Messages */

static const char *entry_file(const struct fl *fl, const struct spec_files_entry *e)
{
	return e && e->file ? e->file : fl->spec->path;
}

/* A per-file error: the first one is returned, later ones are logged, collection goes on
 * (rpmbuild reports them all). */
void worker_fl_fail(struct fl *fl, kiln_rc rc, const char *fmt, ...)
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

void worker_fl_warn(struct fl *fl, const char *fmt, ...)
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

kiln_rc worker_fl_nomem(struct fl *fl)
{
	fl->fatal = KILN_ENOMEM;
	return kiln_err_set(fl->err, KILN_ENOMEM, "out of memory");
}

/* Macro value as a number, with a default when undefined or empty (rpmExpandNumeric). */
long worker_fl_macro_num(struct macro_ctx *m, const char *name, long dflt)
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
/* Records (addFile) */

const char *worker_fl_arena_str(struct fl *fl, const char *s)
{
	const char *r = kiln_arena_strdup(&fl->out->arena, s);

	if (!r)
		worker_fl_nomem(fl);
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
			return worker_fl_arena_str(fl, g->gr_name);
		snprintf(buf, sizeof(buf), "%u", (unsigned)st->st_gid);
	} else {
		struct passwd *p = getpwuid(st->st_uid);

		if (p)
			return worker_fl_arena_str(fl, p->pw_name);
		snprintf(buf, sizeof(buf), "%u", (unsigned)st->st_uid);
	}
	return worker_fl_arena_str(fl, buf);
}

/* rpm's mode rules: an explicit %attr mode wins (not for symlinks), else %defattr's
 * dirmode for directories and mode for other non-symlinks. */
static uint32_t rec_mode(struct fl *fl, const struct spec_files_entry *e, uint32_t mode,
                         const char *disk)
{
	uint32_t type = mode & S_IFMT;

	if (e->attr.set & SPEC_ATTR_MODE) {
		if (S_ISLNK(mode))
			worker_fl_warn(fl, "Explicit %%attr() mode not applicable to symlink: %s",
			               disk);
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
			return worker_fl_nomem(fl);
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
			worker_fl_nomem(fl);
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
		worker_fl_fail(fl, KILN_EIO, "reading symlink %s%s failed: %s", fl->o->buildroot,
		               cpio, strerror(errno));
		return "";
	}
	buf[n] = '\0';
	if (buf[0] == '/')
		worker_fl_warn(fl, "absolute symlink: %s -> %s", cpio, buf);
	if (buf[0] == '/' && brl > 1 && !strncmp(buf, fl->o->buildroot, brl))
		worker_fl_fail(fl, KILN_EINVAL, "Symlink points to BuildRoot: %s -> %s", cpio, buf);
	return worker_fl_arena_str(fl, buf);
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
	r->cpio = worker_fl_arena_str(fl, cpio);
	r->disk = worker_fl_arena_str(fl, disk);
	r->drel = worker_fl_arena_str(fl, drel);
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
		worker_fl_fail(fl, KILN_EIO, "Can't read content of file: %s/%s", disk->ptr, name);
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
			worker_fl_fail(fl, KILN_EIO, "Can't read content of file: %s", disk->ptr);
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
		return worker_fl_nomem(fl);
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
	if (util_path_open_beneath(fl->rootfd, plen ? parent + 1 : ".", O_PATH | O_DIRECTORY, 0, 0,
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

	if ((e->fileflags & RPMTAG_FILE_DOC) &&
	    !worker_fl_macro_num(fl->o->macros, "_missing_doc_files_terminate_build", 0))
		ignore = true;
	if (ignore)
		worker_fl_warn(fl, "%s: %s", what, diskmsg);
	else
		worker_fl_fail(fl, KILN_ENOTFOUND, "%s: %s", what, diskmsg);
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
		worker_fl_fail(fl, KILN_EINVAL, "Not a directory: %s", diskmsg);
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
		worker_fl_fail(fl, KILN_EIO, "Can't read content of file: %s", diskmsg);
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
		worker_fl_fail(fl, KILN_EINVAL, "Illegal character (0x%x) in filename: %s", bad,
		               diskmsg);
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
		worker_fl_fail(fl, KILN_EPRIV,
		               "Path is outside buildroot: %s (a symlink leaves it)", diskmsg);
	else if (e->fileflags & RPMTAG_FILE_GHOST) {
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
kiln_rc worker_fl_add_binary(struct fl *fl, const char *path, const char *glob, bool do_glob)
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
			worker_fl_fail(fl, KILN_EPRIV, "Path is outside buildroot: %s%s (%s)",
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
		rc = worker_fl_nomem(fl);
	else
		worker_fl_fail(fl, KILN_EPRIV, "Path is outside buildroot: %s%s", fl->o->buildroot,
		               path);
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
			worker_fl_fail(fl, KILN_ESYNTAX,
			               "Unusual locale length: \"%.*s\" in %%lang(%s)", (int)len, p,
			               text);
			return NULL;
		}
		v[n] = kiln_arena_strndup(&fl->out->arena, p, len);
		if (!v[n])
			return worker_fl_nomem(fl), NULL;
		for (i = 0; i < n && strcmp(v[i], v[n]); i++)
			;
		if (i < n)
			worker_fl_warn(fl, "Duplicate locale %s in %%lang(%s)", v[n], text);
		else
			n++;
		p += len;
	}
	if (n)
		qsort(v, n, sizeof(*v), worker_str_cmp);
	for (i = 0; i < n; i++) {
		if (i)
			kiln_buf_addch(&out, '|');
		kiln_buf_addstr(&out, v[i]);
	}
	r = out.err ? NULL : worker_fl_arena_str(fl, out.ptr);
	kiln_buf_release(&out);
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Entries (rpm's addPackageFileList) */

static kiln_rc special_add(struct fl *fl, struct special *sd, const struct spec_files_entry *e,
                           const char *glob)
{
	if (sd->n == sd->cap) {
		size_t cap = sd->cap ? sd->cap * 2 : 8;
		const struct spec_files_entry **ev = kiln_reallocarray(sd->e, cap, sizeof(*ev));
		const char **pv;

		if (!ev)
			return worker_fl_nomem(fl);
		sd->e = ev;
		pv = kiln_reallocarray(sd->path, cap, sizeof(*pv));
		if (!pv)
			return worker_fl_nomem(fl);
		sd->path = pv;
		sd->cap = cap;
	}
	sd->e[sd->n] = e;
	sd->path[sd->n++] = glob;
	return KILN_OK;
}

bool worker_fl_cur_set(struct fl *fl, const struct spec_files_entry *e)
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
	uint32_t other = e->fileflags & ~(uint32_t)(RPMTAG_FILE_DOC | RPMTAG_FILE_LICENSE);
	bool isdoc = (e->fileflags & RPMTAG_FILE_DOC) != 0;
	bool mixed = other ||
	             (e->flags & (SPEC_ENTRY_DIR | SPEC_ENTRY_DOCDIR | SPEC_ENTRY_EXCLUDE)) ||
	             (isdoc && (e->fileflags & RPMTAG_FILE_LICENSE));
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < e->npaths; i++) {
		if (mixed || e->paths[i][0] == '/')
			worker_fl_fail(fl, KILN_ESYNTAX,
			               "Can't mix special %s with other forms: %s",
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

	if (!worker_fl_cur_set(fl, e))
		return fl->fatal;
	if (e->error) {
		worker_fl_fail(fl, KILN_ESYNTAX, "%s", e->error);
		return KILN_OK;
	}
	if (e->flags & SPEC_ENTRY_SPECIAL)
		return entry_special(fl, e, doc, lic);
	for (i = 1; i < e->npaths; i++)
		worker_fl_fail(fl, KILN_ESYNTAX, "More than one file on a line: %s", e->paths[i]);
	if (!e->npaths)
		return KILN_OK;
	if (e->flags & SPEC_ENTRY_DOCDIR)
		return worker_strv_add(&fl->docdirs, &fl->out->arena, e->paths[0], fl->err);
	return worker_fl_add_binary(fl, e->paths[0], e->globs[0], true);
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
			worker_fl_fail(fl, KILN_EEXIST, "File listed twice: %s", r->cpio);
		else
			worker_fl_warn(fl, "File listed twice: %s", r->cpio);
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
			rc = worker_strv_add(&fl->docdirs, &fl->out->arena,
			                     worker_fl_arena_str(fl, p), fl->err);
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
			worker_fl_nomem(fl);
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

	if (!S_ISREG(r->mode) || r->st.st_nlink < 2 ||
	    (r->flags & (RPMTAG_FILE_GHOST | FL_EXCLUDE)))
		return 0;
	for (j = 0; j < fl->nrecs; j++) {
		const struct rec *o = &fl->recs[j];

		if (S_ISREG(o->mode) && !(o->flags & (RPMTAG_FILE_GHOST | FL_EXCLUDE)) && o->cpio &&
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
		r->flags |= RPMTAG_FILE_DOC;
	if (S_ISDIR(r->mode))
		r->flags &= ~(uint32_t)(RPMTAG_FILE_CONFIG | RPMTAG_FILE_DOC | RPMTAG_FILE_LICENSE);
	if (r->flags & RPMTAG_FILE_GHOST)
		r->verify &= ~(uint32_t)(RPMTAG_VERIFY_FILEDIGEST | RPMTAG_VERIFY_FILESIZE |
		                         RPMTAG_VERIFY_LINKTO | RPMTAG_VERIFY_MTIME);
	memset(f, 0, sizeof(*f));
	f->path = r->cpio;
	f->src = S_ISREG(r->mode) && !(r->flags & RPMTAG_FILE_GHOST) ? r->disk : NULL;
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
	bool dup_fatal =
	    worker_fl_macro_num(fl->o->macros, "_duplicate_files_terminate_build", 0) > 0;
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
	out->root = kiln_arena_strdup(&out->arena, fl->realroot);
	out->disk = kiln_arena_array(&out->arena, fl->nrecs ? fl->nrecs : 1, sizeof(*out->disk));
	if (!out->files || !out->disk)
		return worker_fl_nomem(fl);
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
		qsort(out->claimed, out->nclaimed, sizeof(*out->claimed), worker_str_cmp);
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
		rc = worker_fl_special_dir(fl, &doc, true);
	if (!rc && lic.n)
		rc = worker_fl_special_dir(fl, &lic, false);
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
		rc = worker_fl_build_ids(&fl);
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
