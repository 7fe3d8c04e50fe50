/*
 * test_solve.c - resolution with libsolv over small repositories the tests write: names,
 * provides, versions, rich and file dependencies, conflicts, obsoletes, weak dependencies,
 * groups, priorities, problems, and a lock checked against the repositories.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "rpmtag/rpmtag.h"
#include "spec/spec.h"
#include "tests/unit/roots/roots_test.h"

struct rt_pkg {
	const char *name, *evr, *arch, *deps;
};

static const struct rt_pkg base_repo[] = {
    {"app", "1.0-1", "x86_64", "R:libfoo >= 2;R:(tool-a or tool-b);R:/usr/bin/sh"},
    {"libfoo", "1.5-1", "x86_64", "P:libfoo.so.1()(64bit)"},
    {"libfoo", "2.1-1", "x86_64", "P:libfoo.so.2()(64bit)"},
    {"libfoo", "2.1-1", "i686", ""},
    {"tool-a", "1-1", "noarch", "C:tool-b"},
    {"tool-b", "1-1", "noarch", "C:tool-a"},
    {"bash", "5.2-1", "x86_64", "F:/usr/bin/bash;F:/usr/bin/sh;R:filesystem"},
    {"filesystem", "3-1", "x86_64", "F:/etc/passwd-dir"},
    {"new-name", "2-1", "noarch", "O:old-name < 2;P:old-name = 2"},
    {"old-name", "1-1", "noarch", ""},
    {"needs-old", "1-1", "noarch", "R:old-name = 1"},
    {"weakling", "1-1", "noarch", "W:bonus"},
    {"bonus", "1-1", "noarch", ""},
    {"epochy", "1:0.5-1", "noarch", ""},
    {"epochy", "0:9.0-1", "noarch", ""},
    {"broken", "1-1", "noarch", "R:missing-thing"},
    {"clash", "1-1", "noarch", "C:bash"},
    {"docs", "1-1", "noarch", "F:/usr/share/doc/docs/README"},
    {"wantsdoc", "1-1", "noarch", "R:/usr/share/doc/docs/README"},
    {"devel", "1-1", "x86_64", "P:pkgconfig(foo) = 1.2;R:libfoo(x86-64) = 2.1"},
    {"libfoo-arch", "1-1", "x86_64", "P:libfoo(x86-64) = 2.1"},
};

static const char filelists[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<filelists xmlns=\"http://linux.duke.edu/metadata/filelists\" packages=\"1\">\n"
    "<package pkgid=\"x\" name=\"docs\" arch=\"noarch\"><version epoch=\"0\" ver=\"1\" "
    "rel=\"1\"/><file>/usr/share/doc/docs/README</file></package>\n"
    "</filelists>\n";

static struct roots_pool *pool_of(const struct rt_pkg *pkgs, size_t n, bool weak, bool flists)
{
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_pool *p = NULL;
	size_t i;

	rt_primary_begin(&b);
	for (i = 0; i < n; i++)
		rt_package(&b, pkgs[i].name, pkgs[i].evr, pkgs[i].arch, pkgs[i].deps);
	rt_primary_end(&b);
	assert_ok(kiln_buf_finish(&b, &err), &err);
	assert_ok(roots_pool_new("x86_64", weak, &p, &err), &err);
	assert_ok(roots_pool_add_repo(p, "base", 99, b.ptr, b.len, NULL, 0, &err), &err);
	if (flists)
		assert_ok(roots_pool_add_filelists(p, "base", filelists, strlen(filelists), &err),
		          &err);
	kiln_buf_release(&b);
	return p;
}

/* The lock as "name-evr.arch" words, in lock order. */
static void lock_words(const struct roots_lock *l, char *out, size_t size)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < l->n && used < size; i++) {
		const struct roots_lock_pkg *p = &l->pkgs[i];
		int w = p->epoch
		            ? snprintf(out + used, size - used, "%s%s-%u:%s-%s.%s", used ? " " : "",
		                       p->name, p->epoch, p->version, p->release, p->arch)
		            : snprintf(out + used, size - used, "%s%s-%s-%s.%s", used ? " " : "",
		                       p->name, p->version, p->release, p->arch);
		used += (size_t)w;
	}
}

