/*
 * forgecfg.c - the forge sections of the scheduler's configuration (issue 26):
 *
 *   [forge NAME]              kind, api_url, secret_file, token_file
 *   [hook OWNER/PROJECT]      forge, spec, events, branches, root, arch, reruns, publish
 *   [webhook NAME]            url, secret_file, events (job.state publish)
 *
 * Kept apart from config.c's fixed sections: config.c only hands these headers and keys
 * over. Secrets stay in their files and are read when a delivery comes, so rotating one
 * needs no restart and the configuration never holds them.
 */
#include "util/util.h"

#include <ctype.h>

#include "scheduler/scheduler.h"

#define FORGE_MAX 64
#define HOOK_MAX 1024
#define WEBHOOK_MAX 64

/* The next blank-separated word of *rest (empty at the end). */
static struct kiln_str next_word(struct kiln_str *rest)
{
	struct kiln_str w;
	size_t i = 0;

	*rest = kiln_str_ltrim(*rest);
	while (i < rest->len && !isspace((unsigned char)rest->ptr[i]))
		i++;
	w = kiln_str_make(rest->ptr, i);
	*rest = kiln_str_make(rest->ptr + i, rest->len - i);
	return w;
}

bool scheduler_config_word_in(const char *list, const char *word)
{
	struct kiln_str rest = kiln_str_from(list), w;

	while ((w = next_word(&rest)).len)
		if (kiln_str_eq_cstr(w, word))
			return true;
	return false;
}

static bool forge_name_ok(const char *p, size_t len)
{
	size_t i;

	if (!len || len > 64)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && !strchr("_-.", p[i]))
			return false;
	return true;
}

/* "owner/project", GitLab's "group/sub/project" too: no empty, "." or ".." parts. */
static bool project_ok(const char *p, size_t len)
{
	size_t i, part = 0;
	bool slash = false;

	if (!len || len > 120)
		return false;
	for (i = 0; i <= len; i++) {
		if (i == len || p[i] == '/') {
			if (!part || (part == 1 && p[i - 1] == '.') ||
			    (part == 2 && p[i - 1] == '.' && p[i - 2] == '.'))
				return false;
			slash |= i < len;
			part = 0;
			continue;
		}
		if (!isalnum((unsigned char)p[i]) && !strchr("_-.", p[i]))
			return false;
		part++;
	}
	return slash;
}

bool scheduler_config_forge_section(const char *name, size_t len)
{
	if (len > 6 && !strncmp(name, "forge ", 6))
		return forge_name_ok(name + 6, len - 6);
	if (len > 5 && !strncmp(name, "hook ", 5))
		return project_ok(name + 5, len - 5);
	if (len > 8 && !strncmp(name, "webhook ", 8))
		return forge_name_ok(name + 8, len - 8);
	return false;
}

const struct scheduler_webhook_cfg *scheduler_config_webhook(const struct scheduler_config *cfg,
                                                             const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nwebhooks; i++)
		if (!strcmp(cfg->webhooks[i].name, name))
			return &cfg->webhooks[i];
	return NULL;
}

const struct scheduler_forge_cfg *scheduler_config_forge(const struct scheduler_config *cfg,
                                                         const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nforges; i++)
		if (!strcmp(cfg->forges[i].name, name))
			return &cfg->forges[i];
	return NULL;
}

const struct scheduler_hook_cfg *scheduler_config_hook(const struct scheduler_config *cfg,
                                                       const char *project)
{
	size_t i;

	for (i = 0; i < cfg->nhooks; i++)
		if (!strcmp(cfg->hooks[i].project, project))
			return &cfg->hooks[i];
	return NULL;
}

/* Grow an arena array by one zeroed element. */
static void *append(struct kiln_arena *a, void **arr, size_t *n, size_t es, size_t max,
                    struct kiln_err *err)
{
	char *grown;

	if (*n >= max) {
		kiln_err_set(err, KILN_ELIMIT, "more than %zu sections of this kind", max);
		return NULL;
	}
	grown = kiln_arena_array(a, *n + 1, es);
	if (!grown) {
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
		return NULL;
	}
	if (*n)
		memcpy(grown, *arr, *n * es);
	memset(grown + *n * es, 0, es);
	*arr = grown;
	return grown + (*n)++ * es;
}

static struct scheduler_forge_cfg *forge_get(struct scheduler_config *c, const char *name, int line,
                                             struct kiln_err *err)
{
	struct scheduler_forge_cfg *f =
	    (struct scheduler_forge_cfg *)scheduler_config_forge(c, name);

	if (f)
		return f;
	f = append(&c->arena, (void **)&c->forges, &c->nforges, sizeof(*f), FORGE_MAX, err);
	if (f) {
		f->name = kiln_arena_strdup(&c->arena, name);
		f->api_url = f->token_file = "";
		f->line = line;
	}
	return f && f->name ? f : NULL;
}

