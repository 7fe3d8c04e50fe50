/*
 * openssl.c - every OpenSSL call sign/ makes, through the EVP API (shared/STYLE.md rule 16).
 *
 * Keys are EVP_PKEYs built from and exported to OSSL_PARAMs; RSA signs with PKCS#1 v1.5
 * over a precomputed OpenPGP digest, Ed25519 signs the digest octets (RFC 9580 5.2.4).
 * BIGNUMs appear only to carry key parameters in and out of EVP (and to derive the CRT
 * exponents OpenPGP does not store); secret ones are allocated with BN_secure_new and freed
 * with BN_clear_free. OpenSSL failures become KILN_ESIG with the drained error queue in the
 * message, which never contains key material.
 */
#include "util/util.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h> /* EVP_PKEY_CTX_set_rsa_padding() and its constants */
#include "sign/libcrypto_int.h"

#include "sign/sign_int.h"

static EVP_PKEY *ev(struct sign_pkey *k)
{
	return (EVP_PKEY *)(void *)k;
}

static struct sign_pkey *kp(EVP_PKEY *k)
{
	return (struct sign_pkey *)(void *)k;
}

/* Filled on first use (see sign/libcrypto_int.h): by the constructors of a sign_pkey. */
static struct sign_libcrypto_fns sign_libcrypto;
static struct util_dl sign_libcrypto_dl =
    UTIL_DL_INIT(SIGN_LIBCRYPTO_SONAME, sign_libcrypto_syms, sign_libcrypto);

/* KILN_OK, or KILN_ENOTFOUND saying why libcrypto cannot be opened. */
static kiln_rc ossl_ready(struct kiln_err *err)
{
	return util_dl_ready(&sign_libcrypto_dl, err);
}

/* explicit_bzero, like OPENSSL_cleanse, is never optimised away, and needs no libcrypto
 * (secrets are wiped also where no key was ever made). */
void sign_wipe(void *p, size_t len)
{
	if (p && len)
		explicit_bzero(p, len);
}

void sign_buf_wipe(struct kiln_buf *b)
{
	if (b->cap)
		explicit_bzero(b->ptr, b->cap);
	kiln_buf_release(b);
}

/* Record an OpenSSL failure: what failed, then the queued OpenSSL reasons. */
static kiln_rc ossl_fail(struct kiln_err *err, const char *what)
{
	char reasons[256] = "";
	size_t used = 0;
	unsigned long e;

	while ((e = ERR_get_error()) != 0) {
		const char *r = ERR_reason_error_string(e);
		int n;

		if (used >= sizeof(reasons) - 1)
			continue;
		n = snprintf(reasons + used, sizeof(reasons) - used, "%s%s", used ? "; " : "",
		             r ? r : "unknown error");
		if (n > 0)
			used +=
			    (size_t)n < sizeof(reasons) - used ? (size_t)n : sizeof(reasons) - used;
	}
	if (used)
		return kiln_err_set(err, KILN_ESIG, "%s: %s", what, reasons);
	return kiln_err_set(err, KILN_ESIG, "%s", what);
}

