/*
 * extract.c - writing a payload below a directory without ever leaving it.
 *
 * Why this is safe: every name was checked by util_path_check_relative in the reader (no
 * "..", not absolute, no NUL), and here each directory component is opened with
 * O_NOFOLLOW|O_DIRECTORY relative to its parent fd, starting at the root fd, so a symlink
 * anywhere in the path (one the payload itself planted, or one already in the target)
 * makes the open fail instead of being followed. Files are created with O_EXCL|O_NOFOLLOW
 * after removing what was there, so nothing is written through a link.
 */
#include "util/util.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"
#include "pack/payload_int.h"

struct dirfix {
	char *rel; /* owned */
	uint32_t mode, mtime;
};

struct extract {
	int rootfd;
	unsigned flags;
	struct dirfix *dirs; /* owned: modes and mtimes applied at the end */
	size_t ndirs, capdirs;
	struct kiln_buf links; /* hard-link members waiting for data: "ino\0rel\0" */
};

/* Open (creating when missing) every directory of rel but the last component; *base gets
 * the last component (pointing into rel). */
static kiln_rc open_parent(int rootfd, const char *rel, int *out, const char **base,
                           struct kiln_err *err)
{
	const char *p = rel, *slash;
	char comp[256];
	int fd = dup(rootfd), next;

	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "dup");
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);

		if (n >= sizeof(comp)) {
			util_close(fd);
			return kiln_err_set(err, KILN_ELIMIT, "%s: name component too long", rel);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (mkdirat(fd, comp, 0755) && errno != EEXIST) {
			kiln_err_sys(err, KILN_EIO, "mkdir %.*s", (int)(slash - rel), rel);
			util_close(fd);
			return KILN_EIO;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		util_close(fd);
		if (next < 0)
			return kiln_err_sys(err, KILN_EPRIV,
			                    "%.*s is not a directory (or a symlink)",
			                    (int)(slash - rel), rel);
		fd = next;
		p = slash + 1;
	}
	*out = fd;
	*base = p;
	return KILN_OK;
}

static void set_owner(int dirfd, const char *base, const struct pack_file_info *fi)
{
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	uid_t uid = 0;
	gid_t gid = 0;

	if (!getpwnam_r(fi->user, &pw, buf, sizeof(buf), &pwp) && pwp)
		uid = pwp->pw_uid;
	if (!getgrnam_r(fi->group, &gr, buf, sizeof(buf), &grp) && grp)
		gid = grp->gr_gid;
	if (fchownat(dirfd, base, uid, gid, AT_SYMLINK_NOFOLLOW))
		return; /* best effort, like cpio as a user */
}

static kiln_rc write_file(struct pack_payload *pl, int dirfd, const char *base, const char *rel,
                          const struct pack_file_info *fi, struct kiln_err *err)
{
	char buf[64 * 1024];
	size_t got = 0;
	int fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	kiln_rc rc = KILN_OK;

	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "create %s", rel);
	do {
		rc = pack_payload_read(pl, buf, sizeof(buf), &got, err);
		if (!rc && got)
			rc = util_write_all(fd, buf, got, err);
	} while (!rc && got);
	if (!rc && fchmod(fd, fi->mode & 07777))
		rc = kiln_err_sys(err, KILN_EIO, "chmod %s", rel);
	util_close(fd);
	return rc;
}

static kiln_rc remember_dir(struct extract *x, const char *rel, const struct pack_file_info *fi,
                            struct kiln_err *err)
{
	struct dirfix *d;

	if (x->ndirs == x->capdirs) {
		size_t cap = x->capdirs ? 2 * x->capdirs : 64;

		d = kiln_reallocarray(x->dirs, cap, sizeof(*d));
		if (!d)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		x->dirs = d;
		x->capdirs = cap;
	}
	d = &x->dirs[x->ndirs];
	d->rel = kiln_strdup(rel);
	if (!d->rel)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	d->mode = fi->mode & 07777;
	d->mtime = fi->mtime;
	x->ndirs++;
	return KILN_OK;
}

static kiln_rc make_entry(struct extract *x, struct pack_payload *pl, int dirfd, const char *base,
                          const char *rel, const struct pack_file_info *fi, struct kiln_err *err)
{
	struct stat st;

	if (S_ISDIR(fi->mode)) {
		if (mkdirat(dirfd, base, 0700) && errno != EEXIST)
			return kiln_err_sys(err, KILN_EIO, "mkdir %s", rel);
		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			return kiln_err_set(err, KILN_EPRIV, "%s exists and is not a directory",
			                    rel);
		return remember_dir(x, rel, fi, err);
	}
	if (!fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) &&
	    unlinkat(dirfd, base, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
		return kiln_err_sys(err, KILN_EIO, "replace %s", rel);
	if (S_ISREG(fi->mode))
		return write_file(pl, dirfd, base, rel, fi, err);
	if (S_ISLNK(fi->mode)) {
		if (symlinkat(fi->link, dirfd, base))
			return kiln_err_sys(err, KILN_EIO, "symlink %s", rel);
		return KILN_OK;
	}
	if (S_ISFIFO(fi->mode)) {
		if (mkfifoat(dirfd, base, fi->mode & 07777))
			return kiln_err_sys(err, KILN_EIO, "mkfifo %s", rel);
		return KILN_OK;
	}
	if ((S_ISCHR(fi->mode) || S_ISBLK(fi->mode)) && geteuid() == 0) {
		if (mknodat(dirfd, base, fi->mode,
		            makedev((fi->rdev >> 8) & 0xff, fi->rdev & 0xff)))
			return kiln_err_sys(err, KILN_EIO, "mknod %s", rel);
	}
	return KILN_OK; /* sockets, and device nodes without root */
}

static void set_times(int dirfd, const char *base, uint32_t mtime)
{
	struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};

	if (utimensat(dirfd, base, ts, AT_SYMLINK_NOFOLLOW))
		return; /* best effort: a device node we skipped */
}

