/*
 * files.c - %files sections: the manifest lines parsed into entries.
 *
 * rpm checks the manifest only when it packages (so `rpmspec -P` accepts a bad %attr);
 * kiln parses each line here and keeps a problem as the entry's error for the build to
 * report, so parsing stays as permissive as rpm's.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

struct files_state {
	struct spec_parse_priv *p;
	struct spec_package *pkg;
	struct spec_attr defattr;
	uint32_t defverify;
	bool defverify_given;
	const char *file; /* the -f list being read, NULL for the spec */
};

struct entry_build {
	struct spec_files_entry e;
	struct kiln_buf err;
	const char *paths[1024];
	const char *globs[1024];
	size_t npaths;
};

static void entry_error(struct entry_build *b, const char *fmt, ...) KILN_PRINTF(2, 3);

static void entry_error(struct entry_build *b, const char *fmt, ...)
{
	va_list ap;

	if (b->err.len)
		return;
	va_start(ap, fmt);
	kiln_buf_vaddf(&b->err, fmt, ap);
	va_end(ap);
}

/* The text inside "(...)" after a directive at *s; *s moves past ')'. */
static bool paren_arg(const char **s, char *dst, size_t size)
{
	const char *p = *s;
	const char *close;
	size_t n;

	if (*p != '(')
		return false;
	close = strchr(p, ')');
	if (!close)
		return false;
	n = (size_t)(close - p - 1);
	if (n >= size)
		n = size - 1;
	memcpy(dst, p + 1, n);
	dst[n] = '\0';
	*s = close + 1;
	return true;
}

/* Split "a, b, c" into up to max trimmed fields. */
static size_t fields(char *s, char **out, size_t max)
{
	size_t n = 0;

	while (n < max) {
		char *comma = strchr(s, ',');
		char *e;

		while (*s && is_space(*s))
			s++;
		if (comma)
			*comma = '\0';
		e = s + strlen(s);
		while (e > s && is_space(e[-1]))
			*--e = '\0';
		out[n++] = s;
		if (!comma)
			break;
		s = comma + 1;
	}
	return n;
}

static bool parse_mode(const char *s, uint32_t *mode)
{
	uint64_t v;

	return !util_parse_u64(s, strlen(s), 8, 07777, &v, NULL) && (*mode = (uint32_t)v, true);
}

static void parse_attr(struct spec_parse_priv *p, struct entry_build *b, char *arg,
                       struct spec_attr *a, bool def)
{
	char orig[1024];
	char *f[4];
	size_t n;

	/* Messages quote the parameters as written; fields() cuts arg at its commas. */
	snprintf(orig, sizeof(orig), "%s", arg);
	n = fields(arg, f, 4);
	arg = orig;
	memset(a, 0, sizeof(*a));
	a->given = true;
	if (n < 3 || (!def && n > 3)) {
		entry_error(b, "Bad syntax: %%%s(%s)", def ? "defattr" : "attr", arg);
		return;
	}
	if (strcmp(f[0], "-")) {
		if (!parse_mode(f[0], &a->mode))
			entry_error(b, "Bad mode spec: %%%s(%s)", def ? "defattr" : "attr", arg);
		a->set |= SPEC_ATTR_MODE;
	}
	if (strcmp(f[1], "-")) {
		a->user = spec_strdup(p, f[1], strlen(f[1]));
		a->set |= SPEC_ATTR_USER;
	}
	if (strcmp(f[2], "-")) {
		a->group = spec_strdup(p, f[2], strlen(f[2]));
		a->set |= SPEC_ATTR_GROUP;
	}
	if (n == 4 && strcmp(f[3], "-")) {
		if (!parse_mode(f[3], &a->dirmode))
			entry_error(b, "Bad dirmode spec: %%defattr(%s)", arg);
		a->set |= SPEC_ATTR_DIRMODE;
	}
}

