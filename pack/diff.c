/*
 * diff.c - comparing two packages (pack.h, "Comparing packages"): both headers are read,
 * the file lists are matched by path, tags and per-file attributes are compared as
 * rendered values, and each payload is read once to digest every regular file's data,
 * keeping the files whose header digests differ (within limits) for a unified diff.
 * The result is rendered as text or JSON (docs/diff.md).
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "pack/pack.h"
#include "pack/pack_int.h"

#define NONE UINT32_MAX
#define IOBUF (64 * 1024)

/* ---------------------------------------------------------------------------------------- */
/* Which tags describe files */

/* Main-header tags with one element per file, and the names and dictionaries they index.
 * They are compared file by file, under the file's path. */
static const uint32_t file_tags[] = {
    RPMTAG_OLDFILENAMES, RPMTAG_FILESIZES,      RPMTAG_FILEMODES,        RPMTAG_FILERDEVS,
    RPMTAG_FILEMTIMES,   RPMTAG_FILEDIGESTS,    RPMTAG_FILELINKTOS,      RPMTAG_FILEFLAGS,
    RPMTAG_FILEUSERNAME, RPMTAG_FILEGROUPNAME,  RPMTAG_FILEVERIFYFLAGS,  RPMTAG_FILEDEVICES,
    RPMTAG_FILEINODES,   RPMTAG_FILELANGS,      RPMTAG_DIRINDEXES,       RPMTAG_BASENAMES,
    RPMTAG_DIRNAMES,     RPMTAG_FILECOLORS,     RPMTAG_FILECLASS,        RPMTAG_CLASSDICT,
    RPMTAG_FILEDEPENDSX, RPMTAG_FILEDEPENDSN,   RPMTAG_DEPENDSDICT,      RPMTAG_LONGFILESIZES,
    RPMTAG_FILECAPS,     RPMTAG_FILESIGNATURES, RPMTAG_VERITYSIGNATURES, RPMTAG_FILEMIMEINDEX,
    RPMTAG_MIMEDICT,
};
#define N_FILE_TAGS KILN_ARRAY_SIZE(file_tags)

static int file_tag_slot(uint32_t tag)
{
	size_t i;

	for (i = 0; i < N_FILE_TAGS; i++) {
		if (file_tags[i] == tag)
			return (int)i;
	}
	return -1;
}

/* Tags any number of elements long (the others have one per file). */
static bool is_dict(uint32_t tag)
{
	return tag == RPMTAG_DIRNAMES || tag == RPMTAG_CLASSDICT || tag == RPMTAG_DEPENDSDICT ||
	       tag == RPMTAG_MIMEDICT;
}

enum render {
	R_NUM,    /* decimal */
	R_OCTAL,  /* modes, as rpm --dump prints them */
	R_HEX,    /* verify flags */
	R_STR,    /* strings */
	R_FFLAGS, /* rpm's fflags letters */
	R_SIZE,   /* LONGFILESIZES or FILESIZES */
	R_DICT,   /* an index into the dictionary tags[1] */
	R_DEPS,   /* FILEDEPENDSX/N into DEPENDSDICT, named from REQUIRENAME/PROVIDENAME */
	R_LINKS,  /* the other members of the file's hard-link set */
};

/* The attributes other code refers to, by position in fattrs[]. */
enum {
	FA_MODE,
	FA_USER,
	FA_GROUP,
	FA_MTIME,
	FA_SIZE,
	FA_DIGEST,
};

/* One per-file attribute: its name in the output, the tags it reads (0-terminated). */
static const struct fattr {
	const char *name;
	uint32_t tags[4];
	enum render how;
} fattrs[] = {
    [FA_MODE] = {"mode", {RPMTAG_FILEMODES}, R_OCTAL},
    [FA_USER] = {"user", {RPMTAG_FILEUSERNAME}, R_STR},
    [FA_GROUP] = {"group", {RPMTAG_FILEGROUPNAME}, R_STR},
    [FA_MTIME] = {"mtime", {RPMTAG_FILEMTIMES}, R_NUM},
    [FA_SIZE] = {"size", {RPMTAG_FILESIZES, RPMTAG_LONGFILESIZES}, R_SIZE},
    [FA_DIGEST] = {"digest", {RPMTAG_FILEDIGESTS}, R_STR},
    {"link", {RPMTAG_FILELINKTOS}, R_STR},
    {"flags", {RPMTAG_FILEFLAGS}, R_FFLAGS},
    {"verify", {RPMTAG_FILEVERIFYFLAGS}, R_HEX},
    {"rdev", {RPMTAG_FILERDEVS}, R_NUM},
    {"lang", {RPMTAG_FILELANGS}, R_STR},
    {"caps", {RPMTAG_FILECAPS}, R_STR},
    {"color", {RPMTAG_FILECOLORS}, R_NUM},
    {"class", {RPMTAG_FILECLASS, RPMTAG_CLASSDICT}, R_DICT},
    {"mime", {RPMTAG_FILEMIMEINDEX, RPMTAG_MIMEDICT}, R_DICT},
    {"deps", {RPMTAG_FILEDEPENDSX, RPMTAG_FILEDEPENDSN, RPMTAG_DEPENDSDICT}, R_DEPS},
    {"hardlinks", {RPMTAG_FILEINODES, RPMTAG_FILEDEVICES}, R_LINKS},
    {"signature", {RPMTAG_FILESIGNATURES}, R_STR},
    {"verity", {RPMTAG_VERITYSIGNATURES}, R_STR},
};

/* ---------------------------------------------------------------------------------------- */
/* One side of the comparison */

struct fdata {
	unsigned char md[32]; /* SHA-256 of the data as read */
	uint64_t len;
	struct kiln_buf keep; /* the data, when kept for a text diff */
	uint32_t from;        /* the file whose record holds this one's data (hard links) */
	bool want;            /* keep the data if the limits allow */
	bool read;            /* the payload carried the data */
	bool nul;             /* a NUL byte was seen: binary */
	bool kept;
};

struct side {
	const char *name; /* borrowed: for messages */
	struct pack_package pkg;
	int fd;
	struct pack_file_list fl;
	const struct pack_entry *ft[N_FILE_TAGS]; /* borrowed: usable file by file, or NULL */
	uint32_t *order;                          /* owned: file indexes sorted by path */
	uint64_t *lkey;                           /* owned: hard-link key per file, 0 none */
	uint32_t *lorder;                         /* owned: indexes sorted by (lkey, index) */
	uint32_t *lpos;                           /* owned: each file's position in lorder */
	struct fdata *data;                       /* owned: per file */
	size_t kept;                              /* bytes kept in memory */
};

struct pair {
	uint32_t a, b; /* file indexes, NONE when the path is on one side only */
};

struct items {
	struct pack_diff_item *v; /* owned (heap) */
	size_t n, cap;
};

