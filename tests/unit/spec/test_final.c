/*
 * test_final.c - spec/final.c: what happens once the text is read: required and
 * inherited tags, descriptions, target checks, the header tags of scriptlets, triggers,
 * dependencies and the changelog, the source package's header, and
 * spec_package_build_tags().
 *
 * Expected values are Debian rpm 4.18's: `rpmspec -q [--srpm] --qf` for what rpmspec
 * shows, rpmbuild -bb and `rpm -qp --qf` of the result for the build-time tags.
 */
#include "util/util.h"

#include "tests/unit/spec/spec_test.h"

/* A spec with a bit of everything (queried as tests/unit/spec/test_final.c's comments
 * say); the main package has scriptlets, triggers and file triggers. */
static const char big_spec[] =
    "Name: t\nVersion: 1.0\nRelease: 2\nEpoch: 3\nSummary: s\nLicense: MIT\nURL: http://u\n"
    "Group: G\nVendor: V\nSource0: a.tar.gz\nSource1: b.zip\nPatch0: p0.patch\nNoSource: 1\n"
    "BuildRequires: make >= 4\nBuildConflicts: bad\nExcludeArch: s390x\n"
    "ExclusiveArch: x86_64 aarch64\nRequires: r\n%description\nd\n"
    "%package sub\nSummary: sub s\nBuildArch: noarch\n%description sub\nds\n"
    "%package lib\nSummary: lib s\nLicense: LGPL\n%description lib\ndl\n"
    "%pre\necho pre\n%post -p /sbin/ldconfig\n%preun -p <lua>\nprint(1)\n"
    "%postun -p \"/bin/bash -x\" -e\necho $1\n%pretrans -q\nx\n"
    "%triggerin -- a, b > 1\nti\n%triggerun -p /bin/bash -- c\ntu\n"
    "%filetriggerin -P 5 -- /usr/lib\nfti\n%transfiletriggerpostun -- /x\ntft\n"
    "%pre sub\nsp\n%files\n/a\n%files sub\n/s\n"
    "%changelog\n* Mon Jan 01 2024 A <a@b> - 3:1.0-2\n- x\n* Sun Dec 31 2023 B\n- y\n";

static void expect_qf(struct pt *t, const struct rpmtag_set *ts, const char *fmt, const char *want)
{
	char got[4096];

	pt_qf(t, ts, fmt, got, sizeof(got));
	if (strcmp(got, want))
		print_error("%s\ngot:  %s\nwant: %s\n", fmt, got, want);
	assert_string_equal(got, want);
}

#define DEPS_QF(P) "[%{" P "NAME} %{" P "FLAGS} %{" P "VERSION}|]"

/* ---------------------------------------------------------------------------------------- */
/* Packages. */

KILN_TEST(final_binary_package_tags)
{
	struct pt t;
	const struct rpmtag_set *ts;

	pt_init(&t);
	pt_ok(&t, big_spec);
	assert_int_equal(t.spec->npackages, 3);
	ts = t.spec->packages[0]->tags;
	expect_qf(&t, ts,
	          "%{NAME} %{EPOCH} %{VERSION} %{RELEASE} %{ARCH} %{OS} %{PLATFORM}|%{OPTFLAGS}",
	          "t 3 1.0 2 x86_64 linux x86_64-debian-linux|-O2 -g");
	/* Scriptlets: body, program, flags (-e 1, -q 2). */
	expect_qf(
	    &t, ts,
	    "%{PREIN}|%{PREINPROG}|%{POSTINPROG}|%{PREUNPROG}|[%{POSTUNPROG},]|%{POSTUNFLAGS}|"
	    "%{PRETRANS}|%{PRETRANSPROG}|%{PRETRANSFLAGS}|%{POSTIN}",
	    "echo pre|/bin/sh|/sbin/ldconfig|<lua>|/bin/bash,-x,|1|x|/bin/sh|2|(none)");
	/* Interpreters as requirements with the scriptlet's sense, and the rpmlib() features
	 * the scriptlets need (Lua, interpreter arguments, expansion). */
	expect_qf(&t, ts, DEPS_QF("REQUIRE"),
	          "/bin/bash 256 |/bin/bash 4352 |/bin/sh 256 |/bin/sh 384 |/bin/sh 768 |"
	          "/sbin/ldconfig 1280 |r 0 |rpmlib(BuiltinLuaScripts) 16777226 4.2.2-1|"
	          "rpmlib(ScriptletExpansion) 16777226 4.9.0-1|"
	          "rpmlib(ScriptletInterpreterArgs) 16777226 4.0.3-1|");
	/* The package provides itself, with its ISA. */
	expect_qf(&t, ts, DEPS_QF("PROVIDE"), "t 8 3:1.0-2|t(x86-64) 8 3:1.0-2|");
	/* Trigger conditions sorted, each pointing at its script. */
	expect_qf(&t, ts, "[%{TRIGGERNAME} %{TRIGGERFLAGS} %{TRIGGERVERSION} %{TRIGGERINDEX}|]",
	          "a 65536  0|b 65540 1 0|c 131072  1|");
	expect_qf(&t, ts, "[%{FILETRIGGERNAME} %{FILETRIGGERFLAGS} %{FILETRIGGERINDEX}|]",
	          "/usr/lib 65536 0|");
	expect_qf(&t, ts,
	          "[%{TRANSFILETRIGGERNAME} %{TRANSFILETRIGGERFLAGS} %{TRANSFILETRIGGERINDEX}|]",
	          "/x 262144 0|");
	/* The changelog lives in the main package until packaging. */
	expect_qf(&t, ts, "[%{CHANGELOGTIME} %{CHANGELOGNAME}|]",
	          "1704110400 A <a@b> - 3:1.0-2|1704024000 B|");
	/* rpmspec shows no trigger scripts: rpm adds them when it packages. */
	expect_qf(&t, ts, "%{TRIGGERSCRIPTS}|%{FILETRIGGERSCRIPTS}", "(none)|(none)");
	pt_release(&t);
}

