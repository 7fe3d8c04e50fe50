/*
 * projkey.c - each project's own signing key (issue 27): made when the project is made
 * (never at a first build, which would keep builds waiting on key generation), kept as
 * DATA/keys/project-NAME.key (0600), expiring; extending it adds a new self-signature to
 * the same key, so the packages signed before still verify with the extended certificate.
 * The packages of a project's jobs are signed with it (signing.c).
 */
#include "util/util.h"

#include <unistd.h>

#include "scheduler/scheduler_int.h"

static kiln_rc key_path(const struct scheduler *s, const char *name, struct kiln_buf *out,
                        struct kiln_err *err)
{
	kiln_buf_addf(out, "%s/keys/project-%s.key", s->cfg->data_dir, name);
	return kiln_buf_finish(out, err);
}

/* Write key's secret to path (replacing what was there: atomically, 0600). */
static kiln_rc key_save(const struct sign_key *key, const char *path, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	kiln_rc rc;

	rc = sign_key_export(key, SIGN_EXPORT_SECRET | SIGN_EXPORT_ARMOR, &out, err);
	if (!rc)
		rc = util_write_atomic(path, out.ptr, out.len, 0600, err);
	sign_wipe(out.ptr, out.len);
	kiln_buf_release(&out);
	return rc;
}

kiln_rc scheduler_project_key_make(struct scheduler *s, struct scheduler_project *p, int64_t days,
                                   struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH), uid = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct sign_key *key = NULL;
	int64_t now = util_clock_wall();
	kiln_rc rc;

	kiln_buf_addf(&uid, "kiln project %s <kiln@localhost>", p->name);
	rc = kiln_buf_finish(&uid, err);
	if (!rc)
		rc = key_path(s, p->name, &path, err);
	if (!rc)
		rc = sign_key_generate_expiring(SIGN_KEYGEN_ED25519, uid.ptr, now,
		                                now + days * 86400, &key, err);
	if (!rc)
		rc = key_save(key, path.ptr, err);
	if (!rc)
		p->key_expires_ms = (now + days * 86400) * 1000;
	sign_key_free(key);
	kiln_buf_release(&path);
	kiln_buf_release(&uid);
	return rc;
}

kiln_rc scheduler_project_key_load(const struct scheduler *s, const char *name,
                                   struct sign_key **out, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	*out = NULL;
	rc = key_path(s, name, &path, err);
	if (!rc && !util_exists(path.ptr))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "project '%s' has no key of its own", name);
	if (!rc)
		rc = sign_key_load_secret(path.ptr, out, err);
	kiln_buf_release(&path);
	return rc;
}

kiln_rc scheduler_project_key_extend(struct scheduler *s, struct scheduler_project *p, int64_t days,
                                     struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sign_key *key = NULL, *longer = NULL;
	int64_t now = util_clock_wall();
	kiln_rc rc;

	rc = key_path(s, p->name, &path, err);
	if (!rc)
		rc = scheduler_project_key_load(s, p->name, &key, err);
	if (!rc)
		rc = sign_key_extend(key, now, now + days * 86400, &longer, err);
	if (!rc)
		rc = key_save(longer, path.ptr, err);
	if (!rc)
		p->key_expires_ms = (now + days * 86400) * 1000;
	sign_key_free(key);
	sign_key_free(longer);
	kiln_buf_release(&path);
	return rc;
}

void scheduler_project_key_remove(struct scheduler *s, const char *name)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err err = KILN_ERR_INIT;

	if (!key_path(s, name, &path, &err) && unlink(path.ptr) < 0 && errno != ENOENT)
		kiln_log(KILN_LOG_WARN, "project '%s': key %s not removed: %s", name, path.ptr,
		         strerror(errno));
	kiln_buf_release(&path);
}
