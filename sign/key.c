/*
 * key.c - version 4 Public-Key and Secret-Key packets (RFC 9580 5.5), fingerprints, key IDs
 * and the rule for whether a key may make a data signature at a given time.
 */
#include "util/util.h"

#include "sign/sign_int.h"

/* 1.3.6.1.4.1.11591.15.1: Ed25519 for EdDSA "legacy" (algorithm 22). */
static const uint8_t ed25519_oid[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01};

/* The public fields of a key packet, with the material borrowed from the body. */
struct pub_fields {
	const uint8_t *n, *e; /* RSA */
	size_t n_len, e_len;
	const uint8_t *ed; /* Ed25519 public point, 32 octets */
	bool ed_ok;        /* the curve is Ed25519 */
};

static kiln_rc truncated(struct kiln_err *err)
{
	return kiln_err_set(err, KILN_EFORMAT, "truncated or malformed key packet");
}

/* An ECC curve OID: a length octet (1..254) and the OID. */
static bool take_oid(struct sign_cur *c, const uint8_t **oid, uint8_t *olen)
{
	return sign_cur_u8(c, olen) && *olen && *olen != 0xff && sign_cur_take(c, *olen, oid);
}

static kiln_rc eddsa_public(struct sign_cur *c, struct pub_fields *f, struct kiln_err *err)
{
	const uint8_t *oid;
	const uint8_t *pt;
	uint8_t olen;
	size_t n;

	if (!take_oid(c, &oid, &olen) || !sign_cur_mpi(c, &pt, &n))
		return truncated(err);
	/* The point is 0x40 followed by the 32-octet native public key. */
	if (olen == sizeof(ed25519_oid) && !memcmp(oid, ed25519_oid, olen) && n == 33 &&
	    pt[0] == 0x40) {
		f->ed = pt + 1;
		f->ed_ok = true;
	}
	return KILN_OK;
}

/* Walk the algorithm-specific public material, so the fingerprint and the start of a
 * secret part are known even for algorithms kiln cannot use. */
static kiln_rc public_material(struct sign_cur *c, unsigned algo, struct pub_fields *f,
                               struct kiln_err *err)
{
	const uint8_t *p;
	uint8_t olen;
	size_t n;
	int i;

	switch (algo) {
	case SIGN_PK_RSA:
	case 2: /* RSA encrypt-only */
	case SIGN_PK_RSA_S:
		if (!sign_cur_mpi(c, &f->n, &f->n_len) || !sign_cur_mpi(c, &f->e, &f->e_len))
			return truncated(err);
		return KILN_OK;
	case 16: /* Elgamal */
	case SIGN_PK_DSA:
		for (i = 0; i < (algo == 16 ? 3 : 4); i++) {
			if (!sign_cur_mpi(c, &p, &n))
				return truncated(err);
		}
		return KILN_OK;
	case 18: /* ECDH: OID, point, KDF parameters */
		if (!take_oid(c, &p, &olen) || !sign_cur_mpi(c, &p, &n) || !sign_cur_u8(c, &olen) ||
		    !sign_cur_take(c, olen, &p))
			return truncated(err);
		return KILN_OK;
	case SIGN_PK_ECDSA:
		if (!take_oid(c, &p, &olen) || !sign_cur_mpi(c, &p, &n))
			return truncated(err);
		return KILN_OK;
	case SIGN_PK_EDDSA:
		return eddsa_public(c, f, err);
	case 25: /* X25519 */
	case SIGN_PK_ED25519:
	case 26: /* X448 */
	case 28: /* Ed448 */
		n = algo == 25 || algo == SIGN_PK_ED25519 ? 32 : algo == 26 ? 56 : 57;
		if (!sign_cur_take(c, n, &p))
			return truncated(err);
		if (algo == SIGN_PK_ED25519) {
			f->ed = p;
			f->ed_ok = true;
		}
		return KILN_OK;
	default:
		return kiln_err_set(err, KILN_EUNSUPP, "unknown public-key algorithm %u", algo);
	}
}

static kiln_rc fingerprint(struct sign_pubkey *k, struct kiln_err *err)
{
	struct util_digest d;
	kiln_rc rc;

	rc = util_digest_init(&d, UTIL_DIGEST_SHA1, err);
	if (rc)
		return rc;
	sign_hash_key(&d, k);
	rc = util_digest_final(&d, k->fpr, err);
	util_digest_release(&d);
	k->fpr_len = 20;
	memcpy(k->keyid, k->fpr + 12, 8);
	return rc;
}

