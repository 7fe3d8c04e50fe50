/*
 * roots.h - build roots made from RPM repositories: root configurations, repository
 * metadata, dependency resolution with libsolv, and the lock that pins a root.
 *
 * A root configuration (configs/roots/NAME.cfg, /etc/kiln/roots/NAME.cfg, or a path) names
 * a target architecture, the repositories to take packages from and the base set to
 * install, mock's `fedora-42-x86_64.cfg` in a small INI file (docs/roots.md). roots/ reads
 * each repository's repomd.xml, checks its detached OpenPGP signature with sign/ against the
 * repository's gpgkey, fetches primary (filelists only when a file dependency needs it,
 * comps for @groups) through the content-addressed source cache, verified by the checksums
 * repomd.xml gives, and loads it into libsolv (opened on first use, roots/libsolv_int.h).
 * Resolving the base set plus a spec's BuildRequires gives a lock: the exact packages (name,
 * epoch, version, release, arch, sha256, repository, location) as canonical JSON whose
 * sha256 is the root's identity. A lock can be checked against the repositories again and
 * its packages fetched, verified by sha256 and by their OpenPGP signatures, for
 * installation.
 *
 * The last sections install a lock's packages into an image without host rpm, dnf or mock
 * (rpm's order, scriptlets and triggers in kiln's sandbox, the image's rpm database) and
 * keep images in a cache keyed by the lock's identity.
 *
 * Thread safety: a struct roots_pool belongs to one thread at a time; configurations and
 * locks are read-only after they are made and may be shared.
 */
#ifndef KILN_ROOTS_H
#define KILN_ROOTS_H

#include "util/util.h"

struct macro_ctx; /* macro/macro.h */
struct spec_deps; /* spec/spec.h */

/* ======================================================================================== */
/* Root configurations                                                                      */
/* ======================================================================================== */

/* Bounds on a configuration file (KILN_ELIMIT beyond them). */
#define ROOTS_CONFIG_MAX_BYTES (1 * KILN_MIB)
#define ROOTS_CONFIG_MAX_LINE 16384
#define ROOTS_CONFIG_MAX_REPOS 64
#define ROOTS_CONFIG_MAX_INSTALL 4096
#define ROOTS_CONFIG_MAX_MACROS 1024

/* One [repo NAME] section. Strings live in the configuration's arena. */
struct roots_repo_config {
	const char *name;    /* NAME: letters, digits, "-_.:" */
	const char *baseurl; /* file://, http:// or https://, $basearch and $releasever
	                      * substituted, no trailing '/' */
	const char *gpgkey;  /* URL of the armored or binary public key(s), or NULL */
	bool gpgcheck;       /* package signatures are required (default on) */
	bool repo_gpgcheck;  /* repomd.xml.asc is required (default on) */
	int priority;        /* dnf's: lower wins; default 99 */
	int line;            /* where the section starts */
};

/* One macro to define before parsing a spec for this root ([macros] NAME = VALUE). */
struct roots_macro {
	const char *name; /* without '%' */
	const char *value;
};

struct roots_config {
	const char *name;       /* the file's name without ".cfg" ("fedora-42-x86_64") */
	const char *path;       /* the file read, "" for one parsed from memory */
	const char *arch;       /* [root] arch: the target architecture (required) */
	const char *releasever; /* [root] releasever, or NULL */
	const char **install;   /* [root] install: names, provides, file paths, "NAME OP EVR",
	                         * rich dependencies "(a or b)", or "@group" */
	size_t ninstall;
	bool weak_deps; /* [root] weak_deps: install Recommends/Supplements (default off, as
	                 * mock's install_weak_deps=0) */
	struct roots_macro *macros; /* [macros], in file order */
	size_t nmacros;
	struct roots_repo_config *repos; /* [repo NAME] sections, in file order */
	size_t nrepos;
	struct kiln_arena arena; /* owns every string and array above */
};

void roots_config_init(struct roots_config *c);
void roots_config_release(struct roots_config *c);

/* Parse a configuration from memory (name for messages: "base.cfg"). Every error names
 * name:line: KILN_ESYNTAX for a malformed line, an unknown section or key, a bad value, a
 * repository without baseurl or with gpgcheck on and no gpgkey, a missing [root] arch;
 * KILN_ELIMIT beyond the ROOTS_CONFIG_MAX_* bounds. c must be freshly initialised. */
KILN_MUST_CHECK kiln_rc roots_config_from_mem(struct roots_config *c, const char *name,
                                              const char *data, size_t len, struct kiln_err *err);
