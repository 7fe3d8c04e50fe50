#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

/* Fingerprints and key IDs agree with what gpg computed for the same keys. */
KILN_TEST(key_fingerprints_match_gpg)
{
	static const char *names[] = {"rsa", "ed", "subkey", "expired", "revoked"};
	char want[4][41];
	char hex[65];
	size_t i;
	size_t j;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++) {
		char file[64];
		struct sign_key *key;
		struct sign_key_info info;
		size_t n = vec_fingerprints(names[i], want, 4);

		snprintf(file, sizeof(file), "%s.pub.asc", names[i]);
		key = vec_key(file);
		sign_key_info_get(key, &info);
		assert_true(n >= 1);
		assert_string_equal(info.fingerprint, want[0]);
		assert_string_equal(info.keyid, want[0] + 24);
		assert_string_equal(info.short_id, want[0] + 32);
		assert_int_equal(info.created, 1672531200);
		assert_int_equal(key->nsubkeys, n - 1);
		for (j = 1; j < n; j++) {
			util_hex_encode(key->subkeys[j - 1].fpr, 20, hex);
			assert_string_equal(hex, want[j]);
		}
		sign_key_free(key);
	}
}

KILN_TEST(key_info_and_algorithms)
{
	struct sign_key *rsa = vec_key("rsa.pub.asc");
	struct sign_key *ed = vec_key("ed.sec.asc");
	struct sign_key_info info;

	sign_key_info_get(rsa, &info);
	assert_int_equal(info.algo, SIGN_PK_RSA);
	assert_int_equal(info.bits, 2048);
	assert_int_equal(info.version, 4);
	assert_false(info.has_secret);
	assert_false(info.revoked);
	assert_int_equal(info.expires, 0);
	assert_string_equal(info.uid, "kiln test rsa <rsa@kiln.example>");
	/* the encryption subkey is bound but may not sign */
	assert_true(rsa->subkeys[0].bound);
	assert_false(rsa->subkeys[0].flags & SIGN_KEYFLAG_SIGN);
	sign_key_info_get(ed, &info);
	assert_int_equal(info.algo, SIGN_PK_EDDSA);
	assert_int_equal(info.bits, 255);
	assert_true(info.has_secret);
	assert_int_equal(sign_key_signing_algo(ed), SIGN_PK_EDDSA);
	assert_int_equal(sign_key_signing_algo(rsa), 0);
	/* the cv25519 subkey: kept, bound, not usable by kiln */
	assert_int_equal(ed->nsubkeys, 1);
	assert_null(ed->subkeys[0].pkey);
	sign_key_free(rsa);
	sign_key_free(ed);
}

KILN_TEST(key_signer_is_the_signing_subkey)
{
	struct sign_key *key = vec_key("subkey.sec.asc");
	const struct sign_pubkey *s = sign_key_signer(key);
	char why[96];

	assert_non_null(s);
	assert_ptr_equal(s, &key->subkeys[0]);
	/* the certify-only primary may not sign data */
	assert_false(
	    sign_pubkey_can_sign_at(&key->primary, &key->primary, 1704067200, why, sizeof(why)));
	assert_string_equal(why, "it is not a signing key");
	assert_ptr_equal(sign_key_find(key, s->keyid), s);
	sign_key_free(key);
}

KILN_TEST(key_expiry_and_revocation_policy)
{
	struct sign_key *exp = vec_key("expired.pub.asc");
	struct sign_key *rev = vec_key("revoked.pub.asc");
	const uint32_t t0 = 1672531200;
	char why[96];

	/* gpg's "Expire-Date: 30" is 30 days after creation */
	assert_int_equal(exp->primary.expires, 30 * 86400);
	assert_true(
	    sign_pubkey_can_sign_at(&exp->primary, &exp->primary, t0 + 86400, why, sizeof(why)));
	assert_false(sign_pubkey_can_sign_at(&exp->primary, &exp->primary, t0 + 30 * 86400, why,
	                                     sizeof(why)));
	assert_string_equal(why, "the key had expired at the signature time");
	assert_false(
	    sign_pubkey_can_sign_at(&exp->primary, &exp->primary, t0 - 1, why, sizeof(why)));
	assert_string_equal(why, "the signature is older than the key");
	assert_true(rev->primary.revoked);
	assert_false(
	    sign_pubkey_can_sign_at(&rev->primary, &rev->primary, t0 + 86400, why, sizeof(why)));
	assert_string_equal(why, "it is revoked");
	sign_key_free(exp);
	sign_key_free(rev);
}

/* The first packet of an armored vector, binary, into bin. */
static struct sign_pkt first_packet(const char *name, struct kiln_buf *bin)
{
	struct kiln_err err = KILN_ERR_INIT;
	enum sign_armor_type type;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	struct kiln_buf text;
	size_t used;

	vec_load(name, &text);
	kiln_buf_init(bin, KILN_LIMIT_PGP_FILE);
	assert_ok(sign_armor_decode(text.ptr, text.len, &type, &used, bin, &err), &err);
	sign_pkt_reader_init(&r, bin->ptr, bin->len);
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	kiln_buf_release(&text);
	return pkt;
}

KILN_TEST(key_packet_damage_is_refused)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf bin;
	struct sign_pubkey k;
	struct sign_pkt pkt = first_packet("ed.sec.asc", &bin);
	uint8_t *body = (uint8_t *)pkt.body;
	size_t pub_len = 0;

	assert_int_equal(pkt.tag, SIGN_TAG_SECRET_KEY);
	assert_ok(sign_pubkey_parse(pkt.body, pkt.len, true, &k, &pub_len, &err), &err);
	assert_true(k.has_secret);
	sign_pubkey_release(&k);
	/* the secret-key checksum (last two octets) */
	body[pkt.len - 1] ^= 1;
	assert_int_equal(sign_pubkey_parse(pkt.body, pkt.len, true, &k, &pub_len, &err),
	                 KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "checksum"));
	body[pkt.len - 1] ^= 1;
	/* read as a public key, the secret part is stray data */
	kiln_err_clear(&err);
	assert_int_equal(sign_pubkey_parse(pkt.body, pkt.len, false, &k, &pub_len, &err),
	                 KILN_EFORMAT);
	/* truncated anywhere */
	assert_int_equal(sign_pubkey_parse(pkt.body, 20, true, &k, &pub_len, NULL), KILN_EFORMAT);
	/* versions 3 and 6 */
	body[0] = 3;
	assert_int_equal(sign_pubkey_parse(pkt.body, pkt.len, true, &k, &pub_len, NULL),
	                 KILN_EUNSUPP);
	body[0] = 6;
	assert_int_equal(sign_pubkey_parse(pkt.body, pkt.len, true, &k, &pub_len, NULL),
	                 KILN_EUNSUPP);
	body[0] = 4;
	/* an unknown algorithm */
	body[5] = 99;
	assert_int_equal(sign_pubkey_parse(pkt.body, pkt.len, false, &k, &pub_len, NULL),
	                 KILN_EUNSUPP);
	/* EdDSA on another curve: parsed, not usable */
	body[5] = SIGN_PK_EDDSA;
	body[7] ^= 0x10;
	assert_ok(sign_pubkey_parse(pkt.body, pub_len, false, &k, &pub_len, &err), &err);
	assert_null(k.pkey);
	sign_pubkey_release(&k);
	kiln_buf_release(&bin);
}
