/*
 * depline.c - generator output read the way rpmbuild reads it (parseRCPOT for automatic
 * dependencies, with rpm's rich dependency parser), for worker/autodeps.c
 * (autodeps_int.h).
 *
 * Each line is a list of items "NAME [OP EVR]" or "(rich dependency)", separated by blanks
 * or commas. The checks and their messages are rpm's: the first character of a name, no
 * version on a file name, the characters of a version, its separators and epoch, and the
 * grammar of rich dependencies (operators, chaining, if/unless/with contexts).
 */
#include "util/util.h"

#include "spec/spec.h"
#include "macro/macro.h"
#include "worker/autodeps_int.h"

#define SENSE (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)

/* One line's parse: the line (for rpm's "MESSAGE: REST" errors) and where we are. */
struct dl {
	const struct worker_depline *p;
	const char *end;
	const char *item; /* where the item being read starts */
	struct kiln_err *err;
};

static bool dl_white(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' ||
	       c == ',';
}

static bool dl_space(char c)
{
	return c != ',' && dl_white(c);
}

static bool dl_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static const char *skip_white(const char *s, const char *end)
{
	while (s < end && dl_white(*s))
		s++;
	return s;
}

static const char *skip_word(const char *s, const char *end)
{
	while (s < end && !dl_white(*s))
		s++;
	return s;
}

/* rpm's SKIPNONWHITEX: a word that may hold balanced parentheses, ended by a blank, a
 * comma or a ')' that closes nothing opened in it. */
static const char *skip_word_x(const char *s, const char *end)
{
	int open = 0;

	while (s < end && !dl_white(*s)) {
		if (*s == ')' && open-- <= 0)
			break;
		if (*s++ == '(')
			open++;
	}
	return s;
}

static uint32_t sense_parse(const char *s, size_t len)
{
	static const struct {
		const char *tok;
		uint32_t flags;
	} ops[] = {
	    {"<=", RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL},
	    {"=<", RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL},
	    {"<", RPMTAG_DEP_LESS},
	    {"==", RPMTAG_DEP_EQUAL},
	    {"=", RPMTAG_DEP_EQUAL},
	    {">=", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL},
	    {"=>", RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL},
	    {">", RPMTAG_DEP_GREATER},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(ops); i++) {
		if (strlen(ops[i].tok) == len && !memcmp(ops[i].tok, s, len))
			return ops[i].flags;
	}
	return 0;
}

/* rpm's error for generator output: "FILE: MESSAGE: REST-OF-LINE". */
static kiln_rc dl_error(const struct dl *d, const char *msg, const char *rest)
{
	return kiln_err_set(d->err, KILN_ESYNTAX, "%s: %s: %.*s", d->p->what, msg,
	                    (int)(d->end - rest), rest);
}

/* rpmCharCheck over a version: the last illegal character is reported, then "..". */
static kiln_rc evr_chars(const struct dl *d, const char *evr)
{
	const char *bad = NULL;
	const char *s;

	for (s = evr; *s; s++) {
		if (!dl_alnum(*s) && !strchr(".-_+:%{}~^", *s))
			bad = s;
	}
	if (strpbrk(evr, "%{}"))
		macro_diag(d->p->macros, KILN_LOG_WARN, "%s: Possible unexpanded macro in: %s",
		           d->p->what, evr);
	if (bad)
		return kiln_err_set(d->err, KILN_ESYNTAX, "%s: Illegal char '%c' (0x%x) in: %s",
		                    d->p->what, *bad >= 0x20 && *bad < 0x7f ? *bad : '?',
		                    (unsigned)(int)(signed char)*bad, evr);
	if (strstr(evr, ".."))
		return kiln_err_set(d->err, KILN_ESYNTAX, "%s: Illegal sequence \"..\" in: %s",
		                    d->p->what, evr);
	return KILN_OK;
}

/* rpm's version format checks; failing them is an error only with
 * %_wrong_version_format_terminate_build, otherwise a warning. */
