/*
 * keyfile.c - making keys, exporting certificates and secret keys, and reading secret key
 * files safely.
 *
 * A generated key is shaped like gpg's (what rpm 4.18, gpg and sq all accept): a v4 primary
 * key with flags certify+sign, one user ID, and a positive-certification self-signature
 * whose hashed subpackets are, in gpg's order, issuer fingerprint, creation time, key
 * flags, preferred symmetric, hash and compression algorithms, features and key server
 * preferences, none of them critical; the unhashed area has the issuer key ID.
 *
 * Secrets only ever live in OpenSSL's keys, in fixed scratch arrays, or in buffers grown
 * once to their final size, and all of these are wiped (sign_wipe) on every path.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sign/sign_int.h"

static const uint8_t ed25519_oid[] = {0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01};

#define SECRET_BODY_MAX (8 * KILN_KIB)

kiln_rc sign_keygen_algo_parse(const char *name, enum sign_keygen_algo *out, struct kiln_err *err)
{
	static const struct {
		const char *name;
		enum sign_keygen_algo algo;
	} names[] = {
	    {"rsa2048", SIGN_KEYGEN_RSA2048},
	    {"rsa3072", SIGN_KEYGEN_RSA3072},
	    {"rsa4096", SIGN_KEYGEN_RSA4096},
	    {"ed25519", SIGN_KEYGEN_ED25519},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++) {
		if (!strcasecmp(name, names[i].name)) {
			*out = names[i].algo;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "unknown key algorithm '%s' (use rsa4096, rsa3072, rsa2048 or ed25519)",
	                    name);
}

/* The public key packet body of a freshly generated key. */
static kiln_rc public_body(struct sign_pkey *pk, unsigned algo, uint32_t created,
                           struct kiln_buf *body, struct kiln_err *err)
{
	uint8_t point[33];
	kiln_rc rc;

	kiln_buf_addch(body, 4);
	sign_put_u32(body, created);
	kiln_buf_addch(body, (char)algo);
	if (algo == SIGN_PK_RSA) {
		rc = sign_ossl_rsa_export(pk, body, NULL, err);
	} else {
		point[0] = 0x40;
		rc = sign_ossl_ed25519_export(pk, point + 1, NULL, err);
		kiln_buf_add(body, ed25519_oid, sizeof(ed25519_oid));
		sign_mpi_write(body, point, sizeof(point));
	}
	return rc ? rc : kiln_buf_finish(body, err);
}

/* The self-signature's hashed subpackets after issuer fingerprint and creation time; with
 * a key expiration time (seconds after the key's creation) when expires is not 0. */
static void selfsig_extra(struct kiln_buf *x, uint32_t expires)
{
	static const uint8_t flags[] = {SIGN_KEYFLAG_CERTIFY | SIGN_KEYFLAG_SIGN};
	static const uint8_t sym[] = {9, 8, 7};       /* AES-256, -192, -128 */
	static const uint8_t hash[] = {10, 9, 8, 11}; /* SHA-512, -384, -256, -224 */
	static const uint8_t zip[] = {2, 3, 1};       /* ZLIB, BZip2, ZIP */
	static const uint8_t features[] = {0x01};     /* SEIPD v1 (MDC) */
	static const uint8_t ks[] = {0x80};           /* no-modify */

	sign_subpkt_write(x, SIGN_SUB_KEY_FLAGS, flags, sizeof(flags));
	if (expires) {
		uint8_t e[4] = {(uint8_t)(expires >> 24), (uint8_t)(expires >> 16),
		                (uint8_t)(expires >> 8), (uint8_t)expires};

		sign_subpkt_write(x, SIGN_SUB_KEY_EXPIRES, e, sizeof(e));
	}
	sign_subpkt_write(x, SIGN_SUB_PREF_SYM, sym, sizeof(sym));
	sign_subpkt_write(x, SIGN_SUB_PREF_HASH, hash, sizeof(hash));
	sign_subpkt_write(x, SIGN_SUB_PREF_COMPRESS, zip, sizeof(zip));
	sign_subpkt_write(x, SIGN_SUB_FEATURES, features, sizeof(features));
	sign_subpkt_write(x, SIGN_SUB_KEYSERVER_PREFS, ks, sizeof(ks));
}

