/*
 * outbox.c - the durable outbox (issue 26): commit statuses (hookstatus.c) and outgoing
 * webhook events (webhook.c) are rows in the store before anything is sent, so a stop, a
 * crash or kill -9 loses none: they are delivered at least once, after a restart if need
 * be.
 *
 * One thread sends them. A target (a commit's statuses, a webhook URL) gets its items in
 * the order they were queued: only its oldest pending item is tried, and a failed try
 * holds the target back until its next try, a doubling delay from 200 ms up to 5 minutes;
 * other targets go on meanwhile. An answer that will not change (a 4xx but 408 and 429)
 * marks the item failed; so does the 50th failed try (about 3.5 hours of a dead target).
 * Every try is recorded with its answer: the delivery log of GET /api/v1/webhooks/NAME/
 * deliveries and of the dashboard. Delivered and failed items go after 30 days.
 */
#include "util/util.h"

#include <pthread.h>
#include <time.h>

#include "scheduler/scheduler_int.h"

#define OUTBOX_FIRST_DELAY_MS 200
#define OUTBOX_MAX_DELAY_MS (5 * 60 * 1000)
#define OUTBOX_TRIES 50
#define OUTBOX_IDLE_MS 60000
#define OUTBOX_HTTP_TIMEOUT_MS 5000
#define OUTBOX_RECOVER_MS (7 * 86400 * 1000LL)
/* Delivered and failed items are kept this long for the delivery logs, well beyond the
 * recovery's week: their dedup keys keep a recovered end from being sent twice. */
#define OUTBOX_KEEP_MS (30 * 86400 * 1000LL)
#define OUTBOX_PRUNE_EVERY_MS (3600 * 1000LL)

struct scheduler_outbox {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, kicked;
	pthread_t th;
};

void scheduler_outbox_kick(struct scheduler *s)
{
	struct scheduler_outbox *q = s->outbox;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->kicked = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void scheduler_outbox_put(struct scheduler *s, const struct scheduler_outbox_item *v, size_t n)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (!n)
		return;
	if (s->store->ops->outbox_put(s->store, v, n, &err)) {
		kiln_err_wrap(&err, "job %lld: cannot queue %s", (long long)v[0].job_id, v[0].kind);
		kiln_log_err(KILN_LOG_WARN, &err);
		return;
	}
	scheduler_outbox_kick(s);
}

/* The start of an answer as printable ASCII: it is the receiver's, any bytes at all, and
 * goes into the store (PostgreSQL takes only valid UTF-8) and into JSON. */
static void answer_add(struct kiln_buf *out, const char *p, size_t len)
{
	size_t i;

	for (i = 0; p && i < len && i < 500; i++)
		kiln_buf_addch(
		    out, (unsigned char)p[i] >= 0x20 && (unsigned char)p[i] < 0x7f ? p[i] : '?');
}

enum scheduler_send scheduler_outbox_http(const char *base_url, const char *path, const char *token,
                                          const char *const *headers, const char *body,
                                          int64_t *status, struct kiln_buf *answer)
{
	struct api_client_config cc = {
	    .base_url = base_url, .token = token, .timeout_ms = OUTBOX_HTTP_TIMEOUT_MS};
	struct api_call call = {
	    .method = "POST", .path = path, .body = body, .body_len = strlen(body)};
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *c = NULL;
	struct api_reply reply;
	enum scheduler_send r = SCHED_SEND_RETRY;
	size_t i;

	for (i = 0; headers && headers[i] && i < KILN_ARRAY_SIZE(call.headers); i++)
		call.headers[i] = headers[i];
	api_reply_init(&reply, 64 * KILN_KIB);
	*status = 0;
	if (api_client_new(&cc, &c, &err) || api_client_call(c, &call, &reply, &err)) {
		kiln_buf_addf(answer, "%.500s", err.msg);
		goto out;
	}
	*status = reply.status;
	answer_add(answer, reply.body.ptr, reply.body.len);
	if (reply.status >= 200 && reply.status < 300)
		r = SCHED_SEND_OK;
	else if (reply.status < 500 && reply.status != 408 && reply.status != 429)
		r = SCHED_SEND_REFUSED; /* trying again would not help */
out:
	api_client_free(c);
	api_reply_release(&reply);
	return r;
}

