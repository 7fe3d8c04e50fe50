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

#include "rpmtag/rpmtag.h"
#include "rpmtag/rpmtag_int.h"

typedef bool (*ext_fn)(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v);

static bool raw(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	return r->src->ops->get(r->src->ctx, tag, v);
}

static const char *raw_str(struct rpmtag_qf_render *r, uint32_t tag)
{
	struct rpmtag_qf_value v;

	if (!raw(r, tag, &v) || !rpmtag_type_is_string(v.type) || !v.count)
		return NULL;
	return rpmtag_qf_value_str(&v, 0);
}

static bool str_result(struct rpmtag_qf_render *r, char *s, struct rpmtag_qf_value *v)
{
	const char **arr = kiln_arena_alloc(&r->arena, sizeof(*arr));

	if (!arr || !s)
		return false;
	arr[0] = s;
	v->type = RPMTAG_TYPE_STRING;
	v->count = 1;
	v->data = arr;
	return true;
}

static bool u32_result(struct rpmtag_qf_render *r, uint32_t n, struct rpmtag_qf_value *v)
{
	uint32_t *p = kiln_arena_alloc(&r->arena, sizeof(*p));

	if (!p)
		return false;
	*p = n;
	v->type = RPMTAG_TYPE_INT32;
	v->count = 1;
	v->data = p;
	return true;
}

/* rpm's headerIsSource(): SOURCEPACKAGE marks a source header, SOURCERPM a binary one. */
static bool is_source(struct rpmtag_qf_render *r)
{
	struct rpmtag_qf_value v;

	if (raw(r, RPMTAG_SOURCEPACKAGE, &v))
		return true;
	return !raw(r, RPMTAG_SOURCERPM, &v);
}

/* name-[epoch:]version-release[.arch], pieces chosen by tag. */
static bool ext_nevra(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	const char *n = raw_str(r, RPMTAG_NAME), *ver = raw_str(r, RPMTAG_VERSION);
	const char *rel = raw_str(r, RPMTAG_RELEASE), *arch = raw_str(r, RPMTAG_ARCH);
	bool with_name = tag != RPMTAG_EVR;
	bool with_epoch = tag == RPMTAG_EVR || tag == RPMTAG_NEVR || tag == RPMTAG_NEVRA;
	bool with_arch = tag == RPMTAG_NEVRA || tag == RPMTAG_NVRA;
	struct rpmtag_qf_value ev;
	char epoch[24] = "";

	if (with_epoch && raw(r, RPMTAG_EPOCH, &ev) && rpmtag_type_is_number(ev.type) && ev.count)
		snprintf(epoch, sizeof(epoch), "%" PRIu64 ":", rpmtag_qf_value_num(&ev, 0));
	return str_result(r,
	                  kiln_arena_printf(&r->arena, "%s%s%s%s-%s%s%s", with_name && n ? n : "",
	                                    with_name ? "-" : "", epoch, ver ? ver : "",
	                                    rel ? rel : "", with_arch && arch ? "." : "",
	                                    with_arch && arch ? arch : ""),
	                  v);
}

static bool ext_archsuffix(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	const char *arch = raw_str(r, RPMTAG_ARCH);

	(void)tag;
	if (is_source(r))
		arch = "src";
	return str_result(
	    r, kiln_arena_printf(&r->arena, "%s%s", arch ? "." : "", arch ? arch : ""), v);
}

static bool ext_epochnum(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value ev;

	(void)tag;
	if (raw(r, RPMTAG_EPOCH, &ev) && rpmtag_type_is_number(ev.type) && ev.count)
		return u32_result(r, (uint32_t)rpmtag_qf_value_num(&ev, 0), v);
	return u32_result(r, 0, v);
}

static bool ext_headercolor(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value c;
	uint32_t color = 0, i;

	(void)tag;
	if (raw(r, RPMTAG_FILECOLORS, &c) && rpmtag_type_is_number(c.type)) {
		for (i = 0; i < c.count; i++)
			color |= (uint32_t)rpmtag_qf_value_num(&c, i);
	}
	return u32_result(r, color & 0x0f, v);
}

static bool ext_verbose(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	(void)tag;
	return (r->src->flags & RPMTAG_QF_F_VERBOSE) && u32_result(r, 1, v);
}

static bool ext_dbinstance(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	(void)tag;
	return u32_result(r, 0, v);
}

/* A string array of n elements in the arena. */
static const char **str_array(struct rpmtag_qf_render *r, uint32_t n, struct rpmtag_qf_value *v)
{
	const char **arr = kiln_arena_array(&r->arena, n ? n : 1, sizeof(*arr));

	if (!arr)
		return NULL;
	v->type = RPMTAG_TYPE_STRING_ARRAY;
	v->count = n;
	v->data = arr;
	return arr;
}

