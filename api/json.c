/*
 * json.c - JSON from outside, decoded against field tables (jansson), and its canonical form.
 *
 * jansson has no configurable depth limit, so the nesting depth is checked by a scan of the
 * raw bytes first: a document deeper than KILN_LIMIT_JSON_DEPTH is refused before parsing.
 */
#include "util/util.h"

#include <jansson.h>

#include "api/api.h"
#include "api/api_int.h"

#define PATH_MAX_LEN 256

/* Nesting depth of brackets outside strings; stops counting at limit + 1. */
static int json_depth(const char *p, size_t len, int limit)
{
	int depth = 0, max = 0;
	bool in_str = false;
	size_t i;

	for (i = 0; i < len && max <= limit; i++) {
		char c = p[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '[' || c == '{')
			max = ++depth > max ? depth : max;
		else if ((c == ']' || c == '}') && depth > 0)
			depth--;
	}
	return max;
}

static bool number_overflow(const json_error_t *e)
{
	return !strncmp(e->text, "too big integer", 15) ||
	       !strncmp(e->text, "real number overflow", 20);
}

/* The key whose value (or array of values) holds the number jansson stopped at: the last
 * "KEY": before pos. False when there is none or it is not plain printable ASCII (it is
 * quoted back to the client). */
static bool number_key(const char *t, size_t pos, char out[64])
{
	size_t end, start;

	while (pos > 0 && t[pos - 1] != ':')
		pos--;
	if (!pos--)
		return false;
	while (pos > 0 && (t[pos - 1] == ' ' || t[pos - 1] == '\t' || t[pos - 1] == '\n' ||
	                   t[pos - 1] == '\r'))
		pos--;
	if (!pos || t[pos - 1] != '"')
		return false;
	end = --pos;
	while (pos > 0 && t[pos - 1] != '"')
		pos--;
	start = pos;
	if (!pos || end - start >= 64 || end == start)
		return false;
	for (pos = start; pos < end; pos++)
		if (t[pos] < 0x20 || t[pos] > 0x7e || t[pos] == '\\')
			return false;
	memcpy(out, t + start, end - start);
	out[end - start] = '\0';
	return true;
}

kiln_rc api_json_load(const void *data, size_t len, void **out, struct kiln_err *err)
{
	json_error_t jerr;
	json_t *root;
	char key[64];

	*out = NULL;
	if (len > KILN_LIMIT_HTTP_BODY)
		return kiln_err_set(err, KILN_ELIMIT,
		                    "JSON body of %zu bytes is over the limit of %zu", len,
		                    (size_t)KILN_LIMIT_HTTP_BODY);
	if (json_depth(data, len, KILN_LIMIT_JSON_DEPTH) > KILN_LIMIT_JSON_DEPTH)
		return kiln_err_set(err, KILN_ELIMIT, "JSON nested deeper than %d levels",
		                    KILN_LIMIT_JSON_DEPTH);
	root = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!root && number_overflow(&jerr) && number_key(data, (size_t)jerr.position, key)) {
		kiln_err_set(err, KILN_EINVAL, "field '%s': number out of range (%s)", key,
		             jerr.text);
		kiln_err_locate(err, "body", jerr.line, jerr.column);
		return KILN_EINVAL;
	}
	if (!root) {
		kiln_err_set(err, KILN_ESYNTAX, "malformed JSON: %s", jerr.text);
		kiln_err_locate(err, "body", jerr.line, jerr.column);
		return KILN_ESYNTAX;
	}
	*out = root;
	return KILN_OK;
}

void api_json_unload(void *doc)
{
	json_decref(doc);
}

struct decoder {
	struct kiln_arena *a;
	unsigned flags;
	struct kiln_err *err;
	char path[PATH_MAX_LEN];
};

static kiln_rc decode_object(struct decoder *d, json_t *obj, const struct api_field *fields,
                             void *out);

static kiln_rc field_error(struct decoder *d, kiln_rc rc, const char *what)
{
	return kiln_err_set(d->err, rc, "field '%s': %s", d->path, what);
}