static uint32_t parse_verify(struct entry_build *b, char *arg, const char *what)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} names[] = {
	    {"md5", SPEC_VERIFY_FILEDIGEST}, {"filedigest", SPEC_VERIFY_FILEDIGEST},
	    {"size", SPEC_VERIFY_FILESIZE},  {"link", SPEC_VERIFY_LINKTO},
	    {"user", SPEC_VERIFY_USER},      {"owner", SPEC_VERIFY_USER},
	    {"group", SPEC_VERIFY_GROUP},    {"mtime", SPEC_VERIFY_MTIME},
	    {"mode", SPEC_VERIFY_MODE},      {"rdev", SPEC_VERIFY_RDEV},
	    {"caps", SPEC_VERIFY_CAPS},
	};
	uint32_t bits = 0;
	bool negate = false;
	char *tok = arg;

	while (*tok) {
		size_t len;
		size_t i;

		while (*tok && (is_space(*tok) || *tok == ','))
			tok++;
		if (!*tok)
			break;
		len = strcspn(tok, " \t,");
		if (len == 3 && !strncmp(tok, "not", 3)) {
			negate = true;
		} else {
			for (i = 0; i < KILN_ARRAY_SIZE(names); i++) {
				if (strlen(names[i].name) == len &&
				    !strncmp(tok, names[i].name, len))
					break;
			}
			if (i == KILN_ARRAY_SIZE(names))
				entry_error(b, "Invalid %s token: %.*s", what, (int)len, tok);
			else
				bits |= names[i].bit;
		}
		tok += len;
	}
	return negate ? (SPEC_VERIFY_ALL & ~bits) : bits;
}

static void parse_config(struct entry_build *b, char *arg)
{
	char *tok = arg;

	b->e.fileflags |= SPEC_FILE_CONFIG;
	while (*tok) {
		size_t len;

		while (*tok && (is_space(*tok) || *tok == ','))
			tok++;
		if (!*tok)
			break;
		len = strcspn(tok, " \t,");
		if (len == 9 && !strncmp(tok, "noreplace", 9))
			b->e.fileflags |= SPEC_FILE_NOREPLACE;
		else if (len == 9 && !strncmp(tok, "missingok", 9))
			b->e.fileflags |= SPEC_FILE_MISSINGOK;
		else
			entry_error(b, "Invalid %%config token: %.*s", (int)len, tok);
		tok += len;
	}
}

static void parse_dev(struct entry_build *b, char *arg)
{
	char *f[3];
	uint64_t ma, mi;

	if (fields(arg, f, 3) != 3 || (strcmp(f[0], "b") && strcmp(f[0], "c")) ||
	    util_parse_u64(f[1], strlen(f[1]), 10, 255, &ma, NULL) ||
	    util_parse_u64(f[2], strlen(f[2]), 10, 255, &mi, NULL)) {
		entry_error(b, "Invalid %%dev(%s)", arg);
		return;
	}
	b->e.flags |= SPEC_ENTRY_DEV;
	b->e.dev_type = f[0][0];
	b->e.dev_major = (uint32_t)ma;
	b->e.dev_minor = (uint32_t)mi;
}

struct flag_word {
	const char *word;
	uint32_t fileflags;
	unsigned flags;
};

static const struct flag_word flag_words[] = {
    {"%dir", 0, SPEC_ENTRY_DIR},
    {"%docdir", 0, SPEC_ENTRY_DOCDIR},
    {"%doc", SPEC_FILE_DOC, 0},
    {"%ghost", SPEC_FILE_GHOST, 0},
    {"%exclude", 0, SPEC_ENTRY_EXCLUDE},
    {"%readme", SPEC_FILE_README, 0},
    {"%license", SPEC_FILE_LICENSE, 0},
    {"%pubkey", SPEC_FILE_PUBKEY, 0},
    {"%missingok", SPEC_FILE_MISSINGOK, 0},
    {"%artifact", SPEC_FILE_ARTIFACT, 0},
};

