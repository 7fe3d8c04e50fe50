/*
 * deps.c - dependency lists: "name [op evr], ..." and rich (boolean) dependencies.
 *
 * The grammar and the checks are rpm 4.18's, in one scanner (spec_deps_scan) that the
 * spec's tags and worker/depline.c (generator output) share: items are separated by blanks
 * or commas, a comparison is a word of its own ("a >=1" is two items), a rich dependency is
 * stored in the spelling rpm rebuilds from its parts ("(a  =>  1)" becomes "(a >= 1)"), and
 * the messages are rpm's. Sets are kept sorted by name, EVR and flags without duplicates, as
 * rpm's dependency sets are, so header arrays and `rpmspec -q --requires` come out in rpm's
 * order.
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
/* The grammar (spec_deps_scan). Both readers of rpm's dependency lists use it: the spec's
 * tags below, and worker/depline.c for generator output. */

/* One spec_deps_scan() call. */
struct scan {
	const char *end;
	unsigned flags; /* enum spec_deps_scan_flags */
	const struct spec_deps_scan_ops *ops;
	void *ctx;
	struct kiln_err *err;
	const char *item;     /* where the item being read starts */
	struct kiln_buf name; /* the item's name, or the rich dependency as rpm spells it */
	struct kiln_buf evr;  /* its version */
	struct spec_deps_note note;
};

/* rpm's SKIPWHITE: commas count as blanks. */
static const char *skip_white(const struct scan *s, const char *p)
{
	while (p < s->end && (is_space(*p) || *p == ','))
		p++;
	return p;
}

/* A word of a plain list: up to a blank or a comma. */
static const char *word_end(const struct scan *s, const char *p)
{
	while (p < s->end && !is_space(*p) && *p != ',')
		p++;
	return p;
}

/* rpm's SKIPNONWHITEX, a word inside a rich dependency: a ')' that closes no '(' of the
 * word ends it too ("foo(x86-64)" is one word). */
static const char *rich_word_end(const struct scan *s, const char *p)
{
	int nest = 0;

	for (; p < s->end && !is_space(*p) && *p != ','; p++) {
		if (*p == '(')
			nest++;
		else if (*p == ')' && nest-- <= 0)
			break;
	}
	return p;
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

/* A length for "%.*s": the message is cut at its buffer's size anyway. */
static int quote_len(size_t len)
{
	return len < KILN_ERR_MSG_MAX ? (int)len : KILN_ERR_MSG_MAX;
}

/* Hand rpm's message (fmt) and what it quotes ([q, q+qlen)) to the caller. An error stops
 * the scan; a warning stops it only if the caller says so. */
static kiln_rc note_send(struct scan *s, enum spec_deps_note_kind kind, kiln_rc code,
                         enum spec_deps_quote qkind, const char *q, size_t qlen, const char *fmt,
                         ...) KILN_PRINTF(7, 8);
static kiln_rc note_send(struct scan *s, enum spec_deps_note_kind kind, kiln_rc code,
                         enum spec_deps_quote qkind, const char *q, size_t qlen, const char *fmt,
                         ...)
{
	struct spec_deps_note *n = &s->note;
	va_list ap;
	kiln_rc rc;

	n->kind = kind;
	n->code = code;
	n->quote_kind = qkind;
	n->quote = q;
	n->quote_len = qlen;
	va_start(ap, fmt);
	if (vsnprintf(n->msg, sizeof(n->msg), fmt, ap) < 0)
		n->msg[0] = '\0';
	va_end(ap);
	rc = s->ops->note(s->ctx, n, s->err);
	return !rc && kind == SPEC_DEPS_NOTE_ERROR ? code : rc;
}

/* A syntax error quoting the text from `from` on. */
#define scan_fail(s, from, ...)                                                                    \
	note_send((s), SPEC_DEPS_NOTE_ERROR, KILN_ESYNTAX, SPEC_DEPS_QUOTE_REST, (from),           \
	          (size_t)((s)->end - (from)), __VA_ARGS__)

/* rpmCharCheck on a version: each character alphanumeric or one of ".-_+:%{}~^", no "..".
 * rpm names the last bad character (for a UTF-8 sequence its last byte, sign-extended as a
 * plain char is on x86, shown as '?'), and warns about a macro left unexpanded first. */
static kiln_rc check_version_chars(struct scan *s, const char *v, size_t n)
{
	const char *bad = NULL;
	kiln_rc rc = KILN_OK;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!is_alnum(v[i]) && (!v[i] || !strchr(".-_+:%{}~^", v[i])))
			bad = v + i;
	}
	if (memchr(v, '%', n) || memchr(v, '{', n) || memchr(v, '}', n))
		rc = note_send(s, SPEC_DEPS_NOTE_WARNING, KILN_ESYNTAX, SPEC_DEPS_QUOTE_FIELD, v, n,
		               "Possible unexpanded macro in");
	if (!rc && bad)
		rc = note_send(s, SPEC_DEPS_NOTE_ERROR, KILN_ESYNTAX, SPEC_DEPS_QUOTE_FIELD, v, n,
		               "Illegal char '%c' (0x%x) in",
		               *bad >= 0x20 && *bad < 0x7f ? *bad : '?',
		               (unsigned)(int)(signed char)*bad);
	if (!rc && memmem(v, n, "..", 2))
		rc = note_send(s, SPEC_DEPS_NOTE_ERROR, KILN_ESYNTAX, SPEC_DEPS_QUOTE_FIELD, v, n,
		               "Illegal sequence \"..\" in");
	return rc;
}

