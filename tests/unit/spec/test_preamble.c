/*
 * test_preamble.c - spec/preamble.c: every tag, its validation and its macros, sources and
 * patches. Expected values and messages come from Debian's rpmspec 4.18 unless a comment
 * cites a later rpm.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* A preamble line after the required tags; fails with msg on line 6. */
static void expect_tag_error(const char *line, kiln_rc code, const char *msg)
{
	char text[1024];

	snprintf(text, sizeof(text), PT_HEAD "%s\n%%description\nd\n", line);
	pt_expect_fail(text, code, 6, msg);
}

KILN_TEST(preamble_unknown_empty_and_malformed_tags)
{
	expect_tag_error("Foo: bar", KILN_ESYNTAX, "Unknown tag: Foo: bar");
	expect_tag_error("URL", KILN_ESYNTAX, "Unknown tag: URL");
	expect_tag_error("URL:", KILN_ESYNTAX, "Empty tag: URL:");
	expect_tag_error("URL:   ", KILN_ESYNTAX, "Empty tag: URL:");
	/* Source and Patch need no ':' right after the name, so they are malformed instead. */
	expect_tag_error("Source a", KILN_ESYNTAX, "Malformed tag: Source a");
	expect_tag_error("Patch", KILN_ESYNTAX, "Malformed tag: Patch");
	/* Qualifiers in parentheses are only for dependency tags. */
	expect_tag_error("Provides(pre): a", KILN_ESYNTAX, "Unknown tag: Provides(pre): a");
	expect_tag_error("Requires(pre, post): a", KILN_ESYNTAX,
	                 "Unknown tag: Requires(pre, post): a");
}

KILN_TEST(preamble_tags_are_case_insensitive_and_may_be_indented)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* rpm 4.20 skips blanks before a tag (4.18 called "  requires:" an unknown tag). */
	s = pt_ok(&t, PT_HEAD "uRl: http://x\n  requires: a\n%description\nd\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_URL), "http://x");
	assert_int_equal(s->packages[0]->deps[SPEC_DEPS_REQUIRES].n, 1);
	pt_release(&t);
}

KILN_TEST(preamble_name_version_release_epoch)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, "Name: my_pkg+x.1\nVersion: 1.0~rc1^g2\nRelease: 3.fc40_1+x\nEpoch: 7\n"
	              "Summary: s\nLicense: MIT\n%description\nd\n");
	assert_string_equal(s->packages[0]->name, "my_pkg+x.1");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_VERSION), "1.0~rc1^g2");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_RELEASE), "3.fc40_1+x");
	assert_int_equal(pt_tag_u32(s->packages[0]->tags, RPMTAG_EPOCH, 0), 7);
	/* Unexpanded macros are allowed with a warning. */
	s = pt_ok(&t, "Name: t\nVersion: %{undef}\nRelease: 1\nSummary: s\nLicense: MIT\n"
	              "%description\nd\n");
	pt_assert_log(&t, "warning: line 2: Possible unexpanded macro in: Version: %{undef}\n");
	pt_release(&t);
}

