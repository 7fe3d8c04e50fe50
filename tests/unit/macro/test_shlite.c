/*
 * test_shlite.c - the in-process %(...) evaluator against the real /bin/sh: every snippet of
 * the table runs through both with the same environment; the evaluator must take exactly
 * the ones marked fast and print byte for byte what the shell prints for them.
 */
#include "util/util.h"

#include <fcntl.h>
#include <limits.h>
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
    {"echo -O", true},
    {"echo -x -n", true},
    {"echo --", true},
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
    {"echo -E a", false},
    {"echo -neE a", false},
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
    {"echo \"a\\", false},
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
static bool check_case(const struct shlite_case *c, const char *const *env, unsigned flags)
{
	static const char *const shells[] = {"/bin/sh", "/bin/bash"};
	bool ok = true;
	size_t i;
	struct kiln_buf fast = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf real = KILN_BUF_INIT(KILN_MIB);
	bool took;

	kiln_buf_addstr(&fast, "untouched");
	took = macro_shlite_run(c->cmd, env, flags, &fast);
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
		bad += !check_case(&cases[i], env_base, 0);
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
		bad += !check_case(&ncpus[i], env_no_ncpus, 0);
	assert_int_equal(bad, 0);
}

KILN_TEST(shlite_refuses_imported_functions)
{
	static const struct shlite_case c = {"echo hi", false};

	assert_true(check_case(&c, env_bash_func, MACRO_SHLITE_PROGRAMS));
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
	assert_false(macro_shlite_run(cmd.ptr, env_base, 0, &out));
	/* Nesting deeper than the bound. */
	kiln_buf_reset(&cmd);
	for (i = 0; i < 40; i++)
		kiln_buf_addstr(&cmd, "if true; then ");
	kiln_buf_addstr(&cmd, "echo deep");
	for (i = 0; i < 40; i++)
		kiln_buf_addstr(&cmd, "; fi");
	assert_false(macro_shlite_run(cmd.ptr, env_base, 0, &out));
	/* Output that does not fit the caller's buffer: the shell path reports the limit. */
	assert_false(macro_shlite_run("echo 12345", env_base, 0, &small));
	assert_int_equal(small.len, 0);
	assert_true(macro_shlite_run("echo 12", env_base, 0, &small));
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

/* One program by its absolute path, silenced (MACRO_SHLITE_PROGRAMS): taken when /bin/sh is
 * dash (the environment its children get is then known), never when a refusal could come
 * after the program ran. */
static bool sh_is_dash(void)
{
	char path[PATH_MAX];
	const char *base;

	if (!realpath("/bin/sh", path))
		return false;
	base = strrchr(path, '/');
	return base && !strcmp(base + 1, "dash");
}

KILN_TEST(shlite_programs_match_sh)
{
	static const struct shlite_case programs[] = {
	    {"! /usr/bin/make --version -O >/dev/null 2>&1 || echo -O", true},
	    {"! /bin/false >/dev/null 2>&1 || echo x", true},
	    {"/bin/true >/dev/null && echo y", true},
	    {"/bin/false 2>/dev/null >/dev/null || echo z", true},
	    {"/bin/sh -c 'exit 3' >/dev/null || echo three", true},
	    {"/bin/sh -c 'kill -9 $$' >/dev/null 2>&1 || echo killed", true},
	    {"if /usr/bin/test -d / >/dev/null; then echo dir; else echo nodir; fi", true},
	    {"echo before; /bin/true > /dev/null; echo after", true},
	    {"/bin/true", false},
	    {"/bin/true 2>&1 >/dev/null", false},
	    {"/bin/true >/dev/null 1>&2", false},
	    {"/bin/true >/dev/null; /bin/true >/dev/null", false},
	    {"X=1; /bin/true >/dev/null", false},
	    {"/bin/true >/dev/null && echo $RPM_BUILD_NCPUS", false},
	    {"/bin/true >/dev/null; [ a -gt 1 ]", false},
	    {"/bin/true >/dev/null || [ a -gt 1 ]", false},
	    {"if false; then echo -n; fi; /bin/true >/dev/null", false},
	    {"echo a >/dev/null", false},
	    {"true >/dev/null", false},
	    {"/bin/true >>/dev/null", false},
	    {"/bin/true </dev/null >/dev/null", false},
	    {"/bin/true >/tmp/x", false},
	    {"/bin/true 3>/dev/null >/dev/null", false},
	    {"/bin/true >/dev/null 2>&3", false},
	    {"/bin/true >/dev/null 12>&1", false},
	    {"bin/true >/dev/null", false},
	    {"/nonexistent/program >/dev/null 2>&1 || echo missing", false},
	    {">/dev/null", false},
	    {"/bin/true >/dev/null &", false},
	    {"/bin/true >/dev/null | /bin/true", false},
	    {"/bin/true >/dev/null; echo $(true)", false},
	};
	static const struct shlite_case bare = {"/bin/true >/dev/null && echo y", false};
	bool dash = sh_is_dash();
	size_t i, bad = 0;

	for (i = 0; i < KILN_ARRAY_SIZE(programs); i++) {
		struct shlite_case c = programs[i];

		c.fast = c.fast && dash;
		bad += !check_case(&c, env_base, MACRO_SHLITE_PROGRAMS);
	}
	/* Without the flag, no program. */
	bad += !check_case(&bare, env_base, 0);
	assert_int_equal(bad, 0);
}

/* The entries of a NUL-separated environment file, sorted, one a line. */
static void env_sorted(const char *path, struct kiln_buf *out)
{
	struct kiln_buf raw = KILN_BUF_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *lines[256];
	size_t n = 0, i, j;
	const char *p;

	assert_ok(util_read_file(path, KILN_MIB, &raw, &err), &err);
	for (p = raw.ptr; p < raw.ptr + raw.len && n < 256; p += strlen(p) + 1)
		lines[n++] = p;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
			const char *t = lines[j];

			lines[j] = lines[j - 1];
			lines[j - 1] = t;
		}
	for (i = 0; i < n; i++)
		kiln_buf_addf(out, "%s\n", lines[i]);
	kiln_buf_release(&raw);
}

