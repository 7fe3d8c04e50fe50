/*
 * sources.c - making a spec's sources present: local files, the cache, downloads, git
 * tarballs; checksums from the job and the dist-git "sources" file; --pin and --offline.
 *
 * The order for one source: a file already at its path is used when it matches its
 * declared checksum (or none is declared); else the cache (by declared digest, or by URL
 * when nothing is declared); else the network, under a per-URL lock so that concurrent
 * processes download once. A download is verified before it is stored, so nothing that
 * fails a declared checksum ever enters the cache.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/sources.h"
#include "sources/sources_int.h"

/* What was computed over one file's bytes. */
struct digests {
	size_t n;
	enum util_digest_algo algo[SOURCES_HASHES_MAX];
	char hex[SOURCES_HASHES_MAX][2 * UTIL_DIGEST_MAX + 1];
	uint64_t size;
};

/* One source being made present. */
struct job {
	const char *label; /* "Source0", "Patch3", or the URL for fetch_url */
	const char *url;   /* NULL: a plain file name */
	const char *file;
	const char *dest;
	const struct sources_sum *sum; /* NULL: nothing declared (or --pin) */
	struct digests got;
	enum sources_origin origin;
	bool verified;
};

kiln_rc sources_global_init(struct kiln_err *err)
{
	kiln_rc rc = sources_curl_global_init(err);

	return rc ? rc : sources_git_global_init(err);
}

void sources_fetch_report_init(struct sources_fetch_report *r)
{
	memset(r, 0, sizeof(*r));
	kiln_arena_init(&r->arena, KILN_LIMIT_ARENA);
}

void sources_fetch_report_release(struct sources_fetch_report *r)
{
	if (!r)
		return;
	free(r->v);
	kiln_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

kiln_rc sources_new(const struct sources_fetch_opts *o, struct sources **out, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources *s = kiln_calloc(1, sizeof(*s));
	kiln_rc rc;

	*out = NULL;
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (o->pin && o->sha256_only) {
		free(s);
		return kiln_err_set(err, KILN_EINVAL,
		                    "pinning records sha512: not with sha256_only");
	}
	s->o = *o;
	kiln_arena_init(&s->tmp, KILN_LIMIT_ARENA);
	sources_sums_init(&s->filesums);
	if (o->cache_dir)
		kiln_buf_addstr(&dir, o->cache_dir);
	rc = o->cache_dir ? kiln_buf_finish(&dir, err) : sources_cache_default_dir(&dir, err);
	if (!rc)
		rc = sources_cache_open(&s->cache, dir.ptr, o->cache_max, err);
	if (!rc)
		rc = sources_curl_open(s, err);
	kiln_buf_release(&dir);
	if (rc) {
		sources_free(s);
		return rc;
	}
	*out = s;
	return KILN_OK;
}

void sources_free(struct sources *s)
{
	if (!s)
		return;
	sources_curl_close(s);
	sources_cache_close(&s->cache);
	sources_sums_release(&s->filesums);
	kiln_arena_release(&s->tmp);
	free(s);
}

/* ---- digests ------------------------------------------------------------------------------ */

static const char *digest_of(const struct digests *d, enum util_digest_algo algo)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		if (d->algo[i] == algo)
			return d->hex[i];
	}
	return NULL;
}

/* sha256 names objects; sha512 is what dist-git "sources" files declare, so every
 * download gets both (an alias lets a later lookaside-style lookup by sha512 find it). */
static kiln_rc hashes_start(const struct sources *s, const struct job *j, bool download,
                            struct sources_hashes *h, struct kiln_err *err)
{
	return sources_hashes_init(h, j->sum ? &j->sum->algo : NULL,
	                           (download && !s->o.sha256_only) || (s->o.pin && j->url), err);
}

static kiln_rc hashes_done(struct sources_hashes *h, struct digests *d, struct kiln_err *err)
{
	size_t i;

	d->n = h->n;
	d->size = h->size;
	for (i = 0; i < h->n; i++)
		d->algo[i] = h->d[i].algo;
	return sources_hashes_final(h, d->hex, err);
}

