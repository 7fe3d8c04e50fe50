/*
 * http_hooks.c - the delivery logs of issue 26, admin scope: the forge webhook deliveries
 * that came in (GET /api/v1/hooks/deliveries), the configured outgoing webhooks with what
 * their outboxes hold (GET /api/v1/webhooks), and each one's events with every attempt to
 * deliver them and the answers (GET /api/v1/webhooks/{name}/deliveries).
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define LOG_LIMIT_DEFAULT 50
#define LOG_LIMIT_MAX 200
#define ATTEMPTS_SHOWN 20

void scheduler_h_hook_deliveries(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_hook_delivery *v = NULL;
	const char *forge = api_req_query(req, "forge");
	struct api_jw w;
	int64_t limit;
	size_t n = 0, i;

	if (api_req_query_int(req, "limit", LOG_LIMIT_DEFAULT, 1, LOG_LIMIT_MAX, &limit, &err) ||
	    s->store->ops->hook_deliveries(s->store, forge ? forge : "", limit, api_req_arena(req),
	                                   &v, &n, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "deliveries");
	api_jw_arr(&w);
	for (i = 0; i < n; i++) {
		api_jw_obj(&w);
		api_jw_kstr(&w, "forge", v[i].forge);
		api_jw_kstr(&w, "delivery", v[i].delivery);
		api_jw_kstr(&w, "event", v[i].event);
		api_jw_kstr(&w, "project", v[i].project);
		api_jw_kint(&w, "received_ms", v[i].received_ms);
		api_jw_kint(&w, "status", v[i].status);
		api_jw_key(&w, "answer");
		api_jw_raw(&w, *v[i].result ? v[i].result : "null"); /* JSON we wrote */
		api_jw_end(&w);
	}
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* A webhook URL as shown: scheme and host only, since a chat service's URL path often is
 * its secret. */
static void url_shown(const char *url, struct kiln_buf *out)
{
	const char *host = strstr(url, "://");
	size_t n;

	host = host ? host + 3 : url;
	n = strcspn(host, "/?#");
	kiln_buf_add(out, url, (size_t)(host - url) + n);
	if (host[n])
		kiln_buf_addstr(out, "/...");
}

static int64_t count_of(const struct scheduler_outbox_count *c, size_t n, const char *target,
                        const char *state)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].target, target) && !strcmp(c[i].state, state))
			return c[i].n;
	return 0;
}

static void webhook_json(struct api_jw *w, const struct scheduler_webhook_cfg *h,
                         const struct scheduler_outbox_count *c, size_t n)
{
	struct kiln_buf url = KILN_BUF_INIT(KILN_LIMIT_LINE);

	url_shown(h->url, &url);
	api_jw_obj(w);
	api_jw_kstr(w, "name", h->name);
	api_jw_kstr(w, "url", url.err ? "" : url.ptr ? url.ptr : "");
	api_jw_key(w, "events");
	api_jw_arr(w);
	if (h->events & SCHED_WEBHOOK_JOB_STATE)
		api_jw_str(w, "job.state");
	if (h->events & SCHED_WEBHOOK_PUBLISH)
		api_jw_str(w, "publish");
	api_jw_end(w);
	api_jw_kint(w, "pending", count_of(c, n, h->name, "pending"));
	api_jw_kint(w, "delivered", count_of(c, n, h->name, "delivered"));
	api_jw_kint(w, "failed", count_of(c, n, h->name, "failed"));
	api_jw_end(w);
	kiln_buf_release(&url);
}

void scheduler_h_webhooks(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_count *c = NULL;
	struct api_jw w;
	size_t n = 0, i;

	if (s->store->ops->outbox_counts(s->store, "webhook", api_req_arena(req), &c, &n, &err)) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_key(&w, "webhooks");
	api_jw_arr(&w);
	for (i = 0; i < s->cfg->nwebhooks; i++)
		webhook_json(&w, &s->cfg->webhooks[i], c, n);
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}

/* One event with its last attempts. */
static kiln_rc delivery_json(struct scheduler *s, struct api_jw *w,
                             const struct scheduler_outbox_item *it, struct kiln_arena *a,
                             struct kiln_err *err)
{
	struct scheduler_outbox_attempt *v = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	rc = s->store->ops->outbox_attempts(s->store, it->id, a, &v, &n, err);
	if (rc)
		return rc;
	api_jw_obj(w);
	api_jw_kint(w, "id", it->id);
	api_jw_key(w, "event");
	api_jw_raw(w, it->body); /* JSON we wrote: the event as sent, its id X-Kiln-Delivery */
	api_jw_kint(w, "job_id", it->job_id);
	api_jw_kstr(w, "state", it->state);
	api_jw_kint(w, "attempts", it->attempts);
	api_jw_kint(w, "created_ms", it->created_ms);
	api_jw_kint(w, "updated_ms", it->updated_ms);
	if (!strcmp(it->state, "pending"))
		api_jw_kint(w, "next_ms", it->next_ms);
	api_jw_key(w, "attempt_list");
	api_jw_arr(w);
	for (i = n > ATTEMPTS_SHOWN ? n - ATTEMPTS_SHOWN : 0; i < n; i++) {
		api_jw_obj(w);
		api_jw_kint(w, "n", v[i].n);
		api_jw_kint(w, "at_ms", v[i].at_ms);
		api_jw_kint(w, "status", v[i].status);
		api_jw_kstr(w, "answer", v[i].answer);
		api_jw_end(w);
	}
	api_jw_end(w);
	api_jw_end(w);
	return KILN_OK;
}

void scheduler_h_webhook_deliveries(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	const char *name = api_req_param(req, 0);
	struct scheduler_outbox_item *v = NULL;
	int64_t limit, before;
	struct api_jw w;
	size_t n = 0, i;
	kiln_rc rc;

	if (!scheduler_config_webhook(s->cfg, name)) {
		api_resp_error(resp, 404, "not_found", "no [webhook %.64s]", name);
		return;
	}
	rc = api_req_query_int(req, "limit", LOG_LIMIT_DEFAULT, 1, LOG_LIMIT_MAX, &limit, &err);
	if (!rc)
		rc = api_req_query_int(req, "before", 0, 0, INT64_MAX, &before, &err);
	if (!rc)
		rc = s->store->ops->outbox_list(s->store, "webhook", name, before, limit, a, &v, &n,
		                                &err);
	if (rc)
		goto fail;
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "webhook", name);
	api_jw_key(&w, "deliveries");
	api_jw_arr(&w);
	for (i = 0; i < n && !rc; i++)
		rc = delivery_json(s, &w, &v[i], a, &err);
	api_jw_end(&w);
	api_jw_end(&w);
	if (rc)
		goto fail;
	scheduler_reply_json(resp, 200);
	return;
fail:
	kiln_buf_reset(&resp->body);
	api_resp_from_err(resp, &err);
}
