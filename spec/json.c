/*
 * json.c - the parsed spec as JSON (`kiln spec --json`), for CI tools and the API.
 *
 * The layout is kiln's own and documented in docs/spec-json.md; it is stable: fields are
 * only ever added. jansson keeps object keys in insertion order, so the output is
 * deterministic.
 */
#include "util/util.h"

#include <jansson.h>

#include "spec/spec.h"

/* jansson reports allocation failure as NULL; one flag per document keeps the builders
 * small (a failed json_*_set_new() frees its value). */
struct jdoc {
	bool oom;
};

/* The length of the well-formed UTF-8 sequence at s (no overlong forms, no surrogates,
 * nothing above U+10FFFF), 0 when there is none. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07u;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return n;
}

/* A copy of s with every byte that starts no UTF-8 sequence replaced by U+FFFD: spec text
 * need not be UTF-8 (rpm does not care), JSON must be. Caller frees. */
static char *utf8_fix(const char *s)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_MACRO_EXPANSION);
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_seq(p);

		if (n) {
			kiln_buf_add(&b, (const char *)p, n);
			p += n;
		} else {
			kiln_buf_addstr(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	if (b.err) {
		kiln_buf_release(&b);
		return NULL;
	}
	return kiln_buf_take(&b, NULL);
}

static json_t *jstr(struct jdoc *d, const char *s)
{
	json_t *v;

	if (!s) {
		v = json_null();
	} else {
		/* jansson refuses strings that are not UTF-8. */
		char *fixed = NULL;
		const unsigned char *p = (const unsigned char *)s;
		size_t n;

		while (*p && (n = utf8_seq(p)))
			p += n;
		if (*p)
			fixed = utf8_fix(s);
		v = *p && !fixed ? NULL : json_string(fixed ? fixed : s);
		free(fixed);
	}
	if (!v)
		d->oom = true;
	return v;
}

static void jset(struct jdoc *d, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v))
		d->oom = true;
}

static void jpush(struct jdoc *d, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		d->oom = true;
}

static json_t *jobj(struct jdoc *d)
{
	json_t *v = json_object();

	if (!v)
		d->oom = true;
	return v;
}

static json_t *jarr(struct jdoc *d)
{
	json_t *v = json_array();

	if (!v)
		d->oom = true;
	return v;
}

static json_t *jstrv(struct jdoc *d, const char *const *v, size_t n)
{
	json_t *a = jarr(d);
	size_t i;

	for (i = 0; a && i < n; i++)
		jpush(d, a, jstr(d, v[i]));
	return a;
}

/* ---------------------------------------------------------------------------------------- */
/* Tags. */

static json_t *tag_elem(struct jdoc *d, const struct rpmtag_qf_value *v, uint32_t i)
{
	json_t *j = NULL;

	switch (v->type) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
		j = json_integer(((const uint8_t *)v->data)[i]);
		break;
	case RPMTAG_TYPE_INT16:
		j = json_integer(((const uint16_t *)v->data)[i]);
		break;
	case RPMTAG_TYPE_INT32:
		j = json_integer(((const uint32_t *)v->data)[i]);
		break;
	case RPMTAG_TYPE_INT64:
		j = json_integer((json_int_t)((const uint64_t *)v->data)[i]);
		break;
	case RPMTAG_TYPE_STRING:
	case RPMTAG_TYPE_STRING_ARRAY:
	case RPMTAG_TYPE_I18NSTRING:
		return jstr(d, ((const char *const *)v->data)[i]);
	case RPMTAG_TYPE_NULL:
	case RPMTAG_TYPE_BIN:
		j = json_null();
		break;
	}
	if (!j)
		d->oom = true;
	return j;
}

static json_t *tag_value(struct jdoc *d, uint32_t tag, const struct rpmtag_qf_value *v)
{
	const struct rpmtag_info *t = rpmtag_by_num(tag);
	/* Translated strings are always arrays, parallel to HEADERI18NTABLE. */
	bool array = v->count != 1 || v->type == RPMTAG_TYPE_I18NSTRING ||
	             (t && (t->flags & RPMTAG_F_ARRAY) && v->type != RPMTAG_TYPE_STRING);
	json_t *a;
	uint32_t i;

	if (v->type == RPMTAG_TYPE_BIN) {
		char *hex = kiln_malloc((size_t)v->count * 2 + 1);
		json_t *j = NULL;

		if (hex) {
			util_hex_encode(v->data, v->count, hex);
			j = json_string(hex);
			free(hex);
		}
		if (!j)
			d->oom = true;
		return j;
	}
	if (!array)
		return tag_elem(d, v, 0);
	a = jarr(d);
	for (i = 0; a && i < v->count; i++)
		jpush(d, a, tag_elem(d, v, i));
	return a;
}

