/*
 * test_lock.c - the lock: canonical bytes, identity, round trip, and a bounded reader that
 * names the bad field.
 */
#include "util/util.h"

#include "roots/roots_int.h"
#include "tests/unit/roots/roots_test.h"

#define S1 "1111111111111111111111111111111111111111111111111111111111111111"
#define S2 "2222222222222222222222222222222222222222222222222222222222222222"

static void add(struct roots_lock *l, const char *name, uint32_t epoch, const char *v,
                const char *r, const char *arch, const char *sum)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_lock_pkg p = {.name = name,
	                           .epoch = epoch,
	                           .version = v,
	                           .release = r,
	                           .arch = arch,
	                           .repo = "base",
	                           .location = "Packages/x.rpm",
	                           .size = 42};

	snprintf(p.sha256, sizeof(p.sha256), "%s", sum);
	assert_ok(roots_lock_add(l, &p, &err), &err);
}

static void two(struct roots_lock *l)
{
	struct kiln_err err = KILN_ERR_INIT;

	roots_lock_init(l);
	l->arch = "x86_64";
	add(l, "zlib", 0, "1.3", "1", "x86_64", S2);
	add(l, "bash", 1, "5.2", "3.fc42", "x86_64", S1);
	assert_ok(roots_lock_finish(l, &err), &err);
}

KILN_TEST(lock_canonical_bytes)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	char id[65];
	struct roots_lock l;

	two(&l);
	roots_lock_write(&l, &b);
	assert_string_equal(
	    b.ptr, "{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[\n"
	           "{\"name\":\"bash\",\"epoch\":1,\"version\":\"5.2\",\"release\":\"3.fc42\","
	           "\"arch\":\"x86_64\",\"sha256\":\"" S1 "\",\"repo\":\"base\","
	           "\"location\":\"Packages/x.rpm\",\"size\":42},\n"
	           "{\"name\":\"zlib\",\"epoch\":0,\"version\":\"1.3\",\"release\":\"1\","
	           "\"arch\":\"x86_64\",\"sha256\":\"" S2 "\",\"repo\":\"base\","
	           "\"location\":\"Packages/x.rpm\",\"size\":42}\n"
	           "]}\n");
	assert_ok(util_digest_mem_hex(UTIL_DIGEST_SHA256, b.ptr, b.len, id, &err), &err);
	assert_string_equal(l.id, id);
	kiln_buf_release(&b);
	roots_lock_release(&l);
}

KILN_TEST(lock_round_trip_and_identity_ignores_formatting)
{
	static const char reformatted[] =
	    "{ \"packages\": [\n"
	    "  {\"size\": 42, \"location\": \"Packages/x.rpm\", \"repo\": \"base\", \"sha256\": "
	    "\"" S2
	    "\", \"arch\": \"x86_64\", \"release\": \"1\", \"version\": \"1.3\", \"epoch\": 0, "
	    "\"name\": \"zlib\"},\n"
	    "  {\"name\": \"bash\", \"epoch\": 1, \"version\": \"5.2\", \"release\": \"3.fc42\", "
	    "\"arch\": \"x86_64\", \"sha256\": \"" S1 "\", \"repo\": \"base\", "
	    "\"location\": \"Packages/x.rpm\", \"size\": 42}\n"
	    "  ],\n  \"arch\": \"x86_64\", \"kiln_root_lock\": 1 }\n";
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_lock l, back, re;

	two(&l);
	roots_lock_write(&l, &a);
	roots_lock_init(&back);
	assert_ok(roots_lock_from_mem(&back, "lock.json", a.ptr, a.len, &err), &err);
	roots_lock_write(&back, &b);
	assert_string_equal(a.ptr, b.ptr);
	assert_string_equal(l.id, back.id);
	roots_lock_init(&re);
	assert_ok(roots_lock_from_mem(&re, "lock.json", reformatted, strlen(reformatted), &err),
	          &err);
	assert_string_equal(re.id, l.id);
	/* A different package set is a different root. */
	re.pkgs[0].sha256[5] = 'f';
	assert_ok(roots_lock_finish(&re, &err), &err);
	assert_string_not_equal(re.id, l.id);
	roots_lock_release(&re);
	roots_lock_release(&back);
	roots_lock_release(&l);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
}

