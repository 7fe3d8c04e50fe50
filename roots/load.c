/*
 * load.c - the installer's package set: every package's headers read with pack/, its
 * dependencies and file list, and the check that refuses a hostile package before
 * anything is written.
 */
#include "util/util.h"

#include <sys/stat.h>

#include "macro/macro.h"
#include "roots/install_int.h"

uint32_t roots_hdr_count(const struct pack_header *h, uint32_t tag)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	return e ? e->count : 0;
}

const char *roots_hdr_str(const struct pack_header *h, uint32_t tag, uint32_t i)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	/* Every string class is an array of string pointers in memory (STRING has one). */
	if (!e || i >= e->count || !rpmtag_type_is_string(e->type))
		return NULL;
	return ((const char *const *)e->data)[i];
}

bool roots_hdr_num(const struct pack_header *h, uint32_t tag, uint32_t i, uint64_t *out)
{
	const struct pack_entry *e = pack_header_get(h, tag);

	if (!e || i >= e->count)
		return false;
	switch (e->type) {
	case RPMTAG_TYPE_CHAR:
	case RPMTAG_TYPE_INT8:
		*out = ((const uint8_t *)e->data)[i];
		return true;
	case RPMTAG_TYPE_INT16:
		*out = ((const uint16_t *)e->data)[i];
		return true;
	case RPMTAG_TYPE_INT32:
		*out = ((const uint32_t *)e->data)[i];
		return true;
	case RPMTAG_TYPE_INT64:
		*out = ((const uint64_t *)e->data)[i];
		return true;
	default:
		return false;
	}
}

static int evr_cmp(const char *a, const char *b)
{
	char ea[32] = "0", eb[32] = "0";
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
	const char *va = a, *vb = b;
	const char *ra, *rb;
	char *vpa = NULL, *vpb = NULL;
	int r;

	/* [E:]V[-R]: epochs compare first (missing = 0), then versions, then releases only
	 * when both sides have one (rpm's rpmdsCompare). */
	if (ca && (size_t)(ca - a) < sizeof(ea)) {
		memcpy(ea, a, (size_t)(ca - a));
		ea[ca - a] = '\0';
		va = ca + 1;
	}
	if (cb && (size_t)(cb - b) < sizeof(eb)) {
		memcpy(eb, b, (size_t)(cb - b));
		eb[cb - b] = '\0';
		vb = cb + 1;
	}
	r = macro_vercmp(ea, eb);
	if (r)
		return r;
	ra = strrchr(va, '-');
	rb = strrchr(vb, '-');
	vpa = kiln_strndup(va, ra ? (size_t)(ra - va) : strlen(va));
	vpb = kiln_strndup(vb, rb ? (size_t)(rb - vb) : strlen(vb));
	r = vpa && vpb ? macro_vercmp(vpa, vpb) : 0;
	if (!r && ra && rb)
		r = macro_vercmp(ra + 1, rb + 1);
	free(vpa);
	free(vpb);
	return r;
}

#define TAG_ORDERNAME 5035
#define TAG_ORDERVERSION 5036
#define TAG_ORDERFLAGS 5037

#define SENSE_MASK (RPMTAG_DEP_LESS | RPMTAG_DEP_GREATER | RPMTAG_DEP_EQUAL)

bool roots_dep_matches(const struct roots_dep *r, const char *pname, uint32_t pflags,
                       const char *pversion)
{
	uint32_t rs = r->flags & SENSE_MASK, ps = pflags & SENSE_MASK;
	int cmp;

	if (strcmp(r->name, pname))
		return false;
	/* An unversioned side matches anything (rpmdsCompare). */
	if (!rs || !ps || !r->version[0] || !pversion || !pversion[0])
		return true;
	cmp = evr_cmp(pversion, r->version);
	if (cmp < 0)
		return (ps & RPMTAG_DEP_GREATER) || (rs & RPMTAG_DEP_LESS);
	if (cmp > 0)
		return (ps & RPMTAG_DEP_LESS) || (rs & RPMTAG_DEP_GREATER);
	return ((ps & RPMTAG_DEP_EQUAL) && (rs & RPMTAG_DEP_EQUAL)) ||
	       ((ps & RPMTAG_DEP_LESS) && (rs & RPMTAG_DEP_LESS)) ||
	       ((ps & RPMTAG_DEP_GREATER) && (rs & RPMTAG_DEP_GREATER));
}

static kiln_rc bad(const struct roots_pkg *p, struct kiln_err *err, const char *why)
{
	return kiln_err_set(err, KILN_EFORMAT, "%s: header: %s", p->path, why);
}

