/*
 * web.c - the dashboard: the static files of web/ (embedded into the binary at build time,
 * so `kiln scheduler` serves them from a clean build with nothing installed beside it),
 * served at / and /ui/NAME with ETag, Cache-Control and a Content-Security-Policy; and the
 * small time series its chart draws (queue depth and reproducibility verdicts over time),
 * sampled in memory by the serve loop (docs/web.md).
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

/* Scripts and styles come only from the scheduler itself (no inline code, no CDN); the
 * chart is inline SVG built through the DOM, which 'self' allows. */
#define WEB_CSP                                                                                    \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "          \
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

static const struct scheduler_web_asset *asset_find(const char *path)
{
	const struct scheduler_web_asset *a;

	for (a = scheduler_web_assets; a->path; a++)
		if (!strcmp(a->path, path))
			return a;
	return NULL;
}

void scheduler_h_web(void *ctx, struct api_req *req, struct api_resp *resp)
{
	const char *name = api_req_param(req, 0);
	const struct scheduler_web_asset *a;
	const char *inm;

	(void)ctx;
	a = asset_find(name ? name : "index.html");
	if (!a) {
		api_resp_error(resp, 404, "not_found", "no such dashboard file");
		return;
	}
	api_resp_header(resp, "ETag", a->etag);
	/* Names do not change with contents: revalidate every time (a 304 is cheap). */
	api_resp_header(resp, "Cache-Control", "no-cache");
	api_resp_header(resp, "Content-Security-Policy", WEB_CSP);
	api_resp_header(resp, "X-Content-Type-Options", "nosniff");
	api_resp_header(resp, "Referrer-Policy", "no-referrer");
	inm = api_req_header(req, "If-None-Match");
	if (inm && api_etag_match(inm, a->etag)) {
		resp->status = 304;
		resp->content_type = a->content_type;
		return;
	}
	resp->status = 200;
	resp->content_type = a->content_type;
	kiln_buf_add(&resp->body, a->data, a->len);
}

/* ---------------------------------------------------------------------------------------- */
/* The time series */

void scheduler_history_tick(struct scheduler *s, int64_t now_ms)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct scheduler_history *h = &s->history;
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_counts c;
	struct scheduler_sample x = {0};
	size_t i;

	if (now_ms < h->next_ms)
		return;
	h->next_ms = now_ms + s->cfg->history_ms;
	if (s->store->ops->counts(s->store, &a, &c, &err)) {
		kiln_log(KILN_LOG_WARN, "dashboard sample: %s", err.msg);
		goto out;
	}
	x.t_ms = now_ms;
	x.queued = c.by_state[SCHED_QUEUED];
	x.running = c.by_state[SCHED_LEASED] + c.by_state[SCHED_BUILDING];
	x.succeeded = c.by_state[SCHED_SUCCEEDED];
	x.failed = c.by_state[SCHED_FAILED];
	for (i = 0; i < KILN_ARRAY_SIZE(x.verdicts); i++)
		x.verdicts[i] = c.verdicts[i];
	pthread_mutex_lock(&h->lock);
	if (h->n < SCHED_HISTORY_MAX) {
		h->v[(h->head + h->n) % SCHED_HISTORY_MAX] = x;
		h->n++;
	} else {
		h->v[h->head] = x;
		h->head = (h->head + 1) % SCHED_HISTORY_MAX;
	}
	pthread_mutex_unlock(&h->lock);
out:
	kiln_arena_release(&a);
}

static void sample_json(struct api_jw *w, const struct scheduler_sample *x)
{
	size_t i;

	api_jw_obj(w);
	api_jw_kint(w, "t", x->t_ms);
	api_jw_kint(w, "queued", x->queued);
	api_jw_kint(w, "running", x->running);
	api_jw_kint(w, "succeeded", x->succeeded);
	api_jw_kint(w, "failed", x->failed);
	api_jw_key(w, "verdicts");
	api_jw_obj(w);
	for (i = 0; i < KILN_ARRAY_SIZE(x->verdicts); i++)
		api_jw_kint(w, scheduler_verdict_names[i], x->verdicts[i]);
	api_jw_end(w);
	api_jw_end(w);
}

void scheduler_h_history(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct scheduler_history *h = &s->history;
	struct scheduler_sample *copy;
	struct api_jw w;
	size_t n, i;

	copy = kiln_arena_array(api_req_arena(req), SCHED_HISTORY_MAX, sizeof(*copy));
	if (!copy) {
		api_resp_error(resp, 500, "internal", "out of memory");
		return;
	}
	pthread_mutex_lock(&h->lock);
	n = h->n;
	for (i = 0; i < n; i++)
		copy[i] = h->v[(h->head + i) % SCHED_HISTORY_MAX];
	pthread_mutex_unlock(&h->lock);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "interval_ms", s->cfg->history_ms);
	api_jw_kint(&w, "max_samples", SCHED_HISTORY_MAX);
	api_jw_key(&w, "samples");
	api_jw_arr(&w);
	for (i = 0; i < n; i++)
		sample_json(&w, &copy[i]);
	api_jw_end(&w);
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}
