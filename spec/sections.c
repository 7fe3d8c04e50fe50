/*
 * sections.c - build sections (with -a/-p), %description, scriptlets and triggers,
 * %changelog, %sourcelist/%patchlist and %sepolicy.
 */
#include "util/util.h"

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

/* "-a" / "-p" on a build section header (rpm 4.20). 0 main, 1 append, 2 prepend, -1
 * error. */
static int section_mode(struct spec_parse_priv *p, enum spec_section sec)
{
	char **argv = NULL;
	int argc = 0;
	int mode = 0;
	int i;

	if (spec_split_options(p, p->line.ptr, &argv, &argc))
		return -1;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") && mode != 2)
			mode = 1;
		else if (!strcmp(argv[i], "-p") && mode != 1)
			mode = 2;
		else if (!strcmp(argv[i], "-a") || !strcmp(argv[i], "-p")) {
			spec_error(p, KILN_ESYNTAX, "line %d: append and prepend specified: %s",
			           p->lineno, line_text(p));
			mode = -1;
			break;
		} else {
			spec_error(p, KILN_ESYNTAX, "line %d: Bad %%%s option %s: %s", p->lineno,
			           spec_section_name(sec), argv[i], line_text(p));
			mode = -1;
			break;
		}
	}
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

enum spec_part spec_parse_prep(struct spec_parse_priv *p)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	struct kiln_buf done = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	int mode = section_begin(p, SPEC_SEC_PREP);
	enum spec_part next = SPEC_PART_ERROR;
	size_t mark = p->spec->parsed.len;
	kiln_rc rc;

	if (mode < 0)
		return SPEC_PART_ERROR;
	next = read_body(p, SPEC_STRIP_NOTHING, &raw);
	if (next == SPEC_PART_ERROR || kiln_buf_finish(&raw, p->err))
		goto fail;
	rc = spec_prep_process(p, &raw, &done);
	if (rc)
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
	kiln_buf_release(&raw);
	kiln_buf_release(&done);
	return next;
fail:
	kiln_buf_release(&raw);
	kiln_buf_release(&done);
	return SPEC_PART_ERROR;
}

/* ---------------------------------------------------------------------------------------- */
/* Section header arguments: [-n] [NAME] plus per-section options. */

struct header_args {
	const char *name;
	bool full;
	const char *prog;     /* -p */
	const char *file;     /* -f (scripts) */
	const char *lang;     /* -l (description) */
	const char *priority; /* -P (file triggers) */
	bool expand, qformat; /* -e, -q */
	const char **lists;   /* %files -f, repeatable */
	size_t nlists;
	int conds_at; /* index of the argument after "--", or -1 */
};

/* Parse a section header's options. allowed lists the option letters the section takes;
 * prog_opt says whether -p takes an argument. */
static kiln_rc header_args(struct spec_parse_priv *p, char **argv, int argc, const char *allowed,
                           struct header_args *a, const char *what)
{
	int i;

	memset(a, 0, sizeof(*a));
	a->conds_at = -1;
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char **dst = NULL;

		if (!strcmp(s, "--")) {
			a->conds_at = i + 1;
			break;
		}
		if (s[0] != '-' || !s[1]) {
			if (a->name)
				return spec_error(p, KILN_ESYNTAX, "line %d: Too many names: %s",
				                  p->lineno, line_text(p));
			a->name = s;
			continue;
		}
		if (s[2] || !strchr(allowed, s[1]))
			return spec_error(p, KILN_ESYNTAX, "line %d: Bad option %s: %s", p->lineno,
			                  s, line_text(p));
		switch (s[1]) {
		case 'n':
			dst = &a->name;
			a->full = true;
			break;
		case 'p':
			dst = &a->prog;
			break;
		case 'f':
			dst = &a->file;
			break;
		case 'l':
			dst = &a->lang;
			break;
		case 'P':
			dst = &a->priority;
			break;
		case 'e':
			a->expand = true;
			continue;
		case 'q':
			a->qformat = true;
			continue;
		default:
			break;
		}
		if (i + 1 >= argc)
			return spec_error(p, KILN_ESYNTAX, "line %d: Bad option %s: %s", p->lineno,
			                  s, line_text(p));
		if (s[1] == 'f' && !strcmp(what, "%files")) {
			const char **v =
			    kiln_arena_array(&p->spec->arena, a->nlists + 1, sizeof(*v));

			if (!v)
				return kiln_arena_finish(&p->spec->arena, p->err);
			if (a->nlists)
				memcpy(v, a->lists, a->nlists * sizeof(*v));
			v[a->nlists++] = spec_strdup(p, argv[i + 1], strlen(argv[i + 1]));
			a->lists = v;
			i++;
			continue;
		}
		*dst = argv[++i];
	}
	return KILN_OK;
}

