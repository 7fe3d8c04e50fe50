/*
 * rebuild.c - rebuilder mode (issue 12, as rebuilderd): POST /api/v1/rebuilds takes a
 * source package and the binary packages published from it (uploaded blobs or URLs the
 * scheduler fetches), rebuilds the SRPM as a job with the published packages' build time
 * as SOURCE_DATE_EPOCH and their build host as %_buildhost (what a .buildinfo would pin),
 * and reports per package whether payload and metadata match.
 *
 * Only the signature header is ignored always (pack_diff_files() never compares it).
 * BUILDTIME, BUILDHOST and COOKIE (rpm's "BUILDHOST BUILDTIME") are ignored only when the
 * original did not control them: BUILDTIME is controlled when it equals the newest
 * %changelog time (SOURCE_DATE_EPOCH from the changelog with
 * %use_source_date_epoch_as_buildtime, as Fedora builds); BUILDHOST when it is a fixed
 * %_buildhost ("reproducible", kiln's default, or "localhost") or the build time is
 * controlled. The report says which were ignored and why.
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "worker/worker.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define TAG_BUILDTIME 1006
#define TAG_BUILDHOST 1007
#define TAG_CHANGELOGTIME 1080
#define TAG_COOKIE 1094
#define REBUILD_RPMS_MAX 256
#define REPORT_MAX (8 * KILN_MIB)

struct rb_ref {
	const char *name, *sha256, *url;
};

struct rb_body {
	struct rb_ref srpm;
	bool has_srpm;
	struct api_objlist rpms; /* struct rb_ref */
	const char *arch;
	struct api_strlist tags;
	struct api_strmap defines;
	int64_t timeout, priority;
};

static const struct api_field rb_ref_fields[] = {
    {"name", API_F_STR, false, offsetof(struct rb_ref, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, false, offsetof(struct rb_ref, sha256), 0, 64, NULL, 0, 0},
    {"url", API_F_STR, false, offsetof(struct rb_ref, url), 0, 4096, NULL, 0, 0},
    API_FIELD_END,
};

#define RB(n, t, r, f, mn, mx)                                                                     \
	{                                                                                          \
		n, t, r, offsetof(struct rb_body, f), mn, mx, NULL, 0, 0                           \
	}

static const struct api_field rb_fields[] = {
    {"srpm", API_F_OBJ, true, offsetof(struct rb_body, srpm), 0, 0, rb_ref_fields, 0,
     offsetof(struct rb_body, has_srpm)},
    {"rpms", API_F_OBJLIST, true, offsetof(struct rb_body, rpms), 1, REBUILD_RPMS_MAX,
     rb_ref_fields, sizeof(struct rb_ref), 0},
    RB("arch", API_F_STR, false, arch, 0, 64),
    RB("tags", API_F_STRLIST, false, tags, 0, 32),
    RB("defines", API_F_STRMAP, false, defines, 0, 256),
    RB("timeout", API_F_INT, false, timeout, 1, 7 * 86400),
    RB("priority", API_F_INT, false, priority, -1000, 1000),
    API_FIELD_END,
};

/* ---------------------------------------------------------------------------------------- */
/* Inputs */

/* A URL's last path segment, without query or fragment, as a file name (in a). */
static const char *url_name(const char *url, struct kiln_arena *a)
{
	size_t end = strcspn(url, "?#"), start = end;

	while (start && url[start - 1] != '/')
		start--;
	return kiln_arena_printf(a, "%.*s", (int)(end - start), url + start);
}

/* Make ref a blob: fetch its URL into the blob store, or check the uploaded one. */
static kiln_rc ref_resolve(struct scheduler *s, const char *field, struct rb_ref *ref,
                           struct kiln_arena *a, struct kiln_err *err)
{
	struct kiln_buf tmp = KILN_BUF_INIT(KILN_LIMIT_PATH),
	                cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_fetch_opts fo = {0};
	struct sources *src = NULL;
	struct sources_result res;
	bool made = false;
	char *sha;
	kiln_rc rc = KILN_OK;

	if (!!ref->url == !!ref->sha256)
		return kiln_err_set(err, KILN_EINVAL, "field '%s': give sha256 (uploaded) or url",
		                    field);
	if (!ref->name && ref->url)
		ref->name = url_name(ref->url, a);
	if (!ref->name || api_name_check(ref->name, strlen(ref->name), err)) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL, "field '%s.name': not a file name", field);
	}
	if (ref->sha256) {
		if (!api_sha256_valid(ref->sha256) || !scheduler_blob_exists(s, ref->sha256))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field '%s.sha256': %s was not uploaded (PUT "
			                    "/api/v1/blobs/SHA256 first)",
			                    field, ref->sha256);
		return KILN_OK;
	}
	kiln_buf_addf(&tmp, "%s/fetch-XXXXXX", s->tmp_dir);
	kiln_buf_addf(&cache, "%s/fetch-cache", s->tmp_dir);
	rc = kiln_buf_finish(&tmp, err);
	if (!rc)
		rc = kiln_buf_finish(&cache, err);
	if (!rc && !mkdtemp(tmp.ptr))
		rc = kiln_err_sys(err, KILN_EIO, "cannot create %s", tmp.ptr);
	if (rc)
		goto out;
	made = true;
	kiln_buf_addf(&tmp, "/%s", ref->name);
	fo.cache_dir = cache.ptr;
	fo.max_size = (uint64_t)s->cfg->max_upload;
	fo.retries = 1;
	rc = kiln_buf_finish(&tmp, err);
	if (!rc)
		rc = sources_new(&fo, &src, err);
	if (!rc)
		rc = sources_fetch_url(src, ref->url, NULL, tmp.ptr, &res, err);
	if (!rc) {
		sha = kiln_arena_strdup(a, res.sha256);
		rc = sha ? scheduler_blob_adopt(s, tmp.ptr, sha, err)
		         : kiln_err_set(err, KILN_ENOMEM, "out of memory");
		ref->sha256 = sha;
	}