static const char *md_name(enum util_digest_algo hash)
{
	switch (hash) {
	case UTIL_DIGEST_MD5:
		return "MD5";
	case UTIL_DIGEST_SHA1:
		return "SHA1";
	case UTIL_DIGEST_SHA224:
		return "SHA224";
	case UTIL_DIGEST_SHA256:
		return "SHA256";
	case UTIL_DIGEST_SHA384:
		return "SHA384";
	case UTIL_DIGEST_SHA512:
		return "SHA512";
	case UTIL_DIGEST_SHA3_256:
		return "SHA3-256";
	case UTIL_DIGEST_SHA3_512:
		return "SHA3-512";
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* RSA */

struct rsa_bns {
	BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qinv;
};

static void rsa_bns_free(struct rsa_bns *b)
{
	BN_free(b->n);
	BN_free(b->e);
	BN_clear_free(b->d);
	BN_clear_free(b->p);
	BN_clear_free(b->q);
	BN_clear_free(b->dp);
	BN_clear_free(b->dq);
	BN_clear_free(b->qinv);
}

static BIGNUM *bn_secret(const uint8_t *p, size_t n)
{
	BIGNUM *b = BN_secure_new();

	if (b && !BN_bin2bn(p, (int)n, b)) {
		BN_clear_free(b);
		return NULL;
	}
	return b;
}

/* OpenSSL wants factor1, factor2 with coefficient = factor2^-1 mod factor1. OpenPGP stores
 * u = p^-1 mod q, so factor1 = q and factor2 = p; the CRT exponents are d mod (f-1). */
static kiln_rc rsa_secret_bns(const struct sign_rsa_secret *sec, struct rsa_bns *b,
                              struct kiln_err *err)
{
	BN_CTX *ctx = BN_CTX_secure_new();
	BIGNUM *t = BN_secure_new();
	kiln_rc rc = KILN_OK;

	b->d = bn_secret(sec->d, sec->d_len);
	b->q = bn_secret(sec->p, sec->p_len); /* OpenSSL factor2 */
	b->p = bn_secret(sec->q, sec->q_len); /* OpenSSL factor1 */
	b->qinv = bn_secret(sec->u, sec->u_len);
	b->dp = BN_secure_new();
	b->dq = BN_secure_new();
	if (!ctx || !t || !b->d || !b->p || !b->q || !b->qinv || !b->dp || !b->dq ||
	    !BN_sub(t, b->p, BN_value_one()) || !BN_mod(b->dp, b->d, t, ctx) ||
	    !BN_sub(t, b->q, BN_value_one()) || !BN_mod(b->dq, b->d, t, ctx))
		rc = ossl_fail(err, "cannot prepare the RSA secret key");
	BN_clear_free(t);
	BN_CTX_free(ctx);
	return rc;
}

static kiln_rc pkey_fromdata(const char *type, OSSL_PARAM *params, int selection, EVP_PKEY **out,
                             struct kiln_err *err)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	kiln_rc rc = KILN_OK;

	*out = NULL;
	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, out, selection, params) <= 0)
		rc = ossl_fail(err, "cannot load the key into OpenSSL");
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

static kiln_rc rsa_sign(EVP_PKEY *pk, enum util_digest_algo hash, const uint8_t *digest,
                        size_t digest_len, uint8_t *sig, size_t *sig_len, struct kiln_err *err);
static kiln_rc rsa_verify(EVP_PKEY *pk, enum util_digest_algo hash, const uint8_t *digest,
                          size_t digest_len, const uint8_t *sig, size_t sig_len,
                          struct kiln_err *err);

/* A secret key whose parts do not belong together would sign garbage: sign once and verify
 * with the public half. (EVP_PKEY_pairwise_check does more, but costs a third of a second
 * for RSA-4096 in OpenSSL 3.0; a farm loads keys often.) */
static kiln_rc rsa_self_test(EVP_PKEY *pk, struct kiln_err *err)
{
	static const uint8_t digest[32] = {0x6b, 0x69, 0x6c, 0x6e};
	uint8_t sig[SIGN_SIG_MAX];
	size_t n = sizeof(sig);
	kiln_rc rc;

	if ((size_t)EVP_PKEY_get_size(pk) > sizeof(sig))
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "RSA keys above 8192 bits are not supported");
	rc = rsa_sign(pk, UTIL_DIGEST_SHA256, digest, sizeof(digest), sig, &n, err);
	if (!rc && rsa_verify(pk, UTIL_DIGEST_SHA256, digest, sizeof(digest), sig, n, NULL))
		rc = kiln_err_set(err, KILN_ESIG, "the secret key does not match its public key");
	return rc;
}

kiln_rc sign_ossl_rsa_new(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                          const struct sign_rsa_secret *sec, struct sign_pkey **out,
                          struct kiln_err *err)
{
	struct rsa_bns b = {0};
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY *pk = NULL;
	kiln_rc rc = KILN_OK;

