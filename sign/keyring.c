/*
 * keyring.c - a set of certificates, kept in memory sorted by fingerprint and optionally
 * backed by a directory of armored files named <fingerprint>.asc.
 *
 * One file per certificate keeps import and delete atomic per key (write a temp file and
 * rename; unlink) without any index to go stale, and the files are what `gpg --import`
 * and `rpmkeys --import` read.
 */
#include "util/util.h"

#include <dirent.h>
#include <unistd.h>

#include "sign/sign_int.h"

struct sign_keyring {
	char *dir;              /* owned; NULL for an in-memory keyring */
	struct sign_key **keys; /* owned array of owned keys, sorted by fingerprint */
	size_t n;
	size_t cap;
};

kiln_rc sign_keyring_default_dir(struct kiln_buf *out, struct kiln_err *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	/* The XDG base directory spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/')
		kiln_buf_addf(out, "%s/kiln/keyring", xdg);
	else if (home && home[0])
		kiln_buf_addf(out, "%s/.config/kiln/keyring", home);
	else
		return kiln_err_set(err, KILN_ENOTFOUND,
		                    "neither XDG_CONFIG_HOME nor HOME is set: give --keyring DIR");
	return kiln_buf_finish(out, err);
}

kiln_rc sign_keyring_new(struct sign_keyring **out, struct kiln_err *err)
{
	*out = kiln_calloc(1, sizeof(**out));
	if (!*out)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

void sign_keyring_free(struct sign_keyring *kr)
{
	size_t i;

	if (!kr)
		return;
	for (i = 0; i < kr->n; i++)
		sign_key_free(kr->keys[i]);
	free(kr->keys);
	free(kr->dir);
	free(kr);
}

size_t sign_keyring_count(const struct sign_keyring *kr)
{
	return kr ? kr->n : 0;
}

const struct sign_key *sign_keyring_get(const struct sign_keyring *kr, size_t i)
{
	return i < kr->n ? kr->keys[i] : NULL;
}

static int fpr_cmp(const struct sign_key *a, const struct sign_key *b)
{
	size_t n =
	    a->primary.fpr_len < b->primary.fpr_len ? a->primary.fpr_len : b->primary.fpr_len;
	int c = memcmp(a->primary.fpr, b->primary.fpr, n);

	if (c)
		return c;
	return a->primary.fpr_len < b->primary.fpr_len ? -1
	                                               : a->primary.fpr_len > b->primary.fpr_len;
}

/* Insert key in order, replacing one with the same fingerprint. Consumes key. */
static kiln_rc insert_take(struct sign_keyring *kr, struct sign_key *key, struct kiln_err *err)
{
	struct sign_key **keys;
	size_t i;
	int c = 1;

	for (i = 0; i < kr->n; i++) {
		c = fpr_cmp(key, kr->keys[i]);
		if (c <= 0)
			break;
	}
	if (i < kr->n && c == 0) {
		sign_key_free(kr->keys[i]);
		kr->keys[i] = key;
		return KILN_OK;
	}
	if (kr->n >= KILN_LIMIT_PGP_KEYS) {
		sign_key_free(key);
		return kiln_err_set(err, KILN_ELIMIT, "more than %d keys in the keyring",
		                    KILN_LIMIT_PGP_KEYS);
	}
	if (kr->n == kr->cap) {
		keys = kiln_reallocarray(kr->keys, kr->cap ? 2 * kr->cap : 8, sizeof(*keys));
		if (!keys) {
			sign_key_free(key);
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
		kr->keys = keys;
		kr->cap = kr->cap ? 2 * kr->cap : 8;
	}
	memmove(kr->keys + i + 1, kr->keys + i, (kr->n - i) * sizeof(*kr->keys));
	kr->keys[i] = key;
	kr->n++;
	return KILN_OK;
}

static kiln_rc key_path(const struct sign_keyring *kr, const struct sign_key *key,
                        struct kiln_buf *path, struct kiln_err *err)
{
	struct sign_key_info info;

	sign_key_info_get(key, &info);
	kiln_buf_addf(path, "%s/%s.asc", kr->dir, info.fingerprint);
	return kiln_buf_finish(path, err);
}

static kiln_rc store(const struct sign_keyring *kr, const struct sign_key *key,
                     struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE * 2);
	kiln_rc rc;

	rc = util_mkdir_p(kr->dir, 0700, err);
	if (!rc)
		rc = key_path(kr, key, &path, err);
	if (!rc)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, &text, err);
	if (!rc)
		rc = util_write_atomic(path.ptr, text.ptr, text.len, 0644, err);
	kiln_buf_release(&text);
	kiln_buf_release(&path);
	return rc;
}

kiln_rc sign_keyring_add_take(struct sign_keyring *kr, struct sign_key *key, struct kiln_err *err)
{
	struct kiln_buf cert = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key *pub = NULL;
	kiln_rc rc;

	/* Re-read the public certificate alone, so no secret ever enters the keyring. */
	rc = sign_key_export(key, 0, &cert, err);
	if (!rc)
		rc = sign_key_from_mem(cert.ptr, cert.len, &pub, err);
	sign_key_free(key);
	kiln_buf_release(&cert);
	if (!rc && kr->dir)
		rc = store(kr, pub, err);
	if (rc) {
		sign_key_free(pub);
		return rc;
	}
	return insert_take(kr, pub, err);
}

