/*
 * sources.h - making a spec's sources present: fetching URLs (libcurl) and git repositories
 * (libgit2), verifying them against declared checksums, and the content-addressed cache that
 * every kiln process of a machine shares. Layered below worker/ (the build pipeline) and
 * roots/ (buildroots from RPM repositories), which both fetch through it.
 */
#ifndef KILN_SOURCES_H
#define KILN_SOURCES_H

#include "util/util.h"

#include <signal.h>

#include "macro/macro.h"
#include "spec/spec.h"

/* Every Source/Patch of a spec is made present in %{_sourcedir} before a build: files that
 * are already there are used as they are (after checking a declared checksum), URLs are
 * fetched with libcurl (http, https, ftp, ftps, file) or served from the cache, and git
 * repositories are mirrored with libgit2. What a build uses is verified against the
 * checksums declared for it (a dist-git "sources" file beside the spec, or the job's), and
 * nothing unverified enters the cache when a checksum is declared.
 *
 * The cache is a directory shared by every kiln process of a machine:
 *   sha256/ab/abcd...      content objects, named by the sha256 of their bytes (0444)
 *   alias/<algo>/ab/...    other digests of an object (sha512, md5, ...): its sha256
 *   url/ab/<sha256(url)>   the object a URL last gave ("sha256 HEX\nurl URL\n")
 *   git/<sha256(url)>.git  bare mirrors of git repositories
 *   tmp/, lock/            downloads in progress; flock(2) files
 * Writers download to tmp/ and rename into place, so readers see whole objects or none;
 * a per-URL lock makes a second process wait for the first's download and then use it. An
 * object's mtime is its last use: the size cap evicts the least recently used first.
 *
 * Thread safety: a struct sources belongs to one thread at a time; any number of
 * them (in any number of processes) may share one cache directory. */

/* Call once per process before any other function of this section (cli/ does, from
 * main): initialises libcurl and libgit2. Not thread-safe. */
KILN_MUST_CHECK kiln_rc sources_global_init(struct kiln_err *err);

/* ---- Checksums: a dist-git "sources" file ---------------------------------------------- */

/* A declared checksum of one file (Fedora's "SHA512 (name) = hex"). */
struct sources_sum {
	const char *file; /* in the list's arena */
	enum util_digest_algo algo;
	char hex[2 * UTIL_DIGEST_MAX + 1]; /* lowercase */
};

struct sources_sums {
	struct sources_sum *v; /* in file order */
	size_t n, cap;
	struct kiln_arena arena;
};

void sources_sums_init(struct sources_sums *s);
void sources_sums_release(struct sources_sums *s);
/* Parse a "sources" file from memory: lines "ALGO (name) = hex" (any digest util/ knows;
 * SHA512 and SHA256 are what fedpkg writes) or the older "hex  name" (md5sum's output; the
 * hex length picks md5, sha1, sha256 or sha512). Blank lines and lines starting with '#'
 * are skipped. name is used in messages: KILN_ESYNTAX "sources:3: ..." for a malformed
 * line, KILN_ELIMIT past KILN_LIMIT_SUMFILE bytes or KILN_LIMIT_SOURCES entries. Entries
 * are appended (a later line for the same file replaces an earlier one). */
KILN_MUST_CHECK kiln_rc sources_sums_parse(struct sources_sums *s, const char *name,
                                           const char *text, size_t len, struct kiln_err *err);
/* Read and parse a file: KILN_ENOTFOUND when it does not exist. */
KILN_MUST_CHECK kiln_rc sources_sums_read(struct sources_sums *s, const char *path,
                                          struct kiln_err *err);
/* Add or replace the entry of file (hex is checked against the algorithm's length). */
KILN_MUST_CHECK kiln_rc sources_sums_set(struct sources_sums *s, const char *file,
                                         enum util_digest_algo algo, const char *hex,
                                         struct kiln_err *err);
/* The entry of file, or NULL. Borrowed from s. */
const struct sources_sum *sources_sums_find(const struct sources_sums *s, const char *file);
/* Append the file's text ("SHA512 (name) = hex\n" per entry, in order) to out. */
void sources_sums_format(const struct sources_sums *s, struct kiln_buf *out);