/* Compare with the declared checksum, naming the file, expected and actual digests. */
static kiln_rc check_sum(const struct job *j, const struct digests *d, struct kiln_err *err)
{
	const char *got;

	if (!j->sum)
		return KILN_OK;
	got = digest_of(d, j->sum->algo);
	if (got && !strcmp(got, j->sum->hex))
		return KILN_OK;
	return kiln_err_set(err, KILN_EDIGEST, "%s: %s mismatch: expected %s, got %s", j->file,
	                    util_digest_name(j->sum->algo), j->sum->hex, got ? got : "nothing");
}

static kiln_rc hash_file(const struct sources *s, struct job *j, const char *path,
                         struct kiln_err *err)
{
	struct sources_hashes h;
	size_t cap = 256 * KILN_KIB;
	char *chunk = kiln_malloc(cap);
	kiln_rc rc;
	int fd = -1;

	if (!chunk)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = hashes_start(s, j, false, &h, err);
	if (rc)
		goto out;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	while (!rc) {
		size_t got = 0;

		rc = util_read_full(fd, chunk, cap, &got, err);
		if (rc || !got)
			break;
		sources_hashes_update(&h, chunk, got);
	}
	if (!rc)
		rc = hashes_done(&h, &j->got, err);
	sources_hashes_release(&h);
out:
	util_close(fd);
	free(chunk);
	return rc;
}

/* ---- the steps ----------------------------------------------------------------------------- */

static bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A file already at dest: KILN_OK to use it, KILN_ENOTFOUND to go on fetching. */
static kiln_rc use_local(struct sources *s, struct job *j, struct kiln_err *err)
{
	struct kiln_err why = KILN_ERR_INIT;

	if (!regular_file(j->dest))
		return KILN_ENOTFOUND;
	if (hash_file(s, j, j->dest, err))
		return err->code;
	if (check_sum(j, &j->got, &why)) {
		if (!j->url) {
			kiln_err_merge(err, &why);
			return err->code;
		}
		kiln_warn("%s: %s; fetching it again", j->dest, why.msg);
		return KILN_ENOTFOUND;
	}
	j->origin = SOURCES_ORIGIN_LOCAL;
	j->verified = j->sum != NULL;
	return KILN_OK;
}

/* dest as a hard link to the object at obj (sources_fetch_opts.link_dest). false when it
 * cannot be linked (another file system, or links not allowed): then the caller copies. */
static bool link_object(const char *obj, const char *dest)
{
	if (unlink(dest) < 0 && errno != ENOENT)
		return false;
	return link(obj, dest) == 0;
}

/* Hash the object without copying it (link_dest). */
static kiln_rc hash_object(int fd, struct sources_hashes *h, struct kiln_err *err)
{
	size_t cap = 256 * KILN_KIB, got = 0;
	char *chunk = kiln_malloc(cap);
	kiln_rc rc = KILN_OK;

	if (!chunk)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	do {
		rc = util_read_full(fd, chunk, cap, &got, err);
		if (!rc)
			sources_hashes_update(h, chunk, got);
	} while (!rc && got);
	free(chunk);
	return rc;
}

/* Copy the object to dest, re-hashing it: a cache object whose bytes no longer match its
 * name is removed and treated as a miss (KILN_ENOTFOUND). */
static kiln_rc copy_object(struct sources *s, struct job *j, const char *sha256,
                           struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_hashes h;
	kiln_rc rc;
	int fd = -1;

	sources_cache_object_path(&s->cache, sha256, &p);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = hashes_start(s, j, false, &h, err);
	if (rc)
		goto out;
	fd = open(p.ptr, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = KILN_ENOTFOUND; /* evicted since the lookup */
		goto hashes;
	}
	if (s->o.link_dest) {
		rc = hash_object(fd, &h, err);
		if (!rc && lseek(fd, 0, SEEK_SET) < 0)
			rc = kiln_err_sys(err, KILN_EIO, "cannot rewind '%s'", p.ptr);
		if (!rc && !link_object(p.ptr, j->dest))
			rc = sources_copy_fd(fd, j->dest, NULL, err);
	} else {
		rc = sources_copy_fd(fd, j->dest, &h, err);
	}
	if (!rc)
		rc = hashes_done(&h, &j->got, err);
	if (!rc && strcmp(j->got.hex[0], sha256)) {
		kiln_warn("cache object %s is corrupt: removed", p.ptr);
		unlink(p.ptr);
		unlink(j->dest);
		rc = KILN_ENOTFOUND;
	}
hashes:
	sources_hashes_release(&h);
out:
	util_close(fd);
	kiln_buf_release(&p);
	return rc;
}