static kiln_rc resolve(struct roots_pool *p, const char *const *req, size_t n, char *out,
                       size_t size, struct kiln_err *err)
{
	struct roots_lock l;
	kiln_rc rc;

	roots_lock_init(&l);
	rc = roots_pool_resolve(p, req, n, NULL, NULL, &l, err);
	if (!rc)
		lock_words(&l, out, size);
	roots_lock_release(&l);
	return rc;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

KILN_TEST(solve_versions_rich_and_file_deps)
{
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	struct kiln_err err = KILN_ERR_INIT;
	const char *req[] = {"app"};
	char got[2048];

	assert_ok(resolve(p, req, 1, got, sizeof(got), &err), &err);
	/* libfoo 2.1 (versioned), x86_64 over i686 (the arch), one of tool-a/tool-b (a rich
	 * dependency; the two conflict), bash for /usr/bin/sh (a file in primary), and what
	 * bash requires. */
	assert_true(!strcmp(got, "app-1.0-1.x86_64 bash-5.2-1.x86_64 filesystem-3-1.x86_64 "
	                         "libfoo-2.1-1.x86_64 tool-a-1-1.noarch") ||
	            !strcmp(got, "app-1.0-1.x86_64 bash-5.2-1.x86_64 filesystem-3-1.x86_64 "
	                         "libfoo-2.1-1.x86_64 tool-b-1-1.noarch"));
	roots_pool_free(p);
}

KILN_TEST(solve_requests_of_every_kind)
{
	static const struct {
		const char *req;
		const char *want;
	} cases[] = {
	    {"libfoo", "libfoo-2.1-1.x86_64"},
	    {"libfoo < 2", "libfoo-1.5-1.x86_64"},
	    {"libfoo.so.1()(64bit)", "libfoo-1.5-1.x86_64"},
	    {"(libfoo and bonus)", "bonus-1-1.noarch libfoo-2.1-1.x86_64"},
	    {"/usr/bin/bash", "bash-5.2-1.x86_64 filesystem-3-1.x86_64"},
	    /* As dnf does: what replaced a package is installed for it. */
	    {"old-name", "new-name-2-1.noarch"},
	    {"old-name = 2", "new-name-2-1.noarch"},
	    {"epochy", "epochy-1:0.5-1.noarch"},
	    {"epochy < 1:0", "epochy-9.0-1.noarch"},
	    {"weakling", "weakling-1-1.noarch"},
	    {"pkgconfig(foo) >= 1", "devel-1-1.x86_64 libfoo-arch-1-1.x86_64"},
	};
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	size_t i;

	for (i = 0; i < N(cases); i++) {
		struct kiln_err err = KILN_ERR_INIT;
		const char *req[] = {cases[i].req};
		char got[2048];

		assert_ok(resolve(p, req, 1, got, sizeof(got), &err), &err);
		if (strcmp(got, cases[i].want))
			fail_msg("%s: got '%s', want '%s'", cases[i].req, got, cases[i].want);
	}
	roots_pool_free(p);
}

KILN_TEST(solve_weak_deps_only_when_asked)
{
	struct roots_pool *p = pool_of(base_repo, N(base_repo), true, false);
	struct kiln_err err = KILN_ERR_INIT;
	const char *req[] = {"weakling"};
	char got[2048];

	assert_ok(resolve(p, req, 1, got, sizeof(got), &err), &err);
	assert_string_equal(got, "bonus-1-1.noarch weakling-1-1.noarch");
	roots_pool_free(p);
}

KILN_TEST(solve_problems_name_the_packages)
{
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	struct kiln_err err = KILN_ERR_INIT;
	const char *nothing[] = {"no-such-package"};
	const char *broken[] = {"broken"};
	const char *clash[] = {"clash", "bash"};
	const char *olds[] = {"new-name", "needs-old"};
	char got[2048];

	assert_int_equal(resolve(p, nothing, 1, got, sizeof(got), &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "nothing provides requested no-such-package"));
	kiln_err_clear(&err);
	assert_int_equal(resolve(p, broken, 1, got, sizeof(got), &err), KILN_ECONFLICT);
	assert_non_null(strstr(roots_pool_problems(p), "nothing provides missing-thing needed by "
	                                               "broken-1-1.noarch"));
	kiln_err_clear(&err);
	assert_int_equal(resolve(p, clash, 2, got, sizeof(got), &err), KILN_ECONFLICT);
	assert_non_null(strstr(roots_pool_problems(p), "clash-1-1.noarch conflicts with bash"));
	kiln_err_clear(&err);
	/* Obsoletes: new-name replaces old-name, which needs-old needs exactly. */
	assert_int_equal(resolve(p, olds, 2, got, sizeof(got), &err), KILN_ECONFLICT);
	assert_non_null(strstr(roots_pool_problems(p), "obsoletes old-name < 2"));
	kiln_err_clear(&err);
	/* A later success clears the problems. */
	assert_ok(resolve(p, olds, 1, got, sizeof(got), &err), &err);
	assert_string_equal(roots_pool_problems(p), "");
	roots_pool_free(p);
}

KILN_TEST(solve_file_deps_outside_primary_need_filelists)
{
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	struct kiln_err err = KILN_ERR_INIT;
	const char *req[] = {"wantsdoc"};
	const char *inprimary[] = {"/usr/bin/sh"};
	const char *outside[] = {"/usr/share/doc/docs/README"};
	char got[2048];

	/* wantsdoc's own requirement is outside primary's subset. */
	assert_true(roots_pool_needs_filelists(p, NULL, 0, NULL));
	roots_pool_free(p);
	p = pool_of(base_repo + 1, 4, false, false); /* no file requirements */
	assert_false(roots_pool_needs_filelists(p, inprimary, 1, NULL));
	assert_true(roots_pool_needs_filelists(p, outside, 1, NULL));
	roots_pool_free(p);
	p = pool_of(base_repo, N(base_repo), false, true);
	assert_ok(resolve(p, req, 1, got, sizeof(got), &err), &err);
	assert_string_equal(got, "docs-1-1.noarch wantsdoc-1-1.noarch");
	roots_pool_free(p);
}

KILN_TEST(solve_spec_build_requires_and_conflicts)
{
	static const char spec_text[] =
	    "Name: x\nVersion: 1\nRelease: 1\nSummary: s\nLicense: MIT\n"
	    "BuildRequires: libfoo >= 2, (tool-a or tool-b)\n"
	    "BuildRequires: /usr/bin/sh\n"
	    "BuildConflicts: tool-a\n"
	    "%description\nd\n";
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	struct kiln_err err = KILN_ERR_INIT;
	struct macro_ctx *ctx = macro_ctx_new(&err);
	struct spec *spec = NULL;
	struct roots_lock l;
	char got[2048];

	assert_non_null(ctx);
	assert_ok(spec_parse_mem("x.spec", spec_text, strlen(spec_text), ctx, SPEC_PARSE_ANYARCH,
	                         &spec, &err),
	          &err);
	roots_lock_init(&l);
	assert_ok(
	    roots_pool_resolve(p, NULL, 0, &spec->buildrequires, &spec->buildconflicts, &l, &err),
	    &err);
	lock_words(&l, got, sizeof(got));
	assert_string_equal(got, "bash-5.2-1.x86_64 filesystem-3-1.x86_64 libfoo-2.1-1.x86_64 "
	                         "tool-b-1-1.noarch");
	roots_lock_release(&l);
	spec_free(spec);
	macro_ctx_free(ctx);
	roots_pool_free(p);
}

KILN_TEST(solve_priorities_and_groups)
{
	static const char comps[] =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<comps>\n<group><id>buildsys-build</id>"
	    "<name>Buildsystem building group</name><packagelist>"
	    "<packagereq type=\"mandatory\">bash</packagereq>"
	    "<packagereq type=\"default\">tool-a</packagereq>"
	    "<packagereq type=\"optional\">bonus</packagereq>"
	    "<packagereq type=\"mandatory\">not-in-any-repo</packagereq>"
	    "</packagelist></group>\n</comps>\n";
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	const char *req[] = {"@buildsys-build", "libfoo"};
	const char *nogroup[] = {"@nope"};
	char got[2048];

	/* A second repository with a newer libfoo but a worse priority (dnf: higher loses). */
	rt_primary_begin(&b);
	rt_package(&b, "libfoo", "3.0-1", "x86_64", "");
	rt_primary_end(&b);
	assert_ok(roots_pool_add_repo(p, "extra", 100, b.ptr, b.len, comps, strlen(comps), &err),
	          &err);
	assert_ok(resolve(p, req, 2, got, sizeof(got), &err), &err);
	assert_string_equal(got, "bash-5.2-1.x86_64 filesystem-3-1.x86_64 libfoo-2.1-1.x86_64 "
	                         "tool-a-1-1.noarch");
	assert_int_equal(resolve(p, nogroup, 1, got, sizeof(got), &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "@nope"));
	kiln_buf_release(&b);
	roots_pool_free(p);
}

KILN_TEST(solve_lock_checked_against_the_repositories)
{
	struct roots_pool *p = pool_of(base_repo, N(base_repo), false, false);
	struct kiln_err err = KILN_ERR_INIT;
	const char *req[] = {"app", "tool-a"};
	struct roots_lock l;

	roots_lock_init(&l);
	assert_ok(roots_pool_resolve(p, req, 2, NULL, NULL, &l, &err), &err);
	assert_int_equal(l.n, 5);
	assert_string_equal(l.arch, "x86_64");
	assert_ok(roots_lock_check(p, &l, &err), &err);
	/* One changed byte of one package's digest: not in the repository as locked. */
	l.pkgs[2].sha256[0] = l.pkgs[2].sha256[0] == 'a' ? 'b' : 'a';
	assert_int_equal(roots_lock_check(p, &l, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, l.pkgs[2].name));
	roots_lock_release(&l);
	roots_pool_free(p);
}

KILN_TEST(solve_refuses_metadata_without_sha256_or_escaping)
{
	static const char md5[] =
	    "<metadata xmlns=\"http://linux.duke.edu/metadata/common\"><package type=\"rpm\">"
	    "<name>a</name><arch>noarch</arch><version epoch=\"0\" ver=\"1\" rel=\"1\"/>"
	    "<checksum type=\"md5\" pkgid=\"YES\">0123456789abcdef0123456789abcdef</checksum>"
	    "<location href=\"a.rpm\"/></package></metadata>";
	static const char escape[] =
	    "<metadata xmlns=\"http://linux.duke.edu/metadata/common\"><package type=\"rpm\">"
	    "<name>a</name><arch>noarch</arch><version epoch=\"0\" ver=\"1\" rel=\"1\"/>"
	    "<checksum type=\"sha256\" pkgid=\"YES\">"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef</checksum>"
	    "<location href=\"../../etc/a.rpm\"/></package></metadata>";
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_pool *p = NULL;

	assert_ok(roots_pool_new("x86_64", false, &p, &err), &err);
	assert_int_equal(roots_pool_add_repo(p, "r", 99, md5, strlen(md5), NULL, 0, &err),
	                 KILN_EFORMAT);
	assert_non_null(strstr(err.msg, "sha256"));
	roots_pool_free(p);
	kiln_err_clear(&err);
	assert_ok(roots_pool_new("x86_64", false, &p, &err), &err);
	assert_int_equal(roots_pool_add_repo(p, "r", 99, escape, strlen(escape), NULL, 0, &err),
	                 KILN_EPRIV);
	roots_pool_free(p);
	kiln_err_clear(&err);
	assert_ok(roots_pool_new("x86_64", false, &p, &err), &err);
	assert_int_equal(roots_pool_add_repo(p, "r", 99, "<meta", 5, NULL, 0, &err), KILN_EFORMAT);
	roots_pool_free(p);
}