/* ---- Fetching --------------------------------------------------------------------------- */

struct sources_fetch_opts {
	const char *cache_dir; /* NULL: sources_cache_default_dir() */
	uint64_t cache_max;    /* after storing, evict least recently used objects and mirrors
	                        * until the cache is at most this many bytes; 0: no cap */
	bool offline;          /* no network: only local files and the cache (and git mirrors
	                        * as they are); a missing file is KILN_ENOTFOUND naming it */
	bool pin;              /* record the SHA512 of every fetched source in sums_file
	                        * (written atomically); declared checksums are not enforced */
	const char *sums_file; /* the "sources" file; NULL: "sources" beside the spec */
	const struct sources_sums *sums; /* borrowed: a job's checksums, winning over the file */
	bool insecure;        /* do not verify TLS peers: never a default, warns per URL */
	const char *ca_file;  /* PEM bundle to trust instead of the system's, or NULL */
	long connect_timeout; /* seconds to connect (DNS, TCP, TLS); 0: 30 */
	long low_speed_time;  /* give up after this many seconds below low_speed_limit; 0: 60 */
	long low_speed_limit; /* bytes per second; 0: 1024 */
	int retries;          /* attempts after the first on transient failures (connection
	                        * reset or cut, timeouts, HTTP 408/429/5xx); <0: 4 */
	long retry_delay_ms;  /* first delay, doubled after each attempt; 0: 1000 */
	long retry_max_ms;    /* cap on one delay, Retry-After included; 0: 60000 */
	int max_redirects;    /* 0: KILN_LIMIT_REDIRECTS; <0: follow none */
	uint64_t max_size;    /* bytes per file; 0: KILN_LIMIT_SOURCE_FILE */
	bool progress;        /* progress lines on stderr: bytes, rate, ETA (cli/ sets it
	                        * when stderr is a terminal) */
	/* Files asked for by sha256 only (a package repository's): a download is not also
	 * hashed with sha512 for the lookaside alias. Not with pin. */
	bool sha256_only;
	/* dest may be a hard link to the cache object (same file system; else a copy): for
	 * callers that only read dest and remove it afterwards, as the root installer does
	 * with a lock's packages. Writing to dest would change the cached object (which the
	 * cache notices and drops at its next use). */
	bool link_dest;
	const volatile sig_atomic_t *cancel; /* non-NULL and set: transfers stop, KILN_ECANCEL */
	/* When the spec came from a git commit (kiln build --git): a Source without URL that
	 * is missing and is named NAME-VERSION.tar.gz is made from that commit with
	 * sources_git_tarball() and prefix NAME-VERSION/ (what rpkg and Copr's SCM builds do). */
	const char *git_url;
	const char *git_commit;
	const char *ssh_key; /* git over ssh: private key file (public key beside it as .pub);
	                      * NULL: the ssh agent */
};

/* Where a source came from. */
enum sources_origin {
	SOURCES_ORIGIN_LOCAL,   /* already in %{_sourcedir} */
	SOURCES_ORIGIN_CACHE,   /* copied from the cache */
	SOURCES_ORIGIN_NETWORK, /* downloaded now */
	SOURCES_ORIGIN_GIT,     /* a tarball made from a git commit */
};

/* One source made present. Strings in the report's arena. */
struct sources_result {
	uint32_t num;
	bool is_patch;
	const char *file; /* "foo-1.0.tar.gz" */
	const char *url;  /* as written, NULL for a plain file name */
	const char *path; /* where it is: %{_sourcedir}/file */
	char sha256[2 * 32 + 1];
	uint64_t size;
	enum sources_origin origin;
	bool verified; /* a declared checksum was checked and matched */
};

/* What sources_fetch_spec() did, for logs and the build manifest. */
struct sources_fetch_report {
	struct sources_result *v; /* in spec order */
	size_t n, cap;
	struct kiln_arena arena;
};
void sources_fetch_report_init(struct sources_fetch_report *r);
void sources_fetch_report_release(struct sources_fetch_report *r);

