/*
 * sig.c - version 4 Signature packets: parse, hash, check and make (RFC 4880 5.2,
 * RFC 9580 5.2).
 *
 * What is hashed for a v4 signature, in order: the signed data (a document, or the key and
 * user ID / subkey forms for certifications), the signature's own version .. hashed-area
 * octets, then the trailer 0x04 0xff and the 4-octet length of that part.
 */
#include "util/util.h"

#include "sign/sign_int.h"

static const struct {
	unsigned id;
	enum util_digest_algo algo;
	const char *name;
} hash_table[] = {
    {SIGN_HASH_MD5, UTIL_DIGEST_MD5, "MD5"},
    {SIGN_HASH_SHA1, UTIL_DIGEST_SHA1, "SHA1"},
    {SIGN_HASH_SHA256, UTIL_DIGEST_SHA256, "SHA256"},
    {SIGN_HASH_SHA384, UTIL_DIGEST_SHA384, "SHA384"},
    {SIGN_HASH_SHA512, UTIL_DIGEST_SHA512, "SHA512"},
    {SIGN_HASH_SHA224, UTIL_DIGEST_SHA224, "SHA224"},
    {SIGN_HASH_SHA3_256, UTIL_DIGEST_SHA3_256, "SHA3-256"},
    {SIGN_HASH_SHA3_512, UTIL_DIGEST_SHA3_512, "SHA3-512"},
};

const char *sign_hash_algo_name(unsigned algo)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(hash_table); i++) {
		if (hash_table[i].id == algo)
			return hash_table[i].name;
	}
	return "UNKNOWN";
}

const char *sign_pk_algo_name(unsigned algo)
{
	switch (algo) {
	case SIGN_PK_RSA:
	case SIGN_PK_RSA_S:
		return "RSA";
	case SIGN_PK_DSA:
		return "DSA";
	case SIGN_PK_ECDSA:
		return "ECDSA";
	case SIGN_PK_EDDSA:
	case SIGN_PK_ED25519:
		return "EdDSA";
	default:
		return "UNKNOWN";
	}
}

kiln_rc sign_hash_to_util(unsigned algo, enum util_digest_algo *out, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(hash_table); i++) {
		if (hash_table[i].id == algo) {
			*out = hash_table[i].algo;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EUNSUPP, "unsupported OpenPGP hash algorithm %u", algo);
}

bool sign_hash_strong(unsigned algo)
{
	return algo != SIGN_HASH_MD5 && algo != SIGN_HASH_SHA1;
}