static json_t *tags_json(struct jdoc *d, const struct rpmtag_set *ts)
{
	json_t *o = jobj(d);
	size_t i, n = rpmtag_set_count(ts);

	for (i = 0; o && i < n; i++) {
		uint32_t tag = rpmtag_set_tag_at(ts, i);
		const struct rpmtag_info *t = rpmtag_by_num(tag);
		struct rpmtag_qf_value v;
		char num[16];

		if (!rpmtag_set_get(ts, tag, &v))
			continue;
		snprintf(num, sizeof(num), "%" PRIu32, tag);
		jset(d, o, t ? t->name : num, tag_value(d, tag, &v));
	}
	return o;
}

/* ---------------------------------------------------------------------------------------- */
/* Dependencies. */

static const char *dep_op(uint32_t flags)
{
	switch (flags & (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)) {
	case RPMTAG_DEP_LESS:
		return "<";
	case RPMTAG_DEP_LESS | RPMTAG_DEP_EQUAL:
		return "<=";
	case RPMTAG_DEP_EQUAL:
		return "=";
	case RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL:
		return ">=";
	case RPMTAG_DEP_GREATER:
		return ">";
	default:
		return NULL;
	}
}

static const struct {
	uint32_t flag;
	const char *name;
} dep_qualifiers[] = {
    {RPMTAG_DEP_SCRIPT_PRE, "pre"},
    {RPMTAG_DEP_SCRIPT_POST, "post"},
    {RPMTAG_DEP_SCRIPT_PREUN, "preun"},
    {RPMTAG_DEP_SCRIPT_POSTUN, "postun"},
    {RPMTAG_DEP_PRETRANS, "pretrans"},
    {RPMTAG_DEP_POSTTRANS, "posttrans"},
    {RPMTAG_DEP_PREUNTRANS, "preuntrans"},
    {RPMTAG_DEP_POSTUNTRANS, "postuntrans"},
    {RPMTAG_DEP_SCRIPT_VERIFY, "verify"},
    {RPMTAG_DEP_INTERP, "interp"},
    {RPMTAG_DEP_META, "meta"},
    {RPMTAG_DEP_RPMLIB, "rpmlib"},
    {RPMTAG_DEP_MISSINGOK, "missingok"},
    {RPMTAG_DEP_CONFIG, "config"},
};

static json_t *deps_json(struct jdoc *d, const struct spec_deps *deps)
{
	json_t *a = jarr(d);
	size_t i, k;

	for (i = 0; a && i < deps->n; i++) {
		const struct spec_dep *dep = &deps->v[i];
		json_t *o = jobj(d);
		json_t *q = jarr(d);
		const char *op = dep_op(dep->flags);

		if (!o || !q) {
			json_decref(o);
			json_decref(q);
			break;
		}
		jset(d, o, "name", jstr(d, dep->name));
		if (op) {
			jset(d, o, "op", jstr(d, op));
			jset(d, o, "evr", jstr(d, dep->evr));
		}
		if (dep->name[0] == '(')
			jset(d, o, "rich", json_true());
		for (k = 0; k < KILN_ARRAY_SIZE(dep_qualifiers); k++) {
			if (dep->flags & dep_qualifiers[k].flag)
				jpush(d, q, jstr(d, dep_qualifiers[k].name));
		}
		if (json_array_size(q))
			jset(d, o, "qualifiers", q);
		else
			json_decref(q);
		jset(d, o, "flags", json_integer(dep->flags));
		jpush(d, a, o);
	}
	return a;
}

