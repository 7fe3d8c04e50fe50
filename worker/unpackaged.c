/*
 * unpackaged.c - rpm's check for unpackaged files: every file of the buildroot that no
 * package's %files claimed.
 */
#include "util/util.h"

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
		    bsearch(&path, l->claimed, l->nclaimed, sizeof(*l->claimed), worker_str_cmp))
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
			rc = worker_strv_add(&names, &a, kiln_arena_strdup(&a, de->d_name), u->err);
	}
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), worker_str_cmp);
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
	if (!rc && u.found && worker_fl_macro_num(macros, "_unpackaged_files_terminate_build", 1))
		rc = kiln_err_set(err, KILN_EBUILD, "%s", u.report->ptr + start);
	else if (!rc && u.found)
		macro_diag(macros, KILN_LOG_WARN, "%s", u.report->ptr + start);
	if (!u.found || rc == KILN_EIO || rc == KILN_ENOTFOUND)
		kiln_buf_truncate(u.report, start);
	kiln_buf_release(&own);
	kiln_buf_release(&path);
	return rc;
}
