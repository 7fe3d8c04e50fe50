/*
 * qf.c - rpm query formats: the compiler (text to a token tree) and the renderer.
 *
 * Grammar and error wording follow rpm's headerfmt (shared/rpm-reference.md section 9.1):
 * literal text with backslash escapes, %[WIDTH]{[=|#]TAG[:FORMAT]}, [ ... ] iterating over
 * parallel arrays, %|TAG?{...}:{...}| conditionals.
 */
#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "rpmtag/rpmtag_int.h"

#define QF_MIN(a, b) ((a) < (b) ? (a) : (b))

enum tok_kind {
	TOK_LIT,
	TOK_TAG,
	TOK_ARRAY,
	TOK_COND,
};

struct tok {
	enum tok_kind kind;
	struct tok *next; /* borrowed from the arena */
	/* TOK_LIT */
	const char *lit;
	size_t lit_len;
	/* TOK_TAG and TOK_COND */
	uint32_t tag;
	bool star;   /* %{*}: every stored tag */
	bool locked; /* %{=TAG}: always element 0 */
	bool count;  /* %{#TAG}: the element count */
	enum rpmtag_qf_fmt fmt;
	int width; /* printf field width; 0 = none */
	bool left; /* '-' flag */
	/* TOK_ARRAY (body) and TOK_COND (body = present, alt = absent) */
	struct tok *body;
	struct tok *alt;
};

struct rpmtag_qf {
	struct kiln_arena arena; /* owns every token */
	struct tok *first;
};

struct parser {
	const char *p, *end;
	struct kiln_arena *arena;
	struct kiln_err *err;
	int depth;
};

static kiln_rc parse_seq(struct parser *ps, char term, struct tok **out, bool *terminated);

static kiln_rc bad(struct parser *ps, const char *msg)
{
	return kiln_err_set(ps->err, KILN_ESYNTAX, "incorrect format: %s", msg);
}

static struct tok *tok_new(struct parser *ps, enum tok_kind kind)
{
	struct tok *t = kiln_arena_alloc(ps->arena, sizeof(*t));

	if (t)
		t->kind = kind;
	return t;
}

/* Append literal bytes, merging with a literal token that is already last. */
static kiln_rc lit_add(struct parser *ps, struct tok ***tail, struct tok **last, const char *s,
                       size_t len)
{
	struct tok *t = *last;
	char *joined;

	if (t && t->kind == TOK_LIT) {
		joined = kiln_arena_alloc(ps->arena, t->lit_len + len + 1);
		if (!joined)
			return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
		memcpy(joined, t->lit, t->lit_len);
		memcpy(joined + t->lit_len, s, len);
		t->lit = joined;
		t->lit_len += len;
		return KILN_OK;
	}
	t = tok_new(ps, TOK_LIT);
	if (!t)
		return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
	t->lit = kiln_arena_strndup(ps->arena, s, len);
	if (!t->lit)
		return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
	t->lit_len = len;
	**tail = t;
	*tail = &t->next;
	*last = t;
	return KILN_OK;
}

static kiln_rc lookup_tag(struct parser *ps, const char *name, size_t len, uint32_t *num)
{
	const struct rpmtag_info *ti = rpmtag_by_name(name, len);

	if (!ti)
		return kiln_err_set(ps->err, KILN_ESYNTAX,
		                    "incorrect format: unknown tag: \"%.*s\"", (int)len, name);
	*num = ti->num;
	return KILN_OK;
}

static kiln_rc parse_width(struct parser *ps, const char *s, size_t len, struct tok *t)
{
	size_t i = 0;
	int w = 0;

	if (i < len && s[i] == '-') {
		t->left = true;
		i++;
	}
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return bad(ps, "invalid field width");
		if (w < 100000)
			w = w * 10 + (s[i] - '0');
	}
	t->width = w;
	return KILN_OK;
}