KILN_TEST(lock_sorts_by_rpm_version_order)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_lock l;

	roots_lock_init(&l);
	l.arch = "x86_64";
	add(&l, "a", 0, "10", "1", "x86_64", S1);
	add(&l, "a", 0, "9", "1", "i686", S1);
	add(&l, "a", 0, "1.0~rc1", "1", "noarch", S1);
	assert_ok(roots_lock_finish(&l, &err), &err);
	assert_string_equal(l.pkgs[0].version, "1.0~rc1");
	assert_string_equal(l.pkgs[1].version, "9");
	assert_string_equal(l.pkgs[2].version, "10");
	/* The same name and arch twice is not a root. */
	add(&l, "a", 0, "11", "1", "x86_64", S1);
	assert_int_equal(roots_lock_finish(&l, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "a.x86_64 twice"));
	roots_lock_release(&l);
}

KILN_TEST(lock_reader_names_the_bad_field)
{
	static const struct {
		const char *json;
		kiln_rc code;
		const char *msg;
	} cases[] = {
	    {"{", KILN_ESYNTAX, ""},
	    {"{\"kiln_root_lock\":2,\"arch\":\"x86_64\",\"packages\":[]}", KILN_EINVAL,
	     "kiln_root_lock"},
	    {"{\"kiln_root_lock\":1,\"packages\":[]}", KILN_EINVAL, "arch"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[],\"x\":1}", KILN_EINVAL,
	     "x"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x 86\",\"packages\":[]}", KILN_EINVAL, "arch"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[{\"name\":\"a\",\"epoch\":0,"
	     "\"version\":\"1\",\"release\":\"1\",\"arch\":\"x86_64\",\"sha256\":\"" S1 "\","
	     "\"repo\":\"base\",\"location\":\"../../etc/shadow\"}]}",
	     KILN_EINVAL, "packages[0].location"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[{\"name\":\"a\",\"epoch\":0,"
	     "\"version\":\"1\",\"release\":\"1\",\"arch\":\"x86_64\",\"sha256\":\"" S1 "\","
	     "\"repo\":\"base\",\"location\":\"/abs.rpm\"}]}",
	     KILN_EINVAL, "packages[0].location"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[{\"name\":\"a\",\"epoch\":0,"
	     "\"version\":\"1-2\",\"release\":\"1\",\"arch\":\"x86_64\",\"sha256\":\"" S1 "\","
	     "\"repo\":\"base\",\"location\":\"a.rpm\"}]}",
	     KILN_EINVAL, "packages[0].version"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[{\"name\":\"a\",\"epoch\":0,"
	     "\"version\":\"1\",\"release\":\"1\",\"arch\":\"x86_64\",\"sha256\":\"ABC\","
	     "\"repo\":\"base\",\"location\":\"a.rpm\"}]}",
	     KILN_EINVAL, "packages[0].sha256"},
	    {"{\"kiln_root_lock\":1,\"arch\":\"x86_64\",\"packages\":[{\"name\":\"a\",\"epoch\":-1,"
	     "\"version\":\"1\",\"release\":\"1\",\"arch\":\"x86_64\",\"sha256\":\"" S1 "\","
	     "\"repo\":\"base\",\"location\":\"a.rpm\"}]}",
	     KILN_EINVAL, "epoch"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kiln_err err = KILN_ERR_INIT;
		struct roots_lock l;
		kiln_rc rc;

		roots_lock_init(&l);
		rc = roots_lock_from_mem(&l, "lock.json", cases[i].json, strlen(cases[i].json),
		                         &err);
		if (rc != cases[i].code || !strstr(err.msg, cases[i].msg) ||
		    strcmp(err.input, "lock.json"))
			fail_msg("case %zu: rc %d input '%s' msg '%s'", i, rc, err.input, err.msg);
		roots_lock_release(&l);
	}
}
