/*
 * sections.c - build sections (with -a/-p), %description, scriptlets and triggers,
 * %changelog, %sourcelist/%patchlist and %sepolicy.
 */
#include "util/util.h"

#include <errno.h>
#include <time.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static const char *line_text(struct spec_parse_priv *p)
{
	if (p->line.len && p->line.ptr[p->line.len - 1] == '\n')
		kiln_buf_truncate(&p->line, p->line.len - 1);
	return p->line.ptr;
}

/* Read lines into body (when not NULL) until the next section header; returns it. */
static enum spec_part read_body(struct spec_parse_priv *p, unsigned strip, struct kiln_buf *body)
{
	for (;;) {
		enum spec_part next;
		int r = spec_read_line(p, strip);

		if (r > 0)
			return SPEC_PART_NONE;
		if (r < 0)
			return SPEC_PART_ERROR;
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			return next;
		if (body) {
			kiln_buf_add(body, p->line.ptr, p->line.len);
			if (strip & SPEC_STRIP_TRAILINGSPACE)
				kiln_buf_addch(body, '\n');
		}
	}
}

kiln_rc spec_lookup_package(struct spec_parse_priv *p, const char *name, bool full,
                            struct spec_package **out)
{
	struct kiln_buf nvr = KILN_BUF_INIT(KILN_LIMIT_LINE);
	kiln_rc rc = KILN_OK;

	if (!name) {
		*out = p->spec->packages[0];
		return KILN_OK;
	}
	if (full)
		kiln_buf_addstr(&nvr, name);
	else
		kiln_buf_addf(&nvr, "%s-%s", p->spec->packages[0]->name, name);
	*out = nvr.err ? NULL : spec_package_find(p->spec, nvr.ptr);
	if (!*out)
		rc = KILN_ENOTFOUND;
	kiln_buf_release(&nvr);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Build sections. */

static enum spec_section part_section(enum spec_part part)
{
	switch (part) {
	case SPEC_PART_PREP:
		return SPEC_SEC_PREP;
	case SPEC_PART_BUILDREQUIRES:
		return SPEC_SEC_BUILDREQUIRES;
	case SPEC_PART_CONF:
		return SPEC_SEC_CONF;
	case SPEC_PART_BUILD:
		return SPEC_SEC_BUILD;
	case SPEC_PART_INSTALL:
		return SPEC_SEC_INSTALL;
	case SPEC_PART_CHECK:
		return SPEC_SEC_CHECK;
	default:
		return SPEC_SEC_CLEAN;
	}
}

/* "-a" / "-p" on a build section header (rpm 4.20's popt table: clusters such as "-ap"
 * work, other words are ignored, "--" ends the options). 0 main, 1 append, 2 prepend, -1
 * error. */
static int section_mode(struct spec_parse_priv *p, enum spec_section sec)
{
	char **argv = NULL;
	int argc = 0;
	unsigned bits = 0;
	int mode = 0;
	int i;

	(void)sec;
	if (spec_split_options(p, p->line.ptr, &argv, &argc))
		return -1;
	for (i = 1; i < argc && mode >= 0 && strcmp(argv[i], "--"); i++) {
		const char *c;

		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		for (c = argv[i] + 1; *c && mode >= 0; c++) {
			if (*c == 'a' || *c == 'p') {
				bits |= *c == 'a' ? 1u : 2u;
				continue;
			}
			spec_error(p, KILN_ESYNTAX, "line %d: Bad %s option %s: unknown option",
			           p->lineno, argv[0], argv[i]);
			mode = -1;
		}
	}
	if (mode >= 0 && bits == 3) {
		spec_error(p, KILN_ESYNTAX, "line %d: append and prepend specified: %s", p->lineno,
		           line_text(p));
		mode = -1;
	}
	if (mode >= 0)
		mode = (int)bits;
	spec_argv_free(argv, argc);
	return mode;
}

static kiln_rc add_fragment(struct spec_parse_priv *p, enum spec_section sec, bool prepend,
                            const struct kiln_buf *text)
{
	struct spec_fragment *f;

	if (p->nfrags == p->capfrags) {
		size_t cap = p->capfrags ? p->capfrags * 2 : 8;
		struct spec_fragment *v = kiln_reallocarray(p->frags, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
		p->frags = v;
		p->capfrags = cap;
	}
	f = &p->frags[p->nfrags];
	f->sec = sec;
	f->prepend = prepend;
	f->text = spec_strdup(p, text->ptr, text->len);
	if (!f->text)
		return KILN_ENOMEM;
	p->nfrags++;
	return KILN_OK;
}

/* Store a section's text: the main body or a fragment. */
static kiln_rc store_section(struct spec_parse_priv *p, enum spec_section sec, int mode,
                             const struct kiln_buf *text)
{
	if (mode)
		return add_fragment(p, sec, mode == 2, text);
	p->have_section[sec] = true;
	kiln_buf_add(&p->secbuf[sec], text->ptr, text->len);
	return kiln_buf_finish(&p->secbuf[sec], p->err);
}

static int section_begin(struct spec_parse_priv *p, enum spec_section sec)
{
	int mode = section_mode(p, sec);

	if (mode == 0 && p->have_section[sec]) {
		spec_error(p, KILN_ESYNTAX, "line %d: second %%%s", p->lineno,
		           spec_section_name(sec));
		return -1;
	}
	return mode;
}

enum spec_part spec_parse_build_section(struct spec_parse_priv *p, enum spec_part part)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	enum spec_section sec = part_section(part);
	enum spec_part next;
	int mode = section_begin(p, sec);

	if (mode < 0)
		return SPEC_PART_ERROR;
	next = read_body(p, SPEC_STRIP_NOTHING, &body);
	if (next != SPEC_PART_ERROR &&
	    (kiln_buf_finish(&body, p->err) || store_section(p, sec, mode, &body)))
		next = SPEC_PART_ERROR;
	kiln_buf_release(&body);
	return next;
}

/* %prep's lines, each with its %setup and %patch turned into shell as it is read, so their
 * errors name the line they are on. */
static enum spec_part prep_body(struct spec_parse_priv *p, struct kiln_buf *done)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	enum spec_part next = SPEC_PART_ERROR;

