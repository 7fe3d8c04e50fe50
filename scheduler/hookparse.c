/*
 * hookparse.c - the payloads of forge webhooks (issue 26): push, tag, pull request (GitLab:
 * merge request) and retrigger comment deliveries of GitHub, GitLab and Forgejo/Gitea.
 *
 * One lenient field table covers the three forges (their names do not clash): unknown
 * fields are skipped, size and depth are api_json_decode's bounds, a field of the wrong
 * type is a 400 naming it. Only what a build needs is kept: the project, the clone URL,
 * the commit, the ref and the branch a filter looks at.
 */
#include "util/util.h"

#include <stdarg.h>

#include "scheduler/scheduler_int.h"
#include "scheduler/http_int.h"

#define RETRY_WORD "/kiln retry"

struct p_repo {
	const char *full_name, *clone_url;              /* GitHub, Forgejo */
	const char *path_with_namespace, *git_http_url; /* GitLab */
};
struct p_commit {
	const char *id;
};
struct p_side { /* GitHub, Forgejo: pull_request.head and .base */
	const char *sha, *ref;
	struct p_repo repo;
	bool has_repo;
};
struct p_pr {
	struct p_side head, base;
};
struct p_issue {
	int64_t number;
	char pr; /* pull_request: only its presence matters */
	bool is_pr;
};
struct p_comment {
	const char *body;
};
struct p_attrs { /* GitLab object_attributes and merge_request */
	const char *action, *target_branch, *note, *noteable_type;
	int64_t iid;
	struct p_commit last_commit;
	struct p_repo source;
};
struct payload {
	const char *object_kind, *ref, *after, *checkout_sha, *action;
	bool deleted, is_pull;
	int64_t number;
	struct p_repo repository, project;
	struct p_pr pull_request;
	bool has_pr;
	struct p_issue issue;
	struct p_comment comment;
	struct p_attrs object_attributes, merge_request;
};

#define S(st, f, max)                                                                              \
	{                                                                                          \
#f, API_F_STR, false, offsetof(st, f), 0, max, NULL, 0, 0                          \
	}
#define N(st, f)                                                                                   \
	{                                                                                          \
#f, API_F_INT, false, offsetof(st, f), 0, INT64_MAX, NULL, 0, 0                    \
	}
#define O(st, f, sub, has)                                                                         \
	{                                                                                          \
#f, API_F_OBJ, false, offsetof(st, f), 0, 0, sub, 0, has                           \
	}

static const struct api_field repo_fields[] = {
    S(struct p_repo, full_name, 255),
    S(struct p_repo, clone_url, 4096),
    S(struct p_repo, path_with_namespace, 255),
    S(struct p_repo, git_http_url, 4096),
    API_FIELD_END,
};
static const struct api_field commit_fields[] = {S(struct p_commit, id, 64), API_FIELD_END};
static const struct api_field none_fields[] = {API_FIELD_END};
static const struct api_field side_fields[] = {
    S(struct p_side, sha, 64),
    S(struct p_side, ref, 255),
    O(struct p_side, repo, repo_fields, offsetof(struct p_side, has_repo)),
    API_FIELD_END,
};
static const struct api_field pr_fields[] = {
    O(struct p_pr, head, side_fields, 0),
    O(struct p_pr, base, side_fields, 0),
    API_FIELD_END,
};
static const struct api_field issue_fields[] = {
    N(struct p_issue, number),
    {"pull_request", API_F_OBJ, false, offsetof(struct p_issue, pr), 0, 0, none_fields, 0,
     offsetof(struct p_issue, is_pr)},
    API_FIELD_END,
};
static const struct api_field comment_fields[] = {S(struct p_comment, body, 65536), API_FIELD_END};
static const struct api_field attrs_fields[] = {
    S(struct p_attrs, action, 64),
    S(struct p_attrs, target_branch, 255),
    S(struct p_attrs, note, 65536),
    S(struct p_attrs, noteable_type, 64),
    N(struct p_attrs, iid),
    O(struct p_attrs, last_commit, commit_fields, 0),
    O(struct p_attrs, source, repo_fields, 0),
    API_FIELD_END,
};
static const struct api_field payload_fields[] = {
    S(struct payload, object_kind, 64),
    S(struct payload, ref, 255),
    S(struct payload, after, 64),
    S(struct payload, checkout_sha, 64),
    S(struct payload, action, 64),
    {"deleted", API_F_BOOL, false, offsetof(struct payload, deleted), 0, 0, NULL, 0, 0},
    {"is_pull", API_F_BOOL, false, offsetof(struct payload, is_pull), 0, 0, NULL, 0, 0},
    N(struct payload, number),
    O(struct payload, repository, repo_fields, 0),
    O(struct payload, project, repo_fields, 0),
    O(struct payload, pull_request, pr_fields, offsetof(struct payload, has_pr)),
    O(struct payload, issue, issue_fields, 0),
    O(struct payload, comment, comment_fields, 0),
    O(struct payload, object_attributes, attrs_fields, 0),
    O(struct payload, merge_request, attrs_fields, 0),
    API_FIELD_END,
};

