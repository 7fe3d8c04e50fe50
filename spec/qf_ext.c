/*
 * qf_ext.c - tag lookup for query formats: the source's stored tags, rpm's extension tags
 * computed from them (FILENAMES, NEVRA, REQUIRENEVRS, TRIGGERCONDS, ...) and the fallbacks
 * rpm applies (LONGSIZE from SIZE, RPMFORMAT from the region, ...).
 *
 * Computed values live in the render's arena and are cached for the render, so iterating
 * over 10,000 files computes FILENAMES once.
 */
#include "util/util.h"

#include <sys/stat.h>

#include "spec/spec.h"
#include "spec/spec_int.h"

typedef bool (*ext_fn)(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v);

static bool raw(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	return r->src->ops->get(r->src->ctx, tag, v);
}

static const char *raw_str(struct spec_qf_render *r, uint32_t tag)
{
	struct spec_qf_value v;

	if (!raw(r, tag, &v) || !spec_type_is_string(v.type) || !v.count)
		return NULL;
	return spec_qf_value_str(&v, 0);
}

static bool str_result(struct spec_qf_render *r, char *s, struct spec_qf_value *v)
{
	const char **arr = kiln_arena_alloc(&r->arena, sizeof(*arr));

	if (!arr || !s)
		return false;
	arr[0] = s;
	v->type = SPEC_TYPE_STRING;
	v->count = 1;
	v->data = arr;
	return true;
}

static bool u32_result(struct spec_qf_render *r, uint32_t n, struct spec_qf_value *v)
{
	uint32_t *p = kiln_arena_alloc(&r->arena, sizeof(*p));

	if (!p)
		return false;
	*p = n;
	v->type = SPEC_TYPE_INT32;
	v->count = 1;
	v->data = p;
	return true;
}

/* rpm's headerIsSource(): SOURCEPACKAGE marks a source header, SOURCERPM a binary one. */
static bool is_source(struct spec_qf_render *r)
{
	struct spec_qf_value v;

	if (raw(r, SPEC_TAG_SOURCEPACKAGE, &v))
		return true;
	return !raw(r, SPEC_TAG_SOURCERPM, &v);
}

/* name-[epoch:]version-release[.arch], pieces chosen by tag. */
static bool ext_nevra(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	const char *n = raw_str(r, SPEC_TAG_NAME), *ver = raw_str(r, SPEC_TAG_VERSION);
	const char *rel = raw_str(r, SPEC_TAG_RELEASE), *arch = raw_str(r, SPEC_TAG_ARCH);
	bool with_name = tag != SPEC_TAG_EVR;
	bool with_epoch = tag == SPEC_TAG_EVR || tag == SPEC_TAG_NEVR || tag == SPEC_TAG_NEVRA;
	bool with_arch = tag == SPEC_TAG_NEVRA || tag == SPEC_TAG_NVRA;
	struct spec_qf_value ev;
	char epoch[24] = "";

	if (with_epoch && raw(r, SPEC_TAG_EPOCH, &ev) && spec_type_is_number(ev.type) && ev.count)
		snprintf(epoch, sizeof(epoch), "%" PRIu64 ":", spec_qf_value_num(&ev, 0));
	return str_result(r,
	                  kiln_arena_printf(&r->arena, "%s%s%s%s-%s%s%s", with_name && n ? n : "",
	                                    with_name ? "-" : "", epoch, ver ? ver : "",
	                                    rel ? rel : "", with_arch && arch ? "." : "",
	                                    with_arch && arch ? arch : ""),
	                  v);
}

static bool ext_archsuffix(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	const char *arch = raw_str(r, SPEC_TAG_ARCH);

	(void)tag;
	if (is_source(r))
		arch = "src";
	return str_result(
	    r, kiln_arena_printf(&r->arena, "%s%s", arch ? "." : "", arch ? arch : ""), v);
}

