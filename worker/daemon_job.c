/*
 * daemon_job.c - one lease, from the scheduler's grant to its completion: download the
 * spec, sources or SRPM (each checked against its sha256), start the build child, stream
 * its output to a local log and from there to the scheduler by offset, heartbeat, stop on
 * cancel, timeout or a lost lease, upload every package and complete.
 *
 * The local log is the source of truth for what the scheduler has not acknowledged: when
 * the scheduler is away the build goes on and the log is sent from the last acknowledged
 * offset once it answers again; completion is retried with backoff until the scheduler
 * takes it or says the lease is gone.
 *
 * Nothing of a lease lives only in this process: lease.json names it from the start, and
 * completion.json (the completion as it will be sent) is written before the first upload.
 * A worker restarted after a crash (worker_daemon_recover) finds them in its work
 * directory and, while the scheduler still holds the lease, uploads the packages and
 * completes; a lease that is gone is discarded with its directory.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/daemon_int.h"

#define LOG_CHUNK (256 * 1024)
#define REPLY_MAX (4 * KILN_MIB)
#define KILL_GRACE_MS 5000
#define LEASE_FILE "lease.json"
#define COMPLETION_FILE "completion.json"
#define RESULT_FILE "result.json"
#define CHILD_FILE "child.json" /* the build child's request */

enum job_end {
	END_NONE,
	END_CANCEL,  /* the scheduler asked */
	END_LOST,    /* the lease is gone: report nothing */
	END_TIMEOUT, /* the job's time limit */
	END_STOP,    /* the daemon is told to stop hard: hand the lease back */
	END_LOG,     /* the build's output reached the attempt's log cap */
};

struct jobrun {
	char commit[41]; /* a git job's resolved commit */
	char checkout[KILN_LIMIT_PATH];
	char cache[KILN_LIMIT_PATH];
	struct worker_daemon *d;
	struct api_client *c;
	const struct worker_lease *l;
	struct api_reply r;
	char dir[KILN_LIMIT_PATH], top[KILN_LIMIT_PATH];
	int log_fd;
	int64_t log_size, sent;
	int64_t next_beat, deadline;
	unsigned vary; /* a rerun's variations (enum worker_vary) */
	struct worker_caps caps;
	enum job_end end;
	/* where the next lease a completion's reply granted goes (worker_daemon_job); NULL:
	 * ask for none (a completion sent after a restart) */
	struct kiln_buf *next;
};

/* A root job's lock in its job directory: the pinned one fetched, or the one the build
 * resolved, reported with the completion (scheduler/rootpin.c). */
#define ROOT_LOCK_IN "root-lock.json"
#define ROOT_LOCK_OUT "root-lock.resolved.json"

/* A path from parts; false when it would not fit (paths are bounded by KILN_LIMIT_PATH). */
static bool pathf(char *dst, size_t size, const char *fmt, ...) KILN_PRINTF(3, 4);
static bool pathf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* ---------------------------------------------------------------------------------------- */
/* Talking to the scheduler about this lease */

static kiln_rc lease_call(struct jobrun *j, const char *method, const char *what,
                          const char *fmt_path, const void *body, size_t len,
                          const char *content_type, const char *file, struct kiln_err *err)
{
	struct api_call c = {.method = method,
	                     .path = fmt_path,
	                     .body = body,
	                     .body_len = len,
	                     .content_type = content_type,
	                     .body_file = file};
	kiln_rc rc;

	rc = api_client_call(j->c, &c, &j->r, err);
	if (rc)
		return rc;
	if (j->r.status == 409 || j->r.status == 404) {
		char code[32];

		api_reply_error_code(&j->r, code, sizeof(code));
		if (strcmp(code, "offset_mismatch")) {
			j->end = END_LOST;
			return kiln_err_set(err, KILN_ECONFLICT, "%s: the lease is gone", what);
		}
	}
	return api_reply_check(&j->r, what, err);
}

static void heartbeat(struct jobrun *j)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[128], body[96];
	int n;

	snprintf(path, sizeof(path), "/api/v1/leases/%s/heartbeat", j->l->lease_id);
	n = snprintf(body, sizeof(body), "{\"generation\":%lld,\"draining\":%s}",
	             (long long)j->l->generation, *j->d->stop ? "true" : "false");
	if (lease_call(j, "POST", "heartbeat", path, body, (size_t)n, NULL, NULL, &err))
		return; /* unreachable: try again at the next beat; lost: j->end says so */
	if (strstr(j->r.body.ptr, "\"cancel\":true") && j->end == END_NONE)
		j->end = END_CANCEL;
}

/* Send what the scheduler has not acknowledged yet, in chunks. */
static void log_flush(struct jobrun *j)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[192], *buf = kiln_malloc(LOG_CHUNK);
	int64_t size;
	ssize_t n;

	while (buf && j->sent < j->log_size && j->end != END_LOST) {
		n = pread(j->log_fd, buf, LOG_CHUNK, (off_t)j->sent);
		if (n <= 0)
			break;
		snprintf(path, sizeof(path), "/api/v1/leases/%s/log?generation=%lld&offset=%lld",
		         j->l->lease_id, (long long)j->l->generation, (long long)j->sent);
		kiln_err_clear(&err);
		if (lease_call(j, "PUT", "log", path, buf, (size_t)n, "application/octet-stream",
		               NULL, &err) &&
		    j->r.status != 409)
			break;
		size = 0;
		if (strstr(j->r.body.ptr, "\"size\":"))
			size = strtoll(strstr(j->r.body.ptr, "\"size\":") + 7, NULL, 10);
		/* the scheduler's size is where to go on from (a resend after a lost reply) */
		j->sent = size > 0 && size <= j->log_size ? size : j->sent + n;
	}
	free(buf);
}

