/*
 * log.c - leveled logging to stderr, plain (rpm-like prefixes) or JSON lines.
 *
 * The configuration below is the process-wide logging registry documented in util.h: set
 * once by cli/ before threads start, read-only afterwards.
 */
#include "util/util.h"

#include <unistd.h>

static enum kiln_log_level log_level = KILN_LOG_INFO;
static unsigned log_flags;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void kiln_log_setup(enum kiln_log_level level, unsigned flags)
{
	log_level = level;
	log_flags = flags;
}

bool kiln_log_enabled(enum kiln_log_level level)
{
	return level <= log_level;
}

kiln_rc kiln_log_level_parse(const char *s, enum kiln_log_level *out)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(level_names); i++) {
		if (!strcmp(s, level_names[i])) {
			*out = (enum kiln_log_level)i;
			return KILN_OK;
		}
	}
	if (!strcmp(s, "warning")) {
		*out = KILN_LOG_WARN;
		return KILN_OK;
	}
	return KILN_EINVAL;
}

static void json_escape(struct kiln_buf *b, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			kiln_buf_addf(b, "\\%c", c);
		else if (c == '\n')
			kiln_buf_addstr(b, "\\n");
		else if (c == '\t')
			kiln_buf_addstr(b, "\\t");
		else if (c < 0x20)
			kiln_buf_addf(b, "\\u%04x", c);
		else
			kiln_buf_addch(b, (char)c);
	}
}

static void log_emit(enum kiln_log_level level, const char *msg, size_t len)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_LOG_MSG * 2);
	struct kiln_err ignored = KILN_ERR_INIT;

	if (log_flags & KILN_LOG_F_JSON) {
		kiln_buf_addf(&b, "{\"ts\":%" PRId64 ",\"level\":\"%s\",\"msg\":\"",
		              util_clock_wall_ms(), level_names[level]);
		json_escape(&b, msg, len);
		kiln_buf_addstr(&b, "\"}\n");
	} else {
		if (level == KILN_LOG_ERROR)
			kiln_buf_addstr(&b, "error: ");
		else if (level == KILN_LOG_WARN)
			kiln_buf_addstr(&b, "warning: ");
		kiln_buf_add(&b, msg, len);
		kiln_buf_addch(&b, '\n');
	}
	/* One write(2) keeps lines from different threads whole. */
	if (!b.err && util_write_all(STDERR_FILENO, b.ptr, b.len, &ignored))
		(void)0;
	kiln_buf_release(&b);
}

void kiln_log(enum kiln_log_level level, const char *fmt, ...)
{
	char msg[KILN_LIMIT_LOG_MSG];
	va_list ap;
	int n;

	if (!kiln_log_enabled(level))
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	log_emit(level, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

void kiln_log_err(enum kiln_log_level level, const struct kiln_err *err)
{
	char msg[KILN_ERR_MSG_MAX + KILN_ERR_INPUT_MAX + 32];

	kiln_err_format(err, msg, sizeof(msg));
	if (kiln_log_enabled(KILN_LOG_DEBUG) && err && err->src_file)
		kiln_log(level, "%s (at %s:%d)", msg, err->src_file, err->src_line);
	else
		kiln_log(level, "%s", msg);
}

void util_bug_at(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kiln: BUG at %s:%d: %s\n", file, line, msg);
	abort();
}
