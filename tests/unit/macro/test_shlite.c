/*
 * test_shlite.c - the in-process %(...) evaluator against the real /bin/sh: every snippet of
 * the table runs through both with the same environment; the evaluator must take exactly
 * the ones marked fast and print byte for byte what the shell prints for them.
 */
#include "util/util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro/macro_int.h"
#include "tests/unit/macro/macro_test.h"

/* What the shell reads: a set variable, an empty one, values that splitting, globbing or
 * echo would change, and variables the shell manages itself. */
static const char *const env_base[] = {"RPM_BUILD_NCPUS=4",
                                       "EMPTY=",
                                       "SP=a b",
                                       "STAR=*",
                                       "BS=a\\nb",
                                       "DASH=-n",
                                       "DUP=first",
                                       "DUP=second",
                                       "PATH=/usr/bin:/bin",
                                       "PWD=/",
                                       "HOME=/root",
                                       "LC_ALL=C",
                                       NULL};
static const char *const env_no_ncpus[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
static const char *const env_bash_func[] = {"PATH=/usr/bin:/bin", "BASH_FUNC_echo%%=() { :; }",
                                            NULL};

/* rpm's %_smp_build_ncpus (platform macros) after macro expansion, with %_smp_ncpus_max
 * unset (empty), 0, 1 and 8. */
#define NCPUS(max)                                                                                 \
	"[ -z \"$RPM_BUILD_NCPUS\" ] \\\n\t&& RPM_BUILD_NCPUS=\"2\"; \\\n        ncpus_max=" max   \
	"; \\\n        if [ -n \"$ncpus_max\" ] && [ \"$ncpus_max\" -gt 0 ] && "                   \
	"[ \"$RPM_BUILD_NCPUS\" -gt \"$ncpus_max\" ]; then RPM_BUILD_NCPUS=\"$ncpus_max\"; fi; "   \
	"\\\n        echo \"$RPM_BUILD_NCPUS\";"

struct shlite_case {
	const char *cmd;
	bool fast; /* the evaluator takes it (else: the real shell must run) */
};

static const struct shlite_case cases[] = {
    /* Taken in-process. */
    {"", true},
    {"\n\n", true},
    {"echo", true},
    {"echo hi", true},
    {"echo a b   c", true},
    {"echo 'a  b' \"c  d\"", true},
    {"echo a\\ b", true},
    {"echo \"$RPM_BUILD_NCPUS\"", true},
    {"echo $RPM_BUILD_NCPUS", true},
    {"echo ${RPM_BUILD_NCPUS}x", true},
    {"echo x$UNSET_VAR y", true},
    {"echo $UNSET_VAR", true},
    {"echo $EMPTY z $EMPTY", true},
    {"echo \"$UNSET_VAR\" z", true},
    {"echo \"\" z", true},
    {"echo '' ''", true},
    {"echo \"$SP\"", true},
    {"echo \"[$STAR]\"", true},
    {"echo $DUP", true},
    {"X=1; echo $X", true},
    {"X=1 Y=$X; echo $Y", true},
    {"X='a b'; echo \"$X\"", true},
    {"X=\"$SP\"; Y=$X; echo \"$Y\"", false}, /* unquoted: no finer rule for assignments */
    {"RPM_BUILD_NCPUS=7; echo $RPM_BUILD_NCPUS", true},
    {"X=; echo \"[$X]\"", true},
    {"X=1\nX=2\necho $X", true},
    {"true && echo yes", true},
    {"false && echo yes", true},
    {"false || echo no", true},
    {"true || echo no; echo after", true},
    {": ; echo colon", true},
    {": a b $X; echo colon", true},
    {"! true && echo a || echo b", true},
    {"! false && echo a", true},
    {"false && echo a || echo b && echo c", true},
    {"true || echo a && echo b", true},
    {"[ -z \"$UNSET_VAR\" ] && echo empty", true},
    {"[ -n \"$RPM_BUILD_NCPUS\" ] && echo set", true},
    {"[ -n $UNSET_VAR ] && echo one-arg", true},
    {"[ -z $UNSET_VAR ] && echo one-arg-z", true},
    {"[ $UNSET_VAR ] || echo zero-args", true},
    {"[ abc ] && echo t", true},
    {"[ '' ] || echo f", true},
    {"[ a = a ] && echo eq", true},
    {"[ a = b ] || echo ne", true},
    {"[ a != b ] && echo ne", true},
    {"[ \"\" = \"\" ] && echo empty-eq", true},
    {"[ 3 -gt 2 ] && echo gt", true},
    {"[ -3 -lt 2 ] && echo lt", true},
    {"[ 007 -eq 7 ] && echo eq7", true},
    {"[ -0 -eq 0 ] && echo zero", true},
    {"[ 2 -ge 2 ] && [ 2 -le 2 ] && [ 1 -ne 2 ] && echo ok", true},
    {"[ 2 -gt 2 ] || [ 3 -lt 2 ] || echo none", true},
    {"[ 999999999999999999 -gt -999999999999999999 ] && echo big", true},
    {"[ ! a = b ] && echo not", true},
    {"[ ! -z x ] && echo notz", true},
    {"[ ! '' ] && echo bang1", true},
    {"[ ! ] && echo bang-alone", true},
    {"[ ! ! a ] && echo bang-bang", true},
    {"[ -n ] && echo n-alone", true},
    {"[ -z ] && echo z-alone", true},
    {"[ = ] && echo eq-alone", true},
    {"[ ! -n ] || echo not-n-alone", true},
    {"test 1 -eq 1 && echo test", true},
    {"test && echo no || echo empty-test", true},
    {"test ] && echo bracket-arg", true},
    {"if true; then echo a; fi", true},
    {"if false; then echo a; fi", true},
    {"if false; then echo a; else echo b; fi", true},
    {"if false; then echo a; elif true; then echo c; else echo d; fi", true},
    {"if false; then echo a; elif false; then echo c; fi; echo after", true},
    {"if false; then echo a; elif false; then echo c; elif true; then echo e; fi", true},
    {"if true\nthen\n  echo nl\nfi", true},
    {"if\ntrue\nthen\necho x\nelse\necho y\nfi\n", true},
    {"if if true; then false; fi; then echo x; else echo y; fi", true},
    {"if true; then if false; then echo a; else echo b; fi; fi", true},
    {"! if false; then true; fi && echo neg-if || echo pos-if", true},
    {"if false; then echo a; fi && echo if-status", true},
    {"if true; then false; fi || echo if-false", true},
    {"if true; then echo a; fi; echo b", true},
    {"if true; then echo a; fi && echo b", true},
    {"echo a;", true},
    {"echo a;\n", true},
    {"echo a\necho b\n\n", true},
    {"echo a &&\n echo b", true},
    {"false ||\n\n echo b", true},
    {"echo a \\\n b", true},
    {"ec\\\nho joined", true},
    {"echo \"a\\\"b\"", true},
    {"echo \"a\\$b\"", true},
    {"echo \"a\\\nb\"", true},
    {"echo 'it''s'", true},
    {"echo \"it's\"", true},
    {"echo 'say \"hi\"'", true},
    {"echo a#b", true},
    {"echo a=b", true},
    {"echo ] ]", true},
    {"echo [", true},
    {"echo !", true},
    {"echo a!b", true},
    {"echo x -n", true},
    {"echo \"tab\there\"", true},
    {"\"echo\" quoted-name", true},
    {"e'ch'o partly-quoted", true},
    {"X=5; [ \"$X\" -gt 3 ] && echo big", true},
    {"X=5; if [ -n \"$X\" ]; then echo set; fi", true},
    {"[ \"$RPM_BUILD_NCPUS\" -gt 2 ] && echo many", true},
    {"[ $RPM_BUILD_NCPUS -eq 4 ] && echo four", true},
    {NCPUS(""), true},
    {NCPUS("0"), true},
    {NCPUS("1"), true},
    {NCPUS("8"), true},
    {"echo builder", true},

    /* Outside the subset: the real shell runs them. */
    {"echo $(true)", false},
    {"echo `true`", false},
    {"echo \"`true`\"", false},
    {"echo a > /dev/null", false},
    {"echo a 2>&1", false},
    {"echo a < /dev/null", false},
    {"echo a | cat", false},
    {"echo a &", false},
    {"(echo a)", false},
    {"{ echo a; }", false},
    {"echo *", false},
    {"echo a?", false},
    {"echo [ab]", false},
    {"echo a[", false},
    {"echo ~", false},
    {"X=~", false},
    {"echo {a,b}", false},
    {"# comment", false},
    {"echo a # comment", false},
    {"ls /", false},
    {"exit 0", false},
    {"/bin/echo a", false},
    {"X=1 echo a", false},
    {"X=1 true", false},
    {"echo $1", false},
    {"echo $?", false},
    {"echo $$", false},
    {"echo $#", false},
    {"echo $@", false},
    {"echo ${X:-y}", false},
    {"echo ${#X}", false},
    {"echo $((1+2))", false},
    {"echo $", false},
    {"echo \"$\"", false},
    {"echo $HOME", false},
    {"echo \"$PWD\"", false},
    {"echo $IFS", false},
    {"IFS=:; echo a", false},
    {"PATH=/; echo a", false},
    {"echo -n a", false},
    {"echo -e a", false},
    {"echo - a", false},
    {"echo $DASH a", false},
    {"echo 'a\\nb'", false},
    {"echo \"a\\\\b\"", false},
    {"echo \"$BS\"", false},
    {"echo $BS", false},
    {"echo $SP", false},
    {"echo $STAR", false},
    {"X=\"$SP\"; echo $X", false},
    {"[ a -gt 1 ]", false},
    {"[ '' -eq 0 ]", false},
    {"[ 1 -eq ]", false},
    {"[ 1 -eq 1 2 ]", false},
    {"[ a b ]", false},
    {"[ a = b", false},
    {"[ a == a ]", false},
    {"[ -f /etc/passwd ]", false},
    {"[ -d / ] && echo dir", false},
    {"[ a = b -o c = c ]", false},
    {"[ a = a -a b = b ]", false},
    {"test -n = x", false},
    {"[ -n = -n ]", false},
    {"[ 99999999999999999999 -gt 1 ]", false},
    {"[ 1 -gt 0x1 ]", false},
    {"[ +1 -eq 1 ]", false},
    {"[ ' 1' -eq 1 ]", false},
    {"[ 1.5 -gt 1 ]", false},
    {"if true; then fi", false},
    {"if true; then echo a", false},
    {"if true; then echo a; fi fi", false},
    {"if true; then echo a; fi echo", false},
    {"if true; then echo a; else echo b; elif true; then echo c; fi", false},
    {"if; then echo a; fi", false},
    {"then", false},
    {"fi", false},
    {"echo a; fi", false},
    {"echo a;;", false},
    {"; echo a", false},
    {"echo a; ;", false},
    {"echo a &&", false},
    {"&& echo a", false},
    {"echo a\n&& echo b", false},
    {"! ! true", false},
    {"!", false},
    {"! ", false},
    {"while true; do :; done", false},
    {"until true; do :; done", false},
    {"case a in a) echo;; esac", false},
    {"for i in 1; do echo; done", false},
    {"f() { :; }", false},
    {"echo a\\", false},
    {"echo 'unterminated", false},
    {"echo \"unterminated", false},
    {"echo \xc3\xa9", false},
    {"echo a\rb", false},
    {"$X", false},
    {"\"$X\" a", false},
    {"$EMPTY echo a", false},
    {"set -e; echo a", false},
    {"export X=1", false},
    {"unset X", false},
    {"read X", false},
    {"cd /", false},
    {"time echo a", false},
    {"[[ a = a ]]", false},
    {"echo $'a'", false},
    {"! /usr/bin/make --version -O >/dev/null 2>&1 || echo -O", false},
    {"bash -c 'echo ~/.rpmdb'", false},
};

/* stdout of `sh -c cmd` (the program at path, named sh: bash then runs in POSIX mode)
 * started with env; the exit status is ignored, as rpm does. */
static void run_sh(const char *path, const char *cmd, const char *const *env, struct kiln_buf *out)
{
	char *const argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
	struct kiln_err err = KILN_ERR_INIT;
	posix_spawn_file_actions_t fa;
	int fds[2];
	pid_t pid;
	int status;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO), 0);
	assert_int_equal(
	    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0), 0);
	assert_int_equal(posix_spawn(&pid, path, &fa, NULL, argv, (char *const *)env), 0);
	posix_spawn_file_actions_destroy(&fa);
	util_close(fds[1]);
	assert_ok(util_read_fd(fds[0], out, &err), &err);
	util_close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* Prints what differs; false then. */
