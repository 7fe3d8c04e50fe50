/*
 * webhook.c - outgoing webhooks (issue 26): each [webhook NAME] receives signed JSON events,
 * "job.state" when a job is queued, leased to a worker or ends, and "publish" when a
 * repository has a new revision, for chat bots and other CI.
 *
 * An event is an item of the durable outbox (outbox.c) per webhook, its target the
 * webhook's name: each receiver gets its events in order, at least once, retried with
 * backoff, and a stop or a crash loses none. The receiver checks X-Kiln-Signature-256,
 * "sha256=" and the hex HMAC-SHA256 of the body under the webhook's secret, and may drop
 * a repeated X-Kiln-Delivery (the event's id, the same on every try and every webhook).
 */
#include "util/util.h"

#include <ctype.h>

#include "scheduler/scheduler_int.h"

#define SECRET_MAX 4096

/* The event's JSON: {"id", "event", "time_ms", and what it is about}. */
static kiln_rc event_body(const char *id, const char *event, int64_t now,
                          void (*more)(struct api_jw *w, const void *arg), const void *arg,
                          struct kiln_buf *out, struct kiln_err *err)
{
	struct api_jw w;

	api_jw_init(&w, out);
	api_jw_obj(&w);
	api_jw_kstr(&w, "id", id);
	api_jw_kstr(&w, "event", event);
	api_jw_kint(&w, "time_ms", now);
	more(&w, arg);
	api_jw_end(&w);
	return kiln_buf_finish(out, err);
}

/* Queue the event for each webhook taking it (bit); key tells it from every other. */
static void event_queue(struct scheduler *s, unsigned bit, const char *event, const char *key,
                        int64_t job_id, void (*more)(struct api_jw *w, const void *arg),
                        const void *arg)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_item *v;
	const char *id = kiln_arena_printf(&a, "%s:%s", event, key);
	int64_t now = util_clock_wall_ms();
	size_t i, n = 0;

	if (!s->outbox || !s->cfg->nwebhooks)
		goto out;
	v = kiln_arena_array(&a, s->cfg->nwebhooks, sizeof(*v));
	if (!v || !id || event_body(id, event, now, more, arg, &body, &err)) {
		kiln_err_set(&err, KILN_ENOMEM, "out of memory");
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	for (i = 0; i < s->cfg->nwebhooks; i++) {
		const struct scheduler_webhook_cfg *w = &s->cfg->webhooks[i];

		if (!(w->events & bit))
			continue;
		v[n] = (struct scheduler_outbox_item){
		    .kind = "webhook",
		    .target = w->name,
		    .dedup = kiln_arena_printf(&a, "webhook:%s:%s", w->name, key),
		    .job_id = job_id,
		    .body = body.ptr,
		    .created_ms = now,
		};
		if (v[n].dedup)
			n++;
	}
	scheduler_outbox_put(s, v, n);
out:
	kiln_buf_release(&body);
	kiln_arena_release(&a);
}

struct job_event {
	const struct scheduler *s;
	const struct scheduler_job *j;
};

static void job_more(struct api_jw *w, const void *arg)
{
	const struct job_event *e = arg;
	char url[1024];

	scheduler_job_url(e->s, e->j->id, url, sizeof(url));
	api_jw_key(w, "job");
	api_jw_obj(w);
	api_jw_kint(w, "id", e->j->id);
	api_jw_kstr(w, "state", scheduler_state_name(e->j->state));
	api_jw_kstr(w, "spec_name", e->j->spec_name ? e->j->spec_name : "");
	api_jw_kint(w, "attempts", e->j->attempts);
	if (e->j->failure_class && *e->j->failure_class)
		api_jw_kstr(w, "failure_class", e->j->failure_class);
	if (e->j->rerun_of)
		api_jw_kint(w, "rerun_of", e->j->rerun_of);
	api_jw_kstr(w, "url", url);
	api_jw_end(w);
}