	for (;;) {
		int r = spec_read_line(p, SPEC_STRIP_NOTHING);

		if (r) {
			next = r > 0 ? SPEC_PART_NONE : SPEC_PART_ERROR;
			break;
		}
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			break;
		kiln_buf_reset(&raw);
		kiln_buf_add(&raw, p->line.ptr, p->line.len);
		if (kiln_buf_finish(&raw, p->err) || spec_prep_process(p, &raw, done)) {
			next = SPEC_PART_ERROR;
			break;
		}
	}
	kiln_buf_release(&raw);
	return next;
}

enum spec_part spec_parse_prep(struct spec_parse_priv *p)
{
	struct kiln_buf done = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	int mode = section_begin(p, SPEC_SEC_PREP);
	enum spec_part next = SPEC_PART_ERROR;
	size_t mark = p->spec->parsed.len;

	if (mode < 0)
		return SPEC_PART_ERROR;
	next = prep_body(p, &done);
	if (next == SPEC_PART_ERROR)
		goto fail;
	/* The parsed text shows the commands, not the %setup/%patch lines. The next
	 * section's header line read above follows them (rpm 4.18 loses it; 4.20 not). */
	kiln_buf_truncate(&p->spec->parsed, mark);
	spec_parsed_add(p, done.ptr, done.len);
	if (next != SPEC_PART_NONE)
		spec_parsed_add(p, p->line.ptr, p->line.len);
	if (store_section(p, SPEC_SEC_PREP, mode, &done))
		goto fail;
	p->prep_done = true;
	kiln_buf_release(&done);
	return next;
fail:
	kiln_buf_release(&done);
	return SPEC_PART_ERROR;
}

/* ---------------------------------------------------------------------------------------- */
/* Section header arguments: [-n] [NAME] plus per-section options. */

/* rpm's error for an option popt refused: the word, then the line. */
static kiln_rc bad_option(struct spec_parse_priv *p, const struct spec_header_args *a,
                          const char *word)
{
	return spec_error(p, KILN_ESYNTAX, "line %d: Bad option %s: %s", p->lineno, word, a->line);
}

static void header_value(struct spec_header_args *a, char opt, const char *value)
{
	switch (opt) {
	case 'n':
		a->name = value;
		a->full = true;
		break;
	case 'p':
		a->prog = value;
		break;
	case 'f':
		a->file = value;
		break;
	case 'l':
		a->lang = value;
		break;
	default:
		a->priority = value;
		break;
	}
}

