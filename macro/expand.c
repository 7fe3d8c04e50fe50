/*
 * expand.c - the expander: %name, %{...}, %(...), %[...], conditionals, parametric calls.
 *
 * The control flow follows rpm's expandMacro() closely because byte-for-byte equal output
 * depends on its corner cases: unknown macros are left as they are (and the text after the
 * '%' is then scanned again, so macros inside an unknown %{...} still expand), an unbraced
 * "%name args" call takes the rest of the line, flags %{-f} print nothing when unset, and
 * %{?name} on a parametric macro expands its body without setting up arguments.
 */
#include "util/util.h"

#include "macro/macro_int.h"

/* Position of the bracket matching the one at s[0] (same kind, nesting counted, backslash
 * escapes skipped), or NULL. */
static const char *match_close(const char *s, const char *end, char open, char close)
{
	/* the bytes the loop must look at; the rest are skipped one table load each */
	static const bool bracket[256] = {['\\'] = true, ['('] = true, [')'] = true, ['{'] = true,
	                                  ['}'] = true,  ['['] = true, [']'] = true};
	int depth = 0;

	for (; s < end; s++) {
		while (!bracket[(unsigned char)*s] && ++s < end)
			;
		if (s == end)
			break;
		if (*s == '\\') {
			if (++s >= end)
				break;
			continue;
		}
		if (*s == close) {
			if (--depth <= 0)
				return s;
		} else if (*s == open) {
			depth++;
		}
	}
	return NULL;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* s follows a '%'. The end of the macro (past its closing bracket or name), or NULL when a
 * bracket is not closed. */
static const char *macro_end(const char *s, const char *end)
{
	const char *close;

	if (*s == '(' || *s == '{' || *s == '[') {
		close = match_close(s, end, *s, *s == '(' ? ')' : *s == '{' ? '}' : ']');
		return close ? close + 1 : NULL;
	}
	while (s < end && (*s == '?' || *s == '!'))
		s++;
	if (s < end && *s == '-')
		s++;
	while (s < end && is_name_char(*s))
		s++;
	if (s + 1 < end && s[0] == '*' && s[1] == '*')
		s += 2;
	else if (s < end && (*s == '*' || *s == '#'))
		s++;
	return s;
}

void macro_diag(struct macro_ctx *ctx, enum kiln_log_level level, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	if (ctx->diag)
		ctx->diag(ctx->diag_data, level, msg);
	else
		kiln_log(level, "%s", msg);
}

/* rpm prefixes messages with "%{__file_name}: line %{__file_lineno}: " when those are
 * defined. */
static void location_prefix(struct macro_ctx *ctx, char *dst, size_t size)
{
	const char *file = macro_body_get(ctx, "__file_name");
	const char *line = macro_body_get(ctx, "__file_lineno");
	int n = 0;

	dst[0] = '\0';
	if (file)
		n = snprintf(dst, size, "%s: ", file);
	if (line && n >= 0 && (size_t)n < size)
		snprintf(dst + n, size - (size_t)n, "line %s: ", line);
}

void macro_mb_error(struct mbuf *mb, kiln_rc rc, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	char pfx[KILN_ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	location_prefix(mb->ctx, pfx, sizeof(pfx));
	if (!mb->error)
		kiln_err_set(mb->err, rc, "%s%s", pfx, msg);
	mb->error = true;
}

void macro_mb_warn(struct mbuf *mb, const char *fmt, ...)
{
	char msg[KILN_ERR_MSG_MAX];
	char pfx[KILN_ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	location_prefix(mb->ctx, pfx, sizeof(pfx));
	macro_diag(mb->ctx, KILN_LOG_WARN, "%s%s", pfx, msg);
}

bool macro_mb_expand_quoted(struct mbuf *mb, const char *src, size_t len, struct kiln_buf *dst,
                            bool keep, bool *have)
{
	struct kiln_buf *saved = mb->out;
	bool saved_keep = mb->keep_quoted;
	bool saved_have = mb->have_quoted;

	mb->out = dst;
	mb->keep_quoted = keep;
	mb->have_quoted = false;
	macro_mb_expand(mb, src, len);
	if (have)
		*have = mb->have_quoted;
	mb->out = saved;
	mb->keep_quoted = saved_keep;
	mb->have_quoted = saved_have;
	if (dst->err && !mb->error)
		macro_mb_error(mb, dst->err, "macro expansion too large");
	return !mb->error;
}

/* rpm's expandThis() without flags: no caller would strip the marks, so none are made. */
bool macro_mb_expand_to(struct mbuf *mb, const char *src, size_t len, struct kiln_buf *dst)
{
	return macro_mb_expand_quoted(mb, src, len, dst, false, NULL);
}

void macro_unquote(struct kiln_buf *out, size_t from)
{
	size_t r, w;

	for (r = w = from; r < out->len; r++) {
		if (out->ptr[r] != MACRO_QUOTE_MARK)
			out->ptr[w++] = out->ptr[r];
	}
	if (w < out->len)
		kiln_buf_truncate(out, w);
}

/* ---------------------------------------------------------------------------------------- */
/* The expansion trace (%trace, rpm --trace): rpm's printMacro and printExpansion, on stderr
 * in their format, so a trace can be compared with rpm's line for line. */

static bool is_eol(char c)
{
	return c == '\n' || c == '\r';
}

/* "  D>   %MACRO^REST": the macro about to expand (s..se, from its '{', '(' or name) and
 * the rest of its line. rpm prints that rest from the second character after the macro,
 * dropping the first (rpmio/macro.c printMacro, the same in 4.18 and 4.20); kiln does too,
 * for equal traces. */
static void trace_macro(const struct mbuf *mb, const char *s, const char *se, const char *end)
{
	int depth = mb->ctx->depth - mb->depth0;
	const char *senl = se;

	while (senl < end && !is_eol(*senl))
		senl++;
	fprintf(stderr, "%3d>%*s%%%.*s^", depth, 2 * depth + 1, "", (int)(se - s), s);
	if (se + 1 < end && senl > se + 1)
		fprintf(stderr, "%.*s", (int)(senl - se - 1), se + 1);
	fputc('\n', stderr);
}

/* "  D<    (%NAME)" and the text one level made since from (its whole result at the
 * outermost level, else what the last macro made and the text after it, last line only):
 * rpm's printExpansion, NAME being the macro the level looked up last ("" when unknown). */
static void trace_expansion(const struct mbuf *mb, const char *name, size_t from)
{
	int depth = mb->ctx->depth - mb->depth0;
	const char *t, *te, *nl;

	fprintf(stderr, "%3d<%*s (%%%s)\n", depth, 2 * depth + 1, "", name ? name : "");
	if (mb->out->len <= from)
		return;
	t = mb->out->ptr + from;
	te = mb->out->ptr + mb->out->len;
	while (te > t && is_eol(te[-1]))
		te--;
	while (depth > 0 && te > t && (nl = memchr(t, '\n', (size_t)(te - t))))
		t = nl + 1;
	if (te > t)
		fwrite(t, 1, (size_t)(te - t), stderr);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------------------------------- */
/* Arguments. */

/* An argv is one block: a header, the pointers (NULL-terminated), then the strings side by
 * side. A call's arguments were a malloc and a free each (a tenth of bench/macro's
 * parametric calls); the block is copied whole when it grows, pointers rebased. */
struct argv_block {
	size_t nptr;  /* room for pointers, the NULL included */
	size_t used;  /* string bytes in use */
	size_t room;  /* string bytes the block has */
	char *ptrs[]; /* then the strings */
};

static struct argv_block *argv_block_of(char **argv)
{
	return (struct argv_block *)((char *)argv - offsetof(struct argv_block, ptrs));
}

void macro_argv_free(char **argv, int argc)
{
	(void)argc;
	if (argv)
		free(argv_block_of(argv));
}

/* Room for n, rounded up to a power of two from min so appends stay linear. */
static size_t argv_round(size_t n, size_t min)
{
	size_t c = min;

	while (c < n)
		c *= 2;
	return c;
}

/* A block with room for nptr pointers and room string bytes, holding old's argc strings. */
static struct argv_block *argv_block_grow(const struct argv_block *old, size_t argc, size_t nptr,
                                          size_t room)
{
	struct argv_block *b;
	char *strs;
	size_t i;

	b = kiln_malloc(sizeof(*b) + nptr * sizeof(char *) + room);
	if (!b)
		return NULL;
	b->nptr = nptr;
	b->room = room;
	b->used = old ? old->used : 0;
	strs = (char *)(b->ptrs + nptr);
	if (old) {
		const char *ostrs = (const char *)(old->ptrs + old->nptr);

		if (old->used)
			memcpy(strs, ostrs, old->used);
		for (i = 0; i < argc; i++)
			b->ptrs[i] = strs + (old->ptrs[i] - ostrs);
	}
	return b;
}

kiln_rc macro_argv_add(char ***argv, int *argc, const char *s, size_t len, struct kiln_err *err)
{
	size_t n = (size_t)*argc;
	struct argv_block *b = *argv ? argv_block_of(*argv) : NULL;
	char *dst;

	if (n >= KILN_LIMIT_MACRO_ARGS)
		return kiln_err_set(err, KILN_ELIMIT, "too many macro arguments (limit %d)",
		                    KILN_LIMIT_MACRO_ARGS);
	if (len >= SIZE_MAX / 4)
		return kiln_err_set(err, KILN_ELIMIT, "macro argument too long");
	/* n + 1 args and the NULL */
	if (!b || n + 2 > b->nptr || len + 1 > b->room - b->used) {
		size_t used = b ? b->used : 0;
		struct argv_block *nb = argv_block_grow(b, n, argv_round(n + 2, b ? b->nptr : 8),
		                                        argv_round(used + len + 1, 256));

		if (!nb)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		free(b);
		b = nb;
		*argv = b->ptrs;
	}
	dst = (char *)(b->ptrs + b->nptr) + b->used;
	if (len)
		memcpy(dst, s, len);
	dst[len] = '\0';
	b->used += len + 1;
	b->ptrs[n] = dst;
	b->ptrs[n + 1] = NULL;
	*argc = (int)n + 1;
	return KILN_OK;
}

kiln_rc macro_split_args(const char *s, size_t len, char ***argv, int *argc, struct kiln_err *err)
{
	struct kiln_buf word = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	bool quoted = false;
	bool have = false;
	kiln_rc rc = KILN_OK;
	size_t run = 0; /* start of the word's text not yet copied */
	size_t i;

	/* A quoted word is kept even when empty; unquoted runs of blanks separate words. */
	for (i = 0; i <= len && !rc; i++) {
		char c = i < len ? s[i] : ' ';

		if (c == MACRO_QUOTE_MARK) {
			kiln_buf_add(&word, s + run, i - run);
			run = i + 1;
			quoted = !quoted;
			have = true;
			continue;
		}
		if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || i == len)) {
			kiln_buf_add(&word, s + run, i - run);
			run = i + 1;
			if (have || word.len)
				rc = macro_argv_add(argv, argc, word.ptr, word.len, err);
			kiln_buf_reset(&word);
			have = false;
		}
	}
	if (!rc)
		rc = kiln_buf_finish(&word, err);
	kiln_buf_release(&word);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Parametric calls: getopt(3) the way glibc does it (options may follow operands, "--" ends
 * them), then the automatic macros. */

struct call_opts {
	struct mbuf *mb;
	const char *name;
	const char *opts;
};

static bool push_auto_flags(struct mbuf *mb, const char *name, const char *body, unsigned flags)
{
	struct macro_ctx *ctx = mb->ctx;

	if (macro_push(ctx, name, strlen(name), NULL, body, strlen(body), ctx->level,
	               MACRO_DEF_AUTO | MACRO_DEF_LITERAL | flags, mb->err)) {
		mb->error = true;
		return false;
	}
	return true;
}

static bool push_auto(struct mbuf *mb, const char *name, const char *body)
{
	return push_auto_flags(mb, name, body, 0);
}

static bool push_option(struct mbuf *mb, char c, const char *arg)
{
	char name[4] = {'-', c, '\0', '\0'};
	size_t alen = arg ? strlen(arg) : 0;
	char small[64];
	char *body = small;
	bool ok;

	/* "-c" or "-c ARG", built without printf and, when short, on the stack: a parametric
	 * call pushes one per option. Past the expansion limit it fails as a kiln_buf would. */
	if (alen + 3 > mb->ctx->max_expansion)
		return false;
	if (alen + 4 > sizeof(small) && !(body = kiln_malloc(alen + 4)))
		return false;
	body[0] = '-';
	body[1] = c;
	body[2] = '\0';
	if (arg) {
		body[2] = ' ';
		memcpy(body + 3, arg, alen + 1);
	}
	ok = push_auto(mb, name, body);
	if (ok && arg) {
		name[2] = '*';
		ok = push_auto(mb, name, arg);
	}
	if (body != small)
		free(body);
	return ok;
}

/* Parse one "-xyz" cluster at argv[*i]; returns false on error. */
static bool getopt_cluster(struct call_opts *co, int argc, char **argv, int *i)
{
	const char *p = argv[*i] + 1;

	for (; *p; p++) {
		const char *spec = *p != ':' ? strchr(co->opts, *p) : NULL;
		const char *arg = NULL;

		if (!spec) {
			macro_diag(co->mb->ctx, KILN_LOG_WARN, "%s: invalid option -- '%c'",
			           co->name, *p);
			macro_mb_error(co->mb, KILN_ESYNTAX, "Unknown option %c in %s(%s)", *p,
			               co->name, co->opts);
			return false;
		}
		if (spec[1] == ':') {
			if (p[1])
				arg = p + 1;
			else if (*i + 1 < argc)
				arg = argv[++*i];
			else {
				macro_diag(co->mb->ctx, KILN_LOG_WARN,
				           "%s: option requires an argument -- '%c'", co->name, *p);
				macro_mb_error(co->mb, KILN_ESYNTAX, "Unknown option %c in %s(%s)",
				               *p, co->name, co->opts);
				return false;
			}
			return push_option(co->mb, *p, arg);
		}
		if (!push_option(co->mb, *p, NULL))
			return false;
	}
	return true;
}

static void join_args(struct kiln_buf *b, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (i)
			kiln_buf_addch(b, ' ');
		kiln_buf_addstr(b, argv[i]);
	}
}

/* rpm's unsplitQuoted(): each argument between marks, blanks between them. */
static void quote_args(struct kiln_buf *b, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (i)
			kiln_buf_addch(b, ' ');
		kiln_buf_addch(b, MACRO_QUOTE_MARK);
		kiln_buf_addstr(b, argv[i]);
		kiln_buf_addch(b, MACRO_QUOTE_MARK);
	}
}

/* Define %0 %** %-x %-x* %# %1.. %* for a call of name with argv[1..argc). */
static bool setup_args(struct mbuf *mb, const char *name, const char *opts, int argc, char **argv)
{
	struct kiln_buf b = KILN_BUF_INIT(mb->ctx->max_expansion);
	struct call_opts co = {mb, name, opts};
	char **operands = NULL;
	int noperands = 0;
	bool ok = false;
	char num[32];
	int i;

	operands = kiln_calloc((size_t)argc + 1, sizeof(*operands));
	if (!operands) {
		macro_mb_error(mb, KILN_ENOMEM, "out of memory");
		return false;
	}
	if (!push_auto(mb, "0", name))
		goto out;
	/* rpm 4.20 keeps each argument's bounds in %** (marks that argument splitting honours
	 * and any other use removes). */
	quote_args(&b, argc - 1, argv + 1);
	if (b.err || !push_auto_flags(mb, "**", b.ptr, MACRO_DEF_QUOTED))
		goto out;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(opts, "-") && !strcmp(a, "--")) {
			while (++i < argc)
				operands[noperands++] = argv[i];
			break;
		}
		if (strcmp(opts, "-") && a[0] == '-' && a[1]) {
			if (!getopt_cluster(&co, argc, argv, &i))
				goto out;
			continue;
		}
		operands[noperands++] = argv[i];
	}
	util_fmt_int(num, noperands);
	if (!push_auto(mb, "#", num))
		goto out;
	for (i = 0; i < noperands; i++) {
		util_fmt_int(num, i + 1);
		if (!push_auto(mb, num, operands[i]))
			goto out;
	}
	kiln_buf_reset(&b);
	join_args(&b, noperands, operands);
	ok = !b.err && push_auto(mb, "*", b.ptr);