KILN_TEST(preamble_name_version_release_epoch_errors)
{
	pt_expect_fail("Name: a b\n", KILN_ESYNTAX, 1, "Tag takes single token only: Name: a b");
	pt_expect_fail("Name: a..b\n", KILN_ESYNTAX, 1, "Illegal sequence \"..\" in: Name: a..b");
	pt_expect_fail("Name: -a\n", KILN_ESYNTAX, 1, "Illegal char '-' (0x2d) in: Name: -a");
	pt_expect_fail("Name: a/b\n", KILN_ESYNTAX, 1, "Illegal char '/' (0x2f) in: Name: a/b");
	pt_expect_fail("Name: t\nVersion: 1-2\n", KILN_ESYNTAX, 2,
	               "Illegal char '-' (0x2d) in: Version: 1-2");
	pt_expect_fail("Name: t\nVersion: 1\nRelease: 1..2\n", KILN_ESYNTAX, 3,
	               "Illegal sequence \"..\" in: Release: 1..2");
	/* rpm 4.18 shows the last byte of a UTF-8 sequence, sign-extended. */
	pt_expect_fail("Name: t\nVersion: \xc3\xa9\n", KILN_ESYNTAX, 2,
	               "Illegal char '?' (0xffffffa9) in: Version: \xc3\xa9");
	expect_tag_error("Epoch: x", KILN_ESYNTAX,
	                 "Epoch field must be an unsigned number: Epoch: x");
	expect_tag_error("Epoch: -1", KILN_ESYNTAX,
	                 "Epoch field must be an unsigned number: Epoch: -1");
	expect_tag_error("Epoch: 4294967296", KILN_ESYNTAX,
	                 "Epoch field must be an unsigned number: Epoch: 4294967296");
	expect_tag_error("Epoch: 1 2", KILN_ESYNTAX, "Tag takes single token only: Epoch: 1 2");
}

KILN_TEST(preamble_char_check_names_the_last_bad_character)
{
	struct pt t;

	/* rpm 4.18's rpmCharCheck keeps the message of the last bad character. */
	pt_expect_fail("Name: a/b@c\n", KILN_ESYNTAX, 1, "Illegal char '@' (0x40) in: Name: a/b@c");
	pt_expect_fail("Name: t\nVersion: 1..2@\n", KILN_ESYNTAX, 2,
	               "Illegal char '@' (0x40) in: Version: 1..2@");
	pt_expect_fail("Name: t\nVersion: 1\001x\n", KILN_ESYNTAX, 2,
	               "Illegal char '?' (0x1) in: Version: 1\001x");
	/* Any of % { } may be a macro left unexpanded. */
	pt_init(&t);
	pt_ok(&t, "Name: a}\nVersion: 1{\nRelease: 1\nSummary: s\nLicense: MIT\n%description\nd\n"
	          "%package -n x}y\nSummary: s\n%description -n x}y\nd\n");
	assert_string_equal(t.log,
	                    "warning: line 1: Possible unexpanded macro in: Name: a}\n"
	                    "warning: line 2: Possible unexpanded macro in: Version: 1{\n"
	                    "warning: line 8: Possible unexpanded macro in: %package -n x}y\n");
	pt_release(&t);
}

KILN_TEST(preamble_required_and_duplicate_tags)
{
	pt_expect_fail("Name: t\nVersion: 1\nRelease: 1\nLicense: MIT\n%description\nd\n",
	               KILN_ESYNTAX, 5, "Summary field must be present in package: (main package)");
	pt_expect_fail("Version: 1\nRelease: 1\nSummary: s\nLicense: MIT\n%description\nd\n",
	               KILN_ESYNTAX, 5, "Name field must be present in package: (main package)");
	pt_expect_fail(PT_MAIN "%package sub\nLicense: x\n%description sub\nd\n", KILN_ESYNTAX, 10,
	               "Summary field must be present in package: t-sub");
	pt_expect_fail("Name: t\nName: u\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
	               "%description\nd\n",
	               KILN_ESYNTAX, 7, "Duplicate Name entries in package: (main package)");
	pt_expect_fail(PT_MAIN "%package sub\nSummary: x\nURL: a\nURL: b\n%description sub\nd\n",
	               KILN_ESYNTAX, 12, "Duplicate Url entries in package: t-sub");
	/* rpm reports every duplicate in tag order; kiln's one message is rpm's first. */
	pt_expect_fail(PT_HEAD "License: A\nVendor: v\nVendor: w\n%description\nd\n", KILN_ESYNTAX,
	               9, "Duplicate Vendor entries in package: (main package)");
}