static void log_add(struct jobrun *j, const char *data, size_t len)
{
	if (util_write_all(j->log_fd, data, len, NULL))
		return; /* the disk is full: the build's own log still has it */
	j->log_size += (int64_t)len;
}

static void log_note(struct jobrun *j, const char *fmt, ...) KILN_PRINTF(2, 3);
static void log_note(struct jobrun *j, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		log_add(j, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* The build's output, up to the attempt's log cap: the rest is dropped, a marker line says
 * so and the build is stopped (a build printing without end would fill the worker's and
 * the scheduler's disks). */
static void log_build(struct jobrun *j, const char *data, size_t len)
{
	int64_t room = j->caps.log - j->log_size;

	if (j->end == END_LOG)
		return;
	if (!j->caps.log || (int64_t)len <= room) {
		log_add(j, data, len);
		return;
	}
	if (room > 0)
		log_add(j, data, (size_t)room);
	log_note(j,
	         "\nkiln worker: the build log reached its cap of %lld bytes; the rest of "
	         "the output is dropped\n",
	         (long long)j->caps.log);
	if (j->end == END_NONE)
		j->end = END_LOG;
}

/* ---------------------------------------------------------------------------------------- */
/* Inputs */

static kiln_rc fetch_blob(struct jobrun *j, const struct worker_ref *ref, const char *dir,
                          struct kiln_err *err)
{
	struct kiln_buf dest = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char path[128], hex[2 * UTIL_DIGEST_MAX + 1];
	struct util_atomic_file f = {.fd = -1};
	struct api_call c = {.method = "GET", .path = path};
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/blobs/%.64s", ref->sha256);
	rc = api_name_check(ref->name, strlen(ref->name), err);
	if (!rc)
		rc = util_path_join(dir, ref->name, &dest, err);
	if (!rc)
		rc = util_atomic_open(&f, dest.ptr, 0644, err);
	if (rc)
		goto out;
	c.out_fd = f.fd;
	rc = api_client_call(j->c, &c, &j->r, err);
	if (!rc)
		rc = api_reply_check(&j->r, ref->name, err);
	if (!rc)
		rc = util_atomic_commit(&f, err);
	if (!rc)
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, dest.ptr, hex, err);
	if (!rc && strcmp(hex, ref->sha256))
		rc = kiln_err_set(err, KILN_EDIGEST, "%s: sha256 %s, expected %s", ref->name, hex,
		                  ref->sha256);
out:
	util_atomic_abort(&f);
	kiln_buf_release(&dest);
	return rc;
}

/* A git job: mirror the repository in the worker's source cache, resolve the ref and
 * write the commit's tree into the job directory. */
static kiln_rc git_checkout(struct jobrun *j, struct kiln_err *err)
{
	const struct worker_git_req *g = &j->l->job.git;
	struct sources_fetch_opts fo = {0};
	struct sources *src = NULL;
	struct sources_git_rev rev;
	kiln_rc rc;

	fo.cache_dir = j->cache;
	fo.retries = -1;
	/* inside %{_topdir}: the sandbox maps only the top directory */
	if (!pathf(j->checkout, sizeof(j->checkout), "%s/git", j->top))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->top);
	rc = sources_new(&fo, &src, err);
	/* once a worker resolved the ref, the manifest pins that commit for every attempt
	 * and rerun: a branch that moved since is not followed */
	if (!rc)
		rc = sources_git_resolve(src, g->url, g->commit ? g->commit : g->ref, &rev, err);
	if (!rc)
		rc = sources_git_export(src, g->url, rev.commit, j->checkout, err);
	if (!rc) {
		memcpy(j->commit, rev.commit, sizeof(j->commit));
		log_note(j, "kiln worker: %s %s is commit %s%s\n", g->url, g->ref ? g->ref : "HEAD",
		         rev.commit, g->commit ? " (pinned by the job's manifest)" : "");
	}
	sources_free(src);
	return rc;
}

static kiln_rc inputs_fetch(struct jobrun *j, struct kiln_err *err)
{
	const struct worker_job_req *q = &j->l->job;
	const struct worker_ref *src = q->sources.v;
	char specs[KILN_LIMIT_PATH], sources[KILN_LIMIT_PATH];
	size_t i;
	kiln_rc rc;

	if (!pathf(specs, sizeof(specs), "%s/SPECS", j->top) ||
	    !pathf(sources, sizeof(sources), "%s/SOURCES", j->top))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->top);
	rc = util_mkdir_p(specs, 0755, err);
	if (!rc)
		rc = util_mkdir_p(sources, 0755, err);
	if (!rc && q->has_spec)
		rc = fetch_blob(j, &q->spec, specs, err);
	if (!rc && q->has_srpm)
		rc = fetch_blob(j, &q->srpm, j->dir, err);
	/* a heartbeat after each input keeps the lease through long downloads (one input
	 * must take less than the lease's TTL) */
	/* (file order varies where the build lists them: worker_vary_apply's disorderfs; a
	 * reversed write order here would cancel it out on tmpfs) */
	for (i = 0; !rc && i < q->sources.n; i++) {
		rc = fetch_blob(j, &src[i], sources, err);
		heartbeat(j);
	}
	if (!rc && q->root_lock) {
		/* the lock the job's first attempt resolved: every attempt builds on it */
		struct worker_ref lk = {ROOT_LOCK_IN, q->root_lock};

		rc = fetch_blob(j, &lk, j->dir, err);
	}
	if (!rc && q->has_git)
		rc = git_checkout(j, err);
	heartbeat(j);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The build child */

/* The environment the build child gets: the daemon's without its scheduler token (the
 * child talks to nobody but its sources' servers). In a, NULL-terminated. */
static char **child_env(struct kiln_arena *a)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = kiln_arena_alloc(a, (n + 1) * sizeof(*env))))
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "KILN_TOKEN=", 11))
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}

