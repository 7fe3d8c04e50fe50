/*
 * rootpin.c - the root a job builds on, pinned in its manifest.
 *
 * A job naming a root configuration is resolved by the worker that first runs it (the
 * repositories are the workers'): its completion carries the lock it built on, and the
 * scheduler keeps that lock as a blob (its canonical bytes, so the blob's sha256 is the
 * root's identity), writes the identity into the manifest ("root_lock") and into the
 * request the workers get, and recomputes the content key. Every later attempt, retry and
 * reproducibility rerun installs exactly that lock, on any worker, as gitpin.c does for a
 * git ref; the provenance lists its packages.
 */
#include "util/util.h"

#include <jansson.h>

#include "roots/roots.h"
#include "scheduler/scheduler_int.h"

/* Stored JSON (the scheduler wrote it, so it is no outside input). */
static json_t *load(const char *json, struct kiln_err *err)
{
	json_t *doc = json_loads(json, JSON_REJECT_DUPLICATES, NULL);

	if (!doc)
		kiln_err_set(err, KILN_EFORMAT, "a stored job's JSON does not parse");
	return doc;
}

void scheduler_root_lock_get(const char *manifest, char out[65])
{
	struct kiln_err ignore = KILN_ERR_INIT;
	json_t *doc = load(manifest, &ignore), *v;

	out[0] = '\0';
	if (!doc)
		return;
	v = json_object_get(doc, "root_lock");
	if (json_is_string(v) && strlen(json_string_value(v)) == 64)
		memcpy(out, json_string_value(v), 65);
	json_decref(doc);
}

/* Set doc.root_lock to id and write doc out. */
static kiln_rc lock_set(const char *json, const char *id, bool canonical, struct kiln_buf *out,
                        struct kiln_err *err)
{
	json_t *doc = load(json, err);
	char *s = NULL;
	kiln_rc rc = KILN_OK;

	if (!doc)
		return KILN_EFORMAT;
	if (json_object_set_new(doc, "root_lock", json_string(id)) ||
	    !(s = json_dumps(doc, JSON_COMPACT | (canonical ? JSON_SORT_KEYS : 0))))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		kiln_buf_addstr(out, s);
	if (!rc)
		rc = kiln_buf_finish(out, err);
	free(s);
	json_decref(doc);
	return rc;
}

kiln_rc scheduler_root_pin(struct scheduler *s, const struct scheduler_job *j, const char *text,
                           struct kiln_err *err)
{
	struct kiln_buf canon = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES * 2);
	struct kiln_buf m = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf r = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	struct roots_lock lock;
	char have[65], blob[65], key[65];
	kiln_rc rc;

	roots_lock_init(&lock);
	rc = roots_lock_from_mem(&lock, "field 'root_lock'", text, strlen(text), err);
	if (rc)
		goto out;
	scheduler_root_lock_get(j->manifest, have);
	if (*have) {
		if (strcmp(have, lock.id))
			rc = kiln_err_set(err, KILN_EINVAL,
			                  "field 'root_lock': job %lld builds on root %s, not %s",
			                  (long long)j->id, have, lock.id);
		goto out;
	}
	roots_lock_write(&lock, &canon);
	rc = kiln_buf_finish(&canon, err);
	if (!rc)
		rc = scheduler_blob_put_mem(s, canon.ptr, canon.len, blob, err);
	if (!rc)
		rc = lock_set(j->manifest, lock.id, true, &m, err);
	if (!rc)
		rc = lock_set(j->request, lock.id, false, &r, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, m.ptr, m.len, key, err);
	if (!rc)
		rc = s->store->ops->job_inputs_set(s->store, j->id, r.ptr, m.ptr, key, err);
	if (!rc)
		kiln_log(KILN_LOG_INFO,
		         "job %lld: root locked at %s (%zu packages), content key %s",
		         (long long)j->id, lock.id, lock.n, key);
	else
		kiln_err_wrap(err, "job %lld: cannot record its root's lock", (long long)j->id);
out:
	roots_lock_release(&lock);
	kiln_buf_release(&canon);
	kiln_buf_release(&m);
	kiln_buf_release(&r);
	return rc;
}

kiln_rc scheduler_root_of_artifact(struct scheduler *s, const char *sha256, struct kiln_arena *a,
                                   const char **root, char lock[65], struct kiln_err *err)
{
	struct kiln_err ignore = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	json_t *doc = NULL, *v;
	int64_t id = 0;
	kiln_rc rc;

	*root = NULL;
	lock[0] = '\0';
	/* a package this farm did not make has no root it knows of: the worker's default */
	if (s->store->ops->artifact_job(s->store, sha256, &id, &ignore))
		return KILN_OK;
	rc = s->store->ops->job_get(s->store, id, a, &j, err);
	if (rc)
		return rc;
	doc = load(j.manifest, err);
	if (!doc)
		return KILN_EFORMAT;
	v = json_object_get(doc, "root");
	if (json_is_string(v) && strcmp(json_string_value(v), "worker-default")) {
		*root = kiln_arena_strdup(a, json_string_value(v));
		if (!*root)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		else
			scheduler_root_lock_get(j.manifest, lock);
	}
	json_decref(doc);
	return rc;
}
