/*
 * hooks.c - POST /api/v1/hooks/{github|gitlab|forgejo}: forge webhooks in (issue 26).
 *
 * A delivery is verified before anything else, against the secret of each [forge] of that
 * kind (the matching one names the forge), in constant time. Every verified delivery is
 * stored with the answer it got, by the forge's delivery id, so a redelivery gets the same
 * answer and makes no job; the jobs carry an Idempotency-Key of the delivery too, so two
 * copies racing in make one. The answer says what was done: {"jobs":[ids]} or
 * {"ignored":"why"} - never a silent 200.
 */
#include "util/util.h"

#include <ctype.h>

#include "sources/sources.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define SECRET_MAX 4096
#define DELIVERY_MAX 128

static const char *const kind_names[] = {
    [SCHED_FORGE_GITHUB] = "github",
    [SCHED_FORGE_GITLAB] = "gitlab",
    [SCHED_FORGE_FORGEJO] = "forgejo",
};

/* The secret in a file, without a trailing newline. */
static kiln_rc secret_read(const char *path, struct kiln_buf *out, struct kiln_err *err)
{
	kiln_rc rc = util_read_file(path, SECRET_MAX, out, err);

	while (!rc && out->len && isspace((unsigned char)out->ptr[out->len - 1]))
		out->ptr[--out->len] = '\0';
	if (!rc && !out->len)
		rc = kiln_err_set(err, KILN_EINVAL, "%s is empty", path);
	return rc;
}

/* GitHub "sha256=HEX", Forgejo and Gitea "HEX": an HMAC-SHA256 of the raw body. */
static bool hmac_ok(const struct kiln_buf *secret, const char *sig, const void *body, size_t len)
{
	unsigned char mac[32];
	char hex[65];

	if (!sig)
		return false;
	if (!strncmp(sig, "sha256=", 7))
		sig += 7;
	if (strlen(sig) != 64 || util_hmac_sha256(secret->ptr, secret->len, body, len, mac, NULL))
		return false;
	util_hex_encode(mac, sizeof(mac), hex);
	return util_mem_equal_ct(hex, sig, 64);
}

/* GitLab sends the secret itself: compared through digests so the time says nothing of
 * its length either. */
static bool token_ok(const struct kiln_buf *secret, const char *token)
{
	unsigned char a[UTIL_DIGEST_MAX], b[UTIL_DIGEST_MAX];

	if (!token || util_digest_mem(UTIL_DIGEST_SHA256, secret->ptr, secret->len, a, NULL) ||
	    util_digest_mem(UTIL_DIGEST_SHA256, token, strlen(token), b, NULL))
		return false;
	return util_mem_equal_ct(a, b, 32);
}

static bool delivery_verified(const struct scheduler_forge_cfg *f, struct api_req *req,
                              const void *body, size_t len)
{
	struct kiln_buf secret = KILN_BUF_INIT(SECRET_MAX + 1);
	const char *sig;
	bool ok = false;

	if (!f->has_kind || !f->secret_file || secret_read(f->secret_file, &secret, NULL))
		goto out;
	if (f->kind == SCHED_FORGE_GITLAB) {
		ok = token_ok(&secret, api_req_header(req, "X-Gitlab-Token"));
		goto out;
	}
	sig = f->kind == SCHED_FORGE_GITHUB ? api_req_header(req, "X-Hub-Signature-256") : NULL;
	if (!sig)
		sig = api_req_header(req, "X-Forgejo-Signature");
	if (!sig)
		sig = api_req_header(req, "X-Gitea-Signature");
	ok = hmac_ok(&secret, sig, body, len);
out:
	kiln_buf_release(&secret);
	return ok;
}

/* The [forge] of this kind whose secret verifies the delivery, NULL for none. */
static const struct scheduler_forge_cfg *forge_verify(const struct scheduler_config *cfg,
                                                      enum scheduler_forge_kind kind,
                                                      struct api_req *req, const void *body,
                                                      size_t len)
{
	size_t i;

	for (i = 0; i < cfg->nforges; i++)
		if (cfg->forges[i].kind == kind &&
		    delivery_verified(&cfg->forges[i], req, body, len))
			return &cfg->forges[i];
	return NULL;
}

static const char *header_any(struct api_req *req, const char *a, const char *b)
{
	const char *v = api_req_header(req, a);

	return v ? v : b ? api_req_header(req, b) : NULL;
}