/* Hard links: the data-less members wait until the member with the data exists. */
static kiln_rc link_members(struct extract *x, const struct pack_file_info *fi, const char *target,
                            struct kiln_err *err)
{
	size_t pos = 0;
	kiln_rc rc = KILN_OK;

	while (!rc && pos < x->links.len) {
		const char *rel, *base;
		uint32_t ino;
		int dfd = -1, tfd = -1;
		const char *tbase;

		memcpy(&ino, x->links.ptr + pos, sizeof(ino));
		rel = x->links.ptr + pos + sizeof(ino);
		pos += sizeof(ino) + strlen(rel) + 1;
		if (ino != fi->inode)
			continue;
		rc = open_parent(x->rootfd, rel, &dfd, &base, err);
		if (!rc)
			rc = open_parent(x->rootfd, target, &tfd, &tbase, err);
		if (!rc && linkat(tfd, tbase, dfd, base, 0))
			rc = kiln_err_sys(err, KILN_EIO, "link %s", rel);
		util_close(dfd);
		util_close(tfd);
	}
	return rc;
}

static kiln_rc extract_one(struct extract *x, struct pack_payload *pl,
                           const struct pack_file_info *fi, struct kiln_err *err)
{
	struct kiln_buf rel = KILN_BUF_INIT(KILN_LIMIT_CPIO_NAME);
	const char *base;
	int dirfd = -1;
	kiln_rc rc = util_path_check_relative(fi->path + (fi->path[0] == '/'),
	                                      strlen(fi->path) - (fi->path[0] == '/'), &rel, err);

	if (!rc && S_ISREG(fi->mode) && fi->nlink > 1 && !fi->link_data) {
		kiln_buf_add(&x->links, &fi->inode, sizeof(fi->inode));
		kiln_buf_add(&x->links, rel.ptr, rel.len + 1);
		rc = kiln_buf_finish(&x->links, err);
		goto out;
	}
	if (!rc)
		rc = open_parent(x->rootfd, rel.ptr, &dirfd, &base, err);
	if (!rc)
		rc = make_entry(x, pl, dirfd, base, rel.ptr, fi, err);
	if (!rc && (x->flags & PACK_EXTRACT_F_OWNERS))
		set_owner(dirfd, base, fi);
	if (!rc && !S_ISDIR(fi->mode))
		set_times(dirfd, base, fi->mtime);
	if (!rc && S_ISREG(fi->mode) && fi->nlink > 1)
		rc = link_members(x, fi, rel.ptr, err);
out:
	util_close(dirfd);
	kiln_buf_release(&rel);
	return rc;
}

/* Directory modes and mtimes last, deepest first, so read-only directories can be filled. */
static kiln_rc fix_dirs(struct extract *x, struct kiln_err *err)
{
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = x->ndirs; !rc && i-- > 0;) {
		const char *base;
		int dfd = -1;

		rc = open_parent(x->rootfd, x->dirs[i].rel, &dfd, &base, err);
		if (!rc && fchmodat(dfd, base, x->dirs[i].mode, 0))
			rc = kiln_err_sys(err, KILN_EIO, "chmod %s", x->dirs[i].rel);
		if (!rc)
			set_times(dfd, base, x->dirs[i].mtime);
		util_close(dfd);
	}
	return rc;
}

kiln_rc pack_payload_extract(struct pack_payload *pl, int rootfd, unsigned flags,
                             struct kiln_err *err)
{
	struct extract x = {rootfd, flags, NULL, 0, 0, KILN_BUF_INIT(16 * KILN_MIB)};
	struct pack_file_info fi;
	size_t i;
	kiln_rc rc;

	while (!(rc = pack_payload_next(pl, &fi, err))) {
		rc = extract_one(&x, pl, &fi, err);
		if (rc)
			break;
	}
	if (rc == KILN_ENOTFOUND)
		rc = fix_dirs(&x, err);
	for (i = 0; i < x.ndirs; i++)
		free(x.dirs[i].rel);
	free(x.dirs);
	kiln_buf_release(&x.links);
	return rc;
}
