/*
 * repomd.c - repomd.xml, read with a small bounded XML scanner.
 *
 * repomd.xml is the one file of a repository that is not content-addressed: everything
 * else is trusted because its checksum is in here, and this file is trusted because its
 * detached signature is good. It is small and regular (<repomd>, <revision>, <data
 * type=...> with <checksum>, <location href>, <size>, <open-size>), so it is scanned here
 * rather than handed to a general XML library: every length and count is bounded, and an
 * href that could leave the repository (absolute, "..", a scheme) is refused.
 */
#include "util/util.h"

#include "roots/roots.h"
#include "roots/roots_int.h"

#include <ctype.h>

#define XML_MAX_DEPTH 16
#define XML_MAX_ATTRS 16
#define XML_MAX_NAME 64
#define XML_MAX_VALUE 4096

struct xml_attr {
	struct kiln_str name, value; /* value still escaped */
};

struct xml_tag {
	struct kiln_str name;
	struct xml_attr attrs[XML_MAX_ATTRS];
	size_t nattrs;
	bool closing, empty;
};

struct scan {
	const char *p, *end;
	int line;
	struct roots_repomd *md;
	const char *name;
	/* The element path: names of open elements. */
	struct kiln_str open[XML_MAX_DEPTH];
	int depth;
	struct roots_repomd_data *cur; /* inside <data> */
	size_t cap;
	struct kiln_buf text; /* character data of the innermost element */
};

void roots_repomd_init(struct roots_repomd *md)
{
	memset(md, 0, sizeof(*md));
	kiln_arena_init(&md->arena, 4 * ROOTS_REPOMD_MAX_BYTES);
}

void roots_repomd_release(struct roots_repomd *md)
{
	if (!md)
		return;
	kiln_arena_release(&md->arena);
	memset(md, 0, sizeof(*md));
}

static kiln_rc fail(struct scan *s, kiln_rc rc, const char *msg, struct kiln_err *err)
{
	kiln_err_set(err, rc, "%s", msg);
	kiln_err_locate(err, s->name, s->line, 0);
	return rc;
}

static void advance(struct scan *s, size_t n)
{
	for (size_t i = 0; i < n && s->p < s->end; i++, s->p++)
		if (*s->p == '\n')
			s->line++;
}

static bool starts(const struct scan *s, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(s->end - s->p) >= n && !memcmp(s->p, lit, n);
}

/* Skip to just after lit; false when it does not occur. */
static bool skip_past(struct scan *s, const char *lit)
{
	size_t n = strlen(lit);

	while ((size_t)(s->end - s->p) >= n) {
		if (!memcmp(s->p, lit, n)) {
			advance(s, n);
			return true;
		}
		advance(s, 1);
	}
	return false;
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == ':' || c == '.';
}

static void skip_space(struct scan *s)
{
	while (s->p < s->end && isspace((unsigned char)*s->p))
		advance(s, 1);
}

static kiln_rc read_name(struct scan *s, struct kiln_str *out, struct kiln_err *err)
{
	const char *start = s->p;

	while (s->p < s->end && is_name_char(*s->p))
		s->p++;
	if (s->p == start)
		return fail(s, KILN_ESYNTAX, "expected a name", err);
	if ((size_t)(s->p - start) > XML_MAX_NAME)
		return fail(s, KILN_ELIMIT, "an XML name is too long", err);
	*out = kiln_str_make(start, (size_t)(s->p - start));
	return KILN_OK;
}

static kiln_rc read_attr(struct scan *s, struct xml_tag *t, struct kiln_err *err)
{
	struct xml_attr *a;
	const char *start;
	char q;

	if (t->nattrs == XML_MAX_ATTRS)
		return fail(s, KILN_ELIMIT, "too many attributes", err);
	a = &t->attrs[t->nattrs++];
	if (read_name(s, &a->name, err))
		return err->code;
	skip_space(s);
	if (s->p == s->end || *s->p != '=')
		return fail(s, KILN_ESYNTAX, "expected '=' after an attribute name", err);
	advance(s, 1);
	skip_space(s);
	if (s->p == s->end || (*s->p != '"' && *s->p != '\''))
		return fail(s, KILN_ESYNTAX, "expected a quoted attribute value", err);
	q = *s->p;
	advance(s, 1);
	start = s->p;
	while (s->p < s->end && *s->p != q && *s->p != '<')
		advance(s, 1);
	if (s->p == s->end || *s->p != q)
		return fail(s, KILN_ESYNTAX, "unterminated attribute value", err);
	if ((size_t)(s->p - start) > XML_MAX_VALUE)
		return fail(s, KILN_ELIMIT, "an attribute value is too long", err);
	a->value = kiln_str_make(start, (size_t)(s->p - start));
	advance(s, 1);
	return KILN_OK;
}