/* rpm checks -p's value as popt returns it, before the rest of the header. */
static kiln_rc prog_check(struct spec_parse_priv *p, const char *prog)
{
	if (prog[0] == '<' && prog[strlen(prog) - 1] != '>')
		return spec_error(p, KILN_ESYNTAX, "line %d: internal script must end with '>': %s",
		                  p->lineno, prog);
	if (prog[0] != '<' && prog[0] != '/')
		return spec_error(p, KILN_ESYNTAX,
		                  "line %d: script program must begin with '/': %s", p->lineno,
		                  prog);
	return KILN_OK;
}

/* One option word: a cluster of flags (-e, -q) that may end in an option taking a value,
 * attached ("-nfoo") or in the next word. */
static kiln_rc header_option(struct spec_parse_priv *p, char **argv, int argc, int *i,
                             const char *allowed, struct spec_header_args *a)
{
	const char *word = argv[*i];
	const char *c;

	if (word[1] == '-')
		return bad_option(p, a, word);
	for (c = word + 1; *c; c++) {
		const char *value;

		if (!strchr(allowed, *c))
			return bad_option(p, a, word);
		if (*c == 'e' || *c == 'q') {
			a->expand |= *c == 'e';
			a->qformat |= *c == 'q';
			continue;
		}
		value = c[1] ? c + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
		if (!value)
			return bad_option(p, a, word);
		header_value(a, *c, value);
		return *c == 'p' ? prog_check(p, value) : KILN_OK;
	}
	return KILN_OK;
}

/* Parse a section header's options (allowed lists the letters the section takes) the way
 * popt does for rpm: options anywhere, "--" ends them; then at most one name, and none
 * beside -n. */
kiln_rc spec_header_args(struct spec_parse_priv *p, char **argv, int argc, const char *allowed,
                         const char *line, struct spec_header_args *a)
{
	const char *words[2];
	int nwords = 0;
	bool dashdash = false;
	int i;

	memset(a, 0, sizeof(*a));
	a->line = line;
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		kiln_rc rc;

		if (!dashdash && !strcmp(s, "--")) {
			dashdash = true;
			continue;
		}
		if (dashdash || s[0] != '-' || !s[1]) {
			if (nwords < 2)
				words[nwords++] = s;
			continue;
		}
		rc = header_option(p, argv, argc, &i, allowed, a);
		if (rc)
			return rc;
	}
	if (nwords && !a->name) {
		a->name = words[0];
		nwords--;
	}
	if (nwords)
		return spec_error(p, KILN_ESYNTAX, "line %d: Too many names: %s", p->lineno, line);
	return KILN_OK;
}

kiln_rc spec_header_package(struct spec_parse_priv *p, const struct spec_header_args *a,
                            struct spec_package **out)
{
	kiln_rc rc = spec_lookup_package(p, a->name, a->full, out);

	if (rc == KILN_ENOTFOUND)
		return spec_error(p, KILN_ENOTFOUND, "line %d: %s: package %s%s%s does not exist",
		                  p->lineno, a->line, a->full ? "" : p->spec->packages[0]->name,
		                  a->full ? "" : "-", a->name);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* %description. */

static void trim_trailing_newlines(struct kiln_buf *b)
{
	while (b->len && (b->ptr[b->len - 1] == '\n' || is_space(b->ptr[b->len - 1])))
		kiln_buf_truncate(b, b->len - 1);
}

enum spec_part spec_parse_description(struct spec_parse_priv *p)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct spec_package *pkg = NULL;
	struct spec_header_args a;
	enum spec_part next = SPEC_PART_ERROR;
	char **argv = NULL;
	int argc = 0;