/* The forge's id of the delivery: printable, at most DELIVERY_MAX bytes. */
static kiln_rc delivery_id(enum scheduler_forge_kind kind, struct api_req *req, const char **out,
                           struct kiln_err *err)
{
	const char *name = kind == SCHED_FORGE_GITHUB   ? "X-GitHub-Delivery"
	                   : kind == SCHED_FORGE_GITLAB ? "X-Gitlab-Event-UUID"
	                                                : "X-Gitea-Delivery";
	const char *v =
	    kind == SCHED_FORGE_FORGEJO
	        ? header_any(req, "X-Forgejo-Delivery", "X-Gitea-Delivery")
	        : header_any(req, name,
	                     kind == SCHED_FORGE_GITLAB ? "X-Gitlab-Webhook-UUID" : NULL);
	const char *p;

	if (!v || !*v || strlen(v) > DELIVERY_MAX)
		return kiln_err_set(err, KILN_EINVAL, "header '%s': missing or over %d bytes", name,
		                    DELIVERY_MAX);
	for (p = v; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return kiln_err_set(err, KILN_EINVAL, "header '%s': not printable", name);
	*out = v;
	return KILN_OK;
}

static const char *event_name(unsigned kind)
{
	switch (kind) {
	case SCHED_HOOK_PUSH:
		return "push";
	case SCHED_HOOK_TAG:
		return "tag";
	case SCHED_HOOK_PULL_REQUEST:
		return "pull_request";
	default:
		return "comment";
	}
}

/* What the [hook] says of the event: NULL to build, else why not (in a). */
static const char *hook_refuses(const struct scheduler_hook_cfg *h,
                                const struct scheduler_hook_payload *ev, struct kiln_arena *a)
{
	if (!(h->events & ev->kind))
		return kiln_arena_printf(a, "event '%s' is not configured for %s",
		                         event_name(ev->kind), h->project);
	/* a retrigger rebuilds what a pull request's event already let through */
	if (ev->kind != SCHED_HOOK_TAG && ev->kind != SCHED_HOOK_COMMENT && *h->branches &&
	    !scheduler_config_word_in(h->branches, ev->branch))
		return kiln_arena_printf(a, "branch '%s' is not configured for %s", ev->branch,
		                         h->project);
	return NULL;
}

/* A retrigger comment on GitHub or Forgejo names no commit: the pull request's last
 * build's is built again. */
static kiln_rc retry_target(struct scheduler *s, const struct scheduler_forge_cfg *f,
                            struct scheduler_hook_payload *ev, struct kiln_arena *a,
                            const char **ignored, struct kiln_err *err)
{
	struct scheduler_hook_job last = {0};
	kiln_rc rc;

	if (*ev->sha)
		return KILN_OK;
	rc = s->store->ops->hook_job_last(s->store, f->name, ev->project, ev->ref, a, &last, err);
	if (rc == KILN_ENOTFOUND) {
		*ignored = kiln_arena_printf(a, "no earlier build of %s to retry", ev->ref);
		return KILN_OK;
	}
	if (!rc) {
		ev->sha = last.sha;
		ev->url = last.url;
	}
	return rc;
}

/* The status context: kiln/<root or arch>, and the spec when a hook builds several. */
static const char *job_context(const struct scheduler_hook_cfg *h, const char *spec,
                               struct kiln_arena *a)
{
	const char *base = h->root ? h->root : h->arch ? h->arch : "build";

