/*
 * submit.c - a job from a checked request (POST /api/v1/jobs, and a rebuild's job in
 * rebuild.c): options and inputs checked, the stored request (what the worker gets) and the
 * manifest (what the content key covers) written as canonical JSON.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

static void jw_source_refs(struct api_jw *w, const struct scheduler_request *r)
{
	const struct scheduler_source_ref *v = r->sources.v;
	size_t i;

	api_jw_arr(w);
	for (i = 0; i < r->sources.n; i++) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", v[i].name);
		api_jw_kstr(w, "sha256", v[i].sha256);
		api_jw_end(w);
	}
	api_jw_end(w);
}

static void jw_strlist(struct api_jw *w, const char *key, const struct api_strlist *l)
{
	size_t i;

	api_jw_key(w, key);
	api_jw_arr(w);
	for (i = 0; i < l->n; i++)
		api_jw_str(w, l->v[i]);
	api_jw_end(w);
}

/* What both the stored request and the manifest say about the build's inputs. */
static void jw_inputs(struct api_jw *w, const struct scheduler_request *r, const char *spec_sha,
                      bool manifest)
{
	size_t i;

	api_jw_kstr(w, "arch", r->arch ? r->arch : "");
	api_jw_key(w, "defines");
	api_jw_obj(w);
	for (i = 0; i < r->defines.n; i++)
		api_jw_kstr(w, r->defines.keys[i], r->defines.values[i]);
	api_jw_end(w);
	jw_strlist(w, "formats", &r->formats);
	api_jw_key(w, "source_date_epoch");
	if (r->has_sde)
		api_jw_int(w, r->source_date_epoch);
	else
		api_jw_null(w);
	api_jw_key(w, "sources");
	jw_source_refs(w, r);
	api_jw_key(w, "spec");
	if (spec_sha) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", r->spec_name);
		api_jw_kstr(w, "sha256", spec_sha);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	api_jw_key(w, "git");
	if (r->has_git) {
		api_jw_obj(w);
		/* a full commit id pins it now; a branch or tag is pinned when a worker
		 * resolved it (gitpin.c): the manifest says null until then */
		if (r->git.ref && scheduler_git_commit_valid(r->git.ref))
			api_jw_kstr(w, "commit", r->git.ref);
		else if (manifest) {
			api_jw_key(w, "commit");
			api_jw_null(w);
		}
		api_jw_kstr(w, "url", r->git.url);
		api_jw_kstr(w, "ref", r->git.ref ? r->git.ref : "");
		api_jw_kstr(w, "spec", r->git.spec);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	api_jw_key(w, "srpm");
	if (r->has_srpm) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", r->srpm.name);
		api_jw_kstr(w, "sha256", r->srpm.sha256);
		api_jw_end(w);
	} else {
		api_jw_null(w);
	}
	jw_strlist(w, "with", &r->with);
	jw_strlist(w, "without", &r->without);
}

/* Only the limits the submitter gave: the worker's own apply to the rest. */
static void jw_limits(struct api_jw *w, const struct scheduler_job_limits *l)
{
	api_jw_key(w, "limits");
	api_jw_obj(w);
	if (l->pids)
		api_jw_kint(w, "pids", l->pids);
	if (l->memory)
		api_jw_kint(w, "memory", l->memory);
	if (l->cpu)
		api_jw_kint(w, "cpu", l->cpu);
	if (l->log)
		api_jw_kint(w, "log", l->log);
	api_jw_end(w);
}

static void request_json(const struct scheduler_request *r, const char *spec_sha,
                         const char *sign_key, int64_t timeout, struct kiln_buf *out)
{
	struct api_jw w;

	api_jw_init(&w, out);
	api_jw_obj(&w);
	jw_inputs(&w, r, spec_sha, false);
	api_jw_kint(&w, "priority", r->priority);
	api_jw_kint(&w, "reruns", r->reruns ? r->reruns : r->reproduce);
	api_jw_kstr(&w, "repository", r->repository ? r->repository : "");
	api_jw_kstr(&w, "sign_key", sign_key);
	jw_strlist(&w, "tags", &r->tags);
	api_jw_kint(&w, "timeout", timeout);
	if (r->root)
		api_jw_kstr(&w, "root", r->root);
	if (r->root_lock)
		api_jw_kstr(&w, "root_lock", r->root_lock);
	if (r->has_limits)
		jw_limits(&w, &r->limits);
	api_jw_end(&w);
}