	if (spec_split_options(p, p->line.ptr, &argv, &argc) ||
	    spec_header_args(p, argv, argc, "nl", line_text(p), &a) ||
	    spec_header_package(p, &a, &pkg))
		goto out;
	next = read_body(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS, &body);
	if (next == SPEC_PART_ERROR)
		goto out;
	/* rpm notices when it stores the text, at the end of the section. */
	if (spec_has_i18n(pkg->tags, RPMTAG_DESCRIPTION, a.lang))
		spec_warn(p, "line %d: second Description", p->lineno);
	trim_trailing_newlines(&body);
	if (kiln_buf_finish(&body, p->err)) {
		next = SPEC_PART_ERROR;
		goto out;
	}
	/* rpm only asks for the DESCRIPTION tag: a translated text alone is enough. */
	pkg->has_description = true;
	if (spec_put_i18n(p, pkg->tags, RPMTAG_DESCRIPTION, a.lang, body.ptr))
		next = SPEC_PART_ERROR;
out:
	spec_argv_free(argv, argc);
	kiln_buf_release(&body);
	return next;
}

/* ---------------------------------------------------------------------------------------- */
/* Scriptlets and triggers. */

static bool is_trigger(enum spec_script_kind k)
{
	return k >= SPEC_SCRIPT_TRIGGERPREIN;
}

static bool is_file_trigger(enum spec_script_kind k)
{
	return k >= SPEC_SCRIPT_FILETRIGGERIN;
}

static const char *const script_names[] = {
    "pre",
    "post",
    "preun",
    "postun",
    "pretrans",
    "posttrans",
    "preuntrans",
    "postuntrans",
    "verifyscript",
    "triggerprein",
    "triggerin",
    "triggerun",
    "triggerpostun",
    "filetriggerin",
    "filetriggerun",
    "filetriggerpostun",
    "transfiletriggerin",
    "transfiletriggerun",
    "transfiletriggerpostun",
};

const char *spec_script_name(enum spec_script_kind kind)
{
	return (size_t)kind < KILN_ARRAY_SIZE(script_names) ? script_names[kind] : "?";
}

static uint32_t trigger_flag(enum spec_script_kind k)
{
	switch (k) {
	case SPEC_SCRIPT_TRIGGERPREIN:
		return RPMTAG_DEP_TRIGGERPREIN;
	case SPEC_SCRIPT_TRIGGERIN:
	case SPEC_SCRIPT_FILETRIGGERIN:
	case SPEC_SCRIPT_TRANSFILETRIGGERIN:
		return RPMTAG_DEP_TRIGGERIN;
	case SPEC_SCRIPT_TRIGGERUN:
	case SPEC_SCRIPT_FILETRIGGERUN:
	case SPEC_SCRIPT_TRANSFILETRIGGERUN:
		return RPMTAG_DEP_TRIGGERUN;
	default:
		return RPMTAG_DEP_TRIGGERPOSTUN;
	}
}

/* -p PROG: an absolute path with arguments, or "<lua>" (rpm knows no other built-in; its
 * form is checked with the options, the name once the header is read). */
static kiln_rc script_prog(struct spec_parse_priv *p, struct spec_script *s, const char *prog)
{
	char **argv = NULL;
	int argc = 0;
	int i;
	kiln_rc rc;

	if (prog[0] == '<' && strcmp(prog, "<lua>"))
		return spec_error(p, KILN_ESYNTAX, "line %d: unsupported internal script: %s",
		                  p->lineno, prog);
	rc = spec_split_options(p, prog, &argv, &argc);
	if (rc)
		return rc;
	if (argc > 1 && is_trigger(s->kind))
		rc = spec_error(p, KILN_ESYNTAX,
		                "line %d: interpreter arguments not allowed in triggers: %s",
		                p->lineno, prog);
	s->prog = kiln_arena_array(&p->spec->arena, (size_t)argc + 1, sizeof(*s->prog));
	for (i = 0; !rc && s->prog && i < argc; i++)
		s->prog[i] = spec_strdup(p, argv[i], strlen(argv[i]));
	s->nprog = (size_t)argc;
	spec_argv_free(argv, argc);
	if (!rc && !s->prog)
		rc = kiln_arena_finish(&p->spec->arena, p->err);
	return rc;
}

/* -P: popt's integer (any base strtol() reads, within int), stored as rpm stores it. Only
 * triggers take it; rpm uses it for file triggers. */