	if (!strpbrk(h->spec, " \t"))
		return kiln_arena_printf(a, "kiln/%s", base);
	return kiln_arena_printf(a, "kiln/%s/%s", base, util_path_basename(spec));
}

/* The POST /api/v1/jobs body this job would have had. */
static void job_body(const struct scheduler_hook_cfg *h, const struct scheduler_hook_payload *ev,
                     const char *spec, struct kiln_buf *out)
{
	struct api_jw w;

	api_jw_init(&w, out);
	api_jw_obj(&w);
	api_jw_key(&w, "git");
	api_jw_obj(&w);
	api_jw_kstr(&w, "url", ev->url);
	api_jw_kstr(&w, "ref", ev->sha);
	api_jw_kstr(&w, "spec", spec);
	api_jw_end(&w);
	if (h->root)
		api_jw_kstr(&w, "root", h->root);
	if (h->arch)
		api_jw_kstr(&w, "arch", h->arch);
	if (h->reruns)
		api_jw_kint(&w, "reruns", h->reruns);
	if (h->format) {
		api_jw_key(&w, "formats");
		api_jw_arr(&w);
		api_jw_str(&w, h->format);
		api_jw_end(&w);
	}
	/* pull requests never publish: anyone can open one */
	if (h->publish && (ev->kind == SCHED_HOOK_PUSH || ev->kind == SCHED_HOOK_TAG))
		api_jw_kstr(&w, "repository", h->publish);
	api_jw_end(&w);
}

/* [projects] The farm project a [hook]'s jobs go to (its key "project"). */
static kiln_rc hook_project(struct scheduler *s, const struct scheduler_hook_cfg *h,
                            struct kiln_arena *a, int64_t *id, struct kiln_err *err)
{
	struct scheduler_project p = {0};
	kiln_rc rc = s->store->ops->project_get(s->store, 0, h->kiln_project, a, &p, err);

	if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL, "[hook %s] project '%s': no such project",
		                    h->project, h->kiln_project);
	}
	if (!rc)
		*id = p.id;
	return rc;
}

/* One job of the delivery; an existing one (a racing copy of it) is answered again. */
static kiln_rc job_make(struct scheduler *s, struct api_req *req,
                        const struct scheduler_forge_cfg *f, const struct scheduler_hook_cfg *h,
                        const struct scheduler_hook_payload *ev, const char *spec, const char *idem,
                        int64_t *id, struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf reqjson = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf manifest = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_arena *a = api_req_arena(req);
	struct scheduler_request r;
	struct scheduler_job j = {0};
	struct scheduler_hook_job hj = {0};
	struct scheduler_outbox_item status;
	kiln_rc rc, prc = KILN_ENOTFOUND;

	job_body(h, ev, spec, &body);
	rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = scheduler_request_parse(body.ptr, body.len, a, &r, err);
	if (!rc && h->kiln_project)
		rc = hook_project(s, h, a, &r.project_id, err);
	if (!rc)
		rc = scheduler_job_prepare(s, req, &r, &j, &reqjson, &manifest, err);
	if (rc)
		goto out;
	j.idem_key = idem;
	rc = s->store->ops->job_insert(s->store, &j, id, err);
	if (rc == KILN_EEXIST)
		rc = KILN_OK;
	hj = (struct scheduler_hook_job){
	    *id, f->name, ev->project, ev->ref, ev->url, ev->sha, job_context(h, spec, a)};
	if (!rc && !hj.context)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc) {
		/* the pending status with the hook job: a crash cannot separate them */
		prc = scheduler_hook_status_item(s, &hj, "pending", "queued", false, "queued", a,
		                                 &status, err);
		if (prc && prc != KILN_ENOTFOUND)
			rc = prc;
	}
	if (!rc)
		rc = s->store->ops->hook_job_put(s->store, &hj, prc ? NULL : &status, err);
	if (!rc && !prc)
		scheduler_outbox_kick(s);
	if (!rc && !s->store->ops->job_get(s->store, *id, a, &j, NULL))
		scheduler_webhook_job_state(s, &j);
out:
	kiln_buf_release(&body);
	kiln_buf_release(&reqjson);
	kiln_buf_release(&manifest);
	return rc;
}

/* Build each spec of the hook; the answer into w. */
static kiln_rc jobs_make(struct scheduler *s, struct api_req *req,
                         const struct scheduler_forge_cfg *f, const struct scheduler_hook_cfg *h,
                         const struct scheduler_hook_payload *ev, const char *delivery,
                         struct api_jw *w, struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_str rest = kiln_str_from(h->spec), word;
	kiln_rc rc = KILN_OK;
	int64_t id = 0;
	unsigned n = 0;

	api_jw_obj(w);
	api_jw_key(w, "jobs");
	api_jw_arr(w);
	while (!rc) {
		const char *spec, *idem;
		size_t i = 0;

		rest = kiln_str_ltrim(rest);
		while (i < rest.len && !isspace((unsigned char)rest.ptr[i]))
			i++;
		if (!i)
			break;
		word = kiln_str_make(rest.ptr, i);
		rest = kiln_str_make(rest.ptr + i, rest.len - i);
		spec = kiln_arena_strndup(a, word.ptr, word.len);
		idem = kiln_arena_printf(a, "hook:%s:%s:%u", f->name, delivery, n++);
		if (!spec || !idem)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		rc = job_make(s, req, f, h, ev, spec, idem, &id, err);
		if (!rc)
			api_jw_int(w, id);
	}
	api_jw_end(w);
	api_jw_end(w);
	return rc;
}