KILN_TEST(preamble_text_tags_warn_when_repeated)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Summary(de): Z\nGroup: A\nGroup: B\n%description\nd\n");
	pt_assert_log(&t, "warning: line 8: second Group\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_GROUP), "B");
	/* A second License warns and then is a duplicate. */
	pt_fail(&t, PT_HEAD "License: B\n%description\nd\n", KILN_ESYNTAX, 7,
	        "Duplicate License entries in package: (main package)");
	pt_assert_log(&t, "warning: line 6: second License\n");
	pt_release(&t);
}

KILN_TEST(preamble_single_token_tags)
{
	struct pt t;
	struct spec *s;
	const struct rpmtag_set *ts;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "URL: u\nVCS: git:x\nBugURL: b\nDistTag: dt\nModularityLabel: m\n"
	                      "TranslationURL: tr u\nUpstreamReleases: up r\nPackager: P Q\n"
	                      "Distribution: D E\nVendor: V W\nGroup: G H\n%description\nd\n");
	ts = s->packages[0]->tags;
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_URL), "u");
	assert_string_equal(rpmtag_set_get_str(ts, 5034), "git:x");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_BUGURL), "b");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_DISTTAG), "dt");
	assert_string_equal(rpmtag_set_get_str(ts, 5096), "m");
	assert_string_equal(rpmtag_set_get_str(ts, 5100), "tr u");
	assert_string_equal(rpmtag_set_get_str(ts, 5101), "up r");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_PACKAGER), "P Q");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_DISTRIBUTION), "D E");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_VENDOR), "V W");
	assert_string_equal(rpmtag_set_get_str(ts, RPMTAG_GROUP), "G H");
	pt_release(&t);
	expect_tag_error("URL: a b", KILN_ESYNTAX, "Tag takes single token only: URL: a b");
	expect_tag_error("VCS: a b", KILN_ESYNTAX, "Tag takes single token only: VCS: a b");
	expect_tag_error("BugURL: a b", KILN_ESYNTAX, "Tag takes single token only: BugURL: a b");
	expect_tag_error("DistTag: a b", KILN_ESYNTAX, "Tag takes single token only: DistTag: a b");
	expect_tag_error("ModularityLabel: a b", KILN_ESYNTAX,
	                 "Tag takes single token only: ModularityLabel: a b");
	expect_tag_error("DocDir: /a b", KILN_ESYNTAX, "Tag takes single token only: DocDir: /a b");
	expect_tag_error("BuildSystem: a b", KILN_ESYNTAX,
	                 "Tag takes single token only: BuildSystem: a b");
	expect_tag_error("Icon: a b", KILN_ESYNTAX, "Tag takes single token only: Icon: a b");
}

KILN_TEST(preamble_tag_macros)
{
	struct pt t;

	pt_init(&t);
	/* Each tag defines %tag; in the main package also %TAG. Subpackage tags redefine
	 * only the lower-case ones. */
	pt_ok(&t,
	      PT_HEAD "Summary(de): x\nURL: u\nPackager: P\nVCS: git:x\nBugURL: b\n"
	              "DistTag: dt\nModularityLabel: m\nTranslationURL: tr\nUpstreamReleases: "
	              "up\nDistribution: D\nVendor: V\nGroup: G\nEpoch: 3\nPrefix: /usr\n"
	              "%description\nd\n%package sub\nSummary: y\nURL: u2\n%description sub\nd\n"
	              "%build\necho %{name} %{NAME} %{summary} %{SUMMARY} %{url} %{URL} "
	              "%{version} %{epoch} %{license} %{packager} %{vcs} %{bugurl} %{disttag} "
	              "%{modularitylabel} %{translationurl} %{upstreamreleases} %{distribution} "
	              "%{vendor} %{group} %{prefix} %{PREFIX} %{?buildsystem}.\n");
	assert_string_equal(t.spec->sections[SPEC_SEC_BUILD],
	                    "echo t t y x u2 u 1 3 MIT P git:x b dt m tr up D V G /usr /usr .\n");
	pt_release(&t);
}

