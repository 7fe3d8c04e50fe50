/*
 * file.c - macro files (rpm-macrofile(5)) and macro file path lists.
 *
 * A logical line continues while it ends in a backslash or a %{, %( or %[ is open (an
 * empty line ends it only when no bracket is open). Lines whose first non-blank character is not
 * '%' are ignored; the rest are definitions read like %define.
 */
#include "util/util.h"

#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro/macro_int.h"

struct line_state {
	int bc, pc, xc;
};

/* Track open %{ %( %[ over one physical line [p, q). */
/* The characters scan_brackets looks at. */
static const bool bracket_special[256] = {
    ['\\'] = true, ['%'] = true, ['{'] = true, ['}'] = true,
    ['('] = true,  [')'] = true, ['['] = true, [']'] = true,
};

static void scan_brackets(struct line_state *st, const char *p, const char *q)
{
	for (; p < q; p++) {
		while (p < q && !bracket_special[(unsigned char)*p])
			p++;
		if (p == q)
			break;
		switch (*p) {
		case '\\':
			if (p + 1 < q)
				p++;
			break;
		case '%':
			if (p + 1 < q) {
				char n = p[1];

				if (n == '{' || n == '(' || n == '[' || n == '%') {
					p++;
					st->bc += n == '{';
					st->pc += n == '(';
					st->xc += n == '[';
				}
			}
			break;
		case '{':
			st->bc += st->bc > 0;
			break;
		case '}':
			st->bc -= st->bc > 0;
			break;
		case '(':
			st->pc += st->pc > 0;
			break;
		case ')':
			st->pc -= st->pc > 0;
			break;
		case '[':
			st->xc += st->xc > 0;
			break;
		case ']':
			st->xc -= st->xc > 0;
			break;
		default:
			break;
		}
	}
}

/* One physical line from p: its text [p, *q) without the newline and carriage returns
 * before it; returns where the next one starts. */
static const char *physical_line(const char *p, const char *end, const char **q)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *e = nl ? nl : end;

	while (e > p && e[-1] == '\r')
		e--;
	*q = e;
	return nl ? nl + 1 : end;
}

/* Read one logical line from [*pos, end): its physical lines joined by '\n'. Returns the
 * physical lines used (0 at end of input) and the text in *text, *len: the input itself
 * when it needed no change (no carriage return dropped), else a copy built in line.
 * Returns -1, consuming nothing, when the line may go on past end and more input is to
 * come (!eof). */
static int read_logical(const char **pos, const char *end, bool eof, struct kiln_buf *line,
                        const char **text, size_t *len)
{
	struct line_state st = {0, 0, 0};
	const char *first = *pos;
	const char *p = *pos;
	const char *q = p;
	bool changed = false;
	bool ended = false;
	int nlines = 0;
	int i;

	while (p < end) {
		const char *start = p;

		nlines++;
		p = physical_line(p, end, &q);
		changed |= q != p - (p > start && p[-1] == '\n' ? 1 : 0);
		scan_brackets(&st, start, q);
		/* An open %{ %( %[ keeps reading, even across empty lines; otherwise a line
		 * ends unless its last character is a backslash. */
		if ((q == start || q[-1] != '\\') && !st.bc && !st.pc && !st.xc) {
			ended = p[-1] == '\n';
			break;
		}
	}
	if (!ended && !eof)
		return -1;
	*pos = p;
	if (!changed) {
		*text = first;
		*len = (size_t)(q - first);
		return nlines;
	}
	kiln_buf_reset(line);
	for (p = first, i = 0; i < nlines; i++) {
		const char *start = p;

		p = physical_line(p, end, &q);
		if (i)
			kiln_buf_addch(line, '\n');
		kiln_buf_add(line, start, (size_t)(q - start));
	}
	*text = line->ptr;
	*len = line->len;
	return nlines;
}

/* A macro file is read in chunks into a window that holds the text not yet parsed, so
 * loading touches the same few pages whatever the file's size: reading a 2 MB file whole
 * cost a page fault per 4 KiB of it, which on a virtual machine is most of the load's
 * time. The chunk keeps the window under glibc's mmap threshold, so one file's window is
 * the next one's. */
#define FILE_CHUNK (32 * KILN_KIB)

struct file_window {
	int fd;
	struct kiln_buf buf; /* [start, buf.len) not parsed yet */
	size_t start;
	size_t total; /* bytes read, against KILN_LIMIT_TEXT_FILE */
	bool eof;
};

static kiln_rc window_open(struct file_window *w, const char *path, struct kiln_err *err)
{
	struct stat sb;

	w->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (w->fd < 0) {
		if (errno == ENOENT)
			return kiln_err_sys(err, KILN_ENOTFOUND, "cannot open '%s'", path);
		return kiln_err_sys(err, KILN_EIO, "cannot open '%s'", path);
	}
	/* A file over the limit fails before any of it is defined, as when read whole. */
	if (!fstat(w->fd, &sb) && S_ISREG(sb.st_mode) &&
	    (uintmax_t)sb.st_size > KILN_LIMIT_TEXT_FILE)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "cannot read '%s': input exceeds the limit of %zu bytes", path,
		                    (size_t)KILN_LIMIT_TEXT_FILE);
	return KILN_OK;
}

