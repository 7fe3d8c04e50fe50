/*
 * parse.c - the section dispatcher, packages, and what the sections share.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char *spec_strdup(struct spec_parse_priv *p, const char *s, size_t len)
{
	char *d = kiln_arena_strndup(&p->spec->arena, s, len);

	if (!d)
		(void)!kiln_arena_finish(&p->spec->arena, p->err);
	return d;
}

int64_t spec_expand_numeric(struct spec_parse_priv *p, const char *expr)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	char *v = NULL;
	char *end = NULL;
	long long n = 0;

	if (!macro_expand_str(p->ctx, expr, &v, &ignored) && *v && *v != '%') {
		if (*v == 'y' || *v == 'Y')
			n = 1;
		else if (*v != 'n' && *v != 'N' && ((n = strtoll(v, &end, 0)), *end))
			n = 0;
	}
	free(v);
	return n;
}

struct spec_package *spec_package_find(struct spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->npackages; i++) {
		if (!strcmp(spec->packages[i]->name, name))
			return spec->packages[i];
	}
	return NULL;
}

kiln_rc spec_package_add(struct spec_parse_priv *p, const char *name, struct spec_package **out)
{
	struct spec *spec = p->spec;
	struct spec_package *pkg;

	if (spec->npackages == spec->cappackages) {
		size_t cap = spec->cappackages ? spec->cappackages * 2 : 8;
		struct spec_package **v = kiln_arena_array(&spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&spec->arena, p->err);
		if (spec->npackages)
			memcpy(v, spec->packages, spec->npackages * sizeof(*v));
		spec->packages = v;
		spec->cappackages = cap;
	}
	pkg = kiln_arena_alloc(&spec->arena, sizeof(*pkg));
	if (!pkg || !(pkg->tags = rpmtag_set_new(&spec->arena)))
		return kiln_arena_finish(&spec->arena, p->err);
	/* rpm's headers carry the locale table once they hold an i18n string (Summary). */
	if (rpmtag_set_put(pkg->tags, RPMTAG_HEADERI18NTABLE, RPMTAG_TYPE_STRING_ARRAY,
	                   (const char *const[]){"C"}, 1, p->err))
		return p->err->code;
	pkg->name = name ? kiln_arena_strdup(&spec->arena, name) : NULL;
	pkg->is_main = spec->npackages == 0;
	pkg->autoreq = pkg->autoprov = true;
	pkg->line = p->lineno;
	spec->packages[spec->npackages++] = pkg;
	*out = pkg;
	return KILN_OK;
}

