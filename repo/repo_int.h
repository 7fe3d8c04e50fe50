/*
 * repo_int.h - private to repo/ (and its fuzz target): the description cache each metadata
 * generation keeps, so the next write reads only the packages that changed.
 */
#ifndef KILN_REPO_INT_H
#define KILN_REPO_INT_H

#include "util/util.h"

#include "repo/repo.h"

/* One record of a generation's description cache: a package path, the key of the file its
 * description was read from, and its primary, filelists and other entries. */
struct repo_rdcache_rec {
	const char *rel; /* not NUL-terminated: rel_len bytes */
	size_t rel_len;
	uint64_t size, ino, dev;
	int64_t mtime_ns, ctime_ns, buildtime;
	const char *xml[3];
	size_t xml_len[3];
};

/* Walk the records of a cache file's text (len bytes): fn gets each well-formed one in
 * order, its pointers into text; the walk stops at the first malformed record (the rest
 * is ignored, as a damaged cache only costs reading packages again) or when fn returns
 * false. Returns how many records fn was given. */
size_t repo_rdcache_parse(const char *text, size_t len,
                          bool (*fn)(void *arg, const struct repo_rdcache_rec *r), void *arg);

#endif
