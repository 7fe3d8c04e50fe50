#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

#define T1 1704067200

static void sign_vec(const char *keyfile, int64_t t, enum sign_hash_algo h, struct kiln_buf *out)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key(keyfile);
	struct sign_opts o = {.time = t, .hash = h};
	struct kiln_buf data;

	vec_load("data.txt", &data);
	kiln_buf_init(out, KILN_LIMIT_PGP_PACKET);
	assert_ok(sign_data(key, data.ptr, data.len, &o, out, &err), &err);
	kiln_buf_release(&data);
	sign_key_free(key);
}

/* Known answers: these signatures were checked with gpg and sq when they were made (see
 * tests/data/sign/make-vectors.sh); kiln must keep producing exactly these octets. */
KILN_TEST(sign_known_answers)
{
	static const char *keys[] = {"rsa.sec.asc", "ed.sec.asc"};
	static const char *want[] = {"data.rsa.kiln.sig", "data.ed.kiln.sig"};
	struct kiln_buf got, exp;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(keys); i++) {
		sign_vec(keys[i], T1, 0, &got);
		vec_load(want[i], &exp);
		assert_int_equal(got.len, exp.len);
		assert_memory_equal(got.ptr, exp.ptr, exp.len);
		kiln_buf_release(&exp);
		kiln_buf_release(&got);
	}
}

KILN_TEST(sign_is_deterministic_and_time_dependent)
{
	struct kiln_buf a, b, c;

	sign_vec("ed.sec.asc", T1 + 5, SIGN_HASH_SHA512, &a);
	sign_vec("ed.sec.asc", T1 + 5, SIGN_HASH_SHA512, &b);
	sign_vec("ed.sec.asc", T1 + 6, SIGN_HASH_SHA512, &c);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_false(a.len == c.len && !memcmp(a.ptr, c.ptr, a.len));
	/* old-format signature packet, as gpg writes */
	assert_int_equal((uint8_t)a.ptr[0], 0x88);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&c);
}

KILN_TEST(sign_refuses_what_verifiers_would_reject)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct sign_key *key = vec_key("ed.sec.asc");
	struct sign_key *pub = vec_key("ed.pub.asc");
	struct sign_key *rev = vec_key("revoked.sec.asc");
	struct sign_key *exp = vec_key("expired.sec.asc");
	struct sign_opts o = {.time = 1672531199}; /* a second before the key */

	assert_int_equal(sign_data(key, "x", 1, &o, &out, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "before the key's creation time"));
	o.time = -1;
	assert_int_equal(sign_data(key, "x", 1, &o, &out, &err), KILN_EINVAL);
	o.time = T1;
	o.hash = SIGN_HASH_SHA1;
	assert_int_equal(sign_data(key, "x", 1, &o, &out, &err), KILN_EINVAL);
	o.hash = 0;
	assert_int_equal(sign_data(pub, "x", 1, &o, &out, &err), KILN_ESIG);
	/* a revoked key has no signer; an expired one cannot sign after it expired */
	assert_int_equal(sign_data(rev, "x", 1, &o, &out, &err), KILN_ESIG);
	assert_int_equal(sign_data(exp, "x", 1, &o, &out, &err), KILN_ESIG);
	o.time = 1672531200 + 86400;
	assert_ok(sign_data(exp, "x", 1, &o, &out, &err), &err);
	sign_key_free(key);
	sign_key_free(pub);
	sign_key_free(rev);
	sign_key_free(exp);
	kiln_buf_release(&out);
}

KILN_TEST(sign_header_checks_the_header)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PGP_PACKET);
	struct sign_key *key = vec_key("ed.sec.asc");
	struct sign_opts o = {.time = T1};
	/* an empty header: magic, no entries, no data */
	uint8_t hdr[32] = {0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

	assert_ok(sign_header(key, hdr, 16, &o, &out, &err), &err);
	assert_int_equal(sign_header(key, hdr, 17, &o, &out, &err), KILN_EFORMAT);
	hdr[15] = 16; /* 16 data bytes */
	assert_ok(sign_header(key, hdr, 32, &o, &out, &err), &err);
	assert_int_equal(sign_header(key, hdr, 31, &o, &out, &err), KILN_EFORMAT);
	hdr[11] = 1; /* one entry that is not there */
	assert_int_equal(sign_header(key, hdr, 32, &o, &out, &err), KILN_EFORMAT);
	hdr[0] = 0xed;
	assert_int_equal(sign_header(key, hdr, 16, &o, &out, &err), KILN_EFORMAT);
	assert_int_equal(sign_header(key, hdr, 3, &o, &out, &err), KILN_EFORMAT);
	sign_key_free(key);
	kiln_buf_release(&out);
}

KILN_TEST(sign_time_rule)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = vec_key("ed.sec.asc");
	int64_t t = 0;
	int64_t before = util_clock_wall();

	unsetenv("SOURCE_DATE_EPOCH");
	assert_ok(sign_time_pick(key, 1700000000, &t, &err), &err);
	assert_int_equal(t, 1700000000);
	assert_ok(sign_time_pick(key, -1, &t, &err), &err);
	assert_true(t >= before && t <= util_clock_wall());
	setenv("SOURCE_DATE_EPOCH", "1704067200", 1);
	assert_ok(sign_time_pick(key, -1, &t, &err), &err);
	assert_int_equal(t, 1704067200);
	/* older than the key: the key's creation time, still fixed */
	setenv("SOURCE_DATE_EPOCH", "1000", 1);
	assert_ok(sign_time_pick(key, -1, &t, &err), &err);
	assert_int_equal(t, 1672531200);
	setenv("SOURCE_DATE_EPOCH", "soon", 1);
	assert_int_equal(sign_time_pick(key, -1, &t, &err), KILN_ESYNTAX);
	unsetenv("SOURCE_DATE_EPOCH");
	sign_key_free(key);
}
