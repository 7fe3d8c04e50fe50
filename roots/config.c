/*
 * config.c - root configurations: a small INI file read line by line with bounds.
 *
 * [root] names the arch, the base set and options, [macros] the macros a spec is parsed
 * with, [repo NAME] each repository. Lines starting with whitespace continue the value of
 * the line before (as dnf's and Python's INI readers do), so a long install list can be
 * folded. Unknown sections and keys are errors: a typo in gpgcheck must not switch
 * signature checks off silently.
 */
#include "util/util.h"

#include <dirent.h>
#include <glob.h>

#include "macro/macro.h"
#include "roots/roots.h"
#include "roots/roots_int.h"

#include <ctype.h>

#define SECTION_NONE 0
#define SECTION_ROOT 1
#define SECTION_MACROS 2
#define SECTION_REPO 3

struct parser {
	struct roots_config *c;
	const char *name;
	int section;
	struct roots_repo_config *repo; /* the current [repo NAME] */
	bool have_arch;
	/* The key of the value being continued (install only). */
	bool continue_install;
	size_t cap_install, cap_macros, cap_repos;
};

void roots_config_init(struct roots_config *c)
{
	memset(c, 0, sizeof(*c));
	kiln_arena_init(&c->arena, ROOTS_CONFIG_MAX_BYTES * 8);
	c->name = "";
	c->path = "";
}

void roots_config_release(struct roots_config *c)
{
	if (!c)
		return;
	kiln_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

static bool name_char(char ch, const char *extra)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr(extra, ch));
}

bool roots_name_ok(struct kiln_str s, const char *extra)
{
	size_t i;

	if (!s.len || s.len > 128)
		return false;
	for (i = 0; i < s.len; i++)
		if (!name_char(s.ptr[i], extra))
			return false;
	return true;
}

static kiln_rc parse_bool(struct kiln_str v, bool *out, struct kiln_err *err)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (v.len == strlen(yes[i]) && !strncasecmp(v.ptr, yes[i], v.len)) {
			*out = true;
			return KILN_OK;
		}
		if (v.len == strlen(no[i]) && !strncasecmp(v.ptr, no[i], v.len)) {
			*out = false;
			return KILN_OK;
		}
	}
	return kiln_err_set(err, KILN_ESYNTAX,
	                    "expected a boolean (1/0, yes/no, true/false), got '" KILN_STR_FMT "'",
	                    KILN_STR_ARG(v));
}

/* ---- [root] install: words, with "NAME OP EVR" and parenthesised rich deps kept whole ---- */

static bool is_op(struct kiln_str w)
{
	return kiln_str_eq_cstr(w, "<") || kiln_str_eq_cstr(w, ">") || kiln_str_eq_cstr(w, "=") ||
	       kiln_str_eq_cstr(w, "<=") || kiln_str_eq_cstr(w, ">=") || kiln_str_eq_cstr(w, "==");
}

static struct kiln_str next_word(struct kiln_str *rest)
{
	struct kiln_str s = kiln_str_ltrim(*rest);
	size_t i = 0;

	while (i < s.len && !isspace((unsigned char)s.ptr[i]) && s.ptr[i] != ',')
		i++;
	*rest = kiln_str_make(s.ptr + i, s.len - i);
	/* Commas separate like spaces do. */
	while (rest->len && (rest->ptr[0] == ',' || isspace((unsigned char)rest->ptr[0])))
		*rest = kiln_str_make(rest->ptr + 1, rest->len - 1);
	return kiln_str_make(s.ptr, i);
}