static kiln_rc header_package(struct spec_parse_priv *p, const struct header_args *a,
                              const char *what, struct spec_package **out)
{
	kiln_rc rc = spec_lookup_package(p, a->name, a->full, out);

	(void)what;
	if (rc == KILN_ENOTFOUND)
		return spec_error(p, KILN_ENOTFOUND, "line %d: %s: package %s%s%s does not exist",
		                  p->lineno, line_text(p),
		                  a->full ? "" : p->spec->packages[0]->name, a->full ? "" : "-",
		                  a->name);
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
	struct header_args a;
	enum spec_part next = SPEC_PART_ERROR;
	char **argv = NULL;
	int argc = 0;

	if (spec_split_options(p, p->line.ptr, &argv, &argc) ||
	    header_args(p, argv, argc, "nl", &a, "%description") ||
	    header_package(p, &a, "%description", &pkg))
		goto out;
	next = read_body(p, SPEC_STRIP_TRAILINGSPACE | SPEC_STRIP_COMMENTS, &body);
	if (next == SPEC_PART_ERROR)
		goto out;
	/* rpm notices when it stores the text, at the end of the section. */
	if (spec_has_i18n(pkg->tags, SPEC_TAG_DESCRIPTION, a.lang))
		spec_warn(p, "line %d: second Description", p->lineno);
	trim_trailing_newlines(&body);
	if (kiln_buf_finish(&body, p->err)) {
		next = SPEC_PART_ERROR;
		goto out;
	}
	/* rpm only asks for the DESCRIPTION tag: a translated text alone is enough. */
	pkg->has_description = true;
	if (spec_put_i18n(p, pkg->tags, SPEC_TAG_DESCRIPTION, a.lang, body.ptr))
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
		return SPEC_DEP_TRIGGERPREIN;
	case SPEC_SCRIPT_TRIGGERIN:
	case SPEC_SCRIPT_FILETRIGGERIN:
	case SPEC_SCRIPT_TRANSFILETRIGGERIN:
		return SPEC_DEP_TRIGGERIN;
	case SPEC_SCRIPT_TRIGGERUN:
	case SPEC_SCRIPT_FILETRIGGERUN:
	case SPEC_SCRIPT_TRANSFILETRIGGERUN:
		return SPEC_DEP_TRIGGERUN;
	default:
		return SPEC_DEP_TRIGGERPOSTUN;
	}
}