/* One directive starting at *s ('%'); false when it is not one (then it is a file name). */
static bool directive(struct files_state *st, struct entry_build *b, const char **s,
                      bool *defattr_seen)
{
	char arg[1024];
	const char *q = *s;
	size_t wl = strcspn(q, " \t(");
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(flag_words); i++) {
		if (strlen(flag_words[i].word) == wl && !strncmp(q, flag_words[i].word, wl)) {
			b->e.fileflags |= flag_words[i].fileflags;
			b->e.flags |= flag_words[i].flags;
			*s = q + wl;
			return true;
		}
	}
#define IS(w) (wl == sizeof(w) - 1 && !strncmp(*s, w, wl))
	if (!(IS("%attr") || IS("%defattr") || IS("%config") || IS("%verify") || IS("%defverify") ||
	      IS("%lang") || IS("%caps") || IS("%dev")))
		return false;
	q += wl;
	arg[0] = '\0';
	if (*q == '(' && !paren_arg(&q, arg, sizeof(arg))) {
		entry_error(b, "Missing ')' in %.*s", (int)wl, *s);
		*s = q + strlen(q);
		return true;
	}
	if (IS("%attr"))
		parse_attr(st->p, b, arg, &b->e.attr, false);
	else if (IS("%defattr")) {
		parse_attr(st->p, b, arg, &st->defattr, true);
		*defattr_seen = true;
	} else if (IS("%config"))
		parse_config(b, arg);
	else if (IS("%verify")) {
		b->e.verifyflags = parse_verify(b, arg, "%verify");
		b->e.flags |= SPEC_ENTRY_VERIFY;
	} else if (IS("%defverify")) {
		st->defverify = parse_verify(b, arg, "%defverify");
		st->defverify_given = true;
	} else if (IS("%lang"))
		b->e.lang = spec_strdup(st->p, arg, strlen(arg));
	else if (IS("%caps"))
		b->e.caps = spec_strdup(st->p, arg, strlen(arg));
	else
		parse_dev(b, arg);
#undef IS
	*s = q;
	return true;
}

/* Add c to the plain name and to its glob form; literal (quoted or escaped) glob
 * characters are escaped in the glob form, as rpm escapes quoted names before globbing. */
static void name_addch(struct kiln_buf *w, struct kiln_buf *g, char c, bool literal)
{
	kiln_buf_addch(w, c);
	if (literal && strchr("?*[]{}\\", c))
		kiln_buf_addch(g, '\\');
	kiln_buf_addch(g, c);
}

/* A file name token: quotes group, backslash escapes; *s moves past it. *glob gets the
 * name as a glob pattern. */
static char *name_token(struct files_state *st, struct entry_build *b, const char **s,
                        const char **glob)
{
	struct kiln_buf w = KILN_BUF_INIT(KILN_LIMIT_PATH * 4);
	struct kiln_buf g = KILN_BUF_INIT(KILN_LIMIT_PATH * 8);
	const char *q = *s;
	char *out = NULL;

	if (*q == '"') {
		for (q++; *q && *q != '"'; q++) {
			if (*q == '\\' && q[1])
				q++;
			name_addch(&w, &g, *q, true);
		}
		if (*q != '"')
			entry_error(b, "Missing quote: %s", *s);
		else
			q++;
	} else {
		for (; *q && !is_space(*q); q++) {
			bool esc = *q == '\\';

			if (esc && !q[1]) {
				entry_error(b, "Trailing backslash: %s", *s);
				break;
			}
			q += esc;
			name_addch(&w, &g, *q, esc);
		}
	}
	*s = q;
	if (!w.err && !g.err) {
		out = spec_strdup(st->p, w.ptr, w.len);
		*glob = spec_strdup(st->p, g.ptr, g.len);
		if (!*glob)
			out = NULL;
	}
	kiln_buf_release(&w);
	kiln_buf_release(&g);
	return out;
}

