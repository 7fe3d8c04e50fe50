/*
 * test_json.c - spec/json.c: the JSON model of a parsed spec (docs/spec-json.md), read
 * back with jansson and checked field by field.
 */
#include "util/util.h"

#include <jansson.h>

#include "tests/unit/spec/spec_test.h"

static const char json_spec[] =
    "Name: t\nVersion: 1.0\nRelease: 2\nSummary: s\nSummary(de): z\nLicense: MIT\n"
    "BuildSystem: foo\nBuildOption: --x\nBuildOption(install): DESTDIR=y\n"
    "Source0: http://h/a-1.0.tar.gz\nPatch3: p.patch\nNoPatch: 3\nBuildRequires: make >= 4\n"
    "BuildConflicts: bad\nExclusiveArch: x86_64\nRequires(pre): r\nRequires: (a or b)\n"
    "Provides: p = 1\nObsoletes: o < 2\nAutoReq: no\n%description\nd\n"
    "%package doc\nSummary: docs\nBuildArch: noarch\n%description doc\ndd\n"
    "%pre\necho pre\n%post -p /sbin/ldconfig -e\n%triggerin -- x > 1\nti\n"
    "%filetriggerin -P 5 -- /usr/lib\nfti\n%build -a\necho after\n"
    "%files -f extra.lst\n%config(noreplace) %attr(0640,root,-) /etc/t.conf\n"
    "%defattr(0644,root,root,0755)\n%verify(not md5) %lang(de) /usr/share/t\n"
    "%ghost %dev(c,1,3) /dev/t\n%doc README\nbad\n%files doc\n%license COPYING\n"
    "%changelog\n* Mon Jan 01 2024 A <a@b> - 1.0-2\n- x\n";

struct jt {
	struct pt t;
	json_t *root;
	char *text;
};

/* Parse json_spec (or text), write its JSON and read that back. */
static void jt_init(struct jt *j, const char *text)
{
	struct kiln_buf out = KILN_BUF_INIT(16 * KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	json_error_t jerr;
	size_t i;

	pt_init(&j->t);
	pt_define(&j->t, "buildsystem_foo_build() make %*");
	pt_define(&j->t, "buildsystem_foo_install() make install %*");
	pt_ok(&j->t, text ? text : json_spec);
	assert_ok(spec_json_write(j->t.spec, &out, &err), &err);
	j->text = kiln_buf_take(&out, NULL);
	assert_non_null(j->text);
	/* ASCII only: everything else is escaped. */
	for (i = 0; j->text[i]; i++)
		assert_true((unsigned char)j->text[i] < 0x80);
	assert_int_equal(j->text[i - 1], '\n');
	j->root = json_loads(j->text, JSON_REJECT_DUPLICATES, &jerr);
	if (!j->root)
		print_error("%s at %d:%d\n%s\n", jerr.text, jerr.line, jerr.column, j->text);
	assert_non_null(j->root);
	assert_true(json_is_object(j->root));
}

static void jt_release(struct jt *j)
{
	json_decref(j->root);
	free(j->text);
	pt_release(&j->t);
}

/* Walk a path of object keys and array indexes ("packages", "0", "name"). */
static json_t *at(json_t *v, const char *path)
{
	char buf[256];
	char *s = buf;
	char *key;

	snprintf(buf, sizeof(buf), "%s", path);
	while (v && (key = strsep(&s, "/"))) {
		if (json_is_array(v)) {
			char *end = NULL;
			unsigned long i = strtoul(key, &end, 10);

			v = *end ? NULL : json_array_get(v, i);
		} else {
			v = json_object_get(v, key);
		}
	}
	if (!v)
		print_error("no %s\n", path);
	assert_non_null(v);
	return v;
}

static void expect_str(json_t *root, const char *path, const char *want)
{
	json_t *v = at(root, path);

	if (!json_is_string(v))
		print_error("%s is not a string\n", path);
	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void expect_int(json_t *root, const char *path, json_int_t want)
{
	json_t *v = at(root, path);

	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), want);
}

static void expect_bool(json_t *root, const char *path, bool want)
{
	json_t *v = at(root, path);

	assert_true(json_is_boolean(v));
	assert_int_equal(json_is_true(v), want);
}

static size_t size_of(json_t *root, const char *path)
{
	json_t *v = at(root, path);

	return json_is_array(v) ? json_array_size(v) : json_object_size(v);
}

