/*
 * project.c - projects (issue 27): a project owns jobs, tokens and repositories, and the
 * grant shares workers between projects (policy.c). The REST handlers create, list, show,
 * change and delete them (docs/api.md "Projects"); what a token may see of another
 * project's is http_req.c's.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

kiln_rc scheduler_project_name_check(const char *name, struct kiln_err *err)
{
	size_t len = strlen(name), i;

	if (!len || len > 64)
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'name': a project name has 1 to 64 bytes");
	for (i = 0; i < len; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		          (i && (c == '-' || c == '_' || c == '.'));

		if (!ok)
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'name': a project name holds lowercase letters, "
			                    "digits and (after the first) '-', '_', '.'");
	}
	return KILN_OK;
}

/* Settings as given (each optional): the body of create and of change. */
struct project_body {
	const char *name;
	bool public_read, has_public;
	int64_t max_running;
	bool has_max;
	const char *arch_caps;
	struct api_strlist repos;
	bool has_repos;
	struct api_strlist roots; /* the root configurations its jobs may use (none: any) */
	bool has_roots;
	int64_t key_days; /* create: the key's lifetime (default KEY_DAYS) */
};

#define KEY_DAYS 730

#define PB(f) offsetof(struct project_body, f)
static const struct api_field create_fields[] = {
    {"name", API_F_STR, true, PB(name), 0, 64, NULL, 0, 0},
    {"public_read", API_F_BOOL, false, PB(public_read), 0, 0, NULL, 0, PB(has_public)},
    {"max_running", API_F_INT, false, PB(max_running), 0, 1000000, NULL, 0, PB(has_max)},
    {"arch_caps", API_F_STR, false, PB(arch_caps), 0, 1024, NULL, 0, 0},
    {"repositories", API_F_STRLIST, false, PB(repos), 0, 1000, NULL, 0, PB(has_repos)},
    {"roots", API_F_STRLIST, false, PB(roots), 0, 256, NULL, 0, PB(has_roots)},
    {"key_days", API_F_INT, false, PB(key_days), 1, 36500, NULL, 0, 0},
    API_FIELD_END,
};
/* a change names the project in its path */
static const struct api_field change_fields[] = {
    {"public_read", API_F_BOOL, false, PB(public_read), 0, 0, NULL, 0, PB(has_public)},
    {"max_running", API_F_INT, false, PB(max_running), 0, 1000000, NULL, 0, PB(has_max)},
    {"arch_caps", API_F_STR, false, PB(arch_caps), 0, 1024, NULL, 0, 0},
    {"repositories", API_F_STRLIST, false, PB(repos), 0, 1000, NULL, 0, PB(has_repos)},
    {"roots", API_F_STRLIST, false, PB(roots), 0, 256, NULL, 0, PB(has_roots)},
    API_FIELD_END,
};
#undef PB

/* The owner of repository repo in o (default when not listed). */
static int64_t owner_of(const struct scheduler_repo_owner *o, size_t n, const char *repo)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(o[i].repo, repo))
			return o[i].project_id;
	return SCHED_PROJECT_DEFAULT;
}

static bool listed(const struct api_strlist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return true;
	return false;
}

/* Check that every repository in b is configured and free for project id (default's or
 * its own already): KILN_EINVAL naming the field, KILN_ECONFLICT for another project's. */
static kiln_rc repos_check(struct scheduler *s, const struct project_body *b, int64_t id,
                           const struct scheduler_repo_owner *o, size_t n, struct kiln_err *err)
{
	size_t i, k;

	for (i = 0; b->has_repos && i < b->repos.n; i++) {
		const char *r = b->repos.v[i];
		int64_t owner = owner_of(o, n, r);

		for (k = 0; k < s->cfg->nrepos && strcmp(s->cfg->repos[k].name, r); k++)
			;
		if (k == s->cfg->nrepos)
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'repositories': no repository '%.128s' in "
			                    "[repositories]",
			                    r);
		if (owner != SCHED_PROJECT_DEFAULT && owner != id)
			return kiln_err_set(
			    err, KILN_ECONFLICT,
			    "field 'repositories': '%.128s' belongs to another project", r);
	}
	return KILN_OK;
}

/* Publish again the repositories project id owned (o) or b gives it: their key file names
 * the project's key (problems are logged; the next publish writes it). */
static void repos_republish(struct scheduler *s, const struct project_body *b, int64_t id,
                            const struct scheduler_repo_owner *o, size_t n)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < n; i++)
		if (o[i].project_id == id && scheduler_publish_regenerate(s, o[i].repo, &err))
			kiln_log_err(KILN_LOG_WARN, &err), kiln_err_clear(&err);
	for (i = 0; b && b->has_repos && i < b->repos.n; i++)
		if (scheduler_publish_regenerate(s, b->repos.v[i], &err))
			kiln_log_err(KILN_LOG_WARN, &err), kiln_err_clear(&err);
}

