/*
 * request.c - POST /api/v1/jobs bodies: the field table, validation beyond types (names,
 * digests, one origin per job), and the canonical request and manifest JSON stored with
 * the job.
 */
#include "util/util.h"

#include "scheduler/scheduler_int.h"

#define F(name, type, req, field, min, max)                                                        \
	{                                                                                          \
		name, type, req, offsetof(struct scheduler_request, field), min, max, NULL, 0, 0   \
	}

static const struct api_field source_fields[] = {
    {"name", API_F_STR, true, offsetof(struct scheduler_source_ref, name), 0, 255, NULL, 0, 0},
    {"sha256", API_F_STR, true, offsetof(struct scheduler_source_ref, sha256), 0, 64, NULL, 0, 0},
    API_FIELD_END,
};

static const struct api_field git_fields[] = {
    {"url", API_F_STR, true, offsetof(struct scheduler_git_ref, url), 0, 4096, NULL, 0, 0},
    {"ref", API_F_STR, false, offsetof(struct scheduler_git_ref, ref), 0, 255, NULL, 0, 0},
    {"spec", API_F_STR, false, offsetof(struct scheduler_git_ref, spec), 0, 4096, NULL, 0, 0},
    API_FIELD_END,
};

#define LIM(name, field, max)                                                                      \
	{                                                                                          \
		name, API_F_INT, false, offsetof(struct scheduler_job_limits, field), 1, max,      \
		    NULL, 0, 0                                                                     \
	}

/* Bounds only keep the numbers sane: the worker lowers its own caps to these, never
 * raises them. */
static const struct api_field limit_fields[] = {
    LIM("pids", pids, 1 << 22),
    LIM("memory", memory, INT64_MAX),
    LIM("cpu", cpu, 100000),
    LIM("log", log, INT64_MAX),
    API_FIELD_END,
};

const struct api_field scheduler_request_fields[] = {
    F("spec", API_F_STR, false, spec, 0, KILN_LIMIT_HTTP_BODY),
    F("spec_name", API_F_STR, false, spec_name, 0, 255),
    {"sources", API_F_OBJLIST, false, offsetof(struct scheduler_request, sources), 0, 1024,
     source_fields, sizeof(struct scheduler_source_ref), 0},
    {"srpm", API_F_OBJ, false, offsetof(struct scheduler_request, srpm), 0, 0, source_fields, 0,
     offsetof(struct scheduler_request, has_srpm)},
    {"git", API_F_OBJ, false, offsetof(struct scheduler_request, git), 0, 0, git_fields, 0,
     offsetof(struct scheduler_request, has_git)},
    F("defines", API_F_STRMAP, false, defines, 0, 256),
    F("with", API_F_STRLIST, false, with, 0, 256),
    F("without", API_F_STRLIST, false, without, 0, 256),
    F("formats", API_F_STRLIST, false, formats, 0, 2),
    F("tags", API_F_STRLIST, false, tags, 0, 32),
    F("arch", API_F_STR, false, arch, 0, 64),
    F("priority", API_F_INT, false, priority, -1000, 1000),
    F("reruns", API_F_INT, false, reruns, 0, 10),
    F("reproduce", API_F_INT, false, reproduce, 0, 10), /* issue 12's name for reruns */
    F("variations", API_F_STRLIST, false, variations, 0, 16),
    F("timeout", API_F_INT, false, timeout, 1, 7 * 86400),
    {"source_date_epoch", API_F_INT, false, offsetof(struct scheduler_request, source_date_epoch),
     0, 4294967295LL, NULL, 0, offsetof(struct scheduler_request, has_sde)},
    F("max_attempts", API_F_INT, false, max_attempts, 1, 20),
    F("sign_key", API_F_STR, false, sign_key, 0, 128),
    F("repository", API_F_STR, false, repository, 0, 128),
    F("project", API_F_STR, false, project, 0, 64),
    F("root", API_F_STR, false, root, 0, 128),
    F("root_lock", API_F_STR, false, root_lock, 0, 64),
    {"limits", API_F_OBJ, false, offsetof(struct scheduler_request, limits), 0, 0, limit_fields, 0,
     offsetof(struct scheduler_request, has_limits)},
    API_FIELD_END,
};

/* Letters, digits and the given extra characters; first must not be a digit when ident. */
static bool word_ok(const char *s, const char *extra, bool ident)
{
	const char *p;

	if (!*s)
		return false;
	if (ident && *s >= '0' && *s <= '9')
		return false;
	for (p = s; *p; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9');

		if (!alnum && !strchr(extra, *p))
			return false;
	}
	return p - s <= 128;
}

