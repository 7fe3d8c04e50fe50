/*
 * deps.c - dependency lists: "name [op evr], ..." and rich (boolean) dependencies.
 *
 * The grammar and the checks are rpm 4.18's: items are separated by blanks or commas, a
 * comparison is a word of its own ("a >=1" is two items), a rich dependency is stored in the
 * spelling rpm rebuilds from its parts ("(a  =>  1)" becomes "(a >= 1)"), and the messages
 * are rpm's. Sets are kept sorted by name, EVR and flags without duplicates, as rpm's
 * dependency sets are, so header arrays and `rpmspec -q --requires` come out in rpm's order.
 */
#include "util/util.h"

#include "macro/macro.h"
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
/* Words. */

/* rpm's SKIPWHITE: commas count as blanks. */
static const char *skip_white(const char *s)
{
	while (*s && (is_space(*s) || *s == ','))
		s++;
	return s;
}

/* A word of a plain list: up to a blank or a comma. */
static const char *word_end(const char *s)
{
	while (*s && !is_space(*s) && *s != ',')
		s++;
	return s;
}

/* A word inside a rich dependency: a ')' that closes no '(' of the word ends it too
 * ("foo(x86-64)" is one word). */
static const char *rich_word_end(const char *s)
{
	int nest = 0;

	for (; *s && !is_space(*s) && *s != ','; s++) {
		if (*s == '(')
			nest++;
		else if (*s == ')' && nest-- <= 0)
			break;
	}
	return s;
}

/* rpm's comparison words ("=<" and "=>" are accepted spellings too); 0 when s is none. */
static uint32_t parse_op(const char *s, size_t len)
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

/* ---------------------------------------------------------------------------------------- */
/* Checks. */

/* One spec_dep_parse() call. */
struct dep_parse {
	struct spec_parse_priv *p;
	const char *what;          /* the line, quoted by messages */
	unsigned opts;             /* enum spec_dep_parse_opts */
	uint32_t flags;            /* the caller's qualifiers and trigger senses */
	int strict;                /* %_wrong_version_format_terminate_build; -1: not looked up */
	struct kiln_buf complaint; /* a version-format warning for the end of the line */
	struct kiln_buf rich;      /* the rich dependency being read, as rpm spells it */
	int depth;
};

/* rpm's "line N: MESSAGE: LINE". */
static kiln_rc dep_fail(struct dep_parse *d, const char *msg)
{
	return spec_error(d->p, KILN_ESYNTAX, "line %d: %s: %s", d->p->lineno, msg, d->what);
}

/* rpm's checkSep and checkEpoch: an error when %_wrong_version_format_terminate_build is
 * set (rpm's macros set it), else a warning once the line is read (the last one wins). */
static kiln_rc check_version_format(struct dep_parse *d, const char *evr)
{
	const char *colon = strchr(evr, ':');
	const char *dash = strchr(evr, '-');
	char msg[96];
	const char *s;

	msg[0] = '\0';
	if (dash && strchr(dash + 1, '-'))
		snprintf(msg, sizeof(msg), "Invalid version (double separator '-')");
	else if (colon && strchr(colon + 1, ':'))
		snprintf(msg, sizeof(msg), "Invalid version (double separator ':')");
	for (s = evr; !msg[0] && colon && s < colon; s++) {
		if (*s < '0' || *s > '9')
			snprintf(msg, sizeof(msg),
			         "Invalid version (epoch must be unsigned integer)");
	}
	if (!msg[0])
		return KILN_OK;
	if (d->strict < 0)
		d->strict =
		    spec_expand_numeric(d->p, "%{?_wrong_version_format_terminate_build}") != 0;
	if (d->strict)
		return spec_error(d->p, KILN_ESYNTAX, "line %d: %s: %s: %s", d->p->lineno, msg, evr,
		                  d->what);
	kiln_buf_reset(&d->complaint);
	kiln_buf_addf(&d->complaint, "%s: %s", msg, evr);
	return KILN_OK;
}