/* A rich dependency: from '(' to its matching ')'. */
static kiln_rc rich_word(struct kiln_str *rest, struct kiln_str *out, struct kiln_err *err)
{
	struct kiln_str s = kiln_str_ltrim(*rest);
	size_t i, depth = 0;

	for (i = 0; i < s.len; i++) {
		if (s.ptr[i] == '(') {
			if (++depth > ROOTS_RICH_MAX_DEPTH)
				return kiln_err_set(err, KILN_ELIMIT,
				                    "rich dependency nested too deeply");
		} else if (s.ptr[i] == ')' && --depth == 0) {
			break;
		}
	}
	if (i == s.len)
		return kiln_err_set(err, KILN_ESYNTAX, "unbalanced '(' in install");
	*out = kiln_str_make(s.ptr, i + 1);
	*rest = kiln_str_make(s.ptr + i + 1, s.len - i - 1);
	while (rest->len && (rest->ptr[0] == ',' || isspace((unsigned char)rest->ptr[0])))
		*rest = kiln_str_make(rest->ptr + 1, rest->len - 1);
	return KILN_OK;
}

static kiln_rc install_add(struct parser *p, struct kiln_str item, struct kiln_err *err)
{
	struct roots_config *c = p->c;
	char *s;

	if (c->ninstall >= ROOTS_CONFIG_MAX_INSTALL)
		return kiln_err_set(err, KILN_ELIMIT, "over %d install entries",
		                    ROOTS_CONFIG_MAX_INSTALL);
	if (memchr(item.ptr, '\0', item.len))
		return kiln_err_set(err, KILN_ESYNTAX, "a NUL byte in install");
	if (item.len == 1 && item.ptr[0] == '@')
		return kiln_err_set(err, KILN_ESYNTAX, "'@' without a group name in install");
	s = kiln_arena_strndup(&c->arena, item.ptr, item.len);
	if (!s || !kiln_arena_strv_add(&c->arena, &c->install, &c->ninstall, &p->cap_install, s))
		return kiln_arena_finish(&c->arena, err);
	return KILN_OK;
}

static kiln_rc parse_install(struct parser *p, struct kiln_str v, struct kiln_err *err)
{
	struct kiln_str rest = v, w, op, evr;
	kiln_rc rc = KILN_OK;

	while (!rc && kiln_str_trim(rest).len) {
		rest = kiln_str_ltrim(rest);
		if (rest.ptr[0] == '(') {
			rc = rich_word(&rest, &w, err);
			if (!rc)
				rc = install_add(p, w, err);
			continue;
		}
		w = next_word(&rest);
		if (is_op(w))
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "'" KILN_STR_FMT
			                    "' without a name before it in install",
			                    KILN_STR_ARG(w));
		/* "NAME OP EVR" stays one request. */
		{
			struct kiln_str look = rest;

			op = next_word(&look);
			if (is_op(op)) {
				evr = next_word(&look);
				if (!evr.len || is_op(evr))
					return kiln_err_set(err, KILN_ESYNTAX,
					                    "'" KILN_STR_FMT " " KILN_STR_FMT
					                    "' needs a version after it in install",
					                    KILN_STR_ARG(w), KILN_STR_ARG(op));
				w = kiln_str_make(w.ptr, (size_t)(evr.ptr + evr.len - w.ptr));
				rest = look;
			}
		}
		rc = install_add(p, w, err);
	}
	return rc;
}

/* ---- values ---------------------------------------------------------------------------- */

static char *arena_str(struct parser *p, struct kiln_str v)
{
	return kiln_arena_strndup(&p->c->arena, v.ptr, v.len);
}

static kiln_rc set_root(struct parser *p, struct kiln_str k, struct kiln_str v,
                        struct kiln_err *err)
{
	struct roots_config *c = p->c;

	if (kiln_str_eq_cstr(k, "arch")) {
		if (!roots_name_ok(v, "_"))
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "arch: malformed architecture '" KILN_STR_FMT "'",
			                    KILN_STR_ARG(v));
		c->arch = arena_str(p, v);
		p->have_arch = true;
	} else if (kiln_str_eq_cstr(k, "install")) {
		p->continue_install = true;
		return parse_install(p, v, err);
	} else if (kiln_str_eq_cstr(k, "weak_deps") || kiln_str_eq_cstr(k, "install_weak_deps")) {
		return parse_bool(v, &c->weak_deps, err);
	} else if (kiln_str_eq_cstr(k, "releasever")) {
		if (!roots_name_ok(v, "._-~+"))
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "releasever: malformed value '" KILN_STR_FMT "'",
			                    KILN_STR_ARG(v));
		c->releasever = arena_str(p, v);
	} else {
		return kiln_err_set(err, KILN_ESYNTAX,
		                    "unknown key '" KILN_STR_FMT "' in [root] (arch, install, "
		                    "weak_deps, releasever)",
		                    KILN_STR_ARG(k));
	}
	return kiln_arena_finish(&c->arena, err);
}

