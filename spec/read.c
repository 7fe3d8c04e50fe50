/*
 * read.c - reading a spec: logical lines, macro expansion, conditionals, %include, and the
 * "parsed" text `rpmspec -P` prints.
 *
 * rpm's model is kept exactly, because byte-equal -P output depends on it: a logical line
 * (physical lines joined while a backslash ends one or a %{ %( %[ is open) is expanded once
 * when the current branch is read, then handed out one line at a time. Each section parser
 * reads with its own strip mode; the line as stripped goes to the parsed text, with a
 * newline put back only when trailing space was stripped. That is why a comment vanishes
 * from %files (comment cut, no newline) but leaves an empty line in the preamble.
 */
#include "util/util.h"

#include <unistd.h>

#include "macro/macro.h"
#include "spec/spec.h"
#include "spec/spec_int.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Skip "line N: " at s; NULL when s does not start so. */
static const char *skip_line_prefix(const char *s)
{
	if (strncmp(s, "line ", 5))
		return NULL;
	s += 5;
	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		s++;
	return !strncmp(s, ": ", 2) ? s + 2 : NULL;
}

/* The message without rpm's location prefix ("line N: ", "FILE: line N: ", "FILE:N: "):
 * the error's input and line carry it, and kiln_err_format() prints "FILE:N: " itself. */
static const char *strip_location(const char *msg, const char *file)
{
	size_t n = file ? strlen(file) : 0;
	const char *s = skip_line_prefix(msg);

	if (s)
		return s;
	if (!n || strncmp(msg, file, n) || msg[n] != ':')
		return msg;
	if (msg[n + 1] == ' ' && (s = skip_line_prefix(msg + n + 2)))
		return s;
	s = msg + n + 1;
	if (*s < '0' || *s > '9')
		return msg;
	while (*s >= '0' && *s <= '9')
		s++;
	return !strncmp(s, ": ", 2) ? s + 2 : msg;
}

/* A macro error from a spec line: the macro engine names the position the way rpm does
 * ("FILE: line N: "); carry it in the error's location instead. */
static void relocate_error(struct spec_parse_priv *p)
{
	char msg[KILN_ERR_MSG_MAX];
	kiln_rc rc = p->err->code;

	snprintf(msg, sizeof(msg), "%s", strip_location(p->err->msg, p->file->name));
	kiln_err_clear(p->err);
	kiln_err_set(p->err, rc, "%s", msg);
	kiln_err_locate(p->err, p->file->name, p->lineno, 0);
}

kiln_rc spec_error(struct spec_parse_priv *p, kiln_rc rc, const char *fmt, ...)
{
	const char *file = p->file ? p->file->name : p->spec->path;
	char msg[KILN_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	kiln_err_set(p->err, rc, "%s", strip_location(msg, file));
	kiln_err_locate(p->err, file, p->lineno, 0);
	return rc;
}

void spec_warn(struct spec_parse_priv *p, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	/* Messages carry rpm's own "line N:" wording. */
	macro_diag(p->ctx, KILN_LOG_WARN, "%s", msg);
}

void spec_report(struct spec_parse_priv *p)
{
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 32];

	macro_diag(p->ctx, KILN_LOG_ERROR, "%s", kiln_err_format(p->err, msg, sizeof(msg)));
	kiln_err_clear(p->err);
}

void spec_parsed_add(struct spec_parse_priv *p, const char *s, size_t len)
{
	kiln_buf_add(&p->spec->parsed, s, len);
}

/* ---------------------------------------------------------------------------------------- */
/* Files. */

