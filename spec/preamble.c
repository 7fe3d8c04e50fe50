/*
 * preamble.c - the preamble of the main package and of each %package: tags, their macros,
 * sources and patches, dependencies.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

enum tag_kind {
	T_NAME,
	T_VERSION,
	T_RELEASE,
	T_EPOCH,
	T_I18N,   /* Summary, Group: per language, a second one replaces with a warning */
	T_TEXT,   /* License, Vendor, ...: a second one warns and is a duplicate */
	T_SINGLE, /* URL, VCS, DistTag, BugURL, ...: one token */
	T_SOURCE,
	T_PATCH,
	T_NOSOURCE,
	T_NOPATCH,
	T_ARCHLIST, /* ExcludeArch and friends */
	T_ICON,
	T_DEPS,
	T_BUILDDEPS,
	T_PREFIXES,
	T_BUILDROOT,
	T_BUILDARCH,
	T_AUTOREQPROV,
	T_AUTOREQ,
	T_AUTOPROV,
	T_DOCDIR,
	T_REMOVEPOSTFIX,
	T_BUILDSYSTEM,
	T_BUILDOPTION,
};

enum tag_paren {
	P_NONE,
	P_LANG, /* (lang) */
	P_QUAL, /* (qualifiers) */
	P_SECT, /* (section) for BuildOption */
};

struct tag_def {
	const char *token; /* lower case, as rpm's table spells it */
	enum tag_kind kind;
	uint32_t tag; /* header tag (name tag for dependencies) */
	enum tag_paren paren;
	bool macro; /* defines %token (and %TOKEN in the main package) */
	bool deprecated;
};