static kiln_rc set_macro(struct parser *p, struct kiln_str k, struct kiln_str v,
                         struct kiln_err *err)
{
	struct roots_config *c = p->c;
	struct roots_macro *m;
	size_t i;

	if (k.len && k.ptr[0] == '%')
		k = kiln_str_make(k.ptr + 1, k.len - 1);
	if (!roots_name_ok(k, "_") || (k.ptr[0] >= '0' && k.ptr[0] <= '9'))
		return kiln_err_set(err, KILN_ESYNTAX, "malformed macro name '" KILN_STR_FMT "'",
		                    KILN_STR_ARG(k));
	for (i = 0; i < c->nmacros; i++)
		if (kiln_str_eq_cstr(k, c->macros[i].name))
			return kiln_err_set(err, KILN_ESYNTAX, "macro '" KILN_STR_FMT "' set twice",
			                    KILN_STR_ARG(k));
	if (c->nmacros >= ROOTS_CONFIG_MAX_MACROS)
		return kiln_err_set(err, KILN_ELIMIT, "over %d macros", ROOTS_CONFIG_MAX_MACROS);
	if (c->nmacros == p->cap_macros) {
		size_t cap = p->cap_macros ? 2 * p->cap_macros : 16;
		struct roots_macro *nv = kiln_arena_array(&c->arena, cap, sizeof(*nv));

		if (!nv)
			return kiln_arena_finish(&c->arena, err);
		if (c->nmacros)
			memcpy(nv, c->macros, c->nmacros * sizeof(*nv));
		c->macros = nv;
		p->cap_macros = cap;
	}
	m = &c->macros[c->nmacros];
	m->name = arena_str(p, k);
	m->value = arena_str(p, v);
	if (!m->name || !m->value)
		return kiln_arena_finish(&c->arena, err);
	c->nmacros++;
	return KILN_OK;
}

static kiln_rc check_url(struct kiln_str v, const char *what, struct kiln_err *err)
{
	if (!(kiln_str_starts(v, "file:///") || kiln_str_starts(v, "http://") ||
	      kiln_str_starts(v, "https://")))
		return kiln_err_set(err, KILN_ESYNTAX,
		                    "%s: '" KILN_STR_FMT
		                    "' is not a file:///, http:// or https:// URL",
		                    what, KILN_STR_ARG(v));
	if (v.len > KILN_LIMIT_URL)
		return kiln_err_set(err, KILN_ELIMIT, "%s: URL over %zu bytes", what,
		                    (size_t)KILN_LIMIT_URL);
	for (size_t i = 0; i < v.len; i++)
		if ((unsigned char)v.ptr[i] <= ' ' || v.ptr[i] == 0x7f)
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "%s: a space or control character in the URL", what);
	return KILN_OK;
}

static kiln_rc set_repo(struct parser *p, struct kiln_str k, struct kiln_str v,
                        struct kiln_err *err)
{
	struct roots_repo_config *r = p->repo;
	struct kiln_err e = KILN_ERR_INIT;
	int64_t prio;

