/*
 * passwd.c - user and group names of the image: its /etc/passwd and /etc/group read as
 * text (name:password:id:...), never through the host's NSS, so a name means what the
 * image says it means.
 */
#include "util/util.h"

#include "roots/install_int.h"

#define IDS_MAX_LINES 65536
#define IDS_MAX_LINE (64 * KILN_KIB)

/* One "name:x:id:..." line: false when it is not one (skipped, as getpwnam skips it). */
static bool parse_line(const char *s, size_t len, struct kiln_str *name, uint32_t *id)
{
	const char *c1 = memchr(s, ':', len), *c2, *c3;
	uint64_t v;

	if (!c1 || c1 == s)
		return false;
	c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s));
	if (!c2)
		return false;
	c3 = memchr(c2 + 1, ':', len - (size_t)(c2 + 1 - s));
	if (!c3)
		c3 = s + len;
	if (util_parse_u64(c2 + 1, (size_t)(c3 - c2 - 1), 10, UINT32_MAX, &v, NULL))
		return false;
	name->ptr = s;
	name->len = (size_t)(c1 - s);
	*id = (uint32_t)v;
	return true;
}

kiln_rc roots_ids_parse(struct roots_ids *ids, const char *text, size_t len, struct kiln_err *err)
{
	size_t lines = 0, pos = 0, cap = 0;

	memset(ids, 0, sizeof(*ids));
	kiln_arena_init(&ids->arena, 64 * KILN_MIB);
	for (pos = 0; pos < len; lines++) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - text - pos) : len - pos;

		if (lines >= IDS_MAX_LINES)
			return kiln_err_set(err, KILN_ELIMIT, "more than %d lines", IDS_MAX_LINES);
		if (l > IDS_MAX_LINE)
			return kiln_err_set(err, KILN_ELIMIT, "line %zu: longer than %d bytes",
			                    lines + 1, (int)IDS_MAX_LINE);
		pos += l + 1;
	}
	cap = lines ? lines : 1;
	ids->names = kiln_arena_array(&ids->arena, cap, sizeof(*ids->names));
	ids->ids = kiln_arena_array(&ids->arena, cap, sizeof(*ids->ids));
	if (!ids->names || !ids->ids)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - text - pos) : len - pos;
		struct kiln_str name;
		uint32_t id;

		if (parse_line(text + pos, l, &name, &id) && !memchr(name.ptr, '\0', name.len)) {
			ids->names[ids->n] = kiln_arena_strndup(&ids->arena, name.ptr, name.len);
			if (!ids->names[ids->n])
				return kiln_err_set(err, KILN_ENOMEM, "out of memory");
			ids->ids[ids->n++] = id;
		}
		pos += l + 1;
	}
	return KILN_OK;
}

bool roots_ids_find(const struct roots_ids *ids, const char *name, uint32_t *id)
{
	size_t i;

	/* The first entry wins, as with getpwnam over files. Linear: a few dozen accounts. */
	for (i = 0; i < ids->n; i++) {
		if (!strcmp(ids->names[i], name)) {
			*id = ids->ids[i];
			return true;
		}
	}
	return false;
}

void roots_ids_release(struct roots_ids *ids)
{
	if (!ids)
		return;
	kiln_arena_release(&ids->arena);
	memset(ids, 0, sizeof(*ids));
}