/* After "%": [WIDTH]{[=|#]TAG[:FORMAT]} */
static kiln_rc parse_tag(struct parser *ps, struct tok **out)
{
	const char *w = ps->p, *close, *name, *colon;
	struct tok *t;
	kiln_rc rc;

	while (ps->p < ps->end && *ps->p != '{' && *ps->p != '%')
		ps->p++;
	if (ps->p >= ps->end || *ps->p != '{')
		return bad(ps, "missing { after %");
	t = tok_new(ps, TOK_TAG);
	if (!t)
		return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
	rc = parse_width(ps, w, (size_t)(ps->p - w), t);
	if (rc)
		return rc;
	name = ++ps->p;
	if (name < ps->end && (*name == '=' || *name == '#')) {
		t->locked = true;
		t->count = *name == '#';
		name++;
	}
	close = memchr(name, '}', (size_t)(ps->end - name));
	if (!close)
		return bad(ps, "missing } after %{");
	colon = memchr(name, ':', (size_t)(close - name));
	if ((colon ? colon : close) == name)
		return bad(ps, "empty tag name");
	if (colon && colon + 1 == close)
		return bad(ps, "empty tag format");
	if (colon && !rpmtag_qf_fmt_lookup(colon + 1, (size_t)(close - colon - 1), &t->fmt))
		return kiln_err_set(ps->err, KILN_ESYNTAX,
		                    "incorrect format: unknown tag format: \"%.*s\"",
		                    (int)(close - colon - 1), colon + 1);
	if ((colon ? colon : close) - name == 1 && *name == '*')
		t->star = true;
	else
		rc = lookup_tag(ps, name, (size_t)((colon ? colon : close) - name), &t->tag);
	if (t->count)
		t->fmt = RPMTAG_QF_FMT_ARRAYSIZE;
	ps->p = close + 1;
	*out = t;
	return rc;
}

/* After "%|": TAG?{...}[:{...}]| */
static kiln_rc parse_cond(struct parser *ps, struct tok **out)
{
	const char *name = ps->p;
	const char *q = memchr(name, '?', (size_t)(ps->end - name));
	struct tok *t = tok_new(ps, TOK_COND);
	bool done = false;
	kiln_rc rc;

	if (!t)
		return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
	if (!q)
		return bad(ps, "? expected in expression");
	rc = lookup_tag(ps, name, (size_t)(q - name), &t->tag);
	if (rc)
		return rc;
	ps->p = q + 1;
	if (ps->p >= ps->end || *ps->p != '{')
		return bad(ps, "{ expected after ? in expression");
	ps->p++;
	rc = parse_seq(ps, '}', &t->body, &done);
	if (rc)
		return rc;
	if (!done)
		return bad(ps, "} expected in expression");
	if (ps->p < ps->end && *ps->p == ':') {
		ps->p++;
		if (ps->p >= ps->end || *ps->p != '{')
			return bad(ps, "{ expected after : in expression");
		ps->p++;
		rc = parse_seq(ps, '}', &t->alt, &done);
		if (rc)
			return rc;
		if (!done)
			return bad(ps, "} expected in expression");
	} else if (ps->p < ps->end && *ps->p != '|') {
		return bad(ps, ": expected following ? subexpression");
	}
	if (ps->p >= ps->end || *ps->p != '|')
		return bad(ps, "| expected at end of expression");
	ps->p++;
	*out = t;
	return KILN_OK;
}

static char unescape(char c)
{
	switch (c) {
	case 'a':
		return '\a';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case 'v':
		return '\v';
	default:
		return c;
	}
}

/* One "%..." construct, appended at *tail. */
static kiln_rc parse_percent(struct parser *ps, struct tok ***tail, struct tok **last)
{
	struct tok *t = NULL;
	kiln_rc rc;

	if (ps->p < ps->end && *ps->p == '%') {
		ps->p++;
		return lit_add(ps, tail, last, "%", 1);
	}
	if (ps->p < ps->end && *ps->p == '|') {
		ps->p++;
		rc = parse_cond(ps, &t);
	} else {
		rc = parse_tag(ps, &t);
	}
	if (rc)
		return rc;
	**tail = t;
	*tail = &t->next;
	*last = t;
	return KILN_OK;
}