/* A fetcher: the options (copied, strings borrowed: keep them alive), the opened cache and
 * a reusable libcurl handle. OUT: *out, free with sources_free(). KILN_EIO when the
 * cache directory cannot be made. */
struct sources;
KILN_MUST_CHECK kiln_rc sources_new(const struct sources_fetch_opts *o, struct sources **out,
                                    struct kiln_err *err);
void sources_free(struct sources *s);

/* Make every Source and Patch of spec present at its path (spec->sources[i].path, i.e. in
 * %{_sourcedir}, created when missing): see the section comment. Checksums come from
 * o->sums, then from the sums file (o->sums_file or "sources" beside spec->path). A file
 * already present with a wrong declared checksum is fetched again when it has a URL and
 * is an error otherwise. Errors name the Source/Patch and the URL and say what failed:
 * KILN_ENET (DNS, connect, TLS, HTTP status, cut transfers, redirect limits),
 * KILN_ETIMEOUT, KILN_EDIGEST ("Source0 foo.tar.gz: sha512 mismatch: expected X, got Y"),
 * KILN_ELIMIT (size), KILN_ENOTFOUND (a local file or, offline, a cache entry is missing),
 * KILN_EUNSUPP (a URL scheme), KILN_ECANCEL. rep may be NULL; when given, it gets one
 * entry per source (also when an error stops the loop: the ones done so far). */
KILN_MUST_CHECK kiln_rc sources_fetch_spec(struct sources *s, const struct spec *spec,
                                           struct sources_fetch_report *rep, struct kiln_err *err);
/* The pipeline's entry point: sources_new(o), fetch_spec, free. */
KILN_MUST_CHECK kiln_rc sources_fetch(const struct spec *spec, const struct sources_fetch_opts *o,
                                      struct sources_fetch_report *rep, struct kiln_err *err);
/* Fetch one URL (a job-supplied one) to dest through the cache, verifying sum when it is
 * not NULL. res may be NULL; its strings then point into s until the next call. Errors as
 * for sources_fetch_spec. */
KILN_MUST_CHECK kiln_rc sources_fetch_url(struct sources *s, const char *url,
                                          const struct sources_sum *sum, const char *dest,
                                          struct sources_result *res, struct kiln_err *err);

/* Download url's current bytes into out (at most out->max bytes: KILN_ELIMIT beyond), never
 * from or into the cache: for small files that change in place and must be read fresh each
 * time, such as a repository's repomd.xml and its signature (roots/). Offline it is
 * KILN_ENOTFOUND. Errors otherwise as for sources_fetch_spec. */
KILN_MUST_CHECK kiln_rc sources_fetch_fresh(struct sources *s, const char *url,
                                            struct kiln_buf *out, struct kiln_err *err);

/* ---- The cache -------------------------------------------------------------------------- */

/* $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln (/var/cache/kiln for
 * root without HOME). Appended to out. */
KILN_MUST_CHECK kiln_rc sources_cache_default_dir(struct kiln_buf *out, struct kiln_err *err);

struct sources_cache_stats {
	uint64_t objects, object_bytes; /* sha256/ */
	uint64_t urls;                  /* url/ index entries */
	uint64_t mirrors, mirror_bytes; /* git/ */
	uint64_t tmp_files, tmp_bytes;  /* tmp/: downloads in progress or left by a crash */
};
struct sources_cache_gc {
	uint64_t objects, object_bytes; /* evicted */
	uint64_t mirrors, mirror_bytes; /* evicted */
	uint64_t index;                 /* url/ and alias/ entries whose object is gone */
	uint64_t tmp_files, tmp_bytes;  /* leftovers older than a day */
	uint64_t corrupt;               /* objects whose bytes no longer match (verify) */
};

enum sources_cache_gc_flags {
	SOURCES_CACHE_GC_VERIFY = 1 << 0, /* re-hash every object and drop the corrupt ones */
};

/* Statistics of the cache at dir (which need not exist: all zero). */
KILN_MUST_CHECK kiln_rc sources_cache_stats(const char *dir, struct sources_cache_stats *st,
                                            struct kiln_err *err);
