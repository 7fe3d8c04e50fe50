/*
 * client.c - the command-line client of REST API v1: submit (uploading sources first),
 * list, show, follow logs, cancel, retry, download, workers and tokens.
 *
 * Output is plain text for people (or the server's JSON with --json); every failure comes
 * back as kiln_err with the server's own message. Waiting uses the API's long polls (the
 * log's follow=1), so a client does not hammer the scheduler.
 */
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cli.h"

#define REPLY_MAX (64 * KILN_MIB)

struct conn {
	struct api_client *c;
	struct api_reply r;
	const struct cli_client *cfg;
};

static kiln_rc conn_open(const struct cli_client *cfg, struct conn *k, struct kiln_err *err)
{
	struct api_client_config cc = {0};

	memset(k, 0, sizeof(*k));
	k->cfg = cfg;
	if (!cfg->url || !*cfg->url)
		return kiln_err_set(err, KILN_EINVAL, "no scheduler URL (set KILN_URL or --url)");
	cc.base_url = cfg->url;
	cc.token = cfg->token && *cfg->token ? cfg->token : NULL;
	cc.timeout_ms = 120000;
	cc.ca_file = cfg->ca_file && *cfg->ca_file ? cfg->ca_file : NULL;
	api_reply_init(&k->r, REPLY_MAX);
	return api_client_new(&cc, &k->c, err);
}

static void conn_close(struct conn *k)
{
	api_client_free(k->c);
	api_reply_release(&k->r);
}

/* One call, failing on a non-2xx status. */
static kiln_rc call(struct conn *k, const char *method, const char *path,
                    const struct kiln_buf *body, const char *what, struct kiln_err *err)
{
	struct api_call c = {.method = method, .path = path};
	kiln_rc rc;

	if (body) {
		c.body = body->ptr;
		c.body_len = body->len;
	}
	rc = api_client_call(k->c, &c, &k->r, err);
	if (!rc)
		rc = api_reply_check(&k->r, what, err);
	return rc;
}

static void out_write(const struct cli_client *c, const char *s, size_t len)
{
	if (util_write_all(c->out_fd, s, len, NULL))
		return; /* stdout closed: nothing more to say */
}

static void out_printf(const struct cli_client *c, const char *fmt, ...) KILN_PRINTF(2, 3);
static void out_printf(const struct cli_client *c, const char *fmt, ...)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	va_list ap;

	va_start(ap, fmt);
	kiln_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	out_write(c, b.ptr, b.len);
	kiln_buf_release(&b);
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding replies */

struct cjob {
	int64_t id, attempts, priority;
	const char *state, *spec_name, *worker, *failure_class, *message, *content_key;
	const char *project;
};

#define JF(n, t, f)                                                                                \
	{                                                                                          \
		n, t, false, offsetof(struct cjob, f), INT64_MIN, INT64_MAX, NULL, 0, 0            \
	}

static const struct api_field cjob_fields[] = {
    JF("id", API_F_INT, id),
    JF("attempts", API_F_INT, attempts),
    JF("priority", API_F_INT, priority),
    JF("state", API_F_STR, state),
    JF("spec_name", API_F_STR, spec_name),
    JF("worker", API_F_STR, worker),
    JF("failure_class", API_F_STR, failure_class),
    JF("message", API_F_STR, message),
    JF("content_key", API_F_STR, content_key),
    JF("project", API_F_STR, project),
    API_FIELD_END,
};

struct cjobs {
	struct api_objlist jobs;
};

static const struct api_field cjobs_fields[] = {
    {"jobs", API_F_OBJLIST, true, offsetof(struct cjobs, jobs), 0, 100000, cjob_fields,
     sizeof(struct cjob), 0},
    API_FIELD_END,
};

struct cart {
	const char *name, *sha256, *url, *kind;
	int64_t size;
};

static const struct api_field cart_fields[] = {
    {"name", API_F_STR, true, offsetof(struct cart, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct cart, sha256), 0, 64, NULL, 0, 0},
    {"url", API_F_STR, true, offsetof(struct cart, url), 0, 256, NULL, 0, 0},
    {"kind", API_F_STR, false, offsetof(struct cart, kind), 0, 32, NULL, 0, 0},
    {"size", API_F_INT, false, offsetof(struct cart, size), 0, INT64_MAX, NULL, 0, 0},
    API_FIELD_END,
};

struct carts {
	struct api_objlist artifacts;
	const char *state;
};

static const struct api_field carts_fields[] = {
    {"artifacts", API_F_OBJLIST, true, offsetof(struct carts, artifacts), 0, 100000, cart_fields,
     sizeof(struct cart), 0},
    {"state", API_F_STR, false, offsetof(struct carts, state), 0, 32, NULL, 0, 0},
    API_FIELD_END,
};

static kiln_rc reply_decode(struct conn *k, const struct api_field *f, void *out,
                            struct kiln_arena *a, struct kiln_err *err)
{
	kiln_rc rc = api_json_decode(k->r.body.ptr, k->r.body.len, f, 0, out, a, err);

	if (rc)
		kiln_err_wrap(err, "the scheduler's reply");
	return rc;
}

static kiln_rc job_fetch(struct conn *k, int64_t id, struct kiln_arena *a, struct cjob *j,
                         struct kiln_err *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", (long long)id);
	memset(j, 0, sizeof(*j));
	if (call(k, "GET", path, NULL, "job", err))
		return err ? err->code : KILN_ENET;
	return reply_decode(k, cjob_fields, j, a, err);
}

static bool final_state(const char *s)
{
	return s && (!strcmp(s, "succeeded") || !strcmp(s, "failed") || !strcmp(s, "cancelled") ||
	             !strcmp(s, "dep_failed"));
}

/* ---------------------------------------------------------------------------------------- */
/* Submitting */

static kiln_rc upload_file(struct conn *k, const char *path, char sha[65], struct kiln_err *err)
{
	char hex[2 * UTIL_DIGEST_MAX + 1], url[128];
	struct api_call c = {
	    .method = "PUT", .body_file = path, .content_type = "application/octet-stream"};
	kiln_rc rc;

	rc = util_digest_file_hex(UTIL_DIGEST_SHA256, path, hex, err);
	if (rc)
		return rc;
	memcpy(sha, hex, 65);
	snprintf(url, sizeof(url), "/api/v1/blobs/%s", sha);
	c.path = url;
	rc = api_client_call(k->c, &c, &k->r, err);
	if (!rc)
		rc = api_reply_check(&k->r, path, err);
	return rc;
}

