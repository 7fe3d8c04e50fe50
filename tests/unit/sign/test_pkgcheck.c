#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/sign/sign_test.h"

#define T1 1704067200

static void copy_vec(const char *vec, char *path, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	char src[256];

	snprintf(src, sizeof(src), "tests/data/sign/%s", vec);
	snprintf(path, size, "%s/%s", kiln_test_tmpdir(), vec);
	assert_ok(util_copy_file(src, path, 0644, &err), &err);
}

static void check(const struct sign_keyring *kr, const char *path, unsigned flags,
                  struct sign_check *c)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(sign_package_check(kr, path, flags, c, &err), &err);
}

static void sign_pkg(const char *keyfile, const char *path)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key(keyfile);
	struct sign_opts o = {.time = T1};

	assert_ok(sign_package(key, path, &o, 0, NULL, &err), &err);
	sign_key_free(key);
}

/* Flip one byte of the file at offset off. */
static void flip(const char *path, size_t off)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);

	assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, &b, &err), &err);
	assert_true(off < b.len);
	b.ptr[off] ^= 0x01;
	assert_ok(util_write_atomic(path, b.ptr, b.len, 0644, &err), &err);
	kiln_buf_release(&b);
}

static const struct sign_check_item *find(const struct sign_check *c, const char *what)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (strstr(c->items[i].what, what))
			return &c->items[i];
	}
	return NULL;
}

KILN_TEST(pkgcheck_unsigned_like_rpm)
{
	static const char *want[] = {"Header SHA256 digest", "Header SHA1 digest",
	                             "Payload SHA256 digest", "MD5 digest"};
	struct sign_keyring *kr = vec_keyring("rsa.pub.asc", NULL);
	struct sign_check c;
	size_t i;

	check(kr, "tests/data/sign/kt-1.0-1.noarch.rpm", 0, &c);
	assert_int_equal(c.n, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(c.items[i].what, want[i]);
		assert_int_equal(c.items[i].status, SIGN_ITEM_OK);
	}
	assert_true(c.ok);
	assert_int_equal(c.signatures_ok, 0);
	/* rpm 6's level: a signature is required */
	check(kr, "tests/data/sign/kt-1.0-1.noarch.rpm", SIGN_CHECK_REQUIRE_SIGNATURE, &c);
	assert_string_equal(c.items[0].what, "Header OpenPGP signature");
	assert_int_equal(c.items[0].status, SIGN_ITEM_NOTFOUND);
	assert_false(c.ok);
	sign_keyring_free(kr);
}

KILN_TEST(pkgcheck_signed_ok_nokey_bad)
{
	struct sign_keyring *kr = vec_keyring("rsa.pub.asc", NULL);
	struct sign_keyring *other = vec_keyring("ed.pub.asc", NULL);
	struct pack_package p = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_check c;
	char path[512];
	size_t sig_at;

	copy_vec("kt-1.0-1.noarch.rpm", path, sizeof(path));
	sign_pkg("rsa.sec.asc", path);
	check(kr, path, SIGN_CHECK_REQUIRE_SIGNATURE, &c);
	assert_int_equal(c.n, 5);
	assert_string_equal(c.items[0].what, "Header V4 RSA/SHA256 Signature, key ID 12d9aab9");
	assert_int_equal(c.items[0].status, SIGN_ITEM_OK);
	assert_true(c.items[0].signature);
	assert_true(c.ok);
	assert_int_equal(c.signatures_ok, 1);
	/* without the key */
	check(other, path, 0, &c);
	assert_int_equal(c.items[0].status, SIGN_ITEM_NOKEY);
	assert_false(c.ok);
	/* one byte of the signature's MPI */
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	{
		const struct pack_entry *e = pack_header_get(&p.sig, PACK_SIGTAG_RSA);
		struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);

		assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, &b, &err), &err);
		sig_at = (size_t)((char *)memmem(b.ptr, b.len, e->data, e->count) - b.ptr);
		sig_at += e->count - 10;
		kiln_buf_release(&b);
	}
	pack_package_release(&p);
	flip(path, sig_at);
	check(kr, path, 0, &c);
	assert_int_equal(c.items[0].status, SIGN_ITEM_BAD);
	assert_true(c.items[0].detail[0] != '\0');
	assert_false(c.ok);
	sign_keyring_free(other);
	sign_keyring_free(kr);
}

