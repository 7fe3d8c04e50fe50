/*
 * make.c - a root for a build, in one call: resolve the configuration's base set plus a
 * spec's build dependencies (or take a lock given back, checked against the repositories),
 * then the image of that lock from the image cache, made once (packages fetched verified,
 * installed in rpm's order) when missing. `kiln build --root CONFIG` and `kiln root
 * create|shell` go through it.
 */
#include "util/util.h"

#include "sources/sources.h"
#include "spec/spec.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

#include <errno.h>

void roots_make_opts_init(struct roots_make_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->log_fd = -1;
}

/* ---- the resolution cache --------------------------------------------------------------- */

/* A lock is a function of the configuration's resolution settings, every repository's
 * metadata, the requests and the resolver. repomd.xml names every other metadata file by
 * its checksum, so its sha256 (taken after its signature is checked, which happens on
 * every call) stands for the repository: while no repomd.xml changed, the same requests
 * give the same lock, and reading primary, loading libsolv and solving again can be
 * skipped. The format line changes with kiln's version: a new resolver re-resolves. */
#define RESOLVED_FORMAT "kiln-resolved 1 " KILN_VERSION
#define RESOLVED_KEY_MAX (64 * KILN_MIB)

/* Length-prefixed, so no value can pass for another field. */
static void key_field(struct kiln_buf *b, const char *tag, const char *v)
{
	kiln_buf_addf(b, "%s %zu:%s\n", tag, strlen(v), v);
}

static void key_deps(struct kiln_buf *b, const char *tag, const struct spec_deps *d)
{
	size_t i;

	for (i = 0; d && i < d->n; i++) {
		kiln_buf_addf(b, "%s %" PRIu32 "\n", tag, d->v[i].flags);
		key_field(b, "name", d->v[i].name);
		key_field(b, "evr", d->v[i].evr ? d->v[i].evr : "");
	}
}

static void key_repos(struct kiln_buf *b, const struct roots_config *c,
                      const struct roots_repos *rp)
{
	size_t i;

	for (i = 0; i < c->nrepos; i++) {
		const struct roots_repo_config *r = &c->repos[i];

		key_field(b, "repo", r->name);
		key_field(b, "baseurl", r->baseurl);
		key_field(b, "gpgkey", r->gpgkey ? r->gpgkey : "");
		kiln_buf_addf(b, "checks %d %d priority %d\n", r->gpgcheck, r->repo_gpgcheck,
		              r->priority);
		key_field(b, "repomd", roots_repos_repomd_sha256(rp, i));
	}
}

/* CACHE/roots/resolved/KEY.json for this resolution (or, with lock_id, this check of a
 * lock given back), appended to path. */
static kiln_rc resolved_path(const char *cache, const struct roots_config *c,
                             const struct roots_repos *rp, const struct spec_deps *deps,
                             const struct spec_deps *conflicts, const struct roots_make_opts *o,
                             const char *lock_id, struct kiln_buf *path, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(RESOLVED_KEY_MAX);
	char key[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc;
	size_t i;

	key_field(&b, "format", RESOLVED_FORMAT);
	key_field(&b, "arch", c->arch);
	kiln_buf_addf(&b, "weak_deps %d\n", c->weak_deps);
	for (i = 0; i < c->ninstall; i++)
		key_field(&b, "install", c->install[i]);
	for (i = 0; i < o->nextra; i++)
		key_field(&b, "extra", o->extra[i]);
	key_repos(&b, c, rp);
	key_deps(&b, "requires", deps);
	key_deps(&b, "conflicts", conflicts);
	if (lock_id)
		key_field(&b, "check", lock_id);
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, b.ptr, b.len, key, err);
	if (!rc) {
		kiln_buf_addf(path, "%s/roots/resolved/%s.json", cache, key);
		rc = kiln_buf_finish(path, err);
	}
	kiln_buf_release(&b);
	return rc;
}

/* The cached lock at path, when there is one for c's arch (and, checking, the same as
 * lock): true with it in lock. Anything unreadable is a miss (and is written again). */
static bool resolved_lookup(const char *path, const struct roots_config *c, bool checking,
                            struct roots_lock *lock)
{
	struct kiln_buf data = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_lock got;
	bool hit = false;