struct dctx {
	struct side s[2];
	struct pack_diff_opts o;
	struct pack_diff *d;
	struct items files; /* FILE_* items, appended after the tags */
	struct pair *pairs; /* owned */
	size_t npairs;
	bool differ[N_FILE_TAGS];    /* the raw values of a decomposed file tag differ */
	bool explained[N_FILE_TAGS]; /* ... and a file item accounts for it */
	struct kiln_buf r[2];        /* scratch renderings */
	unsigned char *io;           /* owned: read buffers, 2 * IOBUF */
	bool same_payload;
};

static kiln_rc nomem(struct kiln_err *err)
{
	return kiln_err_set(err, KILN_ENOMEM, "out of memory");
}

static const char *file_name(const struct side *s, uint32_t i)
{
	return s->fl.names[i];
}

static int by_path(const void *x, const void *y, void *ctx)
{
	const char *const *names = ctx;

	return strcmp(names[*(const uint32_t *)x], names[*(const uint32_t *)y]);
}

static int by_key(const void *x, const void *y, void *ctx)
{
	const uint64_t *keys = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;

	if (keys[i] != keys[j])
		return keys[i] < keys[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static const struct pack_entry *side_tag(const struct side *s, uint32_t tag)
{
	int slot = file_tag_slot(tag);

	return slot < 0 ? NULL : s->ft[slot];
}

static uint64_t file_num(const struct side *s, uint32_t tag, uint32_t i)
{
	const struct pack_entry *e = side_tag(s, tag);

	return e ? pack_entry_num(e, i) : 0;
}

static bool file_is_data(const struct side *s, uint32_t i)
{
	return S_ISREG(file_num(s, RPMTAG_FILEMODES, i)) &&
	       !(file_num(s, RPMTAG_FILEFLAGS, i) & RPMTAG_FILE_GHOST);
}

static void side_file_tags(struct side *s)
{
	size_t i;

	for (i = 0; i < N_FILE_TAGS; i++) {
		const struct pack_entry *e = pack_header_get(&s->pkg.hdr, file_tags[i]);

		s->ft[i] = e && (is_dict(file_tags[i]) || e->count == s->fl.n) ? e : NULL;
	}
}

/* Hard-link sets as the payload reader forms them: regular non-ghost files with equal
 * (device, inode), inode > 0. */
static kiln_rc side_links(struct side *s, struct kiln_err *err)
{
	uint32_t n = s->fl.n, i;

	s->lkey = kiln_calloc(n ? n : 1, sizeof(*s->lkey));
	s->lorder = kiln_calloc(n ? n : 1, sizeof(*s->lorder));
	s->lpos = kiln_calloc(n ? n : 1, sizeof(*s->lpos));
	if (!s->lkey || !s->lorder || !s->lpos)
		return nomem(err);
	for (i = 0; i < n; i++) {
		uint64_t ino = file_num(s, RPMTAG_FILEINODES, i);
		uint64_t dev = file_num(s, RPMTAG_FILEDEVICES, i);

		s->lkey[i] = file_is_data(s, i) && ino ? (dev << 32) | (ino & 0xffffffff) : 0;
		s->lorder[i] = i;
	}
	qsort_r(s->lorder, n, sizeof(*s->lorder), by_key, s->lkey);
	for (i = 0; i < n; i++)
		s->lpos[s->lorder[i]] = i;
	return KILN_OK;
}

/* The first and end positions in lorder of file i's hard-link set. */
static void link_set(const struct side *s, uint32_t i, uint32_t *first, uint32_t *end)
{
	uint32_t p = s->lpos[i], q = p + 1;

	while (p > 0 && s->lkey[s->lorder[p - 1]] == s->lkey[i])
		p--;
	while (q < s->fl.n && s->lkey[s->lorder[q]] == s->lkey[i])
		q++;
	*first = p;
	*end = q;
}

static kiln_rc side_order(struct side *s, size_t text_max, struct kiln_err *err)
{
	uint32_t n = s->fl.n, i;

	s->order = kiln_calloc(n ? n : 1, sizeof(*s->order));
	s->data = kiln_calloc(n ? n : 1, sizeof(*s->data));
	if (!s->order || !s->data)
		return nomem(err);
	for (i = 0; i < n; i++) {
		s->order[i] = i;
		s->data[i].from = i;
		kiln_buf_init(&s->data[i].keep, text_max);
	}
	qsort_r(s->order, n, sizeof(*s->order), by_path, (void *)s->fl.names);
	for (i = 1; i < n; i++) {
		if (!strcmp(file_name(s, s->order[i - 1]), file_name(s, s->order[i])))
			return kiln_err_set(err, KILN_EFORMAT,
			                    "%s: header: file '%s' is listed twice", s->name,
			                    file_name(s, s->order[i]));
	}
	return KILN_OK;
}

static kiln_rc side_open(struct side *s, const char *path, const struct pack_diff_opts *o,
                         struct kiln_err *err)
{
	kiln_rc rc;

	s->name = path;
	rc = pack_package_open(&s->pkg, path, &s->fd, err);
	if (rc)
		return rc;
	rc = pack_file_list_init(&s->fl, &s->pkg.hdr, err);
	if (rc) {
		kiln_err_wrap(err, "%s", path);
		return rc;
	}
	side_file_tags(s);
	rc = side_order(s, o->text_max, err);
	return rc ? rc : side_links(s, err);
}

static void side_release(struct side *s)
{
	uint32_t i;

	for (i = 0; s->data && i < s->fl.n; i++)
		kiln_buf_release(&s->data[i].keep);
	free(s->data);
	free(s->order);
	free(s->lkey);
	free(s->lorder);
	free(s->lpos);
	pack_file_list_release(&s->fl);
	pack_package_release(&s->pkg);
	util_close(s->fd);
}

/* ---------------------------------------------------------------------------------------- */
/* Items and values */

static kiln_rc items_push(struct items *it, struct pack_diff_item **out, struct kiln_err *err)
{
	if (it->n == it->cap) {
		size_t cap = it->cap ? it->cap * 2 : 16;
		struct pack_diff_item *v = kiln_reallocarray(it->v, cap, sizeof(*v));

		if (!v)
			return nomem(err);
		it->v = v;
		it->cap = cap;
	}
	*out = &it->v[it->n++];
	memset(*out, 0, sizeof(**out));
	return KILN_OK;
}

static kiln_rc tag_push(struct dctx *c, struct pack_diff_item **out, struct kiln_err *err)
{
	struct items it = {c->d->items, c->d->n, c->d->cap};
	kiln_rc rc = items_push(&it, out, err);

	c->d->items = it.v;
	c->d->n = it.n;
	c->d->cap = it.cap;
	return rc;
}

static const char *adup(struct dctx *c, const char *s)
{
	return kiln_arena_strdup(&c->d->arena, s);
}

/* A one-element value. */
static void value_one(struct dctx *c, struct pack_diff_value *v, const char *s, bool numeric)
{
	const char **el = kiln_arena_alloc(&c->d->arena, sizeof(*el));

	memset(v, 0, sizeof(*v));
	if (!el)
		return;
	el[0] = adup(c, s);
	v->elems = el;
	v->count = 1;
	v->numeric = numeric;
}

static void value_of_entry(struct dctx *c, const struct pack_entry *e, struct pack_diff_value *v)
{
	const struct rpmtag_info *ti = e ? rpmtag_by_num(e->tag) : NULL;
	const char **el;
	uint32_t i;

	memset(v, 0, sizeof(*v));
	if (!e)
		return;
	if (e->type == RPMTAG_TYPE_BIN) {
		char *hex = kiln_arena_alloc(&c->d->arena, (size_t)e->count * 2 + 1);

		if (hex) {
			util_hex_encode(e->data, e->count, hex);
			value_one(c, v, hex, false);
		}
		return;
	}
	el = kiln_arena_array(&c->d->arena, e->count, sizeof(*el));
	if (!el)
		return;
	for (i = 0; i < e->count; i++)
		el[i] = rpmtag_type_is_string(e->type)
		            ? adup(c, pack_entry_str(e, i))
		            : kiln_arena_printf(&c->d->arena, "%" PRIu64, pack_entry_num(e, i));
	v->elems = el;
	v->count = e->count;
	v->numeric = !rpmtag_type_is_string(e->type);
	/* rpm's table marks I18NSTRING tags as arrays; with only the "C" text stored they are
	 * shown as one string. */
	v->array = e->type == RPMTAG_TYPE_STRING_ARRAY || e->count != 1 ||
	           (ti && (ti->flags & RPMTAG_F_ARRAY) && e->type != RPMTAG_TYPE_I18NSTRING);
}

static bool entry_eq(const struct pack_entry *x, const struct pack_entry *y)
{
	uint32_t i;

	if (x->type != y->type || x->count != y->count)
		return false;
	if (!rpmtag_type_is_string(x->type))
		return !memcmp(x->data, y->data, (size_t)x->count * pack_type_size(x->type));
	for (i = 0; i < x->count; i++) {
		if (strcmp(pack_entry_str(x, i), pack_entry_str(y, i)))
			return false;
	}
	return true;
}

/* Values shown as a diff of their elements, one per line. */
static bool value_multiline(const struct pack_diff_value *v)
{
	return v->count > 1 || (v->count == 1 && strchr(v->elems[0], '\n'));
}

static void value_lines(const struct pack_diff_value *v, struct kiln_buf *out)
{
	uint32_t i;

	kiln_buf_reset(out);
	for (i = 0; i < v->count; i++) {
		kiln_buf_addstr(out, v->elems[i]);
		kiln_buf_addch(out, '\n');
	}
}

/* For a changed multi-line value: the diff of its lines, or why there is none. */
static kiln_rc tag_text(struct dctx *c, struct pack_diff_item *it, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_DIFF_OUTPUT);
	struct kiln_err e2 = KILN_ERR_INIT;
	kiln_rc rc;

	value_lines(&it->old_v, &c->r[0]);
	value_lines(&it->new_v, &c->r[1]);
	rc = kiln_buf_finish(&c->r[0], err);
	if (!rc)
		rc = kiln_buf_finish(&c->r[1], err);
	if (rc)
		return rc;
	rc = pack_diff_text(c->r[0].ptr, c->r[0].len, c->r[1].ptr, c->r[1].len, NULL, NULL,
	                    c->o.context, c->o.edits_max, &out, &e2);
	if (rc == KILN_ELIMIT)
		it->reason = kiln_arena_printf(&c->d->arena, "%" PRIu32 " vs %" PRIu32 " lines: %s",
		                               it->old_v.count, it->new_v.count, e2.msg);
	else if (!rc)
		it->text = adup(c, out.ptr);
	else
		kiln_err_merge(err, &e2);
	kiln_buf_release(&out);
	return rc == KILN_ELIMIT ? KILN_OK : rc;
}

static kiln_rc add_tag(struct dctx *c, uint32_t tag, const struct pack_entry *x,
                       const struct pack_entry *y, struct kiln_err *err)
{
	const struct rpmtag_info *ti = rpmtag_by_num(tag);
	struct pack_diff_item *it;
	kiln_rc rc = tag_push(c, &it, err);

	if (rc)
		return rc;
	it->kind = PACK_DIFF_TAG;
	it->tag = tag;
	it->name = ti ? adup(c, ti->name) : kiln_arena_printf(&c->d->arena, "TAG_%" PRIu32, tag);
	value_of_entry(c, x, &it->old_v);
	value_of_entry(c, y, &it->new_v);
	rc = kiln_arena_finish(&c->d->arena, err);
	if (!rc && x && y && (value_multiline(&it->old_v) || value_multiline(&it->new_v)))
		rc = tag_text(c, it, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Lead and header tags */

static kiln_rc lead_field(struct dctx *c, const char *name, const char *x, const char *y,
                          bool numeric, struct kiln_err *err)
{
	struct pack_diff_item *it;
	kiln_rc rc;

	if (!strcmp(x, y))
		return KILN_OK;
	rc = tag_push(c, &it, err);
	if (rc)
		return rc;
	it->kind = PACK_DIFF_LEAD;
	it->name = name;
	value_one(c, &it->old_v, x, numeric);
	value_one(c, &it->new_v, y, numeric);
	return kiln_arena_finish(&c->d->arena, err);
}

static kiln_rc diff_lead(struct dctx *c, struct kiln_err *err)
{
	const struct pack_lead *a = &c->s[0].pkg.lead, *b = &c->s[1].pkg.lead;
	const struct {
		const char *name;
		unsigned x, y;
	} nums[] = {
	    {"major", a->major, b->major}, {"minor", a->minor, b->minor},
	    {"type", a->type, b->type},    {"archnum", a->archnum, b->archnum},
	    {"osnum", a->osnum, b->osnum}, {"sigtype", a->sigtype, b->sigtype},
	};
	char x[16], y[16];
	size_t i;
	kiln_rc rc = lead_field(c, "name", a->name, b->name, false, err);

	for (i = 0; !rc && i < KILN_ARRAY_SIZE(nums); i++) {
		snprintf(x, sizeof(x), "%u", nums[i].x);
		snprintf(y, sizeof(y), "%u", nums[i].y);
		rc = lead_field(c, nums[i].name, x, y, true, err);
	}
	return rc;
}

/* A file tag is compared file by file when neither side has it in an unusable shape. */
static bool decomposed(const struct dctx *c, int slot)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		if (!c->s[i].ft[slot] && pack_header_get(&c->s[i].pkg.hdr, file_tags[slot]))
			return false;
	}
	return true;
}

static bool region_tag(uint32_t tag)
{
	return tag >= RPMTAG_HEADERIMAGE && tag <= RPMTAG_HEADERREGIONS;
}

static kiln_rc diff_tag(struct dctx *c, const struct pack_entry *x, const struct pack_entry *y,
                        struct kiln_err *err)
{
	uint32_t tag = x ? x->tag : y->tag;
	int slot = file_tag_slot(tag);
	bool same = x && y && entry_eq(x, y);

	if (region_tag(tag))
		return KILN_OK;
	if (slot >= 0 && decomposed(c, slot)) {
		c->differ[slot] = !same;
		return KILN_OK;
	}
	return same ? KILN_OK : add_tag(c, tag, x, y, err);
}

static kiln_rc diff_tags(struct dctx *c, struct kiln_err *err)
{
	const struct pack_header *ha = &c->s[0].pkg.hdr, *hb = &c->s[1].pkg.hdr;
	size_t i = 0, j = 0;
	kiln_rc rc = KILN_OK;

	while (!rc && (i < ha->n || j < hb->n)) {
		const struct pack_entry *x = i < ha->n ? &ha->entries[i] : NULL;
		const struct pack_entry *y = j < hb->n ? &hb->entries[j] : NULL;

		if (x && y && x->tag == y->tag) {
			i++;
			j++;
		} else if (x && (!y || x->tag < y->tag)) {
			y = NULL;
			i++;
		} else {
			x = NULL;
			j++;
		}
		rc = diff_tag(c, x, y, err);
	}
	return rc;
}

/* File tags whose arrays differ although no file item accounts for it (inode numbers,
 * dictionary order, directory names): reported as tags. */
static kiln_rc diff_unexplained(struct dctx *c, struct kiln_err *err)
{
	size_t i;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < N_FILE_TAGS; i++) {
		if (c->differ[i] && !c->explained[i])
			rc = add_tag(c, file_tags[i],
			             pack_header_get(&c->s[0].pkg.hdr, file_tags[i]),
			             pack_header_get(&c->s[1].pkg.hdr, file_tags[i]), err);
	}
	return rc;
}

