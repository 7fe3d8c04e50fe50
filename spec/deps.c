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
			spec_error(r->p, KILN_ESYNTAX,
				   "line %d: Invalid dependency: %s", r->p->lineno, what);
			return false;
		}
		if (first_op && strcmp(first_op, op) && !(!strcmp(first_op, "if") &&
							  !strcmp(op, "else")) &&
		    !(!strcmp(first_op, "unless") && !strcmp(op, "else"))) {
			spec_error(r->p, KILN_ESYNTAX,
				   "line %d: Cannot chain different ops: %s", r->p->lineno, what);
			return false;
		}
		if (!first_op)
			first_op = op;
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
	while (*s && !is_space(*s) && *s != ')' && *s != '(')
		s++;
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
		while (*s && !is_space(*s) && *s != ')' && *s != '(')
			s++;
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

static uint32_t parse_op(const char *s, size_t len)
{
	uint32_t f = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '<')
			f |= SPEC_DEP_LESS;
		else if (s[i] == '>')
			f |= SPEC_DEP_GREATER;
		else if (s[i] == '=')
			f |= SPEC_DEP_EQUAL;
	}
	/* "==" is EQUAL, "=<" and "=>" are not operators rpm accepts. */
	if (!((len == 1) || (len == 2 && (f == (SPEC_DEP_LESS | SPEC_DEP_EQUAL) ||
					   f == (SPEC_DEP_GREATER | SPEC_DEP_EQUAL) ||
					   (s[0] == '=' && s[1] == '=')))))
		return 0;
	if (len == 2 && s[0] == '=' && s[1] != '=')
		return 0;
	return f;
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
			spec_error(p, KILN_ESYNTAX, "line %d: Invalid version (illegal char '%c'): %s",
				   p->lineno, *s, what);
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

kiln_rc spec_dep_parse(struct spec_parse_priv *p, const char *text, uint32_t base_flags,
		       bool allow_rich, struct spec_deps *out, const char *what)
{
	const char *s = text;
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
			struct rich r = {p, s, 0};
			const char *e = s;

			if (!allow_rich)
				return spec_error(p, KILN_ESYNTAX,
						  "line %d: No rich dependencies allowed for this "
						  "type: %s",
						  p->lineno, what);
			if (!rich_expr(&r, &e, what))
				return p->err->code;
			name = spec_strdup(p, s, (size_t)(e - s));
			if (!name)
				return KILN_ENOMEM;
			rc = spec_deps_add(p->spec, out, name, "", flags, p->err);
			s = e;
			continue;
		}
		nb = s;
		while (*s && !is_space(*s) && *s != ',')
			s++;
		ne = s;
		if (!(is_alnum(*nb) || *nb == '_' || *nb == '/' || *nb == '%'))
			return spec_error(p, KILN_ESYNTAX,
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
		rc = spec_deps_add(p->spec, out, name, evr, flags, p->err);
	}
	return rc;
}