out:
	kiln_buf_release(&b);
	free(operands);
	return ok;
}

/* A body holding quote marks keeps them only for argument splitting (rpm's doMacro). */
static void expand_def_body(struct mbuf *mb, const struct macro_def *d)
{
	size_t start = mb->out->len;

	if (d->flags & MACRO_DEF_LITERAL)
		kiln_buf_add(mb->out, d->body, d->body_len);
	else if (d->body_len)
		macro_mb_expand(mb, d->body, d->body_len);
	if (!(d->flags & MACRO_DEF_QUOTED))
		return;
	if (mb->keep_quoted)
		mb->have_quoted = true;
	else
		macro_unquote(mb->out, start);
}

static void call_parametric(struct mbuf *mb, struct macro_slot *slot, struct macro_def *d, int argc,
                            char **argv)
{
	struct macro_ctx *ctx = mb->ctx;
	struct mbuf saved = *mb;
	size_t mark = ctx->nscope;

	ctx->level++;
	mb->call_name = slot->name;
	mb->call_opts = d->opts;
	mb->call_argc = argc;
	mb->call_argv = argv;
	if (setup_args(mb, slot->name, d->opts, argc, argv))
		expand_def_body(mb, d);
	mb->call_name = saved.call_name;
	mb->call_opts = saved.call_opts;
	mb->call_argc = saved.call_argc;
	mb->call_argv = saved.call_argv;
	macro_scope_unwind(mb, mark, ctx->level);
	ctx->level--;
}

