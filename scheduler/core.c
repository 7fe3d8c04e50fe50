/*
 * core.c - the scheduler's context: data directory, store, keys, blobs, signing, the end of
 * a lease, the reaper, and scheduler_run()'s serve-until-stopped loop.
 */
#include "util/util.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scheduler/scheduler_int.h"

static const char *const state_names[SCHED_NSTATES] = {"queued",    "leased", "building",
                                                       "succeeded", "failed", "cancelled"};

const char *scheduler_state_name(enum scheduler_state s)
{
	return (unsigned)s < SCHED_NSTATES ? state_names[s] : "unknown";
}

kiln_rc scheduler_state_parse(const char *s, enum scheduler_state *out, struct kiln_err *err)
{
	int i;

	for (i = 0; i < SCHED_NSTATES; i++) {
		if (!strcmp(s, state_names[i])) {
			*out = (enum scheduler_state)i;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_EINVAL,
	                    "'%.32s' is not a job state (queued, leased, "
	                    "building, succeeded, failed, cancelled)",
	                    s);
}

/* ---------------------------------------------------------------------------------------- */
/* Blobs and logs */

void scheduler_blob_path(const struct scheduler *s, const char *sha256, struct kiln_buf *out)
{
	kiln_buf_reset(out);
	kiln_buf_addf(out, "%s/%.2s/%s", s->blob_dir, sha256, sha256);
}

bool scheduler_blob_exists(const struct scheduler *s, const char *sha256)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	bool ok;

	scheduler_blob_path(s, sha256, &p);
	ok = !p.err && util_exists(p.ptr);
	kiln_buf_release(&p);
	return ok;
}

kiln_rc scheduler_blob_adopt(struct scheduler *s, const char *tmp, const char *sha256,
                             struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc;

	kiln_buf_addf(&p, "%s/%.2s", s->blob_dir, sha256);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = util_mkdir_p(p.ptr, 0755, err);
	if (rc)
		goto out;
	scheduler_blob_path(s, sha256, &p);
	/* Content-addressed: an existing blob of the same digest is the same bytes. */
	if (util_exists(p.ptr)) {
		(void)unlink(tmp);
		goto out;
	}
	(void)chmod(tmp, 0644);
	if (rename(tmp, p.ptr) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "cannot store blob %s", sha256);
out:
	kiln_buf_release(&p);
	return rc;
}

kiln_rc scheduler_blob_put_mem(struct scheduler *s, const void *data, size_t len, char sha256[65],
                               struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	int fd = -1;
	kiln_rc rc;

	rc = util_digest_mem_hex(UTIL_DIGEST_SHA256, data, len, hex, err);
	if (rc)
		goto out;
	memcpy(sha256, hex, 65);
	if (scheduler_blob_exists(s, sha256))
		goto out;
	kiln_buf_addf(&tmp, "%s/blob-XXXXXX", s->tmp_dir);
	rc = kiln_buf_finish(&tmp, err);
	if (rc)
		goto out;
	fd = mkostemp(tmp.ptr, O_CLOEXEC);
	if (fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", tmp.ptr);
		goto out;
	}
	rc = util_write_all(fd, data, len, err);
	if (!rc && fsync(fd) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "fsync %s", tmp.ptr);
	if (!rc)
		rc = scheduler_blob_adopt(s, tmp.ptr, sha256, err);
	if (rc)
		(void)unlink(tmp.ptr);
out:
	util_close(fd);
	kiln_buf_release(&tmp);
	return rc;
}

void scheduler_log_path(const struct scheduler *s, int64_t job, int64_t attempt,
                        struct kiln_buf *out)
{
	kiln_buf_reset(out);
	kiln_buf_addf(out, "%s/%lld/%lld.log", s->log_dir, (long long)job, (long long)attempt);
}

/* ---------------------------------------------------------------------------------------- */
/* Keys and signing */

kiln_rc scheduler_key_find(const struct scheduler *s, const char *name, const struct sign_key **out,
                           struct kiln_err *err)
{
	size_t i;

