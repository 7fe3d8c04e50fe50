/*
 * fair.c - fair share between projects (issue 27), measured without builds: project A
 * queues N short jobs, T dispatch-only clients (one worker, T slots) lease and complete
 * each at once WITHOUT building. Two phases:
 *   solo:  A alone; A's grants per second (what fair share must not cost when B is idle);
 *   mixed: A queues N again; once G of them are granted, B submits one job. How many of
 *          A's grants came between B's submission and B's grant, and how long that was,
 *          in grants per worker slot and in A's mean grant time per slot.
 *
 * usage: fair URL A_TOKEN B_TOKEN WORKER_TOKEN N THREADS
 * prints: solo_grants_per_s a_grants_after_b_sent a_grants_after_b_queued b_wait_ms_sent
 *         b_wait_ms_queued a_grant_ms_per_slot mixed_grants_per_s
 */
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

#define BENCH_SECRET "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define B_AFTER 100 /* B submits once this many of A's jobs were granted */

struct ctx {
	const char *url, *atok, *btok, *wtok;
	long jobs, threads, next;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long grants;         /* in this phase */
	int64_t *order;      /* the job of each grant, in grant order (jobs + 1) */
	int64_t *order_t;    /* and when it was granted */
	int64_t b_job;       /* B's job id */
	long grants_at_b;    /* grants when B's submission was sent */
	long grants_at_b_in; /* grants when its answer came (the job queued by then) */
	int64_t t_b_submit, t_b_in;
};

static struct api_client *client(const char *url, const char *tok)
{
	struct api_client_config cc = {
	    .base_url = url, .token = tok, .header = API_WORKER_SECRET_HEADER ": " BENCH_SECRET};
	struct api_client *c = NULL;

	if (api_client_new(&cc, &c, NULL))
		exit(2);
	return c;
}

static int64_t submit_one(struct api_client *c, long i, const char *who)
{
	struct api_reply r;
	char body[256];
	struct api_call call = {.method = "POST", .path = "/api/v1/jobs", .body = body};
	const char *p;
	int64_t id;

	api_reply_init(&r, KILN_MIB);
	call.body_len = (size_t)snprintf(body, sizeof(body),
	                                 "{\"spec\":\"Name: %s%ld\\nVersion: 1\\n\","
	                                 "\"spec_name\":\"b.spec\"}",
	                                 who, i);
	if (api_client_call(c, &call, &r, NULL) || r.status != 201)
		exit(3);
	p = strstr(r.body.ptr, "\"id\":");
	id = p ? strtoll(p + 5, NULL, 10) : 0;
	api_reply_release(&r);
	return id;
}

static void *submitter(void *p)
{
	struct ctx *x = p;
	struct api_client *c = client(x->url, x->atok);

	for (;;) {
		long i;

		pthread_mutex_lock(&x->lock);
		i = x->next++;
		pthread_mutex_unlock(&x->lock);
		if (i >= x->jobs)
			break;
		submit_one(c, i, "a");
	}
	api_client_free(c);
	return NULL;
}

static bool lease_of(const char *b, char id[33], long *gen, int64_t *job)
{
	const char *p = strstr(b, "\"lease_id\":\""), *g = strstr(b, "\"generation\":");
	const char *j = strstr(b, "\"job_id\":");

	if (!p || !g || !j)
		return false;
	memcpy(id, p + 12, 32);
	id[32] = '\0';
	*gen = strtol(g + 13, NULL, 10);
	*job = strtoll(j + 9, NULL, 10);
	return true;
}

/* A grant happened: record it in order (B's job is found among them afterwards, since a
 * drainer may be granted it before B's submission has its answer). */