static struct scheduler_hook_cfg *hook_get(struct scheduler_config *c, const char *project,
                                           int line, struct kiln_err *err)
{
	struct scheduler_hook_cfg *h =
	    (struct scheduler_hook_cfg *)scheduler_config_hook(c, project);

	if (h)
		return h;
	h = append(&c->arena, (void **)&c->hooks, &c->nhooks, sizeof(*h), HOOK_MAX, err);
	if (h) {
		h->project = kiln_arena_strdup(&c->arena, project);
		h->branches = "";
		h->events = SCHED_HOOK_PUSH;
		h->line = line;
	}
	return h && h->project ? h : NULL;
}

static struct scheduler_webhook_cfg *webhook_get(struct scheduler_config *c, const char *name,
                                                 int line, struct kiln_err *err)
{
	struct scheduler_webhook_cfg *w =
	    (struct scheduler_webhook_cfg *)scheduler_config_webhook(c, name);

	if (w)
		return w;
	w = append(&c->arena, (void **)&c->webhooks, &c->nwebhooks, sizeof(*w), WEBHOOK_MAX, err);
	if (w) {
		w->name = kiln_arena_strdup(&c->arena, name);
		w->events = SCHED_WEBHOOK_JOB_STATE | SCHED_WEBHOOK_PUBLISH;
		w->line = line;
	}
	return w && w->name ? w : NULL;
}

static kiln_rc set_webhook(struct scheduler_webhook_cfg *w, const char *k, const char *v,
                           struct kiln_err *err)
{
	struct kiln_str rest = kiln_str_from(v), word;

	if (!strcmp(k, "url")) {
		if (strncmp(v, "https://", 8) && strncmp(v, "http://", 7))
			return kiln_err_set(err, KILN_EINVAL, "'%s' is not an http(s) URL", v);
		w->url = v;
	} else if (!strcmp(k, "secret_file")) {
		w->secret_file = v;
	} else if (!strcmp(k, "events")) {
		w->events = 0;
		while ((word = next_word(&rest)).len) {
			if (kiln_str_eq_cstr(word, "job.state"))
				w->events |= SCHED_WEBHOOK_JOB_STATE;
			else if (kiln_str_eq_cstr(word, "publish"))
				w->events |= SCHED_WEBHOOK_PUBLISH;
			else
				return kiln_err_set(err, KILN_EINVAL,
				                    "'" KILN_STR_FMT
				                    "' is not an event (job.state, "
				                    "publish)",
				                    KILN_STR_ARG(word));
		}
		if (!w->events)
			return kiln_err_set(err, KILN_EINVAL, "no event named");
	} else {
		return KILN_ENOTFOUND;
	}
	return KILN_OK;
}

static kiln_rc set_forge(struct scheduler_forge_cfg *f, const char *k, const char *v,
                         struct kiln_err *err)
{
	if (!strcmp(k, "kind")) {
		if (!strcmp(v, "github"))
			f->kind = SCHED_FORGE_GITHUB;
		else if (!strcmp(v, "gitlab"))
			f->kind = SCHED_FORGE_GITLAB;
		else if (!strcmp(v, "forgejo") || !strcmp(v, "gitea"))
			f->kind = SCHED_FORGE_FORGEJO;
		else
			return kiln_err_set(err, KILN_EINVAL, "'%s': github, gitlab or forgejo", v);
		f->has_kind = true;
	} else if (!strcmp(k, "api_url")) {
		if (*v && strncmp(v, "https://", 8) && strncmp(v, "http://", 7))
			return kiln_err_set(err, KILN_EINVAL, "'%s' is not an http(s) URL", v);
		f->api_url = v;
	} else if (!strcmp(k, "secret_file")) {
		f->secret_file = v;
	} else if (!strcmp(k, "token_file")) {
		f->token_file = v;
	} else {
		return KILN_ENOTFOUND;
	}
	return KILN_OK;
}

static kiln_rc parse_events(const char *v, unsigned *out, struct kiln_err *err)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
	    {"push", SCHED_HOOK_PUSH},
	    {"tag", SCHED_HOOK_TAG},
	    {"pull_request", SCHED_HOOK_PULL_REQUEST},
	    {"merge_request", SCHED_HOOK_PULL_REQUEST},
	    {"comment", SCHED_HOOK_COMMENT},
	};
	struct kiln_str rest = kiln_str_from(v), w;
	size_t i;

	*out = 0;
	while ((w = next_word(&rest)).len) {
		for (i = 0; i < KILN_ARRAY_SIZE(names); i++)
			if (kiln_str_eq_cstr(w, names[i].name))
				break;
		if (i == KILN_ARRAY_SIZE(names))
			return kiln_err_set(err, KILN_EINVAL,
			                    "'" KILN_STR_FMT "' is not an event (push, tag, "
			                    "pull_request, merge_request, comment)",
			                    KILN_STR_ARG(w));
		*out |= names[i].bit;
	}
	if (!*out)
		return kiln_err_set(err, KILN_EINVAL, "no event named");
	return KILN_OK;
}

