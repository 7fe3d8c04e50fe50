/*
 * daemon.c - `kiln worker`: register with the scheduler, then one thread per slot that
 * long-polls for a lease and carries it through (daemon_job.c). A scheduler that does not
 * answer is retried with backoff (capped at 30 s), and the worker registers again when it
 * comes back, so restarting the scheduler needs nothing from the workers.
 */
#include "util/util.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "worker/daemon_int.h"

#define BACKOFF_MAX_MS 30000
#define SECRET_FILE "worker.secret"

/* ---------------------------------------------------------------------------------------- */
/* Leases from JSON */

static const struct api_field ref_fields[] = {
    {"name", API_F_STR, true, offsetof(struct worker_ref, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct worker_ref, sha256), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

#define JF(n, t, f, mx)                                                                            \
	{                                                                                          \
		n, t, false, offsetof(struct worker_job_req, f), 0, mx, NULL, 0, 0                 \
	}

static const struct api_field git_fields[] = {
    {"url", API_F_STR, true, offsetof(struct worker_git_req, url), 0, 4096, NULL, 0, 0},
    {"ref", API_F_STR, false, offsetof(struct worker_git_req, ref), 0, 255, NULL, 0, 0},
    {"spec", API_F_STR, true, offsetof(struct worker_git_req, spec), 0, 4096, NULL, 0, 0},
    {"commit", API_F_STR, false, offsetof(struct worker_git_req, commit), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

#define CF(n, f)                                                                                   \
	{                                                                                          \
		n, API_F_INT, false, offsetof(struct worker_caps, f), 1, INT64_MAX, NULL, 0, 0     \
	}

static const struct api_field limit_fields[] = {
    CF("pids", pids), CF("memory", memory), CF("cpu", cpu), CF("log", log), API_FIELD_END,
};

static const struct api_field job_fields[] = {
    {"git", API_F_OBJ, false, offsetof(struct worker_job_req, git), 0, 0, git_fields, 0,
     offsetof(struct worker_job_req, has_git)},
    {"spec", API_F_OBJ, false, offsetof(struct worker_job_req, spec), 0, 0, ref_fields, 0,
     offsetof(struct worker_job_req, has_spec)},
    {"srpm", API_F_OBJ, false, offsetof(struct worker_job_req, srpm), 0, 0, ref_fields, 0,
     offsetof(struct worker_job_req, has_srpm)},
    {"sources", API_F_OBJLIST, false, offsetof(struct worker_job_req, sources), 0, 1024, ref_fields,
     sizeof(struct worker_ref), 0},
    JF("defines", API_F_STRMAP, defines, 256),
    JF("with", API_F_STRLIST, with, 256),
    JF("without", API_F_STRLIST, without, 256),
    JF("formats", API_F_STRLIST, formats, 2),
    JF("variations", API_F_STRLIST, variations, 16),
    JF("rerun", API_F_INT, rerun, 1000),
    JF("timeout", API_F_INT, timeout, 30 * 86400),
    JF("root", API_F_STR, root, 128),
    JF("root_lock", API_F_STR, root_lock, 64),
    {"limits", API_F_OBJ, false, offsetof(struct worker_job_req, limits), 0, 0, limit_fields, 0, 0},
    {"source_date_epoch", API_F_INT, false, offsetof(struct worker_job_req, source_date_epoch), 0,
     4294967295LL, NULL, 0, offsetof(struct worker_job_req, has_sde)},
    API_FIELD_END,
};

#define LF(n, t, r, f, mn, mx)                                                                     \
	{                                                                                          \
		n, t, r, offsetof(struct worker_lease, f), mn, mx, NULL, 0, 0                      \
	}

static const struct api_field lease_fields[] = {
    LF("lease_id", API_F_STR, true, lease_id, 0, 64),
    LF("generation", API_F_INT, true, generation, 1, INT64_MAX),
    LF("ttl_ms", API_F_INT, true, ttl_ms, 1, INT64_MAX),
    LF("heartbeat_ms", API_F_INT, true, heartbeat_ms, 1, INT64_MAX),
    LF("job_id", API_F_INT, true, job_id, 1, INT64_MAX),
    LF("attempt", API_F_INT, true, attempt, 1, INT64_MAX),
    {"job", API_F_OBJ, true, offsetof(struct worker_lease, job), 0, 0, job_fields, 0, 0},
    LF("batch_repo", API_F_STR, false, batch_repo, 0, 64),
    API_FIELD_END,
};

kiln_rc worker_job_vary(const struct worker_job_req *j, unsigned *out, struct kiln_err *err)
{
	unsigned bit;
	size_t i;

	*out = 0;
	for (i = 0; i < j->variations.n; i++) {
		if (worker_vary_parse(j->variations.v[i], &bit, err)) {
			kiln_err_wrap(err, "lease: field 'job.variations[%zu]'", i);
			return KILN_EINVAL;
		}
		*out |= bit;
	}
	return KILN_OK;
}

/* [batches] "/batches/N/repo": it becomes part of a URL in a root configuration. */
static bool batch_repo_ok(const char *p)
{
	static const char head[] = "/batches/", tail[] = "/repo";
	size_t n = strlen(p), i;

	if (n <= sizeof(head) - 1 + sizeof(tail) - 1 || strncmp(p, head, sizeof(head) - 1) ||
	    strcmp(p + n - (sizeof(tail) - 1), tail))
		return false;
	for (i = sizeof(head) - 1; i < n - (sizeof(tail) - 1); i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

kiln_rc worker_lease_parse(const char *body, size_t len, struct kiln_arena *a,
                           struct worker_lease *out, struct kiln_err *err)
{
	const struct worker_ref *src;
	unsigned vary;
	size_t i;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = api_json_decode(body, len, lease_fields, 0, out, a, err);
	if (rc)
		return rc;
	if (!(out->raw = kiln_arena_strndup(a, body, len)))
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (worker_job_vary(&out->job, &vary, err))
		return KILN_EINVAL;
	if (out->job.has_spec + out->job.has_srpm + out->job.has_git != 1)
		return kiln_err_set(err, KILN_EINVAL,
		                    "lease: the job needs exactly one of a spec, "
		                    "an SRPM and a git repository");
	if (out->job.has_git && (out->job.git.spec[0] == '/' || strstr(out->job.git.spec, "..")))
		return kiln_err_set(err, KILN_EINVAL, "lease: the git spec path leaves the tree");
	if (out->batch_repo && !batch_repo_ok(out->batch_repo))
		return kiln_err_set(err, KILN_EINVAL,
		                    "lease: field 'batch_repo' is not /batches/N/repo");
	/* The scheduler checked these, but a worker trusts no name it writes files under. */
	src = out->job.sources.v;
	for (i = 0; i < out->job.sources.n; i++)
		if (api_name_check(src[i].name, strlen(src[i].name), err))
			return KILN_EINVAL;
	if ((out->job.has_spec &&
	     api_name_check(out->job.spec.name, strlen(out->job.spec.name), err)) ||
	    (out->job.has_srpm &&
	     api_name_check(out->job.srpm.name, strlen(out->job.srpm.name), err)))
		return KILN_EINVAL;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Build caps */

#define CAP_PIDS 4096
#define CAP_LOG ((int64_t)64 * 1024 * 1024)

static int64_t lower(int64_t mine, int64_t asked)
{
	if (asked <= 0)
		return mine;
	return mine > 0 && mine < asked ? mine : asked;
}

void worker_caps_for_job(const struct worker_caps *worker, const struct worker_caps *job,
                         struct worker_caps *out)
{
	out->pids = lower(worker->pids, job->pids);
	out->memory = lower(worker->memory, job->memory);
	out->cpu = lower(worker->cpu, job->cpu);
	out->log = lower(worker->log, job->log);
}

/* The options' caps, the defaults where none is given: a fork bomb or a leak in one
 * build must not take the machine (or the other slots) with it. */
static void caps_init(struct worker_daemon *d)
{
	const struct worker_daemon_opts *o = d->o;
	int64_t slots = o->slots ? o->slots : 1;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t ram = pages > 0 && psize > 0 ? (int64_t)pages * psize : 0;

	d->caps.pids = o->pids_max ? (int64_t)o->pids_max : CAP_PIDS;
	d->caps.memory = o->memory_bytes ? (int64_t)o->memory_bytes : ram / 4 * 3 / slots;
	d->caps.cpu =
	    o->cpu_percent ? (int64_t)o->cpu_percent : (ncpu > 0 ? ncpu : 1) * 100 / slots;
	if (d->caps.cpu < 10)
		d->caps.cpu = 10;
	d->caps.log = o->log_max ? (int64_t)o->log_max : CAP_LOG;
}

/* ---------------------------------------------------------------------------------------- */
/* Registration and polling */

static void jlist(char *dst, size_t size, const char *const *v, size_t n)
{
	struct kiln_buf b = KILN_BUF_INIT(size - 1);
	struct api_jw w;
	size_t i;

	api_jw_init(&w, &b);
	api_jw_arr(&w);
	for (i = 0; i < n; i++)
		api_jw_str(&w, v[i]);
	api_jw_end(&w);
	snprintf(dst, size, "%s", b.err ? "[]" : b.ptr);
	kiln_buf_release(&b);
}

static kiln_rc register_once(struct worker_daemon *d, struct api_client *c, struct api_reply *r,
                             struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct api_call call = {.method = "POST", .path = "/api/v1/workers"};
	struct utsname u;
	struct statvfs vfs;
	int64_t free_disk = 0;
	kiln_rc rc;

	if (statvfs(d->work_dir, &vfs) == 0)
		free_disk = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	kiln_buf_addstr(&body, "{\"name\":");
	api_json_quote(&body, d->name, strlen(d->name));
	kiln_buf_addf(&body,
	              ",\"arches\":%s,\"tags\":%s,\"slots\":%u,\"free_disk\":%lld,"
	              "\"version\":\"%s\",\"draining\":%s,\"kernel\":",
	              d->arches, d->tags, d->o->slots ? d->o->slots : 1, (long long)free_disk,
	              KILN_VERSION, *d->stop ? "true" : "false");
	api_json_quote(&body, u.release, strlen(u.release));
	kiln_buf_addch(&body, '}');
	rc = kiln_buf_finish(&body, err);
	call.body = body.ptr;
	call.body_len = body.len;
	if (!rc)
		rc = api_client_call(c, &call, r, err);
	if (!rc)
		rc = api_reply_check(r, "register", err);
	kiln_buf_release(&body);
	return rc;
}

/* Sleep up to ms, waking early when the daemon is told to stop. */
static void nap(struct worker_daemon *d, int64_t ms)
{
	while (ms > 0 && !*d->stop) {
		(void)poll(NULL, 0, ms > 200 ? 200 : (int)ms);
		ms -= 200;
	}
}

/* Register, retrying with backoff until the scheduler answers (or a stop). */
static kiln_rc register_retry(struct worker_daemon *d, struct api_client *c, struct api_reply *r,
                              struct kiln_err *err)
{
	int64_t delay = 250;
	kiln_rc rc;

	for (;;) {
		kiln_err_clear(err);
		rc = register_once(d, c, r, err);
		if (!rc || (rc != KILN_ENET && rc != KILN_ETIMEOUT) || *d->stop)
			return rc;
		kiln_log(KILN_LOG_WARN, "%s (retrying in %lld ms)", err->msg, (long long)delay);
		nap(d, delay);
		delay = delay * 2 < BACKOFF_MAX_MS ? delay * 2 : BACKOFF_MAX_MS;
	}
}

/* One long poll: KILN_OK with *got set when a lease came. */
static kiln_rc poll_lease(struct worker_daemon *d, struct api_client *c, struct api_reply *r,
                          bool *got, struct kiln_err *err)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct api_call call = {.method = "POST", .path = "/api/v1/leases"};
	kiln_rc rc;

	*got = false;
	kiln_buf_addstr(&body, "{\"worker\":");
	api_json_quote(&body, d->name, strlen(d->name));
	kiln_buf_addf(&body, ",\"arches\":%s,\"tags\":%s,\"wait\":%lld}", d->arches, d->tags,
	              (long long)d->poll_ms);
	rc = kiln_buf_finish(&body, err);
	call.body = body.ptr;
	call.body_len = body.len;
	call.timeout_ms = (long)d->poll_ms + 30000;
	call.abort = d->stop;
	if (!rc)
		rc = api_client_call(c, &call, r, err);
	if (!rc)
		rc = api_reply_check(r, "lease", err);
	*got = !rc && r->status == 200;
	kiln_buf_release(&body);
	return rc;
}

struct slot {
	struct worker_daemon *d;
	unsigned n;
	pthread_t th;
};

static kiln_rc slot_client(struct worker_daemon *d, struct api_client **c, struct kiln_err *err)
{
	struct api_client_config cc = {0};

	cc.base_url = d->o->scheduler_url;
	cc.token = d->o->token;
	cc.ca_file = d->o->ca_file;
	cc.header = d->secret_header;
	cc.timeout_ms = 120000;
	return api_client_new(&cc, c, err);
}

/* One lease (body, len: the reply that granted it); *next as worker_daemon_job leaves it. */
static void slot_job(struct worker_daemon *d, struct api_client *c, const char *body, size_t len,
                     struct kiln_buf *next)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_lease l;

	kiln_buf_reset(next);
	if (worker_lease_parse(body, len, &a, &l, &err)) {
		kiln_log_err(KILN_LOG_ERROR, &err);
		goto out;
	}
	kiln_log(KILN_LOG_INFO, "job %lld attempt %lld: leased (%s)", (long long)l.job_id,
	         (long long)l.attempt,
	         l.job.has_spec  ? l.job.spec.name
	         : l.job.has_git ? l.job.git.url
	                         : l.job.srpm.name);
	worker_daemon_job(d, c, &l, next);
	kiln_log(KILN_LOG_INFO, "job %lld attempt %lld: done", (long long)l.job_id,
	         (long long)l.attempt);
out:
	kiln_arena_release(&a);
}

/* The lease in r, then each next one its completion's reply granted. */
static void slot_lease(struct worker_daemon *d, struct api_client *c, struct api_reply *r)
{
	struct kiln_buf bufs[2] = {KILN_BUF_INIT(KILN_MIB + 1), KILN_BUF_INIT(KILN_MIB + 1)};
	struct kiln_buf *next = &bufs[0], *cur = &bufs[1], *t;

	slot_job(d, c, r->body.ptr, r->body.len, next);
	while (next->len && !next->err) {
		t = cur, cur = next, next = t;
		slot_job(d, c, cur->ptr, cur->len, next);
	}
	kiln_buf_release(&bufs[0]);
	kiln_buf_release(&bufs[1]);
}

static void *slot_main(void *p)
{
	struct slot *s = p;
	struct worker_daemon *d = s->d;
	struct kiln_err err = KILN_ERR_INIT;
	struct api_client *c = NULL;
	struct api_reply r;
	int64_t delay = 250;
	bool got;

	api_reply_init(&r, 4 * KILN_MIB);
	if (slot_client(d, &c, &err)) {
		kiln_log_err(KILN_LOG_ERROR, &err);
		goto out;
	}
	while (!*d->stop) {
		kiln_err_clear(&err);
		if (poll_lease(d, c, &r, &got, &err) == KILN_OK) {
			delay = 250;
			if (got)
				slot_lease(d, c, &r);
			continue;
		}
		if (err.code == KILN_ECANCEL)
			break; /* told to stop while waiting for work */
		kiln_log(KILN_LOG_WARN, "slot %u: %s (retrying in %lld ms)", s->n, err.msg,
		         (long long)delay);
		nap(d, delay);
		delay = delay * 2 < BACKOFF_MAX_MS ? delay * 2 : BACKOFF_MAX_MS;
		/* the scheduler may have restarted on a fresh database: be known again */
		if (!*d->stop && register_once(d, c, &r, NULL) == KILN_OK)
			delay = 250;
	}
out:
	api_client_free(c);
	api_reply_release(&r);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Set-up */

/* The root configurations this worker offers, each read once to check it and learn its
 * name; the tags it registers with are its own and "root:NAME" for each (the scheduler's
 * one matcher then places jobs naming a root). */
static kiln_rc offers_load(struct worker_daemon *d, const struct worker_daemon_opts *o,
                           struct kiln_err *err)
{
	const char **tags =
	    kiln_arena_alloc(&d->arena, (o->ntags + o->nroot_configs + 1) * sizeof(*tags));
	size_t i, nt = 0;
	kiln_rc rc = KILN_OK;

	d->offers = kiln_arena_alloc(&d->arena, (o->nroot_configs + 1) * sizeof(*d->offers));
	if (!tags || !d->offers)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < o->ntags; i++)
		tags[nt++] = o->tags[i];
	for (i = 0; !rc && i < o->nroot_configs; i++) {
		struct roots_config c;
		struct worker_offer *w = &d->offers[d->noffers];

		roots_config_init(&c);
		rc = roots_config_open(&c, o->root_configs[i], err);
		if (!rc) {
			w->name = kiln_arena_strdup(&d->arena, c.name);
			w->path = kiln_arena_strdup(&d->arena, c.path);
			tags[nt] = kiln_arena_printf(&d->arena, "root:%s", c.name);
			if (!w->name || !w->path || !tags[nt])
				rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			nt++;
			d->noffers++;
		}
		roots_config_release(&c);
	}
	if (!rc)
		jlist(d->tags, sizeof(d->tags), tags, nt);
	return rc;
}

/* One daemon a work directory: a second one would recover (and so fail) the first one's
 * live builds. The lock goes with the process, however it ends. */
static kiln_rc work_dir_lock(struct worker_daemon *d, struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH + 16];

	snprintf(path, sizeof(path), "%s/.lock", d->work_dir);
	d->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (d->lock_fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot open %s", path);
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return kiln_err_set(err, KILN_EEXIST,
			                    "another kiln worker uses the work directory %s",
			                    d->work_dir);
		return kiln_err_sys(err, KILN_EIO, "cannot lock %s", path);
	}
	return KILN_OK;
}

/* Read the kept credential (a regular file of ours that nobody else may read: it lets its
 * holder act as this worker) into secret (65 bytes). */
static kiln_rc credential_read(int fd, const char *path, char *secret, struct kiln_err *err)
{
	struct stat st;
	size_t got = 0;
	kiln_rc rc;

	if (fstat(fd, &st) < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot stat %s", path);
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return kiln_err_set(err, KILN_EPRIV,
		                    "%s: a worker's credential must be its own file of mode 0600 "
		                    "(this one has mode %04o)",
		                    path, (unsigned)(st.st_mode & 07777));
	rc = util_read_full(fd, secret, 65, &got, err);
	if (rc)
		return rc;
	if (got == 65 && secret[64] == '\n')
		got = 64;
	secret[got < 65 ? got : 64] = '\0';
	if (got != 64 || !api_sha256_valid(secret))
		return kiln_err_set(err, KILN_EINVAL,
		                    "%s is not a worker credential (64 lowercase hex digits): "
		                    "remove it to have a new one made",
		                    path);
	return KILN_OK;
}

/* This worker's own credential, made on its first start and kept in the work directory
 * (mode 0600), so a restarted worker presents the same one and the scheduler tells it from
 * another worker that shares its token (and name). */
static kiln_rc credential_load(struct worker_daemon *d, struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH + 32], secret[65];
	unsigned char raw[32];
	kiln_rc rc;
	int fd;

	snprintf(path, sizeof(path), "%s/" SECRET_FILE, d->work_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		rc = credential_read(fd, path, secret, err);
		close(fd);
	} else if (errno != ENOENT) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot open %s", path);
	} else if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		rc = kiln_err_sys(err, KILN_EIO, "getrandom");
	} else {
		util_hex_encode(raw, sizeof(raw), secret);
		explicit_bzero(raw, sizeof(raw));
		rc = util_write_atomic(path, secret, 64, 0600, err);
	}
	if (!rc)
		snprintf(d->secret_header, sizeof(d->secret_header), "%s: %s",
		         API_WORKER_SECRET_HEADER, secret);
	explicit_bzero(secret, sizeof(secret));
	return rc;
}

static kiln_rc daemon_init(struct worker_daemon *d, const struct worker_daemon_opts *o, char *host,
                           size_t hsize, struct kiln_err *err)
{
	struct utsname u;
	const char *def[2];
	kiln_rc rc;

	if (!o->scheduler_url || !*o->scheduler_url)
		return kiln_err_set(err, KILN_EINVAL, "no scheduler URL (--scheduler or KILN_URL)");
	if (!o->token || !*o->token)
		return kiln_err_set(err, KILN_EINVAL, "no token (--token or KILN_TOKEN)");
	if (o->slots > 64)
		return kiln_err_set(err, KILN_EINVAL, "--slots: at most 64");
	d->o = o;
	d->poll_ms = o->poll_ms > 0 ? o->poll_ms : 20000;
	if (o->name) {
		snprintf(host, hsize, "%s", o->name);
	} else if (gethostname(host, hsize) < 0) {
		snprintf(host, hsize, "worker");
	}
	host[hsize - 1] = '\0';
	d->name = host;
	rc = api_worker_name_check(host, err);
	if (rc) {
		kiln_err_wrap(err, "worker name '%.64s'", host);
		return rc;
	}
	caps_init(d);
	snprintf(d->work_dir, sizeof(d->work_dir), "%s", o->work_dir ? o->work_dir : "kiln-worker");
	rc = util_mkdir_p(d->work_dir, 0755, err);
	if (!rc)
		rc = work_dir_lock(d, err);
	if (!rc)
		rc = credential_load(d, err);
	if (rc)
		return rc;
	if (uname(&u) < 0)
		snprintf(u.machine, sizeof(u.machine), "x86_64");
	def[0] = u.machine, def[1] = "noarch";
	jlist(d->arches, sizeof(d->arches), o->narches ? o->arches : def,
	      o->narches ? o->narches : 2);
	return offers_load(d, o, err);
}

/* kiln's macro configuration (rpmrc, macro files) read once at start, so a broken one
 * stops the worker here instead of failing each build: every build child reads it again
 * (worker_build_child_main). */
static kiln_rc macros_check(struct kiln_err *err)
{
	struct macro_config cfg = {0};
	struct macro_ctx *mc = NULL;
	kiln_rc rc = macro_ctx_open_config(&cfg, false, &mc, err);

	macro_ctx_free(mc);
	return rc;
}

/* The sandbox unless refused; without the privileges for it, the host (as kiln build
 * does) unless it was asked for. */
static kiln_rc sandbox_pick(struct worker_daemon *d, struct kiln_err *err)
{
	struct chroot_config cc;
	kiln_rc rc;

	d->sandbox = false;
	if (d->o->no_sandbox)
		return KILN_OK;
	chroot_config_init(&cc);
	cc.kind = CHROOT_EXEC_SANDBOX;
	rc = d->o->root ? chroot_config_root_parse(&cc, d->o->root, err) : KILN_OK;
	if (!rc)
		rc = chroot_sandbox_probe(&cc, err);
	if (!rc) {
		d->sandbox = true;
		return KILN_OK;
	}
	if (d->o->sandbox || rc == KILN_EINVAL)
		return rc;
	kiln_log(KILN_LOG_WARN, "the sandbox is not available (%s): building on the host",
	         err->msg);
	kiln_err_clear(err);
	return KILN_OK;
}

static void say_ready(struct worker_daemon *d)
{
	char line[512];
	int n;

	if (d->o->ready_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "registered as %s (%s, %u slot%s, arches %s)\n", d->name,
	             d->sandbox ? "sandbox" : "host", d->o->slots ? d->o->slots : 1,
	             d->o->slots > 1 ? "s" : "", d->arches);
	if (n > 0 && util_write_all(d->o->ready_fd, line,
	                            (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, NULL))
		return; /* nobody reads the readiness line */
}

kiln_rc worker_daemon_run(const struct worker_daemon_opts *o, volatile sig_atomic_t *stop,
                          struct kiln_err *err)
{
	struct worker_daemon d = {.arena = KILN_ARENA_INIT(KILN_MIB)};
	struct slot slots[64];
	struct api_client *c = NULL;
	struct api_reply r;
	char host[256];
	unsigned i, n = o->slots ? o->slots : 1, started = 0;
	kiln_rc rc;

	d.stop = stop;
	d.lock_fd = -1;
	api_reply_init(&r, KILN_MIB);
	rc = daemon_init(&d, o, host, sizeof(host), err);
	if (!rc)
		rc = macros_check(err);
	if (!rc)
		rc = sandbox_pick(&d, err);
	if (!rc)
		rc = slot_client(&d, &c, err);
	if (!rc)
		rc = register_retry(&d, c, &r, err);
	if (rc || *stop)
		goto out;
	say_ready(&d);
	worker_daemon_recover(&d, c);
	for (i = 0; i < n; i++) {
		slots[i].d = &d;
		slots[i].n = i;
		if (pthread_create(&slots[i].th, NULL, slot_main, &slots[i])) {
			rc = kiln_err_sys(err, KILN_EIO, "cannot start slot %u", i);
			*stop = 2;
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(slots[i].th, NULL);
	if (!rc)
		(void)register_once(&d, c, &r, NULL); /* tell the scheduler we are draining */
out:
	api_client_free(c);
	api_reply_release(&r);
	kiln_arena_release(&d.arena);
	explicit_bzero(d.secret_header, sizeof(d.secret_header));
	util_close(d.lock_fd);
	return rc;
}
