/*
 * test_sumfile.c - dist-git "sources" files: both line formats, bounds, errors, output.
 */
#include "util/util.h"

#include "tests/unit/sources/sources_test.h"

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H128 H64 H64

static kiln_rc parse(struct sources_sums *s, const char *text, struct kiln_err *err)
{
	sources_sums_init(s);
	return sources_sums_parse(s, "sources", text, strlen(text), err);
}

KILN_TEST(sums_tagged_lines)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;
	const struct sources_sum *e;

	assert_ok(parse(&s,
	                "SHA512 (foo-1.0.tar.gz) = " H128 "\n"
	                "# a comment\n\n"
	                "SHA256 (name with (parens) and spaces.zip) = " H64 "\n",
	                &err),
	          &err);
	assert_int_equal(s.n, 2);
	e = sources_sums_find(&s, "foo-1.0.tar.gz");
	assert_non_null(e);
	assert_int_equal(e->algo, UTIL_DIGEST_SHA512);
	assert_string_equal(e->hex, H128);
	e = sources_sums_find(&s, "name with (parens) and spaces.zip");
	assert_non_null(e);
	assert_int_equal(e->algo, UTIL_DIGEST_SHA256);
	assert_null(sources_sums_find(&s, "other"));
	sources_sums_release(&s);
}

KILN_TEST(sums_plain_lines_pick_the_algorithm_by_length)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;

	assert_ok(parse(&s,
	                "0123456789ABCDEF0123456789abcdef  old.tar.bz2\n" H64 " *bin.iso\r\n" H128
	                "  x\n",
	                &err),
	          &err);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].algo, UTIL_DIGEST_MD5);
	assert_string_equal(s.v[0].hex, "0123456789abcdef0123456789abcdef"); /* lowercased */
	assert_int_equal(s.v[1].algo, UTIL_DIGEST_SHA256);
	assert_string_equal(s.v[1].file, "bin.iso");
	assert_int_equal(s.v[2].algo, UTIL_DIGEST_SHA512);
	sources_sums_release(&s);
}

KILN_TEST(sums_later_line_replaces)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;

	assert_ok(parse(&s, "SHA256 (a) = " H64 "\nSHA512 (a) = " H128 "\n", &err), &err);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].algo, UTIL_DIGEST_SHA512);
	sources_sums_release(&s);
}

static void bad(const char *text, kiln_rc code, const char *msg)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;

	assert_int_equal(parse(&s, text, &err), code);
	if (!strstr(err.msg, msg))
		print_error("message: %s\n", err.msg);
	assert_non_null(strstr(err.msg, msg));
	sources_sums_release(&s);
}

KILN_TEST(sums_errors_name_the_line)
{
	bad("SHA512 (a) = " H128 "\nSHA512 (b) = 12\n", KILN_ESYNTAX,
	    "sources:2: sha512 digest must be 128 hex digits");
	bad("SHA999 (a) = " H64 "\n", KILN_ENOTFOUND,
	    "sources:1: unknown digest algorithm 'SHA999'");
	bad("SHA256 (../etc/passwd) = " H64 "\n", KILN_ESYNTAX, "bad file name '../etc/passwd'");
	bad("SHA256 (..) = " H64 "\n", KILN_ESYNTAX, "bad file name '..'");
	bad("SHA256 a = " H64 "\n", KILN_ESYNTAX, "expected 'ALGO (name) = hex'");
	bad("12345 name\n", KILN_ESYNTAX, "sources:1: expected");
	bad("123  name\n", KILN_ESYNTAX, "a digest of 3 hex digits");
	bad("0123456789abcdef0123456789abcdeg  x\n", KILN_ESYNTAX, "bad hex digest");
}

KILN_TEST(sums_limits)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;
	char *big = kiln_malloc(KILN_LIMIT_SUMFILE + 2);

	assert_non_null(big);
	memset(big, '#', KILN_LIMIT_SUMFILE + 1);
	big[KILN_LIMIT_SUMFILE + 1] = '\0';
	sources_sums_init(&s);
	assert_int_equal(sources_sums_parse(&s, "sources", big, strlen(big), &err), KILN_ELIMIT);
	free(big);
	sources_sums_release(&s);
}

KILN_TEST(sums_set_and_format_roundtrip)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf out = KILN_BUF_INIT(4096);
	struct sources_sums s, back;

	sources_sums_init(&s);
	assert_ok(sources_sums_set(&s, "b.tar.gz", UTIL_DIGEST_SHA512, H128, &err), &err);
	assert_ok(sources_sums_set(&s, "a.zip", UTIL_DIGEST_SHA256, H64, &err), &err);
	assert_int_equal(sources_sums_set(&s, "x/y", UTIL_DIGEST_SHA256, H64, &err), KILN_EINVAL);
	sources_sums_format(&s, &out);
	assert_string_equal(out.ptr, "SHA512 (b.tar.gz) = " H128 "\nSHA256 (a.zip) = " H64 "\n");
	assert_ok(parse(&back, out.ptr, &err), &err);
	assert_int_equal(back.n, 2);
	assert_string_equal(back.v[1].file, "a.zip");
	sources_sums_release(&back);
	sources_sums_release(&s);
	kiln_buf_release(&out);
}

KILN_TEST(sums_read_missing_file)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct sources_sums s;
	char p[512];

	sources_sums_init(&s);
	assert_int_equal(sources_sums_read(&s, wt_path(p, sizeof(p), "nope/sources"), &err),
	                 KILN_ENOTFOUND);
	sources_sums_release(&s);
}