static kiln_rc set_hook(struct scheduler_hook_cfg *h, const char *k, const char *v,
                        struct kiln_err *err)
{
	if (!strcmp(k, "forge"))
		h->forge = v;
	else if (!strcmp(k, "spec"))
		h->spec = v;
	else if (!strcmp(k, "events"))
		return parse_events(v, &h->events, err);
	else if (!strcmp(k, "branches"))
		h->branches = v;
	else if (!strcmp(k, "root"))
		h->root = *v ? v : NULL;
	else if (!strcmp(k, "arch"))
		h->arch = *v ? v : NULL;
	else if (!strcmp(k, "publish"))
		h->publish = *v ? v : NULL;
	else if (!strcmp(k, "project"))
		h->kiln_project = *v ? v : NULL;
	else if (!strcmp(k, "format")) {
		if (strcmp(v, "v4") && strcmp(v, "v6"))
			return kiln_err_set(err, KILN_EINVAL, "'%s' is not a format (v4, v6)", v);
		h->format = v;
	} else if (!strcmp(k, "reruns")) {
		if (util_parse_i64(v, strlen(v), 10, 0, 10, &h->reruns, NULL))
			return kiln_err_set(err, KILN_EINVAL, "'%s' is not a number from 0 to 10",
			                    v);
	} else
		return KILN_ENOTFOUND;
	return KILN_OK;
}

kiln_rc scheduler_config_forge_set(struct scheduler_config *c, const char *section, const char *key,
                                   const char *value, int line, struct kiln_err *err)
{
	if (!strncmp(section, "forge ", 6)) {
		struct scheduler_forge_cfg *f = forge_get(c, section + 6, line, err);

		if (!f)
			return KILN_ENOMEM;
		return key ? set_forge(f, key, value, err) : KILN_OK;
	}
	if (!strncmp(section, "hook ", 5)) {
		struct scheduler_hook_cfg *h = hook_get(c, section + 5, line, err);

		if (!h)
			return KILN_ENOMEM;
		return key ? set_hook(h, key, value, err) : KILN_OK;
	}
	if (!strncmp(section, "webhook ", 8)) {
		struct scheduler_webhook_cfg *w = webhook_get(c, section + 8, line, err);

		if (!w)
			return KILN_ENOMEM;
		return key ? set_webhook(w, key, value, err) : KILN_OK;
	}
	return KILN_ENOTFOUND;
}

/* Each blank-separated spec path: relative, ending in .spec. */
static bool specs_ok(const char *v)
{
	struct kiln_str rest = kiln_str_from(v), w;
	bool any = false;

	while ((w = next_word(&rest)).len) {
		if (w.ptr[0] == '/' || !kiln_str_ends(w, ".spec") || w.len > 1024)
			return false;
		any = true;
	}
	return any;
}

static kiln_rc check_forge(const struct scheduler_forge_cfg *f, struct kiln_err *err)
{
	if (!f->has_kind)
		return kiln_err_set(err, KILN_EINVAL, "[forge %s] needs kind", f->name);
	if (!f->secret_file || !*f->secret_file)
		return kiln_err_set(err, KILN_EINVAL,
		                    "[forge %s] needs secret_file (deliveries are verified)",
		                    f->name);
	return KILN_OK;
}

static kiln_rc check_hook(const struct scheduler_config *c, const struct scheduler_hook_cfg *h,
                          struct kiln_err *err)
{
	size_t i;

	if (!h->forge || !scheduler_config_forge(c, h->forge))
		return kiln_err_set(err, KILN_EINVAL,
		                    "[hook %s] needs forge, the name of a [forge]", h->project);
	if (!h->spec || !specs_ok(h->spec))
		return kiln_err_set(err, KILN_EINVAL,
		                    "[hook %s] needs spec, paths in the repository ending in .spec",
		                    h->project);
	if (!h->publish)
		return KILN_OK;
	for (i = 0; i < c->nrepos; i++)
		if (!strcmp(c->repos[i].name, h->publish))
			return KILN_OK;
	return kiln_err_set(err, KILN_EINVAL, "[hook %s] publish: no repository '%s'", h->project,
	                    h->publish);
}

kiln_rc scheduler_config_forge_check(const struct scheduler_config *c, const char *name,
                                     struct kiln_err *err)
{
	kiln_rc rc;
	size_t i;

	for (i = 0; i < c->nforges; i++) {
		rc = check_forge(&c->forges[i], err);
		if (rc) {
			kiln_err_locate(err, name, c->forges[i].line, 0);
			return rc;
		}
	}
	for (i = 0; i < c->nhooks; i++) {
		rc = check_hook(c, &c->hooks[i], err);
		if (rc) {
			kiln_err_locate(err, name, c->hooks[i].line, 0);
			return rc;
		}
	}
	for (i = 0; i < c->nwebhooks; i++) {
		const struct scheduler_webhook_cfg *w = &c->webhooks[i];

		if (!w->url || !w->secret_file || !*w->secret_file) {
			kiln_err_set(err, KILN_EINVAL,
			             "[webhook %s] needs url and secret_file (events are signed)",
			             w->name);
			kiln_err_locate(err, name, w->line, 0);
			return KILN_EINVAL;
		}
	}
	return KILN_OK;
}
