/*
 * provenance.c - signed provenance (issue 12): for every succeeded build an in-toto
 * Statement v1 with a SLSA v1 provenance predicate, and for a job whose reruns all
 * reproduced it a rerun attestation; each is a DSSE envelope signed with the job's farm
 * key (OpenPGP, sign_data()), stored by job and served by artifact digest. The verifier
 * (kiln provenance verify) checks the envelope's signature and that a package's sha256 is
 * one of the statement's subjects.
 *
 * DSSE signs PAE(payloadType, payload) = "DSSEv1" SP len(type) SP type SP len(body) SP
 * body; "sig" is the base64 of one binary OpenPGP signature packet (a detached binary
 * document signature over the PAE bytes, what `gpg --verify SIG PAE` checks) and "keyid"
 * the key's fingerprint. Statements are canonical JSON (keys sorted, no blanks).
 */
#include "util/util.h"

#include <fcntl.h>
#include <unistd.h>

#include "roots/roots.h"
#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define PAYLOAD_TYPE "application/vnd.in-toto+json"
#define BUILD_TYPE "urn:kiln:buildtype:rpm:v1"
#define RERUN_TYPE "urn:kiln:attestation:reproducible:v1"

static void pae(const char *type, const char *body, size_t len, struct kiln_buf *out)
{
	kiln_buf_addf(out, "DSSEv1 %zu %s %zu ", strlen(type), type, len);
	kiln_buf_add(out, body, len);
}

/* The DSSE envelope of statement (canonical JSON) signed with key. */
static kiln_rc envelope_make(const struct sign_key *key, const char *statement,
                             struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf msg = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY + 64);
	struct kiln_buf sig = KILN_BUF_INIT(64 * 1024),
	                b64 = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	struct sign_opts so = {0};
	struct sign_key_info ki;
	struct api_jw w;
	kiln_rc rc;

	pae(PAYLOAD_TYPE, statement, strlen(statement), &msg);
	rc = kiln_buf_finish(&msg, err);
	if (!rc)
		rc = sign_time_pick(key, -1, &so.time, err);
	if (!rc)
		rc = sign_data(key, msg.ptr, msg.len, &so, &sig, err);
	if (rc)
		goto out;
	sign_key_info_get(key, &ki);
	api_jw_init(&w, out);
	api_jw_obj(&w);
	util_base64_encode(statement, strlen(statement), &b64);
	api_jw_kstr(&w, "payload", b64.ptr);
	api_jw_kstr(&w, "payloadType", PAYLOAD_TYPE);
	api_jw_key(&w, "signatures");
	api_jw_arr(&w);
	api_jw_obj(&w);
	api_jw_kstr(&w, "keyid", ki.fingerprint);
	kiln_buf_reset(&b64);
	util_base64_encode(sig.ptr, sig.len, &b64);
	api_jw_kstr(&w, "sig", b64.ptr);
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_end(&w);
	rc = kiln_buf_finish(&b64, err);
	if (!rc)
		rc = kiln_buf_finish(out, err);
out:
	kiln_buf_release(&msg);
	kiln_buf_release(&sig);
	kiln_buf_release(&b64);
	return rc;
}

static bool is_package(const struct scheduler_artifact *a)
{
	return (!strcmp(a->kind, "binary") || !strcmp(a->kind, "source")) &&
	       kiln_str_ends(kiln_str_from(a->name), ".rpm");
}

/* What users download: the signed bytes when signed. */
static const char *served_sha(const struct scheduler_artifact *a)
{
	return *a->signed_sha256 ? a->signed_sha256 : a->sha256;
}

static void subjects(struct api_jw *w, const struct scheduler_artifact *v, size_t n)
{
	size_t i;

	api_jw_key(w, "subject");
	api_jw_arr(w);
	for (i = 0; i < n; i++) {
		if (!is_package(&v[i]))
			continue;
		api_jw_obj(w);
		api_jw_kstr(w, "name", v[i].name);
		api_jw_key(w, "digest");
		api_jw_obj(w);
		api_jw_kstr(w, "sha256", served_sha(&v[i]));
		api_jw_end(w);
		api_jw_end(w);
	}
	api_jw_end(w);
}