	*out = NULL;
	if (ossl_ready(err))
		return KILN_ENOTFOUND;
	b.n = BN_bin2bn(n, (int)n_len, NULL);
	b.e = BN_bin2bn(e, (int)e_len, NULL);
	bld = OSSL_PARAM_BLD_new();
	if (!b.n || !b.e || !bld) {
		rc = ossl_fail(err, "cannot read the RSA key");
		goto out;
	}
	if (sec)
		rc = rsa_secret_bns(sec, &b, err);
	if (rc)
		goto out;
	if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, b.n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, b.e) ||
	    (sec && (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, b.d) ||
	             !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, b.p) ||
	             !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, b.q) ||
	             !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, b.dp) ||
	             !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, b.dq) ||
	             !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, b.qinv))) ||
	    !(params = OSSL_PARAM_BLD_to_param(bld))) {
		rc = ossl_fail(err, "cannot read the RSA key");
		goto out;
	}
	rc = pkey_fromdata("RSA", params, sec ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, &pk, err);
	if (!rc && sec)
		rc = rsa_self_test(pk, err);
	if (!rc) {
		*out = kp(pk);
		pk = NULL;
	}
out:
	EVP_PKEY_free(pk);
	OSSL_PARAM_free(params); /* params built from secure BNs live in secure memory */
	OSSL_PARAM_BLD_free(bld);
	rsa_bns_free(&b);
	return rc;
}

static kiln_rc bn_param(EVP_PKEY *pk, const char *name, BIGNUM **bn, struct kiln_err *err)
{
	if (!EVP_PKEY_get_bn_param(pk, name, bn))
		return ossl_fail(err, "cannot read the RSA key parameters");
	return KILN_OK;
}

/* Append bn as an MPI through a fixed-size scratch area that is wiped afterwards. */
static kiln_rc mpi_from_bn(const BIGNUM *bn, struct kiln_buf *out, struct kiln_err *err)
{
	uint8_t tmp[1024];
	int n = BN_num_bytes(bn);

	if (n < 0 || (size_t)n > sizeof(tmp))
		return kiln_err_set(err, KILN_EUNSUPP, "RSA key parameter too large");
	BN_bn2bin(bn, tmp);
	sign_mpi_write(out, tmp, (size_t)n);
	explicit_bzero(tmp, sizeof(tmp));
	return KILN_OK;
}

kiln_rc sign_ossl_rsa_export(struct sign_pkey *k, struct kiln_buf *pub, struct kiln_buf *sec,
                             struct kiln_err *err)
{
	struct rsa_bns b = {0};
	BN_CTX *ctx = NULL;
	BIGNUM *u = NULL;
	kiln_rc rc;

	rc = bn_param(ev(k), OSSL_PKEY_PARAM_RSA_N, &b.n, err);
	if (!rc)
		rc = bn_param(ev(k), OSSL_PKEY_PARAM_RSA_E, &b.e, err);
	if (!rc && pub)
		rc = mpi_from_bn(b.n, pub, err);
	if (!rc && pub)
		rc = mpi_from_bn(b.e, pub, err);
	if (rc || !sec)
		goto out;
	rc = bn_param(ev(k), OSSL_PKEY_PARAM_RSA_D, &b.d, err);
	if (!rc)
		rc = bn_param(ev(k), OSSL_PKEY_PARAM_RSA_FACTOR1, &b.p, err);
	if (!rc)
		rc = bn_param(ev(k), OSSL_PKEY_PARAM_RSA_FACTOR2, &b.q, err);
	if (rc)
		goto out;
	/* OpenPGP: p < q and u = p^-1 mod q. */
	if (BN_cmp(b.p, b.q) > 0) {
		BIGNUM *t = b.p;

		b.p = b.q;
		b.q = t;
	}
	ctx = BN_CTX_secure_new();
	u = BN_secure_new();
	if (!ctx || !u || !BN_mod_inverse(u, b.p, b.q, ctx)) {
		rc = ossl_fail(err, "cannot export the RSA secret key");
		goto out;
	}
	rc = mpi_from_bn(b.d, sec, err);
	if (!rc)
		rc = mpi_from_bn(b.p, sec, err);
	if (!rc)
		rc = mpi_from_bn(b.q, sec, err);
	if (!rc)
		rc = mpi_from_bn(u, sec, err);
out:
	BN_clear_free(u);
	BN_CTX_free(ctx);
	rsa_bns_free(&b);
	return rc;
}

