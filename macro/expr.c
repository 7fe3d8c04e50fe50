/*
 * expr.c - rpm's expression language (%[...], %{expr:...}, %if).
 *
 * Values are 32-bit integers (arithmetic wraps, as rpm's C ints do in practice), strings
 * and versions. Precedence, lowest first: ?: ; && and || (one level, left to right, each
 * returning the operand that decided) ; comparisons ; + - ; * / ; unary - ! ; primaries. The
 * side that short-circuiting skips is parsed but not evaluated: its macros are not
 * expanded and it cannot fail at run time.
 */
#include "util/util.h"

#include "macro/macro_int.h"

enum val_type { VAL_INT, VAL_STR, VAL_VER };

struct value {
	enum val_type type;
	int32_t i;
	struct kiln_buf s; /* string or EVR text */
};

enum tok {
	TOK_EOF,
	TOK_INT,
	TOK_STR,
	TOK_VER,
	TOK_FUNC, /* lua:name(args) */
	TOK_PLUS,
	TOK_MINUS,
	TOK_MUL,
	TOK_DIV,
	TOK_NOT,
	TOK_EQ,
	TOK_NE,
	TOK_LT,
	TOK_LE,
	TOK_GT,
	TOK_GE,
	TOK_AND,
	TOK_OR,
	TOK_QUEST,
	TOK_COLON,
	TOK_OPEN,
	TOK_CLOSE,
	TOK_COMMA, /* only between lua:name() arguments */
};

struct parser {
	struct macro_ctx *ctx;
	struct kiln_err *err;
	const char *str; /* the whole expression, for messages */
	const char *p;
	const char *end;
	unsigned flags;
	int discard; /* > 0 while parsing a side that is not evaluated */
	int depth;
	bool failed;
	enum tok tok;
	struct value tokval; /* value of TOK_INT/STR/VER/FUNC */
	const char *tokpos;
};

static void val_init(struct value *v)
{
	v->type = VAL_INT;
	v->i = 0;
	kiln_buf_init(&v->s, KILN_LIMIT_MACRO_EXPANSION);
}

static void val_release(struct value *v)
{
	kiln_buf_release(&v->s);
}

static void val_move(struct value *dst, struct value *src)
{
	val_release(dst);
	*dst = *src;
	val_init(src);
}