static kiln_rc entry_store(struct files_state *st, struct entry_build *b)
{
	struct spec_package *pkg = st->pkg;
	struct spec *spec = st->p->spec;
	struct spec_files_entry *e;
	size_t i;

	if (pkg->nfiles == pkg->capfiles) {
		size_t cap = pkg->capfiles ? pkg->capfiles * 2 : 16;
		struct spec_files_entry *v = kiln_arena_array(&spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&spec->arena, st->p->err);
		if (pkg->nfiles)
			memcpy(v, pkg->files, pkg->nfiles * sizeof(*v));
		pkg->files = v;
		pkg->capfiles = cap;
	}
	e = &pkg->files[pkg->nfiles++];
	*e = b->e;
	e->paths = kiln_arena_array(&spec->arena, b->npaths + 1, sizeof(*e->paths));
	e->globs = kiln_arena_array(&spec->arena, b->npaths + 1, sizeof(*e->globs));
	if (!e->paths || !e->globs)
		return kiln_arena_finish(&spec->arena, st->p->err);
	for (i = 0; i < b->npaths; i++) {
		e->paths[i] = b->paths[i];
		e->globs[i] = b->globs[i];
	}
	e->npaths = b->npaths;
	e->file = st->file;
	if (b->err.len)
		e->error = spec_strdup(st->p, b->err.ptr, b->err.len);
	return KILN_OK;
}

static kiln_rc parse_line(struct files_state *st, const char *line)
{
	struct entry_build b;
	const char *s = line;
	bool defattr_seen = false;
	bool special = false;
	uint32_t defverify = st->defverify; /* a %defverify applies from the next line on */
	bool defverify_given = st->defverify_given;
	kiln_rc rc = KILN_OK;
	size_t i;

	memset(&b, 0, sizeof(b));
	kiln_buf_init(&b.err, KILN_ERR_MSG_MAX);
	b.e.line = st->p->lineno;
	for (;;) {
		while (*s && is_space(*s))
			s++;
		if (!*s)
			break;
		if (*s == '%' && directive(st, &b, &s, &defattr_seen))
			continue;
		if (b.npaths >= KILN_ARRAY_SIZE(b.paths)) {
			entry_error(&b, "too many file names on one line");
			break;
		}
		b.paths[b.npaths] = name_token(st, &b, &s, &b.globs[b.npaths]);
		if (!b.paths[b.npaths]) {
			rc = KILN_ENOMEM;
			break;
		}
		b.npaths++;
	}
	if (defattr_seen && (b.npaths || b.e.fileflags))
		entry_error(&b, "Non-white space follows %%defattr(): %s", line);
	b.e.defattr = st->defattr;
	if (!(b.e.flags & SPEC_ENTRY_VERIFY))
		b.e.verifyflags = defverify;
	if (defverify_given)
		b.e.flags |= SPEC_ENTRY_DEFVERIFY;
	for (i = 0; i < b.npaths; i++) {
		bool docish = b.e.fileflags & (SPEC_FILE_DOC | SPEC_FILE_LICENSE);

		if (b.paths[i][0] != '/' && docish)
			special = true;
		else if (b.paths[i][0] != '/')
			entry_error(&b, "File must begin with \"/\": %s", b.paths[i]);
	}
	if (special)
		b.e.flags |= SPEC_ENTRY_SPECIAL;
	if (!rc && (b.npaths || b.err.len || b.e.fileflags ||
	            (b.e.flags & ~(unsigned)(SPEC_ENTRY_VERIFY | SPEC_ENTRY_DEFVERIFY))))
		rc = entry_store(st, &b);
	kiln_buf_release(&b.err);
	return rc;
}

/* The lines of a %files section. The License: tag defines %license, which here must stay
 * the directive: rpm hides the tag's macro for the section. */
static enum spec_part files_body(struct files_state *st)
{
	struct spec_parse_priv *p = st->p;
	struct kiln_err ignored = KILN_ERR_INIT;
	enum spec_part next = SPEC_PART_ERROR;

