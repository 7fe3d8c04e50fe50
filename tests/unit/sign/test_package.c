#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/sign/sign_test.h"

#define T1 1704067200

/* A copy of tests/data/sign/<vec> in a fresh directory; path gets its name. */
static void copy_vec(const char *vec, char *path, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	char src[256];

	snprintf(src, sizeof(src), "tests/data/sign/%s", vec);
	snprintf(path, size, "%s/%s", kiln_test_tmpdir(), vec);
	assert_ok(util_copy_file(src, path, 0644, &err), &err);
}

static void slurp(const char *path, struct kiln_buf *b)
{
	struct kiln_err err = KILN_ERR_INIT;

	kiln_buf_init(b, KILN_LIMIT_PGP_FILE);
	assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, b, &err), &err);
}

static void open_pkg(const char *path, struct pack_package *p)
{
	struct kiln_err err = KILN_ERR_INIT;

	memset(p, 0, sizeof(*p));
	assert_ok(pack_package_open(p, path, NULL, &err), &err);
}

static void sign_with(const char *keyfile, const char *path, int64_t t, unsigned flags,
                      bool want_changed)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key(keyfile);
	struct sign_opts o = {.time = t};
	bool changed = !want_changed;

	assert_ok(sign_package(key, path, &o, flags, &changed, &err), &err);
	assert_int_equal(changed, want_changed);
	sign_key_free(key);
}

/* The signature in tag verifies over the package's main header with keyring kr. */
static void assert_tag_verifies(const char *path, uint32_t tag, const struct sign_keyring *kr)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct pack_package p;
	struct sign_result res;
	const struct pack_entry *e;

	open_pkg(path, &p);
	e = pack_header_get(&p.sig, tag);
	assert_non_null(e);
	assert_int_equal(e->type, RPMTAG_TYPE_BIN);
	assert_ok(sign_verify(kr, e->data, e->count, p.hdr_raw.ptr, p.hdr_raw.len, &res, &err),
	          &err);
	pack_package_release(&p);
}

KILN_TEST(package_v4_signatures_never_move_header_or_payload)
{
	struct sign_keyring *kr = vec_keyring("rsa.pub.asc", "ed.pub.asc", NULL);
	struct kiln_buf orig, now;
	struct pack_package p;
	char path[512];
	uint64_t hdr_off;

	copy_vec("kt-1.0-1.noarch.rpm", path, sizeof(path));
	slurp(path, &orig);
	open_pkg(path, &p);
	hdr_off = p.hdr_off;
	assert_null(pack_header_get(&p.sig, PACK_SIGTAG_RSA));
	pack_package_release(&p);
	sign_with("rsa.sec.asc", path, T1, 0, true);
	assert_tag_verifies(path, PACK_SIGTAG_RSA, kr);
	slurp(path, &now);
	assert_int_equal(now.len, orig.len);
	assert_memory_equal(now.ptr + hdr_off, orig.ptr + hdr_off, orig.len - hdr_off);
	assert_memory_equal(now.ptr, orig.ptr, 96); /* the lead too */
	/* the same key and time again: identical, the file is left alone */
	sign_with("rsa.sec.asc", path, T1, 0, false);
	/* EdDSA goes to DSAHEADER, next to the RSA signature */
	sign_with("ed.sec.asc", path, T1, 0, true);
	assert_tag_verifies(path, PACK_SIGTAG_RSA, kr);
	assert_tag_verifies(path, PACK_SIGTAG_DSA, kr);
	/* another time replaces the RSA signature (one per tag, as rpmsign 4.x) */
	sign_with("rsa.sec.asc", path, T1 + 60, 0, true);
	assert_tag_verifies(path, PACK_SIGTAG_RSA, kr);
	/* deleting gives back the unsigned bytes */
	kiln_buf_release(&now);
	{
		struct kiln_err err = KILN_ERR_INIT;
		bool changed = false;

		assert_ok(sign_package_delete(path, &changed, &err), &err);
		assert_true(changed);
		assert_ok(sign_package_delete(path, &changed, &err), &err);
		assert_false(changed);
	}
	slurp(path, &now);
	assert_int_equal(now.len, orig.len);
	assert_memory_equal(now.ptr, orig.ptr, orig.len);
	kiln_buf_release(&now);
	kiln_buf_release(&orig);
	sign_keyring_free(kr);
}