/* Start the build child: the request file written, then fork and exec kiln itself
 * (`kiln worker --build-child FILE`, worker_build_child_main). The slots are threads, so
 * between fork and exec the child calls only async-signal-safe functions: a forked copy
 * of a threaded process may hold a lock another thread held at the fork (seen: OpenSSL's
 * method store, when the child fetched a digest). */
static pid_t child_start(struct jobrun *j, const struct worker_child_req *req, int *out_fd,
                         struct kiln_err *err)
{
	static const char exe[] = "/proc/self/exe";
	static const char no_exec[] = "kiln worker: cannot run /proc/self/exe for the build\n";
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	char path[KILN_LIMIT_PATH + 32];
	char *argv[] = {(char *)"kiln", (char *)"worker", (char *)"--build-child", path, NULL};
	pid_t parent = getpid(), pid = -1;
	char **env;
	int p[2];

	if (!pathf(path, sizeof(path), "%s/" CHILD_FILE, j->dir)) {
		kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->dir);
		goto out;
	}
	if (worker_child_req_write(req, path, err))
		goto out;
	if (!(env = child_env(&a))) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		kiln_err_sys(err, KILN_EIO, "pipe");
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		kiln_err_sys(err, KILN_EIO, "fork");
		close(p[0]);
		close(p[1]);
		goto out;
	}
	if (pid == 0) {
		/* The child leads its own process group (the daemon kills the group) and dies
		 * with the daemon, so a killed worker leaves no build behind. */
		(void)setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (dup2(p[1], STDOUT_FILENO) < 0 || dup2(p[1], STDERR_FILENO) < 0)
			_exit(127);
		(void)close_range(3, ~0U, 0);
		signal(SIGPIPE, SIG_DFL);
		execve(exe, argv, env);
		(void)!write(STDERR_FILENO, no_exec, sizeof(no_exec) - 1);
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
out:
	kiln_arena_release(&a);
	return pid;
}

static void child_kill(pid_t pid)
{
	/* Safe: pid is our unreaped child and leads its group, so neither can be reused. */
	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
}

static void check_ends(struct jobrun *j, int64_t now)
{
	if (j->end == END_NONE && *j->d->stop >= 2)
		j->end = END_STOP;
	if (j->end == END_NONE && j->deadline && now >= j->deadline)
		j->end = END_TIMEOUT;
}

/* Pump the child's output into the log until it closes; heartbeat on the way. */
static int child_follow(struct jobrun *j, pid_t pid, int fd)
{
	char buf[65536];
	int64_t killed_at = 0;
	int status = 0;
	pid_t w;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int64_t now = util_clock_mono_ns() / 1000000;
		int r = poll(&pfd, 1, 250);

		if (r > 0) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				break;
			if (n > 0)
				log_build(j, buf, (size_t)n);
		}
		now = util_clock_mono_ns() / 1000000;
		if (now >= j->next_beat) {
			heartbeat(j);
			log_flush(j);
			j->next_beat = now + j->l->heartbeat_ms;
		}
		check_ends(j, now);
		if (j->end != END_NONE && !killed_at) {
			child_kill(pid);
			killed_at = now;
		}
		/* processes outside the group may keep the pipe open: do not wait for them */
		if (killed_at && now - killed_at > KILL_GRACE_MS)
			break;
	}
	close(fd);
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	return status;
}

/* ---------------------------------------------------------------------------------------- */
/* Results */

struct out_file {
	const char *path, *kind, *name, *arch, *sha256;
};

struct result {
	bool ok;
	const char *error;
	struct api_objlist outputs; /* struct out_file */
};

static const struct api_field out_fields[] = {
    {"path", API_F_STR, true, offsetof(struct out_file, path), 0, 4096, NULL, 0, 0},
    {"kind", API_F_STR, false, offsetof(struct out_file, kind), 0, 16, NULL, 0, 0},
    {"name", API_F_STR, false, offsetof(struct out_file, name), 0, 255, NULL, 0, 0},
    {"arch", API_F_STR, false, offsetof(struct out_file, arch), 0, 64, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct out_file, sha256), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

static const struct api_field result_fields[] = {
    {"ok", API_F_BOOL, false, offsetof(struct result, ok), 0, 0, NULL, 0, 0},
    {"error", API_F_STR, false, offsetof(struct result, error), 0, 4096, NULL, 0, 0},
    {"outputs", API_F_OBJLIST, false, offsetof(struct result, outputs), 0, 10000, out_fields,
     sizeof(struct out_file), 0},
    API_FIELD_END,
};

static kiln_rc upload(struct jobrun *j, const struct out_file *o, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *base = util_path_basename(o->path);
	kiln_rc rc;

	kiln_buf_addf(&path, "/api/v1/leases/%s/artifacts/", j->l->lease_id);
	api_url_escape(&path, base);
	kiln_buf_addf(&path,
	              "?generation=%lld&sha256=%s&kind=%s&arch=", (long long)j->l->generation,
	              o->sha256, o->kind ? o->kind : "binary");
	api_url_escape(&path, o->arch ? o->arch : "");
	rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = lease_call(j, "PUT", base, path.ptr, NULL, 0, "application/x-rpm", o->path,
		                err);
	kiln_buf_release(&path);
	return rc;
}

/* Build the "outputs" member of the completion from the uploaded files. */
static void outputs_json(struct api_jw *w, const struct api_objlist *outs)
{
	const struct out_file *o = outs->v;
	size_t i;

	api_jw_key(w, "outputs");
	api_jw_arr(w);
	for (i = 0; i < outs->n; i++) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", util_path_basename(o[i].path));
		api_jw_kstr(w, "sha256", o[i].sha256);
		api_jw_end(w);
	}
	api_jw_end(w);
}

