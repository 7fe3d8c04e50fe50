/*
 * test_cachegc.c - cache statistics and garbage collection: LRU eviction under a cap,
 * dangling index entries, stale temp files, corrupt objects, busy mirrors.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/sources/sources_test.h"

/* An object file with the given bytes and mtime, written directly into the layout. */
static void put_object(const char *cache, const char *data, int64_t mtime, char *sha)
{
	char p[1024];
	struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};

	wt_sha256(data, strlen(data), sha);
	snprintf(p, sizeof(p), "%s/sha256/%.2s/%s", cache, sha, sha);
	wt_write(p, data, strlen(data));
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static bool object_exists(const char *cache, const char *sha)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/sha256/%.2s/%s", cache, sha, sha);
	return access(p, F_OK) == 0;
}

KILN_TEST(gc_evicts_least_recently_used)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache_stats st;
	struct sources_cache_gc g;
	char dir[512], a[65], b[65], c[65], idx[1024], line[128];

	wt_path(dir, sizeof(dir), "gc1");
	put_object(dir, "aaaaaaaaaa", 1000, a); /* oldest */
	put_object(dir, "bbbbbbbbbb", 3000, b);
	put_object(dir, "cccccccccc", 2000, c);
	snprintf(idx, sizeof(idx), "%s/url/00/0000", dir);
	snprintf(line, sizeof(line), "sha256 %s\nurl http://h/a\n", a);
	wt_write(idx, line, strlen(line));
	assert_ok(sources_cache_stats(dir, &st, &err), &err);
	assert_int_equal(st.objects, 3);
	assert_int_equal(st.object_bytes, 30);
	assert_int_equal(st.urls, 1);
	assert_ok(sources_cache_collect(dir, 20, 0, &g, &err), &err);
	assert_int_equal(g.objects, 1);
	assert_int_equal(g.object_bytes, 10);
	assert_int_equal(g.index, 1); /* the URL entry of the evicted object */
	assert_false(object_exists(dir, a));
	assert_true(object_exists(dir, b) && object_exists(dir, c));
	assert_int_equal(access(idx, F_OK), -1);
	/* Without a cap nothing else goes. */
	assert_ok(sources_cache_collect(dir, 0, 0, &g, &err), &err);
	assert_int_equal(g.objects, 0);
	assert_ok(sources_cache_stats(dir, &st, &err), &err);
	assert_int_equal(st.objects, 2);
}

KILN_TEST(gc_removes_stale_tmp_and_corrupt_objects)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache_gc g;
	struct sources_cache_stats st;
	char dir[512], p[1024], good[65], fake[65];
	struct timespec old[2] = {{100, 0}, {100, 0}};

	wt_path(dir, sizeof(dir), "gc2");
	put_object(dir, "good", 5000, good);
	memset(fake, 'e', 64);
	fake[64] = '\0';
	snprintf(p, sizeof(p), "%s/sha256/ee/%s", dir, fake);
	wt_write(p, "not what the name says", 22);
	snprintf(p, sizeof(p), "%s/tmp/dl-old", dir);
	wt_write(p, "partial", 7);
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	snprintf(p, sizeof(p), "%s/tmp/dl-new", dir);
	wt_write(p, "in progress", 11);
	assert_ok(sources_cache_collect(dir, 0, SOURCES_CACHE_GC_VERIFY, &g, &err), &err);
	assert_int_equal(g.corrupt, 1);
	assert_int_equal(g.tmp_files, 1);
	assert_int_equal(g.tmp_bytes, 7);
	assert_true(object_exists(dir, good));
	assert_false(object_exists(dir, fake));
	assert_ok(sources_cache_stats(dir, &st, &err), &err);
	assert_int_equal(st.tmp_files, 1); /* the one in progress stays */
	assert_int_equal(st.objects, 1);
}

KILN_TEST(gc_skips_a_busy_mirror)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache c;
	struct sources_cache_gc g;
	char dir[512], p[1024], key[65];
	int lock = -1;

	wt_path(dir, sizeof(dir), "gc3");
	memset(key, 'a', 64);
	key[64] = '\0';
	snprintf(p, sizeof(p), "%s/git/%s.git/objects/pack", dir, key);
	assert_ok(util_mkdir_p(p, 0755, &err), &err);
	snprintf(p, sizeof(p), "%s/git/%s.git/HEAD", dir, key);
	wt_write(p, "ref: refs/heads/main\n", 21);
	assert_ok(sources_cache_open(&c, dir, 0, &err), &err);
	assert_ok(sources_cache_lock(&c, "git", key, true, &lock, &err), &err);
	assert_ok(sources_cache_collect(dir, 1, 0, &g, &err), &err);
	assert_int_equal(g.mirrors, 0);
	sources_cache_unlock(lock);
	assert_ok(sources_cache_collect(dir, 1, 0, &g, &err), &err);
	assert_int_equal(g.mirrors, 1);
	assert_int_equal(g.mirror_bytes, 21);
	sources_cache_close(&c);
}

KILN_TEST(gc_stats_of_a_missing_cache)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache_stats st;
	char dir[512];

	assert_ok(sources_cache_stats(wt_path(dir, sizeof(dir), "never"), &st, &err), &err);
	assert_int_equal(st.objects + st.mirrors + st.urls + st.tmp_files, 0);
}
