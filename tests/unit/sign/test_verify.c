#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

#define T1 1704067200

static enum sign_status check(const struct sign_keyring *kr, const void *sig, size_t siglen,
                              const void *data, size_t len, struct sign_result *res)
{
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc = sign_verify(kr, sig, siglen, data, len, res, &err);

	assert_int_equal(rc == KILN_OK, res->status == SIGN_STATUS_OK);
	assert_int_equal(rc == KILN_ENOTFOUND, res->status == SIGN_STATUS_NOKEY);
	return res->status;
}

static enum sign_status check_vec(const struct sign_keyring *kr, const char *sigfile,
                                  struct sign_result *res)
{
	struct kiln_buf sig, data;
	enum sign_status st;

	vec_load(sigfile, &sig);
	vec_load("data.txt", &data);
	st = check(kr, sig.ptr, sig.len, data.ptr, data.len, res);
	kiln_buf_release(&sig);
	kiln_buf_release(&data);
	return st;
}

static struct sign_keyring *all_keys(void)
{
	return vec_keyring("rsa.pub.asc", "ed.pub.asc", "subkey.pub.asc", "expired.pub.asc",
	                   "revoked.pub.asc", NULL);
}

KILN_TEST(verify_good_signatures_from_gpg_and_kiln)
{
	static const char *good[] = {"data.rsa.gpg.sig",    "data.rsa-sha512.gpg.sig",
	                             "data.ed.gpg.sig",     "data.subkey.gpg.sig",
	                             "data.rsa.kiln.sig",   "data.ed.kiln.sig",
	                             "data.rsa.kiln.asc",   "data.ed.kiln.asc",
	                             "data.expired.gpg.sig"}; /* made while the key was valid */
	struct sign_keyring *kr = all_keys();
	struct sign_result res;
	char d[128];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(good); i++) {
		assert_int_equal(check_vec(kr, good[i], &res), SIGN_STATUS_OK);
		assert_non_null(res.signer);
		assert_string_equal(res.reason, "");
	}
	check_vec(kr, "data.rsa.gpg.sig", &res);
	assert_string_equal(sign_result_describe(&res, d, sizeof(d)),
	                    "V4 RSA/SHA256 Signature, key ID 12d9aab9");
	assert_int_equal(res.created, T1);
	check_vec(kr, "data.ed.gpg.sig", &res);
	assert_string_equal(sign_result_describe(&res, d, sizeof(d)),
	                    "V4 EdDSA/SHA256 Signature, key ID cb0892b2");
	sign_keyring_free(kr);
}

KILN_TEST(verify_refuses_policy_violations)
{
	struct sign_keyring *kr = all_keys();
	struct sign_result res;

	assert_int_equal(check_vec(kr, "data.rsa-sha1.gpg.sig", &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "weak digest"));
	assert_int_equal(check_vec(kr, "data.rsa-text.gpg.sig", &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "binary"));
	assert_int_equal(check_vec(kr, "data.revoked.gpg.sig", &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "revoked"));
	sign_keyring_free(kr);
}

KILN_TEST(verify_nokey_without_the_signer)
{
	struct sign_keyring *kr = vec_keyring("ed.pub.asc", NULL);
	struct sign_keyring *empty = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_result res;
	char d[128];

	assert_int_equal(check_vec(kr, "data.rsa.gpg.sig", &res), SIGN_STATUS_NOKEY);
	assert_string_equal(sign_status_name(res.status), "NOKEY");
	assert_string_equal(sign_result_describe(&res, d, sizeof(d)),
	                    "V4 RSA/SHA256 Signature, key ID 12d9aab9");
	assert_ok(sign_keyring_new(&empty, &err), &err);
	assert_int_equal(check_vec(empty, "data.ed.gpg.sig", &res), SIGN_STATUS_NOKEY);
	sign_keyring_free(empty);
	sign_keyring_free(kr);
}

/* Offset in the packet of the unhashed area's length field. */
static size_t unhashed_offset(const struct kiln_buf *sig)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	struct sign_sig s;

	sign_pkt_reader_init(&r, sig->ptr, sig->len);
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	assert_ok(sign_sig_parse(pkt.body, pkt.len, &s, &err), &err);
	return (size_t)(s.unhashed - 2 - (const uint8_t *)sig->ptr);
}

/* Forgeries that must fail: changed data, damaged signature, truncation, rewritten
 * subpackets, a signature claimed for another key. */
