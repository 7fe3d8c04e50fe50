/*
 * test_files.c - spec/files.c: %files headers and manifest lines parsed into entries, and
 * %files -f lists added with spec_files_add_text() (the section's %defattr in force, errors
 * naming the list's line).
 *
 * rpm checks a manifest only when it packages, so the expected values come from Debian's
 * rpmbuild 4.18 (-bb of a spec with these lines, then rpm -qp --qf '[%{FILEMODES:octal}
 * %{FILEUSERNAME} %{FILEFLAGS} %{FILEVERIFYFLAGS:hex} %{FILELANGS} %{FILERDEVS}]') and its
 * messages; kiln keeps a line's first message as the entry's error for the build to
 * report. Header errors are rpmspec -P's.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* Parse a %files section of the main package holding lines. */
static const struct spec_package *files_of(struct pt *t, const char *lines)
{
	char text[4096];

	snprintf(text, sizeof(text), "%s%%files\n%s\n", PT_MAIN, lines);
	pt_ok(t, text);
	assert_true(t->spec->packages[0]->has_files);
	return t->spec->packages[0];
}

/* The only entry of a one-line manifest. */
static const struct spec_files_entry *entry_of(struct pt *t, const char *line)
{
	const struct spec_package *pkg = files_of(t, line);

	if (pkg->nfiles != 1)
		print_error("%s: %zu entries\n", line, pkg->nfiles);
	assert_int_equal(pkg->nfiles, 1);
	return &pkg->files[0];
}

/* The line's entry has the error msg. */
static void expect_entry_error(const char *line, const char *msg)
{
	const struct spec_files_entry *e;
	struct pt t;

	pt_init(&t);
	e = entry_of(&t, line);
	if (!e->error || strcmp(e->error, msg))
		print_error("%s\ngot:  %s\nwant: %s\n", line, e->error ? e->error : "(none)", msg);
	assert_non_null(e->error);
	assert_string_equal(e->error, msg);
	assert_int_equal(e->line, 9);
	pt_release(&t);
}

static void expect_attr(const struct spec_attr *a, unsigned set, uint32_t mode, const char *user,
                        const char *group, uint32_t dirmode)
{
	assert_int_equal(a->set, set);
	if (set & SPEC_ATTR_MODE)
		assert_int_equal(a->mode, mode);
	if (set & SPEC_ATTR_USER)
		assert_string_equal(a->user, user);
	if (set & SPEC_ATTR_GROUP)
		assert_string_equal(a->group, group);
	if (set & SPEC_ATTR_DIRMODE)
		assert_int_equal(a->dirmode, dirmode);
}

#define ALL_ATTR (SPEC_ATTR_MODE | SPEC_ATTR_USER | SPEC_ATTR_GROUP)

/* ---------------------------------------------------------------------------------------- */
/* Names. */

KILN_TEST(files_names)
{
	const struct spec_package *pkg;
	struct pt t;

	pt_init(&t);
	pkg = files_of(&t, "/a\n  /usr/bin/*  \n\"/d 1\"\n/x\\*y\n\n# comment\n/b");
	assert_int_equal(pkg->nfiles, 5);
	assert_string_equal(pkg->files[0].paths[0], "/a");
	assert_int_equal(pkg->files[0].line, 9);
	assert_null(pkg->files[0].error);
	assert_int_equal(pkg->files[0].verifyflags, (uint32_t)RPMTAG_VERIFY_ALL);
	assert_int_equal(pkg->files[0].attr.set, 0);
	assert_string_equal(pkg->files[1].paths[0], "/usr/bin/*");
	/* Quotes group and go; a backslash makes the next character literal, which the glob
	 * form keeps escaped. */
	assert_string_equal(pkg->files[2].paths[0], "/d 1");
	assert_string_equal(pkg->files[2].globs[0], "/d 1");
	assert_string_equal(pkg->files[3].paths[0], "/x*y");
	assert_string_equal(pkg->files[3].globs[0], "/x\\*y");
	assert_string_equal(pkg->files[4].paths[0], "/b");
	assert_int_equal(pkg->files[4].line, 15);
	pt_release(&t);
}

