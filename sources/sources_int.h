/*
 * sources_int.h - private interfaces of sources/: URL checks, the cache
 * internals, the libcurl transfer, the tar writer and the libgit2 mirror.
 *
 * Only the .c files of sources/ and the sources unit tests include this. libcurl and libgit2 types never
 * appear here: fetch.c and git.c keep them.
 */
#ifndef KILN_SOURCES_INT_H
#define KILN_SOURCES_INT_H

#include "util/util.h"

#include "sources/sources.h"

#define SOURCES_SHA256_HEX 65 /* 64 hex digits and a NUL */

/* ---- URLs (url.c) --------------------------------------------------------------------- */

enum sources_url_scheme {
	SOURCES_URL_NONE, /* a plain file name: no "scheme://" */
	SOURCES_URL_HTTP,
	SOURCES_URL_HTTPS,
	SOURCES_URL_FTP,
	SOURCES_URL_FTPS,
	SOURCES_URL_FILE,
	SOURCES_URL_OTHER, /* some scheme kiln does not fetch (hkp, git+ssh, ...) */
};

/* The parts of a URL kiln looks at; views into the parsed string. */
struct sources_url {
	enum sources_url_scheme scheme;
	struct kiln_str scheme_name; /* "https" */
	struct kiln_str userinfo;    /* "user:pass" (never printed), empty if none */
	struct kiln_str host;        /* "example.org", "[::1]"; empty for file:/// */
	struct kiln_str port;        /* "8080", empty if none */
	struct kiln_str path;        /* "/a/b.tar.gz" (with query and fragment removed) */
};

/* Split url (len bytes, at most KILN_LIMIT_URL) into its parts. A string without "://" is
 * SOURCES_URL_NONE with path = the whole string. KILN_ESYNTAX for control characters,
 * spaces, a bad scheme, an empty host (except file:), or a bad port; KILN_ELIMIT when too
 * long. The fuzz entry point. */
KILN_MUST_CHECK kiln_rc sources_url_parse(const char *url, size_t len, struct sources_url *out,
                                          struct kiln_err *err);
/* url with any user:password removed (the credentials become "***"), for messages and logs; into
 * out (appended). */
void sources_url_redact(const char *url, struct kiln_buf *out);

/* ---- Digests computed while data streams by ------------------------------------------- */

#define SOURCES_HASHES_MAX 3

struct sources_hashes {
	struct util_digest d[SOURCES_HASHES_MAX]; /* [0] is always sha256 */
	size_t n;
	uint64_t size;
};

/* sha256, plus extra (when it is not sha256) and sha512 when want512. */
KILN_MUST_CHECK kiln_rc sources_hashes_init(struct sources_hashes *h,
                                            const enum util_digest_algo *extra, bool want512,
                                            struct kiln_err *err);
void sources_hashes_update(struct sources_hashes *h, const void *data, size_t len);
/* Start over (a transfer restarted from byte 0). */
KILN_MUST_CHECK kiln_rc sources_hashes_reset(struct sources_hashes *h, struct kiln_err *err);
/* Finish: hex[i] gets digest i (2*UTIL_DIGEST_MAX+1 bytes each). */
KILN_MUST_CHECK kiln_rc sources_hashes_final(struct sources_hashes *h,
                                             char hex[][2 * UTIL_DIGEST_MAX + 1],
                                             struct kiln_err *err);
void sources_hashes_release(struct sources_hashes *h);
/* The index of algo in h, or -1. */
int sources_hashes_find(const struct sources_hashes *h, enum util_digest_algo algo);

/* ---- The cache (cache.c) --------------------------------------------------------------- */

struct sources_cache {
	char *dir; /* owned */
	uint64_t max;
};

/* Create dir and its subdirectories (sha256, alias, url, git, tmp, lock). */
KILN_MUST_CHECK kiln_rc sources_cache_open(struct sources_cache *c, const char *dir, uint64_t max,
                                           struct kiln_err *err);
void sources_cache_close(struct sources_cache *c);

/* Path of the object with this sha256 (whether or not it exists), appended to out. */
void sources_cache_object_path(const struct sources_cache *c, const char *sha256,
                               struct kiln_buf *out);
/* Which object has digest hex of algo: sha256 directly, other algorithms through alias/.
 * KILN_ENOTFOUND when none (or when its object was evicted). */
KILN_MUST_CHECK kiln_rc sources_cache_find_digest(const struct sources_cache *c,
                                                  enum util_digest_algo algo, const char *hex,
                                                  char sha256[SOURCES_SHA256_HEX],
                                                  struct kiln_err *err);
/* Which object url gave last time; KILN_ENOTFOUND when none (or it was evicted). */
KILN_MUST_CHECK kiln_rc sources_cache_find_url(const struct sources_cache *c, const char *url,
                                               char sha256[SOURCES_SHA256_HEX],
                                               struct kiln_err *err);
/* A new temp file in tmp/ (O_CLOEXEC, 0644). OUT: *path (free()), *fd. */
KILN_MUST_CHECK kiln_rc sources_cache_tmp_open(const struct sources_cache *c, int *fd, char **path,
                                               struct kiln_err *err);
