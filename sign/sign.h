/*
 * sign.h - OpenPGP keys, signatures and keyrings for signing and verifying RPM packages.
 *
 * sign/ reads and writes RFC 4880 version 4 OpenPGP keys and signatures (RSA with PKCS#1
 * v1.5, EdDSA on Ed25519 in its "legacy" algorithm 22 form that gpg and rpm 4.18 use; the
 * RFC 9580 native Ed25519 algorithm 27 is accepted for verification), ASCII armor, key IDs
 * and fingerprints, and a keyring kept as a directory of armored certificates. All
 * cryptography goes through OpenSSL inside sign/openssl.c; nothing here prints or logs.
 *
 * What it does not do: encryption, passphrase-protected secret keys (export them from gpg
 * without protection), OpenPGP v6 keys, DSA/ECDSA keys, trust models beyond "the key is in
 * the keyring and its self-signatures are valid".
 *
 * Signatures kiln makes are detached binary-document signatures (type 0x00) with a hashed
 * creation time and issuer fingerprint and an unhashed issuer key ID: the shape rpm, rpmkeys,
 * sq and gpg all accept. RSA PKCS#1 v1.5 and Ed25519 are deterministic, so the same key, data
 * and time always give the same bytes.
 *
 * Thread safety: a loaded struct sign_key or struct sign_keyring may be used for signing and
 * verifying from several threads at once as long as nobody modifies it.
 */
#ifndef KILN_SIGN_H
#define KILN_SIGN_H

#include "util/util.h"

/* OpenPGP public-key algorithm IDs (RFC 9580 9.1) kiln knows by name. */
enum sign_pk_algo {
	SIGN_PK_RSA = 1,
	SIGN_PK_RSA_S = 3, /* RSA sign-only (deprecated; verified like 1) */
	SIGN_PK_DSA = 17,
	SIGN_PK_ECDSA = 19,
	SIGN_PK_EDDSA = 22,   /* EdDSA "legacy" on Ed25519 (gpg, rpm 4.18) */
	SIGN_PK_ED25519 = 27, /* RFC 9580 native Ed25519 */
};

/* OpenPGP hash algorithm IDs (RFC 9580 9.5). */
enum sign_hash_algo {
	SIGN_HASH_MD5 = 1,
	SIGN_HASH_SHA1 = 2,
	SIGN_HASH_SHA256 = 8,
	SIGN_HASH_SHA384 = 9,
	SIGN_HASH_SHA512 = 10,
	SIGN_HASH_SHA224 = 11,
	SIGN_HASH_SHA3_256 = 12,
	SIGN_HASH_SHA3_512 = 14,
};

/* "RSA", "EdDSA", ...; "UNKNOWN" for others. Never NULL. */
const char *sign_pk_algo_name(unsigned algo);
/* "SHA256", "SHA512", ... as rpm prints them; "UNKNOWN" for others. Never NULL. */
const char *sign_hash_algo_name(unsigned algo);
/* Parse "sha256", "SHA-512", ... into an OpenPGP hash ID usable for signing (SHA-224 and
 * up). KILN_EINVAL for unknown or too weak names. */