/* The manifest: every input of the build; its sha256 is the job's content key. The root
 * is the root configuration the job names, else the worker's default root. A git
 * job names its URL, ref and commit here: the commit is null until the first worker that
 * runs it reports what the ref resolved to (gitpin.c), which changes the content key. */
static kiln_rc manifest_json(const struct scheduler_request *r, const char *spec_sha,
                             struct kiln_buf *out, char key[65], struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct api_jw w;
	kiln_rc rc;

	api_jw_init(&w, &raw);
	api_jw_obj(&w);
	jw_inputs(&w, r, spec_sha, true);
	api_jw_kstr(&w, "kiln_version", KILN_VERSION);
	api_jw_kstr(&w, "root", r->root ? r->root : "worker-default");
	if (r->root_lock)
		api_jw_kstr(&w, "root_lock", r->root_lock);
	api_jw_end(&w);
	rc = kiln_buf_finish(&raw, err);
	if (!rc)
		rc = api_json_canonical(raw.ptr, raw.len, out, err);
	if (!rc)
		rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, out->ptr, out->len, hex, err);
	if (!rc)
		memcpy(key, hex, 65);
	kiln_buf_release(&raw);
	return rc;
}

static kiln_rc inputs_present(struct scheduler *s, const struct scheduler_request *r,
                              struct kiln_err *err)
{
	const struct scheduler_source_ref *v = r->sources.v;
	size_t i;

	for (i = 0; i < r->sources.n; i++)
		if (!scheduler_blob_exists(s, v[i].sha256))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'sources[%zu]': %s (%s) was not "
			                    "uploaded (PUT /api/v1/blobs/SHA256 first)",
			                    i, v[i].name, v[i].sha256);
	if (r->has_srpm && !scheduler_blob_exists(s, r->srpm.sha256))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'srpm': %s was not uploaded (PUT "
		                    "/api/v1/blobs/SHA256 first)",
		                    r->srpm.sha256);
	return KILN_OK;
}

static kiln_rc options_check(struct scheduler *s, const struct scheduler_request *r,
                             const char **sign_key, struct kiln_err *err)
{
	const struct sign_key *k;
	size_t i;

	*sign_key = r->sign_key ? r->sign_key : s->cfg->default_key ? s->cfg->default_key : "";
	if (scheduler_key_find(s, *sign_key, &k, err)) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'sign_key': no key '%s' on this "
		                    "scheduler",
		                    *sign_key);
	}
	if (!r->repository || !*r->repository)
		return KILN_OK;
	for (i = 0; i < s->cfg->nrepos; i++)
		if (!strcmp(s->cfg->repos[i].name, r->repository))
			return KILN_OK;
	return kiln_err_set(err, KILN_EINVAL,
	                    "field 'repository': no repository '%s' on this "
	                    "scheduler",
	                    r->repository);
}

static kiln_rc idem_key_get(struct api_req *req, const char **out, struct kiln_err *err)
{
	const char *k = api_req_header(req, "Idempotency-Key");
	const char *p;

	*out = "";
	if (!k)
		return KILN_OK;
	if (!*k || strlen(k) > 255)
		return kiln_err_set(err, KILN_EINVAL,
		                    "the Idempotency-Key header must have 1 to 255 "
		                    "bytes");
	for (p = k; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			return kiln_err_set(err, KILN_EINVAL,
			                    "the Idempotency-Key header must be "
			                    "printable ASCII");
	*out = k;
	return KILN_OK;
}

/* Tags as stored: ",a,b," for the store's subset test. */
static const char *tags_joined(struct kiln_arena *a, const struct api_strlist *l)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *out;
	size_t i;

	if (!l->n)
		return "";
	for (i = 0; i < l->n; i++)
		kiln_buf_addf(&b, ",%s", l->v[i]);
	kiln_buf_addch(&b, ',');
	out = kiln_arena_strdup(a, b.ptr);
	kiln_buf_release(&b);
	return out ? out : "";
}

/* [projects] The project a job goes to: the one named (a farm admin any, other tokens only
 * their own: another answers as a project that does not exist), else the token's; jobs
 * without a token (webhooks) go to default. */
