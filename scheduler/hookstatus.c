/*
 * hookstatus.c - commit statuses out (issue 26): a job a webhook made reports its state on
 * its commit through the forge's status API (GitHub and Forgejo POST
 * /repos/OWNER/REPO/statuses/SHA, GitLab POST /projects/ID/statuses/SHA).
 *
 * A status is an item of the durable outbox (outbox.c), its target the commit: the
 * commit's statuses arrive in the order they were queued, at least once, retried with
 * backoff, and a stop or a crash loses none. The first (pending, queued) is written with
 * the hook job itself; each later one has a key (the job, the state, the lease or the
 * attempt) that the store keeps once, so a job's end seen twice (by its completion and by
 * the recovery at start) is posted once.
 */
#include "util/util.h"

#include <ctype.h>
#include <jansson.h>

#include "scheduler/scheduler_int.h"

#define TOKEN_MAX 4096

kiln_rc scheduler_hook_status_item(const struct scheduler *s, const struct scheduler_hook_job *h,
                                   const char *state, const char *desc, bool verdict,
                                   const char *key, struct kiln_arena *a,
                                   struct scheduler_outbox_item *out, struct kiln_err *err)
{
	const struct scheduler_forge_cfg *f = scheduler_config_forge(s->cfg, h->forge);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct api_jw w;
	kiln_rc rc;

	if (!f || !*f->api_url)
		return KILN_ENOTFOUND; /* nowhere to post */
	api_jw_init(&w, &body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "state", state);
	api_jw_kstr(&w, "description", desc);
	api_jw_kbool(&w, "verdict", verdict);
	api_jw_end(&w);
	rc = kiln_buf_finish(&body, err);
	*out = (struct scheduler_outbox_item){
	    .kind = "status",
	    .target = kiln_arena_printf(a, "%s:%s@%s", h->forge, h->project, h->sha),
	    .dedup = kiln_arena_printf(a, "status:%lld:%s", (long long)h->job_id, key),
	    .job_id = h->job_id,
	    .body = rc ? NULL : kiln_arena_strdup(a, body.ptr),
	    .created_ms = util_clock_wall_ms(),
	};
	kiln_buf_release(&body);
	if (!rc && (!out->target || !out->dedup || !out->body))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return rc;
}

static void status_queue(struct scheduler *s, int64_t job_id, const char *state, const char *desc,
                         bool verdict, const char *key)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_hook_job h = {0};
	struct scheduler_outbox_item it;
	kiln_rc rc;

	if (!s->outbox || !s->cfg->nhooks)
		goto out;
	rc = s->store->ops->hook_job_get(s->store, job_id, &a, &h, &err);
	if (rc == KILN_ENOTFOUND)
		goto out; /* not a hook's job: nothing to report */
	if (!rc)
		rc = scheduler_hook_status_item(s, &h, state, desc, verdict, key, &a, &it, &err);
	if (rc == KILN_ENOTFOUND)
		goto out;
	if (rc) {
		kiln_err_wrap(&err, "job %lld: status %s", (long long)job_id, state);
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	scheduler_outbox_put(s, &it, 1);
out:
	kiln_arena_release(&a);
}

void scheduler_hook_status(struct scheduler *s, int64_t job_id, const char *state, const char *desc,
                           const char *key)
{
	status_queue(s, job_id, state, desc, false, key);
}

/* A rerun's end may settle its original's verdict: reproducible is a success, anything
 * else settled a failure, under a context of its own so the build's status stands. */
static void verdict_status(struct scheduler *s, int64_t orig_id)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_job o = {0};
	const char *v;

	if (s->store->ops->job_get(s->store, orig_id, &a, &o, NULL))
		goto out;
	v = o.repro_verdict ? o.repro_verdict : "";
	if (!strcmp(v, "reproducible"))
		status_queue(s, orig_id, "success", "reproducible", true, "verdict");
	else if (*v && strcmp(v, "pending"))
		status_queue(s, orig_id, "failure", v, true, "verdict");
out:
	kiln_arena_release(&a);
}

void scheduler_hook_job_ended(struct scheduler *s, const struct scheduler_job *j)
{
	char key[64];

	if (!s->outbox || !scheduler_state_final(j->state))
		return;
	if (j->rerun_of) {
		verdict_status(s, j->rerun_of);
		return;
	}
	/* the attempt in the key: a job retried after its end ends again */
	snprintf(key, sizeof(key), "end:%lld", (long long)j->attempts);
	if (j->state == SCHED_SUCCEEDED)
		scheduler_hook_status(s, j->id, "success", "built", key);
	else if (j->state == SCHED_FAILED)
		scheduler_hook_status(s, j->id, "failure", "the build failed", key);
	else
		scheduler_hook_status(s, j->id, "error", "cancelled", key);
}