/* Read and parse path; c->name is the file's base name without ".cfg". */
KILN_MUST_CHECK kiln_rc roots_config_load(struct roots_config *c, const char *path,
                                          struct kiln_err *err);
/* Where the configuration `what` is: a path (it contains '/' or ends in ".cfg") as given;
 * a name is looked up as NAME.cfg in /etc/kiln/roots/ first (the administrator's), then in
 * kiln's configuration directory's roots/ (util_configdir_find). Appended to out.
 * KILN_ENOTFOUND naming every place tried. */
KILN_MUST_CHECK kiln_rc roots_config_find(const char *what, struct kiln_buf *out,
                                          struct kiln_err *err);
/* The configurations found by name, as roots_config_find() looks them up: every NAME.cfg
 * in /etc/kiln/roots/, then those of kiln's configuration directory's roots/ that the first
 * does not shadow; sorted by name. fn gets each name and path; a non-zero return stops the
 * walk and is returned. Directories that do not exist are skipped. */
KILN_MUST_CHECK kiln_rc roots_config_list(kiln_rc (*fn)(void *arg, const char *name,
                                                        const char *path, struct kiln_err *err),
                                          void *arg, struct kiln_err *err);
/* roots_config_find() then roots_config_load(). */
KILN_MUST_CHECK kiln_rc roots_config_open(struct roots_config *c, const char *what,
                                          struct kiln_err *err);

/* A macro context for parsing specs for this root: kiln's configuration with the target
 * set to the root's arch, then the configuration's [macros]. OUT: *out, macro_ctx_free(). */
KILN_MUST_CHECK kiln_rc roots_macro_ctx_open(const struct roots_config *c, struct macro_ctx **out,
                                             struct kiln_err *err);

/* ======================================================================================== */
/* Repository metadata                                                                      */
/* ======================================================================================== */

/* Bounds on what a repository may send (KILN_ELIMIT beyond them). */
#define ROOTS_REPOMD_MAX_BYTES (4 * KILN_MIB)
#define ROOTS_REPOMD_MAX_DATA 64
#define ROOTS_METADATA_MAX_BYTES ((size_t)1 * KILN_GIB) /* one decompressed file */
#define ROOTS_KEY_MAX_BYTES (1 * KILN_MIB)

/* One <data type="..."> of repomd.xml. Strings in the repomd's arena. */
struct roots_repomd_data {
	const char *type;     /* "primary", "filelists", "group", ... */
	const char *href;     /* <location href>, relative to the base URL */
	const char *sum_type; /* <checksum type>: "sha256", "sha512", ... */
	const char *sum;      /* lowercase hex */
	uint64_t size;        /* <size>, 0 when absent */
	uint64_t open_size;   /* <open-size>, 0 when absent */
};

struct roots_repomd {
	const char *revision; /* <revision>, or NULL */
	struct roots_repomd_data *data;
	size_t ndata;
	struct kiln_arena arena;
};

void roots_repomd_init(struct roots_repomd *md);
void roots_repomd_release(struct roots_repomd *md);
/* Parse repomd.xml from memory (bounded: ROOTS_REPOMD_MAX_BYTES, ROOTS_REPOMD_MAX_DATA).
 * Hrefs that are absolute, contain ".." or a scheme are refused (KILN_EPRIV); a data entry
 * without location or checksum, or a checksum that is not hex of its type's length, is
 * KILN_EFORMAT naming the entry; malformed XML is KILN_ESYNTAX with name:line. */
KILN_MUST_CHECK kiln_rc roots_repomd_parse(struct roots_repomd *md, const char *name,
                                           const char *xml, size_t len, struct kiln_err *err);
/* The entry of type, or NULL. Borrowed from md. */
const struct roots_repomd_data *roots_repomd_find(const struct roots_repomd *md, const char *type);

/* ======================================================================================== */
/* Resolution                                                                               */
/* ======================================================================================== */

/* A libsolv pool for one architecture with repositories loaded into it. */
struct roots_pool;

/* How metadata and packages are fetched. */
struct roots_fetch_opts {
	const char *cache_dir; /* the source cache; NULL: the default one */
	bool offline;          /* only the cache: a missing object is KILN_ENOTFOUND */
	bool progress;         /* download progress on stderr */
};

/* An empty pool for arch (an rpm architecture: x86_64, aarch64, i686, noarch...), with
 * weak dependencies followed or not. Opens libsolv on first use (KILN_ENOTFOUND naming the
 * library when it is not installed). OUT: *out, roots_pool_free(). */
