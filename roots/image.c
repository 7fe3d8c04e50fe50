/*
 * image.c - the image cache: immutable images by key under CACHE/images (layout in
 * roots.h), made once however many processes ask at the same time.
 *
 * Concurrency: an image appears by rename(2) of a finished directory, so a reader sees a
 * whole image or none. images/lock/KEY is the key's flock file: the maker holds it
 * exclusively from the check to the rename, users hold it shared for as long as they use
 * the image, and the collector takes it exclusively without waiting, so it never removes an
 * image in use or one being made. A process finding no image takes the exclusive lock
 * (waiting for a maker), looks again, and only then makes it; afterwards it converts to
 * shared. flock conversion is not atomic, so the image is looked for again under the
 * shared lock and the whole dance repeats if the collector slipped in between.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roots/install_int.h"

#define KEY_MAX 128
#define INFO_MAX (4 * KILN_MIB)
#define GC_MAX_IMAGES 100000

static kiln_rc check_key(const char *key, struct kiln_err *err)
{
	size_t i, n = strlen(key);

	if (!n || n > KEY_MAX || key[0] == '.')
		return kiln_err_set(err, KILN_EINVAL, "bad image key '%.140s': 1 to %d characters",
		                    key, KEY_MAX);
	for (i = 0; i < n; i++) {
		char c = key[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '.' || c == '_' || c == '-'))
			return kiln_err_set(err, KILN_EINVAL,
			                    "bad image key '%.140s': only [0-9a-zA-Z._-]", key);
	}
	return KILN_OK;
}

static kiln_rc path_of(struct kiln_buf *b, struct kiln_err *err, const char *fmt, ...)
    KILN_PRINTF(3, 4);

static kiln_rc path_of(struct kiln_buf *b, struct kiln_err *err, const char *fmt, ...)
{
	va_list ap;

	kiln_buf_reset(b);
	va_start(ap, fmt);
	kiln_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return kiln_buf_finish(b, err);
}

static kiln_rc make_layout(const char *cache, struct kiln_err *err)
{
	static const char *const sub[] = {"images", "images/lock", "images/tmp"};
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(sub); i++) {
		rc = path_of(&p, err, "%s/%s", cache, sub[i]);
		if (!rc)
			rc = util_mkdir_p(p.ptr, 0755, err);
	}
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc lock_open(const char *cache, const char *key, int *fd, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = path_of(&p, err, "%s/images/lock/%s", cache, key);

	*fd = -1;
	if (!rc) {
		*fd = open(p.ptr, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (*fd < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot open lock file '%s'", p.ptr);
	}
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc lock_take(int fd, int how, struct kiln_err *err)
{
	int r;

	do
		r = flock(fd, how);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EWOULDBLOCK)
		return kiln_err_set(err, KILN_ECONFLICT, "image is in use");
	if (r < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot lock an image");
	return KILN_OK;
}

/* This boot's id: an image written without syncing is trusted only within it. "" when the
 * kernel does not say. */
static void boot_id(char out[64])
{
	struct kiln_buf b = KILN_BUF_INIT(256);

	out[0] = '\0';
	if (!util_read_file("/proc/sys/kernel/random/boot_id", 256, &b, NULL)) {
		size_t n = strcspn(b.ptr, "\n \t");

		if (n && n < 64) {
			memcpy(out, b.ptr, n);
			out[n] = '\0';
		}
	}
	kiln_buf_release(&b);
}

/* Is images/KEY there (renamed into place whole)? *size from its info file. *stale: it is
 * there but was made, unsynced, in an earlier boot, so a crash may have lost some of what
 * it holds (write_info). */
static bool image_info(const char *cache, const char *key, uint64_t *size, bool *stale)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf info = KILN_BUF_INIT(INFO_MAX);
	bool ok = false;
	const char *s;

	*size = 0;
	*stale = false;
	if (path_of(&p, NULL, "%s/images/%s/info", cache, key) ||
	    util_read_file(p.ptr, INFO_MAX, &info, NULL))
		goto out;
	ok = true;
	s = strstr(info.ptr, "\nsize ");
	if (s && util_parse_u64(s + 6, strcspn(s + 6, "\n"), 10, UINT64_MAX, size, NULL))
		*size = 0;
	s = strstr(info.ptr, "\nboot ");
	if (s) {
		char now[64];
		size_t n = strcspn(s + 6, "\n");

		boot_id(now);
		*stale = strlen(now) != n || memcmp(now, s + 6, n);
	}