/* Push ".name" or "[i]" on the path; returns the old length to pop back to. */
static size_t path_push(struct decoder *d, const char *name, long idx)
{
	size_t old = strlen(d->path);
	int n;

	if (name)
		n = snprintf(d->path + old, sizeof(d->path) - old, "%s%s", old ? "." : "", name);
	else
		n = snprintf(d->path + old, sizeof(d->path) - old, "[%ld]", idx);
	if (n < 0 || (size_t)n >= sizeof(d->path) - old)
		d->path[sizeof(d->path) - 1] = '\0';
	return old;
}

static kiln_rc decode_str(struct decoder *d, json_t *v, int64_t max, const char **dst)
{
	const char *s;
	size_t len;

	if (!json_is_string(v))
		return field_error(d, KILN_EINVAL, "expected a string");
	s = json_string_value(v);
	len = json_string_length(v);
	if (memchr(s, '\0', len))
		return field_error(d, KILN_EINVAL, "a NUL byte is not allowed");
	if (max > 0 && len > (size_t)max) {
		kiln_err_set(d->err, KILN_ELIMIT,
		             "field '%s': %zu bytes, more than the limit of %lld", d->path, len,
		             (long long)max);
		return KILN_ELIMIT;
	}
	*dst = kiln_arena_strndup(d->a, s, len);
	return *dst ? KILN_OK : kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
}

static kiln_rc decode_int(struct decoder *d, json_t *v, const struct api_field *f, int64_t *dst)
{
	json_int_t i;

	if (!json_is_integer(v))
		return field_error(d, KILN_EINVAL, "expected an integer");
	i = json_integer_value(v);
	if (i < f->min || i > f->max) {
		kiln_err_set(d->err, KILN_EINVAL, "field '%s': %lld is out of range %lld..%lld",
		             d->path, (long long)i, (long long)f->min, (long long)f->max);
		return KILN_EINVAL;
	}
	*dst = i;
	return KILN_OK;
}

static kiln_rc decode_strlist(struct decoder *d, json_t *v, int64_t max, struct api_strlist *l)
{
	size_t i, n;
	kiln_rc rc;

	if (!json_is_array(v))
		return field_error(d, KILN_EINVAL, "expected an array of strings");
	n = json_array_size(v);
	if (n > (size_t)max)
		return field_error(d, KILN_ELIMIT, "too many items");
	l->v = kiln_arena_array(d->a, n ? n : 1, sizeof(*l->v));
	if (!l->v)
		return kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		size_t old = path_push(d, NULL, (long)i);

		rc = decode_str(d, json_array_get(v, i), KILN_LIMIT_LINE, &l->v[i]);
		d->path[old] = '\0';
		if (rc)
			return rc;
	}
	l->n = n;
	return KILN_OK;
}

static kiln_rc decode_strmap(struct decoder *d, json_t *v, int64_t max, struct api_strmap *m)
{
	const char *key;
	json_t *val;
	size_t n, i = 0;
	kiln_rc rc;

	if (!json_is_object(v))
		return field_error(d, KILN_EINVAL, "expected an object of strings");
	n = json_object_size(v);
	if (n > (size_t)max)
		return field_error(d, KILN_ELIMIT, "too many keys");
	m->keys = kiln_arena_array(d->a, n ? n : 1, sizeof(*m->keys));
	m->values = kiln_arena_array(d->a, n ? n : 1, sizeof(*m->values));
	if (!m->keys || !m->values)
		return kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	json_object_foreach(v, key, val)
	{
		size_t old = path_push(d, key, 0);

		rc = decode_str(d, val, KILN_LIMIT_LINE, &m->values[i]);
		d->path[old] = '\0';
		if (rc)
			return rc;
		m->keys[i] = kiln_arena_strdup(d->a, key);
		if (!m->keys[i++])
			return kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	}
	m->n = n;
	return KILN_OK;
}

static kiln_rc decode_objlist(struct decoder *d, json_t *v, const struct api_field *f,
                              struct api_objlist *l)
{
	size_t i, n;
	kiln_rc rc;

	if (!json_is_array(v))
		return field_error(d, KILN_EINVAL, "expected an array of objects");
	n = json_array_size(v);
	if (n > (size_t)f->max)
		return field_error(d, KILN_ELIMIT, "too many items");
	l->v = kiln_arena_array(d->a, n ? n : 1, f->elem_size);
	if (!l->v)
		return kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	memset(l->v, 0, (n ? n : 1) * f->elem_size);
	for (i = 0; i < n; i++) {
		size_t old = path_push(d, NULL, (long)i);

		rc =
		    decode_object(d, json_array_get(v, i), f->sub, (char *)l->v + i * f->elem_size);
		d->path[old] = '\0';
		if (rc)
			return rc;
	}
	l->n = n;
	return KILN_OK;
}

