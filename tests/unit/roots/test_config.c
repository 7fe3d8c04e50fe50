/*
 * test_config.c - root configurations: the issue's minimal form, every key, folding,
 * substitution, lookup by name, and errors that name the file and line.
 */
#include "util/util.h"

#include "macro/macro.h"
#include "roots/roots.h"
#include "tests/unit/harness.h"

static kiln_rc parse(struct roots_config *c, const char *text, struct kiln_err *err)
{
	roots_config_init(c);
	return roots_config_from_mem(c, "t.cfg", text, strlen(text), err);
}

KILN_TEST(config_minimal_form_from_the_issue)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_config c;

	assert_ok(parse(&c,
	                "[root]\n"
	                "arch = x86_64\n"
	                "install = filesystem busybox\n"
	                "\n"
	                "[repo base]\n"
	                "baseurl = file:///srv/repo\n"
	                "gpgkey = file:///srv/repo/key.asc\n",
	                &err),
	          &err);
	assert_string_equal(c.arch, "x86_64");
	assert_int_equal(c.ninstall, 2);
	assert_string_equal(c.install[0], "filesystem");
	assert_string_equal(c.install[1], "busybox");
	assert_false(c.weak_deps);
	assert_int_equal(c.nrepos, 1);
	assert_string_equal(c.repos[0].name, "base");
	assert_string_equal(c.repos[0].baseurl, "file:///srv/repo");
	assert_string_equal(c.repos[0].gpgkey, "file:///srv/repo/key.asc");
	assert_true(c.repos[0].gpgcheck);
	assert_true(c.repos[0].repo_gpgcheck);
	assert_int_equal(c.repos[0].priority, 99);
	assert_int_equal(c.repos[0].line, 5);
	roots_config_release(&c);
}

KILN_TEST(config_every_key)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_config c;

	assert_ok(parse(&c,
	                "# a root\n"
	                "[root]\n"
	                "arch = aarch64\n"
	                "releasever = 42\n"
	                "weak_deps = yes\n"
	                "install = @buildsys-build, gcc-c++ make >= 4.3\n"
	                "   (foo or bar) /usr/bin/env\n"
	                "\tpkgconfig(zlib)\n"
	                "[macros]\n"
	                "%dist = .fc$releasever\n"
	                "vendor = kiln\n"
	                "[repo fedora]\n"
	                "name = Fedora $releasever\n"
	                "baseurl = https://mirror.example/$releasever/$basearch/os/\n"
	                "gpgkey = https://mirror.example/keys/$releasever.asc\n"
	                "gpgcheck = 0\n"
	                "repo_gpgcheck = false\n"
	                "priority = 10\n"
	                "[repo local]\n"
	                "baseurl = file:///srv/local\n"
	                "gpgcheck = no\n"
	                "repo_gpgcheck = off\n",
	                &err),
	          &err);
	assert_string_equal(c.arch, "aarch64");
	assert_string_equal(c.releasever, "42");
	assert_true(c.weak_deps);
	assert_int_equal(c.ninstall, 6);
	assert_string_equal(c.install[0], "@buildsys-build");
	assert_string_equal(c.install[1], "gcc-c++");
	assert_string_equal(c.install[2], "make >= 4.3");
	assert_string_equal(c.install[3], "(foo or bar)");
	assert_string_equal(c.install[4], "/usr/bin/env");
	assert_string_equal(c.install[5], "pkgconfig(zlib)");
	assert_int_equal(c.nmacros, 2);
	assert_string_equal(c.macros[0].name, "dist");
	/* Macro values are rpm's business, not substituted like URLs. */
	assert_string_equal(c.macros[0].value, ".fc$releasever");
	assert_string_equal(c.macros[1].name, "vendor");
	assert_int_equal(c.nrepos, 2);
	assert_string_equal(c.repos[0].baseurl, "https://mirror.example/42/aarch64/os");
	assert_string_equal(c.repos[0].gpgkey, "https://mirror.example/keys/42.asc");
	assert_false(c.repos[0].gpgcheck);
	assert_false(c.repos[0].repo_gpgcheck);
	assert_int_equal(c.repos[0].priority, 10);
	assert_null(c.repos[1].gpgkey);
	roots_config_release(&c);
}

struct bad_case {
	const char *text;
	kiln_rc code;
	int line;
	const char *msg; /* a part of the message */
};

