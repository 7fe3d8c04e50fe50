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
	bool quoted[1024]; /* the word was in quotes */
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

/* rpm's SKIPWHITE in the manifest: commas are blanks too. */
static bool is_white(char c)
{
	return is_space(c) || c == ',';
}

/* The next word of *s (blanks and commas separate), NUL-terminated in place; NULL at the
 * end. */
static char *next_field(char **s)
{
	char *p = *s;
	char *w;

	while (*p && is_white(*p))
		p++;
	if (!*p) {
		*s = p;
		return NULL;
	}
	w = p;
	while (*p && !is_white(*p))
		p++;
	if (*p)
		*p++ = '\0';
	*s = p;
	return w;
}

/* ---------------------------------------------------------------------------------------- */
/* Directives. rpm finds each with strstr() anywhere in the line, blanks it out with its
 * "(...)" and hands the rest on, in a fixed order (%verify, %defverify, %attr, %defattr,
 * %dev, %config, %lang, %caps); what is left are the plain words. */

enum dir_found {
	DIR_ABSENT,
	DIR_BARE, /* the name without "(": only %config and %caps allow that */
	DIR_ARGS,
	DIR_ERROR,
};

struct directive {
	const char *name;
	bool needs_args;
	bool alone;  /* %defattr: nothing may follow its ")" */
	bool dev;    /* %dev words its messages its own way */
	char *args;  /* OUT: the text inside the parentheses (in the line's copy) */
	char *after; /* OUT: what follows ")" */
};

static enum dir_found dir_missing(struct entry_build *b, const struct directive *d,
                                  const char *what, const char *rest)
{
	/* rpm 4.18 prints %dev's with a NULL argument: "%dev((null))". */
	if (d->dev)
		entry_error(b, "Missing %s in %s((null))", what, d->name);
	else if (what[1] == '(')
		entry_error(b, "Missing '(' in %s %s", d->name, rest);
	else
		entry_error(b, "Missing ')' in %s(%s", d->name, rest);
	return DIR_ERROR;
}

/* Find and blank out d->name and its "(...)" in buf. */
static enum dir_found dir_take(char *buf, struct directive *d, struct entry_build *b)
{
	size_t len = strlen(d->name);
	char *p = strstr(buf, d->name);
	char *close;

	if (!p)
		return DIR_ABSENT;
	memset(p, ' ', len);
	p += len;
	while (*p && is_space(*p))
		p++;
	if (*p != '(')
		return d->needs_args ? dir_missing(b, d, "'('", p) : DIR_BARE;
	*p++ = ' ';
	close = strchr(p, ')');
	if (!close)
		return dir_missing(b, d, "')'", p);
	d->after = close + 1;
	if (d->alone) {
		const char *r = d->after;

		while (*r && is_space(*r))
			r++;
		if (*r) {
			entry_error(b, "Non-white space follows %s(): %s", d->name, r);
			return DIR_ERROR;
		}
	}
	*close = '\0';
	d->args = kiln_strdup(p);
	memset(p, ' ', (size_t)(close - p));
	*close = ' ';
	if (!d->args) {
		entry_error(b, "out of memory");
		return DIR_ERROR;
	}
	return DIR_ARGS;
}

/* sscanf("%o"): leading octal digits, anything may follow. */
static bool parse_mode(const char *s, uint32_t *mode)
{
	uint64_t v = 0;
	const char *q = s;

	while (*q >= '0' && *q <= '7' && v <= 07777)
		v = v * 8 + (uint64_t)(*q++ - '0');
	/* rpm 4.18 means to refuse more than the permission bits (its check looks at the
	 * wrong variable); kiln does refuse them. */
	if (q == s || v > 07777)
		return false;
	*mode = (uint32_t)v;
	return true;
}

static bool is_default(const char *s)
{
	return !strcmp(s, "-");
}

static void parse_attr(struct spec_parse_priv *p, struct entry_build *b, char *args,
                       struct spec_attr *a, bool def)
{
	const char *name = def ? "%defattr" : "%attr";
	char *orig = kiln_strdup(args);
	char *s = args;
	char *f[4];
	size_t n = 0;

