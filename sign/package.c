/*
 * package.c - OpenPGP signatures inside RPM packages (rpm-reference.md section 5.1).
 *
 * A package signature is a header-only signature: a detached v4 signature over the main
 * header bytes. v4 packages keep it raw in RSAHEADER (268, RSA keys) or DSAHEADER (267,
 * EdDSA keys) as rpm 4.20 does; v6 packages append it, base64-encoded, to the OPENPGP
 * (278) string array, which may hold any number. The signature header is rewritten in the
 * space of its reservation tag through pack/, so the main header and payload never move
 * and removing the signatures again restores the original bytes.
 */
#include "util/util.h"

#include <pthread.h>
#include <stdatomic.h>

#include "pack/pack.h"
#include "sign/sign_int.h"

/* Signature-header tags holding OpenPGP signatures, and what they cover. */
static const uint32_t pgp_tags[] = {PACK_SIGTAG_OPENPGP, PACK_SIGTAG_RSA, PACK_SIGTAG_DSA,
                                    PACK_SIGTAG_PGP, PACK_SIGTAG_GPG};

static bool is_rsa(unsigned algo)
{
	return algo == SIGN_PK_RSA || algo == SIGN_PK_RSA_S;
}

static kiln_rc header_digest_ok(const struct pack_package *p, uint32_t tag,
                                enum util_digest_algo algo, bool *seen, struct kiln_err *err)
{
	const char *want = pack_header_get_string(&p->sig, tag);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	kiln_rc rc;

	if (!want)
		return KILN_OK;
	*seen = true;
	rc = util_digest_mem_hex(algo, p->hdr_raw.ptr, p->hdr_raw.len, hex, err);
	if (!rc && strcasecmp(hex, want) != 0)
		rc = kiln_err_set(err, KILN_EDIGEST,
		                  "its header %s digest does not match: refusing to sign a damaged "
		                  "package",
		                  util_digest_name(algo));
	return rc;
}

/* rpmsign refuses to sign a package whose header does not match its digests: the signature
 * would vouch for bytes nobody built. */
static kiln_rc check_signable(const struct pack_package *p, struct kiln_err *err)
{
	bool seen = false;
	kiln_rc rc;

	if (p->format == 3)
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "v3 packages (no header region) cannot be "
		                    "signed");
	rc = header_digest_ok(p, PACK_SIGTAG_SHA256, UTIL_DIGEST_SHA256, &seen, err);
	if (!rc)
		rc = header_digest_ok(p, PACK_SIGTAG_SHA1, UTIL_DIGEST_SHA1, &seen, err);
	if (!rc)
		rc = header_digest_ok(p, PACK_SIGTAG_SHA3_256, UTIL_DIGEST_SHA3_256, &seen, err);
	if (!rc && !seen)
		rc = kiln_err_set(err, KILN_EFORMAT, "the package has no header digest");
	return rc;
}

/* Set a raw legacy signature tag unless it already holds exactly this signature. */
static kiln_rc put_legacy(struct pack_header *sig, uint32_t tag, const struct kiln_buf *pkt,
                          bool *changed, struct kiln_err *err)
{
	const struct pack_entry *e = pack_header_get(sig, tag);

	if (e && e->type == RPMTAG_TYPE_BIN && e->count == pkt->len &&
	    !memcmp(e->data, pkt->ptr, pkt->len))
		return KILN_OK;
	*changed = true;
	return pack_header_put_bin(sig, tag, pkt->ptr, pkt->len, err);
}

/* Append the signature to OPENPGP (278) unless an identical one is there. */
static kiln_rc put_openpgp(struct pack_header *sig, const struct kiln_buf *pkt, bool *changed,
                           struct kiln_err *err)
{
	struct kiln_buf b64 = KILN_BUF_INIT(2 * KILN_LIMIT_PGP_PACKET);
	const struct pack_entry *e = pack_header_get(sig, PACK_SIGTAG_OPENPGP);
	const char **all = NULL;
	uint32_t n = 0;
	uint32_t i;
	kiln_rc rc;

	util_base64_encode(pkt->ptr, pkt->len, &b64);
	rc = kiln_buf_finish(&b64, err);
	if (rc)
		return rc;
	if (e && e->type != RPMTAG_TYPE_STRING_ARRAY) {
		rc = kiln_err_set(err, KILN_EFORMAT, "OPENPGP (278) is not a string array");
		goto out;
	}
	n = e ? e->count : 0;
	for (i = 0; i < n; i++) {
		if (!strcmp(((char *const *)e->data)[i], b64.ptr))
			goto out; /* identical signature: nothing to do */
	}
	all = kiln_calloc((size_t)n + 1, sizeof(*all));
	if (!all) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		all[i] = ((char *const *)e->data)[i];
	all[n] = b64.ptr;
	*changed = true;
	rc = pack_header_put_strings(sig, PACK_SIGTAG_OPENPGP, all, n + 1, err);
out:
	free(all);
	kiln_buf_release(&b64);
	return rc;
}