KILN_TEST(pkgcheck_payload_and_header_tampering)
{
	struct sign_keyring *kr = vec_keyring("ed.pub.asc", NULL);
	struct pack_package p = {0};
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_check c;
	char path[512];
	uint64_t payload_off;
	uint64_t hdr_off;

	copy_vec("kt-1.0-1.noarch.rpm", path, sizeof(path));
	sign_pkg("ed.sec.asc", path);
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	payload_off = p.payload_off;
	hdr_off = p.hdr_off;
	pack_package_release(&p);
	/* the last payload byte: payload digest and MD5 fail, the header signature holds */
	flip(path, (size_t)payload_off + 40);
	check(kr, path, 0, &c);
	assert_int_equal(find(&c, "EdDSA")->status, SIGN_ITEM_OK);
	assert_int_equal(find(&c, "Payload SHA256")->status, SIGN_ITEM_BAD);
	assert_non_null(strstr(find(&c, "Payload SHA256")->detail, "Expected "));
	assert_int_equal(find(&c, "MD5")->status, SIGN_ITEM_BAD);
	assert_false(c.ok);
	/* as rpm 4.18 reports it: the good header signature does not reach the payload, so the
	 * absent header+payload signatures are NOTFOUND, just before MD5 */
	assert_string_equal(c.items[c.n - 3].what, "RSA signature");
	assert_int_equal(c.items[c.n - 3].status, SIGN_ITEM_NOTFOUND);
	assert_string_equal(c.items[c.n - 2].what, "DSA signature");
	assert_string_equal(c.items[c.n - 1].what, "MD5 digest");
	/* one letter of the Summary in the main header: digests and signature fail */
	flip(path, (size_t)payload_off + 40);
	{
		struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
		char *at;

		assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, &b, &err), &err);
		at = memmem(b.ptr + hdr_off, b.len - hdr_off, "kiln sign test", 14);
		assert_non_null(at);
		flip(path, (size_t)(at - b.ptr));
		kiln_buf_release(&b);
	}
	check(kr, path, 0, &c);
	assert_int_equal(find(&c, "EdDSA")->status, SIGN_ITEM_BAD);
	assert_int_equal(find(&c, "Header SHA256")->status, SIGN_ITEM_BAD);
	assert_int_equal(find(&c, "Header SHA1")->status, SIGN_ITEM_BAD);
	assert_int_equal(find(&c, "MD5")->status, SIGN_ITEM_BAD);
	assert_int_equal(find(&c, "Payload SHA256")->status, SIGN_ITEM_OK);
	assert_false(c.ok);
	sign_keyring_free(kr);
}

/* A legacy header+payload signature (rpmsign --rpmv3's PGP tag) is checked over header and
 * payload, and listed before MD5 as rpm does. */
KILN_TEST(pkgcheck_header_and_payload_signature)
{
	struct sign_keyring *kr = vec_keyring("rsa.pub.asc", NULL);
	struct sign_key *key = vec_key("rsa.sec.asc");
	struct kiln_buf file = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct kiln_buf sig = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct sign_opts o = {.time = T1};
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p = {0};
	struct sign_check c;
	char path[512];

	copy_vec("kt-1.0-1.noarch.rpm", path, sizeof(path));
	assert_ok(pack_package_open(&p, path, NULL, &err), &err);
	assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, &file, &err), &err);
	assert_ok(sign_data(key, file.ptr + p.hdr_off, file.len - p.hdr_off, &o, &sig, &err), &err);
	assert_ok(pack_header_put_bin(&p.sig, PACK_SIGTAG_PGP, sig.ptr, sig.len, &err), &err);
	assert_ok(pack_sigheader_replace(path, &p.sig, &err), &err);
	check(kr, path, 0, &c);
	assert_int_equal(c.n, 5);
	assert_string_equal(c.items[3].what, "V4 RSA/SHA256 Signature, key ID 12d9aab9");
	assert_int_equal(c.items[3].status, SIGN_ITEM_OK);
	assert_string_equal(c.items[4].what, "MD5 digest");
	assert_true(c.ok);
	/* the payload changed: the header+payload signature fails too */
	flip(path, (size_t)p.payload_off + 40);
	check(kr, path, 0, &c);
	assert_int_equal(c.items[3].status, SIGN_ITEM_BAD);
	assert_false(c.ok);
	pack_package_release(&p);
	kiln_buf_release(&sig);
	kiln_buf_release(&file);
	sign_key_free(key);
	sign_keyring_free(kr);
}