/* A positive-certification self-signature of uid (len bytes) by k made at created, with
 * key expiration expires (seconds after the key's creation, 0: never), appended to out. */
static kiln_rc self_sig(const struct sign_pubkey *k, const char *uid, size_t len, uint32_t created,
                        uint32_t expires, struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf extra = KILN_BUF_INIT(KILN_KIB);
	struct sign_sig_spec spec = {
	    .type = SIGN_SIG_CERT_POSITIVE, .hash_algo = SIGN_HASH_SHA256, .created = created};
	struct util_digest d = {0};
	kiln_rc rc;

	selfsig_extra(&extra, expires);
	rc = kiln_buf_finish(&extra, err);
	if (!rc)
		rc = util_digest_init(&d, UTIL_DIGEST_SHA256, err);
	if (rc)
		goto out;
	spec.extra = (const uint8_t *)extra.ptr;
	spec.extra_len = extra.len;
	sign_hash_key(&d, k);
	sign_hash_uid(&d, (const uint8_t *)uid, len);
	rc = sign_sig_make(k, &spec, &d, out, err);
out:
	util_digest_release(&d);
	kiln_buf_release(&extra);
	return rc;
}

/* Certify uid with the new key: packets key, uid, self-signature into cert. */
static kiln_rc self_certify(struct sign_pubkey *k, const char *uid, uint32_t expires,
                            struct kiln_buf *cert, struct kiln_err *err)
{
	sign_pkt_write(cert, SIGN_TAG_PUBLIC_KEY, k->body, k->body_len);
	sign_pkt_write(cert, SIGN_TAG_USER_ID, uid, strlen(uid));
	return self_sig(k, uid, strlen(uid), k->created, expires, cert, err);
}

/* Seconds from a key's creation to the absolute time expires (0: never). */
static kiln_rc expiry_rel(int64_t created, int64_t expires, uint32_t *out, struct kiln_err *err)
{
	*out = 0;
	if (!expires)
		return KILN_OK;
	if (expires <= created || expires - created > UINT32_MAX)
		return kiln_err_set(err, KILN_EINVAL,
		                    "key expiry %" PRId64 " is not after its creation %" PRId64
		                    " (or too far)",
		                    expires, created);
	*out = (uint32_t)(expires - created);
	return KILN_OK;
}

static kiln_rc check_uid(const char *uid, struct kiln_err *err)
{
	size_t i;

	if (!uid[0] || strlen(uid) > 4 * KILN_KIB)
		return kiln_err_set(err, KILN_EINVAL, "a user ID must be 1 to 4096 bytes");
	for (i = 0; uid[i]; i++) {
		if ((unsigned char)uid[i] < 0x20 || uid[i] == 0x7f)
			return kiln_err_set(err, KILN_EINVAL,
			                    "the user ID contains a control character");
	}
	return KILN_OK;
}

static kiln_rc generate_pkey(enum sign_keygen_algo algo, struct sign_pkey **pk, unsigned *pgp,
                             struct kiln_err *err)
{
	*pgp = algo == SIGN_KEYGEN_ED25519 ? SIGN_PK_EDDSA : SIGN_PK_RSA;
	switch (algo) {
	case SIGN_KEYGEN_RSA2048:
		return sign_ossl_rsa_generate(2048, pk, err);
	case SIGN_KEYGEN_RSA3072:
		return sign_ossl_rsa_generate(3072, pk, err);
	case SIGN_KEYGEN_RSA4096:
		return sign_ossl_rsa_generate(4096, pk, err);
	case SIGN_KEYGEN_ED25519:
		return sign_ossl_ed25519_generate(pk, err);
	}
	return kiln_err_set(err, KILN_EINVAL, "unknown key algorithm");
}

kiln_rc sign_key_generate(enum sign_keygen_algo algo, const char *uid, int64_t created,
                          struct sign_key **out, struct kiln_err *err)
{
	return sign_key_generate_expiring(algo, uid, created, 0, out, err);
}