static kiln_rc load_deps(struct roots_set *set, struct roots_pkg *p, uint32_t ntag, uint32_t vtag,
                         uint32_t ftag, struct roots_dep **out, size_t *nout, struct kiln_err *err)
{
	const struct pack_header *h = &p->pkg.hdr;
	uint32_t n = roots_hdr_count(h, ntag), i;
	struct roots_dep *d;

	*out = NULL;
	*nout = 0;
	if (!n)
		return KILN_OK;
	if (roots_hdr_count(h, vtag) != n || roots_hdr_count(h, ftag) != n)
		return bad(p, err, "dependency arrays of different lengths");
	d = kiln_arena_array(&set->arena, n, sizeof(*d));
	if (!d)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		uint64_t f = 0;

		d[i].name = roots_hdr_str(h, ntag, i);
		d[i].version = roots_hdr_str(h, vtag, i);
		if (!d[i].name || !d[i].version || !roots_hdr_num(h, ftag, i, &f))
			return bad(p, err, "dependency entry of the wrong type");
		d[i].flags = (uint32_t)f;
	}
	*out = d;
	*nout = n;
	return KILN_OK;
}

static kiln_rc load_files(struct roots_set *set, struct roots_pkg *p, struct kiln_err *err)
{
	const struct pack_header *h = &p->pkg.hdr;
	uint32_t nb = roots_hdr_count(h, RPMTAG_BASENAMES);
	uint32_t nold = roots_hdr_count(h, RPMTAG_OLDFILENAMES);
	uint32_t n = nb ? nb : nold, i;

	if (n > KILN_LIMIT_PACKAGE_FILES)
		return kiln_err_set(err, KILN_ELIMIT, "%s: %" PRIu32 " files exceed %d", p->path, n,
		                    (int)KILN_LIMIT_PACKAGE_FILES);
	p->files = kiln_arena_array(&set->arena, n ? n : 1, sizeof(*p->files));
	if (!p->files)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (nb && roots_hdr_count(h, RPMTAG_DIRINDEXES) != nb)
		return bad(p, err, "DIRINDEXES not one per file");
	for (i = 0; i < n; i++) {
		uint64_t di = 0;
		const char *dn;

		if (!nb) {
			p->files[i] = roots_hdr_str(h, RPMTAG_OLDFILENAMES, i);
		} else if (roots_hdr_num(h, RPMTAG_DIRINDEXES, i, &di) && di <= UINT32_MAX &&
		           (dn = roots_hdr_str(h, RPMTAG_DIRNAMES, (uint32_t)di)) &&
		           roots_hdr_str(h, RPMTAG_BASENAMES, i)) {
			p->files[i] = kiln_arena_printf(&set->arena, "%s%s", dn,
			                                roots_hdr_str(h, RPMTAG_BASENAMES, i));
			if (!p->files[i])
				return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		} else {
			return kiln_err_set(err, KILN_EFORMAT,
			                    "%s: header: file %" PRIu32 ": bad directory index",
			                    p->path, i);
		}
		if (!p->files[i])
			return bad(p, err, "OLDFILENAMES of the wrong type");
	}
	p->nfiles = n;
	return KILN_OK;
}

static kiln_rc load_names(struct roots_set *set, struct roots_pkg *p, struct kiln_err *err)
{
	const struct pack_header *h = &p->pkg.hdr;
	const char *v = pack_header_get_string(h, RPMTAG_VERSION);
	const char *r = pack_header_get_string(h, RPMTAG_RELEASE);
	const char *a = pack_header_get_string(h, RPMTAG_ARCH);
	uint64_t e = 0;
	bool has_e = pack_header_get_number(h, RPMTAG_EPOCH, &e);

	p->name = pack_header_get_string(h, RPMTAG_NAME);
	if (!p->name || !v || !r)
		return bad(p, err, "no NAME, VERSION or RELEASE");
	if (p->pkg.source)
		return kiln_err_set(err, KILN_EINVAL, "%s: a source package cannot be installed",
		                    p->path);
	if (has_e)
		p->evr = kiln_arena_printf(&set->arena, "%" PRIu64 ":%s-%s", e, v, r);
	else
		p->evr = kiln_arena_printf(&set->arena, "%s-%s", v, r);
	p->nevra = kiln_arena_printf(&set->arena, "%s-%s.%s", p->name, p->evr, a ? a : "noarch");
	if (!p->evr || !p->nevra)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return KILN_OK;
}

static kiln_rc load_one(struct roots_set *set, struct roots_pkg *p, struct kiln_err *err)
{
	struct pack_check chk;
	kiln_rc rc;

	rc = pack_package_open(&p->pkg, p->path, NULL, err);
	if (!rc)
		rc = pack_check_header(&p->pkg, &chk, err);
	if (!rc && !chk.ok)
		rc = kiln_err_set(err, KILN_EDIGEST, "%s: header digest does not match", p->path);
	if (!rc)
		rc = load_names(set, p, err);
	if (!rc)
		rc = load_deps(set, p, RPMTAG_REQUIRENAME, RPMTAG_REQUIREVERSION,
		               RPMTAG_REQUIREFLAGS, &p->requires, &p->nrequires, err);
	if (!rc)
		rc = load_deps(set, p, RPMTAG_PROVIDENAME, RPMTAG_PROVIDEVERSION,
		               RPMTAG_PROVIDEFLAGS, &p->provides, &p->nprovides, err);
	if (!rc)
		rc = load_deps(set, p, TAG_ORDERNAME, TAG_ORDERVERSION, TAG_ORDERFLAGS, &p->orders,
		               &p->norders, err);
	if (!rc)
		rc = load_files(set, p, err);
	if (rc && err && !strstr(err->msg, p->path))
		kiln_err_wrap(err, "%s", p->path);
	return rc;
}