static void granted(struct ctx *x, int64_t job)
{
	pthread_mutex_lock(&x->lock);
	if (x->grants <= x->jobs) {
		x->order[x->grants] = job;
		x->order_t[x->grants] = util_clock_mono_ns();
	}
	x->grants++;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

static void *drainer(void *p)
{
	struct ctx *x = p;
	struct api_client *c = client(x->url, x->wtok);
	static const char lease_body[] =
	    "{\"worker\":\"bench\",\"arches\":[\"x86_64\"],\"wait\":0}";
	struct api_call lease = {.method = "POST",
	                         .path = "/api/v1/leases",
	                         .body = lease_body,
	                         .body_len = sizeof(lease_body) - 1};
	struct api_reply r;
	char id[33], path[96], body[64];
	int64_t job;
	long gen;

	api_reply_init(&r, KILN_MIB);
	for (;;) {
		struct api_call done = {.method = "POST", .path = path, .body = body};

		if (api_client_call(c, &lease, &r, NULL))
			exit(4);
		if (r.status == 204)
			break;
		if (r.status != 200 || !lease_of(r.body.ptr, id, &gen, &job))
			exit(5);
		granted(x, job);
		snprintf(path, sizeof(path), "/api/v1/leases/%s/complete", id);
		done.body_len = (size_t)snprintf(
		    body, sizeof(body), "{\"generation\":%ld,\"status\":\"succeeded\"}", gen);
		if (api_client_call(c, &done, &r, NULL) || r.status != 200)
			exit(6);
	}
	api_reply_release(&r);
	api_client_free(c);
	return NULL;
}

/* B's one job, once B_AFTER of A's were granted. */
static void *b_submitter(void *p)
{
	struct ctx *x = p;
	struct api_client *c = client(x->url, x->btok);
	int64_t id;

	pthread_mutex_lock(&x->lock);
	while (x->grants < B_AFTER)
		pthread_cond_wait(&x->cond, &x->lock);
	pthread_mutex_unlock(&x->lock);
	pthread_mutex_lock(&x->lock);
	x->grants_at_b = x->grants;
	x->t_b_submit = util_clock_mono_ns();
	pthread_mutex_unlock(&x->lock);
	id = submit_one(c, 0, "b");
	pthread_mutex_lock(&x->lock);
	x->b_job = id;
	x->grants_at_b_in = x->grants;
	x->t_b_in = util_clock_mono_ns();
	pthread_mutex_unlock(&x->lock);
	api_client_free(c);
	return NULL;
}

static void bench_register(const struct ctx *x)
{
	struct api_client *c = client(x->url, x->wtok);
	char body[128];
	struct api_call call = {.method = "POST", .path = "/api/v1/workers", .body = body};
	struct api_reply r;

	call.body_len = (size_t)snprintf(
	    body, sizeof(body), "{\"name\":\"bench\",\"arches\":[\"x86_64\"],\"slots\":%ld}",
	    x->threads);
	api_reply_init(&r, KILN_MIB);
	if (api_client_call(c, &call, &r, NULL) || r.status != 200)
		exit(8);
	api_reply_release(&r);
	api_client_free(c);
}

static double run(struct ctx *x, void *(*fn)(void *), bool with_b)
{
	pthread_t th[65], b;
	int64_t t0 = util_clock_mono_ns();
	long i;

	for (i = 0; i < x->threads; i++)
		pthread_create(&th[i], NULL, fn, x);
	if (with_b)
		pthread_create(&b, NULL, b_submitter, x);
	for (i = 0; i < x->threads; i++)
		pthread_join(th[i], NULL);
	if (with_b)
		pthread_join(b, NULL);
	return (double)(util_clock_mono_ns() - t0) / 1e9;
}

int main(int argc, char **argv)
{
	struct ctx x = {0};
	double solo, mixed;
	long i, b_at = -1;

	if (argc != 7)
		return 1;
	x.url = argv[1], x.atok = argv[2], x.btok = argv[3], x.wtok = argv[4];
	x.jobs = strtol(argv[5], NULL, 10);
	x.threads = strtol(argv[6], NULL, 10);
	if (x.jobs <= B_AFTER || x.threads < 1 || x.threads > 64 || api_global_init(NULL))
		return 1;
	x.order = calloc((size_t)x.jobs + 1, sizeof(*x.order));
	x.order_t = calloc((size_t)x.jobs + 1, sizeof(*x.order_t));
	if (!x.order || !x.order_t)
		return 1;
	pthread_mutex_init(&x.lock, NULL);
	pthread_cond_init(&x.cond, NULL);
	bench_register(&x);
	/* solo: A alone */
	run(&x, submitter, false);
	solo = run(&x, drainer, false);
	if (x.grants != x.jobs)
		return 7;
	/* mixed: A queues N again, B one job after B_AFTER of A's grants */
	x.next = 0, x.grants = 0;
	run(&x, submitter, false);
	mixed = run(&x, drainer, true);
	for (i = 0; i <= x.jobs && i < x.grants; i++)
		if (x.order[i] == x.b_job)
			b_at = i;
	if (x.grants != x.jobs + 1 || b_at < 0)
		return 9;
	/* solo A grants/s; A grants between B's submission sent and B's grant, and between
	 * its answer (B's job queued) and B's grant (negative: B was granted before the answer
	 * came); B's wait from each in ms; A's mean time per grant per worker slot in ms;
	 * mixed grants/s */
	printf("%.0f %ld %ld %.2f %.2f %.3f %.0f\n", (double)x.jobs / solo, b_at - x.grants_at_b,
	       b_at - x.grants_at_b_in, (double)(x.order_t[b_at] - x.t_b_submit) / 1e6,
	       (double)(x.order_t[b_at] - x.t_b_in) / 1e6,
	       mixed * 1000.0 / (double)x.grants * (double)x.threads, (double)(x.jobs + 1) / mixed);
	free(x.order);
	free(x.order_t);
	return 0;
}