static bool ext_epochnum(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value ev;

	(void)tag;
	if (raw(r, SPEC_TAG_EPOCH, &ev) && spec_type_is_number(ev.type) && ev.count)
		return u32_result(r, (uint32_t)spec_qf_value_num(&ev, 0), v);
	return u32_result(r, 0, v);
}

static bool ext_headercolor(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value c;
	uint32_t color = 0, i;

	(void)tag;
	if (raw(r, SPEC_TAG_FILECOLORS, &c) && spec_type_is_number(c.type)) {
		for (i = 0; i < c.count; i++)
			color |= (uint32_t)spec_qf_value_num(&c, i);
	}
	return u32_result(r, color & 0x0f, v);
}

static bool ext_verbose(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	(void)tag;
	return (r->src->flags & SPEC_QF_F_VERBOSE) && u32_result(r, 1, v);
}

static bool ext_dbinstance(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	(void)tag;
	return u32_result(r, 0, v);
}

/* A string array of n elements in the arena. */
static const char **str_array(struct spec_qf_render *r, uint32_t n, struct spec_qf_value *v)
{
	const char **arr = kiln_arena_array(&r->arena, n ? n : 1, sizeof(*arr));

	if (!arr)
		return NULL;
	v->type = SPEC_TYPE_STRING_ARRAY;
	v->count = n;
	v->data = arr;
	return arr;
}

static bool filenames_from(struct spec_qf_render *r, uint32_t bt, uint32_t dt, uint32_t it,
                           struct spec_qf_value *v)
{
	struct spec_qf_value b, d, x;
	const char **arr;
	uint32_t i;

	if (!raw(r, bt, &b) || !spec_type_is_string(b.type))
		return false;
	if (!raw(r, dt, &d) || !spec_type_is_string(d.type) || !raw(r, it, &x) ||
	    x.type != SPEC_TYPE_INT32 || x.count != b.count)
		return false;
	arr = str_array(r, b.count, v);
	for (i = 0; arr && i < b.count; i++) {
		uint64_t di = spec_qf_value_num(&x, i);

		arr[i] = kiln_arena_printf(&r->arena, "%s%s",
		                           di < d.count ? spec_qf_value_str(&d, (uint32_t)di) : "",
		                           spec_qf_value_str(&b, i));
		if (!arr[i])
			return false;
	}
	return arr != NULL;
}

static bool ext_filenames(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	if (tag == SPEC_TAG_ORIGFILENAMES &&
	    filenames_from(r, SPEC_TAG_ORIGBASENAMES, SPEC_TAG_ORIGDIRNAMES,
	                   SPEC_TAG_ORIGDIRINDEXES, v))
		return true;
	if (filenames_from(r, SPEC_TAG_BASENAMES, SPEC_TAG_DIRNAMES, SPEC_TAG_DIRINDEXES, v))
		return true;
	return raw(r, SPEC_TAG_OLDFILENAMES, v) && spec_type_is_string(v->type);
}