	if (macro_define(p->ctx, "license", NULL, "%%license", MACRO_LEVEL_SPEC, p->err))
		return SPEC_PART_ERROR;
	for (;;) {
		int r = spec_read_line(p, SPEC_STRIP_COMMENTS);

		if (r) {
			next = r > 0 ? SPEC_PART_NONE : SPEC_PART_ERROR;
			break;
		}
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			break;
		if (parse_line(st, p->line.ptr)) {
			next = SPEC_PART_ERROR;
			break;
		}
	}
	(void)!macro_undefine(p->ctx, "license", &ignored);
	st->pkg->files_defattr = st->defattr;
	st->pkg->files_defverify = st->defverify;
	st->pkg->files_defverify_given = st->defverify_given;
	return next;
}

enum spec_part spec_parse_files(struct spec_parse_priv *p)
{
	struct files_state st;
	struct spec_package *pkg = NULL;
	char **argv = NULL;
	int argc = 0;
	const char *name = NULL;
	bool full = false;
	const char **lists = NULL;
	size_t nlists = 0;
	int i;

	memset(&st, 0, sizeof(st));
	st.p = p;
	st.defverify = SPEC_VERIFY_ALL;
	if (spec_split_options(p, p->line.ptr, &argv, &argc))
		return SPEC_PART_ERROR;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			name = argv[++i];
			full = true;
		} else if (!strcmp(argv[i], "-f") && i + 1 < argc) {
			const char **v = kiln_arena_array(&p->spec->arena, nlists + 1, sizeof(*v));

			if (!v)
				goto fail;
			if (nlists)
				memcpy(v, lists, nlists * sizeof(*v));
			i++;
			v[nlists] = spec_strdup(p, argv[i], strlen(argv[i]));
			lists = v;
			nlists++;
		} else if (argv[i][0] != '-' && !name) {
			name = argv[i];
		} else if (argv[i][0] != '-') {
			spec_error(p, KILN_ESYNTAX, "line %d: Too many names: %s", p->lineno,
			           p->line.ptr);
			goto fail;
		} else {
			spec_error(p, KILN_ESYNTAX, "line %d: Bad %%files option: %s", p->lineno,
			           p->line.ptr);
			goto fail;
		}
	}
	if (spec_lookup_package(p, name, full, &pkg)) {
		char *l = p->line.ptr;

		if (p->line.len && l[p->line.len - 1] == '\n')
			kiln_buf_truncate(&p->line, p->line.len - 1);
		spec_error(p, KILN_ENOTFOUND, "line %d: %s: package %s%s%s does not exist",
		           p->lineno, p->line.ptr, full ? "" : p->spec->packages[0]->name,
		           full ? "" : "-", name);
		goto fail;
	}
	if (pkg->has_files) {
		spec_warn(p, "line %d: multiple %%files for package '%s'", p->lineno, pkg->name);
		pkg->nfiles = 0;
		pkg->nfile_lists = 0;
	}
	pkg->has_files = true;
	pkg->file_lists = lists;
	pkg->nfile_lists = nlists;
	st.pkg = pkg;
	spec_argv_free(argv, argc);
	return files_body(&st);
fail:
	spec_argv_free(argv, argc);
	return SPEC_PART_ERROR;
}

/* ---------------------------------------------------------------------------------------- */
/* %files -f lists, read when packaging. */

static bool list_is_comment(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && is_space(s[i]))
		i++;
	return i < len && s[i] == '#';
}