/* From the cache: KILN_OK, KILN_ENOTFOUND on a miss, or a real error. */
static kiln_rc use_cache(struct sources *s, struct job *j, struct kiln_err *err)
{
	char sha256[SOURCES_SHA256_HEX];
	struct kiln_err miss = KILN_ERR_INIT;
	kiln_rc rc;

	if (j->sum)
		rc = sources_cache_find_digest(&s->cache, j->sum->algo, j->sum->hex, sha256, &miss);
	else if (j->url)
		rc = sources_cache_find_url(&s->cache, j->url, sha256, &miss);
	else
		return KILN_ENOTFOUND;
	if (rc == KILN_ENOTFOUND)
		return rc;
	if (rc) {
		kiln_err_merge(err, &miss);
		return rc;
	}
	rc = copy_object(s, j, sha256, err);
	if (!rc)
		rc = check_sum(j, &j->got, err);
	if (rc)
		return rc;
	sources_cache_touch(&s->cache, sha256);
	if (j->url && j->sum && sources_cache_index_url(&s->cache, j->url, sha256, &miss))
		kiln_log_err(KILN_LOG_WARN, &miss);
	j->origin = SOURCES_ORIGIN_CACHE;
	j->verified = j->sum != NULL;
	return KILN_OK;
}

/* A fresh object to dest: linked (link_dest) or copied. */
static kiln_rc copy_out(struct sources *s, int fd, const struct job *j, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool linked = false;

	if (s->o.link_dest) {
		sources_cache_object_path(&s->cache, j->got.hex[0], &p);
		linked = !kiln_buf_finish(&p, NULL) && link_object(p.ptr, j->dest);
	}
	kiln_buf_release(&p);
	return linked ? KILN_OK : sources_copy_fd(fd, j->dest, NULL, err);
}

/* Download into tmp/, verify, store, copy out. Called with the URL's lock held. */
static kiln_rc download(struct sources *s, struct job *j, struct kiln_err *err)
{
	struct sources_hashes h;
	char *tmp = NULL;
	kiln_rc rc;
	int fd = -1;

	rc = hashes_start(s, j, true, &h, err);
	if (rc)
		return rc;
	rc = sources_cache_tmp_open(&s->cache, &fd, &tmp, err);
	if (!rc)
		rc = sources_curl_download(s, j->url, fd, &h, err);
	if (!rc)
		rc = hashes_done(&h, &j->got, err);
	if (!rc)
		rc = check_sum(j, &j->got, err);
	if (!rc)
		rc = sources_cache_store(&s->cache, fd, tmp, &h, j->got.hex, j->url, err);
	if (!rc) {
		free(tmp); /* renamed: nothing to clean up */
		tmp = NULL;
		rc = copy_out(s, fd, j, err);
	}
	if (tmp)
		unlink(tmp);
	free(tmp);
	util_close(fd);
	sources_hashes_release(&h);
	if (!rc) {
		j->origin = SOURCES_ORIGIN_NETWORK;
		j->verified = j->sum != NULL;
	}
	return rc;
}

static kiln_rc check_url(const struct job *j, struct kiln_err *err)
{
	struct sources_url u;

	if (sources_url_parse(j->url, strlen(j->url), &u, err))
		return err->code;
	if (u.scheme == SOURCES_URL_OTHER)
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "URL scheme '" KILN_STR_FMT "' is not one kiln fetches "
		                    "(http, https, ftp, ftps, file)",
		                    KILN_STR_ARG(u.scheme_name));
	return KILN_OK;
}

static kiln_rc fetch_remote(struct sources *s, struct job *j, struct kiln_err *err)
{
	int lock = -1;
	kiln_rc rc = check_url(j, err);

	if (rc)
		return rc;
	if (s->o.offline)
		return kiln_err_set(err, KILN_ENOTFOUND,
		                    "offline: %s does not exist and the cache %s has no copy",
		                    j->dest, s->cache.dir);
	rc = sources_cache_lock(&s->cache, "url", j->url, true, &lock, err);
	if (rc)
		return rc;
	/* Another process may have fetched it while this one waited for the lock. */
	rc = use_cache(s, j, err);
	if (rc == KILN_ENOTFOUND)
		rc = download(s, j, err);
	sources_cache_unlock(lock);
	if (!rc && j->origin == SOURCES_ORIGIN_NETWORK)
		sources_cache_enforce(&s->cache);
	return rc;
}