static kiln_rc push_file(struct spec_parse_priv *p, const char *name, const char *text, size_t len,
                         bool from_disk)
{
	struct spec_file_frame *f = kiln_arena_alloc(&p->spec->arena, sizeof(*f));
	kiln_rc rc;

	if (!f)
		return kiln_arena_finish(&p->spec->arena, p->err);
	f->name = kiln_arena_strdup(&p->spec->arena, name);
	kiln_buf_init(&f->text, KILN_LIMIT_SPEC_BYTES);
	if (!f->name)
		return kiln_arena_finish(&p->spec->arena, p->err);
	if (from_disk) {
		rc = util_read_file(name, KILN_LIMIT_SPEC_BYTES, &f->text, p->err);
		if (rc) {
			kiln_buf_release(&f->text);
			kiln_err_clear(p->err);
			return spec_error(p, rc, "Unable to open %s: %s", name,
			                  rc == KILN_ENOTFOUND ? "No such file or directory"
			                                       : "cannot read");
		}
	} else {
		kiln_buf_add(&f->text, text, len);
		rc = kiln_buf_finish(&f->text, p->err);
		if (rc)
			return rc;
	}
	f->up = p->file;
	p->file = f;
	return macro_define(p->ctx, "__file_name", NULL, f->name, MACRO_LEVEL_SPEC, p->err);
}

static void pop_file(struct spec_parse_priv *p)
{
	struct spec_file_frame *f = p->file;
	struct kiln_err ignored = KILN_ERR_INIT;

	p->file = f->up;
	kiln_buf_release(&f->text);
	(void)!macro_undefine(p->ctx, "__file_name", &ignored);
}

kiln_rc spec_read_open(struct spec_parse_priv *p, const char *name, const char *text, size_t len)
{
	kiln_buf_init(&p->lbuf, KILN_LIMIT_MACRO_EXPANSION);
	kiln_buf_init(&p->line, KILN_LIMIT_MACRO_EXPANSION);
	p->conds[0].reading = true;
	p->conds[0].taken = true;
	p->nconds = 1;
	return push_file(p, name, text, len, text == NULL);
}

kiln_rc spec_read_push(struct spec_parse_priv *p, const char *name, const char *text, size_t len)
{
	kiln_rc rc = push_file(p, name, text, len, false);

	if (!rc)
		p->lineno = 0;
	return rc;
}

void spec_read_close(struct spec_parse_priv *p)
{
	struct kiln_err ignored = KILN_ERR_INIT;

	while (p->file)
		pop_file(p);
	(void)!macro_undefine(p->ctx, "__file_lineno", &ignored);
	kiln_buf_release(&p->lbuf);
	kiln_buf_release(&p->line);
}

/* Append one physical line of the current file (with its newline) to lbuf. False at the
 * end of the file. */
static bool read_physical(struct spec_parse_priv *p)
{
	struct spec_file_frame *f = p->file;
	const char *s = f->text.ptr + f->pos;
	const char *end = f->text.ptr + f->text.len;
	const char *nl;
	size_t n;

	if (s >= end)
		return false;
	nl = memchr(s, '\n', (size_t)(end - s));
	n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
	kiln_buf_add(&p->lbuf, s, n);
	f->pos += n;
	f->lineno++;
	p->lineno = f->lineno;
	return true;
}

