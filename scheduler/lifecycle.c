/*
 * lifecycle.c - scheduler_run(): the data directory, store and keys opened, the first
 * admin token and the configured tokens, then the threads started (HTTP, diffoscope,
 * publishers), the work left by a stop finished, and the serve-until-stopped loop (the
 * reaper, history samples, long-poll wake-ups); everything stopped and released after.
 * With several schedulers on one store the reaper and each repository's publisher are
 * duties one of them holds at a time, and another's writes wake the long polls here.
 */
#include "util/util.h"

#include <poll.h>
#include <sys/resource.h>

#include "scheduler/scheduler_int.h"

static kiln_rc auth_cb(void *ctx, const char *token, size_t len, unsigned *scopes,
                       int64_t *token_id, int64_t *project_id, struct kiln_err *err)
{
	struct scheduler *s = ctx;
	char hash[65];
	kiln_rc rc;

	rc = api_token_hash(token, len, hash, err);
	if (!rc)
		rc = s->store->ops->token_lookup(s->store, hash, token_id, scopes, project_id, err);
	if (rc == KILN_EAUTH)
		kiln_err_clear(err), kiln_err_set(err, KILN_EAUTH, "invalid token");
	return rc;
}

static void say(int fd, const char *fmt, ...) KILN_PRINTF(2, 3);
static void say(int fd, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 &&
	    util_write_all(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, NULL))
		return; /* the reader went away; nothing else to tell */
}

/* First start: an admin token, shown once and kept in DATA/admin.token (0600). */
static kiln_rc admin_bootstrap(struct scheduler *s, int ready_fd, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct scheduler_token *t = NULL;
	char tok[API_TOKEN_LEN + 1], hash[65];
	size_t n = 0;
	int64_t id;
	kiln_rc rc;

	rc = s->store->ops->tokens_list(s->store, &a, &t, &n, err);
	if (rc || n)
		goto out;
	rc = api_token_generate(tok, err);
	if (!rc)
		rc = api_token_hash(tok, strlen(tok), hash, err);
	if (!rc)
		rc = s->store->ops->token_insert(s->store, hash, API_SCOPE_ALL, "admin",
		                                 SCHED_PROJECT_DEFAULT, util_clock_wall_ms(), &id,
		                                 err);
	kiln_buf_addf(&path, "%s/admin.token", s->cfg->data_dir);
	if (!rc)
		rc = kiln_buf_finish(&path, err);
	kiln_buf_addch(&path, '\0');
	if (!rc) {
		char line[API_TOKEN_LEN + 2];

		snprintf(line, sizeof(line), "%s\n", tok);
		rc = util_write_atomic(path.ptr, line, strlen(line), 0600, err);
	}
	if (!rc)
		say(ready_fd, "admin token: %s\n", tok);
	explicit_bzero(tok, sizeof(tok));
out:
	kiln_buf_release(&path);
	kiln_arena_release(&a);
	return rc;
}

/* [tokens] of the configuration: each one the store does not know yet is added (after the
 * admin bootstrap: a store with tokens gets no admin token). A declared token that was
 * revoked stays revoked: a warning says so. */
static kiln_rc config_tokens(struct scheduler *s, struct kiln_err *err)
{
	const struct scheduler_token_cfg *t = s->cfg->tokens;
	struct kiln_err e2 = KILN_ERR_INIT;
	unsigned scopes;
	int64_t id, project;
	size_t i;
	kiln_rc rc;

	for (i = 0; i < s->cfg->ntokens; i++) {
		kiln_err_clear(&e2);
		rc =
		    s->store->ops->token_lookup(s->store, t[i].sha256, &id, &scopes, &project, &e2);
		if (rc == KILN_OK) {
			if (scopes != t[i].scopes)
				kiln_log(
				    KILN_LOG_WARN,
				    "token '%s' is in the store with other scopes: kept as stored "
				    "(revoke it to change them)",
				    t[i].name);
			continue;
		}
		if (rc != KILN_EAUTH)
			return kiln_err_set(err, rc, "%s", e2.msg);
		kiln_err_clear(&e2);
		if (s->store->ops->token_insert(s->store, t[i].sha256, t[i].scopes, t[i].name,
		                                SCHED_PROJECT_DEFAULT, util_clock_wall_ms(), &id,
		                                &e2))
			kiln_log(KILN_LOG_WARN, "token '%s' from the configuration not added: %s",
			         t[i].name, e2.msg);
		else
			kiln_log(KILN_LOG_INFO, "token '%s' (id %lld) added from the configuration",
			         t[i].name, (long long)id);
	}
	return KILN_OK;
}