kiln_rc sign_ossl_rsa_generate(unsigned bits, struct sign_pkey **out, struct kiln_err *err)
{
	EVP_PKEY *pk;

	*out = NULL;
	if (ossl_ready(err))
		return KILN_ENOTFOUND;
	pk = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
	if (!pk)
		return ossl_fail(err, "cannot generate an RSA key");
	*out = kp(pk);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Ed25519 */

kiln_rc sign_ossl_ed25519_new(const uint8_t pub[32], const uint8_t *seed, struct sign_pkey **out,
                              struct kiln_err *err)
{
	EVP_PKEY *pk;
	uint8_t derived[32];
	size_t n = sizeof(derived);

	*out = NULL;
	if (ossl_ready(err))
		return KILN_ENOTFOUND;
	if (!seed) {
		pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, 32);
		if (!pk)
			return ossl_fail(err, "cannot read the Ed25519 key");
		*out = kp(pk);
		return KILN_OK;
	}
	pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	if (!pk)
		return ossl_fail(err, "cannot read the Ed25519 secret key");
	if (!EVP_PKEY_get_raw_public_key(pk, derived, &n) || n != 32 ||
	    CRYPTO_memcmp(derived, pub, 32) != 0) {
		EVP_PKEY_free(pk);
		ERR_clear_error();
		return kiln_err_set(err, KILN_ESIG,
		                    "the Ed25519 secret key does not match its public key");
	}
	*out = kp(pk);
	return KILN_OK;
}

kiln_rc sign_ossl_ed25519_generate(struct sign_pkey **out, struct kiln_err *err)
{
	EVP_PKEY *pk;

	*out = NULL;
	if (ossl_ready(err))
		return KILN_ENOTFOUND;
	pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!pk)
		return ossl_fail(err, "cannot generate an Ed25519 key");
	*out = kp(pk);
	return KILN_OK;
}

kiln_rc sign_ossl_ed25519_export(struct sign_pkey *k, uint8_t pub[32], uint8_t *seed,
                                 struct kiln_err *err)
{
	size_t n = 32;