/* At '<' of a start or end tag. */
static kiln_rc read_tag(struct scan *s, struct xml_tag *t, struct kiln_err *err)
{
	memset(t, 0, sizeof(*t));
	advance(s, 1);
	if (s->p < s->end && *s->p == '/') {
		t->closing = true;
		advance(s, 1);
	}
	if (read_name(s, &t->name, err))
		return err->code;
	for (;;) {
		skip_space(s);
		if (s->p == s->end)
			return fail(s, KILN_ESYNTAX, "unterminated tag", err);
		if (*s->p == '>') {
			advance(s, 1);
			return KILN_OK;
		}
		if (starts(s, "/>") && !t->closing) {
			t->empty = true;
			advance(s, 2);
			return KILN_OK;
		}
		if (t->closing)
			return fail(s, KILN_ESYNTAX, "junk in an end tag", err);
		if (read_attr(s, t, err))
			return err->code;
	}
}

/* Unescape the five predefined entities and decimal/hex character references (ASCII
 * only: nothing in repomd.xml needs more). */
static kiln_rc unescape(struct scan *s, struct kiln_str in, struct kiln_buf *out,
                        struct kiln_err *err)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = {
	    {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	size_t i = 0, k;

	while (i < in.len) {
		struct kiln_str rest = kiln_str_make(in.ptr + i, in.len - i);

		if (in.ptr[i] != '&') {
			kiln_buf_addch(out, in.ptr[i++]);
			continue;
		}
		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++)
			if (kiln_str_starts(rest, ents[k].ent))
				break;
		if (k == sizeof(ents) / sizeof(ents[0]))
			return fail(s, KILN_ESYNTAX, "an unknown entity or a bare '&'", err);
		kiln_buf_addch(out, ents[k].c);
		i += strlen(ents[k].ent);
	}
	return kiln_buf_finish(out, err);
}

/* The unescaped value of attribute name in the repomd's arena: KILN_OK, or KILN_ENOTFOUND
 * (err untouched) when t has none. */
static kiln_rc attr_get(struct scan *s, const struct xml_tag *t, const char *name, const char **out,
                        struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(XML_MAX_VALUE);
	kiln_rc rc = KILN_ENOTFOUND;
	size_t i;

	*out = NULL;
	for (i = 0; i < t->nattrs; i++) {
		if (!kiln_str_eq_cstr(t->attrs[i].name, name))
			continue;
		rc = unescape(s, t->attrs[i].value, &b, err);
		if (!rc) {
			*out = kiln_arena_strdup(&s->md->arena, b.ptr);
			rc = kiln_arena_finish(&s->md->arena, err);
		}
		break;
	}
	kiln_buf_release(&b);
	return rc;
}

/* A required attribute: a missing one is KILN_EFORMAT "<elem> without name". */
static kiln_rc attr_need(struct scan *s, const struct xml_tag *t, const char *name,
                         const char **out, struct kiln_err *err)
{
	char msg[128];
	kiln_rc rc = attr_get(s, t, name, out, err);

	if (rc != KILN_ENOTFOUND)
		return rc;
	snprintf(msg, sizeof(msg), "<" KILN_STR_FMT "> without %s", KILN_STR_ARG(t->name), name);
	return fail(s, KILN_EFORMAT, msg, err);
}

/* ---- the repomd vocabulary ------------------------------------------------------------- */

static bool in(const struct scan *s, int depth, const char *name)
{
	return s->depth == depth && kiln_str_eq_cstr(s->open[depth - 1], name);
}

static kiln_rc data_begin(struct scan *s, const struct xml_tag *t, struct kiln_err *err)
{
	struct roots_repomd *md = s->md;
	const char *type;

	if (md->ndata == ROOTS_REPOMD_MAX_DATA)
		return fail(s, KILN_ELIMIT, "too many <data> entries", err);
	if (attr_need(s, t, "type", &type, err))
		return err->code;
	if (md->ndata == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct roots_repomd_data *nv = kiln_arena_array(&md->arena, cap, sizeof(*nv));

		if (!nv)
			return kiln_arena_finish(&md->arena, err);
		if (md->ndata)
			memcpy(nv, md->data, md->ndata * sizeof(*nv));
		md->data = nv;
		s->cap = cap;
	}
	s->cur = &md->data[md->ndata++];
	s->cur->type = type;
	return KILN_OK;
}

