/*
 * fs.c - file helpers: full reads and writes, atomic replacement, mkdir -p, rm -rf.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

void util_close(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
}

kiln_rc util_write_all(int fd, const void *data, size_t len, struct kiln_err *err)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "write failed");
		p += n;
		len -= (size_t)n;
	}
	return KILN_OK;
}

kiln_rc util_read_full(int fd, void *data, size_t len, size_t *got, struct kiln_err *err)
{
	char *p = data;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "read failed");
		if (!n)
			break;
		done += (size_t)n;
	}
	*got = done;
	return KILN_OK;
}

kiln_rc util_read_fd(int fd, struct kiln_buf *out, struct kiln_err *err)
{
	for (;;) {
		size_t room = out->max - out->len;
		char probe;
		ssize_t n;

		if (!room) {
			/* At the limit: fine only if nothing more is coming. */
			do {
				n = read(fd, &probe, 1);
			} while (n < 0 && errno == EINTR);
			if (n == 0)
				return KILN_OK;
			if (n < 0)
				return kiln_err_sys(err, KILN_EIO, "read failed");
			return kiln_err_set(err, KILN_ELIMIT,
			                    "input exceeds the limit of %zu bytes", out->max);
		}
		if (!kiln_buf_grow(out, room < 64 * KILN_KIB ? room : 64 * KILN_KIB))
			return kiln_buf_finish(out, err);
		n = read(fd, out->ptr + out->len, out->cap - out->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return kiln_err_sys(err, KILN_EIO, "read failed");
		if (!n)
			return KILN_OK;
		out->len += (size_t)n;
		out->ptr[out->len] = '\0';
	}
}

kiln_rc util_read_file(const char *path, size_t max, struct kiln_buf *out, struct kiln_err *err)
{
	size_t saved_max = out->max;
	kiln_rc rc;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return kiln_err_sys(err, KILN_ENOTFOUND, "cannot open '%s'", path);
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	}
	if (out->len + max < saved_max)
		out->max = out->len + max;
	rc = util_read_fd(fd, out, err);
	out->max = saved_max;
	if (rc)
		kiln_err_wrap(err, "cannot read '%s'", path);
	util_close(fd);
	return rc;
}

static kiln_rc fsync_dir_of(const char *path, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	int fd;

	util_path_dirname(path, &dir);
	fd = open(dir.ptr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot sync directory '%s'", dir.ptr);
	util_close(fd);
	kiln_buf_release(&dir);
	return rc;
}

kiln_rc util_atomic_open(struct util_atomic_file *f, const char *path, mode_t mode,
                         struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	f->fd = -1;
	f->path = NULL;
	f->tmp = NULL;
	f->nosync = false;
	kiln_buf_addf(&tmp, "%s.tmpXXXXXX", path);
	rc = kiln_buf_finish(&tmp, err);
	if (rc)
		goto out;
	f->path = kiln_strdup(path);
	f->tmp = kiln_buf_take(&tmp, NULL);
	if (!f->tmp || !f->path) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create a temporary file for '%s'", path);
		free(f->tmp); /* nothing was created, so abort must not unlink it */
		f->tmp = NULL;
		goto out;
	}
	if (fchmod(f->fd, mode) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod '%s'", f->tmp);
out:
	kiln_buf_release(&tmp);
	if (rc)
		util_atomic_abort(f);
	return rc;
}

kiln_rc util_atomic_commit(struct util_atomic_file *f, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;

	if (!f->nosync && fsync(f->fd) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot sync '%s'", f->tmp);
		goto out;
	}
	if (close(f->fd) < 0) {
		f->fd = -1;
		rc = kiln_err_sys(err, KILN_EIO, "cannot close '%s'", f->tmp);
		goto out;
	}
	f->fd = -1;
	if (rename(f->tmp, f->path) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename '%s' to '%s'", f->tmp, f->path);
		goto out;
	}
	free(f->tmp);
	f->tmp = NULL;
	if (!f->nosync)
		rc = fsync_dir_of(f->path, err);
out:
	util_atomic_abort(f);
	return rc;
}

void util_atomic_abort(struct util_atomic_file *f)
{
	if (!f)
		return;
	util_close(f->fd);
	f->fd = -1;
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	free(f->path);
	f->tmp = NULL;
	f->path = NULL;
}

static kiln_rc write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                            bool nosync, struct kiln_err *err)
{
	struct util_atomic_file f;
	kiln_rc rc;

	rc = util_atomic_open(&f, path, mode, err);
	if (rc)
		return rc;
	f.nosync = nosync;
	rc = util_write_all(f.fd, data, len, err);
	if (rc) {
		kiln_err_wrap(err, "cannot write '%s'", path);
		util_atomic_abort(&f);
		return rc;
	}
	return util_atomic_commit(&f, err);
}