KILN_TEST(final_subpackages_inherit)
{
	struct pt t;
	const struct rpmtag_set *sub, *lib;

	pt_init(&t);
	pt_ok(&t, big_spec);
	sub = t.spec->packages[1]->tags;
	lib = t.spec->packages[2]->tags;
	expect_qf(&t, sub,
	          "%{NAME} %{EPOCH} %{VERSION} %{RELEASE} %{LICENSE} %{URL} %{GROUP} %{VENDOR}",
	          "t-sub 3 1.0 2 MIT http://u G V");
	/* A noarch package provides no ISA name and keeps the build's platform. */
	expect_qf(&t, sub, "%{ARCH} %{PLATFORM}|" DEPS_QF("PROVIDE") DEPS_QF("REQUIRE"),
	          "noarch x86_64-debian-linux|t-sub 8 3:1.0-2|/bin/sh 768 |");
	expect_qf(&t, sub, "%{CHANGELOGTIME}", "(none)");
	/* Its own License: wins. */
	expect_qf(&t, lib, "%{LICENSE} %{ARCH}|" DEPS_QF("PROVIDE"),
	          "LGPL x86_64|t-lib 8 3:1.0-2|t-lib(x86-64) 8 3:1.0-2|");
	pt_release(&t);
}

KILN_TEST(final_inherited_tags)
{
	struct pt t;

	pt_init(&t);
	pt_ok(&t, PT_HEAD "VCS: git:x\nBugURL: b\nDistTag: dt\nPackager: P\nDistribution: D\n"
	                  "Prefix: /usr\nModularityLabel: m\n%description\nd\n"
	                  "%package a\nSummary: x\nVCS: own\n%description a\nd\n");
	expect_qf(&t, t.spec->packages[1]->tags,
	          "%{VCS} %{BUGURL} %{DISTTAG} %{PACKAGER} %{DISTRIBUTION} %{PREFIXES} "
	          "%{MODULARITYLABEL}",
	          "own b dt P D /usr m");
	pt_release(&t);
}

KILN_TEST(final_every_package_needs_a_description)
{
	pt_expect_fail(PT_HEAD, KILN_ESYNTAX, 0, "Package has no %description: t");
	pt_expect_fail(PT_MAIN "%package a\nSummary: x\n", KILN_ESYNTAX, 0,
	               "Package has no %description: t-a");
}