KILN_TEST(package_signing_is_reproducible)
{
	struct kiln_buf a, b;
	char p1[512], p2[512];

	copy_vec("kt-1.0-1.noarch.rpm", p1, sizeof(p1));
	copy_vec("kt-1.0-1.noarch.rpm", p2, sizeof(p2));
	sign_with("ed.sec.asc", p1, T1, SIGN_PKG_RPMV6, true);
	sign_with("ed.sec.asc", p2, T1, SIGN_PKG_RPMV6, true);
	slurp(p1, &a);
	slurp(p2, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

/* Build a minimal v6 package with pack's header API: RPMFORMAT 6 in the main header;
 * SHA256, SHA3-256 and a 4128-byte RESERVED in the signature header; a few payload bytes. */
static void write_v6(const char *path)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf hdr = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf sig = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf file = KILN_BUF_INIT(KILN_MIB);
	struct pack_header h, s;
	char hex[2 * UTIL_DIGEST_MAX + 1];
	static uint8_t zeros[4128];
	uint8_t lead[96] = {0xed, 0xab, 0xee, 0xdb, 4, 0};

	lead[79] = 5;
	pack_header_init(&h);
	pack_header_init(&s);
	assert_ok(pack_header_put_string(&h, RPMTAG_NAME, "six", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_VERSION, "1", &err), &err);
	assert_ok(pack_header_put_string(&h, RPMTAG_RELEASE, "1", &err), &err);
	assert_ok(pack_header_put_u32(&h, RPMTAG_RPMFORMAT, 6, &err), &err);
	assert_ok(pack_header_write(&h, 63, &hdr, &err), &err);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, hdr.ptr, hdr.len, hex, &err), &err);
	assert_ok(pack_header_put_string(&s, PACK_SIGTAG_SHA256, hex, &err), &err);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA3_256, hdr.ptr, hdr.len, hex, &err), &err);
	assert_ok(pack_header_put_string(&s, PACK_SIGTAG_SHA3_256, hex, &err), &err);
	assert_ok(pack_header_put_bin(&s, PACK_SIGTAG_RESERVED, zeros, sizeof(zeros), &err), &err);
	assert_ok(pack_header_write(&s, 62, &sig, &err), &err);
	while (sig.len % 8)
		kiln_buf_addch(&sig, 0);
	kiln_buf_add(&file, lead, sizeof(lead));
	kiln_buf_add(&file, sig.ptr, sig.len);
	kiln_buf_add(&file, hdr.ptr, hdr.len);
	kiln_buf_addstr(&file, "payload");
	assert_ok(util_write_atomic(path, file.ptr, file.len, 0644, &err), &err);
	pack_header_release(&h);
	pack_header_release(&s);
	kiln_buf_release(&file);
	kiln_buf_release(&sig);
	kiln_buf_release(&hdr);
}

static uint32_t openpgp_count(const char *path, bool *legacy)
{
	struct pack_package p;
	const struct pack_entry *e;
	uint32_t n;

	open_pkg(path, &p);
	assert_int_equal(p.format, 6);
	e = pack_header_get(&p.sig, PACK_SIGTAG_OPENPGP);
	n = e ? e->count : 0;
	if (e)
		assert_int_equal(e->type, RPMTAG_TYPE_STRING_ARRAY);
	*legacy =
	    pack_header_get(&p.sig, PACK_SIGTAG_RSA) || pack_header_get(&p.sig, PACK_SIGTAG_DSA);
	pack_package_release(&p);
	return n;
}

