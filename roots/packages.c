/*
 * packages.c - a lock's packages made present and verified, and a source package's build
 * dependencies.
 *
 * Each package is asked of the source cache by the sha256 the lock holds (which came from
 * signed metadata), so a package whose bytes changed is refused by sources/ before it is
 * ever opened; then, for repositories with gpgcheck, sign/ checks its header signature
 * against the repository's gpgkey the way rpm -K does, and an unsigned package is as bad
 * as a badly signed one. Nothing is handed to the installer before both checks pass.
 */
#include "util/util.h"

#include <pthread.h>
#include <stdatomic.h>

#include "rpmtag/rpmtag.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "sign/sign.h"
#include "sources/sources.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

static const struct roots_repo_config *repo_of(const struct roots_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nrepos; i++)
		if (!strcmp(c->repos[i].name, name))
			return &c->repos[i];
	return NULL;
}

static kiln_rc check_signature(const struct sign_keyring *kr, const struct roots_lock_pkg *pkg,
                               const char *path, struct kiln_err *err)
{
	struct sign_check *chk = kiln_malloc(sizeof(*chk));
	kiln_rc rc;
	size_t i;

	if (!chk)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = sign_package_check(kr, path, SIGN_CHECK_REQUIRE_SIGNATURE, chk, err);
	for (i = 0; !rc && !chk->ok && i < chk->n; i++) {
		const struct sign_check_item *it = &chk->items[i];

		if (it->status != SIGN_ITEM_OK)
			rc = kiln_err_set(err, KILN_ESIG, "%s: %s%s%s", it->what,
			                  sign_item_status_name(it->status),
			                  it->detail[0] ? ": " : "", it->detail);
	}
	if (!rc && !chk->ok)
		rc = kiln_err_set(err, KILN_ESIG, "no good signature");
	if (rc)
		kiln_err_wrap(err, "package %s-%s-%s.%s from repository %s", pkg->name,
		              pkg->version, pkg->release, pkg->arch, pkg->repo);
	free(chk);
	return rc;
}

static kiln_rc fetch_one(struct sources *s, const struct roots_repo_config *r,
                         const struct roots_lock_pkg *pkg, const char *dest_dir, char **path,
                         struct kiln_err *err)
{
	struct kiln_buf url = KILN_BUF_INIT(KILN_LIMIT_URL + KILN_LIMIT_PATH);
	struct kiln_buf dest = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_sum sum = {.file = util_path_basename(pkg->location),
	                          .algo = UTIL_DIGEST_SHA256};
	kiln_rc rc;

	memcpy(sum.hex, pkg->sha256, sizeof(pkg->sha256));
	kiln_buf_addf(&url, "%s/%s", r->baseurl, pkg->location);
	/* Named by repository and file name: two repositories may hold files of one name. */
	kiln_buf_addf(&dest, "%s/%s/%s", dest_dir, r->name, util_path_basename(pkg->location));
	rc = kiln_buf_finish(&url, err);
	if (!rc)
		rc = kiln_buf_finish(&dest, err);
	if (!rc)
		rc = sources_fetch_url(s, url.ptr, &sum, dest.ptr, NULL, err);
	if (rc)
		kiln_err_wrap(err, "package %s-%s-%s.%s", pkg->name, pkg->version, pkg->release,
		              pkg->arch);
	if (!rc) {
		*path = kiln_buf_take(&dest, NULL);
		if (!*path)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	kiln_buf_release(&dest);
	kiln_buf_release(&url);
	return rc;
}

/* Fetching and verifying a lock's packages is hashing and signature checks with some I/O, one
 * package independent of the next: FETCH_JOBS threads share the list, each with its own
 * source-cache handle (the cache takes concurrent users: several workers share one). */
#define FETCH_JOBS 2

struct fetch_batch {
	const struct roots_config *c;
	const struct roots_lock *l;
	const struct roots_fetch_opts *o;
	const char *dest_dir;
	struct sign_keyring **krs; /* per repository, loaded before the threads start */
	char **paths;
	atomic_size_t next;
	atomic_bool failed;
	pthread_mutex_t mu;    /* guards first */
	struct kiln_err first; /* the failure of the package earliest in the lock */
	size_t first_i;
};

static kiln_rc fetch_verify_one(struct fetch_batch *b, struct sources *s, size_t i,
                                struct kiln_err *err)
{
	const struct roots_lock_pkg *pkg = &b->l->pkgs[i];
	const struct roots_repo_config *r = repo_of(b->c, pkg->repo);
	kiln_rc rc;

	rc = fetch_one(s, r, pkg, b->dest_dir, &b->paths[i], err);
	if (!rc && r->gpgcheck)
		rc = check_signature(b->krs[r - b->c->repos], pkg, b->paths[i], err);
	return rc;
}

static void fetch_failed(struct fetch_batch *b, size_t i, const struct kiln_err *err)
{
	pthread_mutex_lock(&b->mu);
	if (!atomic_load(&b->failed) || i < b->first_i) {
		b->first = *err;
		b->first_i = i;
	}
	atomic_store(&b->failed, true);
	pthread_mutex_unlock(&b->mu);
}

static void *fetch_worker(void *arg)
{
	struct fetch_batch *b = arg;
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *s = NULL;
	size_t i;

	if (roots_sources_open(b->o, &s, &err)) {
		fetch_failed(b, 0, &err);
		return NULL;
	}
	while (!atomic_load(&b->failed) && (i = atomic_fetch_add(&b->next, 1)) < b->l->n) {
		kiln_err_clear(&err);
		if (fetch_verify_one(b, s, i, &err))
			fetch_failed(b, i, &err);
	}
	sources_free(s);
	return NULL;
}

/* Every locked package's repository is in the configuration; keys loaded for those with
 * gpgcheck. */
static kiln_rc fetch_prepare(struct fetch_batch *b, struct kiln_err *err)
{
	struct sources *s = NULL;
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < b->l->n; i++) {
		const struct roots_lock_pkg *pkg = &b->l->pkgs[i];
		const struct roots_repo_config *r = repo_of(b->c, pkg->repo);
		size_t ri;

		if (!r) {
			rc = kiln_err_set(
			    err, KILN_ENOTFOUND,
			    "locked package %s comes from repository '%s', which the root "
			    "configuration does not have",
			    pkg->name, pkg->repo);
			break;
		}
		ri = (size_t)(r - b->c->repos);
		if (!r->gpgcheck || b->krs[ri])
			continue;
		if (!s)
			rc = roots_sources_open(b->o, &s, err);
		if (!rc)
			rc = roots_keyring_load(s, r, &b->krs[ri], err);
	}
	sources_free(s);
	return rc;
}

