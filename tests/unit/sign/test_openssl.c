#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

static void unhex(const char *hex, uint8_t *out, size_t n)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_hex_decode(hex, strlen(hex), out, n, &err), &err);
}

/* RFC 8032 7.1, tests 1 and 2: Ed25519 over the message octets. */
KILN_TEST(ed25519_rfc8032_vectors)
{
	static const struct {
		const char *seed, *pub, *msg, *sig;
	} v[] = {
	    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
	     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
	    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
	     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
	     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
	};
	struct kiln_err err = KILN_ERR_INIT;
	uint8_t seed[32], pub[32], want[64], sig[64], msg[1];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(v); i++) {
		struct sign_pkey *k = NULL;
		struct sign_pkey *p = NULL;
		size_t mlen = strlen(v[i].msg) / 2;
		size_t n = sizeof(sig);

		unhex(v[i].seed, seed, 32);
		unhex(v[i].pub, pub, 32);
		unhex(v[i].sig, want, 64);
		if (mlen)
			unhex(v[i].msg, msg, mlen);
		assert_ok(sign_ossl_ed25519_new(pub, seed, &k, &err), &err);
		assert_ok(sign_ossl_sign(k, UTIL_DIGEST_SHA256, msg, mlen, sig, &n, &err), &err);
		assert_int_equal(n, 64);
		assert_memory_equal(sig, want, 64);
		assert_ok(sign_ossl_ed25519_new(pub, NULL, &p, &err), &err);
		assert_ok(sign_ossl_verify(p, UTIL_DIGEST_SHA256, msg, mlen, sig, 64, &err), &err);
		sig[10] ^= 1;
		assert_int_equal(sign_ossl_verify(p, UTIL_DIGEST_SHA256, msg, mlen, sig, 64, &err),
		                 KILN_ESIG);
		/* a seed that does not derive the public key is refused */
		sign_ossl_free(k);
		seed[0] ^= 1;
		assert_int_equal(sign_ossl_ed25519_new(pub, seed, &k, &err), KILN_ESIG);
		assert_null(k);
		sign_ossl_free(p);
	}
}

/* Recompute gpg's own signatures with kiln's crypto: RSA PKCS#1 v1.5 and Ed25519 are
 * deterministic, so signing gpg's digest with the same secret key must give gpg's octets. */
static void recompute(const char *keyfile, const char *sigfile)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key(keyfile);
	const struct sign_pubkey *signer = sign_key_signer(key);
	struct kiln_buf sigbin, data;
	struct sign_pkt pkt;
	struct sign_sig sig;
	struct util_digest d;
	enum util_digest_algo algo;
	uint8_t digest[UTIL_DIGEST_MAX], out[SIGN_SIG_MAX], trailer[6];
	size_t n = sizeof(out);

	assert_non_null(signer);
	vec_load(sigfile, &sigbin);
	vec_load("data.txt", &data);
	{
		struct sign_pkt_reader r;

		sign_pkt_reader_init(&r, sigbin.ptr, sigbin.len);
		assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	}
	assert_ok(sign_sig_parse(pkt.body, pkt.len, &sig, &err), &err);
	assert_ok(sign_hash_to_util(sig.hash_algo, &algo, &err), &err);
	assert_ok(util_digest_init(&d, algo, &err), &err);
	util_digest_update(&d, data.ptr, data.len);
	util_digest_update(&d, sig.hashed_part, sig.hashed_part_len);
	trailer[0] = 4;
	trailer[1] = 0xff;
	trailer[2] = 0;
	trailer[3] = 0;
	trailer[4] = (uint8_t)(sig.hashed_part_len >> 8);
	trailer[5] = (uint8_t)sig.hashed_part_len;
	util_digest_update(&d, trailer, 6);
	assert_ok(util_digest_final(&d, digest, &err), &err);
	assert_memory_equal(digest, sig.left16, 2);
	assert_ok(sign_ossl_sign(signer->pkey, algo, digest, util_digest_size(algo), out, &n, &err),
	          &err);
	if (signer->algo == SIGN_PK_RSA) {
		assert_int_equal(n, sig.m1_len);
		assert_memory_equal(out, sig.m1, n);
	} else {
		assert_int_equal(n, 64);
		assert_memory_equal(out + 32 - sig.m1_len, sig.m1, sig.m1_len);
		assert_memory_equal(out + 64 - sig.m2_len, sig.m2, sig.m2_len);
	}
	util_digest_release(&d);
	kiln_buf_release(&data);
	kiln_buf_release(&sigbin);
	sign_key_free(key);
}