kiln_rc sign_key_generate_expiring(enum sign_keygen_algo algo, const char *uid, int64_t created,
                                   int64_t expires, struct sign_key **out, struct kiln_err *err)
{
	uint32_t rel = 0;
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct kiln_buf cert = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_pubkey k = {0};
	struct sign_pkey *pk = NULL;
	unsigned pgp = 0;
	size_t pub_len;
	kiln_rc rc;

	*out = NULL;
	rc = check_uid(uid, err);
	if (!rc && (created < 0 || created > UINT32_MAX))
		rc = kiln_err_set(err, KILN_EINVAL, "key creation time %" PRId64 " out of range",
		                  created);
	if (!rc)
		rc = expiry_rel(created, expires, &rel, err);
	if (!rc)
		rc = generate_pkey(algo, &pk, &pgp, err);
	if (!rc)
		rc = public_body(pk, pgp, (uint32_t)created, &body, err);
	/* Parse our own body (computes fingerprint and key ID), then sign with the secret. */
	if (!rc)
		rc = sign_pubkey_parse((const uint8_t *)body.ptr, body.len, false, &k, &pub_len,
		                       err);
	if (rc)
		goto out;
	sign_ossl_free(k.pkey);
	k.pkey = pk;
	k.has_secret = true;
	rc = self_certify(&k, uid, rel, &cert, err);
	k.pkey = NULL;
	/* The normal parser checks what we made, then the secret joins the primary key. */
	if (!rc)
		rc = sign_key_from_mem(cert.ptr, cert.len, out, err);
	if (!rc) {
		sign_ossl_free((*out)->primary.pkey);
		(*out)->primary.pkey = pk;
		(*out)->primary.has_secret = true;
		pk = NULL;
	}
out:
	sign_ossl_free(pk);
	kiln_buf_release(&cert);
	kiln_buf_release(&body);
	return rc;
}

/* The certificate of key with sig inserted after the primary user ID's packet. */
static kiln_rc cert_with_sig(const struct sign_key *key, const struct kiln_buf *sig,
                             struct kiln_buf *cert, struct kiln_err *err)
{
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	bool done = false;
	kiln_rc rc;

	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	while ((rc = sign_pkt_next(&r, &pkt, err)) == KILN_OK) {
		kiln_buf_add(cert, pkt.raw, pkt.raw_len);
		if (!done && pkt.tag == SIGN_TAG_USER_ID && pkt.len == strlen(key->uid) &&
		    !memcmp(pkt.body, key->uid, pkt.len)) {
			kiln_buf_add(cert, sig->ptr, sig->len);
			done = true;
		}
	}
	if (rc != KILN_ENOTFOUND)
		return rc;
	if (!done)
		return kiln_err_set(err, KILN_EINVAL, "the key has no primary user ID to certify");
	return kiln_buf_finish(cert, err);
}

kiln_rc sign_key_extend(struct sign_key *key, int64_t now, int64_t expires, struct sign_key **out,
                        struct kiln_err *err)
{
	struct kiln_buf sig = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct kiln_buf cert = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	uint32_t rel = 0;
	kiln_rc rc;