static kiln_rc parse_array(struct parser *ps, struct tok ***tail, struct tok **last)
{
	struct tok *t = tok_new(ps, TOK_ARRAY);
	bool done = false;
	kiln_rc rc;

	if (!t)
		return kiln_err_set(ps->err, KILN_ENOMEM, "out of memory");
	rc = parse_seq(ps, ']', &t->body, &done);
	if (rc)
		return rc;
	if (!done)
		return bad(ps, "] expected at end of array");
	**tail = t;
	*tail = &t->next;
	*last = t;
	return KILN_OK;
}

/* Parse until term (']' or '}', or 0 for the end of input). *terminated tells whether term
 * was seen (and consumed). */
static kiln_rc parse_seq(struct parser *ps, char term, struct tok **out, bool *terminated)
{
	struct tok **tail = out, *last = NULL;
	kiln_rc rc = KILN_OK;
	char c;

	*out = NULL;
	*terminated = false;
	if (++ps->depth > KILN_LIMIT_QF_DEPTH)
		return kiln_err_set(ps->err, KILN_ELIMIT, "incorrect format: nested deeper than %d",
		                    KILN_LIMIT_QF_DEPTH);
	while (!rc && ps->p < ps->end) {
		c = *ps->p++;
		if (c == '%') {
			rc = parse_percent(ps, &tail, &last);
		} else if (c == '[') {
			rc = parse_array(ps, &tail, &last);
		} else if (c == ']' || c == '}') {
			if (c != term)
				return bad(ps, c == ']' ? "unexpected ]" : "unexpected }");
			*terminated = true;
			break;
		} else if (c == '\\') {
			if (ps->p >= ps->end)
				return bad(ps, "escaped char expected after \\");
			c = unescape(*ps->p++);
			rc = lit_add(ps, &tail, &last, &c, 1);
		} else {
			rc = lit_add(ps, &tail, &last, &c, 1);
		}
	}
	ps->depth--;
	return rc;
}

kiln_rc rpmtag_qf_compile(const char *fmt, size_t len, struct rpmtag_qf **out, struct kiln_err *err)
{
	struct rpmtag_qf *qf = kiln_calloc(1, sizeof(*qf));
	struct parser ps = {fmt, fmt + len, NULL, err, 0};
	bool done = false;
	kiln_rc rc;

	*out = NULL;
	if (!qf)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_arena_init(&qf->arena, KILN_LIMIT_ARENA);
	ps.arena = &qf->arena;
	rc = parse_seq(&ps, 0, &qf->first, &done);
	if (!rc)
		rc = kiln_arena_finish(&qf->arena, err);
	if (rc) {
		rpmtag_qf_free(qf);
		return rc;
	}
	*out = qf;
	return KILN_OK;
}