KILN_TEST(rsa_and_ed25519_reproduce_gpg_signatures)
{
	recompute("rsa.sec.asc", "data.rsa.gpg.sig");
	recompute("rsa.sec.asc", "data.rsa-sha512.gpg.sig");
	recompute("ed.sec.asc", "data.ed.gpg.sig");
	recompute("subkey.sec.asc", "data.subkey.gpg.sig");
}

KILN_TEST(rsa_generate_export_import)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf pub = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf sec = KILN_BUF_INIT(KILN_MIB);
	struct sign_rsa_secret s;
	struct sign_pkey *k = NULL;
	struct sign_pkey *back = NULL;
	const uint8_t *n, *e;
	size_t nl, el;
	struct sign_cur c;
	uint8_t digest[32] = {1, 2, 3};
	uint8_t sig[512];
	size_t sl = sizeof(sig);

	assert_ok(sign_ossl_rsa_generate(2048, &k, &err), &err);
	assert_int_equal(sign_ossl_bits(k), 2048);
	assert_true(sign_ossl_is_rsa(k));
	assert_ok(sign_ossl_rsa_export(k, &pub, &sec, &err), &err);
	sign_cur_init(&c, pub.ptr, pub.len);
	assert_true(sign_cur_mpi(&c, &n, &nl) && sign_cur_mpi(&c, &e, &el));
	sign_cur_init(&c, sec.ptr, sec.len);
	assert_true(sign_cur_mpi(&c, &s.d, &s.d_len) && sign_cur_mpi(&c, &s.p, &s.p_len) &&
	            sign_cur_mpi(&c, &s.q, &s.q_len) && sign_cur_mpi(&c, &s.u, &s.u_len));
	/* OpenPGP order: p < q */
	assert_true(s.p_len < s.q_len || (s.p_len == s.q_len && memcmp(s.p, s.q, s.p_len) < 0));
	assert_ok(sign_ossl_rsa_new(n, nl, e, el, &s, &back, &err), &err);
	assert_ok(sign_ossl_sign(back, UTIL_DIGEST_SHA256, digest, 32, sig, &sl, &err), &err);
	assert_ok(sign_ossl_verify(k, UTIL_DIGEST_SHA256, digest, 32, sig, sl, &err), &err);
	/* wrong digest, wrong hash algorithm, truncated signature (cut at the end: a cut at the
	 * front is the same number when the first byte is zero, 1 signature in 256) */
	digest[0] ^= 1;
	assert_int_equal(sign_ossl_verify(k, UTIL_DIGEST_SHA256, digest, 32, sig, sl, &err),
	                 KILN_ESIG);
	digest[0] ^= 1;
	assert_int_equal(sign_ossl_verify(k, UTIL_DIGEST_SHA512, digest, 32, sig, sl, &err),
	                 KILN_ESIG);
	assert_int_equal(sign_ossl_verify(k, UTIL_DIGEST_SHA256, digest, 32, sig, sl - 1, &err),
	                 KILN_ESIG);
	sign_ossl_free(back);
	/* a damaged secret (d flipped) is caught when loading */
	((uint8_t *)s.d)[s.d_len - 1] ^= 2;
	back = NULL;
	assert_int_equal(sign_ossl_rsa_new(n, nl, e, el, &s, &back, &err), KILN_ESIG);
	assert_null(back);
	sign_ossl_free(k);
	sign_buf_wipe(&sec);
	kiln_buf_release(&pub);
}
