#include "util/util.h"

#include "tests/unit/harness.h"

/* Known answers for "abc" (FIPS 180-4, FIPS 202, RFC 1321). */
KILN_TEST(digest_known_answers)
{
	static const struct {
		enum util_digest_algo algo;
		const char *hex;
	} kat[] = {
	    {UTIL_DIGEST_MD5, "900150983cd24fb0d6963f7d28e17f72"},
	    {UTIL_DIGEST_SHA1, "a9993e364706816aba3e25717850c26c9cd0d89d"},
	    {UTIL_DIGEST_SHA256,
	     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {UTIL_DIGEST_SHA512,
	     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
	    {UTIL_DIGEST_SHA3_256,
	     "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
	};
	struct kiln_err err = KILN_ERR_INIT;
	char hex[2 * UTIL_DIGEST_MAX + 1];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(kat); i++) {
		assert_ok(util_digest_mem_hex(kat[i].algo, "abc", 3, hex, &err), &err);
		assert_string_equal(hex, kat[i].hex);
		assert_int_equal(strlen(hex), 2 * util_digest_size(kat[i].algo));
	}
}

KILN_TEST(digest_streaming_equals_one_shot_and_reuses)
{
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char a[UTIL_DIGEST_MAX];
	unsigned char b[UTIL_DIGEST_MAX];
	struct util_digest d;

	assert_ok(util_digest_init(&d, UTIL_DIGEST_SHA256, &err), &err);
	util_digest_update(&d, "hello ", 6);
	util_digest_update(&d, "world", 5);
	assert_ok(util_digest_final(&d, a, &err), &err);
	assert_ok(util_digest_mem(UTIL_DIGEST_SHA256, "hello world", 11, b, &err), &err);
	assert_memory_equal(a, b, 32);
	/* final resets the context for another message */
	util_digest_update(&d, "hello world", 11);
	assert_ok(util_digest_final(&d, a, &err), &err);
	assert_memory_equal(a, b, 32);
	util_digest_release(&d);
	util_digest_release(&d);
}

KILN_TEST(digest_names)
{
	enum util_digest_algo a;

	assert_int_equal(util_digest_by_name("SHA-256", &a, NULL), KILN_OK);
	assert_int_equal(a, UTIL_DIGEST_SHA256);
	assert_int_equal(util_digest_by_name("sha3-256", &a, NULL), KILN_OK);
	assert_int_equal(a, UTIL_DIGEST_SHA3_256);
	assert_int_equal(util_digest_by_name("crc32", &a, NULL), KILN_ENOTFOUND);
	assert_string_equal(util_digest_name(UTIL_DIGEST_SHA1), "sha1");
}

KILN_TEST(digest_file)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[512];
	char hex[2 * UTIL_DIGEST_MAX + 1];

	snprintf(path, sizeof(path), "%s/f", kiln_test_tmpdir());
	assert_ok(util_write_atomic(path, "abc", 3, 0644, &err), &err);
	assert_ok(util_digest_file_hex(UTIL_DIGEST_SHA256, path, hex, &err), &err);
	assert_string_equal(hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(util_digest_file_hex(UTIL_DIGEST_SHA256, "/nonexistent/x", hex, &err),
	                 KILN_EIO);
}

/* RFC 4231 test cases 2 (a short key) and 6 (a key longer than the block, hashed first). */
KILN_TEST(hmac_sha256_rfc4231)
{
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char mac[32], key[131];
	const char *msg6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	char hex[65];

	assert_ok(util_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac, &err), &err);
	util_hex_encode(mac, 32, hex);
	assert_string_equal(hex,
	                    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key));
	assert_ok(util_hmac_sha256(key, sizeof(key), msg6, strlen(msg6), mac, &err), &err);
	util_hex_encode(mac, 32, hex);
	assert_string_equal(hex,
	                    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	assert_true(util_mem_equal_ct("abc", "abc", 3));
	assert_false(util_mem_equal_ct("abc", "abd", 3));
}