KILN_MUST_CHECK kiln_rc roots_pool_new(const char *arch, bool weak_deps, struct roots_pool **out,
                                       struct kiln_err *err);
void roots_pool_free(struct roots_pool *p);

/* Add a repository named name from its metadata in memory (plain XML, already verified
 * by the caller): primary.xml (required) and comps (NULL, 0 when absent). priority as
 * dnf's (lower wins). Malformed metadata is KILN_EFORMAT naming the repository and file; a
 * package without a sha256 checksum is KILN_EFORMAT (a lock needs one), one located
 * outside the repository (absolute, "..", xml:base) KILN_EPRIV. */
KILN_MUST_CHECK kiln_rc roots_pool_add_repo(struct roots_pool *p, const char *name, int priority,
                                            const char *primary, size_t primary_len,
                                            const char *comps, size_t comps_len,
                                            struct kiln_err *err);
/* Extend the packages of repository name (added before) with its filelists.xml. */
KILN_MUST_CHECK kiln_rc roots_pool_add_filelists(struct roots_pool *p, const char *name,
                                                 const char *xml, size_t len, struct kiln_err *err);

/* Whether a file dependency among the loaded packages' requires, or among requests (the
 * install strings, n of them, may be NULL) and deps (may be NULL), lies outside the file
 * subset primary.xml carries (/etc/..., .../bin/..., /usr/lib/sendmail), so filelists are
 * needed to resolve it. */
bool roots_pool_needs_filelists(struct roots_pool *p, const char *const *requests, size_t n,
                                const struct spec_deps *deps);

/* Load the repositories of config c into p: repomd.xml fetched fresh (its signature
 * checked when repo_gpgcheck is on), primary, comps (when present) and filelists (when
 * roots_pool_needs_filelists() says so for c's install set and deps, which may be NULL)
 * through the source cache, each verified by repomd's checksum and decompressed (gzip, xz,
 * zstd) by pack/. Errors name the repository and the file: KILN_ESIG (a missing or bad
 * repomd.xml.asc), KILN_EDIGEST (a file that does not match repomd), KILN_ENET,
 * KILN_ENOTFOUND, KILN_EFORMAT, KILN_ELIMIT. */
KILN_MUST_CHECK kiln_rc roots_pool_load(struct roots_pool *p, const struct roots_config *c,
                                        const struct roots_fetch_opts *o,
                                        const struct spec_deps *deps, struct kiln_err *err);

struct roots_lock; /* below */

/* Resolve requests (install strings as in roots_config.install: names, provides, files,
 * "NAME OP EVR", rich dependencies, "@group") plus deps (a spec's BuildRequires, may be
 * NULL; BuildConflicts go in conflicts, may be NULL) into out (initialised by the
 * caller; filled with the whole set to install, sorted). A request nothing provides and
 * an unsatisfiable set are KILN_ENOTFOUND / KILN_ECONFLICT with libsolv's problem text
 * ("package a-1-1.x86_64 requires b, but none of the providers can be installed"); a
 * group member nothing provides is skipped with a warning, as dnf does. */
KILN_MUST_CHECK kiln_rc roots_pool_resolve(struct roots_pool *p, const char *const *requests,
                                           size_t n, const struct spec_deps *deps,
                                           const struct spec_deps *conflicts,
                                           struct roots_lock *out, struct kiln_err *err);
/* libsolv's text of every problem of the last failed roots_pool_resolve(), as dnf prints
 * it ("Problem 1:\n  - nothing provides b needed by a-1-1.noarch\n"); "" after a success.
 * Borrowed from p until its next resolve. */
const char *roots_pool_problems(const struct roots_pool *p);

/* The build dependencies of a source package (its REQUIRENAME/FLAGS/VERSION without
 * rpmlib() ones, and its CONFLICTNAME... as conflicts) into deps and conflicts, in arena
 * a (the caller's). KILN_EFORMAT for a package that does not parse. */
KILN_MUST_CHECK kiln_rc roots_srpm_deps(const char *path, struct kiln_arena *a,
                                        struct spec_deps *deps, struct spec_deps *conflicts,
                                        struct kiln_err *err);

/* ======================================================================================== */
/* The lock                                                                                 */
/* ======================================================================================== */

#define ROOTS_LOCK_MAX_BYTES (16 * KILN_MIB)
#define ROOTS_LOCK_MAX_PACKAGES 65536