/* The lock a root job's build resolved, for the scheduler to pin. */
static void root_lock_json(struct jobrun *j, struct api_jw *w)
{
	struct kiln_buf text = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES);
	char path[KILN_LIMIT_PATH];

	if (pathf(path, sizeof(path), "%s/" ROOT_LOCK_OUT, j->dir) && util_exists(path) &&
	    !util_read_file(path, ROOTS_LOCK_MAX_BYTES, &text, NULL) &&
	    !kiln_buf_finish(&text, NULL))
		api_jw_kstr(w, "root_lock", text.ptr);
	kiln_buf_release(&text);
}

static void completion_json(struct jobrun *j, const char *status, const char *fclass,
                            const char *msg, const struct api_objlist *outs, struct kiln_buf *out)
{
	struct api_jw w;

	api_jw_init(&w, out);
	api_jw_obj(&w);
	api_jw_kint(&w, "generation", j->l->generation);
	api_jw_kstr(&w, "status", status);
	if (fclass)
		api_jw_kstr(&w, "failure_class", fclass);
	api_jw_key(&w, "message");
	api_jw_strn(&w, msg ? msg : "", msg ? strnlen(msg, 4000) : 0);
	if (*j->commit)
		api_jw_kstr(&w, "git_commit", j->commit);
	if (j->l->job.root && !j->l->job.root_lock)
		root_lock_json(j, &w);
	if (outs)
		outputs_json(&w, outs);
	api_jw_end(&w);
}

/* Test only: KILN_TEST_WORKER_HOLD_MS=N stops N ms between writing a completion down and
 * sending it, so a test can kill -9 the worker there (docs/api.md). */
static void test_hold(void)
{
	const char *v = getenv("KILN_TEST_WORKER_HOLD_MS");
	int64_t ms;

	if (v && !util_parse_i64(v, strlen(v), 10, 1, 3600000, &ms, NULL))
		(void)poll(NULL, 0, (int)ms);
}