static const char *const dep_kind_names[SPEC_DEPS_COUNT] = {
    [SPEC_DEPS_REQUIRES] = "requires",       [SPEC_DEPS_PROVIDES] = "provides",
    [SPEC_DEPS_CONFLICTS] = "conflicts",     [SPEC_DEPS_OBSOLETES] = "obsoletes",
    [SPEC_DEPS_RECOMMENDS] = "recommends",   [SPEC_DEPS_SUGGESTS] = "suggests",
    [SPEC_DEPS_SUPPLEMENTS] = "supplements", [SPEC_DEPS_ENHANCES] = "enhances",
    [SPEC_DEPS_ORDER] = "orderwithrequires",
};

/* ---------------------------------------------------------------------------------------- */
/* Scripts and files. */

static json_t *script_json(struct jdoc *d, const struct spec_script *s)
{
	json_t *o = jobj(d);

	if (!o)
		return NULL;
	jset(d, o, "kind", jstr(d, spec_script_name(s->kind)));
	if (s->nprog)
		jset(d, o, "interpreter", jstrv(d, s->prog, s->nprog));
	jset(d, o, "body", jstr(d, s->body));
	if (s->flags & SPEC_SCRIPT_F_EXPAND)
		jset(d, o, "expand", json_true());
	if (s->flags & SPEC_SCRIPT_F_QFORMAT)
		jset(d, o, "qformat", json_true());
	if (s->flags & SPEC_SCRIPT_F_CRITICAL)
		jset(d, o, "critical", json_true());
	if (s->kind >= SPEC_SCRIPT_TRIGGERPREIN)
		jset(d, o, "conditions", deps_json(d, &s->conds));
	if (s->kind >= SPEC_SCRIPT_FILETRIGGERIN)
		jset(d, o, "priority", json_integer(s->priority));
	if (s->file)
		jset(d, o, "file", jstr(d, s->file));
	jset(d, o, "line", json_integer(s->line));
	return o;
}

static json_t *attr_json(struct jdoc *d, const struct spec_attr *a)
{
	json_t *o;
	char mode[16];

	if (!a->set)
		return json_null();
	o = jobj(d);
	if (!o)
		return NULL;
	if (a->set & SPEC_ATTR_MODE) {
		snprintf(mode, sizeof(mode), "%04o", (unsigned)a->mode);
		jset(d, o, "mode", jstr(d, mode));
	}
	if (a->set & SPEC_ATTR_USER)
		jset(d, o, "user", jstr(d, a->user));
	if (a->set & SPEC_ATTR_GROUP)
		jset(d, o, "group", jstr(d, a->group));
	if (a->set & SPEC_ATTR_DIRMODE) {
		snprintf(mode, sizeof(mode), "%04o", (unsigned)a->dirmode);
		jset(d, o, "dirmode", jstr(d, mode));
	}
	return o;
}

static const struct {
	uint32_t flag;
	const char *name;
} file_flag_names[] = {
    {RPMTAG_FILE_CONFIG, "config"},       {RPMTAG_FILE_DOC, "doc"},
    {RPMTAG_FILE_ICON, "icon"},           {RPMTAG_FILE_MISSINGOK, "missingok"},
    {RPMTAG_FILE_NOREPLACE, "noreplace"}, {RPMTAG_FILE_SPECFILE, "specfile"},
    {RPMTAG_FILE_GHOST, "ghost"},         {RPMTAG_FILE_LICENSE, "license"},
    {RPMTAG_FILE_README, "readme"},       {RPMTAG_FILE_PUBKEY, "pubkey"},
    {RPMTAG_FILE_ARTIFACT, "artifact"},
};

static const struct {
	uint32_t flag;
	const char *name;
} verify_names[] = {
    {RPMTAG_VERIFY_FILEDIGEST, "filedigest"},
    {RPMTAG_VERIFY_FILESIZE, "size"},
    {RPMTAG_VERIFY_LINKTO, "link"},
    {RPMTAG_VERIFY_USER, "user"},
    {RPMTAG_VERIFY_GROUP, "group"},
    {RPMTAG_VERIFY_MTIME, "mtime"},
    {RPMTAG_VERIFY_MODE, "mode"},
    {RPMTAG_VERIFY_RDEV, "rdev"},
    {RPMTAG_VERIFY_CAPS, "caps"},
};

