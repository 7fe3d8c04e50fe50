/*
 * self.c - locating the running binary and kiln's configuration directory.
 *
 * Nothing absolute is compiled in: the build tree and an installed tree are both found
 * relative to /proc/self/exe, so a checkout works wherever it lives.
 */
#include "util/util.h"

#include <unistd.h>

kiln_rc util_self_exe(struct kiln_buf *out, struct kiln_err *err)
{
	char path[KILN_LIMIT_PATH];
	ssize_t n;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n < 0)
		return kiln_err_sys(err, KILN_EIO, "cannot read /proc/self/exe");
	if ((size_t)n >= sizeof(path) - 1)
		return kiln_err_set(err, KILN_ELIMIT, "path of the running binary is too long");
	kiln_buf_add(out, path, (size_t)n);
	return kiln_buf_finish(out, err);
}

static bool configdir_try(struct kiln_buf *out, const char *bindir, const char *rel)
{
	struct kiln_buf probe = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf dir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf joined = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_err ignored = KILN_ERR_INIT;
	bool found = false;

	kiln_buf_addf(&joined, "%s/%s", bindir, rel);
	if (joined.err || util_path_normalize(joined.ptr, &dir, &ignored))
		goto out;
	kiln_buf_addf(&probe, "%s/macros", dir.ptr);
	if (!probe.err && util_exists(probe.ptr)) {
		kiln_buf_add(out, dir.ptr, dir.len);
		found = true;
	}
out:
	kiln_buf_release(&joined);
	kiln_buf_release(&probe);
	kiln_buf_release(&dir);
	return found;
}

kiln_rc util_configdir_find(struct kiln_buf *out, struct kiln_err *err)
{
	struct kiln_buf exe = KILN_BUF_INIT(KILN_LIMIT_PATH);
	struct kiln_buf bindir = KILN_BUF_INIT(KILN_LIMIT_PATH);
	const char *env = getenv("KILN_CONFIGDIR");
	kiln_rc rc;

	if (env && *env) {
		kiln_buf_addstr(out, env);
		return kiln_buf_finish(out, err);
	}
	rc = util_self_exe(&exe, err);
	if (rc)
		goto out;
	util_path_dirname(exe.ptr, &bindir);
	/* The tree layout decides, not a compiled-in prefix: build/kiln sits beside configs/,
	 * PREFIX/bin/kiln beside PREFIX/lib/kiln. ".." is resolved lexically on purpose. */
	if (configdir_try(out, bindir.ptr, "../configs") ||
	    configdir_try(out, bindir.ptr, "../lib/kiln")) {
		rc = kiln_buf_finish(out, err);
		goto out;
	}
	rc = kiln_err_set(err, KILN_ENOTFOUND,
	                  "cannot find kiln's configuration next to '%s' (set KILN_CONFIGDIR)",
	                  exe.ptr);
out:
	kiln_buf_release(&exe);
	kiln_buf_release(&bindir);
	return rc;
}