static kiln_rc check_href(struct scan *s, const char *href, struct kiln_err *err)
{
	struct kiln_buf clean = KILN_BUF_INIT(KILN_LIMIT_PATH);
	kiln_rc rc = KILN_OK;

	if (strstr(href, "://") || href[0] == '/')
		rc = kiln_err_set(err, KILN_EPRIV, "location '%s' is not inside the repository",
		                  href);
	else
		rc = util_path_check_relative(href, strlen(href), &clean, err);
	if (rc)
		kiln_err_locate(err, s->name, s->line, 0);
	kiln_buf_release(&clean);
	return rc;
}

static kiln_rc start_tag(struct scan *s, const struct xml_tag *t, struct kiln_err *err)
{
	const char *v;

	if (s->depth == 1 && !in(s, 1, "repomd"))
		return fail(s, KILN_EFORMAT, "the document is not <repomd>", err);
	if (in(s, 2, "data"))
		return data_begin(s, t, err);
	if (s->cur && in(s, 3, "checksum")) {
		kiln_rc rc = attr_need(s, t, "type", &v, err);

		if (rc)
			return rc;
		s->cur->sum_type = v;
	} else if (s->cur && in(s, 3, "location")) {
		kiln_rc rc = attr_need(s, t, "href", &v, err);

		if (!rc)
			rc = check_href(s, v, err);
		if (rc)
			return rc;
		s->cur->href = v;
	}
	return KILN_OK;
}

static kiln_rc parse_u64(struct scan *s, const char *text, uint64_t *out, struct kiln_err *err)
{
	struct kiln_err e = KILN_ERR_INIT;
	struct kiln_str t = kiln_str_trim(kiln_str_from(text));

	if (util_parse_u64(t.ptr, t.len, 10, UINT64_MAX / 2, out, &e))
		return fail(s, KILN_EFORMAT, "a size is not a number", err);
	return KILN_OK;
}

static kiln_rc set_sum(struct scan *s, const char *text, struct kiln_err *err)
{
	struct kiln_str t = kiln_str_trim(kiln_str_from(text));
	char *hex = kiln_arena_strndup(&s->md->arena, t.ptr, t.len);
	size_t i;

	if (!hex)
		return kiln_arena_finish(&s->md->arena, err);
	for (i = 0; hex[i]; i++) {
		if (!isxdigit((unsigned char)hex[i]))
			return fail(s, KILN_EFORMAT, "a checksum is not hex", err);
		hex[i] = (char)tolower((unsigned char)hex[i]);
	}
	s->cur->sum = hex;
	return KILN_OK;
}

/* The element named by t closes with the text it held. */
static kiln_rc end_tag(struct scan *s, const char *text, struct kiln_err *err)
{
	if (in(s, 2, "revision")) {
		s->md->revision = kiln_arena_strdup(&s->md->arena, text);
		return kiln_arena_finish(&s->md->arena, err);
	}
	if (!s->cur)
		return KILN_OK;
	if (in(s, 3, "checksum"))
		return set_sum(s, text, err);
	if (in(s, 3, "size"))
		return parse_u64(s, text, &s->cur->size, err);
	if (in(s, 3, "open-size"))
		return parse_u64(s, text, &s->cur->open_size, err);
	if (in(s, 2, "data"))
		s->cur = NULL;
	return KILN_OK;
}

/* ---- the scanner loop ------------------------------------------------------------------ */

static kiln_rc on_tag(struct scan *s, struct kiln_err *err)
{
	struct xml_tag t;
	kiln_rc rc = read_tag(s, &t, err);

	if (rc)
		return rc;
	if (t.closing) {
		if (!s->depth || !kiln_str_eq(s->open[s->depth - 1], t.name))
			return fail(s, KILN_ESYNTAX, "an end tag does not match its start tag",
			            err);
		{
			struct kiln_buf plain = KILN_BUF_INIT(XML_MAX_VALUE);

			rc = unescape(s, kiln_str_make(s->text.ptr, s->text.len), &plain, err);
			if (!rc)
				rc = end_tag(s, plain.ptr, err);
			kiln_buf_release(&plain);
		}
		s->depth--;
		kiln_buf_reset(&s->text);
		return rc;
	}
	if (s->depth == XML_MAX_DEPTH)
		return fail(s, KILN_ELIMIT, "elements nested too deeply", err);
	s->open[s->depth++] = t.name;
	kiln_buf_reset(&s->text);
	rc = start_tag(s, &t, err);
	if (!rc && t.empty) {
		rc = end_tag(s, "", err);
		s->depth--;
	}
	return rc;
}