	if (kiln_str_eq_cstr(k, "baseurl")) {
		kiln_rc rc = check_url(v, "baseurl", err);

		if (rc)
			return rc;
		while (v.len > 1 && v.ptr[v.len - 1] == '/')
			v.len--;
		r->baseurl = arena_str(p, v);
	} else if (kiln_str_eq_cstr(k, "gpgkey")) {
		kiln_rc rc = check_url(v, "gpgkey", err);

		if (rc)
			return rc;
		r->gpgkey = arena_str(p, v);
	} else if (kiln_str_eq_cstr(k, "gpgcheck")) {
		return parse_bool(v, &r->gpgcheck, err);
	} else if (kiln_str_eq_cstr(k, "repo_gpgcheck")) {
		return parse_bool(v, &r->repo_gpgcheck, err);
	} else if (kiln_str_eq_cstr(k, "priority")) {
		if (util_parse_i64(v.ptr, v.len, 10, 1, 99999, &prio, &e))
			return kiln_err_set(err, KILN_ESYNTAX, "priority: %s", e.msg);
		r->priority = (int)prio;
	} else if (kiln_str_eq_cstr(k, "name")) {
		return KILN_OK; /* dnf's display name: kiln names repositories by their section */
	} else {
		return kiln_err_set(err, KILN_ESYNTAX,
		                    "unknown key '" KILN_STR_FMT "' in [repo %s] (baseurl, gpgkey, "
		                    "gpgcheck, repo_gpgcheck, priority, name)",
		                    KILN_STR_ARG(k), r->name);
	}
	return kiln_arena_finish(&p->c->arena, err);
}

/* ---- sections -------------------------------------------------------------------------- */

static kiln_rc repo_begin(struct parser *p, struct kiln_str name, int line, struct kiln_err *err)
{
	struct roots_config *c = p->c;
	size_t i;

	if (!roots_name_ok(name, "-_.:"))
		return kiln_err_set(err, KILN_ESYNTAX,
		                    "malformed repository name '" KILN_STR_FMT "'",
		                    KILN_STR_ARG(name));
	for (i = 0; i < c->nrepos; i++)
		if (kiln_str_eq_cstr(name, c->repos[i].name))
			return kiln_err_set(err, KILN_ESYNTAX,
			                    "[repo " KILN_STR_FMT "] given twice",
			                    KILN_STR_ARG(name));
	if (c->nrepos >= ROOTS_CONFIG_MAX_REPOS)
		return kiln_err_set(err, KILN_ELIMIT, "over %d repositories",
		                    ROOTS_CONFIG_MAX_REPOS);
	if (c->nrepos == p->cap_repos) {
		size_t cap = p->cap_repos ? 2 * p->cap_repos : 4;
		struct roots_repo_config *nv = kiln_arena_array(&c->arena, cap, sizeof(*nv));

		if (!nv)
			return kiln_arena_finish(&c->arena, err);
		if (c->nrepos)
			memcpy(nv, c->repos, c->nrepos * sizeof(*nv));
		c->repos = nv;
		p->cap_repos = cap;
	}
	p->repo = &c->repos[c->nrepos++];
	p->repo->name = arena_str(p, name);
	p->repo->gpgcheck = true;
	p->repo->repo_gpgcheck = true;
	p->repo->priority = 99;
	p->repo->line = line;
	p->section = SECTION_REPO;
	return kiln_arena_finish(&c->arena, err);
}

static kiln_rc section_begin(struct parser *p, struct kiln_str line, int lineno,
                             struct kiln_err *err)
{
	struct kiln_str name = kiln_str_trim(kiln_str_make(line.ptr + 1, line.len - 1));
	struct kiln_str kind, rest;
	bool found;

	if (!kiln_str_ends(name, "]"))
		return kiln_err_set(err, KILN_ESYNTAX, "a section header needs a closing ']'");
	name = kiln_str_trim(kiln_str_make(name.ptr, name.len - 1));
	rest = kiln_str_trim(kiln_str_split(name, ' ', &kind, &found));
	p->repo = NULL;
	if (!found && kiln_str_eq_cstr(name, "root")) {
		p->section = SECTION_ROOT;
		return KILN_OK;
	}
	if (!found && kiln_str_eq_cstr(name, "macros")) {
		p->section = SECTION_MACROS;
		return KILN_OK;
	}
	if (found && kiln_str_eq_cstr(kind, "repo"))
		return repo_begin(p, rest, lineno, err);
	return kiln_err_set(err, KILN_ESYNTAX,
	                    "unknown section '[" KILN_STR_FMT "]' ([root], [macros], [repo NAME])",
	                    KILN_STR_ARG(name));
}

