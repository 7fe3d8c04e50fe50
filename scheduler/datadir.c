/*
 * datadir.c - what the scheduler keeps beside its store in the data directory: blobs
 * (content-addressed files), build logs, and the signing keys (the configured ones, or a
 * default one made on first start).
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scheduler/scheduler_int.h"

/* ---------------------------------------------------------------------------------------- */
/* The directories */

kiln_rc scheduler_datadir_open(struct scheduler *s, const struct scheduler_config *cfg,
                               struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	static const char *const sub[] = {"", "/blobs", "/logs", "/tmp", "/keys"};
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(sub); i++) {
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s%s", cfg->data_dir, sub[i]);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = util_mkdir_p(p.ptr, i == 4 ? 0700 : 0755, err);
	}
	kiln_buf_release(&p);
	s->blob_dir = kiln_malloc(KILN_LIMIT_PATH);
	s->log_dir = kiln_malloc(KILN_LIMIT_PATH);
	s->tmp_dir = kiln_malloc(KILN_LIMIT_PATH);
	if (!rc && (!s->blob_dir || !s->log_dir || !s->tmp_dir))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc) {
		snprintf(s->blob_dir, KILN_LIMIT_PATH, "%s/blobs", cfg->data_dir);
		snprintf(s->log_dir, KILN_LIMIT_PATH, "%s/logs", cfg->data_dir);
		snprintf(s->tmp_dir, KILN_LIMIT_PATH, "%s/tmp", cfg->data_dir);
	}
	return rc;
}

void scheduler_datadir_release(struct scheduler *s)
{
	size_t i;

	for (i = 0; s->keys && i < s->cfg->nkeys; i++)
		sign_key_free(s->keys[i]);
	free(s->keys);
	free(s->blob_dir);
	free(s->log_dir);
	free(s->tmp_dir);
	s->keys = NULL;
	s->blob_dir = s->log_dir = s->tmp_dir = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Blobs and logs */

void scheduler_blob_path(const struct scheduler *s, const char *sha256, struct kiln_buf *out)
{
	kiln_buf_reset(out);
	kiln_buf_addf(out, "%s/%.2s/%s", s->blob_dir, sha256, sha256);
}

bool scheduler_blob_exists(const struct scheduler *s, const char *sha256)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool ok;

	scheduler_blob_path(s, sha256, &p);
	ok = !p.err && util_exists(p.ptr);
	kiln_buf_release(&p);
	return ok;
}