out:
	kiln_buf_release(&p);
	kiln_buf_release(&info);
	return ok;
}

static kiln_rc discard_image(const char *cache, const char *key, const char *path,
                             struct kiln_err *err);

static bool image_present(const char *cache, const char *key, uint64_t *size)
{
	bool stale;

	return image_info(cache, key, size, &stale) && !stale;
}

/* Bytes a tree takes on disk (st_blocks), without following links. */
static uint64_t tree_size(int dirfd, int depth)
{
	DIR *d;
	struct dirent *e;
	uint64_t sum = 0;
	int fd = dup(dirfd);

	if (fd < 0 || depth > 256)
		return util_close(fd), 0;
	d = fdopendir(fd);
	if (!d)
		return util_close(fd), 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		sum += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				sum += tree_size(sub, depth + 1);
				util_close(sub);
			}
		}
	}
	closedir(d);
	return sum;
}

/* The image was written without syncing (roots/script.c suppresses the image's own rpm's
 * syncfs too): rather than wait for the disk, info names the boot it was made in, and an
 * image from an earlier boot is made again (image_info). Where the boot has no id, the
 * image is synced before it is renamed into place. */
static kiln_rc write_info(const char *dir, const char *key, uint64_t size, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf t = KILN_BUF_INIT(INFO_MAX);
	char boot[64];
	kiln_rc rc;

	boot_id(boot);
	kiln_buf_addf(&t, "key %s\nsize %" PRIu64 "\n", key, size);
	if (boot[0])
		kiln_buf_addf(&t, "boot %s\n", boot);
	rc = kiln_buf_finish(&t, err);
	if (!rc)
		rc = path_of(&p, err, "%s/info", dir);
	if (!rc && !boot[0]) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || syncfs(fd))
			rc = kiln_err_sys(err, KILN_EIO, "cannot sync the image '%s'", dir);
		util_close(fd);
	}
	if (!rc)
		rc = util_write_atomic(p.ptr, t.ptr, t.len, 0644, err);
	kiln_buf_release(&p);
	kiln_buf_release(&t);
	return rc;
}

/* Make images/KEY: in images/tmp/KEY.XXXXXX, then one rename. Called holding the
 * exclusive lock. */