static kiln_rc key_value(struct parser *p, struct kiln_str line, struct kiln_err *err)
{
	struct kiln_str key, value;
	bool found;

	value = kiln_str_trim(kiln_str_split(line, '=', &key, &found));
	key = kiln_str_trim(key);
	p->continue_install = false;
	if (!found || !key.len)
		return kiln_err_set(err, KILN_ESYNTAX, "expected 'key = value'");
	if (memchr(value.ptr, '\0', value.len))
		return kiln_err_set(err, KILN_ESYNTAX, "a NUL byte in the value");
	switch (p->section) {
	case SECTION_ROOT:
		return set_root(p, key, value, err);
	case SECTION_MACROS:
		return set_macro(p, key, value, err);
	case SECTION_REPO:
		return set_repo(p, key, value, err);
	default:
		return kiln_err_set(err, KILN_ESYNTAX, "'" KILN_STR_FMT "' outside a [section]",
		                    KILN_STR_ARG(key));
	}
}

static kiln_rc config_line(struct parser *p, struct kiln_str raw, int lineno, struct kiln_err *err)
{
	struct kiln_str line = kiln_str_trim(raw);

	if (!line.len || line.ptr[0] == '#' || line.ptr[0] == ';')
		return KILN_OK;
	/* An indented line continues the value before it. */
	if (isspace((unsigned char)raw.ptr[0]) && p->continue_install)
		return parse_install(p, line, err);
	if (isspace((unsigned char)raw.ptr[0]) && line.ptr[0] != '[' &&
	    !memchr(line.ptr, '=', line.len))
		return kiln_err_set(err, KILN_ESYNTAX, "only install continues on indented lines");
	if (line.ptr[0] == '[') {
		p->continue_install = false;
		return section_begin(p, line, lineno, err);
	}
	return key_value(p, line, err);
}

static kiln_rc config_check(struct parser *p, struct kiln_err *err)
{
	struct roots_config *c = p->c;
	size_t i;

	if (!p->have_arch)
		return kiln_err_set(err, KILN_ESYNTAX, "[root] has no arch");
	for (i = 0; i < c->nrepos; i++) {
		struct roots_repo_config *r = &c->repos[i];
		kiln_rc rc;

		if (!r->baseurl)
			rc = kiln_err_set(err, KILN_ESYNTAX, "[repo %s] has no baseurl", r->name);
		else if ((r->gpgcheck || r->repo_gpgcheck) && !r->gpgkey)
			rc = kiln_err_set(
			    err, KILN_ESYNTAX,
			    "[repo %s] checks signatures (gpgcheck, repo_gpgcheck) but "
			    "has no gpgkey",
			    r->name);
		else
			continue;
		kiln_err_locate(err, p->name, r->line, 0);
		return rc;
	}
	return KILN_OK;
}

/* dnf's variables in URLs: $basearch, $arch (the root's arch) and $releasever. NULL with
 * err set when one cannot be substituted. */
static char *substitute(struct roots_config *c, const char *url, struct kiln_err *err)
{
	static const char *const vars[] = {"$basearch", "$arch", "$releasever"};
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_URL);
	const char *p = url;
	char *out = NULL;

	while (*p) {
		size_t i, hit = 3;

		for (i = 0; *p == '$' && i < 3 && hit == 3; i++)
			if (!strncmp(p, vars[i], strlen(vars[i])))
				hit = i;
		if (hit == 2 && !c->releasever) {
			kiln_err_set(err, KILN_ESYNTAX,
			             "'%s' uses $releasever but [root] sets none", url);
			goto out;
		}
		if (hit < 3) {
			kiln_buf_addstr(&b, hit < 2 ? c->arch : c->releasever);
			p += strlen(vars[hit]);
		} else {
			kiln_buf_addch(&b, *p++);
		}
	}
	if (kiln_buf_finish(&b, err))
		goto out;
	out = kiln_arena_strdup(&c->arena, b.ptr);
	if (kiln_arena_finish(&c->arena, err))
		out = NULL;
