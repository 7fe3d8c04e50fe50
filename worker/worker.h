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
	/* The package format the list is for: 6 classifies files by MIME type only (v6
	 * stores MIME types), anything else by libmagic description only (v4's FILECLASS). */
	int rpmformat;
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

/* What to run, as rpmbuild's -b/-r/-t letters: a bit per step. */
enum worker_build_steps {
	WORKER_STEP_PREP = 1 << 0,      /* %prep */
	WORKER_STEP_CONF = 1 << 1,      /* %conf (rpm 4.20) and %generate_buildrequires */
	WORKER_STEP_BUILD = 1 << 2,     /* %build */
	WORKER_STEP_INSTALL = 1 << 3,   /* %install */
	WORKER_STEP_CHECK = 1 << 4,     /* %check */
	WORKER_STEP_FILECHECK = 1 << 5, /* -bl: %files against the buildroot, nothing written */
	WORKER_STEP_BINARY = 1 << 6,    /* write the binary packages */
	WORKER_STEP_SOURCE = 1 << 7,    /* write the source package */
	WORKER_STEP_CLEAN = 1 << 8,     /* %clean and remove the buildroot afterwards */
	WORKER_STEP_RMBUILD = 1 << 9,   /* --clean: remove the build directory afterwards */
	WORKER_STEP_RMSOURCE = 1 << 10, /* --rmsource */
	WORKER_STEP_RMSPEC = 1 << 11,   /* --rmspec */
	WORKER_STEP_BUILDREQS = 1 << 12 /* -br: stop after %generate_buildrequires */
};

/* rpmbuild's -bX letters. */
#define WORKER_STEPS_P (WORKER_STEP_PREP)
#define WORKER_STEPS_F (WORKER_STEPS_P | WORKER_STEP_CONF)
#define WORKER_STEPS_C (WORKER_STEPS_F | WORKER_STEP_BUILD)
#define WORKER_STEPS_I (WORKER_STEPS_C | WORKER_STEP_INSTALL | WORKER_STEP_CHECK)
#define WORKER_STEPS_L (WORKER_STEP_FILECHECK)
#define WORKER_STEPS_B (WORKER_STEPS_I | WORKER_STEP_BINARY | WORKER_STEP_CLEAN)
#define WORKER_STEPS_A (WORKER_STEPS_B | WORKER_STEP_SOURCE)
#define WORKER_STEPS_S (WORKER_STEP_SOURCE)
#define WORKER_STEPS_R (WORKER_STEPS_P | WORKER_STEP_CONF | WORKER_STEP_BUILDREQS)

/* Options of one build. Strings are borrowed for the call. */
struct worker_build_opts {
	const char *spec_path;
	unsigned steps;     /* enum worker_build_steps */
	bool short_circuit; /* only the last stage of steps (-bc --short-circuit ...) */
	bool nodeps;        /* skip the BuildRequires check */
	bool nocheck;       /* skip %check */
	bool noprep;        /* skip %prep (rpm 4.18's --noprep) */
	bool noclean;       /* keep the buildroot (no %clean) */
	bool quiet;         /* stage output only in the build log */
	bool anyarch;       /* -bs: build the source package on any architecture */
	/* How stages run: NULL runs them as plain host processes. Borrowed. */
	const struct chroot_config *exec;
	int out_fd; /* where stage output streams (besides the log); -1 = none */
	/* Sign every written package with this key (sign/), NULL for none. Borrowed. */
	const struct sign_key *sign_key;
};
void worker_build_opts_init(struct worker_build_opts *o);

struct worker_build_output {
	const char *path; /* written package */
	const char *kind; /* "binary" or "source" */
	const char *name; /* package name */
	const char *arch; /* "x86_64", "noarch", "src" */
	char sha256[65];
};

struct worker_build_stage {
	const char *name; /* "prep", "build", ..., "package" */
	int64_t ms;
	int exit_code;
};

/* The result of worker_build(), filled also on failure as far as the build got. Release
 * with worker_build_result_release(). */