kiln_rc util_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                          struct kiln_err *err)
{
	return write_atomic(path, data, len, mode, false, err);
}

kiln_rc util_write_atomic_nosync(const char *path, const void *data, size_t len, mode_t mode,
                                 struct kiln_err *err)
{
	return write_atomic(path, data, len, mode, true, err);
}

kiln_rc util_mkdir_p(const char *path, mode_t mode, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;
	size_t i;

	kiln_buf_addstr(&p, path);
	rc = kiln_buf_finish(&p, err);
	for (i = 1; !rc && i <= p.len; i++) {
		if (i < p.len && p.ptr[i] != '/')
			continue;
		p.ptr[i] = '\0';
		if (mkdir(p.ptr, mode) == 0)
			(void)0;
		else if (errno != EEXIST)
			rc = kiln_err_sys(err, KILN_EIO, "cannot create directory '%s'", p.ptr);
		else if (!util_is_dir(p.ptr))
			rc = kiln_err_set(err, KILN_EEXIST, "'%s' exists and is not a directory",
			                  p.ptr);
		if (i < p.len)
			p.ptr[i] = '/';
	}
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc rm_at(int dirfd, const char *name, const char *top, int depth, struct kiln_err *err);

static kiln_rc rm_dir_contents(int fd, const char *top, int depth, struct kiln_err *err)
{
	struct dirent *de;
	kiln_rc rc = KILN_OK;
	DIR *d;

	d = fdopendir(fd);
	if (!d) {
		util_close(fd);
		return kiln_err_sys(err, KILN_EIO, "cannot read directory under '%s'", top);
	}
	while (!rc && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = rm_at(dirfd(d), de->d_name, top, depth + 1, err);
	}
	closedir(d);
	return rc;
}

static kiln_rc rm_at(int dirfd, const char *name, const char *top, int depth, struct kiln_err *err)
{
	struct stat st;
	kiln_rc rc;
	int fd;

	if (depth > 4096)
		return kiln_err_set(err, KILN_ELIMIT, "directory tree under '%s' too deep", top);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? KILN_OK
		                       : kiln_err_sys(err, KILN_EIO, "cannot stat under '%s'", top);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return kiln_err_sys(err, KILN_EIO, "cannot remove '%s' under '%s'", name,
			                    top);
		return KILN_OK;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s' under '%s'", name, top);
	rc = rm_dir_contents(fd, top, depth, err);
	if (!rc && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot remove directory '%s' under '%s'", name,
		                  top);
	return rc;
}

kiln_rc util_rm_rf(const char *path, struct kiln_err *err)
{
	return rm_at(AT_FDCWD, path, path, 0, err);
}

kiln_rc util_copy_file(const char *src, const char *dst, mode_t mode, struct kiln_err *err)
{
	struct util_atomic_file f = {.fd = -1};
	char chunk[64 * 1024];
	kiln_rc rc;
	int in;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return kiln_err_sys(err, errno == ENOENT ? KILN_ENOTFOUND : KILN_EIO,
		                    "cannot open '%s'", src);
	rc = util_atomic_open(&f, dst, mode, err);
	while (!rc) {
		size_t got = 0;

		rc = util_read_full(in, chunk, sizeof(chunk), &got, err);
		if (rc || !got)
			break;
		rc = util_write_all(f.fd, chunk, got, err);
	}
	if (!rc)
		rc = util_atomic_commit(&f, err);
	else
		kiln_err_wrap(err, "cannot copy '%s' to '%s'", src, dst);
	util_atomic_abort(&f);
	util_close(in);
	return rc;
}

bool util_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool util_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}