kiln_rc scheduler_blob_adopt(struct scheduler *s, const char *tmp, const char *sha256,
                             struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/%.2s", s->blob_dir, sha256);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = util_mkdir_p(p.ptr, 0755, err);
	if (rc)
		goto out;
	scheduler_blob_path(s, sha256, &p);
	/* Content-addressed: an existing blob of the same digest is the same bytes. */
	if (util_exists(p.ptr)) {
		(void)unlink(tmp);
		goto out;
	}
	(void)chmod(tmp, 0644);
	if (rename(tmp, p.ptr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot store blob %s", sha256);
out:
	kiln_buf_release(&p);
	return rc;
}

kiln_rc scheduler_tmp_file(struct scheduler *s, const char *prefix, struct kiln_buf *path, int *fd,
                           struct kiln_err *err)
{
	kiln_rc rc;

	*fd = -1;
	kiln_buf_reset(path);
	kiln_buf_addf(path, "%s/%s-XXXXXX", s->tmp_dir, prefix);
	rc = kiln_buf_finish(path, err);
	if (rc)
		return rc;
	*fd = mkostemp(path->ptr, O_CLOEXEC);
	if (*fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create %s", path->ptr);
	return KILN_OK;
}

kiln_rc scheduler_blob_put_mem(struct scheduler *s, const void *data, size_t len, char sha256[65],
                               struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	int fd = -1;
	kiln_rc rc;

	rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, data, len, hex, err);
	if (rc)
		goto out;
	memcpy(sha256, hex, 65);
	if (scheduler_blob_exists(s, sha256))
		goto out;
	rc = scheduler_tmp_file(s, "blob", &tmp, &fd, err);
	if (rc)
		goto out;
	rc = util_write_all(fd, data, len, err);
	if (!rc && fsync(fd) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "fsync %s", tmp.ptr);
	if (!rc)
		rc = scheduler_blob_adopt(s, tmp.ptr, sha256, err);
	if (rc)
		(void)unlink(tmp.ptr);
out:
	util_close(fd);
	kiln_buf_release(&tmp);
	return rc;
}

void scheduler_log_path(const struct scheduler *s, int64_t job, int64_t attempt,
                        struct kiln_buf *out)
{
	kiln_buf_reset(out);
	kiln_buf_addf(out, "%s/%lld/%lld.log", s->log_dir, (long long)job, (long long)attempt);
}

/* ---------------------------------------------------------------------------------------- */
/* Keys */

kiln_rc scheduler_key_find(const struct scheduler *s, const char *name, const struct sign_key **out,
                           struct kiln_err *err)
{
	size_t i;

	*out = NULL;
	if (!name || !*name)
		return KILN_OK;
	for (i = 0; i < s->cfg->nkeys; i++) {
		if (!strcmp(s->cfg->keys[i].name, name)) {
			*out = s->keys[i];
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_ENOTFOUND, "no signing key '%s' on this scheduler", name);
}

/* The "default" key of the embedded set-up: made on first start in DATA/keys/. */
static kiln_rc default_key(struct scheduler *s, struct sign_key **out, struct kiln_err *err)
{
	struct kiln_buf sec = KILN_BUF_INIT(KILN_LIMIT_PATH), pub = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf armor = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key *key = NULL;
	kiln_rc rc;

	kiln_buf_addf(&sec, "%s/keys/default.key", s->cfg->data_dir);
	kiln_buf_addf(&pub, "%s/keys/default.asc", s->cfg->data_dir);
	rc = kiln_buf_finish(&sec, err);
	if (!rc)
		rc = kiln_buf_finish(&pub, err);
	if (!rc && util_exists(sec.ptr)) {
		rc = sign_key_load_secret(sec.ptr, &key, err);
		goto out;
	}
	if (!rc)
		rc = sign_key_generate(SIGN_KEYGEN_ED25519, "kiln scheduler <kiln@localhost>",
		                       util_clock_wall(), &key, err);
	if (!rc)
		rc = sign_key_save_secret(key, sec.ptr, err);
	if (!rc)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, &armor, err);
	if (!rc)
		rc = util_write_atomic(pub.ptr, armor.ptr, armor.len, 0644, err);
out:
	if (rc) {
		sign_key_free(key);
		key = NULL;
	}
	*out = key;
	kiln_buf_release(&sec);
	kiln_buf_release(&pub);
	kiln_buf_release(&armor);
	return rc;
}

/* The configured keys, or the generated default one. The config's key table is extended
 * in place for the default key, so cfg is written here once before serving starts. */
kiln_rc scheduler_keys_load(struct scheduler *s, struct scheduler_config *cfg, struct kiln_err *err)
{
	size_t i;
	kiln_rc rc;

	if (!cfg->nkeys && cfg->default_key && !strcmp(cfg->default_key, "default")) {
		struct scheduler_key_cfg *k = kiln_arena_alloc(&cfg->arena, sizeof(*k));

		s->keys = kiln_calloc(1, sizeof(*s->keys));
		if (!k || !s->keys)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		k->name = "default";
		k->path = "";
		cfg->keys = k;
		cfg->nkeys = 1;
		return default_key(s, &s->keys[0], err);
	}
	s->keys = kiln_calloc(cfg->nkeys ? cfg->nkeys : 1, sizeof(*s->keys));
	if (!s->keys)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < cfg->nkeys; i++) {
		rc = sign_key_load_secret(cfg->keys[i].path, &s->keys[i], err);
		if (rc) {
			kiln_err_wrap(err, "key '%s'", cfg->keys[i].name);
			return rc;
		}
	}
	if (cfg->default_key && *cfg->default_key) {
		const struct sign_key *k;

		return scheduler_key_find(s, cfg->default_key, &k, err);
	}
	return KILN_OK;
}