static kiln_rc image_make(const char *cache, const char *key, roots_image_make_fn make, void *arg,
                          uint64_t *size, struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf root = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dst = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err cerr = KILN_ERR_INIT;
	bool made_tmp = false;
	int fd = -1;
	kiln_rc rc;

	rc = path_of(&tmp, err, "%s/images/tmp/%s.XXXXXX", cache, key);
	if (!rc && !mkdtemp(tmp.ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot create '%s'", tmp.ptr);
	made_tmp = !rc;
	if (!rc && chmod(tmp.ptr, 0755))
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod '%s'", tmp.ptr);
	if (!rc)
		rc = path_of(&root, err, "%s/root", tmp.ptr);
	if (!rc && mkdir(root.ptr, 0755))
		rc = kiln_err_sys(err, KILN_EIO, "cannot create '%s'", root.ptr);
	if (!rc)
		rc = make(arg, root.ptr, err);
	if (!rc) {
		fd = open(root.ptr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*size = fd >= 0 ? tree_size(fd, 0) : 0;
		util_close(fd);
		rc = write_info(tmp.ptr, key, *size, err);
	}
	if (!rc)
		rc = path_of(&dst, err, "%s/images/%s", cache, key);
	if (!rc && rename(tmp.ptr, dst.ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename the image into '%s'", dst.ptr);
	if (rc && made_tmp && util_rm_rf(tmp.ptr, &cerr))
		kiln_log_err(KILN_LOG_WARN, &cerr);
	kiln_buf_release(&tmp);
	kiln_buf_release(&root);
	kiln_buf_release(&dst);
	return rc;
}

static void touch_image(const char *cache, const char *key)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);

	/* The mtime of images/KEY is its last use (atime is unreliable under relatime). */
	if (!path_of(&p, NULL, "%s/images/%s", cache, key))
		(void)utimensat(AT_FDCWD, p.ptr, NULL, 0);
	kiln_buf_release(&p);
}

/* An image from an earlier boot, never synced: made again (write_info says why). */
static kiln_rc discard_stale(const char *cache, const char *key, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = path_of(&p, err, "%s/images/%s", cache, key);

	if (!rc)
		rc = discard_image(cache, key, p.ptr, err);
	if (rc)
		kiln_err_wrap(err, "image %s, made in an earlier boot", key);
	kiln_buf_release(&p);
	return rc;
}

/* One round: the image under a shared lock, made first if needed. *again when the
 * collector removed it between our exclusive and shared locks. */
static kiln_rc get_round(const char *cache, const char *key, roots_image_make_fn make, void *arg,
                         struct roots_image *img, bool *again, struct kiln_err *err)
{
	bool stale = false;
	kiln_rc rc;

	*again = false;
	rc = lock_take(img->lock_fd, LOCK_SH, err);
	if (!rc && image_present(cache, key, &img->size))
		return KILN_OK;
	/* Missing: wait for whoever makes it, or make it ourselves. */
	if (!rc)
		rc = lock_take(img->lock_fd, LOCK_EX, err);
	if (!rc && image_info(cache, key, &img->size, &stale) && stale)
		rc = discard_stale(cache, key, err);
	if (!rc && !image_present(cache, key, &img->size)) {
		rc = image_make(cache, key, make, arg, &img->size, err);
		img->made = !rc;
	}
	if (!rc)
		rc = lock_take(img->lock_fd, LOCK_SH, err);
	if (!rc && !image_present(cache, key, &img->size))
		*again = true;
	return rc;
}

kiln_rc roots_image_get(const char *cache_dir, const char *key, roots_image_make_fn make, void *arg,
                        struct roots_image *img, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool again = true;
	int rounds = 0;
	kiln_rc rc;

	memset(img, 0, sizeof(*img));
	img->lock_fd = -1;
	rc = check_key(key, err);
	if (!rc)
		rc = make_layout(cache_dir, err);
	if (!rc)
		rc = lock_open(cache_dir, key, &img->lock_fd, err);
	while (!rc && again && rounds++ < 8)
		rc = get_round(cache_dir, key, make, arg, img, &again, err);
	if (!rc && again)
		rc = kiln_err_set(err, KILN_ECONFLICT, "image '%s' keeps being collected", key);
	if (!rc)
		rc = path_of(&p, err, "%s/images/%s/root", cache_dir, key);
	if (!rc) {
		img->root = kiln_buf_take(&p, NULL);
		touch_image(cache_dir, key);
	}
	if (rc)
		roots_image_release(img);
	kiln_buf_release(&p);
	return rc;
}

void roots_image_release(struct roots_image *img)
{
	if (!img)
		return;
	free(img->root);
	img->root = NULL;
	if (img->lock_fd > 0)
		util_close(img->lock_fd); /* the last fd of the open file drops the flock */
	img->lock_fd = -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Collection */

struct gc_entry {
	char key[KEY_MAX + 1];
	int64_t used_ns;
	uint64_t size;
};

static int gc_cmp(const void *a, const void *b)
{
	const struct gc_entry *x = a, *y = b;

	if (x->used_ns != y->used_ns)
		return x->used_ns < y->used_ns ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Move images/KEY (at path) out of the way, so a reader never sees it half removed, and
 * remove it. The caller holds the key's lock exclusively. */
static kiln_rc discard_image(const char *cache, const char *key, const char *path,
                             struct kiln_err *err)
{
	struct kiln_buf gone = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	rc = path_of(&gone, err, "%s/images/tmp/%s.gone", cache, key);
	if (!rc && rename(path, gone.ptr) && errno != ENOENT)
		rc = kiln_err_sys(err, KILN_EIO, "cannot move '%s' away", path);
	if (!rc)
		rc = util_rm_rf(gone.ptr, err);
	kiln_buf_release(&gone);
	return rc;
}

/* Remove images/KEY (or a temp dir) if its lock can be taken now; *removed says so. */
static kiln_rc remove_locked(const char *cache, const char *key, const char *path, bool *removed,
                             struct kiln_err *err)
{
	int fd = -1;
	kiln_rc rc;

	*removed = false;
	rc = lock_open(cache, key, &fd, err);
	if (!rc && lock_take(fd, LOCK_EX | LOCK_NB, NULL)) {
		util_close(fd);
		return KILN_OK; /* in use or being made */
	}
	if (!rc)
		rc = discard_image(cache, key, path, err);
	*removed = !rc;
	util_close(fd);
	return rc;
}

static kiln_rc gc_tmp(const char *cache, struct roots_image_gc *g, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *e;
	kiln_rc rc;
	DIR *d = NULL;

	rc = path_of(&dir, err, "%s/images/tmp", cache);
	if (!rc)
		d = opendir(dir.ptr);
	while (!rc && d && (e = readdir(d))) {
		char key[KEY_MAX + 1];
		const char *dot = strrchr(e->d_name, '.');
		size_t klen = dot ? (size_t)(dot - e->d_name) : 0;
		int fd = -1;

		if (e->d_name[0] == '.' || !klen || klen > KEY_MAX)
			continue;
		memcpy(key, e->d_name, klen);
		key[klen] = '\0';
		if (check_key(key, NULL) || lock_open(cache, key, &fd, NULL))
			continue;
		/* A maker holds its key's lock while its temp directory exists. */
		if (!lock_take(fd, LOCK_EX | LOCK_NB, NULL)) {
			rc = path_of(&p, err, "%s/%s", dir.ptr, e->d_name);
			if (!rc)
				rc = util_rm_rf(p.ptr, err);
			g->tmp += !rc;
		}
		util_close(fd);
	}
	if (d)
		closedir(d);
	kiln_buf_release(&dir);
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc gc_list(const char *cache, struct gc_entry **out, size_t *n, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct gc_entry *v = NULL;
	size_t cap = 0;
	struct dirent *e;
	kiln_rc rc;
	DIR *d = NULL;

	*n = 0;
	rc = path_of(&dir, err, "%s/images", cache);
	if (!rc)
		d = opendir(dir.ptr);
	while (!rc && d && (e = readdir(d))) {
		struct stat st;
		bool stale;

		if (check_key(e->d_name, NULL) || !strcmp(e->d_name, "lock") ||
		    !strcmp(e->d_name, "tmp") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		if (*n == cap) {
			struct gc_entry *nv;

			cap = cap ? 2 * cap : 64;
			nv = cap <= GC_MAX_IMAGES ? kiln_reallocarray(v, cap, sizeof(*v)) : NULL;
			if (!nv) {
				rc = kiln_err_set(err, KILN_ENOMEM, "too many images");
				break;
			}
			v = nv;
		}
		memcpy(v[*n].key, e->d_name, strlen(e->d_name) + 1); /* check_key: <= KEY_MAX */
		v[*n].used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		(void)image_info(cache, e->d_name, &v[*n].size, &stale);
		(*n)++;
	}
	if (d)
		closedir(d);
	kiln_buf_release(&dir);
	*out = v;
	return rc;
}

kiln_rc roots_image_collect(const char *cache_dir, uint64_t max_bytes, struct roots_image_gc *out,
                            struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct roots_image_gc g;
	struct gc_entry *v = NULL;
	uint64_t total = 0;
	size_t n = 0, i;
	kiln_rc rc;

	memset(&g, 0, sizeof(g));
	rc = make_layout(cache_dir, err);
	if (!rc)
		rc = gc_tmp(cache_dir, &g, err);
	if (!rc)
		rc = gc_list(cache_dir, &v, &n, err);
	if (!rc && n)
		qsort(v, n, sizeof(*v), gc_cmp);
	for (i = 0; !rc && i < n; i++)
		total += v[i].size;
	/* Oldest use first, until the rest fits; images in use stay whatever their age. */
	for (i = 0; !rc && i < n; i++) {
		bool removed = false;

		if (max_bytes && total > max_bytes) {
			rc = path_of(&p, err, "%s/images/%s", cache_dir, v[i].key);
			if (!rc)
				rc = remove_locked(cache_dir, v[i].key, p.ptr, &removed, err);
			g.busy += !rc && !removed;
		}
		if (removed) {
			g.images++;
			g.image_bytes += v[i].size;
			total -= v[i].size;
		} else {
			g.kept++;
			g.kept_bytes += v[i].size;
		}
	}
	if (out)
		*out = g;
	free(v);
	kiln_buf_release(&p);
	return rc;
}