static kiln_rc add_signatures(const struct sign_key *key, struct pack_package *p,
                              const struct sign_opts *o, unsigned flags, bool *changed,
                              struct kiln_err *err)
{
	struct kiln_buf pkt = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	unsigned algo = sign_key_signing_algo(key);
	bool legacy = p->format != 6 || (flags & SIGN_PKG_RPMV4);
	bool openpgp = p->format == 6 || (flags & SIGN_PKG_RPMV6);
	kiln_rc rc;

	rc = sign_header(key, p->hdr_raw.ptr, p->hdr_raw.len, o, &pkt, err);
	if (!rc && legacy)
		rc = put_legacy(&p->sig, is_rsa(algo) ? PACK_SIGTAG_RSA : PACK_SIGTAG_DSA, &pkt,
		                changed, err);
	if (!rc && openpgp)
		rc = put_openpgp(&p->sig, &pkt, changed, err);
	kiln_buf_release(&pkt);
	return rc;
}

kiln_rc sign_package(const struct sign_key *key, const char *path, const struct sign_opts *o,
                     unsigned flags, bool *changed, struct kiln_err *err)
{
	struct pack_package p = {0};
	bool dirty = false;
	kiln_rc rc;

	rc = pack_package_open(&p, path, NULL, err);
	if (!rc)
		rc = check_signable(&p, err);
	if (!rc)
		rc = add_signatures(key, &p, o, flags, &dirty, err);
	if (!rc && dirty)
		rc = pack_sigheader_replace(path, &p.sig, err);
	if (rc)
		kiln_err_wrap(err, "cannot sign '%s'", path);
	else if (changed)
		*changed = dirty;
	pack_package_release(&p);
	return rc;
}

kiln_rc sign_package_delete(const char *path, bool *changed, struct kiln_err *err)
{
	struct pack_package p = {0};
	bool dirty = false;
	size_t i;
	kiln_rc rc;

	rc = pack_package_open(&p, path, NULL, err);
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(pgp_tags); i++) {
		if (pack_header_get(&p.sig, pgp_tags[i])) {
			pack_header_del(&p.sig, pgp_tags[i]);
			dirty = true;
		}
	}
	if (!rc && dirty)
		rc = pack_sigheader_replace(path, &p.sig, err);
	if (rc)
		kiln_err_wrap(err, "cannot remove the signatures of '%s'", path);
	else if (changed)
		*changed = dirty;
	pack_package_release(&p);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Many packages at once. Signing is a few milliseconds of CPU and the rest is waiting for
 * fsync, so workers overlap both; each package keeps its own result. */

struct batch {
	const struct sign_key *key; /* NULL: delete */
	const char *const *paths;
	size_t n;
	const struct sign_opts *opts;
	unsigned flags;
	struct sign_batch_result *res;
	atomic_size_t next;
};

static void *batch_worker(void *arg)
{
	struct batch *b = arg;
	size_t i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
		struct sign_batch_result *r = &b->res[i];

		kiln_err_clear(&r->err);
		if (b->key)
			r->rc = sign_package(b->key, b->paths[i], b->opts, b->flags, &r->changed,
			                     &r->err);
		else
			r->rc = sign_package_delete(b->paths[i], &r->changed, &r->err);
	}
	return NULL;
}

kiln_rc sign_packages(const struct sign_key *key, const char *const *paths, size_t n,
                      const struct sign_opts *opts, unsigned flags, unsigned jobs,
                      struct sign_batch_result *res, struct kiln_err *err)
{
	struct batch b = {key, paths, n, opts, flags, res, 0};
	pthread_t tid[SIGN_JOBS_MAX];
	unsigned started = 0;
	unsigned i;
	int e;

	if (!jobs || jobs > SIGN_JOBS_MAX)
		return kiln_err_set(err, KILN_EINVAL, "jobs must be 1 to %d", SIGN_JOBS_MAX);
	if (jobs > n)
		jobs = n ? (unsigned)n : 1;
	/* The calling thread is one of the workers. */
	for (i = 1; i < jobs; i++) {
		e = pthread_create(&tid[started], NULL, batch_worker, &b);
		if (e)
			break; /* fewer workers; the rest still gets done */
		started++;
	}
	batch_worker(&b);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return KILN_OK;
}
