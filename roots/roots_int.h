/*
 * roots_int.h - what the files of roots/ share and nothing else sees.
 */
#ifndef KILN_ROOTS_INT_H
#define KILN_ROOTS_INT_H

#include "util/util.h"

/* The administrator's root configurations, searched before kiln's own. */
#define ROOTS_ETC_DIR "/etc/kiln/roots"

/* Parentheses a rich dependency may nest (rpm itself allows far fewer in practice). */
#define ROOTS_RICH_MAX_DEPTH 64

/* Letters, digits and the characters of extra; 1 to 128 bytes. */
bool roots_name_ok(struct kiln_str s, const char *extra);

struct roots_lock;
struct roots_lock_pkg;
/* Append a copy of pkg (strings copied into l's arena) to l. */
KILN_MUST_CHECK kiln_rc roots_lock_add(struct roots_lock *l, const struct roots_lock_pkg *pkg,
                                       struct kiln_err *err);

struct sources;
struct sign_keyring;
struct roots_fetch_opts;
struct roots_repo_config;

/* Read url into out (bounded by max): file:// from the file itself, anything else
 * downloaded fresh (sources_fetch_fresh): repomd.xml, its signature, keys. KILN_ENOTFOUND
 * for a missing local file. s may be NULL when url is file://. (metadata.c) */
KILN_MUST_CHECK kiln_rc roots_url_read(struct sources *s, const char *url, size_t max,
                                       struct kiln_buf *out, struct kiln_err *err);
/* The repository's gpgkey as a keyring. OUT: *out, sign_keyring_free(). */
KILN_MUST_CHECK kiln_rc roots_keyring_load(struct sources *s, const struct roots_repo_config *r,
                                           struct sign_keyring **out, struct kiln_err *err);
/* A fetcher with o's cache and network choice, the fetcher's libraries opened first
 * (sources_global_init). OUT: *out, sources_free(). */
KILN_MUST_CHECK kiln_rc roots_sources_open(const struct roots_fetch_opts *o, struct sources **out,
                                           struct kiln_err *err);
/* A fresh private directory under $TMPDIR (or /tmp), its path appended to out. */
KILN_MUST_CHECK kiln_rc roots_tmpdir_make(struct kiln_buf *out, struct kiln_err *err);

struct roots_config;
struct roots_pool;
struct spec_deps;
/* A configuration's repositories with their repomd.xml read fresh and its signature
 * checked (repo_gpgcheck), nothing else yet: roots_pool_load() in two halves, so that what
 * a resolution depends on is known before the rest is read. (metadata.c) */
struct roots_repos;
/* Open c's repositories: every repomd.xml read and checked. OUT: *out, roots_repos_free();
 * c must outlive it. */
KILN_MUST_CHECK kiln_rc roots_repos_open(const struct roots_config *c,
                                         const struct roots_fetch_opts *o, struct roots_repos **out,
                                         struct kiln_err *err);
/* The sha256 (hex) of repository i's repomd.xml as read and checked. Borrowed from r. */
const char *roots_repos_repomd_sha256(const struct roots_repos *r, size_t i);
/* Load every repository's primary and comps (and filelists when deps or the install set
 * need them) into p, through the source cache by repomd.xml's checksums. */
KILN_MUST_CHECK kiln_rc roots_repos_load(struct roots_repos *r, struct roots_pool *p,
                                         const struct spec_deps *deps, struct kiln_err *err);
void roots_repos_free(struct roots_repos *r);

#endif