static kiln_rc on_text(struct scan *s, struct kiln_err *err)
{
	const char *start = s->p;

	while (s->p < s->end && *s->p != '<')
		advance(s, 1);
	if (!s->depth) {
		struct kiln_str t = kiln_str_trim(kiln_str_make(start, (size_t)(s->p - start)));

		return t.len ? fail(s, KILN_ESYNTAX, "text outside the document element", err)
		             : KILN_OK;
	}
	kiln_buf_add(&s->text, start, (size_t)(s->p - start));
	if (s->text.err)
		return fail(s, KILN_ELIMIT, "an element's text is too long", err);
	return KILN_OK;
}

static kiln_rc scan_step(struct scan *s, bool *seen_root, struct kiln_err *err)
{
	if (*s->p != '<')
		return on_text(s, err);
	if (starts(s, "<?"))
		return skip_past(s, "?>") ? KILN_OK
		                          : fail(s, KILN_ESYNTAX, "unterminated '<?'", err);
	if (starts(s, "<!--"))
		return skip_past(s, "-->") ? KILN_OK
		                           : fail(s, KILN_ESYNTAX, "unterminated comment", err);
	if (starts(s, "<!"))
		return fail(s, KILN_EUNSUPP, "DTDs and CDATA are not accepted in repomd.xml", err);
	if (!s->depth && *seen_root)
		return fail(s, KILN_ESYNTAX, "a second document element", err);
	*seen_root = true;
	return on_tag(s, err);
}

static kiln_rc check_data(struct scan *s, struct kiln_err *err)
{
	size_t i;

	for (i = 0; i < s->md->ndata; i++) {
		const struct roots_repomd_data *d = &s->md->data[i];
		enum util_digest_algo algo;
		struct kiln_err e = KILN_ERR_INIT;

		if (!d->href || !d->sum || !d->sum_type)
			return kiln_err_set(err, KILN_EFORMAT, "%s: <data type=\"%s\"> lacks %s",
			                    s->name, d->type,
			                    !d->href ? "a location" : "a checksum");
		if (util_digest_by_name(d->sum_type, &algo, &e))
			return kiln_err_set(err, KILN_EFORMAT,
			                    "%s: <data type=\"%s\">: checksum type '%s' is unknown",
			                    s->name, d->type, d->sum_type);
		if (strlen(d->sum) != 2 * util_digest_size(algo))
			return kiln_err_set(
			    err, KILN_EFORMAT,
			    "%s: <data type=\"%s\">: a %s checksum of %zu hex digits", s->name,
			    d->type, d->sum_type, strlen(d->sum));
	}
	return KILN_OK;
}

kiln_rc roots_repomd_parse(struct roots_repomd *md, const char *name, const char *xml, size_t len,
                           struct kiln_err *err)
{
	struct scan s = {.p = xml, .end = xml + len, .line = 1, .md = md, .name = name};
	bool seen_root = false;
	kiln_rc rc = KILN_OK;
	struct kiln_err local = KILN_ERR_INIT;

	if (!err)
		err = &local; /* the helpers read err->code */
	kiln_buf_init(&s.text, XML_MAX_VALUE);
	if (len > ROOTS_REPOMD_MAX_BYTES) {
		rc = kiln_err_set(err, KILN_ELIMIT, "%s: over %zu bytes", name,
		                  (size_t)ROOTS_REPOMD_MAX_BYTES);
		goto out;
	}
	if (memchr(xml, '\0', len)) {
		rc = kiln_err_set(err, KILN_ESYNTAX, "%s: a NUL byte", name);
		goto out;
	}
	while (!rc && s.p < s.end)
		rc = scan_step(&s, &seen_root, err);
	if (!rc && (s.depth || !seen_root))
		rc = fail(&s, KILN_ESYNTAX,
		          seen_root ? "the document ends inside an element" : "no document element",
		          err);
	if (!rc)
		rc = check_data(&s, err);
out:
	kiln_buf_release(&s.text);
	return rc;
}

const struct roots_repomd_data *roots_repomd_find(const struct roots_repomd *md, const char *type)
{
	size_t i;

	for (i = 0; i < md->ndata; i++)
		if (!strcmp(md->data[i].type, type))
			return &md->data[i];
	return NULL;
}
