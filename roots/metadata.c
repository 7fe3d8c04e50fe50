/*
 * metadata.c - a root configuration's repositories into a pool: repomd.xml read fresh and
 * its signature checked, then primary, comps and (when needed) filelists through the
 * content-addressed source cache.
 *
 * Why this order is safe: repomd.xml is the only file taken on trust, and only after
 * sign/ has checked repomd.xml.asc against the repository's gpgkey (repo_gpgcheck, on by
 * default). Every other file is asked of the cache by the checksum repomd.xml gives, and
 * sources/ refuses bytes that do not match it, so a tampered primary.xml never reaches
 * libsolv. Decompression is bounded by ROOTS_METADATA_MAX_BYTES (and the open-size
 * repomd.xml promises).
 */
#include "util/util.h"

#include "pack/pack.h"
#include "sign/sign.h"
#include "sources/sources.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

#include <unistd.h>

kiln_rc roots_url_read(struct sources *s, const char *url, size_t max, struct kiln_buf *out,
                       struct kiln_err *err)
{
	kiln_rc rc;

	out->max = max;
	/* A local repository is read where it is: no copy, and it works offline. */
	if (!strncmp(url, "file://", 7)) {
		if (strchr(url, '%'))
			return kiln_err_set(err, KILN_EUNSUPP,
			                    "'%s': escaped file URLs are not supported", url);
		rc = util_read_file(url + 7, max, out, err);
		if (rc == KILN_EIO && err && err->sys_errno == ENOENT)
			err->code = rc = KILN_ENOTFOUND;
		return rc;
	}
	if (!s) /* the caller opens a fetcher for every remote URL */
		return kiln_err_set(err, KILN_EINVAL, "'%s': no fetcher", url);
	return sources_fetch_fresh(s, url, out, err);
}

kiln_rc roots_keyring_load(struct sources *s, const struct roots_repo_config *r,
                           struct sign_keyring **out, struct kiln_err *err)
{
	struct kiln_buf key = KILN_BUF_INIT(ROOTS_KEY_MAX_BYTES);
	struct sign_keyring *kr = NULL;
	size_t count = 0;
	kiln_rc rc;

	*out = NULL;
	rc = roots_url_read(s, r->gpgkey, ROOTS_KEY_MAX_BYTES, &key, err);
	if (!rc)
		rc = sign_keyring_new(&kr, err);
	if (!rc)
		rc = sign_keyring_import(kr, key.ptr, key.len, &count, err);
	if (rc) {
		kiln_err_wrap(err, "repository %s: gpgkey", r->name);
		sign_keyring_free(kr);
		kr = NULL;
	}
	kiln_buf_release(&key);
	*out = kr;
	return rc;
}

/* ---- one repository ----------------------------------------------------------------------- */

struct repo_state {
	const struct roots_repo_config *r;
	struct roots_repomd md;
	struct sign_keyring *kr;                     /* when repo_gpgcheck */
	char repomd_sha256[2 * UTIL_DIGEST_MAX + 1]; /* hex, of the repomd.xml read */
};

static kiln_rc check_repomd_sig(struct sources *s, struct repo_state *rs, const char *url,
                                const struct kiln_buf *repomd, struct kiln_err *err)
{
	struct kiln_buf sig = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct kiln_buf sigurl = KILN_BUF_INIT(KILN_LIMIT_URL + 8);
	struct sign_result res;
	kiln_rc rc;

	kiln_buf_addf(&sigurl, "%s.asc", url);
	rc = kiln_buf_finish(&sigurl, err);
	if (!rc)
		rc = roots_keyring_load(s, rs->r, &rs->kr, err);
	if (!rc) {
		rc = roots_url_read(s, sigurl.ptr, KILN_LIMIT_PGP_FILE, &sig, err);
		if (rc == KILN_ENOTFOUND) {
			kiln_err_clear(err);
			rc = kiln_err_set(
			    err, KILN_ESIG,
			    "repository %s: repomd.xml is not signed (no repomd.xml.asc) "
			    "and repo_gpgcheck is on",
			    rs->r->name);
		}
	}
	if (!rc) {
		rc = sign_verify(rs->kr, sig.ptr, sig.len, repomd->ptr, repomd->len, &res, err);
		if (rc)
			kiln_err_wrap(err, "repository %s: repomd.xml.asc: signature %s",
			              rs->r->name, sign_status_name(res.status));
	}
	kiln_buf_release(&sig);
	kiln_buf_release(&sigurl);
	return rc;
}