/* Expand one list line and parse it as a %files line. */
static kiln_rc list_line(struct files_state *st, const char *s, size_t len, int lineno)
{
	struct spec_parse_priv *p = st->p;
	struct kiln_buf x = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	char num[24];
	kiln_rc rc;

	snprintf(num, sizeof(num), "%d", lineno);
	p->lineno = lineno;
	rc = macro_define(p->ctx, "__file_lineno", NULL, num, MACRO_LEVEL_SPEC, p->err);
	if (!rc)
		rc = macro_expand(p->ctx, s, len, &x, p->err);
	if (!rc)
		rc = kiln_buf_finish(&x, p->err);
	if (!rc)
		rc = parse_line(st, x.ptr);
	if (rc)
		kiln_err_locate(p->err, st->file, lineno, 0);
	kiln_buf_release(&x);
	return rc;
}

static kiln_rc list_lines(struct files_state *st, const char *text, size_t len, size_t *nlines)
{
	size_t pos = 0;
	int lineno = 0;
	kiln_rc rc = KILN_OK;

	while (!rc && pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t e = end;

		lineno++;
		while (e > pos && is_space(text[e - 1]))
			e--;
		if (end - pos > KILN_LIMIT_LINE)
			rc = kiln_err_set(st->p->err, KILN_ELIMIT, "line %d: longer than %zu bytes",
			                  lineno, (size_t)KILN_LIMIT_LINE);
		else if (memchr(text + pos, '\0', end - pos))
			rc = kiln_err_set(st->p->err, KILN_ESYNTAX, "line %d: NUL byte", lineno);
		else if (!list_is_comment(text + pos, e - pos)) {
			(*nlines)++;
			rc = list_line(st, text + pos, e - pos, lineno);
		}
		if (rc)
			kiln_err_locate(st->p->err, st->file, lineno, 0);
		pos = end + 1;
	}
	return rc;
}

static kiln_rc list_empty(struct spec *spec, const char *name, struct kiln_err *err)
{
	char *v = NULL;
	bool fatal = true;

	if (!macro_expand_str(spec->macros, "%{?_empty_manifest_terminate_build}", &v, NULL))
		fatal = !*v || strtol(v, NULL, 10) != 0;
	free(v);
	if (!fatal) {
		macro_diag(spec->macros, KILN_LOG_WARN, "Empty %%files file %s", name);
		return KILN_OK;
	}
	return kiln_err_set(err, KILN_ESYNTAX, "Empty %%files file %s", name);
}

kiln_rc spec_files_add_text(struct spec *spec, struct spec_package *pkg, const char *name,
                            const char *text, size_t len, struct kiln_err *err)
{
	struct spec_parse_priv *p = spec->priv;
	struct files_state st;
	struct kiln_err ignored = KILN_ERR_INIT;
	size_t nlines = 0;
	kiln_rc rc;

	if (!p)
		return kiln_err_set(err, KILN_EINVAL, "%s: the spec has no parser state", name);
	memset(&st, 0, sizeof(st));
	st.p = p;
	st.pkg = pkg;
	st.defattr = pkg->files_defattr;
	st.defverify = pkg->has_files ? pkg->files_defverify : (uint32_t)SPEC_VERIFY_ALL;
	st.defverify_given = pkg->files_defverify_given;
	p->err = err;
	p->ctx = spec->macros;
	st.file = spec_strdup(p, name, strlen(name));
	rc = st.file ? KILN_OK : KILN_ENOMEM;
	if (!rc)
		rc = macro_define(p->ctx, "license", NULL, "%%license", MACRO_LEVEL_SPEC, err);
	if (!rc) {
		rc = macro_define(p->ctx, "__file_name", NULL, name, MACRO_LEVEL_SPEC, err);
		if (!rc)
			rc = list_lines(&st, text, len, &nlines);
		(void)!macro_undefine(p->ctx, "__file_name", &ignored);
		(void)!macro_undefine(p->ctx, "__file_lineno", &ignored);
		(void)!macro_undefine(p->ctx, "license", &ignored);
	}
	if (!rc && !nlines)
		rc = list_empty(spec, name, err);
	pkg->files_defattr = st.defattr;
	pkg->files_defverify = st.defverify;
	pkg->files_defverify_given = st.defverify_given;
	p->err = NULL;
	return rc;
}
