/*
 * make.c - a root for a build, in one call: resolve the configuration's base set plus a
 * spec's build dependencies (or take a lock given back, checked against the repositories),
 * then the image of that lock from the image cache, made once (packages fetched verified,
 * installed in rpm's order) when missing. `kiln build --root CONFIG` and `kiln root
 * create|shell` go through it.
 */
#include "util/util.h"

#include "sources/sources.h"
#include "roots/roots.h"

void roots_make_opts_init(struct roots_make_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->log_fd = -1;
}

kiln_rc roots_lock_get(const struct roots_config *c, const struct spec_deps *deps,
                       const struct spec_deps *conflicts, const struct roots_make_opts *o,
                       struct roots_lock *lock, struct kiln_err *err)
{
	struct roots_fetch_opts fo = {.cache_dir = o->cache_dir, .offline = o->offline};
	struct roots_pool *pool = NULL;
	kiln_rc rc;

	fo.progress = o->progress;
	rc = roots_pool_new(c->arch, c->weak_deps, &pool, err);
	if (!rc)
		rc = roots_pool_load(pool, c, &fo, deps, err);
	if (!rc && o->lock_path) {
		rc = roots_lock_read(lock, o->lock_path, err);
		if (!rc)
			rc = roots_lock_check(pool, lock, err);
	} else if (!rc) {
		const char **req = kiln_calloc(c->ninstall + o->nextra + 1, sizeof(*req));

		if (!req)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		if (req) {
			if (c->ninstall)
				memcpy(req, c->install, c->ninstall * sizeof(*req));
			if (o->nextra)
				memcpy(req + c->ninstall, o->extra, o->nextra * sizeof(*req));
			rc = roots_pool_resolve(pool, req, c->ninstall + o->nextra, deps, conflicts,
			                        lock, err);
		}
		free(req);
		/* libsolv's problems, as dnf prints them, name the packages */
		if (rc && roots_pool_problems(pool)[0] && o->log_fd >= 0 &&
		    util_write_all(o->log_fd, roots_pool_problems(pool),
		                   strlen(roots_pool_problems(pool)), NULL))
			kiln_log(KILN_LOG_DEBUG, "cannot write libsolv's problems");
	}
	roots_pool_free(pool);
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

	rc = sources_global_init(err);
	if (!rc)
		rc = roots_lock_get(c, deps, conflicts, o, lock, err);
	if (!rc && o->cache_dir)
		kiln_buf_addstr(&cache, o->cache_dir);
	if (!rc)
		rc = o->cache_dir ? kiln_buf_finish(&cache, err)
		                  : sources_cache_default_dir(&cache, err);
	if (!rc)
		rc = roots_image_get(cache.ptr, lock->id, image_make, &m, img, err);
	if (rc)
		kiln_err_wrap(err, "root %s", c->name);
	kiln_buf_release(&cache);
	return rc;
}