KILN_TEST(preamble_defaults_from_macros)
{
	struct pt t;
	struct spec *s;
	size_t i;

	pt_init(&t);
	pt_define(&t, "vendor MyV");
	pt_define(&t, "packager Pk");
	pt_define(&t, "distribution Ds");
	pt_define(&t, "bugurl http://bugs");
	pt_define(&t, "disttag .x");
	s = pt_ok(&t, PT_MAIN "%package sub\nSummary: x\nVendor: own\n%description sub\nd\n");
	/* The main package takes them (and Group "Unspecified") at the end of its preamble;
	 * subpackages inherit what they do not set. */
	for (i = 0; i < 2; i++) {
		const struct spec_package *pkg = s->packages[i];

		assert_string_equal(pt_tag_str(pkg, RPMTAG_PACKAGER), "Pk");
		assert_string_equal(pt_tag_str(pkg, RPMTAG_DISTRIBUTION), "Ds");
		assert_string_equal(pt_tag_str(pkg, RPMTAG_BUGURL), "http://bugs");
		assert_string_equal(pt_tag_str(pkg, RPMTAG_DISTTAG), ".x");
		assert_string_equal(pt_tag_str(pkg, RPMTAG_GROUP), "Unspecified");
	}
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_VENDOR), "MyV");
	assert_string_equal(pt_tag_str(s->packages[1], RPMTAG_VENDOR), "own");
	assert_null(pt_tag_str(s->packages[0], RPMTAG_URL));
	pt_release(&t);
}

KILN_TEST(preamble_sources_and_patches)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Source5: a.tgz\nSource2: b\nSource: http://x/y/c.tar.gz\n"
	                      "Source: http://x/dl.php?file=e.tgz\nSource9: http://x/y#/f.tgz\n"
	                      "Patch: p0.patch\nPatch3 : p3\nPatch: p4\nSource 7 x: g\n"
	                      "%description\nd\n%build\n%{SOURCE6} %{SOURCEURL6} %{PATCH4} "
	                      "%{PATCHURL3} %{S:7}\n");
	assert_int_equal(s->nsources, 9);
	/* Unnumbered entries continue after the highest number so far. */
	assert_int_equal(s->sources[0].num, 5);
	assert_int_equal(s->sources[1].num, 2);
	assert_int_equal(s->sources[2].num, 6);
	assert_string_equal(s->sources[2].url, "http://x/y/c.tar.gz");
	assert_string_equal(s->sources[2].file, "c.tar.gz");
	assert_string_equal(s->sources[2].path, "/builddir/build/SOURCES/c.tar.gz");
	assert_false(s->sources[2].is_patch);
	/* The file name is what follows the last '=' after the last '/'. */
	assert_int_equal(s->sources[3].num, 7);
	assert_string_equal(s->sources[3].file, "e.tgz");
	assert_string_equal(s->sources[4].file, "f.tgz");
	assert_true(s->sources[5].is_patch);
	assert_int_equal(s->sources[5].num, 0);
	/* "Patch3 :" is patch 3; the number ends at a blank or ':'. */
	assert_int_equal(s->sources[6].num, 3);
	assert_int_equal(s->sources[7].num, 4);
	/* "Source 7 x: g": no number (it would have to touch the name), so the next one. */
	assert_int_equal(s->sources[8].num, 10);
	assert_string_equal(s->sections[SPEC_SEC_BUILD],
	                    "/builddir/build/SOURCES/c.tar.gz http://x/y/c.tar.gz "
	                    "/builddir/build/SOURCES/p4 p3 /builddir/build/SOURCES/e.tgz\n");
	/* The source package lists them newest first. */
	assert_int_equal(pt_tag_count(s->srctags, RPMTAG_SOURCE), 6);
	assert_string_equal(pt_tag_stri(s->srctags, RPMTAG_SOURCE, 0), "g");
	assert_string_equal(pt_tag_stri(s->srctags, RPMTAG_SOURCE, 5), "a.tgz");
	assert_string_equal(pt_tag_stri(s->srctags, RPMTAG_PATCH, 0), "p4");
	/* Names with blanks are fine. */
	s = pt_ok(&t, PT_HEAD "Source: a b c\n%description\nd\n");
	assert_string_equal(s->sources[0].file, "a b c");
	pt_release(&t);
}