	*out = NULL;
	if (!name || !*name)
		return KILN_OK;
	for (i = 0; i < s->cfg->nkeys; i++) {
		if (!strcmp(s->cfg->keys[i].name, name)) {
			*out = s->keys[i];
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_ENOTFOUND, "no signing key '%s' on this scheduler", name);
}

static bool is_package(const struct scheduler_artifact *a)
{
	return (!strcmp(a->kind, "binary") || !strcmp(a->kind, "source")) &&
	       kiln_str_ends(kiln_str_from(a->name), ".rpm");
}

/* Copy the artifact's blob, sign the copy, store it as a new blob. */
static kiln_rc sign_one(struct scheduler *s, const struct sign_key *key,
                        struct scheduler_artifact *a, struct kiln_err *err)
{
	struct kiln_buf src = KILN_BUF_INIT(KILN_LIMIT_PATH), tmp = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sign_opts opts = {0};
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct stat st;
	int fd = -1;
	kiln_rc rc;

	scheduler_blob_path(s, a->sha256, &src);
	kiln_buf_addf(&tmp, "%s/sign-XXXXXX", s->tmp_dir);
	rc = kiln_buf_finish(&tmp, err);
	if (rc)
		goto out;
	fd = mkostemp(tmp.ptr, O_CLOEXEC);
	if (fd < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", tmp.ptr);
		goto out;
	}
	rc = util_copy_file(src.ptr, tmp.ptr, 0644, err);
	if (!rc)
		rc = sign_time_pick(key, -1, &opts.time, err);
	if (!rc)
		rc = sign_package(key, tmp.ptr, &opts, 0, NULL, err);
	if (!rc)
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, tmp.ptr, hex, err);
	if (!rc && stat(tmp.ptr, &st) < 0)
		rc = kiln_err_sys(err, KILN_EIO, "stat %s", tmp.ptr);
	if (!rc) {
		memcpy(a->signed_sha256, hex, 65);
		a->signed_size = (int64_t)st.st_size;
		rc = scheduler_blob_adopt(s, tmp.ptr, hex, err);
	}
	if (rc)
		kiln_err_wrap(err, "signing %s", a->name);
out:
	if (rc && tmp.len)
		(void)unlink(tmp.ptr);
	util_close(fd);
	kiln_buf_release(&src);
	kiln_buf_release(&tmp);
	return rc;
}

kiln_rc scheduler_sign_artifacts(struct scheduler *s, const struct scheduler_job *job,
                                 int64_t attempt, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct scheduler_artifact *arts = NULL;
	const struct sign_key *key = NULL;
	size_t n = 0, i;
	kiln_rc rc;

	rc = scheduler_key_find(s, job->sign_key, &key, err);
	if (rc || !key)
		goto out;
	rc = s->store->ops->artifacts_list(s->store, job->id, attempt, &a, &arts, &n, err);
	for (i = 0; !rc && i < n; i++) {
		if (!is_package(&arts[i]))
			continue;
		rc = sign_one(s, key, &arts[i], err);
		if (!rc)
			rc = s->store->ops->artifact_put(s->store, &arts[i], err);
		if (!rc) {
			pthread_mutex_lock(&s->stats_lock);
			s->signed_packages++;
			pthread_mutex_unlock(&s->stats_lock);
		}
	}
out:
	kiln_arena_release(&a);
	return rc;
}

/* The "default" key of the embedded set-up: made on first start in DATA/keys/. */
static kiln_rc default_key(struct scheduler *s, struct sign_key **out, struct kiln_err *err)
{
	struct kiln_buf sec = KILN_BUF_INIT(KILN_LIMIT_PATH), pub = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf armor = KILN_BUF_INIT(KILN_LIMIT_PGP_FILE);
	struct sign_key *key = NULL;
	kiln_rc rc;

	kiln_buf_addf(&sec, "%s/keys/default.key", s->cfg->data_dir);
	kiln_buf_addf(&pub, "%s/keys/default.asc", s->cfg->data_dir);
	rc = kiln_buf_finish(&sec, err);
	if (!rc)
		rc = kiln_buf_finish(&pub, err);
	if (!rc && util_exists(sec.ptr)) {
		rc = sign_key_load_secret(sec.ptr, &key, err);
		goto out;
	}
	if (!rc)
		rc = sign_key_generate(SIGN_KEYGEN_ED25519, "kiln scheduler <kiln@localhost>",
		                       util_clock_wall(), &key, err);
	if (!rc)
		rc = sign_key_save_secret(key, sec.ptr, err);
	if (!rc)
		rc = sign_key_export(key, SIGN_EXPORT_ARMOR, &armor, err);
	if (!rc)
		rc = util_write_atomic(pub.ptr, armor.ptr, armor.len, 0644, err);
out:
	if (rc) {
		sign_key_free(key);
		key = NULL;
	}
	*out = key;
	kiln_buf_release(&sec);
	kiln_buf_release(&pub);
	kiln_buf_release(&armor);
	return rc;
}