static int item_by_tag(const void *x, const void *y)
{
	const struct pack_diff_item *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->tag < b->tag ? -1 : a->tag > b->tag;
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering per-file attributes */

static void render_fflags(uint64_t n, struct kiln_buf *out)
{
	static const struct {
		uint64_t bit;
		char c;
	} letters[] = {
	    {RPMTAG_FILE_DOC, 'd'},       {RPMTAG_FILE_CONFIG, 'c'},    {RPMTAG_FILE_SPECFILE, 's'},
	    {RPMTAG_FILE_MISSINGOK, 'm'}, {RPMTAG_FILE_NOREPLACE, 'n'}, {RPMTAG_FILE_GHOST, 'g'},
	    {RPMTAG_FILE_LICENSE, 'l'},   {RPMTAG_FILE_README, 'r'},    {RPMTAG_FILE_ARTIFACT, 'a'},
	};
	uint64_t known = 0;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(letters); i++) {
		known |= letters[i].bit;
		if (n & letters[i].bit)
			kiln_buf_addch(out, letters[i].c);
	}
	/* Bits without a letter (%pubkey, icons) must still tell values apart. */
	if (n & ~known)
		kiln_buf_addf(out, "%s0x%" PRIx64, out->len ? " " : "", n);
}

static void render_dict(const struct side *s, const struct fattr *fa, uint32_t i,
                        struct kiln_buf *out)
{
	const struct pack_entry *idx = side_tag(s, fa->tags[0]);
	const struct pack_entry *dict = side_tag(s, fa->tags[1]);
	uint64_t k;