KILN_TEST(preamble_source_errors)
{
	expect_tag_error("Sourcex: a", KILN_ESYNTAX, "Bad source number: Sourcex: a");
	expect_tag_error("Patch3x: a", KILN_ESYNTAX, "Bad patch number: Patch3x: a");
	expect_tag_error("Source99999999999: a", KILN_ESYNTAX,
	                 "Bad source number: Source99999999999: a");
	pt_expect_fail(PT_HEAD "Source: a\nSource0: b\n%description\nd\n", KILN_ESYNTAX, 7,
	               "source 0 defined multiple times");
	pt_expect_fail(PT_HEAD "Patch1: a\nPatch1: b\n%description\nd\n", KILN_ESYNTAX, 7,
	               "patch 1 defined multiple times");
}

KILN_TEST(preamble_nosource)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Source: a\nSource1: b\nPatch: p\nNoSource: 1\nNoPatch: ,0\n"
	                      "%description\nd\n");
	assert_false(s->sources[0].nosource);
	assert_true(s->sources[1].nosource);
	assert_true(s->sources[2].nosource);
	assert_int_equal(pt_tag_u32(s->srctags, 1051, 0), 1);
	assert_int_equal(pt_tag_u32(s->srctags, 1052, 0), 0);
	pt_release(&t);
	/* rpm reads the rest of the value as one number, so a list is a bad number. */
	pt_expect_fail(PT_HEAD "Source: a\nNoSource: 0, 1\n%description\nd\n", KILN_ESYNTAX, 7,
	               "Bad number: 0, 1");
	pt_expect_fail(PT_HEAD "Source: a\nNoSource: x\n%description\nd\n", KILN_ESYNTAX, 7,
	               "Bad number: x");
	pt_expect_fail(PT_HEAD "Source: a\nNoSource: 7\n%description\nd\n", KILN_ESYNTAX, 7,
	               "Bad nosource number: 7");
	pt_expect_fail(PT_HEAD "Source: a\nNoPatch: 0\n%description\nd\n", KILN_ESYNTAX, 7,
	               "Bad nopatch number: 0");
}

KILN_TEST(preamble_lists)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* popt splitting: blanks separate, a comma stays in its word, lines accumulate. */
	s = pt_ok(&t,
	          PT_HEAD "ExclusiveArch: x86_64 , s390x\nExcludeArch: ppc\nExcludeArch: "
	                  "\"a b\"\nExclusiveOS: linux\nExcludeOS: darwin\nPrefixes: /usr /opt,\n"
	                  "Prefix: /\n%description\nd\n");
	assert_int_equal(s->nexclusivearch, 3);
	assert_string_equal(s->exclusivearch[1], ",");
	assert_int_equal(s->nexcludearch, 2);
	assert_string_equal(s->excludearch[1], "a b");
	assert_string_equal(s->exclusiveos[0], "linux");
	assert_string_equal(s->excludeos[0], "darwin");
	assert_int_equal(pt_tag_count(s->srctags, 1061), 3);
	assert_int_equal(pt_tag_count(s->packages[0]->tags, RPMTAG_PREFIXES), 3);
	assert_string_equal(pt_tag_stri(s->packages[0]->tags, RPMTAG_PREFIXES, 1), "/opt,");
	assert_string_equal(pt_tag_stri(s->packages[0]->tags, RPMTAG_PREFIXES, 2), "/");
	pt_release(&t);
	expect_tag_error("Prefix: /usr/", KILN_ESYNTAX,
	                 "Prefixes must not end with \"/\": Prefix: /usr/");
}