struct import_ctx {
	struct sign_keyring *kr;
	size_t count;
};

static kiln_rc import_one(void *ctx, struct sign_key *key, struct kiln_err *err)
{
	struct import_ctx *ic = ctx;
	kiln_rc rc = sign_keyring_add_take(ic->kr, key, err);

	if (!rc)
		ic->count++;
	return rc;
}

kiln_rc sign_keyring_import(struct sign_keyring *kr, const void *data, size_t len, size_t *count,
                            struct kiln_err *err)
{
	struct import_ctx ic = {.kr = kr};
	kiln_rc rc;

	rc = sign_keys_from_mem(data, len, import_one, &ic, err);
	*count = ic.count;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name);
	size_t s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

static kiln_rc load_file(struct sign_keyring *kr, const char *path, struct kiln_err *err)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key *key = NULL;
	kiln_rc rc;

	rc = util_read_file(path, KILN_LIMIT_PGP_FILE, &text, err);
	if (!rc)
		rc = sign_key_from_mem(text.ptr, text.len, &key, err);
	if (rc)
		kiln_err_wrap(err, "keyring file '%s'", path);
	else
		rc = insert_take(kr, key, err);
	kiln_buf_release(&text);
	return rc;
}

static kiln_rc load_dir(struct sign_keyring *kr, DIR *d, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct dirent *de;
	kiln_rc rc = KILN_OK;

	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".asc"))
			continue;
		kiln_buf_reset(&path);
		kiln_buf_addf(&path, "%s/%s", kr->dir, de->d_name);
		rc = kiln_buf_finish(&path, err);
		if (!rc)
			rc = load_file(kr, path.ptr, err);
	}
	kiln_buf_release(&path);
	return rc;
}

kiln_rc sign_keyring_open(const char *dir, struct sign_keyring **out, struct kiln_err *err)
{
	struct sign_keyring *kr = NULL;
	DIR *d = NULL;
	kiln_rc rc;

	*out = NULL;
	rc = sign_keyring_new(&kr, err);
	if (rc)
		return rc;
	kr->dir = kiln_strdup(dir);
	if (!kr->dir) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	d = opendir(dir);
	if (!d && errno != ENOENT) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open keyring '%s'", dir);
		goto out;
	}
	if (d)
		rc = load_dir(kr, d, err);
	if (!rc) {
		*out = kr;
		kr = NULL;
	}
out:
	if (d)
		closedir(d);
	sign_keyring_free(kr);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Delete */

struct key_id {
	char hex[65]; /* lowercase */
	size_t len;   /* 8, 16 or 40 */
	bool has_time;
	uint32_t time;
};

static kiln_rc parse_id(const char *id, struct key_id *out, struct kiln_err *err)
{
	const char *dash;
	const char *s = id;
	uint64_t t;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!strncmp(s, "gpg-pubkey-", 11))
		s += 11;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	dash = strchr(s, '-');
	out->len = dash ? (size_t)(dash - s) : strlen(s);
	if (dash && (out->len != 8 || util_parse_u64(dash + 1, strlen(dash + 1), 16, UINT32_MAX, &t,
	                                             NULL) != KILN_OK))
		return kiln_err_set(err, KILN_EINVAL, "invalid key id '%s'", id);
	if (out->len != 8 && out->len != 16 && out->len != 40)
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "invalid key id '%s' (want 8 or 16 hex digits, or a fingerprint)", id);
	for (i = 0; i < out->len; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return kiln_err_set(err, KILN_EINVAL, "invalid key id '%s'", id);
		out->hex[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
	}
	if (dash) {
		out->has_time = true;
		out->time = (uint32_t)t;
	}
	return KILN_OK;
}

static bool id_matches(const struct key_id *id, const struct sign_key *key)
{
	struct sign_key_info info;

	sign_key_info_get(key, &info);
	if (id->has_time && (int64_t)id->time != info.created)
		return false;
	if (id->len == 40)
		return !strcmp(info.fingerprint, id->hex);
	if (id->len == 16)
		return !strcmp(info.keyid, id->hex);
	return !strcmp(info.short_id, id->hex);
}

kiln_rc sign_keyring_delete(struct sign_keyring *kr, const char *id, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct key_id want;
	size_t found = SIZE_MAX;
	size_t i;
	kiln_rc rc;

	rc = parse_id(id, &want, err);
	if (rc)
		return rc;
	for (i = 0; i < kr->n; i++) {
		if (!id_matches(&want, kr->keys[i]))
			continue;
		if (found != SIZE_MAX)
			return kiln_err_set(err, KILN_EINVAL,
			                    "key id '%s' is ambiguous: give the fingerprint", id);
		found = i;
	}
	if (found == SIZE_MAX)
		return kiln_err_set(err, KILN_ENOTFOUND, "key not found: %s", id);
	if (kr->dir) {
		rc = key_path(kr, kr->keys[found], &path, err);
		if (!rc && unlink(path.ptr) < 0 && errno != ENOENT)
			rc = kiln_err_sys(err, KILN_EIO, "cannot remove '%s'", path.ptr);
		kiln_buf_release(&path);
		if (rc)
			return rc;
	}
	sign_key_free(kr->keys[found]);
	memmove(kr->keys + found, kr->keys + found + 1, (kr->n - found - 1) * sizeof(*kr->keys));
	kr->n--;
	return KILN_OK;
}
