#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

static kiln_rc decode(const char *text, enum sign_armor_type *type, struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t used = 0;

	return sign_armor_decode(text, strlen(text), type, &used, out, &err);
}

KILN_TEST(crc24_known_answers)
{
	assert_int_equal(sign_crc24("", 0), 0xb704ce);
	assert_int_equal(sign_crc24("hello", 5), 0x47f58a);
}

/* gpg wrote these blocks, with its own CRC-24 line: decoding checks it. */
KILN_TEST(armor_decodes_gpg_output)
{
	static const char *files[] = {"rsa.pub.asc", "rsa.sec.asc", "ed.pub.asc", "subkey.sec.asc"};
	struct kiln_buf text;
	struct kiln_buf bin = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	enum sign_armor_type type;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(files); i++) {
		vec_load(files[i], &text);
		kiln_buf_reset(&bin);
		assert_int_equal(decode(text.ptr, &type, &bin), KILN_OK);
		assert_int_equal(type, strstr(files[i], ".sec") ? SIGN_ARMOR_PRIVATE_KEY
		                                                : SIGN_ARMOR_PUBLIC_KEY);
		assert_true(bin.len > 100);
		assert_int_equal((uint8_t)bin.ptr[0] & 0x80, 0x80);
		kiln_buf_release(&text);
	}
	kiln_buf_release(&bin);
}

KILN_TEST(armor_round_trip_is_what_rpm_reads)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf bin = KILN_BUF_INIT(KILN_MIB);
	enum sign_armor_type type;
	uint8_t data[200];
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	sign_armor_encode(SIGN_ARMOR_SIGNATURE, data, sizeof(data), &out);
	assert_true(kiln_str_starts(kiln_str_from(out.ptr), "-----BEGIN PGP SIGNATURE-----\n\n"));
	assert_true(kiln_str_ends(kiln_str_from(out.ptr), "\n-----END PGP SIGNATURE-----\n"));
	/* 64-column lines, then "=" and four base64 characters */
	assert_non_null(strstr(out.ptr, "\n=") && strchr(strstr(out.ptr, "\n=") + 1, '\n'));
	assert_int_equal(strchr(out.ptr + 31, '\n') - (out.ptr + 31), 64);
	assert_int_equal(decode(out.ptr, &type, &bin), KILN_OK);
	assert_int_equal(type, SIGN_ARMOR_SIGNATURE);
	assert_int_equal(bin.len, sizeof(data));
	assert_memory_equal(bin.ptr, data, sizeof(data));
	kiln_buf_release(&bin);
	kiln_buf_release(&out);
}

KILN_TEST(armor_is_lenient_where_writers_differ)
{
	struct kiln_buf bin = KILN_BUF_INIT(KILN_MIB);
	enum sign_armor_type type;

	/* CR LF, an armor header, no CRC line */
	assert_int_equal(decode("junk\r\n-----BEGIN PGP MESSAGE-----\r\nVersion: x\r\n\r\naGVs\r\n"
	                        "bG8=\r\n-----END PGP MESSAGE-----\r\n",
	                        &type, &bin),
	                 KILN_OK);
	assert_int_equal(bin.len, 5);
	assert_memory_equal(bin.ptr, "hello", 5);
	/* no blank line after BEGIN */
	kiln_buf_reset(&bin);
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\naGVsbG8=\n=R/WK\n"
	                        "-----END PGP MESSAGE-----\n",
	                        &type, &bin),
	                 KILN_OK);
	assert_memory_equal(bin.ptr, "hello", 5);
	kiln_buf_release(&bin);
}

KILN_TEST(armor_refuses_damage)
{
	struct kiln_buf bin = KILN_BUF_INIT(KILN_MIB);
	enum sign_armor_type type;

	/* CRC mismatch: "hellp" under the CRC of "hello" */
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\n\naGVsbHA=\n=R/WK\n"
	                        "-----END PGP MESSAGE-----\n",
	                        &type, &bin),
	                 KILN_EFORMAT);
	kiln_buf_reset(&bin);
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\n\naGVsbG8=\n", &type, &bin),
	                 KILN_EFORMAT);
	kiln_buf_reset(&bin);
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\n\naGV*bG8=\n"
	                        "-----END PGP MESSAGE-----\n",
	                        &type, &bin),
	                 KILN_ESYNTAX);
	kiln_buf_reset(&bin);
	/* END of another type */
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\n\naGVsbG8=\n"
	                        "-----END PGP SIGNATURE-----\n",
	                        &type, &bin),
	                 KILN_EFORMAT);
	kiln_buf_reset(&bin);
	assert_int_equal(decode("-----BEGIN PGP MESSAGE-----\n\n"
	                        "-----END PGP MESSAGE-----\n",
	                        &type, &bin),
	                 KILN_EFORMAT);
	kiln_buf_reset(&bin);
	assert_int_equal(decode("no armor here\n", &type, &bin), KILN_ENOTFOUND);
	kiln_buf_release(&bin);
}

KILN_TEST(armor_detect)
{
	assert_true(sign_armor_detect("\n  -----BEGIN PGP SIGNATURE-----", 32));
	assert_false(sign_armor_detect("\x89\x01\x0d", 3));
	assert_false(sign_armor_detect("", 0));
}