/* Wait until ms from now, a kick or the stop; false when stopping. */
static bool wait_for(struct scheduler_outbox *q, int64_t ms)
{
	int64_t end = util_clock_wall_ms() + ms;
	struct timespec until = {(time_t)(end / 1000), (long)(end % 1000) * 1000000};
	bool go;

	/* timedwait takes a CLOCK_REALTIME deadline: the wall clock in ms is that clock */
	pthread_mutex_lock(&q->lock);
	while (!q->stop && !q->kicked && pthread_cond_timedwait(&q->cond, &q->lock, &until) == 0)
		;
	q->kicked = false;
	go = !q->stop;
	pthread_mutex_unlock(&q->lock);
	return go;
}

static int64_t backoff_ms(int64_t tries)
{
	int64_t d = OUTBOX_FIRST_DELAY_MS;

	while (--tries > 0 && d < OUTBOX_MAX_DELAY_MS)
		d *= 2;
	return d < OUTBOX_MAX_DELAY_MS ? d : OUTBOX_MAX_DELAY_MS;
}

/* Try one item and record the try; the time of its next try (0 when it is done). *stuck
 * when the store could not record it. */
static int64_t item_try(struct scheduler *s, const struct scheduler_outbox_item *it, bool *stuck)
{
	struct kiln_buf answer = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_attempt at = {it->id, it->attempts + 1, 0, 0, ""};
	enum scheduler_send r;
	const char *state = "pending";
	int64_t next = 0;

	if (!strcmp(it->kind, "status"))
		r = scheduler_hook_status_send(s, it, &at.status, &answer);
	else if (!strcmp(it->kind, "webhook"))
		r = scheduler_webhook_send(s, it, &at.status, &answer);
	else
		r = SCHED_SEND_REFUSED;
	at.at_ms = util_clock_wall_ms();
	at.answer = kiln_buf_finish(&answer, NULL) ? "" : answer.ptr;
	if (r == SCHED_SEND_OK)
		state = "delivered";
	else if (r == SCHED_SEND_REFUSED || at.n >= OUTBOX_TRIES)
		state = "failed";
	else
		next = at.at_ms + backoff_ms(at.n);
	if (r != SCHED_SEND_OK)
		kiln_log(KILN_LOG_WARN, "%s %lld to %s: try %lld: %lld %s%s", it->kind,
		         (long long)it->id, it->target, (long long)at.n, (long long)at.status,
		         at.answer, next ? "" : " (given up)");
	if (s->store->ops->outbox_attempt(s->store, &at, state, next, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		*stuck = true;
	}
	kiln_buf_release(&answer);
	return next;
}

/* Was target seen already in this pass? Records it otherwise. */
static bool target_seen(const char **seen, size_t *n, const char *target)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(seen[i], target))
			return true;
	seen[(*n)++] = target;
	return false;
}

/* One pass over the pending items: each target's oldest one is tried when due. The time
 * the next is due, or 0 when one was tried (there may be more to do at once). */
static int64_t outbox_pass(struct scheduler *s)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_item *v = NULL;
	const char **seen = NULL;
	int64_t now = util_clock_wall_ms(), due = now + OUTBOX_IDLE_MS;
	size_t n = 0, nseen = 0, i;
	bool tried = false, stuck = false, held = false;

	/* several schedulers on one store: one of them sends (the "outbox" duty) */
	if (s->store->ops->duty(s->store, "outbox", &held, &err))
		kiln_log_err(KILN_LOG_DEBUG, &err);
	if (!held) {
		due = now + 1000;
		goto out;
	}
	if (s->store->ops->outbox_pending(s->store, &a, &v, &n, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		due = now + 1000;
		goto out;
	}
	seen = n ? kiln_arena_array(&a, n, sizeof(*seen)) : NULL;
	if (n && !seen) {
		due = now + 1000;
		goto out;
	}
	for (i = 0; i < n; i++) {
		int64_t next;

		if (target_seen(seen, &nseen, v[i].target))
			continue; /* held back behind an older item of its target */
		next = v[i].next_ms > now ? v[i].next_ms : item_try(s, &v[i], &stuck);
		tried |= v[i].next_ms <= now;
		if (next && next < due)
			due = next;
	}
out:
	kiln_arena_release(&a);
	if (stuck)
		return now + 5000; /* the store records no try: not again at once */
	return tried ? 0 : due;
}

