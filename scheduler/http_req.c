/*
 * http_req.c - what every file with REST handlers shares (http_int.h): a job id from the
 * path, what the caller's token may read, and a JSON reply. Below the handler files, so
 * the feature files that answer requests (publish.c, reproduce.c, rebuild.c, ...) need not
 * call into one of them.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

kiln_rc scheduler_param_id(struct api_req *req, unsigned i, int64_t *id, struct kiln_err *err)
{
	const char *p = api_req_param(req, i);

	if (!p || util_parse_i64(p, strlen(p), 10, 1, INT64_MAX, id, NULL))
		return kiln_err_set(err, KILN_ENOTFOUND, "no job '%.32s'", p ? p : "");
	return KILN_OK;
}

bool scheduler_reads_all(const struct api_req *req)
{
	return (api_req_scopes(req) & API_SCOPE_ADMIN) != 0;
}

bool scheduler_project_public(struct scheduler *s, struct api_req *req, int64_t project_id)
{
	struct scheduler_project p = {0};
	struct kiln_err err = KILN_ERR_INIT;

	return !s->store->ops->project_get(s->store, project_id, NULL, api_req_arena(req), &p,
	                                   &err) &&
	       p.public_read;
}

bool scheduler_job_visible(struct scheduler *s, struct api_req *req, const struct scheduler_job *j)
{
	if (scheduler_reads_all(req))
		return true;
	if (api_req_token_id(req) < 0)
		return scheduler_project_public(s, req, j->project_id);
	if (j->project_id != api_req_group(req))
		return false;
	return (api_req_scopes(req) & API_SCOPE_READ) || j->token_id == api_req_token_id(req);
}

kiln_rc scheduler_project_param(struct scheduler *s, struct api_req *req, const char *name,
                                int64_t *id, struct kiln_err *err)
{
	struct scheduler_project p = {0};
	bool anon = api_req_token_id(req) < 0 && !scheduler_reads_all(req);
	kiln_rc rc;

	*id = scheduler_reads_all(req) || anon ? 0 : api_req_group(req);
	if (!name || !*name)
		return KILN_OK;
	rc = s->store->ops->project_get(s->store, 0, name, api_req_arena(req), &p, err);
	if (!rc && !scheduler_reads_all(req) && (anon ? !p.public_read : p.id != *id))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no project '%.64s'", name);
	if (!rc)
		*id = p.id;
	return rc;
}

int64_t scheduler_repo_project(struct scheduler *s, struct kiln_arena *a, const char *repo,
                               struct kiln_err *err)
{
	struct scheduler_repo_owner *o = NULL;
	size_t n = 0, i, len = strlen(repo);

	if (s->store->ops->repo_owners(s->store, a, &o, &n, err))
		return -1;
	/* NAME-v6 (the v6 packages of repository NAME, publish.c) is NAME's */
	if (len > 3 && !strcmp(repo + len - 3, "-v6"))
		len -= 3;
	for (i = 0; i < n; i++)
		if (!strncmp(o[i].repo, repo, len) && !o[i].repo[len])
			return o[i].project_id;
	return SCHED_PROJECT_DEFAULT;
}

/* The caller of a route without auth (/repos/): its bearer token's scopes and project, or
 * false when it sent none that is valid. */
static bool bearer_of(struct scheduler *s, struct api_req *req, unsigned *scopes, int64_t *project)
{
	const char *h = api_req_header(req, "Authorization");
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_str tok;
	char hash[65];
	int64_t id;

	return h && !api_bearer_parse(h, &tok, &err) &&
	       !api_token_hash(tok.ptr, tok.len, hash, &err) &&
	       !s->store->ops->token_lookup(s->store, hash, &id, scopes, project, &err);
}

bool scheduler_repo_visible(struct scheduler *s, struct api_req *req, const char *repo)
{
	struct kiln_err err = KILN_ERR_INIT;
	int64_t owner = scheduler_repo_project(s, api_req_arena(req), repo, &err), project = -1;
	unsigned scopes = 0;

	if (owner < 0)
		return false;
	if (api_req_token_id(req) < 0 && bearer_of(s, req, &scopes, &project))
		return (scopes & API_SCOPE_ADMIN) || project == owner ||
		       scheduler_project_public(s, req, owner);
	if (scheduler_reads_all(req))
		return true;
	if (api_req_token_id(req) < 0)
		return scheduler_project_public(s, req, owner);
	return owner == api_req_group(req);
}

kiln_rc scheduler_job_param(struct scheduler *s, struct api_req *req, int64_t *id,
                            struct kiln_err *err)
{
	struct scheduler_job j = {0};
	kiln_rc rc;

	rc = scheduler_param_id(req, 0, id, err);
	if (rc || scheduler_reads_all(req))
		return rc;
	rc = s->store->ops->job_get(s->store, *id, api_req_arena(req), &j, err);
	if (!rc && !scheduler_job_visible(s, req, &j))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no job %lld", (long long)*id);
	return rc;
}

void scheduler_reply_json(struct api_resp *resp, int status)
{
	resp->status = status;
	kiln_buf_addch(&resp->body, '\n');
	if (resp->body.err)
		api_resp_error(resp, 500, "internal", "response too large");
}

kiln_rc scheduler_artifact_visible(struct scheduler *s, struct api_req *req, const char *sha,
                                   struct kiln_err *err)
{
	struct scheduler_project *p = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	if (scheduler_reads_all(req))
		return KILN_OK;
	if (api_req_token_id(req) >= 0 && (api_req_scopes(req) & API_SCOPE_READ))
		return s->store->ops->artifact_in_project(s->store, sha, api_req_group(req), err);
	if (api_req_token_id(req) >= 0)
		return s->store->ops->artifact_owned(s->store, sha, api_req_token_id(req), err);
	/* anonymous: a package of a public project's */
	rc = s->store->ops->projects_list(s->store, api_req_arena(req), &p, &n, err);
	for (i = 0; !rc && i < n; i++) {
		if (!p[i].public_read)
			continue;
		rc = s->store->ops->artifact_in_project(s->store, sha, p[i].id, err);
		if (rc != KILN_ENOTFOUND)
			return rc;
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	return rc ? rc : kiln_err_set(err, KILN_ENOTFOUND, "no such package");
}