static bool filenames_from(struct rpmtag_qf_render *r, uint32_t bt, uint32_t dt, uint32_t it,
                           struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value b, d, x;
	const char **arr;
	uint32_t i;

	if (!raw(r, bt, &b) || !rpmtag_type_is_string(b.type))
		return false;
	if (!raw(r, dt, &d) || !rpmtag_type_is_string(d.type) || !raw(r, it, &x) ||
	    x.type != RPMTAG_TYPE_INT32 || x.count != b.count)
		return false;
	arr = str_array(r, b.count, v);
	for (i = 0; arr && i < b.count; i++) {
		uint64_t di = rpmtag_qf_value_num(&x, i);

		arr[i] = kiln_arena_printf(
		    &r->arena, "%s%s", di < d.count ? rpmtag_qf_value_str(&d, (uint32_t)di) : "",
		    rpmtag_qf_value_str(&b, i));
		if (!arr[i])
			return false;
	}
	return arr != NULL;
}

static bool ext_filenames(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	if (tag == RPMTAG_ORIGFILENAMES &&
	    filenames_from(r, RPMTAG_ORIGBASENAMES, RPMTAG_ORIGDIRNAMES, RPMTAG_ORIGDIRINDEXES, v))
		return true;
	if (filenames_from(r, RPMTAG_BASENAMES, RPMTAG_DIRNAMES, RPMTAG_DIRINDEXES, v))
		return true;
	return raw(r, RPMTAG_OLDFILENAMES, v) && rpmtag_type_is_string(v->type);
}

/* The name/version/flags triples of a dependency kind, keyed by its NEVRS extension tag. */
static const struct {
	uint32_t nevrs, name, version, flags;
} dep_kinds[] = {
    {RPMTAG_REQUIRENEVRS, RPMTAG_REQUIRENAME, RPMTAG_REQUIREVERSION, RPMTAG_REQUIREFLAGS},
    {RPMTAG_PROVIDENEVRS, RPMTAG_PROVIDENAME, RPMTAG_PROVIDEVERSION, RPMTAG_PROVIDEFLAGS},
    {RPMTAG_OBSOLETENEVRS, RPMTAG_OBSOLETENAME, RPMTAG_OBSOLETEVERSION, RPMTAG_OBSOLETEFLAGS},
    {RPMTAG_CONFLICTNEVRS, RPMTAG_CONFLICTNAME, RPMTAG_CONFLICTVERSION, RPMTAG_CONFLICTFLAGS},
    {RPMTAG_RECOMMENDNEVRS, RPMTAG_RECOMMENDNAME, RPMTAG_RECOMMENDVERSION, RPMTAG_RECOMMENDFLAGS},
    {RPMTAG_SUGGESTNEVRS, RPMTAG_SUGGESTNAME, RPMTAG_SUGGESTVERSION, RPMTAG_SUGGESTFLAGS},
    {RPMTAG_SUPPLEMENTNEVRS, RPMTAG_SUPPLEMENTNAME, RPMTAG_SUPPLEMENTVERSION,
     RPMTAG_SUPPLEMENTFLAGS},
    {RPMTAG_ENHANCENEVRS, RPMTAG_ENHANCENAME, RPMTAG_ENHANCEVERSION, RPMTAG_ENHANCEFLAGS},
    {RPMTAG_TRIGGERCONDS, RPMTAG_TRIGGERNAME, RPMTAG_TRIGGERVERSION, RPMTAG_TRIGGERFLAGS},
    {RPMTAG_FILETRIGGERCONDS, RPMTAG_FILETRIGGERNAME, RPMTAG_FILETRIGGERVERSION,
     RPMTAG_FILETRIGGERFLAGS},
    {RPMTAG_TRANSFILETRIGGERCONDS, RPMTAG_TRANSFILETRIGGERNAME, RPMTAG_TRANSFILETRIGGERVERSION,
     RPMTAG_TRANSFILETRIGGERFLAGS},
};

struct deps {
	struct rpmtag_qf_value name, version, flags;
};

static bool deps_get(struct rpmtag_qf_render *r, size_t kind, struct deps *d)
{
	if (!raw(r, dep_kinds[kind].name, &d->name) || !rpmtag_type_is_string(d->name.type))
		return false;
	if (!raw(r, dep_kinds[kind].version, &d->version) ||
	    !rpmtag_type_is_string(d->version.type) || d->version.count != d->name.count)
		d->version.count = 0;
	if (!raw(r, dep_kinds[kind].flags, &d->flags) || !rpmtag_type_is_number(d->flags.type) ||
	    d->flags.count != d->name.count)
		d->flags.count = 0;
	return true;
}