static void expand_plain(struct mbuf *mb, struct macro_slot *slot, struct macro_def *d)
{
	const char *name = mb->call_name;
	const char *opts = mb->call_opts;

	mb->call_name = slot->name;
	mb->call_opts = NULL;
	expand_def_body(mb, d);
	mb->call_name = name;
	mb->call_opts = opts;
}

static void call_builtin(struct mbuf *mb, const struct macro_builtin *bi, int argc, char **argv)
{
	if (bi->args == MACRO_BI_NONE && argc > 1) {
		macro_mb_error(mb, KILN_ESYNTAX, "%%%s: unexpected argument", bi->name);
		return;
	}
	if ((bi->args == MACRO_BI_ONE || bi->args == MACRO_BI_MANY) && argc < 2) {
		macro_mb_error(mb, KILN_ESYNTAX, "%%%s: argument expected", bi->name);
		return;
	}
	bi->fn(mb, bi, argc, argv);
}

void macro_call_with_args(struct mbuf *mb, struct macro_slot *slot, int argc, char **argv)
{
	struct macro_def *d;

	if (slot->builtin && slot->builtin->fn) {
		call_builtin(mb, slot->builtin, argc, argv);
		return;
	}
	if (slot->builtin) {
		/* parse-kind built-ins take their one argument as raw text */
		if (argc > 1)
			slot->builtin->parse(mb, slot->builtin, argv[1], strlen(argv[1]), true);
		else
			slot->builtin->parse(mb, slot->builtin, NULL, 0, true);
		return;
	}
	d = macro_lookup(mb->ctx, slot);
	if (!d)
		return;
	if (d->opts)
		call_parametric(mb, slot, d, argc, argv);
	else
		expand_plain(mb, slot, d);
}