static kiln_rc make_dest_dir(const char *dest, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	util_path_dirname(dest, &dir);
	rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, err);
	kiln_buf_release(&dir);
	return rc;
}

static kiln_rc fetch_job(struct sources *s, struct job *j, struct kiln_err *err)
{
	kiln_rc rc = make_dest_dir(j->dest, err);

	if (!rc)
		rc = use_local(s, j, err);
	if (rc == KILN_ENOTFOUND)
		rc = use_cache(s, j, err);
	if (rc == KILN_ENOTFOUND && j->url)
		rc = fetch_remote(s, j, err);
	else if (rc == KILN_ENOTFOUND)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "%s does not exist%s", j->dest,
		                  j->sum ? " and the cache has no file with its checksum"
		                         : " and the spec gives no URL for it");
	return rc;
}

/* ---- results --------------------------------------------------------------------------- */

static void fill_result(const struct job *j, struct kiln_arena *a, struct sources_result *r)
{
	memset(r, 0, sizeof(*r));
	r->file = kiln_arena_strdup(a, j->file);
	r->url = j->url ? kiln_arena_strdup(a, j->url) : NULL;
	r->path = kiln_arena_strdup(a, j->dest);
	if (j->got.n)
		memcpy(r->sha256, j->got.hex[0], sizeof(r->sha256) - 1);
	r->size = j->got.size;
	r->origin = j->origin;
	r->verified = j->verified;
}

static kiln_rc report_add(struct sources_fetch_report *rep, const struct job *j,
                          const struct spec_source *src, struct kiln_err *err)
{
	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? 2 * rep->cap : 16;
		struct sources_result *v = kiln_reallocarray(rep->v, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		rep->v = v;
		rep->cap = cap;
	}
	fill_result(j, &rep->arena, &rep->v[rep->n]);
	rep->v[rep->n].num = src->num;
	rep->v[rep->n].is_patch = src->is_patch;
	rep->n++;
	return kiln_arena_finish(&rep->arena, err);
}

kiln_rc sources_fetch_url(struct sources *s, const char *url, const struct sources_sum *sum,
                          const char *dest, struct sources_result *res, struct kiln_err *err)
{
	struct job j = {.label = url, .url = url, .dest = dest, .sum = s->o.pin ? NULL : sum};
	struct kiln_buf shown = KILN_BUF_INIT(KILN_LIMIT_URL + 16);
	kiln_rc rc;

	j.file = util_path_basename(dest);
	rc = check_url(&j, err);
	if (!rc)
		rc = fetch_job(s, &j, err);
	if (rc) {
		sources_url_redact(url, &shown);
		kiln_err_wrap(err, "%s", shown.ptr);
	}
	kiln_buf_release(&shown);
	if (!rc && res) {
		kiln_arena_release(&s->tmp);
		kiln_arena_init(&s->tmp, KILN_LIMIT_ARENA);
		fill_result(&j, &s->tmp, res);
		rc = kiln_arena_finish(&s->tmp, err);
	}
	return rc;
}

kiln_rc sources_fetch_fresh(struct sources *s, const char *url, struct kiln_buf *out,
                            struct kiln_err *err)
{
	struct kiln_buf shown = KILN_BUF_INIT(KILN_LIMIT_URL + 16);
	struct job j = {.label = url, .url = url};
	struct sources_hashes h = {0};
	char *tmp = NULL;
	int fd = -1;
	kiln_rc rc;

	rc = check_url(&j, err);
	if (!rc && s->o.offline)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "offline: not fetching it");
	if (!rc)
		rc = sources_hashes_init(&h, NULL, false, err);
	if (!rc)
		rc = sources_cache_tmp_open(&s->cache, &fd, &tmp, err);
	if (!rc)
		rc = sources_curl_download(s, url, fd, &h, err);
	if (!rc && lseek(fd, 0, SEEK_SET) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot rewind '%s'", tmp);
	if (!rc)
		rc = util_read_fd(fd, out, err);
	if (tmp)
		unlink(tmp);
	free(tmp);
	util_close(fd);
	sources_hashes_release(&h);
	if (rc) {
		sources_url_redact(url, &shown);
		kiln_err_wrap(err, "%s", shown.ptr);
	}
	kiln_buf_release(&shown);
	return rc;
}