/* Does the logical line collected so far need another physical line? */
static bool needs_more(const struct kiln_buf *b)
{
	int bc = 0, pc = 0, xc = 0;
	bool nc = false;
	size_t i;

	for (i = 0; i < b->len; i++) {
		char c = b->ptr[i];
		char n = i + 1 < b->len ? b->ptr[i + 1] : '\0';

		switch (c) {
		case '\\':
			if (n == '\n')
				nc = true;
			if (n)
				i++;
			break;
		case '\n':
			nc = false;
			break;
		case '%':
			if (n == '{' || n == '(' || n == '[' || n == '%') {
				bc += n == '{';
				pc += n == '(';
				xc += n == '[';
				i++;
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
	}
	return bc || pc || xc || nc;
}

static kiln_rc set_lineno_macro(struct spec_parse_priv *p)
{
	char num[UTIL_INT_MAX_TEXT];
	struct kiln_err ignored = KILN_ERR_INIT;

	util_fmt_int(num, p->lineno);
	(void)!macro_undefine(p->ctx, "__file_lineno", &ignored);
	return macro_define(p->ctx, "__file_lineno", NULL, num, MACRO_LEVEL_SPEC, p->err);
}

/* Read and expand the next logical line into lbuf. 1 at the end of all input, -1 on
 * error. */
/* rpm warns when a comment line changed under expansion (other than %% becoming %):
 * the author likely meant the macro to stay inert. */
static void comment_check(struct spec_parse_priv *p, const struct kiln_buf *raw,
                          const struct kiln_buf *expanded)
{
	const char *a = raw->ptr, *b = expanded->ptr;
	const char *ae = a + raw->len, *be = b + expanded->len;

	while (a < ae && is_space(*a))
		a++;
	if (a >= ae || *a != '#')
		return;
	a = raw->ptr;
	while (a < ae && b < be) {
		if (a[0] == '%' && a + 1 < ae && a[1] == '%')
			a++;
		if (*a != *b)
			break;
		a++;
		b++;
	}
	/* rpm prints the line from its first '%'. */
	if (a < ae || b < be) {
		const char *pct = memchr(raw->ptr, '%', raw->len);
		size_t off = pct ? (size_t)(pct - raw->ptr) : 0;

		spec_warn(p, "Macro expanded in comment on line %d: %.*s", p->lineno,
		          (int)(raw->len - off), raw->ptr + off);
	}
}

static int read_logical(struct spec_parse_priv *p, unsigned strip)
{
	struct kiln_buf expanded = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	bool reading = p->conds[p->nconds - 1].reading;
	int first = 0; /* where the logical line starts */

	kiln_buf_reset(&p->lbuf);
	for (;;) {
		if (!p->lbuf.len)
			first = p->file->lineno + 1;
		if (!read_physical(p)) {
			if (p->lbuf.len) {
				p->lineno = first;
				spec_error(p, KILN_ESYNTAX,
				           "line %d: unclosed macro or bad line continuation",
				           p->lineno);
				return -1;
			}
			if (p->nconds > 1) {
				p->lineno = p->conds[p->nconds - 1].line;
				spec_error(p, KILN_ESYNTAX, "line %d: Unclosed %%if",
				           p->conds[p->nconds - 1].line);
				return -1;
			}
			if (!p->file->up)
				return 1;
			pop_file(p);
			p->lineno = p->file->lineno;
			continue;
		}
		if (!needs_more(&p->lbuf))
			break;
	}
	if (kiln_buf_finish(&p->lbuf, p->err))
		return -1;
	if (reading) {
		if (set_lineno_macro(p) ||
		    macro_expand(p->ctx, p->lbuf.ptr, p->lbuf.len, &expanded, p->err)) {
			kiln_buf_release(&expanded);
			relocate_error(p);
			return -1;
		}
		if (strip & SPEC_STRIP_COMMENTS)
			comment_check(p, &p->lbuf, &expanded);
		kiln_buf_reset(&p->lbuf);
		kiln_buf_add(&p->lbuf, expanded.ptr, expanded.len);
		kiln_buf_release(&expanded);
		if (kiln_buf_finish(&p->lbuf, p->err))
			return -1;
	}
	p->next = 0;
	/* A line that expands to nothing (%global ...) is still one, empty, line to rpm. */
	p->pending = true;
	p->lbuf_reading = reading;
	return 0;
}

/* Does the line s[0..n) start an %if or %elif (whose expression may span lines)? */
static bool is_conditional_expr(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_blank(s[i]))
		i++;
	s += i;
	n -= i;
	if (n >= 4 && !strncmp(s, "%if", 3) && is_blank(s[3]))
		return true;
	return n >= 6 && !strncmp(s, "%elif", 5) && is_blank(s[5]);
}

/* Take the next line of lbuf into p->line, stripped (rpm's copyNextLineFinish). Returns
 * whether a trailing-space strip happened (the parsed text then gets a newline back). */
static bool take_line(struct spec_parse_priv *p, unsigned strip)
{
	const char *s = p->lbuf.ptr + p->next;
	const char *end = p->lbuf.ptr + p->lbuf.len;
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
	size_t last = 0;
	size_t cut = n;
	size_t i;

	/* An %if or %elif expression continues over lines that end in a backslash. */
	if (is_conditional_expr(s, n)) {
		while (n >= 2 && s[n - 1] == '\n' && s[n - 2] == '\\' && s + n < end) {
			nl = memchr(s + n, '\n', (size_t)(end - s - n));
			n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
		}
		cut = n;
	}
	p->next += n;
	if (p->next >= p->lbuf.len)
		p->pending = false;
	for (i = 0; i < n; i++) {
		if (!is_space(s[i]))
			last = i + 1;
	}
	if (strip & SPEC_STRIP_COMMENTS) {
		for (i = 0; i < n && is_space(s[i]); i++)
			;
		if (i < n && s[i] == '#')
			cut = i;
	}
	if ((strip & SPEC_STRIP_TRAILINGSPACE) && last < cut)
		cut = last;
	kiln_buf_reset(&p->line);
	kiln_buf_add(&p->line, s, cut);
	p->line_nl = cut == n && n && s[n - 1] == '\n';
	return (strip & SPEC_STRIP_TRAILINGSPACE) != 0;
}

/* rpm's ISMACRO / ISMACROWITHARG on the current line. */
static bool is_macro(const char *s, const char *m)
{
	size_t n = strlen(m);

	return !strncmp(s, m, n) && !is_alpha(s[n]);
}

static bool is_macro_arg(const char *s, const char *m)
{
	size_t n = strlen(m);

	return !strncmp(s, m, n) && (is_blank(s[n]) || !s[n]);
}

/* Does any blank-separated word of s equal the expansion of token (case-insensitively)? */
static int arg_match(struct spec_parse_priv *p, const char *s, const char *token,
                     const char *directive)
{
	char *want = NULL;
	int match = 0;

	while (*s && !is_blank(*s))
		s++;
	while (*s && is_blank(*s))
		s++;
	/* Only the end of the line counts: in a script "%ifarch \n" has an argument (the
	 * newline), which matches nothing. */
	if (!*s) {
		spec_error(p, KILN_ESYNTAX, "%s:%d: Argument expected for %s", p->file->name,
		           p->lineno, directive);
		return -1;
	}
	if (macro_expand_str(p->ctx, token, &want, p->err))
		return -1;
	while (*s) {
		const char *b;

		while (*s && is_space(*s))
			s++;
		b = s;
		while (*s && !is_space(*s))
			s++;
		if (s == b)
			break;
		if ((size_t)(s - b) == strlen(want) && !strncasecmp(want, b, (size_t)(s - b))) {
			match = 1;
			break;
		}
	}
	free(want);
	return match;
}

/* Evaluate the expression text of directive kw ("%if" or "%elif"). */
static int eval_if(struct spec_parse_priv *p, const char *text, const char *kw)
{
	bool result = false;
	char *expr = kiln_strdup(text);
	char *c;
	int ret = -1;

	if (!expr) {
		kiln_err_set(p->err, KILN_ENOMEM, "out of memory");
		return -1;
	}
	/* Continuation lines: the backslash-newline is blank space to the expression. */
	for (c = expr; (c = strstr(c, "\\\n")); c += 2)
		c[0] = c[1] = ' ';
	if (macro_expr_bool(p->ctx, expr, strlen(expr), 0, &result, p->err)) {
		size_t n = strlen(expr);

		while (n && is_space(expr[n - 1]))
			n--;
		kiln_err_wrap(p->err, "bad %s condition: %.*s", kw, (int)n, expr);
		kiln_err_locate(p->err, p->file->name, p->lineno, 0);
	} else {
		ret = result;
	}
	free(expr);
	return ret;
}

static bool extra_tokens(const char *s, size_t kwlen)
{
	s += kwlen;
	while (*s && is_space(*s))
		s++;
	return *s != '\0';
}

static kiln_rc cond_push(struct spec_parse_priv *p, bool match)
{
	struct spec_cond *top = &p->conds[p->nconds - 1];

	if (p->nconds >= KILN_LIMIT_IF_DEPTH)
		return spec_error(p, KILN_ELIMIT, "line %d: %%if nested more than %d levels",
		                  p->lineno, KILN_LIMIT_IF_DEPTH);
	p->conds[p->nconds].reading = top->reading && match;
	p->conds[p->nconds].taken = match;
	p->conds[p->nconds].seen_else = false;
	p->conds[p->nconds].line = p->lineno;
	p->nconds++;
	return KILN_OK;
}

/* %elif, %elifarch, %elifos. */
static kiln_rc cond_elif(struct spec_parse_priv *p, const char *s, const char *kw)
{
	struct spec_cond *top = &p->conds[p->nconds - 1];
	bool parent = p->nconds > 1 && p->conds[p->nconds - 2].reading;
	char *expanded = NULL;
	int match = 0;

	if (p->nconds == 1)
		return spec_error(p, KILN_ESYNTAX, "%s: line %d: %s with no %%if", p->file->name,
		                  p->lineno, kw);
	if (top->seen_else)
		return spec_error(p, KILN_ESYNTAX, "%s: line %d: %s after %%else", p->file->name,
		                  p->lineno, kw);
	if (parent && !top->taken) {
		/* The branch before was not read, so neither was this line expanded. */
		if (!p->lbuf_reading) {
			if (macro_expand_str(p->ctx, s, &expanded, p->err))
				return p->err->code;
			s = expanded;
		}
		if (!strcmp(kw, "%elifarch"))
			match = arg_match(p, s, "%{_target_cpu}", kw);
		else if (!strcmp(kw, "%elifos"))
			match = arg_match(p, s, "%{_target_os}", kw);
		else
			match = eval_if(p, s + 5, kw);
		free(expanded);
		if (match < 0)
			return p->err->code ? p->err->code : KILN_ESYNTAX;
	}
	top->reading = parent && !top->taken && match;
	top->taken = top->taken || match;
	return KILN_OK;
}

static kiln_rc do_include(struct spec_parse_priv *p, const char *s)
{
	if (p->flags & SPEC_PARSE_NO_FILES)
		return spec_error(p, KILN_EPRIV, "line %d: %%include is not allowed here: %s",
		                  p->lineno, s);
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *b = s + 8;
	const char *e;
	kiln_rc rc;

	while (*b && is_space(*b))
		b++;
	/* The name runs to the last non-blank: rpm opens "a b" for "%include a b". */
	e = b + strlen(b);
	while (e > b && is_space(e[-1]))
		e--;
	if (e == b)
		return spec_error(p, KILN_ESYNTAX, "line %d: malformed %%include statement",
		                  p->lineno);
	kiln_buf_add(&path, b, (size_t)(e - b));
	/* rpm resolves against the current directory; a path that is not there is tried
	 * beside the including file, which is what spec authors mean. */
	if (path.ptr[0] != '/' && !util_exists(path.ptr) && strchr(p->file->name, '/')) {
		struct kiln_buf alt = KILN_BUF_INIT(KILN_LIMIT_PATH);

		util_path_dirname(p->file->name, &alt);
		kiln_buf_addf(&alt, "/%.*s", (int)(e - b), b);
		if (!alt.err && util_exists(alt.ptr)) {
			kiln_buf_reset(&path);
			kiln_buf_add(&path, alt.ptr, alt.len);
		}
		kiln_buf_release(&alt);
	}
	rc = kiln_buf_finish(&path, p->err);
	if (!rc)
		rc = push_file(p, path.ptr, NULL, 0, true);
	kiln_buf_release(&path);
	return rc;
}

/* Negate a match result, keeping an error (-1) as it is. */
static int negate(int match)
{
	return match < 0 ? match : !match;
}

/* Handle a conditional or %include line: 1 for a conditional, 2 for %include (the line
 * is then consumed), 0 when it is an ordinary line, -1 on error. */
static int directive(struct spec_parse_priv *p)
{
	const char *s = p->line.ptr;
	bool reading = p->conds[p->nconds - 1].reading;
	int match = -1;
	kiln_rc rc = KILN_OK;

	while (*s && is_space(*s))
		s++;
	if (*s != '%')
		return 0;
	if (!reading && is_macro_arg(s, "%if"))
		match = 0;
	else if (is_macro_arg(s, "%ifarch"))
		match = arg_match(p, s, "%{_target_cpu}", "%ifarch");
	else if (is_macro_arg(s, "%ifnarch"))
		match = negate(arg_match(p, s, "%{_target_cpu}", "%ifnarch"));
	else if (is_macro_arg(s, "%ifos"))
		match = arg_match(p, s, "%{_target_os}", "%ifos");
	else if (is_macro_arg(s, "%ifnos"))
		match = negate(arg_match(p, s, "%{_target_os}", "%ifnos"));
	else if (is_macro_arg(s, "%if"))
		match = eval_if(p, s + 3, "%if");
	else if (is_macro_arg(s, "%elifarch"))
		rc = cond_elif(p, s, "%elifarch");
	else if (is_macro_arg(s, "%elifos"))
		rc = cond_elif(p, s, "%elifos");
	else if (is_macro_arg(s, "%elif"))
		rc = cond_elif(p, s, "%elif");
	else if (is_macro(s, "%else")) {
		struct spec_cond *top = &p->conds[p->nconds - 1];

		if (extra_tokens(s, 5))
			spec_warn(p, "extra tokens at the end of %%else directive in line %d:  %s",
			          p->lineno, s);
		if (p->nconds == 1)
			return spec_error(p, KILN_ESYNTAX, "%s: line %d: %%else with no %%if",
			                  p->file->name, p->lineno),
			       -1;
		if (top->seen_else)
			return spec_error(p, KILN_ESYNTAX, "%s: line %d: %%else after %%else",
			                  p->file->name, p->lineno),
			       -1;
		top->seen_else = true;
		top->reading = p->conds[p->nconds - 2].reading && !top->taken;
		top->taken = true;
		return 1;
	} else if (is_macro(s, "%endif")) {
		if (extra_tokens(s, 6))
			spec_warn(p, "extra tokens at the end of %%endif directive in line %d:  %s",
			          p->lineno, s);
		if (p->nconds == 1)
			return spec_error(p, KILN_ESYNTAX, "%s: line %d: %%endif with no %%if",
			                  p->file->name, p->lineno),
			       -1;
		p->nconds--;
		return 1;
	} else if (reading && is_macro_arg(s, "%include")) {
		rc = do_include(p, s);
		return rc ? -1 : 2;
	} else {
		return 0;
	}
	if (rc || (match < 0 && p->err->code))
		return -1;
	if (match >= 0 && cond_push(p, match))
		return -1;
	return 1;
}

static void add_parsed_line(struct spec_parse_priv *p, bool stripped_trailing)
{
	spec_parsed_add(p, p->line.ptr, p->line.len);
	if (stripped_trailing)
		spec_parsed_add(p, "\n", 1);
}

int spec_read_line(struct spec_parse_priv *p, unsigned strip)
{
	for (;;) {
		bool stripped;
		int d;

		if (!p->pending) {
			int r = read_logical(p, strip);

			if (r)
				return r;
			if (!p->pending)
				continue;
		}
		stripped = take_line(p, strip);
		/* A line of an expansion made in a branch not read any more (a %else or
		 * %endif earlier in the same expansion) is still ordinary text to rpm. */
		if (kiln_buf_finish(&p->line, p->err))
			return -1;
		d = directive(p);
		if (d < 0)
			return -1;
		/* rpm prints nothing at all for an %include line and reads on. */
		if (d == 2)
			continue;
		/* A conditional or a line of a branch not taken reaches the section as an
		 * empty line: in a %description that is a blank line of the text. */
		if (d > 0 || !p->conds[p->nconds - 1].reading) {
			kiln_buf_reset(&p->line);
			p->line_nl = false;
			if (kiln_buf_finish(&p->line, p->err))
				return -1;
		}
		add_parsed_line(p, stripped);
		return 0;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Section headers. */

struct part_rec {
	const char *token;
	enum spec_part part;
	int script; /* enum spec_script_kind for scriptlets, -1 otherwise */
};

static const struct part_rec parts[] = {
    {"%package", SPEC_PART_PREAMBLE, -1},
    {"%prep", SPEC_PART_PREP, -1},
    {"%generate_buildrequires", SPEC_PART_BUILDREQUIRES, -1},
    {"%conf", SPEC_PART_CONF, -1},
    {"%build", SPEC_PART_BUILD, -1},
    {"%install", SPEC_PART_INSTALL, -1},
    {"%check", SPEC_PART_CHECK, -1},
    {"%clean", SPEC_PART_CLEAN, -1},
    {"%preuntrans", SPEC_PART_SCRIPT, SPEC_SCRIPT_PREUNTRANS},
    {"%postuntrans", SPEC_PART_SCRIPT, SPEC_SCRIPT_POSTUNTRANS},
    {"%preun", SPEC_PART_SCRIPT, SPEC_SCRIPT_PREUN},
    {"%postun", SPEC_PART_SCRIPT, SPEC_SCRIPT_POSTUN},
    {"%pretrans", SPEC_PART_SCRIPT, SPEC_SCRIPT_PRETRANS},
    {"%posttrans", SPEC_PART_SCRIPT, SPEC_SCRIPT_POSTTRANS},
    {"%pre", SPEC_PART_SCRIPT, SPEC_SCRIPT_PRE},
    {"%post", SPEC_PART_SCRIPT, SPEC_SCRIPT_POST},
    {"%files", SPEC_PART_FILES, -1},
    {"%changelog", SPEC_PART_CHANGELOG, -1},
    {"%description", SPEC_PART_DESCRIPTION, -1},
    {"%triggerpostun", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRIGGERPOSTUN},
    {"%triggerprein", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRIGGERPREIN},
    {"%triggerun", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRIGGERUN},
    {"%triggerin", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRIGGERIN},
    {"%trigger", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRIGGERIN},
    {"%verifyscript", SPEC_PART_SCRIPT, SPEC_SCRIPT_VERIFY},
    {"%sepolicy", SPEC_PART_POLICIES, -1},
    {"%filetriggerin", SPEC_PART_SCRIPT, SPEC_SCRIPT_FILETRIGGERIN},
    {"%filetrigger", SPEC_PART_SCRIPT, SPEC_SCRIPT_FILETRIGGERIN},
    {"%filetriggerun", SPEC_PART_SCRIPT, SPEC_SCRIPT_FILETRIGGERUN},
    {"%filetriggerpostun", SPEC_PART_SCRIPT, SPEC_SCRIPT_FILETRIGGERPOSTUN},
    {"%transfiletriggerin", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRANSFILETRIGGERIN},
    {"%transfiletrigger", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRANSFILETRIGGERIN},
    {"%transfiletriggerun", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRANSFILETRIGGERUN},
    {"%transfiletriggerpostun", SPEC_PART_SCRIPT, SPEC_SCRIPT_TRANSFILETRIGGERPOSTUN},
    {"%end", SPEC_PART_END, -1},
    {"%patchlist", SPEC_PART_PATCHLIST, -1},
    {"%sourcelist", SPEC_PART_SOURCELIST, -1},
};

enum spec_part spec_is_part(struct spec_parse_priv *p, const char *line)
{
	size_t i;

	/* Every part starts with '%'; most lines are not one (this runs on each line). */
	if (line[0] != '%')
		return SPEC_PART_NONE;
	for (i = 0; i < KILN_ARRAY_SIZE(parts); i++) {
		size_t n = strlen(parts[i].token);

		if (strncasecmp(line, parts[i].token, n))
			continue;
		if (line[n] && !is_space(line[n]))
			continue;
		if (parts[i].script >= 0 && p)
			p->script_kind = (enum spec_script_kind)parts[i].script;
		return parts[i].part;
	}
	return SPEC_PART_NONE;
}
