/*
 * reproduce.c - reproducibility reruns (issue 12): a job asked for N reruns gets, once it
 * succeeds, N rerun jobs of the same manifest with declared variations, placed away from
 * the original's worker when another can take them (the store's lease pick). When a rerun
 * ends, each of its packages is compared with the original's unsigned bytes (the workers'
 * uploads: the scheduler signs copies), then, when the bytes differ, with pack_diff_files()
 * which ignores the signature header: identical apart from it is reproducible, any other
 * difference is named (tag, file, attribute, text diff) in the stored report. diffoscope
 * runs afterwards, on a thread of its own, only on differing packages, with a time limit
 * and a size cap: the verdict never waits for it.
 */
#include "util/util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/worker.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define DIFF_JSON_MAX (4 * KILN_MIB)
#define DIFF_TEXT_MAX (1 * KILN_MIB)
#define DIFFOSCOPE_TIMEOUT_MS 60000
#define DIFFOSCOPE_FILE_MAX (256 * KILN_MIB)
#define DIFFOSCOPE_OUT_MAX (512 * 1024)
#define RERUNS_MAX 20

/* "time build_path ..." for a mask. */
static void vary_words(unsigned vary, struct kiln_buf *out)
{
	unsigned bit;

	for (bit = 1; bit && bit <= WORKER_VARY_ALL; bit <<= 1)
		if ((vary & bit) && worker_vary_name(bit))
			kiln_buf_addf(out, "%s%s", out->len ? " " : "", worker_vary_name(bit));
}