	if (!idx)
		return;
	k = pack_entry_num(idx, i);
	if (dict && rpmtag_type_is_string(dict->type) && k < dict->count)
		kiln_buf_addstr(out, pack_entry_str(dict, (uint32_t)k));
	else
		kiln_buf_addf(out, "#%" PRIu64, k);
}

static void render_dep(const struct side *s, uint64_t e, struct kiln_buf *out)
{
	char cls = (char)(e >> 24);
	uint32_t k = (uint32_t)(e & 0xffffff);
	const struct pack_entry *names = NULL;

	if (cls == 'R')
		names = pack_header_get(&s->pkg.hdr, RPMTAG_REQUIRENAME);
	else if (cls == 'P')
		names = pack_header_get(&s->pkg.hdr, RPMTAG_PROVIDENAME);
	if (names && rpmtag_type_is_string(names->type) && k < names->count)
		kiln_buf_addf(out, "%c %s", cls, pack_entry_str(names, k));
	else
		kiln_buf_addf(out, "%c #%" PRIu32, cls >= ' ' && cls < 127 ? cls : '?', k);
}

static void render_deps(const struct side *s, uint32_t i, struct kiln_buf *out)
{
	const struct pack_entry *x = side_tag(s, RPMTAG_FILEDEPENDSX);
	const struct pack_entry *n = side_tag(s, RPMTAG_FILEDEPENDSN);
	const struct pack_entry *dict = side_tag(s, RPMTAG_DEPENDSDICT);
	uint64_t j, first, end;

	if (!x || !n)
		return;
	first = pack_entry_num(x, i);
	end = first + pack_entry_num(n, i);
	for (j = first; j < end; j++) {
		if (j > first)
			kiln_buf_addstr(out, ", ");
		if (!dict || j >= dict->count) {
			kiln_buf_addf(out, "#%" PRIu64 "...", j);
			return;
		}
		render_dep(s, pack_entry_num(dict, (uint32_t)j), out);
	}
}

static void render_links(const struct side *s, uint32_t i, struct kiln_buf *out)
{
	uint32_t p, first, end;

	if (!s->lkey[i])
		return;
	link_set(s, i, &first, &end);
	for (p = first; p < end; p++) {
		if (s->lorder[p] == i)
			continue;
		if (out->len)
			kiln_buf_addstr(out, ", ");
		kiln_buf_addstr(out, file_name(s, s->lorder[p]));
	}
}

/* Attribute fa of file i into out (emptied first). An absent tag renders as 0 or "". */
static void render_attr(const struct side *s, const struct fattr *fa, uint32_t i,
                        struct kiln_buf *out)
{
	const struct pack_entry *e = side_tag(s, fa->tags[0]);
	uint64_t n = e && !rpmtag_type_is_string(e->type) ? pack_entry_num(e, i) : 0;

	kiln_buf_reset(out);
	switch (fa->how) {
	case R_NUM:
		kiln_buf_addf(out, "%" PRIu64, n);
		break;
	case R_OCTAL:
		kiln_buf_addf(out, "0%" PRIo64, n);
		break;
	case R_HEX:
		kiln_buf_addf(out, "0x%" PRIx64, n);
		break;
	case R_STR:
		kiln_buf_addstr(out,
		                e && rpmtag_type_is_string(e->type) ? pack_entry_str(e, i) : "");
		break;
	case R_FFLAGS:
		render_fflags(n, out);
		break;
	case R_SIZE:
		kiln_buf_addf(out, "%" PRIu64, s->fl.sizes[i]);
		break;
	case R_DICT:
		render_dict(s, fa, i, out);
		break;
	case R_DEPS:
		render_deps(s, i, out);
		break;
	case R_LINKS:
		render_links(s, i, out);
		break;
	}
}

/* "0100644 root:root 5": what an added or removed file is. */
static void render_summary(const struct side *s, uint32_t i, struct kiln_buf *out)
{
	struct kiln_buf part = KILN_BUF_INIT(KILN_LIMIT_LINE);

	render_attr(s, &fattrs[FA_MODE], i, out);
	render_attr(s, &fattrs[FA_USER], i, &part);
	kiln_buf_addf(out, " %s", part.ptr);
	render_attr(s, &fattrs[FA_GROUP], i, &part);
	kiln_buf_addf(out, ":%s %" PRIu64, part.ptr, s->fl.sizes[i]);
	kiln_buf_release(&part);
}