void rpmtag_qf_free(struct rpmtag_qf *qf)
{
	if (!qf)
		return;
	kiln_arena_release(&qf->arena);
	free(qf);
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering */

static kiln_rc render_seq(struct rpmtag_qf_render *r, const struct tok *t, uint32_t elem,
                          struct kiln_buf *out);

/* rpm counts a blob as one element. */
static uint32_t elems(const struct rpmtag_qf_value *v)
{
	return v->type == RPMTAG_TYPE_BIN ? 1 : v->count;
}

static void pad_to(struct kiln_buf *out, size_t start, const struct tok *t)
{
	size_t n = out->len - start;
	size_t w = (size_t)t->width;
	static const char spaces[] = "                                ";

	if (n >= w)
		return;
	if (t->left) {
		for (; n < w; n += sizeof(spaces) - 1)
			kiln_buf_add(out, spaces, QF_MIN(sizeof(spaces) - 1, w - n));
		return;
	}
	while (n < w) {
		size_t add = QF_MIN(sizeof(spaces) - 1, w - n);

		kiln_buf_insert(out, start, spaces, add);
		n += add;
	}
}

static kiln_rc render_tag(struct rpmtag_qf_render *r, const struct tok *t, uint32_t elem,
                          struct kiln_buf *out)
{
	struct rpmtag_qf_value v;
	size_t start = out->len;
	kiln_rc rc = KILN_OK;

	/* %{*} means something only as the first token of [...]; elsewhere rpm finds no
	 * value for it. */
	if (t->star) {
		kiln_buf_addstr(out, "(none)");
		return KILN_OK;
	}
	if (t->locked)
		elem = 0;
	if (!rpmtag_qf_get(r, t->tag, &v))
		kiln_buf_addstr(out, "(none)");
	else if (t->fmt == RPMTAG_QF_FMT_ARRAYSIZE)
		kiln_buf_addf(out, "%" PRIu32, elems(&v));
	else if (elem >= elems(&v))
		kiln_buf_addstr(out, "(none)");
	else
		rc = rpmtag_qf_fmt_apply(r, t->fmt, t->tag, &v, elem, out);
	if (t->width)
		pad_to(out, start, t);
	return rc;
}

static bool is_region_tag(uint32_t tag)
{
	return tag >= RPMTAG_HEADERIMAGE && tag <= RPMTAG_HEADERREGIONS;
}

/* [%{*:xml}...] and [%{*:json}...]: every stored tag with rpm's wrappers (section 9.3). */
static kiln_rc render_star(struct rpmtag_qf_render *r, const struct tok *star, struct kiln_buf *out)
{
	const struct rpmtag_qf_source *src = r->src;
	bool json = star->fmt == RPMTAG_QF_FMT_JSON;
	size_t i, n = src->ops->tag_count(src->ctx);
	char name[64];
	kiln_rc rc = KILN_OK;

	kiln_buf_addstr(out, json ? "{\n" : "<rpmHeader>\n");
	for (i = 0; !rc && i < n; i++) {
		uint32_t tag = src->ops->tag_at(src->ctx, i);
		struct rpmtag_qf_value v;
		uint32_t e;

		if (is_region_tag(tag) || !rpmtag_qf_get_raw(r, tag, &v))
			continue;
		rpmtag_shortname(tag, name, sizeof(name));
		if (json)
			kiln_buf_addf(out, "    \"%s\": %s", name, elems(&v) > 1 ? "[\n" : "");
		else
			kiln_buf_addf(out, "  <rpmTag name=\"%s\">\n", name);
		for (e = 0; !rc && e < elems(&v); e++) {
			if (json && e > 0)
				kiln_buf_addstr(out, ",\n");
			if (json)
				kiln_buf_addch(out, '\t');
			rc = rpmtag_qf_fmt_apply(r, star->fmt, tag, &v, e, out);
			if (!rc)
				rc = render_seq(r, star->next, e, out);
		}
		if (json)
			kiln_buf_addstr(out, elems(&v) > 1 ? "\n    ],\n" : ",\n");
		else
			kiln_buf_addstr(out, "  </rpmTag>\n");
	}
	if (json) {
		if (out->len >= 2 && !memcmp(out->ptr + out->len - 2, ",\n", 2))
			kiln_buf_truncate(out, out->len - 2);
		kiln_buf_addstr(out, "\n}\n");
	} else {
		kiln_buf_addstr(out, "</rpmHeader>\n");
	}
	return rc;
}

/* [%{*:FMT}...] with any other format: the rest of the body once per element of every
 * stored tag, in header order. */
static kiln_rc render_star_plain(struct rpmtag_qf_render *r, const struct tok *star,
                                 struct kiln_buf *out)
{
	const struct rpmtag_qf_source *src = r->src;
	size_t i, n = src->ops->tag_count(src->ctx);
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < n; i++) {
		uint32_t tag = src->ops->tag_at(src->ctx, i);
		struct rpmtag_qf_value v;
		uint32_t e;

		if (is_region_tag(tag) || !rpmtag_qf_get_raw(r, tag, &v))
			continue;
		for (e = 0; !rc && e < elems(&v); e++) {
			size_t start = out->len;

			rc = rpmtag_qf_fmt_apply(r, star->fmt, tag, &v, e, out);
			if (!rc && star->width)
				pad_to(out, start, star);
			if (!rc)
				rc = render_seq(r, star->next, e, out);
		}
	}
	return rc;
}