struct worker_build_result {
	struct worker_build_output *outputs;
	size_t noutputs, capoutputs;
	struct worker_build_stage *stages;
	size_t nstages, capstages;
	const char **warnings;
	size_t nwarnings, capwarnings;
	const char *log_path;      /* the build log, NULL before the build dir exists */
	int64_t source_date_epoch; /* -1 when none */
	int64_t buildtime;
	bool buildreqs_unmet; /* -br: %generate_buildrequires asked for missing ones */
	bool sandboxed;       /* the stages ran in the namespace sandbox */
	bool network;         /* ... with the host network shared */
	struct kiln_arena arena;
};

/* Run the steps of o on o->spec_path with macro context mc (configured by the caller:
 * rpmrc, macro files, --define...; the build adds its own definitions). On failure err has
 * rpm's message ("Bad exit status from /.../BUILD/.kiln-build.sh (%build)") and nothing is
 * left half-written in the output directories. */
KILN_MUST_CHECK kiln_rc worker_build(const struct worker_build_opts *o, struct macro_ctx *mc,
                                     struct worker_build_result *res, struct kiln_err *err);
void worker_build_result_release(struct worker_build_result *res);
/* Append the result as JSON ({"outputs":[{path,kind,name,arch,sha256}],"stages":[...],
 * "warnings":[...],"log":...,"source_date_epoch":...}) to out. */
void worker_build_result_json(const struct worker_build_result *res, bool ok,
                              const struct kiln_err *err, struct kiln_buf *out);

/* Reproducibility verification (kiln build --verify-reproducible): the build runs `runs`
 * times, the first as asked (its packages are the build's output), the others in fresh
 * top directories with deliberate variations: another path outside the sandbox, another
 * wall-clock time (at least a second later), another umask outside, another host name and
 * CPU count inside the sandbox, noise in kiln's environment. Every package of the first
 * run is compared with pack_diff_files() with its namesake of each rerun. */
struct worker_verify_diff {
	unsigned run;        /* the rerun (2..runs) that differed */
	const char *package; /* relative to the top directory: "RPMS/x86_64/a-1-1.x86_64.rpm" */
	const char *what;    /* "/usr/share/a/stamp: contents differ", "tag BUILDTIME", ... */
};

struct worker_verify_result {
	unsigned runs;
	size_t npackages; /* packages of the first run */
	struct worker_verify_diff *diffs;
	size_t ndiffs, capdiffs;
	struct worker_build_result first; /* the first run: the build's own result */
	struct kiln_arena arena;
};

/* Run and compare as above; mc is duplicated for each run (not changed). KILN_OK when
 * every run built: vr->ndiffs == 0 means reproducible. A failing run is an error. */
KILN_MUST_CHECK kiln_rc worker_build_verify(const struct worker_build_opts *o,
                                            const struct macro_ctx *mc, unsigned runs,
                                            struct worker_verify_result *vr, struct kiln_err *err);
void worker_verify_result_release(struct worker_verify_result *vr);
/* The first run's worker_build_result_json() plus "reproducible": {"runs", "identical",
 * "differences": [{"run", "package", "what"}]}. */
void worker_verify_result_json(const struct worker_verify_result *vr, bool ok,
                               const struct kiln_err *err, struct kiln_buf *out);

/* -r: install a source package's files into %{_sourcedir} and its spec into %{_specdir}
 * (as rpm -i of a .src.rpm does); *spec_path gets the spec's path (in arena a). */
KILN_MUST_CHECK kiln_rc worker_srpm_install(const char *srpm, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);
/* -t: unpack the tarball's spec file (the first *.spec of the archive) into %{_specdir}
 * and copy the tarball to %{_sourcedir}; *spec_path as above. */
KILN_MUST_CHECK kiln_rc worker_tarball_spec(const char *tarball, struct macro_ctx *mc,
                                            struct kiln_arena *a, const char **spec_path,
                                            struct kiln_err *err);

#endif