/* The configured keys, or the generated default one. The config's key table is extended
 * in place for the default key, so cfg is written here once before serving starts. */
static kiln_rc keys_load(struct scheduler *s, struct scheduler_config *cfg, struct kiln_err *err)
{
	size_t i;
	kiln_rc rc;

	if (!cfg->nkeys && cfg->default_key && !strcmp(cfg->default_key, "default")) {
		struct scheduler_key_cfg *k = kiln_arena_alloc(&cfg->arena, sizeof(*k));

		s->keys = kiln_calloc(1, sizeof(*s->keys));
		if (!k || !s->keys)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		k->name = "default";
		k->path = "";
		cfg->keys = k;
		cfg->nkeys = 1;
		return default_key(s, &s->keys[0], err);
	}
	s->keys = kiln_calloc(cfg->nkeys ? cfg->nkeys : 1, sizeof(*s->keys));
	if (!s->keys)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < cfg->nkeys; i++) {
		rc = sign_key_load_secret(cfg->keys[i].path, &s->keys[i], err);
		if (rc) {
			kiln_err_wrap(err, "key '%s'", cfg->keys[i].name);
			return rc;
		}
	}
	if (cfg->default_key && *cfg->default_key) {
		const struct sign_key *k;

		return scheduler_key_find(s, cfg->default_key, &k, err);
	}
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Leases ending, the reaper */

int64_t scheduler_backoff_ms(const struct scheduler *s, int64_t attempts)
{
	int64_t b = s->cfg->backoff_ms;

	while (--attempts > 0 && b < s->cfg->backoff_max_ms)
		b *= 2;
	return b < s->cfg->backoff_max_ms ? b : s->cfg->backoff_max_ms;
}

void scheduler_hist_add(struct scheduler *s, struct scheduler_hist *h, double seconds)
{
	static const double bounds[12] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600};
	size_t i;

	pthread_mutex_lock(&s->stats_lock);
	for (i = 0; i < 12; i++) {
		if (seconds <= bounds[i]) {
			h->buckets[i]++;
			break;
		}
	}
	h->count++;
	h->sum += seconds;
	pthread_mutex_unlock(&s->stats_lock);
}

kiln_rc scheduler_lease_end(struct scheduler *s, const char *lease_id, int64_t generation,
                            struct scheduler_finish *f, struct kiln_err *err)
{
	bool requeued = false;
	kiln_rc rc;

	f->requeued = &requeued;
	rc = s->store->ops->lease_finish(s->store, lease_id, generation, f, err);
	f->requeued = NULL;
	if (rc)
		return rc;
	pthread_mutex_lock(&s->stats_lock);
	if (requeued && f->outcome == SCHED_OUT_LOST)
		s->retries_lost++;
	else if (requeued && f->outcome == SCHED_OUT_INFRA)
		s->retries_infra++;
	if (f->outcome == SCHED_OUT_LOST)
		s->lease_expiries++;
	pthread_mutex_unlock(&s->stats_lock);
	api_server_wake(s->http);
	return KILN_OK;
}

