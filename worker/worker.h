/*
 * worker.h - what a worker does with a job: fetch and cache sources, run a spec's build
 * stages through an executor (host process or the chroot sandbox), turn the buildroot into
 * package file lists with automatic dependencies, and write the binary and source packages.
 *
 * Sections (each owned by its sources; keep additions inside the matching section):
 *   1. Packaged files: %files applied to a buildroot      (worker/filelist.c)
 *   2. Automatic dependencies: ELF, interpreters, pkgconfig (worker/elf.c, worker/autodeps.c)
 *   3. Sources: fetching, verification and the cache     (worker/fetch*.c, worker/cache.c)
 *   4. The build pipeline                                (worker/build.c, package.c, srpm.c)
 */
#ifndef KILN_WORKER_H
#define KILN_WORKER_H

#include "util/util.h"
#include "macro/macro.h"
#include "spec/spec.h"
#include "pack/pack.h"
#include "sign/sign.h"
#include "chroot/chroot.h"

/* ======================================================================================== */
/* 1. Packaged files: %files applied to a buildroot                                         */
/* ======================================================================================== */

/* %files applied to a buildroot the way rpmbuild 4.20 does it (build/files.c): globs with
 * braces, directories recursed unless %dir, %exclude, %ghost, %dev, %config, %doc,
 * %license, %docdir and %__docdir_path, %lang, %caps, %verify, %attr/%defattr, symlink
 * targets, hard-link sets, RemovePathPostfixes, duplicate merging ("File listed twice"),
 * relative %doc/%license copied from the build directory, %files -f lists, FILECLASS and
 * MIME strings from libmagic and FILECOLORS from the ELF class. Every path is resolved
 * beneath the buildroot (openat2 RESOLVE_BENEATH): ".." above "/" and symlinked parents
 * that leave the buildroot are refused, so a hostile %install cannot make kiln package
 * host files. Known differences from rpm: %caps text is kept as written (rpm normalises
 * it through libcap); %pubkey files are packaged but their PUBKEYS header tag is not
 * produced. */

/* The files of one package, ready for pack_write(). Every string and the array live in
 * the list's arena; release with worker_filelist_release(). */
struct worker_filelist {
	struct pack_file *files; /* sorted by path */
	size_t n, cap;
	struct kiln_arena arena;
	/* Buildroot-relative disk paths ("/usr/bin/x", symlinked parents resolved, before
	 * RemovePathPostfixes) of every regular file and symlink the %files lines matched:
	 * packaged, %ghost and %exclude'd ones. What the unpackaged-files check counts as
	 * listed (rpm's check-files input). Sorted, unique. */
	const char **claimed;
	size_t nclaimed, capclaimed;
};

struct worker_filelist_opts {
	const char *buildroot;    /* absolute host path of %{buildroot} */
	const char *builddir;     /* absolute host path where relative %doc/%license and
	                        * %files -f lists are read (the build subdirectory,
	                        * %{_builddir}/%{buildsubdir}) */
	struct macro_ctx *macros; /* %_docdir, %_licensedir, %_docdir_fmt, %__docdir_path,
	                           * %_*_terminate_build; warnings go to its diagnostics */
	bool clamp_mtime;         /* clamp mtimes to clamp_to (%build_mtime_policy) */
	uint32_t clamp_to;
	/* The mtime of entries that do not exist on disk (%ghost, %dev): rpm uses "now"
	 * (then clamps); 0 means the wall clock. */
	uint32_t now;
	/* rpm <= 4.19.0: without %attr/%defattr a file's owner and group are its owner's
	 * names on disk (getpwuid/getgrgid). rpm 4.20 always records root (rpm PR #2797);
	 * that is the default (false). */
	bool owner_from_disk;
};

/* Collect pkg's files: read its %files -f lists (relative to o->builddir, parsed into
 * pkg with spec_files_add_text(), so call this once per package), copy relative
 * %doc/%license files into the buildroot (%{_docdir}/<%_docdir_fmt>, default
 * %{NAME}-%{VERSION} when the macro is undefined, as rpm), apply every entry and fill *out
 * (initialised here; release it even on error). Problems use rpm's wording: "File not
 * found: BUILDROOT/PATH" (a glob that matches nothing is tried literally, as rpm does),
 * "Directory not found", "Not a directory", "More than one file on a line", "Can't mix
 * special %doc with other forms", "Illegal character (0x1f) in filename", "Path is outside
 * buildroot", "Symlink points to BuildRoot", and the entry's own parse error; err is
 * located at the spec (or list) file and line. Like rpmbuild, collection goes on after a
 * per-file error so that all of them are reported: the first is returned (KILN_ENOTFOUND,
 * KILN_EPRIV, KILN_ESYNTAX, KILN_EINVAL), the others are sent to o->macros' diagnostics
 * at error level. Warnings ("File listed twice", "absolute symlink", missing %doc files
 * when %_missing_doc_files_terminate_build is 0, ...) go to the diagnostics; "File listed
 * twice" is an error when %_duplicate_files_terminate_build is true. KILN_EIO and
 * KILN_ENOMEM stop at once. Not thread-safe for one spec (it adds the lists' entries). */
KILN_MUST_CHECK kiln_rc worker_filelist_collect(struct worker_filelist *out, struct spec *spec,
                                                struct spec_package *pkg,
                                                const struct worker_filelist_opts *o,
                                                struct kiln_err *err);

/* rpm's unpackaged-files check over a whole build: every regular file and symlink under
 * buildroot (empty directories are not reported, as rpm's check-files) that no list in
 * lists[0..n) claims. When some are found, report (if not NULL) gets rpm's text
 * "Installed (but unpackaged) file(s) found:\n   /path\n..." and: with
 * %_unpackaged_files_terminate_build true (rpm's default, also when undefined) the result
 * is KILN_EBUILD with that text (cut to the error's size); otherwise it is a warning sent
 * to macros' diagnostics and the result is KILN_OK. A %__check_files defined as empty
 * disables the check, as in rpm. */
KILN_MUST_CHECK kiln_rc worker_filelist_check_unpackaged(const char *buildroot,
                                                         const struct worker_filelist *const *lists,
                                                         size_t n, struct macro_ctx *macros,
                                                         struct kiln_buf *report,
                                                         struct kiln_err *err);

void worker_filelist_release(struct worker_filelist *fl);

/* ======================================================================================== */
/* 2. Automatic dependencies                                                                */
/* ======================================================================================== */

/* One dependency (flags: rpm's RPMSENSE_* bits as pack_deps_add takes them). */
struct worker_dep {
	const char *name;
	const char *version; /* "" for none */
	uint32_t flags;
};

/* A sorted, de-duplicated set of dependencies; strings in the set's arena. */
struct worker_deps {
	struct worker_dep *v;
	size_t n, cap;
	struct kiln_arena arena;
};

/* PLACEHOLDER: the autodeps helper defines the functions here. */

void worker_deps_release(struct worker_deps *d);

/* ======================================================================================== */
/* 3. Sources                                                                               */
/* ======================================================================================== */

/* PLACEHOLDER: the sources helper defines fetching and the cache here. */

/* ======================================================================================== */
/* 4. The build pipeline                                                                    */
/* ======================================================================================== */

/* PLACEHOLDER: the lead defines worker_build() and friends here. */

#endif
