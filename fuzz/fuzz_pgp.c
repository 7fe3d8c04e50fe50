/*
 * fuzz_pgp.c - sign/'s parsers of outside input: ASCII armor, OpenPGP packets, certificates
 * and secret keys (kiln keys --import, kiln sign --key), and signatures (kiln verify).
 *
 * Every key that parses must export and parse again to the same fingerprint; every input is
 * also tried as a signature over a fixed message against a keyring of the test keys (run
 * from the repository root, as make fuzz and make check do).
 */
#include "util/util.h"

#include "sign/sign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kiln_rc round_trip(void *ctx, struct sign_key *key, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE * 2);
	struct sign_key *back = NULL;
	struct sign_key_info a, b;
	unsigned flags = SIGN_EXPORT_ARMOR;

	(void)ctx;
	sign_key_info_get(key, &a);
	if (a.has_secret)
		flags |= SIGN_EXPORT_SECRET;
	if (sign_key_export(key, flags, &out, err) ||
	    sign_key_from_mem(out.ptr, out.len, &back, err))
		KILN_BUG("a parsed key does not survive export: %s", err->msg);
	sign_key_info_get(back, &b);
	if (strcmp(a.fingerprint, b.fingerprint) || a.has_secret != b.has_secret)
		KILN_BUG("export changed the key");
	sign_key_free(back);
	sign_key_free(key);
	sign_wipe(out.ptr, out.len);
	kiln_buf_release(&out);
	return KILN_OK;
}

static const struct sign_keyring *keyring(void)
{
	static struct sign_keyring *kr;
	static const char *files[] = {"tests/data/sign/rsa.pub.asc", "tests/data/sign/ed.pub.asc"};
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;
	size_t n;

	if (kr)
		return kr;
	if (sign_keyring_new(&kr, &err))
		KILN_BUG("%s", err.msg);
	for (i = 0; i < KILN_ARRAY_SIZE(files); i++) {
		struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);

		if (!util_read_file(files[i], KILN_LIMIT_PGP_FILE, &b, &err) &&
		    sign_keyring_import(kr, b.ptr, b.len, &n, &err))
			KILN_BUG("test key %s: %s", files[i], err.msg);
		kiln_err_clear(&err);
		kiln_buf_release(&b);
	}
	return kr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sign_result res;
	kiln_rc rc;

	rc = sign_keys_from_mem(data, size, round_trip, NULL, &err);
	kiln_err_clear(&err);
	rc = sign_verify(keyring(), data, size, "kiln signs this\n", 16, &res, &err);
	if ((rc == KILN_OK) != (res.status == SIGN_STATUS_OK))
		KILN_BUG("verify returned OK with status %d", (int)res.status);
	return 0;
}