static kiln_rc script_priority(struct spec_parse_priv *p, struct spec_script *s,
                               const struct spec_header_args *a)
{
	char *end = NULL;
	long long v;

	if (!a->priority)
		return KILN_OK;
	if (!is_trigger(s->kind))
		return spec_error(p, KILN_ESYNTAX,
		                  "line %d: Priorities are allowed only for file triggers : %s",
		                  p->lineno, a->prog ? a->prog : "/bin/sh");
	errno = 0;
	v = strtoll(a->priority, &end, 0);
	if (!*a->priority || *end || errno || v < INT32_MIN || v > INT32_MAX)
		return bad_option(p, a, a->priority);
	s->priority = (uint32_t)(int32_t)v;
	return KILN_OK;
}

static kiln_rc script_add(struct spec_package *pkg, struct spec *spec, struct spec_script **out,
                          struct kiln_err *err)
{
	if (pkg->nscripts == pkg->capscripts) {
		size_t cap = pkg->capscripts ? pkg->capscripts * 2 : 4;
		struct spec_script *v = kiln_arena_array(&spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&spec->arena, err);
		if (pkg->nscripts)
			memcpy(v, pkg->scripts, pkg->nscripts * sizeof(*v));
		pkg->scripts = v;
		pkg->capscripts = cap;
	}
	*out = &pkg->scripts[pkg->nscripts++];
	memset(*out, 0, sizeof(**out));
	return KILN_OK;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* rpm splits a trigger header after the first "--" with a blank on each side; NULL when
 * there is none. */
static const char *trigger_separator(const char *line)
{
	const char *s = line;

	while ((s = strstr(s, "--"))) {
		s += 2;
		if (s - 3 >= line && is_blank(s[-3]) && is_blank(*s))
			return s;
	}
	return NULL;
}

/* rpm refuses a second plain trigger of the same kind on an overlapping condition. */
static kiln_rc trigger_unique(struct spec_parse_priv *p, const struct spec_package *pkg,
                              const struct spec_script *s, const char *line)
{
	uint32_t sense = trigger_flag(s->kind);
	size_t i, j, k;

	for (i = 0; i < pkg->nscripts && &pkg->scripts[i] != s; i++) {
		const struct spec_script *e = &pkg->scripts[i];

		if (!is_trigger(e->kind) || is_file_trigger(e->kind))
			continue;
		for (j = 0; j < e->conds.n; j++) {
			for (k = 0; k < s->conds.n; k++) {
				if ((e->conds.v[j].flags & sense) &&
				    spec_dep_overlap(&e->conds.v[j], &s->conds.v[k]))
					return spec_error(
					    p, KILN_ESYNTAX,
					    "line %d: Trigger fired by the same package "
					    "is already defined in spec file: %s",
					    p->lineno, line);
			}
		}
	}
	return KILN_OK;
}

/* The conditions after the separator: dependencies, or path prefixes for file triggers. */
static kiln_rc script_conds(struct spec_parse_priv *p, const struct spec_package *pkg,
                            struct spec_script *s, const char *conds, const char *line)
{
	kiln_rc rc;