/* Move the finished temp file tmp (its digests in hex, algorithms in h's order) into place
 * as an object, write its aliases and, when url is not NULL, the URL index entry. fd stays
 * open for the caller (it still reads the same inode after a concurrent eviction). */
KILN_MUST_CHECK kiln_rc sources_cache_store(const struct sources_cache *c, int fd, const char *tmp,
                                            const struct sources_hashes *h,
                                            char hex[][2 * UTIL_DIGEST_MAX + 1], const char *url,
                                            struct kiln_err *err);
/* Record that url gives the object sha256 (an object found by a declared digest). */
KILN_MUST_CHECK kiln_rc sources_cache_index_url(const struct sources_cache *c, const char *url,
                                                const char *sha256, struct kiln_err *err);
/* Mark the object as just used (its mtime), for the LRU order. */
void sources_cache_touch(const struct sources_cache *c, const char *sha256);
/* Take an exclusive flock on lock/<kind>-<sha256(kind ":" key)>, waiting for other
 * holders when wait is true, else failing with KILN_ECONFLICT while one holds it. Git
 * mirrors are locked with kind "git" and key = the mirror's sha256(url) hex, which is how
 * gc finds the lock of a mirror directory. OUT: *fd, release with sources_cache_unlock(). */
KILN_MUST_CHECK kiln_rc sources_cache_lock(const struct sources_cache *c, const char *kind,
                                           const char *key, bool wait, int *fd,
                                           struct kiln_err *err);
void sources_cache_unlock(int fd);
/* The mirror directory of a git URL: git/<sha256(url)>.git, appended to out. */
KILN_MUST_CHECK kiln_rc sources_cache_git_path(const struct sources_cache *c, const char *url,
                                               struct kiln_buf *out, struct kiln_err *err);
/* After storing: evict to the size cap when there is one. Errors are logged, not returned
 * (a full cache must not fail a fetch that succeeded). */
void sources_cache_enforce(const struct sources_cache *c);

/* Copy the file at fd (from offset 0) to dest atomically with mode 0644, computing the
 * digests in h on the way. */
KILN_MUST_CHECK kiln_rc sources_copy_fd(int fd, const char *dest, struct sources_hashes *h,
                                        struct kiln_err *err);

/* ---- Transfers (fetch.c) --------------------------------------------------------------- */

/* Download url into fd (an empty temp file) with the fetcher's timeouts, retries, resume and
 * limits, feeding every byte to h. Errors name the URL (redacted) and what failed. */
KILN_MUST_CHECK kiln_rc sources_curl_download(struct sources *s, const char *url, int fd,
                                              struct sources_hashes *h, struct kiln_err *err);
/* Set up and tear down the fetcher's libcurl handle (s->curl). */
KILN_MUST_CHECK kiln_rc sources_curl_open(struct sources *s, struct kiln_err *err);
void sources_curl_close(struct sources *s);
KILN_MUST_CHECK kiln_rc sources_curl_global_init(struct kiln_err *err);

/* ---- Tar writer (tar.c): git archive's ustar/pax layout ------------------------------- */

/* Bytes go to a sink (the gzip stream, or memory in tests). */
struct sources_tar_sink {
	kiln_rc (*write)(struct sources_tar_sink *s, const void *data, size_t len,
	                 struct kiln_err *err);
};

struct sources_tar {
	struct sources_tar_sink *sink; /* borrowed */
	unsigned char block[10240];    /* git archive writes 20-block records */
	size_t off;                    /* bytes used in block */
	uint64_t mtime;
	unsigned umask; /* 002, git's tar.umask default */
};

void sources_tar_init(struct sources_tar *t, struct sources_tar_sink *sink, uint64_t mtime);
/* The pax global header carrying the commit id (git's "comment=" record). */
KILN_MUST_CHECK kiln_rc sources_tar_global(struct sources_tar *t, const char *commit,
                                           struct kiln_err *err);
/* One entry: mode is git's (040000 tree, 0100644/0100755 blob, 0120000 link, 0160000
 * submodule), path without a trailing '/', oid the object's hex id (names over-long
 * entries as git does), data the blob (the link target for symlinks). */
KILN_MUST_CHECK kiln_rc sources_tar_entry(struct sources_tar *t, const char *path, unsigned mode,
                                          const char *oid, const void *data, size_t size,
                                          struct kiln_err *err);
/* The end-of-archive blocks, padding to a whole record. */
KILN_MUST_CHECK kiln_rc sources_tar_finish(struct sources_tar *t, struct kiln_err *err);

/* ---- Git (git.c) ----------------------------------------------------------------------- */

KILN_MUST_CHECK kiln_rc sources_git_global_init(struct kiln_err *err);

/* ---- The fetcher ----------------------------------------------------------------------- */

struct sources {
	struct sources_fetch_opts o; /* strings borrowed from the caller */
	struct sources_cache cache;
	void *curl;                   /* CURL * (fetch.c) */
	struct kiln_arena tmp;        /* strings of the last sources_fetch_url() result */
	struct sources_sums filesums; /* the sums file of the spec being fetched */
};

#endif
