/*
 * path.c - lexical path normalisation and opening files beneath a root without escaping it.
 */
#include "util/util.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Append one component to out, handling "." and ".."; floor is the length of out that ".."
 * may not go below (after a leading "/", or 0 for relative paths). */
static kiln_rc path_push(struct kiln_buf *out, size_t floor, bool absolute, const char *comp,
                         size_t len, struct kiln_err *err)
{
	char *slash;

	if (!len || (len == 1 && comp[0] == '.'))
		return KILN_OK;
	if (len == 2 && comp[0] == '.' && comp[1] == '.') {
		if (out->len == floor) {
			if (absolute)
				return KILN_OK; /* "/.." is "/" */
			return kiln_err_set(err, KILN_EPRIV, "path climbs out with '..'");
		}
		slash = memrchr(out->ptr + floor, '/', out->len - floor);
		kiln_buf_truncate(out, slash ? (size_t)(slash - out->ptr) : floor);
		return KILN_OK;
	}
	if (out->len > floor || (floor && out->ptr[floor - 1] != '/'))
		kiln_buf_addch(out, '/');
	kiln_buf_add(out, comp, len);
	return KILN_OK;
}

static kiln_rc path_normalize_onto(const char *path, struct kiln_buf *out, size_t floor,
                                   bool absolute, struct kiln_err *err)
{
	const char *p = path;
	kiln_rc rc;

	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);

		rc = path_push(out, floor, absolute, p, len, err);
		if (rc)
			return rc;
		p += len;
		while (*p == '/')
			p++;
	}
	return kiln_buf_finish(out, err);
}

kiln_rc util_path_normalize(const char *path, struct kiln_buf *out, struct kiln_err *err)
{
	bool absolute = path[0] == '/';
	size_t start = out->len;
	kiln_rc rc;

	if (absolute)
		kiln_buf_addch(out, '/');
	rc = path_normalize_onto(path, out, out->len, absolute, err);
	if (rc) {
		kiln_err_wrap(err, "cannot normalise '%s'", path);
		return rc;
	}
	if (out->len == start)
		kiln_buf_addch(out, '.');
	return kiln_buf_finish(out, err);
}

kiln_rc util_path_join(const char *base, const char *rel, struct kiln_buf *out,
                       struct kiln_err *err)
{
	size_t floor;
	kiln_rc rc;

	if (rel[0] == '/')
		return kiln_err_set(err, KILN_EPRIV, "'%s' is absolute, expected a relative path",
		                    rel);
	rc = util_path_normalize(base, out, err);
	if (rc)
		return rc;
	if (out->len == 1 && out->ptr[0] == '.')
		kiln_buf_truncate(out, 0);
	floor = out->len;
	rc = path_normalize_onto(rel, out, floor, false, err);
	if (rc) {
		kiln_err_wrap(err, "cannot join '%s' and '%s'", base, rel);
		return rc;
	}
	if (!out->len)
		kiln_buf_addch(out, '.');
	return kiln_buf_finish(out, err);
}

kiln_rc util_path_check_relative(const char *name, size_t len, struct kiln_buf *out,
                                 struct kiln_err *err)
{
	size_t i = 0;
	size_t start = out->len;

	if (memchr(name, '\0', len))
		return kiln_err_set(err, KILN_EPRIV, "name contains a NUL byte");
	while (i + 1 < len && name[i] == '.' && name[i + 1] == '/')
		i += 2;
	if (i < len && name[i] == '/')
		return kiln_err_set(err, KILN_EPRIV, "name '%.*s' is absolute", (int)len, name);
	while (i < len) {
		size_t j = i;

		while (j < len && name[j] != '/')
			j++;
		if (j - i == 2 && name[i] == '.' && name[i + 1] == '.')
			return kiln_err_set(err, KILN_EPRIV, "name '%.*s' contains '..'", (int)len,
			                    name);
		if (j - i && !(j - i == 1 && name[i] == '.')) {
			if (out->len > start)
				kiln_buf_addch(out, '/');
			kiln_buf_add(out, name + i, j - i);
		}
		i = j + 1;
	}
	if (out->len == start)
		return kiln_err_set(err, KILN_EPRIV, "empty name");
	return kiln_buf_finish(out, err);
}

kiln_rc util_path_open_beneath(int rootfd, const char *rel, int oflags, mode_t mode, unsigned flags,
                               int *fd, struct kiln_err *err)
{
	struct open_how how = {0};
	long r;

	/* RESOLVE_BENEATH refuses absolute paths, absolute symlinks and any ".." or relative
	 * symlink that would leave rootfd; that is the escape protection we want, enforced by
	 * the kernel for every component, so a racing rename cannot slip past it. */
	how.flags = (uint64_t)(oflags | O_CLOEXEC);
	how.mode = (oflags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	if (flags & UTIL_OPEN_NOFOLLOW)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	do {
		r = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	} while (r < 0 && errno == EINTR);
	if (r >= 0) {
		*fd = (int)r;
		return KILN_OK;
	}
	if (errno == EXDEV)
		return kiln_err_set(err, KILN_EPRIV, "'%s' escapes its root", rel);
	if (errno == ELOOP && (flags & UTIL_OPEN_NOFOLLOW))
		return kiln_err_set(err, KILN_EPRIV, "'%s' goes through a symlink", rel);
	if (errno == ENOSYS)
		return kiln_err_set(err, KILN_EUNSUPP, "openat2(2) needs Linux 5.6 or later");
	if (errno == ENOENT)
		return kiln_err_sys(err, KILN_ENOTFOUND, "cannot open '%s'", rel);
	return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", rel);
}

const char *util_path_basename(const char *path)
{
	const char *end = path + strlen(path);
	const char *p;

	while (end > path + 1 && end[-1] == '/')
		end--;
	for (p = end; p > path && p[-1] != '/'; p--)
		;
	return p;
}

void util_path_dirname(const char *path, struct kiln_buf *out)
{
	const char *base = util_path_basename(path);
	const char *end = base;

	while (end > path + 1 && end[-1] == '/')
		end--;
	if (end == path)
		kiln_buf_addch(out, '.');
	else
		kiln_buf_add(out, path, (size_t)(end - path));
}