KILN_TEST(package_v6_signatures_append_to_openpgp)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf orig, now;
	char path[512];
	bool legacy = true;

	snprintf(path, sizeof(path), "%s/six.rpm", kiln_test_tmpdir());
	write_v6(path);
	slurp(path, &orig);
	sign_with("rsa.sec.asc", path, T1, 0, true);
	assert_int_equal(openpgp_count(path, &legacy), 1);
	assert_false(legacy);
	sign_with("ed.sec.asc", path, T1, 0, true);
	assert_int_equal(openpgp_count(path, &legacy), 2);
	sign_with("ed.sec.asc", path, T1, 0, false); /* identical: skipped */
	assert_int_equal(openpgp_count(path, &legacy), 2);
	sign_with("subkey.sec.asc", path, T1, SIGN_PKG_RPMV4, true);
	assert_int_equal(openpgp_count(path, &legacy), 3);
	assert_true(legacy);
	slurp(path, &now);
	assert_int_equal(now.len, orig.len);
	kiln_buf_release(&now);
	assert_ok(sign_package_delete(path, NULL, &err), &err);
	slurp(path, &now);
	assert_int_equal(now.len, orig.len);
	assert_memory_equal(now.ptr, orig.ptr, orig.len);
	kiln_buf_release(&now);
	kiln_buf_release(&orig);
}

KILN_TEST(package_refuses_damaged_or_foreign_files)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key("ed.sec.asc");
	struct sign_opts o = {.time = T1};
	struct kiln_buf b;
	char path[512];
	char *hex;
	struct pack_package p;

	/* one changed digit in the signature header's SHA256 */
	copy_vec("kt-1.0-1.noarch.rpm", path, sizeof(path));
	open_pkg(path, &p);
	slurp(path, &b);
	hex = memmem(b.ptr, b.len, pack_header_get_string(&p.sig, PACK_SIGTAG_SHA256), 64);
	assert_non_null(hex);
	hex[10] = hex[10] == '0' ? '1' : '0';
	assert_ok(util_write_atomic(path, b.ptr, b.len, 0644, &err), &err);
	assert_int_equal(sign_package(key, path, &o, 0, NULL, &err), KILN_EDIGEST);
	assert_non_null(strstr(err.msg, path));
	pack_package_release(&p);
	kiln_buf_release(&b);
	/* not a package, and no file */
	kiln_err_clear(&err);
	assert_int_not_equal(sign_package(key, "tests/data/sign/data.txt", &o, 0, NULL, &err),
	                     KILN_OK);
	kiln_err_clear(&err);
	assert_int_not_equal(sign_package(key, "/nonexistent.rpm", &o, 0, NULL, &err), KILN_OK);
	sign_key_free(key);
}

KILN_TEST(package_batch_reports_each_package)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key("rsa.sec.asc");
	struct sign_keyring *kr = vec_keyring("rsa.pub.asc", NULL);
	struct sign_opts o = {.time = T1};
	struct sign_batch_result res[7];
	char paths[7][512];
	const char *ptrs[7];
	size_t i;

	for (i = 0; i < 6; i++) {
		copy_vec("kt-1.0-1.noarch.rpm", paths[i], sizeof(paths[i]));
		ptrs[i] = paths[i];
	}
	ptrs[6] = "/nonexistent/x.rpm";
	assert_ok(sign_packages(key, ptrs, 7, &o, 0, 3, res, &err), &err);
	for (i = 0; i < 6; i++) {
		assert_int_equal(res[i].rc, KILN_OK);
		assert_true(res[i].changed);
		assert_tag_verifies(ptrs[i], PACK_SIGTAG_RSA, kr);
	}
	assert_int_not_equal(res[6].rc, KILN_OK);
	assert_non_null(strstr(res[6].err.msg, "/nonexistent/x.rpm"));
	/* delete them all in one batch */
	assert_ok(sign_packages(NULL, ptrs, 6, &o, 0, 2, res, &err), &err);
	for (i = 0; i < 6; i++)
		assert_true(res[i].rc == KILN_OK && res[i].changed);
	assert_int_equal(sign_packages(key, ptrs, 1, &o, 0, 0, res, &err), KILN_EINVAL);
	sign_keyring_free(kr);
	sign_key_free(key);
}
