#include "util/util.h"

#include "pack/pack.h"
#include "tests/unit/harness.h"

/* The unified diff of a and b (labels "a" and "b"), as a static string per call. */
static const char *udiff(const char *a, const char *b, unsigned context, size_t edits_max,
                         kiln_rc want)
{
	static char res[8192];
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	kiln_rc rc =
	    pack_diff_text(a, strlen(a), b, strlen(b), "a", "b", context, edits_max, &out, &err);

	assert_int_equal(rc, want);
	assert_true(out.len < sizeof(res));
	memcpy(res, out.ptr, out.len + 1);
	kiln_buf_release(&out);
	return res;
}

/* Expected outputs below were produced by GNU diff 3.8: diff -u --label a --label b. */

KILN_TEST(difftext_equal_is_empty)
{
	assert_string_equal(udiff("", "", 3, 100, KILN_OK), "");
	assert_string_equal(udiff("x\ny\n", "x\ny\n", 3, 100, KILN_OK), "");
}

KILN_TEST(difftext_two_hunks_and_missing_newline)
{
	const char *a = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
	const char *b = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn";

	assert_string_equal(udiff(a, b, 3, 100, KILN_OK), "--- a\n+++ b\n"
	                                                  "@@ -1,5 +1,5 @@\n"
	                                                  " a\n-b\n+B\n c\n d\n e\n"
	                                                  "@@ -10,5 +10,5 @@\n"
	                                                  " j\n k\n l\n-m\n-n\n+M\n+n\n"
	                                                  "\\ No newline at end of file\n");
	assert_string_equal(udiff(a, b, 1, 100, KILN_OK), "--- a\n+++ b\n"
	                                                  "@@ -1,3 +1,3 @@\n"
	                                                  " a\n-b\n+B\n c\n"
	                                                  "@@ -12,3 +12,3 @@\n"
	                                                  " l\n-m\n-n\n+M\n+n\n"
	                                                  "\\ No newline at end of file\n");
}

