/*
 * test_sources.c - making a spec's sources present: local files, downloads (file:// URLs),
 * the cache, declared checksums, --pin, offline mode and the report.
 */
#include "util/util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/sources/sources_test.h"

struct fx {
	char cache[512], srv[512], sd[512], spec_text[4096];
	struct sources_fetch_opts o;
	struct macro_ctx *ctx;
	struct spec *spec;
};

/* A spec in <tmp>/<name>/ with Source0 at file://<tmp>/<name>-srv/foo.tgz and a local
 * Patch0; its sourcedir is <tmp>/<name>/sd. */
static void fx_init(struct fx *f, const char *name)
{
	char rel[128], p[600];

	snprintf(rel, sizeof(rel), "%s-cache", name);
	f->o = wt_opts(f->cache, sizeof(f->cache), rel);
	snprintf(rel, sizeof(rel), "%s-srv", name);
	wt_path(f->srv, sizeof(f->srv), rel);
	snprintf(rel, sizeof(rel), "%s/sd", name);
	wt_path(f->sd, sizeof(f->sd), rel);
	snprintf(p, sizeof(p), "%s/foo.tgz", f->srv);
	wt_write(p, "tarball bytes", 13);
	snprintf(p, sizeof(p), "%s/fix.patch", f->sd);
	wt_write(p, "patch", 5);
	snprintf(f->spec_text, sizeof(f->spec_text),
	         "Name: t\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
	         "Source0: file://%s/foo.tgz\nPatch0: fix.patch\n%%description\nd\n",
	         f->srv);
	f->spec = wt_spec(f->spec_text, f->sd, &f->ctx);
	f->spec->path = f->sd; /* "sources" is looked for beside it: <sd>/../sources */
}

static void fx_release(struct fx *f)
{
	spec_free(f->spec);
	macro_ctx_free(f->ctx);
}

KILN_TEST(sources_download_cache_and_report)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_fetch_report rep;
	struct fx f;
	char p[600], want[65];

	fx_init(&f, "s1");
	sources_fetch_report_init(&rep);
	assert_ok(sources_fetch(f.spec, &f.o, &rep, &err), &err);
	assert_int_equal(rep.n, 2);
	assert_int_equal(rep.v[0].origin, SOURCES_ORIGIN_NETWORK);
	assert_int_equal(rep.v[0].num, 0);
	assert_false(rep.v[0].is_patch);
	assert_string_equal(rep.v[0].file, "foo.tgz");
	wt_sha256("tarball bytes", 13, want);
	assert_string_equal(rep.v[0].sha256, want);
	assert_int_equal(rep.v[0].size, 13);
	assert_false(rep.v[0].verified);
	assert_int_equal(rep.v[1].origin, SOURCES_ORIGIN_LOCAL);
	assert_true(rep.v[1].is_patch);
	assert_null(rep.v[1].url);
	sources_fetch_report_release(&rep);
	/* Gone from the sourcedir and from the server: the cache has it. */
	snprintf(p, sizeof(p), "%s/foo.tgz", f.sd);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/foo.tgz", f.srv);
	assert_int_equal(unlink(p), 0);
	sources_fetch_report_init(&rep);
	assert_ok(sources_fetch(f.spec, &f.o, &rep, &err), &err);
	assert_int_equal(rep.v[0].origin, SOURCES_ORIGIN_CACHE);
	assert_string_equal(rep.v[0].sha256, want);
	sources_fetch_report_release(&rep);
	fx_release(&f);
}

KILN_TEST(sources_checksum_mismatch_keeps_the_cache_clean)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_cache_stats st;
	struct sources_sums sums;
	struct fx f;

	fx_init(&f, "s2");
	sources_sums_init(&sums);
	assert_ok(sources_sums_set(&sums, "foo.tgz", UTIL_DIGEST_SHA256,
	                           "00000000000000000000000000000000"
	                           "00000000000000000000000000000000",
	                           &err),
	          &err);
	f.o.sums = &sums;
	assert_int_equal(sources_fetch(f.spec, &f.o, NULL, &err), KILN_EDIGEST);
	assert_non_null(strstr(err.msg, "Source0 (file://"));
	assert_non_null(strstr(err.msg, "foo.tgz: sha256 mismatch: expected 0000"));
	assert_ok(sources_cache_stats(f.cache, &st, &err), &err);
	assert_int_equal(st.objects, 0);
	assert_int_equal(st.tmp_files, 0);
	sources_sums_release(&sums);
	fx_release(&f);
}

