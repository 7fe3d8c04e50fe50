/*
 * cache.c - the content-addressed source cache shared by every kiln process of a machine
 * (layout in worker.h, section 3), and the digests computed while sources stream by.
 *
 * Concurrency: objects appear by rename(2) of a finished temp file, so a reader sees a
 * whole object or none; identical content renamed over an existing object changes nothing
 * a reader could see. Index entries are written atomically too. flock(2) files serialise
 * downloads of one URL (the loser waits, then finds the object) and garbage collection. A
 * process that finds an index entry whose object was just evicted treats it as a miss.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/sources.h"
#include "sources/sources_int.h"

static const char *const subdirs[] = {"sha256", "alias", "url", "git", "tmp", "lock"};

/* ---- digests while streaming ---------------------------------------------------------- */

kiln_rc sources_hashes_init(struct sources_hashes *h, const enum util_digest_algo *extra,
                            bool want512, struct kiln_err *err)
{
	enum util_digest_algo want[SOURCES_HASHES_MAX];
	size_t n = 0, i;
	kiln_rc rc = KILN_OK;

	memset(h, 0, sizeof(*h));
	want[n++] = UTIL_DIGEST_SHA256;
	if (extra && *extra != UTIL_DIGEST_SHA256)
		want[n++] = *extra;
	if (want512 && !(extra && *extra == UTIL_DIGEST_SHA512))
		want[n++] = UTIL_DIGEST_SHA512;
	for (i = 0; i < n && !rc; i++) {
		rc = util_digest_init(&h->d[i], want[i], err);
		if (!rc)
			h->n++;
	}
	if (rc)
		sources_hashes_release(h);
	return rc;
}

void sources_hashes_update(struct sources_hashes *h, const void *data, size_t len)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		util_digest_update(&h->d[i], data, len);
	h->size += len;
}

kiln_rc sources_hashes_reset(struct sources_hashes *h, struct kiln_err *err)
{
	unsigned char scratch[UTIL_DIGEST_MAX];
	size_t i;

	/* util_digest_final resets the context for the same algorithm. */
	for (i = 0; i < h->n; i++) {
		if (util_digest_final(&h->d[i], scratch, err))
			return err->code;
	}
	h->size = 0;
	return KILN_OK;
}

kiln_rc sources_hashes_final(struct sources_hashes *h, char hex[][2 * UTIL_DIGEST_MAX + 1],
                             struct kiln_err *err)
{
	unsigned char raw[UTIL_DIGEST_MAX];
	size_t i;

	for (i = 0; i < h->n; i++) {
		if (util_digest_final(&h->d[i], raw, err))
			return err->code;
		util_hex_encode(raw, util_digest_size(h->d[i].algo), hex[i]);
	}
	return KILN_OK;
}

void sources_hashes_release(struct sources_hashes *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		util_digest_release(&h->d[i]);
	h->n = 0;
}

int sources_hashes_find(const struct sources_hashes *h, enum util_digest_algo algo)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		if (h->d[i].algo == algo)
			return (int)i;
	}
	return -1;
}

/* ---- opening ---------------------------------------------------------------------------- */

kiln_rc sources_cache_default_dir(struct kiln_buf *out, struct kiln_err *err)
{
	const char *env = getenv("KILN_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (env && *env)
		kiln_buf_addstr(out, env);
	else if (xdg && *xdg == '/')
		kiln_buf_addf(out, "%s/kiln", xdg);
	else if (home && *home == '/')
		kiln_buf_addf(out, "%s/.cache/kiln", home);
	else if (geteuid() == 0)
		kiln_buf_addstr(out, "/var/cache/kiln");
	else
		return kiln_err_set(err, KILN_ENOTFOUND,
		                    "no cache directory: set KILN_CACHE_DIR or HOME");
	return kiln_buf_finish(out, err);
}

kiln_rc sources_cache_open(struct sources_cache *c, const char *dir, uint64_t max,
                           struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->max = max;
	c->dir = kiln_strdup(dir);
	if (!c->dir)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < KILN_ARRAY_SIZE(subdirs) && !rc; i++) {
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s/%s", dir, subdirs[i]);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = util_mkdir_p(p.ptr, 0755, err);
	}
	if (rc) {
		kiln_err_wrap(err, "cannot set up the source cache '%s'", dir);
		sources_cache_close(c);
	}
	kiln_buf_release(&p);
	return rc;
}

void sources_cache_close(struct sources_cache *c)
{
	if (!c)
		return;
	free(c->dir);
	c->dir = NULL;
}

/* ---- paths and lookups ------------------------------------------------------------------ */