/* "name", or "name OP version" when the flags carry a comparison and a version is set. */
static char *dep_string(struct rpmtag_qf_render *r, const struct deps *d, uint32_t i)
{
	const char *ver = d->version.count ? rpmtag_qf_value_str(&d->version, i) : "";
	uint64_t f = d->flags.count ? rpmtag_qf_value_num(&d->flags, i) : 0;
	char op[4];
	size_t n = 0;

	if (f & RPMTAG_DEP_LESS)
		op[n++] = '<';
	if (f & RPMTAG_DEP_GREATER)
		op[n++] = '>';
	if (f & RPMTAG_DEP_EQUAL)
		op[n++] = '=';
	op[n] = '\0';
	if (!n || !*ver)
		return kiln_arena_strdup(&r->arena, rpmtag_qf_value_str(&d->name, i));
	return kiln_arena_printf(&r->arena, "%s %s %s", rpmtag_qf_value_str(&d->name, i), op, ver);
}

static bool ext_nevrs(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
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
    {RPMTAG_TRIGGERCONDS, RPMTAG_TRIGGERTYPE, RPMTAG_TRIGGERSCRIPTS, RPMTAG_TRIGGERINDEX},
    {RPMTAG_FILETRIGGERCONDS, RPMTAG_FILETRIGGERTYPE, RPMTAG_FILETRIGGERSCRIPTS,
     RPMTAG_FILETRIGGERINDEX},
    {RPMTAG_TRANSFILETRIGGERCONDS, RPMTAG_TRANSFILETRIGGERTYPE, RPMTAG_TRANSFILETRIGGERSCRIPTS,
     RPMTAG_TRANSFILETRIGGERINDEX},
};

static const char *trigger_type(uint64_t f)
{
	if (f & RPMTAG_DEP_TRIGGERPREIN)
		return "prein";
	if (f & RPMTAG_DEP_TRIGGERIN)
		return "in";
	if (f & RPMTAG_DEP_TRIGGERUN)
		return "un";
	if (f & RPMTAG_DEP_TRIGGERPOSTUN)
		return "postun";
	return "";
}

/* One element per trigger script: the conditions joined with ", " (conds) or the type of
 * the first condition (type). */
