/*
 * srpm.c - where a build's spec comes from other than a spec file: a source package
 * (rpmbuild -r, --rebuild: installed into %{_sourcedir} and %{_specdir} as rpm -i does) or
 * a tarball carrying its spec (rpmbuild -t).
 */
#include "util/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/build_int.h"

static const char *srpm_expand(struct macro_ctx *mc, struct kiln_arena *a, const char *s,
                               struct kiln_err *err)
{
	char *out = NULL;
	const char *r;

	if (macro_expand_str(mc, s, &out, err))
		return NULL;
	r = kiln_arena_strdup(a, out);
	free(out);
	if (!r)
		kiln_err_set(err, KILN_ENOMEM, "out of memory");
	return r;
}

/* Copy the current payload entry's data to path (mode from the package, 0644 at most
 * group/world-writable bits dropped). */
static kiln_rc srpm_entry_save(struct pack_payload *pl, const struct pack_file_info *fi,
                               const char *path, struct kiln_err *err)
{
	struct util_atomic_file f;
	char buf[65536];
	size_t got;
	kiln_rc rc;

	rc = util_atomic_open(&f, path, (fi->mode & 0755) | 0600, err);
	if (rc)
		return rc;
	do {
		rc = pack_payload_read(pl, buf, sizeof(buf), &got, err);
		if (!rc && got)
			rc = util_write_all(f.fd, buf, got, err);
	} while (!rc && got);
	if (!rc)
		rc = util_atomic_commit(&f, err);
	else
		util_atomic_abort(&f);
	return rc;
}

kiln_rc worker_srpm_pkgid(const char *srpm, struct worker_build_opts *o, struct kiln_err *err)
{
	struct pack_package p = {0};
	const struct pack_entry *md5;
	kiln_rc rc = pack_package_open(&p, srpm, NULL, err);

	md5 = rc ? NULL : pack_header_get(&p.sig, PACK_SIGTAG_MD5);
	if (md5 && md5->type == RPMTAG_TYPE_BIN && md5->count == sizeof(o->source_pkgid)) {
		memcpy(o->source_pkgid, md5->data, sizeof(o->source_pkgid));
		o->has_source_pkgid = true;
	}
	pack_package_release(&p);
	return rc;
}