/* ---- a whole spec ---------------------------------------------------------------------- */

static bool has_scheme(const char *url)
{
	struct kiln_err e = KILN_ERR_INIT;
	struct sources_url u;

	return !sources_url_parse(url, strlen(url), &u, &e) ? u.scheme != SOURCES_URL_NONE
	                                                    : strstr(url, "://") != NULL;
}

static kiln_rc sums_path(const struct sources *s, const struct spec *spec, struct kiln_buf *out,
                         struct kiln_err *err)
{
	if (s->o.sums_file) {
		kiln_buf_addstr(out, s->o.sums_file);
	} else {
		util_path_dirname(spec->path ? spec->path : ".", out);
		kiln_buf_addstr(out, "/sources");
	}
	return kiln_buf_finish(out, err);
}

static kiln_rc load_sums(struct sources *s, const char *path, struct kiln_err *err)
{
	kiln_rc rc;

	sources_sums_release(&s->filesums);
	sources_sums_init(&s->filesums);
	rc = sources_sums_read(&s->filesums, path, err);
	/* No "sources" beside the spec: nothing declared. A file named by the caller must
	 * exist, unless --pin is about to write it. */
	if (rc == KILN_ENOTFOUND && (!s->o.sums_file || s->o.pin)) {
		kiln_err_clear(err);
		return KILN_OK;
	}
	return rc;
}

static const struct sources_sum *declared(const struct sources *s, const char *file)
{
	const struct sources_sum *sum = sources_sums_find(s->o.sums, file);

	if (s->o.pin)
		return NULL;
	return sum ? sum : sources_sums_find(&s->filesums, file);
}

/* NAME-VERSION.tar.gz of a spec built from git, made from the commit. */
static bool git_tarball_wanted(const struct sources *s, const struct spec *spec,
                               const struct job *j, char *prefix, size_t size)
{
	const char *name, *version;
	int n;

	if (j->url || !s->o.git_url || !s->o.git_commit || !spec->npackages)
		return false;
	name = rpmtag_set_get_str(spec->packages[0]->tags, RPMTAG_NAME);
	version = rpmtag_set_get_str(spec->packages[0]->tags, RPMTAG_VERSION);
	if (!name || !version)
		return false;
	n = snprintf(prefix, size, "%s-%s", name, version);
	if (n < 0 || (size_t)n + 8 >= size)
		return false;
	return strlen(j->file) == (size_t)n + 7 && !strncmp(j->file, prefix, (size_t)n) &&
	       !strcmp(j->file + n, ".tar.gz");
}

static kiln_rc make_git_tarball(struct sources *s, struct job *j, const char *prefix,
                                struct kiln_err *err)
{
	char dir[520];
	kiln_rc rc;

	snprintf(dir, sizeof(dir), "%.512s/", prefix);
	kiln_err_clear(err);
	rc = sources_git_tarball(s, s->o.git_url, s->o.git_commit, dir, j->dest, err);
	if (!rc)
		rc = hash_file(s, j, j->dest, err);
	if (!rc)
		rc = check_sum(j, &j->got, err);
	if (!rc) {
		j->origin = SOURCES_ORIGIN_GIT;
		j->verified = j->sum != NULL;
	}
	return rc;
}

static kiln_rc fetch_source(struct sources *s, const struct spec *spec,
                            const struct spec_source *src, struct sources_fetch_report *rep,
                            struct sources_sums *pins, struct kiln_err *err)
{
	char label[32], prefix[512];
	struct job j = {.label = label, .file = src->file, .dest = src->path};
	kiln_rc rc;