static bool has(json_t *root, const char *path, const char *key)
{
	return json_object_get(at(root, path), key) != NULL;
}

KILN_TEST(json_document)
{
	static const char *const keys[] = {
	    "kiln_spec_json", "path",        "buildsystem", "buildoptions", "buildarchs",
	    "exclusivearch",  "excludearch", "exclusiveos", "excludeos",    "sources",
	    "source_package", "packages",    "sections",    "changelog",
	};
	struct jt j;
	const char *key;
	json_t *v;
	size_t i = 0;

	jt_init(&j, NULL);
	/* The documented keys, in the documented order, and no others. */
	json_object_foreach(j.root, key, v)
	{
		assert_true(i < KILN_ARRAY_SIZE(keys));
		assert_string_equal(key, keys[i]);
		i++;
	}
	assert_int_equal(i, KILN_ARRAY_SIZE(keys));
	expect_int(j.root, "kiln_spec_json", 1);
	expect_str(j.root, "path", "t.spec");
	expect_str(j.root, "buildsystem", "foo");
	expect_str(j.root, "buildoptions/conf/0", "--x");
	expect_str(j.root, "buildoptions/install/0", "DESTDIR=y");
	assert_int_equal(size_of(j.root, "buildoptions"), 2);
	assert_int_equal(size_of(j.root, "buildarchs"), 0);
	expect_str(j.root, "exclusivearch/0", "x86_64");
	assert_int_equal(size_of(j.root, "excludeos"), 0);
	jt_release(&j);
}

KILN_TEST(json_sources_and_source_package)
{
	struct jt j;

	jt_init(&j, NULL);
	assert_int_equal(size_of(j.root, "sources"), 2);
	expect_str(j.root, "sources/0/type", "source");
	expect_int(j.root, "sources/0/num", 0);
	expect_str(j.root, "sources/0/url", "http://h/a-1.0.tar.gz");
	expect_str(j.root, "sources/0/file", "a-1.0.tar.gz");
	expect_str(j.root, "sources/0/path", "/builddir/build/SOURCES/a-1.0.tar.gz");
	expect_bool(j.root, "sources/0/nosource", false);
	expect_str(j.root, "sources/1/type", "patch");
	expect_int(j.root, "sources/1/num", 3);
	expect_bool(j.root, "sources/1/nosource", true);
	/* The source package: tags by name, build dependencies. */
	expect_str(j.root, "source_package/tags/NAME", "t");
	expect_str(j.root, "source_package/tags/PATCH/0", "p.patch");
	expect_int(j.root, "source_package/tags/NOPATCH/0", 3);
	expect_str(j.root, "source_package/buildrequires/0/name", "make");
	expect_str(j.root, "source_package/buildrequires/0/op", ">=");
	expect_str(j.root, "source_package/buildrequires/0/evr", "4");
	expect_int(j.root, "source_package/buildrequires/0/flags", 12);
	expect_str(j.root, "source_package/buildconflicts/0/name", "bad");
	assert_false(has(j.root, "source_package/buildconflicts/0", "op"));
	jt_release(&j);
}

KILN_TEST(json_packages)
{
	struct jt j;

	jt_init(&j, NULL);
	assert_int_equal(size_of(j.root, "packages"), 2);
	expect_str(j.root, "packages/0/name", "t");
	expect_bool(j.root, "packages/0/main", true);
	expect_bool(j.root, "packages/0/built", true);
	expect_str(j.root, "packages/0/arch", "x86_64");
	expect_bool(j.root, "packages/0/autoreq", false);
	expect_bool(j.root, "packages/0/autoprov", true);
	expect_int(j.root, "packages/0/line", 0);
	expect_str(j.root, "packages/0/file_lists/0", "extra.lst");
	expect_str(j.root, "packages/1/name", "t-doc");
	expect_bool(j.root, "packages/1/main", false);
	expect_str(j.root, "packages/1/arch", "noarch");
	expect_int(j.root, "packages/1/line", 23);
	assert_int_equal(size_of(j.root, "packages/1/file_lists"), 0);
	/* Tags: strings, numbers, arrays; I18N strings parallel to the locale table. */
	expect_str(j.root, "packages/0/tags/NAME", "t");
	expect_str(j.root, "packages/0/tags/HEADERI18NTABLE/1", "de");
	expect_str(j.root, "packages/0/tags/SUMMARY/0", "s");
	expect_str(j.root, "packages/0/tags/SUMMARY/1", "z");
	expect_int(j.root, "packages/0/tags/POSTINFLAGS", 1);
	assert_false(has(j.root, "packages/0/tags", "PREINFLAGS"));
	jt_release(&j);
}