/* The name/version/flags triples of a dependency kind, keyed by its NEVRS extension tag. */
static const struct {
	uint32_t nevrs, name, version, flags;
} dep_kinds[] = {
    {SPEC_TAG_REQUIRENEVRS, SPEC_TAG_REQUIRENAME, SPEC_TAG_REQUIREVERSION, SPEC_TAG_REQUIREFLAGS},
    {SPEC_TAG_PROVIDENEVRS, SPEC_TAG_PROVIDENAME, SPEC_TAG_PROVIDEVERSION, SPEC_TAG_PROVIDEFLAGS},
    {SPEC_TAG_OBSOLETENEVRS, SPEC_TAG_OBSOLETENAME, SPEC_TAG_OBSOLETEVERSION,
     SPEC_TAG_OBSOLETEFLAGS},
    {SPEC_TAG_CONFLICTNEVRS, SPEC_TAG_CONFLICTNAME, SPEC_TAG_CONFLICTVERSION,
     SPEC_TAG_CONFLICTFLAGS},
    {SPEC_TAG_RECOMMENDNEVRS, SPEC_TAG_RECOMMENDNAME, SPEC_TAG_RECOMMENDVERSION,
     SPEC_TAG_RECOMMENDFLAGS},
    {SPEC_TAG_SUGGESTNEVRS, SPEC_TAG_SUGGESTNAME, SPEC_TAG_SUGGESTVERSION, SPEC_TAG_SUGGESTFLAGS},
    {SPEC_TAG_SUPPLEMENTNEVRS, SPEC_TAG_SUPPLEMENTNAME, SPEC_TAG_SUPPLEMENTVERSION,
     SPEC_TAG_SUPPLEMENTFLAGS},
    {SPEC_TAG_ENHANCENEVRS, SPEC_TAG_ENHANCENAME, SPEC_TAG_ENHANCEVERSION, SPEC_TAG_ENHANCEFLAGS},
    {SPEC_TAG_TRIGGERCONDS, SPEC_TAG_TRIGGERNAME, SPEC_TAG_TRIGGERVERSION, SPEC_TAG_TRIGGERFLAGS},
    {SPEC_TAG_FILETRIGGERCONDS, SPEC_TAG_FILETRIGGERNAME, SPEC_TAG_FILETRIGGERVERSION,
     SPEC_TAG_FILETRIGGERFLAGS},
    {SPEC_TAG_TRANSFILETRIGGERCONDS, SPEC_TAG_TRANSFILETRIGGERNAME,
     SPEC_TAG_TRANSFILETRIGGERVERSION, SPEC_TAG_TRANSFILETRIGGERFLAGS},
};

struct deps {
	struct spec_qf_value name, version, flags;
};

static bool deps_get(struct spec_qf_render *r, size_t kind, struct deps *d)
{
	if (!raw(r, dep_kinds[kind].name, &d->name) || !spec_type_is_string(d->name.type))
		return false;
	if (!raw(r, dep_kinds[kind].version, &d->version) ||
	    !spec_type_is_string(d->version.type) || d->version.count != d->name.count)
		d->version.count = 0;
	if (!raw(r, dep_kinds[kind].flags, &d->flags) || !spec_type_is_number(d->flags.type) ||
	    d->flags.count != d->name.count)
		d->flags.count = 0;
	return true;
}

/* "name", or "name OP version" when the flags carry a comparison and a version is set. */
static char *dep_string(struct spec_qf_render *r, const struct deps *d, uint32_t i)
{
	const char *ver = d->version.count ? spec_qf_value_str(&d->version, i) : "";
	uint64_t f = d->flags.count ? spec_qf_value_num(&d->flags, i) : 0;
	char op[4];
	size_t n = 0;

	if (f & SPEC_DEP_LESS)
		op[n++] = '<';
	if (f & SPEC_DEP_GREATER)
		op[n++] = '>';
	if (f & SPEC_DEP_EQUAL)
		op[n++] = '=';
	op[n] = '\0';
	if (!n || !*ver)
		return kiln_arena_strdup(&r->arena, spec_qf_value_str(&d->name, i));
	return kiln_arena_printf(&r->arena, "%s %s %s", spec_qf_value_str(&d->name, i), op, ver);
}

static bool ext_nevrs(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct deps d;
	const char **arr;
	size_t k;
	uint32_t i;

	for (k = 0; k < KILN_ARRAY_SIZE(dep_kinds) && dep_kinds[k].nevrs != tag; k++)
		;
	if (k == KILN_ARRAY_SIZE(dep_kinds) || !deps_get(r, k, &d))
		return false;
	arr = str_array(r, d.name.count, v);
	for (i = 0; arr && i < d.name.count; i++) {
		arr[i] = dep_string(r, &d, i);
		if (!arr[i])
			return false;
	}
	return arr != NULL;
}

