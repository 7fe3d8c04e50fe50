/*
 * hookstatus.c - commit statuses out (issue 26): a job a webhook made reports its state on
 * its commit through the forge's status API (GitHub and Forgejo POST
 * /repos/OWNER/REPO/statuses/SHA, GitLab POST /projects/ID/statuses/SHA).
 *
 * One thread posts them in the order they were queued, so a commit's statuses arrive in
 * order; a failed post is retried with a doubling delay before the next is tried (a forge
 * that is down delays them all rather than reorder them). Nothing here blocks the
 * scheduler: queueing only appends to a list. The list is memory only: statuses queued
 * when the scheduler stops are lost (the next state change posts again).
 */
#include "util/util.h"

#include <ctype.h>
#include <pthread.h>
#include <time.h>

#include "scheduler/scheduler_int.h"

#define STATUS_TRIES 8
#define STATUS_FIRST_DELAY_MS 200
#define STATUS_QUEUE_MAX 10000
#define TOKEN_MAX 4096
#define STATUS_LAST 1024

struct status_item {
	int64_t job_id;
	char state[16]; /* pending, running, success, failure, error */
	char desc[64];
	bool verdict; /* the reproducibility verdict: its own context, CONTEXT/reproducible */
	struct status_item *next;
};

struct scheduler_statuser {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct status_item *head, *tail;
	size_t n;
	bool stop;
	pthread_t th;
	/* the last status posted per job, by job id modulo the size (the poster thread's
	 * alone): the same state twice in a row is posted once (a job's end can be seen
	 * twice, by its completion and by the recovery at start) */
	struct {
		int64_t job_id;
		char state[16];
		bool verdict;
	} last[STATUS_LAST];
};