static kiln_rc render_array(struct rpmtag_qf_render *r, const struct tok *a, struct kiln_buf *out)
{
	const struct tok *t;
	struct rpmtag_qf_value v;
	int64_t n = -1;
	uint32_t i;
	kiln_rc rc = KILN_OK;

	if (a->body && a->body->kind == TOK_TAG && a->body->star &&
	    (a->body->fmt == RPMTAG_QF_FMT_XML || a->body->fmt == RPMTAG_QF_FMT_JSON))
		return render_star(r, a->body, out);
	if (a->body && a->body->kind == TOK_TAG && a->body->star)
		return render_star_plain(r, a->body, out);
	/* Only placeholders at the top of the iterator decide its length (rpm ignores tags
	 * inside conditionals there); absent tags are skipped. */
	for (t = a->body; t; t = t->next) {
		if (t->kind != TOK_TAG || t->locked || t->star || !rpmtag_qf_get(r, t->tag, &v))
			continue;
		if (n >= 0 && elems(&v) != (uint32_t)n)
			return kiln_err_set(r->err, KILN_ESYNTAX,
			                    "incorrect format: array iterator used with different "
			                    "sized arrays");
		n = elems(&v);
	}
	for (i = 0; !rc && n > 0 && i < (uint32_t)n; i++)
		rc = render_seq(r, a->body, i, out);
	return rc;
}

static kiln_rc render_seq(struct rpmtag_qf_render *r, const struct tok *t, uint32_t elem,
                          struct kiln_buf *out)
{
	struct rpmtag_qf_value v;
	kiln_rc rc = KILN_OK;

	for (; !rc && t; t = t->next) {
		switch (t->kind) {
		case TOK_LIT:
			kiln_buf_add(out, t->lit, t->lit_len);
			break;
		case TOK_TAG:
			rc = render_tag(r, t, elem, out);
			break;
		case TOK_ARRAY:
			rc = render_array(r, t, out);
			break;
		case TOK_COND:
			rc = render_seq(r, rpmtag_qf_get(r, t->tag, &v) ? t->body : t->alt, elem,
			                out);
			break;
		}
		if (!rc && out->err)
			rc = kiln_buf_finish(out, r->err);
		if (!rc && r->arena.err)
			rc = kiln_arena_finish(&r->arena, r->err);
	}
	return rc;
}

kiln_rc rpmtag_qf_render(const struct rpmtag_qf *qf, const struct rpmtag_qf_source *src,
                         struct kiln_buf *out, struct kiln_err *err)
{
	struct rpmtag_qf_render *r = kiln_calloc(1, sizeof(*r));
	kiln_rc rc;

	if (!r)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	r->src = src;
	r->err = err;
	kiln_arena_init(&r->arena, KILN_LIMIT_ARENA);
	rc = render_seq(r, qf->first, 0, out);
	kiln_arena_release(&r->arena);
	free(r);
	return rc;
}

kiln_rc rpmtag_qf_format(const char *fmt, const struct rpmtag_qf_source *src, struct kiln_buf *out,
                         struct kiln_err *err)
{
	struct rpmtag_qf *qf = NULL;
	kiln_rc rc = rpmtag_qf_compile(fmt, strlen(fmt), &qf, err);

	if (!rc)
		rc = rpmtag_qf_render(qf, src, out, err);
	rpmtag_qf_free(qf);
	return rc;
}