KILN_TEST(difftext_close_changes_share_a_hunk)
{
	/* Four equal lines between changes: with 2 lines of context they touch and merge. */
	assert_string_equal(udiff("1\n2\n3\n4\n5\n6\n", "X\n2\n3\n4\n5\nY\n", 2, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,6 +1,6 @@\n-1\n+X\n 2\n 3\n 4\n 5\n-6\n+Y\n");
	assert_string_equal(udiff("1\n2\n3\n4\n5\n6\n", "X\n2\n3\n4\n5\nY\n", 1, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-1\n+X\n 2\n"
	                    "@@ -5,2 +5,2 @@\n 5\n-6\n+Y\n");
}

KILN_TEST(difftext_insertions_and_empty_sides)
{
	assert_string_equal(udiff("x\ny\n", "y\nx\ny\nz\n", 3, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,2 +1,4 @@\n+y\n x\n y\n+z\n");
	assert_string_equal(udiff("", "p\nq\n", 3, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+p\n+q\n");
	assert_string_equal(udiff("p\nq\n", "", 3, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-p\n-q\n");
	/* Only the final newline differs: the last lines are different lines. */
	assert_string_equal(udiff("p\nq\n", "p\nq", 3, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,2 +1,2 @@\n p\n-q\n+q\n"
	                    "\\ No newline at end of file\n");
	/* Insertion after line 2 of 4 with no context: the empty range names line 2. */
	assert_string_equal(udiff("1\n2\n3\n4\n", "1\n2\nnew\n3\n4\n", 0, 100, KILN_OK),
	                    "--- a\n+++ b\n@@ -2,0 +3 @@\n+new\n");
}

KILN_TEST(difftext_edit_limit)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	assert_string_equal(udiff("a\nb\nc\n", "a\nB\nc\n", 3, 2, KILN_OK),
	                    "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
	kiln_buf_addstr(&out, "kept");
	assert_int_equal(pack_diff_text("a\nb\nc\n", 6, "a\nB\nC\n", 6, "a", "b", 3, 3, &out, &err),
	                 KILN_ELIMIT);
	assert_string_equal(err.msg, "more than 3 lines changed");
	assert_string_equal(out.ptr, "kept"); /* nothing appended */
	kiln_buf_release(&out);
}

/* The common prefix and suffix are stripped before Myers runs, so a one-line change in a
 * long file costs two steps (a line removed, a line added) whatever its length. */
KILN_TEST(difftext_long_file_one_change)
{
	struct kiln_buf a = KILN_BUF_INIT(8 * KILN_MIB), b = KILN_BUF_INIT(8 * KILN_MIB);
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	int i;

	for (i = 0; i < 100000; i++) {
		kiln_buf_addf(&a, "line %d\n", i);
		kiln_buf_addf(&b, i == 50000 ? "changed %d\n" : "line %d\n", i);
	}
	assert_ok(pack_diff_text(a.ptr, a.len, b.ptr, b.len, NULL, NULL, 1, 2, &out, &err), &err);
	assert_string_equal(out.ptr, "@@ -50000,3 +50000,3 @@\n line 49999\n-line 50000\n"
	                             "+changed 50000\n line 50001\n");
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	kiln_buf_release(&out);
}

/* Every script Myers finds for small random texts must turn a into b (replay the hunks,
 * with full context one hunk, and compare) and be a shortest one. */
static void replay(const char *diff, struct kiln_buf *a_out, struct kiln_buf *b_out)
{
	const char *p = strstr(diff, "@@ ");
	char prev = ' ';

	p = p ? strchr(p, '\n') + 1 : "";
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = (size_t)(nl - p);

		if (*p == '\\') {
			/* The line before lacks its newline on the side(s) it belongs to. */
			kiln_buf_truncate(a_out, a_out->len - (prev != '+'));
			kiln_buf_truncate(b_out, b_out->len - (prev != '-'));
		} else {
			prev = *p;
			if (*p != '+')
				kiln_buf_addf(a_out, "%.*s\n", (int)len - 1, p + 1);
			if (*p != '-')
				kiln_buf_addf(b_out, "%.*s\n", (int)len - 1, p + 1);
		}
		p = nl + 1;
	}
}

/* Lines removed plus added for a shortest script: na + nb - 2 * LCS (dynamic programming
 * over the lines, each one character plus its newline or its lack). */
static int shortest(const struct kiln_buf *a, const struct kiln_buf *b)
{
	int na = (int)(a->len + 1) / 2, nb = (int)(b->len + 1) / 2, i, j;
	int t[13][13];

	for (i = 0; i <= na; i++) {
		for (j = 0; j <= nb; j++) {
			bool same = i && j && a->ptr[2 * (i - 1)] == b->ptr[2 * (j - 1)] &&
			            a->ptr[2 * (i - 1) + 1] == b->ptr[2 * (j - 1) + 1];

			if (!i || !j)
				t[i][j] = 0;
			else if (same)
				t[i][j] = t[i - 1][j - 1] + 1;
			else
				t[i][j] = t[i - 1][j] > t[i][j - 1] ? t[i - 1][j] : t[i][j - 1];
		}
	}
	return na + nb - 2 * t[na][nb];
}

static int changed_lines(const char *diff)
{
	const char *p = strstr(diff, "@@ ");
	int n = 0;

	for (p = p ? strchr(p, '\n') + 1 : ""; *p; p = strchr(p, '\n') + 1)
		n += *p == '+' || *p == '-';
	return n;
}

KILN_TEST(difftext_random_scripts_replay)
{
	struct kiln_err err = KILN_ERR_INIT;
	uint32_t seed = 12345;
	int round, i;

	for (round = 0; round < 300; round++) {
		struct kiln_buf a = KILN_BUF_INIT(KILN_MIB), b = KILN_BUF_INIT(KILN_MIB);
		struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
		struct kiln_buf ra = KILN_BUF_INIT(KILN_MIB), rb = KILN_BUF_INIT(KILN_MIB);
		int na, nb;

		seed = seed * 1103515245 + 12345;
		na = (int)(seed >> 16) % 12;
		seed = seed * 1103515245 + 12345;
		nb = (int)(seed >> 16) % 12;
		for (i = 0; i < na; i++) {
			seed = seed * 1103515245 + 12345;
			kiln_buf_addf(&a, "%c\n", 'a' + (int)((seed >> 16) % 4));
		}
		for (i = 0; i < nb; i++) {
			seed = seed * 1103515245 + 12345;
			kiln_buf_addf(&b, "%c\n", 'a' + (int)((seed >> 16) % 4));
		}
		if (round % 3 == 0 && b.len)
			kiln_buf_truncate(&b, b.len - 1);
		assert_ok(
		    pack_diff_text(a.ptr, a.len, b.ptr, b.len, "a", "b", 100, 100, &out, &err),
		    &err);
		if (strcmp(a.ptr, b.ptr)) {
			replay(out.ptr, &ra, &rb);
			assert_string_equal(ra.ptr, a.ptr);
			assert_string_equal(rb.ptr, b.ptr);
			assert_int_equal(changed_lines(out.ptr), shortest(&a, &b));
		} else {
			assert_string_equal(out.ptr, "");
		}
		kiln_buf_release(&a);
		kiln_buf_release(&b);
		kiln_buf_release(&out);
		kiln_buf_release(&ra);
		kiln_buf_release(&rb);
	}
}
