#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/sign/sign_test.h"

static struct sign_key *generate(enum sign_keygen_algo algo)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;

	assert_ok(sign_key_generate(algo, "Kiln Test <test@kiln.example>", 1700000000, &key, &err),
	          &err);
	return key;
}

/* The generated certificate is shaped like gpg's: key, user ID, positive certification
 * with gpg's hashed subpackets in gpg's order, nothing critical, issuer key ID unhashed. */
KILN_TEST(keygen_makes_a_gpg_shaped_certificate)
{
	static const unsigned want_hashed[] = {33, 2, 27, 11, 21, 22, 30, 23};
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = generate(SIGN_KEYGEN_ED25519);
	struct sign_pkt_reader r;
	struct sign_pkt pkt[3];
	struct sign_subpkt sp;
	struct sign_sig sig;
	struct sign_cur c;
	struct sign_key_info info;
	size_t i;

	sign_pkt_reader_init(&r, key->cert.ptr, key->cert.len);
	for (i = 0; i < 3; i++)
		assert_ok(sign_pkt_next(&r, &pkt[i], &err), &err);
	assert_int_equal(sign_pkt_next(&r, &pkt[0], &err), KILN_ENOTFOUND);
	assert_int_equal(pkt[0].tag, SIGN_TAG_PUBLIC_KEY);
	assert_int_equal(pkt[1].tag, SIGN_TAG_USER_ID);
	assert_int_equal(pkt[2].tag, SIGN_TAG_SIGNATURE);
	assert_ok(sign_sig_parse(pkt[2].body, pkt[2].len, &sig, &err), &err);
	assert_int_equal(sig.type, SIGN_SIG_CERT_POSITIVE);
	assert_int_equal(sig.flags, SIGN_KEYFLAG_CERTIFY | SIGN_KEYFLAG_SIGN);
	assert_int_equal(sig.created, 1700000000);
	sign_cur_init(&c, sig.hashed, sig.hashed_len);
	for (i = 0; i < KILN_ARRAY_SIZE(want_hashed); i++) {
		assert_ok(sign_subpkt_next(&c, &sp, &err), &err);
		assert_int_equal(sp.type, want_hashed[i]);
		assert_false(sp.critical);
	}
	assert_int_equal(sign_subpkt_next(&c, &sp, &err), KILN_ENOTFOUND);
	sign_cur_init(&c, sig.unhashed, sig.unhashed_len);
	assert_ok(sign_subpkt_next(&c, &sp, &err), &err);
	assert_int_equal(sp.type, SIGN_SUB_ISSUER);
	sign_key_info_get(key, &info);
	assert_string_equal(info.uid, "Kiln Test <test@kiln.example>");
	assert_true(info.has_secret);
	assert_int_equal(info.created, 1700000000);
	sign_key_free(key);
}

static void secret_round_trip(enum sign_keygen_algo algo)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf sec = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct kiln_buf pub = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key *key = generate(algo);
	struct sign_key *back = NULL;
	struct sign_key *pubkey = NULL;
	struct sign_key_info a, b;

	assert_ok(sign_key_export(key, SIGN_EXPORT_SECRET | SIGN_EXPORT_ARMOR, &sec, &err), &err);
	assert_non_null(strstr(sec.ptr, "-----BEGIN PGP PRIVATE KEY BLOCK-----"));
	assert_ok(sign_key_from_mem(sec.ptr, sec.len, &back, &err), &err);
	assert_ok(sign_key_export(key, SIGN_EXPORT_ARMOR, &pub, &err), &err);
	assert_ok(sign_key_from_mem(pub.ptr, pub.len, &pubkey, &err), &err);
	sign_key_info_get(key, &a);
	sign_key_info_get(back, &b);
	assert_string_equal(a.fingerprint, b.fingerprint);
	assert_true(b.has_secret);
	sign_key_info_get(pubkey, &b);
	assert_string_equal(a.fingerprint, b.fingerprint);
	assert_false(b.has_secret);
	assert_int_equal(sign_key_export(pubkey, SIGN_EXPORT_SECRET, &sec, &err), KILN_EINVAL);
	sign_key_free(pubkey);
	sign_key_free(back);
	sign_key_free(key);
	sign_buf_wipe(&sec);
	kiln_buf_release(&pub);
}

KILN_TEST(keygen_secret_export_round_trips)
{
	secret_round_trip(SIGN_KEYGEN_ED25519);
	secret_round_trip(SIGN_KEYGEN_RSA2048);
}

KILN_TEST(keygen_refuses_bad_input)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;
	enum sign_keygen_algo algo;

	assert_int_equal(sign_key_generate(SIGN_KEYGEN_ED25519, "", 0, &key, &err), KILN_EINVAL);
	assert_int_equal(sign_key_generate(SIGN_KEYGEN_ED25519, "a\nb", 0, &key, &err),
	                 KILN_EINVAL);
	assert_int_equal(sign_key_generate(SIGN_KEYGEN_ED25519, "x", -1, &key, &err), KILN_EINVAL);
	assert_int_equal(sign_key_generate(SIGN_KEYGEN_ED25519, "x", (int64_t)1 << 32, &key, &err),
	                 KILN_EINVAL);
	assert_null(key);
	assert_int_equal(sign_keygen_algo_parse("RSA3072", &algo, &err), KILN_OK);
	assert_int_equal(algo, SIGN_KEYGEN_RSA3072);
	assert_int_equal(sign_keygen_algo_parse("dsa", &algo, &err), KILN_EINVAL);
}

