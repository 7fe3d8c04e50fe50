/*
 * sign_int.h - sign/'s private interfaces: packet framing, MPIs, subpackets, key and
 * signature structs, hashing, armor, and the OpenSSL wrapper (sign/openssl.c).
 *
 * Parsed structs are fixed-width and point into the bytes they were parsed from ("borrowed
 * from the input"); every length read from input is checked against what remains before it
 * is used (shared/STYLE.md rules 12 and 16).
 */
#ifndef KILN_SIGN_INT_H
#define KILN_SIGN_INT_H

#include "util/util.h"

#include "sign/sign.h"

/* OpenPGP packet tags (RFC 9580 5). */
enum sign_tag {
	SIGN_TAG_SIGNATURE = 2,
	SIGN_TAG_SECRET_KEY = 5,
	SIGN_TAG_PUBLIC_KEY = 6,
	SIGN_TAG_SECRET_SUBKEY = 7,
	SIGN_TAG_MARKER = 10,
	SIGN_TAG_TRUST = 12,
	SIGN_TAG_USER_ID = 13,
	SIGN_TAG_PUBLIC_SUBKEY = 14,
	SIGN_TAG_USER_ATTRIBUTE = 17,
};

/* Signature types (RFC 9580 5.2.1). */
enum sign_sigtype {
	SIGN_SIG_BINARY = 0x00,
	SIGN_SIG_CERT_GENERIC = 0x10,
	SIGN_SIG_CERT_POSITIVE = 0x13,
	SIGN_SIG_SUBKEY_BINDING = 0x18,
	SIGN_SIG_PRIMARY_BINDING = 0x19,
	SIGN_SIG_DIRECT_KEY = 0x1f,
	SIGN_SIG_KEY_REVOCATION = 0x20,
	SIGN_SIG_SUBKEY_REVOCATION = 0x28,
	SIGN_SIG_CERT_REVOCATION = 0x30,
};

/* Signature subpacket types (RFC 9580 5.2.3.7). */
enum sign_subpkt_type {
	SIGN_SUB_CREATED = 2,
	SIGN_SUB_SIG_EXPIRES = 3,
	SIGN_SUB_EXPORTABLE = 4,
	SIGN_SUB_TRUST = 5,
	SIGN_SUB_REGEX = 6,
	SIGN_SUB_REVOCABLE = 7,
	SIGN_SUB_KEY_EXPIRES = 9,
	SIGN_SUB_PREF_SYM = 11,
	SIGN_SUB_REVOCATION_KEY = 12,
	SIGN_SUB_ISSUER = 16,
	SIGN_SUB_NOTATION = 20,
	SIGN_SUB_PREF_HASH = 21,
	SIGN_SUB_PREF_COMPRESS = 22,
	SIGN_SUB_KEYSERVER_PREFS = 23,
	SIGN_SUB_PREF_KEYSERVER = 24,
	SIGN_SUB_PRIMARY_UID = 25,
	SIGN_SUB_POLICY_URI = 26,
	SIGN_SUB_KEY_FLAGS = 27,
	SIGN_SUB_SIGNER_UID = 28,
	SIGN_SUB_REVOCATION_REASON = 29,
	SIGN_SUB_FEATURES = 30,
	SIGN_SUB_TARGET = 31,
	SIGN_SUB_EMBEDDED_SIG = 32,
	SIGN_SUB_ISSUER_FPR = 33,
	SIGN_SUB_PREF_AEAD = 34,
	SIGN_SUB_INTENDED_RECIPIENT = 35,
	SIGN_SUB_PREF_AEAD_CIPHERS = 39,
};

/* Key flags (RFC 9580 5.2.3.29). */
#define SIGN_KEYFLAG_CERTIFY 0x01
#define SIGN_KEYFLAG_SIGN 0x02

#define SIGN_FPR_MAX 32   /* v6 fingerprints are SHA-256 */
#define SIGN_SIG_MAX 1024 /* RSA-8192 is 1024 octets */

/* ---------------------------------------------------------------------------------------- */
/* A read cursor over bytes. Reads return false (and leave the cursor) when fewer bytes
 * remain than asked for. */

struct sign_cur {
	const uint8_t *p; /* borrowed */
	size_t len;
	size_t off;
};

void sign_cur_init(struct sign_cur *c, const void *p, size_t len);
size_t sign_cur_left(const struct sign_cur *c);
bool sign_cur_u8(struct sign_cur *c, uint8_t *v);
bool sign_cur_u16(struct sign_cur *c, uint16_t *v);
bool sign_cur_u32(struct sign_cur *c, uint32_t *v);
/* Borrow n bytes. */
bool sign_cur_take(struct sign_cur *c, size_t n, const uint8_t **p);
/* A multiprecision integer: *p and *n get its magnitude octets (borrowed). False when
 * truncated or not in its one valid encoding (bit count from the top set bit). */