/* ---------------------------------------------------------------------------------------- */
/* File list and attributes */

static kiln_rc pair_files(struct dctx *c, struct kiln_err *err)
{
	const struct side *a = &c->s[0], *b = &c->s[1];
	uint32_t i = 0, j = 0;

	c->pairs = kiln_calloc((size_t)a->fl.n + b->fl.n + 1, sizeof(*c->pairs));
	if (!c->pairs)
		return nomem(err);
	while (i < a->fl.n || j < b->fl.n) {
		int cmp = i == a->fl.n ? 1
		          : j == b->fl.n
		              ? -1
		              : strcmp(file_name(a, a->order[i]), file_name(b, b->order[j]));
		struct pair *p = &c->pairs[c->npairs++];

		p->a = cmp <= 0 ? a->order[i++] : NONE;
		p->b = cmp >= 0 ? b->order[j++] : NONE;
	}
	return KILN_OK;
}

static void explain(struct dctx *c, const uint32_t *tags)
{
	int slot;

	for (; *tags; tags++) {
		slot = file_tag_slot(*tags);
		if (slot >= 0)
			c->explained[slot] = true;
	}
}

static kiln_rc file_item(struct dctx *c, enum pack_diff_kind kind, const char *path,
                         struct pack_diff_item **out, struct kiln_err *err)
{
	kiln_rc rc = items_push(&c->files, out, err);

	if (rc)
		return rc;
	(*out)->kind = kind;
	(*out)->path = adup(c, path);
	return KILN_OK;
}

/* A file on one side only: every per-file array changes length, so all are explained. */
static kiln_rc diff_lonely(struct dctx *c, const struct pair *p, struct kiln_err *err)
{
	int si = p->a == NONE ? 1 : 0;
	uint32_t i = si ? p->b : p->a;
	struct pack_diff_item *it;
	size_t k;
	kiln_rc rc;

	rc = file_item(c, si ? PACK_DIFF_FILE_ADDED : PACK_DIFF_FILE_REMOVED,
	               file_name(&c->s[si], i), &it, err);
	if (rc)
		return rc;
	render_summary(&c->s[si], i, &c->r[0]);
	value_one(c, si ? &it->new_v : &it->old_v, c->r[0].ptr, false);
	for (k = 0; k < N_FILE_TAGS; k++)
		c->explained[k] = true;
	return kiln_buf_finish(&c->r[0], err);
}

