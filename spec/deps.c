/*
 * deps.c - dependency lists: "name [op evr], ..." and rich (boolean) dependencies.
 *
 * Sets are kept sorted by name, EVR and flags without duplicates, as rpm's dependency sets
 * are, so header arrays and `rpmspec -q --requires` come out in rpm's order.
 */
#include "util/util.h"

#include "spec/spec.h"
#include "spec/spec_int.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int dep_cmp(const struct spec_dep *a, const char *name, const char *evr, uint32_t flags)
{
	int c = strcmp(a->name, name);

	if (!c)
		c = strcmp(a->evr, evr);
	if (!c)
		c = (a->flags > flags) - (a->flags < flags);
	return c;
}

kiln_rc spec_deps_add(struct spec *spec, struct spec_deps *d, const char *name, const char *evr,
                      uint32_t flags, struct kiln_err *err)
{
	size_t lo = 0;
	size_t hi = d->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = dep_cmp(&d->v[mid], name, evr, flags);

		if (!c)
			return KILN_OK; /* already there */
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct spec_dep *v = kiln_arena_array(&spec->arena, cap, sizeof(*v));

		if (!v)
			return kiln_arena_finish(&spec->arena, err);
		if (d->n)
			memcpy(v, d->v, d->n * sizeof(*v));
		d->v = v;
		d->cap = cap;
	}
	memmove(d->v + lo + 1, d->v + lo, (d->n - lo) * sizeof(*d->v));
	d->v[lo].name = kiln_arena_strdup(&spec->arena, name);
	d->v[lo].evr = kiln_arena_strdup(&spec->arena, evr);
	d->v[lo].flags = flags;
	d->n++;
	if (!d->v[lo].name || !d->v[lo].evr)
		return kiln_arena_finish(&spec->arena, err);
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Rich dependencies: (A op B ...), op one of and or if else with without unless. */

struct rich {
	struct spec_parse_priv *p;
	const char *start;
	int depth;
	const char *top_op; /* the operator of the outermost expression */
};

static const char *skip_space(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return s;
}

static const char *rich_op(const char *s, size_t *len)
{
	static const char *const ops[] = {"and", "or", "if", "else", "with", "without", "unless"};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(ops); i++) {
		size_t n = strlen(ops[i]);

		if (!strncmp(s, ops[i], n) && (is_space(s[n]) || s[n] == '(' || !s[n])) {
			*len = n;
			return ops[i];
		}
	}
	return NULL;
}

static bool rich_term(struct rich *r, const char **ps, const char *what);

/* The end of a name or version inside a rich dependency: blanks end it, and so does a ')'
 * that closes no '(' of the token itself ("foo(x86-64)" is one name). */
static const char *rich_token_end(const char *s)
{
	int nest = 0;

	for (; *s && !is_space(*s); s++) {
		if (*s == '(')
			nest++;
		else if (*s == ')' && nest-- == 0)
			break;
	}
	return s;
}

/* A parenthesised expression starting at *ps ('('). */
static bool rich_expr(struct rich *r, const char **ps, const char *what)
{
	const char *s = *ps + 1;
	const char *first_op = NULL;
	size_t oplen = 0;

	if (++r->depth > 64) {
		spec_error(r->p, KILN_ELIMIT, "line %d: %s: rich dependency nested too deeply",
		           r->p->lineno, what);
		return false;
	}
	if (!rich_term(r, &s, what))
		return false;
	for (;;) {
		const char *op;

		s = skip_space(s);
		if (*s == ')') {
			*ps = s + 1;
			r->depth--;
			return true;
		}
		op = rich_op(s, &oplen);
		if (!op) {
			spec_error(r->p, KILN_ESYNTAX, "line %d: Invalid dependency: %s",
			           r->p->lineno, what);
			return false;
		}
		if (first_op && strcmp(first_op, op) &&
		    !(!strcmp(first_op, "if") && !strcmp(op, "else")) &&
		    !(!strcmp(first_op, "unless") && !strcmp(op, "else"))) {
			spec_error(r->p, KILN_ESYNTAX, "line %d: Cannot chain different ops: %s",
			           r->p->lineno, what);
			return false;
		}
		if (!first_op) {
			first_op = op;
			if (r->depth == 1)
				r->top_op = op;
		}
		s += oplen;
		if (!rich_term(r, &s, what))
			return false;
	}
}