KILN_TEST(verify_forgeries_fail)
{
	struct sign_keyring *kr = all_keys();
	struct sign_result res;
	struct kiln_buf sig, data;
	size_t unhashed_at;
	uint8_t *s;
	size_t i;

	vec_load("data.ed.kiln.sig", &sig);
	vec_load("data.txt", &data);
	s = (uint8_t *)sig.ptr;
	unhashed_at = unhashed_offset(&sig);
	assert_int_equal(check(kr, s, sig.len, data.ptr, data.len, &res), SIGN_STATUS_OK);
	/* changed data: one bit, one byte more, one byte less */
	data.ptr[0] ^= 1;
	assert_int_equal(check(kr, s, sig.len, data.ptr, data.len, &res), SIGN_STATUS_BAD);
	data.ptr[0] ^= 1;
	assert_int_equal(check(kr, s, sig.len, data.ptr, data.len - 1, &res), SIGN_STATUS_BAD);
	kiln_buf_addch(&data, '\n');
	assert_int_equal(check(kr, s, sig.len, data.ptr, data.len, &res), SIGN_STATUS_BAD);
	kiln_buf_truncate(&data, data.len - 1);
	/* every single flipped bit of the signature packet, except in the unhashed issuer key
	 * ID: it is only a hint (the hashed issuer fingerprint decides), not signed data */
	for (i = 0; i < sig.len * 8; i++) {
		if (i / 8 >= unhashed_at && i / 8 < unhashed_at + 12)
			continue;
		s[i / 8] ^= (uint8_t)(1 << (i % 8));
		assert_int_not_equal(check(kr, s, sig.len, data.ptr, data.len, &res),
		                     SIGN_STATUS_OK);
		s[i / 8] ^= (uint8_t)(1 << (i % 8));
	}
	/* every truncation */
	for (i = 0; i < sig.len; i++)
		assert_int_not_equal(check(kr, s, i, data.ptr, data.len, &res), SIGN_STATUS_OK);
	/* trailing garbage, a second packet */
	kiln_buf_add(&sig, sig.ptr, sig.len);
	s = (uint8_t *)sig.ptr;
	assert_int_equal(check(kr, s, sig.len, data.ptr, data.len, &res), SIGN_STATUS_BAD);
	kiln_buf_release(&sig);
	kiln_buf_release(&data);
	sign_keyring_free(kr);
}

/* A signature made by key over data with hashed extra subpackets, bypassing sign_data()'s
 * own checks, for the cases verification must catch by itself. */
static void craft(const char *keyfile, uint32_t created, const uint8_t *extra, size_t extra_len,
                  struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key(keyfile);
	struct sign_sig_spec spec = {.type = SIGN_SIG_BINARY,
	                             .hash_algo = SIGN_HASH_SHA256,
	                             .created = created,
	                             .extra = extra,
	                             .extra_len = extra_len};
	struct util_digest d;
	struct kiln_buf data;

	vec_load("data.txt", &data);
	kiln_buf_init(out, KILN_LIMIT_PGP_PACKET);
	assert_ok(util_digest_init(&d, UTIL_DIGEST_SHA256, &err), &err);
	util_digest_update(&d, data.ptr, data.len);
	key->primary.has_secret = true; /* expired/revoked keys would not be picked */
	assert_ok(sign_sig_make(&key->primary, &spec, &d, out, &err), &err);
	util_digest_release(&d);
	kiln_buf_release(&data);
	sign_key_free(key);
}

static enum sign_status check_crafted(const struct sign_keyring *kr, const struct kiln_buf *sig,
                                      struct sign_result *res)
{
	struct kiln_buf data;
	enum sign_status st;

	vec_load("data.txt", &data);
	st = check(kr, sig->ptr, sig->len, data.ptr, data.len, res);
	kiln_buf_release(&data);
	return st;
}

KILN_TEST(verify_time_and_critical_rules)
{
	struct sign_keyring *kr = all_keys();
	struct sign_result res;
	struct kiln_buf sig;
	uint32_t now = (uint32_t)util_clock_wall();

	/* control: the crafting path itself makes good signatures */
	craft("ed.sec.asc", T1, NULL, 0, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_OK);
	kiln_buf_release(&sig);
	/* made after the key expired */
	craft("expired.sec.asc", 1672531200 + 31 * 86400, NULL, 0, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "expired"));
	kiln_buf_release(&sig);
	/* a signature that expired one second after it was made */
	craft("ed.sec.asc", T1, (const uint8_t *)"\x05\x03\x00\x00\x00\x01", 6, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "expired"));
	kiln_buf_release(&sig);
	/* from the future */
	craft("ed.sec.asc", now + 86400, NULL, 0, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "future"));
	kiln_buf_release(&sig);
	/* an unknown critical subpacket (a critical notation) */
	craft("ed.sec.asc", T1, (const uint8_t *)"\x02\x94\x00", 3, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "critical"));
	kiln_buf_release(&sig);
	/* a certify-only primary key (its signing subkey is the one that may sign) */
	craft("subkey.sec.asc", T1, NULL, 0, &sig);
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_non_null(strstr(res.reason, "not a signing key"));
	kiln_buf_release(&sig);
	sign_keyring_free(kr);
}

KILN_TEST(verify_wrong_key_named_as_issuer)
{
	struct sign_keyring *kr = all_keys();
	struct sign_key *other = vec_key("expired.pub.asc");
	struct sign_result res;
	struct kiln_buf sig;
	struct sign_sig s;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	struct kiln_err err = KILN_ERR_INIT;
	uint8_t *issuer;

	/* ed's signature with the unhashed issuer key ID rewritten to another EdDSA key and
	 * no fingerprint subpacket: the other key is tried, and fails */
	craft("ed.sec.asc", T1, NULL, 0, &sig);
	sign_pkt_reader_init(&r, sig.ptr, sig.len);
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	assert_ok(sign_sig_parse(pkt.body, pkt.len, &s, &err), &err);
	issuer = (uint8_t *)s.unhashed + 2;
	memcpy(issuer, other->primary.keyid, 8);
	/* drop the hashed issuer fingerprint by renaming it to a harmless subpacket type */
	((uint8_t *)s.hashed)[1] = SIGN_SUB_POLICY_URI;
	assert_int_equal(check_crafted(kr, &sig, &res), SIGN_STATUS_BAD);
	assert_memory_equal(res.keyid, other->primary.keyid, 8);
	kiln_buf_release(&sig);
	sign_key_free(other);
	sign_keyring_free(kr);
}
