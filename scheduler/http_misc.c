/*
 * http_misc.c - the route table, and the service endpoints: health, metrics, the OpenAPI
 * document, public keys, tokens.
 */
#include "util/util.h"

#include <sys/statvfs.h>

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define R API_ROUTE_READ
/* read, or submit for the caller's own jobs (the handlers check whose they are) */
#define RS (API_SCOPE_READ | API_SCOPE_SUBMIT)
/* the farm's admin, or a project's for its own project (the handlers check which) */
#define PA (API_SCOPE_ADMIN | API_SCOPE_GROUP_ADMIN)
/* also on the workers' own listener ([server] worker_listen) */
#define W API_ROUTE_RESERVED

const struct api_route scheduler_routes[] = {
    {API_GET, "/", 0, API_ROUTE_NOAUTH, scheduler_h_web},
    {API_GET, "/ui/{}", 0, API_ROUTE_NOAUTH, scheduler_h_web},
    {API_GET, "/api/v1/stats/history", API_SCOPE_READ, R, scheduler_h_history},
    {API_GET, "/api/v1/health", 0, API_ROUTE_NOAUTH | W, scheduler_h_health},
    {API_GET, "/metrics", 0, API_ROUTE_NOAUTH | W, scheduler_h_metrics},
    {API_GET, "/api/v1/openapi.json", 0, API_ROUTE_NOAUTH, scheduler_h_openapi},
    {API_GET, "/api/v1/keys/{}", 0, API_ROUTE_NOAUTH, scheduler_h_key},
    {API_POST, "/api/v1/jobs", API_SCOPE_SUBMIT, 0, scheduler_h_submit},
    /* forge webhooks: verified by their signature or token, not a bearer token */
    {API_POST, "/api/v1/hooks/{}", 0, API_ROUTE_NOAUTH, scheduler_h_hook},
    {API_GET, "/api/v1/hooks/deliveries", API_SCOPE_ADMIN, 0, scheduler_h_hook_deliveries},
    {API_GET, "/api/v1/webhooks", API_SCOPE_ADMIN, 0, scheduler_h_webhooks},
    {API_GET, "/api/v1/webhooks/{}/deliveries", API_SCOPE_ADMIN, 0, scheduler_h_webhook_deliveries},
    {API_GET, "/api/v1/jobs", RS, R, scheduler_h_jobs},
    {API_GET, "/api/v1/jobs/{}", RS, R, scheduler_h_job},
    {API_POST, "/api/v1/jobs/{}/cancel", API_SCOPE_SUBMIT, 0, scheduler_h_cancel},
    {API_POST, "/api/v1/jobs/{}/retry", API_SCOPE_SUBMIT, 0, scheduler_h_retry},
    {API_GET, "/api/v1/jobs/{}/placement", RS, R, scheduler_h_placement},
    {API_POST, "/api/v1/jobs/{}/reproduce", API_SCOPE_SUBMIT, 0, scheduler_h_reproduce},
    {API_GET, "/api/v1/jobs/{}/reproducibility", RS, R, scheduler_h_reproducibility},
    {API_GET, "/api/v1/jobs/{}/attempts/{}/log", RS, R, scheduler_h_log_get},
    {API_GET, "/api/v1/jobs/{}/artifacts", RS, R, scheduler_h_artifacts},
    {API_GET, "/api/v1/artifacts/{}", RS, R, scheduler_h_artifact_get},
    {API_GET, "/api/v1/artifacts/{}/provenance", RS, R, scheduler_h_provenance},
    {API_POST, "/api/v1/rebuilds", API_SCOPE_SUBMIT, 0, scheduler_h_rebuild_create},
    {API_GET, "/api/v1/rebuilds/{}", RS, R, scheduler_h_rebuild_get},
    {API_PUT, "/api/v1/blobs/{}", API_SCOPE_SUBMIT, API_ROUTE_UPLOAD, scheduler_h_blob_put},
    {API_GET, "/api/v1/blobs/{}", API_SCOPE_READ | API_SCOPE_WORKER, R | W, scheduler_h_blob_get},
    {API_GET, "/api/v1/workers", API_SCOPE_READ, R, scheduler_h_workers},
    {API_POST, "/api/v1/workers", API_SCOPE_WORKER, W, scheduler_h_worker_register},
    {API_POST, "/api/v1/leases", API_SCOPE_WORKER, W, scheduler_h_lease},
    {API_POST, "/api/v1/leases/{}/heartbeat", API_SCOPE_WORKER, W, scheduler_h_heartbeat},
    {API_PUT, "/api/v1/leases/{}/log", API_SCOPE_WORKER, W, scheduler_h_log_put},
    {API_PUT, "/api/v1/leases/{}/artifacts/{}", API_SCOPE_WORKER, API_ROUTE_UPLOAD | W,
     scheduler_h_artifact_put},
    {API_POST, "/api/v1/leases/{}/complete", API_SCOPE_WORKER, W, scheduler_h_complete},
    {API_GET, "/api/v1/repos", API_SCOPE_READ, R, scheduler_h_repos},
    {API_GET, "/api/v1/repos/{}", API_SCOPE_READ, R, scheduler_h_repo},
    {API_POST, "/api/v1/repos/{}/regenerate", API_SCOPE_ADMIN, 0, scheduler_h_repo_regenerate},
    {API_DELETE, "/api/v1/repos/{}/packages/{}", API_SCOPE_ADMIN, 0, scheduler_h_repo_remove},
    {API_GET, "/repos/{*}", 0, API_ROUTE_NOAUTH, scheduler_h_repo_file},
    {API_POST, "/api/v1/tokens", PA, 0, scheduler_h_token_create},
    {API_GET, "/api/v1/tokens", PA, 0, scheduler_h_tokens},
    {API_POST, "/api/v1/projects", API_SCOPE_ADMIN, 0, scheduler_h_project_create},
    {API_GET, "/api/v1/projects", RS, R, scheduler_h_projects},
    {API_GET, "/api/v1/projects/{}", RS, R, scheduler_h_project},
    {API_PUT, "/api/v1/projects/{}", PA, 0, scheduler_h_project_change},
    {API_DELETE, "/api/v1/projects/{}", API_SCOPE_ADMIN, 0, scheduler_h_project_delete},
    {API_GET, "/api/v1/projects/{}/key", RS, R, scheduler_h_project_key},
    {API_POST, "/api/v1/projects/{}/key/extend", PA, 0, scheduler_h_project_key_extend},
    {API_DELETE, "/api/v1/tokens/{}", PA, 0, scheduler_h_token_revoke},
    /* [batches] */
    {API_POST, "/api/v1/batches", API_SCOPE_SUBMIT, 0, scheduler_h_batch_create},
    {API_GET, "/api/v1/batches", RS, R, scheduler_h_batches},
    {API_GET, "/api/v1/batches/{}", RS, R, scheduler_h_batch},
    {API_POST, "/api/v1/batches/{}/publish", API_SCOPE_SUBMIT, 0, scheduler_h_batch_publish},
    {API_POST, "/api/v1/batches/{}/cancel", API_SCOPE_SUBMIT, 0, scheduler_h_batch_cancel},
    {API_GET, "/batches/{}/repo/{*}", 0, API_ROUTE_NOAUTH | W, scheduler_h_batch_repo_file},
    {0, NULL, 0, 0, NULL},
};

