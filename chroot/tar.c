/*
 * tar.c - tar: roots: an image unpacked once into a cache directory keyed by its sha256, and
 * then used like a dir: root (read-only lower layer of every build's overlay).
 *
 * The unpacking itself runs GNU tar inside a kiln sandbox whose only writable path is the
 * fresh directory being filled. That is the root-escape protection: whatever the archive
 * holds (absolute names, "..", symlinks pointing out and then files written through them,
 * device nodes), tar can only reach the sandbox's view, where the host is read-only and the
 * target is the one bind; tar itself also refuses absolute and ".." names. The directory is
 * moved into place only when tar succeeded, so a cache entry is always complete, and two
 * builds unpacking the same image at once both end up using one of them.
 */
#include "util/util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chroot/chroot_int.h"

#define TAR_TIMEOUT_MS (30 * 60 * 1000)

kiln_rc chroot_cache_dir(const char *configured, struct kiln_buf *out, struct kiln_err *err)
{
	const char *env = getenv("KILN_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	kiln_buf_reset(out);
	if (configured && *configured)
		kiln_buf_addstr(out, configured);
	else if (env && *env)
		kiln_buf_addstr(out, env);
	else if (xdg && *xdg == '/')
		kiln_buf_addf(out, "%s/kiln", xdg);
	else if (home && *home == '/')
		kiln_buf_addf(out, "%s/.cache/kiln", home);
	else
		return kiln_err_set(err, KILN_EINVAL,
		                    "no cache directory: set KILN_CACHE_DIR or HOME");
	return kiln_buf_finish(out, err);
}

static void collect_stderr(void *data, int stream, const char *buf, size_t len)
{
	struct kiln_buf *b = data;

	/* Keep what fits; the message only needs tar's first complaints. */
	if (stream == 2 && b->len + len < b->max)
		kiln_buf_add(b, buf, len);
}

static kiln_rc unpack(const char *tarfile, const char *dir, struct kiln_err *err)
{
	struct kiln_buf errout = KILN_BUF_INIT(16 * KILN_KIB);
	struct chroot_bind binds[] = {{tarfile, "/in/image", true}, {dir, "/out", false}};
	const char *argv_root[] = {"tar", "-x", "-f", "/in/image", "-C", "/out", "--numeric-owner",
	                           NULL};
	const char *argv_user[] = {
	    "tar", "-x", "-f", "/in/image", "-C", "/out", "--numeric-owner", "--no-same-owner",
	    NULL};
	const char *env[] = {NULL};
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	struct chroot_run run = {geteuid() == 0 ? argv_root : argv_user,
	                         env,
	                         "/",
	                         -1,
	                         -1,
	                         -1,
	                         NULL,
	                         collect_stderr,
	                         &errout,
	                         TAR_TIMEOUT_MS,
	                         0};
	kiln_rc rc;

	memset(&res, 0, sizeof(res));
	chroot_config_init(&cfg);
	cfg.kind = CHROOT_EXEC_SANDBOX;
	cfg.binds = binds;
	cfg.nbinds = KILN_ARRAY_SIZE(binds);
	cfg.hostname = "kiln-unpack";
	rc = chroot_exec_new(&cfg, &ex, err);
	if (!rc)
		rc = chroot_exec_run(ex, &run, &res, err);
	kiln_buf_rtrim(&errout, "\n");
	if (!rc && res.exit_code != 0)
		rc = kiln_err_set(err, KILN_EFORMAT,
		                  "cannot unpack '%s': tar exited with %d: %.300s", tarfile,
		                  res.exit_code, errout.ptr);
	else if (!rc && res.signal)
		rc = kiln_err_set(err, KILN_EFORMAT, "cannot unpack '%s': tar killed by signal %d",
		                  tarfile, res.signal);
	chroot_exec_free(ex);
	kiln_buf_release(&errout);
	return rc;
}

/* Fill a fresh temporary directory next to final, then rename it into place. */
static kiln_rc unpack_into_cache(const char *tarfile, const char *roots, const char *hex,
                                 const char *final, struct kiln_err *err)
{
	struct kiln_err ignore = KILN_ERR_INIT;
	char tmp[KILN_LIMIT_PATH];
	kiln_rc rc;

	if (snprintf(tmp, sizeof(tmp), "%s/.unpack-%.16s-XXXXXX", roots, hex) >= (int)sizeof(tmp))
		return kiln_err_set(err, KILN_ELIMIT, "cache path too long");
	if (!mkdtemp(tmp))
		return kiln_err_sys(err, KILN_EIO, "cannot create a directory in '%s'", roots);
	/* The image's "./" entry sets the final mode; until then a root must be searchable. */
	if (chmod(tmp, 0755) < 0) {
		rc = kiln_err_sys(err, KILN_EIO, "cannot chmod '%s'", tmp);
		goto out;
	}
	rc = unpack(tarfile, tmp, err);
	if (rc)
		goto out;
	if (rename(tmp, final) < 0) {
		/* Someone else unpacked the same image first: theirs is as good as ours. */
		if ((errno == EEXIST || errno == ENOTEMPTY) && util_is_dir(final))
			goto out;
		rc = kiln_err_sys(err, KILN_EIO, "cannot move the unpacked image to '%s'", final);
	}
out:
	if (util_exists(tmp) && util_rm_rf(tmp, &ignore))
		kiln_log_err(KILN_LOG_WARN, &ignore);
	return rc;
}

kiln_rc chroot_tar_root(const char *tarfile, const char *cache_dir, struct kiln_arena *a,
                        char **dir, struct kiln_err *err)
{
	struct kiln_buf cache = KILN_BUF_INIT(KILN_LIMIT_PATH);
	char hex[2 * UTIL_DIGEST_MAX + 1];
	char *roots = NULL;
	char *final = NULL;
	kiln_rc rc;

	*dir = NULL;
	if (!util_exists(tarfile))
		return kiln_err_set(err, KILN_ENOTFOUND, "root image '%s' does not exist", tarfile);
	rc = util_digest_file_hex(UTIL_DIGEST_SHA256, tarfile, hex, err);
	if (!rc)
		rc = chroot_cache_dir(cache_dir, &cache, err);
	if (rc)
		goto out;
	roots = kiln_arena_printf(a, "%s/roots", cache.ptr);
	final = kiln_arena_printf(a, "%s/roots/%s", cache.ptr, hex);
	if (!roots || !final) {
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
		goto out;
	}
	if (util_is_dir(final))
		goto done;
	rc = util_mkdir_p(roots, 0755, err);
	if (!rc)
		rc = unpack_into_cache(tarfile, roots, hex, final, err);
	if (rc)
		goto out;
done:
	*dir = final;
out:
	if (rc)
		kiln_err_wrap(err, "root image '%s'", tarfile);
	kiln_buf_release(&cache);
	return rc;
}