static kiln_rc public_pkey(struct sign_pubkey *k, const struct pub_fields *f, struct kiln_err *err)
{
	if (f->n)
		return sign_ossl_rsa_new(f->n, f->n_len, f->e, f->e_len, NULL, &k->pkey, err);
	if (f->ed_ok)
		return sign_ossl_ed25519_new(f->ed, NULL, &k->pkey, err);
	return KILN_OK;
}

/* Sum of the secret octets mod 65536 (RFC 9580 5.5.3, usage 0). */
static bool checksum_ok(const uint8_t *p, size_t n, const uint8_t *sum)
{
	unsigned s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += p[i];
	return (s & 0xffff) == sign_get_u16(sum);
}

static kiln_rc rsa_secret(struct sign_pubkey *k, const struct pub_fields *f, struct sign_cur *c,
                          struct kiln_err *err)
{
	struct sign_rsa_secret s;

	if (!sign_cur_mpi(c, &s.d, &s.d_len) || !sign_cur_mpi(c, &s.p, &s.p_len) ||
	    !sign_cur_mpi(c, &s.q, &s.q_len) || !sign_cur_mpi(c, &s.u, &s.u_len))
		return truncated(err);
	return sign_ossl_rsa_new(f->n, f->n_len, f->e, f->e_len, &s, &k->pkey, err);
}

static kiln_rc ed_secret(struct sign_pubkey *k, const struct pub_fields *f, struct sign_cur *c,
                         struct kiln_err *err)
{
	uint8_t seed[32];
	const uint8_t *p;
	size_t n = 32;
	kiln_rc rc;

	if (k->algo == SIGN_PK_EDDSA ? !sign_cur_mpi(c, &p, &n) : !sign_cur_take(c, 32, &p))
		return truncated(err);
	if (n > 32)
		return kiln_err_set(err, KILN_EFORMAT, "Ed25519 secret key too long");
	/* The MPI form drops leading zero octets of the 32-octet seed. */
	memset(seed, 0, sizeof(seed));
	memcpy(seed + 32 - n, p, n);
	rc = sign_ossl_ed25519_new(f->ed, seed, &k->pkey, err);
	sign_wipe(seed, sizeof(seed));
	return rc;
}

/* The secret part after the public material: usage octet, material, checksum. */
static kiln_rc secret_part(struct sign_pubkey *k, const struct pub_fields *f, struct sign_cur *c,
                           struct kiln_err *err)
{
	size_t start;
	const uint8_t *sum;
	uint8_t usage;
	kiln_rc rc;

	if (!sign_cur_u8(c, &usage))
		return truncated(err);
	if (usage != 0) {
		/* S2K-protected (or a gpg stub): the public key stays usable for verifying. */
		k->secret_protected = true;
		return KILN_OK;
	}
	if (!f->n && !f->ed_ok)
		return KILN_OK; /* a secret kiln cannot use (e.g. an ECDH subkey) */
	start = c->off;
	sign_ossl_free(k->pkey);
	k->pkey = NULL;
	rc = f->n ? rsa_secret(k, f, c, err) : ed_secret(k, f, c, err);
	if (rc)
		return rc;
	if (!sign_cur_take(c, 2, &sum) || sign_cur_left(c))
		return kiln_err_set(err, KILN_EFORMAT, "malformed secret key checksum");
	if (!checksum_ok(c->p + start, c->off - 2 - start, sum))
		return kiln_err_set(err, KILN_EFORMAT, "secret key checksum mismatch");
	k->has_secret = true;
	return KILN_OK;
}

