/*
 * buf.c - struct kiln_buf: a bounded, growable, always NUL-terminated byte buffer.
 */
#include "util/util.h"

char kiln_buf_empty[1];

void kiln_buf_init(struct kiln_buf *b, size_t max)
{
	b->ptr = kiln_buf_empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = KILN_OK;
}

void kiln_buf_release(struct kiln_buf *b)
{
	if (!b)
		return;
	if (b->cap)
		free(b->ptr);
	kiln_buf_init(b, b->max);
}

void kiln_buf_reset(struct kiln_buf *b)
{
	b->len = 0;
	/* Not kiln_buf_empty: every thread's unused buffers share it, and it stays "". */
	if (b->cap)
		b->ptr[0] = '\0';
	b->err = KILN_OK;
}

bool kiln_buf_grow(struct kiln_buf *b, size_t extra)
{
	size_t need;
	size_t cap;
	char *p;

	if (b->err)
		return false;
	if (!util_add_ok(b->len, extra, &need) || need > b->max) {
		b->err = KILN_ELIMIT;
		return false;
	}
	need++; /* the NUL */
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need) {
		if (!util_mul_ok(cap, 2, &cap)) {
			cap = need;
			break;
		}
	}
	if (b->max < SIZE_MAX && cap > b->max + 1)
		cap = b->max + 1;
	p = kiln_realloc(b->cap ? b->ptr : NULL, cap);
	if (!p) {
		b->err = KILN_ENOMEM;
		return false;
	}
	if (!b->cap)
		p[0] = '\0';
	b->ptr = p;
	b->cap = cap;
	return true;
}

void kiln_buf_addstr(struct kiln_buf *b, const char *s)
{
	kiln_buf_add(b, s, strlen(s));
}

void kiln_buf_add_shquoted(struct kiln_buf *b, const char *s)
{
	kiln_buf_addch(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			kiln_buf_addstr(b, "'\\''");
		else
			kiln_buf_addch(b, *s);
	}
	kiln_buf_addch(b, '\'');
}

void kiln_buf_vaddf(struct kiln_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (b->err)
		return;
	va_copy(cp, ap);
	n = vsnprintf(b->cap ? b->ptr + b->len : NULL, b->cap ? b->cap - b->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		if (b->cap)
			b->ptr[b->len] = '\0';
		return;
	}
	if ((size_t)n < (b->cap ? b->cap - b->len : 0)) {
		b->len += (size_t)n;
		return;
	}
	if (!kiln_buf_grow(b, (size_t)n)) {
		if (b->cap)
			b->ptr[b->len] = '\0';
		return;
	}
	vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, ap);
	b->len += (size_t)n;
}

void kiln_buf_addf(struct kiln_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kiln_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void kiln_buf_insert(struct kiln_buf *b, size_t pos, const void *ptr, size_t len)
{
	if (pos > b->len)
		pos = b->len;
	if (!len || !kiln_buf_grow(b, len))
		return;
	memmove(b->ptr + pos + len, b->ptr + pos, b->len - pos + 1);
	memcpy(b->ptr + pos, ptr, len);
	b->len += len;
}

void kiln_buf_remove(struct kiln_buf *b, size_t pos, size_t len)
{
	if (pos >= b->len)
		return;
	if (len > b->len - pos)
		len = b->len - pos;
	memmove(b->ptr + pos, b->ptr + pos + len, b->len - pos - len + 1);
	b->len -= len;
}

void kiln_buf_truncate(struct kiln_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->ptr[len] = '\0';
}

void kiln_buf_rtrim(struct kiln_buf *b, const char *set)
{
	while (b->len && strchr(set, b->ptr[b->len - 1]) && b->ptr[b->len - 1])
		b->len--;
	if (b->cap)
		b->ptr[b->len] = '\0';
}

kiln_rc kiln_buf_finish(struct kiln_buf *b, struct kiln_err *err)
{
	kiln_rc rc = b->err;

	if (rc == KILN_ENOMEM)
		kiln_err_set(err, rc, "out of memory");
	else if (rc == KILN_ELIMIT)
		kiln_err_set(err, rc, "buffer would exceed its limit of %zu bytes", b->max);
	return rc;
}

char *kiln_buf_take(struct kiln_buf *b, size_t *len)
{
	char *p;

	if (b->err)
		return NULL;
	if (!b->cap && !kiln_buf_grow(b, 0))
		return NULL;
	p = b->ptr;
	if (len)
		*len = b->len;
	kiln_buf_init(b, b->max);
	return p;
}