	roots_lock_init(&got);
	if (util_read_file(path, ROOTS_LOCK_MAX_BYTES, &data, &err)) {
		if (err.sys_errno != ENOENT)
			kiln_log_err(KILN_LOG_WARN, &err);
	} else if (roots_lock_from_mem(&got, path, data.ptr, data.len, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
	} else if (!strcmp(got.arch, c->arch) && (!checking || !strcmp(got.id, lock->id))) {
		hit = true;
		if (!checking) {
			roots_lock_release(lock);
			*lock = got; /* the arena's blocks move with it */
			roots_lock_init(&got);
		}
	}
	roots_lock_release(&got);
	kiln_buf_release(&data);
	return hit;
}

/* Keep the lock for the next call; failing to is only a warning (it re-resolves). */
static void resolved_store(const char *path, const struct roots_lock *lock)
{
	struct kiln_buf out = KILN_BUF_INIT(2 * ROOTS_LOCK_MAX_BYTES);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc;

	roots_lock_write(lock, &out);
	kiln_buf_add(&dir, path, (size_t)(strrchr(path, '/') - path));
	rc = kiln_buf_finish(&out, &err);
	if (!rc)
		rc = kiln_buf_finish(&dir, &err);
	if (!rc)
		rc = util_mkdir_p(dir.ptr, 0755, &err);
	/* no fsync: a file lost in a crash is a miss, a torn one does not parse */
	if (!rc)
		rc = util_write_atomic_nosync(path, out.ptr, out.len, 0644, &err);
	if (rc)
		kiln_log_err(KILN_LOG_WARN, &err);
	kiln_buf_release(&dir);
	kiln_buf_release(&out);
}

static kiln_rc cache_dir_get(const struct roots_make_opts *o, struct kiln_buf *out,
                             struct kiln_err *err)
{
	if (!o->cache_dir)
		return sources_cache_default_dir(out, err);
	kiln_buf_addstr(out, o->cache_dir);
	return kiln_buf_finish(out, err);
}

/* ---- resolving ------------------------------------------------------------------------ */

static kiln_rc lock_resolve(const struct roots_config *c, struct roots_pool *pool,
                            const struct spec_deps *deps, const struct spec_deps *conflicts,
                            const struct roots_make_opts *o, struct roots_lock *lock,
                            struct kiln_err *err)
{
	const char **req = kiln_calloc(c->ninstall + o->nextra + 1, sizeof(*req));
	kiln_rc rc;

	if (!req)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (c->ninstall)
		memcpy(req, c->install, c->ninstall * sizeof(*req));
	if (o->nextra)
		memcpy(req + c->ninstall, o->extra, o->nextra * sizeof(*req));
	rc = roots_pool_resolve(pool, req, c->ninstall + o->nextra, deps, conflicts, lock, err);
	free(req);
	/* libsolv's problems, as dnf prints them, name the packages */
	if (rc && roots_pool_problems(pool)[0] && o->log_fd >= 0 &&
	    util_write_all(o->log_fd, roots_pool_problems(pool), strlen(roots_pool_problems(pool)),
	                   NULL))
		kiln_log(KILN_LOG_DEBUG, "cannot write libsolv's problems");
	return rc;
}

/* Load the repositories' metadata into a new pool and resolve (or check the lock). */
static kiln_rc lock_solve(const struct roots_config *c, struct roots_repos *rp,
                          const struct spec_deps *deps, const struct spec_deps *conflicts,
                          const struct roots_make_opts *o, struct roots_lock *lock,
                          struct kiln_err *err)
{
	struct roots_pool *pool = NULL;
	kiln_rc rc;

	rc = roots_pool_new(c->arch, c->weak_deps, &pool, err);
	if (!rc)
		rc = roots_repos_load(rp, pool, deps, err);
	if (!rc)
		rc = o->lock_path ? roots_lock_check(pool, lock, err)
		                  : lock_resolve(c, pool, deps, conflicts, o, lock, err);
	roots_pool_free(pool);
	return rc;
}

static void say_cached(const struct roots_config *c, const struct roots_make_opts *o,
                       const struct roots_lock *lock)
{
	char line[256];
	int n;

	if (o->log_fd < 0)
		return;
	n = snprintf(line, sizeof(line),
	             "root %s: lock %s from the resolution cache (repositories unchanged)\n",
	             c->name, lock->id);
	if (n > 0 && util_write_all(o->log_fd, line, (size_t)n, NULL))
		kiln_log(KILN_LOG_DEBUG, "cannot write to the log");
}

kiln_rc roots_lock_get(const struct roots_config *c, const struct spec_deps *deps,
                       const struct spec_deps *conflicts, const struct roots_make_opts *o,
                       struct roots_lock *lock, struct kiln_err *err)
{
	struct roots_fetch_opts fo = {.cache_dir = o->cache_dir, .offline = o->offline};
	struct kiln_buf cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct roots_repos *rp = NULL;
	kiln_rc rc = KILN_OK;