KILN_TEST(files_name_errors)
{
	expect_entry_error("a", "File must begin with \"/\": a");
	/* A backslash does not protect a blank from the tokenizer. */
	expect_entry_error("/d\\ 1", "File must begin with \"/\": 1");
	/* A virtual attribute counts from where it stands. */
	expect_entry_error("a %doc", "File must begin with \"/\": a");
	expect_entry_error("/a \"/b\" /c", "More than one file on a line: /b");
	expect_entry_error("/a%attr(0600,root,root) /b", "More than one file on a line: /b");
	/* Only the first %attr of a line is one; the second is a word. */
	expect_entry_error("%attr(0600,root,root) %attr(0700,root,root) /a",
	                   "File must begin with \"/\": %attr(0700,root,root)");
}

KILN_TEST(files_virtual_attributes)
{
	static const struct {
		const char *line;
		uint32_t fileflags; /* rpmbuild's FILEFLAGS */
		unsigned flags;
	} cases[] = {
	    {"%doc /a", RPMTAG_FILE_DOC, 0},
	    {"%license /a", RPMTAG_FILE_LICENSE, 0},
	    {"%readme /a", RPMTAG_FILE_README, 0},
	    {"%ghost /x", RPMTAG_FILE_GHOST, 0},
	    {"%missingok /a", RPMTAG_FILE_MISSINGOK, 0},
	    {"%artifact /a", RPMTAG_FILE_ARTIFACT, 0},
	    {"%pubkey /a", RPMTAG_FILE_PUBKEY, 0},
	    {"%dir /d", 0, SPEC_ENTRY_DIR},
	    {"%docdir /d", 0, SPEC_ENTRY_DOCDIR},
	    {"%exclude /b", 0, SPEC_ENTRY_EXCLUDE},
	    {"%config /a", RPMTAG_FILE_CONFIG, 0},
	    {"/a %ghost %config(noreplace)",
	     RPMTAG_FILE_GHOST | RPMTAG_FILE_CONFIG | RPMTAG_FILE_NOREPLACE, 0},
	};
	struct pt t;
	size_t i;

	pt_init(&t);
	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++) {
		const struct spec_files_entry *e = entry_of(&t, cases[i].line);

		assert_int_equal(e->fileflags, cases[i].fileflags);
		assert_int_equal(e->flags, cases[i].flags);
		assert_int_equal(e->npaths, 1);
		assert_null(e->error);
	}
	/* A line of attributes alone is an entry without names. */
	assert_int_equal(entry_of(&t, "%dir")->npaths, 0);
	pt_release(&t);
}

KILN_TEST(files_special_doc_and_license)
{
	const struct spec_files_entry *e;
	struct pt t;

	pt_init(&t);
	/* Relative %doc/%license names come from the build directory, several a line. */
	e = entry_of(&t, "%doc README NEWS");
	assert_int_equal(e->npaths, 2);
	assert_true(e->flags & SPEC_ENTRY_SPECIAL);
	assert_null(e->error);
	e = entry_of(&t, "%license COPYING");
	assert_true(e->flags & SPEC_ENTRY_SPECIAL);
	e = entry_of(&t, "%doc /usr/share/doc/x");
	assert_false(e->flags & SPEC_ENTRY_SPECIAL);
	pt_release(&t);
	expect_entry_error("%doc a /b", "Can't mix special %doc with other forms: /b");
	expect_entry_error("%doc %config a", "Can't mix special %doc with other forms: a");
	expect_entry_error("%license %doc a", "Can't mix special %doc with other forms: a");
	expect_entry_error("%license %dir a", "Can't mix special %license with other forms: a");
	expect_entry_error("%doc /a /b", "More than one file on a line: /b");
}

/* ---------------------------------------------------------------------------------------- */
/* %attr and %defattr. */