static void status_queue(struct scheduler *s, int64_t job_id, const char *state, const char *desc,
                         bool verdict)
{
	struct scheduler_statuser *q = s->statuser;
	struct status_item *it;

	if (!q)
		return;
	it = kiln_calloc(1, sizeof(*it));
	if (!it)
		return;
	it->job_id = job_id;
	it->verdict = verdict;
	snprintf(it->state, sizeof(it->state), "%s", state);
	snprintf(it->desc, sizeof(it->desc), "%s", desc);
	pthread_mutex_lock(&q->lock);
	if (q->n >= STATUS_QUEUE_MAX) {
		pthread_mutex_unlock(&q->lock);
		free(it);
		kiln_log(KILN_LOG_WARN, "job %lld: status dropped, %d queued", (long long)job_id,
		         STATUS_QUEUE_MAX);
		return;
	}
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->n++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void scheduler_hook_status(struct scheduler *s, int64_t job_id, const char *state, const char *desc)
{
	status_queue(s, job_id, state, desc, false);
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
		status_queue(s, orig_id, "success", "reproducible", true);
	else if (*v && strcmp(v, "pending"))
		status_queue(s, orig_id, "failure", v, true);
out:
	kiln_arena_release(&a);
}

void scheduler_hook_job_ended(struct scheduler *s, const struct scheduler_job *j)
{
	if (!s->statuser || !scheduler_state_final(j->state))
		return;
	if (j->rerun_of) {
		verdict_status(s, j->rerun_of);
		return;
	}
	if (j->state == SCHED_SUCCEEDED)
		scheduler_hook_status(s, j->id, "success", "built");
	else if (j->state == SCHED_FAILED)
		scheduler_hook_status(s, j->id, "failure", "the build failed");
	else
		scheduler_hook_status(s, j->id, "error", "cancelled");
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

/* The status call for one item: path and body. */
static void status_call(const struct scheduler *s, const struct scheduler_forge_cfg *f,
                        const struct scheduler_hook_job *h, const struct status_item *it,
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
	if (s->cfg->publish_base_url)
		snprintf(url, sizeof(url), "%s/#/jobs/%lld", s->cfg->publish_base_url,
		         (long long)it->job_id);
	else
		snprintf(url, sizeof(url), "http://%s:%u/#/jobs/%lld", s->public_host, s->port,
		         (long long)it->job_id);
	api_jw_kstr(&w, "target_url", url);
	api_jw_kstr(&w, "description", it->desc);
	api_jw_key(&w, lab ? "name" : "context");
	if (it->verdict)
		snprintf(url, sizeof(url), "%s/reproducible", h->context);
	api_jw_str(&w, it->verdict ? url : h->context);
	api_jw_end(&w);
}

/* One post: KILN_OK when the forge took it or refused it for good (a 4xx but 408 and
 * 429: trying again would not help), else an error to retry. */
static kiln_rc status_post(const struct scheduler *s, const struct scheduler_forge_cfg *f,
                           const struct scheduler_hook_job *h, const struct status_item *it,
                           struct kiln_err *err)
{
	struct kiln_buf token = KILN_BUF_INIT(TOKEN_MAX + 1);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct api_client_config cc = {.base_url = f->api_url, .timeout_ms = 10000};
	struct api_client *c = NULL;
	struct api_call call = {.method = "POST"};
	struct api_reply reply;
	kiln_rc rc = KILN_OK;

	api_reply_init(&reply, 64 * KILN_KIB);
	if (*f->token_file) {
		rc = util_read_file(f->token_file, TOKEN_MAX, &token, err);
		while (!rc && token.len && isspace((unsigned char)token.ptr[token.len - 1]))
			token.ptr[--token.len] = '\0';
		cc.token = token.ptr;
	}
	status_call(s, f, h, it, &path, &body);
	if (!rc)
		rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = api_client_new(&cc, &c, err);
	call.path = path.ptr;
	call.body = body.ptr;
	call.body_len = body.len;
	if (!rc)
		rc = api_client_call(c, &call, &reply, err);
	if (!rc && reply.status >= 300 &&
	    (reply.status >= 500 || reply.status == 408 || reply.status == 429))
		rc = kiln_err_set(err, KILN_ENET, "%s answered %ld", f->name, reply.status);
	else if (!rc && reply.status >= 300)
		kiln_log(KILN_LOG_WARN, "job %lld: %s refused the status (%ld)",
		         (long long)it->job_id, f->name, reply.status);
	api_client_free(c);
	api_reply_release(&reply);
	kiln_buf_release(&token);
	kiln_buf_release(&path);
	kiln_buf_release(&body);
	return rc;
}

/* Wait ms unless told to stop; false when stopping. */
static bool wait_or_stop(struct scheduler_statuser *q, int64_t ms)
{
	int64_t now = util_clock_wall_ms(), end = now + ms;
	struct timespec until = {(time_t)(end / 1000), (long)(end % 1000) * 1000000};
	bool stop;

	/* timedwait takes a CLOCK_REALTIME deadline: the wall clock in ms is that clock */
	pthread_mutex_lock(&q->lock);
	while (!q->stop && pthread_cond_timedwait(&q->cond, &q->lock, &until) == 0)
		;
	stop = q->stop;
	pthread_mutex_unlock(&q->lock);
	return !stop;
}

/* Was this status the last one of its job? Records it as the last otherwise. */
static bool status_repeated(struct scheduler_statuser *q, const struct status_item *it)
{
	size_t k = (size_t)it->job_id % STATUS_LAST;

	if (q->last[k].job_id == it->job_id && q->last[k].verdict == it->verdict &&
	    !strcmp(q->last[k].state, it->state))
		return true;
	q->last[k].job_id = it->job_id;
	q->last[k].verdict = it->verdict;
	memcpy(q->last[k].state, it->state, sizeof(it->state));
	return false;
}

static void status_send(struct scheduler *s, const struct status_item *it)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const struct scheduler_forge_cfg *f;
	struct scheduler_hook_job h = {0};
	int64_t delay = STATUS_FIRST_DELAY_MS;
	int i;

	if (status_repeated(s->statuser, it))
		goto out;
	if (s->store->ops->hook_job_get(s->store, it->job_id, &a, &h, &err))
		goto out; /* no hook job (or unreadable): nothing to report */
	f = scheduler_config_forge(s->cfg, h.forge);
	if (!f || !*f->api_url)
		goto out;
	for (i = 0; i < STATUS_TRIES; i++, delay *= 2) {
		kiln_err_clear(&err);
		if (!status_post(s, f, &h, it, &err))
			goto out;
		if (i + 1 < STATUS_TRIES && !wait_or_stop(s->statuser, delay))
			break;
	}
	kiln_err_wrap(&err, "job %lld: status %s to %s", (long long)it->job_id, it->state, f->name);
	kiln_log_err(KILN_LOG_WARN, &err);
out:
	kiln_arena_release(&a);
}

static void *status_thread(void *arg)
{
	struct scheduler *s = arg;
	struct scheduler_statuser *q = s->statuser;
	struct status_item *it;

	for (;;) {
		pthread_mutex_lock(&q->lock);
		while (!q->stop && !q->head)
			pthread_cond_wait(&q->cond, &q->lock);
		it = q->stop ? NULL : q->head;
		if (it) {
			q->head = it->next;
			if (!q->head)
				q->tail = NULL;
			q->n--;
		}
		pthread_mutex_unlock(&q->lock);
		if (!it)
			return NULL;
		status_send(s, it);
		free(it);
	}
}

kiln_rc scheduler_hook_status_start(struct scheduler *s, struct kiln_err *err)
{
	struct scheduler_statuser *q;

	if (!s->cfg->nhooks)
		return KILN_OK;
	q = kiln_calloc(1, sizeof(*q));
	if (!q)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	s->statuser = q;
	if (pthread_create(&q->th, NULL, status_thread, s)) {
		s->statuser = NULL;
		free(q);
		return kiln_err_set(err, KILN_EIO, "cannot start the status poster");
	}
	return KILN_OK;
}

void scheduler_hook_status_stop(struct scheduler *s)
{
	struct scheduler_statuser *q = s->statuser;
	struct status_item *it;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->th, NULL);
	s->statuser = NULL;
	while ((it = q->head)) {
		q->head = it->next;
		free(it);
	}
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
}