kiln_rc scheduler_vary_check(const struct api_strlist *l, struct kiln_buf *out,
                             struct kiln_err *err)
{
	unsigned vary = 0, bit;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (worker_vary_parse(l->v[i], &bit, err)) {
			kiln_err_wrap(err, "field 'variations[%zu]'", i);
			return KILN_EINVAL;
		}
		vary |= bit;
	}
	vary_words(vary, out);
	return kiln_buf_finish(out, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Making reruns */

/* The rerun's request: the original's with "rerun" and "variations" added. */
static kiln_rc rerun_request(const char *req, int64_t n, const char *words, struct kiln_buf *out,
                             struct kiln_err *err)
{
	size_t len = strlen(req);
	const char *p = words;

	while (len && req[len - 1] != '}')
		len--;
	if (len < 2)
		return kiln_err_set(err, KILN_EFORMAT, "the stored request is not an object");
	kiln_buf_add(out, req, len - 1);
	kiln_buf_addf(out, ",\"rerun\":%lld,\"variations\":[", (long long)n);
	while (*p) {
		size_t w = strcspn(p, " ");

		kiln_buf_addf(out, "%s\"%.*s\"", p == words ? "" : ",", (int)w, p);
		p += w;
		p += *p == ' ';
	}
	kiln_buf_addstr(out, "]}");
	return kiln_buf_finish(out, err);
}

/* The worker of the original's successful attempt: the row of a job that succeeded keeps
 * its last lease's worker (only a requeue clears it), so no read unless that is empty. */
static const char *original_worker(struct scheduler *s, const struct scheduler_job *j,
                                   struct kiln_arena *a)
{
	struct scheduler_attempt *v = NULL;
	size_t n = 0, i;

	if (j->state == SCHED_SUCCEEDED && j->worker && *j->worker)
		return j->worker;
	if (s->store->ops->attempts_list(s->store, j->id, a, &v, &n, NULL))
		return j->worker;
	for (i = n; i-- > 0;)
		if (!strcmp(v[i].state, "succeeded"))
			return v[i].worker;
	return j->worker;
}

/* The reruns j asks for that do not exist yet. */
static kiln_rc reruns_spawn(struct scheduler *s, const struct scheduler_job *j,
                            struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf req = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	struct kiln_buf words = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct scheduler_rerun *v = NULL;
	size_t n = 0, i;
	int64_t have = 0, k, id;
	const char *worker;
	kiln_rc rc;

	rc = s->store->ops->reruns_list(s->store, j->id, &a, &v, &n, err);
	for (i = 0; i < n; i++)
		have = v[i].n > have ? v[i].n : have;
	if (rc || have >= j->reruns)
		goto out;
	worker = original_worker(s, j, &a);
	if (*j->variations)
		kiln_buf_addstr(&words, j->variations);
	else
		vary_words(WORKER_VARY_ALL, &words);
	rc = kiln_buf_finish(&words, err);
	for (k = have + 1; !rc && k <= j->reruns; k++) {
		struct scheduler_job r = *j;

		kiln_buf_reset(&req);
		rc = rerun_request(j->request, k, words.ptr, &req, err);
		if (rc)
			break;
		r.request = req.ptr;
		r.sign_key = ""; /* reruns are compared, never published */
		r.idem_key = "";
		r.created_ms = util_clock_wall_ms();
		r.reruns = 0;
		r.rerun_of = j->id;
		r.rerun_n = k;
		r.avoid_worker = worker;
		r.variations = words.ptr;
		rc = s->store->ops->job_insert(s->store, &r, &id, err);
		if (!rc)
			kiln_log(KILN_LOG_INFO, "job %lld: rerun %lld is job %lld (not on %s)",
			         (long long)j->id, (long long)k, (long long)id, worker);
	}
	scheduler_queue_changed(s);
out:
	kiln_buf_release(&req);
	kiln_buf_release(&words);
	kiln_arena_release(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Comparing a rerun with its original */

static bool is_package(const struct scheduler_artifact *a)
{
	return (!strcmp(a->kind, "binary") || !strcmp(a->kind, "source")) &&
	       kiln_str_ends(kiln_str_from(a->name), ".rpm");
}

struct compare {
	struct scheduler *s;
	struct kiln_arena *a;
	struct scheduler_rerun_artifact *v;
	size_t n, cap;
};

static struct scheduler_rerun_artifact *compare_add(struct compare *c, const char *name)
{
	struct scheduler_rerun_artifact *t;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		t = kiln_arena_array(c->a, c->cap, sizeof(*t));
		if (!t)
			return NULL;
		if (c->n)
			memcpy(t, c->v, c->n * sizeof(*t));
		c->v = t;
	}
	t = &c->v[c->n++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->original_sha256 = t->rerun_sha256 = "";
	t->diff = t->text = t->diffoscope_state = "";
	return t;
}

/* The two packages differ in bytes: what pack_diff_files() says about them. */
static void compare_pair(struct compare *c, struct scheduler_rerun_artifact *t)
{
	struct scheduler_compare_opts o;
	struct scheduler_compare r;

	scheduler_compare_opts_init(&o);
	o.old_label = kiln_arena_printf(c->a, "original/%s", t->name);
	o.new_label = kiln_arena_printf(c->a, "rerun/%s", t->name);
	o.json_max = DIFF_JSON_MAX;
	o.text_max = DIFF_TEXT_MAX;
	scheduler_compare_blobs(c->s, t->original_sha256, t->rerun_sha256, &o, c->a, &r);
	if (!r.compared) {
		t->verdict = "unknown";
		t->text = kiln_arena_printf(c->a, "cannot compare: %s", r.error ? r.error : "");
	} else if (!r.nitems) {
		/* equal once the signature headers are set aside */
		t->verdict = "reproducible";
		t->text = "identical apart from the signature header";
	} else {
		t->verdict = "differs";
		t->diffoscope_state = "pending";
		t->diff = r.json;
		t->text =
		    r.text ? r.text : "the differences are too large to show (see diffoscope)";
	}
	if (!t->text)
		t->text = "";
	if (!t->diff)
		t->diff = "";
}

/* Every package of the original against its namesake of the rerun, and the rerun's own
 * extra ones. *verdict gets the rerun's. */
static kiln_rc compare_run(struct compare *c, const struct scheduler_job *orig,
                           const struct scheduler_job *rr, const char **verdict,
                           struct kiln_err *err)
{
	struct scheduler_artifact *ov = NULL, *rv = NULL;
	struct scheduler_rerun_artifact *t;
	bool ok = rr->state == SCHED_SUCCEEDED;
	size_t on = 0, rn = 0, i, k;
	const char *verdicts[1024];
	size_t nv = 0;
	kiln_rc rc;

	rc = c->s->store->ops->artifacts_list(c->s->store, orig->id, orig->attempts, c->a, &ov, &on,
	                                      err);
	if (!rc && ok)
		rc = c->s->store->ops->artifacts_list(c->s->store, rr->id, rr->attempts, c->a, &rv,
		                                      &rn, err);
	for (i = 0; !rc && i < on; i++) {
		if (!is_package(&ov[i]))
			continue;
		t = compare_add(c, ov[i].name);
		if (!t)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		t->original_sha256 = ov[i].sha256;
		for (k = 0; k < rn && strcmp(rv[k].name, ov[i].name); k++)
			;
		if (!ok) {
			t->verdict = "rerun_failed";
			t->text = kiln_arena_printf(c->a, "the rerun %s: %s",
			                            scheduler_state_name(rr->state), rr->message);
		} else if (k == rn) {
			t->verdict = "differs";
			t->text = "not written by the rerun";
		} else {
			t->rerun_sha256 = rv[k].sha256;
			if (!strcmp(ov[i].sha256, rv[k].sha256))
				t->verdict = "reproducible";
			else
				compare_pair(c, t);
		}
	}
	for (k = 0; !rc && k < rn; k++) {
		if (!is_package(&rv[k]))
			continue;
		for (i = 0; i < on && strcmp(rv[k].name, ov[i].name); i++)
			;
		if (i < on)
			continue;
		t = compare_add(c, rv[k].name);
		if (!t)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		t->rerun_sha256 = rv[k].sha256;
		t->verdict = "differs";
		t->text = "written only by the rerun";
	}
	if (rc)
		return rc;
	for (i = 0; i < c->n && nv < KILN_ARRAY_SIZE(verdicts); i++)
		verdicts[nv++] = c->v[i].verdict;
	/* a rerun with no packages to compare proves nothing */
	*verdict = !ok ? "rerun_failed" : nv ? scheduler_verdict_rollup(verdicts, nv) : "unknown";
	return KILN_OK;
}

static kiln_rc rerun_ended(struct scheduler *s, const struct scheduler_job *rr,
                           struct kiln_arena *a, struct kiln_err *err)
{
	struct compare c = {.s = s, .a = a};
	struct scheduler_job orig = {0};
	struct scheduler_rerun *v = NULL;
	const char *verdict = "unknown", *rollup = "";
	size_t n = 0, i;
	kiln_rc rc;

	rc = s->store->ops->reruns_list(s->store, rr->rerun_of, a, &v, &n, err);
	for (i = 0; !rc && i < n && v[i].n != rr->rerun_n; i++)
		;
	if (rc || i == n || strcmp(v[i].verdict, "pending"))
		return rc; /* already compared */
	rc = s->store->ops->job_get(s->store, rr->rerun_of, a, &orig, err);
	if (!rc)
		rc = compare_run(&c, &orig, rr, &verdict, err);
	if (!rc)
		rc = s->store->ops->rerun_record(s->store, orig.id, rr->rerun_n, verdict, c.v, c.n,
		                                 util_clock_wall_ms(), scheduler_verdict_rollup,
		                                 &rollup, err);
	if (!rc && !strcmp(rollup, "reproducible")) {
		/* every rerun reproduced the build: a signed attestation says so */
		v = NULL, n = 0;
		rc = s->store->ops->reruns_list(s->store, orig.id, a, &v, &n, err);
		if (!rc)
			rc =
			    scheduler_rerun_attestation_make(s, &orig, rr->avoid_worker, v, n, err);
	}
	if (!rc)
		kiln_log(KILN_LOG_INFO,
		         "job %lld: rerun %lld (job %lld on %s, original on %s): %s;"
		         " the job is %s",
		         (long long)orig.id, (long long)rr->rerun_n, (long long)rr->id, rr->worker,
		         rr->avoid_worker, verdict, rollup);
	return rc;
}

static bool reruns_exist(struct scheduler *s, const struct scheduler_job *j, struct kiln_arena *a)
{
	struct scheduler_rerun *v = NULL;
	size_t n = 0;

	return s->store->ops->reruns_list(s->store, j->id, a, &v, &n, NULL) || n > 0;
}

void scheduler_repro_job_ended(struct scheduler *s, const struct scheduler_ended *e)
{
	const struct scheduler_job *j = e->job;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc = KILN_OK;

	if (j->rerun_of)
		rc = rerun_ended(s, j, &a, &err);
	else if (j->state != SCHED_SUCCEEDED && !strcmp(j->repro_verdict, "pending") &&
	         !reruns_exist(s, j, &a))
		/* the build itself failed: nothing was rerun, nothing is pending */
		rc = s->store->ops->repro_verdict_set(s->store, j->id, "", &err);
	else if (j->state == SCHED_SUCCEEDED &&
	         !(rc = scheduler_provenance_make(s, e, original_worker(s, j, &a), &err)) &&
	         j->reruns > 0)
		rc = reruns_spawn(s, j, &err);
	if (rc) {
		kiln_err_wrap(&err, "job %lld: reproducibility", (long long)j->id);
		kiln_log_err(KILN_LOG_WARN, &err);
	}
	kiln_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* diffoscope, off the request path */

static void dfs_child(const char *a, const char *b, int out)
{
	if (setpgid(0, 0) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
		_exit(126);
	(void)close_range(3, ~0U, 0);
	signal(SIGPIPE, SIG_DFL);
	execlp("diffoscope", "diffoscope", "--no-progress", "--text", "-", a, b, (char *)NULL);
	_exit(127);
}

/* Run diffoscope on a and b: *state done, timeout, missing or failed; output capped. */
static void dfs_run(struct scheduler *s, const char *a, const char *b, struct kiln_buf *out,
                    const char **state)
{
	int64_t deadline = util_clock_mono_ns() / 1000000 + DIFFOSCOPE_TIMEOUT_MS;
	char buf[16384];
	int p[2], status = 0;
	bool killed = false;
	pid_t pid;

	*state = "failed";
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0)
		dfs_child(a, b, p[1]);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return;
	}
	for (;;) {
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		int64_t left = deadline - util_clock_mono_ns() / 1000000;
		ssize_t n;

		if (left <= 0 || s->dfs_stop) {
			killed = true;
			break;
		}
		if (poll(&pfd, 1, left < 250 ? (int)left : 250) <= 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
		if (n > 0 && out->len < DIFFOSCOPE_OUT_MAX)
			kiln_buf_add(out, buf, (size_t)n);
	}
	if (killed) {
		/* pid is our unreaped child leading its group: neither can be reused */
		(void)kill(-pid, SIGKILL);
		(void)kill(pid, SIGKILL);
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (killed)
		*state = "timeout";
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		*state = "missing";
	else if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		*state = "done";
	if (out->len >= DIFFOSCOPE_OUT_MAX)
		kiln_buf_addstr(out, "\n[diffoscope output cut at 512 KiB]\n");
}

static bool dfs_too_big(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 || (uint64_t)st.st_size > (uint64_t)DIFFOSCOPE_FILE_MAX;
}

/* One waiting artifact; false when there was none. */
static bool dfs_one(struct scheduler *s)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf pa = KILN_BUF_INIT(KILN_LIMIT_PATH), pb = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf out = KILN_BUF_INIT(DIFFOSCOPE_OUT_MAX + 4096);
	struct scheduler_rerun_artifact t;
	const char *state = "skipped";
	kiln_rc rc;

	rc = s->store->ops->diffoscope_next(s->store, &a, &t, &err);
	if (rc)
		goto out;
	scheduler_blob_path(s, t.original_sha256, &pa);
	scheduler_blob_path(s, t.rerun_sha256, &pb);
	if (pa.err || pb.err || dfs_too_big(pa.ptr) || dfs_too_big(pb.ptr))
		kiln_buf_addstr(&out, "diffoscope not run: a package is larger than 256 MiB");
	else
		dfs_run(s, pa.ptr, pb.ptr, &out, &state);
	if (!strcmp(state, "timeout"))
		kiln_buf_addstr(&out, "\n[diffoscope stopped after 60 s]\n");
	kiln_err_clear(&err);
	rc = kiln_buf_finish(&out, &err);
	if (!rc)
		rc = s->store->ops->diffoscope_set(s->store, t.job_id, t.n, t.name, state,
		                                   strcmp(state, "missing") ? out.ptr : NULL, &err);
	if (rc)
		kiln_log_err(KILN_LOG_WARN, &err);
	rc = KILN_OK;
out:
	kiln_buf_release(&pa);
	kiln_buf_release(&pb);
	kiln_buf_release(&out);
	kiln_arena_release(&a);
	return rc == KILN_OK;
}

static void *dfs_main(void *arg)
{
	struct scheduler *s = arg;

	while (!s->dfs_stop)
		if (!dfs_one(s))
			(void)poll(NULL, 0, 300);
	return NULL;
}

kiln_rc scheduler_diffoscope_start(struct scheduler *s, struct kiln_err *err)
{
	s->dfs_stop = 0;
	if (pthread_create(&s->dfs_thread, NULL, dfs_main, s))
		return kiln_err_set(err, KILN_EIO, "cannot start the diffoscope thread");
	s->dfs_running = true;
	return KILN_OK;
}

void scheduler_diffoscope_stop(struct scheduler *s)
{
	if (!s->dfs_running)
		return;
	s->dfs_stop = 1;
	pthread_join(s->dfs_thread, NULL);
	s->dfs_running = false;
}

/* ---------------------------------------------------------------------------------------- */
/* REST */

struct reproduce_body {
	int64_t count;
	struct api_strlist variations;
};

static const struct api_field reproduce_fields[] = {
    {"count", API_F_INT, false, offsetof(struct reproduce_body, count), 1, 10, NULL, 0, 0},
    {"variations", API_F_STRLIST, false, offsetof(struct reproduce_body, variations), 0, 16, NULL,
     0, 0},
    API_FIELD_END,
};

static void report_json(struct api_jw *w, const struct scheduler_job *j,
                        const struct scheduler_rerun *rv, size_t rn,
                        const struct scheduler_rerun_artifact *av, size_t an)
{
	size_t i, k;

	api_jw_obj(w);
	api_jw_kint(w, "job", j->id);
	api_jw_kstr(w, "verdict", *j->repro_verdict ? j->repro_verdict : "pending");
	api_jw_key(w, "reruns");
	api_jw_arr(w);
	for (i = 0; i < rn; i++) {
		const char *p = rv[i].variations;

		api_jw_obj(w);
		api_jw_kint(w, "n", rv[i].n);
		api_jw_kint(w, "job", rv[i].rerun_job);
		api_jw_kstr(w, "state", scheduler_state_name(rv[i].state));
		api_jw_key(w, "worker");
		api_jw_str(w, *rv[i].worker ? rv[i].worker : NULL);
		api_jw_kstr(w, "original_worker", rv[i].original_worker);
		api_jw_key(w, "variations");
		api_jw_arr(w);
		while (*p) {
			size_t len = strcspn(p, " ");

			api_jw_strn(w, p, len);
			p += len;
			p += *p == ' ';
		}
		api_jw_end(w);
		api_jw_kstr(w, "verdict", rv[i].verdict);
		api_jw_key(w, "artifacts");
		api_jw_arr(w);
		for (k = 0; k < an; k++) {
			if (av[k].n != rv[i].n)
				continue;
			api_jw_obj(w);
			api_jw_kstr(w, "name", av[k].name);
			api_jw_key(w, "original_sha256");
			api_jw_str(w, *av[k].original_sha256 ? av[k].original_sha256 : NULL);
			api_jw_key(w, "rerun_sha256");
			api_jw_str(w, *av[k].rerun_sha256 ? av[k].rerun_sha256 : NULL);
			api_jw_kstr(w, "verdict", av[k].verdict);
			api_jw_key(w, "diff");
			if (*av[k].diff)
				api_jw_raw(w, av[k].diff);
			else
				api_jw_null(w);
			api_jw_key(w, "diffoscope");
			api_jw_str(w, av[k].diffoscope);
			api_jw_end(w);
		}
		api_jw_end(w);
		api_jw_end(w);
	}
	api_jw_end(w);
	api_jw_end(w);
}

/* Each line of text indented by pad. */
static void indent(struct kiln_buf *o, const char *text, const char *pad)
{
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");

		kiln_buf_addf(o, "%s%.*s\n", pad, (int)len, p);
		p += len;
		p += *p == '\n';
	}
}

static void report_text(struct kiln_buf *o, const struct scheduler_job *j,
                        const struct scheduler_rerun *rv, size_t rn,
                        const struct scheduler_rerun_artifact *av, size_t an)
{
	size_t i, k;

	kiln_buf_addf(o, "job %lld: %s\n", (long long)j->id,
	              *j->repro_verdict ? j->repro_verdict : "pending");
	for (i = 0; i < rn; i++) {
		kiln_buf_addf(o, "\nrerun %lld: job %lld (%s) on %s, original on %s: %s\n",
		              (long long)rv[i].n, (long long)rv[i].rerun_job,
		              scheduler_state_name(rv[i].state), *rv[i].worker ? rv[i].worker : "-",
		              rv[i].original_worker, rv[i].verdict);
		kiln_buf_addf(o, "  variations: %s\n", rv[i].variations);
		for (k = 0; k < an; k++) {
			if (av[k].n != rv[i].n)
				continue;
			kiln_buf_addf(o, "  %s: %s\n", av[k].name, av[k].verdict);
			if (*av[k].text)
				indent(o, av[k].text, "    ");
			if (av[k].diffoscope && *av[k].diffoscope) {
				kiln_buf_addstr(o, "    diffoscope:\n");
				indent(o, av[k].diffoscope, "      ");
			}
		}
	}
}

void scheduler_h_reproducibility(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	const char *fmt = api_req_query(req, "format");
	struct scheduler_rerun_artifact *av = NULL;
	struct scheduler_rerun *rv = NULL;
	struct scheduler_job j = {0};
	size_t rn = 0, an = 0;
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc && fmt && strcmp(fmt, "json") && strcmp(fmt, "text"))
		rc = kiln_err_set(&err, KILN_EINVAL, "query argument 'format': json or text");
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	if (!rc)
		rc = s->store->ops->reruns_list(s->store, id, a, &rv, &rn, &err);
	if (!rc && !rn)
		rc = kiln_err_set(&err, KILN_ENOTFOUND, "job %lld has no reruns%s", (long long)id,
		                  j.reruns ? " yet (they start when it succeeds)" : "");
	if (!rc)
		rc = s->store->ops->rerun_artifacts(s->store, id, a, &av, &an, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (fmt && !strcmp(fmt, "text")) {
		report_text(&resp->body, &j, rv, rn, av, an);
		resp->content_type = "text/plain; charset=utf-8";
		if (resp->body.err)
			api_resp_error(resp, 500, "internal", "response too large");
		return;
	}
	api_jw_init(&w, &resp->body);
	report_json(&w, &j, rv, rn, av, an);
	scheduler_reply_json(resp, 200);
}

void scheduler_h_reproduce(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf words = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct reproduce_body b = {0};
	struct scheduler_job j = {0};
	struct api_jw w;
	const char *body;
	size_t len;
	int64_t id;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc && len)
		rc = api_json_decode(body, len, reproduce_fields, API_DECODE_STRICT, &b, a, &err);
	if (!rc)
		rc = scheduler_vary_check(&b.variations, &words, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	if (!rc && j.rerun_of)
		rc = kiln_err_set(&err, KILN_ECONFLICT, "job %lld is itself rerun %lld of job %lld",
		                  (long long)id, (long long)j.rerun_n, (long long)j.rerun_of);
	else if (!rc && (j.state == SCHED_FAILED || j.state == SCHED_CANCELLED))
		rc = kiln_err_set(&err, KILN_ECONFLICT,
		                  "job %lld is %s: only a build that succeeds (or still may) can "
		                  "be rerun",
		                  (long long)id, scheduler_state_name(j.state));
	else if (!rc && j.reruns + (b.count ? b.count : 1) > RERUNS_MAX)
		rc = kiln_err_set(&err, KILN_EINVAL,
		                  "field 'count': job %lld has %lld reruns, at "
		                  "most %d in all",
		                  (long long)id, (long long)j.reruns, RERUNS_MAX);
	if (!rc)
		rc =
		    s->store->ops->reruns_add(s->store, id, b.count ? b.count : 1, words.ptr, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	/* a finished build gets its reruns now; a running one when it succeeds */
	if (!rc && j.state == SCHED_SUCCEEDED)
		rc = reruns_spawn(s, &j, &err);
	kiln_buf_release(&words);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "job", id);
	api_jw_kint(&w, "reruns", j.reruns);
	api_jw_kstr(&w, "verdict", *j.repro_verdict ? j.repro_verdict : "pending");
	api_jw_end(&w);
	scheduler_reply_json(resp, 202);
}