/* Cheap on purpose (load balancers call it often): the store answers, nothing counted.
 * Still 200 when degraded (the data directory's disk runs low): it serves, but needs an
 * operator. */
void scheduler_h_health(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct statvfs vfs;
	struct api_jw w;
	bool free_ok;

	(void)req;
	if (s->store->ops->ping(s->store, &err)) {
		api_resp_error(resp, 503, "unavailable", "job store: %s", err.msg);
		return;
	}
	free_ok = statvfs(s->cfg->data_dir, &vfs) < 0 ||
	          (uint64_t)vfs.f_bavail * vfs.f_frsize >= s->cfg->min_free;
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "status", free_ok ? "ok" : "degraded");
	api_jw_kstr(&w, "version", KILN_VERSION);
	api_jw_kstr(&w, "store", s->store->ops->name);
	if (!free_ok) {
		char why[KILN_LIMIT_PATH + 96];

		api_jw_kint(&w, "free_bytes", (int64_t)((uint64_t)vfs.f_bavail * vfs.f_frsize));
		snprintf(why, sizeof(why), "%s has less than %llu bytes free (limits.min_free)",
		         s->cfg->data_dir, (unsigned long long)s->cfg->min_free);
		api_jw_kstr(&w, "reason", why);
	}
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

void scheduler_h_metrics(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;

	(void)req;
	if (scheduler_metrics_text(ctx, &resp->body, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	resp->content_type = "text/plain; version=0.0.4";
}

void scheduler_h_openapi(void *ctx, struct api_req *req, struct api_resp *resp)
{
	(void)ctx, (void)req;
	kiln_buf_addstr(&resp->body, scheduler_openapi_json);
}

void scheduler_h_key(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const struct sign_key *k = NULL;
	const char *name = api_req_param(req, 0);

	if (scheduler_key_find(s, name, &k, &err) || !k ||
	    sign_key_export(k, SIGN_EXPORT_ARMOR, &resp->body, &err)) {
		if (!err.code)
			kiln_err_set(&err, KILN_ENOTFOUND, "no key '%s'", name);
		api_resp_from_err(resp, &err);
		return;
	}
	resp->content_type = "application/pgp-keys";
}

struct token_body {
	const char *scopes, *name, *project;
};

static const struct api_field token_fields[] = {
    {"scopes", API_F_STR, true, offsetof(struct token_body, scopes), 0, 128, NULL, 0, 0},
    {"name", API_F_STR, false, offsetof(struct token_body, name), 0, 128, NULL, 0, 0},
    {"project", API_F_STR, false, offsetof(struct token_body, project), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

/* [projects] The project a new token acts in (default when none is named): a token of
 * another project has scopes inside it only (submit, read); admin and worker are the
 * farm's. */
static kiln_rc token_project(struct scheduler *s, struct api_req *req, const struct token_body *b,
                             unsigned scopes, struct scheduler_project *p, struct kiln_err *err)
{
	bool farm = scheduler_reads_all(req);
	/* a project's admin makes tokens of its own project (the default when none is named) */
	int64_t dflt = farm ? SCHED_PROJECT_DEFAULT : api_req_group(req);
	kiln_rc rc;

	rc = s->store->ops->project_get(s->store, b->project ? 0 : dflt, b->project,
	                                api_req_arena(req), p, err);
	if (rc == KILN_ENOTFOUND || (!rc && !farm && p->id != dflt)) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL, "field 'project': no project '%.64s'",
		                    b->project);
	}
	if (!rc && (scopes & (API_SCOPE_ADMIN | API_SCOPE_WORKER)) &&
	    (!farm || p->id != SCHED_PROJECT_DEFAULT))
		rc = kiln_err_set(
		    err, KILN_EINVAL,
		    "field 'scopes': admin and worker are farm-wide scopes (the farm's "
		    "admin gives them, in default); a token of project '%s' takes "
		    "submit, read and project-admin",
		    p->name);
	return rc;
}

void scheduler_h_token_create(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_buf sc = KILN_BUF_INIT(128);
	struct kiln_err err = KILN_ERR_INIT;
	struct token_body b = {0};
	struct scheduler_project p = {0};
	char tok[API_TOKEN_LEN + 1], hash[65];
	unsigned scopes = 0;
	const char *body;
	struct api_jw w;
	int64_t id;
	size_t len;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = api_json_decode(body, len, token_fields, API_DECODE_STRICT, &b, api_req_arena(req),
	                     &err);
	if (!rc && api_scopes_parse(b.scopes, &scopes, &err))
		kiln_err_wrap(&err, "field 'scopes'"), rc = KILN_EINVAL;
	if (!rc)
		rc = token_project(s, req, &b, scopes, &p, &err);
	if (!rc)
		rc = api_token_generate(tok, &err);
	if (!rc)
		rc = api_token_hash(tok, strlen(tok), hash, &err);
	if (!rc)
		rc = s->store->ops->token_insert(s->store, hash, scopes, b.name ? b.name : "", p.id,
		                                 util_clock_wall_ms(), &id, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		goto out;
	}
	api_scopes_format(scopes, &sc);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "id", id);
	api_jw_kstr(&w, "token", tok);
	api_jw_kstr(&w, "scopes", sc.ptr);
	api_jw_kstr(&w, "name", b.name ? b.name : "");
	api_jw_kstr(&w, "project", p.name);
	api_jw_end(&w);
	scheduler_reply_json(resp, 201);
	explicit_bzero(tok, sizeof(tok));
out:
	kiln_buf_release(&sc);
}

void scheduler_h_tokens(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_token *v = NULL;
	struct api_jw w;
	size_t n = 0, i;

	if (s->store->ops->tokens_list(s->store, api_req_arena(req), &v, &n, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "tokens");
	api_jw_arr(&w);
	for (i = 0; i < n; i++) {
		struct kiln_buf sc = KILN_BUF_INIT(128);

		/* a project's admin sees its project's tokens only */
		if (!scheduler_reads_all(req) && v[i].project_id != api_req_group(req))
			continue;
		api_scopes_format(v[i].scopes, &sc);
		api_jw_obj(&w);
		api_jw_kint(&w, "id", v[i].id);
		api_jw_kstr(&w, "name", v[i].name);
		api_jw_kstr(&w, "scopes", sc.ptr);
		api_jw_kint(&w, "created", v[i].created_ms);
		api_jw_kbool(&w, "revoked", v[i].revoked);
		api_jw_kstr(&w, "project", v[i].project);
		api_jw_end(&w);
		kiln_buf_release(&sc);
	}
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* May the caller revoke token id? The farm's admin any, a project's admin its project's. */
static bool token_revocable(struct scheduler *s, struct api_req *req, int64_t id)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_token *v = NULL;
	size_t n = 0, i;

	if (scheduler_reads_all(req))
		return true;
	if (s->store->ops->tokens_list(s->store, api_req_arena(req), &v, &n, &err))
		return false;
	for (i = 0; i < n; i++)
		if (v[i].id == id)
			return v[i].project_id == api_req_group(req);
	return false;
}

void scheduler_h_token_revoke(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *p = api_req_param(req, 0);
	int64_t id;

	if (util_parse_i64(p, strlen(p), 10, 1, INT64_MAX, &id, NULL) ||
	    !token_revocable(s, req, id)) {
		api_resp_error(resp, 404, "not_found", "no token '%.32s'", p);
		return;
	}
	if (s->store->ops->token_revoke(s->store, id, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	kiln_buf_addstr(&resp->body, "{}\n");
}