out:
	kiln_buf_release(&b);
	return out;
}

static kiln_rc config_substitute(struct roots_config *c, const char *name, struct kiln_err *err)
{
	struct kiln_err e = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < c->nrepos; i++) {
		struct roots_repo_config *r = &c->repos[i];

		r->baseurl = substitute(c, r->baseurl, &e);
		if (r->baseurl && r->gpgkey)
			r->gpgkey = substitute(c, r->gpgkey, &e);
		if (e.code) {
			kiln_err_wrap(&e, "[repo %s]", r->name);
			kiln_err_locate(&e, name, r->line, 0);
			kiln_err_merge(err, &e);
			return e.code;
		}
	}
	return KILN_OK;
}

kiln_rc roots_config_from_mem(struct roots_config *c, const char *name, const char *data,
                              size_t len, struct kiln_err *err)
{
	struct parser p = {.c = c, .name = name};
	struct kiln_str rest = kiln_str_make(data, len), line;
	bool found = true;
	int lineno = 0;
	kiln_rc rc;
	struct kiln_err local = KILN_ERR_INIT;

	if (!err)
		err = &local; /* the helpers read err->code */
	if (len > ROOTS_CONFIG_MAX_BYTES) {
		rc = kiln_err_set(err, KILN_ELIMIT, "over %zu bytes",
		                  (size_t)ROOTS_CONFIG_MAX_BYTES);
		kiln_err_locate(err, name, 0, 0);
		return rc;
	}
	while (found && rest.len) {
		rest = kiln_str_split(rest, '\n', &line, &found);
		lineno++;
		if (line.len > ROOTS_CONFIG_MAX_LINE)
			rc = kiln_err_set(err, KILN_ELIMIT, "line over %d bytes",
			                  ROOTS_CONFIG_MAX_LINE);
		else
			rc = config_line(&p, line, lineno, err);
		if (rc) {
			kiln_err_locate(err, name, lineno, 0);
			return rc;
		}
	}
	rc = config_check(&p, err);
	if (rc)
		kiln_err_locate(err, name, 0, 0);
	if (!rc)
		rc = config_substitute(c, name, err);
	return rc;
}

kiln_rc roots_config_load(struct roots_config *c, const char *path, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(ROOTS_CONFIG_MAX_BYTES);
	const char *base = util_path_basename(path);
	size_t blen = strlen(base);
	kiln_rc rc;

	rc = util_read_file(path, ROOTS_CONFIG_MAX_BYTES, &b, err);
	if (rc == KILN_ELIMIT)
		kiln_err_locate(err, path, 0, 0);
	if (!rc)
		rc = roots_config_from_mem(c, path, b.ptr, b.len, err);
	if (!rc) {
		if (blen > 4 && !strcmp(base + blen - 4, ".cfg"))
			blen -= 4;
		c->name = kiln_arena_strndup(&c->arena, base, blen);
		c->path = kiln_arena_strdup(&c->arena, path);
		rc = kiln_arena_finish(&c->arena, err);
	}
	kiln_buf_release(&b);
	return rc;
}

/* ---- lookup ---------------------------------------------------------------------------- */

static bool is_path(const char *what)
{
	size_t n = strlen(what);

	return strchr(what, '/') || (n > 4 && !strcmp(what + n - 4, ".cfg"));
}