static kiln_rc load_repomd(struct sources *s, struct repo_state *rs, struct kiln_err *err)
{
	struct kiln_buf url = KILN_BUF_INIT(KILN_LIMIT_URL + 32);
	struct kiln_buf xml = KILN_BUF_INIT(ROOTS_REPOMD_MAX_BYTES);
	char name[256];
	kiln_rc rc;

	kiln_buf_addf(&url, "%s/repodata/repomd.xml", rs->r->baseurl);
	rc = kiln_buf_finish(&url, err);
	if (!rc) {
		rc = roots_url_read(s, url.ptr, ROOTS_REPOMD_MAX_BYTES, &xml, err);
		if (rc)
			kiln_err_wrap(err, "repository %s: repomd.xml", rs->r->name);
	}
	if (!rc && rs->r->repo_gpgcheck)
		rc = check_repomd_sig(s, rs, url.ptr, &xml, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, xml.ptr, xml.len, rs->repomd_sha256,
		                         err);
	snprintf(name, sizeof(name), "repository %s: repomd.xml", rs->r->name);
	if (!rc)
		rc = roots_repomd_parse(&rs->md, name, xml.ptr, xml.len, err);
	if (!rc && !roots_repomd_find(&rs->md, "primary"))
		rc = kiln_err_set(err, KILN_EFORMAT, "%s has no primary data", name);
	kiln_buf_release(&xml);
	kiln_buf_release(&url);
	return rc;
}

/* One metadata file: through the cache by repomd's checksum into a scratch file under
 * tmpdir, then into memory, decompressed. */
static kiln_rc fetch_data(struct sources *s, const struct repo_state *rs,
                          const struct roots_repomd_data *d, const char *tmpdir,
                          struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf url = KILN_BUF_INIT(KILN_LIMIT_URL + KILN_LIMIT_PATH);
	struct kiln_buf dest = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf raw = KILN_BUF_INIT(ROOTS_METADATA_MAX_BYTES);
	struct sources_sum sum = {.file = util_path_basename(d->href)};
	kiln_rc rc;

	kiln_buf_addf(&url, "%s/%s", rs->r->baseurl, d->href);
	kiln_buf_addf(&dest, "%s/%s-%s", tmpdir, rs->r->name, d->type);
	rc = kiln_buf_finish(&url, err);
	if (!rc)
		rc = kiln_buf_finish(&dest, err);
	if (!rc)
		rc = util_digest_by_name(d->sum_type, &sum.algo, err);
	if (!rc) {
		snprintf(sum.hex, sizeof(sum.hex), "%s", d->sum);
		rc = sources_fetch_url(s, url.ptr, &sum, dest.ptr, NULL, err);
	}
	if (!rc)
		rc = util_read_file(dest.ptr, ROOTS_METADATA_MAX_BYTES, &raw, err);
	if (!rc) {
		if (d->open_size && d->open_size < ROOTS_METADATA_MAX_BYTES)
			out->max = (size_t)d->open_size;
		rc = pack_decompress_mem(raw.ptr, raw.len, out, err);
	}
	if (!rc && d->open_size && out->len != d->open_size)
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "%zu bytes decompressed, open-size says %" PRIu64, out->len,
		                  d->open_size);
	if (rc)
		kiln_err_wrap(err, "repository %s: %s", rs->r->name, d->href);
	if (dest.len)
		unlink(dest.ptr);
	kiln_buf_release(&raw);
	kiln_buf_release(&dest);
	kiln_buf_release(&url);
	return rc;
}