static kiln_rc evr_format(const struct dl *d, const char *evr, const char *rest)
{
	char msg[256];
	const char *colon = strchr(evr, ':');
	const char *dash = strchr(evr, '-');
	const char *s;

	msg[0] = '\0';
	if (dash && strchr(dash + 1, '-'))
		snprintf(msg, sizeof(msg), "Invalid version (double separator '-'): %.200s", evr);
	else if (colon && strchr(colon + 1, ':'))
		snprintf(msg, sizeof(msg), "Invalid version (double separator ':'): %.200s", evr);
	for (s = evr; !msg[0] && colon && s < colon; s++) {
		if (*s < '0' || *s > '9')
			snprintf(msg, sizeof(msg),
			         "Invalid version (epoch must be unsigned integer): %.200s", evr);
	}
	if (!msg[0])
		return KILN_OK;
	if (d->p->terminate_bad_version)
		return dl_error(d, msg, rest);
	macro_diag(d->p->macros, KILN_LOG_WARN, "%s: %s: %.*s", d->p->what, msg,
	           (int)(d->end - rest), rest);
	return KILN_OK;
}

/* rpm's checkDep on one name and its version (NULL: none). */
static kiln_rc dep_check(const struct dl *d, const char *name, const char *evr, const char *rest)
{
	kiln_rc rc;

	/* only ASCII is checked: rpm does not know the encoding */
	if (!((unsigned char)name[0] & 0x80) && !dl_alnum(name[0]) && name[0] != '_' &&
	    name[0] != '/')
		return dl_error(d, "Dependency tokens must begin with alpha-numeric, '_' or '/'",
		                rest);
	if (!evr)
		return KILN_OK;
	if (name[0] == '/')
		return dl_error(d, "Versioned file name not permitted", rest);
	rc = evr_chars(d, evr);
	return rc ? rc : evr_format(d, evr, rest);
}

/* ---------------------------------------------------------------------------------------- */
/* Rich dependencies */

enum rich_op { R_NONE, R_SINGLE, R_AND, R_OR, R_IF, R_UNLESS, R_ELSE, R_WITH, R_WITHOUT };

/* The contexts rpm refuses an operator in. */
enum rich_check {
	RC_CHECK = 1 << 0,
	RC_NO_WITH = 1 << 1,
	RC_NO_AND = 1 << 2,
	RC_NO_OR = 1 << 3,
};

static const char *const rich_ops[] = {
    [R_AND] = "and",   [R_OR] = "or",     [R_IF] = "if",           [R_UNLESS] = "unless",
    [R_ELSE] = "else", [R_WITH] = "with", [R_WITHOUT] = "without",
};

struct rich {
	const struct dl *d;
	struct kiln_buf *out;
	const char *emsg; /* set with the error text when parsing fails */
	char ebuf[160];
	bool done; /* the outermost expression was read */
};

static bool rich_fail(struct rich *r, const char *msg)
{
	snprintf(r->ebuf, sizeof(r->ebuf), "%s", msg);
	r->emsg = r->ebuf;
	return false;
}

static bool rich_op(struct rich *r, const char **ps, enum rich_op *op)
{
	const char *p = *ps;
	const char *e = p;
	size_t i;

	while (e < r->d->end && !dl_space(*e) && *e != ')')
		e++;
	for (i = R_AND; i < KILN_ARRAY_SIZE(rich_ops); i++) {
		if (strlen(rich_ops[i]) == (size_t)(e - p) &&
		    !memcmp(rich_ops[i], p, (size_t)(e - p))) {
			*op = (enum rich_op)i;
			*ps = e;
			return true;
		}
	}
	snprintf(r->ebuf, sizeof(r->ebuf), "Unknown rich dependency op '%.*s'",
	         (int)(e - p > 100 ? 100 : e - p), p);
	r->emsg = r->ebuf;
	return false;
}

