#include "util/util.h"

#include <time.h>

#include "rpmtag/rpmtag.h"
#include "tests/unit/harness.h"
#include "tests/unit/rpmtag/qfsrc.h"

static char buf[4096];
#define R(fmt) qfsrc_render(fmt, buf, sizeof(buf))

KILN_TEST(fmt_numbers)
{
	assert_string_equal(R("[%{FILEMODES:perms} ]"), "drwxr-xr-x -rwsr-xr-x lrwxrwxrwx ");
	assert_string_equal(R("[%{FILEMODES:octal} ]"), "40755 104755 120777 ");
	assert_string_equal(R("%{BUILDTIME:hex}"), "65920080");
	assert_string_equal(R("[%{FILESIZES:humansi} %{FILESIZES:humaniec} ]"),
	                    "4.1K 4.0K 1.5K 1.5K 4.0 4.0 ");
	assert_string_equal(R("[%{FILEFLAGS:fflags}.]"), ".cn.g.");
	assert_string_equal(R("[%{REQUIREFLAGS:depflags}|%{REQUIREFLAGS:deptype} ]"),
	                    ">=|manual <=|rpmlib ");
	assert_string_equal(R("%{EPOCH:triggertype}|%{EPOCH:fstate}|%{EPOCH:hashalgo}"),
	                    "|not installed|SHA1");
}

KILN_TEST(fmt_dates_in_utc)
{
	setenv("TZ", "UTC", 1);
	tzset();
	assert_string_equal(R("%{BUILDTIME:date}|%{BUILDTIME:day}"),
	                    "Mon Jan  1 00:00:00 2024|Mon Jan 01 2024");
}

KILN_TEST(fmt_class_errors)
{
	assert_string_equal(
	    R("%{NAME:date}|%{NAME:base64}|%{SIGMD5:shescape}|%{NAME:pgpsig}"),
	    "(not a number)|(not a blob)|(invalid type)|(not an OpenPGP signature)");
	assert_string_equal(R("%{SIGMD5:pgpsig}|%{SIGMD5:hex}"),
	                    "(not an OpenPGP signature)|(not a number)");
}

KILN_TEST(fmt_strings)
{
	assert_string_equal(R("%{SUMMARY:shescape} %{EPOCH:shescape}"),
	                    "'Demo <x> & '\\''y'\\''' 2");
	assert_string_equal(R("%{SIGMD5} %{SIGMD5:base64}"), "0102feff AQL+/w==\n");
	assert_string_equal(R("%{NAME:xml}%{EPOCH:xml}"),
	                    "\t<string>demo</string>\t<integer>2</integer>");
	/* rpm 4.20's jsonFormat gives the bare value; the TAB belongs to %{*:json}'s layout
	 * (lib/formats.c jsonFormat and headerfmt.c jsonItemHeader; 4.18 has no :json). */
	assert_string_equal(R("%{SUMMARY:json}|%{EPOCH:json}"), "\"Demo <x> & 'y'\"|2");
	assert_string_equal(R("%{NAME:tagname} %{NAME:tagnum} %{NAME:expand}"), "Name 1000 demo");
}

KILN_TEST(fmt_vflags)
{
	assert_string_equal(R("%{FILESIZES:vflags}|%{FILESIZES:fstatus}"), "|.........");
}

KILN_TEST(fmt_pgpsig_parses_a_v4_signature)
{
	/* An old-format signature packet: v4, RSA, SHA256, creation time and issuer. */
	static const unsigned char sig[] = {
	    0x89, 0x00, 0x1c, 0x04, 0x00, 0x01, 0x08, 0x00, 0x06, 0x05, 0x02,
	    0x65, 0x92, 0x00, 0x80, 0x00, 0x0a, 0x09, 0x10, 0x01, 0x23, 0x45,
	    0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
	};
	const struct qfsrc_tag tags[] = {{RPMTAG_RSAHEADER, {RPMTAG_TYPE_BIN, sizeof(sig), sig}}};
	struct qfsrc s = {tags, 1};
	struct rpmtag_qf_source src = {&qfsrc_ops, &s, 0};
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	setenv("TZ", "UTC", 1);
	tzset();
	assert_ok(rpmtag_qf_format("%{RSAHEADER:pgpsig}", &src, &out, &err), &err);
	assert_string_equal(out.ptr,
	                    "RSA/SHA256, Mon Jan  1 00:00:00 2024, Key ID 0123456789abcdef");
	kiln_buf_release(&out);
}