/* Give project id the repositories of b, and those it had but b does not list back to
 * default. */
static kiln_rc repos_apply(struct scheduler *s, const struct project_body *b, int64_t id,
                           const struct scheduler_repo_owner *o, size_t n, struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	if (!b->has_repos)
		return KILN_OK;
	for (i = 0; !rc && i < n; i++)
		if (o[i].project_id == id && !listed(&b->repos, o[i].repo))
			rc = s->store->ops->repo_owner_set(s->store, o[i].repo,
			                                   SCHED_PROJECT_DEFAULT, err);
	for (i = 0; !rc && i < b->repos.n; i++)
		rc = s->store->ops->repo_owner_set(s->store, b->repos.v[i], id, err);
	return rc;
}

/* The root configuration names b gives, comma-joined into p->roots (in a). */
static kiln_rc roots_apply(const struct project_body *b, struct scheduler_project *p,
                           struct kiln_arena *a, struct kiln_err *err)
{
	struct kiln_buf j = KILN_BUF_INIT(KILN_LIMIT_LINE);
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < b->roots.n; i++) {
		const char *r = b->roots.v[i];

		if (!*r || strcspn(r, ", \t/") != strlen(r))
			rc = kiln_err_set(
			    err, KILN_EINVAL,
			    "field 'roots[%zu]': '%.64s' is not a root configuration name", i, r);
		kiln_buf_addf(&j, "%s%s", i ? "," : "", r);
	}
	if (!rc)
		rc = kiln_buf_finish(&j, err);
	if (!rc) {
		p->roots = kiln_arena_strndup(a, j.ptr ? j.ptr : "", j.len);
		if (!p->roots)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	kiln_buf_release(&j);
	return rc;
}

/* b's settings over p's; KILN_EINVAL naming a bad field. */
static kiln_rc project_apply(const struct project_body *b, struct scheduler_project *p,
                             struct kiln_arena *a, struct kiln_err *err)
{
	if (b->has_roots && roots_apply(b, p, a, err))
		return err->code;
	if (b->has_public)
		p->public_read = b->public_read;
	if (b->has_max)
		p->max_running = b->max_running;
	if (b->arch_caps) {
		if (scheduler_arch_caps_check(b->arch_caps, err))
			return KILN_EINVAL;
		p->arch_caps = b->arch_caps;
	}
	return KILN_OK;
}

void scheduler_project_json(struct scheduler *s, struct api_jw *w,
                            const struct scheduler_project *p, const struct scheduler_repo_owner *o,
                            size_t n)
{
	size_t i;

	api_jw_obj(w);
	api_jw_kint(w, "id", p->id);
	api_jw_kstr(w, "name", p->name);
	api_jw_kint(w, "created", p->created_ms);
	api_jw_kbool(w, "public_read", p->public_read);
	api_jw_kint(w, "max_running", p->max_running);
	api_jw_kstr(w, "arch_caps", p->arch_caps ? p->arch_caps : "");
	api_jw_key(w, "roots");
	api_jw_arr(w);
	for (const char *r = p->roots ? p->roots : ""; *r;) {
		size_t len = strcspn(r, ",");

		api_jw_strn(w, r, len);
		r += len + (r[len] == ',');
	}
	api_jw_end(w);
	api_jw_key(w, "key_expires");
	if (p->key_expires_ms)
		api_jw_int(w, p->key_expires_ms);
	else
		api_jw_null(w);
	api_jw_key(w, "repositories");
	api_jw_arr(w);
	for (i = 0; i < s->cfg->nrepos; i++)
		if (owner_of(o, n, s->cfg->repos[i].name) == p->id)
			api_jw_str(w, s->cfg->repos[i].name);
	api_jw_end(w);
	api_jw_end(w);
}

/* May the caller see project p? A farm admin all, a token its own, anonymous public ones. */
static bool project_visible(const struct api_req *req, const struct scheduler_project *p)
{
	if (scheduler_reads_all(req))
		return true;
	if (api_req_token_id(req) < 0)
		return p->public_read;
	return p->id == api_req_group(req);
}

/* May the caller change project p (its settings, its key)? The farm's admin any, a
 * project's admin its own (but not which repositories it owns: the farm's configuration). */