kiln_rc roots_config_find(const char *what, struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf probe = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err ignored = KILN_ERR_INIT;
	kiln_rc rc = KILN_OK;

	if (is_path(what)) {
		if (!util_exists(what))
			return kiln_err_set(err, KILN_ENOTFOUND,
			                    "root configuration '%s' does not exist", what);
		kiln_buf_addstr(out, what);
		return kiln_buf_finish(out, err);
	}
	if (!roots_name_ok(kiln_str_from(what), "-_.+"))
		return kiln_err_set(err, KILN_EINVAL, "malformed root configuration name '%s'",
		                    what);
	kiln_buf_addf(&probe, "%s/%s.cfg", ROOTS_ETC_DIR, what);
	if (!probe.err && util_exists(probe.ptr))
		goto found;
	kiln_buf_reset(&probe);
	if (!util_configdir_find(&confdir, &ignored)) {
		kiln_buf_addf(&probe, "%s/roots/%s.cfg", confdir.ptr, what);
		if (!probe.err && util_exists(probe.ptr))
			goto found;
	}
	rc = kiln_err_set(err, KILN_ENOTFOUND,
	                  "no root configuration '%s' (looked for %s.cfg in " ROOTS_ETC_DIR
	                  " and %s/roots)",
	                  what, what, confdir.len ? confdir.ptr : "kiln's configuration directory");
	goto out;
found:
	kiln_buf_add(out, probe.ptr, probe.len);
	rc = kiln_buf_finish(out, err);
out:
	kiln_buf_release(&probe);
	kiln_buf_release(&confdir);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The NAME.cfg names in dir, sorted, appended to names (in a). */
static kiln_rc list_dir(const char *dir, struct kiln_arena *a, const char ***names, size_t *n,
                        size_t *cap, struct kiln_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = *n;

	if (!d)
		return KILN_OK; /* no such directory: no configurations there */
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char *name;

		if (l <= 4 || strcmp(e->d_name + l - 4, ".cfg") || e->d_name[0] == '.')
			continue;
		name = kiln_arena_strndup(a, e->d_name, l - 4);
		if (!name || !kiln_arena_strv_add(a, names, n, cap, name)) {
			closedir(d);
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		}
	}
	closedir(d);
	if (*n > first)
		qsort(*names + first, *n - first, sizeof(**names), name_cmp);
	return KILN_OK;
}

kiln_rc roots_config_list(kiln_rc (*fn)(void *arg, const char *name, const char *path,
                                        struct kiln_err *err),
                          void *arg, struct kiln_err *err)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_LIMIT_ARENA);
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err ignored = KILN_ERR_INIT;
	const char **names = NULL;
	size_t n = 0, cap = 0, i, k;
	kiln_rc rc;

	rc = list_dir(ROOTS_ETC_DIR, &a, &names, &n, &cap, err);
	if (!rc && !util_configdir_find(&confdir, &ignored)) {
		kiln_buf_addf(&dir, "%s/roots", confdir.ptr);
		rc = kiln_buf_finish(&dir, err);
		if (!rc)
			rc = list_dir(dir.ptr, &a, &names, &n, &cap, err);
	}
	if (!rc && n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; !rc && i < n; i++) {
		struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
		bool dup = false;

		for (k = 0; k < i; k++)
			dup |= !strcmp(names[k], names[i]);
		if (dup)
			continue; /* /etc/kiln/roots shadows the shipped one */
		rc = roots_config_find(names[i], &path, err);
		if (!rc)
			rc = fn(arg, names[i], path.ptr, err);
		kiln_buf_release(&path);
	}
	kiln_buf_release(&dir);
	kiln_buf_release(&confdir);
	kiln_arena_release(&a);
	return rc;
}

kiln_rc roots_config_open(struct roots_config *c, const char *what, struct kiln_err *err)
{
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = roots_config_find(what, &path, err);

	if (!rc)
		rc = roots_config_load(c, path.ptr, err);
	kiln_buf_release(&path);
	return rc;
}

/* ---- the macro context ----------------------------------------------------------------- */

/* The rpm macro files an image carries, in the order rpm reads them (its MACROFILES:
 * lib/rpmrc.c), the image's path in front; TARGET is %{_target}. */