/* Manifest members as resolved dependencies. */
struct mref {
	const char *name, *sha256;
};
struct mgit {
	const char *url, *ref, *commit;
};
struct mview {
	struct mref spec, srpm;
	bool has_spec, has_srpm, has_git;
	struct mgit git;
	struct api_objlist sources;
	const char *root;
};

static const struct api_field mref_fields[] = {
    {"name", API_F_STR, false, offsetof(struct mref, name), 0, 4096, NULL, 0, 0},
    {"sha256", API_F_STR, false, offsetof(struct mref, sha256), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};
static const struct api_field mgit_fields[] = {
    {"url", API_F_STR, false, offsetof(struct mgit, url), 0, 4096, NULL, 0, 0},
    {"ref", API_F_STR, false, offsetof(struct mgit, ref), 0, 4096, NULL, 0, 0},
    {"commit", API_F_STR, false, offsetof(struct mgit, commit), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};
static const struct api_field mview_fields[] = {
    {"spec", API_F_OBJ, false, offsetof(struct mview, spec), 0, 0, mref_fields, 0,
     offsetof(struct mview, has_spec)},
    {"srpm", API_F_OBJ, false, offsetof(struct mview, srpm), 0, 0, mref_fields, 0,
     offsetof(struct mview, has_srpm)},
    {"git", API_F_OBJ, false, offsetof(struct mview, git), 0, 0, mgit_fields, 0,
     offsetof(struct mview, has_git)},
    {"sources", API_F_OBJLIST, false, offsetof(struct mview, sources), 0, 1024, mref_fields,
     sizeof(struct mref), 0},
    {"root", API_F_STR, false, offsetof(struct mview, root), 0, 4096, NULL, 0, 0},
    API_FIELD_END,
};

static void dep(struct api_jw *w, const char *name, const char *uri, const char *algo,
                const char *digest)
{
	api_jw_obj(w);
	api_jw_kstr(w, "name", name);
	if (uri)
		api_jw_kstr(w, "uri", uri);
	if (digest && *digest) {
		api_jw_key(w, "digest");
		api_jw_obj(w);
		api_jw_kstr(w, algo, digest);
		api_jw_end(w);
	}
	api_jw_end(w);
}

/* Every package of the root the job was built on, from its pinned lock (rootpin.c): name,
 * digest, and where it came from. */
static kiln_rc root_deps(const struct scheduler *s, const char *lock_id, struct api_jw *w,
                         struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf text = KILN_BUF_INIT(ROOTS_LOCK_MAX_BYTES + 1);
	struct roots_lock lock;
	char name[1024], uri[1200];
	kiln_rc rc;
	size_t i;

	roots_lock_init(&lock);
	scheduler_blob_path(s, lock_id, &path);
	rc = kiln_buf_finish(&path, err);
	if (!rc)
		rc = util_read_file(path.ptr, ROOTS_LOCK_MAX_BYTES, &text, err);
	if (!rc)
		rc = kiln_buf_finish(&text, err);
	if (!rc)
		rc = roots_lock_from_mem(&lock, "root lock", text.ptr, text.len, err);
	for (i = 0; !rc && i < lock.n; i++) {
		const struct roots_lock_pkg *p = &lock.pkgs[i];

		if (p->epoch)
			snprintf(name, sizeof(name), "%s-%u:%s-%s.%s", p->name, p->epoch,
			         p->version, p->release, p->arch);
		else
			snprintf(name, sizeof(name), "%s-%s-%s.%s", p->name, p->version, p->release,
			         p->arch);
		snprintf(uri, sizeof(uri), "urn:kiln:root-repo:%s/%s", p->repo, p->location);
		dep(w, name, uri, "sha256", p->sha256);
	}
	roots_lock_release(&lock);
	kiln_buf_release(&path);
	kiln_buf_release(&text);
	return rc;
}

static kiln_rc resolved_deps(const struct scheduler *s, const struct scheduler_job *j,
                             struct kiln_arena *a, struct api_jw *w, struct kiln_err *err)
{
	char lock_id[65];
	struct mview m = {0};
	const struct mref *src;
	char uri[4200];
	size_t i;
	kiln_rc rc;

	rc = api_json_decode(j->manifest, strlen(j->manifest), mview_fields, 0, &m, a, err);
	if (rc)
		return rc;
	api_jw_key(w, "resolvedDependencies");
	api_jw_arr(w);
	if (m.has_spec && m.spec.sha256)
		dep(w, m.spec.name, NULL, "sha256", m.spec.sha256);
	if (m.has_srpm && m.srpm.sha256)
		dep(w, m.srpm.name, NULL, "sha256", m.srpm.sha256);
	src = m.sources.v;
	for (i = 0; i < m.sources.n; i++)
		dep(w, src[i].name, NULL, "sha256", src[i].sha256);
	if (m.has_git && m.git.url) {
		snprintf(uri, sizeof(uri), "git+%s%s%s", m.git.url,
		         m.git.ref && *m.git.ref ? "@" : "", m.git.ref ? m.git.ref : "");
		/* pinned in the manifest by the worker's completion (gitpin.c) */
		dep(w, "git", uri, "gitCommit", m.git.commit);
	}
	snprintf(uri, sizeof(uri), "urn:kiln:root:%s", m.root ? m.root : "worker-default");
	scheduler_root_lock_get(j->manifest, lock_id);
	/* the root's identity is its lock's sha256 (docs/roots.md), each package follows */
	dep(w, "root", uri, "sha256", lock_id);
	if (*lock_id)
		rc = root_deps(s, lock_id, w, err);
	api_jw_end(w);
	return rc;
}

static const char *rfc3339(int64_t ms, char *dst, size_t size)
{
	return util_clock_format_utc(ms / 1000, "%Y-%m-%dT%H:%M:%SZ", dst, size);
}

/* The SLSA v1 provenance statement of a succeeded job. */
static kiln_rc build_statement(const struct scheduler *s, const struct scheduler_job *j,
                               const char *worker, const struct sign_key *key,
                               const struct scheduler_artifact *v, size_t n, struct kiln_arena *a,
                               struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct sign_key_info ki;
	char t0[40], t1[40], id[128], inv[96];
	struct api_jw w;
	kiln_rc rc;

	sign_key_info_get(key, &ki);
	snprintf(id, sizeof(id), "urn:kiln:builder:%s", ki.fingerprint);
	snprintf(inv, sizeof(inv), "job/%lld/attempt/%lld", (long long)j->id,
	         (long long)j->attempts);
	api_jw_init(&w, &raw);
	api_jw_obj(&w);
	api_jw_kstr(&w, "_type", "https://in-toto.io/Statement/v1");
	subjects(&w, v, n);
	api_jw_kstr(&w, "predicateType", "https://slsa.dev/provenance/v1");
	api_jw_key(&w, "predicate");
	api_jw_obj(&w);
	api_jw_key(&w, "buildDefinition");
	api_jw_obj(&w);
	api_jw_kstr(&w, "buildType", BUILD_TYPE);
	api_jw_key(&w, "externalParameters");
	api_jw_obj(&w);
	api_jw_key(&w, "manifest");
	api_jw_raw(&w, j->manifest);
	api_jw_kstr(&w, "content_key", j->content_key);
	api_jw_end(&w);
	api_jw_key(&w, "internalParameters");
	api_jw_obj(&w);
	api_jw_key(&w, "request");
	api_jw_raw(&w, j->request);
	api_jw_kstr(&w, "sign_key", j->sign_key);
	api_jw_kstr(&w, "worker", worker);
	api_jw_end(&w);
	rc = resolved_deps(s, j, a, &w, err);
	if (rc)
		goto out;
	api_jw_end(&w);
	api_jw_key(&w, "runDetails");
	api_jw_obj(&w);
	api_jw_key(&w, "builder");
	api_jw_obj(&w);
	api_jw_kstr(&w, "id", id);
	api_jw_key(&w, "version");
	api_jw_obj(&w);
	api_jw_kstr(&w, "kiln", KILN_VERSION);
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_key(&w, "metadata");
	api_jw_obj(&w);
	api_jw_kstr(&w, "invocationId", inv);
	api_jw_kstr(&w, "startedOn", rfc3339(j->started_ms, t0, sizeof(t0)));
	api_jw_kstr(&w, "finishedOn", rfc3339(j->finished_ms, t1, sizeof(t1)));
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_end(&w);
	rc = kiln_buf_finish(&raw, err);
	if (!rc)
		rc = api_json_canonical(raw.ptr, raw.len, out, err);
out:
	kiln_buf_release(&raw);
	return rc;
}

/* The job's key, or the scheduler's default one; NULL (and KILN_OK) when there is none. */
static kiln_rc job_key(struct scheduler *s, const struct scheduler_job *j,
                       const struct sign_key **key, struct kiln_err *err)
{
	kiln_rc rc = scheduler_key_find(s, j->sign_key, key, err);

	if (!rc && !*key && s->cfg->default_key)
		rc = scheduler_key_find(s, s->cfg->default_key, key, err);
	return rc;
}

static kiln_rc sign_and_store(struct scheduler *s, const struct scheduler_job *j,
                              const struct sign_key *key, const char *kind, const char *statement,
                              struct kiln_err *err)
{
	struct kiln_buf env = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 2);
	kiln_rc rc;

	rc = envelope_make(key, statement, &env, err);
	if (!rc)
		rc = s->store->ops->attestation_put(s->store, j->id, kind, env.ptr,
		                                    util_clock_wall_ms(), err);
	kiln_buf_release(&env);
	return rc;
}

static bool packages(const struct scheduler_artifact *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (is_package(&v[i]))
			return true;
	return false;
}

kiln_rc scheduler_provenance_make(struct scheduler *s, const struct scheduler_ended *e,
                                  const char *worker, struct kiln_err *err)
{
	const struct scheduler_job *j = e->job;
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf st = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct scheduler_artifact *read = NULL;
	const struct scheduler_artifact *v = e->arts;
	const struct sign_key *key = NULL;
	size_t n = e->narts;
	kiln_rc rc;

	rc = job_key(s, j, &key, err);
	if (rc || !key)
		goto out; /* no farm key: nothing to sign with */
	if (!e->arts_known) {
		rc =
		    s->store->ops->artifacts_list(s->store, j->id, j->attempts, &a, &read, &n, err);
		v = read;
	}
	if (!rc && !packages(v, n))
		goto out; /* an in-toto statement names at least one subject */
	if (!rc)
		rc = build_statement(s, j, worker, key, v, n, &a, &st, err);
	if (!rc)
		rc = sign_and_store(s, j, key, "build", st.ptr, err);
out:
	kiln_buf_release(&st);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc scheduler_rerun_attestation_make(struct scheduler *s, const struct scheduler_job *j,
                                         const char *worker, const struct scheduler_rerun *rv,
                                         size_t rn, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf st = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct scheduler_artifact *v = NULL;
	const struct sign_key *key = NULL;
	struct api_jw w;
	size_t n = 0, i;
	kiln_rc rc;

	rc = job_key(s, j, &key, err);
	if (rc || !key)
		goto out;
	rc = s->store->ops->artifacts_list(s->store, j->id, j->attempts, &a, &v, &n, err);
	if (rc)
		goto out;
	api_jw_init(&w, &raw);
	api_jw_obj(&w);
	api_jw_kstr(&w, "_type", "https://in-toto.io/Statement/v1");
	subjects(&w, v, n);
	api_jw_kstr(&w, "predicateType", RERUN_TYPE);
	api_jw_key(&w, "predicate");
	api_jw_obj(&w);
	api_jw_kstr(&w, "verdict", "reproducible");
	api_jw_kstr(&w, "compared", "unsigned sha256, then kiln diff without the signature header");
	api_jw_key(&w, "original");
	api_jw_obj(&w);
	api_jw_kint(&w, "job", j->id);
	api_jw_kstr(&w, "worker", worker);
	api_jw_kstr(&w, "content_key", j->content_key);
	api_jw_end(&w);
	api_jw_key(&w, "reruns");
	api_jw_arr(&w);
	for (i = 0; i < rn; i++) {
		api_jw_obj(&w);
		api_jw_kint(&w, "n", rv[i].n);
		api_jw_kint(&w, "job", rv[i].rerun_job);
		api_jw_kstr(&w, "worker", rv[i].worker);
		api_jw_kstr(&w, "variations", rv[i].variations);
		api_jw_kstr(&w, "verdict", rv[i].verdict);
		api_jw_end(&w);
	}
	api_jw_end(&w);
	api_jw_end(&w);
	api_jw_end(&w);
	rc = kiln_buf_finish(&raw, err);
	if (!rc)
		rc = api_json_canonical(raw.ptr, raw.len, &st, err);
	if (!rc)
		rc = sign_and_store(s, j, key, "rerun", st.ptr, err);
out:
	kiln_buf_release(&raw);
	kiln_buf_release(&st);
	kiln_arena_release(&a);
	return rc;
}

void scheduler_h_provenance(void *ctx, struct api_req *req, struct api_resp *resp)
{
	struct scheduler *s = ctx;
	struct kiln_err err = KILN_ERR_INIT;
	const char *sha = api_req_param(req, 0);
	const char *kind = api_req_query(req, "attestation");
	const char *env = NULL;
	kiln_rc rc;

	if (!api_sha256_valid(sha)) {
		api_resp_error(resp, 400, "bad_request", "not a sha256 digest");
		return;
	}
	if (kind && strcmp(kind, "build") && strcmp(kind, "rerun")) {
		api_resp_error(resp, 400, "bad_request",
		               "query argument 'attestation': build or rerun");
		return;
	}
	rc = scheduler_artifact_visible(s, req, sha, &err);
	if (!rc)
		rc = s->store->ops->attestation_find(s->store, sha, kind ? kind : "build",
		                                     api_req_arena(req), &env, &err);
	if (rc) {
		api_resp_from_err(resp, &err);
		return;
	}
	kiln_buf_addstr(&resp->body, env);
	resp->content_type = "application/json";
	scheduler_reply_json(resp, 200);
}

/* ---------------------------------------------------------------------------------------- */
/* Verifying (kiln provenance verify) */

struct venv_sig {
	const char *keyid, *sig;
};
struct venv {
	const char *payload, *payload_type;
	struct api_objlist sigs;
};
static const struct api_field venv_sig_fields[] = {
    {"keyid", API_F_STR, false, offsetof(struct venv_sig, keyid), 0, 256, NULL, 0, 0},
    {"sig", API_F_STR, true, offsetof(struct venv_sig, sig), 0, 65536, NULL, 0, 0},
    API_FIELD_END,
};
static const struct api_field venv_fields[] = {
    {"payload", API_F_STR, true, offsetof(struct venv, payload), 0, KILN_LIMIT_HTTP_BODY, NULL, 0,
     0},
    {"payloadType", API_F_STR, true, offsetof(struct venv, payload_type), 0, 256, NULL, 0, 0},
    {"signatures", API_F_OBJLIST, true, offsetof(struct venv, sigs), 1, 16, venv_sig_fields,
     sizeof(struct venv_sig), 0},
    API_FIELD_END,
};

struct vdigest {
	const char *sha256;
};
struct vsubject {
	const char *name;
	struct vdigest digest;
};
struct vstatement {
	const char *type, *predicate_type;
	struct api_objlist subjects;
};
static const struct api_field vdigest_fields[] = {
    {"sha256", API_F_STR, false, offsetof(struct vdigest, sha256), 0, 128, NULL, 0, 0},
    API_FIELD_END,
};
static const struct api_field vsubject_fields[] = {
    {"name", API_F_STR, false, offsetof(struct vsubject, name), 0, 4096, NULL, 0, 0},
    {"digest", API_F_OBJ, true, offsetof(struct vsubject, digest), 0, 0, vdigest_fields, 0, 0},
    API_FIELD_END,
};
static const struct api_field vstatement_fields[] = {
    {"_type", API_F_STR, true, offsetof(struct vstatement, type), 0, 256, NULL, 0, 0},
    {"predicateType", API_F_STR, true, offsetof(struct vstatement, predicate_type), 0, 256, NULL, 0,
     0},
    {"subject", API_F_OBJLIST, true, offsetof(struct vstatement, subjects), 1, 100000,
     vsubject_fields, sizeof(struct vsubject), 0},
    API_FIELD_END,
};

/* One signature of the envelope over msg: KILN_OK when it verifies with a key of kr. */
static kiln_rc verify_sig(const struct sign_keyring *kr, const struct venv_sig *sg,
                          const struct kiln_buf *msg, struct scheduler_provenance_check *out,
                          struct kiln_err *err)
{
	struct kiln_buf raw = KILN_BUF_INIT(65536);
	struct sign_result res;
	struct sign_key_info ki;
	kiln_rc rc;

	rc = util_base64_decode(sg->sig, strlen(sg->sig), &raw, err);
	if (!rc)
		rc = sign_verify(kr, raw.ptr, raw.len, msg->ptr, msg->len, &res, err);
	if (!rc && res.signer) {
		sign_key_info_get(res.signer, &ki);
		snprintf(out->signer, sizeof(out->signer), "%s", ki.fingerprint);
		snprintf(out->signer_uid, sizeof(out->signer_uid), "%s", ki.uid);
	}
	kiln_buf_release(&raw);
	return rc;
}

kiln_rc scheduler_provenance_check(const void *data, size_t len, const struct sign_keyring *kr,
                                   const char *sha256, struct scheduler_provenance_check *out,
                                   struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(4 * KILN_LIMIT_HTTP_BODY);
	struct kiln_buf payload = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY);
	struct kiln_buf msg = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY + 64);
	struct venv e = {0};
	struct vstatement st = {0};
	const struct venv_sig *sg;
	const struct vsubject *sub;
	size_t i;
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = api_json_decode(data, len, venv_fields, 0, &e, &a, err);
	if (rc) {
		kiln_err_wrap(err, "DSSE envelope");
		goto out;
	}
	if (strcmp(e.payload_type, PAYLOAD_TYPE)) {
		rc = kiln_err_set(err, KILN_EFORMAT, "payloadType is '%.64s', not " PAYLOAD_TYPE,
		                  e.payload_type);
		goto out;
	}
	rc = util_base64_decode(e.payload, strlen(e.payload), &payload, err);
	if (!rc)
		rc = kiln_buf_finish(&payload, err);
	if (rc) {
		kiln_err_wrap(err, "payload");
		goto out;
	}
	pae(e.payload_type, payload.ptr, payload.len, &msg);
	rc = kiln_buf_finish(&msg, err);
	sg = e.sigs.v;
	for (i = 0, rc = rc ? rc : KILN_ESIG; rc && rc != KILN_ENOMEM && i < e.sigs.n; i++) {
		kiln_err_clear(err);
		rc = verify_sig(kr, &sg[i], &msg, out, err);
	}
	if (rc) {
		kiln_err_wrap(err, "signature");
		goto out;
	}
	rc = api_json_decode(payload.ptr, payload.len, vstatement_fields, 0, &st, &a, err);
	if (rc) {
		kiln_err_wrap(err, "statement");
		goto out;
	}
	if (strcmp(st.type, "https://in-toto.io/Statement/v1")) {
		rc = kiln_err_set(err, KILN_EFORMAT, "statement _type is '%.64s', not in-toto v1",
		                  st.type);
		goto out;
	}
	snprintf(out->predicate_type, sizeof(out->predicate_type), "%s", st.predicate_type);
	sub = st.subjects.v;
	for (i = 0; i < st.subjects.n; i++) {
		if (sub[i].digest.sha256 && !strcmp(sub[i].digest.sha256, sha256)) {
			snprintf(out->subject, sizeof(out->subject), "%s",
			         sub[i].name ? sub[i].name : "");
			goto out;
		}
	}
	rc = kiln_err_set(err, KILN_EDIGEST,
	                  "sha256 %s is not a subject of the statement (%zu subjects)", sha256,
	                  st.subjects.n);
out:
	kiln_buf_release(&payload);
	kiln_buf_release(&msg);
	kiln_arena_release(&a);
	return rc;
}