/* rpm's checkDep: the name's first character (only ASCII is judged), a version on a file
 * name, the version's characters and format. evr is NULL when unversioned. */
static kiln_rc check_dep(struct dep_parse *d, const char *name, const char *evr)
{
	unsigned char c = (unsigned char)name[0];
	kiln_rc rc;

	if (c < 0x80 && !(is_alnum((char)c) || c == '_' || c == '/'))
		return dep_fail(d, "Dependency tokens must begin with alpha-numeric, '_' or '/'");
	if (!evr)
		return KILN_OK;
	if (name[0] == '/')
		return dep_fail(d, "Versioned file name not permitted");
	rc = spec_char_check(d->p, evr, ".-_+:%{}~^", NULL);
	if (!rc)
		rc = check_version_format(d, evr);
	return rc;
}

static bool is_trigger(uint32_t flags)
{
	return flags & (RPMTAG_DEP_TRIGGERPREIN | RPMTAG_DEP_TRIGGERIN | RPMTAG_DEP_TRIGGERUN |
	                RPMTAG_DEP_TRIGGERPOSTUN);
}

/* ---------------------------------------------------------------------------------------- */
/* Overlapping ranges. */

static bool has_text(const char *s)
{
	return s && *s;
}

/* rpm's rpmverOverlap on parsed versions. */
static bool evr_overlap(const struct macro_evr *va, uint32_t fa, const struct macro_evr *vb,
                        uint32_t fb)
{
	int sense = 0;

	if (has_text(va->epoch) && has_text(vb->epoch))
		sense = macro_vercmp(va->epoch, vb->epoch);
	else if (has_text(va->epoch) && strtol(va->epoch, NULL, 10) > 0)
		sense = 1;
	else if (has_text(vb->epoch) && strtol(vb->epoch, NULL, 10) > 0)
		sense = -1;
	if (!sense)
		sense = macro_vercmp(va->version, vb->version);
	if (!sense && has_text(va->release) && has_text(vb->release))
		sense = macro_vercmp(va->release, vb->release);
	else if (!sense && ((has_text(va->release) && (fb & RPMTAG_DEP_EQUAL)) ||
	                    (has_text(vb->release) && (fa & RPMTAG_DEP_EQUAL))))
		return true; /* the side without a release matches any */
	if (sense < 0)
		return (fa & RPMTAG_DEP_GREATER) || (fb & RPMTAG_DEP_LESS);
	if (sense > 0)
		return (fa & RPMTAG_DEP_LESS) || (fb & RPMTAG_DEP_GREATER);
	return ((fa & fb) & (RPMTAG_DEP_EQUAL | RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER)) != 0;
}

bool spec_dep_overlap(const struct spec_dep *a, const struct spec_dep *b)
{
	const uint32_t mask = RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL;
	struct kiln_err ignored = KILN_ERR_INIT;
	struct macro_evr va = {0};
	struct macro_evr vb = {0};
	bool yes = true;

	if (strcmp(a->name, b->name))
		return false;
	if (!(a->flags & mask) || !(b->flags & mask) || !*a->evr || !*b->evr)
		return true;
	/* Out of memory: say they overlap, which refuses rather than accepts. */
	if (!macro_evr_parse(a->evr, &va, &ignored) && !macro_evr_parse(b->evr, &vb, &ignored))
		yes = evr_overlap(&va, a->flags, &vb, b->flags);
	macro_evr_release(&va);
	macro_evr_release(&vb);
	return yes;
}

/* rpm's addReqProv: an rpmlib() name is a requirement on rpm itself: it gets the RPMLIB
 * sense, except in triggers, and cannot be provided. A plain trigger may not fire twice
 * for one condition. */