static const char *const image_macrofiles[] = {
    "usr/lib/rpm/macros",
    "usr/lib/rpm/macros.d/macros.*",
    "usr/lib/rpm/platform/%s/macros",
    "usr/lib/rpm/fileattrs/*.attr",
    "usr/lib/rpm/redhat/macros",
    "etc/rpm/macros.*",
    "etc/rpm/macros",
    "etc/rpm/%s/macros",
};

static kiln_rc image_macros_load(struct macro_ctx *ctx, const char *image, struct kiln_err *err)
{
	char *target = NULL;
	kiln_rc rc;
	size_t i, k;

	rc = macro_expand_str(ctx, "%{_target}", &target, err);
	for (i = 0; !rc && i < KILN_ARRAY_SIZE(image_macrofiles); i++) {
		char pat[KILN_LIMIT_PATH];
		glob_t g = {0};
		int n;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		n = snprintf(pat, sizeof(pat), "%s/", image);
		if (n > 0 && (size_t)n < sizeof(pat))
			n +=
			    snprintf(pat + n, sizeof(pat) - (size_t)n, image_macrofiles[i], target);
#pragma GCC diagnostic pop
		if (n < 0 || (size_t)n >= sizeof(pat)) {
			rc = kiln_err_set(err, KILN_ELIMIT, "%s: path too long", image);
			break;
		}
		if (glob(pat, 0, NULL, &g) != 0)
			continue; /* none there */
		for (k = 0; !rc && k < g.gl_pathc; k++)
			rc = macro_load_file(ctx, g.gl_pathv[k], MACRO_LEVEL_FILE, err);
		globfree(&g);
	}
	free(target);
	return rc;
}

static kiln_rc macro_ctx_open_in(const struct roots_config *c, const char *image,
                                 struct macro_ctx **out, struct kiln_err *err);

/* kiln's reproducibility settings again, over what the root's macros set. */
static kiln_rc kiln_reproducible_load(struct macro_ctx *ctx, const char *confdir,
                                      struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH];
	int n = snprintf(path, sizeof(path), "%s/macros.d/macros.kiln-reproducible", confdir);

	if (n < 0 || (size_t)n >= sizeof(path))
		return kiln_err_set(err, KILN_ELIMIT, "%s: path too long", confdir);
	return macro_load_file(ctx, path, MACRO_LEVEL_FILE, err);
}

kiln_rc roots_macro_ctx_open(const struct roots_config *c, struct macro_ctx **out,
                             struct kiln_err *err)
{
	return macro_ctx_open_in(c, NULL, out, err);
}

kiln_rc roots_macro_ctx_open_image(const struct roots_config *c, const char *image_root,
                                   struct macro_ctx **out, struct kiln_err *err)
{
	return macro_ctx_open_in(c, image_root, out, err);
}

static kiln_rc macro_ctx_open_in(const struct roots_config *c, const char *image,
                                 struct macro_ctx **out, struct kiln_err *err)
{
	struct kiln_buf confdir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct macro_config cfg = {0};
	struct macro_ctx *ctx = NULL;
	kiln_rc rc;
	size_t i;

	*out = NULL;
	rc = util_configdir_find(&confdir, err);
	if (rc)
		goto out;
	cfg.confdir = confdir.ptr;
	cfg.target = c->arch;
	rc = macro_ctx_open_config(&cfg, false, &ctx, err);
	if (!rc && image)
		rc = image_macros_load(ctx, image, err);
	if (!rc && image)
		rc = kiln_reproducible_load(ctx, confdir.ptr, err);
	for (i = 0; !rc && i < c->nmacros; i++)
		rc = macro_define(ctx, c->macros[i].name, NULL, c->macros[i].value,
		                  MACRO_LEVEL_FILE, err);
	if (rc)
		kiln_err_wrap(err, "root configuration %s", c->path[0] ? c->path : c->name);
out:
	kiln_buf_release(&confdir);
	if (rc) {
		macro_ctx_free(ctx);
		ctx = NULL;
	}
	*out = ctx;
	return rc;
}
