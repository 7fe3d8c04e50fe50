#include "util/util.h"

#include "tests/unit/pack/pkgfix.h"

KILN_TEST(check_ok_and_bad)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_check c;
	char path[1024];
	size_t i;

	pkgfix_write("chk", 4, "w9.gzdio", path, sizeof(path));
	assert_ok(pack_check_file(path, &c, &err), &err);
	assert_true(c.ok);
	assert_int_equal(c.n, 4);
	assert_string_equal(c.items[0].what, "Header SHA256 digest");
	assert_ok(util_read_file(path, KILN_MIB, &b, &err), &err);
	b.ptr[b.len - 10] ^= 0x55;
	assert_ok(util_write_atomic(path, b.ptr, b.len, 0644, &err), &err);
	assert_ok(pack_check_file(path, &c, &err), &err);
	assert_false(c.ok);
	for (i = 0; i < c.n; i++) {
		if (!strcmp(c.items[i].what, "MD5 digest"))
			assert_int_equal(c.items[i].res, PACK_CHECK_BAD);
	}
	kiln_buf_release(&b);
}

KILN_TEST(check_v6)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_check c;
	char path[1024];

	pkgfix_write("chk6", 6, "w3.zstdio", path, sizeof(path));
	assert_ok(pack_check_file(path, &c, &err), &err);
	assert_true(c.ok);
	assert_int_equal(c.n, 5); /* header SHA256, SHA3-256; payload SHA256, SHA512, SHA3-256 */
}

/* Header digests alone (what kiln query checks): a damaged payload does not matter, a
 * changed header byte does; v6 has SHA256 and SHA3-256, no SHA1. */
KILN_TEST(check_header_only)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	struct pack_check c;
	char path[1024], *at;

	pkgfix_write("chkh", 6, "w.ufdio", path, sizeof(path));
	assert_ok(util_read_file(path, KILN_MIB, &b, &err), &err);
	b.ptr[b.len - 10] ^= 0x55;
	assert_ok(pack_package_from_mem(&p, b.ptr, b.len, &err), &err);
	assert_ok(pack_check_header(&p, &c, &err), &err);
	assert_true(c.ok);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.items[1].what, "Header SHA3-256 digest");
	pack_package_release(&p);
	at = memmem(b.ptr, b.len, "noarch", 6);
	assert_non_null(at);
	at[0] = 'N';
	assert_ok(pack_package_from_mem(&p, b.ptr, b.len, &err), &err);
	assert_ok(pack_check_header(&p, &c, &err), &err);
	assert_false(c.ok);
	assert_int_equal(c.items[0].res, PACK_CHECK_BAD);
	assert_int_equal(c.items[1].res, PACK_CHECK_BAD);
	pack_package_release(&p);
	kiln_buf_release(&b);
}