static bool check_case(const struct shlite_case *c, const char *const *env)
{
	static const char *const shells[] = {"/bin/sh", "/bin/bash"};
	bool ok = true;
	size_t i;
	struct kiln_buf fast = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf real = KILN_BUF_INIT(KILN_MIB);
	bool took;

	kiln_buf_addstr(&fast, "untouched");
	took = macro_shlite_run(c->cmd, env, &fast);
	if (took != c->fast) {
		print_error("%s: evaluator %s it\n", c->cmd, took ? "took" : "refused");
		ok = false;
	}
	if (!took) {
		assert_string_equal(fast.ptr, "untouched");
	} else {
		/* dash here; bash, /bin/sh on other distributions, must agree too. */
		for (i = 0; i < KILN_ARRAY_SIZE(shells); i++) {
			if (access(shells[i], X_OK))
				continue;
			kiln_buf_reset(&real);
			run_sh(shells[i], c->cmd, env, &real);
			if (fast.len != real.len + 9 || memcmp(fast.ptr + 9, real.ptr, real.len)) {
				print_error("%s: evaluator printed [%s], %s [%s]\n", c->cmd,
				            fast.ptr + 9, shells[i], real.ptr);
				ok = false;
			}
		}
	}
	kiln_buf_release(&fast);
	kiln_buf_release(&real);
	return ok;
}