static kiln_rc dep_add(struct dep_parse *d, struct spec_deps *out, const char *name,
                       const char *evr, uint32_t flags)
{
	struct spec_dep dep = {name, evr, flags};
	size_t i;

	for (i = 0; (d->opts & SPEC_DEPP_TRIGGER) && i < out->n; i++) {
		if ((out->v[i].flags & d->flags) && spec_dep_overlap(&out->v[i], &dep))
			return dep_fail(d, "Trigger fired by the same package is already defined "
			                   "in spec file");
	}
	if (!strncmp(name, "rpmlib(", 7)) {
		if (d->opts & SPEC_DEPP_PROVIDES)
			return dep_fail(d, "invalid dependency");
		if (!is_trigger(flags))
			flags |= RPMTAG_DEP_RPMLIB;
	}
	return spec_deps_add(d->p->spec, out, name, evr, flags, d->p->err);
}

/* ---------------------------------------------------------------------------------------- */
/* Plain items: "name [op evr]". */

static kiln_rc plain_item(struct dep_parse *d, const char **ps, struct spec_deps *out)
{
	const char *name_end = word_end(*ps);
	const char *op = skip_white(name_end);
	const char *op_end = word_end(op);
	uint32_t sense = op_end > op ? parse_op(op, (size_t)(op_end - op)) : 0;
	const char *evr = NULL;
	const char *evr_end = NULL;
	char *name;
	char *version = NULL;
	kiln_rc rc;

	if (sense) {
		evr = skip_white(op_end);
		evr_end = word_end(evr);
		if (evr_end == evr)
			return dep_fail(d, "Version required");
	}
	name = spec_strdup(d->p, *ps, (size_t)(name_end - *ps));
	if (evr)
		version = spec_strdup(d->p, evr, (size_t)(evr_end - evr));
	if (!name || (evr && !version))
		return KILN_ENOMEM;
	/* Without a comparison the next item starts at the word after the name. */
	*ps = evr ? evr_end : op;
	if ((d->opts & SPEC_DEPP_FILE_TRIGGER) && name[0] != '/')
		return spec_error(d->p, KILN_ESYNTAX,
		                  "line %d: file trigger condition must begin with '/': %s",
		                  d->p->lineno, name);
	rc = check_dep(d, name, version);
	if (!rc && (d->opts & SPEC_DEPP_OBSOLETES))
		rc = spec_char_check(d->p, name, ".-_+%{}", "_%");
	if (!rc)
		rc = dep_add(d, out, name, version ? version : "", d->flags | sense);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Rich dependencies: (A op B ...), op one of and or if else with without unless. The rules
 * for which operators may meet are rpm's: a chain repeats one of and/or/with ("if ...
 * else" and "unless ... else" are one expression), "with"/"without" take only plain names
 * and with/without/or expressions, and the context checks below. */

enum rich_op {
	OP_NONE,
	OP_SINGLE,
	OP_AND,
	OP_OR,
	OP_IF,
	OP_UNLESS,
	OP_ELSE,
	OP_WITH,
	OP_WITHOUT,
};

static const char *const rich_op_names[] = {
    [OP_AND] = "and",   [OP_OR] = "or",     [OP_IF] = "if",           [OP_UNLESS] = "unless",
    [OP_ELSE] = "else", [OP_WITH] = "with", [OP_WITHOUT] = "without",
};

/* What an expression found inside it, to judge its context: rpm's RICHPARSE_* bits. */
enum rich_check {
	RICH_CHECK = 1 << 0,   /* judge and/or contexts at all (tags do; rpm's API need not) */
	RICH_NO_WITH = 1 << 1, /* holds something with/without must not contain */
	RICH_NO_AND = 1 << 2,  /* holds an "unless" that an and/if context would invert */
	RICH_NO_OR = 1 << 3,   /* holds an "if" that an or/unless context would invert */
};

static kiln_rc rich_context(struct dep_parse *d, enum rich_op op, unsigned check)
{
	if ((op == OP_WITH || op == OP_WITHOUT) && (check & RICH_NO_WITH))
		return dep_fail(d, "Illegal ops in with/without");
	if (!(check & RICH_CHECK))
		return KILN_OK;
	if ((op == OP_AND || op == OP_IF) && (check & RICH_NO_AND))
		return dep_fail(d, "Illegal context for 'unless', please use 'or' instead");
	if ((op == OP_OR || op == OP_UNLESS) && (check & RICH_NO_OR))
		return dep_fail(d, "Illegal context for 'if', please use 'and' instead");
	return KILN_OK;
}

/* "name [op evr]" inside an expression; *ps moves past it and the blanks after a name. */
static kiln_rc rich_simple(struct dep_parse *d, const char **ps)
{
	const char *name_end = rich_word_end(*ps);
	const char *s = skip_white(name_end);
	const char *evr = NULL;
	const char *evr_end = NULL;
	uint32_t sense = 0;
	char *name;
	char *version = NULL;

	if (name_end == *ps)
		return dep_fail(d, "Name required");
	if (*s) {
		const char *op_end = rich_word_end(s);

		sense = parse_op(s, (size_t)(op_end - s));
		if (sense) {
			evr = skip_white(op_end);
			evr_end = rich_word_end(evr);
			s = evr_end;
		}
	}
	if (evr && evr_end == evr)
		return dep_fail(d, "Version required");
	name = spec_strdup(d->p, *ps, (size_t)(name_end - *ps));
	if (evr)
		version = spec_strdup(d->p, evr, (size_t)(evr_end - evr));
	if (!name || (evr && !version))
		return KILN_ENOMEM;
	kiln_buf_addstr(&d->rich, name);
	if (evr)
		kiln_buf_addf(&d->rich, " %s%s%s %s", sense & RPMTAG_DEP_LESS ? "<" : "",
		              sense & RPMTAG_DEP_GREATER ? ">" : "",
		              sense & RPMTAG_DEP_EQUAL ? "=" : "", version);
	*ps = s;
	return check_dep(d, name, version);
}

static enum rich_op rich_op_word(const char *s, size_t len)
{
	size_t i;

	for (i = OP_AND; i < KILN_ARRAY_SIZE(rich_op_names); i++) {
		if (strlen(rich_op_names[i]) == len && !memcmp(rich_op_names[i], s, len))
			return (enum rich_op)i;
	}
	return OP_NONE;
}

static kiln_rc rich_expr(struct dep_parse *d, const char **ps, unsigned *checkp);

/* One operand; op is the operator before it (OP_SINGLE for the first). The inside of an
 * "if"/"unless" operand is judged on its own, not by the context outside. */
static kiln_rc rich_operand(struct dep_parse *d, const char **ps, enum rich_op op, unsigned *check)
{
	unsigned sub = *check & RICH_CHECK;
	kiln_rc rc;

	if (**ps != '(')
		return rich_simple(d, ps);
	rc = rich_expr(d, ps, &sub);
	if (op == OP_IF || op == OP_UNLESS)
		sub &= ~(unsigned)(RICH_NO_AND | RICH_NO_OR);
	*check |= sub;
	return rc;
}

/* The operator after an operand; *chain is the one the chain repeats. */
static kiln_rc rich_next_op(struct dep_parse *d, const char **ps, enum rich_op *op,
                            enum rich_op *chain)
{
	const char *s = *ps;
	const char *e = s;

	while (*e && !is_space(*e) && *e != ')')
		e++;
	*op = rich_op_word(s, (size_t)(e - s));
	if (*op == OP_NONE)
		return spec_error(d->p, KILN_ESYNTAX,
		                  "line %d: Unknown rich dependency op '%.*s': %s", d->p->lineno,
		                  (int)(e - s), s, d->what);
	if (*op == OP_ELSE && (*chain == OP_IF || *chain == OP_UNLESS))
		*chain = OP_NONE;
	if (*chain != OP_NONE && *op != *chain)
		return dep_fail(d, "Cannot chain different ops");
	if (*chain != OP_NONE && *op != OP_AND && *op != OP_OR && *op != OP_WITH)
		return dep_fail(d, "Can only chain and/or/with ops");
	kiln_buf_addf(&d->rich, " %s ", rich_op_names[*op]);
	*chain = *op;
	*ps = e;
	return KILN_OK;
}

/* A parenthesised expression at *ps ('('); *checkp gets what it holds. */
static kiln_rc rich_expr(struct dep_parse *d, const char **ps, unsigned *checkp)
{
	const char *s = *ps + 1;
	enum rich_op op = OP_SINGLE;
	enum rich_op first = OP_SINGLE;
	enum rich_op chain = OP_NONE;
	unsigned check = *checkp;
	kiln_rc rc;

	if (++d->depth > KILN_LIMIT_EXPR_DEPTH)
		return spec_error(d->p, KILN_ELIMIT,
		                  "line %d: rich dependency nested too deeply: %s", d->p->lineno,
		                  d->what);
	kiln_buf_addch(&d->rich, '(');
	for (;;) {
		s = skip_white(s);
		if (*s == ')')
			return dep_fail(d, chain != OP_NONE
			                       ? "Missing argument to rich dependency op"
			                       : "Empty rich dependency");
		rc = rich_operand(d, &s, op, &check);
		if (rc)
			return rc;
		s = skip_white(s);
		if (!*s)
			return spec_error(d->p, KILN_ESYNTAX,
			                  "line %d: Unterminated rich dependency: %s: %s",
			                  d->p->lineno, *ps, d->what);
		if (*s == ')')
			break;
		rc = rich_next_op(d, &s, &op, &chain);
		if (rc)
			return rc;
		if (first == OP_SINGLE)
			first = op;
	}
	rc = rich_context(d, first, check);
	if (rc)
		return rc;
	if (first == OP_IF)
		check |= RICH_NO_OR;
	if (first == OP_UNLESS)
		check |= RICH_NO_AND;
	if (op == OP_AND || op == OP_OR)
		check &= ~(unsigned)(RICH_NO_AND | RICH_NO_OR);
	if (op != OP_SINGLE && op != OP_WITH && op != OP_WITHOUT && op != OP_OR)
		check |= RICH_NO_WITH;
	kiln_buf_addch(&d->rich, ')');
	*ps = s + 1;
	*checkp |= check;
	d->depth--;
	return KILN_OK;
}

/* A whole rich dependency, judged as requirement-like or conflict-like. */
static kiln_rc rich_item(struct dep_parse *d, const char **ps, enum spec_rich_ctx ctx,
                         struct spec_deps *out)
{
	unsigned check = RICH_CHECK;
	kiln_rc rc;

	if (ctx == SPEC_RICH_NONE)
		return dep_fail(d, "No rich dependencies allowed for this type");
	kiln_buf_reset(&d->rich);
	d->depth = 0;
	rc = rich_expr(d, ps, &check);
	if (!rc)
		rc = rich_context(d, ctx == SPEC_RICH_NEGATIVE ? OP_OR : OP_AND, check);
	if (!rc)
		rc = kiln_buf_finish(&d->rich, d->p->err);
	if (!rc)
		rc = dep_add(d, out, d->rich.ptr, "", d->flags);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

kiln_rc spec_dep_parse(struct spec_parse_priv *p, const char *text, uint32_t base_flags,
                       enum spec_rich_ctx rich, unsigned opts, struct spec_deps *out,
                       const char *what)
{
	struct dep_parse d = {
	    .p = p, .what = what, .opts = opts, .flags = base_flags, .strict = -1};
	const char *s = text;
	kiln_rc rc = KILN_OK;

	kiln_buf_init(&d.complaint, KILN_LIMIT_LINE);
	kiln_buf_init(&d.rich, KILN_LIMIT_LINE);
	for (s = skip_white(s); !rc && *s; s = skip_white(s)) {
		if (*s == '(')
			rc = rich_item(&d, &s, rich, out);
		else
			rc = plain_item(&d, &s, out);
	}
	if (!rc && d.complaint.len)
		spec_warn(p, "line %d: %s: %s", p->lineno, d.complaint.ptr, what);
	kiln_buf_release(&d.complaint);
	kiln_buf_release(&d.rich);
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
	rc = spec_dep_parse(p, text, 0, SPEC_RICH_POSITIVE, 0, out, text);
	p->err = saved;
	p->lineno = lineno;
	return rc;
}
