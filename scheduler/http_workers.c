/*
 * http_workers.c - the worker side of REST API v1: registration, long-polled leases,
 * heartbeats (which carry cancels back), log chunks by offset, artifact uploads checked by
 * sha256, and completion. Every call about a lease names its id and generation; a worker
 * whose lease was requeued gets 409 and cannot touch the job any more.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roots/roots.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define HEARTBEAT_MAX_MS 3000

struct worker_body {
	const char *name;
	struct api_strlist arches, tags;
	int64_t slots, free_disk, wait;
	const char *kernel, *version;
	bool draining;
};

#define WF(n, t, r, f, mn, mx)                                                                     \
	{                                                                                          \
		n, t, r, offsetof(struct worker_body, f), mn, mx, NULL, 0, 0                       \
	}

static const struct api_field register_fields[] = {
    WF("name", API_F_STR, true, name, 0, 128),
    WF("arches", API_F_STRLIST, true, arches, 0, 16),
    WF("tags", API_F_STRLIST, false, tags, 0, 32),
    WF("slots", API_F_INT, false, slots, 1, 256),
    WF("free_disk", API_F_INT, false, free_disk, 0, INT64_MAX),
    WF("kernel", API_F_STR, false, kernel, 0, 256),
    WF("version", API_F_STR, false, version, 0, 64),
    WF("draining", API_F_BOOL, false, draining, 0, 0),
    API_FIELD_END,
};

static const struct api_field lease_fields[] = {
    WF("worker", API_F_STR, true, name, 0, 128),
    WF("arches", API_F_STRLIST, true, arches, 0, 16),
    WF("tags", API_F_STRLIST, false, tags, 0, 32),
    WF("wait", API_F_INT, false, wait, 0, 600000),
    API_FIELD_END,
};

struct complete_output {
	const char *name, *sha256;
};

struct complete_body {
	int64_t generation;
	const char *status, *failure_class, *message, *git_commit;
	const char *root_lock; /* the lock a root job built on (rootpin.c) */
	struct api_objlist outputs;
	bool draining;
	/* "next": the worker's slot takes its next job in the reply (a lease asked as by
	 * POST /leases, never waited for) */
	struct next_ask {
		struct api_strlist arches, tags;
	} next;
	bool has_next;
};