static void jw_words(struct api_jw *w, const char *key, const char **v, size_t n)
{
	size_t i;

	if (!n)
		return;
	api_jw_key(w, key);
	api_jw_arr(w);
	for (i = 0; i < n; i++)
		api_jw_str(w, v[i]);
	api_jw_end(w);
}

static void jw_defines(struct api_jw *w, const struct cli_submit *s)
{
	size_t i;

	if (!s->ndefines)
		return;
	api_jw_key(w, "defines");
	api_jw_obj(w);
	for (i = 0; i < s->ndefines; i++) {
		const char *sp = strpbrk(s->defines[i], " \t");
		char name[129];
		size_t nl = sp ? (size_t)(sp - s->defines[i]) : strlen(s->defines[i]);

		snprintf(name, sizeof(name), "%.*s", (int)(nl < 128 ? nl : 128), s->defines[i]);
		api_jw_kstr(w, name, sp ? sp + strspn(sp, " \t") : "");
	}
	api_jw_end(w);
}

static void jw_options(struct api_jw *w, const struct cli_submit *s)
{
	jw_defines(w, s);
	jw_words(w, "with", s->with, s->nwith);
	jw_words(w, "without", s->without, s->nwithout);
	jw_words(w, "tags", s->tags, s->ntags);
	if (s->formats) {
		api_jw_key(w, "formats");
		api_jw_arr(w);
		if (strstr(s->formats, "4"))
			api_jw_str(w, "v4");
		if (strstr(s->formats, "6"))
			api_jw_str(w, "v6");
		api_jw_end(w);
	}
	if (s->arch)
		api_jw_kstr(w, "arch", s->arch);
	if (s->sign_key)
		api_jw_kstr(w, "sign_key", s->sign_key);
	if (s->repository)
		api_jw_kstr(w, "repository", s->repository);
	if (s->root)
		api_jw_kstr(w, "root", s->root);
	if (s->project)
		api_jw_kstr(w, "project", s->project);
	if (s->priority)
		api_jw_kint(w, "priority", s->priority);
	if (s->reruns)
		api_jw_kint(w, "reruns", s->reruns);
	if (s->timeout)
		api_jw_kint(w, "timeout", s->timeout);
}

/* A job request's object for s into w (its sources uploaded). */
/* A job request's object for s into w (its sources uploaded). */
static kiln_rc submit_member(struct conn *k, const struct cli_submit *s, struct api_jw *w,
                             struct kiln_err *err)
{
	struct kiln_buf spec = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	char sha[65];
	size_t i;
	kiln_rc rc = KILN_OK;

	api_jw_obj(w);
	if (s->git_url) {
		api_jw_key(w, "git");
		api_jw_obj(w);
		api_jw_kstr(w, "url", s->git_url);
		if (s->git_ref)
			api_jw_kstr(w, "ref", s->git_ref);
		if (s->git_spec)
			api_jw_kstr(w, "spec", s->git_spec);
		api_jw_end(w);
	} else if (s->srpm_path) {
		rc = upload_file(k, s->srpm_path, sha, err);
		api_jw_key(w, "srpm");
		api_jw_obj(w);
		api_jw_kstr(w, "name", util_path_basename(s->srpm_path));
		api_jw_kstr(w, "sha256", sha);
		api_jw_end(w);
	} else {
		rc = util_read_file(s->spec_path, KILN_LIMIT_HTTP_BODY, &spec, err);
		api_jw_kstr(w, "spec", spec.ptr);
		api_jw_kstr(w, "spec_name", util_path_basename(s->spec_path));
	}
	if (s->nsources) {
		api_jw_key(w, "sources");
		api_jw_arr(w);
		for (i = 0; !rc && i < s->nsources; i++) {
			rc = upload_file(k, s->sources[i], sha, err);
			api_jw_obj(w);
			api_jw_kstr(w, "name", util_path_basename(s->sources[i]));
			api_jw_kstr(w, "sha256", sha);
			api_jw_end(w);
		}
		api_jw_end(w);
	}
	jw_options(w, s);
	api_jw_end(w);
	kiln_buf_release(&spec);
	return rc;
}

static kiln_rc submit_body(struct conn *k, const struct cli_submit *s, struct kiln_buf *body,
                           struct kiln_err *err)
{
	struct api_jw w;
	kiln_rc rc;