/* rpm's checkSep ('-' and ':' at most once) and checkEpoch (digits before the ':'). */
static kiln_rc check_version_format(struct scan *s, const char *v, size_t n)
{
	const char *colon = memchr(v, ':', n);
	const char *dash = memchr(v, '-', n);
	const char *end = v + n;
	const char *what = NULL;
	const char *p;

	if (dash && memchr(dash + 1, '-', (size_t)(end - dash - 1)))
		what = "double separator '-'";
	else if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
		what = "double separator ':'";
	for (p = v; !what && colon && p < colon; p++) {
		if (*p < '0' || *p > '9')
			what = "epoch must be unsigned integer";
	}
	if (!what)
		return KILN_OK;
	return note_send(s, SPEC_DEPS_NOTE_BAD_VERSION, KILN_ESYNTAX, SPEC_DEPS_QUOTE_REST, s->item,
	                 (size_t)(s->end - s->item), "Invalid version (%s): %.*s", what,
	                 quote_len(n), v);
}

/* rpm's checkDep: the name's first character (only ASCII is judged: rpm does not know the
 * encoding), a version on a file name, the version's characters and format. v is NULL
 * when unversioned. */
static kiln_rc check_dep(struct scan *s, const char *name, const char *v, size_t vlen)
{
	unsigned char c = (unsigned char)name[0];
	kiln_rc rc;

	if (c < 0x80 && !(is_alnum((char)c) || c == '_' || c == '/'))
		return scan_fail(s, s->item,
		                 "Dependency tokens must begin with alpha-numeric, '_' or '/'");
	if (!v)
		return KILN_OK;
	if (name[0] == '/')
		return scan_fail(s, s->item, "Versioned file name not permitted");
	rc = check_version_chars(s, v, vlen);
	if (!rc)
		rc = check_version_format(s, v, vlen);
	return rc;
}

/* Give a plain item to the caller, as C strings. */
static kiln_rc item_send(struct scan *s, const char *name, size_t nlen, const char *v, size_t vlen,
                         uint32_t sense)
{
	struct spec_deps_item it = {NULL, NULL, sense, false};
	kiln_rc rc;

	kiln_buf_reset(&s->name);
	kiln_buf_add(&s->name, name, nlen);
	kiln_buf_reset(&s->evr);
	if (v)
		kiln_buf_add(&s->evr, v, vlen);
	rc = kiln_buf_finish(&s->name, s->err);
	if (!rc)
		rc = kiln_buf_finish(&s->evr, s->err);
	if (rc)
		return rc;
	it.name = s->name.ptr;
	it.evr = v ? s->evr.ptr : NULL;
	return s->ops->item(s->ctx, &it, s->err);
}

/* "name [op evr]" at *ps; without a comparison the next item starts at the word after the
 * name. */
static kiln_rc plain_item(struct scan *s, const char **ps)
{
	const char *name = *ps;
	const char *name_end = word_end(s, name);
	const char *op = skip_white(s, name_end);
	const char *op_end = word_end(s, op);
	uint32_t sense = op_end > op ? parse_op(op, (size_t)(op_end - op)) : 0;
	const char *v = NULL;
	const char *v_end = NULL;
	size_t vlen = 0;
	kiln_rc rc;

	if (sense) {
		v = skip_white(s, op_end);
		v_end = word_end(s, v);
		vlen = (size_t)(v_end - v);
		if (!vlen)
			return scan_fail(s, s->item, "Version required");
	}
	*ps = v ? v_end : op;
	if ((s->flags & SPEC_DEPS_SCAN_PATHS) && name[0] != '/')
		return note_send(s, SPEC_DEPS_NOTE_ERROR, KILN_ESYNTAX, SPEC_DEPS_QUOTE_NAME, name,
		                 (size_t)(name_end - name),
		                 "file trigger condition must begin with '/'");
	rc = check_dep(s, name, v, vlen);
	if (!rc)
		rc = item_send(s, name, (size_t)(name_end - name), v, vlen, sense);
	return rc;
}

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