KILN_TEST(files_attr)
{
	const struct spec_package *pkg;
	struct pt t;

	pt_init(&t);
	/* Blanks and commas both separate, empty fields vanish, "-" keeps the default. */
	pkg = files_of(&t, "%attr(640 bin bin) /a\n%attr(0600,,daemon,,daemon) /b\n"
	                   "%attr(0644 , root , root) /c\n%attr(-,-,-) /d\n"
	                   "%attr(755,-,wheel) /e\n%attr (0644,root,root) /f\n"
	                   "%attr(644x,root,root) /g");
	expect_attr(&pkg->files[0].attr, ALL_ATTR, 0640, "bin", "bin", 0);
	expect_attr(&pkg->files[1].attr, ALL_ATTR, 0600, "daemon", "daemon", 0);
	expect_attr(&pkg->files[2].attr, ALL_ATTR, 0644, "root", "root", 0);
	expect_attr(&pkg->files[3].attr, 0, 0, NULL, NULL, 0);
	expect_attr(&pkg->files[4].attr, SPEC_ATTR_MODE | SPEC_ATTR_GROUP, 0755, NULL, "wheel", 0);
	/* Blanks may come before "(". */
	expect_attr(&pkg->files[5].attr, ALL_ATTR, 0644, "root", "root", 0);
	/* rpm reads the mode with sscanf("%o"): what follows the digits does not matter. */
	expect_attr(&pkg->files[6].attr, ALL_ATTR, 0644, "root", "root", 0);
	assert_null(pkg->files[6].error);
	pt_release(&t);
}

KILN_TEST(files_defattr)
{
	const struct spec_package *pkg;
	struct pt t;

	pt_init(&t);
	pkg = files_of(&t, "/a\n%defattr(0600,root,root,0700)\n/b\n%attr(0644,bin,bin) /c\n"
	                   "%defattr(-,root,root,-)\n/d\n/e %defattr(0640,x,y)\n");
	/* A %defattr line makes no entry; it changes those after it. */
	assert_int_equal(pkg->nfiles, 5);
	expect_attr(&pkg->files[0].defattr, 0, 0, NULL, NULL, 0);
	expect_attr(&pkg->files[1].defattr, ALL_ATTR | SPEC_ATTR_DIRMODE, 0600, "root", "root",
	            0700);
	expect_attr(&pkg->files[2].defattr, ALL_ATTR | SPEC_ATTR_DIRMODE, 0600, "root", "root",
	            0700);
	expect_attr(&pkg->files[2].attr, ALL_ATTR, 0644, "bin", "bin", 0);
	expect_attr(&pkg->files[3].defattr, SPEC_ATTR_USER | SPEC_ATTR_GROUP, 0, "root", "root", 0);
	/* Names before a %defattr are fine, and get it. */
	assert_null(pkg->files[4].error);
	expect_attr(&pkg->files[4].defattr, ALL_ATTR, 0640, "x", "y", 0);
	pt_release(&t);
}

KILN_TEST(files_attr_errors)
{
	expect_entry_error("%attr(x,root,root) /a", "Bad mode spec: %attr(x,root,root)");
	expect_entry_error("%attr(0644,root) /a", "Bad syntax: %attr(0644,root)");
	expect_entry_error("%attr(0644,root,root,0755) /a",
	                   "Bad syntax: %attr(0644,root,root,0755)");
	expect_entry_error("%attr /a", "Missing '(' in %attr /a");
	expect_entry_error("%attr(0644,root,root /a", "Missing ')' in %attr(0644,root,root /a");
	expect_entry_error("%defattr(0644,root,root) /a", "Non-white space follows %defattr(): /a");
	expect_entry_error("%defattr(-,root,root,x)", "Bad dirmode spec: %defattr(-,root,root,x)");
	expect_entry_error("%defattr(-,root)", "Bad syntax: %defattr(-,root)");
	/* kiln refuses more than the permission bits (rpm 4.18 means to, but its check looks
	 * at the wrong variable). */
	expect_entry_error("%attr(17777,root,root) /a", "Bad mode spec: %attr(17777,root,root)");
}

/* ---------------------------------------------------------------------------------------- */
/* %verify, %defverify, %config. */

