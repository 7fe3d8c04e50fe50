/*
 * test_repomd.c - repomd.xml: what createrepo_c and kiln write, and hostile input.
 */
#include "util/util.h"

#include "tests/unit/roots/roots_test.h"

#define H "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char good[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                           "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
                           "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n"
                           "  <revision>1704067200</revision>\n"
                           "  <!-- a comment -->\n"
                           "  <data type=\"primary\">\n"
                           "    <checksum type=\"sha256\">" H "</checksum>\n"
                           "    <open-checksum type=\"sha256\">" H "</open-checksum>\n"
                           "    <location href=\"repodata/" H "-primary.xml.gz\"/>\n"
                           "    <timestamp>1704067200</timestamp>\n"
                           "    <size>1234</size>\n"
                           "    <open-size>5678</open-size>\n"
                           "  </data>\n"
                           "  <data type='group'>\n"
                           "    <checksum type=\"SHA256\">" H "</checksum>\n"
                           "    <location href=\"repodata/comps&amp;co.xml\"></location>\n"
                           "  </data>\n"
                           "</repomd>\n";

KILN_TEST(repomd_reads_what_createrepo_writes)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_repomd md;
	const struct roots_repomd_data *d;

	roots_repomd_init(&md);
	assert_ok(roots_repomd_parse(&md, "repomd.xml", good, strlen(good), &err), &err);
	assert_string_equal(md.revision, "1704067200");
	assert_int_equal(md.ndata, 2);
	d = roots_repomd_find(&md, "primary");
	assert_non_null(d);
	assert_string_equal(d->href, "repodata/" H "-primary.xml.gz");
	assert_string_equal(d->sum_type, "sha256");
	assert_string_equal(d->sum, H);
	assert_int_equal(d->size, 1234);
	assert_int_equal(d->open_size, 5678);
	d = roots_repomd_find(&md, "group");
	assert_non_null(d);
	assert_string_equal(d->href, "repodata/comps&co.xml");
	assert_null(roots_repomd_find(&md, "filelists"));
	roots_repomd_release(&md);
}

KILN_TEST(repomd_refuses_hostile_input)
{
	static const struct {
		const char *xml;
		kiln_rc code;
		const char *msg;
	} cases[] = {
	    {"<repomd><data type=\"primary\"><checksum type=\"sha256\">" H "</checksum>"
	     "<location href=\"../../etc/passwd\"/></data></repomd>",
	     KILN_EPRIV, ""},
	    {"<repomd><data type=\"primary\"><checksum type=\"sha256\">" H "</checksum>"
	     "<location href=\"/etc/passwd\"/></data></repomd>",
	     KILN_EPRIV, "not inside the repository"},
	    {"<repomd><data type=\"primary\"><checksum type=\"sha256\">" H "</checksum>"
	     "<location href=\"http://evil/x\"/></data></repomd>",
	     KILN_EPRIV, "not inside the repository"},
	    {"<repomd><data type=\"primary\"><checksum type=\"sha256\">abc</checksum>"
	     "<location href=\"x\"/></data></repomd>",
	     KILN_EFORMAT, "hex digits"},
	    {"<repomd><data type=\"primary\"><location href=\"x\"/></data></repomd>", KILN_EFORMAT,
	     "lacks a checksum"},
	    {"<repomd><data type=\"primary\"><checksum type=\"crc\">" H "</checksum>"
	     "<location href=\"x\"/></data></repomd>",
	     KILN_EFORMAT, "unknown"},
	    {"<!DOCTYPE x [<!ENTITY a \"b\">]><repomd/>", KILN_EUNSUPP, "DTD"},
	    {"<repomd><data type=\"x\"></repomd>", KILN_ESYNTAX, "does not match"},
	    {"<repomd>", KILN_ESYNTAX, "ends inside"},
	    {"", KILN_ESYNTAX, "no document element"},
	    {"<other/>", KILN_EFORMAT, "not <repomd>"},
	    {"<repomd/><repomd/>", KILN_ESYNTAX, "second document element"},
	    {"<repomd><revision>&bogus;</revision></repomd>", KILN_ESYNTAX, "entity"},
	    {"<repomd><a><b><c><d><e><f><g><h><i><j><k><l><m><n><o><p><q>", KILN_ELIMIT, "deeply"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kiln_err err = KILN_ERR_INIT;
		struct roots_repomd md;
		kiln_rc rc;

		roots_repomd_init(&md);
		rc =
		    roots_repomd_parse(&md, "repomd.xml", cases[i].xml, strlen(cases[i].xml), &err);
		if (rc != cases[i].code || !strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: rc %d msg '%s'", i, rc, err.msg);
		roots_repomd_release(&md);
	}
}

KILN_TEST(repomd_bounds)
{
	struct kiln_buf b = KILN_BUF_INIT(2 * ROOTS_REPOMD_MAX_BYTES);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_repomd md;
	int i;

	kiln_buf_addstr(&b, "<repomd>");
	for (i = 0; i <= ROOTS_REPOMD_MAX_DATA; i++)
		kiln_buf_addf(&b,
		              "<data type=\"t%d\"><checksum type=\"sha256\">" H
		              "</checksum><location href=\"x\"/></data>",
		              i);
	kiln_buf_addstr(&b, "</repomd>");
	roots_repomd_init(&md);
	assert_int_equal(roots_repomd_parse(&md, "repomd.xml", b.ptr, b.len, &err), KILN_ELIMIT);
	roots_repomd_release(&md);
	kiln_buf_release(&b);
}
