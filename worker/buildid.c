/*
 * buildid.c - the /usr/lib/.build-id links rpmbuild adds to packages with debug
 * information (rpm's build/files.c generateBuildIDs and addNewIDSymlink, the same in 4.18
 * and 4.20).
 *
 * When %{?__debug_package} is set (a spec with %debug_package) and the package is not
 * noarch, every executable ELF file of the package (ET_EXEC, ET_DYN, or a kernel module)
 * with a GNU build-id of 16 to 64 bytes gets a symbolic link named after the id, made in
 * the buildroot and packaged as %artifact:
 *
 *   /usr/lib/.build-id/xx/yyyy...            -> ../../../../usr/bin/prog
 *   /usr/lib/debug/.build-id/xx/yyyy....debug -> ../../../../../usr/lib/debug/usr/bin/prog...debug
 *   /usr/lib/debug/.build-id/xx/yyyy...       -> ../../../.build-id/xx/yyyy...   (compat)
 *
 * %_build_id_links picks which: compat (rpm's default), separate (no third link), alldebug
 * (the -debuginfo package links to the main files itself, the main package has none) or
 * none. A second file with the same id gets "yyyy....1" (".1.debug"), and so on.
 */
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/filelist_int.h"

#define BID_MAIN_DIR "/usr/lib/.build-id"
#define BID_DEBUG_LIB "/usr/lib/debug"
#define BID_DEBUG_PREFIX "/usr/lib/debug/"
#define BID_DEBUG_DIR "/usr/lib/debug/.build-id"

enum bid_mode { BID_NONE, BID_ALLDEBUG, BID_SEPARATE, BID_COMPAT };

/* One ELF file with a usable build-id. */
struct bid {
	const char *path; /* in the package */
	char hex[2 * 64 + 1];
	bool dbg; /* under /usr/lib/debug/ */
};

struct bids {
	struct bid *v; /* heap */
	size_t n, cap;
	bool need_main, need_dbg;
};

/* What rpm adds the links with: mkattr()'s %defattr(644,root,root,755), %artifact. */
static const struct spec_files_entry bid_dir_entry = {
    .fileflags = RPMTAG_FILE_ARTIFACT,
    .verifyflags = RPMTAG_VERIFY_ALL,
    .flags = SPEC_ENTRY_DIR,
    .defattr = {SPEC_ATTR_MODE | SPEC_ATTR_USER | SPEC_ATTR_GROUP | SPEC_ATTR_DIRMODE, 0644, 0755,
                "root", "root", true},
};
static const struct spec_files_entry bid_link_entry = {
    .fileflags = RPMTAG_FILE_ARTIFACT,
    .verifyflags = RPMTAG_VERIFY_ALL,
    .defattr = {SPEC_ATTR_MODE | SPEC_ATTR_USER | SPEC_ATTR_GROUP | SPEC_ATTR_DIRMODE, 0644, 0755,
                "root", "root", true},
};

static kiln_rc bid_add_entry(struct fl *fl, const char *path, bool dir)
{
	if (!worker_fl_cur_set(fl, dir ? &bid_dir_entry : &bid_link_entry))
		return fl->fatal;
	return worker_fl_add_binary(fl, path, path, false);
}

/* %_build_id_links; BID_NONE with fl failed for an unknown value. */
static enum bid_mode bid_mode_get(struct fl *fl)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	enum bid_mode m = BID_NONE;
	char *v = NULL;

	if (macro_expand_str(fl->o->macros, "%{?_build_id_links}", &v, &ignored))
		return BID_NONE;
	if (!*v) {
		worker_fl_warn(fl, "_build_id_links macro not set, assuming 'compat'");
		m = BID_COMPAT;
	} else if (!strcmp(v, "compat")) {
		m = BID_COMPAT;
	} else if (!strcmp(v, "separate")) {
		m = BID_SEPARATE;
	} else if (!strcmp(v, "alldebug")) {
		m = BID_ALLDEBUG;
	} else if (strcmp(v, "none")) {
		worker_fl_fail(fl, KILN_EINVAL, "_build_id_links macro set to unknown value '%s'",
		               v);
	}
	free(v);
	return m;
}

static kiln_rc bid_push(struct fl *fl, struct bids *ids, const char *path, bool dbg,
                        const unsigned char *id, size_t len)
{
	struct bid *b;
	size_t i;

	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 16;
		struct bid *v = kiln_reallocarray(ids->v, cap, sizeof(*v));

		if (!v)
			return worker_fl_nomem(fl);
		ids->v = v;
		ids->cap = cap;
	}
	b = &ids->v[ids->n++];
	b->path = path;
	b->dbg = dbg;
	for (i = 0; i < len; i++)
		snprintf(b->hex + 2 * i, 3, "%02x", id[i]);
	return KILN_OK;
}