	if (is_file_trigger(s->kind))
		return spec_dep_parse(p, conds, trigger_flag(s->kind), SPEC_RICH_NONE,
		                      SPEC_DEPP_FILE_TRIGGER, &s->conds, line);
	rc = spec_dep_parse(p, conds, trigger_flag(s->kind), SPEC_RICH_NONE, SPEC_DEPP_TRIGGER,
	                    &s->conds, line);
	if (!rc)
		rc = trigger_unique(p, pkg, s, line);
	return rc;
}

/* The header as rpm sees it: for triggers cut after the separator, with the conditions
 * apart. */
static kiln_rc script_header(struct spec_parse_priv *p, enum spec_script_kind kind, char **head,
                             const char **conds)
{
	const char *line = line_text(p);
	const char *sep = is_trigger(kind) ? trigger_separator(line) : NULL;

	*conds = NULL;
	if (is_trigger(kind) && !sep)
		return spec_error(p, KILN_ESYNTAX, "line %d: triggers must have --: %s", p->lineno,
		                  line);
	if (sep) {
		const char *c = sep;

		while (*c && is_space(*c))
			c++;
		if (!*c)
			return spec_error(p, KILN_ESYNTAX, "line %d: missing trigger condition: %s",
			                  p->lineno, line);
		*conds = c;
	}
	*head = spec_strdup(p, line, sep ? (size_t)(sep - line) : strlen(line));
	return *head ? KILN_OK : KILN_ENOMEM;
}

/* Fill a new script from its header. */
static kiln_rc script_setup(struct spec_parse_priv *p, struct spec_package *pkg,
                            struct spec_script *s, const struct spec_header_args *a,
                            const char *conds, const char *line)
{
	kiln_rc rc = KILN_OK;

	s->line = p->lineno;
	s->priority = 1000000;
	s->flags =
	    (a->expand ? SPEC_SCRIPT_F_EXPAND : 0) | (a->qformat ? SPEC_SCRIPT_F_QFORMAT : 0);
	if (a->prog)
		rc = script_prog(p, s, a->prog);
	if (!rc)
		rc = script_priority(p, s, a);
	if (!rc && a->file)
		s->file = spec_strdup(p, a->file, strlen(a->file));
	if (!rc && conds)
		rc = script_conds(p, pkg, s, conds, line);
	return rc;
}

static kiln_rc script_begin(struct spec_parse_priv *p, struct spec_script **out)
{
	enum spec_script_kind kind = p->script_kind;
	struct spec_package *pkg = NULL;
	struct spec_header_args a;
	const char *conds = NULL;
	char *head = NULL;
	char **argv = NULL;
	int argc = 0;
	size_t i;
	kiln_rc rc = script_header(p, kind, &head, &conds);

	if (!rc)
		rc = spec_split_options(p, head, &argv, &argc);
	if (!rc)
		rc = spec_header_args(p, argv, argc, "npfeqP", head, &a);
	if (!rc)
		rc = spec_header_package(p, &a, &pkg);
	for (i = 0; !rc && !is_trigger(kind) && i < pkg->nscripts; i++) {
		if (pkg->scripts[i].kind == kind)
			rc = spec_error(p, KILN_ESYNTAX, "line %d: Second %%%s", p->lineno,
			                spec_script_name(kind));
	}
	if (!rc)
		rc = script_add(pkg, p->spec, out, p->err);
	if (!rc) {
		(*out)->kind = kind;
		rc = script_setup(p, pkg, *out, &a, conds, line_text(p));
	}
	spec_argv_free(argv, argc);
	return rc;
}

enum spec_part spec_parse_script(struct spec_parse_priv *p)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct spec_script *s = NULL;
	enum spec_part next = SPEC_PART_ERROR;

	if (script_begin(p, &s))
		goto out;
	next = read_body(p, SPEC_STRIP_NOTHING, &body);
	if (next == SPEC_PART_ERROR)
		goto out;
	trim_trailing_newlines(&body);
	if (kiln_buf_finish(&body, p->err)) {
		next = SPEC_PART_ERROR;
		goto out;
	}
	s->body = spec_strdup(p, body.ptr, body.len);
	if (!s->body)
		next = SPEC_PART_ERROR;
out:
	kiln_buf_release(&body);
	return next;
}

/* ---------------------------------------------------------------------------------------- */
/* %changelog. */

static const char *const weekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
/* rpm allows February 29 in any year (and day 0, which mktime() moves back a day). */
static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