kiln_rc worker_srpm_install(const char *srpm, struct macro_ctx *mc, struct kiln_arena *a,
                            const char **spec_path, struct kiln_err *err)
{
	struct pack_package p = {0};
	struct pack_payload *pl = NULL;
	struct pack_file_info fi;
	const char *srcdir, *specdir;
	int fd = -1;
	kiln_rc rc;

	*spec_path = NULL;
	srcdir = srpm_expand(mc, a, "%{_sourcedir}", err);
	specdir = srcdir ? srpm_expand(mc, a, "%{_specdir}", err) : NULL;
	if (!specdir)
		return err->code ? err->code : KILN_ENOMEM;
	rc = pack_package_open(&p, srpm, &fd, err);
	if (!rc && !p.source)
		rc = kiln_err_set(err, KILN_EINVAL, "%s: not a source package", srpm);
	if (!rc)
		rc = util_mkdir_p(srcdir, 0755, err);
	if (!rc)
		rc = util_mkdir_p(specdir, 0755, err);
	if (!rc)
		rc = pack_payload_open(&p, fd, &pl, err);
	while (!rc && !(rc = pack_payload_next(pl, &fi, err))) {
		bool spec = (fi.flags & RPMTAG_FILE_SPECFILE) != 0;
		const char *dst;

		if (!S_ISREG(fi.mode))
			continue;
		if (!fi.path[0] || strchr(fi.path, '/') || !strcmp(fi.path, "..") ||
		    !strcmp(fi.path, ".")) {
			rc = kiln_err_set(err, KILN_EFORMAT,
			                  "%s: bad file name in a source package: %s", srpm,
			                  fi.path);
			break;
		}
		dst = kiln_arena_printf(a, "%s/%s", spec ? specdir : srcdir, fi.path);
		if (!dst) {
			rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
			break;
		}
		rc = srpm_entry_save(pl, &fi, dst, err);
		if (!rc && spec && !*spec_path)
			*spec_path = dst;
	}
	if (rc == KILN_ENOTFOUND) {
		kiln_err_clear(err);
		rc = KILN_OK;
	}
	if (!rc && !*spec_path)
		rc = kiln_err_set(err, KILN_ENOTFOUND, "%s: no spec file in the source package",
		                  srpm);
	pack_payload_free(pl);
	pack_package_release(&p);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Run argv on the host, stdout into out. */
static kiln_rc srpm_run(const char *const *argv, struct kiln_buf *out, struct kiln_err *err)
{
	static const char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	struct chroot_config cfg;
	struct chroot_exec *ex = NULL;
	struct chroot_result res;
	struct chroot_run run;
	kiln_rc rc;

	chroot_config_init(&cfg);
	rc = chroot_exec_new(&cfg, &ex, err);
	if (rc)
		return rc;
	memset(&run, 0, sizeof(run));
	run.argv = argv;
	run.env = env;
	run.stdin_fd = -1;
	run.stdout_fd = -1;
	run.stderr_fd = STDERR_FILENO;
	run.capture = out;
	rc = chroot_exec_run(ex, &run, &res, err);
	if (!rc && res.exit_code != 0)
		rc = kiln_err_set(err, KILN_EBUILD, "%s exited with status %d", argv[0],
		                  res.exit_code);
	chroot_exec_free(ex);
	return rc;
}

/* rpmbuild -t looks for the spec at the top of the archive or one directory down. */
static const char *srpm_tar_pick_spec(char *list)
{
	char *line, *rest;

	for (rest = list; (line = build_line_next(&rest)) != NULL;) {
		size_t len = strlen(line);
		const char *p = line;
		int slashes = 0;

		if (!strncmp(p, "./", 2))
			p += 2;
		for (const char *q = p; *q; q++)
			slashes += *q == '/';
		if (len > 5 && !strcmp(line + len - 5, ".spec") && slashes <= 1)
			return line;
	}
	return NULL;
}

kiln_rc worker_tarball_spec(const char *tarball, struct macro_ctx *mc, struct kiln_arena *a,
                            const char **spec_path, struct kiln_err *err)
{
	struct kiln_buf list = KILN_BUF_INIT(64 << 20), spec = KILN_BUF_INIT(KILN_LIMIT_SPEC_BYTES);
	const char *srcdir, *specdir, *member, *dst, *copy;
	const char *targv[] = {"tar", "-tf", tarball, NULL};
	kiln_rc rc;

	*spec_path = NULL;
	srcdir = srpm_expand(mc, a, "%{_sourcedir}", err);
	specdir = srcdir ? srpm_expand(mc, a, "%{_specdir}", err) : NULL;
	if (!specdir)
		return err->code ? err->code : KILN_ENOMEM;
	if (!util_exists(tarball))
		return kiln_err_set(err, KILN_ENOTFOUND, "%s: No such file or directory", tarball);
	rc = srpm_run(targv, &list, err);
	if (!rc)
		rc = kiln_buf_finish(&list, err);
	if (rc)
		goto out;
	member = srpm_tar_pick_spec(list.ptr);
	if (!member) {
		rc = kiln_err_set(err, KILN_ENOTFOUND, "Failed to read spec file from %s", tarball);
		goto out;
	}
	{
		const char *xargv[] = {"tar", "-xOf", tarball, member, NULL};

		rc = srpm_run(xargv, &spec, err);
	}
	dst = kiln_arena_printf(a, "%s/%s", specdir, util_path_basename(member));
	copy = kiln_arena_printf(a, "%s/%s", srcdir, util_path_basename(tarball));
	if (!rc && (!dst || !copy))
		rc = kiln_err_set(err, KILN_ENOMEM, "out of memory");
	if (!rc)
		rc = util_mkdir_p(specdir, 0755, err);
	if (!rc)
		rc = util_mkdir_p(srcdir, 0755, err);
	if (!rc)
		rc = util_write_atomic(dst, spec.ptr ? spec.ptr : "", spec.len, 0644, err);
	if (!rc && strcmp(copy, tarball) != 0)
		rc = util_copy_file(tarball, copy, 0644, err);
	if (!rc)
		*spec_path = dst;
out:
	kiln_buf_release(&list);
	kiln_buf_release(&spec);
	return rc;
}