	if (!orig) {
		entry_error(b, "out of memory");
		return;
	}
	while (n < (def ? 4u : 3u) && (f[n] = next_field(&s)))
		n++;
	if (n < 3 || next_field(&s)) {
		entry_error(b, "Bad syntax: %s(%s)", name, orig);
	} else {
		struct spec_attr v = {0};

		/* Given even as %attr(-,-,-): rpm ranks duplicate entries by it. */
		v.given = true;
		if (!is_default(f[0]) && !parse_mode(f[0], &v.mode))
			entry_error(b, "Bad mode spec: %s(%s)", name, orig);
		else if (n == 4 && !is_default(f[3]) && !parse_mode(f[3], &v.dirmode))
			entry_error(b, "Bad dirmode spec: %s(%s)", name, orig);
		v.set |= is_default(f[0]) ? 0 : SPEC_ATTR_MODE;
		v.set |= n == 4 && !is_default(f[3]) ? SPEC_ATTR_DIRMODE : 0;
		if (!is_default(f[1])) {
			v.user = spec_strdup(p, f[1], strlen(f[1]));
			v.set |= SPEC_ATTR_USER;
		}
		if (!is_default(f[2])) {
			v.group = spec_strdup(p, f[2], strlen(f[2]));
			v.set |= SPEC_ATTR_GROUP;
		}
		if (!b->err.len)
			*a = v;
	}
	free(orig);
}

/* %verify(...) tokens; each "not" flips the meaning of the whole list. */
static bool parse_verify(struct entry_build *b, char *args, const char *name, uint32_t *out)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} names[] = {
	    {"md5", RPMTAG_VERIFY_FILEDIGEST}, {"filedigest", RPMTAG_VERIFY_FILEDIGEST},
	    {"size", RPMTAG_VERIFY_FILESIZE},  {"link", RPMTAG_VERIFY_LINKTO},
	    {"user", RPMTAG_VERIFY_USER},      {"owner", RPMTAG_VERIFY_USER},
	    {"group", RPMTAG_VERIFY_GROUP},    {"mtime", RPMTAG_VERIFY_MTIME},
	    {"mode", RPMTAG_VERIFY_MODE},      {"rdev", RPMTAG_VERIFY_RDEV},
	    {"caps", RPMTAG_VERIFY_CAPS},
	};
	uint32_t bits = 0;
	bool negate = false;
	char *s = args;
	char *tok;

	while ((tok = next_field(&s))) {
		size_t i;

		for (i = 0; i < KILN_ARRAY_SIZE(names) && strcmp(tok, names[i].name); i++)
			;
		if (i < KILN_ARRAY_SIZE(names)) {
			bits |= names[i].bit;
		} else if (!strcmp(tok, "not")) {
			negate = !negate;
		} else {
			entry_error(b, "Invalid %s token: %s", name, tok);
			return false;
		}
	}
	*out = negate ? (uint32_t)RPMTAG_VERIFY_ALL & ~bits : bits;
	return true;
}

static void parse_config(struct entry_build *b, char *args)
{
	char *s = args;
	char *tok;

	while ((tok = next_field(&s))) {
		if (!strcmp(tok, "noreplace"))
			b->e.fileflags |= RPMTAG_FILE_NOREPLACE;
		else if (!strcmp(tok, "missingok"))
			b->e.fileflags |= RPMTAG_FILE_MISSINGOK;
		else
			break;
	}
	if (tok)
		entry_error(b, "Invalid %%config token: %s", tok);
}

/* One word of %dev(...): "" when there is none. */
static const char *dev_word(char **s)
{
	const char *w = next_field(s);

	return w ? w : "";
}

static bool dev_number(const char *w, uint32_t *out)
{
	uint64_t v;

	return *w && strspn(w, "0123456789") == strlen(w) &&
	       !util_parse_u64(w, strlen(w), 10, 255, &v, NULL) && (*out = (uint32_t)v, true);
}

/* %dev(TYPE, MAJOR, MINOR): rpm looks at the type's first letter only. */
static void parse_dev(struct entry_build *b, char *args)
{
	char *orig = kiln_strdup(args);
	char *s = args;
	const char *type = dev_word(&s);
	const char *what = NULL;

	if (type[0] != 'b' && type[0] != 'c')
		what = "devtype";
	else if (!dev_number(dev_word(&s), &b->e.dev_major))
		what = "devmajor";
	else if (!dev_number(dev_word(&s), &b->e.dev_minor))
		what = "devminor";
	if (what) {
		entry_error(b, "Missing %s in %%dev(%s)", what, orig ? orig : "");
	} else {
		b->e.flags |= SPEC_ENTRY_DEV;
		b->e.dev_type = type[0];
	}
	free(orig);
}