static kiln_rc script_prog(struct spec_parse_priv *p, struct spec_script *s, const char *prog)
{
	char **argv = NULL;
	int argc = 0;
	int i;
	kiln_rc rc;

	if (prog[0] != '/' && strcmp(prog, "<lua>"))
		return spec_error(p, KILN_ESYNTAX,
		                  "line %d: script program must begin with '/': %s", p->lineno,
		                  prog);
	rc = spec_split_options(p, prog, &argv, &argc);
	if (rc)
		return rc;
	s->prog = kiln_arena_array(&p->spec->arena, (size_t)argc + 1, sizeof(*s->prog));
	for (i = 0; s->prog && i < argc; i++)
		s->prog[i] = spec_strdup(p, argv[i], strlen(argv[i]));
	s->nprog = (size_t)argc;
	spec_argv_free(argv, argc);
	return s->prog ? KILN_OK : kiln_arena_finish(&p->spec->arena, p->err);
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

static kiln_rc script_conds(struct spec_parse_priv *p, struct spec_script *s, char **argv, int argc,
                            const struct header_args *a)
{
	struct kiln_buf conds = KILN_BUF_INIT(KILN_LIMIT_LINE);
	const char *line = line_text(p);
	const char *dd;
	kiln_rc rc;
	int i;

	(void)argv;
	(void)argc;
	(void)a;
	/* The conditions are the raw text after " -- " (rpm splits there, not on argv). */
	dd = strstr(line, " -- ");
	if (!dd)
		return spec_error(p, KILN_ESYNTAX, "line %d: triggers must have --: %s", p->lineno,
		                  line);
	kiln_buf_addstr(&conds, dd + 4);
	if (!*kiln_str_trim(kiln_str_from(conds.ptr)).ptr ||
	    !kiln_str_trim(kiln_str_from(conds.ptr)).len) {
		kiln_buf_release(&conds);
		return spec_error(p, KILN_ESYNTAX, "line %d: missing trigger condition: %s",
		                  p->lineno, line);
	}
	if (is_file_trigger(s->kind)) {
		/* File trigger conditions are path prefixes; each must be absolute. */
		char **paths = NULL;
		int n = 0;

		rc = spec_split_options(p, conds.ptr, &paths, &n);
		for (i = 0; !rc && i < n; i++) {
			if (paths[i][0] != '/')
				rc = spec_error(p, KILN_ESYNTAX,
				                "line %d: file trigger condition must begin with "
				                "'/': %s",
				                p->lineno, paths[i]);
			else
				rc = spec_deps_add(p->spec, &s->conds, paths[i], "",
				                   trigger_flag(s->kind), p->err);
		}
		spec_argv_free(paths, n);
	} else {
		rc = spec_dep_parse(p, conds.ptr, trigger_flag(s->kind), SPEC_RICH_NONE, 0,
		                    &s->conds, line);
	}
	kiln_buf_release(&conds);
	return rc;
}

enum spec_part spec_parse_script(struct spec_parse_priv *p)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	enum spec_script_kind kind = p->script_kind;
	struct spec_package *pkg = NULL;
	struct spec_script *s = NULL;
	enum spec_part next = SPEC_PART_ERROR;
	struct header_args a;
	char **argv = NULL;
	int argc = 0;
	size_t i;

	if (is_trigger(kind) && !strstr(p->line.ptr, "--")) {
		spec_error(p, KILN_ESYNTAX, "line %d: triggers must have --: %s", p->lineno,
		           line_text(p));
		goto out;
	}
	if (spec_split_options(p, p->line.ptr, &argv, &argc) ||
	    header_args(p, argv, argc, is_file_trigger(kind) ? "npfeqP" : "npfeq", &a, "%script") ||
	    header_package(p, &a, "%script", &pkg))
		goto out;
	if (!is_trigger(kind)) {
		for (i = 0; i < pkg->nscripts; i++) {
			if (pkg->scripts[i].kind == kind) {
				spec_error(p, KILN_ESYNTAX, "line %d: Second %%%s", p->lineno,
				           spec_script_name(kind));
				goto out;
			}
		}
	}
	if (script_add(pkg, p->spec, &s, p->err))
		goto out;
	s->kind = kind;
	s->line = p->lineno;
	s->priority = 1000000;
	s->flags = (a.expand ? SPEC_SCRIPT_F_EXPAND : 0) | (a.qformat ? SPEC_SCRIPT_F_QFORMAT : 0);
	if (a.priority) {
		uint64_t prio;

		if (util_parse_u64(a.priority, strlen(a.priority), 10, UINT32_MAX, &prio, NULL)) {
			spec_error(p, KILN_ESYNTAX, "line %d: Bad priority: %s", p->lineno,
			           a.priority);
			goto out;
		}
		s->priority = (uint32_t)prio;
	}
	if (a.prog && script_prog(p, s, a.prog))
		goto out;
	if (a.file)
		s->file = spec_strdup(p, a.file, strlen(a.file));
	if (is_trigger(kind) && script_conds(p, s, argv, argc, &a))
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
	spec_argv_free(argv, argc);
	kiln_buf_release(&body);
	return next;
}

/* ---------------------------------------------------------------------------------------- */
/* %changelog. */