KILN_TEST(preamble_buildroot_docdir_and_autoreqprov)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* BuildRoot is ignored (but may not be empty). */
	s = pt_ok(&t,
	          PT_HEAD "BuildRoot: /x\nBuildRoot: /y\nDocDir: /d\nURL: %{_docdir}\n"
	                  "AutoReqProv: no\n%description\nd\n%package a\nSummary: a\nAutoReq: 0\n"
	                  "%description a\na\n%package b\nSummary: b\nAutoProv: off\nAutoReq: "
	                  "yes\n%description b\nb\n%package c\nSummary: c\nAutoReqProv: False\n"
	                  "%description c\nc\n");
	assert_string_equal(pt_tag_str(s->packages[0], RPMTAG_URL), "/d");
	assert_false(s->packages[0]->autoreq);
	assert_false(s->packages[0]->autoprov);
	assert_false(s->packages[1]->autoreq);
	assert_true(s->packages[1]->autoprov);
	assert_true(s->packages[2]->autoreq);
	assert_false(s->packages[2]->autoprov);
	assert_false(s->packages[3]->autoreq);
	pt_release(&t);
	expect_tag_error("DocDir: share", KILN_ESYNTAX,
	                 "Docdir must begin with '/': DocDir: share");
	expect_tag_error("BuildRoot:", KILN_ESYNTAX, "Empty tag: BuildRoot:");
}

KILN_TEST(preamble_remove_path_postfixes)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "RemovePathPostfixes: .a::.b\nRemovePathPostfixes: .c\n"
	                      "%description\nd\n");
	assert_int_equal(s->packages[0]->nremove_postfixes, 3);
	assert_string_equal(s->packages[0]->remove_postfixes[0], ".a");
	assert_string_equal(s->packages[0]->remove_postfixes[1], ".b");
	assert_string_equal(s->packages[0]->remove_postfixes[2], ".c");
	pt_release(&t);
}

KILN_TEST(preamble_dependency_tags)
{
	struct pt t;
	struct spec *s;
	const struct spec_package *pkg;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Requires: r\nProvides: p\nConflicts: c\nObsoletes: o < 2\n"
	                      "Recommends: rc\nSuggests: sg\nSupplements: sp\nEnhances: en\n"
	                      "OrderWithRequires: ow\nBuildRequires: br\nBuildConflicts: bc\n"
	                      "%description\nd\n");
	pkg = s->packages[0];
	assert_string_equal(pkg->deps[SPEC_DEPS_REQUIRES].v[0].name, "r");
	assert_string_equal(pkg->deps[SPEC_DEPS_CONFLICTS].v[0].name, "c");
	assert_string_equal(pkg->deps[SPEC_DEPS_OBSOLETES].v[0].name, "o");
	assert_string_equal(pkg->deps[SPEC_DEPS_OBSOLETES].v[0].evr, "2");
	assert_string_equal(pkg->deps[SPEC_DEPS_RECOMMENDS].v[0].name, "rc");
	assert_string_equal(pkg->deps[SPEC_DEPS_SUGGESTS].v[0].name, "sg");
	assert_string_equal(pkg->deps[SPEC_DEPS_SUPPLEMENTS].v[0].name, "sp");
	assert_string_equal(pkg->deps[SPEC_DEPS_ENHANCES].v[0].name, "en");
	assert_string_equal(pkg->deps[SPEC_DEPS_ORDER].v[0].name, "ow");
	/* Provides gets the package's own "name = EVR" too. */
	assert_int_equal(pkg->deps[SPEC_DEPS_PROVIDES].n, 3);
	assert_string_equal(s->buildrequires.v[0].name, "br");
	assert_string_equal(s->buildconflicts.v[0].name, "bc");
	assert_int_equal(pkg->deps[SPEC_DEPS_REQUIRES].n, 1);
	pt_release(&t);
}

