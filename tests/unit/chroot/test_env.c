#include "util/util.h"

#include "tests/unit/chroot/chroot_test.h"

static const char *env_get(char **env, const char *name)
{
	size_t n = strlen(name);

	for (; *env; env++) {
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	}
	return NULL;
}

KILN_TEST(env_forces_tz_home_and_fills_defaults)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *in[] = {"TZ=Europe/Paris", "HOME=/root", "FOO=bar=baz", NULL};
	const char *path = NULL;
	char **env = NULL;

	assert_ok(chroot_env_build(in, "/builddir", &a, &env, &path, &err), &err);
	assert_string_equal(env_get(env, "TZ"), "UTC");
	assert_string_equal(env_get(env, "HOME"), "/builddir");
	assert_string_equal(env_get(env, "FOO"), "bar=baz");
	assert_string_equal(env_get(env, "PATH"), CHROOT_DEFAULT_PATH);
	assert_string_equal(env_get(env, "LANG"), "C.UTF-8");
	assert_string_equal(path, CHROOT_DEFAULT_PATH);
	kiln_arena_release(&a);
}

KILN_TEST(env_keeps_callers_path_lang_and_home_on_host)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *in[] = {"PATH=/opt/bin", "LANG=de_DE.UTF-8", "HOME=/home/me", NULL};
	const char *path = NULL;
	char **env = NULL;
	size_t n = 0;

	assert_ok(chroot_env_build(in, NULL, &a, &env, &path, &err), &err);
	assert_string_equal(path, "/opt/bin");
	assert_string_equal(env_get(env, "LANG"), "de_DE.UTF-8");
	assert_string_equal(env_get(env, "HOME"), "/home/me");
	while (env[n])
		n++;
	assert_int_equal(n, 4); /* the three given plus TZ: nothing of kiln's environment */
	kiln_arena_release(&a);
}

KILN_TEST(env_rejects_bad_and_duplicate_entries)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *noeq[] = {"JUSTNAME", NULL};
	const char *badname[] = {"1X=2", NULL};
	const char *dup[] = {"A=1", "A=2", NULL};
	const char *path;
	char **env;

	assert_int_equal(chroot_env_build(noeq, NULL, &a, &env, &path, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "JUSTNAME"));
	kiln_err_clear(&err);
	assert_int_equal(chroot_env_build(badname, NULL, &a, &env, &path, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(chroot_env_build(dup, NULL, &a, &env, &path, &err), KILN_EINVAL);
	assert_non_null(strstr(err.msg, "twice"));
	kiln_arena_release(&a);
}

KILN_TEST(env_argv_copy)
{
	struct kiln_arena a = KILN_ARENA_INIT(KILN_MIB);
	struct kiln_err err = KILN_ERR_INIT;
	const char *argv[] = {"sh", "-c", "true", NULL};
	const char *empty[] = {NULL};
	const char *blank[] = {"", NULL};
	char **v = NULL;

	assert_ok(chroot_argv_copy(argv, &a, &v, &err), &err);
	assert_string_equal(v[2], "true");
	assert_null(v[3]);
	assert_int_equal(chroot_argv_copy(empty, &a, &v, &err), KILN_EINVAL);
	kiln_err_clear(&err);
	assert_int_equal(chroot_argv_copy(blank, &a, &v, &err), KILN_EINVAL);
	kiln_arena_release(&a);
}