static void outbox_prune(struct scheduler *s)
{
	struct kiln_err err = KILN_ERR_INIT;

	if (s->store->ops->outbox_prune(s->store, util_clock_wall_ms() - OUTBOX_KEEP_MS, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
}

static void *outbox_thread(void *arg)
{
	struct scheduler *s = arg;
	int64_t due = 0, prune = 0;

	for (;;) {
		int64_t wait = due ? due - util_clock_wall_ms() : 0;

		if (util_clock_wall_ms() >= prune) {
			outbox_prune(s);
			prune = util_clock_wall_ms() + OUTBOX_PRUNE_EVERY_MS;
		}

		if (wait > 0 && !wait_for(s->outbox, wait))
			return NULL;
		pthread_mutex_lock(&s->outbox->lock);
		if (s->outbox->stop) {
			pthread_mutex_unlock(&s->outbox->lock);
			return NULL;
		}
		s->outbox->kicked = false;
		pthread_mutex_unlock(&s->outbox->lock);
		due = outbox_pass(s);
	}
}

/* Job ends the last stop cut off before their statuses or events were queued: of hook
 * jobs (statuses), or since a webhook's newest event (a new one gets no history). */
static void outbox_recover(struct scheduler *s, const char *prefix, const char *webhook)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_outbox_item *last = NULL;
	int64_t *ids = NULL, since = util_clock_wall_ms() - OUTBOX_RECOVER_MS;
	size_t n = 0, i;
	bool hook_only = !webhook;

	if (webhook) {
		if (s->store->ops->outbox_list(s->store, "webhook", webhook, 0, 1, &a, &last, &n,
		                               &err)) {
			kiln_log_err(KILN_LOG_WARN, &err);
			goto out;
		}
		if (!n)
			goto out;
		if (last->created_ms - 60000 > since)
			since = last->created_ms - 60000;
	}
	if (s->store->ops->outbox_ends_missing(s->store, since, prefix, hook_only, &a, &ids, &n,
	                                       &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct kiln_arena ja = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
		struct scheduler_job j = {0};

		if (!s->store->ops->job_get(s->store, ids[i], &ja, &j, NULL)) {
			if (hook_only)
				scheduler_hook_job_ended(s, &j);
			else
				scheduler_webhook_job_state(s, &j);
		}
		kiln_arena_release(&ja);
	}
out:
	kiln_arena_release(&a);
}

kiln_rc scheduler_outbox_start(struct scheduler *s, struct kiln_err *err)
{
	struct scheduler_outbox *q;
	size_t i;

	if (!s->cfg->nhooks && !s->cfg->nwebhooks)
		return KILN_OK;
	q = kiln_calloc(1, sizeof(*q));
	if (!q)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	s->outbox = q;
	if (s->cfg->nhooks)
		outbox_recover(s, "status:", NULL);
	for (i = 0; i < s->cfg->nwebhooks; i++) {
		const struct scheduler_webhook_cfg *w = &s->cfg->webhooks[i];
		char prefix[128];

		snprintf(prefix, sizeof(prefix), "webhook:%s:", w->name);
		if (w->events & SCHED_WEBHOOK_JOB_STATE)
			outbox_recover(s, prefix, w->name);
	}
	if (pthread_create(&q->th, NULL, outbox_thread, s)) {
		s->outbox = NULL;
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->cond);
		free(q);
		return kiln_err_set(err, KILN_EIO, "cannot start the outbox sender");
	}
	return KILN_OK;
}

void scheduler_outbox_stop(struct scheduler *s)
{
	struct scheduler_outbox *q = s->outbox;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->th, NULL);
	s->outbox = NULL;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
}

void scheduler_job_url(const struct scheduler *s, int64_t job_id, char *out, size_t size)
{
	if (s->cfg->publish_base_url)
		snprintf(out, size, "%s/#/jobs/%lld", s->cfg->publish_base_url, (long long)job_id);
	else
		snprintf(out, size, "http://%s:%u/#/jobs/%lld", s->public_host, s->port,
		         (long long)job_id);
}