static kiln_rc project_admin(const struct api_req *req, const struct scheduler_project *p,
                             const struct project_body *b, struct kiln_err *err)
{
	if (scheduler_reads_all(req))
		return KILN_OK;
	if (p->id != api_req_group(req) || !(api_req_scopes(req) & API_SCOPE_GROUP_ADMIN))
		return kiln_err_set(err, KILN_EPRIV,
		                    "only the farm's admin or this project's admin "
		                    "may change the project");
	if (b && b->has_repos)
		return kiln_err_set(err, KILN_EPRIV,
		                    "field 'repositories': only the farm's admin "
		                    "gives repositories");
	if (b && b->has_roots)
		return kiln_err_set(err, KILN_EPRIV,
		                    "field 'roots': only the farm's admin "
		                    "says which roots a project uses");
	return KILN_OK;
}

/* The project named in the path, for a caller that may see it: KILN_ENOTFOUND else. */
static kiln_rc project_param(struct scheduler *s, struct api_req *req, struct scheduler_project *p,
                             struct kiln_err *err)
{
	const char *name = api_req_param(req, 0);
	kiln_rc rc;

	rc = s->store->ops->project_get(s->store, 0, name, api_req_arena(req), p, err);
	if (!rc && !project_visible(req, p))
		rc = kiln_err_set(err, KILN_ENOTFOUND, "no project '%.64s'", name);
	return rc;
}

void scheduler_h_project_create(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena *a = api_req_arena(req);
	struct project_body b = {0};
	struct scheduler_project p = {0};
	struct scheduler_repo_owner *o = NULL;
	const char *body;
	struct api_jw w;
	char loc[128];
	size_t len, n = 0;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = api_json_decode(body, len, create_fields, API_DECODE_STRICT, &b, a, &err);
	if (!rc)
		rc = scheduler_project_name_check(b.name, &err);
	p.name = b.name;
	p.arch_caps = "";
	p.roots = "";
	p.created_ms = util_clock_wall_ms();
	if (!rc)
		rc = project_apply(&b, &p, a, &err);
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &n, &err);
	if (!rc)
		rc = repos_check(s, &b, -1, o, n, &err);
	/* a name taken is refused before its key is made: the file holds the project's key */
	if (!rc && !s->store->ops->project_get(s->store, 0, p.name, a,
	                                       &(struct scheduler_project){0}, &err))
		rc = kiln_err_set(&err, KILN_EEXIST, "project '%s' exists", p.name);
	else if (rc == KILN_OK)
		kiln_err_clear(&err);
	if (!rc)
		rc = scheduler_project_key_make(s, &p, b.key_days ? b.key_days : KEY_DAYS, &err);
	if (!rc)
		rc = s->store->ops->project_insert(s->store, &p, &p.id, &err);
	/* a failure past here leaves the project made, without (all) its repositories: the
	 * error says so, and a change gives them */
	if (!rc)
		rc = repos_apply(s, &b, p.id, o, n, &err);
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	kiln_log(KILN_LOG_INFO, "project '%s' (id %lld) created", p.name, (long long)p.id);
	repos_republish(s, &b, p.id, NULL, 0);
	api_jw_init(&w, &resp->body);
	scheduler_project_json(s, &w, &p, o, n);
	scheduler_reply_json(resp, 201);
	snprintf(loc, sizeof(loc), "/api/v1/projects/%s", p.name);
	api_resp_header(resp, "Location", loc);
}