KILN_TEST(preamble_qualifiers)
{
	struct pt t;
	struct spec *s;
	const struct spec_deps *req;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "Requires(pre,post,preun,postun,pretrans,posttrans,verify,interp,"
	                      "meta,rpmlib): a\nRequires( pre ): b\nRequires(): c\n"
	                      "Requires(preuntrans,postuntrans): d\nOrderWithRequires(post): e\n"
	                      "Recommends(pre): f\n%description\nd\n");
	req = &s->packages[0]->deps[SPEC_DEPS_REQUIRES];
	assert_int_equal(req->n, 4);
	assert_int_equal(req->v[0].flags, RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_POST |
	                                      RPMTAG_DEP_SCRIPT_PREUN | RPMTAG_DEP_SCRIPT_POSTUN |
	                                      RPMTAG_DEP_PRETRANS | RPMTAG_DEP_POSTTRANS |
	                                      RPMTAG_DEP_SCRIPT_VERIFY | RPMTAG_DEP_INTERP |
	                                      RPMTAG_DEP_META | RPMTAG_DEP_RPMLIB);
	assert_int_equal(req->v[1].flags, RPMTAG_DEP_SCRIPT_PRE);
	assert_int_equal(req->v[2].flags, 0);
	assert_int_equal(req->v[3].flags, RPMTAG_DEP_PREUNTRANS | RPMTAG_DEP_POSTUNTRANS);
	assert_int_equal(s->packages[0]->deps[SPEC_DEPS_ORDER].v[0].flags, RPMTAG_DEP_SCRIPT_POST);
	/* rpm 4.20 takes qualifiers on weak dependencies (4.18 called it an unknown tag). */
	assert_int_equal(s->packages[0]->deps[SPEC_DEPS_RECOMMENDS].v[0].flags,
	                 RPMTAG_DEP_SCRIPT_PRE);
	pt_release(&t);
	expect_tag_error("Requires(foo): b", KILN_ESYNTAX,
	                 "Bad Requirename: qualifiers: Requires(foo): b");
	expect_tag_error("Requires(Pre): b", KILN_ESYNTAX,
	                 "Bad Requirename: qualifiers: Requires(Pre): b");
	expect_tag_error("Requires(pre,): b", KILN_ESYNTAX,
	                 "Bad Requirename: qualifiers: Requires(pre,): b");
	expect_tag_error("Requires(,pre): b", KILN_ESYNTAX,
	                 "Bad Requirename: qualifiers: Requires(,pre): b");
	expect_tag_error("Requires(hint): b", KILN_ESYNTAX,
	                 "Bad Requirename: qualifiers: Requires(hint): b");
	/* (4.18: "Unknown tag", weak dependencies had no qualifiers.) */
	expect_tag_error("Suggests(x): b", KILN_ESYNTAX,
	                 "Bad Suggestname: qualifiers: Suggests(x): b");
}

KILN_TEST(preamble_deprecated_prereq)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_HEAD "PreReq: a\nBuildPreReq: b\n%description\nd\n");
	pt_assert_log(&t, "warning: line 6: prereq is deprecated: PreReq: a\n");
	pt_assert_log(&t, "warning: line 7: buildprereq is deprecated: BuildPreReq: b\n");
	assert_int_equal(s->packages[0]->deps[SPEC_DEPS_REQUIRES].v[0].flags,
	                 RPMTAG_DEP_SCRIPT_PRE | RPMTAG_DEP_SCRIPT_PREUN);
	assert_string_equal(s->buildrequires.v[0].name, "b");
	pt_release(&t);
}