static kiln_rc diff_attrs(struct dctx *c, const struct pair *p, struct kiln_err *err)
{
	size_t k;
	kiln_rc rc = KILN_OK;

	for (k = 0; !rc && k < KILN_ARRAY_SIZE(fattrs); k++) {
		const struct fattr *fa = &fattrs[k];
		struct pack_diff_item *it;
		bool numeric = fa->how == R_NUM || fa->how == R_SIZE;

		render_attr(&c->s[0], fa, p->a, &c->r[0]);
		render_attr(&c->s[1], fa, p->b, &c->r[1]);
		rc = kiln_buf_finish(&c->r[0], err);
		if (!rc)
			rc = kiln_buf_finish(&c->r[1], err);
		if (rc || !strcmp(c->r[0].ptr, c->r[1].ptr))
			continue;
		explain(c, fa->tags);
		rc = file_item(c, PACK_DIFF_FILE_ATTR, file_name(&c->s[0], p->a), &it, err);
		if (rc)
			break;
		it->name = fa->name;
		value_one(c, &it->old_v, c->r[0].ptr, numeric);
		value_one(c, &it->new_v, c->r[1].ptr, numeric);
	}
	return rc ? rc : kiln_arena_finish(&c->d->arena, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Payloads */

/* Are the compressed payloads byte for byte equal? Then no file's data can differ. */
static kiln_rc payloads_equal(struct dctx *c, bool *same, struct kiln_err *err)
{
	unsigned char *x = c->io, *y = c->io + IOBUF;
	size_t gx = 0, gy = 0, i;
	kiln_rc rc = KILN_OK;

	*same = true;
	for (i = 0; i < 2; i++) {
		if (lseek(c->s[i].fd, (off_t)c->s[i].pkg.payload_off, SEEK_SET) < 0)
			return kiln_err_sys(err, KILN_EIO, "%s: seek to the payload", c->s[i].name);
	}
	do {
		rc = util_read_full(c->s[0].fd, x, IOBUF, &gx, err);
		if (!rc)
			rc = util_read_full(c->s[1].fd, y, IOBUF, &gy, err);
		if (!rc && (gx != gy || memcmp(x, y, gx)))
			*same = false;
	} while (!rc && *same && gx);
	return rc;
}

/* Mark the files whose data is worth keeping: both sides regular, digests or sizes that
 * differ in the headers, both small enough. A hard-link set keeps through any member. */
static void mark_wanted(struct dctx *c)
{
	size_t k, si;

	for (k = 0; k < c->npairs; k++) {
		const struct pair *p = &c->pairs[k];

		if (p->a == NONE || p->b == NONE || !file_is_data(&c->s[0], p->a) ||
		    !file_is_data(&c->s[1], p->b))
			continue;
		render_attr(&c->s[0], &fattrs[FA_DIGEST], p->a, &c->r[0]);
		render_attr(&c->s[1], &fattrs[FA_DIGEST], p->b, &c->r[1]);
		if (!strcmp(c->r[0].ptr, c->r[1].ptr) &&
		    c->s[0].fl.sizes[p->a] == c->s[1].fl.sizes[p->b])
			continue;
		if (c->s[0].fl.sizes[p->a] > c->o.text_max ||
		    c->s[1].fl.sizes[p->b] > c->o.text_max)
			continue;
		c->s[0].data[p->a].want = true;
		c->s[1].data[p->b].want = true;
	}
	for (si = 0; si < 2; si++) {
		struct side *s = &c->s[si];
		uint32_t i, first, end, q;

		for (i = 0; i < s->fl.n; i++) {
			if (!s->data[i].want || !s->lkey[i])
				continue;
			link_set(s, i, &first, &end);
			for (q = first; q < end; q++)
				s->data[s->lorder[q]].want = true;
		}
	}
}

static kiln_rc read_data(struct dctx *c, struct side *s, struct pack_payload *pl,
                         const struct pack_file_info *fi, struct kiln_err *err)
{
	struct fdata *f = &s->data[fi->index];
	struct util_digest dg = {0};
	size_t got = 0;
	kiln_rc rc = util_digest_init(&dg, UTIL_DIGEST_SHA256, err);

	f->read = true;
	f->kept = f->want && s->kept + fi->data_size <= KILN_LIMIT_DIFF_KEEP &&
	          fi->data_size <= c->o.text_max;
	if (f->kept)
		s->kept += (size_t)fi->data_size;
	while (!rc) {
		rc = pack_payload_read(pl, c->io, IOBUF, &got, err);
		if (rc || !got)
			break;
		util_digest_update(&dg, c->io, got);
		f->len += got;
		f->nul = f->nul || memchr(c->io, 0, got);
		if (f->kept)
			kiln_buf_add(&f->keep, c->io, got);
	}
	if (!rc)
		rc = util_digest_final(&dg, f->md, err);
	if (!rc && f->kept && f->keep.err) {
		f->kept = false;
		kiln_buf_release(&f->keep);
	}
	util_digest_release(&dg);
	return rc;
}

/* Members of a hard-link set without data share the data of the member that has it. */
static void share_links(struct side *s)
{
	uint32_t i, p, first, end;

	for (i = 0; i < s->fl.n; i++) {
		if (s->data[i].read || !s->lkey[i])
			continue;
		link_set(s, i, &first, &end);
		for (p = first; p < end; p++) {
			if (s->data[s->lorder[p]].read)
				s->data[i].from = s->lorder[p];
		}
	}
}

static kiln_rc side_read_payload(struct dctx *c, struct side *s, struct kiln_err *err)
{
	struct pack_payload *pl = NULL;
	struct pack_file_info fi;
	kiln_rc rc = KILN_OK;

	if (lseek(s->fd, (off_t)s->pkg.payload_off, SEEK_SET) < 0)
		return kiln_err_sys(err, KILN_EIO, "%s: seek to the payload", s->name);
	rc = pack_payload_open(&s->pkg, s->fd, &pl, err);
	while (!rc) {
		rc = pack_payload_next(pl, &fi, err);
		if (!rc && S_ISREG(fi.mode) && fi.index < s->fl.n &&
		    (fi.nlink <= 1 || fi.link_data))
			rc = read_data(c, s, pl, &fi, err);
	}
	pack_payload_free(pl);
	if (rc == KILN_ENOTFOUND) {
		share_links(s);
		return KILN_OK;
	}
	kiln_err_wrap(err, "%s", s->name);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Contents */

static const char *diff_label(struct dctx *c, const char *side, const char *path)
{
	return kiln_arena_printf(&c->d->arena, "%s%s%s", side, path[0] == '/' ? "" : "/", path);
}

static kiln_rc content_text(struct dctx *c, struct pack_diff_item *it, const struct fdata *x,
                            const struct fdata *y, struct kiln_err *err)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_LIMIT_DIFF_OUTPUT);
	struct kiln_err e2 = KILN_ERR_INIT;
	kiln_rc rc;

	rc = pack_diff_text(x->keep.ptr, x->keep.len, y->keep.ptr, y->keep.len,
	                    diff_label(c, "a", it->path), diff_label(c, "b", it->path),
	                    c->o.context, c->o.edits_max, &out, &e2);
	if (!rc) {
		it->content = PACK_DIFF_CONTENT_TEXT;
		it->text = adup(c, out.ptr);
	} else if (rc == KILN_ELIMIT) {
		it->content = PACK_DIFF_CONTENT_LARGE;
		it->reason = adup(c, e2.msg);
		rc = KILN_OK;
	} else {
		kiln_err_merge(err, &e2);
	}
	kiln_buf_release(&out);
	return rc;
}

static const char *large_reason(struct dctx *c, const struct fdata *x, const struct fdata *y)
{
	if (x->len > c->o.text_max || y->len > c->o.text_max)
		return kiln_arena_printf(&c->d->arena, "larger than %zu bytes", c->o.text_max);
	if (x->want && y->want)
		return kiln_arena_printf(&c->d->arena, "more than %zu MiB of changed files",
		                         (size_t)(KILN_LIMIT_DIFF_KEEP / KILN_MIB));
	return "the headers give equal digests and sizes";
}

static kiln_rc diff_content(struct dctx *c, const struct pair *p, struct kiln_err *err)
{
	const struct fdata *x, *y;
	struct pack_diff_item *it;
	kiln_rc rc;

	if (c->same_payload || !file_is_data(&c->s[0], p->a) || !file_is_data(&c->s[1], p->b))
		return KILN_OK;
	x = &c->s[0].data[c->s[0].data[p->a].from];
	y = &c->s[1].data[c->s[1].data[p->b].from];
	if (!x->read || !y->read || !memcmp(x->md, y->md, sizeof(x->md)))
		return KILN_OK;
	rc = file_item(c, PACK_DIFF_FILE_CONTENT, file_name(&c->s[0], p->a), &it, err);
	if (rc)
		return rc;
	it->old_size = x->len;
	it->new_size = y->len;
	util_hex_encode(x->md, sizeof(x->md), it->old_sha256);
	util_hex_encode(y->md, sizeof(y->md), it->new_sha256);
	if (x->nul || y->nul) {
		it->content = PACK_DIFF_CONTENT_BINARY;
	} else if (x->kept && y->kept) {
		rc = content_text(c, it, x, y, err);
	} else {
		it->content = PACK_DIFF_CONTENT_LARGE;
		it->reason = large_reason(c, x, y);
	}
	return rc ? rc : kiln_arena_finish(&c->d->arena, err);
}

static kiln_rc diff_files(struct dctx *c, struct kiln_err *err)
{
	size_t k;
	kiln_rc rc = KILN_OK;

	for (k = 0; !rc && k < c->npairs; k++) {
		const struct pair *p = &c->pairs[k];

		if (p->a == NONE || p->b == NONE) {
			rc = diff_lonely(c, p, err);
			continue;
		}
		rc = diff_attrs(c, p, err);
		if (!rc)
			rc = diff_content(c, p, err);
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Putting it together */

static kiln_rc add_bytes(struct dctx *c, const char *what, uint64_t x, uint64_t y,
                         struct kiln_err *err)
{
	struct pack_diff_item *it;
	kiln_rc rc = items_push(&c->files, &it, err);

	if (rc)
		return rc;
	it->kind = PACK_DIFF_BYTES;
	it->name = what;
	it->old_size = x;
	it->new_size = y;
	return KILN_OK;
}

static uint64_t payload_size(const struct side *s)
{
	return s->pkg.file_size > s->pkg.payload_off ? s->pkg.file_size - s->pkg.payload_off : 0;
}

/* Nothing explains a byte difference: say so, so that no items means identical. */
static kiln_rc diff_bytes(struct dctx *c, size_t tags, struct kiln_err *err)
{
	const struct kiln_buf *x = &c->s[0].pkg.hdr_raw, *y = &c->s[1].pkg.hdr_raw;
	kiln_rc rc = KILN_OK;

	if (tags || c->files.n)
		return KILN_OK;
	if (x->len != y->len || memcmp(x->ptr, y->ptr, x->len))
		rc = add_bytes(c, "header", x->len, y->len, err);
	if (!rc && !c->same_payload)
		rc = add_bytes(c, "payload", payload_size(&c->s[0]), payload_size(&c->s[1]), err);
	return rc;
}

static kiln_rc append_files(struct dctx *c, struct kiln_err *err)
{
	size_t k;
	kiln_rc rc = KILN_OK;

	for (k = 0; !rc && k < c->files.n; k++) {
		struct pack_diff_item *it;

		rc = tag_push(c, &it, err);
		if (!rc)
			*it = c->files.v[k];
	}
	return rc;
}

static kiln_rc diff_run(struct dctx *c, struct kiln_err *err)
{
	size_t lead, tags;
	kiln_rc rc = diff_lead(c, err);

	lead = c->d->n;
	if (!rc)
		rc = pair_files(c, err);
	if (!rc)
		rc = payloads_equal(c, &c->same_payload, err);
	if (!rc && !c->same_payload) {
		mark_wanted(c);
		rc = side_read_payload(c, &c->s[0], err);
		if (!rc)
			rc = side_read_payload(c, &c->s[1], err);
	}
	if (!rc)
		rc = diff_tags(c, err);
	if (!rc)
		rc = diff_files(c, err);
	if (!rc)
		rc = diff_unexplained(c, err);
	if (rc)
		return rc;
	tags = c->d->n - lead;
	if (tags)
		qsort(c->d->items + lead, tags, sizeof(*c->d->items), item_by_tag);
	rc = diff_bytes(c, tags, err);
	if (!rc)
		rc = append_files(c, err);
	return rc ? rc : kiln_arena_finish(&c->d->arena, err);
}

void pack_diff_opts_init(struct pack_diff_opts *o)
{
	o->text_max = KILN_LIMIT_DIFF_TEXT;
	o->edits_max = KILN_LIMIT_DIFF_EDITS;
	o->context = 3;
}

kiln_rc pack_diff_files(const char *old_path, const char *new_path, const struct pack_diff_opts *o,
                        struct pack_diff *out, struct kiln_err *err)
{
	struct dctx c;
	size_t i;
	kiln_rc rc;

	memset(&c, 0, sizeof(c));
	memset(out, 0, sizeof(*out));
	kiln_arena_init(&out->arena, KILN_LIMIT_ARENA);
	c.d = out;
	c.s[0].fd = c.s[1].fd = -1;
	if (o)
		c.o = *o;
	else
		pack_diff_opts_init(&c.o);
	if (c.o.text_max > KILN_LIMIT_DIFF_KEEP)
		c.o.text_max = KILN_LIMIT_DIFF_KEEP;
	for (i = 0; i < 2; i++)
		kiln_buf_init(&c.r[i], KILN_LIMIT_DIFF_OUTPUT);
	c.io = kiln_malloc(2 * IOBUF);
	rc = c.io ? KILN_OK : nomem(err);
	if (!rc)
		rc = side_open(&c.s[0], old_path, &c.o, err);
	if (!rc)
		rc = side_open(&c.s[1], new_path, &c.o, err);
	if (!rc)
		rc = diff_run(&c, err);
	for (i = 0; i < 2; i++) {
		side_release(&c.s[i]);
		kiln_buf_release(&c.r[i]);
	}
	free(c.files.v);
	free(c.pairs);
	free(c.io);
	return rc;
}

void pack_diff_release(struct pack_diff *d)
{
	if (!d)
		return;
	free(d->items);
	kiln_arena_release(&d->arena);
	memset(d, 0, sizeof(*d));
}

static bool is_file_item(const struct pack_diff_item *it)
{
	return it->kind == PACK_DIFF_FILE_ADDED || it->kind == PACK_DIFF_FILE_REMOVED ||
	       it->kind == PACK_DIFF_FILE_ATTR || it->kind == PACK_DIFF_FILE_CONTENT;
}

kiln_rc pack_diff_paths(const struct pack_diff *d, const char ***paths, size_t *n,
                        struct kiln_err *err)
{
	const char **v = kiln_calloc(d->n + 1, sizeof(*v));
	size_t i;

	*paths = NULL;
	*n = 0;
	if (!v)
		return nomem(err);
	for (i = 0; i < d->n; i++) {
		const struct pack_diff_item *it = &d->items[i];

		if (is_file_item(it) && (!*n || strcmp(v[*n - 1], it->path)))
			v[(*n)++] = it->path;
	}
	*paths = v;
	return KILN_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Text output */

static const char *shown(const char *s)
{
	return *s ? s : "(none)";
}

/* Each line of text, indented by two spaces. */
static void add_indented(struct kiln_buf *out, const char *text, const char *mark)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		kiln_buf_addf(out, "  %s%.*s\n", mark, (int)len, text);
		text += len + (nl ? 1 : 0);
	}
}

static void add_value_lines(struct kiln_buf *out, const struct pack_diff_value *v, const char *mark)
{
	uint32_t i;

	for (i = 0; i < v->count; i++) {
		if (!*v->elems[i])
			kiln_buf_addf(out, "  %s\n", mark);
		add_indented(out, v->elems[i], mark);
	}
}

static void text_tag(struct kiln_buf *out, const struct pack_diff_item *it, const char *what)
{
	const struct pack_diff_value *o = &it->old_v, *n = &it->new_v;
	bool multi = value_multiline(o) || value_multiline(n);

	kiln_buf_addf(out, "%s %s:", what, it->name);
	if (!o->count || !n->count) {
		const struct pack_diff_value *v = o->count ? o : n;

		kiln_buf_addstr(out, o->count ? " removed" : " added");
		if (!multi) {
			kiln_buf_addf(out, ": %s\n", shown(v->elems[0]));
			return;
		}
		kiln_buf_addch(out, '\n');
		add_value_lines(out, v, o->count ? "-" : "+");
		return;
	}
	if (!multi) {
		kiln_buf_addf(out, " %s -> %s\n", shown(o->elems[0]), shown(n->elems[0]));
		return;
	}
	kiln_buf_addch(out, '\n');
	if (it->text)
		add_indented(out, it->text, "");
	else
		kiln_buf_addf(out, "  (%s)\n", it->reason ? it->reason : "values differ");
}

static void text_content(struct kiln_buf *out, const struct pack_diff_item *it)
{
	switch (it->content) {
	case PACK_DIFF_CONTENT_TEXT:
		kiln_buf_addf(out, "file %s: contents differ\n", it->path);
		add_indented(out, it->text, "");
		break;
	case PACK_DIFF_CONTENT_BINARY:
		kiln_buf_addf(out, "file %s: binary contents differ (sha256 %s -> %s)\n", it->path,
		              it->old_sha256, it->new_sha256);
		break;
	case PACK_DIFF_CONTENT_LARGE:
		kiln_buf_addf(out,
		              "file %s: contents differ (%" PRIu64 " bytes vs %" PRIu64
		              " bytes; %s)\n  sha256 %s -> %s\n",
		              it->path, it->old_size, it->new_size, it->reason, it->old_sha256,
		              it->new_sha256);
		break;
	}
}

static void text_item(struct kiln_buf *out, const struct pack_diff_item *it)
{
	switch (it->kind) {
	case PACK_DIFF_LEAD:
		text_tag(out, it, "lead");
		break;
	case PACK_DIFF_TAG:
		text_tag(out, it, "tag");
		break;
	case PACK_DIFF_FILE_ADDED:
		kiln_buf_addf(out, "file %s: added (%s)\n", it->path, it->new_v.elems[0]);
		break;
	case PACK_DIFF_FILE_REMOVED:
		kiln_buf_addf(out, "file %s: removed (%s)\n", it->path, it->old_v.elems[0]);
		break;
	case PACK_DIFF_FILE_ATTR:
		kiln_buf_addf(out, "file %s: %s %s -> %s\n", it->path, it->name,
		              shown(it->old_v.elems[0]), shown(it->new_v.elems[0]));
		break;
	case PACK_DIFF_FILE_CONTENT:
		text_content(out, it);
		break;
	case PACK_DIFF_BYTES:
		kiln_buf_addf(out,
		              "%s: bytes differ (%" PRIu64 " bytes vs %" PRIu64
		              " bytes), though every %s"
		              " is equal\n",
		              it->name, it->old_size, it->new_size,
		              !strcmp(it->name, "header") ? "tag" : "file");
		break;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* JSON output */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* A JSON string; bytes that are not UTF-8 are written as the code point of their value
 * (as if Latin-1), so the output is always valid JSON. */
static void json_str(struct kiln_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), len;

	kiln_buf_addch(out, '"');
	while (n) {
		len = utf8_len(p, n);
		if (*p == '"' || *p == '\\')
			kiln_buf_addf(out, "\\%c", *p);
		else if (*p == '\n')
			kiln_buf_addstr(out, "\\n");
		else if (*p == '\t')
			kiln_buf_addstr(out, "\\t");
		else if (*p < 0x20 || *p == 0x7f || !len)
			kiln_buf_addf(out, "\\u%04x", *p);
		else {
			kiln_buf_add(out, p, len);
			p += len;
			n -= len;
			continue;
		}
		p++;
		n--;
	}
	kiln_buf_addch(out, '"');
}

static void json_elem(struct kiln_buf *out, const struct pack_diff_value *v, uint32_t i)
{
	if (v->numeric)
		kiln_buf_addstr(out, v->elems[i]);
	else
		json_str(out, v->elems[i]);
}

static void json_value(struct kiln_buf *out, const char *key, const struct pack_diff_value *v)
{
	uint32_t i;

	kiln_buf_addf(out, ", \"%s\": ", key);
	if (!v->count) {
		kiln_buf_addstr(out, "null");
		return;
	}
	if (!v->array) {
		json_elem(out, v, 0);
		return;
	}
	kiln_buf_addch(out, '[');
	for (i = 0; i < v->count; i++) {
		if (i)
			kiln_buf_addstr(out, ", ");
		json_elem(out, v, i);
	}
	kiln_buf_addch(out, ']');
}

static void json_key_str(struct kiln_buf *out, const char *key, const char *s)
{
	kiln_buf_addf(out, ", \"%s\": ", key);
	json_str(out, s);
}

static const char *json_kind(enum pack_diff_kind k)
{
	switch (k) {
	case PACK_DIFF_LEAD:
		return "lead";
	case PACK_DIFF_TAG:
		return "tag";
	case PACK_DIFF_FILE_ADDED:
		return "file-added";
	case PACK_DIFF_FILE_REMOVED:
		return "file-removed";
	case PACK_DIFF_FILE_ATTR:
		return "file";
	case PACK_DIFF_FILE_CONTENT:
		return "content";
	case PACK_DIFF_BYTES:
		return "bytes";
	}
	return "?";
}

static void json_content(struct kiln_buf *out, const struct pack_diff_item *it)
{
	static const char *const kinds[] = {"text", "binary", "large"};

	json_key_str(out, "content", kinds[it->content]);
	kiln_buf_addf(out, ", \"old_size\": %" PRIu64 ", \"new_size\": %" PRIu64, it->old_size,
	              it->new_size);
	json_key_str(out, "old_sha256", it->old_sha256);
	json_key_str(out, "new_sha256", it->new_sha256);
	if (it->text)
		json_key_str(out, "diff", it->text);
	if (it->reason)
		json_key_str(out, "reason", it->reason);
}

static void json_item(struct kiln_buf *out, const struct pack_diff_item *it)
{
	kiln_buf_addf(out, "    {\"kind\": \"%s\"", json_kind(it->kind));
	if (it->kind == PACK_DIFF_TAG)
		kiln_buf_addf(out, ", \"tag\": %" PRIu32, it->tag);
	if (it->path)
		json_key_str(out, "path", it->path);
	if (it->name)
		json_key_str(out,
		             it->kind == PACK_DIFF_TAG || it->kind == PACK_DIFF_BYTES ? "name"
		                                                                      : "field",
		             it->name);
	if (it->kind == PACK_DIFF_FILE_CONTENT)
		json_content(out, it);
	else if (it->kind == PACK_DIFF_BYTES)
		kiln_buf_addf(out, ", \"old_size\": %" PRIu64 ", \"new_size\": %" PRIu64,
		              it->old_size, it->new_size);
	else {
		json_value(out, "old", &it->old_v);
		json_value(out, "new", &it->new_v);
	}
	if (it->kind == PACK_DIFF_TAG && it->text)
		json_key_str(out, "diff", it->text);
	kiln_buf_addch(out, '}');
}

static kiln_rc format_json(const struct pack_diff *d, const char *old_name, const char *new_name,
                           struct kiln_buf *out, struct kiln_err *err)
{
	const char **paths = NULL;
	size_t i, n = 0;
	kiln_rc rc = pack_diff_paths(d, &paths, &n, err);

	if (rc)
		return rc;
	kiln_buf_addstr(out, "{\n  \"old\": ");
	json_str(out, old_name);
	kiln_buf_addstr(out, ",\n  \"new\": ");
	json_str(out, new_name);
	kiln_buf_addf(out, ",\n  \"identical\": %s,\n  \"differences\": [",
	              d->n ? "false" : "true");
	for (i = 0; i < d->n; i++) {
		kiln_buf_addstr(out, i ? ",\n" : "\n");
		json_item(out, &d->items[i]);
	}
	kiln_buf_addstr(out, d->n ? "\n  ],\n  \"files\": [" : "],\n  \"files\": [");
	for (i = 0; i < n; i++) {
		if (i)
			kiln_buf_addstr(out, ", ");
		json_str(out, paths[i]);
	}
	kiln_buf_addstr(out, "]\n}\n");
	free(paths);
	return KILN_OK;
}

kiln_rc pack_diff_format(const struct pack_diff *d, const char *old_name, const char *new_name,
                         unsigned flags, struct kiln_buf *out, struct kiln_err *err)
{
	size_t i;
	kiln_rc rc = KILN_OK;

	if (flags & PACK_DIFF_F_JSON)
		rc = format_json(d, old_name, new_name, out, err);
	else if (d->n)
		kiln_buf_addf(out, "--- %s\n+++ %s\n", old_name, new_name);
	for (i = 0; !(flags & PACK_DIFF_F_JSON) && i < d->n; i++)
		text_item(out, &d->items[i]);
	return rc ? rc : kiln_buf_finish(out, err);
}