void scheduler_h_projects(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project *v = NULL;
	struct scheduler_repo_owner *o = NULL;
	struct api_jw w;
	size_t n = 0, no = 0, i;

	if (s->store->ops->projects_list(s->store, api_req_arena(req), &v, &n, &err) ||
	    s->store->ops->repo_owners(s->store, api_req_arena(req), &o, &no, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "projects");
	api_jw_arr(&w);
	for (i = 0; i < n; i++)
		if (project_visible(req, &v[i]))
			scheduler_project_json(s, &w, &v[i], o, no);
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* Leased or building jobs of project id (from run). */
static int64_t running_of(const struct scheduler_project_run *run, size_t n, int64_t id)
{
	int64_t total = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (run[i].project_id == id)
			total += run[i].n;
	return total;
}

void scheduler_h_project(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {0};
	struct scheduler_project_run *run = NULL;
	struct scheduler_repo_owner *o = NULL;
	struct scheduler_counts c;
	int64_t queued = 0;
	size_t nrun = 0, no = 0, i;
	struct api_jw w;
	kiln_rc rc;

	rc = project_param(s, req, &p, &err);
	if (!rc)
		rc = s->store->ops->project_running(s->store, a, &run, &nrun, &err);
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &no, &err);
	if (!rc)
		rc = s->store->ops->counts(s->store, a, &c, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	for (i = 0; i < c.nqueued_project; i++)
		if (!strcmp(c.queued_project[i], p.name))
			queued = c.queued_project_n[i];
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "project");
	scheduler_project_json(s, &w, &p, o, no);
	api_jw_kint(&w, "queued", queued);
	api_jw_kint(&w, "running", running_of(run, nrun, p.id));
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

void scheduler_h_project_change(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_arena *a = api_req_arena(req);
	struct project_body b = {0};
	struct scheduler_project p = {0};
	struct scheduler_repo_owner *o = NULL;
	const char *body;
	struct api_jw w;
	size_t len, n = 0;
	kiln_rc rc;

	rc = project_param(s, req, &p, &err);
	body = api_req_body(req, &len);
	if (!rc)
		rc = api_json_decode(body, len, change_fields, API_DECODE_STRICT, &b, a, &err);
	if (!rc)
		rc = project_admin(req, &p, &b, &err);
	if (!rc)
		rc = project_apply(&b, &p, a, &err);
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &n, &err);
	if (!rc && b.has_repos && p.id == SCHED_PROJECT_DEFAULT)
		rc = kiln_err_set(&err, KILN_EINVAL,
		                  "field 'repositories': default holds every repository no other "
		                  "project was given; give them to another project instead");
	if (!rc)
		rc = repos_check(s, &b, p.id, o, n, &err);
	if (!rc)
		rc = s->store->ops->project_update(s->store, &p, &err);
	if (!rc)
		rc = repos_apply(s, &b, p.id, o, n, &err);
	if (!rc && b.has_repos)
		repos_republish(s, &b, p.id, o, n); /* those it had and those it has */
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	scheduler_project_json(s, &w, &p, o, n);
	scheduler_reply_json(resp, 200);
	scheduler_queue_changed(s); /* a cap raised may let held jobs go */
}

void scheduler_h_project_delete(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {0};
	kiln_rc rc;

	rc = project_param(s, req, &p, &err);
	if (!rc && p.id == SCHED_PROJECT_DEFAULT)
		rc = kiln_err_set(&err, KILN_ECONFLICT, "the default project cannot be deleted");
	if (!rc)
		rc = s->store->ops->project_delete(s->store, p.id, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	scheduler_project_key_remove(s, p.name);
	kiln_log(KILN_LOG_INFO, "project '%s' (id %lld) deleted", p.name, (long long)p.id);
	kiln_buf_addstr(&resp->body, "{}\n");
}

/* GET /api/v1/projects/{name}/key: the project's public key (armored), for rpmkeys. */
void scheduler_h_project_key(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {0};
	struct sign_key *key = NULL;
	kiln_rc rc;

	rc = project_param(s, req, &p, &err);
	if (!rc)
		rc = scheduler_project_key_load(s, p.name, &key, &err);
	if (!rc)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, &resp->body, &err);
	sign_key_free(key);
	if (rc) {
		kiln_buf_reset(&resp->body);
		api_resp_from_err(resp, &err);
		return;
	}
	resp->content_type = "application/pgp-keys";
}

struct extend_body {
	int64_t days;
};

static const struct api_field extend_fields[] = {
    {"days", API_F_INT, false, offsetof(struct extend_body, days), 1, 36500, NULL, 0, 0},
    API_FIELD_END,
};

/* POST /api/v1/projects/{name}/key/extend {days}: the same key, expiring days from now. */
void scheduler_h_project_key_extend(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_project p = {0};
	struct scheduler_repo_owner *o = NULL;
	struct extend_body b = {0};
	const char *body;
	struct api_jw w;
	size_t len, n = 0;
	kiln_rc rc;

	rc = project_param(s, req, &p, &err);
	body = api_req_body(req, &len);
	if (!rc)
		rc = project_admin(req, &p, NULL, &err);
	if (!rc && len)
		rc = api_json_decode(body, len, extend_fields, API_DECODE_STRICT, &b, a, &err);
	if (!rc)
		rc = scheduler_project_key_extend(s, &p, b.days ? b.days : KEY_DAYS, &err);
	if (!rc)
		rc = s->store->ops->project_update(s->store, &p, &err);
	if (!rc)
		rc = s->store->ops->repo_owners(s->store, a, &o, &n, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	kiln_log(KILN_LOG_INFO, "project '%s': key extended to %lld", p.name,
	         (long long)p.key_expires_ms / 1000);
	repos_republish(s, NULL, p.id, o, n); /* the extended certificate beside them */
	api_jw_init(&w, &resp->body);
	scheduler_project_json(s, &w, &p, o, n);
	scheduler_reply_json(resp, 200);
}