/* Trigger kinds: conds tag, type tag, scripts tag, index tag. */
static const struct {
	uint32_t conds, type, scripts, index;
} trig_kinds[] = {
    {SPEC_TAG_TRIGGERCONDS, SPEC_TAG_TRIGGERTYPE, SPEC_TAG_TRIGGERSCRIPTS, SPEC_TAG_TRIGGERINDEX},
    {SPEC_TAG_FILETRIGGERCONDS, SPEC_TAG_FILETRIGGERTYPE, SPEC_TAG_FILETRIGGERSCRIPTS,
     SPEC_TAG_FILETRIGGERINDEX},
    {SPEC_TAG_TRANSFILETRIGGERCONDS, SPEC_TAG_TRANSFILETRIGGERTYPE,
     SPEC_TAG_TRANSFILETRIGGERSCRIPTS, SPEC_TAG_TRANSFILETRIGGERINDEX},
};

static const char *trigger_type(uint64_t f)
{
	if (f & SPEC_DEP_TRIGGERPREIN)
		return "prein";
	if (f & SPEC_DEP_TRIGGERIN)
		return "in";
	if (f & SPEC_DEP_TRIGGERUN)
		return "un";
	if (f & SPEC_DEP_TRIGGERPOSTUN)
		return "postun";
	return "";
}

/* One element per trigger script: the conditions joined with ", " (conds) or the type of
 * the first condition (type). */
static bool ext_trigger(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value scripts, index;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	struct deps d;
	const char **arr;
	size_t k, dk;
	uint32_t s, i;
	bool conds;

	for (k = 0; k < KILN_ARRAY_SIZE(trig_kinds); k++) {
		if (trig_kinds[k].conds == tag || trig_kinds[k].type == tag)
			break;
	}
	if (k == KILN_ARRAY_SIZE(trig_kinds))
		return false;
	conds = trig_kinds[k].conds == tag;
	for (dk = 0; dep_kinds[dk].nevrs != trig_kinds[k].conds; dk++)
		;
	if (!raw(r, trig_kinds[k].scripts, &scripts) || !raw(r, trig_kinds[k].index, &index) ||
	    !spec_type_is_number(index.type) || !deps_get(r, dk, &d) || index.count != d.name.count)
		return false;
	arr = str_array(r, scripts.count, v);
	for (s = 0; arr && s < scripts.count; s++) {
		kiln_buf_reset(&b);
		for (i = 0; i < d.name.count; i++) {
			if (spec_qf_value_num(&index, i) != s)
				continue;
			if (!conds) {
				kiln_buf_addstr(
				    &b, trigger_type(d.flags.count ? spec_qf_value_num(&d.flags, i)
				                                   : 0));
				break;
			}
			if (b.len)
				kiln_buf_addstr(&b, ", ");
			kiln_buf_addstr(&b, dep_string(r, &d, i));
		}
		arr[s] = kiln_arena_strndup(&r->arena, b.ptr, b.len);
		if (!arr[s] || b.err)
			arr = NULL;
	}
	kiln_buf_release(&b);
	return arr != NULL;
}

/* Hard-link count per file: regular, non-ghost files sharing (device, inode). */
static bool ext_filenlinks(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value modes, inodes, devs, flags;
	uint32_t *n, i, j;

	(void)tag;
	if (!raw(r, SPEC_TAG_FILEMODES, &modes) || !spec_type_is_number(modes.type))
		return false;
	if (!raw(r, SPEC_TAG_FILEINODES, &inodes) || inodes.count != modes.count)
		inodes.count = 0;
	if (!raw(r, SPEC_TAG_FILEDEVICES, &devs) || devs.count != modes.count)
		devs.count = 0;
	if (!raw(r, SPEC_TAG_FILEFLAGS, &flags) || flags.count != modes.count)
		flags.count = 0;
	n = kiln_arena_array(&r->arena, modes.count ? modes.count : 1, sizeof(*n));
	if (!n)
		return false;
	for (i = 0; i < modes.count; i++) {
		bool linkable = S_ISREG(spec_qf_value_num(&modes, i)) && inodes.count &&
		                spec_qf_value_num(&inodes, i) &&
		                !(flags.count && (spec_qf_value_num(&flags, i) & SPEC_FILE_GHOST));

		n[i] = 1;
		for (j = 0; linkable && j < modes.count; j++) {
			if (j == i ||
			    spec_qf_value_num(&inodes, j) != spec_qf_value_num(&inodes, i))
				continue;
			if (devs.count &&
			    spec_qf_value_num(&devs, j) != spec_qf_value_num(&devs, i))
				continue;
			if (!S_ISREG(spec_qf_value_num(&modes, j)) ||
			    (flags.count && (spec_qf_value_num(&flags, j) & SPEC_FILE_GHOST)))
				continue;
			n[i]++;
		}
	}
	v->type = SPEC_TYPE_INT32;
	v->count = modes.count;
	v->data = n;
	return true;
}