void scheduler_webhook_job_state(struct scheduler *s, const struct scheduler_job *j)
{
	struct job_event e = {s, j};
	char key[128];

	/* the key as the recovery at start looks for an end's: ID:end:ATTEMPTS */
	if (scheduler_state_final(j->state))
		snprintf(key, sizeof(key), "%lld:end:%lld", (long long)j->id,
		         (long long)j->attempts);
	else if (scheduler_state_active(j->state))
		snprintf(key, sizeof(key), "%lld:%s:%s", (long long)j->id,
		         scheduler_state_name(j->state), j->lease_id);
	else
		snprintf(key, sizeof(key), "%lld:%s:%lld", (long long)j->id,
		         scheduler_state_name(j->state), (long long)j->attempts);
	event_queue(s, SCHED_WEBHOOK_JOB_STATE, "job.state", key, j->id, job_more, &e);
}

struct publish_event {
	const char *repo;
	int64_t revision, published_ms;
};

static void publish_more(struct api_jw *w, const void *arg)
{
	const struct publish_event *e = arg;

	api_jw_kstr(w, "repository", e->repo);
	api_jw_kint(w, "revision", e->revision);
	api_jw_kint(w, "published_ms", e->published_ms);
}

void scheduler_webhook_publish(struct scheduler *s, const char *repo, int64_t revision,
                               int64_t published_ms)
{
	struct publish_event e = {repo, revision, published_ms};
	char key[256];

	/* each publish is an event, the same revision published again too */
	snprintf(key, sizeof(key), "%s:%lld:%lld", repo, (long long)revision,
	         (long long)published_ms);
	event_queue(s, SCHED_WEBHOOK_PUBLISH, "publish", key, 0, publish_more, &e);
}

/* The secret in a file, without a trailing newline: read at each send, so rotating it
 * needs no restart. */
static kiln_rc secret_read(const char *path, struct kiln_buf *out, struct kiln_err *err)
{
	kiln_rc rc = util_read_file(path, SECRET_MAX, out, err);

	while (!rc && out->len && isspace((unsigned char)out->ptr[out->len - 1]))
		out->ptr[--out->len] = '\0';
	if (!rc && !out->len)
		rc = kiln_err_set(err, KILN_EINVAL, "%s is empty", path);
	return rc;
}

/* The event name of a body we wrote: after "event":". */
static void event_of(const char *body, char *out, size_t size)
{
	const char *p = strstr(body, "\"event\":\"");
	size_t n = 0;

	if (p)
		for (p += 9; p[n] && p[n] != '"' && n + 1 < size; n++)
			out[n] = p[n];
	out[n] = '\0';
}

enum scheduler_send scheduler_webhook_send(struct scheduler *s,
                                           const struct scheduler_outbox_item *it, int64_t *status,
                                           struct kiln_buf *answer)
{
	const struct scheduler_webhook_cfg *w = scheduler_config_webhook(s->cfg, it->target);
	struct kiln_buf secret = KILN_BUF_INIT(SECRET_MAX + 1);
	struct kiln_err err = KILN_ERR_INIT;
	unsigned char mac[32];
	char hex[65], event[32], sig[96], ev[64], id[KILN_LIMIT_LINE], ts[64];
	const char *headers[5] = {sig, ev, id, ts, NULL};
	enum scheduler_send r = SCHED_SEND_RETRY;
	const char *eid = strchr(it->dedup + 8, ':'); /* webhook:NAME:KEY */

	*status = 0;
	if (!w) {
		kiln_buf_addf(answer, "no [webhook %s] in the configuration", it->target);
		r = SCHED_SEND_REFUSED;
		goto out;
	}
	if (secret_read(w->secret_file, &secret, &err) ||
	    util_hmac_sha256(secret.ptr, secret.len, it->body, strlen(it->body), mac, &err)) {
		kiln_buf_addf(answer, "%.400s", err.msg);
		goto out;
	}
	util_hex_encode(mac, sizeof(mac), hex);
	event_of(it->body, event, sizeof(event));
	snprintf(sig, sizeof(sig), "X-Kiln-Signature-256: sha256=%s", hex);
	snprintf(ev, sizeof(ev), "X-Kiln-Event: %s", event);
	snprintf(id, sizeof(id), "X-Kiln-Delivery: %s:%s", event, eid ? eid + 1 : "");
	snprintf(ts, sizeof(ts), "X-Kiln-Timestamp: %lld", (long long)(it->created_ms / 1000));
	r = scheduler_outbox_http(w->url, "", NULL, headers, it->body, status, answer);
out:
	kiln_buf_release(&secret);
	return r;
}