/* rpm matches tokens as prefixes in this order, so longer names come first. */
static const struct tag_def tag_defs[] = {
    {"name", T_NAME, RPMTAG_NAME, P_NONE, true, false},
    {"version", T_VERSION, RPMTAG_VERSION, P_NONE, true, false},
    {"release", T_RELEASE, RPMTAG_RELEASE, P_NONE, true, false},
    {"epoch", T_EPOCH, RPMTAG_EPOCH, P_NONE, true, false},
    {"summary", T_I18N, RPMTAG_SUMMARY, P_LANG, true, false},
    {"license", T_TEXT, RPMTAG_LICENSE, P_NONE, true, false},
    {"sourcelicense", T_TEXT, 5102, P_NONE, true, false},
    {"distribution", T_TEXT, RPMTAG_DISTRIBUTION, P_NONE, true, false},
    {"disturl", T_TEXT, 1123, P_NONE, true, false},
    {"vendor", T_TEXT, RPMTAG_VENDOR, P_NONE, true, false},
    {"group", T_I18N, RPMTAG_GROUP, P_LANG, true, false},
    {"packager", T_TEXT, RPMTAG_PACKAGER, P_NONE, true, false},
    {"url", T_SINGLE, RPMTAG_URL, P_NONE, true, false},
    {"vcs", T_SINGLE, 5034, P_NONE, true, false},
    {"source", T_SOURCE, RPMTAG_SOURCE, P_NONE, false, false},
    {"patch", T_PATCH, RPMTAG_PATCH, P_NONE, false, false},
    {"nosource", T_NOSOURCE, 1051, P_NONE, false, false},
    {"nopatch", T_NOPATCH, 1052, P_NONE, false, false},
    {"excludearch", T_ARCHLIST, 1059, P_NONE, false, false},
    {"exclusivearch", T_ARCHLIST, 1061, P_NONE, false, false},
    {"excludeos", T_ARCHLIST, 1060, P_NONE, false, false},
    {"exclusiveos", T_ARCHLIST, 1062, P_NONE, false, false},
    {"icon", T_ICON, 1043, P_NONE, false, false},
    {"provides", T_DEPS, RPMTAG_PROVIDENAME, P_NONE, false, false},
    {"requires", T_DEPS, RPMTAG_REQUIRENAME, P_QUAL, false, false},
    {"recommends", T_DEPS, RPMTAG_RECOMMENDNAME, P_QUAL, false, false},
    {"suggests", T_DEPS, RPMTAG_SUGGESTNAME, P_QUAL, false, false},
    {"supplements", T_DEPS, RPMTAG_SUPPLEMENTNAME, P_QUAL, false, false},
    {"enhances", T_DEPS, RPMTAG_ENHANCENAME, P_QUAL, false, false},
    {"prereq", T_DEPS, 1049 /* as Requires(pre,preun) */, P_QUAL, false, true},
    {"conflicts", T_DEPS, RPMTAG_CONFLICTNAME, P_NONE, false, false},
    {"obsoletes", T_DEPS, RPMTAG_OBSOLETENAME, P_NONE, false, false},
    {"prefixes", T_PREFIXES, RPMTAG_PREFIXES, P_NONE, true, false},
    {"prefix", T_PREFIXES, RPMTAG_PREFIXES, P_NONE, true, false},
    {"buildroot", T_BUILDROOT, 0, P_NONE, false, false},
    {"buildarchitectures", T_BUILDARCH, RPMTAG_BUILDARCHS, P_NONE, false, false},
    {"buildarch", T_BUILDARCH, RPMTAG_BUILDARCHS, P_NONE, false, false},
    {"buildconflicts", T_BUILDDEPS, RPMTAG_CONFLICTNAME, P_NONE, false, false},
    {"buildoption", T_BUILDOPTION, 0, P_SECT, false, false},
    {"buildprereq", T_BUILDDEPS, RPMTAG_REQUIRENAME, P_NONE, false, true},
    {"buildrequires", T_BUILDDEPS, RPMTAG_REQUIRENAME, P_NONE, false, false},
    {"buildsystem", T_BUILDSYSTEM, 0, P_NONE, true, false},
    {"autoreqprov", T_AUTOREQPROV, 0, P_NONE, false, false},
    {"autoreq", T_AUTOREQ, 0, P_NONE, false, false},
    {"autoprov", T_AUTOPROV, 0, P_NONE, false, false},
    {"docdir", T_DOCDIR, 0, P_NONE, false, false},
    {"disttag", T_SINGLE, RPMTAG_DISTTAG, P_NONE, true, false},
    {"bugurl", T_SINGLE, RPMTAG_BUGURL, P_NONE, true, false},
    {"translationurl", T_TEXT, 5100, P_NONE, true, false},
    {"upstreamreleases", T_TEXT, 5101, P_NONE, true, false},
    {"orderwithrequires", T_DEPS, 5035, P_QUAL, false, false},
    {"removepathpostfixes", T_REMOVEPOSTFIX, 0, P_NONE, true, false},
    {"modularitylabel", T_SINGLE, 5096, P_NONE, true, false},
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static const char *skip_space(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

/* The current line without the trailing newline rpm's messages do not show. */
static const char *line_text(struct spec_parse_priv *p)
{
	if (p->line.len && p->line.ptr[p->line.len - 1] == '\n')
		kiln_buf_truncate(&p->line, p->line.len - 1);
	return p->line.ptr;
}

struct tag_line {
	const struct tag_def *def;
	char paren[128]; /* the (...) text */
	bool has_paren;
	const char *numtext; /* Source/Patch: digits before ':' */
	size_t numlen;
	const char *value; /* after ':', leading blanks skipped */
};

/* rpm's findPreambleTag: false when the line is not a known tag. */
static bool find_tag(const char *line, struct tag_line *tl)
{
	const char *s;
	size_t i;

	memset(tl, 0, sizeof(*tl));
	line = skip_space(line);
	for (i = 0; i < KILN_ARRAY_SIZE(tag_defs); i++) {
		if (!strncasecmp(line, tag_defs[i].token, strlen(tag_defs[i].token)))
			break;
	}
	if (i == KILN_ARRAY_SIZE(tag_defs))
		return false;
	tl->def = &tag_defs[i];
	s = line + strlen(tl->def->token);
	if (tl->def->kind == T_SOURCE || tl->def->kind == T_PATCH) {
		/* rpm's parseTagNumber: the number runs up to a ':' or a blank, and the value
		 * starts after the line's first ':' ("Source 3 x: a" is an unnumbered source;
		 * a line without ':' is a malformed tag, value NULL). */
		const char *colon = strchr(s, ':');

		tl->numtext = s;
		tl->numlen = strcspn(s, ": \t");
		tl->value = colon ? skip_space(colon + 1) : NULL;
		return true;
	}
	s = skip_space(s);
	if (tl->def->paren != P_NONE && *s == '(') {
		size_t n = 0;

		s = skip_space(s + 1);
		while (*s && !is_space(*s) && *s != ')' && n + 1 < sizeof(tl->paren))
			tl->paren[n++] = *s++;
		tl->paren[n] = '\0';
		tl->has_paren = true;
		s = skip_space(s);
		if (*s != ')')
			return false;
		s = skip_space(s + 1);
	}
	if (*s != ':')
		return false;
	tl->value = skip_space(s + 1);
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Checks. */

static bool single_token(const char *v)
{
	const char *s = v;

	while (*s && !is_space(*s))
		s++;
	return !*skip_space(s);
}

kiln_rc spec_char_check(struct spec_parse_priv *p, const char *v, const char *allowed,
                        const char *first_allowed)
{
	const char *bad = NULL;
	const char *s;

	for (s = v; *s; s++) {
		const char *set = s == v && first_allowed ? first_allowed : allowed;

		if (!is_alnum(*s) && !strchr(set, *s))
			bad = s;
	}
	if (strpbrk(v, "%{}"))
		spec_warn(p, "line %d: Possible unexpanded macro in: %s", p->lineno, line_text(p));
	/* rpm keeps the message of the last bad character: for a UTF-8 sequence its last
	 * byte, sign-extended as a plain char is on x86, shown as '?'. */
	if (bad)
		return spec_error(p, KILN_ESYNTAX, "line %d: Illegal char '%c' (0x%x) in: %s",
		                  p->lineno, *bad >= 0x20 && *bad < 0x7f ? *bad : '?',
		                  (unsigned)(int)(signed char)*bad, line_text(p));
	if (strstr(v, ".."))
		return spec_error(p, KILN_ESYNTAX, "line %d: Illegal sequence \"..\" in: %s",
		                  p->lineno, line_text(p));
	return KILN_OK;
}

/* Requires(...) qualifiers. */
static kiln_rc parse_qualifiers(struct spec_parse_priv *p, const struct tag_line *tl,
                                uint32_t *flags)
{
	static const struct {
		const char *name;
		uint32_t bits;
	} quals[] = {
	    {"interp", RPMTAG_DEP_INTERP},           {"preun", RPMTAG_DEP_SCRIPT_PREUN},
	    {"pre", RPMTAG_DEP_SCRIPT_PRE},          {"postun", RPMTAG_DEP_SCRIPT_POSTUN},
	    {"post", RPMTAG_DEP_SCRIPT_POST},        {"rpmlib", RPMTAG_DEP_RPMLIB},
	    {"verify", RPMTAG_DEP_SCRIPT_VERIFY},    {"pretrans", RPMTAG_DEP_PRETRANS},
	    {"posttrans", RPMTAG_DEP_POSTTRANS},     {"preuntrans", RPMTAG_DEP_PREUNTRANS},
	    {"postuntrans", RPMTAG_DEP_POSTUNTRANS}, {"meta", RPMTAG_DEP_META},
	};
	const char *s = tl->paren;
	char name[32];

	*flags = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		size_t i;

		if (n >= sizeof(name))
			goto bad;
		memcpy(name, s, n);
		name[n] = '\0';
		for (i = 0; i < KILN_ARRAY_SIZE(quals); i++) {
			if (!strcmp(name, quals[i].name))
				break;
		}
		if (i == KILN_ARRAY_SIZE(quals))
			goto bad;
		*flags |= quals[i].bits;
		s += n;
		/* A comma must be followed by another qualifier ("pre," is bad). */
		if (*s == ',' && !*++s)
			goto bad;
	}
	return KILN_OK;
bad : {
	char tn[64];

	rpmtag_shortname(tl->def->tag, tn, sizeof(tn));
	return spec_error(p, KILN_ESYNTAX, "line %d: Bad %s: qualifiers: %s", p->lineno, tn,
	                  line_text(p));
}
}

/* ---------------------------------------------------------------------------------------- */
/* Macros tags define. */

static kiln_rc define_tag_macro(struct spec_parse_priv *p, const char *token, const char *value)
{
	char upper[64];
	size_t i;
	kiln_rc rc;

	rc = macro_define(p->ctx, token, NULL, value, MACRO_LEVEL_SPEC, p->err);
	if (rc || !p->pkg->is_main)
		return rc;
	for (i = 0; token[i] && i + 1 < sizeof(upper); i++)
		upper[i] = (char)(token[i] >= 'a' && token[i] <= 'z' ? token[i] - 32 : token[i]);
	upper[i] = '\0';
	return macro_define(p->ctx, upper, NULL, value, MACRO_LEVEL_SPEC, p->err);
}

/* ---------------------------------------------------------------------------------------- */
/* Sources and patches. */

/* The file name of a Source/Patch value: what follows the last '/', or the last '=' after
 * it ("https://host/get.php?file=a.tgz" is a.tgz), as rpm's newSource() takes it. */
static const char *url_basename(const char *v)
{
	const char *slash = strrchr(v, '/');
	const char *eq;

	if (!slash)
		return v;
	eq = strrchr(slash, '=');
	return (eq ? eq : slash) + 1;
}

kiln_rc spec_add_source(struct spec_parse_priv *p, const char *value, bool is_patch, bool numbered,
                        uint32_t num)
{
	struct spec *spec = p->spec;
	struct spec_source *src;
	char name[64];
	char *path;
	kiln_rc rc;
	size_t i;

	if (!numbered)
		num = is_patch ? (p->any_patch ? p->next_patch : 0)
		               : (p->any_source ? p->next_source : 0);
	for (i = 0; i < spec->nsources; i++) {
		if (spec->sources[i].is_patch == is_patch && spec->sources[i].num == num)
			return spec_error(p, KILN_ESYNTAX, "%s %u defined multiple times",
			                  is_patch ? "patch" : "source", num);
	}
	/* Unnumbered entries continue after the highest number so far, as rpm's autonum
	 * does ("Source5:", "Source2:", "Source:" is 6). */
	if (is_patch) {
		if (!p->any_patch || (num >= p->next_patch && num < UINT32_MAX))
			p->next_patch = num + 1;
		p->any_patch = true;
	} else {
		if (!p->any_source || (num >= p->next_source && num < UINT32_MAX))
			p->next_source = num + 1;
		p->any_source = true;
	}
	if (spec->nsources == spec->capsources) {
		size_t cap = spec->capsources ? spec->capsources * 2 : 8;
		struct spec_source *v;

		if (cap > KILN_LIMIT_SOURCES)
			return spec_error(p, KILN_ELIMIT, "too many sources and patches");
		v = kiln_arena_array(&spec->arena, cap, sizeof(*v));
		if (!v)
			return kiln_arena_finish(&spec->arena, p->err);
		if (spec->nsources)
			memcpy(v, spec->sources, spec->nsources * sizeof(*v));
		spec->sources = v;
		spec->capsources = cap;
	}
	src = &spec->sources[spec->nsources];
	src->num = num;
	src->is_patch = is_patch;
	src->url = kiln_arena_strdup(&spec->arena, value);
	src->file = kiln_arena_strdup(&spec->arena, url_basename(value));
	if (!src->url || !src->file)
		return kiln_arena_finish(&spec->arena, p->err);
	{
		struct kiln_buf expr = KILN_BUF_INIT(KILN_LIMIT_PATH * 2);

		kiln_buf_addf(&expr, "%%{_sourcedir}/%s", src->file);
		rc = kiln_buf_finish(&expr, p->err);
		if (!rc)
			rc = macro_expand_str(p->ctx, expr.ptr, &path, p->err);
		kiln_buf_release(&expr);
		if (rc)
			return rc;
	}
	src->path = kiln_arena_strdup(&spec->arena, path);
	free(path);
	if (!src->path)
		return kiln_arena_finish(&spec->arena, p->err);
	spec->nsources++;
	snprintf(name, sizeof(name), "%s%u", is_patch ? "PATCH" : "SOURCE", num);
	rc = macro_define(p->ctx, name, NULL, src->path, MACRO_LEVEL_SPEC, p->err);
	snprintf(name, sizeof(name), "%s%u", is_patch ? "PATCHURL" : "SOURCEURL", num);
	if (!rc)
		rc = macro_define(p->ctx, name, NULL, src->url, MACRO_LEVEL_SPEC, p->err);
	if (!rc)
		rc = spec_lua_add_source(p, src);
	return rc;
}

static kiln_rc tag_source(struct spec_parse_priv *p, const struct tag_line *tl, bool is_patch)
{
	uint64_t num = 0;

	if (tl->numlen && util_parse_u64(tl->numtext, tl->numlen, 10, UINT32_MAX, &num, NULL))
		return spec_error(p, KILN_ESYNTAX, "line %d: Bad %s number: %s", p->lineno,
		                  is_patch ? "patch" : "source", line_text(p));
	/* No single-token rule here: rpm takes source names with spaces. */
	return spec_add_source(p, tl->value, is_patch, tl->numlen > 0, (uint32_t)num);
}

/* NoSource/NoPatch: rpm skips blanks and commas, then wants the rest to be one number
 * (its parseUnsignedNum sees the whole remainder, so "NoSource: 0 1" is "Bad number: 0
 * 1"); kiln keeps that, a spec rpmbuild refuses must not build here. */
static kiln_rc tag_nosource(struct spec_parse_priv *p, const struct tag_line *tl, bool patch)
{
	const char *s = tl->value;
	bool found = false;
	uint64_t num;
	size_t i;

	while (*s && (is_space(*s) || *s == ','))
		s++;
	if (!*s)
		return KILN_OK;
	if (util_parse_u64(s, strlen(s), 10, UINT32_MAX, &num, NULL))
		return spec_error(p, KILN_ESYNTAX, "line %d: Bad number: %s", p->lineno, s);
	for (i = 0; i < p->spec->nsources; i++) {
		struct spec_source *src = &p->spec->sources[i];

		if (src->is_patch == patch && src->num == num) {
			src->nosource = true;
			found = true;
		}
	}
	if (!found)
		return spec_error(p, KILN_ESYNTAX, "line %d: Bad no%s number: %u", p->lineno,
		                  patch ? "patch" : "source", (unsigned)num);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Lists. */

/* A list tag's value split the way rpm's poptParseArgvString() does it: at blanks only
 * (a comma stays in its word, "x86_64," is no arch), quotes group. The words are appended
 * to *out. A quoting error is rpm's "Error parsing tag field", or for BuildArch (archs)
 * "Bad BuildArchitecture format". */
static kiln_rc split_list(struct spec_parse_priv *p, const char *v, const char ***out, size_t *n,
                          bool archs)
{
	const char **nv;
	char **argv = NULL;
	int argc = 0;
	int i;
	kiln_rc rc = spec_split_options(p, v, &argv, &argc);

	if (rc == KILN_ESYNTAX) {
		kiln_err_clear(p->err);
		if (archs)
			return spec_error(p, rc, "line %d: Bad BuildArchitecture format: %s",
			                  p->lineno, line_text(p));
		return spec_error(p, rc, "Error parsing tag field: error in parameter quoting");
	}
	if (rc || !argc)
		goto out;
	nv = kiln_arena_array(&p->spec->arena, *n + (size_t)argc, sizeof(*nv));
	if (!nv) {
		rc = kiln_arena_finish(&p->spec->arena, p->err);
		goto out;
	}
	if (*n)
		memcpy(nv, *out, *n * sizeof(*nv));
	for (i = 0; !rc && i < argc; i++) {
		nv[*n + (size_t)i] = spec_strdup(p, argv[i], strlen(argv[i]));
		if (!nv[*n + (size_t)i])
			rc = KILN_ENOMEM;
	}
	if (!rc) {
		*out = nv;
		*n += (size_t)argc;
	}
out:
	spec_argv_free(argv, argc);
	return rc;
}

static kiln_rc tag_archlist(struct spec_parse_priv *p, const struct tag_line *tl)
{
	struct spec *spec = p->spec;

	switch (tl->def->tag) {
	case 1059:
		return split_list(p, tl->value, &spec->excludearch, &spec->nexcludearch, false);
	case 1061:
		return split_list(p, tl->value, &spec->exclusivearch, &spec->nexclusivearch, false);
	case 1060:
		return split_list(p, tl->value, &spec->excludeos, &spec->nexcludeos, false);
	default:
		return split_list(p, tl->value, &spec->exclusiveos, &spec->nexclusiveos, false);
	}
}

static kiln_rc tag_buildarch(struct spec_parse_priv *p, const struct tag_line *tl)
{
	struct spec *spec = p->spec;
	const char **v = NULL;
	size_t n = 0;
	kiln_rc rc;

	rc = split_list(p, tl->value, &v, &n, true);
	if (rc)
		return rc;
	if (!p->pkg->is_main) {
		if (n != 1 || strcmp(v[0], "noarch"))
			return spec_error(p, KILN_ESYNTAX,
			                  "line %d: Only noarch subpackages are supported: %s",
			                  p->lineno, line_text(p));
		return rpmtag_set_put_str(p->pkg->tags, RPMTAG_ARCH, "noarch", p->err);
	}
	if (spec->nbuildarchs)
		return spec_error(p, KILN_ESYNTAX, "line %d: Duplicate BuildArch entry: %s",
		                  p->lineno, line_text(p));
	spec->buildarchs = v;
	spec->nbuildarchs = n;
	return KILN_OK;
}

static kiln_rc tag_prefixes(struct spec_parse_priv *p, const struct tag_line *tl)
{
	const char **v = NULL;
	size_t n = 0;
	size_t i;
	kiln_rc rc;

	rc = split_list(p, tl->value, &v, &n, false);
	for (i = 0; !rc && i < n; i++) {
		size_t len = strlen(v[i]);

		if (len > 1 && v[i][len - 1] == '/')
			return spec_error(p, KILN_ESYNTAX,
			                  "line %d: Prefixes must not end with \"/\": %s",
			                  p->lineno, line_text(p));
		rc = rpmtag_set_append(p->pkg->tags, RPMTAG_PREFIXES, RPMTAG_TYPE_STRING_ARRAY,
		                       &v[i], 1, p->err);
	}
	return rc;
}

/* rpm's parseYesNo: false for values starting with n/N/0 or "false"/"off". */
static bool yes_no(const char *v)
{
	return !(v[0] == 'n' || v[0] == 'N' || v[0] == '0' || !strcasecmp(v, "false") ||
	         !strcasecmp(v, "off"));
}

/* Icon: FILE is read from %{_sourcedir} when the spec is parsed and stored in the GIF
 * or XPM tag, as rpm does. */
static kiln_rc tag_icon(struct spec_parse_priv *p, const char *value)
{
	if (p->flags & SPEC_PARSE_NO_FILES)
		return spec_error(p, KILN_EPRIV, "line %d: Icon: is not allowed here: %s",
		                  p->lineno, value);
	struct kiln_buf data = KILN_BUF_INIT(KILN_LIMIT_ICON);
	struct kiln_err ignored = KILN_ERR_INIT;
	struct kiln_buf scratch = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *base = strrchr(value, '/');
	char *dir = NULL;
	const char *path = NULL;
	uint32_t tag = 0;
	kiln_rc rc;

	base = base ? base + 1 : value;
	rc = macro_expand_str(p->ctx, "%{_sourcedir}", &dir, p->err);
	if (!rc && !(path = kiln_arena_printf(&p->spec->arena, "%s/%s", dir, base)))
		rc = kiln_arena_finish(&p->spec->arena, p->err);
	if (!rc && util_read_file(macro_path_host(p->ctx, path, &scratch), KILN_LIMIT_ICON, &data,
	                          &ignored)) {
		rc = spec_error(p, ignored.code, "Unable to open icon %s: %s", path,
		                ignored.code == KILN_ENOTFOUND ? "No such file or directory"
		                : ignored.code == KILN_ELIMIT  ? "File too large"
		                                               : "cannot read");
	}
	if (!rc) {
		if (data.len >= 3 && !memcmp(data.ptr, "GIF", 3))
			tag = 1012;
		else if (data.len >= 6 && !memcmp(data.ptr, "/* XPM", 6))
			tag = 1013;
		else
			rc = spec_error(p, KILN_ESYNTAX, "Unknown icon type: %s", base);
	}
	if (!rc)
		rc = rpmtag_set_put(p->pkg->tags, tag, RPMTAG_TYPE_BIN, data.ptr,
		                    (uint32_t)data.len, p->err);
	kiln_buf_release(&data);
	kiln_buf_release(&scratch);
	free(dir);
	return rc;
}

/* RemovePathPostfixes: a colon list, added to what earlier lines gave (rpm keeps it out
 * of the header; packaging strips the suffixes from file names). */
static kiln_rc add_postfixes(struct spec_parse_priv *p, const char *v)
{
	struct spec_package *pkg = p->pkg;

	while (*v) {
		size_t n = strcspn(v, ":");
		const char **nv;

		if (n) {
			nv = kiln_arena_array(&p->spec->arena, pkg->nremove_postfixes + 1,
			                      sizeof(*nv));
			if (!nv)
				return kiln_arena_finish(&p->spec->arena, p->err);
			if (pkg->nremove_postfixes)
				memcpy(nv, pkg->remove_postfixes,
				       pkg->nremove_postfixes * sizeof(*nv));
			nv[pkg->nremove_postfixes] = spec_strdup(p, v, n);
			if (!nv[pkg->nremove_postfixes])
				return KILN_ENOMEM;
			pkg->remove_postfixes = nv;
			pkg->nremove_postfixes++;
		}
		v += n;
		if (*v == ':')
			v++;
	}
	return KILN_OK;
}

static enum spec_rich_ctx rich_context(enum spec_dep_kind kind)
{
	switch (kind) {
	case SPEC_DEPS_REQUIRES:
	case SPEC_DEPS_RECOMMENDS:
	case SPEC_DEPS_SUGGESTS:
		return SPEC_RICH_POSITIVE;
	case SPEC_DEPS_CONFLICTS:
	case SPEC_DEPS_SUPPLEMENTS:
	case SPEC_DEPS_ENHANCES:
		return SPEC_RICH_NEGATIVE;
	default:
		return SPEC_RICH_NONE;
	}
}

/* rpm warns once per Obsoletes: line, about the last item that deserves it: no version
 * (it obsoletes every version, forever) or a '>' comparison. s is a valid list. */
static const char *obsoletes_warning(const char *s)
{
	const char *warn = NULL;

	for (;;) {
		size_t n;

		while (*s && (is_space(*s) || *s == ','))
			s++;
		if (!*s)
			return warn;
		s += strcspn(s, " \t\n\r\v\f,");
		while (*s && is_space(*s))
			s++;
		if (*s != '<' && *s != '>' && *s != '=') {
			warn = "It's not recommended to have unversioned Obsoletes";
			continue;
		}
		n = strspn(s, "<>=");
		if (memchr(s, '>', n))
			warn = "It's not recommended to use '>' in Obsoletes";
		s = skip_space(s + n);
		s += strcspn(s, " \t\n\r\v\f,");
	}
}

/* Obsoletes take package names only (rpm checks them like Name:). */
static kiln_rc tag_obsoletes(struct spec_parse_priv *p, const struct tag_line *tl)
{
	const char *warn;
	kiln_rc rc = spec_dep_parse(p, tl->value, 0, SPEC_RICH_NONE, SPEC_DEPP_OBSOLETES,
	                            &p->pkg->deps[SPEC_DEPS_OBSOLETES], line_text(p));

	warn = rc ? NULL : obsoletes_warning(tl->value);
	if (warn)
		spec_warn(p, "line %d: %s: %s", p->lineno, warn, line_text(p));
	return rc;
}

static kiln_rc tag_deps(struct spec_parse_priv *p, const struct tag_line *tl)
{
	enum spec_dep_kind kind;
	uint32_t qual = 0;
	kiln_rc rc;

	if (tl->has_paren) {
		rc = parse_qualifiers(p, tl, &qual);
		if (rc)
			return rc;
	}
	switch (tl->def->tag) {
	case RPMTAG_PROVIDENAME:
		kind = SPEC_DEPS_PROVIDES;
		break;
	case RPMTAG_CONFLICTNAME:
		kind = SPEC_DEPS_CONFLICTS;
		break;
	case RPMTAG_OBSOLETENAME:
		kind = SPEC_DEPS_OBSOLETES;
		break;
	case RPMTAG_RECOMMENDNAME:
		kind = SPEC_DEPS_RECOMMENDS;
		break;
	case RPMTAG_SUGGESTNAME:
		kind = SPEC_DEPS_SUGGESTS;
		break;
	case RPMTAG_SUPPLEMENTNAME:
		kind = SPEC_DEPS_SUPPLEMENTS;
		break;
	case RPMTAG_ENHANCENAME:
		kind = SPEC_DEPS_ENHANCES;
		break;
	case 5035:
		kind = SPEC_DEPS_ORDER;
		break;
	default:
		kind = SPEC_DEPS_REQUIRES;
		break;
	}
	if (!strcmp(tl->def->token, "prereq"))
		qual |= RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_PREUN;
	if (kind == SPEC_DEPS_OBSOLETES)
		return tag_obsoletes(p, tl);
	return spec_dep_parse(p, tl->value, qual, rich_context(kind),
	                      kind == SPEC_DEPS_PROVIDES ? SPEC_DEPP_PROVIDES : 0,
	                      &p->pkg->deps[kind], line_text(p));
}

static kiln_rc tag_builddeps(struct spec_parse_priv *p, const struct tag_line *tl)
{
	bool conflicts = tl->def->tag == RPMTAG_CONFLICTNAME;

	return spec_dep_parse(p, tl->value, 0, conflicts ? SPEC_RICH_NEGATIVE : SPEC_RICH_POSITIVE,
	                      0, conflicts ? &p->spec->buildconflicts : &p->spec->buildrequires,
	                      line_text(p));
}

static kiln_rc tag_buildoption(struct spec_parse_priv *p, const struct tag_line *tl)
{
	enum spec_section sec = SPEC_SEC_CONF;
	struct spec_buildopts *o;
	size_t i;

	if (tl->has_paren) {
		for (i = 0; i < SPEC_SEC_COUNT; i++) {
			if (!strcmp(tl->paren, spec_section_name((enum spec_section)i)))
				break;
		}
		if (i == SPEC_SEC_COUNT)
			return spec_error(p, KILN_ESYNTAX, "line %d: Unknown section %s: %s",
			                  p->lineno, tl->paren, line_text(p));
		sec = (enum spec_section)i;
	}
	o = &p->spec->buildopts[sec];
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4;
		const char **v = kiln_arena_array(&p->spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&p->spec->arena, p->err);
		if (o->n)
			memcpy(v, o->v, o->n * sizeof(*v));
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n] = spec_strdup(p, tl->value, strlen(tl->value));
	return o->v[o->n++] ? KILN_OK : KILN_ENOMEM;
}

/* ---------------------------------------------------------------------------------------- */
/* One tag line. */

static bool has_tag(struct spec_parse_priv *p, uint32_t tag)
{
	struct rpmtag_qf_value v;

	return rpmtag_set_get(p->pkg->tags, tag, &v);
}

/* Mark a second occurrence of a single-valued tag for the duplicate check. rpm reports
 * every duplicate in tag number order; kiln's one error is rpm's first. */
static void mark_dup(struct spec_parse_priv *p, uint32_t tag)
{
	if (has_tag(p, tag) && (!p->dup_tag || tag < p->dup_tag))
		p->dup_tag = tag;
}

static kiln_rc put_text(struct spec_parse_priv *p, uint32_t tag, const char *value, bool dup_ok)
{
	if (!dup_ok)
		mark_dup(p, tag);
	return rpmtag_set_put_str(p->pkg->tags, tag, value, p->err);
}

static kiln_rc handle_tag(struct spec_parse_priv *p, const struct tag_line *tl)
{
	const struct tag_def *d = tl->def;
	const char *v = tl->value;
	char tn[64];
	kiln_rc rc = KILN_OK;

	if (d->deprecated)
		spec_warn(p, "line %d: %s is deprecated: %s", p->lineno, d->token, line_text(p));
	if (!v)
		return spec_error(p, KILN_ESYNTAX, "line %d: Malformed tag: %s", p->lineno,
		                  line_text(p));
	if (!*v)
		return spec_error(p, KILN_ESYNTAX, "line %d: Empty tag: %s", p->lineno,
		                  line_text(p));
	switch (d->kind) {
	case T_NAME:
		if (!single_token(v))
			goto single;
		rc = spec_char_check(p, v, ".-_+%{}", "_%");
		if (!rc)
			rc = put_text(p, d->tag, v, false);
		if (!rc && p->pkg->is_main)
			p->pkg->name = spec_strdup(p, v, strlen(v));
		break;
	case T_VERSION:
	case T_RELEASE:
		if (!single_token(v))
			goto single;
		rc = spec_char_check(p, v, "._+%{}~^", "._+%{}~^");
		if (!rc)
			rc = put_text(p, d->tag, v, false);
		break;
	case T_EPOCH: {
		uint64_t e;

		if (!single_token(v))
			goto single;
		if (util_parse_u64(v, strlen(v), 10, UINT32_MAX, &e, NULL))
			return spec_error(p, KILN_ESYNTAX,
			                  "line %d: Epoch field must be an unsigned number: %s",
			                  p->lineno, line_text(p));
		mark_dup(p, d->tag);
		rc = rpmtag_set_put_u32(p->pkg->tags, d->tag, (uint32_t)e, p->err);
		break;
	}
	case T_I18N:
		if (spec_has_i18n(p->pkg->tags, d->tag, tl->has_paren ? tl->paren : NULL))
			spec_warn(p, "line %d: second %s", p->lineno,
			          rpmtag_shortname(d->tag, tn, sizeof(tn)));
		rc = spec_put_i18n(p, p->pkg->tags, d->tag, tl->has_paren ? tl->paren : NULL, v);
		break;
	case T_TEXT:
		if (has_tag(p, d->tag))
			spec_warn(p, "line %d: second %s", p->lineno,
			          rpmtag_shortname(d->tag, tn, sizeof(tn)));
		rc = put_text(p, d->tag, v, false);
		break;
	case T_SINGLE:
		if (!single_token(v))
			goto single;
		rc = put_text(p, d->tag, v, false);
		break;
	case T_SOURCE:
	case T_PATCH:
		return tag_source(p, tl, d->kind == T_PATCH);
	case T_NOSOURCE:
	case T_NOPATCH:
		return tag_nosource(p, tl, d->kind == T_NOPATCH);
	case T_ARCHLIST:
		return tag_archlist(p, tl);
	case T_ICON:
		if (!single_token(v))
			goto single;
		return tag_icon(p, v);
	case T_DEPS:
		return tag_deps(p, tl);
	case T_BUILDDEPS:
		return tag_builddeps(p, tl);
	case T_PREFIXES:
		rc = tag_prefixes(p, tl);
		break;
	case T_BUILDROOT:
		return KILN_OK; /* ignored, as rpm ignores it */
	case T_BUILDARCH:
		return tag_buildarch(p, tl);
	case T_AUTOREQPROV:
		p->pkg->autoreq = p->pkg->autoprov = yes_no(v);
		return KILN_OK;
	case T_AUTOREQ:
		p->pkg->autoreq = yes_no(v);
		return KILN_OK;
	case T_AUTOPROV:
		p->pkg->autoprov = yes_no(v);
		return KILN_OK;
	case T_DOCDIR: {
		struct kiln_err ignored = KILN_ERR_INIT;

		if (!single_token(v))
			goto single;
		if (v[0] != '/')
			return spec_error(p, KILN_ESYNTAX,
			                  "line %d: Docdir must begin with '/': %s", p->lineno,
			                  line_text(p));
		(void)!macro_undefine(p->ctx, "_docdir", &ignored);
		return macro_define(p->ctx, "_docdir", NULL, v, MACRO_LEVEL_SPEC, p->err);
	}
	case T_REMOVEPOSTFIX:
		rc = add_postfixes(p, v);
		break;
	case T_BUILDSYSTEM:
		if (!single_token(v))
			goto single;
		rc = spec_buildsystem_check(p, v);
		if (!rc)
			p->spec->buildsystem = spec_strdup(p, v, strlen(v));
		break;
	case T_BUILDOPTION:
		return tag_buildoption(p, tl);
	}
	if (!rc && d->macro)
		rc = define_tag_macro(p, d->token, v);
	return rc;
single:
	return spec_error(p, KILN_ESYNTAX, "line %d: Tag takes single token only: %s", p->lineno,
	                  line_text(p));
}

/* ---------------------------------------------------------------------------------------- */
/* The section. */

/* %package splits its line at blanks only, as rpm's strtok() does: no quotes, no escapes.
 * Puts up to 4 words of buf (changed in place) into w; returns how many it found. */
static int package_words(char *buf, char **w)
{
	int n = 0;
	char *s = buf;

	while (*s && n < 4) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		w[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

static kiln_rc new_package(struct spec_parse_priv *p)
{
	char *words = kiln_strdup(p->line.ptr);
	char *argv[4];
	int argc;
	const char *name = NULL;
	bool full = false;
	char *nvr = NULL;
	kiln_rc rc;

	if (!words)
		return kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
	argc = package_words(words, argv);
	if (argc == 2 && strcmp(argv[1], "-n"))
		name = argv[1];
	else if (argc == 3 && !strcmp(argv[1], "-n"))
		name = argv[2], full = true;
	if (!name) {
		free(words);
		return spec_error(p, KILN_ESYNTAX, "Bad package specification: %s", line_text(p));
	}
	/* Only a full name (-n) has rules for its first character. */
	rc = spec_char_check(p, name, ".-_+%{}", full ? "_%" : NULL);
	if (!rc) {
		size_t n = strlen(p->spec->packages[0]->name) + strlen(name) + 2;

		nvr = kiln_malloc(n);
		if (!nvr)
			rc = kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
		else if (full)
			snprintf(nvr, n, "%s", name);
		else
			snprintf(nvr, n, "%s-%s", p->spec->packages[0]->name, name);
	}
	if (!rc && spec_package_find(p->spec, nvr))
		rc = spec_error(p, KILN_EEXIST, "line %d: %s: package %s already exists", p->lineno,
		                line_text(p), nvr);
	if (!rc)
		rc = spec_package_add(p, nvr, &p->pkg);
	if (!rc)
		rc = rpmtag_set_put_str(p->pkg->tags, RPMTAG_NAME, nvr, p->err);
	free(nvr);
	free(words);
	return rc;
}

static kiln_rc tag_line(struct spec_parse_priv *p)
{
	struct tag_line tl;
	const char *s = skip_space(p->line.ptr);

	if (!*s)
		return KILN_OK;
	if (!find_tag(p->line.ptr, &tl)) {
		if (p->lineno == 1 && (unsigned char)p->line.ptr[0] == 0xed &&
		    (unsigned char)p->line.ptr[1] == 0xab)
			return spec_error(p, KILN_ESYNTAX,
			                  "Binary rpm package found. Expected spec file!");
		return spec_error(p, KILN_ESYNTAX, "line %d: Unknown tag: %s", p->lineno,
		                  line_text(p));
	}
	return handle_tag(p, &tl);
}

enum spec_part spec_parse_preamble(struct spec_parse_priv *p, bool initial)
{
	enum spec_part next = SPEC_PART_NONE;
	int r;

	if (initial) {
		if (spec_package_add(p, NULL, &p->pkg))
			return SPEC_PART_ERROR;
	} else if (new_package(p)) {
		return SPEC_PART_ERROR;
	}
	for (;;) {
		r = spec_read_line(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS);
		if (r > 0)
			break;
		if (r < 0)
			return SPEC_PART_ERROR;
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			break;
		if (tag_line(p))
			return SPEC_PART_ERROR;
		if (initial && p->spec->nbuildarchs && !p->buildarch_restarted)
			return SPEC_PART_BUILDARCHS;
	}
	if (spec_preamble_done(p, p->pkg))
		return SPEC_PART_ERROR;
	return next;
}