	*out = NULL;
	if (!key->primary.has_secret || !key->primary.pkey)
		return kiln_err_set(err, KILN_EINVAL, "extending a key needs its secret");
	if (now < key->primary.created || now > UINT32_MAX)
		return kiln_err_set(err, KILN_EINVAL, "time %" PRId64 " out of range", now);
	/* the newest self-signature wins: it must be newer than the one in force */
	if (key->primary.bound && (uint32_t)now <= key->primary.bound_time)
		now = (int64_t)key->primary.bound_time + 1;
	rc = expiry_rel(key->primary.created, expires, &rel, err);
	if (!rc)
		rc = self_sig(&key->primary, key->uid, strlen(key->uid), (uint32_t)now, rel, &sig,
		              err);
	if (!rc)
		rc = kiln_buf_finish(&sig, err);
	if (!rc)
		rc = cert_with_sig(key, &sig, &cert, err);
	if (!rc)
		rc = sign_key_from_mem(cert.ptr, cert.len, out, err);
	if (!rc) { /* the secret moves to the new certificate */
		sign_ossl_free((*out)->primary.pkey);
		(*out)->primary.pkey = key->primary.pkey;
		(*out)->primary.has_secret = true;
		key->primary.pkey = NULL;
		key->primary.has_secret = false;
	}
	kiln_buf_release(&sig);
	kiln_buf_release(&cert);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Export */

/* The secret-key packet body for k: public body, usage 0, material, checksum. */
static kiln_rc secret_body(const struct sign_pubkey *k, struct kiln_buf *sec, struct kiln_err *err)
{
	uint8_t seed[32];
	size_t start;
	unsigned sum = 0;
	size_t i;
	kiln_rc rc;

	kiln_buf_add(sec, k->body, k->body_len);
	kiln_buf_addch(sec, 0);
	start = sec->len;
	if (sign_ossl_is_rsa(k->pkey)) {
		rc = sign_ossl_rsa_export(k->pkey, NULL, sec, err);
	} else {
		rc = sign_ossl_ed25519_export(k->pkey, seed, seed, err);
		if (k->algo == SIGN_PK_ED25519)
			kiln_buf_add(sec, seed, 32);
		else
			sign_mpi_write(sec, seed, 32);
		sign_wipe(seed, sizeof(seed));
	}
	if (rc)
		return rc;
	for (i = start; i < sec->len; i++)
		sum += (uint8_t)sec->ptr[i];
	sign_put_u16(sec, (uint16_t)sum);
	return kiln_buf_finish(sec, err);
}

/* Write packet pkt of the certificate in secret form when its key holds a secret. */
static kiln_rc export_packet(const struct sign_key *key, const struct sign_pkt *pkt,
                             struct kiln_buf *bin, struct kiln_err *err)
{
	struct kiln_buf sec = KILN_BUF_INIT(SECRET_BODY_MAX);
	const struct sign_pubkey *k = NULL;
	size_t i;
	kiln_rc rc;

	if (pkt->tag == SIGN_TAG_PUBLIC_KEY)
		k = &key->primary;
	for (i = 0; pkt->tag == SIGN_TAG_PUBLIC_SUBKEY && i < key->nsubkeys; i++) {
		if (key->subkeys[i].body == pkt->body)
			k = &key->subkeys[i];
	}
	if (!k || !k->has_secret) {
		kiln_buf_add(bin, pkt->raw, pkt->raw_len);
		return KILN_OK;
	}
	if (!kiln_buf_grow(&sec, SECRET_BODY_MAX - 1))
		return kiln_buf_finish(&sec, err);
	rc = secret_body(k, &sec, err);
	if (!rc)
		sign_pkt_write(bin,
		               k == &key->primary ? SIGN_TAG_SECRET_KEY : SIGN_TAG_SECRET_SUBKEY,
		               sec.ptr, sec.len);
	sign_buf_wipe(&sec);
	return rc;
}

static kiln_rc export_secret(const struct sign_key *key, struct kiln_buf *bin, struct kiln_err *err)
{
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	kiln_rc rc;

	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	while ((rc = sign_pkt_next(&r, &pkt, err)) == KILN_OK) {
		rc = export_packet(key, &pkt, bin, err);
		if (rc)
			return rc;
	}
	return rc == KILN_ENOTFOUND ? kiln_buf_finish(bin, err) : rc;
}

kiln_rc sign_key_export(const struct sign_key *key, unsigned flags, struct kiln_buf *out,
                        struct kiln_err *err)
{
	struct kiln_buf bin = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	size_t room;
	kiln_rc rc;

