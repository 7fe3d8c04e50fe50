/*
 * env.c - the command's environment and argv, built by kiln before fork.
 *
 * The caller passes the whole environment (the pipeline builds RPM_*, SOURCE_DATE_EPOCH and
 * the rest); nothing of kiln's own environment leaks through. The fixed parts are enforced
 * here: TZ=UTC always, HOME=<sandbox home> in the sandbox, and PATH and LANG=C.UTF-8 when the
 * caller gave none, so two runs see the same variables whatever the host's environment.
 */
#include "util/util.h"

#include "chroot/chroot_int.h"

static bool env_name_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static ptrdiff_t env_find(char **list, size_t n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strncmp(list[i], name, len) && list[i][len] == '=')
			return (ptrdiff_t)i;
	}
	return -1;
}

static kiln_rc env_put(char **list, size_t *n, struct kiln_arena *a, const char *name,
                       const char *value, bool force, struct kiln_err *err)
{
	ptrdiff_t at = env_find(list, *n, name, strlen(name));
	char *s;

	if (at >= 0 && !force)
		return KILN_OK;
	s = kiln_arena_printf(a, "%s=%s", name, value);
	if (!s)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (at >= 0)
		list[at] = s;
	else
		list[(*n)++] = s;
	return KILN_OK;
}

static kiln_rc env_copy(const char *const *env, char **list, size_t *n, struct kiln_arena *a,
                        struct kiln_err *err)
{
	size_t i;

	for (i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		size_t len = eq ? (size_t)(eq - env[i]) : 0;

		if (i >= CHROOT_ENV_MAX - 8)
			return kiln_err_set(err, KILN_ELIMIT, "too many environment variables (%d)",
			                    CHROOT_ENV_MAX - 8);
		if (!eq || !env_name_ok(env[i], len))
			return kiln_err_set(err, KILN_EINVAL,
			                    "bad environment entry '%.64s': want NAME=VALUE",
			                    env[i]);
		if (env_find(list, *n, env[i], len) >= 0)
			return kiln_err_set(err, KILN_EINVAL,
			                    "environment variable '%.*s' given twice", (int)len,
			                    env[i]);
		list[*n] = kiln_arena_strdup(a, env[i]);
		if (!list[*n])
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
		(*n)++;
	}
	return KILN_OK;
}

kiln_rc chroot_env_build(const char *const *env, const char *home, struct kiln_arena *a,
                         char ***out, const char **path_out, struct kiln_err *err)
{
	char **list = kiln_arena_array(a, CHROOT_ENV_MAX, sizeof(*list));
	size_t n = 0;
	ptrdiff_t at;
	kiln_rc rc;

	if (!list)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	rc = env_copy(env, list, &n, a, err);
	if (!rc)
		rc = env_put(list, &n, a, "TZ", "UTC", true, err);
	if (!rc && home)
		rc = env_put(list, &n, a, "HOME", home, true, err);
	if (!rc)
		rc = env_put(list, &n, a, "PATH", CHROOT_DEFAULT_PATH, false, err);
	if (!rc)
		rc = env_put(list, &n, a, "LANG", "C.UTF-8", false, err);
	if (rc)
		return rc;
	list[n] = NULL;
	at = env_find(list, n, "PATH", 4);
	*path_out = at >= 0 ? list[at] + 5 : CHROOT_DEFAULT_PATH;
	*out = list;
	return KILN_OK;
}

kiln_rc chroot_argv_copy(const char *const *argv, struct kiln_arena *a, char ***out,
                         struct kiln_err *err)
{
	size_t n = 0;
	size_t i;
	char **v;

	while (argv && argv[n])
		n++;
	if (!n || !argv[0][0])
		return kiln_err_set(err, KILN_EINVAL, "no command to run");
	if (n > 65536)
		return kiln_err_set(err, KILN_ELIMIT, "too many arguments (%zu)", n);
	v = kiln_arena_array(a, n + 1, sizeof(*v));
	if (!v)
		return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		v[i] = kiln_arena_strdup(a, argv[i]);
		if (!v[i])
			return kiln_err_set(err, KILN_ENOMEM, "out of memory");
	}
	v[n] = NULL;
	*out = v;
	return KILN_OK;
}