/* The first of the hook's specs missing at the event's commit, NULL when all are there.
 * The scheduler's own mirror of the repository (data_dir/git-cache) is fetched only when it
 * lacks the commit. A repository it cannot reach does not stop the build: the worker may
 * reach it, and an event is not dropped on a guess (the problem is logged). */
static const char *spec_missing(struct scheduler *s, const struct scheduler_hook_cfg *h,
                                const struct scheduler_hook_payload *ev, struct kiln_arena *a)
{
	struct kiln_buf cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_fetch_opts o = {.connect_timeout = 10, .low_speed_time = 20, .retries = 1};
	struct kiln_str rest = kiln_str_from(h->spec), word;
	struct kiln_err err = KILN_ERR_INIT;
	struct sources *src = NULL;
	const char *missing = NULL;
	bool found = true;

	kiln_buf_addf(&cache, "%s/git-cache", s->cfg->data_dir);
	if (kiln_buf_finish(&cache, &err))
		goto out;
	o.cache_dir = cache.ptr;
	if (sources_new(&o, &src, &err))
		goto out;
	for (;;) {
		const char *spec;
		size_t i = 0;

		rest = kiln_str_ltrim(rest);
		while (i < rest.len && !isspace((unsigned char)rest.ptr[i]))
			i++;
		if (!i)
			break;
		word = kiln_str_make(rest.ptr, i);
		rest = kiln_str_make(rest.ptr + i, rest.len - i);
		spec = kiln_arena_strndup(a, word.ptr, word.len);
		if (!spec || sources_git_has_file(src, ev->url, ev->sha, spec, &found, &err))
			break;
		if (!found) {
			missing = kiln_arena_printf(a, "spec %s missing at %s", spec, ev->sha);
			break;
		}
	}
out:
	if (err.code) {
		kiln_err_wrap(&err, "%s: cannot check the spec at %s", ev->project, ev->sha);
		kiln_log_err(KILN_LOG_WARN, &err);
	}
	sources_free(src);
	kiln_buf_release(&cache);
	return missing;
}

/* Decide and act on a verified, new delivery; its answer into out. */
static kiln_rc delivery_handle(struct scheduler *s, struct api_req *req,
                               const struct scheduler_forge_cfg *f,
                               struct scheduler_hook_payload *ev, const char *delivery,
                               struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	const struct scheduler_hook_cfg *h = NULL;
	const char *ignored = ev->ignored;
	struct api_jw w;
	kiln_rc rc = KILN_OK;

	if (!ignored) {
		h = scheduler_config_hook(s->cfg, ev->project);
		if (!h || !h->forge || !h->spec || strcmp(h->forge, f->name))
			ignored =
			    kiln_arena_printf(a, "no [hook %s] for forge %s", ev->project, f->name);
	}
	if (!ignored)
		ignored = hook_refuses(h, ev, a);
	if (!ignored && ev->kind == SCHED_HOOK_COMMENT)
		rc = retry_target(s, f, ev, a, &ignored, err);
	if (rc)
		return rc;
	if (!ignored)
		ignored = spec_missing(s, h, ev, a);
	api_jw_init(&w, out);
	if (ignored) {
		api_jw_obj(&w);
		api_jw_kstr(&w, "ignored", ignored);
		api_jw_end(&w);
		return KILN_OK;
	}
	return jobs_make(s, req, f, h, ev, delivery, &w, err);
}

static kiln_rc hook_kind(const char *name, enum scheduler_forge_kind *kind, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(kind_names); i++)
		if (name && !strcmp(name, kind_names[i])) {
			*kind = (enum scheduler_forge_kind)i;
			return KILN_OK;
		}
	if (name && !strcmp(name, "gitea")) {
		*kind = SCHED_FORGE_FORGEJO;
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_ENOTFOUND, "no hook for '%.32s' (github, gitlab or forgejo)",
	                    name ? name : "");
}