KILN_TEST(json_dependencies)
{
	struct jt j;
	json_t *req;
	size_t i;
	bool saw_rich = false, saw_pre = false;

	jt_init(&j, NULL);
	/* Only the kinds present. */
	assert_false(has(j.root, "packages/0/dependencies", "conflicts"));
	req = at(j.root, "packages/0/dependencies/requires");
	for (i = 0; i < json_array_size(req); i++) {
		json_t *d = json_array_get(req, i);
		const char *name = json_string_value(json_object_get(d, "name"));

		if (!strcmp(name, "(a or b)")) {
			saw_rich = json_is_true(json_object_get(d, "rich"));
			assert_null(json_object_get(d, "qualifiers"));
		}
		if (!strcmp(name, "r")) {
			json_t *q = json_object_get(d, "qualifiers");

			saw_pre = json_array_size(q) == 1 &&
			          !strcmp(json_string_value(json_array_get(q, 0)), "pre");
			assert_int_equal(json_integer_value(json_object_get(d, "flags")), 512);
		}
		if (!strcmp(name, "/sbin/ldconfig")) {
			json_t *q = json_object_get(d, "qualifiers");

			assert_string_equal(json_string_value(json_array_get(q, 0)), "post");
			assert_string_equal(json_string_value(json_array_get(q, 1)), "interp");
		}
	}
	assert_true(saw_rich);
	assert_true(saw_pre);
	expect_str(j.root, "packages/0/dependencies/provides/0/name", "p");
	expect_str(j.root, "packages/0/dependencies/provides/0/op", "=");
	expect_str(j.root, "packages/0/dependencies/obsoletes/0/op", "<");
	expect_str(j.root, "packages/0/dependencies/obsoletes/0/evr", "2");
	jt_release(&j);
}

KILN_TEST(json_scripts)
{
	struct jt j;

	jt_init(&j, NULL);
	assert_int_equal(size_of(j.root, "packages/0/scripts"), 4);
	expect_str(j.root, "packages/0/scripts/0/kind", "pre");
	expect_str(j.root, "packages/0/scripts/0/body", "echo pre");
	assert_false(has(j.root, "packages/0/scripts/0", "interpreter"));
	assert_false(has(j.root, "packages/0/scripts/0", "expand"));
	expect_int(j.root, "packages/0/scripts/0/line", 28);
	expect_str(j.root, "packages/0/scripts/1/kind", "post");
	expect_str(j.root, "packages/0/scripts/1/interpreter/0", "/sbin/ldconfig");
	expect_bool(j.root, "packages/0/scripts/1/expand", true);
	expect_str(j.root, "packages/0/scripts/2/kind", "triggerin");
	expect_str(j.root, "packages/0/scripts/2/conditions/0/name", "x");
	expect_str(j.root, "packages/0/scripts/2/conditions/0/op", ">");
	assert_false(has(j.root, "packages/0/scripts/2", "priority"));
	expect_str(j.root, "packages/0/scripts/3/kind", "filetriggerin");
	expect_int(j.root, "packages/0/scripts/3/priority", 5);
	expect_str(j.root, "packages/0/scripts/3/conditions/0/name", "/usr/lib");
	jt_release(&j);
}

KILN_TEST(json_files)
{
	struct jt j;

	jt_init(&j, NULL);
	assert_int_equal(size_of(j.root, "packages/0/files"), 5);
	expect_str(j.root, "packages/0/files/0/paths/0", "/etc/t.conf");
	expect_str(j.root, "packages/0/files/0/flags/0", "config");
	expect_str(j.root, "packages/0/files/0/flags/1", "noreplace");
	expect_str(j.root, "packages/0/files/0/attr/mode", "0640");
	expect_str(j.root, "packages/0/files/0/attr/user", "root");
	assert_false(has(j.root, "packages/0/files/0/attr", "group"));
	assert_true(json_is_null(at(j.root, "packages/0/files/0/defattr")));
	assert_false(has(j.root, "packages/0/files/0", "verify"));
	expect_int(j.root, "packages/0/files/0/line", 38);
	/* After %defattr. */
	expect_str(j.root, "packages/0/files/1/defattr/mode", "0644");
	expect_str(j.root, "packages/0/files/1/defattr/dirmode", "0755");
	assert_int_equal(size_of(j.root, "packages/0/files/1/verify"), 8);
	expect_str(j.root, "packages/0/files/1/verify/0", "size");
	expect_str(j.root, "packages/0/files/1/lang", "de");
	expect_str(j.root, "packages/0/files/2/flags/0", "ghost");
	expect_str(j.root, "packages/0/files/2/dev/type", "c");
	expect_int(j.root, "packages/0/files/2/dev/major", 1);
	expect_int(j.root, "packages/0/files/2/dev/minor", 3);
	expect_str(j.root, "packages/0/files/3/flags/0", "doc");
	expect_str(j.root, "packages/0/files/3/flags/1", "special");
	/* A line rpm would refuse when packaging says why. */
	expect_str(j.root, "packages/0/files/4/error", "File must begin with \"/\": bad");
	expect_str(j.root, "packages/1/files/0/flags/0", "license");
	jt_release(&j);
}