/* rpm's rpmrichParseCheck: op (an expression's first operator, or the tag's sense) against
 * what the expression holds. Messages quote the text from `from` on. */
static kiln_rc rich_context(struct scan *s, const char *from, enum rich_op op, unsigned check)
{
	if ((op == OP_WITH || op == OP_WITHOUT) && (check & RICH_NO_WITH))
		return scan_fail(s, from, "Illegal ops in with/without");
	if (!(check & RICH_CHECK))
		return KILN_OK;
	if ((op == OP_AND || op == OP_IF) && (check & RICH_NO_AND))
		return scan_fail(s, from, "Illegal context for 'unless', please use 'or' instead");
	if ((op == OP_OR || op == OP_UNLESS) && (check & RICH_NO_OR))
		return scan_fail(s, from, "Illegal context for 'if', please use 'and' instead");
	return KILN_OK;
}

/* "name [op evr]" inside an expression, appended to the spelling; *ps moves past it and
 * the blanks after a name. */
static kiln_rc rich_simple(struct scan *s, const char **ps)
{
	const char *name_end = rich_word_end(s, *ps);
	const char *p = skip_white(s, name_end);
	const char *v = NULL;
	const char *v_end = NULL;
	uint32_t sense = 0;
	const char *name = *ps;
	size_t vlen;

	if (name_end == name)
		return scan_fail(s, s->item, "Name required");
	if (p < s->end) {
		const char *op_end = rich_word_end(s, p);

		sense = parse_op(p, (size_t)(op_end - p));
		if (sense) {
			v = skip_white(s, op_end);
			v_end = rich_word_end(s, v);
			p = v_end;
		}
	}
	if (v && v_end == v)
		return scan_fail(s, s->item, "Version required");
	vlen = v ? (size_t)(v_end - v) : 0;
	kiln_buf_add(&s->name, name, (size_t)(name_end - name));
	if (v) {
		kiln_buf_addf(&s->name, " %s%s%s ", sense & RPMTAG_DEP_LESS ? "<" : "",
		              sense & RPMTAG_DEP_GREATER ? ">" : "",
		              sense & RPMTAG_DEP_EQUAL ? "=" : "");
		kiln_buf_add(&s->name, v, vlen);
	}
	*ps = p;
	return check_dep(s, name, v, vlen);
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

static kiln_rc rich_expr(struct scan *s, const char **ps, unsigned *checkp, int depth);

/* One operand; op is the operator before it (OP_SINGLE for the first). The inside of an
 * "if"/"unless" operand is judged on its own, not by the context outside. */
static kiln_rc rich_operand(struct scan *s, const char **ps, enum rich_op op, unsigned *check,
                            int depth)
{
	unsigned sub = *check & RICH_CHECK;
	kiln_rc rc;

	if (*ps == s->end || **ps != '(')
		return rich_simple(s, ps);
	rc = rich_expr(s, ps, &sub, depth + 1);
	if (op == OP_IF || op == OP_UNLESS)
		sub &= ~(unsigned)(RICH_NO_AND | RICH_NO_OR);
	*check |= sub;
	return rc;
}

/* The operator after an operand (a word up to a blank or a ')': a comma is part of it);
 * *chain is the one the chain repeats. */
static kiln_rc rich_next_op(struct scan *s, const char **ps, enum rich_op *op, enum rich_op *chain)
{
	const char *p = *ps;
	const char *e = p;

	while (e < s->end && !is_space(*e) && *e != ')')
		e++;
	*op = rich_op_word(p, (size_t)(e - p));
	if (*op == OP_NONE)
		return scan_fail(s, s->item, "Unknown rich dependency op '%.*s'",
		                 quote_len((size_t)(e - p)), p);
	if (*op == OP_ELSE && (*chain == OP_IF || *chain == OP_UNLESS))
		*chain = OP_NONE;
	if (*chain != OP_NONE && *op != *chain)
		return scan_fail(s, s->item, "Cannot chain different ops");
	if (*chain != OP_NONE && *op != OP_AND && *op != OP_OR && *op != OP_WITH)
		return scan_fail(s, s->item, "Can only chain and/or/with ops");
	kiln_buf_addf(&s->name, " %s ", rich_op_names[*op]);
	*chain = *op;
	*ps = e;
	return KILN_OK;
}

/* A parenthesised expression at *ps ('('), depth levels deep; *checkp gets what it
 * holds. */
static kiln_rc rich_expr(struct scan *s, const char **ps, unsigned *checkp, int depth)
{
	const char *p = *ps + 1;
	enum rich_op op = OP_SINGLE;
	enum rich_op first = OP_SINGLE;
	enum rich_op chain = OP_NONE;
	unsigned check = *checkp;
	kiln_rc rc;

	if (depth > KILN_LIMIT_EXPR_DEPTH)
		return note_send(s, SPEC_DEPS_NOTE_ERROR, KILN_ELIMIT, SPEC_DEPS_QUOTE_REST,
		                 s->item, (size_t)(s->end - s->item),
		                 "rich dependency nested too deeply");
	kiln_buf_addch(&s->name, '(');
	for (;;) {
		p = skip_white(s, p);
		if (p < s->end && *p == ')')
			return scan_fail(s, s->item,
			                 chain != OP_NONE ? "Missing argument to rich dependency op"
			                                  : "Empty rich dependency");
		rc = rich_operand(s, &p, op, &check, depth);
		if (rc)
			return rc;
		p = skip_white(s, p);
		if (p == s->end)
			return scan_fail(s, s->item, "Unterminated rich dependency: %.*s",
			                 quote_len((size_t)(s->end - *ps)), *ps);
		if (*p == ')')
			break;
		rc = rich_next_op(s, &p, &op, &chain);
		if (rc)
			return rc;
		if (first == OP_SINGLE)
			first = op;
	}
	rc = rich_context(s, s->item, first, check);
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
	kiln_buf_addch(&s->name, ')');
	*ps = p + 1;
	*checkp |= check;
	return KILN_OK;
}

/* A whole rich dependency at *ps, judged as its tag's sense requires. rpm judges it
 * against the tag once it was read: that message quotes what follows it. */
static kiln_rc rich_item(struct scan *s, const char **ps)
{
	bool negative = s->flags & SPEC_DEPS_SCAN_NEGATIVE;
	struct spec_deps_item it = {NULL, NULL, 0, true};
	unsigned check = RICH_CHECK;
	kiln_rc rc;

	if (!(s->flags & SPEC_DEPS_SCAN_RICH))
		return scan_fail(s, s->item, "No rich dependencies allowed for this type");
	kiln_buf_reset(&s->name);
	rc = rich_expr(s, ps, &check, 1);
	if (!rc)
		rc = rich_context(s, *ps, negative ? OP_OR : OP_AND, check);
	if (!rc)
		rc = kiln_buf_finish(&s->name, s->err);
	if (rc)
		return rc;
	it.name = s->name.ptr;
	return s->ops->item(s->ctx, &it, s->err);
}

kiln_rc spec_deps_scan(const char *text, size_t len, unsigned flags,
                       const struct spec_deps_scan_ops *ops, void *ctx, struct kiln_err *err)
{
	const char *nul = memchr(text, '\0', len);
	struct scan s = {
	    .end = nul ? nul : text + len, .flags = flags, .ops = ops, .ctx = ctx, .err = err};
	const char *p;
	kiln_rc rc = KILN_OK;

	kiln_buf_init(&s.name, KILN_LIMIT_LINE);
	kiln_buf_init(&s.evr, KILN_LIMIT_LINE);
	for (p = skip_white(&s, text); !rc && p < s.end; p = skip_white(&s, p)) {
		s.item = p;
		rc = *p == '(' ? rich_item(&s, &p) : plain_item(&s, &p);
	}
	kiln_buf_release(&s.name);
	kiln_buf_release(&s.evr);
	return rc;
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

/* ---------------------------------------------------------------------------------------- */
/* The spec's lists: rpm's parseRCPOT as the spec parser calls it. */

/* One spec_dep_parse() call. */
struct dep_parse {
	struct spec_parse_priv *p;
	const char *what;          /* the line, quoted by messages */
	unsigned opts;             /* enum spec_dep_parse_opts */
	uint32_t flags;            /* the caller's qualifiers and trigger senses */
	int strict;                /* %_wrong_version_format_terminate_build; -1: not looked up */
	struct kiln_buf complaint; /* a version-format warning for the end of the line */
	struct spec_deps *out;
};

/* rpm's "line N: MESSAGE: LINE". */
static kiln_rc dep_fail(struct dep_parse *d, const char *msg)
{
	return spec_error(d->p, KILN_ESYNTAX, "line %d: %s: %s", d->p->lineno, msg, d->what);
}

static bool is_trigger(uint32_t flags)
{
	return flags & (RPMTAG_DEP_TRIGGERPREIN | RPMTAG_DEP_TRIGGERIN | RPMTAG_DEP_TRIGGERUN |
	                RPMTAG_DEP_TRIGGERPOSTUN);
}

/* rpm's addReqProv: an rpmlib() name is a requirement on rpm itself: it gets the RPMLIB
 * sense, except in triggers, and cannot be provided. A plain trigger may not fire twice
 * for one condition. */
static kiln_rc dep_add(struct dep_parse *d, const char *name, const char *evr, uint32_t flags)
{
	struct spec_dep dep = {name, evr, flags};
	struct spec_deps *out = d->out;
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

/* Obsoletes take package names (rpm checks them like Name:), then the item is added. */
static kiln_rc dep_item(void *ctx, const struct spec_deps_item *it, struct kiln_err *err)
{
	struct dep_parse *d = ctx;
	kiln_rc rc = KILN_OK;

	(void)err;
	if (!it->rich && (d->opts & SPEC_DEPP_OBSOLETES))
		rc = spec_char_check(d->p, it->name, ".-_+%{}", "_%");
	if (!rc)
		rc = dep_add(d, it->name, it->evr ? it->evr : "", d->flags | it->sense);
	return rc;
}

/* rpmCharCheck quotes the spec's current line, as spec_char_check() does. */
static const char *current_line(struct spec_parse_priv *p)
{
	if (p->line.len && p->line.ptr[p->line.len - 1] == '\n')
		kiln_buf_truncate(&p->line, p->line.len - 1);
	return p->line.ptr;
}

/* The spec parser's wording: "line N: MESSAGE: LINE". A bad version format is an error
 * when %_wrong_version_format_terminate_build is set (rpm's macros set it), else one
 * warning once the line is read, about the last version that deserves it. */
static kiln_rc dep_note(void *ctx, const struct spec_deps_note *n, struct kiln_err *err)
{
	struct dep_parse *d = ctx;
	struct spec_parse_priv *p = d->p;
	const char *subject = n->quote_kind == SPEC_DEPS_QUOTE_FIELD ? current_line(p) : d->what;

	(void)err;
	if (n->kind == SPEC_DEPS_NOTE_WARNING) {
		spec_warn(p, "line %d: %s: %s", p->lineno, n->msg, subject);
		return KILN_OK;
	}
	if (n->kind == SPEC_DEPS_NOTE_BAD_VERSION) {
		if (d->strict < 0)
			d->strict = spec_expand_numeric(
			                p, "%{?_wrong_version_format_terminate_build}") != 0;
		if (!d->strict) {
			kiln_buf_reset(&d->complaint);
			kiln_buf_addstr(&d->complaint, n->msg);
			return KILN_OK;
		}
	}
	if (n->quote_kind == SPEC_DEPS_QUOTE_NAME)
		return spec_error(p, n->code, "line %d: %s: %.*s", p->lineno, n->msg,
		                  (int)n->quote_len, n->quote);
	return spec_error(p, n->code, "line %d: %s: %s", p->lineno, n->msg, subject);
}

kiln_rc spec_dep_parse(struct spec_parse_priv *p, const char *text, uint32_t base_flags,
                       enum spec_rich_ctx rich, unsigned opts, struct spec_deps *out,
                       const char *what)
{
	static const struct spec_deps_scan_ops ops = {dep_item, dep_note};
	struct dep_parse d = {
	    .p = p, .what = what, .opts = opts, .flags = base_flags, .strict = -1, .out = out};
	unsigned flags = 0;
	kiln_rc rc;

	if (rich != SPEC_RICH_NONE)
		flags |= SPEC_DEPS_SCAN_RICH;
	if (rich == SPEC_RICH_NEGATIVE)
		flags |= SPEC_DEPS_SCAN_NEGATIVE;
	if (opts & SPEC_DEPP_FILE_TRIGGER)
		flags |= SPEC_DEPS_SCAN_PATHS;
	kiln_buf_init(&d.complaint, KILN_LIMIT_LINE);
	rc = spec_deps_scan(text, strlen(text), flags, &ops, &d, p->err);
	if (!rc && d.complaint.len)
		spec_warn(p, "line %d: %s: %s", p->lineno, d.complaint.ptr, what);
	kiln_buf_release(&d.complaint);
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