static void put_file(const char *path, const char *vector, mode_t mode)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b;

	vec_load(vector, &b);
	assert_ok(util_write_atomic(path, b.ptr, b.len, mode, &err), &err);
	kiln_buf_release(&b);
}

KILN_TEST(secret_files_are_guarded)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL;
	struct stat st;
	char path[512], link[512];
	const char *dir = kiln_test_tmpdir();

	snprintf(path, sizeof(path), "%s/ed.key", dir);
	put_file(path, "ed.sec.asc", 0600);
	assert_ok(sign_key_load_secret(path, &key, &err), &err);
	sign_key_free(key);
	key = NULL;
	/* readable by the group: refused, naming the mode */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(sign_key_load_secret(path, &key, &err), KILN_EPRIV);
	assert_non_null(strstr(err.msg, "0640"));
	assert_null(key);
	/* a symlink to a good file: refused */
	assert_int_equal(chmod(path, 0600), 0);
	snprintf(link, sizeof(link), "%s/link.key", dir);
	assert_int_equal(symlink(path, link), 0);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_load_secret(link, &key, &err), KILN_EPRIV);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_load_secret(dir, &key, &err), KILN_EINVAL); /* not a file */
	kiln_err_clear(&err);
	snprintf(link, sizeof(link), "%s/missing.key", dir);
	assert_int_equal(sign_key_load_secret(link, &key, &err), KILN_ENOTFOUND);
	/* a passphrase-protected key, and a public key, have no usable secret */
	snprintf(path, sizeof(path), "%s/protected.key", dir);
	put_file(path, "protected.sec.asc", 0600);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_load_secret(path, &key, &err), KILN_ESIG);
	assert_non_null(strstr(err.msg, "passphrase"));
	snprintf(path, sizeof(path), "%s/pub.key", dir);
	put_file(path, "ed.pub.asc", 0600);
	kiln_err_clear(&err);
	assert_int_equal(sign_key_load_secret(path, &key, &err), KILN_ESIG);
	assert_null(key);
	/* save: mode 0600, never over an existing file */
	key = vec_key("ed.sec.asc");
	snprintf(path, sizeof(path), "%s/saved.key", dir);
	assert_ok(sign_key_save_secret(key, path, &err), &err);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(sign_key_save_secret(key, path, &err), KILN_EEXIST);
	sign_key_free(key);
	key = NULL;
	assert_ok(sign_key_load_secret(path, &key, &err), &err);
	sign_key_free(key);
}

/* [projects] A key made to expire, then extended: the same key material and fingerprint, the
 * newer self-signature's expiry, and a signature made before verifies with the extended
 * certificate at a time past the old expiry. */
KILN_TEST(keygen_expiring_key_is_extended_with_a_new_self_signature)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_key *key = NULL, *longer = NULL, *pub = NULL;
	struct sign_key_info a, b;
	struct sign_keyring *kr = NULL;
	struct sign_opts o = {.time = 1700000100};
	struct kiln_buf sig = KILN_BUF_INIT(KILN_KIB), cert = KILN_BUF_INIT(KILN_MIB);
	struct sign_result res;
	struct sign_pkt_reader r;
	struct sign_pkt pkt;
	size_t nsig = 0;

	assert_ok(sign_key_generate_expiring(SIGN_KEYGEN_ED25519, "P <p@kiln.example>", 1700000000,
	                                     1700086400, &key, &err),
	          &err);
	sign_key_info_get(key, &a);
	assert_int_equal(a.expires, 1700086400);
	assert_ok(sign_data(key, "data", 4, &o, &sig, &err), &err);
	/* an expiry not after the creation is refused */
	assert_int_equal(sign_key_extend(key, 1700000200, 1699999999, &longer, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_ok(sign_key_extend(key, 1700000200, 1702592000, &longer, &err), &err);
	sign_key_info_get(longer, &b);
	assert_string_equal(a.fingerprint, b.fingerprint);
	assert_int_equal(b.created, 1700000000);
	assert_int_equal(b.expires, 1702592000);
	assert_true(b.has_secret);
	/* the secret moved: the old key has none left to extend with */
	assert_int_equal(sign_key_extend(key, 1700000300, 1702592000, &pub, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	/* two self-signatures now; the public certificate alone still parses with the new one */
	sign_pkt_reader_init(&r, longer->cert.ptr, longer->cert.len);
	while (!sign_pkt_next(&r, &pkt, &err))
		nsig += pkt.tag == SIGN_TAG_SIGNATURE;
	kiln_err_clear(&err);
	assert_int_equal(nsig, 2);
	assert_ok(sign_key_export(longer, 0, &cert, &err), &err);
	assert_ok(sign_key_from_mem(cert.ptr, cert.len, &pub, &err), &err);
	sign_key_info_get(pub, &b);
	assert_int_equal(b.expires, 1702592000);
	/* the signature made before verifies with the extended certificate */
	assert_ok(sign_keyring_new(&kr, &err), &err);
	assert_ok(sign_keyring_add_take(kr, pub, &err), &err);
	assert_ok(sign_verify(kr, sig.ptr, sig.len, "data", 4, &res, &err), &err);
	sign_keyring_free(kr);
	sign_key_free(key);
	sign_key_free(longer);
	kiln_buf_release(&sig);
	kiln_buf_release(&cert);
}