/* A program started without the shell sees the variables dash would hand it: valid names,
 * the last of duplicates, PWD kept when right, else the current directory. */
KILN_TEST(shlite_program_environment)
{
	char cwd[PATH_MAX], pwd[PATH_MAX + 8], cmd[PATH_MAX * 2];
	const char *const env_pwd[] = {"A=1", pwd, "B-C=2", "A=2", "PATH=/usr/bin:/bin", NULL};
	const char *const env_nopwd[] = {"A=1", "PATH=/usr/bin:/bin", "9X=3", NULL};
	const char *const *envs[] = {env_base, env_pwd, env_nopwd};
	const char *dir = kiln_test_tmpdir();
	size_t i;

	if (!sh_is_dash())
		skip();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(pwd, sizeof(pwd), "PWD=%s", cwd);
	for (i = 0; i < KILN_ARRAY_SIZE(envs); i++) {
		struct kiln_buf out = KILN_BUF_INIT(KILN_MIB);
		struct kiln_buf fast = KILN_BUF_INIT(KILN_MIB);
		struct kiln_buf real = KILN_BUF_INIT(KILN_MIB);
		char path[PATH_MAX];

		snprintf(cmd, sizeof(cmd), "/bin/cp /proc/self/environ %s/fast >/dev/null", dir);
		assert_true(macro_shlite_run(cmd, envs[i], MACRO_SHLITE_PROGRAMS, &out));
		snprintf(cmd, sizeof(cmd), "/bin/cp /proc/self/environ %s/real >/dev/null", dir);
		run_sh("/bin/sh", cmd, envs[i], &out);
		snprintf(path, sizeof(path), "%s/fast", dir);
		env_sorted(path, &fast);
		snprintf(path, sizeof(path), "%s/real", dir);
		env_sorted(path, &real);
		assert_string_equal(fast.ptr, real.ptr);
		kiln_buf_release(&out);
		kiln_buf_release(&fast);
		kiln_buf_release(&real);
	}
}
