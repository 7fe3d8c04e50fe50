#include "util/util.h"

#include "rpmtag/rpmtag.h"
#include "tests/unit/harness.h"
#include "tests/unit/rpmtag/qfsrc.h"

static char buf[4096];
#define R(fmt) qfsrc_render(fmt, buf, sizeof(buf))

KILN_TEST(qf_literals_and_escapes)
{
	assert_string_equal(R("a\\tb\\\\c\\%d%%e\\q\\{\\}"), "a\tb\\c%d%eq{}");
	assert_string_equal(R(""), "");
}

KILN_TEST(qf_tags_widths_and_absent)
{
	assert_string_equal(R("%{NAME}-%{version}"), "demo-1.0");
	assert_string_equal(R("|%6{NAME}|%-6{NAME}|"), "|  demo|demo  |");
	assert_string_equal(R("%{BUGURL}|%8{BUGURL}|"), "(none)|  (none)|");
	assert_string_equal(R("%{FILESIZES}"), "4096");
	assert_string_equal(R("%{#FILESIZES} %{FILESIZES:arraysize} %{SIGMD5:arraysize}"), "3 3 1");
	assert_string_equal(R("%{SUMMARY}"), "Demo <x> & 'y'");
}

KILN_TEST(qf_arrays)
{
	assert_string_equal(R("[%{FILENAMES} %{FILESIZES}\\n]"),
	                    "/etc 4096\n/usr/bin/su 1500\n/usr/bin/link 4\n");
	assert_string_equal(R("[%{=NAME}:%{FILESIZES} ]"), "demo:4096 demo:1500 demo:4 ");
	assert_string_equal(R("[%{BUGURL}]"), "");
	assert_string_equal(R("[%{=NAME}]"), "");
	assert_string_equal(
	    R("[%{NAME} %{FILENAMES}]"),
	    "ERR:incorrect format: array iterator used with different sized arrays");
	/* Tags inside a conditional do not size the iterator. */
	assert_string_equal(R("[%{FILESIZES}%|NAME?{+}|]"), "4096+1500+4+");
}

KILN_TEST(qf_conditionals)
{
	assert_string_equal(R("%|EPOCH?{e}:{n}|%|BUGURL?{e}:{n}|%|BUGURL?{e}|."), "en.");
	assert_string_equal(R("%|NAME?{[%{FILESIZES},]}|"), "4096,1500,4,");
}

KILN_TEST(qf_errors)
{
	assert_string_equal(R("%{NAME"), "ERR:incorrect format: missing } after %{");
	assert_string_equal(R("%{}"), "ERR:incorrect format: empty tag name");
	assert_string_equal(R("%{NAME:}"), "ERR:incorrect format: empty tag format");
	assert_string_equal(R("%{FOO}"), "ERR:incorrect format: unknown tag: \"FOO\"");
	assert_string_equal(R("[x"), "ERR:incorrect format: ] expected at end of array");
	assert_string_equal(R("x]"), "ERR:incorrect format: unexpected ]");
	assert_string_equal(R("x}"), "ERR:incorrect format: unexpected }");
	assert_string_equal(R("\\"), "ERR:incorrect format: escaped char expected after \\");
	assert_string_equal(R("%x{NAME}"), "ERR:incorrect format: invalid field width");
	assert_string_equal(R("%|NAME?{a}b|"), "ERR:incorrect format: : expected following ? "
	                                       "subexpression");
	assert_string_equal(R("%|NAME?{a}:b|"),
	                    "ERR:incorrect format: { expected after : in expression");
	assert_string_equal(R("%|NAME?{a}:{b}"),
	                    "ERR:incorrect format: | expected at end of expression");
}

KILN_TEST(qf_depth_is_limited)
{
	struct kiln_buf f = KILN_BUF_INIT(KILN_MIB);
	int i;

	for (i = 0; i < 200; i++)
		kiln_buf_addch(&f, '[');
	assert_string_equal(R(f.ptr), "ERR:incorrect format: nested deeper than 64");
	kiln_buf_release(&f);
}

KILN_TEST(qf_star_xml_and_json)
{
	R("[%{*:xml}\\n]");
	assert_true(!strncmp(buf,
	                     "<rpmHeader>\n  <rpmTag name=\"Headeri18ntable\">\n\t<string>C"
	                     "</string>\n  </rpmTag>\n  <rpmTag name=\"Sigmd5\">\n"
	                     "\t<base64>AQL+/w==\n</base64>\n  </rpmTag>\n",
	                     strlen("<rpmHeader>\n  <rpmTag name=\"Headeri18ntable\">\n\t<string>C"
	                            "</string>\n  </rpmTag>\n  <rpmTag name=\"Sigmd5\">\n"
	                            "\t<base64>AQL+/w==\n</base64>\n  </rpmTag>\n")));
	assert_non_null(strstr(buf, "\t<string>Demo &lt;x&gt; &amp; 'y'</string>\n"
	                            "\t<string>Demo de</string>\n"));
	R("[%{*:json}]");
	assert_non_null(strstr(buf, "{\n    \"Headeri18ntable\": \t\"C\",\n    \"Sigmd5\": "
	                            "\t\"AQL+/w==\",\n"));
	assert_non_null(strstr(buf, "    \"Filesizes\": [\n\t4096,\n\t1500,\n\t4\n    ],\n"));
	assert_non_null(strstr(buf, "    \"Dirnames\": [\n\t\"/\",\n\t\"/usr/bin/\"\n    ]\n}\n"));
}

KILN_TEST(qf_aliases_compile)
{
	static const char *const names[] = {"info",    "changelog", "xml",
	                                    "json",    "requires",  "provides",
	                                    "scripts", "triggers",  "filetriggers"};
	struct rpmtag_qf *qf = NULL;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	for (i = 0; i < KILN_ARRAY_SIZE(names); i++) {
		const char *f = rpmtag_qf_alias(names[i]);

		assert_non_null(f);
		assert_ok(rpmtag_qf_compile(f, strlen(f), &qf, &err), &err);
		rpmtag_qf_free(qf);
	}
	assert_null(rpmtag_qf_alias("nope"));
}