/* Keep the completion in the job directory until the scheduler took it. */
static void completion_save(struct jobrun *j, const struct kiln_buf *body)
{
	struct kiln_err err = KILN_ERR_INIT;
	char path[KILN_LIMIT_PATH + 32];

	if (!*j->dir || !pathf(path, sizeof(path), "%s/" COMPLETION_FILE, j->dir))
		return;
	if (util_write_atomic(path, body->ptr, body->len, 0644, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
	else
		kiln_log(KILN_LOG_INFO, "job %lld attempt %lld: result kept in %s until sent",
		         (long long)j->l->job_id, (long long)j->l->attempt, j->dir);
	test_hold();
}

static bool net_error(const struct kiln_err *err)
{
	return err->code == KILN_ENET || err->code == KILN_ETIMEOUT;
}

/* Wait ms before trying again, heartbeating on the way: the lease must outlive a scheduler
 * whose disk is full for a while (507), not only a short outage. */
static void wait_beating(struct jobrun *j, int64_t ms)
{
	int64_t now = util_clock_mono_ns() / 1000000, until = now + ms;

	while (now < until && j->end != END_LOST && *j->d->stop < 3) {
		if (now >= j->next_beat) {
			heartbeat(j);
			j->next_beat = now + j->l->heartbeat_ms;
		}
		(void)poll(NULL, 0, (int)((until < j->next_beat ? until : j->next_beat) - now));
		now = util_clock_mono_ns() / 1000000;
	}
}

/* body as sent: the saved completion, and "next" (the worker's arches and tags) when the
 * slot takes its next job from the reply (not while the daemon stops). */
static const char *body_sent(struct jobrun *j, const struct kiln_buf *body, struct kiln_buf *out,
                             size_t *len)
{
	*len = body->len;
	if (!j->next || *j->d->stop || !body->len || body->ptr[body->len - 1] != '}' ||
	    __atomic_load_n(&j->d->next_refused, __ATOMIC_RELAXED))
		return body->ptr;
	kiln_buf_reset(out);
	kiln_buf_add(out, body->ptr, body->len - 1);
	kiln_buf_addf(out, "%s\"next\":{\"arches\":%s,\"tags\":%s}}", body->len > 2 ? "," : "",
	              j->d->arches, j->d->tags);
	if (kiln_buf_finish(out, NULL))
		return body->ptr;
	*len = out->len;
	return out->ptr;
}

/* The next lease in a completion's reply (j->r), into j->next. */
static void next_take(struct jobrun *j)
{
	static const struct api_field fields[] = {
	    {"next_lease", API_F_RAW, false, 0, 0, KILN_MIB, NULL, 0, 0},
	    API_FIELD_END,
	};
	struct kiln_arena a = KILN_ARENA_INIT(2 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *lease = NULL;

	if (!j->next)
		return;
	kiln_buf_reset(j->next);
	if (api_json_decode(j->r.body.ptr, j->r.body.len, fields, 0, &lease, &a, &err))
		kiln_log_err(KILN_LOG_WARN, &err); /* its lease expires and is granted again */
	else if (lease)
		kiln_buf_addstr(j->next, lease);
	if (kiln_buf_finish(j->next, &err))
		kiln_buf_reset(j->next);
	kiln_arena_release(&a);
}

/* Send the log, upload outs (from *next on) and send body, retrying with backoff while the
 * scheduler cannot be reached. True when the scheduler took the completion or said the
 * lease is gone. */
static bool send_all(struct jobrun *j, const struct kiln_buf *body, const struct api_objlist *outs,
                     size_t *next, struct kiln_err *err)
{
	const struct out_file *o = outs ? outs->v : NULL;
	struct kiln_buf with_next = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	const char *sent;
	char path[128];
	int64_t delay = 500;
	size_t len;
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/leases/%s/complete", j->l->lease_id);
	while (j->end != END_LOST) {
		kiln_err_clear(err);
		log_flush(j);
		rc = KILN_OK;
		while (!rc && outs && *next < outs->n && !(rc = upload(j, &o[*next], err)))
			(*next)++;
		sent = body_sent(j, body, &with_next, &len);
		if (!rc)
			rc = lease_call(j, "POST", "complete", path, sent, len, NULL, NULL, err);
		if (!rc) {
			next_take(j);
			kiln_buf_release(&with_next);
			return true;
		}
		if (rc == KILN_EINVAL && sent != body->ptr && j->r.body.ptr &&
		    strstr(j->r.body.ptr, "field 'next': unknown field")) {
			/* a scheduler older than "next": the same completion without it */
			__atomic_store_n(&j->d->next_refused, 1, __ATOMIC_RELAXED);
			kiln_log(KILN_LOG_INFO,
			         "the scheduler does not hand out the next job with a "
			         "completion: leasing by lease calls only");
			continue;
		}
		if (!net_error(err) || *j->d->stop >= 3)
			break;
		kiln_log(KILN_LOG_WARN, "job %lld: %s (retrying in %lld ms)",
		         (long long)j->l->job_id, err->msg, (long long)delay);
		wait_beating(j, delay);
		delay = delay < 30000 ? delay * 2 : 30000;
	}
	kiln_buf_release(&with_next);
	return j->end == END_LOST || !err->code;
}

/* Send a saved completion body (after uploading outs); an upload the scheduler refuses
 * turns it into an infra failure. True when nothing is left to send. */
static bool deliver(struct jobrun *j, struct kiln_buf *body, const struct api_objlist *outs)
{
	struct kiln_err err = KILN_ERR_INIT;
	size_t next = 0;
	bool done;

	done = send_all(j, body, outs, &next, &err);
	if (!done && outs && next < outs->n && !net_error(&err)) {
		/* an upload the scheduler refused: the attempt failed */
		char msg2[KILN_ERR_MSG_MAX];

		kiln_buf_reset(body);
		completion_json(j, "failed", "infra", kiln_err_format(&err, msg2, sizeof(msg2)),
		                NULL, body);
		if (!kiln_buf_finish(body, &err)) {
			completion_save(j, body);
			done = send_all(j, body, NULL, &next, &err);
		}
	}
	if (err.code && j->end != END_LOST)
		kiln_log_err(KILN_LOG_WARN, &err);
	return done;
}

/* Complete (after uploading outs), retrying while the scheduler cannot be reached (the
 * results wait in the job directory). True when nothing is left to send. */
static bool complete(struct jobrun *j, const char *status, const char *fclass, const char *msg,
                     const struct api_objlist *outs)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_err err = KILN_ERR_INIT;
	bool done = false;

	completion_json(j, status, fclass, msg, outs, &body);
	if (kiln_buf_finish(&body, &err)) {
		kiln_log_err(KILN_LOG_WARN, &err);
	} else {
		completion_save(j, &body);
		done = deliver(j, &body, outs);
	}
	kiln_buf_release(&body);
	return done;
}

/* [batches] The job's root configuration base plus its batch's repository on the scheduler
 * (preferred: dnf's priority 1, so what the batch built wins), as JOBDIR/ROOT.cfg in out. */
static bool batch_config(struct jobrun *j, const char *base, char *out, size_t size)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf text = KILN_BUF_INIT(4 * KILN_MIB);
	const char *url = j->d->o->scheduler_url;
	size_t ulen = strlen(url);
	bool ok;

	while (ulen && url[ulen - 1] == '/')
		ulen--;
	ok = pathf(out, size, "%s/%s.cfg", j->dir, j->l->job.root);
	if (ok && util_read_file(base, 4 * KILN_MIB, &text, &err))
		ok = false;
	if (ok) {
		kiln_buf_addf(&text,
		              "\n# kiln worker: the batch's own repository (its jobs' packages)\n"
		              "[repo kiln-batch]\nbaseurl = %.*s%s\ngpgcheck = 0\n"
		              "repo_gpgcheck = 0\npriority = 1\n",
		              (int)ulen, url, j->l->batch_repo);
		ok = !kiln_buf_finish(&text, &err) &&
		     !util_write_atomic(out, text.ptr, text.len, 0644, &err);
	}
	if (!ok)
		log_note(j, "error: the batch's root configuration: %s\n",
		         err.code ? err.msg : "path too long");
	kiln_buf_release(&text);
	return ok;
}

/* One build (one package format): fork, follow, read its result. */
static int build_once(struct jobrun *j, const char *format, const char *result_path)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_child_req req = {0};
	char spec[KILN_LIMIT_PATH], srpm[KILN_LIMIT_PATH];
	char lock_in[KILN_LIMIT_PATH], lock_out[KILN_LIMIT_PATH], batch_cfg[KILN_LIMIT_PATH];
	struct kiln_buf gdir = KILN_BUF_INIT(KILN_LIMIT_PATH), rel = KILN_BUF_INIT(KILN_LIMIT_PATH);
	int fd = -1, status;
	pid_t pid;

	req.lease_raw = j->l->raw;
	req.job = &j->l->job;
	req.topdir = j->top;
	req.format = format;
	req.result_path = result_path;
	req.sandbox = j->d->sandbox;
	req.root = j->d->o->root;
	req.cache_dir = j->cache;
	req.vary = j->vary;
	if (j->l->job.root) {
		size_t i;

		for (i = 0; i < j->d->noffers && strcmp(j->d->offers[i].name, j->l->job.root); i++)
			;
		if (i == j->d->noffers) {
			/* the scheduler places a job only where its root is offered */
			log_note(j, "error: this worker does not offer root %s\n", j->l->job.root);
			return -1;
		}
		req.root_config = j->d->offers[i].path;
		if (j->l->batch_repo) {
			if (!batch_config(j, j->d->offers[i].path, batch_cfg, sizeof(batch_cfg)))
				return -1;
			req.root_config = batch_cfg;
		}
		if (j->l->job.root_lock &&
		    pathf(lock_in, sizeof(lock_in), "%s/" ROOT_LOCK_IN, j->dir))
			req.root_lock_in = lock_in;
		else if (pathf(lock_out, sizeof(lock_out), "%s/" ROOT_LOCK_OUT, j->dir))
			req.root_lock_out = lock_out;
	}
	req.caps = &j->caps;
	if (j->l->job.has_git &&
	    pathf(spec, sizeof(spec), "%s/%s", j->checkout, j->l->job.git.spec)) {
		req.spec_path = spec;
		/* in %{_topdir} terms, so the sandbox's top directory applies too */
		util_path_dirname(j->l->job.git.spec, &rel);
		kiln_buf_addf(&gdir, "%%{_topdir}/git/%s", rel.ptr);
		req.sourcedir = gdir.ptr;
		req.git_commit = j->commit;
	} else if (j->l->job.has_spec &&
	           pathf(spec, sizeof(spec), "%s/SPECS/%s", j->top, j->l->job.spec.name))
		req.spec_path = spec;
	else if (!j->l->job.has_spec &&
	         pathf(srpm, sizeof(srpm), "%s/%s", j->dir, j->l->job.srpm.name))
		req.srpm_path = srpm;
	else
		return -1;
	log_note(j, "kiln worker %s: job %lld attempt %lld%s%s\n", j->d->name,
	         (long long)j->l->job_id, (long long)j->l->attempt, format ? ", rpm format " : "",
	         format ? format : "");
	log_note(j, "kiln worker: limits pids=%lld memory=%lld cpu=%lld%% log=%lld%s\n",
	         (long long)j->caps.pids, (long long)j->caps.memory, (long long)j->caps.cpu,
	         (long long)j->caps.log, j->d->sandbox ? "" : " (no sandbox: only the log cap)");
	pid = child_start(j, &req, &fd, &err);
	if (pid < 0) {
		log_note(j, "error: %s\n", err.msg);
		kiln_buf_release(&gdir);
		kiln_buf_release(&rel);
		return -1;
	}
	status = child_follow(j, pid, fd);
	kiln_buf_release(&gdir);
	kiln_buf_release(&rel);
	return status;
}