	if (!(flags & SIGN_EXPORT_SECRET)) {
		if (flags & SIGN_EXPORT_ARMOR)
			sign_armor_encode(SIGN_ARMOR_PUBLIC_KEY, key->cert.ptr, key->cert.len, out);
		else
			kiln_buf_add(out, key->cert.ptr, key->cert.len);
		return kiln_buf_finish(out, err);
	}
	if (!sign_key_signer(key))
		return kiln_err_set(err, KILN_EINVAL, "the key has no secret to export");
	/* Grow both buffers once, to more than the secret form can take. */
	room = key->cert.len + (key->nsubkeys + 1) * SECRET_BODY_MAX;
	if (!kiln_buf_grow(&bin, room)) {
		rc = kiln_buf_finish(&bin, err);
		goto out;
	}
	if (!kiln_buf_grow(out, room / 48 * 65 + 256)) {
		rc = kiln_buf_finish(out, err);
		goto out;
	}
	rc = export_secret(key, &bin, err);
	if (rc)
		goto out;
	if (flags & SIGN_EXPORT_ARMOR)
		sign_armor_encode(SIGN_ARMOR_PRIVATE_KEY, bin.ptr, bin.len, out);
	else
		kiln_buf_add(out, bin.ptr, bin.len);
	rc = kiln_buf_finish(out, err);
out:
	sign_buf_wipe(&bin);
	return rc;
}

kiln_rc sign_key_save_secret(const struct sign_key *key, const char *path, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	kiln_rc rc;

	if (util_exists(path))
		return kiln_err_set(err, KILN_EEXIST, "'%s' already exists", path);
	rc = sign_key_export(key, SIGN_EXPORT_SECRET | SIGN_EXPORT_ARMOR, &out, err);
	if (!rc)
		rc = util_write_atomic(path, out.ptr, out.len, 0600, err);
	sign_buf_wipe(&out);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Loading secret key files */

/* Open path for reading a secret: no symlinks, a regular file, no access for others. */
static kiln_rc open_secret(const char *path, int *fd, size_t *size, struct kiln_err *err)
{
	struct stat st;

	*fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0) {
		if (errno == ELOOP)
			return kiln_err_sys(err, KILN_EPRIV, "secret key '%s' is a symlink", path);
		return kiln_err_sys(err, errno == ENOENT ? KILN_ENOTFOUND : KILN_EIO,
		                    "cannot open secret key '%s'", path);
	}
	if (fstat(*fd, &st) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot stat secret key '%s'", path);
	if (!S_ISREG(st.st_mode))
		return kiln_err_set(err, KILN_EINVAL, "secret key '%s' is not a regular file",
		                    path);
	if (st.st_mode & 077)
		return kiln_err_set(err, KILN_EPRIV,
		                    "secret key '%s' is accessible by other users (mode %04o): "
		                    "run chmod 600 on it",
		                    path, (unsigned)(st.st_mode & 07777));
	if ((uint64_t)st.st_size > KILN_LIMIT_PGP_FILE)
		return kiln_err_set(err, KILN_ELIMIT, "secret key '%s' is larger than %zu bytes",
		                    path, KILN_LIMIT_PGP_FILE);
	*size = (size_t)st.st_size;
	return KILN_OK;
}

static kiln_rc why_no_signer(const struct sign_key *key, const char *path, struct kiln_err *err)
{
	size_t i;
	bool protected = key->primary.secret_protected;

	for (i = 0; i < key->nsubkeys; i++)
	protected = protected || key->subkeys[i].secret_protected;
	if (protected)
		return kiln_err_set(err, KILN_ESIG,
		                    "secret key '%s' is protected by a passphrase: kiln needs it "
		                    "unprotected (gpg --export-secret-keys after removing the "
		                    "passphrase with gpg --change-passphrase)",
		                    path);
	return kiln_err_set(err, KILN_ESIG, "'%s' holds no usable secret signing key", path);
}

kiln_rc sign_key_load_secret(const char *path, struct sign_key **out, struct kiln_err *err)
{
	uint8_t *data = NULL;
	size_t size = 0;
	size_t got = 0;
	int fd = -1;
	kiln_rc rc;

	*out = NULL;
	rc = open_secret(path, &fd, &size, err);
	if (!rc && !(data = kiln_malloc(size + 1)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_read_full(fd, data, size, &got, err);
	if (!rc)
		rc = sign_key_from_mem(data, got, out, err);
	if (!rc && !sign_key_signer(*out)) {
		rc = why_no_signer(*out, path, err);
		sign_key_free(*out);
		*out = NULL;
	}
	sign_wipe(data, size);
	free(data);
	util_close(fd);
	return rc;
}