out:
	if (rc)
		kiln_err_wrap(err, "field '%s.url'", field);
	if (made) {
		util_path_dirname(tmp.ptr, &cache);
		if (util_rm_rf(cache.ptr, NULL))
			kiln_log(KILN_LOG_WARN, "cannot remove %s", cache.ptr);
	}
	sources_free(src);
	kiln_buf_release(&tmp);
	kiln_buf_release(&cache);
	return rc;
}

/* What a published package says about its build. */
struct rb_pub {
	const char *name, *sha256, *buildhost;
	int64_t buildtime, changelogtime;
};

static kiln_rc pub_read(struct scheduler *s, const struct rb_ref *ref, struct kiln_arena *a,
                        struct rb_pub *out, struct kiln_err *err)
{
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct pack_package pkg = {0};
	const struct pack_entry *cl;
	uint64_t bt = 0;
	kiln_rc rc;

	scheduler_blob_path(s, ref->sha256, &p);
	rc = kiln_buf_finish(&p, err);
	if (!rc)
		rc = pack_package_open(&pkg, p.ptr, NULL, err);
	if (rc) {
		/* the client's input, not the scheduler's trouble */
		kiln_err_wrap(err, "%s: not a readable package", ref->name);
		err->code = rc = rc == KILN_ENOMEM ? rc : KILN_EINVAL;
		goto out;
	}
	if (pkg.source) {
		rc = kiln_err_set(err, KILN_EINVAL, "%s is a source package, not a binary one",
		                  ref->name);
		goto out;
	}
	out->name = ref->name;
	out->sha256 = ref->sha256;
	(void)pack_header_get_number(&pkg.hdr, TAG_BUILDTIME, &bt);
	out->buildtime = (int64_t)bt;
	out->buildhost = kiln_arena_strdup(a, pack_header_get_string(&pkg.hdr, TAG_BUILDHOST)
	                                          ? pack_header_get_string(&pkg.hdr, TAG_BUILDHOST)
	                                          : "");
	cl = pack_header_get(&pkg.hdr, TAG_CHANGELOGTIME);
	out->changelogtime = cl && cl->count ? (int64_t)((const uint32_t *)cl->data)[0] : -1;
out:
	pack_package_release(&pkg);
	kiln_buf_release(&p);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Creating */

/* A source package this farm built from a root configuration is rebuilt on that root and
 * its pinned lock: the same toolchain, package for package. */
static kiln_rc rebuild_root(struct scheduler *s, struct kiln_arena *a, struct scheduler_request *r,
                            struct kiln_err *err)
{
	const char *root = NULL, *lk = NULL;
	char lock[65];
	kiln_rc rc;