KILN_TEST(final_target_must_be_buildable)
{
	struct pt t;

	pt_init(&t);
	pt_fail(&t, PT_HEAD "ExcludeArch: x86_64\n%description\nd\n", KILN_EUNSUPP, 0,
	        "Architecture is excluded: x86_64");
	pt_fail(&t, PT_HEAD "ExclusiveArch: aarch64 s390x\n%description\nd\n", KILN_EUNSUPP, 0,
	        "Architecture is not included: x86_64");
	pt_fail(&t, PT_HEAD "ExcludeOS: Linux\n%description\nd\n", KILN_EUNSUPP, 0,
	        "OS is excluded: linux");
	pt_fail(&t, PT_HEAD "ExclusiveOS: darwin\n%description\nd\n", KILN_EUNSUPP, 0,
	        "OS is not included: linux");
	pt_ok(&t, PT_HEAD "ExclusiveArch: X86_64\nExclusiveOS: linux\n%description\nd\n");
	/* rpmspec does not look. */
	assert_ok(pt_run(&t, PT_HEAD "ExcludeArch: x86_64\n%description\nd\n", SPEC_PARSE_ANYARCH),
	          &t.err);
	/* A noarch target is checked with the build machine's cpu. */
	pt_define(&t, "_target_cpu noarch");
	pt_define(&t, "_build_cpu aarch64");
	pt_fail(&t, PT_HEAD "ExclusiveArch: x86_64\n%description\nd\n", KILN_EUNSUPP, 0,
	        "Architecture is not included: aarch64");
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* The source package. */

KILN_TEST(final_source_package_tags)
{
	struct pt t;
	const struct rpmtag_set *src;

	pt_init(&t);
	pt_ok(&t, big_spec);
	src = t.spec->srctags;
	expect_qf(&t, src, "%{NAME} %{EPOCH} %{VERSION} %{ARCH} %{OS} %{GROUP} %{BUILDARCHS}",
	          "t 3 1.0 x86_64 linux G (none)");
	/* Sources and patches newest first. */
	expect_qf(&t, src, "[%{SOURCE}|][%{PATCH}|][%{NOSOURCE}|]", "b.zip|a.tar.gz|p0.patch|1|");
	expect_qf(&t, src,
	          DEPS_QF("REQUIRE") "[%{CONFLICTNAME}|][%{EXCLUDEARCH}|][%{EXCLUSIVEARCH}|]",
	          "make 12 4|bad|s390x|x86_64|aarch64|");
	/* It provides what gets built (packages with %files), in package order. */
	expect_qf(&t, src, DEPS_QF("PROVIDE"), "t 8 3:1.0-2|t-sub 8 3:1.0-2|");
	expect_qf(&t, src, "[%{CHANGELOGNAME}|]", "A <a@b> - 3:1.0-2|B|");
	pt_release(&t);
}

KILN_TEST(final_tags_are_in_number_order)
{
	struct pt t;
	size_t i, n;
	const struct rpmtag_set *ts;

	pt_init(&t);
	pt_ok(&t, big_spec);
	ts = t.spec->packages[0]->tags;
	n = rpmtag_set_count(ts);
	assert_true(n > 20);
	for (i = 1; i < n; i++)
		assert_true(rpmtag_set_tag_at(ts, i - 1) < rpmtag_set_tag_at(ts, i));
	ts = t.spec->srctags;
	for (i = 1; i < rpmtag_set_count(ts); i++)
		assert_true(rpmtag_set_tag_at(ts, i - 1) < rpmtag_set_tag_at(ts, i));
	pt_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* spec_package_build_tags(). */

KILN_TEST(final_build_tags)
{
	static const char text[] =
	    PT_MAIN "%package sub\nSummary: sub\n%description sub\nds\n"
	            "%triggerin -- a, b > 1\nti\n%triggerun -p /bin/bash -- c\ntu\n"
	            "%triggerpostun -e -- d\ntp\n%filetriggerin -P 5 -- /usr/lib\nfti\n"
	            "%filetriggerun -p <lua> -- /x\nprint(1)\n%transfiletriggerpostun -- /x\ntft\n"
	            "%files\n/a\n%files sub\n/s\n"
	            "%changelog\n* Mon Jan 01 2024 A <a@b> - 1-1\n- x\n";
	struct kiln_err err = KILN_ERR_INIT;
	struct pt t;
	struct spec_package *main_pkg, *sub;
	size_t i;

	pt_init(&t);
	pt_ok(&t, text);
	main_pkg = t.spec->packages[0];
	sub = t.spec->packages[1];
	for (i = 0; i < t.spec->npackages; i++)
		assert_ok(spec_package_build_tags(t.spec, t.spec->packages[i], &err), &err);
	/* rpmbuild -bb, rpm -qp --qf: scripts in spec order with their programs and flags. */
	expect_qf(&t, main_pkg->tags,
	          "[%{TRIGGERSCRIPTS}|][%{TRIGGERSCRIPTPROG}|][%{TRIGGERSCRIPTFLAGS}|]",
	          "ti|tu|tp|/bin/sh|/bin/bash|/bin/sh|0|0|1|");
	expect_qf(&t, main_pkg->tags, "[%{TRIGGERNAME} %{TRIGGERINDEX} %{TRIGGERFLAGS}|]",
	          "a 0 65536|b 0 65540|c 1 131072|d 2 262144|");
	/* A family whose scripts have no flags gets no flags array. */
	expect_qf(&t, main_pkg->tags,
	          "[%{FILETRIGGERSCRIPTS}|][%{FILETRIGGERSCRIPTPROG}|][%{FILETRIGGERSCRIPTFLAGS}|]"
	          "[%{FILETRIGGERPRIORITIES}|]",
	          "fti|print(1)|/bin/sh|<lua>|5|1000000|");
	expect_qf(&t, main_pkg->tags,
	          "[%{TRANSFILETRIGGERSCRIPTS}|][%{TRANSFILETRIGGERPRIORITIES}|]", "tft|1000000|");
	/* Every package gets the changelog. */
	expect_qf(&t, sub->tags, "[%{CHANGELOGNAME}|]%{TRIGGERSCRIPTS}", "A <a@b> - 1-1|(none)");
	expect_qf(&t, main_pkg->tags, "[%{CHANGELOGNAME}|]", "A <a@b> - 1-1|");
	/* The set stays sorted. */
	for (i = 1; i < rpmtag_set_count(main_pkg->tags); i++)
		assert_true(rpmtag_set_tag_at(main_pkg->tags, i - 1) <
		            rpmtag_set_tag_at(main_pkg->tags, i));
	pt_release(&t);
}
