/*
 * define.c - reading a definition "NAME[(OPTS)] BODY" as %define, %global, macro files and
 * --define do (rpm's doDefine).
 *
 * The body runs to the end of the line unless a %{, %( or %[ is still open; a backslash
 * keeps the next character (so backslash-newline continues the body) and is dropped; a body
 * wrapped in {...} loses the braces; trailing blanks and newlines are trimmed, and the
 * newlines after the definition are consumed.
 */
#include "util/util.h"

#include "macro/macro_int.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_eol(char c)
{
	return c == '\n' || c == '\r';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static const char *match_brace(const char *s, const char *end)
{
	int depth = 0;

	for (; s < end; s++) {
		if (*s == '\\') {
			if (++s >= end)
				break;
			continue;
		}
		if (*s == '}') {
			if (--depth <= 0)
				return s;
		} else if (*s == '{') {
			depth++;
		}
	}
	return NULL;
}

struct def_parse {
	const char *name;
	size_t name_len;
	struct kiln_buf opts;
	bool has_opts;
	struct kiln_buf body;
	const char *sbody; /* where the body text starts, before blanks */
};

/* The characters copy_free_body looks at; the others are copied as they come. */
static const bool body_special[256] = {
    ['\\'] = true, ['%'] = true, ['{'] = true, ['}'] = true,  ['('] = true,
    [')'] = true,  ['['] = true, [']'] = true, ['\n'] = true, ['\r'] = true,
};

/* Copy a free-form body from s; returns where it ended, or NULL when a %{ %( %[ is open.
 * Runs of ordinary characters are copied at once (macro files have long bodies). */
static const char *copy_free_body(const char *s, const char *end, struct kiln_buf *body)
{
	int bc = 0, pc = 0, xc = 0;
	const char *run = s; /* start of the text not yet copied */

	for (;;) {
		while (s < end && !body_special[(unsigned char)*s])
			s++;
		if (s >= end || (!bc && !pc && !xc && is_eol(*s)))
			break;
		switch (*s) {
		case '\\':
			/* the backslash is dropped, the character after it kept */
			if (s + 1 < end) {
				kiln_buf_add(body, run, (size_t)(s - run));
				run = ++s;
			}
			break;
		case '%':
			if (s + 1 < end) {
				char n = s[1];

				if (n == '{' || n == '(' || n == '[' || n == '%') {
					s++;
					bc += n == '{';
					pc += n == '(';
					xc += n == '[';
				}
			}
			break;
		case '{':
			bc += bc > 0;
			break;
		case '}':
			bc -= bc > 0;
			break;
		case '(':
			pc += pc > 0;
			break;
		case ')':
			pc -= pc > 0;
			break;
		case '[':
			xc += xc > 0;
			break;
		case ']':
			xc -= xc > 0;
			break;
		default:
			break;
		}
		s++;
	}
	kiln_buf_add(body, run, (size_t)(s - run));
	if (bc || pc || xc)
		return NULL;
	while (body->len &&
	       (is_blank(body->ptr[body->len - 1]) || is_eol(body->ptr[body->len - 1])))
		kiln_buf_truncate(body, body->len - 1);
	return s;
}

/* Parse the pieces; returns the end of the definition or NULL after reporting an error. */
static const char *parse_pieces(struct mbuf *mb, struct def_parse *p, const char *s,
                                const char *end)
{
	const char *close;

	while (s < end && is_blank(*s))
		s++;
	p->name = s;
	while (s < end && is_name_char(*s))
		s++;
	p->name_len = (size_t)(s - p->name);
	if (s < end && *s == '(') {
		close = memchr(s, ')', (size_t)(end - s));
		if (!close) {
			macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%.*s has unterminated opts",
			               (int)p->name_len, p->name);
			return NULL;
		}
		kiln_buf_add(&p->opts, s + 1, (size_t)(close - s - 1));
		p->has_opts = true;
		s = close + 1;
	}
	p->sbody = s;
	while (s < end && is_blank(*s))
		s++;
	if (s < end && *s == '{') {
		close = match_brace(s, end);
		if (!close) {
			macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%.*s has unterminated body",
			               (int)p->name_len, p->name);
			return NULL;
		}
		kiln_buf_add(&p->body, s + 1, (size_t)(close - s - 1));
		s = close + 1;
	} else {
		s = copy_free_body(s, end, &p->body);
		if (!s) {
			macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%.*s has unterminated body",
			               (int)p->name_len, p->name);
			return NULL;
		}
	}
	while (s < end && is_eol(*s))
		s++;
	return s;
}