KILN_TEST(files_verify)
{
	const struct spec_package *pkg;
	struct pt t;

	pt_init(&t);
	pkg = files_of(&t, "%verify(not md5 size) /a\n%verify(not not md5) /b\n%verify() /c\n"
	                   "%verify(md5,mode) /d\n%verify(owner filedigest link group mtime rdev "
	                   "caps) /e");
	assert_int_equal(pkg->files[0].verifyflags, 0xfffffffc);
	/* Each "not" flips the list. */
	assert_int_equal(pkg->files[1].verifyflags, 0x1);
	/* An empty list verifies nothing. */
	assert_int_equal(pkg->files[2].verifyflags, 0);
	assert_int_equal(pkg->files[3].verifyflags, 0x41);
	assert_int_equal(pkg->files[4].verifyflags, 0x1bd);
	/* %defverify counts from the next line. */
	pkg = files_of(&t, "%defverify(not md5) /a\n/b\n%verify(user) /c\n%defverify(mode)\n/d");
	assert_int_equal(pkg->files[0].verifyflags, 0xffffffff);
	assert_int_equal(pkg->files[1].verifyflags, 0xfffffffe);
	assert_int_equal(pkg->files[2].verifyflags, 0x8);
	assert_int_equal(pkg->files[3].verifyflags, 0x40);
	pt_release(&t);
	expect_entry_error("%verify(foo) /a", "Invalid %verify token: foo");
	expect_entry_error("%defverify(md5 x)", "Invalid %defverify token: x");
	expect_entry_error("%verify /a", "Missing '(' in %verify /a");
	expect_entry_error("%verify(md5 /a", "Missing ')' in %verify(md5 /a");
}

KILN_TEST(files_config)
{
	struct pt t;

	pt_init(&t);
	assert_int_equal(entry_of(&t, "%config /a")->fileflags, 1);
	assert_int_equal(entry_of(&t, "%config(noreplace) /a")->fileflags, 17);
	assert_int_equal(entry_of(&t, "%config(missingok, noreplace) /a")->fileflags, 25);
	assert_int_equal(entry_of(&t, "%config(missingok) /a")->fileflags, 9);
	assert_int_equal(entry_of(&t, "%config() /a")->fileflags, 1);
	pt_release(&t);
	expect_entry_error("%config(foo) /a", "Invalid %config token: foo");
	expect_entry_error("%config(noreplace /a", "Missing ')' in %config(noreplace /a");
}

/* ---------------------------------------------------------------------------------------- */
/* %lang, %caps, %dev. */

KILN_TEST(files_lang)
{
	struct pt t;

	pt_init(&t);
	/* The parser keeps the text; the locales are checked, sorted and joined as FILELANGS
	 * when the package is made (tests/unit/worker/test_filelist.c). Several %lang add up,
	 * and each is found wherever it stands. */
	assert_string_equal(entry_of(&t, "%lang(de) /a")->lang, "de");
	assert_string_equal(entry_of(&t, "%lang(fr, de de) /a")->lang, "fr, de de");
	assert_string_equal(entry_of(&t, "%lang(fr) %lang(de) /a")->lang, "fr,de");
	assert_string_equal(entry_of(&t, "/a %lang(de fr) %config")->lang, "de fr");
	assert_int_equal(entry_of(&t, "/a %lang(de fr) %config")->fileflags, RPMTAG_FILE_CONFIG);
	assert_null(entry_of(&t, "/a")->lang);
	pt_release(&t);
	expect_entry_error("%lang /a", "Missing '(' in %lang /a");
	expect_entry_error("%lang(de /a", "Missing ')' in %lang(de /a");
}

KILN_TEST(files_caps)
{
	struct pt t;

	pt_init(&t);
	assert_string_equal(entry_of(&t, "%caps(cap_net_raw=ep) /a")->caps, "cap_net_raw=ep");
	/* Without "(" the word is dropped. */
	assert_null(entry_of(&t, "%caps /a")->caps);
	assert_string_equal(entry_of(&t, "%caps /a")->paths[0], "/a");
	pt_release(&t);
	expect_entry_error("%caps(cap_x=ep /a", "Missing ')' in %caps(cap_x=ep /a");
}

KILN_TEST(files_dev)
{
	const struct spec_files_entry *e;
	struct pt t;

	pt_init(&t);
	e = entry_of(&t, "%ghost %dev(c,1,3) /dev/null");
	assert_true(e->flags & SPEC_ENTRY_DEV);
	assert_int_equal(e->dev_type, 'c');
	assert_int_equal(e->dev_major, 1);
	assert_int_equal(e->dev_minor, 3);
	assert_int_equal(e->fileflags, RPMTAG_FILE_GHOST);
	/* rpm looks at the first letter of the type; blanks separate too. */
	e = entry_of(&t, "%dev(block, 8 0) /dev/sda");
	assert_int_equal(e->dev_type, 'b');
	assert_int_equal(e->dev_major, 8);
	assert_int_equal(e->dev_minor, 0);
	e = entry_of(&t, "%dev(cx,1,2) /dev/a");
	assert_int_equal(e->dev_type, 'c');
	pt_release(&t);
	expect_entry_error("%dev(x,1,2) /dev/x", "Missing devtype in %dev(x,1,2)");
	expect_entry_error("%dev(c,256,1) /dev/x", "Missing devmajor in %dev(c,256,1)");
	expect_entry_error("%dev(c,1) /dev/x", "Missing devminor in %dev(c,1)");
	expect_entry_error("%dev(c,1,a) /dev/x", "Missing devminor in %dev(c,1,a)");
	/* rpm 4.18 prints a NULL pointer here. */
	expect_entry_error("%dev /dev/x", "Missing '(' in %dev((null))");
	expect_entry_error("%dev(c,1,2 /dev/x", "Missing ')' in %dev((null))");
}