static const char *event_header(enum scheduler_forge_kind kind, struct api_req *req)
{
	if (kind == SCHED_FORGE_GITHUB)
		return api_req_header(req, "X-GitHub-Event");
	if (kind == SCHED_FORGE_FORGEJO)
		return header_any(req, "X-Forgejo-Event", "X-Gitea-Event");
	return api_req_header(req, "X-Gitlab-Event");
}

/* The event as stored: what kiln made of it, else the forge's name for it. */
static const char *event_stored(enum scheduler_forge_kind kind, struct api_req *req,
                                const struct scheduler_hook_payload *ev)
{
	const char *h = event_header(kind, req);

	if (ev->kind)
		return event_name(ev->kind);
	return h && strlen(h) < 64 ? h : "";
}

/* Keep a delivery that verified with its answer (resp: status and body), so a redelivery
 * gets the same and the delivery log shows it. */
static kiln_rc delivery_store(struct scheduler *s, const struct scheduler_forge_cfg *f,
                              enum scheduler_forge_kind kind, struct api_req *req,
                              const char *delivery, const struct scheduler_hook_payload *ev,
                              struct api_resp *resp, struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	struct scheduler_hook_delivery d;
	size_t n = resp->body.len;
	char *result;

	while (n && resp->body.ptr[n - 1] == '\n')
		n--;
	result = kiln_arena_strndup(a, resp->body.ptr ? resp->body.ptr : "", n);
	if (!result)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	d = (struct scheduler_hook_delivery){f->name,
	                                     delivery,
	                                     event_stored(kind, req, ev),
	                                     ev->project ? ev->project : "",
	                                     util_clock_wall_ms(),
	                                     result,
	                                     resp->status};
	return s->store->ops->hook_delivery_put(s->store, &d, err);
}

/* A redelivery: the first answer again, with its status. */
static void delivery_replay(const struct scheduler_hook_delivery *d, struct api_resp *resp)
{
	kiln_buf_addstr(&resp->body, d->result);
	scheduler_reply_json(resp, d->status >= 200 && d->status < 600 ? (int)d->status : 200);
}

/* A body that verifies but cannot be read is the sender's error: kept with the 400. */
static bool parse_refused(kiln_rc rc)
{
	return rc == KILN_EINVAL || rc == KILN_ESYNTAX || rc == KILN_ELIMIT || rc == KILN_EFORMAT;
}

void scheduler_h_hook(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	const struct scheduler_forge_cfg *f;
	struct scheduler_hook_payload ev = {0};
	struct scheduler_hook_delivery stored = {0};
	const char *body, *delivery = NULL;
	enum scheduler_forge_kind kind = SCHED_FORGE_GITHUB;
	size_t len;
	kiln_rc rc;

	rc = hook_kind(api_req_param(req, 0), &kind, &err);
	if (rc)
		goto fail;
	body = api_req_body(req, &len);
	f = forge_verify(s->cfg, kind, req, body, len);
	if (!f) {
		api_resp_error(resp, 401, "unauthorized",
		               "the delivery's signature or token does not verify");
		return;
	}
	rc = delivery_id(kind, req, &delivery, &err);
	if (rc)
		goto fail;
	rc = s->store->ops->hook_delivery_get(s->store, f->name, delivery, a, &stored, &err);
	if (!rc) {
		delivery_replay(&stored, resp);
		return;
	}
	if (rc != KILN_ENOTFOUND)
		goto fail;
	kiln_err_clear(&err);
	rc = scheduler_hook_parse(kind, event_header(kind, req), body, len, a, &ev, &err);
	if (rc && parse_refused(rc)) {
		api_resp_from_err(resp, &err);
		kiln_err_clear(&err);
		if (delivery_store(s, f, kind, req, delivery, &ev, resp, &err)) {
			kiln_err_wrap(&err, "webhook delivery %s", delivery);
			kiln_log_err(KILN_LOG_WARN, &err);
		}
		return;
	}
	if (!rc)
		rc = delivery_handle(s, req, f, &ev, delivery, &resp->body, &err);
	if (!rc)
		rc = kiln_buf_finish(&resp->body, &err);
	if (rc)
		goto fail;
	resp->status = 200;
	rc = delivery_store(s, f, kind, req, delivery, &ev, resp, &err);
	if (rc)
		goto fail;
	scheduler_reply_json(resp, 200);
	if (ev.kind && !ev.ignored)
		scheduler_queue_changed(s);
	return;
fail:
	kiln_buf_reset(&resp->body);
	api_resp_from_err(resp, &err);
}
