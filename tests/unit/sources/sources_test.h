/*
 * sources_test.h - helpers shared by the sources unit tests: files in the test's temporary
 * directory, and fetch options pointing at a cache there.
 */
#ifndef KILN_TESTS_SOURCES_TEST_H
#define KILN_TESTS_SOURCES_TEST_H

#include "util/util.h"

#include "macro/macro.h"
#include "spec/spec.h"
#include "sources/sources.h"
#include "sources/sources_int.h"
#include "tests/unit/harness.h"

/* "<a fresh tmpdir>/<rel>" into buf, with rel's parent directories made. */
static inline const char *wt_path(char *buf, size_t size, const char *rel)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);

	snprintf(buf, size, "%s/%s", kiln_test_tmpdir(), rel);
	util_path_dirname(buf, &dir);
	assert_ok(util_mkdir_p(dir.ptr, 0755, &err), &err);
	kiln_buf_release(&dir);
	return buf;
}

static inline void wt_write(const char *path, const void *data, size_t len)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);

	util_path_dirname(path, &dir);
	assert_ok(util_mkdir_p(dir.ptr, 0755, &err), &err);
	assert_ok(util_write_atomic(path, data, len, 0644, &err), &err);
	kiln_buf_release(&dir);
}

static inline void wt_sha256(const void *data, size_t len, char *hex)
{
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, data, len, hex, &err), &err);
}

/* Fetch options with the cache in <tmpdir>/<name>, no retries delay to speak of. */
static inline struct sources_fetch_opts wt_opts(char *cache, size_t size, const char *name)
{
	struct sources_fetch_opts o = {0};
	struct kiln_err err = KILN_ERR_INIT;

	assert_ok(sources_global_init(&err), &err);
	o.cache_dir = wt_path(cache, size, name);
	o.retry_delay_ms = 1;
	return o;
}

/* Parse a spec from memory with %_sourcedir set. OUT: spec and ctx, free both. */
static inline struct spec *wt_spec(const char *text, const char *sourcedir, struct macro_ctx **ctx)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct spec *spec = NULL;
	char def[KILN_LIMIT_PATH + 16];

	*ctx = macro_ctx_new(&err);
	assert_non_null(*ctx);
	snprintf(def, sizeof(def), "_sourcedir %s", sourcedir);
	assert_ok(macro_define_line(*ctx, def, 0, &err), &err);
	assert_ok(
	    spec_parse_mem("t.spec", text, strlen(text), *ctx, SPEC_PARSE_ANYARCH, &spec, &err),
	    &err);
	return spec;
}

#endif
