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

/* The files of one package, ready for pack_write(). Every string and the array live in
 * the list's arena; release with worker_filelist_release(). */
struct worker_filelist {
	struct pack_file *files; /* sorted by path */
	size_t n, cap;
	struct kiln_arena arena;
};

struct worker_filelist_opts {
	const char *buildroot;    /* absolute host path of %{buildroot} */
	const char *builddir;     /* absolute host path where relative %doc/%license are read
	                        * (the build subdirectory, %{_builddir}/%{buildsubdir}) */
	struct macro_ctx *macros; /* %_docdir, %_licensedir, %_docdir_fmt, %_*_terminate_build */
	bool clamp_mtime;         /* clamp mtimes to clamp_to (%build_mtime_policy) */
	uint32_t clamp_to;
};

/* PLACEHOLDER: the filelist helper defines the functions here (collect one package's
 * files, the "Installed (but unpackaged)" check over all packages). */

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
