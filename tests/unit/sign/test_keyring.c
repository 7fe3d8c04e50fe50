#include "util/util.h"

#include <sys/stat.h>

#include "tests/unit/sign/sign_test.h"

static void import(struct sign_keyring *kr, const char *name, size_t want)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b;
	size_t n = 0;

	vec_load(name, &b);
	assert_ok(sign_keyring_import(kr, b.ptr, b.len, &n, &err), &err);
	assert_int_equal(n, want);
	kiln_buf_release(&b);
}

static const char *fpr_of(const struct sign_keyring *kr, size_t i, struct sign_key_info *info)
{
	sign_key_info_get(sign_keyring_get(kr, i), info);
	return info->fingerprint;
}

KILN_TEST(keyring_directory_round_trip)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	struct sign_key_info info;
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	char dir[512], path[600], want[1][41];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/ring", kiln_test_tmpdir());
	/* a missing directory is an empty keyring */
	assert_ok(sign_keyring_open(dir, &kr, &err), &err);
	assert_int_equal(sign_keyring_count(kr), 0);
	import(kr, "rsa.pub.asc", 1);
	import(kr, "ed.sec.asc", 1);  /* a secret key: only its certificate is kept */
	import(kr, "rsa.pub.asc", 1); /* again: replaces, no duplicate */
	assert_int_equal(sign_keyring_count(kr), 2);
	sign_keyring_free(kr);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	vec_fingerprints("ed", want, 1);
	snprintf(path, sizeof(path), "%s/%s.asc", dir, want[0]);
	assert_ok(util_read_file(path, KILN_LIMIT_PGP_FILE, &text, &err), &err);
	assert_non_null(strstr(text.ptr, "-----BEGIN PGP PUBLIC KEY BLOCK-----"));
	assert_null(strstr(text.ptr, "PRIVATE"));
	/* reopen: sorted by fingerprint, no secrets */
	assert_ok(sign_keyring_open(dir, &kr, &err), &err);
	assert_int_equal(sign_keyring_count(kr), 2);
	assert_true(strcmp(fpr_of(kr, 0, &info), fpr_of(kr, 1, &info)) < 0 ||
	            strcmp(fpr_of(kr, 0, &info), want[0]) == 0);
	fpr_of(kr, 0, &info);
	assert_false(info.has_secret);
	fpr_of(kr, 1, &info);
	assert_false(info.has_secret);
	sign_keyring_free(kr);
	kiln_buf_release(&text);
}

KILN_TEST(keyring_delete_by_any_id)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	char dir[512], id[80], rsa[1][41], ed[1][41], sub[1][41];

	snprintf(dir, sizeof(dir), "%s/ring", kiln_test_tmpdir());
	assert_ok(sign_keyring_open(dir, &kr, &err), &err);
	import(kr, "rsa.pub.asc", 1);
	import(kr, "ed.pub.asc", 1);
	import(kr, "subkey.pub.asc", 1);
	vec_fingerprints("rsa", rsa, 1);
	vec_fingerprints("ed", ed, 1);
	vec_fingerprints("subkey", sub, 1);
	assert_int_equal(sign_keyring_delete(kr, "nothex!", &err), KILN_EINVAL);
	assert_int_equal(sign_keyring_delete(kr, "abcd", &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(sign_keyring_delete(kr, "00000000", &err), KILN_ENOTFOUND);
	assert_string_equal(err.msg, "key not found: 00000000");
	/* gpg-pubkey-SHORTID-CREATED, with a wrong time: no match; with the right one: gone */
	snprintf(id, sizeof(id), "gpg-pubkey-%s-63b0cd01", rsa[0] + 32);
	assert_int_equal(sign_keyring_delete(kr, id, NULL), KILN_ENOTFOUND);
	snprintf(id, sizeof(id), "%s-63b0cd00", rsa[0] + 32);
	assert_ok(sign_keyring_delete(kr, id, &err), &err);
	/* long key ID in upper case with 0x */
	snprintf(id, sizeof(id), "0x%s", ed[0] + 24);
	for (char *c = id + 2; *c; c++)
		*c = (char)(*c >= 'a' && *c <= 'f' ? *c - 'a' + 'A' : *c);
	assert_ok(sign_keyring_delete(kr, id, &err), &err);
	assert_ok(sign_keyring_delete(kr, sub[0], &err), &err);
	assert_int_equal(sign_keyring_count(kr), 0);
	sign_keyring_free(kr);
	/* and the files are gone */
	assert_ok(sign_keyring_open(dir, &kr, &err), &err);
	assert_int_equal(sign_keyring_count(kr), 0);
	sign_keyring_free(kr);
}

KILN_TEST(keyring_refuses_bad_files)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	char dir[512], bad[600], other[600];
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/ring", kiln_test_tmpdir());
	assert_ok(util_mkdir_p(dir, 0700, &err), &err);
	snprintf(bad, sizeof(bad), "%s/bad.asc", dir);
	assert_ok(util_write_atomic(bad, "not a key\n", 10, 0644, &err), &err);
	assert_int_equal(sign_keyring_open(dir, &kr, &err), KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "bad.asc"));
	assert_null(kr);
	/* files without the .asc suffix are not the keyring's */
	snprintf(other, sizeof(other), "%s/bad.txt", dir);
	assert_int_equal(rename(bad, other), 0);
	kiln_err_clear(&err);
	assert_ok(sign_keyring_open(dir, &kr, &err), &err);
	assert_int_equal(sign_keyring_count(kr), 0);
	assert_int_equal(sign_keyring_import(kr, "not a key\n", 10, &n, &err), KILN_EFORMAT);
	assert_int_equal(n, 0);
	sign_keyring_free(kr);
}

KILN_TEST(keyring_in_memory)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_keyring *kr = NULL;
	char rsa[1][41];

	assert_ok(sign_keyring_new(&kr, &err), &err);
	import(kr, "rsa.pub.asc", 1);
	vec_fingerprints("rsa", rsa, 1);
	assert_ok(sign_keyring_delete(kr, rsa[0] + 24, &err), &err);
	assert_int_equal(sign_keyring_count(kr), 0);
	assert_null(sign_keyring_get(kr, 0));
	sign_keyring_free(kr);
	sign_keyring_free(NULL);
}

KILN_TEST(keyring_default_dir)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char *xdg = getenv("XDG_CONFIG_HOME") ? kiln_strdup(getenv("XDG_CONFIG_HOME")) : NULL;
	char *home = getenv("HOME") ? kiln_strdup(getenv("HOME")) : NULL;

	setenv("XDG_CONFIG_HOME", "/cfg", 1);
	assert_ok(sign_keyring_default_dir(&b, &err), &err);
	assert_string_equal(b.ptr, "/cfg/kiln/keyring");
	setenv("XDG_CONFIG_HOME", "relative", 1);
	setenv("HOME", "/home/u", 1);
	kiln_buf_reset(&b);
	assert_ok(sign_keyring_default_dir(&b, &err), &err);
	assert_string_equal(b.ptr, "/home/u/.config/kiln/keyring");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	assert_int_equal(sign_keyring_default_dir(&b, &err), KILN_ENOTFOUND);
	if (xdg)
		setenv("XDG_CONFIG_HOME", xdg, 1);
	if (home)
		setenv("HOME", home, 1);
	free(xdg);
	free(home);
	kiln_buf_release(&b);
}