static const char *nz(const char *s)
{
	return s ? s : "";
}

static kiln_rc ignore(struct scheduler_hook_payload *out, struct kiln_arena *a, const char *fmt,
                      ...) KILN_PRINTF(3, 4);
static kiln_rc ignore(struct scheduler_hook_payload *out, struct kiln_arena *a, const char *fmt,
                      ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	out->kind = 0;
	out->ignored = kiln_arena_strdup(a, msg);
	return out->ignored ? KILN_OK : KILN_ENOMEM;
}

/* Does the comment ask for a retrigger: a line that is "/kiln retry"? */
static bool retry_asked(const char *body)
{
	struct kiln_str rest = kiln_str_from(body), line;
	bool found = true;

	while (found && rest.len) {
		rest = kiln_str_split(rest, '\n', &line, &found);
		if (kiln_str_eq_cstr(kiln_str_trim(line), RETRY_WORD))
			return true;
	}
	return false;
}

static kiln_rc need(const char *v, const char *field, struct kiln_err *err)
{
	if (!v || !*v)
		return kiln_err_set(err, KILN_EINVAL, "field '%s': missing", field);
	return KILN_OK;
}

static kiln_rc need_commit(const char *v, const char *field, struct kiln_err *err)
{
	if (!scheduler_git_commit_valid(v))
		return kiln_err_set(err, KILN_EINVAL, "field '%s': not a full commit id", field);
	return KILN_OK;
}

/* push: a branch or a tag (all three forges name it by ref and the new commit). */
static kiln_rc push_event(const struct payload *p, const char *sha, const char *sha_field,
                          struct scheduler_hook_payload *out, struct kiln_arena *a,
                          struct kiln_err *err)
{
	kiln_rc rc = need(p->ref, "ref", err);

	if (rc)
		return rc;
	out->ref = p->ref;
	if (p->deleted || !sha || !sha[strspn(sha, "0")]) /* all zeros: the ref is gone */
		return ignore(out, a, "%s was deleted", p->ref);
	rc = need_commit(sha, sha_field, err);
	if (rc)
		return rc;
	out->sha = sha;
	if (!strncmp(p->ref, "refs/tags/", 10)) {
		out->kind = SCHED_HOOK_TAG;
		return KILN_OK;
	}
	if (strncmp(p->ref, "refs/heads/", 11))
		return ignore(out, a, "ref '%s' is no branch or tag", p->ref);
	out->kind = SCHED_HOOK_PUSH;
	out->branch = p->ref + 11;
	return KILN_OK;
}

/* GitHub and Forgejo: pull_request and issue_comment. */
static kiln_rc hub_pull(const struct payload *p, struct scheduler_hook_payload *out,
                        struct kiln_arena *a, struct kiln_err *err)
{
	const char *act = nz(p->action);
	const struct p_side *h = &p->pull_request.head;
	kiln_rc rc;

	if (!p->has_pr)
		return need(NULL, "pull_request", err);
	if (strcmp(act, "opened") && strcmp(act, "synchronize") && strcmp(act, "synchronized") &&
	    strcmp(act, "reopened"))
		return ignore(out, a, "pull request action '%s' is not built", act);
	rc = need_commit(h->sha, "pull_request.head.sha", err);
	if (rc)
		return rc;
	out->kind = SCHED_HOOK_PULL_REQUEST;
	out->sha = h->sha;
	out->number = p->number;
	out->branch = nz(p->pull_request.base.ref);
	/* a fork's clone URL; the base repository's when the fork is gone */
	if (h->has_repo && h->repo.clone_url)
		out->url = h->repo.clone_url;
	out->ref = kiln_arena_printf(a, "pull/%lld", (long long)p->number);
	return out->ref ? KILN_OK : KILN_ENOMEM;
}