/* kiln's state as the forge names it: GitHub and Forgejo have no running state. */
static const char *forge_state(enum scheduler_forge_kind kind, const char *st)
{
	if (kind != SCHED_FORGE_GITLAB)
		return strcmp(st, "running") ? st : "pending";
	if (!strcmp(st, "failure"))
		return "failed";
	if (!strcmp(st, "error"))
		return "canceled";
	return st;
}

/* What the outbox item says: state, description, verdict (stored by us: no outside input). */
struct status_fields {
	char state[16];
	char desc[128];
	bool verdict;
};

static bool status_fields_read(const char *body, struct status_fields *f)
{
	json_t *doc = json_loads(body, 0, NULL);
	const char *st, *d;
	bool ok;

	st = json_string_value(json_object_get(doc, "state"));
	d = json_string_value(json_object_get(doc, "description"));
	ok = st && d;
	if (ok) {
		snprintf(f->state, sizeof(f->state), "%s", st);
		snprintf(f->desc, sizeof(f->desc), "%s", d);
		f->verdict = json_is_true(json_object_get(doc, "verdict"));
	}
	json_decref(doc);
	return ok;
}

/* The status call: path and body. */
static void status_call(const struct scheduler *s, const struct scheduler_forge_cfg *f,
                        const struct scheduler_hook_job *h, const struct status_fields *it,
                        struct kiln_buf *path, struct kiln_buf *body)
{
	bool lab = f->kind == SCHED_FORGE_GITLAB;
	char url[1024];
	struct api_jw w;

	if (lab) {
		kiln_buf_addstr(path, "/projects/");
		api_url_escape(path, h->project);
	} else {
		kiln_buf_addf(path, "/repos/%s", h->project);
	}
	kiln_buf_addf(path, "/statuses/%s", h->sha);
	api_jw_init(&w, body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "state", forge_state(f->kind, it->state));
	scheduler_job_url(s, h->job_id, url, sizeof(url));
	api_jw_kstr(&w, "target_url", url);
	api_jw_kstr(&w, "description", it->desc);
	api_jw_key(&w, lab ? "name" : "context");
	if (it->verdict)
		snprintf(url, sizeof(url), "%s/reproducible", h->context);
	api_jw_str(&w, it->verdict ? url : h->context);
	api_jw_end(&w);
}

enum scheduler_send scheduler_hook_status_send(struct scheduler *s,
                                               const struct scheduler_outbox_item *it,
                                               int64_t *status, struct kiln_buf *answer)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_buf token = KILN_BUF_INIT(TOKEN_MAX + 1);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_err err = KILN_ERR_INIT;
	const struct scheduler_forge_cfg *f;
	struct scheduler_hook_job h = {0};
	struct status_fields sf;
	enum scheduler_send r = SCHED_SEND_REFUSED;

	*status = 0;
	if (!status_fields_read(it->body, &sf)) {
		kiln_buf_addstr(answer, "not a status");
		goto out;
	}
	if (s->store->ops->hook_job_get(s->store, it->job_id, &a, &h, &err)) {
		kiln_buf_addf(answer, "no hook job %lld", (long long)it->job_id);
		goto out;
	}
	f = scheduler_config_forge(s->cfg, h.forge);
	if (!f || !*f->api_url) {
		kiln_buf_addf(answer, "no [forge %s] with an api_url", h.forge);
		goto out;
	}
	if (*f->token_file) {
		/* read at each post: a rotated token needs no restart */
		if (util_read_file(f->token_file, TOKEN_MAX, &token, &err)) {
			kiln_buf_addf(answer, "%.400s", err.msg);
			r = SCHED_SEND_RETRY;
			goto out;
		}
		while (token.len && isspace((unsigned char)token.ptr[token.len - 1]))
			token.ptr[--token.len] = '\0';
	}
	status_call(s, f, &h, &sf, &path, &body);
	if (kiln_buf_finish(&path, &err) || kiln_buf_finish(&body, &err)) {
		kiln_buf_addstr(answer, "out of memory");
		r = SCHED_SEND_RETRY;
		goto out;
	}
	r = scheduler_outbox_http(f->api_url, path.ptr, token.len ? token.ptr : NULL, NULL,
	                          body.ptr, status, answer);
out:
	kiln_buf_release(&token);
	kiln_buf_release(&path);
	kiln_buf_release(&body);
	kiln_arena_release(&a);
	return r;
}