static int find_word(const char *const *list, size_t n, const char *w, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strlen(list[i]) == len && !memcmp(list[i], w, len))
			return (int)i;
	}
	return -1;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* The calendar date of a day number (days since 1970-01-01). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static const char *skip_blanks(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

/* The next blank-separated word after *s. */
static bool next_word(const char **s, const char **w, size_t *len)
{
	const char *q = skip_blanks(*s);

	if (!*q)
		return false;
	*w = q;
	while (*q && !is_space(*q))
		q++;
	*len = (size_t)(q - *w);
	*s = q;
	return true;
}

/* Digits at *s as strtol() reads them (none is 0), at most max. */
static bool clock_field(const char **s, int64_t max, int64_t *v)
{
	const char *q = *s;
	int64_t n = 0;

	while (*q >= '0' && *q <= '9' && n <= max)
		n = n * 10 + (*q++ - '0');
	*s = q;
	*v = n;
	return n <= max;
}

/* "HH:MM:SS TZ" at *s. kiln has no time zone database: the zone is taken as UTC, which is
 * what rpm gets for UTC, GMT and names the host's zoneinfo lacks. */
static bool clock_time(const char **s, int64_t *secs)
{
	const char *q = *s;
	const char *tz;
	size_t tzlen;
	int64_t h, m, sec;

	if (!clock_field(&q, 23, &h) || *q++ != ':' || !clock_field(&q, 59, &m) || *q++ != ':' ||
	    !clock_field(&q, 59, &sec))
		return false;
	if (!next_word(&q, &tz, &tzlen) || tzlen > 8)
		return false;
	*secs = h * 3600 + m * 60 + sec;
	*s = q;
	return true;
}

/* rpm's dateToTimet: "Dow Mon DD YYYY" (12:00 UTC that day) or "Dow Mon DD HH:MM:SS TZ
 * YYYY"; *nwords gets 4 or 6. A date that names the wrong weekday, or day 0, warns. */
static bool changelog_date(struct spec_parse_priv *p, const char *date, int64_t *t, int *nwords)
{
	const char *s = date;
	const char *w;
	size_t len;
	int dow, mon;
	int64_t day, year, secs = 12 * 3600, y;
	unsigned m, d;

	if (!next_word(&s, &w, &len) || (dow = find_word(weekdays, 7, w, len)) < 0 ||
	    !next_word(&s, &w, &len) || (mon = find_word(months, 12, w, len)) < 0 ||
	    !next_word(&s, &w, &len) ||
	    util_parse_i64(w, len, 10, 0, month_days[mon], &day, NULL) || !next_word(&s, &w, &len))
		return false;
	*nwords = 4;
	if (w[1] == ':' || (w[1] && w[2] == ':')) {
		*nwords = 6;
		s = w;
		if (!clock_time(&s, &secs) || !next_word(&s, &w, &len))
			return false;
	}
	if (util_parse_i64(w, len, 10, 1990, 2999, &year, NULL))
		return false;
	*t = days_from_civil(year, (unsigned)mon + 1, (unsigned)day) * 86400 + secs;
	civil_from_days(*t / 86400, &y, &m, &d);
	if (y != year || m != (unsigned)mon + 1 || d != day || ((*t / 86400) + 4) % 7 != dow)
		spec_warn(p, "bogus date in %%changelog: %s", date);
	return true;
}

static kiln_rc changelog_add(struct spec_parse_priv *p, int64_t t, const char *name, size_t namelen,
                             const char *text, size_t textlen)
{
	struct spec *spec = p->spec;
	struct spec_changelog *c;

	if (spec->nchangelog == spec->capchangelog) {
		size_t cap = spec->capchangelog ? spec->capchangelog * 2 : 16;
		struct spec_changelog *v = kiln_arena_array(&spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&spec->arena, p->err);
		if (spec->nchangelog)
			memcpy(v, spec->changelog, spec->nchangelog * sizeof(*v));
		spec->changelog = v;
		spec->capchangelog = cap;
	}
	c = &spec->changelog[spec->nchangelog++];
	c->time = t;
	c->name = spec_strdup(p, name, namelen);
	c->text = spec_strdup(p, text, textlen);
	return c->name && c->text ? KILN_OK : KILN_ENOMEM;
}

/* What survives %_changelog_trimage (seconds before the newest entry) or the older
 * %_changelog_trimtime (a point in time, turned into an age as rpm does). */
struct changelog_trim {
	int64_t age;
	int64_t cutoff;
};

static void changelog_trim_init(struct spec_parse_priv *p, struct changelog_trim *tr)
{
	int64_t trimtime = spec_expand_numeric(p, "%{?_changelog_trimtime}");

	tr->age = spec_expand_numeric(p, "%{?_changelog_trimage}");
	tr->cutoff = 0;
	if (trimtime && !tr->age)
		tr->age = util_clock_wall() - trimtime;
}

/* The entry's name: the header after the date words. (rpm's loop meant to trim trailing
 * blanks starts at the terminating NUL and so keeps them.) */
static kiln_rc changelog_name(struct spec_parse_priv *p, const char *hdr, int nwords,
                              const char **name, size_t *len)
{
	const char *s = hdr;
	const char *w;
	size_t wl;
	int i;

	for (i = 0; i < nwords; i++)
		(void)next_word(&s, &w, &wl);
	s = skip_blanks(s);
	*len = strlen(s);
	*name = s;
	return *len ? KILN_OK : spec_error(p, KILN_ESYNTAX, "missing name in %%changelog");
}

/* One entry at *s ('*'); *s moves to the next one. The text runs to the next line that
 * starts with '*': an entry without text takes the next entry as its text, as rpm's does. */
static kiln_rc changelog_entry(struct spec_parse_priv *p, const char **s, int64_t *last,
                               struct changelog_trim *tr, bool *stop)
{
	const char *eol = strchr(*s, '\n');
	const char *text, *next, *name;
	char *hdr = NULL;
	size_t namelen, textlen;
	int64_t t = 0;
	int nwords = 4;
	kiln_rc rc;

	if (!eol)
		return spec_error(p, KILN_ESYNTAX, "incomplete %%changelog entry");
	hdr = spec_strdup(p, *s + 1, (size_t)(eol - *s - 1));
	if (!hdr)
		return KILN_ENOMEM;
	if (!changelog_date(p, skip_blanks(hdr), &t, &nwords))
		return spec_error(p, KILN_ESYNTAX, "bad date in %%changelog: %s", skip_blanks(hdr));
	if (!*last && tr->age)
		tr->cutoff = t - tr->age;
	if (*last && *last < t)
		return spec_error(p, KILN_ESYNTAX,
		                  "%%changelog not in descending chronological order");
	rc = changelog_name(p, hdr, nwords, &name, &namelen);
	if (rc)
		return rc;
	*last = t;
	text = skip_blanks(eol + 1);
	if (!*text)
		return spec_error(p, KILN_ESYNTAX, "no description in %%changelog");
	for (next = text + 1; *next && !(next[-1] == '\n' && *next == '*'); next++)
		;
	for (textlen = (size_t)(next - text); textlen > 1 && is_space(text[textlen - 1]);)
		textlen--;
	*s = next;
	if (tr->cutoff && t < tr->cutoff) {
		*stop = true;
		return KILN_OK;
	}
	return changelog_add(p, t, name, namelen, text, textlen);
}

/* rpm's addChangelog over the collected %changelog text. */
static kiln_rc changelog_parse(struct spec_parse_priv *p, const char *s)
{
	struct changelog_trim tr;
	int64_t last = 0;
	bool stop = false;
	kiln_rc rc = KILN_OK;

	changelog_trim_init(p, &tr);
	for (s = skip_blanks(s); !rc && !stop && *s;) {
		if (*s != '*')
			return spec_error(p, KILN_ESYNTAX, "%%changelog entries must start with *");
		rc = changelog_entry(p, &s, &last, &tr, &stop);
	}
	return rc;
}

enum spec_part spec_parse_changelog(struct spec_parse_priv *p)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	enum spec_part next;

	/* rpm objects only once the spec has changelog entries. */
	if (p->spec->nchangelog) {
		spec_error(p, KILN_ESYNTAX, "line %d: second %%changelog", p->lineno);
		return SPEC_PART_ERROR;
	}
	next = read_body(p, SPEC_STRIP_COMMENTS, &body);
	if (next != SPEC_PART_ERROR &&
	    (kiln_buf_finish(&body, p->err) || changelog_parse(p, body.ptr))) {
		if (p->flags & SPEC_PARSE_FORCE) {
			/* rpmspec reports changelog errors and carries on. */
			spec_report(p);
		} else {
			next = SPEC_PART_ERROR;
		}
	}
	kiln_buf_release(&body);
	return next;
}

/* ---------------------------------------------------------------------------------------- */
/* %sourcelist, %patchlist, %sepolicy. */

enum spec_part spec_parse_list(struct spec_parse_priv *p, bool patches)
{
	for (;;) {
		enum spec_part next;
		struct kiln_str s;
		char *v;
		kiln_rc rc;
		int r = spec_read_line(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS);

		if (r > 0)
			return SPEC_PART_NONE;
		if (r < 0)
			return SPEC_PART_ERROR;
		next = spec_is_part(p, p->line.ptr);
		if (next != SPEC_PART_NONE)
			return next;
		s = kiln_str_trim(kiln_str_from(p->line.ptr));
		if (!s.len)
			continue;
		v = spec_strdup(p, s.ptr, s.len);
		if (!v)
			return SPEC_PART_ERROR;
		rc = spec_add_source(p, v, patches, false, 0);
		if (rc)
			return SPEC_PART_ERROR;
	}
}

enum spec_part spec_parse_skip(struct spec_parse_priv *p)
{
	return read_body(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS, NULL);
}