static const char *const weekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static int find_word(const char *const *list, size_t n, const char *w, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (len == 3 && !strncmp(list[i], w, 3))
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

/* "Dow Mon DD YYYY" or "Dow Mon DD HH:MM:SS [TZ] YYYY" at s; *rest gets the text after it.
 * The short form means 12:00 UTC that day. */
static const char *skip_blanks(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

static kiln_rc changelog_date(struct spec_parse_priv *p, const char *s, int64_t *t,
                              const char **rest)
{
	const char *w[6];
	size_t wl[6];
	int nw = 0;
	int dow, mon;
	int64_t day = 0, year = 0, hh = 12, mm = 0, ss = 0;
	const char *q = s;

	while (nw < 6) {
		while (*q && is_space(*q))
			q++;
		if (!*q)
			break;
		w[nw] = q;
		while (*q && !is_space(*q))
			q++;
		wl[nw] = (size_t)(q - w[nw]);
		nw++;
		if (nw >= 4 && wl[nw - 1] == 4 && w[nw - 1][0] >= '0' && w[nw - 1][0] <= '9')
			break;
	}
	if (nw < 4)
		goto bad;
	dow = find_word(weekdays, 7, w[0], wl[0]);
	mon = find_word(months, 12, w[1], wl[1]);
	if (dow < 0 || mon < 0 || util_parse_i64(w[2], wl[2], 10, 1, 31, &day, NULL))
		goto bad;
	if (nw >= 5 && strchr(w[3], ':')) {
		if (sscanf(w[3], "%2" SCNd64 ":%2" SCNd64 ":%2" SCNd64, &hh, &mm, &ss) != 3)
			goto bad;
	}
	if (util_parse_i64(w[nw - 1], wl[nw - 1], 10, 1990, 2999, &year, NULL))
		goto bad;
	*t = days_from_civil(year, (unsigned)mon + 1, (unsigned)day) * 86400 + hh * 3600 + mm * 60 +
	     ss;
	if (((*t / 86400) + 4) % 7 != dow)
		spec_warn(p, "bogus date in %%changelog: %s", skip_blanks(s));
	*rest = q;
	return KILN_OK;
bad:
	return spec_error(p, KILN_ESYNTAX, "bad date in %%changelog: %s", skip_blanks(s));
}

static kiln_rc changelog_add(struct spec_parse_priv *p, int64_t t, const char *name,
                             struct kiln_buf *text)
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
	trim_trailing_newlines(text);
	c = &spec->changelog[spec->nchangelog++];
	c->time = t;
	c->name = spec_strdup(p, name, strlen(name));
	c->text = spec_strdup(p, text->ptr, text->len);
	if (!c->name || !c->text)
		return KILN_ENOMEM;
	if (spec->nchangelog > 1 && t > spec->changelog[spec->nchangelog - 2].time)
		return spec_error(p, KILN_ESYNTAX,
		                  "%%changelog not in descending chronological order");
	return KILN_OK;
}

/* Parse the collected %changelog text into entries. */
static kiln_rc changelog_parse(struct spec_parse_priv *p, const char *s)
{
	struct kiln_buf text = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	const char *name = NULL;
	char *namebuf = NULL;
	int64_t t = 0;
	kiln_rc rc = KILN_OK;

	while (*s && is_space(*s))
		s++;
	if (*s && *s != '*')
		return spec_error(p, KILN_ESYNTAX, "%%changelog entries must start with *");
	while (*s && !rc) {
		const char *eol = strchr(s, '\n');
		size_t n = eol ? (size_t)(eol - s) : strlen(s);

		if (*s == '*') {
			const char *rest = "";
			char hdr[1024];

			if (name)
				rc = changelog_add(p, t, name, &text);
			kiln_buf_reset(&text);
			snprintf(hdr, sizeof(hdr), "%.*s", (int)(n - 1), s + 1);
			if (!rc)
				rc = changelog_date(p, hdr, &t, &rest);
			if (!rc) {
				while (*rest && is_space(*rest))
					rest++;
				if (!*rest)
					rc = spec_error(p, KILN_ESYNTAX,
					                "missing name in %%changelog");
				free(namebuf);
				namebuf = kiln_strdup(rest);
				name = namebuf;
				if (!namebuf && !rc)
					rc = kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
			}
		} else {
			size_t m = n;

			while (m && is_space(s[m - 1]))
				m--;
			kiln_buf_add(&text, s, m);
			kiln_buf_addch(&text, '\n');
		}
		s += n + (eol ? 1 : 0);
	}
	if (!rc && name) {
		if (!text.len)
			rc = spec_error(p, KILN_ESYNTAX, "no description in %%changelog");
		else
			rc = changelog_add(p, t, name, &text);
	}
	free(namebuf);
	kiln_buf_release(&text);
	return rc;
}

enum spec_part spec_parse_changelog(struct spec_parse_priv *p)
{
	struct kiln_buf body = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	enum spec_part next;

	if (p->have_changelog) {
		spec_error(p, KILN_ESYNTAX, "line %d: second %%changelog", p->lineno);
		return SPEC_PART_ERROR;
	}
	p->have_changelog = true;
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