/* FILEPROVIDE / FILEREQUIRE: per-file dependency ranges into DEPENDSDICT, whose entries
 * are (kind letter << 24 | index into that kind's dependency arrays). */
static bool ext_filedeps(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value fx, fn, dict;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	char want = tag == SPEC_TAG_FILEPROVIDE ? 'P' : 'R';
	size_t kind = tag == SPEC_TAG_FILEPROVIDE ? 1 : 0;
	const char **arr;
	struct deps d;
	uint32_t i, j;

	if (!raw(r, SPEC_TAG_FILEDEPENDSX, &fx) || !raw(r, SPEC_TAG_FILEDEPENDSN, &fn) ||
	    !raw(r, SPEC_TAG_DEPENDSDICT, &dict) || fx.count != fn.count ||
	    !spec_type_is_number(fx.type) || !spec_type_is_number(fn.type) ||
	    !spec_type_is_number(dict.type)) {
		/* No per-file dependencies recorded: every file has none. */
		struct spec_qf_value bn;
		uint32_t k;

		if (!raw(r, SPEC_TAG_BASENAMES, &bn))
			return false;
		arr = str_array(r, bn.count, v);
		for (k = 0; arr && k < bn.count; k++)
			arr[k] = "";
		return arr != NULL;
	}
	if (!deps_get(r, kind, &d))
		d.name.count = 0;
	arr = str_array(r, fx.count, v);
	for (i = 0; arr && i < fx.count; i++) {
		uint64_t start = spec_qf_value_num(&fx, i), cnt = spec_qf_value_num(&fn, i);

		kiln_buf_reset(&b);
		for (j = 0; j < cnt && start + j < dict.count; j++) {
			uint64_t e = spec_qf_value_num(&dict, (uint32_t)(start + j));

			if ((char)(e >> 24) != want || (e & 0xffffff) >= d.name.count)
				continue;
			if (b.len)
				kiln_buf_addch(&b, ' ');
			kiln_buf_addstr(&b, dep_string(r, &d, (uint32_t)(e & 0xffffff)));
		}
		arr[i] = kiln_arena_strndup(&r->arena, b.ptr, b.len);
		if (!arr[i] || b.err)
			arr = NULL;
	}
	kiln_buf_release(&b);
	return arr != NULL;
}

static bool ext_filemimes(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value idx, dict;
	const char **arr;
	uint32_t i;

	(void)tag;
	if (!raw(r, SPEC_TAG_FILEMIMEINDEX, &idx) || !raw(r, SPEC_TAG_MIMEDICT, &dict) ||
	    !spec_type_is_number(idx.type) || !spec_type_is_string(dict.type))
		return false;
	arr = str_array(r, idx.count, v);
	for (i = 0; arr && i < idx.count; i++) {
		uint64_t k = spec_qf_value_num(&idx, i);

		arr[i] = k < dict.count ? spec_qf_value_str(&dict, (uint32_t)k) : "";
	}
	return arr != NULL;
}