	if (!EVP_PKEY_get_raw_public_key(ev(k), pub, &n) || n != 32)
		return ossl_fail(err, "cannot export the Ed25519 key");
	n = 32;
	if (seed && (!EVP_PKEY_get_raw_private_key(ev(k), seed, &n) || n != 32)) {
		explicit_bzero(seed, 32);
		return ossl_fail(err, "cannot export the Ed25519 secret key");
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Signing and verifying a precomputed digest. */

static kiln_rc rsa_sign(EVP_PKEY *pk, enum util_digest_algo hash, const uint8_t *digest,
                        size_t digest_len, uint8_t *sig, size_t *sig_len, struct kiln_err *err)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	EVP_MD *md = EVP_MD_fetch(NULL, md_name(hash), NULL);
	kiln_rc rc = KILN_OK;

	if (!ctx || !md || EVP_PKEY_sign_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0 ||
	    EVP_PKEY_sign(ctx, sig, sig_len, digest, digest_len) <= 0)
		rc = ossl_fail(err, "RSA signing failed");
	EVP_MD_free(md);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

static kiln_rc ed_sign(EVP_PKEY *pk, const uint8_t *digest, size_t digest_len, uint8_t *sig,
                       size_t *sig_len, struct kiln_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	kiln_rc rc = KILN_OK;

	if (!ctx || EVP_DigestSignInit_ex(ctx, NULL, NULL, NULL, NULL, pk, NULL) <= 0 ||
	    EVP_DigestSign(ctx, sig, sig_len, digest, digest_len) <= 0)
		rc = ossl_fail(err, "Ed25519 signing failed");
	EVP_MD_CTX_free(ctx);
	return rc;
}

kiln_rc sign_ossl_sign(struct sign_pkey *k, enum util_digest_algo hash, const uint8_t *digest,
                       size_t digest_len, uint8_t *sig, size_t *sig_len, struct kiln_err *err)
{
	size_t need = (size_t)EVP_PKEY_get_size(ev(k));

	if (need > *sig_len)
		return kiln_err_set(err, KILN_ELIMIT, "signature of %zu bytes is too large", need);
	if (EVP_PKEY_get_base_id(ev(k)) == EVP_PKEY_RSA)
		return rsa_sign(ev(k), hash, digest, digest_len, sig, sig_len, err);
	return ed_sign(ev(k), digest, digest_len, sig, sig_len, err);
}

static kiln_rc rsa_verify(EVP_PKEY *pk, enum util_digest_algo hash, const uint8_t *digest,
                          size_t digest_len, const uint8_t *sig, size_t sig_len,
                          struct kiln_err *err)
{
	size_t mod = (size_t)EVP_PKEY_get_size(pk);
	EVP_PKEY_CTX *ctx = NULL;
	EVP_MD *md = NULL;
	uint8_t padded[SIGN_SIG_MAX];
	kiln_rc rc = KILN_OK;
	int ok;

	/* MPIs drop leading zero octets; OpenSSL wants exactly the modulus length. */
	if (sig_len > mod || mod > sizeof(padded))
		return kiln_err_set(err, KILN_ESIG, "RSA signature is longer than the modulus");
	memset(padded, 0, mod - sig_len);
	memcpy(padded + (mod - sig_len), sig, sig_len);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	md = EVP_MD_fetch(NULL, md_name(hash), NULL);
	if (!ctx || !md || EVP_PKEY_verify_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0) {
		rc = ossl_fail(err, "cannot set up RSA verification");
		goto out;
	}
	ok = EVP_PKEY_verify(ctx, padded, mod, digest, digest_len);
	ERR_clear_error();
	if (ok != 1)
		rc = kiln_err_set(err, KILN_ESIG, "RSA signature does not verify");
out:
	EVP_MD_free(md);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

static kiln_rc ed_verify(EVP_PKEY *pk, const uint8_t *digest, size_t digest_len, const uint8_t *sig,
                         size_t sig_len, struct kiln_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	kiln_rc rc = KILN_OK;
	int ok;

	if (!ctx || EVP_DigestVerifyInit_ex(ctx, NULL, NULL, NULL, NULL, pk, NULL) <= 0) {
		rc = ossl_fail(err, "cannot set up Ed25519 verification");
		goto out;
	}
	ok = EVP_DigestVerify(ctx, sig, sig_len, digest, digest_len);
	ERR_clear_error();
	if (ok != 1)
		rc = kiln_err_set(err, KILN_ESIG, "Ed25519 signature does not verify");
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

kiln_rc sign_ossl_verify(struct sign_pkey *k, enum util_digest_algo hash, const uint8_t *digest,
                         size_t digest_len, const uint8_t *sig, size_t sig_len,
                         struct kiln_err *err)
{
	if (!md_name(hash))
		return kiln_err_set(err, KILN_EUNSUPP, "unsupported digest");
	if (EVP_PKEY_get_base_id(ev(k)) == EVP_PKEY_RSA)
		return rsa_verify(ev(k), hash, digest, digest_len, sig, sig_len, err);
	return ed_verify(ev(k), digest, digest_len, sig, sig_len, err);
}

unsigned sign_ossl_bits(struct sign_pkey *k)
{
	int bits = EVP_PKEY_get_bits(ev(k));

	return bits > 0 ? (unsigned)bits : 0;
}

bool sign_ossl_is_rsa(struct sign_pkey *k)
{
	return EVP_PKEY_get_base_id(ev(k)) == EVP_PKEY_RSA;
}

void sign_ossl_free(struct sign_pkey *k)
{
	if (k) /* (a key exists only once libcrypto is open) */
		EVP_PKEY_free(ev(k));
}
