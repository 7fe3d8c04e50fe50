/*
 * filedoc.c - rpm's special %doc and %license directories: the files named relative to the
 * build directory are copied into the buildroot's doc/license directory, then added.
 */
#include "util/util.h"

#include <grp.h>
#include <pwd.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "worker/worker.h"
#include "worker/filelist_int.h"

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
	struct rpmtag_qf_source src;
	struct kiln_buf fmt = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
	struct kiln_err e2 = KILN_ERR_INIT;
	const char *r = NULL;
	char *m = NULL;

	if (macro_expand_str(fl->o->macros, "%{?_docdir_fmt}", &m, &e2) ||
	    spec_qf_source_make(fl->spec, fl->pkg->tags, &src, &e2))
		goto out;
	if (*m && rpmtag_qf_format(m, &src, &fmt, &e2)) {
		worker_fl_warn(fl, "illegal _docdir_fmt %s: %s", m, e2.msg);
		kiln_buf_reset(&fmt);
	}
	if (!*m || !fmt.len)
		(void)!rpmtag_qf_format("%{NAME}-%{VERSION}", &src, &fmt, &e2);
	free(m);
	m = NULL;
	kiln_buf_addstr(&path, doc ? "%{_docdir}/" : "%{_licensedir}/");
	kiln_buf_add(&path, fmt.ptr, fmt.len);
	if (kiln_buf_finish(&path, &e2) || macro_expand_str(fl->o->macros, path.ptr, &m, &e2))
		goto out;
	kiln_buf_reset(&path);
	if (worker_path_clean(m, false, &path))
		r = worker_fl_arena_str(fl, path.ptr);
out:
	if (!r && !fl->fatal)
		worker_fl_fail(fl, e2.code ? e2.code : KILN_EPRIV,
		               "%s: cannot make the %s directory: %s", fl->pkg->name,
		               doc ? "%doc" : "%license", e2.msg);
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
		rc = worker_fl_nomem(fl);
	if (!rc && !m.n) {
		kiln_buf_reset(&abs);
		worker_fl_unescape(glob, strlen(glob), &abs);
		rc =
		    worker_strv_add(&m, &fl->out->arena, worker_fl_arena_str(fl, abs.ptr), fl->err);
	}
	for (i = 0; !rc && i < m.n; i++) {
		const char *base = util_path_basename(m.v[i]);
		struct kiln_buf rel = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);
		int sfd = -1;

		util_path_dirname(m.v[i][0] == '/' ? m.v[i] + 1 : m.v[i], &rel);
		e2 = (struct kiln_err)KILN_ERR_INIT;
		if (!util_path_open_beneath(bfd, rel.ptr, O_RDONLY | O_DIRECTORY, 0, 0, &sfd, &e2))
			(void)copy_tree(sfd, dfd, base, 0, &e2);
		util_close(sfd);
		kiln_buf_release(&rel);
		rc = worker_strv_add(names, &fl->out->arena, base, fl->err);
	}
	kiln_buf_release(&abs);
	return rc;
}

kiln_rc worker_fl_special_dir(struct fl *fl, struct special *sd, bool doc)
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
		if (rc || !worker_fl_cur_set(fl, sd->e[i]))
			break;
		for (j = 0; !rc && j < names.n; j++) {
			char *p = kiln_arena_printf(&fl->out->arena, "%s/%s", dirname, names.v[j]);

			rc = p ? worker_fl_add_binary(fl, p, p, false) : worker_fl_nomem(fl);
		}
	}
	util_close(bfd);
	util_close(dfd);
	if (rc || !worker_fl_cur_set(fl, sd->e[0]))
		return rc ? rc : fl->fatal;
	fl->cur.isdir = 1;
	return worker_fl_add_binary(fl, dirname, dirname, true);
}