/* The repository's primary and comps (its repomd.xml read before) into p. */
static kiln_rc load_repo(struct roots_pool *p, struct sources *s, struct repo_state *rs,
                         const char *tmpdir, struct kiln_err *err)
{
	struct kiln_buf primary = KILN_BUF_INIT(ROOTS_METADATA_MAX_BYTES);
	struct kiln_buf comps = KILN_BUF_INIT(ROOTS_METADATA_MAX_BYTES);
	const struct roots_repomd_data *g;
	kiln_rc rc;

	rc = fetch_data(s, rs, roots_repomd_find(&rs->md, "primary"), tmpdir, &primary, err);
	g = roots_repomd_find(&rs->md, "group_gz");
	if (!g)
		g = roots_repomd_find(&rs->md, "group");
	if (!rc && g)
		rc = fetch_data(s, rs, g, tmpdir, &comps, err);
	if (!rc)
		rc = roots_pool_add_repo(p, rs->r->name, rs->r->priority, primary.ptr, primary.len,
		                         g ? comps.ptr : NULL, comps.len, err);
	kiln_buf_release(&comps);
	kiln_buf_release(&primary);
	return rc;
}

static kiln_rc load_filelists(struct roots_pool *p, struct sources *s, struct repo_state *rs,
                              const char *tmpdir, struct kiln_err *err)
{
	struct kiln_buf xml = KILN_BUF_INIT(ROOTS_METADATA_MAX_BYTES);
	const struct roots_repomd_data *d = roots_repomd_find(&rs->md, "filelists");
	kiln_rc rc;

	if (!d) {
		kiln_warn("repository %s has no filelists: file dependencies outside primary's "
		          "subset cannot be resolved from it",
		          rs->r->name);
		return KILN_OK;
	}
	rc = fetch_data(s, rs, d, tmpdir, &xml, err);
	if (!rc)
		rc = roots_pool_add_filelists(p, rs->r->name, xml.ptr, xml.len, err);
	kiln_buf_release(&xml);
	return rc;
}

/* ---- every repository of a configuration ---------------------------------------------------- */

kiln_rc roots_sources_open(const struct roots_fetch_opts *o, struct sources **out,
                           struct kiln_err *err)
{
	struct sources_fetch_opts so = {0};
	kiln_rc rc;

	*out = NULL;
	so.cache_dir = o ? o->cache_dir : NULL;
	so.offline = o && o->offline;
	so.progress = o && o->progress;
	so.retries = -1;
	/* Repositories name their files by sha256 (primary.xml); the installer only reads a
	 * lock's packages and removes its scratch directory afterwards. */
	so.sha256_only = true;
	so.link_dest = true;
	/* libcurl and libgit2 are opened here, when something is fetched, not before: a
	 * build whose local repositories did not change never needs them */
	rc = sources_global_init(err);
	return rc ? rc : sources_new(&so, out, err);
}

kiln_rc roots_tmpdir_make(struct kiln_buf *out, struct kiln_err *err)
{
	const char *base = getenv("TMPDIR");

	kiln_buf_addf(out, "%s/kiln-roots-XXXXXX", base && *base ? base : "/tmp");
	kiln_rc rc = kiln_buf_finish(out, err);

	if (rc)
		return rc;
	if (!mkdtemp(out->ptr))
		return kiln_err_sys(err, KILN_EIO, "cannot make a directory '%s'", out->ptr);
	return KILN_OK;
}

/* A configuration's repositories between reading their repomd.xml and loading the rest:
 * what a resolution depends on is known (each repomd.xml's sha256) before anything big is
 * read, so the resolution cache (make.c) can skip the rest. */
