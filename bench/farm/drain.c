/*
 * drain.c - the scheduler-only part of bench/farm: submit N jobs over the REST API from T
 * threads, then drain them with T dispatch-only clients that lease and complete each job
 * at once WITHOUT building anything. This measures the scheduler (HTTP, JSON, the sqlite3
 * store, lease grants), not builds; the output says so.
 *
 * usage: drain URL SUBMIT_TOKEN WORKER_TOKEN JOBS THREADS
 * prints: submit_per_s grants_per_s lease_p50_ms lease_p99_ms grants
 */
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

struct ctx {
	const char *url, *stok, *wtok;
	char urls[4][256]; /* URL may be several, comma-separated: one scheduler each */
	int nurls;
	long turn; /* threads started: thread i talks to urls[i % nurls] */
	long jobs, threads;
	long next;   /* submit counter */
	long grants; /* leases granted and completed */
	double *lat; /* lease latencies, ms */
	long nlat;
	pthread_mutex_t lock;
};

/* The drain clients are one worker, "bench", with one credential: a worker call must
 * present the secret its name registered with (docs/api.md). */
#define BENCH_SECRET "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct api_client *client(const char *url, const char *tok)
{
	struct api_client_config cc = {
	    .base_url = url, .token = tok, .header = API_WORKER_SECRET_HEADER ": " BENCH_SECRET};
	struct api_client *c = NULL;

	if (api_client_new(&cc, &c, NULL))
		exit(2);
	return c;
}

/* The scheduler the calling thread talks to: the schedulers in turn, one a thread. */
static const char *my_url(struct ctx *x)
{
	long i = __atomic_fetch_add(&x->turn, 1, __ATOMIC_RELAXED);

	return x->urls[i % x->nurls];
}

static void *submitter(void *p)
{
	struct ctx *x = p;
	struct api_client *c = client(my_url(x), x->stok);
	struct api_reply r;
	char body[256];

	api_reply_init(&r, KILN_MIB);
	for (;;) {
		long i;
		struct api_call call = {.method = "POST", .path = "/api/v1/jobs", .body = body};

		pthread_mutex_lock(&x->lock);
		i = x->next++;
		pthread_mutex_unlock(&x->lock);
		if (i >= x->jobs)
			break;
		call.body_len = (size_t)snprintf(body, sizeof(body),
		                                 "{\"spec\":\"Name: b%ld\\nVersion: 1\\n\","
		                                 "\"spec_name\":\"b.spec\"}",
		                                 i);
		if (api_client_call(c, &call, &r, NULL) || r.status != 201)
			exit(3);
	}
	api_reply_release(&r);
	api_client_free(c);
	return NULL;
}

/* The lease id and generation out of a lease reply (the format is the scheduler's own). */
static bool lease_of(const char *b, char id[33], long *gen)
{
	const char *p = strstr(b, "\"lease_id\":\""), *g = strstr(b, "\"generation\":");

	if (!p || !g)
		return false;
	memcpy(id, p + 12, 32);
	id[32] = '\0';
	*gen = strtol(g + 13, NULL, 10);
	return true;
}

static void lat_add(struct ctx *x, int64_t t0)
{
	pthread_mutex_lock(&x->lock);
	if (x->nlat < x->jobs)
		x->lat[x->nlat++] = (double)(util_clock_mono_ns() - t0) / 1e6;
	pthread_mutex_unlock(&x->lock);
}

/* Lease and complete until nothing is left, as kiln worker does: each completion asks for
 * the next job ("next"), a lease call only when its reply had none. A lease's latency is
 * that of the call that granted it. */