	rc = scheduler_root_of_artifact(s, r->srpm.sha256, a, &root, lock, err);
	if (!rc && root && *lock && !(lk = kiln_arena_strdup(a, lock)))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc && root)
		rc = scheduler_request_root(r, root, lk, a, err);
	return rc;
}

static kiln_rc rebuild_request(struct scheduler *s, struct api_req *req, const struct rb_body *b,
                               const struct rb_pub *pub, struct scheduler_request *r,
                               struct kiln_err *err)
{
	struct kiln_arena *a = api_req_arena(req);
	size_t i, n = b->defines.n;
	bool host = false;

	memset(r, 0, sizeof(*r));
	r->srpm.name = b->srpm.name;
	r->srpm.sha256 = b->srpm.sha256;
	r->has_srpm = true;
	r->arch = b->arch;
	r->tags = b->tags;
	r->timeout = b->timeout;
	r->priority = b->priority;
	r->sign_key = NULL;
	/* the published build's time and host, as a .buildinfo would pin them */
	r->source_date_epoch = pub->buildtime;
	r->has_sde = true;
	r->defines.keys = kiln_arena_array(a, n + 1, sizeof(char *));
	r->defines.values = kiln_arena_array(a, n + 1, sizeof(char *));
	if (!r->defines.keys || !r->defines.values)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		r->defines.keys[i] = b->defines.keys[i];
		r->defines.values[i] = b->defines.values[i];
		host |= !strcmp(b->defines.keys[i], "_buildhost");
	}
	r->defines.n = n;
	if (!host && *pub->buildhost) {
		r->defines.keys[r->defines.n] = "_buildhost";
		r->defines.values[r->defines.n++] = pub->buildhost;
	}
	return rebuild_root(s, a, r, err);
}

static void published_json(struct api_jw *w, const struct rb_pub *v, size_t n)
{
	size_t i;

	api_jw_arr(w);
	for (i = 0; i < n; i++) {
		api_jw_obj(w);
		api_jw_kstr(w, "name", v[i].name);
		api_jw_kstr(w, "sha256", v[i].sha256);
		api_jw_kint(w, "buildtime", v[i].buildtime);
		api_jw_kstr(w, "buildhost", v[i].buildhost);
		api_jw_kint(w, "changelogtime", v[i].changelogtime);
		api_jw_end(w);
	}
	api_jw_end(w);
}

void scheduler_h_rebuild_create(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf reqjson = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf manifest = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf pubs = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct scheduler_request r;
	struct scheduler_job j = {0};
	struct rb_body b = {0};
	struct rb_pub *pub = NULL;
	struct rb_ref *refs;
	struct api_jw w;
	const char *body;
	char field[32], loc[64];
	size_t len, i;
	int64_t id = 0;
	kiln_rc rc;

	body = api_req_body(req, &len);
	rc = api_json_decode(body, len, rb_fields, API_DECODE_STRICT, &b, a, &err);
	if (!rc)
		rc = ref_resolve(s, "srpm", &b.srpm, a, &err);
	refs = b.rpms.v;
	pub = rc ? NULL : kiln_arena_array(a, b.rpms.n, sizeof(*pub));
	if (!rc && !pub)
		rc = kiln_err_set(&err, KILN_ENOMEM, "out of memory");
	for (i = 0; !rc && i < b.rpms.n; i++) {
		snprintf(field, sizeof(field), "rpms[%zu]", i);
		rc = ref_resolve(s, field, &refs[i], a, &err);
		if (!rc)
			rc = pub_read(s, &refs[i], a, &pub[i], &err);
		if (rc)
			kiln_err_wrap(&err, "field '%s'", field);
	}
	if (!rc)
		rc = rebuild_request(s, req, &b, &pub[0], &r, &err);
	if (!rc)
		rc = scheduler_job_prepare(s, req, &r, &j, &reqjson, &manifest, &err);
	if (!rc) {
		j.sign_key = ""; /* compared, not published */
		j.idem_key = "";
		rc = s->store->ops->job_insert(s->store, &j, &id, &err);
	}
	if (!rc) {
		api_jw_init(&w, &pubs);
		published_json(&w, pub, b.rpms.n);
		rc = kiln_buf_finish(&pubs, &err);
	}
	if (!rc)
		rc = s->store->ops->rebuild_put(s->store, id, b.srpm.name, b.srpm.sha256, pubs.ptr,
		                                util_clock_wall_ms(), &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		goto out;
	}
	scheduler_queue_changed(s);
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "id", id);
	api_jw_kint(&w, "job", id);
	api_jw_kstr(&w, "verdict", "pending");
	api_jw_kint(&w, "source_date_epoch", pub[0].buildtime);
	api_jw_kstr(&w, "buildhost", pub[0].buildhost);
	api_jw_end(&w);
	scheduler_reply_json(resp, 201);
	snprintf(loc, sizeof(loc), "/api/v1/rebuilds/%lld", (long long)id);
	api_resp_header(resp, "Location", loc);