static const struct api_field output_fields[] = {
    {"name", API_F_STR, true, offsetof(struct complete_output, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct complete_output, sha256), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

#define CF(n, t, r, f, mn, mx)                                                                     \
	{                                                                                          \
		n, t, r, offsetof(struct complete_body, f), mn, mx, NULL, 0, 0                     \
	}

static const struct api_field next_fields[] = {
    {"arches", API_F_STRLIST, true, offsetof(struct next_ask, arches), 0, 16, NULL, 0, 0},
    {"tags", API_F_STRLIST, false, offsetof(struct next_ask, tags), 0, 32, NULL, 0, 0},
    API_FIELD_END,
};

static const struct api_field complete_fields[] = {
    CF("generation", API_F_INT, true, generation, 1, INT64_MAX),
    CF("status", API_F_STR, true, status, 0, 16),
    CF("failure_class", API_F_STR, false, failure_class, 0, 16),
    CF("message", API_F_STR, false, message, 0, 4096),
    CF("git_commit", API_F_STR, false, git_commit, 0, 64),
    CF("root_lock", API_F_STR, false, root_lock, 0, ROOTS_LOCK_MAX_BYTES),
    {"outputs", API_F_OBJLIST, false, offsetof(struct complete_body, outputs), 0, 4096,
     output_fields, sizeof(struct complete_output), 0},
    {"next", API_F_OBJ, false, offsetof(struct complete_body, next), 0, 0, next_fields, 0,
     offsetof(struct complete_body, has_next)},
    API_FIELD_END,
};

static const struct api_field heartbeat_fields[] = {
    CF("generation", API_F_INT, true, generation, 1, INT64_MAX),
    CF("draining", API_F_BOOL, false, draining, 0, 0),
    API_FIELD_END,
};

/* ",a,b," from a list of names (each checked). */
static kiln_rc joined(struct kiln_arena *a, const char *field, const struct api_strlist *l,
                      const char **out, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	size_t i;
	kiln_rc rc = KILN_OK;

	kiln_buf_addch(&b, ',');
	for (i = 0; !rc && i < l->n; i++) {
		if (!*l->v[i] || strpbrk(l->v[i], ", \t\n"))
			rc =
			    kiln_err_set(err, KILN_EINVAL, "field '%s[%zu]': not a name", field, i);
		kiln_buf_addf(&b, "%s,", l->v[i]);
	}
	*out = rc ? "" : kiln_arena_strdup(a, b.ptr);
	kiln_buf_release(&b);
	if (!rc && !*out)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return rc;
}

static kiln_rc decode(struct api_req *req, const struct api_field *f, void *out,
                      struct kiln_err *err)
{
	size_t len;
	const char *body = api_req_body(req, &len);

	return api_json_decode(body, len, f, API_DECODE_STRICT, out, api_req_arena(req), err);
}

static kiln_rc lease_id_param(struct api_req *req, const char **id, struct kiln_err *err)
{
	*id = api_req_param(req, 0);
	if (!*id || strlen(*id) != 32 || strspn(*id, "0123456789abcdef") != 32)
		return kiln_err_set(err, KILN_ENOTFOUND, "no lease '%.40s'", *id ? *id : "");
	return KILN_OK;
}

/* The credential the caller presents (API_WORKER_SECRET_HEADER), as the store keeps it:
 * its sha256 hex. */
static kiln_rc worker_secret_presented(struct api_req *req, char hash[65], struct kiln_err *err)
{
	const char *v = api_req_header(req, API_WORKER_SECRET_HEADER);

	if (!v)
		return kiln_err_set(
		    err, KILN_EPRIV,
		    "no worker credential: worker calls need the " API_WORKER_SECRET_HEADER
		    " header (kiln worker sends the one kept in its work directory)");
	if (!api_sha256_valid(v))
		return kiln_err_set(err, KILN_EINVAL,
		                    "header '" API_WORKER_SECRET_HEADER
		                    "': not 64 lowercase hex digits");
	return api_token_hash(v, strlen(v), hash, err);
}

/* Worker name's owner and credential: from s->auth while trusted, else read and kept.
 * fresh: read them in any case (a registration decides on when the worker was seen). */
static kiln_rc worker_auth(struct scheduler *s, const char *name, bool fresh,
                           struct scheduler_worker_auth *out, struct kiln_err *err)
{
	struct scheduler_auth_ent *e = &s->auth[util_hash_str(name) % SCHED_AUTH_SLOTS];
	int64_t now = util_clock_mono_ns() / 1000000;
	bool hit = false;
	kiln_rc rc;

	pthread_mutex_lock(&s->workers_lock);
	if (!fresh && !strcmp(e->name, name) && e->until_ms > now) {
		*out = e->v;
		hit = true;
	}
	pthread_mutex_unlock(&s->workers_lock);
	if (hit)
		return KILN_OK;
	rc = s->store->ops->worker_auth(s->store, name, out, err);
	if (rc || strlen(name) >= sizeof(e->name))
		return rc;
	pthread_mutex_lock(&s->workers_lock);
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->v = *out;
	e->until_ms = now + SCHED_AUTH_TTL_MS;
	pthread_mutex_unlock(&s->workers_lock);
	return KILN_OK;
}

/* Forget what s->auth holds of worker name (its row is being written here). */
static void worker_auth_forget(struct scheduler *s, const char *name)
{
	struct scheduler_auth_ent *e = &s->auth[util_hash_str(name) % SCHED_AUTH_SLOTS];

	pthread_mutex_lock(&s->workers_lock);
	if (!strcmp(e->name, name))
		e->name[0] = '\0';
	pthread_mutex_unlock(&s->workers_lock);
}

/* A lease call: the caller must present the credential worker name registered with, so
 * workers that share a token cannot heartbeat, log, upload or complete for each other. */
static kiln_rc worker_credential_match(struct api_req *req, const char *name,
                                       const struct scheduler_worker_auth *w, struct kiln_err *err)
{
	char mine[65];
	kiln_rc rc;

	rc = worker_secret_presented(req, mine, err);
	if (rc)
		return rc;
	if (!*w->hash || strcmp(mine, w->hash))
		return kiln_err_set(err, KILN_EPRIV,
		                    "worker credential mismatch: the " API_WORKER_SECRET_HEADER
		                    " presented is not the credential worker '%s' registered with",
		                    name);
	return KILN_OK;
}

/* A registration: a new name (or one without a credential yet) is bound to the credential
 * presented (*bind). Another credential for a live worker (seen within a lease's time to
 * live and a long poll) is a second worker under the same name: refused. A worker silent
 * that long may be re-bound, so one whose work directory was lost can come back. */
static kiln_rc worker_credential_claim(struct scheduler *s, struct api_req *req, const char *name,
                                       const struct scheduler_worker_auth *w, char hash[65],
                                       bool *bind, struct kiln_err *err)
{
	int64_t live = s->cfg->lease_ttl_ms + s->cfg->poll_max_ms, quiet;
	kiln_rc rc;

	*bind = false;
	rc = worker_secret_presented(req, hash, err);
	if (rc)
		return rc;
	if (*w->hash && !strcmp(w->hash, hash))
		return KILN_OK;
	quiet = util_clock_wall_ms() - w->last_seen_ms;
	if (*w->hash && quiet < live)
		return kiln_err_set(
		    err, KILN_ECONFLICT,
		    "worker '%s' is live with another credential (a second worker "
		    "under this name?); a worker silent for %lld s may register anew",
		    name, (long long)(live + 999) / 1000);
	*bind = true;
	return KILN_OK;
}

/* Is a write of w's last_seen due (true, and it is remembered as written), or was one
 * written from here less than a second ago with the same draining (false)? The row's
 * guard (Q_WORKER_SEEN) writes once a second at most: this skips the store call too. */
static bool worker_seen_due(struct scheduler *s, const struct scheduler_worker_info *w)
{
	struct scheduler_seen *e = &s->seen[util_hash_str(w->name) % SCHED_SEEN_SLOTS];
	bool due;

	if (strlen(w->name) >= sizeof(e->name))
		return true;
	pthread_mutex_lock(&s->workers_lock);
	due = strcmp(e->name, w->name) || e->draining != w->draining || w->last_seen_ms < e->ms ||
	      w->last_seen_ms - e->ms >= 1000;
	if (due) {
		snprintf(e->name, sizeof(e->name), "%s", w->name);
		e->ms = w->last_seen_ms;
		e->draining = w->draining;
	}
	pthread_mutex_unlock(&s->workers_lock);
	return due;
}

/* A worker's name belongs to the token that first registered it: another token (unless an
 * admin's) may not register, lease, heartbeat, log, upload or complete as that worker.
 * register: the name may be new (it is then bound to the caller), and its row is read
 * afresh into *w (zero for a new name: no credential) for the registration to decide on. */
static kiln_rc worker_check_as(struct scheduler *s, struct api_req *req, const char *name, bool reg,
                               struct scheduler_worker_auth *w, struct kiln_err *err)
{
	kiln_rc rc;

	rc = api_worker_name_check(name, err);
	if (rc) {
		kiln_err_wrap(err, "worker name '%.64s'", name);
		return rc;
	}
	rc = worker_auth(s, name, reg, w, err);
	if (rc == KILN_ENOTFOUND && reg) {
		kiln_err_clear(err);
		memset(w, 0, sizeof(*w));
		return KILN_OK;
	}
	if (rc)
		return rc == KILN_ENOTFOUND
		           ? kiln_err_set(err, KILN_EPRIV, "worker '%s' is not registered", name)
		           : rc;
	if (w->token_id >= 0 && w->token_id != api_req_token_id(req) &&
	    !(api_req_scopes(req) & API_SCOPE_ADMIN))
		return kiln_err_set(err, KILN_EPRIV, "worker '%s' belongs to another token", name);
	return reg ? KILN_OK : worker_credential_match(req, name, w, err);
}

/* worker_check_as for a worker call (not a registration). */
static kiln_rc worker_check(struct scheduler *s, struct api_req *req, const char *name,
                            struct kiln_err *err)
{
	struct scheduler_worker_auth w;

	return worker_check_as(s, req, name, false, &w, err);
}

/* ---------------------------------------------------------------------------------------- */

void scheduler_h_worker_register(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_body b = {0};
	struct scheduler_worker_info w = {0};
	struct scheduler_worker_auth row;
	struct api_jw jw;
	char hash[65];
	bool bind = false;
	kiln_rc rc;

	rc = decode(req, register_fields, &b, &err);
	if (!rc)
		rc = worker_check_as(s, req, b.name, true, &row, &err);
	if (!rc)
		rc = worker_credential_claim(s, req, b.name, &row, hash, &bind, &err);
	if (!rc)
		rc = joined(api_req_arena(req), "arches", &b.arches, &w.arches, &err);
	if (!rc)
		rc = joined(api_req_arena(req), "tags", &b.tags, &w.tags, &err);
	if (!rc) {
		w.name = b.name;
		w.slots = b.slots ? b.slots : 1;
		w.free_disk = b.free_disk;
		w.kernel = b.kernel ? b.kernel : "";
		w.version = b.version ? b.version : "";
		w.last_seen_ms = util_clock_wall_ms();
		w.draining = b.draining;
		w.token_id = api_req_token_id(req);
		rc = s->store->ops->worker_seen(s->store, &w, true, &err);
	}
	if (!rc && bind)
		rc = s->store->ops->worker_credential_set(s->store, b.name, hash, &err);
	/* after the writes: a worker call that read the row before them keeps it no longer */
	if (b.name)
		worker_auth_forget(s, b.name);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&jw, &resp->body);
	api_jw_obj(&jw);
	api_jw_kstr(&jw, "name", w.name);
	api_jw_kint(&jw, "lease_ttl_ms", s->cfg->lease_ttl_ms);
	api_jw_kint(&jw, "poll_max_ms", s->cfg->poll_max_ms);
	api_jw_end(&jw);
	scheduler_reply_json(resp, 200);
}

void scheduler_h_workers(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_worker_info *v = NULL;
	int64_t now = util_clock_wall_ms();
	struct api_jw w;
	size_t n = 0, i;

	if (s->store->ops->workers_list(s->store, api_req_arena(req), &v, &n, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "workers");
	api_jw_arr(&w);
	for (i = 0; i < n; i++)
		scheduler_worker_json(&w, &v[i], now);
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* ---------------------------------------------------------------------------------------- */
/* Leases */

static kiln_rc new_lease_id(char out[33], struct kiln_err *err)
{
	unsigned char raw[16];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return kiln_err_sys(err, KILN_EIO, "getrandom");
	util_hex_encode(raw, sizeof(raw), out);
	out[32] = '\0';
	return KILN_OK;
}

/* The lease object of granted job j (a lease reply, or a completion's "next_lease"). */
static void lease_obj_write(struct scheduler *s, const struct scheduler_job *j, struct api_jw *w)
{
	int64_t hb = s->cfg->lease_ttl_ms / 3;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	const char *batch_repo;

	api_jw_obj(w);
	api_jw_kstr(w, "lease_id", j->lease_id);
	api_jw_kint(w, "generation", j->generation);
	api_jw_kint(w, "ttl_ms", s->cfg->lease_ttl_ms);
	api_jw_kint(w, "heartbeat_ms", hb < HEARTBEAT_MAX_MS ? hb : HEARTBEAT_MAX_MS);
	api_jw_kint(w, "job_id", j->id);
	api_jw_kint(w, "attempt", j->attempts);
	api_jw_kstr(w, "spec_name", j->spec_name);
	api_jw_kstr(w, "content_key", j->content_key);
	api_jw_key(w, "job");
	api_jw_raw(w, j->request);
	/* [batches] the batch repository its root resolves against too (a rerun: its
	 * original's, where the packages its pinned lock names are) */
	batch_repo = j->batch_member
	                 ? scheduler_batch_repo_of(s, j->rerun_of ? j->rerun_of : j->id, &a)
	                 : NULL;
	if (batch_repo)
		api_jw_kstr(w, "batch_repo", batch_repo);
	api_jw_end(w);
	kiln_arena_release(&a);
}

static void lease_json(struct scheduler *s, const struct scheduler_job *j, struct api_resp *resp)
{
	struct api_jw w;

	api_jw_init(&w, &resp->body);
	lease_obj_write(s, j, &w);
	scheduler_reply_json(resp, 200);
}

struct lease_wait {
	int64_t deadline;
};

static void lease_record(struct scheduler *s, const struct scheduler_job *j)
{
	char key[64];

	pthread_mutex_lock(&s->stats_lock);
	s->lease_grants++;
	pthread_mutex_unlock(&s->stats_lock);
	scheduler_hist_add(s, &s->wait_hist, (double)(util_clock_wall_ms() - j->created_ms) / 1000);
	snprintf(key, sizeof(key), "running:%s", j->lease_id);
	scheduler_hook_status(s, j->id, "running", "building", key); /* a hook job's */
	scheduler_webhook_job_state(s, j);
}

/* The query of a grant for worker (checked: the caller's) of arches and tags, under a new
 * lease id (strings in the request's arena); the worker's sighting recorded when due. */
static kiln_rc lease_query(struct scheduler *s, struct api_req *req, const char *worker,
                           const struct api_strlist *arches, const struct api_strlist *tags,
                           struct scheduler_lease_query *q, struct kiln_err *err)
{
	struct scheduler_worker_info wi = {0};
	char *lid = kiln_arena_alloc(api_req_arena(req), 33);
	kiln_rc rc;

	q->now_ms = util_clock_wall_ms();
	rc = lid ? KILN_OK : kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = joined(api_req_arena(req), "arches", arches, &q->arches, err);
	if (!rc)
		rc = joined(api_req_arena(req), "tags", tags, &q->tags, err);
	if (!rc)
		rc = new_lease_id(lid, err);
	if (rc)
		return rc;
	wi.name = worker;
	wi.last_seen_ms = q->now_ms;
	if (worker_seen_due(s, &wi))
		(void)s->store->ops->worker_seen(s->store, &wi, false, NULL);
	q->worker = worker;
	q->ttl_ms = s->cfg->lease_ttl_ms;
	q->lease_id = lid;
	return KILN_OK;
}

/* Job j was granted: kept for its lease's calls and recorded. */
static void lease_granted(struct scheduler *s, const struct scheduler_job *j)
{
	scheduler_leases_keep(s->leases, j, true);
	lease_record(s, j);
}

/* A grant for worker (checked: the caller's) of arches and tags, kept and recorded:
 * KILN_ENOTFOUND when nothing is there for it now. */
static kiln_rc lease_try(struct scheduler *s, struct api_req *req, const char *worker,
                         const struct api_strlist *arches, const struct api_strlist *tags,
                         struct scheduler_job *j, struct kiln_err *err)
{
	struct scheduler_lease_query q = {0};
	kiln_rc rc;

	rc = lease_query(s, req, worker, arches, tags, &q, err);
	if (!rc)
		rc = scheduler_lease_grant_kept(s->store, s->cands, &q, api_req_arena(req), j, err);
	if (!rc)
		lease_granted(s, j);
	return rc;
}

void scheduler_h_lease(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct lease_wait *lw = api_req_slot_get(req);
	struct worker_body b = {0};
	struct scheduler_job j = {0};
	int64_t now = util_clock_wall_ms();
	kiln_rc rc;

	rc = decode(req, lease_fields, &b, &err);
	if (!rc)
		rc = worker_check(s, req, b.name, &err);
	if (!rc)
		rc = lease_try(s, req, b.name, &b.arches, &b.tags, &j, &err);
	if (!rc) {
		lease_json(s, &j, resp);
		return;
	}
	if (rc != KILN_ENOTFOUND) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (!lw) {
		lw = kiln_arena_alloc(api_req_arena(req), sizeof(*lw));
		if (lw)
			lw->deadline =
			    now + (b.wait < s->cfg->poll_max_ms ? b.wait : s->cfg->poll_max_ms);
		api_req_slot_set(req, lw, NULL);
	}
	if (lw && now < lw->deadline) {
		/* Also wake at the next backoff expiry: the reaper tick resumes us. */
		resp->wait_until_ms = lw->deadline < now + 1000 ? lw->deadline : now + 1000;
		return;
	}
	resp->status = 204;
}

/* The job of lease lid at gen, to check whose it is and decide on: as the grant or last
 * renewal here kept it (lease_kept.c), else read (and checked active) from the store. */
static kiln_rc lease_job(struct scheduler *s, const char *lid, int64_t gen, struct api_req *req,
                         struct scheduler_job *j, bool *kept, struct kiln_err *err)
{
	int64_t now = util_clock_wall_ms();

	if (kept)
		*kept = false;
	if (scheduler_leases_find(s->leases, lid, gen, now, api_req_arena(req), j)) {
		if (kept)
			*kept = true;
		return KILN_OK;
	}
	return s->store->ops->lease_touch(s->store, lid, gen, now, 0, api_req_arena(req), j, err);
}

void scheduler_h_heartbeat(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct complete_body b = {0};
	struct scheduler_worker_info wi = {0};
	struct scheduler_job j = {0};
	const char *lid;
	struct api_jw w;
	kiln_rc rc;

	rc = lease_id_param(req, &lid, &err);
	if (!rc)
		rc = decode(req, heartbeat_fields, &b, &err);
	/* whose lease it is, before renewing it */
	if (!rc)
		rc = lease_job(s, lid, b.generation, req, &j, NULL, &err);
	if (!rc)
		rc = worker_check(s, req, j.worker, &err);
	if (!rc)
		rc = s->store->ops->lease_touch(s->store, lid, b.generation, util_clock_wall_ms(),
		                                s->cfg->lease_ttl_ms, api_req_arena(req), &j, &err);
	if (!rc)
		scheduler_leases_keep(s->leases, &j, false);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	wi.name = j.worker;
	wi.last_seen_ms = util_clock_wall_ms();
	wi.draining = b.draining;
	if (worker_seen_due(s, &wi))
		(void)s->store->ops->worker_seen(s->store, &wi, false, NULL);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "ttl_ms", s->cfg->lease_ttl_ms);
	api_jw_kbool(&w, "cancel", j.cancel_requested);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* Check the lease named in the path with ?generation=, without renewing it. */
static kiln_rc lease_from_query(struct scheduler *s, struct api_req *req, struct scheduler_job *j,
                                struct kiln_err *err)
{
	const char *lid;
	int64_t gen;
	kiln_rc rc;

	rc = lease_id_param(req, &lid, err);
	if (!rc)
		rc = api_req_query_int(req, "generation", 0, 1, INT64_MAX, &gen, err);
	if (!rc && !api_req_query(req, "generation"))
		rc = kiln_err_set(err, KILN_EINVAL, "query argument 'generation' is required");
	if (!rc)
		rc = lease_job(s, lid, gen, req, j, NULL, err);
	if (!rc)
		rc = worker_check(s, req, j->worker, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Logs */

/* Append the part of data that lies past the file's end; offset must not be beyond it. */
static kiln_rc log_append(struct scheduler *s, const struct scheduler_job *j, int64_t offset,
                          const char *data, size_t len, int64_t *size, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct stat st;
	int fd = -1;
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/%lld", s->log_dir, (long long)j->id);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = util_mkdir_p(p.ptr, 0755, err);
	if (rc)
		goto out;
	scheduler_log_path(s, j->id, j->attempts, &p);
	pthread_mutex_lock(&s->log_lock);
	fd = open(p.ptr, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open the log %s", p.ptr);
	} else if ((uint64_t)offset + len > s->cfg->log_max) {
		rc = kiln_err_set(err, KILN_ELIMIT,
		                  "the attempt's log would pass limits.log_max (%llu bytes)",
		                  (unsigned long long)s->cfg->log_max);
	} else if (offset > (int64_t)st.st_size) {
		*size = (int64_t)st.st_size;
		rc = kiln_err_set(err, KILN_ECONFLICT, "offset %lld is past the log's end (%lld)",
		                  (long long)offset, (long long)st.st_size);
	} else {
		size_t skip = (size_t)((int64_t)st.st_size - offset);

		rc = skip < len ? util_write_all(fd, data + skip, len - skip, err) : KILN_OK;
		*size = offset + (int64_t)len > (int64_t)st.st_size ? offset + (int64_t)len
		                                                    : (int64_t)st.st_size;
	}
	util_close(fd);
	pthread_mutex_unlock(&s->log_lock);
out:
	kiln_buf_release(&p);
	return rc;
}

void scheduler_h_log_put(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = {0};
	const char *data;
	int64_t offset, size = 0;
	struct api_jw w;
	size_t len;
	kiln_rc rc;

	data = api_req_body(req, &len);
	rc = lease_from_query(s, req, &j, &err);
	if (!rc)
		rc = api_req_query_int(req, "offset", 0, 0, INT64_MAX, &offset, &err);
	if (!rc)
		rc = log_append(s, &j, offset, data, len, &size, &err);
	if (rc && rc != KILN_ECONFLICT) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "size", size);
	if (rc) {
		api_jw_key(&w, "error");
		api_jw_obj(&w);
		api_jw_kstr(&w, "code", "offset_mismatch");
		api_jw_kstr(&w, "message", err.msg);
		api_jw_end(&w);
	}
	api_jw_end(&w);
	scheduler_reply_json(resp, rc ? 409 : 200);
	api_server_wake(s->http);
}

/* ---------------------------------------------------------------------------------------- */
/* Artifacts and completion */

static const char *query_word(struct api_req *req, const char *name, const char *def)
{
	const char *v = api_req_query(req, name);

	if (!v || !*v || strlen(v) > 32 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(v))
		return def;
	return v;
}

void scheduler_h_artifact_put(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *name = api_req_param(req, 1);
	const char *sha = api_req_query(req, "sha256");
	struct scheduler_artifact a = {0};
	struct scheduler_job j = {0};
	int64_t uploads = 0;
	kiln_rc rc;

	rc = api_name_check(name, strlen(name), &err);
	if (!rc && (!sha || !api_sha256_valid(sha)))
		rc = kiln_err_set(&err, KILN_EINVAL,
		                  "query argument 'sha256' must be 64 lowercase "
		                  "hex digits");
	if (!rc)
		rc = lease_from_query(s, req, &j, &err);
	if (!rc && strcmp(sha, api_req_upload_sha256(req)))
		rc = kiln_err_set(&err, KILN_EDIGEST, "%s: the upload's sha256 is %s, not %s", name,
		                  api_req_upload_sha256(req), sha);
	if (!rc)
		rc = scheduler_blob_adopt(s, api_req_upload_path(req), sha, &err);
	if (!rc) {
		a.job_id = j.id;
		a.attempt = j.attempts;
		a.name = name;
		memcpy(a.sha256, sha, 65);
		a.size = (int64_t)api_req_upload_size(req);
		a.kind = query_word(req, "kind", "binary");
		a.arch = query_word(req, "arch", "");
		rc = s->store->ops->artifact_put(s->store, &a, &uploads, &err);
	}
	if (!rc) /* for the completion's checks and signing (lease_kept.c) */
		scheduler_leases_artifact_add(s->leases, j.lease_id, j.generation, &a, uploads);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	resp->status = 201;
	kiln_buf_addstr(&resp->body, "{}\n");
}

/* Where a completion's job and artifacts come from: as the grant and the uploads here kept
 * them (lease_kept.c), or the store. A decision on kept ones that fails is made again on
 * what the store holds. */
enum complete_facts {
	FACTS_KEPT,     /* the job kept; the artifacts kept too where known */
	FACTS_JOB_KEPT, /* the job kept; the artifacts (and the job with them) to read */
	FACTS_READ,     /* both read from the store */
};

/* The artifacts of the attempt of lease lid (*j, as *facts says) and the job's uploads
 * they make: as the uploads here kept them when *facts is FACTS_KEPT and they are known
 * (it stays so); else read, with the job read again when it was kept (its uploads are the
 * grant's), and *facts becomes FACTS_READ. Strings in a. */
static kiln_rc attempt_artifacts(struct scheduler *s, const char *lid, struct scheduler_job *j,
                                 enum complete_facts *facts, struct kiln_arena *a,
                                 struct scheduler_artifact **arts, size_t *n, int64_t *uploads,
                                 struct kiln_err *err)
{
	int64_t now = util_clock_wall_ms();
	kiln_rc rc = KILN_OK;

	if (*facts == FACTS_KEPT &&
	    scheduler_leases_artifacts(s->leases, lid, j->generation, now, a, arts, n, uploads))
		return KILN_OK;
	if (*facts != FACTS_READ)
		rc = s->store->ops->lease_touch(s->store, lid, j->generation, now, 0, a, j, err);
	*facts = FACTS_READ;
	if (!rc)
		rc = s->store->ops->artifacts_list(s->store, j->id, j->attempts, a, arts, n, err);
	*uploads = j->uploads;
	return rc;
}

/* Every output the worker names must have been uploaded with that digest: the attempt's
 * artifacts arts[0..n) hold it. */
static kiln_rc outputs_check(const struct complete_body *b, const struct scheduler_artifact *arts,
                             size_t n, struct kiln_err *err)
{
	const struct complete_output *o = b->outputs.v;
	kiln_rc rc = KILN_OK;
	size_t i, k;

	for (i = 0; !rc && i < b->outputs.n; i++) {
		for (k = 0; k < n; k++)
			if (!strcmp(arts[k].name, o[i].name) &&
			    !strcmp(arts[k].sha256, o[i].sha256))
				break;
		if (k == n)
			rc = kiln_err_set(err, KILN_EINVAL,
			                  "field 'outputs[%zu]': %s (%.64s) was not "
			                  "uploaded",
			                  i, o[i].name, o[i].sha256);
	}
	return rc;
}

static kiln_rc outcome_parse(const struct complete_body *b, struct scheduler_finish *f,
                             struct kiln_err *err)
{
	const char *fc = b->failure_class ? b->failure_class : "";

	f->failure_class = fc;
	if (!strcmp(b->status, "succeeded"))
		f->outcome = SCHED_OUT_SUCCEEDED;
	else if (!strcmp(b->status, "cancelled"))
		f->outcome = SCHED_OUT_CANCELLED, f->failure_class = "cancel";
	else if (!strcmp(b->status, "released"))
		f->outcome = SCHED_OUT_RELEASED, f->failure_class = "";
	else if (!strcmp(b->status, "failed") && (!*fc || !strcmp(fc, "build")))
		f->outcome = SCHED_OUT_FAILED, f->failure_class = "build";
	else if (!strcmp(b->status, "failed") && !strcmp(fc, "infra"))
		f->outcome = SCHED_OUT_INFRA;
	else
		return kiln_err_set(
		    err, KILN_EINVAL,
		    "field 'status'/'failure_class': '%s'/'%s' "
		    "(use succeeded, failed with build or infra, cancelled, released)",
		    b->status, fc);
	return KILN_OK;
}

/* The reply to a completion: the job as its end left it (e), or read again when the hooks
 * that followed may have written its row (an original's reproducibility verdict); with
 * "next_lease" when the worker's next job was granted with it (next). */
static void complete_reply(struct scheduler *s, const struct scheduler_job *e,
                           const struct scheduler_job *next, struct api_req *req,
                           struct api_resp *resp)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job j = *e;
	struct api_jw w;

	if ((e->reruns > 0 || *e->repro_verdict) &&
	    s->store->ops->job_get(s->store, e->id, api_req_arena(req), &j, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (j.state == SCHED_SUCCEEDED && j.started_ms)
		scheduler_hist_add(s, &s->build_hist,
		                   (double)(j.finished_ms - j.started_ms) / 1000);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	scheduler_job_json_fields(&w, &j);
	if (next) {
		api_jw_key(&w, "next_lease");
		lease_obj_write(s, next, &w);
	}
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* The worker's next job, asked with its completion (ask): its picks made from the kept
 * candidates so that the end takes it in the same write (t, its query in q, the job in
 * next); false when they are not (the grant then follows the end, complete_next). */
static bool next_picks(struct scheduler *s, struct api_req *req, const char *worker,
                       const struct next_ask *ask, struct scheduler_lease_query *q,
                       struct scheduler_take *t, struct scheduler_job *next)
{
	struct kiln_err err = KILN_ERR_INIT;

	*t = (struct scheduler_take){.q = q, .a = api_req_arena(req), .out = next};
	if (lease_query(s, req, worker, &ask->arches, &ask->tags, q, &err) ||
	    scheduler_lease_picks(s->store, s->cands, t, &err))
		return false;
	return true;
}

/* The worker's next job, asked with its completion: taken with the end (t, when it was
 * tried and took one), else granted as POST /leases would, never waited for. The
 * completion is done whatever happens here, so a failed grant is only logged (the worker
 * asks again by a lease call). */
static bool complete_next(struct scheduler *s, struct api_req *req, const char *worker,
                          const struct next_ask *ask, const struct scheduler_take *t,
                          struct scheduler_job *next)
{
	struct kiln_err err = KILN_ERR_INIT;
	bool with_end = t && t->tried && t->rc == KILN_OK;
	kiln_rc rc = KILN_OK;

	if (with_end)
		lease_granted(s, next);
	else
		rc = lease_try(s, req, worker, &ask->arches, &ask->tags, next, &err);
	if (!rc) {
		pthread_mutex_lock(&s->stats_lock);
		s->lease_grants_next++;
		s->lease_grants_with_end += with_end;
		pthread_mutex_unlock(&s->stats_lock);
	}
	if (rc && rc != KILN_ENOTFOUND)
		kiln_log(KILN_LOG_WARN, "worker %s: no next lease with its completion: %s", worker,
		         err.msg);
	return rc == KILN_OK;
}

/* How often a completion decides again when the end found uploads it did not decide on. */
#define COMPLETE_TRIES 3

/* A completion decided: the lease's job checked, its outputs among the attempt's
 * artifacts (*arts, *narts), pinned and signed; f filled for the end (f->outcome as asked
 * on entry, failed when signing failed). tries: the earlier decisions the end refused. */
static kiln_rc complete_decide(struct scheduler *s, struct api_req *req, const char *lid,
                               const struct complete_body *b, int tries, struct scheduler_finish *f,
                               struct scheduler_job *j, struct scheduler_artifact **arts,
                               size_t *narts, char *msg, size_t msg_size, struct kiln_err *err)
{
	struct kiln_err serr = KILN_ERR_INIT;
	enum complete_facts facts;
	bool kept = false;
	kiln_rc rc;

	*arts = NULL;
	*narts = 0;
	rc = lease_job(s, lid, b->generation, req, j, &kept, err);
	/* a decision made again (tries) reads the artifacts: the end found uploads it did not
	 * know */
	facts = !kept ? FACTS_READ : tries ? FACTS_JOB_KEPT : FACTS_KEPT;
	if (!rc)
		rc = worker_check(s, req, j->worker, err);
	if (!rc && f->outcome == SCHED_OUT_SUCCEEDED) {
		rc = attempt_artifacts(s, lid, j, &facts, api_req_arena(req), arts, narts,
		                       &f->uploads, err);
		if (!rc)
			rc = outputs_check(b, *arts, *narts, err);
		if (rc == KILN_EINVAL && facts == FACTS_KEPT) {
			/* an output uploaded to another scheduler? read them all */
			kiln_err_clear(err);
			facts = FACTS_JOB_KEPT;
			rc = attempt_artifacts(s, lid, j, &facts, api_req_arena(req), arts, narts,
			                       &f->uploads, err);
			if (!rc)
				rc = outputs_check(b, *arts, *narts, err);
		}
	}
	/* the commit the worker built goes into the manifest before the job ends, so its
	 * provenance, reruns and retries see it */
	if (!rc && b->git_commit)
		rc = scheduler_git_pin(s, j, b->git_commit, err);
	/* likewise the root it built on */
	if (!rc && b->root_lock && f->outcome == SCHED_OUT_SUCCEEDED)
		rc = scheduler_root_pin(s, j, b->root_lock, err);
	if (rc)
		return rc;
	f->message = b->message ? b->message : "";
	if (f->outcome == SCHED_OUT_SUCCEEDED &&
	    scheduler_sign_artifacts(s, j, *arts, *narts, &serr)) {
		/* a full disk is the farm's trouble, not the package's: retried */
		bool infra = serr.sys_errno == ENOSPC || serr.sys_errno == EDQUOT;

		f->outcome = infra ? SCHED_OUT_INFRA : SCHED_OUT_FAILED;
		f->failure_class = infra ? "infra" : "sign";
		f->message = kiln_err_format(&serr, msg, msg_size);
	}
	/* what was checked and signed must be every upload of the attempt */
	f->uploads_known = f->outcome == SCHED_OUT_SUCCEEDED;
	f->now_ms = util_clock_wall_ms();
	f->backoff_ms = f->outcome == SCHED_OUT_RELEASED ? 0 : scheduler_backoff_ms(s, j->attempts);
	f->known = j;
	return KILN_OK;
}

void scheduler_h_complete(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_finish f = {0};
	struct complete_body b = {0};
	struct scheduler_job j = {0}, ended = {0}, next = {0};
	struct scheduler_lease_query nq = {0};
	struct scheduler_take take;
	bool picked = false;
	struct scheduler_artifact *arts = NULL;
	enum scheduler_outcome asked;
	const char *asked_class;
	size_t narts = 0;
	const char *lid;
	char msg[KILN_ERR_MSG_MAX];
	bool changed = false;
	kiln_rc rc;
	int tries;

	rc = lease_id_param(req, &lid, &err);
	if (!rc)
		rc = decode(req, complete_fields, &b, &err);
	if (!rc)
		rc = outcome_parse(&b, &f, &err);
	if (!rc && b.git_commit && !scheduler_git_commit_valid(b.git_commit))
		rc =
		    kiln_err_set(&err, KILN_EINVAL,
		                 "field 'git_commit': not a full commit id (40 or 64 lowercase hex "
		                 "digits)");
	asked = f.outcome;
	asked_class = f.failure_class;
	f.ended = &ended;
	f.ended_arena = api_req_arena(req);
	f.uploads_changed = &changed;
	for (tries = 0; !rc && tries < COMPLETE_TRIES; tries++) {
		f.outcome = asked;
		f.failure_class = asked_class;
		changed = false;
		rc = complete_decide(s, req, lid, &b, tries, &f, &j, &arts, &narts, msg,
		                     sizeof(msg), &err);
		/* the next job's picks, once: the end takes it in the same write */
		if (!rc && b.has_next && !tries)
			picked = next_picks(s, req, j.worker, &b.next, &nq, &take, &next);
		f.take = picked ? &take : NULL;
		if (!rc)
			rc = scheduler_lease_end(s, lid, b.generation, &f, &err);
		if (!rc || !changed || tries + 1 == COMPLETE_TRIES)
			break;
		kiln_err_clear(&err); /* uploaded meanwhile: decide again on them all */
		rc = KILN_OK;
	}
	if (picked)
		scheduler_lease_picks_done(s->cands, &take);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	/* the artifacts as signed above are the attempt's (none read when it did not succeed) */
	scheduler_job_ended_as(
	    s, &(struct scheduler_ended){.job = &ended,
	                                 .arts = arts,
	                                 .narts = narts,
	                                 .arts_known = ended.attempts == j.attempts &&
	                                               f.outcome == SCHED_OUT_SUCCEEDED});
	complete_reply(
	    s, &ended,
	    b.has_next && complete_next(s, req, j.worker, &b.next, picked ? &take : NULL, &next)
	        ? &next
	        : NULL,
	    req, resp);
}