/* What rpm shows for a file without a class text, by type ("" for regular files). */
static const char *type_class(uint32_t mode)
{
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISBLK(mode))
		return "block special";
	if (S_ISCHR(mode))
		return "character special";
	if (S_ISFIFO(mode))
		return "fifo (named pipe)";
	if (S_ISSOCK(mode))
		return "socket";
	return "";
}

/* rpm shows FILECLASS as the class text from CLASSDICT; a file without one reads as its
 * type ("directory", "block special", ...; a symlink as "symbolic link to `target'"). */
static bool ext_fileclass(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value idx, dict, modes, links;
	const char **arr;
	uint32_t i;

	(void)tag;
	if (!raw(r, SPEC_TAG_FILECLASS, &idx) || !raw(r, SPEC_TAG_CLASSDICT, &dict) ||
	    !spec_type_is_number(idx.type) || !spec_type_is_string(dict.type)) {
		/* No classes recorded (source packages): every file's class is empty. */
		if (!raw(r, SPEC_TAG_BASENAMES, &idx))
			return false;
		dict.count = 0;
	}
	if (!raw(r, SPEC_TAG_FILEMODES, &modes) || modes.count != idx.count)
		modes.count = 0;
	if (!raw(r, SPEC_TAG_FILELINKTOS, &links) || links.count != idx.count)
		links.count = 0;
	arr = str_array(r, idx.count, v);
	for (i = 0; arr && i < idx.count; i++) {
		uint64_t k = dict.count ? spec_qf_value_num(&idx, i) : 0;

		arr[i] = k < dict.count ? spec_qf_value_str(&dict, (uint32_t)k) : "";
		if (!*arr[i] && modes.count && links.count && S_ISLNK(spec_qf_value_num(&modes, i)))
			arr[i] = kiln_arena_printf(&r->arena, "symbolic link to `%s'",
			                           spec_qf_value_str(&links, i));
		else if (!*arr[i] && modes.count)
			arr[i] = type_class((uint32_t)spec_qf_value_num(&modes, i));
		if (!arr[i])
			return false;
	}
	return arr != NULL;
}

/* A 32-bit numeric tag widened to INT64 (LONGSIZE from SIZE, ...). */
static bool widen(struct spec_qf_render *r, uint32_t from, struct spec_qf_value *v)
{
	struct spec_qf_value s;
	uint64_t *w;
	uint32_t i;

	if (!raw(r, from, &s) || !spec_type_is_number(s.type))
		return false;
	w = kiln_arena_array(&r->arena, s.count ? s.count : 1, sizeof(*w));
	for (i = 0; w && i < s.count; i++)
		w[i] = spec_qf_value_num(&s, i);
	v->type = SPEC_TYPE_INT64;
	v->count = s.count;
	v->data = w;
	return w != NULL;
}

static bool ext_long(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	if (raw(r, tag, v))
		return true;
	switch (tag) {
	case SPEC_TAG_LONGSIZE:
		return widen(r, SPEC_TAG_SIZE, v);
	case SPEC_TAG_LONGFILESIZES:
		return widen(r, SPEC_TAG_FILESIZES, v);
	case SPEC_TAG_LONGARCHIVESIZE:
		return widen(r, SPEC_TAG_ARCHIVESIZE, v);
	case SPEC_TAG_LONGSIGSIZE:
		return widen(r, SPEC_TAG_SIGSIZE, v);
	default:
		return false;
	}
}

/* rpm >= 4.20: RPMFORMAT is stored by v6 builders; older packages report 4 when they have
 * an immutable region, else 3. */
static bool ext_rpmformat(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_value reg;

	if (raw(r, tag, v))
		return true;
	return u32_result(r, raw(r, SPEC_TAG_HEADERIMMUTABLE, &reg) ? 4 : 3, v);
}