	snprintf(label, sizeof(label), "%s%" PRIu32, src->is_patch ? "Patch" : "Source", src->num);
	j.url = has_scheme(src->url) ? src->url : NULL;
	j.sum = declared(s, src->file);
	rc = fetch_job(s, &j, err);
	if (rc == KILN_ENOTFOUND && git_tarball_wanted(s, spec, &j, prefix, sizeof(prefix)))
		rc = make_git_tarball(s, &j, prefix, err);
	if (!rc && s->o.pin && j.url)
		rc = sources_sums_set(pins, j.file, UTIL_DIGEST_SHA512,
		                      digest_of(&j.got, UTIL_DIGEST_SHA512), err);
	if (rc) {
		struct kiln_buf shown = KILN_BUF_INIT(KILN_LIMIT_URL + 16);

		if (j.url)
			sources_url_redact(j.url, &shown);
		kiln_err_wrap(err, "%s%s%s%s", label, j.url ? " (" : "", j.url ? shown.ptr : "",
		              j.url ? ")" : "");
		kiln_buf_release(&shown);
		return rc;
	}
	kiln_debug("%s: %s (%s)", label, j.dest,
	           j.origin == SOURCES_ORIGIN_LOCAL   ? "present"
	           : j.origin == SOURCES_ORIGIN_CACHE ? "from the cache"
	           : j.origin == SOURCES_ORIGIN_GIT   ? "made from git"
	                                              : "downloaded");
	return rep ? report_add(rep, &j, src, err) : KILN_OK;
}

static kiln_rc write_pins(struct sources_sums *pins, const char *path, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_SUMFILE);
	kiln_rc rc;

	sources_sums_format(pins, &text);
	rc = kiln_buf_finish(&text, err);
	if (!rc)
		rc = util_write_atomic(path, text.ptr, text.len, 0644, err);
	kiln_buf_release(&text);
	return rc;
}

kiln_rc sources_fetch_spec(struct sources *s, const struct spec *spec,
                           struct sources_fetch_report *rep, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_sums pins;
	kiln_rc rc;
	size_t i;

	sources_sums_init(&pins);
	rc = sums_path(s, spec, &path, err);
	if (!rc)
		rc = load_sums(s, path.ptr, err);
	if (!rc && s->o.pin) {
		/* --pin keeps the entries of files the spec no longer fetches from a URL. */
		rc = sources_sums_read(&pins, path.ptr, err);
		if (rc == KILN_ENOTFOUND) {
			kiln_err_clear(err);
			rc = KILN_OK;
		}
	}
	for (i = 0; !rc && i < spec->nsources; i++)
		rc = fetch_source(s, spec, &spec->sources[i], rep, &pins, err);
	if (!rc && s->o.pin)
		rc = write_pins(&pins, path.ptr, err);
	sources_sums_release(&pins);
	kiln_buf_release(&path);
	return rc;
}

kiln_rc sources_fetch(const struct spec *spec, const struct sources_fetch_opts *o,
                      struct sources_fetch_report *rep, struct kiln_err *err)
{
	struct sources *s = NULL;
	kiln_rc rc = sources_new(o, &s, err);

	if (!rc)
		rc = sources_fetch_spec(s, spec, rep, err);
	sources_free(s);
	return rc;
}

/* ---- a checkout for a build from git ------------------------------------------------------ */

/* The one *.spec at the top of dir. */
static kiln_rc find_spec(const char *dir, struct kiln_buf *out, struct kiln_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return kiln_err_sys(err, KILN_EIO, "cannot read '%s'", dir);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".spec") && !found++)
			kiln_buf_addf(out, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (found != 1)
		return kiln_err_set(err, KILN_ENOTFOUND,
		                    "%s: %s spec file at the top of the repository; name one", dir,
		                    found ? "more than one" : "no");
	return kiln_buf_finish(out, err);
}

kiln_rc sources_checkout(struct sources *s, const char *url, const char *ref, const char *dir,
                         const char *spec_rel, struct sources_git_rev *rev,
                         struct kiln_buf *dir_abs, struct kiln_buf *spec_path, struct kiln_err *err)
{
	char abs[PATH_MAX];
	kiln_rc rc = sources_git_resolve(s, url, ref, rev, err);

	if (!rc)
		rc = sources_git_export(s, url, rev->commit, dir, err);
	if (!rc && !realpath(dir, abs))
		rc = kiln_err_sys(err, KILN_EIO, "cannot resolve '%s'", dir);
	if (rc)
		return rc;
	kiln_buf_addstr(dir_abs, abs);
	rc = kiln_buf_finish(dir_abs, err);
	if (!rc && spec_rel)
		rc = util_path_join(abs, spec_rel, spec_path, err);
	else if (!rc)
		rc = find_spec(abs, spec_path, err);
	if (!rc && !regular_file(spec_path->ptr))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no spec '%s' in %s of '%s'",
		                  spec_rel ? spec_rel : "?", rev->commit, url);
	if (!rc) {
		s->o.git_url = url;
		s->o.git_commit = rev->commit;
	}
	return rc;
}
