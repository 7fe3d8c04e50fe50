/*
 * err.c - return-code words and struct kiln_err (first error wins, context prepended).
 */
#include "util/util.h"

static const char *const rc_words[] = {
    [KILN_OK] = "success",
    [KILN_ENOMEM] = "out of memory",
    [KILN_EIO] = "i/o error",
    [KILN_ESYNTAX] = "syntax error",
    [KILN_ELIMIT] = "limit exceeded",
    [KILN_ENOTFOUND] = "not found",
    [KILN_ESIG] = "signature error",
    [KILN_EPRIV] = "not permitted",
    [KILN_EINVAL] = "invalid argument",
    [KILN_EEXIST] = "already exists",
    [KILN_EFORMAT] = "malformed input",
    [KILN_EDIGEST] = "digest mismatch",
    [KILN_ENET] = "network error",
    [KILN_ETIMEOUT] = "timed out",
    [KILN_ECANCEL] = "cancelled",
    [KILN_EUNSUPP] = "not supported",
    [KILN_EBUILD] = "build failed",
    [KILN_EAUTH] = "not authorised",
    [KILN_ECONFLICT] = "conflict",
    [KILN_EMACRO] = "macro error",
};

const char *kiln_rc_str(kiln_rc rc)
{
	if ((size_t)rc < KILN_ARRAY_SIZE(rc_words) && rc_words[rc])
		return rc_words[rc];
	return "unknown error";
}

KILN_PRINTF(5, 0)
static void err_vset(struct kiln_err *err, kiln_rc rc, const char *file, int line, const char *fmt,
                     va_list ap)
{
	err->code = rc;
	err->src_file = file;
	err->src_line = line;
	if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) < 0)
		err->msg[0] = '\0';
}

kiln_rc kiln_err_set_at(struct kiln_err *err, kiln_rc rc, const char *file, int line,
                        const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != KILN_OK)
		return rc;
	va_start(ap, fmt);
	err_vset(err, rc, file, line, fmt, ap);
	va_end(ap);
	return rc;
}

kiln_rc kiln_err_sys_at(struct kiln_err *err, kiln_rc rc, const char *file, int line,
                        const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (!err || err->code != KILN_OK) {
		errno = saved;
		return rc;
	}
	va_start(ap, fmt);
	err_vset(err, rc, file, line, fmt, ap);
	va_end(ap);
	err->sys_errno = saved;
	n = strlen(err->msg);
	if (saved && n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(saved));
	errno = saved;
	return rc;
}

void kiln_err_wrap(struct kiln_err *err, const char *fmt, ...)
{
	char prefix[KILN_ERR_MSG_MAX];
	char joined[KILN_ERR_MSG_MAX];
	va_list ap;
	int n;

	if (!err || err->code == KILN_OK)
		return;
	va_start(ap, fmt);
	n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* Truncation keeps the outer context; the root cause is what gets cut, which is rare
	 * with 512 bytes and still leaves the code and location intact. */
	if (snprintf(joined, sizeof(joined), "%s: %s", prefix, err->msg) < 0)
		return;
	memcpy(err->msg, joined, sizeof(err->msg));
}

void kiln_err_locate(struct kiln_err *err, const char *input, int line, int col)
{
	if (!err)
		return;
	if (input && !err->input[0])
		snprintf(err->input, sizeof(err->input), "%s", input);
	if (!err->line) {
		err->line = line;
		err->col = col;
	}
}

void kiln_err_clear(struct kiln_err *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

const char *kiln_err_format(const struct kiln_err *err, char *dst, size_t size)
{
	int n = 0;

	if (!size)
		return dst;
	dst[0] = '\0';
	if (!err)
		return dst;
	if (err->input[0] && err->line && err->col)
		n = snprintf(dst, size, "%s:%d:%d: ", err->input, err->line, err->col);
	else if (err->input[0] && err->line)
		n = snprintf(dst, size, "%s:%d: ", err->input, err->line);
	else if (err->input[0])
		n = snprintf(dst, size, "%s: ", err->input);
	else if (err->line)
		n = snprintf(dst, size, "line %d: ", err->line);
	if (n < 0 || (size_t)n >= size)
		n = 0;
	snprintf(dst + n, size - (size_t)n, "%s", err->msg[0] ? err->msg : kiln_rc_str(err->code));
	return dst;
}

void kiln_err_merge(struct kiln_err *dst, const struct kiln_err *src)
{
	if (!dst || !src || dst->code != KILN_OK || src->code == KILN_OK)
		return;
	*dst = *src;
}