struct roots_lock_pkg {
	const char *name;
	uint32_t epoch;
	const char *version;
	const char *release;
	const char *arch;
	char sha256[65];      /* of the package file, lowercase hex */
	const char *repo;     /* the [repo NAME] it comes from */
	const char *location; /* its href relative to the repository's base URL */
	uint64_t size;        /* of the package file, 0 when the metadata does not say */
};

/* A resolved root. Packages sorted by name, then epoch-version-release (rpm's order),
 * then arch. Strings in the lock's arena. */
struct roots_lock {
	const char *arch; /* the root's architecture */
	struct roots_lock_pkg *pkgs;
	size_t n, cap;
	char id[65]; /* sha256 of the canonical bytes (roots_lock_write), after _finish */
	struct kiln_arena arena;
};

void roots_lock_init(struct roots_lock *l);
void roots_lock_release(struct roots_lock *l);
/* Sort the packages, refuse duplicates (KILN_EINVAL) and compute l->id. The resolver and
 * the reader call it; callers filling a lock by hand must too. */
KILN_MUST_CHECK kiln_rc roots_lock_finish(struct roots_lock *l, struct kiln_err *err);
/* Append the canonical JSON of l to out: one object, keys in a fixed order, one package
 * per line, "\n" at the end; the same lock always gives the same bytes (docs/roots.md). */
void roots_lock_write(const struct roots_lock *l, struct kiln_buf *out);
/* Append a text table for people: NAME EVR ARCH REPO per line, then the identity. */
void roots_lock_format_text(const struct roots_lock *l, struct kiln_buf *out);
/* Parse a lock from memory (name for messages), bounded by ROOTS_LOCK_MAX_BYTES and
 * ROOTS_LOCK_MAX_PACKAGES; fields are checked (names and versions as rpm allows them,
 * sha256 as 64 hex digits, locations relative without ".."). l must be freshly
 * initialised; it is finished (sorted, id computed) on success. Errors name the field:
 * KILN_ESYNTAX, KILN_EINVAL, KILN_ELIMIT. */
KILN_MUST_CHECK kiln_rc roots_lock_from_mem(struct roots_lock *l, const char *name,
                                            const char *data, size_t len, struct kiln_err *err);
KILN_MUST_CHECK kiln_rc roots_lock_read(struct roots_lock *l, const char *path,
                                        struct kiln_err *err);
/* Check that every package of l is in p's repository of the same name with the same name,
 * epoch, version, release, arch, sha256 and location, and that l's arch is p's: a lock
 * given back is rebuilt on exactly its packages or not at all. KILN_ENOTFOUND naming the
 * first package that is missing or differs. */
KILN_MUST_CHECK kiln_rc roots_lock_check(struct roots_pool *p, const struct roots_lock *l,
                                         struct kiln_err *err);

/* Make every package of l present locally: fetched from its repository's baseurl through
 * the source cache and verified by its sha256, then, when the repository has gpgcheck,
 * its OpenPGP signature checked with sign/ against the repository's gpgkey. paths[i] (an
 * array of l->n the caller provides) gets where package i is, a file under dest_dir (made
 * when missing) strdup'ed: the caller frees each. Nothing is returned unverified: a
 * tampered package is KILN_EDIGEST, an unsigned or badly signed one KILN_ESIG, each naming
 * the package. */
KILN_MUST_CHECK kiln_rc roots_lock_fetch(const struct roots_config *c, const struct roots_lock *l,
                                         const struct roots_fetch_opts *o, const char *dest_dir,
                                         char **paths, struct kiln_err *err);

/* ======================================================================================== */
/* Installing packages into an image */

/* What roots_install does, in rpm's order (docs/roots.md, "Installing packages"):
 *
 *   1. read every package's headers with pack/ and refuse the whole set, before anything
 *      is written, when one is hostile: a path that is not clean and absolute ("..",
 *      empty components), a device node, a socket, a setuid or setgid file (unless
 *      ROOTS_INSTALL_F_ALLOW_SETID), a header whose file arrays do not agree;
 *   2. order the set as rpm's transaction ordering does (roots_int.h, order.c);
 *   3. run every %pretrans, then per package: %triggerprein, %pre, unpack, %post,
 *      %triggerin; then every %posttrans; scriptlets run in kiln's sandbox chrooted into
 *      the image, writing into it, without network;
 *   4. where the set has a package named "rpm": run the image's own rpm (--justdb) so its
 *      database lists exactly the set.
 *
 * Unpacking goes beneath a directory descriptor of the image with openat2(RESOLVE_IN_ROOT):
 * symlinks already in the image (usrmerge's /bin -> usr/bin) are followed as the image
 * sees them, never out of it. Owners come from the header's user and group names looked
 * up in the image's /etc/passwd and /etc/group as they are when the file is written, and
 * are 0 (root) when the name is unknown or those files do not exist yet (with a warning,
 * as rpm gives); as an unprivileged caller owners are not set at all. */
