#include "util/util.h"

#include "tests/unit/harness.h"

KILN_TEST(hex_round_trip)
{
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char raw[4] = {0x00, 0xab, 0xcd, 0xff};
	unsigned char back[4];
	char hex[9];

	util_hex_encode(raw, 4, hex);
	assert_string_equal(hex, "00abcdff");
	assert_ok(util_hex_decode("00ABcdff", 8, back, 4, &err), &err);
	assert_memory_equal(raw, back, 4);
	assert_int_equal(util_hex_decode("00abcdf", 7, back, 4, NULL), KILN_ESYNTAX);
	assert_int_equal(util_hex_decode("00abcdfg", 8, back, 4, NULL), KILN_ESYNTAX);
}

/* RFC 4648 section 10 test vectors. */
KILN_TEST(base64_rfc4648_vectors)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
	                                  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(plain); i++) {
		struct kiln_buf b = KILN_BUF_INIT(100);
		struct kiln_buf d = KILN_BUF_INIT(100);

		util_base64_encode(plain[i], strlen(plain[i]), &b);
		assert_string_equal(b.ptr, enc[i]);
		assert_ok(util_base64_decode(b.ptr, b.len, &d, &err), &err);
		assert_string_equal(d.ptr, plain[i]);
		kiln_buf_release(&b);
		kiln_buf_release(&d);
	}
}

KILN_TEST(base64_decode_skips_whitespace_rejects_junk)
{
	struct kiln_buf d = KILN_BUF_INIT(100);

	assert_int_equal(util_base64_decode("Zm9v\nYmFy\n", 10, &d, NULL), KILN_OK);
	assert_string_equal(d.ptr, "foobar");
	kiln_buf_reset(&d);
	assert_int_equal(util_base64_decode("Zm9v!", 5, &d, NULL), KILN_ESYNTAX);
	kiln_buf_reset(&d);
	assert_int_equal(util_base64_decode("Zg==Zg", 6, &d, NULL), KILN_ESYNTAX);
	kiln_buf_reset(&d);
	assert_int_equal(util_base64_decode("Z", 1, &d, NULL), KILN_ESYNTAX);
	kiln_buf_release(&d);
}
