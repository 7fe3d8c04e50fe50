/*
 * unpack.c - writing one package's payload into an image.
 *
 * Why this is safe: the set was checked first (load.c: clean absolute paths, no device
 * nodes, no setuid unless allowed), the payload reader maps every entry to its header file
 * (so it cannot name a path the check did not see), and every directory is reached with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) from the image's descriptor: ".." and
 * symlinks, including absolute ones a package planted, resolve inside the image as they
 * will for the image's own programs, never outside it, even if the tree changes meanwhile.
 * The last component is made with *at calls that do not follow links (O_EXCL|O_NOFOLLOW
 * after removing what was there), so nothing is written through a link.
 */
#include "util/util.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "roots/install_int.h"

#define IDS_FILE_MAX (4 * KILN_MIB)

struct pending_dir {
	char *rel;                  /* owned */
	struct pack_file_info meta; /* strings borrowed from the package header */
};

struct unpack_pkg {
	struct roots_unpack *u;
	const struct roots_pkg *p;
	struct pack_payload *pl;
	struct pending_dir *dirs; /* owned */
	size_t ndirs, capdirs;
	struct kiln_buf links;  /* hard-link members waiting for data: "ino\0rel\0" */
	struct kiln_buf warned; /* "user\0" names warned about already */
};

static int open_in_root(int rootfd, const char *rel, int flags)
{
	struct open_how how = {0};
	long r;

	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	do {
		r = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	} while (r < 0 && errno == EINTR);
	return (int)r;
}

void roots_unpack_init(struct roots_unpack *u, int rootfd, unsigned flags, int log_fd)
{
	memset(u, 0, sizeof(*u));
	u->rootfd = rootfd;
	u->flags = flags;
	u->log_fd = log_fd;
	u->lastfd = -1;
	/* Owners are set when we can set them: as root (or with CAP_CHOWN, which only root
	 * has here); an unprivileged install leaves the caller's. */
	u->chown = geteuid() == 0;
}

void roots_unpack_release(struct roots_unpack *u)
{
	if (!u)
		return;
	roots_ids_release(&u->users);
	roots_ids_release(&u->groups);
	util_close(u->lastfd);
	u->lastfd = -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Accounts */

static kiln_rc reload_ids(struct roots_unpack *u, const char *rel, struct roots_ids *ids,
                          struct stat_key *key, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(IDS_FILE_MAX);
	struct stat st;
	kiln_rc rc = KILN_OK;
	int fd = open_in_root(u->rootfd, rel, O_RDONLY | O_NOFOLLOW);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		util_close(fd);
		if (key->ino || ids->n) {
			roots_ids_release(ids);
			memset(key, 0, sizeof(*key));
		}
		return KILN_OK; /* not there (yet): every name maps to 0 */
	}
	if (key->ino == (uint64_t)st.st_ino && key->size == (uint64_t)st.st_size &&
	    key->mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)
		goto out;
	roots_ids_release(ids);
	rc = util_read_fd(fd, &text, err);
	if (!rc)
		rc = roots_ids_parse(ids, text.ptr, text.len, err);
	if (rc) {
		kiln_err_wrap(err, "image's /%s", rel);
		goto out;
	}
	key->ino = (uint64_t)st.st_ino;
	key->size = (uint64_t)st.st_size;
	key->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
out:
	util_close(fd);
	kiln_buf_release(&text);
	return rc;
}