/* One operand: a nested expression or "name [op evr]". */
static bool rich_term(struct rich *r, const char **ps, const char *what)
{
	const char *s = skip_space(*ps);
	const char *b;

	if (*s == '(')
		return rich_expr(r, &s, what) && (*ps = s, true);
	b = s;
	s = rich_token_end(s);
	if (s == b) {
		spec_error(r->p, KILN_ESYNTAX, "line %d: Name required: %s", r->p->lineno, what);
		return false;
	}
	s = skip_space(s);
	if (*s == '<' || *s == '>' || *s == '=') {
		while (*s == '<' || *s == '>' || *s == '=')
			s++;
		s = skip_space(s);
		b = s;
		s = rich_token_end(s);
		if (s == b) {
			spec_error(r->p, KILN_ESYNTAX, "line %d: Version required: %s",
			           r->p->lineno, what);
			return false;
		}
	}
	*ps = s;
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Plain items. */

/* rpm's comparison tokens ("=<" and "=>" are accepted spellings too). */
static uint32_t parse_op(const char *s, size_t len)
{
	static const struct {
		const char *tok;
		uint32_t flags;
	} ops[] = {
	    {"<=", SPEC_DEP_LESS | SPEC_DEP_EQUAL},
	    {"=<", SPEC_DEP_LESS | SPEC_DEP_EQUAL},
	    {"<", SPEC_DEP_LESS},
	    {"==", SPEC_DEP_EQUAL},
	    {"=", SPEC_DEP_EQUAL},
	    {">=", SPEC_DEP_GREATER | SPEC_DEP_EQUAL},
	    {"=>", SPEC_DEP_GREATER | SPEC_DEP_EQUAL},
	    {">", SPEC_DEP_GREATER},
	};
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(ops); i++) {
		if (strlen(ops[i].tok) == len && !memcmp(ops[i].tok, s, len))
			return ops[i].flags;
	}
	return 0;
}

static bool is_op_char(char c)
{
	return c == '<' || c == '>' || c == '=';
}

static bool valid_evr(struct spec_parse_priv *p, const char *evr, const char *what)
{
	const char *s;
	int colons = 0;

	for (s = evr; *s; s++) {
		if (!(is_alnum(*s) || strchr("._+%{}~^-:", *s))) {
			spec_error(p, KILN_ESYNTAX,
			           "line %d: Invalid version (illegal char '%c'): %s", p->lineno,
			           *s, what);
			return false;
		}
		if (*s == ':')
			colons++;
	}
	if (colons > 1) {
		spec_error(p, KILN_ESYNTAX, "line %d: Invalid version (double separator ':'): %s",
		           p->lineno, what);
		return false;
	}
	return true;
}

/* Does a version inside a rich dependency (the token after a comparison) hold a '%'? */
static bool rich_has_macro_version(const char *s)
{
	for (; *s; s++) {
		if (!is_op_char(*s))
			continue;
		while (is_op_char(*s))
			s++;
		s = skip_space(s);
		for (; *s && !is_space(*s) && *s != ')'; s++) {
			if (*s == '%')
				return true;
		}
		if (!*s)
			break;
	}
	return false;
}

kiln_rc spec_dep_parse(struct spec_parse_priv *p, const char *text, uint32_t base_flags,
                       enum spec_rich_ctx rich, struct spec_deps *out, const char *what)
{
	const char *s = text;
	bool unexpanded = false;
	kiln_rc rc = KILN_OK;