static kiln_rc keyring_load(const char *key_file, struct sign_keyring **kr, struct kiln_err *err)
{
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH), key = KILN_BUF_INIT(KILN_MIB);
	size_t n;
	kiln_rc rc;

	if (!key_file) {
		rc = sign_keyring_default_dir(&dir, err);
		if (!rc)
			rc = sign_keyring_open(dir.ptr, kr, err);
		goto out;
	}
	rc = sign_keyring_new(kr, err);
	if (!rc)
		rc = util_read_file(key_file, KILN_MIB, &key, err);
	if (!rc)
		rc = sign_keyring_import(*kr, key.ptr, key.len, &n, err);
	if (rc)
		kiln_err_wrap(err, "%s", key_file);
out:
	kiln_buf_release(&dir);
	kiln_buf_release(&key);
	return rc;
}

kiln_rc scheduler_provenance_verify_file(const char *file, const char *rpm, const char *key_file,
                                         int out_fd, struct kiln_err *err)
{
	struct kiln_buf data = KILN_BUF_INIT(KILN_LIMIT_HTTP_BODY * 4);
	struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_LINE * 4);
	struct scheduler_provenance_check chk;
	struct sign_keyring *kr = NULL;
	char sha[2 * UTIL_DIGEST_MAX + 1];
	const char *p, *end;
	size_t nenv = 0, lineno = 0;
	kiln_rc rc;

	rc = util_digest_file_hex(UTIL_DIGEST_SHA256, rpm, sha, err);
	if (!rc)
		rc = util_read_file(file, KILN_LIMIT_HTTP_BODY * 4, &data, err);
	if (!rc)
		rc = keyring_load(key_file, &kr, err);
	/* one envelope, or JSON lines of them (.intoto.jsonl): each must hold */
	for (p = data.ptr, end = p ? p + data.len : p; !rc && p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		if (strspn(p, " \t\r") < len) {
			rc = scheduler_provenance_check(p, len, kr, sha, &chk, err);
			if (rc) {
				kiln_err_wrap(err, "%s: envelope %zu (line %zu)", file, nenv + 1,
				              lineno);
				break;
			}
			nenv++;
			kiln_buf_reset(&line);
			kiln_buf_addf(&line,
			              "%s: good signature by %s (%s); %s is subject '%s' of a %s "
			              "statement\n",
			              file, chk.signer, chk.signer_uid, util_path_basename(rpm),
			              chk.subject, chk.predicate_type);
			rc = kiln_buf_finish(&line, err);
			if (!rc)
				rc = util_write_all(out_fd, line.ptr, line.len, err);
		}
		p += len + (nl != NULL);
	}
	if (!rc && !nenv)
		rc = kiln_err_set(err, KILN_EFORMAT, "%s: no DSSE envelope in it", file);
	sign_keyring_free(kr);
	kiln_buf_release(&data);
	kiln_buf_release(&line);
	return rc;
}