static void warn_unknown(struct unpack_pkg *x, const char *what, const char *name)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "warning: %s: %s %s does not exist - using root\n",
	                 x->p->nevra, what, name);

	x->u->warnings++;
	if (x->u->log_fd >= 0 && n > 0)
		(void)!write(x->u->log_fd, line,
		             (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static uint32_t lookup(struct unpack_pkg *x, const struct roots_ids *ids, const char *name,
                       const char *what)
{
	size_t pos = 0;
	uint32_t id = 0;

	if (!strcmp(name, "root") || roots_ids_find(ids, name, &id))
		return id;
	while (pos < x->warned.len) {
		if (!strcmp(x->warned.ptr + pos, name))
			return 0;
		pos += strlen(x->warned.ptr + pos) + 1;
	}
	kiln_buf_add(&x->warned, name, strlen(name) + 1);
	warn_unknown(x, what, name);
	return 0;
}

static kiln_rc set_owner(struct unpack_pkg *x, int dirfd, const char *base, int fd,
                         const struct pack_file_info *fi, const char *rel, struct kiln_err *err)
{
	uid_t uid;
	gid_t gid;
	int r;

	if (!x->u->chown)
		return KILN_OK;
	uid = lookup(x, &x->u->users, fi->user, "user");
	gid = lookup(x, &x->u->groups, fi->group, "group");
	r = fd >= 0 ? fchown(fd, uid, gid) : fchownat(dirfd, base, uid, gid, AT_SYMLINK_NOFOLLOW);
	if (r)
		return kiln_err_sys(err, KILN_EIO, "%s: chown /%s", x->p->path, rel);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Directories */

/* mkdir -p of rel (relative to the image) resolving in the image; *out gets an O_PATH fd. */
static kiln_rc make_dirs(int rootfd, const char *rel, int *out, struct kiln_err *err)
{
	char prefix[KILN_LIMIT_PATH];
	size_t len = strlen(rel), i;
	int fd = -1, parent = -1;

	if (len >= sizeof(prefix))
		return kiln_err_set(err, KILN_ELIMIT, "path too long: '/%.200s'", rel);
	parent = open_in_root(rootfd, ".", O_PATH | O_DIRECTORY);
	if (parent < 0)
		return kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                    "cannot open the image (openat2 needs Linux 5.6)");
	for (i = 1; i <= len; i++) {
		if (i < len && rel[i] != '/')
			continue;
		memcpy(prefix, rel, i);
		prefix[i] = '\0';
		fd = open_in_root(rootfd, prefix, O_PATH | O_DIRECTORY);
		if (fd < 0 && errno == ENOENT && parent >= 0) {
			const char *comp = strrchr(prefix, '/');

			comp = comp ? comp + 1 : prefix;
			if (mkdirat(parent, comp, 0755) && errno != EEXIST) {
				kiln_err_sys(err, KILN_EIO, "mkdir /%s", prefix);
				break;
			}
			fd = open_in_root(rootfd, prefix, O_PATH | O_DIRECTORY);
		}
		if (fd < 0) {
			kiln_err_sys(err, errno == ENOTDIR ? KILN_EPRIV : KILN_EIO,
			             "/%s is not a directory in the image", prefix);
			break;
		}
		util_close(parent);
		parent = fd;
		fd = -1;
	}
	if (i <= len) {
		util_close(parent);
		return err ? err->code : KILN_EIO;
	}
	*out = parent;
	return KILN_OK;
}

/* The parent directory of rel (cached: payloads are sorted, so neighbours share it). */
static kiln_rc parent_of(struct roots_unpack *u, const char *rel, int *dirfd, const char **base,
                         struct kiln_err *err)
{
	const char *slash = strrchr(rel, '/');
	size_t dlen = slash ? (size_t)(slash - rel) : 0;
	char dir[KILN_LIMIT_PATH];
	int fd = -1;
	kiln_rc rc;

	*base = slash ? slash + 1 : rel;
	if (dlen >= sizeof(dir))
		return kiln_err_set(err, KILN_ELIMIT, "path too long: '/%.200s'", rel);
	memcpy(dir, rel, dlen);
	dir[dlen] = '\0';
	if (u->lastfd >= 0 && !strcmp(u->lastdir, dir)) {
		*dirfd = u->lastfd;
		return KILN_OK;
	}
	if (!dlen) {
		fd = open_in_root(u->rootfd, ".", O_PATH | O_DIRECTORY);
		rc = fd < 0 ? kiln_err_sys(err, errno == ENOSYS ? KILN_EUNSUPP : KILN_EIO,
		                           "cannot open the image (openat2 needs Linux 5.6)")
		            : KILN_OK;
	} else {
		rc = make_dirs(u->rootfd, dir, &fd, err);
	}
	if (rc)
		return rc;
	util_close(u->lastfd);
	u->lastfd = fd;
	memcpy(u->lastdir, dir, dlen + 1);
	*dirfd = fd;
	return KILN_OK;
}

static void forget_parent(struct roots_unpack *u)
{
	util_close(u->lastfd);
	u->lastfd = -1;
	u->lastdir[0] = '\0';
}

static kiln_rc remember_dir(struct unpack_pkg *x, const char *rel, const struct pack_file_info *fi,
                            struct kiln_err *err)
{
	struct pending_dir *d;

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
	d->meta = *fi;
	x->ndirs++;
	return KILN_OK;
}

static kiln_rc make_dir(struct unpack_pkg *x, int dirfd, const char *base, const char *rel,
                        const struct pack_file_info *fi, struct kiln_err *err)
{
	struct stat st;
	int fd;

	if (!mkdirat(dirfd, base, 0700))
		return remember_dir(x, rel, fi, err);
	if (errno != EEXIST || fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return kiln_err_sys(err, KILN_EIO, "%s: mkdir /%s", x->p->path, rel);
	if (S_ISDIR(st.st_mode))
		return remember_dir(x, rel, fi, err);
	/* A symlink to a directory stands for the directory, as rpm keeps it (usrmerge's
	 * /bin -> usr/bin when a package still lists /bin). */
	fd = S_ISLNK(st.st_mode) ? open_in_root(x->u->rootfd, rel, O_PATH | O_DIRECTORY) : -1;
	if (fd >= 0) {
		util_close(fd);
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_EPRIV, "%s: /%s exists in the image and is not a directory",
	                    x->p->path, rel);
}

/* mtimes are best effort, as with cpio: a failure changes no content. */
static void set_times_fd(int fd, uint32_t mtime)
{
	struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};

	(void)futimens(fd, ts);
}

static void set_times_at(int dirfd, const char *base, uint32_t mtime)
{
	struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};

	(void)utimensat(dirfd, base, ts, AT_SYMLINK_NOFOLLOW);
}

/* Modes, owners and mtimes of the package's directories, deepest first. */
static kiln_rc fix_dirs(struct unpack_pkg *x, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	forget_parent(x->u);
	for (i = x->ndirs; !rc && i-- > 0;) {
		const struct pending_dir *d = &x->dirs[i];
		int fd = open_in_root(x->u->rootfd, d->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

		if (fd < 0) {
			rc = kiln_err_sys(err, KILN_EIO, "%s: open /%s", x->p->path, d->rel);
			break;
		}
		rc = set_owner(x, -1, NULL, fd, &d->meta, d->rel, err);
		if (!rc && fchmod(fd, d->meta.mode & 07777))
			rc = kiln_err_sys(err, KILN_EIO, "%s: chmod /%s", x->p->path, d->rel);
		if (!rc)
			set_times_fd(fd, d->meta.mtime);
		util_close(fd);
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Files */

static kiln_rc clear_place(struct unpack_pkg *x, int dirfd, const char *base, const char *rel,
                           struct kiln_err *err)
{
	struct stat st;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return KILN_OK;
	if (S_ISDIR(st.st_mode))
		return kiln_err_set(err, KILN_EPRIV, "%s: /%s is a directory in the image",
		                    x->p->path, rel);
	if (unlinkat(dirfd, base, 0))
		return kiln_err_sys(err, KILN_EIO, "%s: replace /%s", x->p->path, rel);
	return KILN_OK;
}

static kiln_rc write_file(struct unpack_pkg *x, int dirfd, const char *base, const char *rel,
                          const struct pack_file_info *fi, struct kiln_err *err)
{
	char buf[128 * 1024];
	size_t got = 0;
	kiln_rc rc = KILN_OK;
	int fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: create /%s", x->p->path, rel);
	do {
		rc = pack_payload_read(x->pl, buf, sizeof(buf), &got, err);
		if (!rc && got)
			rc = util_write_all(fd, buf, got, err);
	} while (!rc && got);
	/* chown first: it clears setuid and setgid bits that fchmod then sets. */
	if (!rc)
		rc = set_owner(x, -1, NULL, fd, fi, rel, err);
	if (!rc && fchmod(fd, fi->mode & 07777))
		rc = kiln_err_sys(err, KILN_EIO, "%s: chmod /%s", x->p->path, rel);
	if (!rc)
		set_times_fd(fd, fi->mtime);
	util_close(fd);
	return rc;
}

static kiln_rc make_other(struct unpack_pkg *x, int dirfd, const char *base, const char *rel,
                          const struct pack_file_info *fi, struct kiln_err *err)
{
	kiln_rc rc;

	rc = clear_place(x, dirfd, base, rel, err);
	if (rc)
		return rc;
	if (S_ISREG(fi->mode))
		return write_file(x, dirfd, base, rel, fi, err);
	if (S_ISLNK(fi->mode)) {
		if (symlinkat(fi->link, dirfd, base))
			return kiln_err_sys(err, KILN_EIO, "%s: symlink /%s", x->p->path, rel);
	} else if (S_ISFIFO(fi->mode)) {
		if (mkfifoat(dirfd, base, fi->mode & 0777))
			return kiln_err_sys(err, KILN_EIO, "%s: mkfifo /%s", x->p->path, rel);
	} else {
		/* load.c refused these before anything was written; a payload cannot differ. */
		return kiln_err_set(err, KILN_EPRIV, "%s: file '/%s': type %o refused", x->p->path,
		                    rel, fi->mode & S_IFMT);
	}
	rc = set_owner(x, dirfd, base, -1, fi, rel, err);
	if (!rc && S_ISFIFO(fi->mode) && fchmodat(dirfd, base, fi->mode & 0777, 0))
		rc = kiln_err_sys(err, KILN_EIO, "%s: chmod /%s", x->p->path, rel);
	if (!rc)
		set_times_at(dirfd, base, fi->mtime);
	return rc;
}

/* Hard links: the members without data wait until the member carrying it exists. */
static kiln_rc link_members(struct unpack_pkg *x, const struct pack_file_info *fi,
                            const char *target, struct kiln_err *err)
{
	size_t pos = 0;
	kiln_rc rc = KILN_OK;
	int tfd = -1;
	const char *tbase;

	while (!rc && pos < x->links.len) {
		const char *rel, *base;
		uint32_t ino;
		int dfd = -1;

		memcpy(&ino, x->links.ptr + pos, sizeof(ino));
		rel = x->links.ptr + pos + sizeof(ino);
		pos += sizeof(ino) + strlen(rel) + 1;
		if (ino != fi->inode)
			continue;
		if (tfd < 0) {
			forget_parent(x->u);
			rc = parent_of(x->u, target, &dfd, &tbase, err);
			if (rc)
				break;
			tfd = dup(dfd); /* the cache will move on */
			if (tfd < 0) {
				rc = kiln_err_sys(err, KILN_EIO, "dup");
				break;
			}
		}
		rc = parent_of(x->u, rel, &dfd, &base, err);
		if (!rc)
			rc = clear_place(x, dfd, base, rel, err);
		if (!rc && linkat(tfd, tbase, dfd, base, 0))
			rc = kiln_err_sys(err, KILN_EIO, "%s: link /%s", x->p->path, rel);
		if (!rc)
			x->u->files++;
	}
	util_close(tfd);
	return rc;
}

static kiln_rc unpack_one(struct unpack_pkg *x, const struct pack_file_info *fi,
                          struct kiln_err *err)
{
	const char *rel = fi->path + 1, *base;
	int dirfd = -1;
	kiln_rc rc;

	if (fi->path[0] != '/' || !fi->path[1])
		return kiln_err_set(err, KILN_EPRIV, "%s: file '%s': not an absolute path",
		                    x->p->path, fi->path);
	if (fi->flags & RPMTAG_FILE_GHOST)
		return KILN_OK;
	if (S_ISREG(fi->mode) && fi->nlink > 1 && !fi->link_data) {
		kiln_buf_add(&x->links, &fi->inode, sizeof(fi->inode));
		kiln_buf_add(&x->links, rel, strlen(rel) + 1);
		return kiln_buf_finish(&x->links, err);
	}
	rc = parent_of(x->u, rel, &dirfd, &base, err);
	if (!rc && S_ISDIR(fi->mode))
		rc = make_dir(x, dirfd, base, rel, fi, err);
	else if (!rc)
		rc = make_other(x, dirfd, base, rel, fi, err);
	if (!rc && S_ISREG(fi->mode) && fi->nlink > 1)
		rc = link_members(x, fi, rel, err);
	if (!rc)
		x->u->files++;
	return rc;
}

static kiln_rc open_payload(struct unpack_pkg *x, int *fd, struct kiln_err *err)
{
	const struct roots_pkg *p = x->p;

	*fd = open(p->path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", p->path);
	if (lseek(*fd, (off_t)p->pkg.payload_off, SEEK_SET) < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: seek to the payload", p->path);
	if (pack_payload_open(&p->pkg, *fd, &x->pl, err))
		return err->code;
	/* Inflating the next blocks overlaps with writing the files of the last ones. */
	return pack_payload_readahead(x->pl, err);
}

kiln_rc roots_unpack_pkg(struct roots_unpack *u, const struct roots_pkg *p, struct kiln_err *err)
{
	struct unpack_pkg x = {
	    u, p, NULL, NULL, 0, 0, KILN_BUF_INIT(16 * KILN_MIB), KILN_BUF_INIT(KILN_MIB)};
	struct pack_file_info fi;
	kiln_rc rc;
	int fd = -1;
	size_t i;

	/* Accounts as the image has them now: an earlier package or %pre may have added some. */
	rc = reload_ids(u, "etc/passwd", &u->users, &u->passwd_key, err);
	if (!rc)
		rc = reload_ids(u, "etc/group", &u->groups, &u->group_key, err);
	if (!rc)
		rc = open_payload(&x, &fd, err);
	while (!rc && !(rc = pack_payload_next(x.pl, &fi, err)))
		rc = unpack_one(&x, &fi, err);
	if (rc == KILN_ENOTFOUND)
		rc = fix_dirs(&x, err);
	if (rc && err && !strstr(err->msg, p->path))
		kiln_err_wrap(err, "%s", p->path);
	forget_parent(u);
	for (i = 0; i < x.ndirs; i++)
		free(x.dirs[i].rel);
	free(x.dirs);
	kiln_buf_release(&x.links);
	kiln_buf_release(&x.warned);
	pack_payload_free(x.pl);
	util_close(fd);
	return rc;
}

kiln_rc roots_image_put_file(int rootfd, const char *rel, const char *text, struct kiln_err *err)
{
	const char *slash = strrchr(rel, '/');
	char dir[KILN_LIMIT_PATH];
	int dfd = -1, fd = -1;
	kiln_rc rc = KILN_OK;

	if (!slash || (size_t)(slash - rel) >= sizeof(dir))
		return kiln_err_set(err, KILN_EINVAL, "bad image path '%s'", rel);
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	rc = make_dirs(rootfd, dir, &dfd, err);
	if (!rc && unlinkat(dfd, slash + 1, 0) && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot replace /%s", rel);
	if (!rc) {
		fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		            0644);
		if (fd < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot create /%s", rel);
	}
	if (!rc)
		rc = util_write_all(fd, text, strlen(text), err);
	util_close(fd);
	util_close(dfd);
	return rc;
}