void sources_cache_object_path(const struct sources_cache *c, const char *sha256,
                               struct kiln_buf *out)
{
	kiln_buf_addf(out, "%s/sha256/%.2s/%s", c->dir, sha256, sha256);
}

static bool is_sha256_hex(const char *s, size_t len)
{
	size_t i;

	if (len != 64)
		return false;
	for (i = 0; i < len; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

static kiln_rc object_exists(const struct sources_cache *c, const char *sha256,
                             struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	sources_cache_object_path(c, sha256, &p);
	rc = kiln_buf_finish(&p, err);
	if (!rc && access(p.ptr, F_OK) < 0)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "object %s is not in the cache", sha256);
	kiln_buf_release(&p);
	return rc;
}

/* Read the sha256 an index file (url/ or alias/) points at: its first line starts with
 * the hex (url/ entries say "sha256 HEX"). */
static kiln_rc read_pointer(const char *path, char sha256[SOURCES_SHA256_HEX], struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_URL + 256);
	const char *p;
	kiln_rc rc = util_read_file(path, KILN_LIMIT_URL + 256, &b, err);

	if (rc)
		goto out;
	p = b.ptr;
	if (!strncmp(p, "sha256 ", 7))
		p += 7;
	if (strlen(p) < 64 || !is_sha256_hex(p, 64)) {
		rc = kiln_err_set(err, KILN_EFORMAT, "cache index '%s' is damaged", path);
		goto out;
	}
	memcpy(sha256, p, 64);
	sha256[64] = '\0';
out:
	kiln_buf_release(&b);
	return rc;
}

static kiln_rc sha256_of_str(const char *s, char hex[2 * UTIL_DIGEST_MAX + 1], struct kiln_err *err)
{
	return util_digest_mem_hex(UTIL_DIGEST_SHA256, s, strlen(s), hex, err);
}

static kiln_rc url_index_path(const struct sources_cache *c, const char *url, struct kiln_buf *out,
                              struct kiln_err *err)
{
	char hex[2 * UTIL_DIGEST_MAX + 1];

	if (sha256_of_str(url, hex, err))
		return err->code;
	kiln_buf_addf(out, "%s/url/%.2s/%s", c->dir, hex, hex);
	return kiln_buf_finish(out, err);
}

static void alias_path(const struct sources_cache *c, enum util_digest_algo algo, const char *hex,
                       struct kiln_buf *out)
{
	kiln_buf_addf(out, "%s/alias/%s/%.2s/%s", c->dir, util_digest_name(algo), hex, hex);
}

static kiln_rc find_via(const struct sources_cache *c, const char *index,
                        char sha256[SOURCES_SHA256_HEX], struct kiln_err *err)
{
	struct kiln_err quiet = KILN_ERR_INIT;

	if (read_pointer(index, sha256, &quiet)) {
		/* A damaged entry (a crash while it was written) is a miss; the fetch that
		 * follows writes it anew. */
		if (quiet.code == KILN_EFORMAT)
			kiln_log_err(KILN_LOG_WARN, &quiet);
		if (quiet.code == KILN_ENOTFOUND || quiet.code == KILN_EFORMAT)
			return kiln_err_set(err, KILN_ENOTFOUND, "not in the cache");
		kiln_err_merge(err, &quiet);
		return err->code;
	}
	return object_exists(c, sha256, err);
}

kiln_rc sources_cache_find_digest(const struct sources_cache *c, enum util_digest_algo algo,
                                  const char *hex, char sha256[SOURCES_SHA256_HEX],
                                  struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	if (algo == UTIL_DIGEST_SHA256) {
		if (!is_sha256_hex(hex, strlen(hex)))
			return kiln_err_set(err, KILN_EINVAL, "bad sha256 '%s'", hex);
		memcpy(sha256, hex, SOURCES_SHA256_HEX);
		return object_exists(c, sha256, err);
	}
	alias_path(c, algo, hex, &p);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = find_via(c, p.ptr, sha256, err);
	kiln_buf_release(&p);
	return rc;
}

kiln_rc sources_cache_find_url(const struct sources_cache *c, const char *url,
                               char sha256[SOURCES_SHA256_HEX], struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = url_index_path(c, url, &p, err);

	if (!rc)
		rc = find_via(c, p.ptr, sha256, err);
	kiln_buf_release(&p);
	return rc;
}

kiln_rc sources_cache_git_path(const struct sources_cache *c, const char *url, struct kiln_buf *out,
                               struct kiln_err *err)
{
	char hex[2 * UTIL_DIGEST_MAX + 1];

	if (sha256_of_str(url, hex, err))
		return err->code;
	kiln_buf_addf(out, "%s/git/%s.git", c->dir, hex);
	return kiln_buf_finish(out, err);
}

/* ---- writing ---------------------------------------------------------------------------- */

