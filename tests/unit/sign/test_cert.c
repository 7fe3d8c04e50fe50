#include "util/util.h"

#include "tests/unit/sign/sign_test.h"

struct collect {
	char fpr[8][65];
	size_t n;
};

static kiln_rc collect_one(void *ctx, struct sign_key *key, struct kiln_err *err)
{
	struct collect *c = ctx;
	struct sign_key_info info;

	(void)err;
	sign_key_info_get(key, &info);
	if (c->n < 8)
		memcpy(c->fpr[c->n++], info.fingerprint, 65);
	sign_key_free(key);
	return KILN_OK;
}

static void decode_all(const char *name, struct kiln_buf *bin)
{
	struct kiln_err err = KILN_ERR_INIT;
	enum sign_armor_type type;
	struct kiln_buf text;
	size_t used;

	vec_load(name, &text);
	kiln_buf_init(bin, KILN_LIMIT_PGP_FILE);
	assert_ok(sign_armor_decode(text.ptr, text.len, &type, &used, bin, &err), &err);
	kiln_buf_release(&text);
}

KILN_TEST(cert_several_in_armor_and_binary)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf a, b, all = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct collect c = {0};
	char want[2][41];

	vec_load("rsa.pub.asc", &a);
	vec_load("ed.pub.asc", &b);
	kiln_buf_add(&all, a.ptr, a.len);
	kiln_buf_addstr(&all, "\nsome text between blocks\n");
	kiln_buf_add(&all, b.ptr, b.len);
	assert_ok(sign_keys_from_mem(all.ptr, all.len, collect_one, &c, &err), &err);
	assert_int_equal(c.n, 2);
	vec_fingerprints("rsa", want, 1);
	assert_string_equal(c.fpr[0], want[0]);
	vec_fingerprints("ed", want, 1);
	assert_string_equal(c.fpr[1], want[0]);
	/* the same two certificates as binary packets back to back */
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	decode_all("rsa.pub.asc", &a);
	decode_all("ed.pub.asc", &b);
	kiln_buf_reset(&all);
	kiln_buf_add(&all, a.ptr, a.len);
	kiln_buf_add(&all, b.ptr, b.len);
	c.n = 0;
	assert_ok(sign_keys_from_mem(all.ptr, all.len, collect_one, &c, &err), &err);
	assert_int_equal(c.n, 2);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&all);
}

/* The public form of gpg's secret export is exactly gpg's public export. */
KILN_TEST(cert_secret_converts_to_gpgs_public_export)
{
	static const char *names[] = {"rsa", "ed", "subkey"};
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf pub, out = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	char file[64];
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++) {
		struct sign_key *key;

		snprintf(file, sizeof(file), "%s.sec.asc", names[i]);
		key = vec_key(file);
		snprintf(file, sizeof(file), "%s.pub.asc", names[i]);
		decode_all(file, &pub);
		kiln_buf_reset(&out);
		assert_ok(sign_key_export(key, 0, &out, &err), &err);
		assert_int_equal(out.len, pub.len);
		assert_memory_equal(out.ptr, pub.ptr, pub.len);
		kiln_buf_release(&pub);
		sign_key_free(key);
	}
	kiln_buf_release(&out);
}

static kiln_rc parse_bin(const struct kiln_buf *bin, struct kiln_err *err)
{
	struct sign_key *key = NULL;
	kiln_rc rc = sign_key_from_mem(bin->ptr, bin->len, &key, err);

	sign_key_free(key);
	return rc;
}

KILN_TEST(cert_tampering_breaks_the_self_signature)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf bin;
	char *uid;

	decode_all("ed.pub.asc", &bin);
	assert_ok(parse_bin(&bin, &err), &err);
	uid = memmem(bin.ptr, bin.len, "kiln test ed", 12);
	assert_non_null(uid);
	uid[0] = 'K';
	assert_int_equal(parse_bin(&bin, &err), KILN_ESIG);
	assert_non_null(strstr(err.msg, "no valid self-signature"));
	kiln_buf_release(&bin);
}

KILN_TEST(cert_without_binding_is_refused)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	struct kiln_buf bin, part = KILN_BUF_INIT(KILN_MIB);

	decode_all("rsa.pub.asc", &bin);
	sign_pkt_reader_init(&r, bin.ptr, bin.len);
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	/* a bare public key (rpm 4.18 takes it; kiln, like sq, does not) */
	kiln_buf_add(&part, pkt.raw, pkt.raw_len);
	assert_int_equal(parse_bin(&part, &err), KILN_ESIG);
	/* key and user ID without the self-signature */
	assert_ok(sign_pkt_next(&r, &pkt, &err), &err);
	assert_int_equal(pkt.tag, SIGN_TAG_USER_ID);
	kiln_buf_add(&part, pkt.raw, pkt.raw_len);
	kiln_err_clear(&err);
	assert_int_equal(parse_bin(&part, &err), KILN_ESIG);
	kiln_buf_release(&part);
	kiln_buf_release(&bin);
}

KILN_TEST(cert_input_must_start_with_a_key)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;
	struct kiln_buf sig;

	vec_load("data.rsa.gpg.sig", &sig);
	assert_int_equal(sign_key_from_mem(sig.ptr, sig.len, &key, &err), KILN_EFORMAT);
	assert_null(key);
	kiln_buf_release(&sig);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_from_mem("", 0, &key, &err), KILN_EFORMAT);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_from_mem("-----BEGIN PGP SIGNATURE-----\n\naGVsbG8=\n"
	                                   "-----END PGP SIGNATURE-----\n",
	                                   64, &key, &err),
	                 KILN_EFORMAT);
}

static kiln_rc stop_at_first(void *ctx, struct sign_key *key, struct kiln_err *err)
{
	(void)ctx;
	sign_key_free(key);
	return kiln_err_set(err, KILN_ECANCEL, "stop");
}

KILN_TEST(cert_walk_stops_when_asked)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf a;

	vec_load("rsa.pub.asc", &a);
	assert_int_equal(sign_keys_from_mem(a.ptr, a.len, stop_at_first, NULL, &err), KILN_ECANCEL);
	kiln_buf_release(&a);
}

/* A secret subkey of an algorithm kiln cannot even walk is dropped with its binding
 * signature, so nothing is left dangling in the public certificate. */
KILN_TEST(cert_unknown_secret_subkey_dropped_with_its_binding)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	struct kiln_buf bin;
	unsigned tags[8];
	size_t n = 0;

	decode_all("ed.sec.asc", &bin);
	sign_pkt_reader_init(&r, bin.ptr, bin.len);
	while (sign_pkt_next(&r, &pkt, &err) == KILN_OK) {
		if (pkt.tag == SIGN_TAG_SECRET_SUBKEY)
			((uint8_t *)pkt.body)[5] = 100; /* a private/experimental algorithm */
	}
	assert_ok(sign_key_from_mem(bin.ptr, bin.len, &key, &err), &err);
	assert_int_equal(key->nsubkeys, 0);
	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	while (n < 8 && sign_pkt_next(&r, &pkt, &err) == KILN_OK)
		tags[n++] = pkt.tag;
	assert_int_equal(n, 3);
	assert_int_equal(tags[0], SIGN_TAG_PUBLIC_KEY);
	assert_int_equal(tags[1], SIGN_TAG_USER_ID);
	assert_int_equal(tags[2], SIGN_TAG_SIGNATURE);
	assert_non_null(sign_key_signer(key));
	sign_key_free(key);
	kiln_buf_release(&bin);
}