KILN_TEST(files_directives_together)
{
	const struct spec_files_entry *e;
	struct pt t;

	pt_init(&t);
	e = entry_of(&t, "%config %attr(0600,root,root) %verify(not md5) %lang(de) /a");
	assert_int_equal(e->fileflags, RPMTAG_FILE_CONFIG);
	expect_attr(&e->attr, ALL_ATTR, 0600, "root", "root", 0);
	assert_int_equal(e->verifyflags, 0xfffffffe);
	assert_string_equal(e->lang, "de");
	assert_string_equal(e->paths[0], "/a");
	/* The License: tag's %license macro does not hide the directive. */
	e = entry_of(&t, "%license COPYING");
	assert_int_equal(e->fileflags, RPMTAG_FILE_LICENSE);
	pt_release(&t);
	/* rpm stops at the first directive that fails, in its own order. */
	expect_entry_error("%lang(x) %verify(y) /a", "Invalid %verify token: y");
}

/* ---------------------------------------------------------------------------------------- */
/* The %files header. */

KILN_TEST(files_header)
{
	struct pt t;
	struct spec *s;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%package a\nSummary: x\n%description a\nd\n"
	                      "%files -f a.lst -f b.lst\n/x\n%files -n t-a\n%files -nt -f c.lst\n"
	                      "/y\n");
	/* A second %files of a package warns and forgets the entries, not the -f lists. */
	pt_assert_log(&t, "warning: line 15: multiple %files for package 't'\n");
	assert_int_equal(s->packages[0]->nfile_lists, 3);
	assert_string_equal(s->packages[0]->file_lists[0], "a.lst");
	assert_string_equal(s->packages[0]->file_lists[1], "b.lst");
	assert_string_equal(s->packages[0]->file_lists[2], "c.lst");
	assert_int_equal(s->packages[0]->nfiles, 1);
	assert_string_equal(s->packages[0]->files[0].paths[0], "/y");
	assert_true(s->packages[1]->has_files);
	assert_int_equal(s->packages[1]->nfiles, 0);
	/* rpm takes only a lone "-f" word as a list (popt reads "-fa" as -f a). */
	s = pt_ok(&t, PT_MAIN "%package x\nSummary: x\n%description x\nd\n%files -fa x\n");
	assert_true(s->packages[1]->has_files);
	assert_int_equal(s->packages[1]->nfile_lists, 0);
	pt_release(&t);
}

KILN_TEST(files_header_errors)
{
	pt_expect_fail(PT_MAIN "%files -x\n", KILN_ESYNTAX, 8, "Bad option -x: %files -x");
	pt_expect_fail(PT_MAIN "%files -f\n", KILN_ESYNTAX, 8, "Bad option -f: %files -f");
	pt_expect_fail(PT_MAIN "%files --foo\n", KILN_ESYNTAX, 8, "Bad option --foo: %files --foo");
	pt_expect_fail(PT_MAIN "%files a b\n", KILN_ESYNTAX, 8, "Too many names: %files a b");
	pt_expect_fail(PT_MAIN "%files a -n b\n", KILN_ESYNTAX, 8, "Too many names: %files a -n b");
	pt_expect_fail(PT_MAIN "%files -- -n\n", KILN_ENOTFOUND, 8,
	               "%files -- -n: package t--n does not exist");
	pt_expect_fail(PT_MAIN "%files x\n", KILN_ENOTFOUND, 8,
	               "%files x: package t-x does not exist");
}

/* ---------------------------------------------------------------------------------------- */
/* Globs, given attributes, -f lists. */

