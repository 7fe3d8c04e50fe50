/*
 * install_int.h - private to roots/: the installer's package set (load.c), its order
 * (order.c), unpacking (unpack.c), account lookups (passwd.c) and scriptlets (script.c).
 */
#ifndef KILN_ROOTS_INSTALL_INT_H
#define KILN_ROOTS_INSTALL_INT_H

#include "roots/roots.h"
#include "pack/pack.h"

/* ---------------------------------------------------------------------------------------- */
/* The package set */

/* One dependency of a header (borrowed from the header's arena). */
struct roots_dep {
	const char *name;
	const char *version; /* "" when unversioned */
	uint32_t flags;      /* RPMTAG_DEP_* */
};

struct roots_pkg {
	const char *path;        /* borrowed: the caller's package file */
	struct pack_package pkg; /* owned: lead and headers (pack_package_release) */
	const char *name;        /* borrowed from pkg.hdr */
	const char *evr;         /* set arena: "[E:]V-R" */
	const char *nevra;       /* set arena: "N-[E:]V-R.A" */
	struct roots_dep *requires, *provides, *orders; /* set arena */
	size_t nrequires, nprovides, norders;
	const char **files; /* set arena: every file's absolute path, header order */
	uint32_t nfiles;
	size_t index; /* position in the caller's list */
};

struct roots_set {
	struct kiln_arena arena; /* owns every string and array above but pkg */
	struct roots_pkg *pkgs;  /* owned (heap), in the caller's order */
	size_t n;
	size_t *order; /* owned (heap): install order, indexes into pkgs */
};

/* Read the headers of every package (no payload). set must be zeroed; release it with
 * roots_set_release() on success and on error. Errors name the package file. */
KILN_MUST_CHECK kiln_rc roots_set_load(struct roots_set *set, const char *const *paths, size_t n,
                                       struct kiln_err *err);
void roots_set_release(struct roots_set *set);

/* Refuse a hostile package before anything is written (roots.h step 1): KILN_EPRIV naming
 * the package file and the path. flags: enum roots_install_flags. */
KILN_MUST_CHECK kiln_rc roots_set_check(const struct roots_set *set, unsigned flags,
                                        struct kiln_err *err);

/* rpm's transaction order (order.c has the rules): fills set->order. */
KILN_MUST_CHECK kiln_rc roots_set_order(struct roots_set *set, struct kiln_err *err);

/* Header accessors: the i-th string / number of tag, NULL / false when absent. */
const char *roots_hdr_str(const struct pack_header *h, uint32_t tag, uint32_t i);
bool roots_hdr_num(const struct pack_header *h, uint32_t tag, uint32_t i, uint64_t *out);
uint32_t roots_hdr_count(const struct pack_header *h, uint32_t tag);

/* Does the provide (name, flags, version) satisfy the requirement r? rpm's range overlap. */
bool roots_dep_matches(const struct roots_dep *r, const char *pname, uint32_t pflags,
                       const char *pversion);

/* ---------------------------------------------------------------------------------------- */
/* Accounts of the image (passwd.c) */

/* name -> id tables read from the image's /etc/passwd or /etc/group. */
struct roots_ids {
	struct kiln_arena arena; /* owns names and the array */
	const char **names;
	uint32_t *ids;
	size_t n;
};

/* Parse an /etc/passwd or /etc/group text (name:x:id:...) into ids (zeroed or released
 * first). Malformed lines are skipped, as getpwnam does; more than 65536 lines or a line
 * over 64 KiB is KILN_ELIMIT. The fuzz entry point. */
KILN_MUST_CHECK kiln_rc roots_ids_parse(struct roots_ids *ids, const char *text, size_t len,
                                        struct kiln_err *err);
/* Look a name up: true and *id, false when unknown. */
bool roots_ids_find(const struct roots_ids *ids, const char *name, uint32_t *id);
void roots_ids_release(struct roots_ids *ids);