/* NAME [OP EVR] inside a rich dependency; rpm's checks apply to it. */
static bool rich_simple(struct rich *r, const char **ps)
{
	const char *end = r->d->end;
	const char *n = *ps;
	const char *ne = skip_word_x(n, end);
	const char *p = skip_white(ne, end);
	const char *e = NULL;
	const char *ee = NULL;
	uint32_t sense = 0;
	char *name, *evr;
	kiln_rc rc;

	if (ne == n)
		return rich_fail(r, "Name required");
	if (p < end) {
		const char *pe = skip_word_x(p, end);

		sense = sense_parse(p, (size_t)(pe - p));
		if (sense) {
			e = skip_white(pe, end);
			ee = skip_word_x(e, end);
			p = ee;
		}
	}
	if (e && ee == e)
		return rich_fail(r, "Version required");
	kiln_buf_add(r->out, n, (size_t)(ne - n));
	if (sense) {
		kiln_buf_addf(r->out, " %s%s%s ", sense & RPMTAG_DEP_LESS ? "<" : "",
		              sense & RPMTAG_DEP_GREATER ? ">" : "",
		              sense & RPMTAG_DEP_EQUAL ? "=" : "");
		kiln_buf_add(r->out, e, (size_t)(ee - e));
	}
	name = kiln_strndup(n, (size_t)(ne - n));
	evr = e ? kiln_strndup(e, (size_t)(ee - e)) : NULL;
	rc = name && (!e || evr) ? dep_check(r->d, name, evr, r->d->item)
	                         : kiln_err_set(r->d->err, KILN_ENOMEM, "out of memory");
	free(name);
	free(evr);
	*ps = p;
	return !rc;
}

/* rpm's rpmrichParseCheck: a contradiction between the first operator and the context. */
static bool rich_check_op(struct rich *r, enum rich_op op, unsigned check)
{
	if ((op == R_WITH || op == R_WITHOUT) && (check & RC_NO_WITH))
		return rich_fail(r, "Illegal ops in with/without");
	if (!(check & RC_CHECK))
		return true;
	if ((op == R_AND || op == R_IF) && (check & RC_NO_AND))
		return rich_fail(r, "Illegal context for 'unless', please use 'or' instead");
	if ((op == R_OR || op == R_UNLESS) && (check & RC_NO_OR))
		return rich_fail(r, "Illegal context for 'if', please use 'and' instead");
	return true;
}

static bool rich_expr(struct rich *r, const char **ps, unsigned *checkp, int depth);

/* One operand: a nested expression or a simple dependency. */
static bool rich_term(struct rich *r, const char **ps, enum rich_op op, unsigned *check, int depth)
{
	unsigned sub;

	if (**ps != '(')
		return rich_simple(r, ps);
	sub = *check & RC_CHECK;
	if (!rich_expr(r, ps, &sub, depth + 1))
		return false;
	if (op == R_IF || op == R_UNLESS)
		sub &= ~(unsigned)(RC_NO_AND | RC_NO_OR);
	*check |= sub;
	return true;
}

/* The chaining rules after an operator: else ends an if/unless, otherwise only and, or
 * and with repeat. */
static bool rich_chain(struct rich *r, enum rich_op op, enum rich_op *chain)
{
	if (op == R_ELSE && (*chain == R_IF || *chain == R_UNLESS))
		*chain = R_NONE;
	if (*chain != R_NONE && op != *chain)
		return rich_fail(r, "Cannot chain different ops");
	if (*chain != R_NONE && op != R_AND && op != R_OR && op != R_WITH)
		return rich_fail(r, "Can only chain and/or/with ops");
	*chain = op;
	return true;
}

static unsigned rich_update(unsigned check, enum rich_op first, enum rich_op op)
{
	if (first == R_IF)
		check |= RC_NO_OR;
	if (first == R_UNLESS)
		check |= RC_NO_AND;
	if (op == R_AND || op == R_OR)
		check &= ~(unsigned)(RC_NO_AND | RC_NO_OR);
	if (op != R_SINGLE && op != R_WITH && op != R_WITHOUT && op != R_OR)
		check |= RC_NO_WITH;
	return check;
}