/* One level deeper (the caller leaves with ctx->depth--), or rpm's error past the limit. */
static bool depth_enter(struct mbuf *mb)
{
	if (++mb->ctx->depth <= KILN_LIMIT_MACRO_DEPTH)
		return true;
	macro_mb_error(mb, KILN_ELIMIT,
	               "Too many levels of recursion in macro expansion. It is likely "
	               "caused by recursive macro declaration.");
	mb->ctx->depth--;
	return false;
}

void macro_call_traced(struct mbuf *mb, struct macro_slot *slot, int argc, char **argv)
{
	struct macro_ctx *ctx = mb->ctx;
	size_t from = mb->out->len;
	bool trace = mb->trace;
	int i, depth;

	if (!depth_enter(mb))
		return;
	depth = ctx->depth - mb->depth0;
	if (mb->trace) {
		fprintf(stderr, "%3d>%*s (%%%s)", depth, 2 * depth + 1, "", slot->name);
		for (i = 1; i < argc; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	macro_call_with_args(mb, slot, argc, argv);
	ctx->depth--;
	if (mb->trace || (mb->error && ctx->verbose))
		trace_expansion(mb, slot->name, from);
	mb->trace = trace;
}

/* A built-in used without arguments (%{?name} on a built-in calls it this way). */
static void call_builtin_bare(struct mbuf *mb, const struct macro_builtin *bi)
{
	char *argv[2] = {(char *)bi->name, NULL};

	if (bi->parse)
		bi->parse(mb, bi, NULL, 0, true);
	else
		call_builtin(mb, bi, 1, argv);
}

/* ---------------------------------------------------------------------------------------- */
/* One macro. */

/* What the text after one '%' says. */
struct mref {
	const char *start; /* after the '%' */
	const char *se;    /* past the whole macro */
	const char *f;     /* name */
	size_t fn;
	const char *g; /* text after ':' in %{name:text}, or NULL */
	size_t gn;
	const char *args; /* "%name args" / "%{name args}": the argument text, or NULL */
	size_t argsn;
	const char *cont; /* where scanning continues after an unbraced call with args */
	bool braced;
	bool negate;
	bool chkexist;
};

static void parse_flags(struct mref *r, const char **p, const char *end)
{
	while (*p < end && (**p == '!' || **p == '?')) {
		if (**p == '!')
			r->negate = !r->negate;
		else
			r->chkexist = true;
		(*p)++;
	}
}

static void parse_braced(struct mref *r)
{
	const char *close = r->se - 1;
	const char *f = r->start + 1;
	static const bool name_end[256] = {[' '] = true, [':'] = true, ['}'] = true};
	const char *fe;

	r->braced = true;
	parse_flags(r, &f, close);
	for (fe = f; fe < close && !name_end[(unsigned char)*fe]; fe++)
		;
	r->f = f;
	r->fn = (size_t)(fe - f);
	if (fe < close && *fe == ':') {
		r->g = fe + 1;
		r->gn = (size_t)(close - fe - 1);
	} else if (fe < close && *fe == ' ') {
		r->args = fe;
		r->argsn = (size_t)(close - fe);
	}
}

static void parse_unbraced(struct mref *r, const char *end)
{
	const char *f = r->start;
	const char *fe = r->se;
	const char *nl;

	parse_flags(r, &f, fe);
	r->f = f;
	r->fn = (size_t)(fe - f);
	if (fe < end && is_blank(*fe)) {
		nl = memchr(fe, '\n', (size_t)(end - fe));
		if (!nl)
			nl = end;
		r->args = fe;
		r->argsn = (size_t)(nl - fe);
		/* The newline ending the arguments stays in the output, unless it is escaped. */
		r->cont = (nl == end || nl[-1] != '\\') ? nl : nl + 1;
	}
}

/* %{-f}, %{-f*}, %{-f:text}, %{!-f:text}: options of the current call. */
static void expand_flag(struct mbuf *mb, const struct mref *r, struct macro_def *d)
{
	if ((!d && !r->negate) || (d && r->negate))
		return;
	if (r->g && r->gn)
		macro_mb_expand(mb, r->g, r->gn);
	else if (d && d->body_len)
		expand_def_body(mb, d);
}

/* Collect the argument vector of a call: %{name:text} gives one argument, the rest of the
 * line or of the braces is expanded and split on blanks. */
static bool collect_args(struct mbuf *mb, const struct mref *r, const char *name, char ***argv,
                         int *argc)
{
	struct kiln_buf tmp = KILN_BUF_INIT(mb->ctx->max_expansion);
	kiln_rc rc = KILN_OK;

	*argv = NULL;
	*argc = 0;
	rc = macro_argv_add(argv, argc, name, strlen(name), mb->err);
	if (!rc && (r->g || r->args)) {
		const char *src = r->g ? r->g : r->args;
		size_t n = r->g ? r->gn : r->argsn;

		/* Words to split keep their quote marks; %{name:text} expands as its caller. */
		if (!macro_mb_expand_quoted(mb, src, n, &tmp, r->g ? mb->keep_quoted : true, NULL))
			goto out;
		if (r->g)
			rc = macro_argv_add(argv, argc, tmp.ptr, tmp.len, mb->err);
		else
			rc = macro_split_args(tmp.ptr, tmp.len, argv, argc, mb->err);
	}
out:
	if (rc)
		mb->error = true;
	kiln_buf_release(&tmp);
	return !mb->error;
}

static const char *expand_builtin(struct mbuf *mb, const struct mref *r,
                                  const struct macro_builtin *bi, const char *end)
{
	char **argv = NULL;
	int argc = 0;

	if (bi->parse) {
		if (r->g)
			bi->parse(mb, bi, r->g, r->gn, true);
		else if (r->braced && r->args)
			bi->parse(mb, bi, r->args, r->argsn, true);
		else if (r->braced || r->se == end)
			bi->parse(mb, bi, NULL, 0, r->braced);
		else
			return r->se + bi->parse(mb, bi, r->se, (size_t)(end - r->se), false);
		return r->se;
	}
	if (collect_args(mb, r, bi->name, &argv, &argc))
		call_builtin(mb, bi, argc, argv);
	macro_argv_free(argv, argc);
	return r->cont ? r->cont : r->se;
}

static const char *expand_user(struct mbuf *mb, const struct mref *r, struct macro_slot *slot,
                               struct macro_def *d)
{
	char **argv = NULL;
	int argc = 0;

	if (!d->opts) {
		if (r->braced && (r->g || r->args))
			macro_mb_warn(mb, "unexpected argument to non-parametric macro %%%s",
			              slot->name);
		expand_plain(mb, slot, d);
		return r->se;
	}
	if (collect_args(mb, r, slot->name, &argv, &argc))
		call_parametric(mb, slot, d, argc, argv);
	macro_argv_free(argv, argc);
	return r->cont ? r->cont : r->se;
}

static void expand_shell(struct mbuf *mb, const char *cmd, size_t len);
static void expand_expr(struct mbuf *mb, const char *expr, size_t len);

/* Expand the macro that starts at s (just after its '%'); returns where to continue.
 * *last becomes the name looked up (NULL when unknown), as rpm's `me`; %(...) and %[...]
 * look up none and leave it. */
static const char *expand_one(struct mbuf *mb, const char *s, const char *end, const char **last)
{
	struct mref r = {.start = s};
	struct macro_slot *slot;
	struct macro_def *d;

	r.se = macro_end(s, end);
	if (!r.se) {
		macro_mb_error(mb, KILN_ESYNTAX, "Unterminated %c: %.*s", *s,
		               (int)(end - s > 200 ? 200 : end - s), s);
		return end;
	}
	if (*s == '(' || *s == '[') {
		if (mb->trace)
			trace_macro(mb, s, r.se, end);
		if (*s == '(')
			expand_shell(mb, s + 1, (size_t)(r.se - s - 2));
		else
			expand_expr(mb, s + 1, (size_t)(r.se - s - 2));
		return r.se;
	}
	if (*s == '{')
		parse_braced(&r);
	else
		parse_unbraced(&r, end);
	if (!r.fn) {
		kiln_buf_addch(mb->out, '%');
		return s;
	}
	/* rpm prints an unbraced macro from its name, past any '?' and '!'. */
	if (mb->trace)
		trace_macro(mb, r.braced ? s : r.f, r.se, end);
	slot = macro_table_find(&mb->ctx->table, r.f, r.fn);
	d = macro_lookup(mb->ctx, slot);
	*last = slot && (d || slot->builtin) ? slot->name : NULL;
	if (r.f[0] == '-') {
		expand_flag(mb, &r, d);
		return r.se;
	}
	if (r.chkexist) {
		bool defined = d || (slot && slot->builtin);

		if (defined == r.negate)
			return r.se;
		if (r.g && r.gn)
			macro_mb_expand(mb, r.g, r.gn);
		else if (!r.g && slot && slot->builtin)
			call_builtin_bare(mb, slot->builtin);
		else if (!r.g && d)
			expand_plain(mb, slot, d);
		return r.se;
	}
	if (slot && slot->builtin)
		return expand_builtin(mb, &r, slot->builtin, end);
	if (!d) {
		/* Unknown: leave it as it is; what follows the '%' is scanned as text. */
		kiln_buf_addch(mb->out, '%');
		return s;
	}
	return expand_user(mb, &r, slot, d);
}

void macro_mb_expand(struct mbuf *mb, const char *src, size_t len)
{
	struct macro_ctx *ctx = mb->ctx;
	const char *end = src + len;
	const char *s = src;
	const char *last = NULL;    /* rpm's `me`, named by the trace */
	size_t from = mb->out->len; /* rpm's med.tpos: where the traced text starts */
	bool trace = mb->trace;     /* restored at the end: %trace lasts for this level */

	if (mb->error)
		return;
	if (!depth_enter(mb))
		return;
	while (s < end && !mb->error) {
		const char *pct = memchr(s, '%', (size_t)(end - s));

		if (!pct) {
			kiln_buf_add(mb->out, s, (size_t)(end - s));
			break;
		}
		kiln_buf_add(mb->out, s, (size_t)(pct - s));
		s = pct + 1;
		if (s == end) {
			kiln_buf_addch(mb->out, '%');
			break;
		}
		if (*s == '%') {
			kiln_buf_addch(mb->out, '%');
			s++;
			continue;
		}
		/* Below the outermost level the trace shows the last macro's text onwards. */
		if (ctx->depth - mb->depth0 > 1)
			from = mb->out->len;
		s = expand_one(mb, s, end, &last);
		if (mb->out->err && !mb->error)
			macro_mb_error(mb, mb->out->err, "macro expansion too large");
	}
	ctx->depth--;
	/* rpm -v traces the level a failure ends (rpmio/macro.c mbFini). */
	if (mb->trace || (mb->error && ctx->verbose))
		trace_expansion(mb, last, from);
	mb->trace = trace;
}

/* ---------------------------------------------------------------------------------------- */
/* %(...) and %[...]. */

static void expand_shell(struct mbuf *mb, const char *cmd, size_t len)
{
	struct kiln_buf ecmd = KILN_BUF_INIT(mb->ctx->max_expansion);
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_SHELL_OUTPUT);
	struct macro_ctx *ctx = mb->ctx;
	kiln_rc rc;

	if (!macro_mb_expand_to(mb, cmd, len, &ecmd))
		goto out;
	if (ctx->restricted) {
		macro_mb_error(mb, KILN_EPRIV, "shell expansion is disabled: %%(%s)", ecmd.ptr);
		goto out;
	}
	rc = ctx->shell(ctx->shell_data, ecmd.ptr, &out, mb->err);
	if (rc) {
		mb->error = true;
		goto out;
	}
	/* rpm trims trailing newlines and carriage returns, nothing else. */
	kiln_buf_rtrim(&out, "\r\n");
	kiln_buf_add(mb->out, out.ptr, out.len);
out:
	kiln_buf_release(&ecmd);
	kiln_buf_release(&out);
}

static void expand_expr(struct mbuf *mb, const char *expr, size_t len)
{
	if (macro_expr_eval(mb->ctx, expr, len, MACRO_EXPR_EXPAND, mb->out, mb->err))
		mb->error = true;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry points. */

static kiln_rc expand_top(struct macro_ctx *ctx, const char *src, size_t len, struct kiln_buf *out,
                          bool keep_partial, struct kiln_err *err)
{
	struct kiln_err local = KILN_ERR_INIT;
	struct mbuf mb = {.ctx = ctx,
	                  .out = out,
	                  .err = err ? err : &local,
	                  .trace = ctx->trace,
	                  .depth0 = ctx->trace_base};
	size_t start = out->len;

	ctx->active++;
	macro_mb_expand(&mb, src, len);
	ctx->active--;
	if (!ctx->active)
		macro_graveyard_empty(ctx);
	if (mb.error) {
		if (!keep_partial || out->err)
			kiln_buf_truncate(out, start);
		return mb.err->code ? mb.err->code : KILN_EMACRO;
	}
	return KILN_OK;
}

kiln_rc macro_expand(struct macro_ctx *ctx, const char *src, size_t len, struct kiln_buf *out,
                     struct kiln_err *err)
{
	return expand_top(ctx, src, len, out, false, err);
}

kiln_rc macro_expand_partial(struct macro_ctx *ctx, const char *src, size_t len,
                             struct kiln_buf *out, struct kiln_err *err)
{
	return expand_top(ctx, src, len, out, true, err);
}

kiln_rc macro_expand_str(struct macro_ctx *ctx, const char *src, char **out, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(ctx->max_expansion);
	kiln_rc rc;

	rc = macro_expand(ctx, src, strlen(src), &b, err);
	if (!rc) {
		*out = kiln_buf_take(&b, NULL);
		if (!*out)
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	kiln_buf_release(&b);
	return rc;
}