static void fail(struct parser *ps, const char *msg)
{
	if (ps->failed)
		return;
	ps->failed = true;
	kiln_err_set(ps->err, KILN_ESYNTAX, "%s: %.*s", msg, (int)(ps->end - ps->str), ps->str);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* atoi-like: digits read into a long (clamped), then truncated to 32 bits as rpm's int. */
static int32_t parse_int(const char *s, size_t len, bool *ok)
{
	bool neg = false;
	int64_t v = 0;
	size_t i = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	*ok = i < len;
	for (; i < len; i++) {
		if (!is_digit(s[i])) {
			*ok = false;
			return 0;
		}
		if (v <= (INT64_MAX - 9) / 10)
			v = v * 10 + (s[i] - '0');
		else
			v = INT64_MAX;
	}
	if (neg)
		v = -v;
	return (int32_t)(uint32_t)(uint64_t)v;
}

/* Expand one term of the expression: as rpm's getValuebuf() does, an expansion of its own
 * (rpmExpandMacros), so its trace counts depth from 0 again. */
static kiln_rc expand_term(struct parser *ps, const char *src, size_t len, struct kiln_buf *out)
{
	int base = ps->ctx->trace_base;
	kiln_rc rc;

	ps->ctx->trace_base = ps->ctx->depth;
	rc = macro_expand(ps->ctx, src, len, out, ps->err);
	ps->ctx->trace_base = base;
	return rc;
}

/* Skip one macro reference at q (on its '%'); NULL when a bracket is not closed. */
static const char *skip_macro(const char *q, const char *end)
{
	q++;
	if (q < end && (*q == '{' || *q == '(' || *q == '[')) {
		char open = *q;
		char close = open == '{' ? '}' : open == '(' ? ')' : ']';
		int depth = 0;

		for (; q < end; q++) {
			if (*q == open)
				depth++;
			else if (*q == close && --depth == 0)
				return q + 1;
		}
		return NULL;
	}
	while (q < end && (*q == '?' || *q == '!'))
		q++;
	while (q < end && is_word(*q))
		q++;
	return q;
}

/* A number: a run of digits and (when terms are expanded) macros, like "0%{?fedora}". The
 * whole run is expanded and must give an integer; an empty expansion counts as 0. */
static bool lex_number(struct parser *ps)
{
	struct kiln_buf out = KILN_BUF_INIT(ps->ctx->max_expansion);
	const char *start = ps->p;
	const char *q = start;
	bool has_macro = false;
	bool ok = true;

	while (q < ps->end) {
		if (is_digit(*q)) {
			q++;
		} else if (*q == '%' && (ps->flags & MACRO_EXPR_EXPAND)) {
			q = skip_macro(q, ps->end);
			if (!q) {
				fail(ps, "unterminated macro in expression");
				return false;
			}
			has_macro = true;
		} else {
			break;
		}
	}
	ps->p = q;
	ps->tok = TOK_INT;
	ps->tokval.type = VAL_INT;
	ps->tokval.i = 0;
	/* rpm expands every term, plain numbers too: only a trace can tell, so kiln parses a
	 * plain number directly unless tracing. */
	if (!has_macro && !(ps->ctx->trace && (ps->flags & MACRO_EXPR_EXPAND))) {
		ps->tokval.i = parse_int(start, (size_t)(q - start), &ok);
		return true;
	}
	if (ps->discard)
		return true;
	if (expand_term(ps, start, (size_t)(q - start), &out)) {
		ps->failed = true;
		kiln_buf_release(&out);
		return false;
	}
	if (out.len)
		ps->tokval.i = parse_int(out.ptr, out.len, &ok);
	if (!ok) {
		size_t i;
		bool word = true;

		for (i = 0; i < out.len; i++)
			word = word && is_word(out.ptr[i]);
		fail(ps, word ? "macro expansion returned a bare word, please use \"...\""
		              : "macro expansion did not return an integer");
	}
	kiln_buf_release(&out);
	return ok;
}

/* A "..." or v"..." literal; macros inside are expanded when terms are expanded. */
static bool lex_string(struct parser *ps, bool version)
{
	const char *start = ps->p + (version ? 2 : 1);
	const char *close = memchr(start, '"', (size_t)(ps->end - start));

	if (!close) {
		fail(ps, "unterminated string in expression");
		return false;
	}
	ps->p = close + 1;
	ps->tok = version ? TOK_VER : TOK_STR;
	ps->tokval.type = version ? VAL_VER : VAL_STR;
	kiln_buf_reset(&ps->tokval.s);
	if ((ps->flags & MACRO_EXPR_EXPAND) && !ps->discard && close > start) {
		if (expand_term(ps, start, (size_t)(close - start), &ps->tokval.s)) {
			ps->failed = true;
			return false;
		}
	} else {
		kiln_buf_add(&ps->tokval.s, start, (size_t)(close - start));
	}
	if (version && !ps->discard) {
		struct macro_evr evr;
		bool valid;

		if (macro_evr_parse(ps->tokval.s.ptr, &evr, ps->err)) {
			ps->failed = true;
			return false;
		}
		valid = evr.version[0] != '\0';
		macro_evr_release(&evr);
		if (!valid) {
			fail(ps, "invalid version");
			return false;
		}
	}
	return true;
}

static bool lex_word(struct parser *ps)
{
	const char *start = ps->p;
	const char *q = start;

	while (q < ps->end && is_word(*q))
		q++;
	if ((size_t)(q - start) == 3 && !memcmp(start, "lua", 3) && q < ps->end && *q == ':') {
		const char *name = q + 1;

		for (q = name; q < ps->end && (is_word(*q) || *q == '.'); q++)
			;
		if (q == name || q >= ps->end || *q != '(') {
			fail(ps, "syntax error in expression");
			return false;
		}
		kiln_buf_reset(&ps->tokval.s);
		kiln_buf_add(&ps->tokval.s, name, (size_t)(q - name));
		ps->p = q + 1;
		ps->tok = TOK_FUNC;
		return true;
	}
	fail(ps, "bare words are no longer supported, please use \"...\"");
	return false;
}

static bool lex_op(struct parser *ps)
{
	char c = *ps->p;
	char n = ps->p + 1 < ps->end ? ps->p[1] : '\0';
	static const char singles[] = "+-*/()?:,";
	static const enum tok single_toks[] = {TOK_PLUS,  TOK_MINUS, TOK_MUL,   TOK_DIV,  TOK_OPEN,
	                                       TOK_CLOSE, TOK_QUEST, TOK_COLON, TOK_COMMA};
	const char *pos = strchr(singles, c);

	if (c && pos) {
		ps->tok = single_toks[pos - singles];
		ps->p++;
		return true;
	}
	ps->p += 2;
	if (c == '=' && n == '=')
		ps->tok = TOK_EQ;
	else if (c == '!' && n == '=')
		ps->tok = TOK_NE;
	else if (c == '<' && n == '=')
		ps->tok = TOK_LE;
	else if (c == '>' && n == '=')
		ps->tok = TOK_GE;
	else if (c == '&' && n == '&')
		ps->tok = TOK_AND;
	else if (c == '|' && n == '|')
		ps->tok = TOK_OR;
	else {
		ps->p--;
		if (c == '!')
			ps->tok = TOK_NOT;
		else if (c == '<')
			ps->tok = TOK_LT;
		else if (c == '>')
			ps->tok = TOK_GT;
		else {
			/* A character no token starts with: rpm's lexer words it so. */
			ps->p--;
			fail(ps, "parse error in expression");
			return false;
		}
	}
	return true;
}

static bool next(struct parser *ps)
{
	while (ps->p < ps->end && is_space(*ps->p))
		ps->p++;
	ps->tokpos = ps->p;
	if (ps->p >= ps->end) {
		ps->tok = TOK_EOF;
		return true;
	}
	if (is_digit(*ps->p) || (*ps->p == '%' && (ps->flags & MACRO_EXPR_EXPAND)))
		return lex_number(ps);
	if (*ps->p == '"')
		return lex_string(ps, false);
	if (*ps->p == 'v' && ps->p + 1 < ps->end && ps->p[1] == '"')
		return lex_string(ps, true);
	if (is_word(*ps->p))
		return lex_word(ps);
	return lex_op(ps);
}

static bool truthy(const struct value *v)
{
	if (v->type == VAL_INT)
		return v->i != 0;
	if (v->type == VAL_STR)
		return v->s.len != 0;
	return false;
}

static bool parse_ternary(struct parser *ps, struct value *out);

/* lua:name(arg, ...) */
static bool parse_call(struct parser *ps, struct value *out)
{
	struct kiln_buf name = KILN_BUF_INIT(KILN_LIMIT_LINE);
	char **argv = NULL;
	int argc = 0;
	bool ok = false;

	kiln_buf_add(&name, ps->tokval.s.ptr, ps->tokval.s.len);
	if (!next(ps))
		goto out;
	while (ps->tok != TOK_CLOSE) {
		struct value arg;
		kiln_rc rc;

		val_init(&arg);
		if (!parse_ternary(ps, &arg)) {
			val_release(&arg);
			goto out;
		}
		if (arg.type == VAL_INT) {
			char num[16];

			snprintf(num, sizeof(num), "%d", arg.i);
			rc = macro_argv_add(&argv, &argc, num, strlen(num), ps->err);
		} else {
			rc = macro_argv_add(&argv, &argc, arg.s.ptr, arg.s.len, ps->err);
		}
		if (rc) {
			ps->failed = true;
			val_release(&arg);
			goto out;
		}
		val_release(&arg);
		if (ps->tok == TOK_CLOSE)
			break;
		if (ps->tok == TOK_COMMA) {
			if (!next(ps))
				goto out;
			continue;
		}
		fail(ps, ps->tok == TOK_EOF ? "unmatched (" : "syntax error in expression");
		goto out;
	}
	if (!next(ps))
		goto out;
	out->type = VAL_STR;
	kiln_buf_reset(&out->s);
	if (!ps->discard &&
	    macro_lua_call(ps->ctx, name.ptr, argc, (const char *const *)argv, &out->s, ps->err)) {
		ps->failed = true;
		goto out;
	}
	ok = true;
out:
	macro_argv_free(argv, argc);
	kiln_buf_release(&name);
	return ok;
}

static bool parse_primary(struct parser *ps, struct value *out)
{
	switch (ps->tok) {
	case TOK_OPEN:
		if (!next(ps) || !parse_ternary(ps, out))
			return false;
		if (ps->tok != TOK_CLOSE) {
			fail(ps, "unmatched (");
			return false;
		}
		return next(ps);
	case TOK_INT:
	case TOK_STR:
	case TOK_VER:
		val_move(out, &ps->tokval);
		return next(ps);
	case TOK_FUNC:
		return parse_call(ps, out);
	case TOK_MINUS:
		if (!next(ps) || !parse_primary(ps, out))
			return false;
		if (out->type != VAL_INT) {
			fail(ps, "- only on numbers");
			return false;
		}
		out->i = (int32_t)(0u - (uint32_t)out->i);
		return true;
	case TOK_NOT:
		if (!next(ps) || !parse_primary(ps, out))
			return false;
		out->i = !truthy(out);
		out->type = VAL_INT;
		return true;
	case TOK_EOF:
		fail(ps, "unexpected end of expression");
		return false;
	default:
		fail(ps, "syntax error in expression");
		return false;
	}
}

static bool same_type(struct parser *ps, const struct value *a, const struct value *b)
{
	if (a->type == b->type)
		return true;
	if (!ps->failed) {
		ps->failed = true;
		kiln_err_set(ps->err, KILN_ESYNTAX, "types must match: %.*s",
		             (int)(ps->end - ps->str), ps->str);
	}
	return false;
}

static bool parse_muldiv(struct parser *ps, struct value *out)
{
	if (!parse_primary(ps, out))
		return false;
	while (ps->tok == TOK_MUL || ps->tok == TOK_DIV) {
		enum tok op = ps->tok;
		struct value rhs;
		bool ok;

		val_init(&rhs);
		ok = next(ps) && parse_primary(ps, &rhs) && same_type(ps, out, &rhs);
		if (ok && out->type == VAL_STR) {
			fail(ps, "* and / not supported for strings");
			ok = false;
		} else if (ok && out->type == VAL_VER) {
			fail(ps, "* and / not supported for versions");
			ok = false;
		} else if (ok && op == TOK_MUL) {
			out->i = (int32_t)((uint32_t)out->i * (uint32_t)rhs.i);
		} else if (ok && rhs.i == 0 && !ps->discard) {
			fail(ps, "division by zero");
			ok = false;
		} else if (ok && rhs.i != 0) {
			/* INT32_MIN / -1 overflows in C; it wraps to INT32_MIN here. */
			out->i = (rhs.i == -1) ? (int32_t)(0u - (uint32_t)out->i) : out->i / rhs.i;
		}
		val_release(&rhs);
		if (!ok)
			return false;
	}
	return true;
}

static bool parse_addsub(struct parser *ps, struct value *out)
{
	if (!parse_muldiv(ps, out))
		return false;
	while (ps->tok == TOK_PLUS || ps->tok == TOK_MINUS) {
		enum tok op = ps->tok;
		struct value rhs;
		bool ok;

		val_init(&rhs);
		ok = next(ps) && parse_muldiv(ps, &rhs) && same_type(ps, out, &rhs);
		if (ok && out->type == VAL_VER) {
			fail(ps, "+ and - not supported for versions");
			ok = false;
		} else if (ok && out->type == VAL_STR && op == TOK_MINUS) {
			fail(ps, "- not supported for strings");
			ok = false;
		} else if (ok && out->type == VAL_STR) {
			kiln_buf_add(&out->s, rhs.s.ptr, rhs.s.len);
		} else if (ok) {
			uint32_t a = (uint32_t)out->i;
			uint32_t b = (uint32_t)rhs.i;

			out->i = (int32_t)(op == TOK_PLUS ? a + b : a - b);
		}
		val_release(&rhs);
		if (!ok)
			return false;
	}
	return true;
}

static int compare(const struct value *a, const struct value *b)
{
	struct macro_evr ea;
	struct macro_evr eb;
	int rc;

	if (a->type == VAL_INT)
		return a->i < b->i ? -1 : a->i > b->i;
	if (a->type == VAL_STR) {
		rc = strcmp(a->s.ptr, b->s.ptr);
		return rc < 0 ? -1 : rc > 0;
	}
	/* Versions: a missing epoch is 0 and a missing release is "" (rpmver semantics). */
	if (macro_evr_parse(a->s.ptr, &ea, NULL))
		return 0;
	if (macro_evr_parse(b->s.ptr, &eb, NULL)) {
		macro_evr_release(&ea);
		return 0;
	}
	rc = macro_vercmp(ea.epoch ? ea.epoch : "0", eb.epoch ? eb.epoch : "0");
	if (!rc)
		rc = macro_vercmp(ea.version, eb.version);
	if (!rc)
		rc = macro_vercmp(ea.release ? ea.release : "", eb.release ? eb.release : "");
	macro_evr_release(&ea);
	macro_evr_release(&eb);
	return rc;
}

static bool is_relop(enum tok t)
{
	return t == TOK_EQ || t == TOK_NE || t == TOK_LT || t == TOK_LE || t == TOK_GT ||
	       t == TOK_GE;
}

static bool parse_relational(struct parser *ps, struct value *out)
{
	if (!parse_addsub(ps, out))
		return false;
	while (is_relop(ps->tok)) {
		enum tok op = ps->tok;
		struct value rhs;
		bool ok;
		int c = 0;

		val_init(&rhs);
		ok = next(ps) && parse_addsub(ps, &rhs) && same_type(ps, out, &rhs);
		if (ok && !ps->discard)
			c = compare(out, &rhs);
		val_release(&rhs);
		if (!ok)
			return false;
		kiln_buf_reset(&out->s);
		out->type = VAL_INT;
		out->i = op == TOK_EQ   ? c == 0
		         : op == TOK_NE ? c != 0
		         : op == TOK_LT ? c < 0
		         : op == TOK_LE ? c <= 0
		         : op == TOK_GT ? c > 0
		                        : c >= 0;
	}
	return true;
}

static bool parse_logical(struct parser *ps, struct value *out)
{
	if (!parse_relational(ps, out))
		return false;
	while (ps->tok == TOK_AND || ps->tok == TOK_OR) {
		bool decided = ps->tok == TOK_AND ? !truthy(out) : truthy(out);
		struct value rhs;
		bool ok;

		val_init(&rhs);
		if (decided)
			ps->discard++;
		ok = next(ps) && parse_relational(ps, &rhs);
		if (decided)
			ps->discard--;
		if (ok && !decided)
			val_move(out, &rhs);
		val_release(&rhs);
		if (!ok)
			return false;
	}
	return true;
}

static bool parse_ternary(struct parser *ps, struct value *out)
{
	struct value a;
	struct value b;
	bool cond;
	bool ok;

	if (++ps->depth > KILN_LIMIT_EXPR_DEPTH) {
		fail(ps, "expression nested too deeply");
		return false;
	}
	if (!parse_logical(ps, out)) {
		ps->depth--;
		return false;
	}
	if (ps->tok != TOK_QUEST) {
		ps->depth--;
		return true;
	}
	cond = truthy(out);
	val_init(&a);
	val_init(&b);
	if (!cond)
		ps->discard++;
	ok = next(ps) && parse_ternary(ps, &a);
	if (!cond)
		ps->discard--;
	if (ok && ps->tok != TOK_COLON) {
		fail(ps, ps->tok == TOK_EOF ? "unexpected end of expression"
		                            : "syntax error in expression");
		ok = false;
	}
	if (cond)
		ps->discard++;
	ok = ok && next(ps) && parse_ternary(ps, &b);
	if (cond)
		ps->discard--;
	ok = ok && same_type(ps, &a, &b);
	if (ok)
		val_move(out, cond ? &a : &b);
	val_release(&a);
	val_release(&b);
	ps->depth--;
	return ok;
}

static kiln_rc evaluate(struct macro_ctx *ctx, const char *expr, size_t len, unsigned flags,
                        struct value *out, struct kiln_err *err)
{
	struct kiln_err local = KILN_ERR_INIT;
	struct parser ps = {.ctx = ctx,
	                    .err = err ? err : &local,
	                    .str = expr,
	                    .p = expr,
	                    .end = expr + len,
	                    .flags = flags};
	bool ok;

	val_init(&ps.tokval);
	ok = next(&ps) && parse_ternary(&ps, out);
	if (ok && ps.tok != TOK_EOF) {
		fail(&ps, ps.tok == TOK_CLOSE ? "syntax error in expression"
		                              : "syntax error in expression");
		ok = false;
	}
	val_release(&ps.tokval);
	if (!ok || out->s.err) {
		if (!ps.err->code)
			kiln_err_set(ps.err, KILN_ESYNTAX, "syntax error in expression: %.*s",
			             (int)len, expr);
		return ps.err->code;
	}
	return KILN_OK;
}

kiln_rc macro_expr_eval(struct macro_ctx *ctx, const char *expr, size_t len, unsigned flags,
                        struct kiln_buf *out, struct kiln_err *err)
{
	struct value v;
	kiln_rc rc;

	val_init(&v);
	rc = evaluate(ctx, expr, len, flags, &v, err);
	if (!rc) {
		char num[24];

		if (v.type == VAL_INT)
			kiln_buf_add(out, num, util_fmt_int(num, v.i));
		else
			kiln_buf_add(out, v.s.ptr, v.s.len);
		rc = kiln_buf_finish(out, err);
	}
	val_release(&v);
	return rc;
}

kiln_rc macro_expr_bool(struct macro_ctx *ctx, const char *expr, size_t len, unsigned flags,
                        bool *result, struct kiln_err *err)
{
	struct value v;
	kiln_rc rc;

	val_init(&v);
	rc = evaluate(ctx, expr, len, flags, &v, err);
	if (!rc)
		*result = truthy(&v);
	val_release(&v);
	return rc;
}