void spec_argv_free(char **argv, int argc)
{
	int i;

	if (!argv)
		return;
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static kiln_rc argv_push(char ***argv, int *argc, struct kiln_buf *word, struct kiln_err *err)
{
	char **v = kiln_reallocarray(*argv, (size_t)*argc + 2, sizeof(*v));

	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	*argv = v;
	v[*argc] = kiln_strndup(word->ptr, word->len);
	if (!v[*argc])
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	(*argc)++;
	v[*argc] = NULL;
	kiln_buf_reset(word);
	return KILN_OK;
}

/* The section word ("%files", "%setup") for a quoting error: the first word of s, or of
 * the current line when s is an option's value (the -p program). */
static void option_owner(struct spec_parse_priv *p, const char *s, char *dst, size_t size)
{
	const char *w = s[0] == '%' ? s : p->line.ptr;
	size_t n = strcspn(w, " \t\n");

	snprintf(dst, size, "%.*s", (int)(n < size ? n : size - 1), w);
}

/* Split like popt's poptParseArgvString: blanks separate, '...' and "..." group (an
 * unterminated quote just runs to the end), a backslash escapes the next character -
 * inside quotes only the quote character, elsewhere it stays - and empty words vanish. A
 * backslash at the very end is popt's "error in parameter quoting". */
kiln_rc spec_split_options(struct spec_parse_priv *p, const char *s, char ***argv, int *argc)
{
	struct kiln_buf word = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *start = s;
	char quote = 0;
	kiln_rc rc = KILN_OK;

	*argv = NULL;
	*argc = 0;
	for (; *s && !rc; s++) {
		char c = *s;

		if (c == '\\' && !s[1]) {
			char owner[64];

			option_owner(p, start, owner, sizeof(owner));
			rc = spec_error(p, KILN_ESYNTAX,
			                "line %d: Error parsing %s: error in parameter quoting",
			                p->lineno, owner);
		} else if (quote && c == quote) {
			quote = 0;
		} else if (quote) {
			if (c == '\\' && *++s != quote)
				kiln_buf_addch(&word, '\\');
			kiln_buf_addch(&word, *s);
		} else if (is_space(c)) {
			if (word.len)
				rc = argv_push(argv, argc, &word, p->err);
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else {
			kiln_buf_addch(&word, c == '\\' ? *++s : c);
		}
	}
	if (!rc && word.len)
		rc = argv_push(argv, argc, &word, p->err);
	if (!rc)
		rc = kiln_buf_finish(&word, p->err);
	kiln_buf_release(&word);
	if (rc) {
		spec_argv_free(*argv, *argc);
		*argv = NULL;
		*argc = 0;
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The dispatcher. */

/* %end (rpm 6.0) closes the section before it; up to the next section header only blank
 * lines and comments may follow. A second %end has nothing to close. */
static enum spec_part parse_end(struct spec_parse_priv *p)
{
	const char *s = p->line.ptr + 4;

	while (*s && is_space(*s))
		s++;
	if (*s) {
		spec_error(p, KILN_ESYNTAX, "line %d: %%end doesn't take any arguments: %s",
		           p->lineno, p->line.ptr);
		return SPEC_PART_ERROR;
	}
	if (p->last_part == SPEC_PART_END) {
		spec_error(p, KILN_ESYNTAX,
		           "line %d: %%end not expected here, no section to close: %s", p->lineno,
		           p->line.ptr);
		return SPEC_PART_ERROR;
	}
	for (;;) {
		enum spec_part next;
		int r = spec_read_line(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS);

		if (r)
			return r > 0 ? SPEC_PART_NONE : SPEC_PART_ERROR;
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			return next;
		for (s = p->line.ptr; *s && is_space(*s); s++)
			;
		if (*s) {
			spec_error(p, KILN_ESYNTAX, "line %d doesn't belong to any section: %s",
			           p->lineno, p->line.ptr);
			return SPEC_PART_ERROR;
		}
	}
}

static enum spec_part dispatch_one(struct spec_parse_priv *p, enum spec_part part)
{
	switch (part) {
	case SPEC_PART_PREAMBLE:
		return spec_parse_preamble(p, false);
	case SPEC_PART_PREP:
		return spec_parse_prep(p);
	case SPEC_PART_BUILDREQUIRES:
	case SPEC_PART_CONF:
	case SPEC_PART_BUILD:
	case SPEC_PART_INSTALL:
	case SPEC_PART_CHECK:
	case SPEC_PART_CLEAN:
		return spec_parse_build_section(p, part);
	case SPEC_PART_SCRIPT:
		return spec_parse_script(p);
	case SPEC_PART_FILES:
		return spec_parse_files(p);
	case SPEC_PART_CHANGELOG:
		return spec_parse_changelog(p);
	case SPEC_PART_DESCRIPTION:
		return spec_parse_description(p);
	case SPEC_PART_POLICIES:
		return spec_parse_skip(p);
	case SPEC_PART_PATCHLIST:
		return spec_parse_list(p, true);
	case SPEC_PART_SOURCELIST:
		return spec_parse_list(p, false);
	case SPEC_PART_END:
		return parse_end(p);
	case SPEC_PART_NONE:
	case SPEC_PART_ERROR:
	case SPEC_PART_BUILDARCHS:
		break;
	}
	return SPEC_PART_ERROR;
}

enum spec_part spec_dispatch_part(struct spec_parse_priv *p, enum spec_part part)
{
	enum spec_part next = dispatch_one(p, part);

	p->last_part = part;
	return next;
}

/* Parse the whole input. *restart is set when the main package named BuildArch: on the
 * first pass: rpm then parses the spec again once per build architecture. */
static kiln_rc parse_all(struct spec_parse_priv *p, bool *restart)
{
	enum spec_part part = spec_parse_preamble(p, true);

	p->last_part = SPEC_PART_PREAMBLE;
	*restart = false;
	if (part == SPEC_PART_BUILDARCHS) {
		*restart = true;
		return KILN_OK;
	}
	while (part != SPEC_PART_NONE && part != SPEC_PART_ERROR)
		part = spec_dispatch_part(p, part);
	if (part == SPEC_PART_ERROR)
		return p->err->code ? p->err->code : KILN_ESYNTAX;
	return spec_finish(p);
}

/* The Lua tables rpm keeps per spec (rpm.expand("%{lua: print(sources[1])}")). */
static kiln_rc reset_lua_tables(struct macro_ctx *ctx, struct kiln_err *err)
{
	static const char *const names[] = {"sources", "patches", "source_nums", "patch_nums"};
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(names); i++)
		rc = macro_lua_reset(ctx, names[i], err);
	return rc;
}

static kiln_rc parse_once(const char *name, const char *text, size_t len, struct macro_ctx *ctx,
                          unsigned flags, bool second_pass, bool *restart, struct spec **out,
                          struct kiln_err *err)
{
	struct spec_parse_priv *p = NULL;
	struct spec *spec;
	kiln_rc rc;
	size_t i;

	*out = NULL;
	spec = kiln_calloc(1, sizeof(*spec));
	p = kiln_calloc(1, sizeof(*p));
	if (!spec || !p) {
		free(spec);
		free(p);
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	kiln_arena_init(&spec->arena, KILN_LIMIT_ARENA);
	kiln_buf_init(&spec->parsed, KILN_LIMIT_MACRO_EXPANSION);
	spec->priv = p;
	spec->macros = ctx;
	spec->path = kiln_arena_strdup(&spec->arena, name);
	spec->srctags = rpmtag_set_new(&spec->arena);
	p->spec = spec;
	p->ctx = ctx;
	p->err = err;
	p->flags = flags;
	p->buildarch_restarted = second_pass;
	for (i = 0; i < SPEC_SEC_COUNT; i++)
		kiln_buf_init(&p->secbuf[i], KILN_LIMIT_MACRO_EXPANSION);
	rc = spec->path && spec->srctags ? KILN_OK : kiln_arena_finish(&spec->arena, err);
	if (!rc)
		rc = reset_lua_tables(ctx, err);
	/* rpm sets %_docdir per spec so a DocDir: tag can change it. */
	if (!rc)
		rc = macro_define(ctx, "_docdir", NULL, "%{_defaultdocdir}", MACRO_LEVEL_SPEC, err);
	if (!rc)
		rc = macro_define(ctx, "_licensedir", NULL, "%{_defaultlicensedir}",
		                  MACRO_LEVEL_SPEC, err);
	if (!rc)
		rc = spec_read_open(p, name, text, len);
	if (!rc)
		rc = parse_all(p, restart);
	spec_read_close(p);
	if (!rc)
		rc = kiln_buf_finish(&spec->parsed, err);
	if (rc) {
		spec_free(spec);
		return rc;
	}
	*out = spec;
	return KILN_OK;
}

/* Copy the BuildArch: list out of a spec about to be freed. */
static char **copy_archs(const struct spec *spec, size_t *n)
{
	char **v = kiln_calloc(spec->nbuildarchs + 1, sizeof(*v));
	size_t i;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < spec->nbuildarchs; i++) {
		v[i] = kiln_strdup(spec->buildarchs[i]);
		if (!v[i]) {
			spec_argv_free(v, (int)i);
			return NULL;
		}
	}
	*n = spec->nbuildarchs;
	return v;
}

/* rpm re-parses the spec for every buildable BuildArch: with %_target_cpu set to it and
 * keeps the first result (all must parse). */
static kiln_rc parse_per_arch(const char *name, const char *text, size_t len, struct macro_ctx *ctx,
                              unsigned flags, char **archs, size_t narchs, struct spec **out,
                              struct kiln_err *err)
{
	struct spec *first = NULL;
	kiln_rc rc = KILN_OK;
	bool restart;
	size_t i;

	for (i = 0; !rc && i < narchs; i++) {
		struct spec *s = NULL;
		struct kiln_err ignored = KILN_ERR_INIT;

		if (!macro_arch_buildable(ctx, archs[i]))
			continue;
		rc = macro_define(ctx, "_target_cpu", NULL, archs[i], MACRO_LEVEL_RPMRC, err);
		if (rc)
			break;
		rc = parse_once(name, text, len, ctx, flags, true, &restart, &s, err);
		(void)!macro_undefine(ctx, "_target_cpu", &ignored);
		if (rc)
			break;
		if (!first)
			first = s;
		else
			spec_free(s);
	}
	if (!rc && !first)
		rc = kiln_err_set(err, KILN_ESYNTAX, "No compatible architectures found for build");
	if (rc) {
		spec_free(first);
		return rc;
	}
	*out = first;
	return KILN_OK;
}

static kiln_rc parse_common(const char *name, const char *text, size_t len, struct macro_ctx *ctx,
                            unsigned flags, struct spec **out, struct kiln_err *err)
{
	struct kiln_err local = KILN_ERR_INIT;
	struct spec *spec = NULL;
	char **archs;
	size_t narchs;
	bool restart;
	kiln_rc rc;

	*out = NULL;
	if (!err)
		err = &local;
	rc = parse_once(name, text, len, ctx, flags, false, &restart, &spec, err);
	if (rc || !restart) {
		*out = spec;
		return rc;
	}
	archs = copy_archs(spec, &narchs);
	spec_free(spec);
	if (!archs)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = parse_per_arch(name, text, len, ctx, flags, archs, narchs, out, err);
	spec_argv_free(archs, (int)narchs);
	return rc;
}

kiln_rc spec_parse_file(const char *path, struct macro_ctx *ctx, unsigned flags, struct spec **out,
                        struct kiln_err *err)
{
	return parse_common(path, NULL, 0, ctx, flags, out, err);
}

kiln_rc spec_parse_mem(const char *name, const char *text, size_t len, struct macro_ctx *ctx,
                       unsigned flags, struct spec **out, struct kiln_err *err)
{
	return parse_common(name, text ? text : "", len, ctx, flags, out, err);
}

void spec_free(struct spec *spec)
{
	size_t i;

	if (!spec)
		return;
	if (spec->priv) {
		for (i = 0; i < SPEC_SEC_COUNT; i++)
			kiln_buf_release(&spec->priv->secbuf[i]);
		free(spec->priv->frags);
		free(spec->priv);
	}
	kiln_buf_release(&spec->parsed);
	kiln_arena_release(&spec->arena);
	free(spec);
}

static const char *const section_names[] = {
    [SPEC_SEC_PREP] = "prep",       [SPEC_SEC_BUILDREQUIRES] = "generate_buildrequires",
    [SPEC_SEC_CONF] = "conf",       [SPEC_SEC_BUILD] = "build",
    [SPEC_SEC_INSTALL] = "install", [SPEC_SEC_CHECK] = "check",
    [SPEC_SEC_CLEAN] = "clean",
};

const char *spec_section_name(enum spec_section sec)
{
	return (size_t)sec < KILN_ARRAY_SIZE(section_names) ? section_names[sec] : "?";
}

/* rpm's headerAddI18NString(): the locale goes into HEADERI18NTABLE (added at its end when
 * new) and the value into the tag's element of the same index; missing elements are "". */
kiln_rc spec_put_i18n(struct spec_parse_priv *p, struct rpmtag_set *ts, uint32_t tag,
                      const char *lang, const char *value)
{
	struct rpmtag_qf_value tv, sv;
	const char **strs;
	uint32_t idx, n, i;
	kiln_rc rc;

	if (!lang || !*lang)
		lang = "C";
	if (!rpmtag_set_get(ts, RPMTAG_HEADERI18NTABLE, &tv))
		return spec_error(p, KILN_EINVAL, "no locale table for %s", lang);
	for (idx = 0; idx < tv.count; idx++) {
		if (!strcmp(((const char *const *)tv.data)[idx], lang))
			break;
	}
	if (idx == tv.count) {
		rc = rpmtag_set_append(ts, RPMTAG_HEADERI18NTABLE, RPMTAG_TYPE_STRING_ARRAY, &lang,
		                       1, p->err);
		if (rc)
			return rc;
	}
	if (!rpmtag_set_get(ts, tag, &sv))
		sv.count = 0;
	n = idx >= sv.count ? idx + 1 : sv.count;
	strs = kiln_arena_array(&p->spec->arena, n, sizeof(*strs));
	if (!strs)
		return kiln_arena_finish(&p->spec->arena, p->err);
	/* The old strings stay in the arena while the set is rewritten. */
	for (i = 0; i < n; i++)
		strs[i] = i < sv.count ? ((const char *const *)sv.data)[i] : "";
	strs[idx] = value;
	return rpmtag_set_put(ts, tag, RPMTAG_TYPE_I18NSTRING, strs, n, p->err);
}

/* Is the tag's element for lang set (non-empty)? */
bool spec_has_i18n(const struct rpmtag_set *ts, uint32_t tag, const char *lang)
{
	struct rpmtag_qf_value tv, sv;
	uint32_t idx;

	if (!lang || !*lang)
		lang = "C";
	if (!rpmtag_set_get(ts, RPMTAG_HEADERI18NTABLE, &tv) || !rpmtag_set_get(ts, tag, &sv))
		return false;
	for (idx = 0; idx < tv.count && idx < sv.count; idx++) {
		if (!strcmp(((const char *const *)tv.data)[idx], lang))
			return *((const char *const *)sv.data)[idx] != '\0';
	}
	return false;
}