static json_t *file_json(struct jdoc *d, const struct spec_files_entry *f)
{
	json_t *o = jobj(d);
	json_t *flags = jarr(d);
	size_t i;

	if (!o || !flags) {
		json_decref(o);
		json_decref(flags);
		return NULL;
	}
	jset(d, o, "paths", jstrv(d, f->paths, f->npaths));
	for (i = 0; i < KILN_ARRAY_SIZE(file_flag_names); i++) {
		if (f->fileflags & file_flag_names[i].flag)
			jpush(d, flags, jstr(d, file_flag_names[i].name));
	}
	if (f->flags & SPEC_ENTRY_DIR)
		jpush(d, flags, jstr(d, "dir"));
	if (f->flags & SPEC_ENTRY_DOCDIR)
		jpush(d, flags, jstr(d, "docdir"));
	if (f->flags & SPEC_ENTRY_EXCLUDE)
		jpush(d, flags, jstr(d, "exclude"));
	if (f->flags & SPEC_ENTRY_SPECIAL)
		jpush(d, flags, jstr(d, "special"));
	jset(d, o, "flags", flags);
	if (f->verifyflags != (uint32_t)RPMTAG_VERIFY_ALL) {
		json_t *v = jarr(d);

		for (i = 0; v && i < KILN_ARRAY_SIZE(verify_names); i++) {
			if (f->verifyflags & verify_names[i].flag)
				jpush(d, v, jstr(d, verify_names[i].name));
		}
		jset(d, o, "verify", v);
	}
	jset(d, o, "attr", attr_json(d, &f->attr));
	jset(d, o, "defattr", attr_json(d, &f->defattr));
	if (f->lang)
		jset(d, o, "lang", jstr(d, f->lang));
	if (f->caps)
		jset(d, o, "caps", jstr(d, f->caps));
	if (f->flags & SPEC_ENTRY_DEV) {
		json_t *dev = jobj(d);
		char type[2] = {f->dev_type, '\0'};

		if (dev) {
			jset(d, dev, "type", jstr(d, type));
			jset(d, dev, "major", json_integer(f->dev_major));
			jset(d, dev, "minor", json_integer(f->dev_minor));
		}
		jset(d, o, "dev", dev);
	}
	if (f->error)
		jset(d, o, "error", jstr(d, f->error));
	jset(d, o, "line", json_integer(f->line));
	return o;
}

static json_t *package_json(struct jdoc *d, const struct spec_package *pkg)
{
	json_t *o = jobj(d);
	json_t *deps, *scripts, *files;
	size_t i;

	if (!o)
		return NULL;
	jset(d, o, "name", jstr(d, pkg->name));
	jset(d, o, "main", json_boolean(pkg->is_main));
	jset(d, o, "built", json_boolean(pkg->has_files));
	jset(d, o, "arch", jstr(d, rpmtag_set_get_str(pkg->tags, RPMTAG_ARCH)));
	jset(d, o, "autoreq", json_boolean(pkg->autoreq));
	jset(d, o, "autoprov", json_boolean(pkg->autoprov));
	jset(d, o, "tags", tags_json(d, pkg->tags));
	deps = jobj(d);
	for (i = 0; deps && i < SPEC_DEPS_COUNT; i++) {
		if (pkg->deps[i].n)
			jset(d, deps, dep_kind_names[i], deps_json(d, &pkg->deps[i]));
	}
	jset(d, o, "dependencies", deps);
	scripts = jarr(d);
	for (i = 0; scripts && i < pkg->nscripts; i++)
		jpush(d, scripts, script_json(d, &pkg->scripts[i]));
	jset(d, o, "scripts", scripts);
	files = jarr(d);
	for (i = 0; files && i < pkg->nfiles; i++)
		jpush(d, files, file_json(d, &pkg->files[i]));
	jset(d, o, "files", files);
	jset(d, o, "file_lists", jstrv(d, pkg->file_lists, pkg->nfile_lists));
	jset(d, o, "line", json_integer(pkg->line));
	return o;
}

/* ---------------------------------------------------------------------------------------- */
/* The document. */

static json_t *sources_json(struct jdoc *d, const struct spec *spec)
{
	json_t *a = jarr(d);
	size_t i;

	for (i = 0; a && i < spec->nsources; i++) {
		const struct spec_source *s = &spec->sources[i];
		json_t *o = jobj(d);

		if (!o)
			break;
		jset(d, o, "type", jstr(d, s->is_patch ? "patch" : "source"));
		jset(d, o, "num", json_integer(s->num));
		jset(d, o, "url", jstr(d, s->url));
		jset(d, o, "file", jstr(d, s->file));
		jset(d, o, "path", jstr(d, s->path));
		jset(d, o, "nosource", json_boolean(s->nosource));
		jpush(d, a, o);
	}
	return a;
}