kiln_rc roots_lock_fetch(const struct roots_config *c, const struct roots_lock *l,
                         const struct roots_fetch_opts *o, const char *dest_dir, char **paths,
                         struct kiln_err *err)
{
	struct fetch_batch b = {.c = c, .l = l, .o = o, .dest_dir = dest_dir, .paths = paths};
	pthread_t tid[FETCH_JOBS];
	unsigned started = 0, i;
	kiln_rc rc;

	for (i = 0; i < l->n; i++)
		paths[i] = NULL;
	atomic_init(&b.next, 0);
	atomic_init(&b.failed, false);
	kiln_err_clear(&b.first);
	b.krs = kiln_calloc(c->nrepos ? c->nrepos : 1, sizeof(*b.krs));
	if (!b.krs)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pthread_mutex_init(&b.mu, NULL);
	/* libcurl's global set-up once, here, rather than first in two threads at once */
	rc = sources_global_init(err);
	if (!rc)
		rc = util_mkdir_p(dest_dir, 0755, err);
	if (!rc)
		rc = fetch_prepare(&b, err);
	/* The calling thread is one of the workers. */
	for (i = 1; !rc && i < FETCH_JOBS && i < l->n; i++)
		if (!pthread_create(&tid[started], NULL, fetch_worker, &b))
			started++;
	if (!rc)
		fetch_worker(&b);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (!rc && atomic_load(&b.failed)) {
		*err = b.first;
		rc = err->code;
	}
	if (rc)
		for (i = 0; i < l->n; i++) {
			free(paths[i]);
			paths[i] = NULL;
		}
	for (i = 0; i < c->nrepos; i++)
		sign_keyring_free(b.krs[i]);
	free(b.krs);
	pthread_mutex_destroy(&b.mu);
	return rc;
}

/* ---- a source package's build dependencies ------------------------------------------------ */

static kiln_rc add_deps(const struct pack_header *h, uint32_t ntag, uint32_t ftag, uint32_t vtag,
                        struct kiln_arena *a, struct spec_deps *out, struct kiln_err *err)
{
	const struct pack_entry *n = pack_header_get(h, ntag);
	const struct pack_entry *f = pack_header_get(h, ftag);
	const struct pack_entry *v = pack_header_get(h, vtag);
	const char *const *names, *const *vers;
	uint32_t i, flags;

	if (!n)
		return KILN_OK;
	if (n->type != RPMTAG_TYPE_STRING_ARRAY || !f || f->type != RPMTAG_TYPE_INT32 || !v ||
	    v->type != RPMTAG_TYPE_STRING_ARRAY || f->count != n->count || v->count != n->count)
		return kiln_err_set(err, KILN_EFORMAT, "tag %" PRIu32 ": malformed dependencies",
		                    ntag);
	out->v = kiln_arena_array(a, n->count ? n->count : 1, sizeof(*out->v));
	if (!out->v)
		return kiln_arena_finish(a, err);
	/* String arrays are held as arrays of pointers (rpmtag_qf_value's layout). */
	names = n->data;
	vers = v->data;
	for (i = 0; i < n->count; i++) {
		flags = ((const uint32_t *)f->data)[i];
		if (!(flags & RPMTAG_DEP_RPMLIB) && strncmp(names[i], "rpmlib(", 7)) {
			struct spec_dep *d = &out->v[out->n++];

			d->name = names[i];
			d->evr = vers[i];
			d->flags = flags;
		}
	}
	out->cap = out->n;
	return KILN_OK;
}

kiln_rc roots_srpm_deps(const char *path, struct kiln_arena *a, struct spec_deps *deps,
                        struct spec_deps *conflicts, struct kiln_err *err)
{
	struct pack_package p = {0};
	kiln_rc rc;

	rc = pack_package_open(&p, path, NULL, err);
	if (!rc && !p.source)
		rc = kiln_err_set(err, KILN_EINVAL, "%s is not a source package", path);
	if (!rc)
		rc = add_deps(&p.hdr, RPMTAG_REQUIRENAME, RPMTAG_REQUIREFLAGS,
		              RPMTAG_REQUIREVERSION, a, deps, err);
	if (!rc)
		rc = add_deps(&p.hdr, RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTFLAGS,
		              RPMTAG_CONFLICTVERSION, a, conflicts, err);
	/* The strings point into the header's arena: copy them out before it goes. */
	for (size_t k = 0; !rc && k < 2; k++) {
		struct spec_deps *d = k ? conflicts : deps;

		for (size_t i = 0; i < d->n; i++) {
			d->v[i].name = kiln_arena_strdup(a, d->v[i].name);
			d->v[i].evr = kiln_arena_strdup(a, d->v[i].evr);
		}
		rc = kiln_arena_finish(a, err);
	}
	if (rc)
		kiln_err_locate(err, path, 0, 0);
	pack_package_release(&p);
	return rc;
}