static const struct {
	uint32_t tag;
	ext_fn fn;
} exts[] = {
    {SPEC_TAG_NVRA, ext_nevra},
    {SPEC_TAG_FILENAMES, ext_filenames},
    {SPEC_TAG_FILEPROVIDE, ext_filedeps},
    {SPEC_TAG_FILEREQUIRE, ext_filedeps},
    {SPEC_TAG_TRIGGERCONDS, ext_trigger},
    {SPEC_TAG_TRIGGERTYPE, ext_trigger},
    {SPEC_TAG_ORIGFILENAMES, ext_filenames},
    {SPEC_TAG_EVR, ext_nevra},
    {SPEC_TAG_NVR, ext_nevra},
    {SPEC_TAG_NEVR, ext_nevra},
    {SPEC_TAG_NEVRA, ext_nevra},
    {SPEC_TAG_HEADERCOLOR, ext_headercolor},
    {SPEC_TAG_VERBOSE, ext_verbose},
    {SPEC_TAG_EPOCHNUM, ext_epochnum},
    {SPEC_TAG_INSTFILENAMES, ext_filenames},
    {SPEC_TAG_REQUIRENEVRS, ext_nevrs},
    {SPEC_TAG_PROVIDENEVRS, ext_nevrs},
    {SPEC_TAG_OBSOLETENEVRS, ext_nevrs},
    {SPEC_TAG_CONFLICTNEVRS, ext_nevrs},
    {SPEC_TAG_FILENLINKS, ext_filenlinks},
    {SPEC_TAG_RECOMMENDNEVRS, ext_nevrs},
    {SPEC_TAG_SUGGESTNEVRS, ext_nevrs},
    {SPEC_TAG_SUPPLEMENTNEVRS, ext_nevrs},
    {SPEC_TAG_ENHANCENEVRS, ext_nevrs},
    {SPEC_TAG_FILETRIGGERCONDS, ext_trigger},
    {SPEC_TAG_FILETRIGGERTYPE, ext_trigger},
    {SPEC_TAG_TRANSFILETRIGGERCONDS, ext_trigger},
    {SPEC_TAG_TRANSFILETRIGGERTYPE, ext_trigger},
    {SPEC_TAG_ARCHSUFFIX, ext_archsuffix},
    {SPEC_TAG_DBINSTANCE, ext_dbinstance},
    {SPEC_TAG_FILEMIMES, ext_filemimes},
    {SPEC_TAG_FILECLASS, ext_fileclass},
    {SPEC_TAG_LONGSIZE, ext_long},
    {SPEC_TAG_LONGFILESIZES, ext_long},
    {SPEC_TAG_LONGARCHIVESIZE, ext_long},
    {SPEC_TAG_LONGSIGSIZE, ext_long},
    {SPEC_TAG_RPMFORMAT, ext_rpmformat},
};

static bool lookup(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(exts); i++) {
		if (exts[i].tag == tag)
			return exts[i].fn(r, tag, v);
	}
	if (!raw(r, tag, v))
		return false;
	/* An i18n string reads as the entry of the current locale; kiln runs in "C", the
	 * first element. */
	if (v->type == SPEC_TYPE_I18NSTRING && v->count > 1)
		v->count = 1;
	return true;
}

bool spec_qf_get(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	struct spec_qf_cache_ent *c;
	size_t i;

	for (i = 0; i < r->ncache; i++) {
		if (r->cache[i].tag == tag) {
			*v = r->cache[i].v;
			return r->cache[i].present;
		}
	}
	memset(v, 0, sizeof(*v));
	if (!lookup(r, tag, v))
		memset(v, 0, sizeof(*v));
	if (r->ncache < SPEC_QF_CACHE) {
		c = &r->cache[r->ncache++];
		c->tag = tag;
		c->present = v->type != SPEC_TYPE_NULL;
		c->v = *v;
	}
	return v->type != SPEC_TYPE_NULL;
}

bool spec_qf_get_raw(struct spec_qf_render *r, uint32_t tag, struct spec_qf_value *v)
{
	return raw(r, tag, v);
}