out:
	kiln_buf_release(&reqjson);
	kiln_buf_release(&manifest);
	kiln_buf_release(&pubs);
}

/* ---------------------------------------------------------------------------------------- */
/* Comparing */

static const struct api_field pub_fields[] = {
    {"name", API_F_STR, true, offsetof(struct rb_pub, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct rb_pub, sha256), 0, 64, NULL, 0, 0},
    {"buildhost", API_F_STR, false, offsetof(struct rb_pub, buildhost), 0, 4096, NULL, 0, 0},
    {"buildtime", API_F_INT, false, offsetof(struct rb_pub, buildtime), INT64_MIN, INT64_MAX, NULL,
     0, 0},
    {"changelogtime", API_F_INT, false, offsetof(struct rb_pub, changelogtime), INT64_MIN,
     INT64_MAX, NULL, 0, 0},
    API_FIELD_END,
};

struct pubs {
	struct api_objlist v;
};

static const struct api_field pubs_fields[] = {
    {"v", API_F_OBJLIST, true, offsetof(struct pubs, v), 0, REBUILD_RPMS_MAX, pub_fields,
     sizeof(struct rb_pub), 0},
    API_FIELD_END,
};

static bool buildtime_controlled(const struct rb_pub *p)
{
	return p->changelogtime >= 0 && p->buildtime == p->changelogtime;
}

static bool buildhost_controlled(const struct rb_pub *p)
{
	return !strcmp(p->buildhost ? p->buildhost : "", "reproducible") ||
	       !strcmp(p->buildhost ? p->buildhost : "", "localhost") || buildtime_controlled(p);
}

/* The differences a rebuild sets aside: what the original build did not pin. */
static bool rebuild_ignore(void *arg, const struct pack_diff_item *it, char *why, size_t size)
{
	const struct rb_pub *p = arg;
	bool bt = buildtime_controlled(p), bh = buildhost_controlled(p);

	if (it->kind != PACK_DIFF_TAG)
		return false;
	if (it->tag == TAG_BUILDTIME && !bt) {
		snprintf(why, size,
		         "BUILDTIME: not controlled by the original (%lld is not its "
		         "newest %%changelog time)",
		         (long long)p->buildtime);
		return true;
	}
	if (it->tag == TAG_BUILDHOST && !bh) {
		snprintf(why, size,
		         "BUILDHOST: not controlled by the original ('%s' is a machine's "
		         "name, not a fixed %%_buildhost)",
		         p->buildhost);
		return true;
	}
	if (it->tag == TAG_COOKIE && (!bt || !bh)) {
		snprintf(why, size, "COOKIE: rpm's \"BUILDHOST BUILDTIME\"");
		return true;
	}
	return false;
}