enum roots_install_flags {
	ROOTS_INSTALL_F_ALLOW_SETID = 1 << 0, /* setuid/setgid files are allowed */
	ROOTS_INSTALL_F_NOSCRIPTS = 1 << 1,   /* unpack only: no scriptlets, no triggers */
	ROOTS_INSTALL_F_NORPMDB = 1 << 2,     /* no rpm database even when rpm is in the set */
};

struct roots_install_opts {
	unsigned flags;            /* enum roots_install_flags */
	int log_fd;                /* scriptlet output and progress lines; -1 = discard */
	const char *state_dir;     /* borrowed: where the sandbox keeps its state; NULL = TMPDIR */
	int64_t script_timeout_ms; /* per scriptlet; 0 = 10 minutes */
};

/* No flags, output discarded, default state directory and timeout. */
void roots_install_opts_init(struct roots_install_opts *o);

/* What an install did. */
struct roots_install_report {
	size_t packages;      /* packages installed */
	size_t files;         /* payload entries written */
	size_t scriptlets;    /* scriptlets and triggers run */
	size_t warnings;      /* %post-side failures and unknown owners (warnings, as rpm) */
	bool rpmdb;           /* an rpm database was written */
	int64_t load_ns;      /* reading, checking and ordering the packages */
	int64_t unpack_ns;    /* time spent unpacking */
	int64_t scriptlet_ns; /* time spent in scriptlets (the rpm database not included) */
	int64_t rpmdb_ns;     /* time the image's rpm took to write its database */
};

/* Install the n package files pkgs into the directory image (created when missing; meant
 * to be new and empty). rep may be NULL. Errors: KILN_EPRIV for a hostile package
 * ("PKG.rpm: file '/x/../y': ..."; nothing has been written), KILN_EFORMAT / KILN_EDIGEST /
 * KILN_EIO for a package that cannot be read (naming it), KILN_EBUILD for a failing
 * %pretrans or %pre ("PKG: %pre scriptlet failed, exit status 1"; the image is then
 * incomplete and the caller throws it away), KILN_EUNSUPP when the sandbox cannot run here
 * and the set has scriptlets. Not thread-safe for one image; distinct images may be
 * installed in parallel. */
KILN_MUST_CHECK kiln_rc roots_install(const char *image, const char *const *pkgs, size_t n,
                                      const struct roots_install_opts *o,
                                      struct roots_install_report *rep, struct kiln_err *err);

/* ======================================================================================== */
/* The image cache */

/* Images live under CACHE/images (CACHE: the directory kiln's source cache uses):
 *
 *   images/KEY/root   the image, immutable once renamed into place
 *   images/KEY/info   "key", "size" (bytes), "boot" (the boot it was made in, unsynced: an
 *                     image from an earlier boot is made again; docs/roots.md)
 *   images/lock/KEY   flock(2) file: exclusive while KEY is being made, shared while used
 *   images/tmp/       images being made (KEY.XXXXXX), renamed to images/KEY when whole
 *
 * KEY is the caller's (the lock's sha256): 1 to 128 characters of [0-9a-zA-Z._-]. N
 * processes asking for one missing KEY make it once: the first takes the exclusive lock and
 * builds, the others wait on it and then use its image. Different keys never wait on each
 * other. The mtime of images/KEY records its last use (for the LRU collection). */

/* Makes a new image: fill the empty directory root (which exists). */
typedef kiln_rc (*roots_image_make_fn)(void *arg, const char *root, struct kiln_err *err);

/* An image in use: its path and the shared lock that keeps the collector away. */
struct roots_image {
	char *root;    /* owned: CACHE/images/KEY/root */
	int lock_fd;   /* owned: shared flock on images/lock/KEY (-1 when released) */
	bool made;     /* this call made the image */
	uint64_t size; /* bytes, from the info file */
};