static kiln_rc decode_raw(struct decoder *d, json_t *v, int64_t max, const char **dst)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (!s)
		return kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
	if (max > 0 && strlen(s) > (size_t)max) {
		free(s);
		return field_error(d, KILN_ELIMIT, "value too large");
	}
	*dst = kiln_arena_strdup(d->a, s);
	free(s);
	return *dst ? KILN_OK : kiln_err_set(d->err, KILN_ENOMEM, "out of memory");
}

static kiln_rc decode_value(struct decoder *d, json_t *v, const struct api_field *f, void *out)
{
	void *dst = (char *)out + f->off;

	switch (f->type) {
	case API_F_STR:
		return decode_str(d, v, f->max, dst);
	case API_F_INT:
		return decode_int(d, v, f, dst);
	case API_F_BOOL:
		if (!json_is_boolean(v))
			return field_error(d, KILN_EINVAL, "expected true or false");
		*(bool *)dst = json_is_true(v);
		return KILN_OK;
	case API_F_STRLIST:
		return decode_strlist(d, v, f->max, dst);
	case API_F_STRMAP:
		return decode_strmap(d, v, f->max, dst);
	case API_F_OBJ:
		return decode_object(d, v, f->sub, dst);
	case API_F_OBJLIST:
		return decode_objlist(d, v, f, dst);
	case API_F_RAW:
		return decode_raw(d, v, f->max, dst);
	}
	return field_error(d, KILN_EINVAL, "unknown field type");
}

static const struct api_field *field_find(const struct api_field *fields, const char *name)
{
	for (; fields->name; fields++)
		if (!strcmp(fields->name, name))
			return fields;
	return NULL;
}

static kiln_rc check_unknown(struct decoder *d, json_t *obj, const struct api_field *fields)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val)
	{
		(void)val;
		if (!field_find(fields, key)) {
			path_push(d, key, 0);
			return field_error(d, KILN_EINVAL, "unknown field");
		}
	}
	return KILN_OK;
}

static kiln_rc decode_object(struct decoder *d, json_t *obj, const struct api_field *fields,
                             void *out)
{
	const struct api_field *f;
	kiln_rc rc;

	if (!json_is_object(obj))
		return d->path[0] ? field_error(d, KILN_EINVAL, "expected an object")
		                  : kiln_err_set(d->err, KILN_EINVAL, "expected a JSON object");
	if (d->flags & API_DECODE_STRICT) {
		rc = check_unknown(d, obj, fields);
		if (rc)
			return rc;
	}
	for (f = fields; f->name; f++) {
		json_t *v = json_object_get(obj, f->name);
		size_t old = path_push(d, f->name, 0);

		if (!v || json_is_null(v)) {
			rc = f->required ? field_error(d, KILN_EINVAL, "required") : KILN_OK;
		} else {
			rc = decode_value(d, v, f, out);
			if (!rc && f->present_off)
				*(bool *)((char *)out + f->present_off) = true;
		}
		d->path[old] = '\0';
		if (rc)
			return rc;
	}
	return KILN_OK;
}

kiln_rc api_json_decode(const void *data, size_t len, const struct api_field *fields,
                        unsigned flags, void *out, struct kiln_arena *a, struct kiln_err *err)
{
	struct decoder d = {.a = a, .flags = flags, .err = err};
	void *root = NULL;
	kiln_rc rc;

	rc = api_json_load(data, len, &root, err);
	if (rc)
		return rc;
	rc = decode_object(&d, root, fields, out);
	api_json_unload(root);
	return rc;
}

kiln_rc api_json_canonical(const void *data, size_t len, struct kiln_buf *out, struct kiln_err *err)
{
	void *root = NULL;
	char *s;
	kiln_rc rc;

	rc = api_json_load(data, len, &root, err);
	if (rc)
		return rc;
	s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	api_json_unload(root);
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	kiln_buf_addstr(out, s);
	free(s);
	return kiln_buf_finish(out, err);
}