KILN_MUST_CHECK kiln_rc sign_hash_algo_parse(const char *name, enum sign_hash_algo *out,
                                             struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Keys. A struct sign_key is one certificate (primary key, user IDs, subkeys and their
 * signatures, all self-signatures checked when it was parsed) plus, for a secret key, the
 * private key material of every key whose secret was present and unprotected. */

struct sign_key;
struct sign_keyring; /* below */

enum sign_keygen_algo {
	SIGN_KEYGEN_RSA2048,
	SIGN_KEYGEN_RSA3072,
	SIGN_KEYGEN_RSA4096,
	SIGN_KEYGEN_ED25519,
};

/* Parse "rsa2048", "rsa3072", "rsa4096", "ed25519". KILN_EINVAL otherwise. */
KILN_MUST_CHECK kiln_rc sign_keygen_algo_parse(const char *name, enum sign_keygen_algo *out,
                                               struct kiln_err *err);

/* Make a new secret key shaped like gpg's: a primary key that can certify and sign, one user
 * ID (uid, e.g. "Name <mail@example.org>", UTF-8, at most 4 KiB), a positive-certification
 * self-signature without critical subpackets, no subkeys. created is the key's creation
 * time (seconds since the epoch, 0 .. 2^32-1). *out is the caller's: sign_key_free().
 * KILN_EINVAL for a bad uid or time, KILN_ESIG when OpenSSL fails. */
KILN_MUST_CHECK kiln_rc sign_key_generate(enum sign_keygen_algo algo, const char *uid,
                                          int64_t created, struct sign_key **out,
                                          struct kiln_err *err);

/* The same, the key expiring at expires (seconds since the epoch, after created; 0:
 * never): a key expiration time subpacket in its self-signature. */
KILN_MUST_CHECK kiln_rc sign_key_generate_expiring(enum sign_keygen_algo algo, const char *uid,
                                                   int64_t created, int64_t expires,
                                                   struct sign_key **out, struct kiln_err *err);
/* A new expiry for key (which holds its secret): a new positive-certification
 * self-signature of its primary user ID made at now (later than the one in force), with
 * expires (absolute, 0: never), added to the certificate. The key material stays the same,
 * so signatures made before still verify. *out is the new key (the caller's) and takes
 * key's secret (key keeps only its public part). KILN_EINVAL without a secret or primary
 * user ID, or for an expiry not after the key's creation. */
KILN_MUST_CHECK kiln_rc sign_key_extend(struct sign_key *key, int64_t now, int64_t expires,
                                        struct sign_key **out, struct kiln_err *err);

/* Parse the first certificate or secret key in data (ASCII-armored or binary), checking
 * every self-signature. *out is the caller's. KILN_EFORMAT for malformed input, KILN_ESIG
 * for a certificate without a valid self-signature, KILN_EUNSUPP for algorithms or versions
 * kiln does not handle, KILN_ELIMIT beyond util/limits.h. */
KILN_MUST_CHECK kiln_rc sign_key_from_mem(const void *data, size_t len, struct sign_key **out,
                                          struct kiln_err *err);

/* Every certificate in data (any number of armor blocks, or binary packets), in order.
 * fn gets each key and owns it (consumed, even when fn fails); a non-OK return from fn stops
 * the walk and is returned. Errors as for sign_key_from_mem(). */
typedef kiln_rc (*sign_key_fn)(void *ctx, struct sign_key *key, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc sign_keys_from_mem(const void *data, size_t len, sign_key_fn fn, void *ctx,
                                           struct kiln_err *err);

/* Load a secret key file (kiln keygen output, or `gpg --export-secret-keys [--armor]`
 * without a passphrase). The file is opened O_NOFOLLOW and must be a regular file that no
 * group or other user can access (KILN_EPRIV otherwise, naming the mode). KILN_ESIG when
 * the file has no usable unprotected secret signing key. *out is the caller's. */
KILN_MUST_CHECK kiln_rc sign_key_load_secret(const char *path, struct sign_key **out,
                                             struct kiln_err *err);

enum sign_export_flags {
	SIGN_EXPORT_ARMOR = 1 << 0,  /* ASCII armor instead of binary packets */
	SIGN_EXPORT_SECRET = 1 << 1, /* the secret key (unprotected); KILN_EINVAL if none */
};

/* Append the certificate (or with SIGN_EXPORT_SECRET the secret key) to out. Secret output
 * is written into a buffer grown once up front, so no copy of the secret is left behind in
 * freed memory; the caller should wipe out with sign_wipe() after use. */
KILN_MUST_CHECK kiln_rc sign_key_export(const struct sign_key *key, unsigned flags,
                                        struct kiln_buf *out, struct kiln_err *err);

/* Write the secret key to path, armored, mode 0600, atomically; refuses to replace an
 * existing file (KILN_EEXIST). */
KILN_MUST_CHECK kiln_rc sign_key_save_secret(const struct sign_key *key, const char *path,
                                             struct kiln_err *err);

void sign_key_free(struct sign_key *key);

struct sign_key_info {
	char fingerprint[65]; /* lowercase hex of the primary key's fingerprint */
	char keyid[17];       /* lowercase hex of the primary key ID (64 bits) */
	char short_id[9];     /* its last 32 bits, as rpm's gpg-pubkey VERSION */
	unsigned version;     /* 4 */
	unsigned algo;        /* enum sign_pk_algo of the primary key */
	unsigned bits;        /* modulus bits for RSA, 255 for Ed25519 */
	int64_t created;      /* primary key creation time */
	int64_t expires;      /* absolute expiry time, 0 = never */
	bool revoked;         /* a valid revocation signature is present */
	bool has_secret;      /* a secret signing key is loaded */
	const char *uid;      /* borrowed from key: the primary user ID, "" if none */
};

void sign_key_info_get(const struct sign_key *key, struct sign_key_info *out);

/* The public-key algorithm of the key that sign_data() uses (the primary key if it may sign,
 * else the newest signing subkey), 0 when the key has no secret signing key. rpm files RSA
 * signatures under RSAHEADER (268) and EdDSA under DSAHEADER (267). */
unsigned sign_key_signing_algo(const struct sign_key *key);

/* ---------------------------------------------------------------------------------------- */
/* Signing. */

struct sign_opts {
	int64_t time;             /* signature creation time, 0 .. 2^32-1 */
	enum sign_hash_algo hash; /* 0 = SHA-256 */
};

/* The signature time to use: requested when it is >= 0; else SOURCE_DATE_EPOCH, raised to
 * the signing key's creation time when older (a signature may not predate its key, and the
 * result stays reproducible); else the current time. KILN_ESYNTAX for a malformed
 * SOURCE_DATE_EPOCH. */
KILN_MUST_CHECK kiln_rc sign_time_pick(const struct sign_key *key, int64_t requested, int64_t *out,
                                       struct kiln_err *err);

/* Make a detached binary-document signature (type 0x00) over data with key's signing key
 * and append the complete Signature packet (old-format header, as gpg writes) to packet.
 * opts->time must not be before the signing key's creation time (KILN_EINVAL); KILN_ESIG if
 * the key has no secret signing key or OpenSSL fails. Deterministic. */
KILN_MUST_CHECK kiln_rc sign_data(const struct sign_key *key, const void *data, size_t len,
                                  const struct sign_opts *opts, struct kiln_buf *packet,
                                  struct kiln_err *err);

/* The header-only package signature: hdr is an RPM main header exactly as stored (from its
 * 8e ad e8 01 magic to the end of its data store); the result is what rpm stores in
 * RSAHEADER/DSAHEADER (and base64-encoded, in OPENPGP). Checks that hdr is one whole header
 * (KILN_EFORMAT otherwise), then as sign_data(). Thread-safe, so a farm can sign many headers
 * in parallel without touching payloads. */
KILN_MUST_CHECK kiln_rc sign_header(const struct sign_key *key, const void *hdr, size_t len,
                                    const struct sign_opts *opts, struct kiln_buf *packet,
                                    struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Signing packages: header-only signatures in the signature header (needs pack/). */

enum sign_package_flags {
	SIGN_PKG_RPMV4 = 1 << 0, /* v6 packages: also a legacy RSAHEADER/DSAHEADER copy */
	SIGN_PKG_RPMV6 = 1 << 1, /* v4 packages: also an OPENPGP (278) signature */
};

/* Sign the package at path with key's signing key at opts->time. v4 packages get their
 * RSAHEADER (268, RSA keys) or DSAHEADER (267, EdDSA keys) set, replacing an older
 * signature in that tag; v6 packages get the signature appended to OPENPGP (278); flags add
 * the other kind. The signature header is rewritten in the room of its reservation tag
 * (RESERVEDSPACE 1008 / RESERVED 999) through a temporary file renamed over path, so no
 * byte of the main header or payload changes. An identical signature already present
 * leaves the file untouched (*changed = false; changed may be NULL). Refuses v3 packages
 * (KILN_EUNSUPP) and packages whose header does not match its digests (KILN_EDIGEST);
 * KILN_ELIMIT when the reservation is too small. Thread-safe for distinct paths. */
KILN_MUST_CHECK kiln_rc sign_package(const struct sign_key *key, const char *path,
                                     const struct sign_opts *opts, unsigned flags, bool *changed,
                                     struct kiln_err *err);
/* Remove every OpenPGP signature (267, 268, 278 and the header+payload 1002, 1005) from the
 * package at path, giving the room back to the reservation tag: a package signed by kiln
 * gets back its unsigned bytes. *changed (may be NULL) says whether there were any. */
KILN_MUST_CHECK kiln_rc sign_package_delete(const char *path, bool *changed, struct kiln_err *err);

#define SIGN_JOBS_MAX 64

struct sign_batch_result {
	kiln_rc rc;          /* what sign_package() / sign_package_delete() returned */
	bool changed;        /* the file was rewritten */
	struct kiln_err err; /* why, when rc is not KILN_OK */
};

/* sign_package() (key not NULL) or sign_package_delete() (key NULL) for each of paths[0..n)
 * with up to jobs threads (1..SIGN_JOBS_MAX, the caller's thread included); res[i] gets the
 * outcome for paths[i]. Returns KILN_EINVAL for a bad jobs count, else KILN_OK: failures
 * are per package, in res. The paths must be distinct files. */
KILN_MUST_CHECK kiln_rc sign_packages(const struct sign_key *key, const char *const *paths,
                                      size_t n, const struct sign_opts *opts, unsigned flags,
                                      unsigned jobs, struct sign_batch_result *res,
                                      struct kiln_err *err);

/* Checking packages: every digest (through pack/) and every OpenPGP signature, in the
 * order rpm -K -v prints them. */

#define SIGN_CHECK_ITEMS_MAX 48

enum sign_item_status {
	SIGN_ITEM_OK,
	SIGN_ITEM_BAD,
	SIGN_ITEM_NOKEY,
	SIGN_ITEM_NOTFOUND, /* a required signature is missing (SIGN_CHECK_REQUIRE_SIGNATURE) */
};

struct sign_check_item {
	char what[128]; /* "Header V4 RSA/SHA256 Signature, key ID 1964c5fc", "MD5 digest" */
	enum sign_item_status status;
	char detail[320]; /* "" when OK; "Expected ... != ..." or why a signature is BAD */
	bool signature;
};

struct sign_check {
	struct sign_check_item items[SIGN_CHECK_ITEMS_MAX];
	size_t n;
	size_t signatures_ok; /* good signatures */
	bool ok;              /* no item failed and the digests covered header and payload */
};

enum sign_check_flags {
	SIGN_CHECK_REQUIRE_SIGNATURE = 1 << 0, /* no good signature is a failure (rpm 6's level) */
};

/* "OK", "BAD", "NOKEY", "NOTFOUND". */
const char *sign_item_status_name(enum sign_item_status st);

/* Check the package at path like rpm -K -v: its header-only signatures (OPENPGP, RSAHEADER,
 * DSAHEADER) against kr, its digests, its header+payload signatures (PGP 1002, GPG 1005).
 * A failed item is not an error: it is reported in out (KILN_OK); NOKEY counts as a
 * failure, as it does for rpm -K. Errors are for packages that do not parse (KILN_EFORMAT),
 * KILN_ELIMIT beyond SIGN_CHECK_ITEMS_MAX items, KILN_EIO, KILN_ENOMEM. */
KILN_MUST_CHECK kiln_rc sign_package_check(const struct sign_keyring *kr, const char *path,
                                           unsigned flags, struct sign_check *out,
                                           struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Keyrings: a set of certificates, optionally backed by a directory with one armored file
 * per certificate, named by lowercase fingerprint: <dir>/<fingerprint>.asc. */

struct sign_keyring;

/* $XDG_CONFIG_HOME/kiln/keyring, else $HOME/.config/kiln/keyring. KILN_ENOTFOUND when
 * neither variable is set. */
KILN_MUST_CHECK kiln_rc sign_keyring_default_dir(struct kiln_buf *out, struct kiln_err *err);

/* An empty in-memory keyring. *out is the caller's: sign_keyring_free(). */
KILN_MUST_CHECK kiln_rc sign_keyring_new(struct sign_keyring **out, struct kiln_err *err);
/* Load every *.asc certificate in dir (a missing dir is an empty keyring; a file that does
 * not parse is an error naming it). The keyring remembers dir for import and delete. */
KILN_MUST_CHECK kiln_rc sign_keyring_open(const char *dir, struct sign_keyring **out,
                                          struct kiln_err *err);
void sign_keyring_free(struct sign_keyring *kr);

/* Add key to the keyring (consumed, even on error), replacing one with the same
 * fingerprint; with a directory, also writes it there atomically (directory created 0700).
 * Only the public certificate is kept. */
KILN_MUST_CHECK kiln_rc sign_keyring_add_take(struct sign_keyring *kr, struct sign_key *key,
                                              struct kiln_err *err);
/* Import every certificate in data (armored or binary); *count gets how many. A file with
 * no certificate is KILN_EFORMAT. */
KILN_MUST_CHECK kiln_rc sign_keyring_import(struct sign_keyring *kr, const void *data, size_t len,
                                            size_t *count, struct kiln_err *err);
/* Remove the certificate id names: a fingerprint (40 hex), a key ID (16 hex), a short ID
 * (8 hex, optionally "-<creation time in hex>" as in gpg-pubkey-ID-TIME), case-insensitive,
 * optional "0x". KILN_ENOTFOUND when none matches, KILN_EINVAL for a malformed or ambiguous
 * id. With a directory, removes its file. */
KILN_MUST_CHECK kiln_rc sign_keyring_delete(struct sign_keyring *kr, const char *id,
                                            struct kiln_err *err);
size_t sign_keyring_count(const struct sign_keyring *kr);
/* The i-th certificate, sorted by fingerprint; borrowed from kr. */
const struct sign_key *sign_keyring_get(const struct sign_keyring *kr, size_t i);

/* ---------------------------------------------------------------------------------------- */
/* Verification. */

enum sign_status {
	SIGN_STATUS_OK,    /* good signature by a valid key of the keyring */
	SIGN_STATUS_BAD,   /* malformed, wrong data, forged, or the key may not sign */
	SIGN_STATUS_NOKEY, /* no key in the keyring has the issuer's key ID */
};

/* rpm's words: "OK", "BAD", "NOKEY". */
const char *sign_status_name(enum sign_status st);

struct sign_result {
	enum sign_status status;
	unsigned version;   /* signature packet version, 0 if it did not parse */
	unsigned pk_algo;   /* enum sign_pk_algo */
	unsigned hash_algo; /* enum sign_hash_algo */
	bool has_keyid;
	uint8_t keyid[8];              /* issuer key ID from the signature */
	int64_t created;               /* signature creation time */
	const struct sign_key *signer; /* borrowed from the keyring when status is OK */
	char reason[160];              /* why not OK ("" when OK) */
};

/* Verify the detached binary-document signature sig (one Signature packet, binary, or an
 * armored "PGP SIGNATURE" block) over data with the keys of kr. Always fills *res. Returns
 * KILN_OK for a good signature; otherwise KILN_ENOTFOUND (NOKEY) or KILN_ESIG (BAD), with
 * res->reason and err saying why; KILN_ENOMEM on allocation failure.
 *
 * Checks, in order: one well-formed v4 signature packet of type 0x00 with a hashed creation
 * time and no unknown critical subpacket; a key in kr whose key ID (or fingerprint) matches
 * the issuer; that key may sign (key flags), is not revoked, was created before and had not
 * expired at the signature time; the digest algorithm is SHA-224 or stronger; then the
 * digest prefix and the signature itself. */
KILN_MUST_CHECK kiln_rc sign_verify(const struct sign_keyring *kr, const void *sig, size_t siglen,
                                    const void *data, size_t len, struct sign_result *res,
                                    struct kiln_err *err);

/* "V4 RSA/SHA256 Signature, key ID 1964c5fc" as rpm 4.18 prints it (short key ID), into dst;
 * returns dst. For a signature that did not parse: "OpenPGP signature". */
const char *sign_result_describe(const struct sign_result *res, char *dst, size_t size);

/* ---------------------------------------------------------------------------------------- */
/* ASCII armor (RFC 9580 6.2, with the CRC-24 line that rpm 4.18 requires). */

enum sign_armor_type {
	SIGN_ARMOR_PUBLIC_KEY,  /* PGP PUBLIC KEY BLOCK */
	SIGN_ARMOR_PRIVATE_KEY, /* PGP PRIVATE KEY BLOCK */
	SIGN_ARMOR_SIGNATURE,   /* PGP SIGNATURE */
	SIGN_ARMOR_MESSAGE,     /* PGP MESSAGE */
};

/* Append the armored form of data to out: BEGIN line, blank line, base64 in 64-column lines,
 * "=CRC24", END line. Never fails (errors are sticky in out). */
void sign_armor_encode(enum sign_armor_type type, const void *data, size_t len,
                       struct kiln_buf *out);
/* True when data starts (after whitespace) with an armor BEGIN line. */
bool sign_armor_detect(const void *data, size_t len);

/* Overwrite len bytes at p with zeros in a way the compiler cannot drop (explicit_bzero). */
void sign_wipe(void *p, size_t len);

#endif