/* One published package against the rebuilt one of the same name. */
static void compare_one(struct scheduler *s, const struct rb_pub *p,
                        const struct scheduler_artifact *got, struct api_jw *w,
                        struct kiln_buf *text, const char **verdict)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA); /* this package's diff only */
	bool bt = buildtime_controlled(p), bh = buildhost_controlled(p);
	struct scheduler_compare_opts o;
	struct scheduler_compare r;
	size_t i;

	api_jw_obj(w);
	api_jw_kstr(w, "name", p->name);
	api_jw_kstr(w, "published_sha256", p->sha256);
	api_jw_key(w, "rebuilt_sha256");
	api_jw_str(w, got ? got->sha256 : NULL);
	api_jw_kbool(w, "buildtime_controlled", bt);
	api_jw_kbool(w, "buildhost_controlled", bh);
	kiln_buf_addf(text, "  %s: ", p->name);
	if (!got) {
		*verdict = "missing";
		api_jw_kstr(w, "verdict", *verdict);
		kiln_buf_addstr(text, "missing (the rebuild did not write it)\n");
		goto out;
	}
	scheduler_compare_opts_init(&o);
	o.old_label = "published";
	o.new_label = "rebuilt";
	o.ignore = rebuild_ignore;
	o.ignore_arg = (void *)p;
	scheduler_compare_blobs(s, p->sha256, got->sha256, &o, &a, &r);
	if (!r.compared) {
		*verdict = "unknown";
		api_jw_kstr(w, "verdict", *verdict);
		api_jw_kstr(w, "error", r.error ? r.error : "");
		kiln_buf_addf(text, "unknown (%s)\n", r.error ? r.error : "");
		goto out;
	}
	api_jw_key(w, "ignored");
	api_jw_arr(w);
	for (i = 0; i < r.nignored; i++)
		api_jw_str(w, r.ignored[i]);
	api_jw_end(w);
	*verdict = r.payload_match && r.metadata_match ? "reproducible" : "differs";
	api_jw_kstr(w, "verdict", *verdict);
	api_jw_kbool(w, "payload_match", r.payload_match);
	api_jw_kbool(w, "metadata_match", r.metadata_match);
	kiln_buf_addf(text, "%s (payload %s, metadata %s)\n", *verdict,
	              r.payload_match ? "matches" : "differs",
	              r.metadata_match ? "matches" : "differs");
	if (!bt || !bh)
		kiln_buf_addf(text, "    not controlled by the original:%s%s\n",
		              bt ? "" : " BUILDTIME", bh ? "" : " BUILDHOST");
	api_jw_key(w, "diff");
	if (r.json)
		api_jw_raw(w, r.json);
	else
		api_jw_null(w);
	for (const char *q = r.text; q && *q;) {
		size_t l = strcspn(q, "\n");

		kiln_buf_addf(text, "    %.*s\n", (int)l, q);
		q += l;
		q += *q == '\n';
	}
out:
	api_jw_end(w);
	kiln_arena_release(&a);
}