struct roots_repos {
	const struct roots_config *c;
	struct roots_fetch_opts o; /* strings borrowed from the caller's */
	struct sources *s;         /* NULL until something is fetched (repos_sources) */
	struct repo_state *rs;     /* c->nrepos, each repomd.xml read and checked */
	struct kiln_buf tmpdir;
};

static bool is_local(const char *url)
{
	return !url || !strncmp(url, "file://", 7);
}

/* The fetcher, opened on first need: a local repository's repomd.xml, signature and key
 * are read where they are, so reading them needs no libcurl. */
static kiln_rc repos_sources(struct roots_repos *r, struct kiln_err *err)
{
	return r->s ? KILN_OK : roots_sources_open(&r->o, &r->s, err);
}

void roots_repos_free(struct roots_repos *r)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	size_t i;

	if (!r)
		return;
	if (r->tmpdir.len && util_rm_rf(r->tmpdir.ptr, &ignored))
		kiln_log_err(KILN_LOG_WARN, &ignored);
	for (i = 0; r->rs && i < r->c->nrepos; i++) {
		roots_repomd_release(&r->rs[i].md);
		sign_keyring_free(r->rs[i].kr);
	}
	free(r->rs);
	sources_free(r->s);
	kiln_buf_release(&r->tmpdir);
	free(r);
}

kiln_rc roots_repos_open(const struct roots_config *c, const struct roots_fetch_opts *o,
                         struct roots_repos **out, struct kiln_err *err)
{
	struct roots_repos *r = kiln_calloc(1, sizeof(*r));
	kiln_rc rc = KILN_OK;
	size_t i;

	*out = NULL;
	if (!r)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	r->c = c;
	kiln_buf_init(&r->tmpdir, KILN_LIMIT_PATH);
	r->rs = kiln_calloc(c->nrepos ? c->nrepos : 1, sizeof(*r->rs));
	if (!r->rs) {
		free(r);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	for (i = 0; i < c->nrepos; i++) {
		r->rs[i].r = &c->repos[i];
		roots_repomd_init(&r->rs[i].md);
	}
	if (o)
		r->o = *o;
	for (i = 0; !rc && i < c->nrepos; i++)
		if (!is_local(c->repos[i].baseurl) || !is_local(c->repos[i].gpgkey))
			rc = repos_sources(r, err);
	for (i = 0; !rc && i < c->nrepos; i++)
		rc = load_repomd(r->s, &r->rs[i], err);
	if (rc) {
		roots_repos_free(r);
		return rc;
	}
	*out = r;
	return KILN_OK;
}

const char *roots_repos_repomd_sha256(const struct roots_repos *r, size_t i)
{
	return r->rs[i].repomd_sha256;
}

kiln_rc roots_repos_load(struct roots_repos *r, struct roots_pool *p, const struct spec_deps *deps,
                         struct kiln_err *err)
{
	const struct roots_config *c = r->c;
	kiln_rc rc = KILN_OK;
	size_t i;

	rc = repos_sources(r, err);
	if (!rc && !r->tmpdir.len)
		rc = roots_tmpdir_make(&r->tmpdir, err);
	for (i = 0; !rc && i < c->nrepos; i++)
		rc = load_repo(p, r->s, &r->rs[i], r->tmpdir.ptr, err);
	if (!rc && roots_pool_needs_filelists(p, c->install, c->ninstall, deps))
		for (i = 0; !rc && i < c->nrepos; i++)
			rc = load_filelists(p, r->s, &r->rs[i], r->tmpdir.ptr, err);
	return rc;
}

kiln_rc roots_pool_load(struct roots_pool *p, const struct roots_config *c,
                        const struct roots_fetch_opts *o, const struct spec_deps *deps,
                        struct kiln_err *err)
{
	struct roots_repos *r = NULL;
	kiln_rc rc;

	rc = roots_repos_open(c, o, &r, err);
	if (!rc)
		rc = roots_repos_load(r, p, deps, err);
	roots_repos_free(r);
	return rc;
}