static kiln_rc hub_comment(const struct payload *p, struct scheduler_hook_payload *out,
                           struct kiln_arena *a)
{
	if (strcmp(nz(p->action), "created"))
		return ignore(out, a, "comment action '%s' is not built", nz(p->action));
	if (!p->issue.is_pr && !p->is_pull)
		return ignore(out, a, "%s", "a comment on an issue, not a pull request");
	if (!retry_asked(nz(p->comment.body)))
		return ignore(out, a, "%s", "a comment without '" RETRY_WORD "'");
	out->kind = SCHED_HOOK_COMMENT;
	out->number = p->issue.number;
	out->ref = kiln_arena_printf(a, "pull/%lld", (long long)p->issue.number);
	return out->ref ? KILN_OK : KILN_ENOMEM;
}

static kiln_rc hub_event(const char *event, const struct payload *p,
                         struct scheduler_hook_payload *out, struct kiln_arena *a,
                         struct kiln_err *err)
{
	kiln_rc rc;

	out->project = p->repository.full_name;
	out->url = p->repository.clone_url;
	if (!strcmp(event, "push"))
		rc = push_event(p, p->after, "after", out, a, err);
	else if (!strcmp(event, "pull_request"))
		rc = hub_pull(p, out, a, err);
	else if (!strcmp(event, "issue_comment") || !strcmp(event, "pull_request_comment"))
		rc = hub_comment(p, out, a);
	else
		return ignore(out, a, "event '%s' is not handled", event);
	if (!rc)
		rc = need(out->project, "repository.full_name", err);
	if (!rc)
		rc = need(out->url, "repository.clone_url", err);
	return rc;
}

static kiln_rc lab_mr(const struct p_attrs *m, const char *action,
                      struct scheduler_hook_payload *out, struct kiln_arena *a,
                      struct kiln_err *err)
{
	kiln_rc rc;

	if (action && strcmp(action, "open") && strcmp(action, "update") &&
	    strcmp(action, "reopen"))
		return ignore(out, a, "merge request action '%s' is not built", action);
	rc = need_commit(m->last_commit.id, "object_attributes.last_commit.id", err);
	if (rc)
		return rc;
	out->sha = m->last_commit.id;
	out->number = m->iid;
	out->branch = nz(m->target_branch);
	if (m->source.git_http_url)
		out->url = m->source.git_http_url;
	out->ref = kiln_arena_printf(a, "pull/%lld", (long long)m->iid);
	return out->ref ? KILN_OK : KILN_ENOMEM;
}

static kiln_rc lab_event(const struct payload *p, struct scheduler_hook_payload *out,
                         struct kiln_arena *a, struct kiln_err *err)
{
	const char *kind = nz(p->object_kind);
	const struct p_attrs *o = &p->object_attributes;
	kiln_rc rc;

	out->project = p->project.path_with_namespace;
	out->url = p->project.git_http_url;
	if (!strcmp(kind, "push") || !strcmp(kind, "tag_push")) {
		rc = push_event(p, p->checkout_sha ? p->checkout_sha : p->after, "checkout_sha",
		                out, a, err);
	} else if (!strcmp(kind, "merge_request")) {
		rc = lab_mr(o, nz(o->action), out, a, err);
		if (!rc && !out->ignored)
			out->kind = SCHED_HOOK_PULL_REQUEST;
	} else if (!strcmp(kind, "note")) {
		if (strcmp(nz(o->noteable_type), "MergeRequest"))
			return ignore(out, a, "%s", "a comment on no merge request");
		if (!retry_asked(nz(o->note)))
			return ignore(out, a, "%s", "a comment without '" RETRY_WORD "'");
		rc = lab_mr(&p->merge_request, NULL, out, a, err);
		if (!rc)
			out->kind = SCHED_HOOK_COMMENT;
	} else {
		return ignore(out, a, "event '%s' is not handled", kind);
	}
	if (!rc)
		rc = need(out->project, "project.path_with_namespace", err);
	if (!rc)
		rc = need(out->url, "project.git_http_url", err);
	return rc;
}

kiln_rc scheduler_hook_parse(enum scheduler_forge_kind kind, const char *event, const void *body,
                             size_t len, struct kiln_arena *a, struct scheduler_hook_payload *out,
                             struct kiln_err *err)
{
	struct payload p;
	kiln_rc rc;

	memset(&p, 0, sizeof(p));
	memset(out, 0, sizeof(*out));
	out->sha = out->ref = out->branch = "";
	rc = api_json_decode(body, len, payload_fields, 0, &p, a, err);
	if (rc)
		return rc;
	if (kind == SCHED_FORGE_GITLAB)
		return lab_event(&p, out, a, err);
	if (!event || !*event)
		return kiln_err_set(err, KILN_EINVAL, "header '%s': missing",
		                    kind == SCHED_FORGE_GITHUB ? "X-GitHub-Event"
		                                               : "X-Gitea-Event");
	return hub_event(event, &p, out, a, err);
}