void scheduler_reap(struct scheduler *s)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct scheduler_job *v = NULL;
	int64_t now = util_clock_wall_ms();
	size_t n = 0, i;

	if (s->store->ops->leases_expired(s->store, now, &a, &v, &n, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char msg[256];
		struct scheduler_finish f = {
		    .outcome = SCHED_OUT_LOST,
		    .failure_class = "infra",
		    .message = msg,
		    .now_ms = now,
		    .backoff_ms = scheduler_backoff_ms(s, v[i].attempts),
		};

		snprintf(msg, sizeof(msg), "worker %s lost: lease expired", v[i].worker);
		kiln_err_clear(&err);
		if (scheduler_lease_end(s, v[i].lease_id, v[i].generation, &f, &err)) {
			kiln_log_err(KILN_LOG_WARN, &err);
			continue;
		}
		kiln_log(KILN_LOG_INFO, "job %lld: %s (attempt %lld)", (long long)v[i].id, msg,
		         (long long)v[i].attempts);
		scheduler_repro_job_ended(s, v[i].id);
	}
out:
	kiln_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* Running */

static kiln_rc auth_cb(void *ctx, const char *token, size_t len, unsigned *scopes,
                       int64_t *token_id, struct kiln_err *err)
{
	struct scheduler *s = ctx;
	char hash[65];
	kiln_rc rc;

	rc = api_token_hash(token, len, hash, err);
	if (!rc)
		rc = s->store->ops->token_lookup(s->store, hash, token_id, scopes, err);
	if (rc == KILN_EAUTH)
		kiln_err_clear(err), kiln_err_set(err, KILN_EAUTH, "invalid token");
	return rc;
}

static kiln_rc dirs_make(struct scheduler *s, const struct scheduler_config *cfg,
                         struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	static const char *const sub[] = {"", "/blobs", "/logs", "/tmp", "/keys"};
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(sub); i++) {
		kiln_buf_reset(&p);
		kiln_buf_addf(&p, "%s%s", cfg->data_dir, sub[i]);
		rc = kiln_buf_finish(&p, err);
		if (!rc)
			rc = util_mkdir_p(p.ptr, i == 4 ? 0700 : 0755, err);
	}
	kiln_buf_release(&p);
	s->blob_dir = kiln_malloc(KILN_LIMIT_PATH);
	s->log_dir = kiln_malloc(KILN_LIMIT_PATH);
	s->tmp_dir = kiln_malloc(KILN_LIMIT_PATH);
	if (!rc && (!s->blob_dir || !s->log_dir || !s->tmp_dir))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc) {
		snprintf(s->blob_dir, KILN_LIMIT_PATH, "%s/blobs", cfg->data_dir);
		snprintf(s->log_dir, KILN_LIMIT_PATH, "%s/logs", cfg->data_dir);
		snprintf(s->tmp_dir, KILN_LIMIT_PATH, "%s/tmp", cfg->data_dir);
	}
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
		                                 util_clock_wall_ms(), &id, err);
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
	int64_t id;
	size_t i;
	kiln_rc rc;

	for (i = 0; i < s->cfg->ntokens; i++) {
		kiln_err_clear(&e2);
		rc = s->store->ops->token_lookup(s->store, t[i].sha256, &id, &scopes, &e2);
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
		                                util_clock_wall_ms(), &id, &e2))
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
	size_t i;

	api_server_free(s->http);
	scheduler_store_close(s->store);
	for (i = 0; s->keys && i < s->cfg->nkeys; i++)
		sign_key_free(s->keys[i]);
	free(s->keys);
	free(s->blob_dir);
	free(s->log_dir);
	free(s->tmp_dir);
	scheduler_jobcache_free(s->jobcache);
	pthread_mutex_destroy(&s->log_lock);
	pthread_mutex_destroy(&s->stats_lock);
	pthread_mutex_destroy(&s->history.lock);
}

static void serve(struct scheduler *s, volatile sig_atomic_t *stop)
{
	int64_t next_reap = 0;

	while (!*stop) {
		int64_t now = util_clock_wall_ms();

		if (now >= next_reap) {
			scheduler_reap(s);
			next_reap = now + s->cfg->tick_ms;
		}
		scheduler_history_tick(s, now);
		api_server_tick(s->http);
		(void)poll(NULL, 0, (int)(s->cfg->tick_ms < 100 ? s->cfg->tick_ms : 100));
	}
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
	pthread_mutex_init(&s.history.lock, NULL);
	s.jobcache = scheduler_jobcache_new();
	rc = dirs_make(&s, cfg, err);
	kiln_buf_addf(&db, "%s/kiln.db", cfg->data_dir);
	if (!rc)
		rc = kiln_buf_finish(&db, err);
	if (!rc)
		rc = scheduler_store_open_sqlite(db.ptr, &s.store, err);
	if (!rc)
		rc = keys_load(&s, cfg, err);
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
	if (rc)
		goto out;
	scheduler_repro_recover(&s);
	scheduler_publish_recover(&s);
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
	scheduler_publish_stop(&s);
	scheduler_diffoscope_stop(&s);
	scheduler_release(&s);
	kiln_buf_release(&db);
	return rc;
}
