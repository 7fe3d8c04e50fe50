/*
 * gitpin.c - the commit a git job builds, pinned in its manifest.
 *
 * A git job is submitted with a URL and a ref. When the ref is a full commit id the
 * manifest names that commit from the start. A branch or a tag is resolved by the worker
 * that first runs the job (libgit2 and the network are the workers'): its completion
 * reports the commit, and the scheduler writes it into the manifest ("git.commit", null
 * until then) and into the request the workers get, then recomputes the content key. Every
 * later attempt, retry and reproducibility rerun of the job builds that same commit, as
 * Koji and Copr record the resolved commit of an SCM build and rebuild from it.
 */
#include "util/util.h"

#include <jansson.h>

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

bool scheduler_git_commit_valid(const char *c)
{
	size_t n = c ? strspn(c, "0123456789abcdef") : 0;

	return c && !c[n] && (n == 40 || n == 64);
}

/* Stored JSON (the scheduler wrote it, so it is no outside input). */
static json_t *load(const char *json, struct kiln_err *err)
{
	json_t *doc = json_loads(json, JSON_REJECT_DUPLICATES, NULL);

	if (!doc)
		kiln_err_set(err, KILN_EFORMAT, "a stored job's JSON does not parse");
	return doc;
}

/* doc's "git" object, NULL when the job is not a git job. */
static json_t *git_member(json_t *doc)
{
	json_t *g = json_is_object(doc) ? json_object_get(doc, "git") : NULL;

	return json_is_object(g) ? g : NULL;
}

static kiln_rc dump(json_t *doc, size_t flags, struct kiln_buf *out, struct kiln_err *err)
{
	char *s = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY | flags);

	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_buf_addstr(out, s);
	free(s);
	return kiln_buf_finish(out, err);
}

/* Set doc.git.commit to commit (json null when NULL) and write doc out. */
static kiln_rc git_set(const char *json, const char *commit, bool canonical, struct kiln_buf *out,
                       struct kiln_err *err)
{
	json_t *doc = load(json, err), *g;
	kiln_rc rc = KILN_OK;

	if (!doc)
		return KILN_EFORMAT;
	g = git_member(doc);
	if (!g)
		rc = kiln_err_set(err, KILN_EINVAL, "not a git job");
	else if (json_object_set_new(g, "commit", commit ? json_string(commit) : json_null()))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = dump(doc, canonical ? JSON_SORT_KEYS : 0, out, err);
	json_decref(doc);
	return rc;
}

void scheduler_git_commit_get(const char *manifest, char out[65])
{
	struct kiln_err ignore = KILN_ERR_INIT;
	json_t *doc = load(manifest, &ignore), *g, *c;

	out[0] = '\0';
	if (!doc)
		return;
	g = git_member(doc);
	c = g ? json_object_get(g, "commit") : NULL;
	if (json_is_string(c) && scheduler_git_commit_valid(json_string_value(c)))
		memcpy(out, json_string_value(c), strlen(json_string_value(c)) + 1);
	json_decref(doc);
}

kiln_rc scheduler_git_submitted_key(const struct scheduler_job *j, char key[65],
                                    struct kiln_err *err)
{
	struct kiln_buf m = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	json_t *doc = load(j->manifest, err), *g, *ref;
	const char *pin = NULL;
	kiln_rc rc = KILN_OK;

	memcpy(key, j->content_key, 65);
	if (!doc)
		return KILN_EFORMAT;
	g = git_member(doc);
	ref = g ? json_object_get(g, "ref") : NULL;
	if (json_is_string(ref) && scheduler_git_commit_valid(json_string_value(ref)))
		pin = json_string_value(ref);
	if (g)
		rc = git_set(j->manifest, pin, true, &m, err);
	if (g && !rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, m.ptr, m.len, key, err);
	json_decref(doc);
	kiln_buf_release(&m);
	return rc;
}

kiln_rc scheduler_git_pin(struct scheduler *s, const struct scheduler_job *j, const char *commit,
                          struct kiln_err *err)
{
	struct kiln_buf m = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf r = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	char have[65], key[65];
	kiln_rc rc = KILN_OK;

	scheduler_git_commit_get(j->manifest, have);
	if (*have && !strcmp(have, commit))
		return KILN_OK;
	if (*have)
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'git_commit': job %lld builds commit %s, not %s",
		                    (long long)j->id, have, commit);
	rc = git_set(j->manifest, commit, true, &m, err);
	if (!rc)
		rc = git_set(j->request, commit, false, &r, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, m.ptr, m.len, key, err);
	if (!rc)
		rc = s->store->ops->job_inputs_set(s->store, j->id, r.ptr, m.ptr, key, err);
	if (!rc)
		kiln_log(KILN_LOG_INFO, "job %lld: git ref resolved to commit %s, content key %s",
		         (long long)j->id, commit, key);
	else
		kiln_err_wrap(err, "job %lld: cannot record its git commit", (long long)j->id);
	kiln_buf_release(&m);
	kiln_buf_release(&r);
	return rc;
}
