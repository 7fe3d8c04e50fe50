/*
 * test_cache.c - the content-addressed cache: storing, lookups by digest and URL, aliases,
 * locks, digests computed while streaming, and copying out.
 */
#include "util/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/sources/sources_test.h"

static void open_cache(struct sources_cache *c, const char *name)
{
	struct kiln_err err = KILN_ERR_INIT;
	char p[512];

	assert_ok(sources_cache_open(c, wt_path(p, sizeof(p), name), 0, &err), &err);
}

/* Store data as if downloaded from url; returns the sha256 in hex. */
static void store(struct sources_cache *c, const char *data, const char *url, char *sha256)
{
	struct kiln_err err = KILN_ERR_INIT;
	char hex[SOURCES_HASHES_MAX][2 * UTIL_DIGEST_MAX + 1];
	struct sources_hashes h;
	char *tmp = NULL;
	int fd = -1;

	assert_ok(sources_hashes_init(&h, NULL, true, &err), &err);
	assert_ok(sources_cache_tmp_open(c, &fd, &tmp, &err), &err);
	assert_ok(util_write_all(fd, data, strlen(data), &err), &err);
	sources_hashes_update(&h, data, strlen(data));
	assert_ok(sources_hashes_final(&h, hex, &err), &err);
	assert_ok(sources_cache_store(c, fd, tmp, &h, hex, url, &err), &err);
	memcpy(sha256, hex[0], 65);
	util_close(fd);
	free(tmp);
	sources_hashes_release(&h);
}

KILN_TEST(cache_store_and_find)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf p = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct sources_cache c;
	char sha[65], found[65], want[65], sha512[129];
	struct stat st;

	open_cache(&c, "c1");
	store(&c, "hello\n", "https://h/hello.txt", sha);
	wt_sha256("hello\n", 6, want);
	assert_string_equal(sha, want);
	sources_cache_object_path(&c, sha, &p);
	assert_int_equal(stat(p.ptr, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0444);
	assert_ok(sources_cache_find_digest(&c, UTIL_DIGEST_SHA256, sha, found, &err), &err);
	assert_ok(sources_cache_find_url(&c, "https://h/hello.txt", found, &err), &err);
	assert_string_equal(found, sha);
	/* The sha512 alias leads to the same object. */
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA512, "hello\n", 6, sha512, &err), &err);
	assert_ok(sources_cache_find_digest(&c, UTIL_DIGEST_SHA512, sha512, found, &err), &err);
	assert_string_equal(found, sha);
	assert_int_equal(sources_cache_find_url(&c, "https://h/other", found, &err),
	                 KILN_ENOTFOUND);
	kiln_err_clear(&err);
	/* An evicted object turns its index entries into misses. */
	assert_int_equal(unlink(p.ptr), 0);
	assert_int_equal(sources_cache_find_url(&c, "https://h/hello.txt", found, &err),
	                 KILN_ENOTFOUND);
	kiln_buf_release(&p);
	sources_cache_close(&c);
}

KILN_TEST(cache_damaged_index_is_a_miss)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache c;
	char sha[65], p[512], hex[129];

	open_cache(&c, "c2");
	store(&c, "x", "http://h/x", sha);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, "http://h/x", 10, hex, &err), &err);
	snprintf(p, sizeof(p), "%s/url/%.2s/%s", c.dir, hex, hex);
	wt_write(p, "garbage\n", 8);
	assert_int_equal(sources_cache_find_url(&c, "http://h/x", sha, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_ok(sources_cache_index_url(&c, "http://h/x", sha, &err), &err);
	assert_ok(sources_cache_find_url(&c, "http://h/x", sha, &err), &err);
	sources_cache_close(&c);
}

KILN_TEST(cache_hashes_reset_and_extra)
{
	struct kiln_err err = KILN_ERR_INIT;
	char hex[SOURCES_HASHES_MAX][2 * UTIL_DIGEST_MAX + 1], want[65];
	enum util_digest_algo md5 = UTIL_DIGEST_MD5;
	struct sources_hashes h;

	assert_ok(sources_hashes_init(&h, &md5, true, &err), &err);
	assert_int_equal(h.n, 3);
	assert_int_equal(sources_hashes_find(&h, UTIL_DIGEST_MD5), 1);
	assert_int_equal(sources_hashes_find(&h, UTIL_DIGEST_SHA1), -1);
	sources_hashes_update(&h, "junk", 4);
	assert_ok(sources_hashes_reset(&h, &err), &err);
	assert_int_equal(h.size, 0);
	sources_hashes_update(&h, "abc", 3);
	assert_ok(sources_hashes_final(&h, hex, &err), &err);
	wt_sha256("abc", 3, want);
	assert_string_equal(hex[0], want);
	assert_string_equal(hex[1], "900150983cd24fb0d6963f7d28e17f72");
	sources_hashes_release(&h);
}

KILN_TEST(cache_lock_excludes_and_nowait)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache c;
	int a = -1, b = -1;

	open_cache(&c, "c3");
	assert_ok(sources_cache_lock(&c, "url", "http://h/a", true, &a, &err), &err);
	/* flock locks belong to open file descriptions: a second open conflicts. */
	assert_int_equal(sources_cache_lock(&c, "url", "http://h/a", false, &b, &err),
	                 KILN_ECONFLICT);
	kiln_err_clear(&err);
	assert_ok(sources_cache_lock(&c, "url", "http://h/b", false, &b, &err), &err);
	sources_cache_unlock(b);
	sources_cache_unlock(a);
	assert_ok(sources_cache_lock(&c, "url", "http://h/a", false, &b, &err), &err);
	sources_cache_unlock(b);
	sources_cache_close(&c);
}

KILN_TEST(cache_copy_fd_hashes)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf got = KILN_BUF_INIT(1024);
	char hex[SOURCES_HASHES_MAX][2 * UTIL_DIGEST_MAX + 1], want[65], src[512], dst[512];
	struct sources_hashes h;
	int fd;

	wt_write(wt_path(src, sizeof(src), "copy/src"), "content", 7);
	fd = open(src, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 3, SEEK_SET), 3); /* copying rewinds */
	assert_ok(sources_hashes_init(&h, NULL, false, &err), &err);
	assert_ok(sources_copy_fd(fd, wt_path(dst, sizeof(dst), "copy/dst"), &h, &err), &err);
	assert_ok(sources_hashes_final(&h, hex, &err), &err);
	wt_sha256("content", 7, want);
	assert_string_equal(hex[0], want);
	assert_ok(util_read_file(dst, 1024, &got, &err), &err);
	assert_string_equal(got.ptr, "content");
	sources_hashes_release(&h);
	util_close(fd);
	kiln_buf_release(&got);
}

KILN_TEST(cache_default_dir)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf b = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char *old = getenv("KILN_CACHE_DIR") ? kiln_strdup(getenv("KILN_CACHE_DIR")) : NULL;

	setenv("KILN_CACHE_DIR", "/x/cache", 1);
	assert_ok(sources_cache_default_dir(&b, &err), &err);
	assert_string_equal(b.ptr, "/x/cache");
	unsetenv("KILN_CACHE_DIR");
	kiln_buf_reset(&b);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_ok(sources_cache_default_dir(&b, &err), &err);
	assert_string_equal(b.ptr, "/xdg/kiln");
	unsetenv("XDG_CACHE_HOME");
	if (old)
		setenv("KILN_CACHE_DIR", old, 1);
	free(old);
	kiln_buf_release(&b);
}