static bool ext_trigger(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value scripts, index;
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
	    !rpmtag_type_is_number(index.type) || !deps_get(r, dk, &d) ||
	    index.count != d.name.count)
		return false;
	arr = str_array(r, scripts.count, v);
	for (s = 0; arr && s < scripts.count; s++) {
		kiln_buf_reset(&b);
		for (i = 0; i < d.name.count; i++) {
			if (rpmtag_qf_value_num(&index, i) != s)
				continue;
			if (!conds) {
				kiln_buf_addstr(
				    &b, trigger_type(
				            d.flags.count ? rpmtag_qf_value_num(&d.flags, i) : 0));
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
static bool ext_filenlinks(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value modes, inodes, devs, flags;
	uint32_t *n, i, j;

	(void)tag;
	if (!raw(r, RPMTAG_FILEMODES, &modes) || !rpmtag_type_is_number(modes.type))
		return false;
	if (!raw(r, RPMTAG_FILEINODES, &inodes) || inodes.count != modes.count)
		inodes.count = 0;
	if (!raw(r, RPMTAG_FILEDEVICES, &devs) || devs.count != modes.count)
		devs.count = 0;
	if (!raw(r, RPMTAG_FILEFLAGS, &flags) || flags.count != modes.count)
		flags.count = 0;
	n = kiln_arena_array(&r->arena, modes.count ? modes.count : 1, sizeof(*n));
	if (!n)
		return false;
	for (i = 0; i < modes.count; i++) {
		bool linkable =
		    S_ISREG(rpmtag_qf_value_num(&modes, i)) && inodes.count &&
		    rpmtag_qf_value_num(&inodes, i) &&
		    !(flags.count && (rpmtag_qf_value_num(&flags, i) & RPMTAG_FILE_GHOST));

		n[i] = 1;
		for (j = 0; linkable && j < modes.count; j++) {
			if (j == i ||
			    rpmtag_qf_value_num(&inodes, j) != rpmtag_qf_value_num(&inodes, i))
				continue;
			if (devs.count &&
			    rpmtag_qf_value_num(&devs, j) != rpmtag_qf_value_num(&devs, i))
				continue;
			if (!S_ISREG(rpmtag_qf_value_num(&modes, j)) ||
			    (flags.count && (rpmtag_qf_value_num(&flags, j) & RPMTAG_FILE_GHOST)))
				continue;
			n[i]++;
		}
	}
	v->type = RPMTAG_TYPE_INT32;
	v->count = modes.count;
	v->data = n;
	return true;
}

/* FILEPROVIDE / FILEREQUIRE: per-file dependency ranges into DEPENDSDICT, whose entries
 * are (kind letter << 24 | index into that kind's dependency arrays). */
static bool ext_filedeps(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value fx, fn, dict;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_QF_OUTPUT);
	char want = tag == RPMTAG_FILEPROVIDE ? 'P' : 'R';
	size_t kind = tag == RPMTAG_FILEPROVIDE ? 1 : 0;
	const char **arr;
	struct deps d;
	uint32_t i, j;

	if (!raw(r, RPMTAG_FILEDEPENDSX, &fx) || !raw(r, RPMTAG_FILEDEPENDSN, &fn) ||
	    !raw(r, RPMTAG_DEPENDSDICT, &dict) || fx.count != fn.count ||
	    !rpmtag_type_is_number(fx.type) || !rpmtag_type_is_number(fn.type) ||
	    !rpmtag_type_is_number(dict.type)) {
		/* No per-file dependencies recorded: every file has none. */
		struct rpmtag_qf_value bn;
		uint32_t k;

		if (!raw(r, RPMTAG_BASENAMES, &bn))
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
		uint64_t start = rpmtag_qf_value_num(&fx, i), cnt = rpmtag_qf_value_num(&fn, i);

		kiln_buf_reset(&b);
		for (j = 0; j < cnt && start + j < dict.count; j++) {
			uint64_t e = rpmtag_qf_value_num(&dict, (uint32_t)(start + j));

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

static bool ext_filemimes(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value idx, dict;
	const char **arr;
	uint32_t i;

	(void)tag;
	if (!raw(r, RPMTAG_FILEMIMEINDEX, &idx) || !raw(r, RPMTAG_MIMEDICT, &dict) ||
	    !rpmtag_type_is_number(idx.type) || !rpmtag_type_is_string(dict.type))
		return false;
	arr = str_array(r, idx.count, v);
	for (i = 0; arr && i < idx.count; i++) {
		uint64_t k = rpmtag_qf_value_num(&idx, i);

		arr[i] = k < dict.count ? rpmtag_qf_value_str(&dict, (uint32_t)k) : "";
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
static bool ext_fileclass(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value idx, dict, modes, links;
	const char **arr;
	uint32_t i;

	(void)tag;
	if (!raw(r, RPMTAG_FILECLASS, &idx) || !raw(r, RPMTAG_CLASSDICT, &dict) ||
	    !rpmtag_type_is_number(idx.type) || !rpmtag_type_is_string(dict.type)) {
		/* No classes recorded (source packages): every file's class is empty. */
		if (!raw(r, RPMTAG_BASENAMES, &idx))
			return false;
		dict.count = 0;
	}
	if (!raw(r, RPMTAG_FILEMODES, &modes) || modes.count != idx.count)
		modes.count = 0;
	if (!raw(r, RPMTAG_FILELINKTOS, &links) || links.count != idx.count)
		links.count = 0;
	arr = str_array(r, idx.count, v);
	for (i = 0; arr && i < idx.count; i++) {
		uint64_t k = dict.count ? rpmtag_qf_value_num(&idx, i) : 0;

		arr[i] = k < dict.count ? rpmtag_qf_value_str(&dict, (uint32_t)k) : "";
		if (!*arr[i] && modes.count && links.count &&
		    S_ISLNK(rpmtag_qf_value_num(&modes, i)))
			arr[i] = kiln_arena_printf(&r->arena, "symbolic link to `%s'",
			                           rpmtag_qf_value_str(&links, i));
		else if (!*arr[i] && modes.count)
			arr[i] = type_class((uint32_t)rpmtag_qf_value_num(&modes, i));
		if (!arr[i])
			return false;
	}
	return arr != NULL;
}

/* A 32-bit numeric tag widened to INT64 (LONGSIZE from SIZE, ...). */
static bool widen(struct rpmtag_qf_render *r, uint32_t from, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value s;
	uint64_t *w;
	uint32_t i;

	if (!raw(r, from, &s) || !rpmtag_type_is_number(s.type))
		return false;
	w = kiln_arena_array(&r->arena, s.count ? s.count : 1, sizeof(*w));
	for (i = 0; w && i < s.count; i++)
		w[i] = rpmtag_qf_value_num(&s, i);
	v->type = RPMTAG_TYPE_INT64;
	v->count = s.count;
	v->data = w;
	return w != NULL;
}

static bool ext_long(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	if (raw(r, tag, v))
		return true;
	switch (tag) {
	case RPMTAG_LONGSIZE:
		return widen(r, RPMTAG_SIZE, v);
	case RPMTAG_LONGFILESIZES:
		return widen(r, RPMTAG_FILESIZES, v);
	case RPMTAG_LONGARCHIVESIZE:
		return widen(r, RPMTAG_ARCHIVESIZE, v);
	case RPMTAG_LONGSIGSIZE:
		return widen(r, RPMTAG_SIGSIZE, v);
	default:
		return false;
	}
}

/* rpm >= 4.20: RPMFORMAT is stored by v6 builders; older packages report 4 when they have
 * an immutable region, else 3. */
static bool ext_rpmformat(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_value reg;

	if (raw(r, tag, v))
		return true;
	return u32_result(r, raw(r, RPMTAG_HEADERIMMUTABLE, &reg) ? 4 : 3, v);
}

static const struct {
	uint32_t tag;
	ext_fn fn;
} exts[] = {
    {RPMTAG_NVRA, ext_nevra},
    {RPMTAG_FILENAMES, ext_filenames},
    {RPMTAG_FILEPROVIDE, ext_filedeps},
    {RPMTAG_FILEREQUIRE, ext_filedeps},
    {RPMTAG_TRIGGERCONDS, ext_trigger},
    {RPMTAG_TRIGGERTYPE, ext_trigger},
    {RPMTAG_ORIGFILENAMES, ext_filenames},
    {RPMTAG_EVR, ext_nevra},
    {RPMTAG_NVR, ext_nevra},
    {RPMTAG_NEVR, ext_nevra},
    {RPMTAG_NEVRA, ext_nevra},
    {RPMTAG_HEADERCOLOR, ext_headercolor},
    {RPMTAG_VERBOSE, ext_verbose},
    {RPMTAG_EPOCHNUM, ext_epochnum},
    {RPMTAG_INSTFILENAMES, ext_filenames},
    {RPMTAG_REQUIRENEVRS, ext_nevrs},
    {RPMTAG_PROVIDENEVRS, ext_nevrs},
    {RPMTAG_OBSOLETENEVRS, ext_nevrs},
    {RPMTAG_CONFLICTNEVRS, ext_nevrs},
    {RPMTAG_FILENLINKS, ext_filenlinks},
    {RPMTAG_RECOMMENDNEVRS, ext_nevrs},
    {RPMTAG_SUGGESTNEVRS, ext_nevrs},
    {RPMTAG_SUPPLEMENTNEVRS, ext_nevrs},
    {RPMTAG_ENHANCENEVRS, ext_nevrs},
    {RPMTAG_FILETRIGGERCONDS, ext_trigger},
    {RPMTAG_FILETRIGGERTYPE, ext_trigger},
    {RPMTAG_TRANSFILETRIGGERCONDS, ext_trigger},
    {RPMTAG_TRANSFILETRIGGERTYPE, ext_trigger},
    {RPMTAG_ARCHSUFFIX, ext_archsuffix},
    {RPMTAG_DBINSTANCE, ext_dbinstance},
    {RPMTAG_FILEMIMES, ext_filemimes},
    {RPMTAG_FILECLASS, ext_fileclass},
    {RPMTAG_LONGSIZE, ext_long},
    {RPMTAG_LONGFILESIZES, ext_long},
    {RPMTAG_LONGARCHIVESIZE, ext_long},
    {RPMTAG_LONGSIGSIZE, ext_long},
    {RPMTAG_RPMFORMAT, ext_rpmformat},
};

static bool lookup(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
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
	if (v->type == RPMTAG_TYPE_I18NSTRING && v->count > 1)
		v->count = 1;
	return true;
}

bool rpmtag_qf_get(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	struct rpmtag_qf_cache_ent *c;
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
	if (r->ncache < RPMTAG_QF_CACHE) {
		c = &r->cache[r->ncache++];
		c->tag = tag;
		c->present = v->type != RPMTAG_TYPE_NULL;
		c->v = *v;
	}
	return v->type != RPMTAG_TYPE_NULL;
}

bool rpmtag_qf_get_raw(struct rpmtag_qf_render *r, uint32_t tag, struct rpmtag_qf_value *v)
{
	return raw(r, tag, v);
}