kiln_rc roots_set_load(struct roots_set *set, const char *const *paths, size_t n,
                       struct kiln_err *err)
{
	kiln_rc rc = KILN_OK;
	size_t i;

	memset(set, 0, sizeof(*set));
	kiln_arena_init(&set->arena, KILN_LIMIT_ARENA);
	set->pkgs = kiln_calloc(n ? n : 1, sizeof(*set->pkgs));
	set->order = kiln_calloc(n ? n : 1, sizeof(*set->order));
	if (!set->pkgs || !set->order)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	set->n = n;
	for (i = 0; !rc && i < n; i++) {
		set->pkgs[i].path = paths[i];
		set->pkgs[i].index = i;
		set->order[i] = i;
		rc = load_one(set, &set->pkgs[i], err);
	}
	return rc;
}

void roots_set_release(struct roots_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; set->pkgs && i < set->n; i++)
		pack_package_release(&set->pkgs[i].pkg);
	free(set->pkgs);
	free(set->order);
	kiln_arena_release(&set->arena);
	memset(set, 0, sizeof(*set));
}

/* ---------------------------------------------------------------------------------------- */
/* Refusing hostile packages */

static kiln_rc refuse(const struct roots_pkg *p, const char *path, struct kiln_err *err,
                      const char *why)
{
	return kiln_err_set(err, KILN_EPRIV, "%s: file '%s': %s", p->path, path, why);
}

/* An absolute path with no "", "." or ".." component and no trailing "/": what rpmbuild
 * writes, and the only form whose place in the image is the same for every reader. */
static bool path_clean(const char *path)
{
	const char *c = path;

	if (path[0] != '/' || !path[1])
		return false;
	while (*c == '/') {
		const char *next = strchr(c + 1, '/');
		size_t len = next ? (size_t)(next - c - 1) : strlen(c + 1);

		if (!len || (len == 1 && c[1] == '.') || (len == 2 && c[1] == '.' && c[2] == '.'))
			return false;
		if (len > 255)
			return false;
		if (!next)
			return true;
		c = next;
	}
	return false;
}

static kiln_rc check_file(const struct roots_pkg *p, uint32_t i, unsigned flags,
                          struct kiln_err *err)
{
	const struct pack_header *h = &p->pkg.hdr;
	const char *path = p->files[i];
	uint64_t mode = 0, fflags = 0;

	if (strlen(path) >= KILN_LIMIT_PATH)
		return refuse(p, "...", err, "path too long");
	if (!path_clean(path))
		return refuse(p, path, err, "not a clean absolute path (escapes the image)");
	if (!roots_hdr_num(h, RPMTAG_FILEMODES, i, &mode) ||
	    !roots_hdr_str(h, RPMTAG_FILEUSERNAME, i) ||
	    !roots_hdr_str(h, RPMTAG_FILEGROUPNAME, i) || !roots_hdr_str(h, RPMTAG_FILELINKTOS, i))
		return kiln_err_set(err, KILN_EFORMAT,
		                    "%s: header: file %" PRIu32 " ('%s'): file arrays too short",
		                    p->path, i, path);
	(void)roots_hdr_num(h, RPMTAG_FILEFLAGS, i, &fflags);
	if (fflags & RPMTAG_FILE_GHOST)
		return KILN_OK; /* never created */
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFIFO:
		break;
	case S_IFLNK:
		if (!roots_hdr_str(h, RPMTAG_FILELINKTOS, i)[0])
			return refuse(p, path, err, "symlink without a target");
		break;
	case S_IFCHR:
	case S_IFBLK:
		return refuse(p, path, err, "device node (the sandbox provides /dev)");
	default:
		return refuse(p, path, err, "socket or unknown file type");
	}
	/* setgid on a directory only makes new files inherit its group; on anything else, and
	 * setuid anywhere, it is a privilege for whoever runs the file. */
	if (!(flags & ROOTS_INSTALL_F_ALLOW_SETID) &&
	    ((mode & S_ISUID) || ((mode & S_ISGID) && !S_ISDIR(mode))))
		return refuse(p, path, err, "setuid or setgid (not allowed for this root)");
	return KILN_OK;
}

kiln_rc roots_set_check(const struct roots_set *set, unsigned flags, struct kiln_err *err)
{
	size_t i;
	uint32_t j;
	kiln_rc rc = KILN_OK;

	for (i = 0; !rc && i < set->n; i++) {
		const struct roots_pkg *p = &set->pkgs[i];

		for (j = 0; !rc && j < p->nfiles; j++)
			rc = check_file(p, j, flags, err);
	}
	return rc;
}
