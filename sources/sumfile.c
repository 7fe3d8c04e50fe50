/*
 * sumfile.c - dist-git "sources" files: the checksums a spec's sources must match.
 *
 * fedpkg writes one "SHA512 (name) = hex" line per lookaside file (BSD-style tagged
 * lines, as `sha512sum --tag` prints); older repositories have md5sum's "hex  name". The
 * file comes from a repository, so it is outside input: bounded and fuzzed.
 */
#include "util/util.h"

#include <strings.h>

#include "sources/sources.h"
#include "sources/sources_int.h"

void sources_sums_init(struct sources_sums *s)
{
	memset(s, 0, sizeof(*s));
	kiln_arena_init(&s->arena, KILN_LIMIT_ARENA);
}

void sources_sums_release(struct sources_sums *s)
{
	if (!s)
		return;
	free(s->v);
	kiln_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

const struct sources_sum *sources_sums_find(const struct sources_sums *s, const char *file)
{
	size_t i;

	for (i = 0; s && i < s->n; i++) {
		if (!strcmp(s->v[i].file, file))
			return &s->v[i];
	}
	return NULL;
}

static bool is_hex(struct kiln_str h)
{
	size_t i;

	for (i = 0; i < h.len; i++) {
		char c = h.ptr[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return h.len > 0;
}

/* A file name from a sources file is used as a path component in %{_sourcedir}. */
static bool name_ok(struct kiln_str n)
{
	if (!n.len || n.len > 255 || kiln_str_eq_cstr(n, ".") || kiln_str_eq_cstr(n, ".."))
		return false;
	return memchr(n.ptr, '/', n.len) == NULL && memchr(n.ptr, '\0', n.len) == NULL;
}

static kiln_rc sums_put(struct sources_sums *s, struct kiln_str file, enum util_digest_algo algo,
                        struct kiln_str hex, struct kiln_err *err)
{
	struct sources_sum *e = NULL;
	size_t i;

	if (hex.len != 2 * util_digest_size(algo) || !is_hex(hex))
		return kiln_err_set(err, KILN_ESYNTAX, "%s digest must be %zu hex digits",
		                    util_digest_name(algo), 2 * util_digest_size(algo));
	for (i = 0; i < s->n && !e; i++) {
		if (kiln_str_eq_cstr(file, s->v[i].file))
			e = &s->v[i];
	}
	if (!e && s->n >= KILN_LIMIT_SOURCES)
		return kiln_err_set(err, KILN_ELIMIT, "more than %d checksums", KILN_LIMIT_SOURCES);
	if (!e && s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct sources_sum *v = kiln_reallocarray(s->v, cap, sizeof(*v));

		if (!v)
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	if (!e) {
		e = &s->v[s->n];
		e->file = kiln_arena_strndup(&s->arena, file.ptr, file.len);
		if (!e->file)
			return kiln_arena_finish(&s->arena, err);
		s->n++;
	}
	e->algo = algo;
	for (i = 0; i < hex.len; i++)
		e->hex[i] = (char)(hex.ptr[i] | 0x20); /* lowercase: digits are unchanged */
	e->hex[hex.len] = '\0';
	return KILN_OK;
}

kiln_rc sources_sums_set(struct sources_sums *s, const char *file, enum util_digest_algo algo,
                         const char *hex, struct kiln_err *err)
{
	struct kiln_str f = kiln_str_from(file);

	if (!name_ok(f))
		return kiln_err_set(err, KILN_EINVAL, "'%s' is not a file name", file);
	return sums_put(s, f, algo, kiln_str_from(hex), err);
}

/* "ALGO (name) = hex": the name is everything between the first " (" and the last ") = ",
 * so names with parentheses or spaces survive as fedpkg writes them. */
static kiln_rc parse_tagged(struct sources_sums *s, struct kiln_str line, struct kiln_err *err)
{
	const char *open = memchr(line.ptr, '(', line.len);
	const char *close = NULL;
	char algo_name[16];
	enum util_digest_algo algo;
	struct kiln_str name, hex;
	size_t alen, i;

	for (i = line.len; i >= 4 && !close; i--) {
		if (!memcmp(line.ptr + i - 4, ") = ", 4))
			close = line.ptr + i - 4;
	}
	if (!open || !close || close < open || open == line.ptr || open[-1] != ' ')
		return kiln_err_set(err, KILN_ESYNTAX, "expected 'ALGO (name) = hex'");
	alen = (size_t)(open - 1 - line.ptr);
	if (!alen || alen >= sizeof(algo_name))
		return kiln_err_set(err, KILN_ESYNTAX, "bad digest algorithm name");
	memcpy(algo_name, line.ptr, alen);
	algo_name[alen] = '\0';
	if (util_digest_by_name(algo_name, &algo, err))
		return err->code;
	name = kiln_str_make(open + 1, (size_t)(close - open - 1));
	hex = kiln_str_make(close + 4, line.len - (size_t)(close + 4 - line.ptr));
	if (!name_ok(name))
		return kiln_err_set(err, KILN_ESYNTAX, "bad file name '" KILN_STR_FMT "'",
		                    KILN_STR_ARG(name));
	return sums_put(s, name, algo, hex, err);
}

/* "hex  name" or "hex *name" (md5sum and friends; '*' marks binary mode). */
static kiln_rc parse_plain(struct sources_sums *s, struct kiln_str line, struct kiln_err *err)
{
	ptrdiff_t sp = kiln_str_chr(line, ' ');
	struct kiln_str hex, name;
	enum util_digest_algo algo;

	if (sp <= 0 || (size_t)sp + 2 > line.len ||
	    (line.ptr[sp + 1] != ' ' && line.ptr[sp + 1] != '*'))
		return kiln_err_set(err, KILN_ESYNTAX,
		                    "expected 'ALGO (name) = hex' or 'hex  name'");
	hex = kiln_str_make(line.ptr, (size_t)sp);
	name = kiln_str_make(line.ptr + sp + 2, line.len - (size_t)sp - 2);
	switch (hex.len) {
	case 32:
		algo = UTIL_DIGEST_MD5;
		break;
	case 40:
		algo = UTIL_DIGEST_SHA1;
		break;
	case 64:
		algo = UTIL_DIGEST_SHA256;
		break;
	case 128:
		algo = UTIL_DIGEST_SHA512;
		break;
	default:
		return kiln_err_set(err, KILN_ESYNTAX, "a digest of %zu hex digits is no known one",
		                    hex.len);
	}
	if (!is_hex(hex))
		return kiln_err_set(err, KILN_ESYNTAX, "bad hex digest");
	if (!name_ok(name))
		return kiln_err_set(err, KILN_ESYNTAX, "bad file name '" KILN_STR_FMT "'",
		                    KILN_STR_ARG(name));
	return sums_put(s, name, algo, hex, err);
}

static kiln_rc parse_line(struct sources_sums *s, struct kiln_str line, struct kiln_err *err)
{
	ptrdiff_t sp = kiln_str_chr(line, ' ');

	line = kiln_str_rtrim(line);
	if (!line.len || line.ptr[0] == '#')
		return KILN_OK;
	/* A tagged line's first word is an algorithm name, never all hex of a known length. */
	if (sp > 0 && sp + 1 < (ptrdiff_t)line.len && line.ptr[sp + 1] == '(')
		return parse_tagged(s, line, err);
	return parse_plain(s, line, err);
}

kiln_rc sources_sums_parse(struct sources_sums *s, const char *name, const char *text, size_t len,
                           struct kiln_err *err)
{
	struct kiln_str rest = kiln_str_make(text, len);
	int lineno = 0;

	if (len > KILN_LIMIT_SUMFILE)
		return kiln_err_set(err, KILN_ELIMIT, "%s: larger than %zu bytes", name,
		                    KILN_LIMIT_SUMFILE);
	while (rest.len) {
		struct kiln_str line;
		bool found;

		rest = kiln_str_split(rest, '\n', &line, &found);
		lineno++;
		if (line.len > KILN_LIMIT_LINE)
			return kiln_err_set(err, KILN_ELIMIT, "%s:%d: line longer than %zu bytes",
			                    name, lineno, KILN_LIMIT_LINE);
		if (parse_line(s, line, err)) {
			kiln_err_wrap(err, "%s:%d", name, lineno);
			kiln_err_locate(err, name, lineno, 0);
			return err->code;
		}
	}
	return KILN_OK;
}

kiln_rc sources_sums_read(struct sources_sums *s, const char *path, struct kiln_err *err)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_SUMFILE);
	kiln_rc rc = util_read_file(path, KILN_LIMIT_SUMFILE, &b, err);

	if (!rc)
		rc = sources_sums_parse(s, path, b.ptr, b.len, err);
	kiln_buf_release(&b);
	return rc;
}

static void upper(const char *s, char *out, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		out[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	out[i] = '\0';
}

void sources_sums_format(const struct sources_sums *s, struct kiln_buf *out)
{
	char algo[16];
	size_t i;

	for (i = 0; i < s->n; i++) {
		upper(util_digest_name(s->v[i].algo), algo, sizeof(algo));
		kiln_buf_addf(out, "%s (%s) = %s\n", algo, s->v[i].file, s->v[i].hex);
	}
}