/* Report the build's outcome; false when it is still to be sent (kept for a restart). */
static bool finish(struct jobrun *j, int status, const char *result_path, struct kiln_arena *a)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	struct kiln_err err = KILN_ERR_INIT;
	struct result res = {0};
	bool done = true;

	if (j->end == END_LOST)
		goto out;
	if (j->end == END_LOG) {
		char why[128];

		snprintf(why, sizeof(why), "the build log exceeded its cap of %lld bytes",
		         (long long)j->caps.log);
		done = complete(j, "failed", "build", why, NULL);
		goto out;
	}
	if (j->end == END_CANCEL || j->end == END_STOP || j->end == END_TIMEOUT) {
		log_note(j, "kiln worker: %s\n",
		         j->end == END_CANCEL ? "cancelled on request"
		         : j->end == END_STOP ? "worker shutting down"
		                              : "time limit reached");
		done = complete(j,
		                j->end == END_CANCEL ? "cancelled"
		                : j->end == END_STOP ? "released"
		                                     : "failed",
		                j->end == END_TIMEOUT ? "build" : NULL,
		                j->end == END_TIMEOUT ? "the build exceeded its time limit" : NULL,
		                NULL);
		goto out;
	}
	if (util_read_file(result_path, KILN_LIMIT_TEXT_FILE, &raw, &err) ||
	    api_json_decode(raw.ptr, raw.len, result_fields, 0, &res, a, &err)) {
		done = complete(j, "failed", WIFSIGNALED(status) ? "infra" : "build",
		                WIFSIGNALED(status) ? "the build process died"
		                                    : "the build left no result",
		                NULL);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !res.ok) {
		done = complete(j, "failed", "build", res.error ? res.error : "the build failed",
		                NULL);
		goto out;
	}
	done = complete(j, "succeeded", NULL, NULL, &res.outputs);