	while (!rc) {
		const char *nb, *ne, *ob, *oe, *vb, *ve;
		char *name;
		char *evr;
		uint32_t flags = base_flags;

		while (*s && (is_space(*s) || *s == ','))
			s++;
		if (!*s)
			break;
		if (*s == '(') {
			struct rich r = {p, s, 0, NULL};
			const char *e = s;

			if (rich == SPEC_RICH_NONE)
				return spec_error(p, KILN_ESYNTAX,
				                  "line %d: No rich dependencies allowed for this "
				                  "type: %s",
				                  p->lineno, what);
			if (!rich_expr(&r, &e, what))
				return p->err->code;
			if (rich == SPEC_RICH_POSITIVE && r.top_op && !strcmp(r.top_op, "unless"))
				return spec_error(
				    p, KILN_ESYNTAX,
				    "line %d: Illegal context for 'unless', please use "
				    "'or' instead: %s",
				    p->lineno, what);
			if (rich == SPEC_RICH_NEGATIVE && r.top_op && !strcmp(r.top_op, "if"))
				return spec_error(
				    p, KILN_ESYNTAX,
				    "line %d: Illegal context for 'if', please use 'and' "
				    "instead: %s",
				    p->lineno, what);
			name = spec_strdup(p, s, (size_t)(e - s));
			if (!name)
				return KILN_ENOMEM;
			rc = spec_deps_add(p->spec, out, name, "", flags, p->err);
			/* rpm checks the versions inside; a '%' in a name does not count. */
			unexpanded |= rich_has_macro_version(name);
			s = e;
			continue;
		}
		nb = s;
		while (*s && !is_space(*s) && *s != ',')
			s++;
		ne = s;
		if (!(is_alnum(*nb) || *nb == '_' || *nb == '/'))
			return spec_error(
			    p, KILN_ESYNTAX,
			    "line %d: Dependency tokens must begin with alpha-numeric, "
			    "'_' or '/': %s",
			    p->lineno, what);
		/* An operator may follow after blanks; a comma ends the item. */
		while (*s && is_space(*s))
			s++;
		ob = oe = vb = ve = NULL;
		if (is_op_char(*s)) {
			ob = s;
			while (is_op_char(*s))
				s++;
			oe = s;
			while (*s && is_space(*s))
				s++;
			vb = s;
			while (*s && !is_space(*s) && *s != ',')
				s++;
			ve = s;
			if (vb == ve)
				return spec_error(p, KILN_ESYNTAX, "line %d: Version required: %s",
				                  p->lineno, what);
			flags |= parse_op(ob, (size_t)(oe - ob));
			if (!(flags & (SPEC_DEP_LESS | SPEC_DEP_GREATER | SPEC_DEP_EQUAL)))
				return spec_error(p, KILN_ESYNTAX,
				                  "line %d: Invalid dependency operator: %s",
				                  p->lineno, what);
			if (*nb == '/')
				return spec_error(p, KILN_ESYNTAX,
				                  "line %d: Versioned file name not permitted: %s",
				                  p->lineno, what);
		}
		name = spec_strdup(p, nb, (size_t)(ne - nb));
		evr = vb ? spec_strdup(p, vb, (size_t)(ve - vb)) : spec_strdup(p, "", 0);
		if (!name || !evr)
			return KILN_ENOMEM;
		if (vb && !valid_evr(p, evr, what))
			return p->err->code;
		if (strchr(evr, '%'))
			unexpanded = true;
		rc = spec_deps_add(p->spec, out, name, evr, flags, p->err);
	}
	if (!rc && unexpanded)
		spec_warn(p, "line %d: Possible unexpanded macro in: %s", p->lineno, what);
	return rc;
}

kiln_rc spec_deps_add_text(struct spec *spec, struct spec_deps *out, const char *text,
                           struct kiln_err *err)
{
	struct spec_parse_priv *p = spec->priv;
	struct kiln_err *saved = p->err;
	int lineno = p->lineno;
	kiln_rc rc;

	p->err = err;
	p->lineno = 0;
	rc = spec_dep_parse(p, text, 0, SPEC_RICH_POSITIVE, out, "BuildRequires");
	p->err = saved;
	p->lineno = lineno;
	return rc;
}