KILN_TEST(shlite_matches_sh)
{
	size_t i, bad = 0;

	for (i = 0; i < KILN_ARRAY_SIZE(cases); i++)
		bad += !check_case(&cases[i], env_base);
	assert_int_equal(bad, 0);
}

KILN_TEST(shlite_matches_sh_without_ncpus)
{
	static const struct shlite_case ncpus[] = {
	    {NCPUS(""), true},
	    {NCPUS("0"), true},
	    {NCPUS("1"), true},
	    {"echo \"$RPM_BUILD_NCPUS\" $RPM_BUILD_NCPUS end", true},
	};
	size_t i, bad = 0;

	for (i = 0; i < KILN_ARRAY_SIZE(ncpus); i++)
		bad += !check_case(&ncpus[i], env_no_ncpus);
	assert_int_equal(bad, 0);
}

KILN_TEST(shlite_refuses_imported_functions)
{
	static const struct shlite_case c = {"echo hi", false};

	assert_true(check_case(&c, env_bash_func));
}

KILN_TEST(shlite_limits)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf small = KILN_BUF_INIT(4);
	struct kiln_buf cmd = KILN_BUF_INIT(KILN_MIB);
	size_t i;

	/* Doubling a variable: the value bound sends it to the shell, nothing explodes. */
	kiln_buf_addstr(&cmd, "X=ab");
	for (i = 0; i < 40; i++)
		kiln_buf_addstr(&cmd, "; X=$X$X");
	kiln_buf_addstr(&cmd, "; echo \"$X\"");
	assert_false(macro_shlite_run(cmd.ptr, env_base, &out));
	/* Nesting deeper than the bound. */
	kiln_buf_reset(&cmd);
	for (i = 0; i < 40; i++)
		kiln_buf_addstr(&cmd, "if true; then ");
	kiln_buf_addstr(&cmd, "echo deep");
	for (i = 0; i < 40; i++)
		kiln_buf_addstr(&cmd, "; fi");
	assert_false(macro_shlite_run(cmd.ptr, env_base, &out));
	/* Output that does not fit the caller's buffer: the shell path reports the limit. */
	assert_false(macro_shlite_run("echo 12345", env_base, &small));
	assert_int_equal(small.len, 0);
	assert_true(macro_shlite_run("echo 12", env_base, &small));
	assert_string_equal(small.ptr, "12\n");
	kiln_buf_release(&out);
	kiln_buf_release(&small);
	kiln_buf_release(&cmd);
}

KILN_TEST(shlite_host_shell_switch)
{
	struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;

	/* Same text whichever path runs it. */
	assert_ok(macro_shell_host(NULL, "X=a; [ -n \"$X\" ] && echo \"$X\"", &out, &err), &err);
	assert_string_equal(out.ptr, "a\n");
	assert_int_equal(setenv("KILN_NO_SHLITE", "1", 1), 0);
	kiln_buf_reset(&out);
	assert_ok(macro_shell_host(NULL, "X=a; [ -n \"$X\" ] && echo \"$X\"", &out, &err), &err);
	assert_string_equal(out.ptr, "a\n");
	assert_int_equal(unsetenv("KILN_NO_SHLITE"), 0);
	kiln_buf_release(&out);
}