kiln_rc sign_hash_algo_parse(const char *name, enum sign_hash_algo *out, struct kiln_err *err)
{
	enum util_digest_algo u;
	size_t i;

	if (util_digest_by_name(name, &u, NULL) == KILN_OK) {
		for (i = 0; i < KILN_ARRAY_SIZE(hash_table); i++) {
			if (hash_table[i].algo == u && sign_hash_strong(hash_table[i].id)) {
				*out = (enum sign_hash_algo)hash_table[i].id;
				return KILN_OK;
			}
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "unsupported signature digest '%s' (use sha256, sha384 or sha512)",
	                    name);
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing */

/* Subpackets kiln understands, so a critical one of these is fine. */
static bool subpkt_known(unsigned type)
{
	switch (type) {
	case SIGN_SUB_CREATED:
	case SIGN_SUB_SIG_EXPIRES:
	case SIGN_SUB_EXPORTABLE:
	case SIGN_SUB_REVOCABLE:
	case SIGN_SUB_KEY_EXPIRES:
	case SIGN_SUB_PREF_SYM:
	case SIGN_SUB_ISSUER:
	case SIGN_SUB_PREF_HASH:
	case SIGN_SUB_PREF_COMPRESS:
	case SIGN_SUB_KEYSERVER_PREFS:
	case SIGN_SUB_PRIMARY_UID:
	case SIGN_SUB_KEY_FLAGS:
	case SIGN_SUB_SIGNER_UID:
	case SIGN_SUB_REVOCATION_REASON:
	case SIGN_SUB_FEATURES:
	case SIGN_SUB_EMBEDDED_SIG:
	case SIGN_SUB_ISSUER_FPR:
	case SIGN_SUB_PREF_AEAD:
	case SIGN_SUB_PREF_AEAD_CIPHERS:
		return true;
	default:
		return false;
	}
}

static kiln_rc subpkt_bad(struct kiln_err *err, unsigned type)
{
	return kiln_err_set(err, KILN_EFORMAT, "malformed signature subpacket %u", type);
}

/* Decode what a subpacket tells; hashed says whether it is covered by the signature. */
static kiln_rc subpkt_apply(struct sign_sig *sig, const struct sign_subpkt *sp, bool hashed,
                            struct kiln_err *err)
{
	if (sp->critical && !subpkt_known(sp->type) && !sig->critical_unknown) {
		sig->critical_unknown = true;
		sig->critical_type = sp->type;
	}
	/* Only information from the issuer, the embedded back-signature (checked on its own)
	 * and issuer hints may come from the unhashed area. */
	if (!hashed && sp->type != SIGN_SUB_ISSUER && sp->type != SIGN_SUB_ISSUER_FPR &&
	    sp->type != SIGN_SUB_EMBEDDED_SIG)
		return KILN_OK;
	switch (sp->type) {
	case SIGN_SUB_CREATED:
		if (sp->len != 4)
			return subpkt_bad(err, sp->type);
		if (sig->has_created)
			return kiln_err_set(err, KILN_EFORMAT, "two signature creation times");
		sig->has_created = true;
		sig->created = sign_get_u32(sp->data);
		break;
	case SIGN_SUB_SIG_EXPIRES:
		if (sp->len != 4)
			return subpkt_bad(err, sp->type);
		sig->expires = sign_get_u32(sp->data);
		break;
	case SIGN_SUB_KEY_EXPIRES:
		if (sp->len != 4)
			return subpkt_bad(err, sp->type);
		sig->has_key_expires = true;
		sig->key_expires = sign_get_u32(sp->data);
		break;
	case SIGN_SUB_KEY_FLAGS:
		sig->has_flags = true;
		sig->flags = sp->len ? sp->data[0] : 0;
		break;
	case SIGN_SUB_PRIMARY_UID:
		sig->primary_uid = sp->len >= 1 && sp->data[0];
		break;
	case SIGN_SUB_ISSUER:
		if (sp->len != 8)
			return subpkt_bad(err, sp->type);
		if (!sig->has_issuer || hashed)
			memcpy(sig->issuer, sp->data, 8);
		sig->has_issuer = true;
		break;
	case SIGN_SUB_ISSUER_FPR:
		if (sp->len < 2 || sp->len - 1 > SIGN_FPR_MAX)
			return subpkt_bad(err, sp->type);
		if (!sig->issuer_fpr_len || hashed) {
			sig->issuer_fpr_len = sp->len - 1;
			memcpy(sig->issuer_fpr, sp->data + 1, sp->len - 1);
		}
		break;
	case SIGN_SUB_EMBEDDED_SIG:
		if (!sig->embedded) {
			sig->embedded = sp->data;
			sig->embedded_len = sp->len;
		}
		break;
	default:
		break;
	}
	return KILN_OK;
}

static kiln_rc subpkt_area(struct sign_sig *sig, const uint8_t *p, size_t len, bool hashed,
                           struct kiln_err *err)
{
	struct sign_cur c;
	struct sign_subpkt sp;
	kiln_rc rc;

	sign_cur_init(&c, p, len);
	while ((rc = sign_subpkt_next(&c, &sp, err)) == KILN_OK) {
		rc = subpkt_apply(sig, &sp, hashed, err);
		if (rc)
			return rc;
	}
	return rc == KILN_ENOTFOUND ? KILN_OK : rc;
}

static kiln_rc sig_material(struct sign_sig *sig, struct sign_cur *c, struct kiln_err *err)
{
	bool ok;

	switch (sig->pk_algo) {
	case SIGN_PK_RSA:
	case SIGN_PK_RSA_S:
		ok = sign_cur_mpi(c, &sig->m1, &sig->m1_len);
		break;
	case SIGN_PK_DSA:
	case SIGN_PK_ECDSA:
	case SIGN_PK_EDDSA:
		ok = sign_cur_mpi(c, &sig->m1, &sig->m1_len) &&
		     sign_cur_mpi(c, &sig->m2, &sig->m2_len);
		break;
	case SIGN_PK_ED25519:
		sig->m1_len = 64;
		ok = sign_cur_take(c, 64, &sig->m1);
		break;
	default:
		return kiln_err_set(err, KILN_EUNSUPP, "unsupported signature algorithm %u",
		                    sig->pk_algo);
	}
	if (!ok)
		return kiln_err_set(err, KILN_EFORMAT, "truncated or malformed signature material");
	/* rpm 4.18 insists the material fills the packet exactly; so does kiln. */
	if (sign_cur_left(c))
		return kiln_err_set(err, KILN_EFORMAT, "%zu stray bytes after the signature",
		                    sign_cur_left(c));
	return KILN_OK;
}

kiln_rc sign_sig_parse(const uint8_t *body, size_t len, struct sign_sig *sig, struct kiln_err *err)
{
	struct sign_cur c;
	uint8_t v[4];
	uint16_t hl;
	uint16_t ul;
	const uint8_t *left;
	kiln_rc rc;

	memset(sig, 0, sizeof(*sig));
	sign_cur_init(&c, body, len);
	if (!sign_cur_u8(&c, &v[0]))
		return kiln_err_set(err, KILN_EFORMAT, "empty signature packet");
	sig->version = v[0];
	if (v[0] != 4)
		return kiln_err_set(err, KILN_EUNSUPP,
		                    "OpenPGP version %u signatures are not supported", v[0]);
	if (!sign_cur_u8(&c, &v[1]) || !sign_cur_u8(&c, &v[2]) || !sign_cur_u8(&c, &v[3]) ||
	    !sign_cur_u16(&c, &hl) || !sign_cur_take(&c, hl, &sig->hashed))
		return kiln_err_set(err, KILN_EFORMAT, "truncated signature packet");
	sig->type = v[1];
	sig->pk_algo = v[2];
	sig->hash_algo = v[3];
	sig->hashed_len = hl;
	sig->hashed_part = body;
	sig->hashed_part_len = c.off;
	if (!sign_cur_u16(&c, &ul) || !sign_cur_take(&c, ul, &sig->unhashed) ||
	    !sign_cur_take(&c, 2, &left))
		return kiln_err_set(err, KILN_EFORMAT, "truncated signature packet");
	sig->unhashed_len = ul;
	memcpy(sig->left16, left, 2);
	rc = subpkt_area(sig, sig->hashed, sig->hashed_len, true, err);
	if (!rc)
		rc = subpkt_area(sig, sig->unhashed, sig->unhashed_len, false, err);
	if (!rc)
		rc = sig_material(sig, &c, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Hashing */

void sign_hash_key(struct util_digest *d, const struct sign_pubkey *k)
{
	uint8_t h[3] = {0x99, (uint8_t)(k->body_len >> 8), (uint8_t)k->body_len};

	util_digest_update(d, h, 3);
	util_digest_update(d, k->body, k->body_len);
}

void sign_hash_uid(struct util_digest *d, const uint8_t *uid, size_t len)
{
	uint8_t h[5] = {0xb4, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
	                (uint8_t)len};

	util_digest_update(d, h, 5);
	util_digest_update(d, uid, len);
}

/* Hash the signature's own part and the v4 trailer, then finalise. */
static kiln_rc hash_finish(struct util_digest *d, const uint8_t *part, size_t part_len,
                           uint8_t *out, struct kiln_err *err)
{
	uint8_t trailer[6] = {0x04,
	                      0xff,
	                      (uint8_t)(part_len >> 24),
	                      (uint8_t)(part_len >> 16),
	                      (uint8_t)(part_len >> 8),
	                      (uint8_t)part_len};

	util_digest_update(d, part, part_len);
	util_digest_update(d, trailer, sizeof(trailer));
	return util_digest_final(d, out, err);
}

/* The octets the crypto layer verifies: RSA s, or Ed25519 R ‖ S left-padded to 32 each. */
static kiln_rc sig_octets(const struct sign_sig *sig, uint8_t *out, size_t *out_len,
                          struct kiln_err *err)
{
	if (sig->pk_algo == SIGN_PK_RSA || sig->pk_algo == SIGN_PK_RSA_S) {
		if (sig->m1_len > SIGN_SIG_MAX)
			return kiln_err_set(err, KILN_ESIG, "RSA signature too long");
		memcpy(out, sig->m1, sig->m1_len);
		*out_len = sig->m1_len;
		return KILN_OK;
	}
	if (sig->pk_algo == SIGN_PK_ED25519) {
		memcpy(out, sig->m1, 64);
		*out_len = 64;
		return KILN_OK;
	}
	if (sig->m1_len > 32 || sig->m2_len > 32)
		return kiln_err_set(err, KILN_ESIG, "EdDSA signature values too long");
	memset(out, 0, 64);
	memcpy(out + 32 - sig->m1_len, sig->m1, sig->m1_len);
	memcpy(out + 64 - sig->m2_len, sig->m2, sig->m2_len);
	*out_len = 64;
	return KILN_OK;
}

static bool algo_matches(unsigned sig_algo, unsigned key_algo)
{
	bool sig_rsa = sig_algo == SIGN_PK_RSA || sig_algo == SIGN_PK_RSA_S;
	bool key_rsa = key_algo == SIGN_PK_RSA || key_algo == SIGN_PK_RSA_S;

	return sig_rsa ? key_rsa : sig_algo == key_algo;
}

kiln_rc sign_sig_check(const struct sign_sig *sig, const struct sign_pubkey *key,
                       struct util_digest *d, struct kiln_err *err)
{
	uint8_t digest[UTIL_DIGEST_MAX];
	uint8_t octets[SIGN_SIG_MAX];
	size_t n = 0;
	kiln_rc rc;

	if (!key->pkey)
		return kiln_err_set(err, KILN_EUNSUPP, "unsupported key algorithm %s (%u)",
		                    sign_pk_algo_name(key->algo), key->algo);
	if (!algo_matches(sig->pk_algo, key->algo))
		return kiln_err_set(err, KILN_ESIG, "%s signature made with a %s key",
		                    sign_pk_algo_name(sig->pk_algo), sign_pk_algo_name(key->algo));
	rc = hash_finish(d, sig->hashed_part, sig->hashed_part_len, digest, err);
	if (rc)
		return rc;
	/* The prefix is a quick reject only: it is not covered by the signature. */
	if (memcmp(digest, sig->left16, 2) != 0)
		return kiln_err_set(err, KILN_ESIG, "digest does not match (signed data changed)");
	rc = sig_octets(sig, octets, &n, err);
	if (!rc)
		rc = sign_ossl_verify(key->pkey, d->algo, digest, util_digest_size(d->algo), octets,
		                      n, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Making */

static void hashed_area(const struct sign_pubkey *signer, const struct sign_sig_spec *spec,
                        struct kiln_buf *area)
{
	uint8_t fpr[1 + SIGN_FPR_MAX];
	uint8_t t[4];

	fpr[0] = (uint8_t)signer->version;
	memcpy(fpr + 1, signer->fpr, signer->fpr_len);
	sign_subpkt_write(area, SIGN_SUB_ISSUER_FPR, fpr, 1 + signer->fpr_len);
	t[0] = (uint8_t)(spec->created >> 24);
	t[1] = (uint8_t)(spec->created >> 16);
	t[2] = (uint8_t)(spec->created >> 8);
	t[3] = (uint8_t)spec->created;
	sign_subpkt_write(area, SIGN_SUB_CREATED, t, 4);
	kiln_buf_add(area, spec->extra, spec->extra_len);
}

/* Append the signature material for the raw signature octets. */
static void material_write(const struct sign_pubkey *signer, const uint8_t *raw, size_t n,
                           struct kiln_buf *body)
{
	if (signer->algo == SIGN_PK_ED25519) {
		kiln_buf_add(body, raw, n);
	} else if (signer->algo == SIGN_PK_EDDSA) {
		sign_mpi_write(body, raw, 32);
		sign_mpi_write(body, raw + 32, 32);
	} else {
		sign_mpi_write(body, raw, n);
	}
}

kiln_rc sign_sig_make(const struct sign_pubkey *signer, const struct sign_sig_spec *spec,
                      struct util_digest *d, struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct kiln_buf area = KILN_BUF_INIT(0xffff);
	uint8_t digest[UTIL_DIGEST_MAX];
	uint8_t raw[SIGN_SIG_MAX];
	size_t raw_len = sizeof(raw);
	kiln_rc rc;

	if (!signer->pkey || !signer->has_secret)
		return kiln_err_set(err, KILN_ESIG, "no secret key to sign with");
	hashed_area(signer, spec, &area);
	rc = kiln_buf_finish(&area, err);
	if (rc)
		goto out;
	kiln_buf_addch(&body, 4);
	kiln_buf_addch(&body, (char)spec->type);
	kiln_buf_addch(&body, (char)signer->algo);
	kiln_buf_addch(&body, (char)spec->hash_algo);
	sign_put_u16(&body, (uint16_t)area.len);
	kiln_buf_add(&body, area.ptr, area.len);
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = hash_finish(d, (const uint8_t *)body.ptr, body.len, digest, err);
	if (!rc)
		rc = sign_ossl_sign(signer->pkey, d->algo, digest, util_digest_size(d->algo), raw,
		                    &raw_len, err);
	if (rc)
		goto out;
	/* Unhashed: the issuer key ID, for verifiers (rpm 4.18) that look only at that. */
	sign_put_u16(&body, 10);
	sign_subpkt_write(&body, SIGN_SUB_ISSUER, signer->keyid, 8);
	kiln_buf_add(&body, digest, 2);
	material_write(signer, raw, raw_len, &body);
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		sign_pkt_write(out, SIGN_TAG_SIGNATURE, body.ptr, body.len);
	if (!rc)
		rc = kiln_buf_finish(out, err);
out:
	kiln_buf_release(&area);
	kiln_buf_release(&body);
	return rc;
}