	fo.progress = o->progress;
	if (o->lock_path)
		rc = roots_lock_read(lock, o->lock_path, err);
	/* every repomd.xml is read and its signature checked, cached or not */
	if (!rc)
		rc = roots_repos_open(c, &fo, &rp, err);
	if (!rc)
		rc = cache_dir_get(o, &cache, err);
	if (!rc)
		rc = resolved_path(cache.ptr, c, rp, deps, conflicts, o,
		                   o->lock_path ? lock->id : NULL, &path, err);
	if (!rc && resolved_lookup(path.ptr, c, o->lock_path != NULL, lock)) {
		say_cached(c, o, lock);
		goto out;
	}
	if (!rc)
		rc = lock_solve(c, rp, deps, conflicts, o, lock, err);
	if (!rc)
		resolved_store(path.ptr, lock);
out:
	roots_repos_free(rp);
	kiln_buf_release(&path);
	kiln_buf_release(&cache);
	return rc;
}

struct image_make {
	const struct roots_config *c;
	const struct roots_lock *lock;
	const struct roots_make_opts *o;
};

/* Fetch the lock's packages (verified) into a scratch directory beside the image being
 * made, install them, and drop the copies. */
static kiln_rc image_make(void *arg, const char *root, struct kiln_err *err)
{
	struct image_make *m = arg;
	struct roots_fetch_opts fo = {.cache_dir = m->o->cache_dir, .offline = m->o->offline};
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err cerr = KILN_ERR_INIT;
	struct roots_install_report rep = {0};
	struct roots_install_opts io;
	char **paths = kiln_calloc(m->lock->n ? m->lock->n : 1, sizeof(*paths));
	kiln_rc rc = paths ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	int64_t fetch_ns = util_clock_mono_ns();
	size_t i;

	fo.progress = m->o->progress;
	kiln_buf_addf(&dir, "%s.packages", root);
	if (!rc)
		rc = kiln_buf_finish(&dir, err);
	if (!rc)
		rc = roots_lock_fetch(m->c, m->lock, &fo, dir.ptr, paths, err);
	fetch_ns = util_clock_mono_ns() - fetch_ns;
	roots_install_opts_init(&io);
	io.log_fd = m->o->log_fd;
	io.state_dir = m->o->state_dir;
	io.flags = m->o->install_flags;
	if (!rc)
		rc = roots_install(root, (const char *const *)paths, m->lock->n, &io, &rep, err);
	if (!rc && m->o->log_fd >= 0) {
		char line[512];
		int n = snprintf(line, sizeof(line),
		                 "root %s: installed %zu packages, %zu files, %zu scriptlets, "
		                 "%zu warnings (fetch %.2f s, read %.2f s, unpack %.2f s, "
		                 "scriptlets %.2f s, rpm database %.2f s)\n",
		                 m->c->name, rep.packages, rep.files, rep.scriptlets, rep.warnings,
		                 (double)fetch_ns / 1e9, (double)rep.load_ns / 1e9,
		                 (double)rep.unpack_ns / 1e9, (double)rep.scriptlet_ns / 1e9,
		                 (double)rep.rpmdb_ns / 1e9);

		if (n > 0 && util_write_all(m->o->log_fd, line, (size_t)n, NULL))
			kiln_log(KILN_LOG_DEBUG, "cannot write the install summary");
	}
	for (i = 0; paths && i < m->lock->n; i++)
		free(paths[i]);
	free(paths);
	if (dir.len && util_rm_rf(dir.ptr, &cerr))
		kiln_log_err(KILN_LOG_WARN, &cerr);
	kiln_buf_release(&dir);
	return rc;
}

kiln_rc roots_root_get(const struct roots_config *c, const struct spec_deps *deps,
                       const struct spec_deps *conflicts, const struct roots_make_opts *o,
                       struct roots_lock *lock, struct roots_image *img, struct kiln_err *err)
{
	struct kiln_buf cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct image_make m = {c, lock, o};
	kiln_rc rc;

	/* the fetcher's libraries are opened by roots/ when it fetches (roots_sources_open) */
	rc = roots_lock_get(c, deps, conflicts, o, lock, err);
	if (!rc)
		rc = cache_dir_get(o, &cache, err);
	if (!rc)
		rc = roots_image_get(cache.ptr, lock->id, image_make, &m, img, err);
	if (rc)
		kiln_err_wrap(err, "root %s", c->name);
	kiln_buf_release(&cache);
	return rc;
}