static kiln_rc check_ref(const char *field, const struct scheduler_source_ref *r,
                         struct kiln_err *err)
{
	if (api_name_check(r->name, strlen(r->name), err)) {
		kiln_err_wrap(err, "field '%s.name'", field);
		return KILN_EINVAL;
	}
	if (!api_sha256_valid(r->sha256))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field '%s.sha256': not 64 lowercase hex digits", field);
	return KILN_OK;
}

static kiln_rc check_sources(const struct scheduler_request *r, struct kiln_err *err)
{
	const struct scheduler_source_ref *v = r->sources.v;
	char field[32];
	size_t i, j;

	for (i = 0; i < r->sources.n; i++) {
		snprintf(field, sizeof(field), "sources[%zu]", i);
		if (check_ref(field, &v[i], err))
			return KILN_EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(v[i].name, v[j].name))
				return kiln_err_set(err, KILN_EINVAL,
				                    "field 'sources[%zu].name': '%s' given twice",
				                    i, v[i].name);
	}
	return KILN_OK;
}

static kiln_rc check_words(const char *field, const struct api_strlist *l, const char *extra,
                           struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!word_ok(l->v[i], extra, false))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field '%s[%zu]': '%.64s' is not a name", field, i,
			                    l->v[i]);
	return KILN_OK;
}

/* A define's name is read as rpm's --define reads it: every '-' is '_' (macro/'s
 * macro_define_cmdline), so "my-flag" and `kiln build --define 'my-flag 1'` define the
 * same macro; the request keeps the canonical name, which the manifest then carries. */
static kiln_rc check_defines(struct scheduler_request *r, struct kiln_arena *a,
                             struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < r->defines.n; i++) {
		if (strchr(r->defines.keys[i], '-')) {
			char *k = kiln_arena_strdup(a, r->defines.keys[i]), *p;

			if (!k)
				return kiln_err_set(err, KILN_ENOMEM, "out of memory");
			for (p = k; (p = strchr(p, '-')); p++)
				*p = '_';
			r->defines.keys[i] = k;
		}
		if (!word_ok(r->defines.keys[i], "_", true))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'defines.%.64s': not a macro name",
			                    r->defines.keys[i]);
		if (strchr(r->defines.values[i], '\n'))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'defines.%s': a value may not contain a newline",
			                    r->defines.keys[i]);
	}
	return KILN_OK;
}

/* A job naming a root configuration goes to a worker that offers it: workers advertise
 * "root:NAME" among their tags, and the job asks for that tag, so placement answers and the
 * grant use their one matcher (dispatch.c) for roots too. */
static kiln_rc root_tag(struct scheduler_request *r, struct kiln_arena *a, struct kiln_err *err)
{
	const char **v;

	if (!*r->root) {
		r->root = NULL;
		return KILN_OK;
	}
	if (!word_ok(r->root, "_-.+", false))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'root': '%.64s' is not a root configuration name",
		                    r->root);
	v = kiln_arena_alloc(a, (r->tags.n + 1) * sizeof(*v));
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (r->tags.n)
		memcpy(v, r->tags.v, r->tags.n * sizeof(*v));
	v[r->tags.n] = kiln_arena_printf(a, "root:%s", r->root);
	if (!v[r->tags.n])
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	r->tags.v = v;
	r->tags.n++;
	return KILN_OK;
}

kiln_rc scheduler_request_root(struct scheduler_request *r, const char *root, const char *lock,
                               struct kiln_arena *a, struct kiln_err *err)
{
	r->root = root;
	r->root_lock = lock;
	return root_tag(r, a, err);
}

static kiln_rc check_formats(const struct scheduler_request *r, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < r->formats.n; i++)
		if (strcmp(r->formats.v[i], "v4") && strcmp(r->formats.v[i], "v6"))
			return kiln_err_set(err, KILN_EINVAL,
			                    "field 'formats[%zu]': '%.16s' is not v4 "
			                    "or v6",
			                    i, r->formats.v[i]);
	/* v4 and v6 packages of one spec have the same file names: one format per job (submit
	 * the other format as a second job). */
	if (r->formats.n > 1)
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'formats': one format per job (v4 and "
		                    "v6 packages have the same names; submit two jobs)");
	return KILN_OK;
}

/* A git URL kiln's fetcher takes (https, http, file, ssh, or scp-like user@host:path),
 * without blanks or control characters. */
static bool git_url_ok(const char *u)
{
	static const char *const schemes[] = {"https://", "http://", "file://", "ssh://"};
	const char *p;
	size_t i;
	bool ok = false;

	for (i = 0; i < KILN_ARRAY_SIZE(schemes); i++)
		ok |= !strncmp(u, schemes[i], strlen(schemes[i]));
	ok |= strchr(u, '@') && strchr(u, ':') && !strstr(u, "://");
	for (p = u; ok && *p; p++)
		ok = (unsigned char)*p > 0x20 && (unsigned char)*p != 0x7f;
	return ok;
}