static bool check_name(struct mbuf *mb, const struct def_parse *p, const char *what)
{
	struct macro_slot *slot;

	if (!macro_name_valid(p->name, p->name_len)) {
		macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%.*s has illegal name (%s)",
		               (int)p->name_len, p->name, what);
		return false;
	}
	slot = macro_table_find(&mb->ctx->table, p->name, p->name_len);
	if (slot && (slot->builtin || (slot->top && (slot->top->flags & MACRO_DEF_AUTO)))) {
		macro_mb_error(mb, KILN_EPRIV, "Macro %%%.*s is a %s (%s)", (int)p->name_len,
		               p->name, slot->builtin ? "built-in" : "automatic", what);
		return false;
	}
	return true;
}

size_t macro_parse_define(struct mbuf *mb, const char *text, size_t len, int level,
                          bool expand_body, const char *what)
{
	struct def_parse p = {.opts = KILN_BUF_INIT(KILN_LIMIT_LINE),
	                      .body = KILN_BUF_INIT(mb->ctx->max_expansion)};
	struct kiln_buf ebody = KILN_BUF_INIT(mb->ctx->max_expansion);
	const char *end = text + len;
	const char *se;
	struct kiln_buf *body = &p.body;
	bool quoted = false;

	se = parse_pieces(mb, &p, text, end);
	if (!se || !check_name(mb, &p, what))
		goto out;
	if (!p.body.len) {
		macro_mb_error(mb, KILN_ESYNTAX, "Macro %%%.*s has empty body", (int)p.name_len,
		               p.name);
		goto out;
	}
	if (p.sbody >= end ||
	    (!is_blank(*p.sbody) && !(*p.sbody == '\\' && p.sbody + 1 < end && is_eol(p.sbody[1]))))
		macro_mb_warn(mb, "Macro %%%.*s needs whitespace before body", (int)p.name_len,
		              p.name);
	if (expand_body) {
		/* rpm 4.20 keeps %{quote:} marks in a %global body and flags the macro. */
		if (!macro_mb_expand_quoted(mb, p.body.ptr, p.body.len, &ebody, true, &quoted)) {
			kiln_err_wrap(mb->err, "Macro %%%.*s failed to expand", (int)p.name_len,
			              p.name);
			goto out;
		}
		body = &ebody;
	}
	if (p.opts.err || body->err ||
	    macro_push(mb->ctx, p.name, p.name_len, p.has_opts ? p.opts.ptr : NULL, body->ptr,
	               body->len, level, quoted ? MACRO_DEF_QUOTED : 0, mb->err))
		macro_mb_error(mb, KILN_ENOMEM, "out of memory");
out:
	kiln_buf_release(&p.opts);
	kiln_buf_release(&p.body);
	kiln_buf_release(&ebody);
	return se ? (size_t)(se - text) : len;
}

kiln_rc macro_define_cmdline(struct macro_ctx *ctx, const char *line, struct kiln_err *err)
{
	char *s = kiln_strdup(line[0] == '%' ? line + 1 : line);
	char *p;
	kiln_rc rc;

	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (p = s; *p && *p != ' ' && *p != '\t'; p++) {
		if (*p == '-')
			*p = '_';
	}
	rc = macro_define_line(ctx, s, MACRO_LEVEL_CMDLINE, err);
	free(s);
	return rc;
}

kiln_rc macro_define_bcond(struct macro_ctx *ctx, bool with, const char *name, struct kiln_err *err)
{
	const char *what = with ? "with" : "without";
	struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_LINE);
	kiln_rc rc;

	kiln_buf_addf(&line, "_%s_%s --%s-%s", what, name, what, name);
	rc = kiln_buf_finish(&line, err);
	if (!rc)
		rc = macro_define_line(ctx, line.ptr, MACRO_LEVEL_CMDLINE, err);
	kiln_buf_release(&line);
	return rc;
}