/* %lang(...): several on a line add up. The locales are checked, sorted and joined as
 * FILELANGS when the package is made (worker/filelist.c, rpm's addLang), so the entry
 * keeps their text, joined by commas. */
static void parse_lang(struct files_state *st, struct entry_build *b, const char *args)
{
	struct kiln_arena *a = &st->p->spec->arena;
	char *v =
	    b->e.lang ? kiln_arena_printf(a, "%s,%s", b->e.lang, args) : kiln_arena_strdup(a, args);

	if (!v)
		entry_error(b, "out of memory");
	b->e.lang = v;
}

/* The directives of one line, in rpm's order; false after the first that fails (rpm
 * drops the line then). */
static bool directives(struct files_state *st, struct entry_build *b, char *buf)
{
	static const struct {
		const char *name;
		bool needs_args, alone, dev;
	} order[] = {
	    {"%verify", true, false, false}, {"%defverify", true, false, false},
	    {"%attr", true, false, false},   {"%defattr", true, true, false},
	    {"%dev", true, false, true},     {"%config", false, false, false},
	    {"%lang", true, false, false},   {"%caps", false, false, false},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(order) && !b->err.len; i++) {
		struct directive d = {
		    order[i].name, order[i].needs_args, order[i].alone, order[i].dev, NULL, NULL};
		enum dir_found f = dir_take(buf, &d, b);
		uint32_t v;

		if (f == DIR_ABSENT || f == DIR_ERROR)
			continue;
		switch (i) {
		case 0:
			if (parse_verify(b, d.args, d.name, &v)) {
				b->e.verifyflags = v;
				b->e.flags |= SPEC_ENTRY_VERIFY;
			}
			break;
		case 1:
			if (parse_verify(b, d.args, d.name, &v)) {
				st->defverify = v;
				st->defverify_given = true;
			}
			break;
		case 2:
			parse_attr(st->p, b, d.args, &b->e.attr, false);
			break;
		case 3:
			parse_attr(st->p, b, d.args, &st->defattr, true);
			break;
		case 4:
			parse_dev(b, d.args);
			break;
		case 5:
			b->e.fileflags |= RPMTAG_FILE_CONFIG;
			if (f == DIR_ARGS)
				parse_config(b, d.args);
			break;
		case 6:
			/* %lang may come more than once. */
			parse_lang(st, b, d.args);
			i -= strstr(buf, "%lang") ? 1 : 0;
			break;
		default:
			/* NEEDSWORK(#4): rpm checks and normalises the text with libcap
			 * (cap_net_raw+ep becomes cap_net_raw=ep); kiln keeps it as written. */
			if (f == DIR_ARGS)
				b->e.caps = spec_strdup(st->p, d.args, strlen(d.args));
			break;
		}
		free(d.args);
	}
	return !b->err.len;
}

/* ---------------------------------------------------------------------------------------- */
/* Plain words: virtual attributes and file names. */

struct flag_word {
	const char *word;
	uint32_t fileflags;
	unsigned flags;
};

static const struct flag_word flag_words[] = {
    {"%dir", 0, SPEC_ENTRY_DIR},
    {"%docdir", 0, SPEC_ENTRY_DOCDIR},
    {"%doc", RPMTAG_FILE_DOC, 0},
    {"%ghost", RPMTAG_FILE_GHOST, 0},
    {"%exclude", 0, SPEC_ENTRY_EXCLUDE},
    {"%readme", RPMTAG_FILE_README, 0},
    {"%license", RPMTAG_FILE_LICENSE, 0},
    {"%pubkey", RPMTAG_FILE_PUBKEY, 0},
    {"%missingok", RPMTAG_FILE_MISSINGOK, 0},
    {"%artifact", RPMTAG_FILE_ARTIFACT, 0},
};

static bool flag_word(struct entry_build *b, const char *w)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(flag_words); i++) {
		if (!strcmp(w, flag_words[i].word)) {
			b->e.fileflags |= flag_words[i].fileflags;
			b->e.flags |= flag_words[i].flags;
			return true;
		}
	}
	return false;
}