	api_jw_init(&w, body);
	rc = submit_member(k, s, &w, err);
	return rc ? rc : kiln_buf_finish(body, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Waiting and following */

static void progress(const struct cli_client *c, const struct cjob *j, int64_t t0)
{
	char line[256];
	int n;

	if (c->progress_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "\r\033[Kjob %lld: %s%s%s (attempt %lld) %llds",
	             (long long)j->id, j->state ? j->state : "?", j->worker ? " on " : "",
	             j->worker ? j->worker : "", (long long)j->attempts,
	             (long long)((util_clock_mono_ns() / 1000000 - t0) / 1000));
	if (n > 0 && util_write_all(c->progress_fd, line,
	                            (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, NULL))
		return;
}

/* Stream attempt n's log from *offset until it completes (or the long poll ends). */
static kiln_rc log_step(struct conn *k, int64_t id, int64_t n, int64_t *offset, bool print,
                        bool *complete, struct kiln_err *err)
{
	char path[160];
	struct api_call c = {.method = "GET", .path = path, .timeout_ms = 60000};
	int64_t size = 0;
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/attempts/%lld/log?offset=%lld&follow=1",
	         (long long)id, (long long)n, (long long)*offset);
	rc = api_client_call(k->c, &c, &k->r, err);
	if (!rc && k->r.status == 404) {
		*complete = false;
		return KILN_OK; /* no attempt yet */
	}
	if (!rc)
		rc = api_reply_check(&k->r, "log", err);
	if (rc)
		return rc;
	if (print && k->r.body.len)
		out_write(k->cfg, k->r.body.ptr, k->r.body.len);
	*offset += (int64_t)k->r.body.len;
	if (util_parse_i64(k->r.header_size, strlen(k->r.header_size), 10, 0, INT64_MAX, &size,
	                   NULL))
		size = *offset;
	*complete = k->r.complete && *offset >= size;
	return KILN_OK;
}

static kiln_rc wait_job(struct conn *k, int64_t id, bool follow, struct cjob *j,
                        struct kiln_arena *a, struct kiln_err *err)
{
	int64_t t0 = util_clock_mono_ns() / 1000000, attempt = 0, offset = 0;
	bool complete = false;
	kiln_rc rc;

	for (;;) {
		rc = job_fetch(k, id, a, j, err);
		if (rc)
			return rc;
		progress(k->cfg, j, t0);
		/* following an ended job: its last attempt's log to the end (answers come in
		 * 1 MiB parts) */
		if (final_state(j->state) &&
		    (!follow || !j->attempts || (attempt >= j->attempts && complete)))
			break;
		if (j->attempts > attempt) {
			if (attempt && follow)
				out_printf(k->cfg, "--- attempt %lld ---\n",
				           (long long)j->attempts);
			attempt = j->attempts, offset = 0, complete = false;
		}
		if (!attempt) {
			(void)poll(NULL, 0, 500); /* queued: no log to long-poll yet */
			continue;
		}
		rc = log_step(k, id, attempt, &offset, follow, &complete, err);
		if (rc)
			return rc;
		if (complete && final_state(j->state))
			break;
	}
	if (k->cfg->progress_fd >= 0 && util_write_all(k->cfg->progress_fd, "\n", 1, NULL))
		return KILN_OK;
	return KILN_OK;
}

static kiln_rc job_outcome(const struct cli_client *c, const struct cjob *j, struct kiln_err *err)
{
	if (!c->json)
		out_printf(c, "job %lld %s%s%s\n", (long long)j->id, j->state,
		           j->message ? ": " : "", j->message ? j->message : "");
	if (j->state && !strcmp(j->state, "succeeded"))
		return KILN_OK;
	kiln_err_set(err, KILN_EBUILD, "job %lld %s%s%s%s", (long long)j->id, j->state,
	             j->failure_class ? " (" : "", j->failure_class ? j->failure_class : "",
	             j->failure_class ? ")" : "");
	return KILN_EBUILD;
}

kiln_rc cli_client_submit(const struct cli_client *c, const struct cli_submit *s,
                          struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	struct api_call call_ = {.method = "POST", .path = "/api/v1/jobs"};
	char idem[300];
	struct conn k = {0};
	struct cjob j = {0};
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	if (!rc)
		rc = submit_body(&k, s, &body, err);
	if (rc)
		goto out;
	call_.body = body.ptr;
	call_.body_len = body.len;
	if (s->idempotency_key) {
		snprintf(idem, sizeof(idem), "Idempotency-Key: %.255s", s->idempotency_key);
		call_.headers[0] = idem;
	}
	rc = api_client_call(k.c, &call_, &k.r, err);
	if (!rc)
		rc = api_reply_check(&k.r, "submit", err);
	if (!rc)
		rc = reply_decode(&k, cjob_fields, &j, &a, err);
	if (rc)
		goto out;
	if (c->json && !s->wait && !s->follow)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!c->json)
		out_printf(c, "job %lld submitted (%s)\n", (long long)j.id, j.state);
	if (!s->wait && !s->follow)
		goto out;
	rc = wait_job(&k, j.id, s->follow, &j, &a, err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	if (!rc)
		rc = job_outcome(c, &j, err);
out:
	conn_close(&k);
	kiln_buf_release(&body);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* [batches] kiln submit --batch */

/* One member: the spec and its sources, with the options every member gets (the batch,
 * not each member, names the root and the repository). */
static kiln_rc batch_member(struct conn *k, const struct cli_submit *s, const char *spec,
                            const char *const *srcs, size_t nsrc, struct api_jw *w,
                            struct kiln_err *err)
{
	struct cli_submit each = *s;

	each.spec_path = spec, each.srpm_path = NULL, each.git_url = NULL;
	if (kiln_str_ends(kiln_str_from(spec), ".src.rpm")) /* an SRPM operand */
		each.spec_path = NULL, each.srpm_path = spec;
	each.sources = (const char **)srcs, each.nsources = nsrc;
	each.repository = NULL, each.root = NULL;
	return submit_member(k, &each, w, err);
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entries of dir (no dot files), sorted; *specs how many end in .spec. Paths in a. */
static kiln_rc dir_list(const char *dir, struct kiln_arena *a, const char ***out, size_t *n,
                        size_t *specs, struct kiln_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t cap = 0;
	kiln_rc rc = KILN_OK;

	*out = NULL, *n = 0, *specs = 0;
	if (!d)
		return kiln_err_sys(err, KILN_EIO, "cannot read the directory '%s'", dir);
	while (!rc && (de = readdir(d))) {
		const char *p;

		if (de->d_name[0] == '.')
			continue;
		p = kiln_arena_printf(a, "%s/%s", dir, de->d_name);
		if (!p || !kiln_arena_strv_add(a, out, n, &cap, p))
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		else if (kiln_str_ends(kiln_str_from(de->d_name), ".spec"))
			(*specs)++;
	}
	closedir(d);
	if (!rc && *n)
		qsort(*out, *n, sizeof(**out), names_cmp);
	return rc;
}

/* A directory: a package directory (one spec, its other files its sources), a directory of
 * specs (each a member, no sources), or a directory of package directories. */
static kiln_rc batch_dir(struct conn *k, const struct cli_submit *s, const char *dir, int depth,
                         struct api_jw *w, size_t *count, struct kiln_arena *a,
                         struct kiln_err *err)
{
	const char **v = NULL, **files;
	size_t n = 0, specs = 0, i, nf = 0;
	const char *spec = NULL;
	struct stat st;
	kiln_rc rc;

	rc = dir_list(dir, a, &v, &n, &specs, err);
	if (rc)
		return rc;
	if (specs == 1) {
		if (!(files = kiln_arena_array(a, n, sizeof(*files))))
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		for (i = 0; i < n; i++) {
			if (kiln_str_ends(kiln_str_from(v[i]), ".spec"))
				spec = v[i];
			else if (!stat(v[i], &st) && S_ISREG(st.st_mode))
				files[nf++] = v[i];
		}
		(*count)++;
		return batch_member(k, s, spec, files, nf, w, err);
	}
	for (i = 0; !rc && i < n; i++) {
		if (specs && kiln_str_ends(kiln_str_from(v[i]), ".spec")) {
			(*count)++;
			rc = batch_member(k, s, v[i], NULL, 0, w, err);
		} else if (!specs && depth == 0 && !stat(v[i], &st) && S_ISDIR(st.st_mode)) {
			rc = batch_dir(k, s, v[i], 1, w, count, a, err);
		}
	}
	return rc;
}

static kiln_rc batch_body(struct conn *k, const struct cli_batch *b, struct kiln_buf *body,
                          struct kiln_arena *a, struct kiln_err *err)
{
	struct api_jw w;
	struct stat st;
	size_t i, count = 0;
	kiln_rc rc = KILN_OK;

	api_jw_init(&w, body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "root", b->s.root);
	if (b->s.repository)
		api_jw_kstr(&w, "repository", b->s.repository);
	api_jw_key(&w, "bootstrap");
	api_jw_arr(&w);
	for (const char *p = b->bootstrap; p && *p;) {
		size_t len = strcspn(p, ", ");

		if (len)
			api_jw_strn(&w, p, len);
		p += len + (p[len] != '\0');
	}
	api_jw_end(&w);
	api_jw_key(&w, "members");
	api_jw_arr(&w);
	for (i = 0; !rc && i < b->npaths; i++) {
		if (stat(b->paths[i], &st))
			rc = kiln_err_sys(err, KILN_EIO, "cannot read '%s'", b->paths[i]);
		else if (S_ISDIR(st.st_mode))
			rc = batch_dir(k, &b->s, b->paths[i], 0, &w, &count, a, err);
		else if (++count)
			rc = batch_member(k, &b->s, b->paths[i], NULL, 0, &w, err);
	}
	api_jw_end(&w);
	api_jw_end(&w);
	if (!rc && !count)
		rc = kiln_err_set(err, KILN_EINVAL, "no spec in %s", b->paths[0]);
	return rc ? rc : kiln_buf_finish(body, err);
}

struct cbjob {
	int64_t id, level;
	const char *name, *state, *message;
};

struct cbatch {
	int64_t id;
	const char *state, *root;
	struct api_objlist jobs; /* struct cbjob */
};

#define BJ(n, t, f)                                                                                \
	{                                                                                          \
		n, t, false, offsetof(struct cbjob, f), 0, INT64_MAX, NULL, 0, 0                   \
	}
static const struct api_field cbjob_fields[] = {
    BJ("id", API_F_INT, id),       BJ("level", API_F_INT, level),     BJ("name", API_F_STR, name),
    BJ("state", API_F_STR, state), BJ("message", API_F_STR, message), API_FIELD_END,
};
static const struct api_field cbatch_fields[] = {
    {"id", API_F_INT, true, offsetof(struct cbatch, id), 0, INT64_MAX, NULL, 0, 0},
    {"state", API_F_STR, true, offsetof(struct cbatch, state), 0, 64, NULL, 0, 0},
    {"root", API_F_STR, false, offsetof(struct cbatch, root), 0, 256, NULL, 0, 0},
    {"jobs", API_F_OBJLIST, true, offsetof(struct cbatch, jobs), 0, 100000, cbjob_fields,
     sizeof(struct cbjob), 0},
    API_FIELD_END,
};

static void batch_print(const struct cli_client *c, const struct cbatch *b, bool states)
{
	const struct cbjob *v = b->jobs.v;
	int64_t l, top = -1;
	size_t i;

	for (i = 0; i < b->jobs.n; i++)
		top = v[i].level > top ? v[i].level : top;
	for (l = 0; l <= top; l++) {
		bool first = true;

		out_printf(c, "  level %lld:", (long long)l);
		for (i = 0; i < b->jobs.n; i++) {
			if (v[i].level != l)
				continue;
			out_printf(c, "%s %s (job %lld%s%s)", first ? "" : ",", v[i].name,
			           (long long)v[i].id, states ? ", " : "",
			           states ? v[i].state : "");
			first = false;
		}
		out_printf(c, "\n");
	}
	for (i = 0; states && i < b->jobs.n; i++)
		if (v[i].message && *v[i].message)
			out_printf(c, "  %s: %s\n", v[i].name, v[i].message);
}

kiln_rc cli_client_batch(const struct cli_client *c, const struct cli_batch *b,
                         struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct conn k = {0};
	struct cbatch bt = {0};
	char path[64];
	kiln_rc rc;

	if (!b->s.root)
		return kiln_err_set(err, KILN_EINVAL, "--batch needs --root CONFIG");
	rc = conn_open(c, &k, err);
	if (!rc)
		rc = batch_body(&k, b, &body, &a, err);
	if (!rc) {
		struct api_call post = {.method = "POST",
		                        .path = "/api/v1/batches",
		                        .body = body.ptr,
		                        .body_len = body.len};
		char idem[300];

		if (b->s.idempotency_key) { /* a retry gets the same batch */
			snprintf(idem, sizeof(idem), "Idempotency-Key: %.255s",
			         b->s.idempotency_key);
			post.headers[0] = idem;
		}
		rc = api_client_call(k.c, &post, &k.r, err);
		if (!rc)
			rc = api_reply_check(&k.r, "submit the batch", err);
	}
	if (!rc)
		rc = reply_decode(&k, cbatch_fields, &bt, &a, err);
	if (rc)
		goto out;
	if (c->json && !b->s.wait)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!c->json) {
		out_printf(c, "batch %lld submitted: %zu jobs on root %s\n", (long long)bt.id,
		           bt.jobs.n, bt.root);
		batch_print(c, &bt, false);
	}
	snprintf(path, sizeof(path), "/api/v1/batches/%lld", (long long)bt.id);
	while (!rc && b->s.wait && !strcmp(bt.state, "building")) {
		(void)poll(NULL, 0, 1000);
		memset(&bt, 0, sizeof(bt));
		rc = call(&k, "GET", path, NULL, "the batch", err);
		if (!rc)
			rc = reply_decode(&k, cbatch_fields, &bt, &a, err);
	}
	if (rc || !b->s.wait)
		goto out;
	if (c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else {
		out_printf(c, "batch %lld %s\n", (long long)bt.id, bt.state);
		batch_print(c, &bt, true);
	}
	if (strcmp(bt.state, "succeeded"))
		rc = kiln_err_set(err, KILN_EBUILD, "batch %lld %s", (long long)bt.id, bt.state);
out:
	conn_close(&k);
	kiln_buf_release(&body);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

kiln_rc cli_client_jobs(const struct cli_client *c, const char *state, const char *project,
                        int64_t limit, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct cjobs js = {0};
	struct conn k = {0};
	size_t i;
	kiln_rc rc;

	kiln_buf_addf(&path, "/api/v1/jobs?limit=%lld", (long long)(limit ? limit : 50));
	if (state) {
		kiln_buf_addstr(&path, "&state=");
		api_url_escape(&path, state);
	}
	if (project) {
		kiln_buf_addstr(&path, "&project=");
		api_url_escape(&path, project);
	}
	rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, "GET", path.ptr, NULL, "jobs", err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc)
		rc = reply_decode(&k, cjobs_fields, &js, &a, err);
	for (i = 0; !rc && !c->json && i < js.jobs.n; i++) {
		const struct cjob *j = (const struct cjob *)js.jobs.v + i;

		out_printf(c, "%-8lld %-10s %-4lld %-16s %-30s %s\n", (long long)j->id, j->state,
		           (long long)j->attempts, j->project ? j->project : "",
		           j->spec_name ? j->spec_name : "",
		           j->worker    ? j->worker
		           : j->message ? j->message
		                        : "");
	}
	conn_close(&k);
	kiln_buf_release(&path);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc cli_client_job(const struct cli_client *c, int64_t id, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct cjob j = {0};
	struct conn k = {0};
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	if (!rc)
		rc = job_fetch(&k, id, &a, &j, err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc)
		out_printf(c,
		           "job %lld: %s\nproject: %s\nspec: %s\nattempts: %lld\ncontent key: "
		           "%s\n%s%s%s%s",
		           (long long)j.id, j.state, j.project ? j.project : "",
		           j.spec_name ? j.spec_name : "", (long long)j.attempts,
		           j.content_key ? j.content_key : "", j.worker ? "worker: " : "",
		           j.worker ? j.worker : "", j.worker ? "\n" : "", "");
	if (!rc && !c->json && j.message)
		out_printf(c, "message: %s (%s)\n", j.message,
		           j.failure_class ? j.failure_class : "");
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc cli_client_logs(const struct cli_client *c, int64_t id, int64_t attempt, bool follow,
                        struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	int64_t offset = 0;
	bool complete = false;
	struct cjob j = {0};
	struct conn k = {0};
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	if (!rc && (follow || !attempt))
		rc = job_fetch(&k, id, &a, &j, err);
	if (rc)
		goto out;
	if (follow && !attempt) {
		struct cli_client quiet = *c;

		quiet.progress_fd = -1;
		k.cfg = &quiet;
		rc = wait_job(&k, id, true, &j, &a, err);
		goto out;
	}
	if (!attempt)
		attempt = j.attempts;
	if (!attempt) {
		rc = kiln_err_set(err, KILN_ENOTFOUND, "job %lld has not started yet",
		                  (long long)id);
		goto out;
	}
	do
		rc = log_step(&k, id, attempt, &offset, true, &complete, err);
	while (!rc && (follow ? !complete : k.r.body.len > 0 && !complete));
out:
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc cli_client_action(const struct cli_client *c, int64_t id, const char *action,
                          struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 64);
	struct cjob j = {0};
	char path[96];
	struct conn k = {0};
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/%s", (long long)id, action);
	rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, "POST", path, NULL, action, err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc && !(rc = reply_decode(&k, cjob_fields, &j, &a, err)))
		out_printf(c, "job %lld: %s%s\n", (long long)id, j.state,
		           !strcmp(action, "cancel") && !final_state(j.state)
		               ? " (cancel requested)"
		               : "");
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reproducibility */

struct crepro {
	const char *verdict;
	int64_t reruns;
};

static const struct api_field crepro_fields[] = {
    {"verdict", API_F_STR, false, offsetof(struct crepro, verdict), 0, 32, NULL, 0, 0},
    {"reruns", API_F_INT, false, offsetof(struct crepro, reruns), 0, INT64_MAX, NULL, 0, 0},
    API_FIELD_END,
};

static const struct api_field crepro_get_fields[] = {
    {"verdict", API_F_STR, false, offsetof(struct crepro, verdict), 0, 32, NULL, 0, 0},
    API_FIELD_END,
};

/* The job's reproducibility verdict ("pending" while its reruns are not all compared). */
static kiln_rc repro_verdict(struct conn *k, int64_t id, struct kiln_arena *a, const char **v,
                             struct kiln_err *err)
{
	struct api_call c = {.method = "GET"};
	struct crepro r = {0};
	char path[96];
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/reproducibility", (long long)id);
	c.path = path;
	rc = api_client_call(k->c, &c, &k->r, err);
	if (!rc && k->r.status == 404) {
		*v = "pending"; /* the job has not succeeded yet: no reruns */
		return KILN_OK;
	}
	if (!rc)
		rc = api_reply_check(&k->r, "reproducibility", err);
	if (!rc)
		rc = reply_decode(k, crepro_get_fields, &r, a, err);
	*v = r.verdict ? r.verdict : "unknown";
	return rc;
}

kiln_rc cli_client_reproduce(const struct cli_client *c, int64_t id, int64_t count, bool wait,
                             struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 64);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *verdict = "pending";
	struct crepro r = {0};
	struct conn k = {0};
	char path[96];
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/reproduce", (long long)id);
	if (count > 0)
		kiln_buf_addf(&body, "{\"count\":%lld}", (long long)count);
	rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, "POST", path, count > 0 ? &body : NULL, "reproduce", err);
	if (!rc)
		rc = reply_decode(&k, crepro_fields, &r, &a, err);
	if (!rc && !wait) {
		if (c->json)
			out_write(c, k.r.body.ptr, k.r.body.len);
		else
			out_printf(c, "job %lld: %lld reruns, %s\n", (long long)id,
			           (long long)r.reruns, r.verdict ? r.verdict : "pending");
		goto out;
	}
	while (!rc && !strcmp(verdict, "pending")) {
		rc = repro_verdict(&k, id, &a, &verdict, err);
		if (!rc && !strcmp(verdict, "pending"))
			(void)poll(NULL, 0, 1000);
	}
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/reproducibility%s", (long long)id,
	         c->json ? "" : "?format=text");
	if (!rc)
		rc = call(&k, "GET", path, NULL, "reproducibility", err);
	if (!rc)
		out_write(c, k.r.body.ptr, k.r.body.len);
	if (!rc && strcmp(verdict, "reproducible"))
		rc = kiln_err_set(err, KILN_EBUILD, "job %lld is not reproducible: %s",
		                  (long long)id, verdict);
out:
	kiln_buf_release(&body);
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

/* A rebuild input: {"url"} for a URL, else the file uploaded: {"name", "sha256"}. */
static kiln_rc rebuild_ref(struct conn *k, struct api_jw *w, const char *arg, struct kiln_err *err)
{
	char sha[65];
	kiln_rc rc;

	api_jw_obj(w);
	if (!strncmp(arg, "http://", 7) || !strncmp(arg, "https://", 8)) {
		api_jw_kstr(w, "url", arg);
	} else {
		rc = upload_file(k, arg, sha, err);
		if (rc)
			return rc;
		api_jw_kstr(w, "name", util_path_basename(arg));
		api_jw_kstr(w, "sha256", sha);
	}
	api_jw_end(w);
	return KILN_OK;
}

kiln_rc cli_client_rebuild(const struct cli_client *c, const char *srpm, const char *const *rpms,
                           size_t nrpms, const char *arch, bool wait, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB * 64);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	const char *verdict = "pending";
	struct crepro r = {0};
	struct conn k = {0};
	struct api_jw w;
	int64_t id = 0;
	char path[96];
	size_t i;
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	api_jw_init(&w, &body);
	api_jw_obj(&w);
	if (arch)
		api_jw_kstr(&w, "arch", arch);
	api_jw_key(&w, "srpm");
	if (!rc)
		rc = rebuild_ref(&k, &w, srpm, err);
	api_jw_key(&w, "rpms");
	api_jw_arr(&w);
	for (i = 0; !rc && i < nrpms; i++)
		rc = rebuild_ref(&k, &w, rpms[i], err);
	api_jw_end(&w);
	api_jw_end(&w);
	if (!rc)
		rc = kiln_buf_finish(&body, err);
	if (!rc)
		rc = call(&k, "POST", "/api/v1/rebuilds", &body, "rebuild", err);
	if (!rc && k.r.body.ptr && strstr(k.r.body.ptr, "\"id\":"))
		id = strtoll(strstr(k.r.body.ptr, "\"id\":") + 5, NULL, 10);
	if (!rc && !wait) {
		if (c->json)
			out_write(c, k.r.body.ptr, k.r.body.len);
		else
			out_printf(c, "rebuild %lld: pending\n", (long long)id);
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/rebuilds/%lld", (long long)id);
	while (!rc && !strcmp(verdict, "pending")) {
		rc = call(&k, "GET", path, NULL, "rebuild", err);
		if (!rc)
			rc = reply_decode(&k, crepro_get_fields, &r, &a, err);
		verdict = !rc && r.verdict ? r.verdict : "unknown";
		if (!rc && !strcmp(verdict, "pending"))
			(void)poll(NULL, 0, 1000);
	}
	snprintf(path, sizeof(path), "/api/v1/rebuilds/%lld%s", (long long)id,
	         c->json ? "" : "?format=text");
	if (!rc)
		rc = call(&k, "GET", path, NULL, "rebuild", err);
	if (!rc)
		out_write(c, k.r.body.ptr, k.r.body.len);
	if (!rc && strcmp(verdict, "reproducible"))
		rc = kiln_err_set(err, KILN_EBUILD, "rebuild %lld: %s", (long long)id, verdict);
out:
	kiln_buf_release(&body);
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc download_one(struct conn *k, const struct cart *art, const char *dir,
                            struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct api_call c = {.method = "GET", .path = art->url};
	char hex[2 * UTIL_DIGEST_MAX + 1];
	struct util_atomic_file f = {.fd = -1};
	kiln_rc rc;

	rc = api_name_check(art->name, strlen(art->name), err);
	if (!rc)
		rc = util_path_join(dir, art->name, &path, err);
	if (!rc)
		rc = util_atomic_open(&f, path.ptr, 0644, err);
	if (rc)
		goto out;
	c.out_fd = f.fd;
	rc = api_client_call(k->c, &c, &k->r, err);
	if (!rc)
		rc = api_reply_check(&k->r, art->name, err);
	if (!rc)
		rc = util_atomic_commit(&f, err);
	if (!rc)
		rc = util_digest_file_hex(UTIL_DIGEST_SHA256, path.ptr, hex, err);
	if (!rc && strcmp(hex, art->sha256))
		rc = kiln_err_set(err, KILN_EDIGEST, "%s: downloaded sha256 %s, expected %s",
		                  art->name, hex, art->sha256);
	if (!rc)
		out_printf(k->cfg, "%s\n", path.ptr);
out:
	util_atomic_abort(&f);
	kiln_buf_release(&path);
	return rc;
}

kiln_rc cli_client_download(const struct cli_client *c, int64_t id, const char *dir,
                            struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct carts cs = {0};
	char path[96];
	struct conn k = {0};
	size_t i;
	kiln_rc rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/artifacts", (long long)id);
	rc = conn_open(c, &k, err);
	if (!rc)
		rc = util_mkdir_p(dir, 0755, err);
	if (!rc)
		rc = call(&k, "GET", path, NULL, "artifacts", err);
	if (!rc)
		rc = reply_decode(&k, carts_fields, &cs, &a, err);
	if (!rc && !cs.artifacts.n)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "job %lld has no artifacts (%s)",
		                  (long long)id, cs.state ? cs.state : "?");
	for (i = 0; !rc && i < cs.artifacts.n; i++)
		rc = download_one(&k, (const struct cart *)cs.artifacts.v + i, dir, err);
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Workers and tokens: the server's JSON as it is */

static kiln_rc get_print(const struct cli_client *c, const char *method, const char *path,
                         const struct kiln_buf *body, struct kiln_err *err)
{
	struct conn k = {0};
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, method, path, body, path, err);
	if (!rc)
		out_write(c, k.r.body.ptr, k.r.body.len);
	conn_close(&k);
	return rc;
}

kiln_rc cli_client_workers(const struct cli_client *c, struct kiln_err *err)
{
	return get_print(c, "GET", "/api/v1/workers", NULL, err);
}

kiln_rc cli_client_tokens(const struct cli_client *c, struct kiln_err *err)
{
	return get_print(c, "GET", "/api/v1/tokens", NULL, err);
}

kiln_rc cli_client_token_revoke(const struct cli_client *c, int64_t id, struct kiln_err *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/tokens/%lld", (long long)id);
	return get_print(c, "DELETE", path, NULL, err);
}

struct ctoken {
	const char *token;
};

kiln_rc cli_client_token_create(const struct cli_client *c, const char *scopes, const char *name,
                                const char *project, struct kiln_err *err)
{
	static const struct api_field f[] = {
	    {"token", API_F_STR, true, offsetof(struct ctoken, token), 0, 256, NULL, 0, 0},
	    API_FIELD_END,
	};
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct ctoken t = {0};
	struct api_jw w;
	struct conn k = {0};
	kiln_rc rc;

	api_jw_init(&w, &body);
	api_jw_obj(&w);
	api_jw_kstr(&w, "scopes", scopes);
	if (name)
		api_jw_kstr(&w, "name", name);
	if (project)
		api_jw_kstr(&w, "project", project);
	api_jw_end(&w);
	rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, "POST", "/api/v1/tokens", &body, "token", err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc && !(rc = reply_decode(&k, f, &t, &a, err)))
		out_printf(c, "%s\n", t.token);
	conn_close(&k);
	kiln_buf_release(&body);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Projects */

struct cproject {
	const char *name, *arch_caps;
	bool public_read;
	int64_t max_running;
};

static const struct api_field cproject_fields[] = {
    {"name", API_F_STR, true, offsetof(struct cproject, name), 0, 64, NULL, 0, 0},
    {"arch_caps", API_F_STR, false, offsetof(struct cproject, arch_caps), 0, 1024, NULL, 0, 0},
    {"public_read", API_F_BOOL, false, offsetof(struct cproject, public_read), 0, 0, NULL, 0, 0},
    {"max_running", API_F_INT, false, offsetof(struct cproject, max_running), 0, INT64_MAX, NULL, 0,
     0},
    API_FIELD_END,
};

struct cprojects {
	struct api_objlist projects;
};

static const struct api_field cprojects_fields[] = {
    {"projects", API_F_OBJLIST, true, offsetof(struct cprojects, projects), 0, 100000,
     cproject_fields, sizeof(struct cproject), 0},
    API_FIELD_END,
};

/* "a,b" as key: ["a", "b"] (nothing for NULL, [] for ""). */
static void csv_array(struct api_jw *w, const char *key, const char *csv)
{
	if (!csv)
		return;
	api_jw_key(w, key);
	api_jw_arr(w);
	while (*csv) {
		size_t len = strcspn(csv, ",");

		if (len)
			api_jw_strn(w, csv, len);
		csv += len;
		csv += *csv == ',';
	}
	api_jw_end(w);
}

static void project_body(const char *name, const struct cli_project_opts *o, struct kiln_buf *b)
{
	struct api_jw w;

	api_jw_init(&w, b);
	api_jw_obj(&w);
	if (name)
		api_jw_kstr(&w, "name", name);
	if (o->public_read || o->private_read)
		api_jw_kbool(&w, "public_read", o->public_read);
	if (o->max_running >= 0)
		api_jw_kint(&w, "max_running", o->max_running);
	if (o->arch_caps)
		api_jw_kstr(&w, "arch_caps", o->arch_caps);
	if (name && o->days > 0)
		api_jw_kint(&w, "key_days", o->days);
	csv_array(&w, "repositories", o->repositories);
	csv_array(&w, "roots", o->roots);
	api_jw_end(&w);
}

static kiln_rc project_list(const struct cli_client *c, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct cprojects ps = {0};
	struct conn k = {0};
	size_t i;
	kiln_rc rc;

	rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, "GET", "/api/v1/projects", NULL, "projects", err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc)
		rc = reply_decode(&k, cprojects_fields, &ps, &a, err);
	if (!rc && !c->json)
		out_printf(c, "%-24s %-7s %12s  %s\n", "NAME", "PUBLIC", "MAX RUNNING",
		           "ARCH CAPS");
	for (i = 0; !rc && !c->json && i < ps.projects.n; i++) {
		const struct cproject *p = (const struct cproject *)ps.projects.v + i;

		out_printf(c, "%-24s %-7s %12lld  %s\n", p->name, p->public_read ? "yes" : "no",
		           (long long)p->max_running,
		           p->arch_caps && *p->arch_caps ? p->arch_caps : "-");
	}
	conn_close(&k);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc cli_client_project(const struct cli_client *c, const char *op, const char *name,
                           const struct cli_project_opts *o, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_LINE);
	kiln_rc rc;

	if (!strcmp(op, "list"))
		return project_list(c, err);
	kiln_buf_addstr(&path, "/api/v1/projects");
	if (strcmp(op, "create")) {
		kiln_buf_addch(&path, '/');
		api_url_escape(&path, name);
	}
	rc = kiln_buf_finish(&path, err);
	if (!rc && !strcmp(op, "create")) {
		project_body(name, o, &body);
		rc = get_print(c, "POST", path.ptr, &body, err);
	} else if (!rc && !strcmp(op, "set")) {
		project_body(NULL, o, &body);
		rc = get_print(c, "PUT", path.ptr, &body, err);
	} else if (!rc && !strcmp(op, "show"))
		rc = get_print(c, "GET", path.ptr, NULL, err);
	else if (!rc && !strcmp(op, "delete"))
		rc = get_print(c, "DELETE", path.ptr, NULL, err);
	else if (!rc && !strcmp(op, "key")) {
		kiln_buf_addstr(&path, "/key");
		rc = kiln_buf_finish(&path, err) ? err->code
		                                 : get_print(c, "GET", path.ptr, NULL, err);
	} else if (!rc && !strcmp(op, "key-extend")) {
		kiln_buf_addstr(&path, "/key/extend");
		if (o->days > 0)
			kiln_buf_addf(&body, "{\"days\":%lld}", (long long)o->days);
		else
			kiln_buf_addstr(&body, "{}");
		rc = kiln_buf_finish(&path, err) ? err->code
		                                 : get_print(c, "POST", path.ptr, &body, err);
	} else if (!rc)
		rc = kiln_err_set(err, KILN_EINVAL, "unknown project operation '%s'", op);
	kiln_buf_release(&path);
	kiln_buf_release(&body);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Repositories */

struct crepo_pkg {
	const char *nevra, *sha256;
	int64_t size, job_id;
};

#define RPF(n, t, f)                                                                               \
	{                                                                                          \
		n, t, false, offsetof(struct crepo_pkg, f), 0, INT64_MAX, NULL, 0, 0               \
	}

static const struct api_field crepo_pkg_fields[] = {
    RPF("nevra", API_F_STR, nevra),
    RPF("sha256", API_F_STR, sha256),
    RPF("size", API_F_INT, size),
    RPF("job_id", API_F_INT, job_id),
    API_FIELD_END,
};

struct crepo {
	const char *name, *url, *repo_file, *project;
	struct api_strlist arches;
	int64_t package_count, last_publish_ms, revision, removed;
	struct api_objlist packages;
};

#define RF(n, t, f)                                                                                \
	{                                                                                          \
		n, t, false, offsetof(struct crepo, f), 0, INT64_MAX, NULL, 0, 0                   \
	}

static const struct api_field crepo_fields[] = {
    RF("name", API_F_STR, name),
    RF("repository", API_F_STR, name), /* remove-package's reply */
    RF("url", API_F_STR, url),
    RF("repo_file", API_F_STR, repo_file),
    RF("project", API_F_STR, project),
    {"arches", API_F_STRLIST, false, offsetof(struct crepo, arches), 0, 1000, NULL, 0, 0},
    RF("package_count", API_F_INT, package_count),
    RF("last_publish_ms", API_F_INT, last_publish_ms),
    RF("revision", API_F_INT, revision),
    RF("removed", API_F_INT, removed),
    {"packages", API_F_OBJLIST, false, offsetof(struct crepo, packages), 0, 1000000,
     crepo_pkg_fields, sizeof(struct crepo_pkg), 0},
    API_FIELD_END,
};

struct crepos {
	struct api_objlist repositories;
};

static const struct api_field crepos_fields[] = {
    {"repositories", API_F_OBJLIST, true, offsetof(struct crepos, repositories), 0, 100000,
     crepo_fields, sizeof(struct crepo), 0},
    API_FIELD_END,
};

/* "2026-12-04 10:40:16 UTC", or "never" before the first publish. */
static const char *publish_time(int64_t ms, char *buf, size_t size)
{
	if (ms <= 0)
		return "never";
	return util_clock_format_utc(ms / 1000, "%Y-%m-%d %H:%M:%S UTC", buf, size);
}

static void repo_arches(const struct cli_client *c, const struct crepo *r)
{
	size_t i;

	for (i = 0; i < r->arches.n; i++)
		out_printf(c, "%s%s", i ? "," : "", r->arches.v[i]);
	if (!r->arches.n)
		out_printf(c, "-");
}

static void repo_print_list(const struct cli_client *c, const struct crepos *rs)
{
	char t[64];
	size_t i;

	out_printf(c, "%-24s %8s %12s  %-23s  %-16s %s\n", "NAME", "PACKAGES", "REVISION",
	           "LAST PUBLISH", "PROJECT", "ARCHES");
	for (i = 0; i < rs->repositories.n; i++) {
		const struct crepo *r = (const struct crepo *)rs->repositories.v + i;

		out_printf(c, "%-24s %8lld %12lld  %-23s  %-16s ", r->name ? r->name : "",
		           (long long)r->package_count, (long long)r->revision,
		           publish_time(r->last_publish_ms, t, sizeof(t)),
		           r->project && *r->project ? r->project : "-");
		repo_arches(c, r);
		out_printf(c, "\n");
	}
}

static void repo_print_one(const struct cli_client *c, const struct crepo *r)
{
	char t[64];
	size_t i;

	out_printf(c, "repository: %s\npackages: %lld\nrevision: %lld\nlast publish: %s\narches: ",
	           r->name ? r->name : "", (long long)r->package_count, (long long)r->revision,
	           publish_time(r->last_publish_ms, t, sizeof(t)));
	repo_arches(c, r);
	out_printf(c, "\nproject: %s", r->project ? r->project : "");
	out_printf(c, "\nurl: %s\n", r->url ? r->url : "");
	if (r->repo_file)
		out_printf(c, ".repo file: %s\n", r->repo_file);
	if (r->packages.n)
		out_printf(c, "\n%-50s %8s %12s  %s\n", "PACKAGE", "JOB", "SIZE", "SHA256");
	for (i = 0; i < r->packages.n; i++) {
		const struct crepo_pkg *p = (const struct crepo_pkg *)r->packages.v + i;

		out_printf(c, "%-50s %8lld %12lld  %.16s\n", p->nevra ? p->nevra : "",
		           (long long)p->job_id, (long long)p->size, p->sha256 ? p->sha256 : "");
	}
}

kiln_rc cli_client_repo(const struct cli_client *c, const char *op, const char *name,
                        const char *pkg, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_URL);
	const char *method = "GET";
	struct crepos rs = {0};
	struct crepo r = {0};
	struct conn k = {0};
	kiln_rc rc;

	kiln_buf_addstr(&path, "/api/v1/repos");
	if (name) {
		kiln_buf_addch(&path, '/');
		api_url_escape(&path, name);
	}
	if (!strcmp(op, "regenerate")) {
		method = "POST";
		kiln_buf_addstr(&path, "/regenerate?wait=1");
	} else if (!strcmp(op, "remove-package")) {
		method = "DELETE";
		kiln_buf_addstr(&path, "/packages/");
		api_url_escape(&path, pkg);
		kiln_buf_addstr(&path, "?wait=1");
	}
	rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = conn_open(c, &k, err);
	if (!rc)
		rc = call(&k, method, path.ptr, NULL, path.ptr, err);
	if (!rc && c->json)
		out_write(c, k.r.body.ptr, k.r.body.len);
	else if (!rc && !name)
		rc = reply_decode(&k, crepos_fields, &rs, &a, err);
	else if (!rc)
		rc = reply_decode(&k, crepo_fields, &r, &a, err);
	if (!rc && !c->json && !name)
		repo_print_list(c, &rs);
	else if (!rc && !c->json && !strcmp(op, "remove-package"))
		out_printf(c, "removed %lld package%s from %s\n", (long long)r.removed,
		           r.removed == 1 ? "" : "s", r.name ? r.name : name);
	else if (!rc && !c->json)
		repo_print_one(c, &r);
	conn_close(&k);
	kiln_buf_release(&path);
	kiln_arena_release(&a);
	return rc;
}