static kiln_rc tls_read(const char *path, char **out, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	kiln_rc rc;

	*out = NULL;
	if (!path)
		return KILN_OK;
	rc = util_read_file(path, KILN_MIB, &b, err);
	if (!rc)
		*out = kiln_buf_take(&b, NULL);
	kiln_buf_release(&b);
	return rc;
}

static kiln_rc http_start(struct scheduler *s, struct kiln_err *err)
{
	const struct scheduler_config *cfg = s->cfg;
	struct api_server_config hc = {0};
	char *cert = NULL, *key = NULL;
	kiln_rc rc;

	rc = tls_read(cfg->tls_cert, &cert, err);
	if (!rc)
		rc = tls_read(cfg->tls_key, &key, err);
	if (rc)
		goto out;
	hc.listen = cfg->listen;
	hc.reserved_listen = cfg->worker_listen;
	hc.threads = cfg->threads;
	hc.max_conns = (unsigned)cfg->max_conns;
	hc.max_conns_per_address = (unsigned)cfg->max_conns_per_address;
	hc.idle_timeout_s = (unsigned)((cfg->idle_timeout_ms + 999) / 1000);
	hc.max_body = cfg->max_body;
	hc.max_upload = cfg->max_upload;
	hc.upload_dir = s->tmp_dir;
	hc.tls_cert_pem = cert;
	hc.tls_key_pem = key;
	hc.anonymous_read = cfg->anonymous_read;
	hc.routes = scheduler_routes;
	hc.ctx = s;
	hc.auth = auth_cb;
	rc = api_server_new(&hc, &s->http, err);
	if (!rc) {
		const char *colon = strrchr(cfg->listen, ':');
		int hl = colon ? (int)(colon - cfg->listen) : 0;

		s->port = api_server_port(s->http);
		snprintf(s->public_host, sizeof(s->public_host), "%.*s", hl, cfg->listen);
		/* A wildcard address is no address a client can use. */
		if (!hl || !strcmp(s->public_host, "0.0.0.0") || !strcmp(s->public_host, "[::]"))
			snprintf(s->public_host, sizeof(s->public_host), "localhost");
	}
out:
	free(cert);
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
	return rc;
}

/* Every connection is a descriptor: max_connections (on each listener) must fit under the
 * soft limit, often 1024, or accept() fails for everyone, workers included. Raised to the
 * hard limit; what still does not fit is said. */
static void nofile_raise(const struct scheduler_config *cfg)
{
	int64_t need = cfg->max_conns * (cfg->worker_listen ? 2 : 1) + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && (int64_t)rl.rlim_cur < need)
		kiln_log(KILN_LOG_WARN,
		         "open files are limited to %llu, under the %lld that max_connections "
		         "needs: raise the limit (ulimit -n) or lower max_connections",
		         (unsigned long long)rl.rlim_cur, (long long)need);
}

static void scheduler_release(struct scheduler *s)
{
	api_server_free(s->http);
	scheduler_store_close(s->store);
	scheduler_datadir_release(s);
	scheduler_jobcache_free(s->jobcache);
	scheduler_cands_free(s->cands);
	scheduler_leases_free(s->leases);
	pthread_mutex_destroy(&s->log_lock);
	pthread_mutex_destroy(&s->stats_lock);
	pthread_mutex_destroy(&s->workers_lock);
	pthread_mutex_destroy(&s->history.lock);
	pthread_mutex_destroy(&s->batch_lock);
}

/* The reaper runs on one scheduler at a time among those sharing the store. The one that
 * holds it finishes what a stop (or a scheduler that died) left of jobs that ended
 * (reproducibility, publishing) as it takes the duty: at start, or when it takes it over.
 * (A scheduler that starts beside a running one leaves that work to the running one.) */
static void reaper_duty(struct scheduler *s)
{
	struct kiln_err err = KILN_ERR_INIT;
	bool held = false;

	if (s->store->ops->duty(s->store, "reaper", &held, &err))
		kiln_log_err(KILN_LOG_DEBUG, &err);
	if (held && !s->reaper) {
		kiln_log(KILN_LOG_INFO, "the lease reaper runs on this scheduler");
		__atomic_store_n(&s->reaper, true, __ATOMIC_RELAXED);
		scheduler_job_ended_recover(s);
	} else if (!held && s->reaper) {
		kiln_log(KILN_LOG_WARN, "the lease reaper runs on this scheduler no more");
		__atomic_store_n(&s->reaper, false, __ATOMIC_RELAXED);
	}
}