bool sign_cur_mpi(struct sign_cur *c, const uint8_t **p, size_t *n);

/* Append an MPI for the big-endian magnitude p[0..n) (leading zeros are stripped). */
void sign_mpi_write(struct kiln_buf *out, const uint8_t *p, size_t n);
void sign_put_u16(struct kiln_buf *out, uint16_t v);
void sign_put_u32(struct kiln_buf *out, uint32_t v);
uint16_t sign_get_u16(const uint8_t *p);
uint32_t sign_get_u32(const uint8_t *p);

/* ---------------------------------------------------------------------------------------- */
/* Packet framing (RFC 9580 4.2): old and new formats; partial lengths are refused because
 * no packet kiln reads may use them. */

struct sign_pkt {
	unsigned tag;
	const uint8_t *body; /* borrowed from the input */
	size_t len;          /* body length */
	const uint8_t *raw;  /* borrowed: the header and body */
	size_t raw_len;
	size_t off; /* offset of the header in the input */
};

struct sign_pkt_reader {
	struct sign_cur cur;
	size_t count; /* packets read so far */
};

void sign_pkt_reader_init(struct sign_pkt_reader *r, const void *data, size_t len);
/* KILN_OK with *pkt filled, KILN_ENOTFOUND at the end of the input, KILN_EFORMAT for a
 * malformed header or a body beyond the input, KILN_ELIMIT for a body above
 * KILN_LIMIT_PGP_PACKET or more than KILN_LIMIT_PGP_PACKETS packets. */
KILN_MUST_CHECK kiln_rc sign_pkt_next(struct sign_pkt_reader *r, struct sign_pkt *pkt,
                                      struct kiln_err *err);
/* Append a packet header: old format (as gpg writes) for tags below 16, else new format. */
void sign_pkt_header_write(struct kiln_buf *out, unsigned tag, size_t len);
void sign_pkt_write(struct kiln_buf *out, unsigned tag, const void *body, size_t len);

/* Subpackets (RFC 9580 5.2.3.7). */
struct sign_subpkt {
	unsigned type; /* without the critical bit */
	bool critical;
	const uint8_t *data; /* borrowed */
	size_t len;
};

/* KILN_OK with *sp, KILN_ENOTFOUND at the end of the area, KILN_EFORMAT when malformed. */
KILN_MUST_CHECK kiln_rc sign_subpkt_next(struct sign_cur *area, struct sign_subpkt *sp,
                                         struct kiln_err *err);
void sign_subpkt_write(struct kiln_buf *out, unsigned type, const void *data, size_t len);

/* ---------------------------------------------------------------------------------------- */
/* The OpenSSL wrapper (sign/openssl.c). A struct sign_pkey is an EVP_PKEY. */

struct sign_pkey;

/* OpenPGP's RSA secret: p < q, u = p^-1 mod q (RFC 9580 5.5.5.1); big-endian magnitudes,
 * borrowed. */
struct sign_rsa_secret {
	const uint8_t *d, *p, *q, *u;
	size_t d_len, p_len, q_len, u_len;
};

/* Public RSA key from n and e; with sec also the private key, checked for consistency. */
KILN_MUST_CHECK kiln_rc sign_ossl_rsa_new(const uint8_t *n, size_t n_len, const uint8_t *e,
                                          size_t e_len, const struct sign_rsa_secret *sec,
                                          struct sign_pkey **out, struct kiln_err *err);
/* Ed25519 from the 32-octet public key; with seed (32 octets) also the private key, which
 * must derive pub (KILN_ESIG otherwise). */