/* A relative path inside the repository: no leading '/', no "..", no empty parts. */
static bool repo_path_ok(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/' || strstr(p, "//"))
		return false;
	while (*c) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);

		if ((len == 2 && !strncmp(c, "..", 2)) || (len == 1 && *c == '.'))
			return false;
		c += len + (e ? 1 : 0);
	}
	return !strpbrk(p, "\n\r\t");
}

static kiln_rc check_git(struct scheduler_request *r, struct kiln_err *err)
{
	const char *ref = r->git.ref;

	if (!git_url_ok(r->git.url))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'git.url': not an https, http, file or "
		                    "ssh URL");
	if (ref && (!*ref || strpbrk(ref, " \t\n:~^?*[\\") || strstr(ref, "..")))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'git.ref': not a branch, tag or "
		                    "commit");
	if (!r->git.spec || !repo_path_ok(r->git.spec) ||
	    !kiln_str_ends(kiln_str_from(r->git.spec), ".spec"))
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'git.spec': the spec's path in the "
		                    "repository (relative, ending in .spec)");
	if (r->spec_name)
		return kiln_err_set(err, KILN_EINVAL, "field 'spec_name': only with 'spec'");
	return KILN_OK;
}

static kiln_rc check_origin(struct scheduler_request *r, struct kiln_err *err)
{
	int origins = !!r->spec + r->has_srpm + r->has_git;

	if (origins != 1)
		return kiln_err_set(err, KILN_EINVAL,
		                    "give exactly one of the fields 'spec', 'srpm' "
		                    "and 'git' (%d given)",
		                    origins);
	if (r->has_git)
		return check_git(r, err);
	if (r->has_srpm && check_ref("srpm", &r->srpm, err))
		return KILN_EINVAL;
	if (r->spec && !r->spec_name)
		r->spec_name = "job.spec";
	if (r->has_srpm && r->spec_name)
		return kiln_err_set(err, KILN_EINVAL, "field 'spec_name': only with 'spec'");
	if (r->spec_name && (api_name_check(r->spec_name, strlen(r->spec_name), err) ||
	                     !kiln_str_ends(kiln_str_from(r->spec_name), ".spec"))) {
		kiln_err_clear(err);
		return kiln_err_set(err, KILN_EINVAL,
		                    "field 'spec_name': a file name ending in .spec");
	}
	return KILN_OK;
}

kiln_rc scheduler_request_check(struct scheduler_request *out, struct kiln_arena *a,
                                struct kiln_err *err)
{
	kiln_rc rc;

	rc = check_origin(out, err);
	if (!rc)
		rc = check_sources(out, err);
	if (!rc)
		rc = check_defines(out, a, err);
	if (!rc)
		rc = check_words("with", &out->with, "_-.", err);
	if (!rc)
		rc = check_words("without", &out->without, "_-.", err);
	if (!rc)
		rc = check_words("tags", &out->tags, "_-.:", err);
	if (!rc)
		rc = check_formats(out, err);
	if (!rc && out->arch && *out->arch && !word_ok(out->arch, "_", false))
		rc = kiln_err_set(err, KILN_EINVAL, "field 'arch': '%.64s' is not an architecture",
		                  out->arch);
	if (!rc && out->sign_key && *out->sign_key && !word_ok(out->sign_key, "_-.", false))
		rc = kiln_err_set(err, KILN_EINVAL, "field 'sign_key': not a key name");
	if (!rc && out->repository && *out->repository && !word_ok(out->repository, "_-.", false))
		rc = kiln_err_set(err, KILN_EINVAL, "field 'repository': not a repository name");
	if (!rc && out->root)
		rc = root_tag(out, a, err);
	if (!rc && out->root_lock && (!out->root || !api_sha256_valid(out->root_lock)))
		rc = kiln_err_set(err, KILN_EINVAL, "field 'root_lock': %s",
		                  out->root ? "not 64 lowercase hex digits"
		                            : "goes with field 'root'");
	return rc;
}

kiln_rc scheduler_request_parse(const void *body, size_t len, struct kiln_arena *a,
                                struct scheduler_request *out, struct kiln_err *err)
{
	kiln_rc rc;

	memset(out, 0, sizeof(*out));
	rc = api_json_decode(body, len, scheduler_request_fields, API_DECODE_STRICT, out, a, err);
	return rc ? rc : scheduler_request_check(out, a, err);
}