/* ---------------------------------------------------------------------------------------- */
/* Unpacking (unpack.c) */

struct roots_unpack {
	int rootfd;                     /* borrowed: the image */
	unsigned flags;                 /* enum roots_install_flags */
	bool chown;                     /* set owners (we may: root or CAP_CHOWN) */
	struct roots_ids users, groups; /* owned: reloaded when /etc/passwd, /etc/group change */
	struct stat_key {
		int64_t mtime_ns;
		uint64_t ino, size;
	} passwd_key, group_key;
	char lastdir[KILN_LIMIT_PATH]; /* the parent directory opened last ("" when none) */
	int lastfd;                    /* owned: its O_PATH fd, -1 when none */
	size_t files;                  /* entries written so far */
	size_t warnings;
	int log_fd; /* borrowed: warnings go here too (-1: only counted) */
};

void roots_unpack_init(struct roots_unpack *u, int rootfd, unsigned flags, int log_fd);
void roots_unpack_release(struct roots_unpack *u);
/* Unpack one package's payload into the image. Errors name the package and the path. */
KILN_MUST_CHECK kiln_rc roots_unpack_pkg(struct roots_unpack *u, const struct roots_pkg *p,
                                         struct kiln_err *err);

/* Write text to rel (no leading "/") in the image, its directories resolved in the image
 * and made when missing, the file itself never through a link. */
KILN_MUST_CHECK kiln_rc roots_image_put_file(int rootfd, const char *rel, const char *text,
                                             struct kiln_err *err);

/* ---------------------------------------------------------------------------------------- */
/* Scriptlets (script.c) */

struct roots_scripts; /* the sandbox over the image, made on first use */

enum roots_script_kind {
	ROOTS_SCRIPT_PRETRANS,
	ROOTS_SCRIPT_PRE,
	ROOTS_SCRIPT_POST,
	ROOTS_SCRIPT_POSTTRANS,
};

KILN_MUST_CHECK kiln_rc roots_scripts_new(const char *image, const struct roots_install_opts *o,
                                          struct roots_scripts **out, struct kiln_err *err);
void roots_scripts_free(struct roots_scripts *s);
/* Run p's scriptlet of kind (nothing when it has none); *ran is set when one ran. A
 * failure of %pretrans or %pre is KILN_EBUILD; of %post or %posttrans a warning (counted
 * in *warnings). */
KILN_MUST_CHECK kiln_rc roots_scripts_run(struct roots_scripts *s, const struct roots_pkg *p,
                                          enum roots_script_kind kind, bool *ran, size_t *warnings,
                                          struct kiln_err *err);
/* The <lua> %post and trigger scriptlets met before the image had rpm, in the order met:
 * run now (once every package is unpacked, before %posttrans) through the image's rpm, or
 * skipped with a warning when the set has no rpm. Failures are warnings. */
KILN_MUST_CHECK kiln_rc roots_scripts_run_deferred(struct roots_scripts *s, size_t *ran,
                                                   size_t *warnings, struct kiln_err *err);
/* Install-side triggers around installing p (installed: the packages already in the image,
 * p excluded): with prein, %triggerprein; else %triggerin. Fired in installed packages by p,
 * then in p by installed packages (and, for triggerin, by p itself). Failures are
 * warnings. *ran counts the triggers run. */
KILN_MUST_CHECK kiln_rc roots_scripts_triggers(struct roots_scripts *s, const struct roots_set *set,
                                               const size_t *installed, size_t ninstalled,
                                               const struct roots_pkg *p, bool prein, size_t *ran,
                                               size_t *warnings, struct kiln_err *err);
/* `rpm -i --justdb` of the whole set with the image's rpm (package files bound read-only):
 * KILN_EBUILD when it fails. */
KILN_MUST_CHECK kiln_rc roots_rpmdb_write(const char *image, const struct roots_set *set,
                                          const struct roots_install_opts *o, struct kiln_err *err);

#endif