out:
	kiln_buf_release(&raw);
	return done;
}

/* lease.json: what a restarted worker needs to finish or drop this lease. */
static kiln_rc lease_save(struct jobrun *j, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	char path[KILN_LIMIT_PATH + 32];
	struct api_jw w;
	kiln_rc rc;

	if (!pathf(path, sizeof(path), "%s/" LEASE_FILE, j->dir))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->dir);
	api_jw_init(&w, &b);
	api_jw_obj(&w);
	api_jw_kstr(&w, "lease_id", j->l->lease_id);
	api_jw_kint(&w, "generation", j->l->generation);
	api_jw_kint(&w, "job_id", j->l->job_id);
	api_jw_kint(&w, "attempt", j->l->attempt);
	api_jw_end(&w);
	rc = kiln_buf_finish(&b, err);
	if (!rc)
		rc = util_write_atomic(path, b.ptr, b.len, 0644, err);
	kiln_buf_release(&b);
	return rc;
}

static kiln_rc run_prepare(struct jobrun *j, struct kiln_err *err)
{
	char logpath[KILN_LIMIT_PATH + 16];
	kiln_rc rc;

	if (!pathf(j->dir, sizeof(j->dir), "%s/jobs/%lld-%lld", j->d->work_dir,
	           (long long)j->l->job_id, (long long)j->l->attempt) ||
	    !pathf(j->top, sizeof(j->top),
	           j->vary & WORKER_VARY_BUILD_PATH ? "%s/rerun-top-varied" : "%s/top", j->dir) ||
	    !pathf(logpath, sizeof(logpath), "%s/build.log", j->dir) ||
	    !pathf(j->cache, sizeof(j->cache), "%s/cache", j->d->work_dir))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->d->work_dir);
	rc = util_rm_rf(j->dir, err);
	if (!rc)
		rc = util_mkdir_p(j->top, 0755, err);
	if (rc)
		return rc;
	j->log_fd = open(logpath, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (j->log_fd < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot create %s", logpath);
	return lease_save(j, err);
}

void worker_daemon_job(struct worker_daemon *d, struct api_client *c, const struct worker_lease *l,
                       struct kiln_buf *next)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct jobrun j = {.d = d, .c = c, .l = l, .log_fd = -1, .next = next};
	char result[KILN_LIMIT_PATH + 32];
	const char *fmt;
	int status = 0;
	bool done = true;

	api_reply_init(&j.r, REPLY_MAX);
	if (next)
		kiln_buf_reset(next);
	worker_caps_for_job(&d->caps, &l->job.limits, &j.caps);
	j.next_beat = util_clock_mono_ns() / 1000000 + l->heartbeat_ms;
	j.deadline = l->job.timeout ? util_clock_mono_ns() / 1000000 + l->job.timeout * 1000 : 0;
	if (worker_job_vary(&l->job, &j.vary, &err)) {
		complete(&j, "failed", "infra", err.msg, NULL);
		goto out;
	}
	if (*d->stop) {
		/* leased while the daemon was told to stop: hand it back at once */
		complete(&j, "released", NULL, "the worker is shutting down", NULL);
		goto out;
	}
	if (run_prepare(&j, &err) || inputs_fetch(&j, &err)) {
		if (j.log_fd >= 0)
			log_note(&j, "kiln worker: cannot prepare the job: %s\n", err.msg);
		done = complete(&j, "failed", err.code == KILN_EDIGEST ? "build" : "infra", err.msg,
		                NULL);
		goto out;
	}
	if (!pathf(result, sizeof(result), "%s/result.json", j.dir)) {
		done = complete(&j, "failed", "infra", "work directory path too long", NULL);
		goto out;
	}
	fmt = l->job.formats.n ? (l->job.formats.v[0][1] == '6' ? "6" : "4") : NULL;
	status = build_once(&j, fmt, result);
	if (status < 0) {
		done = complete(&j, "failed", "infra", "cannot start the build process", NULL);
		goto out;
	}
	log_flush(&j);
	done = finish(&j, status, result, &a);
	log_flush(&j);
out:
	/* kept only when the completion is still to be sent (a restart sends it) */
	if (done && *j.dir && util_rm_rf(j.dir, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
	util_close(j.log_fd);
	api_reply_release(&j.r);
	kiln_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* After a restart */

struct lease_rec {
	const char *lease_id;
	int64_t generation, job_id, attempt;
};

static const struct api_field lease_rec_fields[] = {
    {"lease_id", API_F_STR, true, offsetof(struct lease_rec, lease_id), 0, 64, NULL, 0, 0},
    {"generation", API_F_INT, true, offsetof(struct lease_rec, generation), 1, INT64_MAX, NULL, 0,
     0},
    {"job_id", API_F_INT, true, offsetof(struct lease_rec, job_id), 1, INT64_MAX, NULL, 0, 0},
    {"attempt", API_F_INT, true, offsetof(struct lease_rec, attempt), 1, INT64_MAX, NULL, 0, 0},
    API_FIELD_END,
};

struct status_only {
	const char *status;
};

static const struct api_field status_fields[] = {
    {"status", API_F_STR, true, offsetof(struct status_only, status), 0, 16, NULL, 0, 0},
    API_FIELD_END,
};

/* The packages a kept "succeeded" completion names, from the build's result.json (each
 * must lie in this job's directory). */
static kiln_rc kept_outputs(struct jobrun *j, struct kiln_arena *a, struct result *res,
                            struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const struct out_file *o;
	char path[KILN_LIMIT_PATH + 32];
	size_t i, n = strlen(j->dir);
	kiln_rc rc;

	if (!pathf(path, sizeof(path), "%s/" RESULT_FILE, j->dir))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", j->dir);
	rc = util_read_file(path, KILN_LIMIT_TEXT_FILE, &raw, err);
	if (!rc)
		rc = api_json_decode(raw.ptr, raw.len, result_fields, 0, res, a, err);
	o = res->outputs.v;
	for (i = 0; !rc && i < res->outputs.n; i++)
		if (strncmp(o[i].path, j->dir, n) || o[i].path[n] != '/' ||
		    strstr(o[i].path, "/../"))
			rc = kiln_err_set(err, KILN_EINVAL, "%s: %s is outside the job directory",
			                  path, o[i].path);
	kiln_buf_release(&raw);
	return rc;
}

/* Send the kept completion, or report a build the worker died in. */
static bool recover_send(struct jobrun *j, struct kiln_arena *a)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_err err = KILN_ERR_INIT;
	struct status_only st = {0};
	struct result res = {0};
	char path[KILN_LIMIT_PATH + 32];
	bool done = true;

	if (!pathf(path, sizeof(path), "%s/" COMPLETION_FILE, j->dir) ||
	    util_read_file(path, KILN_LIMIT_HTTP_BODY, &body, &err) ||
	    api_json_decode(body.ptr, body.len, status_fields, 0, &st, a, &err)) {
		log_note(j, "kiln worker: the worker stopped during this build\n");
		done = complete(j, "failed", "infra", "the worker stopped during the build", NULL);
		goto out;
	}
	log_note(j, "kiln worker: restarted; sending the result kept since the build ended\n");
	if (strcmp(st.status, "succeeded")) {
		done = deliver(j, &body, NULL);
	} else if (kept_outputs(j, a, &res, &err)) {
		done = complete(j, "failed", "infra", err.msg, NULL);
	} else {
		done = deliver(j, &body, &res.outputs);
	}
out:
	kiln_buf_release(&body);
	return done;
}

/* One job directory an earlier run of this worker left. */
static void recover_one(struct worker_daemon *d, struct api_client *c, const char *dir)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct kiln_err err = KILN_ERR_INIT;
	struct worker_lease l = {0};
	struct jobrun j = {.d = d, .c = c, .l = &l, .log_fd = -1};
	struct lease_rec rec = {0};
	char path[KILN_LIMIT_PATH + 32];
	struct stat sb;
	bool done = true;

	api_reply_init(&j.r, REPLY_MAX);
	if (!pathf(j.dir, sizeof(j.dir), "%s", dir) ||
	    !pathf(path, sizeof(path), "%s/" LEASE_FILE, dir) ||
	    util_read_file(path, KILN_LIMIT_LINE, &raw, &err) ||
	    api_json_decode(raw.ptr, raw.len, lease_rec_fields, 0, &rec, &a, &err))
		goto out; /* no lease named: nothing to report */
	l.lease_id = rec.lease_id;
	l.generation = rec.generation;
	l.job_id = rec.job_id;
	l.attempt = rec.attempt;
	if (pathf(path, sizeof(path), "%s/build.log", dir))
		j.log_fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (j.log_fd >= 0 && fstat(j.log_fd, &sb) == 0)
		j.log_size = (int64_t)sb.st_size;
	heartbeat(&j); /* renews the lease, or says it is gone */
	if (j.end == END_LOST) {
		kiln_log(KILN_LOG_INFO,
		         "job %lld attempt %lld: its lease is gone: dropping what this worker kept",
		         (long long)l.job_id, (long long)l.attempt);
		goto out;
	}
	kiln_log(KILN_LOG_INFO, "job %lld attempt %lld: still leased to this worker: reporting it",
	         (long long)l.job_id, (long long)l.attempt);
	done = recover_send(&j, &a);
	log_flush(&j);
out:
	if (done && util_rm_rf(dir, &err))
		kiln_log_err(KILN_LOG_WARN, &err);
	util_close(j.log_fd);
	api_reply_release(&j.r);
	kiln_buf_release(&raw);
	kiln_arena_release(&a);
}

void worker_daemon_recover(struct worker_daemon *d, struct api_client *c)
{
	char jobs[KILN_LIMIT_PATH], dir[KILN_LIMIT_PATH];
	struct dirent *de;
	DIR *dp;

	if (!pathf(jobs, sizeof(jobs), "%s/jobs", d->work_dir))
		return;
	dp = opendir(jobs);
	if (!dp)
		return;
	while (!*d->stop && (de = readdir(dp))) {
		if (de->d_name[0] == '.' || !pathf(dir, sizeof(dir), "%s/%s", jobs, de->d_name))
			continue;
		recover_one(d, c, dir);
	}
	closedir(dp);
}