/* One file of the package: its build-id when rpm would link it, or rpm's warning (an
 * error with %_missing_build_ids_terminate_build) when it has none that fits. */
static kiln_rc bid_file(struct fl *fl, const struct rec *r, enum bid_mode mode, bool terminate,
                        struct bids *ids)
{
	struct kiln_err ignored = KILN_ERR_INIT;
	bool dbg = !strncmp(r->cpio, BID_DEBUG_PREFIX, strlen(BID_DEBUG_PREFIX));
	struct worker_elf elf;
	struct stat st;
	kiln_rc rc = KILN_OK;
	int fd;

	if (lstat(r->disk, &st) || !S_ISREG(st.st_mode))
		return KILN_OK;
	/* As find-debuginfo: main files only when executable; debug files never are. */
	if (!dbg && !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return KILN_OK;
	fd = open(r->disk, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return KILN_OK;
	if (worker_elf_read_fd(fd, r->disk, &elf, &ignored)) {
		util_close(fd);
		return ignored.code == KILN_ENOMEM ? worker_fl_nomem(fl) : KILN_OK;
	}
	util_close(fd);
	if (elf.type != ET_EXEC && elf.type != ET_DYN && !(elf.type == ET_REL && elf.modinfo))
		goto out;
	if (elf.build_id_len >= 16 && elf.build_id_len <= 64) {
		ids->need_dbg |= dbg;
		ids->need_main |= !dbg && mode != BID_ALLDEBUG;
		if (dbg || mode != BID_ALLDEBUG)
			rc = bid_push(fl, ids, r->cpio, dbg, elf.build_id, elf.build_id_len);
		goto out;
	}
	if (terminate)
		worker_fl_fail(fl, KILN_EBUILD,
		               !elf.build_id           ? "Missing build-id in %s"
		               : elf.build_id_len < 16 ? "build-id found in %s too small"
		                                       : "build-id found in %s too large",
		               r->disk);
	else
		worker_fl_warn(fl,
		               !elf.build_id           ? "Missing build-id in %s"
		               : elf.build_id_len < 16 ? "build-id found in %s too small"
		                                       : "build-id found in %s too large",
		               r->disk);
out:
	worker_elf_release(&elf);
	return rc;
}

/* The directory path (in the package) made beneath the buildroot, each component with
 * mkdirat() under a descriptor opened beneath the buildroot's, so that a symbolic link a
 * build left there cannot lead kiln's directories and links out of it. *dfd: the
 * directory (O_PATH); *existed: it was there before. */
static kiln_rc bid_dir(struct fl *fl, const char *path, int *dfd, bool *existed)
{
	struct kiln_buf rel = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *p = path + 1;
	int parent = -1;
	kiln_rc rc = KILN_OK;

	*dfd = -1;
	*existed = true;
	while (!rc && *p) {
		size_t n = strcspn(p, "/");
		const char *at = kiln_buf_finish(&rel, fl->err) ? NULL : rel.len ? rel.ptr : ".";

		if (!at)
			return worker_fl_nomem(fl);
		rc = util_path_open_beneath(fl->rootfd, at, O_PATH | O_DIRECTORY, 0, 0, &parent,
		                            fl->err);
		if (rc)
			break;
		if (rel.len)
			kiln_buf_addch(&rel, '/');
		kiln_buf_add(&rel, p, n);
		if (kiln_buf_finish(&rel, fl->err)) {
			rc = worker_fl_nomem(fl);
		} else if (!mkdirat(parent, util_path_basename(rel.ptr), 0755)) {
			*existed = false;
		} else if (errno != EEXIST) {
			rc = kiln_err_sys(fl->err, KILN_EIO, "failed to create directory %s%s",
			                  fl->o->buildroot, path);
		}
		util_close(parent);
		p += n;
		p += *p == '/';
	}
	if (!rc)
		rc = util_path_open_beneath(fl->rootfd, rel.ptr, O_PATH | O_DIRECTORY, 0, 0, dfd,
		                            fl->err);
	kiln_buf_release(&rel);
	if (rc && rc != KILN_ENOMEM) {
		/* rpm's "failed to create directory" is a packaging error, not the end */
		char msg[KILN_ERR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", fl->err->msg);
		kiln_err_clear(fl->err);
		worker_fl_fail(fl, KILN_EIO, "failed to create directory %s%s: %s",
		               fl->o->buildroot, path, msg);
		rc = KILN_OK;
	}
	return rc;
}

/* A top directory of links, made and always packaged (%dir %artifact). */
static kiln_rc bid_topdir(struct fl *fl, const char *path)
{
	bool existed;
	int dfd;
	kiln_rc rc = bid_dir(fl, path, &dfd, &existed);

	if (!rc && dfd >= 0) {
		util_close(dfd);
		rc = bid_add_entry(fl, path, true);
	}
	return rc;
}

/* rpm's duplicate check: two ids alike are fine for hard links of one file, else worth a
 * warning. Both are links kiln made, to files of the buildroot. */
static void bid_dup_warn(struct fl *fl, const char *first, const char *other)
{
	struct stat s1, s2;
	char *r1, *r2;

	if (stat(first, &s1)) {
		worker_fl_warn(fl, "Duplicate build-id, stat %s: %s", first, strerror(errno));
		return;
	}
	if (stat(other, &s2)) {
		worker_fl_warn(fl, "Duplicate build-id, stat %s: %s", other, strerror(errno));
		return;
	}
	if (S_ISREG(s1.st_mode) && S_ISREG(s2.st_mode) && s1.st_nlink > 1 &&
	    s1.st_nlink == s2.st_nlink && s1.st_ino == s2.st_ino && s1.st_dev == s2.st_dev)
		return;
	r1 = realpath(first, NULL);
	r2 = realpath(other, NULL);
	worker_fl_warn(fl, "Duplicate build-ids %s and %s", r1 ? r1 : first, r2 ? r2 : other);
	free(r1);
	free(r2);
}

/* rpm's addNewIDSymlink: link name (in dir, the package directory dfd is; ".debug"
 * appended for a debug link) to target. With dups, a name taken by a link elsewhere moves
 * on to name.1, name.2 ... (*dups says how far); a link that already points at target
 * (a short-circuited rerun) is kept. Without dups any existing link is kept. */
static kiln_rc bid_link(struct fl *fl, int dfd, const char *dir, const char *target,
                        const char *name, bool dbg, int *dups)
{
	char nm[KILN_LIMIT_PATH], pkg[KILN_LIMIT_PATH * 2], first[KILN_LIMIT_PATH * 3];
	char host[KILN_LIMIT_PATH * 3], now[KILN_LIMIT_PATH];
	bool exists = false;
	kiln_rc rc = KILN_OK;
	int nr = 0;

	for (;; nr++) {
		ssize_t n;

		if (nr)
			snprintf(nm, sizeof(nm), "%s.%d%s", name, nr, dbg ? ".debug" : "");
		else
			snprintf(nm, sizeof(nm), "%s%s", name, dbg ? ".debug" : "");
		snprintf(pkg, sizeof(pkg), "%s/%s", dir, nm);
		snprintf(host, sizeof(host), "%s%s", fl->o->buildroot, pkg);
		if (!nr)
			snprintf(first, sizeof(first), "%s", host);
		if (faccessat(dfd, nm, F_OK, AT_SYMLINK_NOFOLLOW))
			break;
		n = dups ? readlinkat(dfd, nm, now, sizeof(now) - 1) : -1;
		if (!dups || (n >= 0 && (now[n] = '\0', !strcmp(now, target)))) {
			exists = true;
			break;
		}
	}
	if (!exists && symlinkat(target, dfd, nm) < 0)
		worker_fl_fail(fl, KILN_EIO, "failed symlink: %s -> %s: %s", host, target,
		               strerror(errno));
	else
		rc = bid_add_entry(fl, pkg, false);
	if (nr)
		bid_dup_warn(fl, first, host);
	if (dups)
		*dups = nr;
	return rc;
}

/* alldebug: the main file a debug file belongs to (its path without /usr/lib/debug, the
 * ".debug" suffix and the unique -V-R.A part), linked from the debug id; rpm skips files
 * not ending in ".debug" (dwz multifiles). */
static kiln_rc bid_alldebug_link(struct fl *fl, int dfd, const char *dir, const struct bid *b,
                                 const char *vra)
{
	size_t len = strlen(b->path), pre = strlen(BID_DEBUG_LIB), suf = strlen(".debug");
	size_t vlen = strlen(vra);
	char target[KILN_LIMIT_PATH + 16];
	int dups = 0;

	if (len <= pre + suf + vlen || strcmp(b->path + len - suf, ".debug"))
		return KILN_OK;
	snprintf(target, sizeof(target), "../../../../..%.*s", (int)(len - pre - suf - vlen),
	         b->path + pre);
	return bid_link(fl, dfd, dir, target, b->hex + 2, false, &dups);
}

/* The links of one id (rpm's loop over the collected ids), in its xx directory. */
static kiln_rc bid_links(struct fl *fl, const struct bid *b, enum bid_mode mode, const char *vra)
{
	char dir[64], target[KILN_LIMIT_PATH + 64], name[2 * 64 + 16];
	bool existed;
	int dups = 0, dfd;
	kiln_rc rc;

	snprintf(dir, sizeof(dir), "%s/%.2s", b->dbg ? BID_DEBUG_DIR : BID_MAIN_DIR, b->hex);
	rc = bid_dir(fl, dir, &dfd, &existed);
	if (rc || dfd < 0)
		return rc;
	/* Packaged by whichever package made it first, as rpm does. */
	if (!existed)
		rc = bid_add_entry(fl, dir, true);
	snprintf(target, sizeof(target), "%s%s", b->dbg ? "../../../../.." : "../../../..",
	         b->path);
	if (!rc && !fl->failed)
		rc = bid_link(fl, dfd, dir, target, b->hex + 2, b->dbg, &dups);
	if (!rc && !fl->failed && b->dbg && mode == BID_COMPAT) {
		/* The debug id leads to the main one (the last duplicate's, if any). */
		if (dups)
			snprintf(name, sizeof(name), "%s.%d", b->hex + 2, dups);
		else
			snprintf(name, sizeof(name), "%s", b->hex + 2);
		snprintf(target, sizeof(target), "../../../.build-id/%.2s/%s", b->hex, name);
		rc = bid_link(fl, dfd, dir, target, name, false, NULL);
	}
	if (!rc && !fl->failed && b->dbg && mode == BID_ALLDEBUG)
		rc = bid_alldebug_link(fl, dfd, dir, b, vra);
	util_close(dfd);
	return rc;
}

/* Duplicates are numbered in path order. rpm numbers them in the order the files were
 * listed, which for -debuginfo is the order find-debuginfo's find met them in
 * (debugfiles.list): directory order, which differs between file systems and runs, so
 * rpm's .1 and .2 can swap between two builds. kiln's stay put (a deliberate
 * difference: builds must be reproducible). */
static int bid_cmp(const void *a, const void *b)
{
	const struct bid *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static bool bid_wanted(struct fl *fl)
{
	const char *arch = rpmtag_set_get_str(fl->pkg->tags, RPMTAG_ARCH);

	return worker_fl_macro_num(fl->o->macros, "__debug_package", 0) && arch &&
	       strcmp(arch, "noarch");
}

kiln_rc worker_fl_build_ids(struct fl *fl)
{
	struct bids ids = {0};
	enum bid_mode mode;
	bool terminate;
	char *vra = NULL;
	size_t i, nrecs = fl->nrecs;
	kiln_rc rc = KILN_OK;

	if (!bid_wanted(fl))
		return KILN_OK;
	mode = bid_mode_get(fl);
	if (mode == BID_NONE)
		goto out;
	terminate = worker_fl_macro_num(fl->o->macros, "_missing_build_ids_terminate_build", 0);
	for (i = 0; !rc && i < nrecs; i++)
		rc = bid_file(fl, &fl->recs[i], mode, terminate, &ids);
	if (rc || fl->failed || !ids.n)
		goto out;
	qsort(ids.v, ids.n, sizeof(*ids.v), bid_cmp);
	if (ids.need_main && ids.need_dbg)
		worker_fl_warn(fl, "Mixing main ELF and debug files in package");
	if (ids.need_main)
		rc = bid_topdir(fl, BID_MAIN_DIR);
	if (!rc && !fl->failed && ids.need_dbg)
		rc = bid_topdir(fl, BID_DEBUG_DIR);
	if (!rc && mode == BID_ALLDEBUG && ids.need_dbg &&
	    worker_fl_macro_num(fl->o->macros, "_unique_debug_names", 0) == 1) {
		struct kiln_err e2 = KILN_ERR_INIT;

		if (macro_expand_str(fl->o->macros, "-%{VERSION}-%{RELEASE}.%{_arch}", &vra, &e2))
			worker_fl_fail(fl, e2.code, "%s", e2.msg);
	}
	for (i = 0; !rc && !fl->failed && i < ids.n; i++)
		rc = bid_links(fl, &ids.v[i], mode, vra ? vra : "");
out:
	if (!rc && fl->failed)
		worker_fl_fail(fl, KILN_EBUILD, "Generating build-id links failed");
	free(vra);
	free(ids.v);
	return rc;
}