KILN_TEST(json_sections_and_changelog)
{
	struct jt j;

	jt_init(&j, NULL);
	/* BuildSystem's build with the -a fragment after it. */
	expect_str(j.root, "sections/build", "make \necho after\n");
	expect_str(j.root, "sections/install", "make install DESTDIR=y\n");
	assert_false(has(j.root, "sections", "prep"));
	expect_int(j.root, "changelog/0/time", 1704110400);
	expect_str(j.root, "changelog/0/name", "A <a@b> - 1.0-2");
	expect_str(j.root, "changelog/0/text", "- x");
	jt_release(&j);
}

KILN_TEST(json_text_that_is_not_utf8)
{
	struct jt j;

	/* rpm takes any bytes; JSON gets U+FFFD for those that are no UTF-8, and keeps the
	 * UTF-8 it is given. */
	jt_init(&j, "Name: t\nVersion: 1\nRelease: 1\nSummary: caf\xe9 \xc3\xa9\xe2\x82\xac\n"
	            "License: MIT\n%description\n\xff\xfe ok \xed\xa0\x80 \xf4\x90\x80\x80\n"
	            "%files\n/caf\xc3\n");
	expect_str(j.root, "packages/0/tags/SUMMARY/0", "caf\xef\xbf\xbd \xc3\xa9\xe2\x82\xac");
	/* Surrogates and code points above U+10FFFF are no UTF-8 either. */
	expect_str(j.root, "packages/0/tags/DESCRIPTION/0",
	           "\xef\xbf\xbd\xef\xbf\xbd ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
	           "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	expect_str(j.root, "packages/0/files/0/paths/0", "/caf\xef\xbf\xbd");
	jt_release(&j);
}

KILN_TEST(json_binary_tags_are_hex)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char path[512], def[600];
	struct jt j;

	snprintf(path, sizeof(path), "%s/i.gif", dir);
	assert_ok(util_write_atomic(path, "GIF89a\x01\xff", 8, 0644, &err), &err);
	snprintf(def, sizeof(def), "%s", dir);
	memset(&j, 0, sizeof(j));
	pt_init(&j.t);
	snprintf(def, sizeof(def), "_sourcedir %s", dir);
	pt_define(&j.t, def);
	pt_ok(&j.t, PT_HEAD "Icon: i.gif\n%description\nd\n");
	{
		struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
		json_error_t jerr;

		assert_ok(spec_json_write(j.t.spec, &out, &err), &err);
		j.text = kiln_buf_take(&out, NULL);
		j.root = json_loads(j.text, 0, &jerr);
		assert_non_null(j.root);
	}
	expect_str(j.root, "packages/0/tags/GIF",
	           "474946383961"
	           "01ff");
	jt_release(&j);
}

KILN_TEST(json_is_deterministic)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct jt j;

	jt_init(&j, NULL);
	assert_ok(spec_json_write(j.t.spec, &a, &err), &err);
	assert_ok(spec_json_write(j.t.spec, &b, &err), &err);
	assert_string_equal(a.ptr, b.ptr);
	assert_string_equal(a.ptr, j.text);
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	jt_release(&j);
}

KILN_TEST(json_output_limit)
{
	struct kiln_buf small = KILN_BUF_INIT(256);
	struct kiln_err err = KILN_ERR_INIT;
	struct jt j;

	jt_init(&j, NULL);
	/* The buffer's limit is a normal error. */
	assert_int_equal(spec_json_write(j.t.spec, &small, &err), KILN_ELIMIT);
	kiln_buf_release(&small);
	jt_release(&j);
}