/* Move the unparsed text to the front and read behind it, once. */
static kiln_rc window_fill(struct file_window *w, const char *path, struct kiln_err *err)
{
	struct kiln_buf *b = &w->buf;
	ssize_t n;

	if (w->start) {
		memmove(b->ptr, b->ptr + w->start, b->len - w->start);
		b->len -= w->start;
		b->ptr[b->len] = '\0';
		w->start = 0;
	}
	if (!kiln_buf_grow(b, FILE_CHUNK)) {
		kiln_rc rc = kiln_buf_finish(b, err);

		kiln_err_wrap(err, "cannot read '%s'", path);
		return rc;
	}
	do {
		n = read(w->fd, b->ptr + b->len, b->cap - b->len - 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot read '%s': read failed", path);
	w->eof = !n;
	w->total += (size_t)n;
	if (w->total > KILN_LIMIT_TEXT_FILE)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "cannot read '%s': input exceeds the limit of %zu bytes", path,
		                    (size_t)KILN_LIMIT_TEXT_FILE);
	b->len += (size_t)n;
	b->ptr[b->len] = '\0';
	return KILN_OK;
}

/* The next logical line, reading more of the file while it may go on. Returns the
 * physical lines used (0 at the end of the file) in *n. */
static kiln_rc window_line(struct file_window *w, const char *path, struct kiln_buf *line,
                           const char **text, size_t *len, int *n, struct kiln_err *err)
{
	for (;;) {
		const char *pos = w->buf.ptr + w->start;
		kiln_rc rc;

		*n = read_logical(&pos, w->buf.ptr + w->buf.len, w->eof, line, text, len);
		if (*n >= 0) {
			w->start = (size_t)(pos - w->buf.ptr);
			return KILN_OK;
		}
		rc = window_fill(w, path, err);
		if (rc)
			return rc;
	}
}

static void load_report(struct macro_ctx *ctx, const struct kiln_err *err)
{
	macro_diag(ctx, KILN_LOG_ERROR, "%s", err->msg);
}

/* One logical line of a macro file: a definition when it starts with '%'. Returns false
 * when the definition failed (reported here). */
static bool load_line(struct macro_ctx *ctx, const char *ltext, size_t llen, int level)
{
	struct kiln_err lerr = KILN_ERR_INIT;
	struct kiln_buf sink = KILN_BUF_INIT(ctx->max_expansion);
	struct mbuf mb = {
	    .ctx = ctx, .out = &sink, .err = &lerr, .trace = ctx->trace, .depth0 = ctx->trace_base};
	const char *s = ltext;
	const char *lend = ltext + llen;

	ctx->active++;
	macro_parse_define(&mb, s, (size_t)(lend - s), level, false, "%define");
	ctx->active--;
	if (mb.error)
		load_report(ctx, &lerr);
	kiln_buf_release(&sink);
	return !mb.error;
}

kiln_rc macro_load_file(struct macro_ctx *ctx, const char *path, int level, struct kiln_err *err)
{
	struct file_window w = {.fd = -1, .buf = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE)};
	struct kiln_buf line = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	const char *ltext;
	size_t llen;
	int lineno = 0;
	int failed = 0;
	int n;
	kiln_rc rc;

	rc = window_open(&w, path, err);
	if (rc)
		goto out;
	rc = macro_push(ctx, "__file_name", 11, NULL, path, strlen(path), level, MACRO_DEF_LITERAL,
	                err);
	if (rc)
		goto out;
	while (!(rc = window_line(&w, path, &line, &ltext, &llen, &n, err)) && n > 0) {
		const char *s = ltext;
		const char *lend = ltext + llen;
		char num[24];

		lineno += n;
		while (s < lend && (*s == ' ' || *s == '\t'))
			s++;
		if (s == lend || *s != '%')
			continue;
		util_fmt_int(num, lineno);
		rc = macro_push(ctx, "__file_lineno", 13, NULL, num, strlen(num), level,
		                MACRO_DEF_LITERAL, err);
		if (rc)
			break;
		failed += !load_line(ctx, s + 1, (size_t)(lend - s - 1), level);
		macro_pop_free(&ctx->table, macro_table_find(&ctx->table, "__file_lineno", 13));
	}
	macro_pop(ctx, macro_table_find(&ctx->table, "__file_name", 11));
	if (!ctx->active)
		macro_graveyard_empty(ctx);
	if (!rc && failed)
		rc = kiln_err_set(err, KILN_ESYNTAX, "%d definition(s) in '%s' failed", failed,
		                  path);
out:
	util_close(w.fd);
	kiln_buf_release(&w.buf);
	kiln_buf_release(&line);
	return rc;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s);
	size_t b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static void load_one_pattern(struct macro_ctx *ctx, const char *pattern)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	glob_t g = {0};
	size_t i;

	/* GLOB_NOCHECK keeps a literal path; GLOB_TILDE expands ~ as rpm's rpmGlob does. */
	if (glob(pattern, GLOB_NOCHECK | GLOB_TILDE | GLOB_BRACE, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];

		if (has_suffix(p, ".rpmnew") || has_suffix(p, ".rpmsave") ||
		    has_suffix(p, ".rpmorig") || !util_exists(p) || util_is_dir(p))
			continue;
		kiln_err_clear(&ignored);
		/* Errors inside a file were reported line by line already. */
		(void)!macro_load_file(ctx, p, MACRO_LEVEL_FILE, &ignored);
	}
	globfree(&g);
}

kiln_rc macro_load_path(struct macro_ctx *ctx, const char *pathlist, struct kiln_err *err)
{
	struct kiln_buf expanded = KILN_BUF_INIT(KILN_LIMIT_TEXT_FILE);
	char *p;
	kiln_rc rc;

	/* The whole list is expanded once, so %{_target} and friends work in it. */
	rc = macro_expand(ctx, pathlist, strlen(pathlist), &expanded, err);
	if (rc)
		goto out;
	for (p = expanded.ptr; *p;) {
		char *colon = strchr(p, ':');

		if (colon)
			*colon = '\0';
		if (*p)
			load_one_pattern(ctx, p);
		if (!colon)
			break;
		p = colon + 1;
	}
out:
	kiln_buf_release(&expanded);
	return rc;
}