kiln_rc sources_cache_tmp_open(const struct sources_cache *c, int *fd, char **path,
                               struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	*fd = -1;
	*path = NULL;
	kiln_buf_addf(&p, "%s/tmp/dl-XXXXXX", c->dir);
	rc = kiln_buf_finish(&p, err);
	if (rc)
		goto out;
	*fd = mkostemp(p.ptr, O_CLOEXEC);
	if (*fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create a file in '%s/tmp'", c->dir);
		goto out;
	}
	*path = kiln_buf_take(&p, NULL);
	if (!*path) {
		util_close(*fd);
		*fd = -1;
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
out:
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc temp_beside(const char *dest, char **tmp, int *out, struct kiln_err *err);

/* Write an index file by temp file and rename, creating its two-level directory. Not
 * fsync'ed: on ext4 an fsync commits the journal and with it the freshly written object,
 * which costs more than the whole download, and an entry a crash damaged or emptied is a
 * miss that the next fetch writes again. */
static kiln_rc write_index(const char *path, const char *text, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char *tmp = NULL;
	int fd = -1;
	kiln_rc rc;

	util_path_dirname(path, &dir);
	rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	if (!rc)
		rc = temp_beside(path, &tmp, &fd, err);
	if (!rc)
		rc = util_write_all(fd, text, strlen(text), err);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = kiln_err_sys(err, KILN_EIO, "cannot write '%s'", tmp);
	if (!rc && rename(tmp, path) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename '%s' to '%s'", tmp, path);
	if (rc && tmp)
		unlink(tmp);
	free(tmp);
	kiln_buf_release(&dir);
	return rc;
}

kiln_rc sources_cache_index_url(const struct sources_cache *c, const char *url, const char *sha256,
                                struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_URL + 256);
	kiln_rc rc = url_index_path(c, url, &p, err);

	kiln_buf_addf(&text, "sha256 %s\nurl %s\n", sha256, url);
	if (!rc)
		rc = kiln_buf_finish(&text, err);
	if (!rc)
		rc = write_index(p.ptr, text.ptr, err);
	kiln_buf_release(&text);
	kiln_buf_release(&p);
	return rc;
}

static kiln_rc write_aliases(const struct sources_cache *c, const struct sources_hashes *h,
                             char hex[][2 * UTIL_DIGEST_MAX + 1], struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char line[SOURCES_SHA256_HEX + 1];
	kiln_rc rc = KILN_OK;
	size_t i;

	snprintf(line, sizeof(line), "%s\n", hex[0]);
	for (i = 1; i < h->n && !rc; i++) {
		kiln_buf_reset(&p);
		alias_path(c, h->d[i].algo, hex[i], &p);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = write_index(p.ptr, line, err);
	}
	kiln_buf_release(&p);
	return rc;
}

kiln_rc sources_cache_store(const struct sources_cache *c, int fd, const char *tmp,
                            const struct sources_hashes *h, char hex[][2 * UTIL_DIGEST_MAX + 1],
                            const char *url, struct kiln_err *err)
{
	struct kiln_buf obj = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	sources_cache_object_path(c, hex[0], &obj);
	kiln_buf_addf(&dir, "%s/sha256/%.2s", c->dir, hex[0]);
	rc = kiln_buf_finish(&obj, err);
	if (!rc)
		rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	/* No fsync: every copy out of the cache re-hashes the object and drops one whose
	 * bytes do not match its name, so an object torn by a crash is fetched again, not
	 * used. Renaming makes it whole-or-absent for the running processes. */
	if (!rc && fchmod(fd, 0444) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot finish '%s'", tmp);
	/* Identical bytes may already be there (another process, another URL): renaming over
	 * them is harmless and keeps this function free of a check-then-act race. */
	if (!rc && rename(tmp, obj.ptr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot move '%s' to '%s'", tmp, obj.ptr);
	if (!rc)
		rc = write_aliases(c, h, hex, err);
	if (!rc && url)
		rc = sources_cache_index_url(c, url, hex[0], err);
	kiln_buf_release(&dir);
	kiln_buf_release(&obj);
	return rc;
}

void sources_cache_touch(const struct sources_cache *c, const char *sha256)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);

	sources_cache_object_path(c, sha256, &p);
	/* The mtime of an object is its last use (atime is unreliable under relatime). */
	if (!p.err)
		(void)utimensat(AT_FDCWD, p.ptr, NULL, 0);
	kiln_buf_release(&p);
}

kiln_rc sources_cache_lock(const struct sources_cache *c, const char *kind, const char *key,
                           bool wait, int *fd, struct kiln_err *err)
{
	struct kiln_buf name = KILN_BUF_INIT(KILN_LIMIT_URL + 64);
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc;
	int r;

	*fd = -1;
	kiln_buf_addf(&name, "%s:%s", kind, key);
	rc = kiln_buf_finish(&name, err);
	if (!rc)
		rc = sha256_of_str(name.ptr, hex, err);
	kiln_buf_addf(&p, "%s/lock/%s-%.16s.lock", c->dir, kind, hex);
	if (!rc)
		rc = kiln_buf_finish(&p, err);
	if (rc)
		goto out;
	*fd = open(p.ptr, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open lock file '%s'", p.ptr);
		goto out;
	}
	do
		r = flock(*fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		if (errno == EWOULDBLOCK)
			rc = kiln_err_set(err, KILN_ECONFLICT, "'%s' is locked", p.ptr);
		else
			rc = kiln_err_sys(err, KILN_EIO, "cannot lock '%s'", p.ptr);
		util_close(*fd);
		*fd = -1;
	}
out:
	kiln_buf_release(&p);
	kiln_buf_release(&name);
	return rc;
}

void sources_cache_unlock(int fd)
{
	util_close(fd); /* closing the last fd drops the flock */
}

void sources_cache_enforce(const struct sources_cache *c)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (!c->max)
		return;
	if (sources_cache_collect(c->dir, c->max, 0, NULL, &err)) {
		kiln_err_wrap(&err, "cache size cap");
		kiln_log_err(KILN_LOG_WARN, &err);
	}
}

/* A temp file beside dest. OUT: *tmp (free()), *out. */
static kiln_rc temp_beside(const char *dest, char **tmp, int *out, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	*tmp = NULL;
	*out = -1;
	kiln_buf_addf(&p, "%s.tmpXXXXXX", dest);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		*out = mkostemp(p.ptr, O_CLOEXEC);
	if (!rc && *out < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot create a temporary file for '%s'", dest);
	if (!rc && fchmod(*out, 0644) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod '%s'", p.ptr);
	if (!rc)
		*tmp = kiln_buf_take(&p, NULL);
	if (!rc && !*tmp)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (rc && *out >= 0) {
		unlink(p.ptr);
		util_close(*out);
		*out = -1;
	}
	kiln_buf_release(&p);
	return rc;
}

/* In-kernel copy when nothing needs to see the bytes (after a download, which hashed them
 * on the way): no round trip through user space. false when the kernel or the file
 * systems cannot do it, before anything was copied. */
static bool copy_in_kernel(int in, int out, kiln_rc *rc, struct kiln_err *err)
{
	loff_t off_in = 0, off_out = 0;
	bool any = false;
	ssize_t n;

	for (;;) {
		n = copy_file_range(in, &off_in, out, &off_out, 64 * KILN_MIB, 0);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !any &&
		    (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
			return false;
		if (n < 0) {
			*rc = kiln_err_sys(err, KILN_EIO, "cannot copy a cached file");
			return true;
		}
		any = true;
	}
	*rc = KILN_OK;
	return true;
}

static kiln_rc copy_data(int in, int out, struct sources_hashes *h, struct kiln_err *err)
{
	size_t cap = 256 * KILN_KIB;
	char *chunk = kiln_malloc(cap);
	kiln_rc rc = KILN_OK;

	if (!chunk)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (lseek(in, 0, SEEK_SET) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rewind a cached file");
	while (!rc) {
		size_t got = 0;

		rc = util_read_full(in, chunk, cap, &got, err);
		if (rc || !got)
			break;
		if (h)
			sources_hashes_update(h, chunk, got);
		rc = util_write_all(out, chunk, got, err);
	}
	free(chunk);
	return rc;
}

/* Written to a temp file and renamed, so a reader of dest sees the old file or the whole
 * new one; not fsync'ed: a copy in %{_sourcedir} is checked against its declared checksum
 * whenever it is used, and re-made from the cache, so durability is not worth a sync of
 * every source on every build. */
kiln_rc sources_copy_fd(int fd, const char *dest, struct sources_hashes *h, struct kiln_err *err)
{
	char *tmp = NULL;
	int out = -1;
	kiln_rc rc = temp_beside(dest, &tmp, &out, err);

	if (!rc && (h || !copy_in_kernel(fd, out, &rc, err)))
		rc = copy_data(fd, out, h, err);
	if (!rc && close(out) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot write '%s'", tmp);
	else if (out >= 0 && rc)
		util_close(out);
	if (!rc && rename(tmp, dest) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rename '%s' to '%s'", tmp, dest);
	if (rc && tmp)
		unlink(tmp);
	if (rc)
		kiln_err_wrap(err, "cannot write '%s'", dest);
	free(tmp);
	return rc;
}