kiln_rc sign_pubkey_parse(const uint8_t *body, size_t len, bool secret, struct sign_pubkey *k,
                          size_t *pub_len, struct kiln_err *err)
{
	struct pub_fields f = {0};
	struct sign_cur c;
	uint8_t v;
	uint8_t algo;
	kiln_rc rc;

	memset(k, 0, sizeof(*k));
	sign_cur_init(&c, body, len);
	if (!sign_cur_u8(&c, &v))
		return truncated(err);
	if (v != 4)
		return kiln_err_set(err, KILN_EUNSUPP, "OpenPGP version %u keys are not supported",
		                    v);
	if (!sign_cur_u32(&c, &k->created) || !sign_cur_u8(&c, &algo))
		return truncated(err);
	k->version = v;
	k->algo = algo;
	rc = public_material(&c, algo, &f, err);
	if (rc)
		return rc;
	k->body = body;
	k->body_len = c.off;
	*pub_len = c.off;
	if (!secret && sign_cur_left(&c))
		return kiln_err_set(err, KILN_EFORMAT, "%zu stray bytes after the public key",
		                    sign_cur_left(&c));
	rc = fingerprint(k, err);
	if (!rc)
		rc = public_pkey(k, &f, err);
	if (!rc && f.n)
		k->bits = sign_ossl_bits(k->pkey);
	else if (!rc && f.ed_ok)
		k->bits = 255;
	if (!rc && secret)
		rc = secret_part(k, &f, &c, err);
	if (rc)
		sign_pubkey_release(k);
	return rc;
}

void sign_pubkey_release(struct sign_pubkey *k)
{
	if (!k)
		return;
	sign_ossl_free(k->pkey);
	k->pkey = NULL;
	k->has_secret = false;
}

/* ---------------------------------------------------------------------------------------- */
/* Policy */

static bool expired_at(const struct sign_pubkey *k, uint32_t t)
{
	return k->expires && (uint64_t)t >= (uint64_t)k->created + k->expires;
}

bool sign_pubkey_can_sign_at(const struct sign_pubkey *k, const struct sign_pubkey *primary,
                             uint32_t t, char *why, size_t why_size)
{
	const char *reason = NULL;

	if (!k->pkey)
		reason = "its algorithm is not supported";
	else if (!k->bound)
		reason = "it has no valid binding signature";
	else if (k->revoked || primary->revoked)
		reason = "it is revoked";
	else if (k->has_flags && !(k->flags & SIGN_KEYFLAG_SIGN))
		reason = "it is not a signing key";
	else if (sign_ossl_is_rsa(k->pkey) && k->bits < 2048)
		reason = "RSA keys below 2048 bits are too weak";
	else if (t < k->created)
		reason = "the signature is older than the key";
	else if (expired_at(k, t) || expired_at(primary, t))
		reason = "the key had expired at the signature time";
	if (reason && why)
		sign_strlcpy(why, reason, why_size);
	return !reason;
}

const struct sign_pubkey *sign_key_find(const struct sign_key *key, const uint8_t keyid[8])
{
	size_t i;

	if (!memcmp(key->primary.keyid, keyid, 8))
		return &key->primary;
	for (i = 0; i < key->nsubkeys; i++) {
		if (!memcmp(key->subkeys[i].keyid, keyid, 8))
			return &key->subkeys[i];
	}
	return NULL;
}

static bool may_sign(const struct sign_pubkey *k, const struct sign_pubkey *primary)
{
	return k->has_secret && sign_pubkey_can_sign_at(k, primary, k->created, NULL, 0);
}

const struct sign_pubkey *sign_key_signer(const struct sign_key *key)
{
	const struct sign_pubkey *best = NULL;
	size_t i;

	if (may_sign(&key->primary, &key->primary))
		return &key->primary;
	for (i = 0; i < key->nsubkeys; i++) {
		const struct sign_pubkey *s = &key->subkeys[i];

		if (may_sign(s, &key->primary) && (!best || s->bound_time > best->bound_time))
			best = s;
	}
	return best;
}

unsigned sign_key_signing_algo(const struct sign_key *key)
{
	const struct sign_pubkey *s = sign_key_signer(key);

	return s ? s->algo : 0;
}

void sign_key_info_get(const struct sign_key *key, struct sign_key_info *out)
{
	const struct sign_pubkey *p = &key->primary;

	memset(out, 0, sizeof(*out));
	util_hex_encode(p->fpr, p->fpr_len, out->fingerprint);
	util_hex_encode(p->keyid, 8, out->keyid);
	util_hex_encode(p->keyid + 4, 4, out->short_id);
	out->version = p->version;
	out->algo = p->algo;
	out->bits = p->bits;
	out->created = p->created;
	out->expires = p->expires ? (int64_t)p->created + p->expires : 0;
	out->revoked = p->revoked;
	out->has_secret = sign_key_signer(key) != NULL;
	out->uid = key->uid ? key->uid : "";
}