static json_t *sections_json(struct jdoc *d, const struct spec *spec)
{
	json_t *o = jobj(d);
	size_t i;

	for (i = 0; o && i < SPEC_SEC_COUNT; i++) {
		if (spec->sections[i])
			jset(d, o, spec_section_name((enum spec_section)i),
			     jstr(d, spec->sections[i]));
	}
	return o;
}

static json_t *buildopts_json(struct jdoc *d, const struct spec *spec)
{
	json_t *o = jobj(d);
	size_t i;

	for (i = 0; o && i < SPEC_SEC_COUNT; i++) {
		const struct spec_buildopts *b = &spec->buildopts[i];

		if (b->n)
			jset(d, o, spec_section_name((enum spec_section)i), jstrv(d, b->v, b->n));
	}
	return o;
}

static json_t *changelog_json(struct jdoc *d, const struct spec *spec)
{
	json_t *a = jarr(d);
	size_t i;

	for (i = 0; a && i < spec->nchangelog; i++) {
		json_t *o = jobj(d);

		if (!o)
			break;
		jset(d, o, "time", json_integer(spec->changelog[i].time));
		jset(d, o, "name", jstr(d, spec->changelog[i].name));
		jset(d, o, "text", jstr(d, spec->changelog[i].text));
		jpush(d, a, o);
	}
	return a;
}

static json_t *spec_json(struct jdoc *d, const struct spec *spec)
{
	json_t *o = jobj(d);
	json_t *pkgs, *src;
	size_t i;

	if (!o)
		return NULL;
	jset(d, o, "kiln_spec_json", json_integer(1));
	jset(d, o, "path", jstr(d, spec->path));
	jset(d, o, "buildsystem", jstr(d, spec->buildsystem));
	jset(d, o, "buildoptions", buildopts_json(d, spec));
	jset(d, o, "buildarchs", jstrv(d, spec->buildarchs, spec->nbuildarchs));
	jset(d, o, "exclusivearch", jstrv(d, spec->exclusivearch, spec->nexclusivearch));
	jset(d, o, "excludearch", jstrv(d, spec->excludearch, spec->nexcludearch));
	jset(d, o, "exclusiveos", jstrv(d, spec->exclusiveos, spec->nexclusiveos));
	jset(d, o, "excludeos", jstrv(d, spec->excludeos, spec->nexcludeos));
	jset(d, o, "sources", sources_json(d, spec));
	src = jobj(d);
	if (src) {
		jset(d, src, "tags", tags_json(d, spec->srctags));
		jset(d, src, "buildrequires", deps_json(d, &spec->buildrequires));
		jset(d, src, "buildconflicts", deps_json(d, &spec->buildconflicts));
	}
	jset(d, o, "source_package", src);
	pkgs = jarr(d);
	for (i = 0; pkgs && i < spec->npackages; i++)
		jpush(d, pkgs, package_json(d, spec->packages[i]));
	jset(d, o, "packages", pkgs);
	jset(d, o, "sections", sections_json(d, spec));
	jset(d, o, "changelog", changelog_json(d, spec));
	return o;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	struct kiln_buf *out = data;

	kiln_buf_add(out, buf, size);
	return out->err ? -1 : 0;
}

kiln_rc spec_json_write(const struct spec *spec, struct kiln_buf *out, struct kiln_err *err)
{
	struct jdoc d = {false};
	json_t *root = spec_json(&d, spec);
	kiln_rc rc = KILN_OK;

	if (!root || d.oom)
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory building the JSON model");
	else if (json_dump_callback(root, dump_cb, out, JSON_INDENT(2) | JSON_ENSURE_ASCII))
		rc = out->err ? kiln_buf_finish(out, err)
		              : kiln_err_set(err, KILN_EIO, "cannot write the JSON model");
	else
		kiln_buf_addch(out, '\n');
	json_decref(root);
	if (!rc)
		rc = kiln_buf_finish(out, err);
	return rc;
}