/* Get the image KEY under cache_dir, making it with make(arg, root) when missing; *img is
 * held (shared lock) until roots_image_release(). A failed make leaves no image (its temp
 * directory is removed) and returns make's error. Errors: KILN_EINVAL (bad key), KILN_EIO.
 * Thread-safe across processes; within one process use one call per thread. */
KILN_MUST_CHECK kiln_rc roots_image_get(const char *cache_dir, const char *key,
                                        roots_image_make_fn make, void *arg,
                                        struct roots_image *img, struct kiln_err *err);
/* Drop the lock and free the path. A zeroed or released img is fine (fd 0, standard
 * input, is never taken for a lock). */
void roots_image_release(struct roots_image *img);

struct roots_image_gc {
	uint64_t images, image_bytes; /* removed images */
	uint64_t kept, kept_bytes;    /* images left (in use or within the cap) */
	uint64_t busy;                /* images skipped because they were in use */
	uint64_t tmp;                 /* unfinished images removed */
};

/* Collect: remove unfinished images nobody is making, and with max_bytes > 0 remove images
 * least recently used first until the rest fit in max_bytes. An image in use (its shared
 * lock held) is never removed. out may be NULL. Errors: KILN_EIO. */
KILN_MUST_CHECK kiln_rc roots_image_collect(const char *cache_dir, uint64_t max_bytes,
                                            struct roots_image_gc *out, struct kiln_err *err);

/* ======================================================================================== */
/* A root for a build (make.c)                                                              */
/* ======================================================================================== */

struct roots_make_opts {
	const char *cache_dir; /* the source cache (images live under it); NULL: the default */
	bool offline;          /* only the cache and local repositories */
	bool progress;         /* download progress on stderr */
	/* A lock given back (--lock): its packages, checked; NULL: resolve. */
	const char *lock_path;
	const char *state_dir;  /* the installer's sandbox state; NULL: TMPDIR */
	unsigned install_flags; /* enum roots_install_flags */
	int log_fd;             /* libsolv's problems, install progress; -1: none */
	/* More requests beside the configuration's install set (what a spec's
	 * %generate_buildrequires printed), in the same forms; borrowed. */
	const char *const *extra;
	size_t nextra;
};
/* No cache given, online, resolving, no log. */
void roots_make_opts_init(struct roots_make_opts *o);

/* The lock of configuration c for these dependencies (deps, conflicts may be NULL): its
 * repositories loaded, then resolved (the install set, o->extra, deps) or, with
 * o->lock_path, the lock read and checked against them. libsolv's problems go to
 * o->log_fd. Every repomd.xml is read and its signature checked on each call; while none
 * changed, a resolution (or check) made before for the same configuration and requests is
 * taken from CACHE/roots/resolved without loading the rest (docs/roots.md). */
KILN_MUST_CHECK kiln_rc roots_lock_get(const struct roots_config *c, const struct spec_deps *deps,
                                       const struct spec_deps *conflicts,
                                       const struct roots_make_opts *o, struct roots_lock *lock,
                                       struct kiln_err *err);
/* The root of configuration c for a build with these dependencies (deps, conflicts: a
 * spec's BuildRequires/BuildConflicts, may be NULL): resolved into lock (initialised by
 * the caller) or taken from o->lock_path and checked against the repositories, then its
 * image from the image cache, made when missing (roots_image_get, roots_install). *img is
 * held until roots_image_release(). Errors as the steps give them, prefixed "root NAME". */
KILN_MUST_CHECK kiln_rc roots_root_get(const struct roots_config *c, const struct spec_deps *deps,
                                       const struct spec_deps *conflicts,
                                       const struct roots_make_opts *o, struct roots_lock *lock,
                                       struct roots_image *img, struct kiln_err *err);

/* A macro context for building in the image at image_root (the root of c): kiln's
 * configuration with the target set to the root's arch, then the rpm macro files the image
 * carries, in rpm's order (usr/lib/rpm/macros, macros.d/macros.NAME, platform/TARGET/macros,
 * fileattrs/ATTR files, redhat/macros, etc/rpm/macros.NAME, etc/rpm/macros, etc/rpm/TARGET/macros:
 * redhat-rpm-config, python-rpm-macros, the cmake and meson macros...), as rpmbuild inside
 * mock reads them, then the configuration's [macros]. OUT: *out, macro_ctx_free(). */
KILN_MUST_CHECK kiln_rc roots_macro_ctx_open_image(const struct roots_config *c,
                                                   const char *image_root, struct macro_ctx **out,
                                                   struct kiln_err *err);

#endif