KILN_TEST(config_errors_name_the_line)
{
	static const struct bad_case cases[] = {
	    {"arch = x86_64\n", KILN_ESYNTAX, 1, "outside a [section]"},
	    {"[root]\narch = x86_64\n[repos]\n", KILN_ESYNTAX, 3, "unknown section"},
	    {"[root]\narch = x86_64\ngpgchek = 1\n", KILN_ESYNTAX, 3, "unknown key 'gpgchek'"},
	    {"[root]\ninstall = a\n", KILN_ESYNTAX, 0, "has no arch"},
	    {"[root]\narch = x86 64\n", KILN_ESYNTAX, 2, "malformed architecture"},
	    {"[root]\narch = x86_64\n[repo a]\ngpgcheck = maybe\n", KILN_ESYNTAX, 4, "boolean"},
	    {"[root]\narch = x86_64\n[repo a]\nbaseurl = ftp://x/y\n", KILN_ESYNTAX, 4, "baseurl"},
	    {"[root]\narch = x86_64\n\n[repo a]\ngpgcheck = 0\nrepo_gpgcheck = 0\n", KILN_ESYNTAX,
	     4, "has no baseurl"},
	    {"[root]\narch = x86_64\n[repo a]\nbaseurl = file:///r\n", KILN_ESYNTAX, 3,
	     "no gpgkey"},
	    {"[root]\narch = x86_64\n[repo a]\nbaseurl = file:///r\ngpgkey = file:///k\n[repo a]\n",
	     KILN_ESYNTAX, 6, "given twice"},
	    {"[root]\narch = x86_64\ninstall = a >=\n", KILN_ESYNTAX, 3, "needs a version"},
	    {"[root]\narch = x86_64\ninstall = (a or b\n", KILN_ESYNTAX, 3, "unbalanced"},
	    {"[root]\narch = x86_64\n[macros]\n1x = y\n", KILN_ESYNTAX, 4, "malformed macro name"},
	    {"[root]\narch = x86_64\n[repo a]\nbaseurl = file:///$releasever\ngpgcheck=0\n"
	     "repo_gpgcheck=0\n",
	     KILN_ESYNTAX, 3, "$releasever"},
	    {"[root]\narch = x86_64\n  more\n", KILN_ESYNTAX, 3, "only install continues"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kiln_err err = KILN_ERR_INIT;
		struct roots_config c;
		kiln_rc rc = parse(&c, cases[i].text, &err);

		if (rc != cases[i].code || err.line != cases[i].line ||
		    !strstr(err.msg, cases[i].msg) || strcmp(err.input, "t.cfg"))
			fail_msg("case %zu: rc %d line %d input '%s' msg '%s'", i, rc, err.line,
			         err.input, err.msg);
		roots_config_release(&c);
	}
}

KILN_TEST(config_bounds)
{
	struct kiln_buf b = KILN_BUF_INIT(4 * ROOTS_CONFIG_MAX_BYTES);
	struct kiln_err err = KILN_ERR_INIT;
	struct roots_config c;
	int i;

	kiln_buf_addstr(&b, "[root]\narch = x86_64\ninstall =");
	for (i = 0; i <= ROOTS_CONFIG_MAX_INSTALL; i++)
		kiln_buf_addf(&b, "\n p%d", i);
	assert_int_equal(parse(&c, b.ptr, &err), KILN_ELIMIT);
	assert_non_null(strstr(err.msg, "install entries"));
	roots_config_release(&c);
	kiln_buf_reset(&b);
	kiln_err_clear(&err);
	for (i = 0; i < ROOTS_CONFIG_MAX_LINE + 1; i++)
		kiln_buf_addch(&b, '#');
	assert_int_equal(parse(&c, b.ptr, &err), KILN_ELIMIT);
	assert_int_equal(err.line, 1);
	roots_config_release(&c);
	kiln_buf_release(&b);
}

KILN_TEST(config_found_by_name_in_the_configuration_directory)
{
	struct kiln_err err = KILN_ERR_INIT;
	struct kiln_buf path = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char dir[KILN_LIMIT_PATH], file[KILN_LIMIT_PATH + 64];
	const char *text = "[root]\narch = x86_64\ninstall = a\n";
	struct roots_config c;

	snprintf(dir, sizeof(dir), "%s/confdir", kiln_test_tmpdir());
	snprintf(file, sizeof(file), "%s/roots/test-1-x86_64.cfg", dir);
	assert_ok(util_mkdir_p(file, 0755, &err), &err);
	assert_ok(util_rm_rf(file, &err), &err);
	assert_ok(util_write_atomic(file, text, strlen(text), 0644, &err), &err);
	setenv("KILN_CONFIGDIR", dir, 1);
	roots_config_init(&c);
	assert_ok(roots_config_open(&c, "test-1-x86_64", &err), &err);
	assert_string_equal(c.name, "test-1-x86_64");
	assert_string_equal(c.path, file);
	roots_config_release(&c);
	/* A path is a path. */
	roots_config_init(&c);
	assert_ok(roots_config_open(&c, file, &err), &err);
	roots_config_release(&c);
	assert_int_equal(roots_config_find("no-such-root", &path, &err), KILN_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no-such-root.cfg"));
	kiln_err_clear(&err);
	/* With a slash it is a path, never looked up by name: one that does not exist is not
	 * found (in the test's own directory, so no file elsewhere can answer). */
	snprintf(file, sizeof(file), "%s/../confdir/roots/../x", dir);
	assert_int_equal(roots_config_find(file, &path, &err), KILN_ENOTFOUND);
	kiln_err_clear(&err);
	assert_int_equal(roots_config_find("a b", &path, &err), KILN_EINVAL);
	unsetenv("KILN_CONFIGDIR");
	kiln_buf_release(&path);
}