KILN_MUST_CHECK kiln_rc sign_ossl_ed25519_new(const uint8_t pub[32], const uint8_t *seed,
                                              struct sign_pkey **out, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc sign_ossl_rsa_generate(unsigned bits, struct sign_pkey **out,
                                               struct kiln_err *err);
KILN_MUST_CHECK kiln_rc sign_ossl_ed25519_generate(struct sign_pkey **out, struct kiln_err *err);
/* Append the OpenPGP public key material (MPI n, MPI e) to pub, and the secret material
 * (MPI d, p, q, u) to sec; either may be NULL. */
KILN_MUST_CHECK kiln_rc sign_ossl_rsa_export(struct sign_pkey *k, struct kiln_buf *pub,
                                             struct kiln_buf *sec, struct kiln_err *err);
/* The raw public key, and the 32-octet seed when seed is not NULL. */
KILN_MUST_CHECK kiln_rc sign_ossl_ed25519_export(struct sign_pkey *k, uint8_t pub[32],
                                                 uint8_t *seed, struct kiln_err *err);
/* Sign digest (already computed with hash) with k: RSA PKCS#1 v1.5 (sig gets the modulus
 * length) or Ed25519 over the digest octets (sig gets 64 octets). *sig_len: in capacity. */
KILN_MUST_CHECK kiln_rc sign_ossl_sign(struct sign_pkey *k, enum util_digest_algo hash,
                                       const uint8_t *digest, size_t digest_len, uint8_t *sig,
                                       size_t *sig_len, struct kiln_err *err);
/* KILN_OK for a good signature, KILN_ESIG for a bad one. RSA signatures shorter than the
 * modulus are left-padded. */
KILN_MUST_CHECK kiln_rc sign_ossl_verify(struct sign_pkey *k, enum util_digest_algo hash,
                                         const uint8_t *digest, size_t digest_len,
                                         const uint8_t *sig, size_t sig_len, struct kiln_err *err);
unsigned sign_ossl_bits(struct sign_pkey *k);
bool sign_ossl_is_rsa(struct sign_pkey *k);
void sign_ossl_free(struct sign_pkey *k);

/* ---------------------------------------------------------------------------------------- */
/* Keys (sign/key.c). */

struct sign_pubkey {
	unsigned version; /* 4 */
	unsigned algo;    /* enum sign_pk_algo */
	uint32_t created;
	const uint8_t *body; /* borrowed from the owning sign_key's cert: the public body */
	size_t body_len;
	uint8_t fpr[SIGN_FPR_MAX];
	size_t fpr_len;
	uint8_t keyid[8];
	unsigned bits;
	struct sign_pkey *pkey; /* owned; NULL for algorithms kiln cannot use */
	bool has_secret;        /* pkey holds the private key */
	bool secret_protected;  /* the secret was present but passphrase-protected */
	/* From the newest valid binding self-signature. */
	bool bound;          /* a valid binding (uid certification / subkey binding) exists */
	uint32_t bound_time; /* creation time of that signature */
	bool has_flags;
	uint8_t flags;    /* key flags; all allowed when !has_flags (old keys) */
	uint32_t expires; /* key expiration, seconds after created; 0 = never */
	bool revoked;
};

struct sign_uid {
	const uint8_t *data; /* borrowed from the cert */
	size_t len;
	bool valid; /* has a valid self-certification */
	bool primary;
	uint32_t sig_time;
};

struct sign_key {
	struct kiln_buf cert;        /* owned: the transferable public key, binary */
	struct sign_pubkey primary;  /* body points into cert */
	struct sign_pubkey *subkeys; /* owned array */
	size_t nsubkeys;
	struct sign_uid *uids; /* owned array */
	size_t nuids;
	char *uid; /* owned: the primary user ID as a C string ("" if none) */
	/* The secret key packets as read or generated (owned, wiped on free): for export. */
	uint8_t *secret;
	size_t secret_len;
};

/* Parse the public or secret key packet body in pkt: version, time, algorithm, public
 * material (computing the fingerprint and key ID); for a secret packet also the secret
 * material when unprotected. *pub_len gets the length of the public part. k->pkey is set
 * for RSA and Ed25519 keys. */
KILN_MUST_CHECK kiln_rc sign_pubkey_parse(const uint8_t *body, size_t len, bool secret,
                                          struct sign_pubkey *k, size_t *pub_len,
                                          struct kiln_err *err);
void sign_pubkey_release(struct sign_pubkey *k);
/* The key that signs data for key: the primary if it may sign and has a secret, else the
 * newest valid signing subkey with a secret; NULL if none. */
const struct sign_pubkey *sign_key_signer(const struct sign_key *key);
/* Find the (sub)key of key with the 8-octet key ID, or NULL. */
const struct sign_pubkey *sign_key_find(const struct sign_key *key, const uint8_t keyid[8]);
/* Is k usable for verifying a data signature made at time t? Fills why when not. */
bool sign_pubkey_can_sign_at(const struct sign_pubkey *k, const struct sign_pubkey *primary,
                             uint32_t t, char *why, size_t why_size);
struct sign_key *sign_key_alloc(void);

/* ---------------------------------------------------------------------------------------- */
/* Signatures (sign/sig.c). */

struct sign_sig {
	unsigned version; /* 4 */
	unsigned type;
	unsigned pk_algo;
	unsigned hash_algo;
	const uint8_t *hashed_part; /* borrowed: version .. end of the hashed area */
	size_t hashed_part_len;
	const uint8_t *hashed; /* borrowed: the hashed subpacket area */
	size_t hashed_len;
	const uint8_t *unhashed; /* borrowed: the unhashed subpacket area */
	size_t unhashed_len;
	uint8_t left16[2];
	const uint8_t *m1, *m2; /* borrowed: RSA s / EdDSA r, s / Ed25519 the 64 octets in m1 */
	size_t m1_len, m2_len;
	/* Decoded subpackets (hashed area unless noted). */
	bool has_created;
	uint32_t created;
	uint32_t expires; /* signature expiration, seconds after creation; 0 = never */
	bool has_key_expires;
	uint32_t key_expires; /* key expiration, seconds after key creation; 0 = never */
	bool has_flags;
	uint8_t flags;
	bool primary_uid;
	bool has_issuer; /* either area */
	uint8_t issuer[8];
	size_t issuer_fpr_len; /* either area; 0 if absent */
	uint8_t issuer_fpr[SIGN_FPR_MAX];
	const uint8_t *embedded; /* borrowed: the first embedded signature's body, either area */
	size_t embedded_len;
	bool critical_unknown; /* a critical subpacket kiln does not implement */
	unsigned critical_type;
};

/* Parse a Signature packet body. KILN_EFORMAT when malformed, KILN_EUNSUPP for versions other
 * than 4 (v3 and v6 included). */
KILN_MUST_CHECK kiln_rc sign_sig_parse(const uint8_t *body, size_t len, struct sign_sig *sig,
                                       struct kiln_err *err);
/* Map an OpenPGP hash ID to util's; KILN_EUNSUPP for unknown ones. */
KILN_MUST_CHECK kiln_rc sign_hash_to_util(unsigned algo, enum util_digest_algo *out,
                                          struct kiln_err *err);
/* Is the hash algorithm acceptable for signatures (SHA-224 or stronger)? */
bool sign_hash_strong(unsigned algo);
/* Feed "0x99 len16 body" of a v4 key into d (the form certifications hash). */
void sign_hash_key(struct util_digest *d, const struct sign_pubkey *k);
void sign_hash_uid(struct util_digest *d, const uint8_t *uid, size_t len);
/* Check sig with key over what d has been fed (the signed data); d is finalised. KILN_OK
 * for a good signature, KILN_ESIG otherwise (err says why: algorithm mismatch, digest
 * prefix, signature). */
KILN_MUST_CHECK kiln_rc sign_sig_check(const struct sign_sig *sig, const struct sign_pubkey *key,
                                       struct util_digest *d, struct kiln_err *err);

struct sign_sig_spec {
	unsigned type;
	unsigned hash_algo;
	uint32_t created;
	const uint8_t *extra; /* borrowed: more hashed subpackets, already framed */
	size_t extra_len;
};

/* Make a signature with signer (which must hold its secret) over what d has been fed, per
 * spec: hashed issuer fingerprint (33) and creation time (2) then spec->extra, unhashed
 * issuer key ID (16). Appends the whole packet to out. d must have been started with
 * spec->hash_algo's digest. */
KILN_MUST_CHECK kiln_rc sign_sig_make(const struct sign_pubkey *signer,
                                      const struct sign_sig_spec *spec, struct util_digest *d,
                                      struct kiln_buf *out, struct kiln_err *err);

/* Verification over data that a callback feeds into the digest (a file range too big for
 * memory); fn may be called once per candidate key. fn returns KILN_OK, or KILN_EIO /
 * KILN_ENOMEM to abort (returned as is). Otherwise as sign_verify(). */
struct sign_feed {
	kiln_rc (*fn)(void *ctx, struct util_digest *d, struct kiln_err *err);
	void *ctx;
};

KILN_MUST_CHECK kiln_rc sign_verify_feed(const struct sign_keyring *kr, const void *sig,
                                         size_t siglen, const struct sign_feed *feed,
                                         struct sign_result *res, struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Armor (sign/armor.c). */

/* Decode the first armor block at or after data: *type gets its kind, *consumed how far
 * the END line reached (so a caller can look for more blocks). The base64 is decoded into
 * out, which is grown once up front to the largest possible size, so a secret is never
 * copied by a realloc. KILN_ENOTFOUND when there is no BEGIN line, KILN_EFORMAT for a
 * malformed block or a CRC mismatch. */
KILN_MUST_CHECK kiln_rc sign_armor_decode(const char *data, size_t len, enum sign_armor_type *type,
                                          size_t *consumed, struct kiln_buf *out,
                                          struct kiln_err *err);
uint32_t sign_crc24(const void *data, size_t len);

/* Copy the C string src into dst[size], truncating; dst is always terminated. */
void sign_strlcpy(char *dst, const char *src, size_t size);

/* Wipe and release a buffer that held secrets. */
void sign_buf_wipe(struct kiln_buf *b);

#endif
