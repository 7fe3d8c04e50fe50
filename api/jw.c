/*
 * jw.c - a small streaming JSON writer over a kiln_buf (responses are built this way rather
 * than through jansson trees: no allocation per value, output in one buffer).
 */
#include "util/util.h"

#include "api/api.h"

void api_jw_init(struct api_jw *w, struct kiln_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

/* Comma handling before a value or key at the current level. */
static void before_value(struct api_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && w->in_obj[w->depth - 1])
		KILN_BUG("JSON writer: a value inside an object needs a key");
	if (w->depth > 0 && !w->first[w->depth - 1])
		kiln_buf_addch(w->out, ',');
	if (w->depth > 0)
		w->first[w->depth - 1] = false;
}

static void open_level(struct api_jw *w, char c, bool obj)
{
	before_value(w);
	if (w->depth >= API_JW_DEPTH)
		KILN_BUG("JSON writer: nested too deep");
	kiln_buf_addch(w->out, c);
	w->first[w->depth] = true;
	w->in_obj[w->depth] = obj;
	w->depth++;
}

void api_jw_obj(struct api_jw *w)
{
	open_level(w, '{', true);
}

void api_jw_arr(struct api_jw *w)
{
	open_level(w, '[', false);
}

void api_jw_end(struct api_jw *w)
{
	if (w->depth <= 0 || w->after_key)
		KILN_BUG("JSON writer: unbalanced end");
	w->depth--;
	kiln_buf_addch(w->out, w->in_obj[w->depth] ? '}' : ']');
}

void api_jw_key(struct api_jw *w, const char *key)
{
	if (w->depth <= 0 || !w->in_obj[w->depth - 1] || w->after_key)
		KILN_BUG("JSON writer: a key outside an object");
	if (!w->first[w->depth - 1])
		kiln_buf_addch(w->out, ',');
	w->first[w->depth - 1] = false;
	api_json_quote(w->out, key, strlen(key));
	kiln_buf_addch(w->out, ':');
	w->after_key = true;
}

void api_json_quote(struct kiln_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	kiln_buf_addch(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			kiln_buf_addch(out, '\\');
			kiln_buf_addch(out, (char)c);
		} else if (c == '\n') {
			kiln_buf_addstr(out, "\\n");
		} else if (c == '\t') {
			kiln_buf_addstr(out, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};

			kiln_buf_addstr(out, u);
		} else {
			kiln_buf_addch(out, (char)c);
		}
	}
	kiln_buf_addch(out, '"');
}

void api_jw_strn(struct api_jw *w, const char *s, size_t len)
{
	before_value(w);
	api_json_quote(w->out, s, len);
}

void api_jw_str(struct api_jw *w, const char *s)
{
	if (!s) {
		api_jw_null(w);
		return;
	}
	api_jw_strn(w, s, strlen(s));
}

void api_jw_int(struct api_jw *w, int64_t v)
{
	char d[UTIL_INT_MAX_TEXT];

	before_value(w);
	/* not printf: a job's JSON has a dozen integers and this is on every GET */
	kiln_buf_add(w->out, d, util_fmt_int(d, (long long)v));
}

void api_jw_bool(struct api_jw *w, bool v)
{
	before_value(w);
	kiln_buf_addstr(w->out, v ? "true" : "false");
}

void api_jw_null(struct api_jw *w)
{
	before_value(w);
	kiln_buf_addstr(w->out, "null");
}

void api_jw_raw(struct api_jw *w, const char *json)
{
	before_value(w);
	kiln_buf_addstr(w->out, json && *json ? json : "null");
}

void api_jw_kstr(struct api_jw *w, const char *key, const char *s)
{
	api_jw_key(w, key);
	api_jw_str(w, s);
}

void api_jw_kint(struct api_jw *w, const char *key, int64_t v)
{
	api_jw_key(w, key);
	api_jw_int(w, v);
}

void api_jw_kbool(struct api_jw *w, const char *key, bool v)
{
	api_jw_key(w, key);
	api_jw_bool(w, v);
}