KILN_TEST(preamble_obsoletes)
{
	struct pt t;

	pt_init(&t);
	/* One warning per line, about the last item that deserves one. */
	pt_ok(&t, PT_HEAD "Obsoletes: a, b > 1\n%description\nd\n");
	pt_assert_log(&t, "warning: line 6: It's not recommended to use '>' in Obsoletes: "
	                  "Obsoletes: a, b > 1\n");
	assert_null(strstr(t.log, "unversioned"));
	pt_ok(&t, PT_HEAD "Obsoletes: b > 1, a\n%description\nd\n");
	pt_assert_log(&t, "warning: line 6: It's not recommended to have unversioned Obsoletes: "
	                  "Obsoletes: b > 1, a\n");
	pt_ok(&t, PT_HEAD "Obsoletes: b >= 1, c = 2\n%description\nd\n");
	pt_assert_log(&t, "'>' in Obsoletes");
	pt_ok(&t, PT_HEAD "Obsoletes: b < 1\n%description\nd\n");
	assert_string_equal(t.log, "");
	pt_fail(&t, PT_HEAD "Obsoletes: a/b\n%description\nd\n", KILN_ESYNTAX, 6,
	        "Illegal char '/' (0x2f) in: Obsoletes: a/b");
	pt_fail(&t, PT_HEAD "Obsoletes: (a or b)\n%description\nd\n", KILN_ESYNTAX, 6,
	        "No rich dependencies allowed for this type: Obsoletes: (a or b)");
	pt_release(&t);
}

KILN_TEST(preamble_icon)
{
	struct kiln_err err = KILN_ERR_INIT;
	const char *dir = kiln_test_tmpdir();
	char path[512], def[600];
	struct rpmtag_qf_value v;
	struct pt t;
	struct spec *s;

	snprintf(path, sizeof(path), "%s/i.gif", dir);
	assert_ok(util_write_atomic(path, "GIF89a..", 8, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/i.xpm", dir);
	assert_ok(util_write_atomic(path, "/* XPM */", 9, 0644, &err), &err);
	snprintf(path, sizeof(path), "%s/i.png", dir);
	assert_ok(util_write_atomic(path, "PNG", 3, 0644, &err), &err);
	pt_init(&t);
	snprintf(def, sizeof(def), "_sourcedir %s", dir);
	pt_define(&t, def);
	/* The file is read from %_sourcedir at parse time. kiln takes its last path component
	 * (rpm opens "%_sourcedir/http://x/i.gif", and "../x" would leave the directory). */
	s = pt_ok(&t, PT_HEAD "Icon: http://x/i.gif\n%description\nd\n");
	assert_true(rpmtag_set_get(s->packages[0]->tags, 1012, &v));
	assert_int_equal(v.type, RPMTAG_TYPE_BIN);
	assert_int_equal(v.count, 8);
	assert_memory_equal(v.data, "GIF89a..", 8);
	s = pt_ok(&t, PT_HEAD "Icon: i.xpm\n%description\nd\n");
	assert_true(rpmtag_set_get(s->packages[0]->tags, 1013, &v));
	pt_fail(&t, PT_HEAD "Icon: i.png\n%description\nd\n", KILN_ESYNTAX, 6,
	        "Unknown icon type: i.png");
	snprintf(def, sizeof(def), "Unable to open icon %s/none.gif: No such file or directory",
	         dir);
	pt_fail(&t, PT_HEAD "Icon: none.gif\n%description\nd\n", KILN_ENOTFOUND, 6, def);
	pt_release(&t);
}

KILN_TEST(preamble_buildoption)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	/* rpm 4.20: BuildOption without a section is for %conf; in parentheses any build
	 * section. */
	s = pt_ok(&t, PT_HEAD "BuildOption: --a b\nBuildOption(build): -j1\nBuildOption(conf): c\n"
	                      "BuildOption(generate_buildrequires): -g\n%description\nd\n");
	assert_int_equal(s->buildopts[SPEC_SEC_CONF].n, 2);
	assert_string_equal(s->buildopts[SPEC_SEC_CONF].v[0], "--a b");
	assert_string_equal(s->buildopts[SPEC_SEC_CONF].v[1], "c");
	assert_string_equal(s->buildopts[SPEC_SEC_BUILD].v[0], "-j1");
	assert_string_equal(s->buildopts[SPEC_SEC_BUILDREQUIRES].v[0], "-g");
	assert_int_equal(s->buildopts[SPEC_SEC_INSTALL].n, 0);
	pt_release(&t);
	expect_tag_error("BuildOption(files): x", KILN_ESYNTAX,
	                 "Unknown section files: BuildOption(files): x");
}