/* rpm's strtokWithQuotes: blanks separate (a backslash does not protect one); a word that
 * starts with '"' runs to the next '"' (or the end) and loses its quotes. */
static char *plain_word(char **s, bool *quoted)
{
	char *p = *s;
	char *w;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return NULL;
	*quoted = *p == '"';
	if (*quoted) {
		w = ++p;
		p = strchr(p, '"');
		/* (A quote that is never closed leaves its mark for name_forms().) */
		if (!p)
			w[-1] = '\0';
	} else {
		w = p;
		p = strpbrk(p, " \t\n");
	}
	if (p)
		*p++ = '\0';
	*s = p ? p : w + strlen(w);
	return w;
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

/* A word's name (quotes gone, backslash escapes applied) and glob forms. */
static kiln_rc name_forms(struct files_state *st, struct entry_build *b, size_t i)
{
	struct kiln_buf w = KILN_BUF_INIT(KILN_LIMIT_PATH * 4);
	struct kiln_buf g = KILN_BUF_INIT(KILN_LIMIT_PATH * 8);
	const char *q = b->paths[i];
	kiln_rc rc = KILN_OK;

	if (b->quoted[i] && q[-1] != '"')
		entry_error(b, "Missing quote: \"%s", q);
	for (; *q; q++) {
		bool esc = *q == '\\';

		if (esc && !q[1]) {
			if (!b->quoted[i])
				entry_error(b, "Trailing backslash: %s", b->paths[i]);
			break;
		}
		q += esc;
		name_addch(&w, &g, *q, esc || b->quoted[i]);
	}
	b->paths[i] = w.err ? NULL : spec_strdup(st->p, w.ptr, w.len);
	b->globs[i] = g.err ? NULL : spec_strdup(st->p, g.ptr, g.len);
	if (!b->paths[i] || !b->globs[i])
		rc = KILN_ENOMEM;
	kiln_buf_release(&w);
	kiln_buf_release(&g);
	return rc;
}

/* Names must be absolute, except for %doc, %license and %pubkey, which may name files of
 * the build directory (relative %doc/%license lines are "special"). The virtual
 * attributes count from where they stand. */
static kiln_rc plain_words(struct entry_build *b, char *buf)
{
	const uint32_t relative_ok = RPMTAG_FILE_DOC | RPMTAG_FILE_LICENSE | RPMTAG_FILE_PUBKEY;
	char *s = buf;
	bool quoted = false;
	char *w;

	while ((w = plain_word(&s, &quoted))) {
		if (flag_word(b, w))
			continue;
		if (w[0] != '/' && !(b->e.fileflags & relative_ok)) {
			entry_error(b, "File must begin with \"/\": %s", w);
			continue;
		}
		if (w[0] != '/' && (b->e.fileflags & (RPMTAG_FILE_DOC | RPMTAG_FILE_LICENSE)))
			b->e.flags |= SPEC_ENTRY_SPECIAL;
		if (b->npaths >= KILN_ARRAY_SIZE(b->paths)) {
			entry_error(b, "More than one file on a line: %s", w);
			continue;
		}
		/* The raw word (in the line's copy) until name_forms() makes the names. */
		b->quoted[b->npaths] = quoted;
		b->paths[b->npaths++] = w;
	}
	return KILN_OK;
}

/* What rpm refuses once it has the names: a special %doc/%license line takes relative
 * names of that one kind only; any other line one name. */
static void check_names(struct entry_build *b)
{
	const unsigned other = SPEC_ENTRY_DIR | SPEC_ENTRY_DOCDIR | SPEC_ENTRY_EXCLUDE;
	uint32_t kind = b->e.fileflags;
	size_t i;

	if (b->e.flags & SPEC_ENTRY_SPECIAL) {
		bool one_kind = (kind == RPMTAG_FILE_DOC || kind == RPMTAG_FILE_LICENSE) &&
		                !(b->e.flags & other);

		for (i = 0; i < b->npaths; i++) {
			if (!one_kind || b->paths[i][0] == '/')
				entry_error(b, "Can't mix special %s with other forms: %s",
				            kind & RPMTAG_FILE_DOC ? "%doc" : "%license",
				            b->paths[i]);
		}
		return;
	}
	if (b->npaths > 1)
		entry_error(b, "More than one file on a line: %s", b->paths[1]);
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

/* One manifest line, the way rpm's processPackageFiles reads it. The line's %verify
 * default is the one in force before the line (a %defverify on it counts from the next),
 * its %defattr the one after. */
static kiln_rc parse_line(struct files_state *st, const char *line)
{
	struct entry_build b;
	char *buf = kiln_strndup(line, strcspn(line, "\n"));
	uint32_t defverify = st->defverify;
	bool defverify_given = st->defverify_given;
	kiln_rc rc = KILN_OK;
	size_t i;

	if (!buf)
		return kiln_err_set(st->p->err, KILN_ENOMEM, "out of memory");
	/* Only the entry and the count: the path arrays (20 KiB) are read below npaths only. */
	memset(&b.e, 0, sizeof(b.e));
	b.npaths = 0;
	kiln_buf_init(&b.err, KILN_ERR_MSG_MAX);
	b.e.line = st->p->lineno;
	if (directives(st, &b, buf))
		rc = plain_words(&b, buf);
	if (!rc && !b.err.len)
		check_names(&b);
	/* Only now, as rpm globs a name after it accepted the line. */
	for (i = 0; !rc && i < b.npaths; i++)
		rc = name_forms(st, &b, i);
	b.e.defattr = st->defattr;
	if (!(b.e.flags & SPEC_ENTRY_VERIFY))
		b.e.verifyflags = defverify;
	if (defverify_given)
		b.e.flags |= SPEC_ENTRY_DEFVERIFY;
	if (!rc && (b.npaths || b.err.len || b.e.fileflags ||
	            (b.e.flags & ~(unsigned)(SPEC_ENTRY_VERIFY | SPEC_ENTRY_DEFVERIFY))))
		rc = entry_store(st, &b);
	kiln_buf_release(&b.err);
	free(buf);
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

/* %files -f FILE: rpm takes every "-f" word followed by another as a file list (popt only
 * checks the options), and keeps the lists of an earlier %files of the package. */
static kiln_rc file_lists(struct spec_parse_priv *p, struct spec_package *pkg, char **argv,
                          int argc)
{
	int i;

	for (i = 1; i + 1 < argc; i++) {
		const char **v;

		if (strcmp(argv[i], "-f"))
			continue;
		v = kiln_arena_array(&p->spec->arena, pkg->nfile_lists + 1, sizeof(*v));
		if (!v)
			return kiln_arena_finish(&p->spec->arena, p->err);
		if (pkg->nfile_lists)
			memcpy(v, pkg->file_lists, pkg->nfile_lists * sizeof(*v));
		v[pkg->nfile_lists] = spec_strdup(p, argv[i + 1], strlen(argv[i + 1]));
		if (!v[pkg->nfile_lists])
			return KILN_ENOMEM;
		pkg->file_lists = v;
		pkg->nfile_lists++;
	}
	return KILN_OK;
}

enum spec_part spec_parse_files(struct spec_parse_priv *p)
{
	struct files_state st;
	struct spec_header_args a;
	struct spec_package *pkg = NULL;
	char **argv = NULL;
	int argc = 0;
	kiln_rc rc;

	memset(&st, 0, sizeof(st));
	st.p = p;
	st.defverify = RPMTAG_VERIFY_ALL;
	if (p->line.len && p->line.ptr[p->line.len - 1] == '\n')
		kiln_buf_truncate(&p->line, p->line.len - 1);
	rc = spec_split_options(p, p->line.ptr, &argv, &argc);
	if (!rc)
		rc = spec_header_args(p, argv, argc, "nf", p->line.ptr, &a);
	if (!rc)
		rc = spec_header_package(p, &a, &pkg);
	/* rpm warns and forgets the earlier list (its -f files stay). */
	if (!rc && pkg->has_files) {
		spec_warn(p, "line %d: multiple %%files for package '%s'", p->lineno, pkg->name);
		pkg->nfiles = 0;
	}
	if (!rc)
		rc = file_lists(p, pkg, argv, argc);
	spec_argv_free(argv, argc);
	if (rc)
		return SPEC_PART_ERROR;
	pkg->has_files = true;
	st.pkg = pkg;
	return files_body(&st);
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
	st.defverify = pkg->has_files ? pkg->files_defverify : (uint32_t)RPMTAG_VERIFY_ALL;
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