KILN_TEST(files_globs_keep_literal_glob_characters)
{
	struct pt t;
	struct spec *s;
	const struct spec_files_entry *e;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n/a/*.so\n\"/b/x*y\"\n/c/d\\*e\n");
	e = s->packages[0]->files;
	assert_string_equal(e[0].globs[0], "/a/*.so");
	assert_string_equal(e[1].paths[0], "/b/x*y");
	assert_string_equal(e[1].globs[0], "/b/x\\*y");
	assert_string_equal(e[2].paths[0], "/c/d*e");
	assert_string_equal(e[2].globs[0], "/c/d\\*e");
	pt_release(&t);
}

KILN_TEST(files_attr_given_and_verify_flags)
{
	struct pt t;
	struct spec *s;
	const struct spec_files_entry *e;

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n%attr(-,-,-) /a\n%defverify(not md5)\n/b\n%verify() /c\n");
	e = s->packages[0]->files;
	assert_true(e[0].attr.given);
	assert_int_equal(e[0].attr.set, 0);
	assert_false(e[0].defattr.given);
	assert_true(e[1].flags & SPEC_ENTRY_DEFVERIFY);
	assert_int_equal(e[1].verifyflags, ~(uint32_t)RPMTAG_VERIFY_FILEDIGEST);
	/* An empty %verify() verifies nothing (it is not "use the default"). */
	assert_true(e[2].flags & SPEC_ENTRY_VERIFY);
	assert_int_equal(e[2].verifyflags, 0);
	assert_int_equal(s->packages[0]->files_defverify, ~(uint32_t)RPMTAG_VERIFY_FILEDIGEST);
	pt_release(&t);
}

KILN_TEST(files_add_text_defattr_macros_comments)
{
	struct pt t;
	struct spec *s;
	struct spec_package *pkg;
	struct kiln_err err = KILN_ERR_INIT;
	const char *list = "# %{nothing} here\n\n%{dir}/a\n%attr(0600,-,-) \"%{dir}/b c\"\n";

	pt_init(&t);
	pt_define(&t, "dir /usr/x");
	s = pt_ok(&t, PT_MAIN "%files\n%defattr(0640,bin,bin,0750)\n/first\n");
	pkg = s->packages[0];
	assert_ok(spec_files_add_text(s, pkg, "/b/l.list", list, strlen(list), &err), &err);
	assert_int_equal(pkg->nfiles, 3);
	assert_string_equal(pkg->files[1].paths[0], "/usr/x/a");
	assert_string_equal(pkg->files[1].file, "/b/l.list");
	assert_int_equal(pkg->files[1].line, 3);
	assert_int_equal(pkg->files[1].defattr.mode, 0640);
	assert_string_equal(pkg->files[1].defattr.user, "bin");
	assert_string_equal(pkg->files[2].paths[0], "/usr/x/b c");
	assert_int_equal(pkg->files[2].attr.mode, 0600);
	assert_null(pkg->files[0].file);
	pt_release(&t);
}

KILN_TEST(files_add_text_errors)
{
	struct pt t;
	struct spec *s;
	struct kiln_err err = KILN_ERR_INIT;
	const char *bad = "/a\n%{error:broken}\n";

	pt_init(&t);
	s = pt_ok(&t, PT_MAIN "%files\n/first\n");
	assert_int_equal(spec_files_add_text(s, s->packages[0], "e.list", "", 0, &err),
	                 KILN_ESYNTAX);
	assert_string_equal(err.msg, "Empty %files file e.list");
	kiln_err_clear(&err);
	assert_int_equal(spec_files_add_text(s, s->packages[0], "# only\n", "# only\n", 7, &err),
	                 KILN_ESYNTAX);
	kiln_err_clear(&err);
	pt_define(&t, "_empty_manifest_terminate_build 0");
	assert_ok(spec_files_add_text(s, s->packages[0], "e.list", "", 0, &err), &err);
	assert_non_null(strstr(t.log, "warning: Empty %files file e.list"));
	assert_int_not_equal(
	    spec_files_add_text(s, s->packages[0], "m.list", bad, strlen(bad), &err), KILN_OK);
	assert_string_equal(err.input, "m.list");
	assert_int_equal(err.line, 2);
	pt_release(&t);
}