/* Collect garbage under the cache's gc lock: tmp/ leftovers, dangling index entries, and
 * with max_bytes > 0 the least recently used objects and mirrors until the total is at
 * most max_bytes. Safe while other processes fetch: one that loses an object it was about
 * to use fetches it again. res may be NULL. */
KILN_MUST_CHECK kiln_rc sources_cache_collect(const char *dir, uint64_t max_bytes, unsigned flags,
                                              struct sources_cache_gc *res, struct kiln_err *err);

/* ---- Git -------------------------------------------------------------------------------- */

/* A ref resolved in a mirror. */
struct sources_git_rev {
	char commit[41];   /* the commit id (record it in the build metadata) */
	char previous[41]; /* what the ref pointed at in the mirror before this fetch, "" if new */
	bool moved;        /* the ref existed and now points elsewhere (a moved tag is logged
	                    * as a warning) */
	int64_t time;      /* committer time: the tarball mtime */
};

/* Update the bare mirror of url in the cache (clone it the first time; offline: use it as
 * it is) and resolve ref there: a branch, a tag, a full or abbreviated commit id, or any
 * revision libgit2 parses ("v1.0^{commit}"); NULL or "" is the remote's HEAD. URLs:
 * https, http, file, plain paths, and ssh (agent or o->ssh_key) when libgit2 has it.
 * KILN_ENOTFOUND for an unknown ref, KILN_ENET for a failed fetch naming the URL. */
KILN_MUST_CHECK kiln_rc sources_git_resolve(struct sources *s, const char *url, const char *ref,
                                            struct sources_git_rev *rev, struct kiln_err *err);
/* Does commit (a full id) of url have a regular file (or a symlink) at path? The mirror
 * is fetched only when it lacks the commit. KILN_ENOTFOUND for an unknown commit, KILN_ENET
 * for a failed fetch, KILN_EINVAL for a path with "." or ".." parts or a leading "/". */
KILN_MUST_CHECK kiln_rc sources_git_has_file(struct sources *s, const char *url, const char *commit,
                                             const char *path, bool *found, struct kiln_err *err);
/* Write the tree of commit (a full id from sources_git_resolve) into dir (created; must be
 * empty or absent): regular files 0644 or 0755, symlinks as they are, no .git. Entry names
 * that could escape (".", "..", ".git", "/") are refused with KILN_EPRIV. */
KILN_MUST_CHECK kiln_rc sources_git_export(struct sources *s, const char *url, const char *commit,
                                           const char *dir, struct kiln_err *err);
/* A dist-git style checkout for a build from git (kiln build --git URL --ref REF --spec
 * PATH): resolve ref (as sources_git_resolve), export the commit's tree into dir (as
 * sources_git_export), and find the spec: spec_rel inside the tree, or when NULL the one
 * *.spec at its top (KILN_ENOTFOUND when there is none or more than one). *spec_path gets
 * the spec's absolute path and *dir_abs the checkout's, to define %_sourcedir with. s
 * then makes missing NAME-VERSION.tar.gz sources from this commit (its git_url and
 * git_commit borrow url and rev->commit: keep both alive while s is used): parse the spec
 * and call sources_fetch_spec(s, ...). */
KILN_MUST_CHECK kiln_rc sources_checkout(struct sources *s, const char *url, const char *ref,
                                         const char *dir, const char *spec_rel,
                                         struct sources_git_rev *rev, struct kiln_buf *dir_abs,
                                         struct kiln_buf *spec_path, struct kiln_err *err);
/* Write a deterministic .tar.gz of commit's tree to out_path (atomically): entries in tree
 * order under prefix ("name-1.0/"), each directory before its contents, mtime = the commit
 * time, uid/gid 0 (root/root), modes 0664/0775 and the commit id in a pax global header:
 * the tar bytes of `git archive --format=tar --prefix=PREFIX COMMIT` (without
 * .gitattributes processing), gzip'ed with no name and no time. Same commit and prefix,
 * same bytes, on any machine. */
KILN_MUST_CHECK kiln_rc sources_git_tarball(struct sources *s, const char *url, const char *commit,
                                            const char *prefix, const char *out_path,
                                            struct kiln_err *err);

#endif