/* Another scheduler on the store queued or ended a job, queued an outbox item or
 * announced repository repo. */
static void peers_changed(void *arg, enum scheduler_heard what, const char *repo)
{
	struct scheduler *s = arg;

	if (what == SCHED_HEARD_REPO)
		scheduler_publish_heard(s, repo);
	else if (what == SCHED_HEARD_QUEUED)
		scheduler_queue_changed(s);
	else if (what == SCHED_HEARD_ENDED)
		api_server_wake(s->http);
	else
		scheduler_outbox_kick(s); /* a status or event to send, if this one sends */
}

static void serve(struct scheduler *s, volatile sig_atomic_t *stop)
{
	int64_t next_reap = 0;

	while (!*stop) {
		int64_t now = util_clock_wall_ms();

		if (now >= next_reap) {
			reaper_duty(s);
			if (s->reaper)
				scheduler_reap(s);
			scheduler_publish_duties(s);
			next_reap = now + s->cfg->tick_ms;
		}
		scheduler_history_tick(s, now);
		api_server_tick(s->http);
		(void)poll(NULL, 0, (int)(s->cfg->tick_ms < 100 ? s->cfg->tick_ms : 100));
	}
}

/* The store the configuration names: PostgreSQL at [storage] database, else sqlite3 in
 * data_dir/kiln.db (db holds its path). */
static kiln_rc store_open(const struct scheduler_config *cfg, struct kiln_buf *db,
                          struct scheduler_store **out, struct kiln_err *err)
{
	kiln_rc rc;

	if (cfg->database) {
		rc = scheduler_store_open_pg_pool(cfg->database, (unsigned)cfg->store_pool, out,
		                                  err);
		if (rc)
			kiln_err_wrap(err, "storage.database");
		return rc;
	}
	kiln_buf_addf(db, "%s/kiln.db", cfg->data_dir);
	rc = kiln_buf_finish(db, err);
	return rc ? rc : scheduler_store_open_sqlite(db->ptr, out, err);
}

kiln_rc scheduler_run(const struct scheduler_config *cfg_in, volatile sig_atomic_t *stop,
                      int ready_fd, struct kiln_err *err)
{
	struct scheduler s = {0};
	struct scheduler_config *cfg = (struct scheduler_config *)cfg_in;
	struct kiln_buf db = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	s.cfg = cfg;
	pthread_mutex_init(&s.log_lock, NULL);
	pthread_mutex_init(&s.stats_lock, NULL);
	pthread_mutex_init(&s.workers_lock, NULL);
	pthread_mutex_init(&s.history.lock, NULL);
	pthread_mutex_init(&s.batch_lock, NULL);
	s.jobcache = scheduler_jobcache_new();
	s.cands = scheduler_cands_new();
	s.leases = scheduler_leases_new();
	rc = scheduler_datadir_open(&s, cfg, err);
	if (!rc)
		rc = store_open(cfg, &db, &s.store, err);
	if (!rc)
		rc = scheduler_keys_load(&s, cfg, err);
	if (!rc)
		rc = admin_bootstrap(&s, ready_fd, err);
	if (!rc)
		rc = config_tokens(&s, err);
	if (!rc) {
		nofile_raise(cfg);
		rc = http_start(&s, err);
	}
	if (!rc)
		rc = scheduler_diffoscope_start(&s, err);
	if (!rc)
		rc = scheduler_publish_start(&s, err);
	if (!rc)
		rc = scheduler_outbox_start(&s, err);
	if (!rc)
		rc = s.store->ops->watch(s.store, peers_changed, &s, err);
	if (rc)
		goto out;
	reaper_duty(&s);
	say(ready_fd, "listening on %s://%.*s:%u\n", cfg->tls_cert ? "https" : "http",
	    (int)(strrchr(cfg->listen, ':') - cfg->listen), cfg->listen, api_server_port(s.http));
	if (cfg->worker_listen)
		say(ready_fd, "workers listening on %s://%.*s:%u\n",
		    cfg->tls_cert ? "https" : "http",
		    (int)(strrchr(cfg->worker_listen, ':') - cfg->worker_listen),
		    cfg->worker_listen, api_server_reserved_port(s.http));
	serve(&s, stop);
	kiln_log(KILN_LOG_INFO, "shutting down");
out:
	if (s.store)
		(void)s.store->ops->watch(s.store, NULL, NULL, NULL);
	scheduler_outbox_stop(&s);
	scheduler_publish_stop(&s);
	scheduler_diffoscope_stop(&s);
	scheduler_release(&s);
	kiln_buf_release(&db);
	return rc;
}