KILN_TEST(sources_pin_then_verify_offline)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf text = KILN_BUF_INIT(4096);
	struct sources_fetch_report rep;
	char sums[600], sha512[129], p[600], expect[256];
	struct fx f;

	fx_init(&f, "s3");
	snprintf(sums, sizeof(sums), "%s/sources", f.sd);
	f.o.pin = true;
	f.o.sums_file = sums;
	assert_ok(sources_fetch(f.spec, &f.o, NULL, &err), &err);
	assert_ok(util_read_file(sums, 4096, &text, &err), &err);
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA512, "tarball bytes", 13, sha512, &err), &err);
	snprintf(expect, sizeof(expect), "SHA512 (foo.tgz) = %s\n", sha512);
	assert_string_equal(text.ptr, expect);
	/* Offline, from a new sourcedir: the cache serves it and the pin verifies it. */
	f.o.pin = false;
	f.o.offline = true;
	snprintf(p, sizeof(p), "%s/foo.tgz", f.sd);
	assert_int_equal(unlink(p), 0);
	sources_fetch_report_init(&rep);
	assert_ok(sources_fetch(f.spec, &f.o, &rep, &err), &err);
	assert_int_equal(rep.v[0].origin, SOURCES_ORIGIN_CACHE);
	assert_true(rep.v[0].verified);
	sources_fetch_report_release(&rep);
	kiln_buf_release(&text);
	fx_release(&f);
}

KILN_TEST(sources_offline_miss_and_missing_local)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct fx f;
	char p[600];

	fx_init(&f, "s4");
	f.o.offline = true;
	assert_int_equal(sources_fetch(f.spec, &f.o, NULL, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "offline: "));
	kiln_err_clear(&err);
	f.o.offline = false;
	snprintf(p, sizeof(p), "%s/fix.patch", f.sd);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(sources_fetch(f.spec, &f.o, NULL, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "Patch0: "));
	assert_non_null(strstr(err.msg, "the spec gives no URL for it"));
	fx_release(&f);
}

KILN_TEST(sources_fetch_url_and_scheme_check)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_result res;
	struct sources *s = NULL;
	struct fx f;
	char url[600], dest[600];

	fx_init(&f, "s5");
	assert_ok(sources_new(&f.o, &s, &err), &err);
	snprintf(url, sizeof(url), "file://%s/foo.tgz", f.srv);
	snprintf(dest, sizeof(dest), "%s/job/foo.tgz", f.sd);
	assert_ok(sources_fetch_url(s, url, NULL, dest, &res, &err), &err);
	assert_int_equal(res.origin, SOURCES_ORIGIN_NETWORK);
	assert_string_equal(res.path, dest);
	assert_int_equal(sources_fetch_url(s, "hkp://keys/x", NULL, dest, &res, &err),
	                 KILN_EUNSUPP);
	sources_free(s);
	fx_release(&f);
}

/* A package repository's fetch (roots/): sha256 only, and dest linked to the object. */
static bool has_sha512_alias(const char *cache)
{
	char p[700];

	snprintf(p, sizeof(p), "%s/alias/sha512", cache);
	return util_exists(p);
}

KILN_TEST(sources_sha256_only_and_linked_dest)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_result res;
	struct sources *s = NULL;
	struct stat a, b;
	char url[600], dest[600], obj[800];
	struct fx f;

	fx_init(&f, "s6");
	f.o.sha256_only = true;
	f.o.link_dest = true;
	assert_ok(sources_new(&f.o, &s, &err), &err);
	snprintf(url, sizeof(url), "file://%s/foo.tgz", f.srv);
	snprintf(dest, sizeof(dest), "%s/job/foo.tgz", f.sd);
	assert_ok(sources_fetch_url(s, url, NULL, dest, &res, &err), &err);
	assert_int_equal(res.origin, SOURCES_ORIGIN_NETWORK);
	assert_false(has_sha512_alias(f.cache));
	snprintf(obj, sizeof(obj), "%s/sha256/%.2s/%s", f.cache, res.sha256, res.sha256);
	assert_int_equal(stat(dest, &a), 0);
	assert_int_equal(stat(obj, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	/* From the cache: linked again, after the object was re-hashed. */
	assert_int_equal(unlink(dest), 0);
	assert_ok(sources_fetch_url(s, url, NULL, dest, &res, &err), &err);
	assert_int_equal(res.origin, SOURCES_ORIGIN_CACHE);
	assert_int_equal(stat(dest, &a), 0);
	assert_true(a.st_ino == b.st_ino);
	sources_free(s);
	/* pin records sha512: the two do not go together */
	f.o.pin = true;
	assert_int_equal(sources_new(&f.o, &s, &err), KILN_EINVAL);
	fx_release(&f);
}