static bool rich_expr(struct rich *r, const char **ps, unsigned *checkp, int depth)
{
	const char *end = r->d->end;
	const char *start = *ps;
	const char *p = *ps + 1;
	enum rich_op op = R_SINGLE, first = R_SINGLE, chain = R_NONE;
	unsigned check = *checkp;

	if (depth > KILN_LIMIT_EXPR_DEPTH)
		return rich_fail(r, "Rich dependency nested too deeply");
	kiln_buf_addch(r->out, '(');
	for (;;) {
		p = skip_white(p, end);
		if (p < end && *p == ')')
			return rich_fail(r, chain != R_NONE
			                        ? "Missing argument to rich dependency op"
			                        : "Empty rich dependency");
		if (p >= end || !rich_term(r, &p, op, &check, depth))
			return p >= end ? rich_fail(r, "Name required") : false;
		p = skip_white(p, end);
		if (p >= end) {
			snprintf(r->ebuf, sizeof(r->ebuf), "Unterminated rich dependency: %.*s",
			         (int)(end - start > 100 ? 100 : end - start), start);
			r->emsg = r->ebuf;
			return false;
		}
		if (*p == ')')
			break;
		if (!rich_op(r, &p, &op))
			return false;
		if (first == R_SINGLE)
			first = op;
		if (!rich_chain(r, op, &chain))
			return false;
		kiln_buf_addf(r->out, " %s ", rich_ops[op]);
	}
	if (!rich_check_op(r, first, check))
		return false;
	kiln_buf_addch(r->out, ')');
	*ps = p + 1;
	*checkp |= rich_update(check, first, op);
	r->done = !depth;
	return true;
}

/* "(...)" at *ps: a requirement's rich dependency, checked as rpm checks one for its tag
 * (and/if are not allowed under unless, or/unless not under if). */
static kiln_rc line_rich(const struct dl *d, const char **ps)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LINE);
	struct rich r = {d, &b, NULL, "", false};
	unsigned check = RC_CHECK;
	const char *p = *ps;
	kiln_rc rc = KILN_OK;

	if (d->p->provides)
		return dl_error(d, "No rich dependencies allowed for this type", *ps);
	/* a contradiction with the tag is found after the dependency was read: rpm's
	 * message then shows what follows it */
	if (!rich_expr(&r, &p, &check, 0) || !rich_check_op(&r, R_AND, check)) {
		rc = d->err->code ? d->err->code : dl_error(d, r.emsg, r.done ? p : *ps);
		kiln_buf_release(&b);
		return rc;
	}
	rc = kiln_buf_finish(&b, d->err);
	if (!rc)
		rc = d->p->fn(d->p->data, b.ptr, "", RPMTAG_DEP_FIND_REQUIRES, d->err);
	kiln_buf_release(&b);
	*ps = p;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

/* One item "N [OP EVR]" at *ps; *ps moves past it. */
static kiln_rc line_item(const struct dl *d, const char **ps)
{
	const char *r = *ps;
	const char *re = skip_word(r, d->end);
	const char *v = skip_white(re, d->end);
	const char *ve = skip_word(v, d->end);
	uint32_t flags = d->p->provides ? RPMTAG_DEP_FIND_PROVIDES : RPMTAG_DEP_FIND_REQUIRES;
	uint32_t sense = ve > v ? sense_parse(v, (size_t)(ve - v)) : 0;
	char *name = kiln_strndup(r, (size_t)(re - r));
	char *evr = NULL;
	kiln_rc rc = KILN_OK;

	*ps = v;
	if (sense) {
		flags |= sense;
		v = skip_white(ve, d->end);
		ve = skip_word(v, d->end);
		if (v == ve)
			rc = dl_error(d, "Version required", r);
		evr = kiln_strndup(v, (size_t)(ve - v));
		*ps = ve;
	}
	if (!rc && (!name || (sense && !evr)))
		rc = kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = dep_check(d, name, evr, r);
	if (!rc)
		rc = d->p->fn(d->p->data, name, evr ? evr : "", flags, d->err);
	free(name);
	free(evr);
	return rc;
}

static kiln_rc parse_line(const struct worker_depline *p, const char *s, const char *end,
                          struct kiln_err *err)
{
	struct dl d = {p, end, NULL, err};
	kiln_rc rc = KILN_OK;

	for (s = skip_white(s, end); s < end && !rc; s = skip_white(s, end)) {
		d.item = s;
		rc = *s == '(' ? line_rich(&d, &s) : line_item(&d, &s);
	}
	return rc;
}

kiln_rc worker_depline_parse(const struct worker_depline *p, const char *text, size_t len,
                             struct kiln_err *err)
{
	const char *end = text + len;
	kiln_rc rc = KILN_OK;

	while (text < end && !rc) {
		const char *e = text;

		/* rpm reads the output as C strings: a NUL ends a line too */
		while (e < end && *e != '\n' && *e != '\r' && *e)
			e++;
		rc = parse_line(p, text, e, err);
		text = e < end ? e + 1 : e;
	}
	return rc;
}