static void *drainer(void *p)
{
	struct ctx *x = p;
	struct api_client *c = client(my_url(x), x->wtok);
	static const char lease_body[] =
	    "{\"worker\":\"bench\",\"arches\":[\"x86_64\"],\"wait\":0}";
	struct api_call lease = {.method = "POST",
	                         .path = "/api/v1/leases",
	                         .body = lease_body,
	                         .body_len = sizeof(lease_body) - 1};
	struct api_reply r;
	char id[33], path[96], body[128];
	const char *granted = NULL; /* the lease in r, NULL: none */
	long gen;

	api_reply_init(&r, KILN_MIB);
	for (;;) {
		int64_t t0 = util_clock_mono_ns();
		struct api_call done = {.method = "POST", .path = path, .body = body};

		if (!granted) {
			if (api_client_call(c, &lease, &r, NULL))
				exit(4);
			if (r.status == 204)
				break;
			if (r.status != 200)
				exit(5);
			granted = r.body.ptr;
			lat_add(x, t0);
		}
		if (!lease_of(granted, id, &gen))
			exit(5);
		snprintf(path, sizeof(path), "/api/v1/leases/%s/complete", id);
		done.body_len = (size_t)snprintf(body, sizeof(body),
		                                 "{\"generation\":%ld,\"status\":\"succeeded\","
		                                 "\"next\":{\"arches\":[\"x86_64\"]}}",
		                                 gen);
		t0 = util_clock_mono_ns();
		if (api_client_call(c, &done, &r, NULL) || r.status != 200)
			exit(6);
		pthread_mutex_lock(&x->lock);
		x->grants++;
		pthread_mutex_unlock(&x->lock);
		granted = strstr(r.body.ptr, "\"next_lease\":");
		if (granted)
			lat_add(x, t0);
	}
	api_reply_release(&r);
	api_client_free(c);
	return NULL;
}

/* Register the worker "bench" the drainers lease as (with BENCH_SECRET). */
static void bench_register(const struct ctx *x)
{
	struct api_client *c = client(x->urls[0], x->wtok);
	static const char body[] = "{\"name\":\"bench\",\"arches\":[\"x86_64\"]}";
	struct api_call call = {.method = "POST",
	                        .path = "/api/v1/workers",
	                        .body = body,
	                        .body_len = sizeof(body) - 1};
	struct api_reply r;

	api_reply_init(&r, KILN_MIB);
	if (api_client_call(c, &call, &r, NULL) || r.status != 200)
		exit(8);
	api_reply_release(&r);
	api_client_free(c);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double run(struct ctx *x, void *(*fn)(void *))
{
	pthread_t th[64];
	int64_t t0 = util_clock_mono_ns();
	long i;

	for (i = 0; i < x->threads; i++)
		pthread_create(&th[i], NULL, fn, x);
	for (i = 0; i < x->threads; i++)
		pthread_join(th[i], NULL);
	return (double)(util_clock_mono_ns() - t0) / 1e9;
}

int main(int argc, char **argv)
{
	struct ctx x = {0};
	double ts, td;

	if (argc != 6)
		return 1;
	x.url = argv[1], x.stok = argv[2], x.wtok = argv[3];
	for (const char *u = x.url; u && *u && x.nurls < 4; x.nurls++) {
		const char *e = strchr(u, ',');
		size_t l = e ? (size_t)(e - u) : strlen(u);

		snprintf(x.urls[x.nurls], sizeof(x.urls[0]), "%.*s", (int)l, u);
		u = e ? e + 1 : NULL;
	}
	x.jobs = strtol(argv[4], NULL, 10);
	x.threads = strtol(argv[5], NULL, 10);
	if (x.jobs < 1 || x.threads < 1 || x.threads > 64 || api_global_init(NULL))
		return 1;
	x.lat = calloc((size_t)x.jobs, sizeof(*x.lat));
	pthread_mutex_init(&x.lock, NULL);
	ts = run(&x, submitter);
	bench_register(&x);
	td = run(&x, drainer);
	qsort(x.lat, (size_t)x.nlat, sizeof(*x.lat), cmp);
	printf("%.0f %.0f %.2f %.2f %ld\n", (double)x.jobs / ts, (double)x.grants / td,
	       x.nlat ? x.lat[x.nlat / 2] : 0, x.nlat ? x.lat[x.nlat * 99 / 100] : 0, x.grants);
	free(x.lat);
	return x.grants == x.jobs ? 0 : 7;
}