void scheduler_rebuild_job_ended(struct scheduler *s, const struct scheduler_job *j)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf wrap = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY + 16);
	struct kiln_buf report = KILN_BUF_INIT(REPORT_MAX), text = KILN_BUF_INIT(REPORT_MAX);
	struct kiln_buf head = KILN_BUF_INIT(REPORT_MAX + 4096);
	struct scheduler_rebuild rb;
	struct scheduler_artifact *arts = NULL;
	const char *verdicts[REBUILD_RPMS_MAX], *v;
	const struct rb_pub *pv;
	struct pubs pubs = {0};
	struct api_jw w;
	size_t narts = 0, i, k;
	kiln_rc rc;

	rc = j->rebuild ? s->store->ops->rebuild_get(s->store, j->id, &a, &rb, &err)
	                : KILN_ENOTFOUND;
	if (rc == KILN_ENOTFOUND || (!rc && strcmp(rb.verdict, "pending")))
		goto out; /* not a rebuild, or already compared */
	kiln_buf_addf(&wrap, "{\"v\":%s}", rb.published);
	if (!rc)
		rc = kiln_buf_finish(&wrap, &err);
	if (!rc)
		rc = api_json_decode(wrap.ptr, wrap.len, pubs_fields, 0, &pubs, &a, &err);
	if (!rc && j->state == SCHED_SUCCEEDED)
		rc = s->store->ops->artifacts_list(s->store, j->id, j->attempts, &a, &arts, &narts,
		                                   &err);
	if (rc)
		goto out;
	pv = pubs.v.v;
	api_jw_init(&w, &report);
	api_jw_arr(&w);
	for (i = 0; j->state == SCHED_SUCCEEDED && i < pubs.v.n; i++) {
		for (k = 0; k < narts && strcmp(arts[k].name, pv[i].name); k++)
			;
		compare_one(s, &pv[i], k < narts ? &arts[k] : NULL, &w, &text, &verdicts[i]);
	}
	api_jw_end(&w);
	v = j->state != SCHED_SUCCEEDED ? "rebuild_failed"
	                                : scheduler_verdict_rollup(verdicts, pubs.v.n);
	/* "missing" rolls up like differs: a published package the rebuild cannot make */
	for (i = 0; j->state == SCHED_SUCCEEDED && i < pubs.v.n; i++)
		if (!strcmp(verdicts[i], "missing"))
			v = "differs";
	if (!*v)
		v = "unknown";
	kiln_buf_addf(&head, "rebuild %lld of %s: %s%s%s\n", (long long)j->id, rb.srpm_name, v,
	              j->state != SCHED_SUCCEEDED ? ": " : "",
	              j->state != SCHED_SUCCEEDED ? j->message : "");
	if (text.len)
		kiln_buf_add(&head, text.ptr, text.len);
	rc = kiln_buf_finish(&report, &err);
	if (!rc)
		rc = kiln_buf_finish(&head, &err);
	if (!rc)
		rc = s->store->ops->rebuild_record(s->store, j->id, v, report.ptr, head.ptr, &err);
	if (!rc)
		kiln_log(KILN_LOG_INFO, "rebuild %lld of %s: %s", (long long)j->id, rb.srpm_name,
		         v);
out:
	if (rc && rc != KILN_ENOTFOUND) {
		kiln_err_wrap(&err, "rebuild %lld", (long long)j->id);
		kiln_log_err(KILN_LOG_WARN, &err);
	}
	kiln_buf_release(&wrap);
	kiln_buf_release(&report);
	kiln_buf_release(&text);
	kiln_buf_release(&head);
	kiln_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

void scheduler_h_rebuild_get(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_arena *a = api_req_arena(req);
	struct kiln_err err = KILN_ERR_INIT;
	const char *fmt = api_req_query(req, "format");
	struct scheduler_rebuild rb;
	struct scheduler_job j = {0};
	struct api_jw w;
	int64_t id;
	kiln_rc rc;

	rc = scheduler_job_param(s, req, &id, &err);
	if (!rc)
		rc = s->store->ops->rebuild_get(s->store, id, a, &rb, &err);
	if (!rc)
		rc = s->store->ops->job_get(s->store, id, a, &j, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	if (fmt && !strcmp(fmt, "text")) {
		if (*rb.text)
			kiln_buf_addstr(&resp->body, rb.text);
		else
			kiln_buf_addf(&resp->body, "rebuild %lld of %s: pending (job %s)\n",
			              (long long)id, rb.srpm_name, scheduler_state_name(j.state));
		resp->content_type = "text/plain; charset=utf-8";
		return;
	}
	api_jw_init(&w, &resp->body);
	api_jw_obj(&w);
	api_jw_kint(&w, "id", id);
	api_jw_kint(&w, "job", id);
	api_jw_kstr(&w, "state", scheduler_state_name(j.state));
	api_jw_kstr(&w, "verdict", rb.verdict);
	api_jw_key(&w, "srpm");
	api_jw_obj(&w);
	api_jw_kstr(&w, "name", rb.srpm_name);
	api_jw_kstr(&w, "sha256", rb.srpm_sha256);
	api_jw_end(&w);
	api_jw_key(&w, "published");
	api_jw_raw(&w, rb.published);
	api_jw_key(&w, "rpms");
	api_jw_raw(&w, *rb.report ? rb.report : "[]");
	api_jw_end(&w);
	scheduler_reply_json(resp, 200);
}