static kiln_rc job_project(struct scheduler *s, struct api_req *req,
                           const struct scheduler_request *r, int64_t *id, struct kiln_err *err)
{
	struct scheduler_project p = {0};
	bool admin = (api_req_scopes(req) & API_SCOPE_ADMIN) != 0;
	kiln_rc rc;

	*id = api_req_group(req) > 0 ? api_req_group(req) : SCHED_PROJECT_DEFAULT;
	if (r->project_id > 0) {
		*id = r->project_id;
		return KILN_OK;
	}
	if (!r->project || !*r->project)
		return KILN_OK;
	rc = s->store->ops->project_get(s->store, 0, r->project, api_req_arena(req), &p, err);
	if (rc == KILN_ENOTFOUND || (!rc && !admin && p.id != *id)) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_ENOTFOUND, "field 'project': no project '%.64s'",
		                    r->project);
	}
	if (!rc)
		*id = p.id;
	return rc;
}

/* [projects] A job names only a root configuration its project may use (the project's
 * roots; none listed: any). */
static kiln_rc job_root_allowed(struct scheduler *s, struct api_req *req,
                                const struct scheduler_request *r, int64_t project,
                                struct kiln_err *err)
{
	struct scheduler_project p = {0};
	size_t len;
	kiln_rc rc;

	if (!r->root || !*r->root)
		return KILN_OK;
	rc = s->store->ops->project_get(s->store, project, NULL, api_req_arena(req), &p, err);
	if (rc || !p.roots || !*p.roots)
		return rc;
	len = strlen(r->root);
	for (const char *x = p.roots; *x;) {
		size_t n = strcspn(x, ",");

		if (n == len && !strncmp(x, r->root, len))
			return KILN_OK;
		x += n + (x[n] == ',');
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "field 'root': project '%s' may use only the roots %s, not '%s'",
	                    p.name, p.roots, r->root);
}

kiln_rc scheduler_repo_owned(struct scheduler *s, struct api_req *req, const char *repo,
                             int64_t project, struct kiln_err *err)
{
	int64_t owner;

	if (!repo || !*repo)
		return KILN_OK;
	owner = scheduler_repo_project(s, api_req_arena(req), repo, err);
	if (owner < 0)
		return err->code;
	if (owner != project)
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "field 'repository': repository '%s' belongs to another project", repo);
	return KILN_OK;
}

kiln_rc scheduler_job_prepare(struct scheduler *s, struct api_req *req,
                              const struct scheduler_request *r, struct scheduler_job *j,
                              struct kiln_buf *reqjson, struct kiln_buf *manifest,
                              struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_buf words = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *sign_key = "";
	char spec_sha[65] = "";
	kiln_rc rc;

	rc = options_check(s, r, &sign_key, err);
	if (!rc && r->reruns && r->reproduce && r->reruns != r->reproduce)
		rc = kiln_err_set(err, KILN_EINVAL,
		                  "fields 'reruns' and 'reproduce' name the same count: give one");
	if (!rc)
		rc = scheduler_vary_check(&r->variations, &words, err);
	if (!rc)
		j->variations = kiln_arena_strdup(a, words.ptr);
	kiln_buf_release(&words);
	if (!rc && !j->variations)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = inputs_present(s, r, err);
	if (!rc && r->spec)
		rc = scheduler_blob_put_mem(s, r->spec, strlen(r->spec), spec_sha, err);
	if (!rc)
		rc = idem_key_get(req, &j->idem_key, err);
	if (rc)
		return rc;
	request_json(r, r->spec ? spec_sha : NULL, sign_key, r->timeout ? r->timeout : 3 * 3600,
	             reqjson);
	rc = kiln_buf_finish(reqjson, err);
	if (!rc)
		rc = manifest_json(r, r->spec ? spec_sha : NULL, manifest, j->content_key, err);
	if (rc)
		return rc;
	j->priority = r->priority;
	j->arch = r->arch ? r->arch : "";
	j->tags = tags_joined(a, &r->tags);
	j->spec_name = r->spec      ? r->spec_name
	               : r->has_git ? util_path_basename(r->git.spec)
	                            : r->srpm.name;
	j->request = reqjson->ptr;
	j->manifest = manifest->ptr;
	j->sign_key = sign_key;
	j->token_id = api_req_token_id(req);
	j->created_ms = util_clock_wall_ms();
	rc = job_project(s, req, r, &j->project_id, err);
	if (!rc)
		rc = scheduler_repo_owned(s, req, r->repository, j->project_id, err);
	if (!rc)
		rc = job_root_allowed(s, req, r, j->project_id, err);
	if (rc)
		return rc;
	j->max_attempts = r->max_attempts ? r->max_attempts : s->cfg->max_attempts;
	j->timeout_s = r->timeout ? r->timeout : 3 * 3600;
	j->reruns = r->reruns ? r->reruns : r->reproduce;
	return KILN_OK;
}
